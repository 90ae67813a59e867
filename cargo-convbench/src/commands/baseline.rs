//! `cargo convbench baseline update`: bless results as the new baseline of their adapter,
//! merged with the benchmarks already blessed, written atomically, optionally committed.

use crate::args::Global;
use crate::args::RunArgs;
use crate::output::print;
use crate::progress::run_sweep;
use convbench::Result;
use convbench::baseline::{GitBaselineStore, UpdateRequest};
use convbench::config;
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
    let request = UpdateRequest {
        from: a.from.clone(),
        set: a.set.clone(),
        dry_run: a.dry_run,
        commit: a.commit,
        message: a.message.clone(),
        runs: a.runs,
    };
    let (lines, stopped) = request.run(
        &store,
        &mut || run_sweep(&a.run.request(), &workspace, args.quiet, None),
        &mut |run, wanted| {
            if !args.quiet {
                eprintln!("blessed run {run} of {wanted}");
            }
        },
    )?;
    print(&lines.join("\n"));
    stopped.map_or(Ok(0), Err)
}
