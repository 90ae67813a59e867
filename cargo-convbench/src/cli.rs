//! Argument parsing (clap, in cargo-subcommand form) and dispatch to the subcommands.

use crate::commands;
use clap::{Parser, Subcommand};
use convbench::cli::Global;
use std::process::ExitCode;

/// `cargo` passes the subcommand name as the first argument.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo", version, styles = clap::builder::Styles::plain())]
enum Cargo {
    /// Benchmark convnets on any GPU and gate performance regressions in CI.
    Convbench(Args),
}

/// Options shared by every subcommand, then the subcommand.
#[derive(Debug, clap::Args)]
#[command(version, about, long_about = None)]
pub struct Args {
    /// Options of every subcommand.
    #[command(flatten)]
    pub global: Global,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List GPU adapters with their fingerprint and features.
    Adapters(convbench::cli::adapters::AdaptersArgs),
    /// List models, suites and kernels.
    List(convbench::cli::list::ListArgs),
    /// The ops convbench runs; `--contract OP` prints the binding contract a WGSL kernel for
    /// that op follows, as a skeleton; `--emit DIR` writes every final WGSL source.
    Kernels(convbench::cli::kernels::KernelsArgs),
    /// Put this workspace under the gate: a sample WGSL kernel, its configuration, the
    /// GitHub Actions workflows (idempotent; never overwrites without --force).
    Init(convbench::cli::init::InitArgs),
    /// Run benchmarks.
    Run(convbench::cli::RunArgs),
    /// Time every kernel variant of the selected benchmarks' ops and cache the fastest for
    /// this adapter (used by `run`).
    Tune(convbench::cli::tune::TuneArgs),
    /// Check every kernel variant (yours too) on random shapes, then every op of the selected
    /// networks, against the f64 reference, without timing; print the worst ratio of error to
    /// rounding bound. Exit 4 on a mismatch.
    Verify(convbench::cli::verify::VerifyArgs),
    /// Time another framework (`--peer torch|jax`) and convbench on the same models, batches,
    /// stages and precisions, rounds interleaved; print and record both.
    Peers(convbench::cli::peers::PeersArgs),
    /// Render a saved record in any format.
    Report(convbench::cli::report::ReportArgs),
    /// Draw a chart of a saved record as SVG.
    Plot(convbench::cli::plot::PlotArgs),
    /// Compare results with the baseline blessed at the base revision; exit 1 on a regression.
    Compare(convbench::cli::compare::CompareArgs),
    /// Manage the blessed baselines.
    Baseline(convbench::cli::baseline::BaselineCommand),
    /// The blessed values across the commits that changed them.
    History(convbench::cli::history::HistoryArgs),
    /// Interleaved A/B of two revisions on one device: the base revision's shaders, kernels and
    /// networks against the working tree's (or a base build against this one); exit 1 on a
    /// regression.
    Ab(convbench::cli::ab::AbArgs),
    /// The first commit between --good and --bad that slowed a benchmark, by interleaved A/B of
    /// commits read from git (nothing rebuilt); exit 1 when one is found.
    Bisect(convbench::cli::bisect::BisectArgs),
    /// The GitHub Actions gate: A/B against the base revision (or the blessed baselines),
    /// summary, annotations, PR comment; exit 1 on a regression.
    Ci(convbench::cli::ci::CiArgs),
    /// Post or update the one convbench comment of a pull request from saved records.
    Comment(convbench::cli::ci::CommentArgs),
}

/// Parses arguments as `cargo convbench ...` or as `cargo-convbench ...`.
fn parse() -> Args {
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "convbench") {
        let Cargo::Convbench(args) = Cargo::parse_from(argv);
        return args;
    }
    // Invoked directly: behave as if cargo had passed the subcommand name.
    argv.insert(1, "convbench".into());
    let Cargo::Convbench(args) = Cargo::parse_from(argv);
    args
}

