//! What can stop the gate before it decides, as values: a baseline or a file it cannot judge,
//! settings it cannot use, a run it cannot place.

use crate::ErrorKind;

/// An error of the gate (`ci`, `comment`, `compare`); its verdict settings' are
/// [`crate::compare::CompareError`].
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// A baseline file with no benchmark in it.
    #[error("baseline {path} holds no benchmarks; bless one with `cargo convbench baseline update`")]
    EmptyBaseline {
        /// The file.
        path: String,
    },
    /// The baseline was measured on another adapter, and `--allow-other-adapter` was not given.
    #[error(
        "the baseline was measured on another adapter ({}); numbers from different adapters are \
         not compared. Bless a baseline on this one with `cargo convbench baseline update`, or \
         pass --allow-other-adapter",
        adapters.join("; ")
    )]
    OtherAdapter {
        /// The baseline's adapters, by label.
        adapters: Vec<String>,
    },
    /// A file given to judge could not be read.
    #[error("cannot read {path}: {message}")]
    Unreadable {
        /// The file.
        path: String,
        /// What the system said.
        message: String,
    },
    /// Run records and A/B outcomes in one set of files.
    #[error(
        "the files mix run records and A/B outcomes; pass the files of one mode (every matrix leg \
         runs the same `ci`)"
    )]
    MixedFiles,
    /// Nothing to judge.
    #[error("no file to judge")]
    NoFiles,
    /// The configuration at the base revision does not parse (a key convbench does not know
    /// included): the gate judges with it and reads what to expect from it.
    #[error(
        "{path} at {rev} does not parse ({message}); the gate judges with the base revision's \
         configuration, so fix it there or pass --baseline-rev with a revision whose configuration parses"
    )]
    ConfigAt {
        /// The file.
        path: String,
        /// The revision, short.
        rev: String,
        /// What the parser said.
        message: String,
    },
    /// The baselines at a revision could not be listed.
    #[error("cannot list the baselines at {rev}: {message}")]
    ListBaselines {
        /// The revision, short.
        rev: String,
        /// What git said.
        message: String,
    },
    /// `--head-sha` is not a commit id (the text is escaped for a workflow command).
    #[error("--head-sha `{sha}` is not a 40-digit commit id; pass github.event.workflow_run.head_sha")]
    HeadSha {
        /// The text given, escaped.
        sha: String,
    },
    /// `GITHUB_REPOSITORY` is not set where it is needed.
    #[error("GITHUB_REPOSITORY is not set; {next}")]
    NoRepository {
        /// Why it is needed, or what to set.
        next: &'static str,
    },
}

impl GateError {
    /// The exit-code category: what the gate was given is input; the repository and the
    /// runner's variables are the environment.
    pub fn kind(&self) -> ErrorKind {
        match self {
            GateError::ListBaselines { .. } | GateError::NoRepository { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}
