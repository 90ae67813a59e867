//! `cargo convbench baseline update`: bless results as the new baseline of their adapter,
//! merged with the benchmarks already blessed, written atomically, optionally committed.

use crate::output::print;
use crate::progress::run_sweep;
use convbench::Result;
use convbench::baseline::GitBaselineStore;
use convbench::cli::Global;
use convbench::cli::baseline::{BaselineAction, BaselineCommand};

/// `cargo convbench baseline update`.
pub fn run(args: &Global, command: &BaselineCommand) -> Result<u8> {
    let BaselineAction::Update(a) = &command.action;
    a.refuse_output_flags()?;
    let workspace = super::workspace(args)?;
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?
        .with_keep_runs(workspace.config.baseline_runs);
    let (lines, stopped) = a.request().run(
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
