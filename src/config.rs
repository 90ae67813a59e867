//! Workspace discovery (with `cargo_metadata`) and the project's convbench configuration.
//!
//! # Where the configuration comes from
//!
//! 1. The workspace is found the way cargo finds it: from `--manifest-path`, or else from
//!    the nearest `Cargo.toml` at or above the current directory, then `cargo metadata
//!    --no-deps` names the workspace root and target directory. Where cargo is not installed
//!    (a GPU machine given the binary alone), the manifest's own folder is the root and its
//!    `[workspace] members` are read from their files (`manifest_workspace`).
//! 2. If `convbench.toml` exists at the workspace root, it is the whole configuration (its
//!    keys at the top level) and `[workspace.metadata.convbench]` is ignored: one file
//!    wins, they are never merged, so what you read is what applies.
//! 3. Else the `[workspace.metadata.convbench]` table of the workspace root's `Cargo.toml`.
//! 4. Else the defaults ([`Config::default`]).
//!
//! Outside any cargo workspace (no `Cargo.toml` at or above the current directory, and no
//! `--manifest-path`), this is not an error: convbench benchmarks its own model zoo and needs
//! no crate. The current directory is then the root, `<root>/target` the target directory,
//! and `<root>/convbench.toml` is still read when present.
//!
//! ```toml
//! [workspace.metadata.convbench]
//! models = ["alexnet", "vgg-a"]
//! batches = [32, 128]
//! precisions = ["f32", "f16"]
//! baseline-dir = "baselines"
//! baseline-runs = 10            # blessed runs kept per benchmark
//!
//! [workspace.metadata.convbench.compare]
//! threshold = 0.05              # 5 % (a string "5%" reads the same)
//! alpha = 0.01
//! min-samples = 5
//! fail-on-inconclusive = false
//! fail-threshold = 0.10         # regressions between 5% and 10% alert but pass the gate
//! thresholds = { "vgg-a/*" = 0.10, "*/f16/*" = 0.08 }
//!
//! [workspace.metadata.convbench.ci]
//! comment-on = "change"         # "always" (default), "change" or "regression"
//! mention = ["octocat", "my-org/perf-team"]   # pinged on a regression that fails the gate
//! accept-label = "convbench-accept"           # this PR label turns a failing gate into a pass
//! ab = false                    # true: `ci` decides by interleaved A/B of the base's shaders
//! dashboard-url = "https://my-org.github.io/my-repo/"   # the PR comment links the history
//! ```
//!
//! Keys are kebab-case as in Cargo manifests; the snake_case spellings (`baseline_dir`,
//! `min_samples`, `fail_on_inconclusive`) are accepted too. An unknown key is an error that
//! names it, so a typo never silently falls back to a default.

use crate::compare::CompareConfig;
use crate::kernels::user::KernelSet;
use crate::model::MAX_BATCH;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod error;

pub use error::ConfigError;

/// Name of the stand-alone configuration file at the workspace root.
pub const CONFIG_FILE_NAME: &str = "convbench.toml";

/// Default folder of the blessed baselines, relative to the workspace root.
pub const DEFAULT_BASELINE_DIR: &str = "baselines";

/// The project's convbench configuration. Every key is optional; an empty list means "the
/// command's own default" (for example every model of the zoo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Models to benchmark by default (zoo names).
    pub models: Vec<String>,
    /// Suites to benchmark by default.
    pub suites: Vec<String>,
    /// Batch sizes (images per iteration).
    pub batches: Vec<usize>,
    /// Storage precisions, `f32` and/or `f16`.
    pub precisions: Vec<String>,
    /// Folder of the blessed baselines, relative to the workspace root unless absolute
    /// (default [`DEFAULT_BASELINE_DIR`]).
    #[serde(alias = "baseline_dir")]
    pub baseline_dir: PathBuf,
    /// Blessed runs a baseline keeps per benchmark (`baseline update` adds one and drops the
    /// oldest beyond this): the history from which `compare` learns how much runs differ.
    #[serde(alias = "baseline_runs")]
    pub baseline_runs: usize,
    /// How `compare` decides (the `compare` sub-table).
    pub compare: CompareSettings,
    /// What `ci` and `comment` do on GitHub (the `ci` sub-table).
    pub ci: CiSettings,
    /// The workspace's own WGSL kernels, by name (see [`crate::kernels::user`]); crates of the
    /// workspace declare theirs in `[package.metadata.convbench.kernels.NAME]`.
    pub kernels: BTreeMap<String, crate::kernels::user::KernelConfig>,
    /// The workspace's own networks (`[[model]]`, the zoo's layer IR; see
    /// [`crate::model::custom`]), run by name like the zoo's.
    pub model: Vec<crate::model::Network>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            models: Vec::new(),
            suites: Vec::new(),
            batches: Vec::new(),
            precisions: Vec::new(),
            baseline_dir: PathBuf::from(DEFAULT_BASELINE_DIR),
            baseline_runs: crate::baseline::DEFAULT_KEEP_RUNS,
            compare: CompareSettings::default(),
            ci: CiSettings::default(),
            kernels: BTreeMap::new(),
            model: Vec::new(),
        }
    }
}

/// The configurable part of [`CompareConfig`]; the defaults are [`CompareConfig::default`]'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct CompareSettings {
    /// Relative change of the median that matters, as a fraction: `0.05` is 5 % (`"5%"` reads
    /// the same).
    #[serde(deserialize_with = "fraction::one")]
    pub threshold: f64,
    /// Per-benchmark thresholds (fractions) keyed by a glob on the benchmark id. When several
    /// globs match an id, the longest glob wins (more literal text is more specific), ties
    /// going to the alphabetically first: TOML tables have no reliable order, so the rule
    /// must not depend on one.
    #[serde(deserialize_with = "fraction::map")]
    pub thresholds: BTreeMap<String, f64>,
    /// False discovery rate across all benchmarks and phases.
    pub alpha: f64,
    /// Fewest samples per side for a verdict other than inconclusive.
    #[serde(alias = "min_samples")]
    pub min_samples: usize,
    /// Whether an inconclusive verdict fails the gate like a regression.
    #[serde(alias = "fail_on_inconclusive")]
    pub fail_on_inconclusive: bool,
    /// Slowdown above which a regression fails the gate; smaller significant regressions are
    /// alerts only. Unset: every regression fails.
    #[serde(
        alias = "fail_threshold",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "fraction::option"
    )]
    pub fail_threshold: Option<f64>,
}

/// The config's thresholds, read as a number (`0.05`) or as a percentage string (`"5%"`), as the
/// command line reads them; the range is checked by [`CompareConfig::validate`].
mod fraction {
    use serde::{Deserialize, Deserializer, de};
    use std::collections::BTreeMap;

    struct Fraction(f64);