/// The commands that read no workspace (`report`, `plot`, `adapters` without `--calibrate`) still
/// take the global `--manifest-path`: a workspace named there that does not load is the error it
/// is for every other command (exit 2 or 3), not silently ignored.
fn check_manifest_path(args: &Args) -> convbench::Result<()> {
    let reads_no_workspace = match &args.command {
        Command::Report(_) | Command::Plot(_) => true,
        Command::Adapters(a) => !a.calibrate,
        _ => false,
    };
    match &args.global.manifest_path {
        Some(path) if reads_no_workspace => convbench::config::load(Some(path)).map(|_| ()),
        _ => Ok(()),
    }
}

/// Runs the command and returns the process exit code.
pub fn main_impl() -> ExitCode {
    let args = parse();
    if !args.global.quiet {
        convbench::fs::on_lock_wait(|path, what| {
            eprintln!(
                "waiting for the lock on the {what} ({}): another convbench holds it; this one \
                 goes on when it is released, or gives up after {} minutes",
                path.display(),
                convbench::fs::LOCK_WAIT.as_secs() / 60
            );
        });
    }
    let result = check_manifest_path(&args).and_then(|()| match &args.command {
        Command::Adapters(a) => commands::adapters::run(&args.global, a),
        Command::List(a) => commands::list::run(&args.global, a),
        Command::Kernels(a) => commands::kernels::run(&args.global, a),
        Command::Init(a) => commands::init::run(&args.global, a),
        Command::Run(a) => commands::run::run(&args.global, a),
        Command::Tune(a) => commands::tune::run(&args.global, a),
        Command::Verify(a) => commands::verify::run(&args.global, a),
        Command::Peers(a) => commands::peers::run(&args.global, a),
        Command::Report(a) => commands::report::run(&args.global, a),
        Command::Plot(a) => commands::plot::run(&args.global, a),
        Command::Compare(a) => commands::compare::run(&args.global, a),
        Command::Baseline(a) => commands::baseline::run(&args.global, a),
        Command::History(a) => commands::history::run(&args.global, a),
        Command::Ab(a) => commands::ab::run(&args.global, a),
        Command::Bisect(a) => commands::bisect::run(&args.global, a),
        Command::Ci(a) => commands::ci::run_ci(&args.global, a),
        Command::Comment(a) => commands::ci::run_comment(&args.global, a),
    });
    if let Some(error) = crate::output::stdout_error() {
        // The output is lost, so success cannot be claimed; a regression's exit 1 or a
        // command's own error keeps its code (the gate's verdict matters more).
        report_error(
            &format!(
                "could not write the output to stdout ({error}); free space or redirect it \
                 elsewhere, or write it to a file with the command's --out where it has one"
            ),
            &[],
        );
        if matches!(result, Ok(0)) {
            return ExitCode::from(convbench::ErrorKind::Environment.exit_code());
        }
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            report_error(&error.to_string(), &error.causes());
            if error.kind() == convbench::ErrorKind::Interrupted {
                return ExitCode::from(crate::interrupt::exit_code());
            }
            ExitCode::from(error.kind().exit_code())
        }
    }
}

/// Prints a fatal error on stderr: inside GitHub Actions as one `::error` workflow command
/// ([`convbench::github::error_annotation`]), so no quoted text can start a command of its own.
fn report_error(message: &str, causes: &[String]) {
    let message = &*crate::output::printable(message);
    let causes: Vec<String> = causes
        .iter()
        .map(|cause| crate::output::printable(cause).into_owned())
        .collect();
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|value| value == "true") {
        eprintln!("{}", convbench::github::error_annotation(message, &causes));
    } else {
        eprintln!("error: {message}");
        for cause in &causes {
            eprintln!("  caused by: {cause}");
        }
    }
}

#[cfg(test)]
mod tests {
    /// clap's own consistency checks (two flags of one name, a conflict naming a missing flag)
    /// would otherwise only fire when that subcommand is parsed.
    #[test]
    fn every_subcommand_is_well_formed() {
        use clap::CommandFactory;
        super::Cargo::command().debug_assert();
    }
}
