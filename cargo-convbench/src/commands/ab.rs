//! `cargo convbench ab`: interleaved A/B of two revisions.
//!
//! Shader mode (the default): in ONE process on ONE device, the WGSL of `shaders/` as committed
//! at the base revision (read with git2) and as it is in the working tree run the same plan on
//! the same inputs, both verified against the f64 reference first, alternating sample by sample
//! in ABBA order; the verdict rests on the pairs' ratios (see `convbench::compare::ab`), so the
//! machine's drift cancels.
//!
//! Process mode (`--base-bin PATH`, see `convbench::harness::ab_process`): for changes outside
//! the shaders, a `cargo-convbench` built from the base revision and this one alternate whole
//! `run` invocations, round by round.

use crate::output::EXIT_REGRESSION;
use crate::output::{print, write_atomic};
use crate::progress::run_ab;
use convbench::cli::Global;
use convbench::cli::ab::AbArgs;
use convbench::compare::CompareConfig;
use convbench::config::Workspace;
use convbench::gate::compare_config;
use convbench::harness::ab::AbOutcome;
use convbench::harness::{AbError, Interrupted};
use convbench::{Error, Result};

/// Measures both sides as `a` says and judges the pairs with `config`'s threshold and alpha.
/// Process mode stops at SIGINT or SIGTERM after the round in flight: the outcome judges the
/// pairs finished, and the interruption comes beside it.
fn measure_and_judge(
    args: &Global,
    a: &AbArgs,
    workspace: &Workspace,
    config: &CompareConfig,
) -> Result<(AbOutcome, Option<Error>)> {
    let Some(base_bin) = &a.base_bin else {
        return run_ab(&a.request()?, workspace, config, args.quiet);
    };
    let head_bin = std::env::current_exe().map_err(|source| AbError::CurrentExe { source })?;
    let request = a.process_request(args.manifest_path.clone(), base_bin.clone(), head_bin);
    let interrupt = crate::interrupt::install();
    request.run(config, &|| interrupt.requested(), &mut |done| {
        if !args.quiet {
            eprintln!("round pair {done} of {} done", request.pairs);
        }
    })
}

/// `cargo convbench ab`.
pub fn run(args: &Global, a: &AbArgs) -> Result<u8> {
    if let Some(out) = &a.out {
        crate::output::check_writable(out)?;
    }
    let workspace = super::workspace(args)?;
    let config = compare_config(&workspace, &a.overrides())?;
    let (outcome, interrupted) = measure_and_judge(args, a, &workspace, &config)?;
    if interrupted.is_some() && outcome.measured.is_empty() {
        return Err(interrupted.unwrap_or_else(|| Interrupted::FirstPair.into()));
    }
    print(&convbench::report::ab_table(&outcome.description, &outcome.rows));
    if let Some(out) = &a.out {
        write_atomic(out, &outcome.to_json(config.alpha))?;
        if !args.quiet && interrupted.is_some() {
            eprintln!(
                "wrote the pairs finished before the interruption to {}",
                out.display()
            );
        }
    }
    if let Some(error) = interrupted {
        return Err(error);
    }
    Ok(if outcome.has_regression() {
        EXIT_REGRESSION
    } else {
        0
    })
}