    impl<'de> Deserialize<'de> for Fraction {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(Visitor)
        }
    }

    struct Visitor;

    impl de::Visitor<'_> for Visitor {
        type Value = Fraction;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a fraction such as 0.05 or a percentage such as \"5%\"")
        }

        fn visit_f64<E: de::Error>(self, value: f64) -> Result<Fraction, E> {
            Ok(Fraction(value))
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<Fraction, E> {
            Ok(Fraction(value as f64))
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<Fraction, E> {
            Ok(Fraction(value as f64))
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<Fraction, E> {
            crate::compare::parse_fraction(text)
                .map(Fraction)
                .map_err(E::custom)
        }
    }

    pub fn one<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Fraction::deserialize(deserializer).map(|f| f.0)
    }

    pub fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
        one(deserializer).map(Some)
    }

    pub fn map<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, f64>, D::Error> {
        let map = BTreeMap::<String, Fraction>::deserialize(deserializer)?;
        Ok(map.into_iter().map(|(key, f)| (key, f.0)).collect())
    }
}

/// When `ci` and `comment` post a new pull-request comment. An existing convbench comment is
/// always updated, so it never shows a stale state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommentOn {
    /// Every run posts or updates the comment.
    #[default]
    Always,
    /// Only a regression, an improvement, or rows that could not be judged (inconclusive,
    /// missing, incomparable) post a new comment.
    Change,
    /// Only a regression posts a new comment.
    Regression,
}

impl CommentOn {
    /// The configuration spelling: `always`, `change` or `regression`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::Change => "change",
            Self::Regression => "regression",
        }
    }
}

impl std::str::FromStr for CommentOn {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, ConfigError> {
        match text {
            "always" => Ok(Self::Always),
            "change" => Ok(Self::Change),
            "regression" => Ok(Self::Regression),
            other => Err(ConfigError::UnknownCommentOn {
                value: other.to_string(),
            }),
        }
    }
}

/// How `ci` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CiMode {
    /// Interleaved A/B of the base revision against the working tree.
    Ab,
    /// Against the baselines blessed at the base revision.
    Baseline,
}

impl CiMode {
    /// As written in the configuration and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            CiMode::Ab => "ab",
            CiMode::Baseline => "baseline",
        }
    }
}

impl std::str::FromStr for CiMode {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text {
            "ab" => Ok(CiMode::Ab),
            "baseline" => Ok(CiMode::Baseline),
            other => Err(format!("unknown ci mode `{other}`; use `ab` or `baseline`")),
        }
    }
}

/// The `ci` sub-table: pull-request comment, mentions and the accept label.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct CiSettings {
    /// When a new comment is posted.
    #[serde(alias = "comment_on")]
    pub comment_on: CommentOn,
    /// GitHub logins (`octocat`) or teams (`org/team`) mentioned in the comment when a
    /// regression fails the gate.
    pub mention: Vec<String>,
    /// A pull-request label that accepts a known regression: with it, a failing gate passes
    /// and the comment says which label accepted it. Unset: no label accepts anything.
    #[serde(alias = "accept_label", skip_serializing_if = "Option::is_none")]
    pub accept_label: Option<String>,
    /// How `ci` decides: `ab` (interleaved A/B of the base revision against the working tree,
    /// in one process on one device) or `baseline` (against the blessed baselines). Unset: A/B
    /// wherever the base revision can be read and a wgpu adapter opens, else baseline mode,
    /// and the comment says why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<CiMode>,
    /// The older spelling of `mode = "ab"`.
    pub ab: bool,
    /// Time for `ci`'s A/B comparison, e.g. `"5m"` or `"90s"` (see [`CiSettings::budget`]).
    /// Unset: [`DEFAULT_CI_BUDGET`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// Where the history dashboard (`history --html`) is published, e.g. by baseline.yml to
    /// GitHub Pages (`https://my-org.github.io/my-repo/`): the pull-request comment links to
    /// it. Only an `https://` URL of plain characters (see [`is_https_url`]).
    #[serde(alias = "dashboard_url", skip_serializing_if = "Option::is_none")]
    pub dashboard_url: Option<String>,
}

/// Time for `ci`'s A/B comparison when neither `--budget` nor `ci.budget` says.
pub const DEFAULT_CI_BUDGET: std::time::Duration = std::time::Duration::from_secs(300);

/// The longest time budget (`--budget`, `ci.budget`): a day. A GitHub Actions job ends after
/// six hours; a larger budget is a typo, not a plan.
pub const MAX_BUDGET: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The most warm-up iterations (`--warmup`) a command takes.
pub const MAX_WARMUP_ITERATIONS: usize = 100_000;

/// The longest minimum warm-up time (`--warmup-ms`): an hour.
pub const MAX_WARMUP_MS: u64 = 3_600_000;

/// The most pairs (`--pairs`) an A/B takes per benchmark: the adaptive stop settles most
/// verdicts in tens of pairs, and every pair's times are kept in the outcome.
pub const MAX_PAIRS: usize = 100_000;

/// The most repetitions a count flag (`--samples` of `tune`, `verify --repeat`,
/// `--random-shapes`, `--seeds`) takes.
pub const MAX_REPETITIONS: usize = 1_000_000;

/// A time budget as people write it (`5m`, `90s`, `1h 30m`): more than zero and at most
/// [`MAX_BUDGET`]; `what` names the flag or key for the error.
pub fn parse_duration(text: &str, what: &str) -> Result<std::time::Duration> {
    let duration = humantime::parse_duration(text.trim()).map_err(|source| ConfigError::NotADuration {
        what: what.to_string(),
        text: text.to_string(),
        source,
    })?;
    if duration.is_zero() {
        return Err(ConfigError::NoTime {
            what: what.to_string(),
            text: text.to_string(),
        }
        .into());
    }
    if duration > MAX_BUDGET {
        return Err(ConfigError::TooMuchTime {
            what: what.to_string(),
            text: text.to_string(),
        }
        .into());
    }
    Ok(duration)
}

impl CiSettings {
    /// The A/B time budget: `budget`, else [`DEFAULT_CI_BUDGET`].
    pub fn budget(&self) -> Result<std::time::Duration> {
        match &self.budget {
            Some(text) => parse_duration(text, "`ci.budget`"),
            None => Ok(DEFAULT_CI_BUDGET),
        }
    }

    /// Checks that every mention is a GitHub login or `org/team`, and the label is a label.
    pub fn validate(&self) -> Result<()> {
        self.budget()?;
        if self.ab && self.mode == Some(CiMode::Baseline) {
            return Err(ConfigError::ModesDisagree.into());
        }
        for name in &self.mention {
            if !is_login_or_team(name) {
                return Err(ConfigError::BadMention { name: name.clone() }.into());
            }
        }
        if let Some(label) = &self.accept_label
            && (label.trim().is_empty() || label.len() > 50 || label.chars().any(char::is_control))
        {
            return Err(ConfigError::BadAcceptLabel { label: label.clone() }.into());
        }
        if let Some(url) = &self.dashboard_url
            && !is_https_url(url)
        {
            return Err(ConfigError::BadDashboardUrl { url: url.clone() }.into());
        }
        Ok(())
    }
}

