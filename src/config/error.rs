//! What can go wrong finding the workspace and reading its configuration, as values: a
//! manifest or configuration file that does not parse, `cargo metadata` failing or missing, a
//! `[workspace] members` pattern, a kernel declared twice, and settings out of their range (the
//! `ci` sub-table, batches, precisions, counts, durations).

use super::DEFAULT_BASELINE_DIR;
use crate::ErrorKind;
use crate::model::{MAX_BATCH, ModelError};
use std::path::{Path, PathBuf};

/// An error of the workspace or its configuration. Each message names the file, key or flag
/// and the next step.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `convbench.toml` does not parse as a configuration (or has an unknown key).
    #[error("invalid configuration in {}: {source}", path.display())]
    InvalidConfigFile {
        /// The file.
        path: PathBuf,
        /// What the TOML parser said, naming the key or line.
        #[source]
        source: toml::de::Error,
    },
    /// `convbench.toml` at the workspace root is a folder (or a link to nothing): it would
    /// otherwise be passed over and the defaults used without a word.
    #[error(
        "{} is not a file: convbench reads its configuration from a file of that name; rename or \
         remove it",
        path.display()
    )]
    ConfigNotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The `[workspace.metadata.convbench]` table of a `Cargo.toml` does not parse.
    #[error("invalid [workspace.metadata.convbench] in {}: {source}", path.display())]
    InvalidWorkspaceTable {
        /// The `Cargo.toml`.
        path: PathBuf,
        /// What the TOML parser said, naming the key or line.
        #[source]
        source: toml::de::Error,
    },
    /// A member's `[package.metadata.convbench]` table holds something other than `kernels`, or
    /// kernels that do not parse.
    #[error(
        "invalid [package.metadata.convbench] in {}: {source}; a crate declares only `kernels` \
         there, the rest goes in [workspace.metadata.convbench]",
        manifest.display()
    )]
    InvalidPackageTable {
        /// The member's `Cargo.toml`.
        manifest: PathBuf,
        /// What the parser said (TOML or, from `cargo metadata`, JSON).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A kernel of a member's `[package.metadata.convbench.kernels]` does not parse (a key
    /// misspelt, a value of the wrong type).
    #[error(
        "invalid kernel `{kernel}` in [package.metadata.convbench.kernels] of {}: {source}",
        manifest.display()
    )]
    InvalidPackageKernel {
        /// The member's `Cargo.toml`.
        manifest: PathBuf,
        /// The kernel's name (its table's key).
        kernel: String,
        /// What the parser said, naming the key.
        #[source]
        source: toml::de::Error,
    },
    /// A `Cargo.toml` read without cargo does not parse.
    #[error("invalid manifest {}: {source}", path.display())]
    InvalidManifest {
        /// The `Cargo.toml`.
        path: PathBuf,
        /// What the TOML parser said.
        #[source]
        source: toml::de::Error,
    },
    /// A `[workspace] members` pattern that is not a glob (read without cargo).
    #[error("{}: [workspace] member `{member}`: {source}", manifest.display())]
    MemberPattern {
        /// The workspace's `Cargo.toml`.
        manifest: PathBuf,
        /// The pattern as written.
        member: String,
        /// What the glob parser said.
        #[source]
        source: globset::Error,
    },
    /// `cargo metadata` ran and refused the manifest.
    #[error(
        "`cargo metadata` failed for {}: {stderr}; fix the manifest or pass another --manifest-path",
        manifest.display()
    )]
    CargoMetadataFailed {
        /// The manifest it was given.
        manifest: PathBuf,
        /// What cargo printed, trimmed.
        stderr: String,
    },
    /// `cargo metadata` could not be started (cargo exists, since a missing cargo means reading
    /// the manifest alone, but would not run).
    #[error(
        "could not run `cargo metadata` for {} ({source}); is cargo installed and on PATH?",
        manifest.display()
    )]
    CargoNotRunnable {
        /// The manifest it was given.
        manifest: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// `cargo metadata` ran but its output could not be read.
    #[error("`cargo metadata` for {} gave unreadable output: {source}", manifest.display())]
    CargoMetadataUnreadable {
        /// The manifest it was given.
        manifest: PathBuf,
        /// What `cargo_metadata` said.
        #[source]
        source: cargo_metadata::Error,
    },
    /// A `[[model]]` of the configuration is not a network convbench can run.
    #[error("{}: {source}", origin(file.as_deref(), "the configuration"))]
    InvalidModel {
        /// The file the configuration was read from; `None` for the defaults.
        file: Option<PathBuf>,
        /// What is wrong with the network.
        #[source]
        source: ModelError,
    },
    /// `[ci]` says both `ab = true` and `mode = "baseline"`.
    #[error(
        "`ci.ab = true` and `ci.mode = \"baseline\"` disagree: keep `mode` (`ab = true` is the older \
         spelling of `mode = \"ab\"`) and remove `ab`"
    )]
    ModesDisagree,
    /// `models` or `suites` names a model or suite that neither the zoo nor the configuration's
    /// `[[model]]` has.
    #[error("`{key}`: {source}")]
    UnknownName {
        /// `models` or `suites`.
        key: &'static str,
        /// Which name, and the known ones.
        #[source]
        source: Box<crate::Error>,
    },
    /// A setting out of its range, in the file that sets it.
    #[error("{}: {source}", origin(file.as_deref(), "the default configuration"))]
    InvalidSettings {
        /// The file the configuration was read from; `None` for the defaults.
        file: Option<PathBuf>,
        /// Which setting and why ([`ConfigError`] or [`crate::compare::CompareError`]).
        #[source]
        source: Box<crate::Error>,
    },
    /// Two kernel declarations of the workspace share a name.
    #[error(
        "kernel `{name}` is declared twice (again in {}); kernel names are unique in a workspace",
        file.display()
    )]
    KernelDeclaredTwice {
        /// The kernel's name.
        name: String,
        /// The file of the second declaration.
        file: PathBuf,
    },
    /// A batch size in `batches` of zero or above [`MAX_BATCH`].
    #[error("batch size {batch} in `batches`; use sizes from 1 to {MAX_BATCH} such as [1, 32, 128]")]
    BadBatch {
        /// The size given, in images.
        batch: usize,
    },
    /// A precision in `precisions` that is not one.
    #[error("`precisions`: {reason}")]
    BadPrecision {
        /// The precision as written.
        precision: String,
        /// What the precision parser said, naming it and the precisions there are.
        reason: String,
    },
    /// `compare.min-samples` is 0.
    #[error(
        "`compare.min-samples` is 0; a verdict needs samples: leave it out for the default or \
         give at least 2"
    )]
    NoMinSamples,
    /// `baseline-runs` is 0.
    #[error("`baseline-runs` is 0; a baseline keeps at least one run (the default is 10)")]
    NoBaselineRuns,
    /// `baseline-dir` is the empty path.
    #[error("`baseline-dir` is empty; leave it out for the default `{DEFAULT_BASELINE_DIR}`")]
    EmptyBaselineDir,
    /// `baseline-dir` is inside git's own `.git` folder, where nothing is committed.
    #[error(
        "`baseline-dir` {} is inside `.git`, where git keeps its own files and nothing is \
         committed; use a folder of the working tree such as the default `{DEFAULT_BASELINE_DIR}`",
        dir.display()
    )]
    BaselineDirInGit {
        /// The configured folder.
        dir: PathBuf,
    },
    /// `ci.comment-on` is not one of its values.
    #[error("comment-on `{value}` is not one of always, change, regression")]
    UnknownCommentOn {
        /// The value given.
        value: String,
    },
    /// An entry of `ci.mention` that is neither a GitHub login nor `org/team`.
    #[error(
        "`ci.mention` entry `{name}` is not a GitHub login (`octocat`) or team \
         (`my-org/perf-team`); write it without the `@`"
    )]
    BadMention {
        /// The entry as written.
        name: String,
    },
    /// `ci.accept-label` is not a GitHub label name.
    #[error(
        "`ci.accept-label` `{label}` is not a GitHub label name (1 to 50 characters, no control \
         characters)"
    )]
    BadAcceptLabel {
        /// The label as written.
        label: String,
    },
    /// `ci.dashboard-url` is not an `https://` URL of plain characters.
    #[error(
        "`ci.dashboard-url` `{url}` is not an https URL of plain characters (letters, digits and \
         -._~:/?#=&%+); write it as GitHub Pages shows it, e.g. `https://my-org.github.io/my-repo/`"
    )]
    BadDashboardUrl {
        /// The URL as written.
        url: String,
    },
    /// A time budget (`--budget`, `ci.budget`) that is not a duration.
    #[error("{what} `{text}` is not a duration ({source}); write it as `5m`, `90s` or `1h 30m`")]
    NotADuration {
        /// The flag or key, e.g. `--budget`.
        what: String,
        /// The text given.
        text: String,
        /// What the duration parser said.
        #[source]
        source: humantime::DurationError,
    },
    /// A time budget of zero.
    #[error("{what} `{text}` leaves no time to measure; give it a duration such as `5m`")]
    NoTime {
        /// The flag or key.
        what: String,
        /// The text given.
        text: String,
    },
    /// A time budget above [`super::MAX_BUDGET`].
    #[error(
        "{what} `{text}` is longer than {}, the most convbench takes; give a shorter one such as `1h`",
        humantime::format_duration(super::MAX_BUDGET)
    )]
    TooMuchTime {
        /// The flag or key.
        what: String,
        /// The text given.
        text: String,
    },
}

/// `file` as the start of a message, else `fallback`.
fn origin(file: Option<&Path>, fallback: &str) -> String {
    file.map_or_else(|| fallback.to_string(), |file| file.display().to_string())
}

impl ConfigError {
    /// The exit-code category: a `cargo metadata` that cannot run or answers nonsense is the
    /// machine's; every file, key and value is the user's input.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ConfigError::CargoNotRunnable { .. } | ConfigError::CargoMetadataUnreadable { .. } => {
                ErrorKind::Environment
            }
            _ => ErrorKind::InvalidInput,
        }
    }
}
