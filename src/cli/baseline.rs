//! Flags of `cargo convbench baseline`.

use crate::baseline::UpdateRequest;
use crate::cli::RunArgs;
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
    /// Bless a saved record instead of running now (the flags that shape a run are then
    /// refused).
    #[arg(long, value_name = "FILE", conflicts_with_all = crate::cli::FRESH_RUN_FLAGS)]
    pub from: Option<PathBuf>,
    /// Baseline set (file name under `baselines/<adapter>/`).
    #[arg(long, default_value = crate::baseline::DEFAULT_SET)]
    pub set: String,
    /// Show what would change without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Commit the changed baseline files with git.
    #[arg(long, conflicts_with = "dry_run")]
    pub commit: bool,
    /// Commit message (default: one listing what changed; not empty, as git requires).
    #[arg(long, requires = "commit", value_parser = clap::builder::NonEmptyStringValueParser::new())]
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

impl UpdateArgs {
    /// Refuses the flags of `run` that shape the output (`--out`, a `--format` other than
    /// `table`): `baseline update` prints what it blessed, and a flag silently ignored would
    /// leave the user without the file they asked for.
    pub fn refuse_output_flags(&self) -> crate::Result<()> {
        let flag = if self.run.out.is_some() {
            "--out".to_string()
        } else if self.run.format != "table" {
            format!("--format {}", self.run.format)
        } else {
            return Ok(());
        };
        Err(crate::baseline::BaselineError::UpdateTakesNoOutput { flag }.into())
    }

    /// The library's request to bless (the runs themselves come from `run`).
    pub fn request(&self) -> UpdateRequest {
        UpdateRequest {
            from: self.from.clone(),
            set: self.set.clone(),
            dry_run: self.dry_run,
            commit: self.commit,
            message: self.message.clone(),
            runs: self.runs,
        }
    }
}