/// Whether `url` is `https://` followed by plain characters only (letters, digits and
/// `-._~:/?#=&%+`): it can go into a Markdown link or an HTML attribute as it is.
pub fn is_https_url(url: &str) -> bool {
    is_plain_url(url, &["https://"])
}

/// Whether `url` is one of `schemes` followed by plain characters only (letters, digits and
/// `-._~:/?#=&%+`), so that it can go into a Markdown link or an HTML attribute as it is: it
/// cannot end the link, start markup or run script.
pub(crate) fn is_plain_url(url: &str, schemes: &[&str]) -> bool {
    schemes.iter().any(|scheme| {
        url.strip_prefix(scheme).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "-._~:/?#=&%+".contains(ch))
        })
    })
}

/// A GitHub login (letters, digits and single hyphens, at most 39 characters) or `org/team`
/// (team slugs also allow `_`).
pub fn is_login_or_team(name: &str) -> bool {
    let login = |text: &str| {
        !text.is_empty()
            && text.len() <= 39
            && !text.starts_with('-')
            && !text.ends_with('-')
            && !text.contains("--")
            && text.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
    };
    match name.split_once('/') {
        None => login(name),
        Some((org, team)) => {
            login(org)
                && !team.is_empty()
                && team.len() <= 100
                && team
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
        }
    }
}

impl Default for CompareSettings {
    fn default() -> Self {
        let defaults = CompareConfig::default();
        Self {
            threshold: defaults.threshold,
            thresholds: BTreeMap::new(),
            alpha: defaults.alpha,
            min_samples: defaults.min_samples,
            fail_on_inconclusive: defaults.fail_on_inconclusive,
            fail_threshold: defaults.fail_threshold,
        }
    }
}

impl Config {
    /// The [`CompareConfig`] these settings describe, other fields at their defaults.
    /// `per_benchmark` is ordered so that its first match is the longest matching glob (see
    /// [`CompareSettings::thresholds`]).
    pub fn compare_config(&self) -> CompareConfig {
        let mut per_benchmark: Vec<(String, f64)> = self
            .compare
            .thresholds
            .iter()
            .map(|(pattern, threshold)| (pattern.clone(), *threshold))
            .collect();
        per_benchmark.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        CompareConfig {
            threshold: self.compare.threshold,
            per_benchmark,
            alpha: self.compare.alpha,
            min_samples: self.compare.min_samples,
            fail_on_inconclusive: self.compare.fail_on_inconclusive,
            fail_threshold: self.compare.fail_threshold,
            ..CompareConfig::default()
        }
    }

    /// Checks the values serde cannot: batch sizes are positive, the baseline folder is
    /// named, and the comparison settings pass [`CompareConfig::validate`].
    pub fn validate(&self) -> Result<()> {
        if let Some(&batch) = self.batches.iter().find(|&&b| b == 0 || b > MAX_BATCH) {
            return Err(ConfigError::BadBatch { batch }.into());
        }
        for precision in &self.precisions {
            precision
                .parse::<crate::model::Precision>()
                .map_err(|reason| ConfigError::BadPrecision {
                    precision: precision.clone(),
                    reason,
                })?;
        }
        if self.compare.min_samples == 0 {
            return Err(ConfigError::NoMinSamples.into());
        }
        if self.baseline_runs == 0 {
            return Err(ConfigError::NoBaselineRuns.into());
        }
        if self.baseline_dir.as_os_str().is_empty() {
            return Err(ConfigError::EmptyBaselineDir.into());
        }
        if self
            .baseline_dir
            .components()
            .any(|part| part.as_os_str() == ".git")
        {
            return Err(ConfigError::BaselineDirInGit {
                dir: self.baseline_dir.clone(),
            }
            .into());
        }
        for name in &self.models {
            if !self.model.iter().any(|net| &net.name == name) {
                crate::model::network(name).map_err(|source| ConfigError::UnknownName {
                    key: "models",
                    source: Box::new(source),
                })?;
            }
        }
        for name in &self.suites {
            crate::model::suite(name).map_err(|source| ConfigError::UnknownName {
                key: "suites",
                source: Box::new(source),
            })?;
        }
        self.ci.validate()?;
        self.compare_config().validate()
    }
}

/// A located workspace and its configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Workspace {
    /// Workspace root (the folder of the root `Cargo.toml`, or the current directory outside
    /// any cargo workspace).
    pub root: PathBuf,
    /// Cargo's target directory (`<root>/target` outside any cargo workspace).
    pub target_dir: PathBuf,
    /// The configuration that applies.
    pub config: Config,
    /// The file the configuration was read from; `None` when the defaults apply.
    pub config_path: Option<PathBuf>,
    /// Every user kernel declared: the configuration's `kernels` table (sources relative to the
    /// root), then each member crate's `[package.metadata.convbench.kernels]` (sources relative to
    /// the crate), by name. Loaded by the commands that run them ([`Workspace::kernel_set`]).
    pub kernels: Vec<crate::kernels::user::Declared>,
    /// The root `Cargo.toml` when it has a `[workspace.metadata.convbench]` table that
    /// `convbench.toml` hides (the two are never merged): [`Workspace::notices`] says so.
    pub hidden_table: Option<PathBuf>,
}

impl Workspace {
    /// The files a command reads from the workspace (the root `Cargo.toml`, the configuration,
    /// the user kernels' sources), which no output may replace.
    pub fn input_files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.root.join("Cargo.toml")];
        files.extend(self.config_path.clone());
        files.extend(self.kernels.iter().map(|k| k.base_dir.join(&k.config.source)));
        files
    }

    /// Reads and validates every declared kernel ([`KernelSet::load`]): the commands that
    /// parse, list or run variants call it once and pass the set on; the others never do, so
    /// a broken kernel declaration does not stop them.
    pub fn kernel_set(&self) -> Result<KernelSet> {
        KernelSet::load(&self.kernels)
    }

    /// What a command should say about the configuration before it starts (one line each,
    /// without a prefix): today, that `convbench.toml` hides a `[workspace.metadata.convbench]`
    /// table, whose settings a user would otherwise believe apply.
    pub fn notices(&self) -> Vec<String> {
        let (Some(hidden), Some(used)) = (&self.hidden_table, &self.config_path) else {
            return Vec::new();
        };
        vec![format!(
            "{} is the configuration, so the [workspace.metadata.convbench] table of {} is \
             ignored (the two are never merged): move its settings into {}, or delete one of them",
            used.display(),
            hidden.display(),
            CONFIG_FILE_NAME
        )]
    }

    /// The baseline folder as a path: [`Config::baseline_dir`] joined to the root.
    pub fn baseline_dir(&self) -> PathBuf {
        self.root.join(&self.config.baseline_dir)
    }
}

