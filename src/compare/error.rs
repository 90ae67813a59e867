//! Verdict settings that cannot be used, as values.

use crate::ErrorKind;

/// A verdict setting (threshold, alpha, resamples, per-benchmark pattern) out of its range.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A number out of its range.
    #[error("{setting} {value} {problem}")]
    Setting {
        /// The setting, e.g. `threshold`.
        setting: &'static str,
        /// Its value as given (with the pattern it applies to, if any).
        value: String,
        /// What is wrong and what would do, e.g. `is not a non-negative fraction; use e.g. 0.05 for 5%`.
        problem: &'static str,
    },
    /// No bootstrap resample.
    #[error("bootstrap resamples must be at least 1; the default is 2000")]
    NoResamples,
    /// A per-benchmark pattern that is not a glob.
    #[error("benchmark pattern `{pattern}` is not a valid glob: {message}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// What the glob parser said.
        message: String,
    },
}

impl CompareError {
    /// The exit-code category: always the user's input.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidInput
    }
}
