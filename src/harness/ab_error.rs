//! What stops an A/B comparison, as values: too few pairs asked for, a shaders folder or base
//! binary that is not there, an outcome file that is not one, and a side that cannot be run.

use crate::ErrorKind;
use std::path::PathBuf;

/// An error of `ab` (shader mode and process mode) or of reading its outcome file. Each message
/// names the flag, file or side and the next step.
#[derive(Debug, thiserror::Error)]
pub enum AbError {
    /// `--pairs` below the fewest pairs a verdict needs.
    #[error(
        "--pairs {pairs}: a verdict needs at least {} pairs; the default is {}",
        super::ab::MIN_PAIRS_PER_BENCHMARK,
        super::ab::DEFAULT_PAIRS
    )]
    TooFewPairs {
        /// The pairs asked for.
        pairs: usize,
    },
    /// A file given as an A/B outcome that does not parse as one.
    #[error("{origin} is not an A/B outcome file: {source}")]
    NotOutcomeFile {
        /// The file, as the caller names it.
        origin: String,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// An A/B outcome file of another format version.
    #[error(
        "{origin} has format `{format}`; this convbench reads `{}`",
        super::ab::AB_FORMAT
    )]
    OutcomeFormat {
        /// The file, as the caller names it.
        origin: String,
        /// The format it declares.
        format: String,
    },
    /// The repository or the `--shaders` folder is not a folder.
    #[error(
        "{} is not a folder; --shaders compares a folder of convbench's shaders with the \
         checkout's shaders/ at the base revision: run it in convbench's repository, or leave \
         --shaders out",
        folder.display()
    )]
    ShadersNotAFolder {
        /// The path that is not a folder.
        folder: PathBuf,
    },
    /// No temporary folder for the base revision's declarations.
    #[error("cannot create a temporary folder for {revision}: {source}")]
    DeclarationsFolder {
        /// The base revision, as it was chosen.
        revision: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Process mode: `--base-bin` is not a file.
    #[error(
        "--base-bin {} is not a file; build the base revision first (`git worktree add ../base REV \
         && cargo build --release --manifest-path ../base/Cargo.toml`) and pass its \
         target/release/cargo-convbench",
        path.display()
    )]
    BaseBinNotAFile {
        /// The path given.
        path: PathBuf,
    },
    /// Process mode: the path of the running binary, the head's side, is unknown.
    #[error("cannot find this binary to run it again: {source}")]
    CurrentExe {
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Process mode: no temporary folder for the rounds' records.
    #[error("cannot create a temporary folder: {source}")]
    RoundsFolder {
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Process mode: a side's binary could not be started.
    #[error("cannot start {}: {source}", bin.display())]
    CannotStart {
        /// The binary.
        bin: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Process mode: a side's `run` failed.
    #[error(
        "the {side} build ({}) failed its run with {status}; run it alone to see why",
        bin.display()
    )]
    SideFailed {
        /// `base` or `head`.
        side: &'static str,
        /// The binary.
        bin: PathBuf,
        /// How it ended.
        status: std::process::ExitStatus,
    },
    /// Process mode: a side's `run` ended without writing its record.
    #[error(
        "the {side} build ({}) ended without writing a record; --base-bin must be a \
         cargo-convbench binary built from the base revision",
        bin.display()
    )]
    NoRecord {
        /// `base` or `head`.
        side: &'static str,
        /// The binary.
        bin: PathBuf,
    },
}

impl AbError {
    /// The exit-code category: flags and files are the user's input; folders, processes and
    /// the binaries' runs are the environment (so `ci` may fall back to baseline mode).
    pub fn kind(&self) -> ErrorKind {
        match self {
            AbError::TooFewPairs { .. }
            | AbError::NotOutcomeFile { .. }
            | AbError::OutcomeFormat { .. }
            | AbError::ShadersNotAFolder { .. }
            | AbError::BaseBinNotAFile { .. } => ErrorKind::InvalidInput,
            AbError::DeclarationsFolder { .. }
            | AbError::CurrentExe { .. }
            | AbError::RoundsFolder { .. }
            | AbError::CannotStart { .. }
            | AbError::SideFailed { .. }
            | AbError::NoRecord { .. } => ErrorKind::Environment,
        }
    }
}
