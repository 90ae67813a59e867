//! What can go wrong with blessed baselines and the git repository that holds them, as values:
//! the repository (none, bare, a folder outside it), revisions (unknown, missing from a shallow
//! clone, not a commit), the records being blessed, the lock and the index.

use crate::ErrorKind;
use std::path::PathBuf;

/// The advice for a clone too shallow to hold the base commit (the GitHub Actions default).
const SHALLOW_ADVICE: &str = "the clone is shallow and lacks the base commit; use `fetch-depth: 0` \
                              in actions/checkout (or `git fetch --unshallow`)";

/// An error of the baselines or their git repository. Each message names the thing and the next
/// step.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The workspace is not inside a git repository.
    #[error(
        "{} is not inside a git repository; run `git init`{}",
        path.display(),
        if *offers_file { " or pass --baseline-file FILE" } else { "" }
    )]
    NotARepository {
        /// The workspace root.
        path: PathBuf,
        /// Whether the command has `--baseline-file` to offer ([`BaselineError::offer_baseline_file`]).
        offers_file: bool,
    },
    /// The repository has no working tree to write baselines into.
    #[error(
        "the git repository at {} is bare (no working tree); run convbench in a checkout",
        git_dir.display()
    )]
    Bare {
        /// The repository's git directory.
        git_dir: PathBuf,
    },
    /// The configured baseline folder lies outside the repository's working tree.
    #[error(
        "baseline directory {} is outside the git repository at {}; choose a folder inside it",
        dir.display(),
        workdir.display()
    )]
    OutsideRepository {
        /// The baseline folder, resolved.
        dir: PathBuf,
        /// The root of the working tree.
        workdir: PathBuf,
    },
    /// The baseline folder is a file or a link to something else than a folder.
    #[error(
        "baseline directory {} is {what}, not a folder; move it away, or set `baseline-dir` in \
         the configuration to another folder",
        dir.display()
    )]
    DirNotAFolder {
        /// The baseline folder, as configured.
        dir: PathBuf,
        /// `a file`, `a link to a file`, `a link to nothing` or one that cannot be followed.
        what: &'static str,
    },
    /// git failed at a step (only its message is shown: git2's `Display` adds its class and code).
    #[error("{context}: {}", source.message())]
    Git {
        /// The step, e.g. `cannot read HEAD`.
        context: String,
        /// What git said.
        #[source]
        source: git2::Error,
    },
    /// `HEAD` is unborn: there is no commit to read baselines at.
    #[error(
        "the repository at {} has no commits yet; make a first commit{}",
        workdir.display(),
        if *offers_file { " (with the baselines) or pass --baseline-file FILE" } else { "" }
    )]
    NoCommits {
        /// The root of the working tree.
        workdir: PathBuf,
        /// Whether the command has `--baseline-file` to offer ([`BaselineError::offer_baseline_file`]).
        offers_file: bool,
    },
    /// The history of a baseline in a shallow clone: it would begin at the shallow root.
    #[error("cannot read the history of {}: {SHALLOW_ADVICE}", path.display())]
    ShallowHistory {
        /// The baseline file, relative to the repository root.
        path: PathBuf,
    },
    /// A revision flag that names no single commit: empty, or a range such as `main..line`.
    #[error("`{rev}` is not a revision; pass one branch, tag or commit id (not a range)")]
    NotARevision {
        /// The text as given.
        rev: String,
    },
    /// A revision that names a branch or tag and is also the start of another commit's id: git
    /// would take the name with a warning, and a gate must not pick a base by a guess.
    #[error(
        "`{rev}` is ambiguous: it names {reference} ({named}) and is the start of commit {commit}; \
         pass `{reference}` or a longer commit id"
    )]
    AmbiguousRevision {
        /// The text as given.
        rev: String,
        /// The full name of the reference, e.g. `refs/heads/cafe`.
        reference: String,
        /// The commit the reference names, abbreviated.
        named: String,
        /// The commit the id prefix names, abbreviated.
        commit: String,
    },
    /// A revision the base needs is not in the repository; in a shallow clone the message says
    /// how to deepen it, as that is the likely cause.
    #[error(
        "{revision}{}",
        if *shallow { format!(": {SHALLOW_ADVICE}") } else { format!("; {}", revision.advice()) }
    )]
    RevisionNotFound {
        /// Which revision.
        revision: MissingRevision,
        /// Whether the repository is a shallow clone.
        shallow: bool,
    },
    /// A revision that names something other than a commit (a tree, a blob).
    #[error("revision `{rev}` is not a commit; pass a branch, tag or commit id")]
    NotACommit {
        /// The revision as given.
        rev: String,
    },
    /// A commit id that is not hexadecimal of a git object id's length.
    #[error("`{oid}` is not a git commit id")]
    BadCommitId {
        /// The text given.
        oid: String,
    },
    /// `bisect --good` is not an ancestor of `--bad`.
    #[error("{good} is not an ancestor of {bad}; --good must be older than --bad on the same history")]
    NotAnAncestor {
        /// How the good revision was chosen ([`super::BaseRevision::description`]).
        good: String,
        /// How the bad revision was chosen.
        bad: String,
    },
    /// `bisect --good` and `--bad` have no commit between them (the same commit, or `--bad`
    /// before `--good`).
    #[error("no commit lies after {good} up to {bad}; give --good an older revision than --bad")]
    NoCommitsBetween {
        /// How the good revision was chosen ([`super::BaseRevision::description`]).
        good: String,
        /// How the bad revision was chosen.
        bad: String,
    },
    /// A baseline's path in a commit's tree is a folder or a submodule, not a file.
    #[error("{} is not a file in git; a baseline must be a JSON file", path.display())]
    NotABlob {
        /// The path, relative to the repository root.
        path: PathBuf,
    },
    /// Committed baseline bytes that are not UTF-8.
    #[error("{origin} is not UTF-8 text ({source}); restore it from git")]
    NotUtf8 {
        /// The file, as `<path>` or `<path> at <short sha>`.
        origin: String,
        /// Where the bytes stop being UTF-8.
        #[source]
        source: std::str::Utf8Error,
    },
    /// There is no baseline folder to list adapters from.
    #[error(
        "no baselines in {}: {source}; bless some with `cargo convbench baseline update`",
        dir.display()
    )]
    NoBaselines {
        /// The baseline folder in the working tree.
        dir: PathBuf,
        /// Why it could not be listed.
        #[source]
        source: std::io::Error,
    },
    /// An adapter slug or set name that would escape its folder or make an odd file name.
    #[error(
        "{what} `{name}` cannot name a baseline file: it must be non-empty, at most {} bytes long, \
         must not start with `.` and must not contain `/`, `\\` or control characters",
        super::MAX_NAME_BYTES
    )]
    BadName {
        /// `adapter slug` or `baseline set`.
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// `baseline update --runs` outside 1 to [`super::MAX_RUNS`].
    #[error("--runs {runs}: bless between 1 and {} runs at once", super::MAX_RUNS)]
    BadRunCount {
        /// The count given.
        runs: usize,
    },
    /// `history --alpha` outside (0, 1), or `--min-step` negative or not finite.
    #[error("{flag} {value} {rule}")]
    BadChangePoints {
        /// `--alpha` or `--min-step`.
        flag: &'static str,
        /// The value given.
        value: f64,
        /// What it must be.
        rule: &'static str,
    },
    /// `baseline update` given a flag of `run`'s that shapes the output, which it does not write.
    #[error(
        "baseline update prints what it blessed and takes no {flag}; to keep the record too, \
         run `cargo convbench run --out FILE` and then `cargo convbench baseline update --from FILE`"
    )]
    UpdateTakesNoOutput {
        /// The flag, e.g. `--out` or `--format json`.
        flag: String,
    },
    /// The record to bless comes from an interrupted run.
    #[error("the record comes from an interrupted run; bless a complete one (run the benchmarks again)")]
    IncompleteRecord,
    /// The record to bless holds no benchmarks.
    #[error("the record holds no benchmarks; nothing to bless")]
    NoBenchmarks,
    /// The record to bless measures one benchmark twice.
    #[error("benchmark `{id}` appears twice in the record; bless one run of each benchmark")]
    DuplicateBenchmark {
        /// The benchmark id.
        id: String,
    },
    /// A benchmark of another adapter would go into an adapter's baseline.
    #[error(
        "benchmark `{id}` was measured on adapter `{found}` ({label}), not `{slug}`; a baseline \
         holds the results of one adapter only"
    )]
    OtherAdapter {
        /// The benchmark id.
        id: String,
        /// The slug of the adapter it was measured on.
        found: String,
        /// That adapter's label.
        label: String,
        /// The baseline's adapter slug.
        slug: String,
    },
    /// The store already holds the baselines' lock, which is not reentrant.
    #[error("this baseline store already holds the baselines' lock")]
    AlreadyLocked,
    /// A baseline to commit was never written (a dry run).
    #[error(
        "{} does not exist; write the baseline before committing it (not a dry run)",
        path.display()
    )]
    NotWritten {
        /// The baseline file in the working tree.
        path: PathBuf,
    },
    /// The staged baseline is not in the index right after it was added.
    #[error("{} vanished from the index", path.display())]
    NotInIndex {
        /// The baseline file, relative to the repository root.
        path: PathBuf,
    },
    /// A baseline to commit is the same as at `HEAD`.
    #[error("{} is unchanged since HEAD; there is nothing to commit", path.display())]
    Unchanged {
        /// The baseline file, relative to the repository root.
        path: PathBuf,
    },
}

