//! `cargo convbench baseline update`: bless results as the new baseline of their adapter,
//! merged with the benchmarks already blessed, written atomically, optionally committed.

use crate::args::Global;
use crate::args::RunArgs;
use crate::output::print;
use crate::progress::run_sweep;
use convbench::Result;
use convbench::baseline::{GitBaselineStore, check_runs};
use convbench::config;
use convbench::results::RunRecord;
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

/// `cargo convbench baseline update`.
pub fn run(args: &Global, command: &BaselineCommand) -> Result<u8> {
    let BaselineAction::Update(a) = &command.action;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?
        .with_keep_runs(workspace.config.baseline_runs);
    check_runs(a.runs)?;
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
        let wanted = store.runs_to_bless(a.runs, &records[0], &a.set)?;
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
    let lines = store.bless_runs(&records, &a.set, a.dry_run, a.commit, a.message.as_deref())?;
    print(&lines.join("\n"));
    stopped.map_or(Ok(0), Err)
}
