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
    let mut lines = Vec::new();
    for (slug, part) in &by_slug {
        let change = store.write(part, slug, &a.set, a.dry_run)?;
        lines.push(describe(&change, a.dry_run));
        if a.commit && change.written {
            let sha = store.commit(&change, a.message.as_deref())?;
            lines.push(format!("committed {}", &sha[..sha.len().min(12)]));
        }
    }
    print(&lines.join("\n"));
    Ok(0)
}