/// A revision [`BaselineError::RevisionNotFound`] could not find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingRevision {
    /// The pull request's target branch (`GITHUB_BASE_REF`), neither on `origin` nor local.
    BaseBranch {
        /// The branch name.
        branch: String,
    },
    /// A revision given by the user (`--baseline-rev`, `--good`, `--bad`).
    Revision {
        /// The revision as given.
        rev: String,
        /// The root of the working tree.
        workdir: PathBuf,
    },
    /// A common ancestor of `HEAD` and a branch.
    MergeBase {
        /// The branch, e.g. `origin/main`.
        branch: String,
    },
    /// A commit by id.
    Commit {
        /// The full commit id.
        oid: String,
    },
}

impl MissingRevision {
    /// What to do when the clone is not shallow.
    fn advice(&self) -> String {
        match self {
            MissingRevision::BaseBranch { branch } => {
                format!(
                    "fetch it (`git fetch origin {branch}`) or name the base revision (--baseline-rev REV; `ab`: --base REV)"
                )
            }
            MissingRevision::Revision { rev, .. } => {
                format!("`git fetch` it first (e.g. `git fetch origin {rev}`) or check its spelling")
            }
            MissingRevision::MergeBase { .. } => {
                "name the base revision (--baseline-rev REV; `ab`: --base REV)".to_string()
            }
            MissingRevision::Commit { .. } => "`git fetch` it first or name another revision".to_string(),
        }
    }
}