/// Locates the workspace from the current directory (or `manifest_path`, as cargo's
/// `--manifest-path`) and reads its configuration; see the [module docs](self) for the order.
pub fn load(manifest_path: Option<&Path>) -> Result<Workspace> {
    let current_dir = std::env::current_dir().map_err(|source| Error::io(".", source))?;
    load_in(&current_dir, manifest_path)
}

/// [`load`] as if run in `current_dir` (a relative `manifest_path` is relative to it).
pub fn load_in(current_dir: &Path, manifest_path: Option<&Path>) -> Result<Workspace> {
    let manifest = match manifest_path {
        Some(path) => Some(current_dir.join(path)),
        None => current_dir
            .ancestors()
            .map(|dir| dir.join("Cargo.toml"))
            .find(|candidate| candidate.is_file()),
    };
    let (root, target_dir, mut kernels) = match &manifest {
        Some(manifest) => cargo_workspace(current_dir, manifest)?,
        None => (current_dir.to_path_buf(), current_dir.join("target"), Vec::new()),
    };

    let config_file = root.join(CONFIG_FILE_NAME);
    let mut hidden_table = None;
    let (config, config_path) = if config_file.is_file() {
        let cargo_toml = root.join("Cargo.toml");
        if manifest.is_some() && has_cargo_table(&cargo_toml) {
            hidden_table = Some(cargo_toml);
        }
        (read_config_file(&config_file)?, Some(config_file))
    } else if std::fs::symlink_metadata(&config_file).is_ok() {
        return Err(ConfigError::ConfigNotAFile { path: config_file }.into());
    } else if manifest.is_some() {
        let cargo_toml = root.join("Cargo.toml");
        match read_cargo_table(&cargo_toml)? {
            Some(config) => (config, Some(cargo_toml)),
            None => (Config::default(), None),
        }
    } else {
        (Config::default(), None)
    };

    let mut config = config;
    config.model = std::mem::take(&mut config.model)
        .into_iter()
        .map(crate::model::custom::network_from_data)
        .collect::<Result<_, _>>()
        .map_err(|source| ConfigError::InvalidModel {
            file: config_path.clone(),
            source,
        })?;
    if let Err(error) = config.validate() {
        return Err(ConfigError::InvalidSettings {
            file: config_path,
            source: Box::new(error),
        }
        .into());
    }
    let declared_in = config_path.clone().unwrap_or_else(|| root.join(CONFIG_FILE_NAME));
    let mut all: Vec<crate::kernels::user::Declared> = config
        .kernels
        .iter()
        .map(|(name, kernel)| crate::kernels::user::Declared {
            name: name.clone(),
            config: kernel.clone(),
            base_dir: root.clone(),
            file: declared_in.clone(),
        })
        .collect();
    all.append(&mut kernels);
    let mut names = std::collections::BTreeSet::new();
    if let Some(twice) = all.iter().find(|k| !names.insert(k.name.clone())) {
        return Err(ConfigError::KernelDeclaredTwice {
            name: twice.name.clone(),
            file: twice.file.clone(),
        }
        .into());
    }
    Ok(Workspace {
        root,
        target_dir,
        config,
        config_path,
        kernels: all,
        hidden_table,
    })
}

/// The `[package.metadata.convbench]` table of a workspace member: only `kernels` belongs there.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PackageTable {
    /// Each kernel's table, read on its own ([`declared_in`]) so that an error names it.
    #[serde(default)]
    kernels: BTreeMap<String, toml::Value>,
}

/// The kernels each member of `metadata` declares in `[package.metadata.convbench.kernels]`.
fn package_kernels(metadata: &cargo_metadata::Metadata) -> Result<Vec<crate::kernels::user::Declared>> {
    let mut kernels = Vec::new();
    for package in metadata.workspace_packages() {
        let Some(table) = package.metadata.get("convbench") else {
            continue;
        };
        let manifest = package.manifest_path.clone().into_std_path_buf();
        let table =
            serde_json::from_value(table.clone()).map_err(|error| bad_package_table(&manifest, error))?;
        kernels.extend(declared_in(table, &manifest)?);
    }
    Ok(kernels)
}

/// The error of a `[package.metadata.convbench]` table that does not parse.
fn bad_package_table(manifest: &Path, error: impl std::error::Error + Send + Sync + 'static) -> ConfigError {
    ConfigError::InvalidPackageTable {
        manifest: manifest.to_path_buf(),
        source: Box::new(error),
    }
}

/// The kernels a crate's table declares, their sources relative to its manifest's folder; a
/// kernel whose table does not parse is an error naming it and the key.
fn declared_in(table: PackageTable, manifest: &Path) -> Result<Vec<crate::kernels::user::Declared>> {
    let base_dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    table
        .kernels
        .into_iter()
        .map(|(name, value)| {
            let config = value
                .try_into()
                .map_err(|source| ConfigError::InvalidPackageKernel {
                    manifest: manifest.to_path_buf(),
                    kernel: name.clone(),
                    source,
                })?;
            Ok(crate::kernels::user::Declared {
                name,
                config,
                base_dir: base_dir.clone(),
                file: manifest.to_path_buf(),
            })
        })
        .collect()
}

/// Workspace root, target directory and the members' kernels, from `cargo metadata --no-deps`.
fn cargo_workspace(
    current_dir: &Path,
    manifest: &Path,
) -> Result<(PathBuf, PathBuf, Vec<crate::kernels::user::Declared>)> {
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(manifest)
        .current_dir(current_dir)
        .no_deps()
        .exec();
    let metadata = match metadata {
        Err(cargo_metadata::Error::Io(source)) if source.kind() == std::io::ErrorKind::NotFound => {
            return manifest_workspace(manifest);
        }
        other => other,
    };
    let manifest_path = manifest.to_path_buf();
    let metadata = metadata.map_err(|error| match error {
        cargo_metadata::Error::CargoMetadata { stderr } => ConfigError::CargoMetadataFailed {
            manifest: manifest_path,
            stderr: stderr.trim().to_string(),
        },
        cargo_metadata::Error::Io(source) => ConfigError::CargoNotRunnable {
            manifest: manifest_path,
            source,
        },
        source => ConfigError::CargoMetadataUnreadable {
            manifest: manifest_path,
            source,
        },
    })?;
    let kernels = package_kernels(&metadata)?;
    Ok((
        metadata.workspace_root.into_std_path_buf(),
        metadata.target_directory.into_std_path_buf(),
        kernels,
    ))
}

