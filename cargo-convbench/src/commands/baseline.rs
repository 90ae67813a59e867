//! `cargo convbench baseline update`: bless results as the new baseline of their adapter,
//! merged with the benchmarks already blessed, written atomically, optionally committed.

use crate::args::RunArgs;
use crate::cli::Args;
use crate::output::print;
use crate::progress::run_sweep;
use convbench::baseline::{BaselineChange, GitBaselineStore};
use convbench::config;
use convbench::results::RunRecord;
use convbench::{Error, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `baseline`.
#[derive(Debug, clap::Args)]
pub struct BaselineCommand {
    /// What to do.
    #[command(subcommand)]
    pub action: BaselineAction,
}

/// Baseline actions.
#[derive(Debug, clap::Subcommand)]
pub enum BaselineAction {
    /// Write results into `baselines/<adapter>/<set>.json`.
    Update(UpdateArgs),
}

/// Arguments of `baseline update`.
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// Bless a saved record instead of running now.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Baseline set (file name under `baselines/<adapter>/`).
    #[arg(long, default_value = "default")]
    pub set: String,
    /// Show what would change without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Commit the changed baseline files with git.
    #[arg(long, conflicts_with = "dry_run")]
    pub commit: bool,
    /// Commit message (default: one listing what changed).
    #[arg(long, requires = "commit")]
    pub message: Option<String>,
    /// Blessed runs to measure now, each a fresh sweep (device opened, verified and warmed up
    /// again), so a young baseline already knows how runs drift apart. Default: 3 when a
    /// measured benchmark has no blessed run yet, else 1. Not with --from.
    #[arg(long, value_name = "N", conflicts_with = "from")]
    pub runs: Option<usize>,
    /// Benchmarks to run when no --from is given.
    #[command(flatten)]
    pub run: RunArgs,
}

fn describe(change: &BaselineChange, dry_run: bool) -> String {
    let verb = if dry_run {
        "would update"
    } else if change.written {
        "updated"
    } else {
        "unchanged"
    };
    let mut text = format!(
        "{verb} {}: {} added, {} updated, {} unchanged",
        change.path.display(),
        change.added.len(),
        change.updated.len(),
        change.unchanged_count
    );
    for id in &change.added {
        text.push_str(&format!("\n  + {id}"));
    }
    for id in &change.updated {
        text.push_str(&format!("\n  ~ {id}"));
    }
    text
}

/// `cargo convbench baseline update`.
pub fn run(args: &Args, command: &BaselineCommand) -> Result<u8> {
    let BaselineAction::Update(a) = &command.action;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?
        .with_keep_runs(workspace.config.baseline_runs);
    if let Some(runs) = a.runs
        && !(1..=MAX_RUNS).contains(&runs)
    {
        return Err(Error::InvalidInput(format!(
            "--runs {runs}: bless between 1 and {MAX_RUNS} runs at once"
        )));
    }
    let record = match &a.from {
        Some(path) => RunRecord::read(path)?,
        None => {
            let (record, error) = run_sweep(&a.run.request(), &workspace, args.quiet, None)?;
            if let Some(e) = error {
                return Err(e);
            }
            record
        }
    };
    let mut records = vec![record];
    let mut stopped = None;
    if a.from.is_none() {
        let wanted = match a.runs {
            Some(runs) => runs,
            None if has_new_benchmark(&store, &records[0], &a.set)? => NEW_BENCHMARK_RUNS,
            None => 1,
        };
        for index in 1..wanted {
            if !args.quiet {
                eprintln!("blessed run {} of {wanted}", index + 1);
            }
            let (record, error) = run_sweep(&a.run.request(), &workspace, args.quiet, None)?;
            if let Some(e) = error {
                // Bless the runs that finished, then report why the rest did not.
                stopped = Some(e);
                break;
            }
            records.push(record);
        }
    }
    let mut lines = Vec::new();
    for (index, record) in records.iter().enumerate() {
        if index > 0 {
            lines.push(format!("blessed run {} of {}:", index + 1, records.len()));
        }
        bless(&store, record, a, &mut lines)?;
    }
    print(&lines.join("\n"));
    match stopped {
        Some(error) => Err(error),
        None => Ok(0),
    }
}

/// The most runs `--runs` blesses at once.
pub const MAX_RUNS: usize = 20;

/// Runs blessed at once by default when a benchmark has no blessed run yet.
pub const NEW_BENCHMARK_RUNS: usize = 3;

/// Whether a benchmark of `record` has no blessed run in the working tree's baseline.
fn has_new_benchmark(store: &GitBaselineStore, record: &RunRecord, set: &str) -> Result<bool> {
    let mut known: BTreeMap<String, Option<RunRecord>> = BTreeMap::new();
    for benchmark in &record.benchmarks {
        let slug = benchmark.adapter.slug();
        if !known.contains_key(&slug) {
            let existing = store.load_worktree(&slug, set)?;
            known.insert(slug.clone(), existing);
        }
        let blessed = known[&slug]
            .as_ref()
            .is_some_and(|existing| existing.benchmarks.iter().any(|b| b.id == benchmark.id));
        if !blessed {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Blesses one record, per adapter, appending what changed to `lines`.
fn bless(
    store: &GitBaselineStore,
    record: &RunRecord,
    a: &UpdateArgs,
    lines: &mut Vec<String>,
) -> Result<()> {
    if !record.benchmarks.is_empty() {
        // Duplicates, zero-time samples and rounds that do not add up would corrupt the history.
        record.validate("the record to bless")?;
    }
    if !record.complete {
        return Err(Error::InvalidInput(
            "the record comes from an interrupted run; bless a complete one (run the benchmarks again)"
                .into(),
        ));
    }
    if record.benchmarks.is_empty() {
        return Err(Error::InvalidInput(
            "the record holds no benchmarks; nothing to bless".into(),
        ));
    }
    let mut by_slug: BTreeMap<String, RunRecord> = BTreeMap::new();
    for b in &record.benchmarks {
        by_slug
            .entry(b.adapter.slug())
            .or_insert_with(|| RunRecord {
                benchmarks: Vec::new(),
                ..record.clone()
            })
            .benchmarks
            .push(b.clone());
    }
    // Held from the first read to the last commit: a concurrent `baseline update` waits, then
    // merges into what this one blessed.
    let _lock = if a.dry_run { None } else { Some(store.lock()?) };
    for (slug, part) in &by_slug {
        let change = store.write(part, slug, &a.set, a.dry_run)?;
        lines.push(describe(&change, a.dry_run));
        if a.commit && change.written {
            let sha = store.commit(&change, a.message.as_deref())?;
            lines.push(format!("committed {}", &sha[..sha.len().min(12)]));
        }
    }
    Ok(())
}