impl std::fmt::Display for MissingRevision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MissingRevision::BaseBranch { branch } => write!(
                f,
                "the base branch `{branch}` (GITHUB_BASE_REF) is in neither `origin/{branch}` nor \
                 `{branch}`"
            ),
            MissingRevision::Revision { rev, workdir } => write!(
                f,
                "revision `{rev}` is not in the repository at {}",
                workdir.display()
            ),
            MissingRevision::MergeBase { branch } => {
                write!(f, "HEAD and `{branch}` have no common ancestor")
            }
            MissingRevision::Commit { oid } => write!(f, "commit {oid} is not in the repository"),
        }
    }
}

impl BaselineError {
    /// `error`, whose next step now offers `--baseline-file FILE` where git is missing or has
    /// no commit: for the commands that have that flag (`compare`, `ci`, `comment`); the
    /// others' errors never suggest a flag they lack.
    pub fn offer_baseline_file(mut error: crate::Error) -> crate::Error {
        if let crate::Error::Baseline(inner) = &mut error
            && let BaselineError::NotARepository { offers_file, .. }
            | BaselineError::NoCommits { offers_file, .. } = &mut **inner
        {
            *offers_file = true;
        }
        error
    }

    /// The exit-code category: what the user asked for or handed over is input; a repository
    /// that lacks what the request needs, or git failing, is the environment.
    pub fn kind(&self) -> ErrorKind {
        match self {
            BaselineError::NotARepository { .. }
            | BaselineError::Bare { .. }
            | BaselineError::Git { .. }
            | BaselineError::NoCommits { .. }
            | BaselineError::RevisionNotFound { .. }
            | BaselineError::ShallowHistory { .. }
            | BaselineError::NotInIndex { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}