/// [`cargo_workspace`] without cargo (a GPU machine that was given the binary but no Rust
/// toolchain): the manifest's folder is the root, `target/` (or `CARGO_TARGET_DIR`) the target
/// folder, and the kernels are those of the manifest's own `[package.metadata.convbench]` and of
/// the members its `[workspace] members` names (each path component a glob, as cargo expands them), read from the
/// files. A manifest inside a workspace it does not define is read as its own root; `exclude`
/// is not read.
fn manifest_workspace(manifest: &Path) -> Result<(PathBuf, PathBuf, Vec<crate::kernels::user::Declared>)> {
    #[derive(Deserialize)]
    struct Manifest {
        package: Option<toml::Value>,
        workspace: Option<Members>,
    }
    #[derive(Deserialize)]
    struct Members {
        #[serde(default)]
        members: Vec<String>,
    }
    #[derive(Deserialize)]
    struct PackageOnly {
        package: Option<PackageMetadata>,
    }
    #[derive(Deserialize)]
    struct PackageMetadata {
        metadata: Option<BTreeMap<String, toml::Value>>,
    }
    let parse = |path: &Path| -> Result<Manifest> {
        Ok(toml::from_str(&read_text(path)?).map_err(|source| invalid_manifest(path, source))?)
    };
    let root = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    let top = parse(manifest)?;
    let mut manifests = Vec::new();
    if top.package.is_some() {
        manifests.push(manifest.to_path_buf());
    }
    for member in top.workspace.map(|w| w.members).unwrap_or_default() {
        let dirs = member_dirs(&root, &member).map_err(|source| ConfigError::MemberPattern {
            manifest: manifest.to_path_buf(),
            member: member.clone(),
            source,
        })?;
        manifests.extend(
            dirs.into_iter()
                .map(|dir| dir.join("Cargo.toml"))
                .filter(|m| m.is_file()),
        );
    }
    let mut kernels = Vec::new();
    for path in manifests {
        let text = read_text(&path)?;
        let parsed: PackageOnly = toml::from_str(&text).map_err(|source| invalid_manifest(&path, source))?;
        let Some(table) = parsed
            .package
            .and_then(|p| p.metadata)
            .and_then(|mut m| m.remove("convbench"))
        else {
            continue;
        };
        let table = table
            .try_into()
            .map_err(|error| bad_package_table(&path, error))?;
        kernels.extend(declared_in(table, &path)?);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok((root, target, kernels))
}

/// The folders a `[workspace] members` pattern names under `root`, as cargo expands it: each
/// path component is a glob (`crates/*`, `tools/*-cli`), matched against the folders there;
/// folders that do not exist are left out.
fn member_dirs(root: &Path, pattern: &str) -> std::result::Result<Vec<PathBuf>, globset::Error> {
    let mut dirs = vec![root.to_path_buf()];
    for component in pattern.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if !component.contains(['*', '?', '[', '{']) {
            dirs = dirs
                .into_iter()
                .map(|dir| dir.join(component))
                .filter(|dir| dir.is_dir())
                .collect();
            continue;
        }
        let matcher = globset::Glob::new(component)?.compile_matcher();
        let mut matched = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            matched.extend(
                entries
                    .flatten()
                    .filter(|entry| entry.path().is_dir() && matcher.is_match(entry.file_name()))
                    .map(|entry| entry.path()),
            );
        }
        matched.sort();
        dirs = matched;
    }
    Ok(dirs)
}

/// The error of a `Cargo.toml`, read without cargo, that does not parse.
fn invalid_manifest(path: &Path, source: toml::de::Error) -> ConfigError {
    ConfigError::InvalidManifest {
        path: path.to_path_buf(),
        source,
    }
}

fn read_text(path: &Path) -> Result<String> {
    crate::fs::read_text(path, crate::fs::MAX_TEXT_FILE_BYTES)
}

/// `convbench.toml`: the configuration at the top level.
fn read_config_file(path: &Path) -> Result<Config> {
    Ok(
        toml::from_str(&read_text(path)?).map_err(|source| ConfigError::InvalidConfigFile {
            path: path.to_path_buf(),
            source,
        })?,
    )
}

/// The `[workspace.metadata.convbench]` table of a `Cargo.toml`, if it has one. Read from the
/// file rather than from `cargo metadata`'s JSON so that errors point at a line.
fn read_cargo_table(path: &Path) -> Result<Option<Config>> {
    #[derive(Deserialize)]
    struct Manifest {
        workspace: Option<WorkspaceTable>,
    }
    #[derive(Deserialize)]
    struct WorkspaceTable {
        metadata: Option<MetadataTable>,
    }
    #[derive(Deserialize)]
    struct MetadataTable {
        convbench: Option<Config>,
    }

    let manifest: Manifest =
        toml::from_str(&read_text(path)?).map_err(|source| ConfigError::InvalidWorkspaceTable {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(manifest
        .workspace
        .and_then(|workspace| workspace.metadata)
        .and_then(|metadata| metadata.convbench))
}

/// Whether the `Cargo.toml` at `path` has a `[workspace.metadata.convbench]` table, whatever is
/// in it (a file that cannot be read or parsed has none: it is not the configuration in use,
/// and cargo reports it).
fn has_cargo_table(path: &Path) -> bool {
    read_text(path)
        .ok()
        .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
        .is_some_and(|manifest| {
            manifest
                .get("workspace")
                .and_then(|w| w.get("metadata"))
                .and_then(|m| m.get("convbench"))
                .is_some()
        })
}

/// The [`ConfigError`] inside `error`, for tests that match on its variant.
#[cfg(test)]
fn config_error(error: &Error) -> &ConfigError {
    match error {
        Error::Config(config) => config,
        other => panic!("not a configuration error: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// A stand-alone crate whose `Cargo.toml` carries `extra` after `[package]`.
    fn workspace(extra: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temporary directory");
        let manifest =
            format!("[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n{extra}\n");
        std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write Cargo.toml");
        std::fs::create_dir(dir.path().join("src")).expect("create src");
        std::fs::write(dir.path().join("src/lib.rs"), "").expect("write lib.rs");
        dir
    }

    fn canonical(path: &Path) -> PathBuf {
        std::fs::canonicalize(path).expect("canonical path")
    }

    const CARGO_TABLE: &str = r#"
[workspace]

[workspace.metadata.convbench]
models = ["alexnet", "vgg-a"]
batches = [32, 128]
precisions = ["f32", "f16"]
baseline-dir = "perf/baselines"

[workspace.metadata.convbench.compare]
threshold = 0.08
alpha = 0.01
min-samples = 8
fail-on-inconclusive = true
thresholds = { "vgg-a/*" = 0.10, "*" = 0.2 }
"#;

    #[test]
    fn reads_workspace_metadata_from_cargo_toml() {
        let dir = workspace(CARGO_TABLE);
        let loaded = load_in(dir.path(), Some(Path::new("Cargo.toml"))).expect("load");
        assert_eq!(canonical(&loaded.root), canonical(dir.path()));
        assert!(loaded.target_dir.is_absolute());
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            assert_eq!(
                canonical(loaded.target_dir.parent().expect("parent")),
                canonical(dir.path())
            );
        }
        assert_eq!(loaded.config_path, Some(loaded.root.join("Cargo.toml")));
        let config = &loaded.config;
        assert_eq!(config.models, ["alexnet", "vgg-a"]);
        assert_eq!(config.batches, [32, 128]);
        assert_eq!(config.precisions, ["f32", "f16"]);
        assert_eq!(config.baseline_dir, Path::new("perf/baselines"));
        assert_eq!(loaded.baseline_dir(), loaded.root.join("perf/baselines"));
        let compare = config.compare_config();
        assert_eq!(compare.threshold, 0.08);
        assert_eq!(compare.alpha, 0.01);
        assert_eq!(compare.min_samples, 8);
        assert!(compare.fail_on_inconclusive);
        assert_eq!(compare.threshold_for("vgg-a/train/b64/f32/wgpu"), 0.10);
        assert_eq!(compare.threshold_for("alexnet/train/b64/f32/wgpu"), 0.2);
    }

    #[test]
    fn discovers_the_manifest_from_a_subdirectory() {
        let dir = workspace(CARGO_TABLE);
        let loaded = load_in(&dir.path().join("src"), None).expect("load");
        assert_eq!(canonical(&loaded.root), canonical(dir.path()));
        assert_eq!(loaded.config.models, ["alexnet", "vgg-a"]);
    }

    #[test]
    fn a_manifest_without_the_table_gives_defaults() {
        let dir = workspace("");
        let loaded = load_in(dir.path(), None).expect("load");
        assert_eq!(loaded.config, Config::default());
        assert_eq!(loaded.config_path, None);
        assert_eq!(loaded.config.baseline_dir, Path::new("baselines"));
        assert_eq!(loaded.config.compare_config(), CompareConfig::default());
    }

    #[test]
    fn convbench_toml_wins_over_cargo_metadata() {
        let dir = workspace(CARGO_TABLE);
        std::fs::write(
            dir.path().join(CONFIG_FILE_NAME),
            "models = [\"resnet50\"]\n\n[compare]\nthreshold = 0.03\n",
        )
        .expect("write convbench.toml");
        let loaded = load_in(dir.path(), None).expect("load");
        assert_eq!(loaded.config_path, Some(loaded.root.join(CONFIG_FILE_NAME)));
        assert_eq!(loaded.config.models, ["resnet50"]);
        assert_eq!(loaded.config.compare.threshold, 0.03);
        // Not merged: what convbench.toml leaves out is the default, not Cargo.toml's value.
        assert!(loaded.config.batches.is_empty());
        assert_eq!(loaded.config.baseline_dir, Path::new(DEFAULT_BASELINE_DIR));
        // ... and said, even when convbench.toml is empty.
        std::fs::write(dir.path().join(CONFIG_FILE_NAME), "").expect("write convbench.toml");
        let loaded = load_in(dir.path(), None).expect("load");
        assert_eq!(loaded.config, Config::default());
        let notices = loaded.notices();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].contains(
                "convbench.toml is the configuration, so the \
                 [workspace.metadata.convbench] table of"
            ) && notices[0].contains("Cargo.toml is ignored"),
            "{notices:?}"
        );
        // Without the table, nothing to say.
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .expect("write Cargo.toml");
        assert!(load_in(dir.path(), None).expect("load").notices().is_empty());
    }

    #[test]
    fn unknown_key_in_cargo_toml_is_an_error_naming_it() {
        let dir = workspace("[workspace]\n\n[workspace.metadata.convbench]\nmodels = []\ntreshold = 0.1\n");
        let error = load_in(dir.path(), None).expect_err("a typo must fail");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            matches!(config_error(&error), ConfigError::InvalidWorkspaceTable { path, .. } if path.ends_with("Cargo.toml")),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains("treshold"), "{message}");
        assert!(message.contains("Cargo.toml"), "{message}");
    }

    #[test]
    fn unknown_key_in_convbench_toml_is_an_error_naming_it() {
        let dir = workspace("");
        std::fs::write(dir.path().join(CONFIG_FILE_NAME), "[compare]\nmin-sample = 3\n")
            .expect("write convbench.toml");
        let error = load_in(dir.path(), None).expect_err("a typo must fail");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            matches!(config_error(&error), ConfigError::InvalidConfigFile { path, .. } if path.ends_with(CONFIG_FILE_NAME)),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains("min-sample"), "{message}");
        assert!(message.contains(CONFIG_FILE_NAME), "{message}");
    }

    #[test]
    fn a_folder_named_convbench_toml_is_an_error_not_the_defaults() {
        let dir = workspace("");
        std::fs::create_dir(dir.path().join(CONFIG_FILE_NAME)).expect("mkdir");
        let error = load_in(dir.path(), None).expect_err("a folder is not a configuration");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            matches!(config_error(&error), ConfigError::ConfigNotAFile { path } if path.ends_with(CONFIG_FILE_NAME)),
            "{error:?}"
        );
        assert!(error.to_string().ends_with("rename or remove it"), "{error}");
    }

    #[test]
    fn snake_case_keys_are_accepted() {
        let config: Config =
            toml::from_str("baseline_dir = \"b\"\n[compare]\nmin_samples = 7\nfail_on_inconclusive = true\n")
                .expect("parse");
        assert_eq!(config.baseline_dir, Path::new("b"));
        assert_eq!(config.compare.min_samples, 7);
        assert!(config.compare.fail_on_inconclusive);
    }

    #[test]
    fn thresholds_read_as_percentages_too() {
        let config: Config = toml::from_str(
            "[compare]\nthreshold = \"5%\"\nfail-threshold = \" 12.5 % \"\nthresholds = { \"vgg-a/*\" = \"10%\", \
             \"*\" = 0.2 }\n",
        )
        .expect("parse");
        assert!((config.compare.threshold - 0.05).abs() < 1e-12);
        assert_eq!(config.compare.fail_threshold, Some(0.125));
        assert!((config.compare.thresholds["vgg-a/*"] - 0.10).abs() < 1e-12);
        assert_eq!(config.compare.thresholds["*"], 0.2);
        // An integer is a number too (and then refused by `validate` as 100% or more).
        let config: Config = toml::from_str("[compare]\nthreshold = 0\n").expect("parse");
        assert_eq!(config.compare.threshold, 0.0);
        let error = toml::from_str::<Config>("[compare]\nthreshold = \"five\"\n").expect_err("not a number");
        assert!(error.to_string().contains("`five` is not a number"), "{error}");
        let error = toml::from_str::<Config>("[compare]\nthreshold = true\n").expect_err("not a number");
        assert!(
            error.to_string().contains("a percentage such as \"5%\""),
            "{error}"
        );
    }

    #[test]
    fn invalid_values_are_rejected_with_the_file_named() {
        let dir = workspace("");
        std::fs::write(dir.path().join(CONFIG_FILE_NAME), "[compare]\nalpha = 1.5\n")
            .expect("write convbench.toml");
        let error = load_in(dir.path(), None).expect_err("alpha 1.5 is invalid");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(error.to_string().contains(CONFIG_FILE_NAME), "{error}");
        assert!(
            matches!(
                config_error(&error),
                ConfigError::InvalidSettings { file: Some(file), source }
                    if file.ends_with(CONFIG_FILE_NAME) && matches!(**source, Error::Compare(_))
            ),
            "{error:?}"
        );

        let zero_batch = Config {
            batches: vec![0],
            ..Config::default()
        };
        let error = zero_batch.validate().expect_err("batch 0");
        assert!(
            matches!(config_error(&error), ConfigError::BadBatch { batch: 0 }),
            "{error:?}"
        );
        let no_runs = Config {
            baseline_runs: 0,
            ..Config::default()
        };
        let error = no_runs.validate().expect_err("no runs");
        assert!(
            matches!(config_error(&error), ConfigError::NoBaselineRuns),
            "{error:?}"
        );
        for dir in [".git/baselines", "sub/.git/b"] {
            let in_git = Config {
                baseline_dir: PathBuf::from(dir),
                ..Config::default()
            };
            let error = in_git.validate().expect_err("inside .git");
            assert_eq!(error.kind(), ErrorKind::InvalidInput);
            assert!(
                matches!(config_error(&error), ConfigError::BaselineDirInGit { .. }),
                "{error:?}"
            );
        }
        let dotted = Config {
            baseline_dir: PathBuf::from("perf/.gitlab-baselines"),
            ..Config::default()
        };
        dotted.validate().expect("a folder that only starts like .git");
        let half = Config {
            precisions: vec!["f8".into()],
            ..Config::default()
        };
        let error = half.validate().expect_err("f8");
        assert!(
            matches!(config_error(&error), ConfigError::BadPrecision { precision, .. } if precision == "f8"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "`precisions`: unknown precision `f8`; use f32 or f16"
        );
    }

    #[test]
    fn a_configured_model_or_kernel_that_cannot_be_is_named_with_its_file() {
        let dir = workspace("");
        std::fs::write(
            dir.path().join(CONFIG_FILE_NAME),
            "[[model]]\nname = \"LeNet\"\ninput = [1, 28, 28]\nlayers = []\n",
        )
        .expect("write convbench.toml");
        let error = load_in(dir.path(), None).expect_err("the zoo has a lenet");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            matches!(
                config_error(&error),
                ConfigError::InvalidModel { file: Some(file), source: crate::model::ModelError::ZooName { model, zoo } }
                    if file.ends_with(CONFIG_FILE_NAME) && model == "LeNet" && zoo == "lenet"
            ),
            "{error:?}"
        );
        assert!(error.to_string().ends_with("give yours another name"), "{error}");

        // `ab = true` beside `mode = "baseline"`: which one decides is not the reader's guess.
        std::fs::write(
            dir.path().join(CONFIG_FILE_NAME),
            "[ci]\nab = true\nmode = \"baseline\"\n",
        )
        .expect("write convbench.toml");
        let error = load_in(dir.path(), None).expect_err("two modes");
        assert!(error.to_string().contains("disagree"), "{error}");

        // A model or suite the configuration names that does not exist, with its file and key.
        for (text, key) in [
            ("models = [\"lenett\"]\n", "`models`: unknown model `lenett`"),
            ("suites = [\"nosuch\"]\n", "`suites`: unknown suite `nosuch`"),
        ] {
            std::fs::write(dir.path().join(CONFIG_FILE_NAME), text).expect("write convbench.toml");
            let error = load_in(dir.path(), None).expect_err("no such model or suite");
            assert_eq!(error.kind(), ErrorKind::InvalidInput);
            let shown = error.to_string();
            assert!(shown.contains(CONFIG_FILE_NAME) && shown.contains(key), "{shown}");
        }

        let kernel = "op = \"conv2d_forward\"\nsource = \"k.wgsl\"\n";
        let dir = workspace(&format!("[package.metadata.convbench.kernels.mine]\n{kernel}"));
        std::fs::write(
            dir.path().join(CONFIG_FILE_NAME),
            format!("[kernels.mine]\n{kernel}"),
        )
        .expect("write convbench.toml");
        let error = load_in(dir.path(), None).expect_err("mine twice");
        assert!(
            matches!(config_error(&error), ConfigError::KernelDeclaredTwice { name, file } if name == "mine" && file.ends_with("Cargo.toml")),
            "{error:?}"
        );
        assert!(error.to_string().contains("is declared twice"), "{error}");
    }

    #[test]
    fn a_budget_is_a_duration_with_time_in_it_and_at_most_a_day() {
        assert_eq!(
            parse_duration("90s", "--budget").expect("90 s"),
            std::time::Duration::from_secs(90)
        );
        let error = parse_duration("soon", "--budget").expect_err("not a duration");
        assert!(
            matches!(config_error(&error), ConfigError::NotADuration { what, text, .. } if what == "--budget" && text == "soon"),
            "{error:?}"
        );
        let error = parse_duration("0s", "`ci.budget`").expect_err("no time");
        assert!(
            matches!(config_error(&error), ConfigError::NoTime { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "`ci.budget` `0s` leaves no time to measure; give it a duration such as `5m`"
        );
        let error = parse_duration("2days", "--budget").expect_err("too long");
        assert!(
            matches!(config_error(&error), ConfigError::TooMuchTime { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "--budget `2days` is longer than 1day, the most convbench takes; give a shorter one such as `1h`"
        );
        assert!(error.kind() == ErrorKind::InvalidInput);
    }

    #[test]
    fn outside_any_workspace_the_current_directory_and_defaults_apply() {
        let dir = tempfile::tempdir().expect("temporary directory");
        if dir.path().ancestors().any(|a| a.join("Cargo.toml").is_file()) {
            return; // the temporary directory lies inside some crate; nothing to test here
        }
        let loaded = load_in(dir.path(), None).expect("no workspace is not an error");
        assert_eq!(loaded.root, dir.path());
        assert_eq!(loaded.target_dir, dir.path().join("target"));
        assert_eq!(loaded.config, Config::default());

        std::fs::write(dir.path().join(CONFIG_FILE_NAME), "batches = [4]\n").expect("write");
        let loaded = load_in(dir.path(), None).expect("load convbench.toml");
        assert_eq!(loaded.config.batches, [4]);
    }

    #[test]
    fn a_missing_manifest_path_is_invalid_input() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let error = load_in(dir.path(), Some(Path::new("nope/Cargo.toml"))).expect_err("missing");
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    }

    #[test]
    fn the_longest_matching_glob_wins() {
        let mut config = Config::default();
        config.compare.thresholds.insert("*".to_string(), 0.3);
        config.compare.thresholds.insert("alexnet/*".to_string(), 0.1);
        config.compare.thresholds.insert("*/f16/*".to_string(), 0.2);
        let compare = config.compare_config();
        assert_eq!(compare.threshold_for("alexnet/train/b1/f16/wgpu"), 0.1);
        assert_eq!(compare.threshold_for("vgg-a/train/b1/f16/wgpu"), 0.2);
        assert_eq!(compare.threshold_for("vgg-a/train/b1/f32/wgpu"), 0.3);
    }

    #[test]
    fn ci_settings_parse_and_validate() {
        let config: Config = toml::from_str(
            "[ci]\ncomment-on = \"regression\"\nmention = [\"octocat\", \"my-org/perf_team\"]\n\
             accept-label = \"convbench-accept\"\n[compare]\nfail-threshold = 0.1\n",
        )
        .expect("valid table");
        assert_eq!(config.ci.comment_on, CommentOn::Regression);
        assert_eq!(config.ci.accept_label.as_deref(), Some("convbench-accept"));
        assert_eq!(config.compare_config().fail_threshold, Some(0.1));
        config.validate().expect("valid settings");
        for bad in ["@octocat", "a b", "-x", "x--y", "org/", "a/b/c"] {
            let settings = CiSettings {
                mention: vec![bad.to_string()],
                ..CiSettings::default()
            };
            let error = settings.validate().expect_err(bad);
            assert!(
                matches!(config_error(&error), ConfigError::BadMention { name } if name == bad),
                "{error:?}"
            );
            assert!(error.to_string().contains(bad), "{error}");
        }
        let typo = toml::from_str::<Config>("[ci]\ncomment_onn = \"always\"\n").expect_err("unknown key");
        assert!(typo.to_string().contains("comment_onn"), "{typo}");
        let negative: Config = toml::from_str("[compare]\nfail-threshold = -0.1\n").expect("parses");
        assert!(negative.validate().is_err());
        assert_eq!("change".parse::<CommentOn>().expect("known"), CommentOn::Change);
        let dashboard: Config =
            toml::from_str("[ci]\ndashboard-url = \"https://o.github.io/r/\"\n").expect("parses");
        assert_eq!(
            dashboard.ci.dashboard_url.as_deref(),
            Some("https://o.github.io/r/")
        );
        dashboard.validate().expect("an https URL");
        for bad in [
            "http://o.github.io/r/",
            "javascript:alert(1)",
            "https://x/)[evil](https://y",
            "https://x/\"><script>",
            "https://",
        ] {
            let settings = CiSettings {
                dashboard_url: Some(bad.to_string()),
                ..CiSettings::default()
            };
            let error = settings.validate().expect_err(bad);
            assert!(
                matches!(config_error(&error), ConfigError::BadDashboardUrl { url } if url == bad),
                "{error:?}"
            );
            assert!(error.to_string().contains("ci.dashboard-url"), "{error}");
        }
        assert!(matches!(
            "sometimes".parse::<CommentOn>(),
            Err(ConfigError::UnknownCommentOn { value }) if value == "sometimes"
        ));
    }
}

#[cfg(test)]
mod without_cargo {
    use super::*;

    /// A workspace whose root is a crate and which names one member directly and one folder of
    /// members with `/*`; the root and one member declare kernels.
    #[test]
    fn the_manifest_alone_gives_the_root_and_every_members_kernels() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("create folder");
            std::fs::write(path, text).expect("write");
        };
        write(
            "Cargo.toml",
            "[package]\nname = \"top\"\nversion = \"0.1.0\"\n\n[workspace]\nmembers = [\"tool\", \"crates/*\"]\n\n\
             [package.metadata.convbench.kernels.mine]\nop = \"conv2d_forward\"\nsource = \"k.wgsl\"\n",
        );
        write(
            "tool/Cargo.toml",
            "[package]\nname = \"tool\"\nversion = \"0.1.0\"\n",
        );
        write(
            "crates/deep/Cargo.toml",
            "[package]\nname = \"deep\"\nversion = \"0.1.0\"\n\n\
             [package.metadata.convbench.kernels.theirs]\nop = \"linear_forward\"\nsource = \"l.wgsl\"\n",
        );
        write("crates/not-a-crate/readme.txt", "no manifest here");
        let (found_root, target, kernels) = manifest_workspace(&root.join("Cargo.toml")).expect("read");
        assert_eq!(found_root, root);
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            assert_eq!(target, root.join("target"));
        }
        let names: Vec<(&str, PathBuf)> = kernels
            .iter()
            .map(|k| (k.name.as_str(), k.base_dir.clone()))
            .collect();
        assert_eq!(
            names,
            vec![("mine", root.to_path_buf()), ("theirs", root.join("crates/deep"))]
        );
    }

    #[test]
    fn a_bad_member_table_names_its_manifest() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"top\"\nversion = \"0.1.0\"\n\n[package.metadata.convbench]\nmodels = [\"lenet\"]\n",
        )
        .expect("write");
        let error = manifest_workspace(&manifest).expect_err("models belong to the workspace table");
        assert!(
            matches!(super::config_error(&error), ConfigError::InvalidPackageTable { manifest: m, .. } if m == &manifest),
            "{error:?}"
        );
        assert!(
            error.to_string().contains(&manifest.display().to_string()),
            "{error}"
        );
    }
}

#[cfg(test)]
mod member_patterns {
    use super::*;

    #[test]
    fn each_component_of_a_member_pattern_is_a_glob() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path();
        for folder in [
            "tools/a-cli/core",
            "tools/b-cli/core",
            "tools/c-lib/core",
            "tools/x-cli",
        ] {
            std::fs::create_dir_all(root.join(folder)).expect("create");
        }
        std::fs::create_dir_all(root.join("plain")).expect("create");
        std::fs::write(root.join("tools/a-cli/core/Cargo.toml"), "").expect("write");
        let found = member_dirs(root, "tools/*-cli/core").expect("a valid pattern");
        assert_eq!(
            found,
            vec![root.join("tools/a-cli/core"), root.join("tools/b-cli/core")]
        );
        assert_eq!(
            member_dirs(root, "./plain").expect("plain"),
            vec![root.join("plain")]
        );
        assert!(member_dirs(root, "tools/[").is_err());
        let manifest = root.join("Cargo.toml");
        std::fs::write(&manifest, "[workspace]\nmembers = [\"tools/[\"]\n").expect("write");
        let error = manifest_workspace(&manifest).expect_err("a pattern cargo would refuse");
        assert!(
            matches!(super::config_error(&error), ConfigError::MemberPattern { member, .. } if member == "tools/["),
            "{error:?}"
        );
        assert!(error.to_string().contains("member `tools/[`"), "{error}");
    }
}
