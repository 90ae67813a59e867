//! [`GitBaselineStore`]: baselines as files in a git repository, read at a base revision.

use super::{
    BaselineChange, BaselineError, BaselineStore, BenchmarkHistory, HistoryPoint, HistoryQuery,
    MissingRevision, NEW_BENCHMARK_RUNS, check_name, contents_differ, merge, parse_record,
};
use crate::fs::write_atomically;
use crate::results::RunRecord;
use crate::{Error, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository, Signature, Sort, Tree};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Branches tried, in order, for the base when neither `--baseline-rev` nor
/// `GITHUB_BASE_REF` says: the remote's default branch first, as it is what a pull request
/// merges into, then the conventional names, remote before local (a local branch may be stale).
const DEFAULT_BRANCHES: [&str; 5] = ["origin/HEAD", "origin/main", "main", "origin/master", "master"];

/// Largest file [`GitBaselineStore::export_at`] writes (bytes).
pub const MAX_EXPORTED_FILE_BYTES: usize = 64 * 1024 * 1024;

/// The commit whose baselines are blessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseRevision {
    /// Full commit id (hex).
    pub oid: String,
    /// How it was chosen, for reports, e.g. `merge-base of HEAD and origin/main (1a2b3c4)`.
    pub description: String,
    /// Whether it is `HEAD` itself for want of a default branch: the branch's own baseline is
    /// then the one it is judged against, edits included (reports say so).
    pub head_for_want_of_a_branch: bool,
}

impl BaseRevision {
    /// The first 7 hex digits of the commit id.
    pub fn short_sha(&self) -> &str {
        self.oid.get(..7).unwrap_or(&self.oid)
    }
}

/// Baselines stored as files in the git repository that contains the workspace.
///
/// [`BaselineStore::load`] reads at [`GitBaselineStore::with_base`]'s revision, else at the
/// one [`GitBaselineStore::resolve_base`] finds.
pub struct GitBaselineStore {
    repo: Repository,
    workdir: PathBuf,
    /// Baseline folder relative to `workdir`, as in the repository's trees.
    baseline_dir: PathBuf,
    base: Option<BaseRevision>,
    /// Blessed runs kept per benchmark by [`GitBaselineStore::write`].
    keep_runs: usize,
    /// Whether this store holds the baselines' lock ([`GitBaselineStore::lock`]).
    locked: std::cell::Cell<bool>,
}

/// What [`GitBaselineStore::history_walk`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryWalk {
    /// The blessed values, as [`GitBaselineStore::history`] returns them.
    pub points: Vec<HistoryPoint>,
    /// One message per commit whose baseline file could not be read and was skipped, naming
    /// the file and the commit (`<path> at <short sha>`) and what is wrong with it.
    pub unreadable: Vec<String>,
}

/// The lock on a checkout's baselines, taken by [`GitBaselineStore::lock`] and released when
/// dropped.
#[derive(Debug)]
pub struct BaselineLock<'store> {
    _file: crate::fs::FileLock,
    locked: &'store std::cell::Cell<bool>,
}

impl Drop for BaselineLock<'_> {
    fn drop(&mut self) {
        self.locked.set(false);
    }
}

impl std::fmt::Debug for GitBaselineStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitBaselineStore")
            .field("workdir", &self.workdir)
            .field("baseline_dir", &self.baseline_dir)
            .field("base", &self.base)
            .finish()
    }
}

/// An environment error from git with what was being done.
fn git_error(context: impl std::fmt::Display, source: git2::Error) -> Error {
    BaselineError::Git {
        context: context.to_string(),
        source,
    }
    .into()
}

/// `path` with `.` and `..` resolved without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The canonical form of `path` when it exists, else its lexical normal form.
fn canonical_or_normal(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path))
}

/// Refuses a baseline folder that is something else (a file, a link to nothing, to a file or
/// in a loop):
/// every read and write under it would fail with the operating system's "Not a directory".
/// A folder not yet there is fine (the first blessing creates it).
fn refuse_unless_folder(dir: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    let what = if !meta.file_type().is_symlink() {
        "a file"
    } else {
        match std::fs::metadata(dir) {
            Ok(_) => "a link to a file",
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => "a link to nothing",
            Err(_) => {
                "a link that cannot be followed (a loop of links, or one into a folder you cannot read)"
            }
        }
    };
    Err(BaselineError::DirNotAFolder {
        dir: dir.to_path_buf(),
        what,
    }
    .into())
}

impl GitBaselineStore {
    /// Opens the git repository that contains `workspace_root`.
    ///
    /// `baseline_dir` is relative to `workspace_root` (as in the configuration; the same as
    /// relative to the repository root when the workspace is at the root) or absolute, and
    /// must lie inside the repository's working tree. It need not exist yet.
    pub fn open(workspace_root: &Path, baseline_dir: &Path) -> Result<Self> {
        let repo = Repository::discover(workspace_root).map_err(|error| {
            if error.code() == ErrorCode::NotFound {
                BaselineError::NotARepository {
                    path: workspace_root.to_path_buf(),
                    offers_file: false,
                }
                .into()
            } else {
                git_error(
                    format_args!(
                        "cannot open the git repository containing {}",
                        workspace_root.display()
                    ),
                    error,
                )
            }
        })?;
        let workdir = repo
            .workdir()
            .ok_or_else(|| BaselineError::Bare {
                git_dir: repo.path().to_path_buf(),
            })?
            .to_path_buf();

        refuse_unless_folder(&workspace_root.join(baseline_dir))?;
        let workdir_canonical = canonical_or_normal(&workdir);
        let wanted = canonical_or_normal(&canonical_or_normal(workspace_root).join(baseline_dir));
        let relative =
            wanted
                .strip_prefix(&workdir_canonical)
                .map_err(|_| BaselineError::OutsideRepository {
                    dir: wanted.clone(),
                    workdir: workdir.clone(),
                })?;
        Ok(Self {
            baseline_dir: relative.to_path_buf(),
            repo,
            workdir,
            base: None,
            keep_runs: super::DEFAULT_KEEP_RUNS,
            locked: std::cell::Cell::new(false),
        })
    }

    /// Takes the lock on this checkout's baselines (an advisory lock on
    /// `convbench-baselines.lock` in the git directory, outside the working tree), waiting while
    /// another convbench holds it. [`GitBaselineStore::write`] and [`GitBaselineStore::commit`]
    /// each take it for themselves when the store does not hold it; hold it across both so that
    /// a concurrent update can neither slip between them nor lose a blessed run.
    pub fn lock(&self) -> Result<BaselineLock<'_>> {
        if self.locked.get() {
            return Err(BaselineError::AlreadyLocked.into());
        }
        let path = self.repo.path().join("convbench-baselines.lock");
        let file = crate::fs::lock(&path, "baselines")?;
        self.locked.set(true);
        Ok(BaselineLock {
            _file: file,
            locked: &self.locked,
        })
    }

    /// The baselines' lock for one operation: `None` when the store holds it already.
    fn lock_unless_held(&self) -> Result<Option<BaselineLock<'_>>> {
        if self.locked.get() {
            Ok(None)
        } else {
            self.lock().map(Some)
        }
    }

    /// This store, keeping the last `keep_runs` blessed runs of each benchmark when it writes.
    pub fn with_keep_runs(mut self, keep_runs: usize) -> Self {
        self.keep_runs = keep_runs.max(1);
        self
    }

    /// This store, reading [`BaselineStore::load`] at `base` instead of resolving one.
    pub fn with_base(mut self, base: BaseRevision) -> Self {
        self.base = Some(base);
        self
    }

    /// The root of the repository's working tree.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The baseline folder, relative to the repository root.
    pub fn baseline_dir(&self) -> &Path {
        &self.baseline_dir
    }

    /// Whether a benchmark of `record` has no blessed run in the working tree's baseline.
    pub fn has_unblessed(&self, record: &RunRecord, set: &str) -> Result<bool> {
        let store = self;
        let mut known: BTreeMap<String, Option<RunRecord>> = BTreeMap::new();
        for benchmark in &record.benchmarks {
            let slug = benchmark.adapter.slug();
            if !known.contains_key(&slug) {
                let existing = store.load_worktree(&slug, set)?;
                known.insert(slug.clone(), existing);
            }
            let blessed = known[&slug]
                .as_ref()
                .is_some_and(|existing| existing.benchmarks.iter().any(|b| b.id == benchmark.id));
            if !blessed {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Blesses one record, per adapter (under the store's lock, so that a concurrent blessing
    /// merges), and commits each file when `commit`; returns what changed, one line per file.
    pub fn bless(
        &self,
        record: &RunRecord,
        set: &str,
        dry_run: bool,
        commit: bool,
        message: Option<&str>,
    ) -> Result<Vec<String>> {
        let store = self;
        let mut lines = Vec::new();
        if !record.benchmarks.is_empty() {
            // Duplicates, zero-time samples and rounds that do not add up would corrupt the history.
            record.validate("the record to bless")?;
        }
        if !record.complete {
            return Err(BaselineError::IncompleteRecord.into());
        }
        if record.benchmarks.is_empty() {
            return Err(BaselineError::NoBenchmarks.into());
        }
        let mut by_slug: BTreeMap<String, RunRecord> = BTreeMap::new();
        for b in &record.benchmarks {
            by_slug
                .entry(b.adapter.slug())
                .or_insert_with(|| RunRecord {
                    benchmarks: Vec::new(),
                    ..record.clone()
                })
                .benchmarks
                .push(b.clone());
        }
        // Held from the first read to the last commit: a concurrent `baseline update` waits, then
        // merges into what this one blessed.
        let _lock = if dry_run { None } else { Some(store.lock()?) };
        let committing = commit && !dry_run;
        if committing && store.repo.head_detached().unwrap_or(false) {
            lines.push(
                "note: HEAD is detached, so the commit is on no branch; `git switch -c NAME` keeps it"
                    .to_string(),
            );
        }
        for (slug, part) in &by_slug {
            // Changes already in the file are committed with this blessing: say so.
            let repo_path = store.repo_path(slug, set)?;
            let changed_before = committing
                && store
                    .repo
                    .status_file(&repo_path)
                    .is_ok_and(|status| !status.is_empty() && !status.is_ignored());
            let change = store.write(part, slug, set, dry_run)?;
            lines.push(change.describe(dry_run));
            if changed_before {
                lines.push(format!(
                    "note: {} had changes not committed before this update (a `baseline update` \
                     without --commit, or an edit by hand); they are in this commit too",
                    repo_path.display()
                ));
            }
            // Committed when written, and also when this run changed nothing but the file
            // differs from HEAD's (an earlier update without --commit): `--commit` leaves the
            // blessed file committed either way.
            if commit && !dry_run {
                match store.commit(&change, message) {
                    Ok(sha) => lines.push(format!("committed {}", &sha[..sha.len().min(12)])),
                    Err(crate::Error::Baseline(error))
                        if !change.written && matches!(*error, BaselineError::Unchanged { .. }) => {}
                    Err(error) => return Err(error),
                }
            }
        }
        Ok(lines)
    }

    /// How many runs `baseline update` blesses when it measures them: `requested` when given,
    /// else [`NEW_BENCHMARK_RUNS`] when a benchmark of `first` (the first run) has no blessed
    /// run in `set` yet, so a young baseline already knows how runs drift apart; else 1.
    pub fn runs_to_bless(&self, requested: Option<usize>, first: &RunRecord, set: &str) -> Result<usize> {
        Ok(match requested {
            Some(runs) => runs,
            None if self.has_unblessed(first, set)? => NEW_BENCHMARK_RUNS,
            None => 1,
        })
    }

    /// [`GitBaselineStore::bless`] of each of `records` in order: what changed, the lines of
    /// each run after the first headed `blessed run I of N:`.
    pub fn bless_runs(
        &self,
        records: &[RunRecord],
        set: &str,
        dry_run: bool,
        commit: bool,
        message: Option<&str>,
    ) -> Result<Vec<String>> {
        let mut lines = Vec::new();
        for (index, record) in records.iter().enumerate() {
            if index > 0 {
                lines.push(format!("blessed run {} of {}:", index + 1, records.len()));
            }
            lines.extend(self.bless(record, set, dry_run, commit, message)?);
        }
        Ok(lines)
    }

    /// The adapter folders under the baseline directory in the working tree, sorted (`only`
    /// alone when given).
    pub fn adapter_slugs(&self, only: Option<&str>) -> Result<Vec<String>> {
        if let Some(slug) = only {
            return Ok(vec![slug.to_string()]);
        }
        let dir = self.workdir.join(&self.baseline_dir);
        let mut slugs: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|source| BaselineError::NoBaselines {
                dir: dir.clone(),
                source,
            })?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        slugs.sort();
        Ok(slugs)
    }

    /// The baseline sets (`<set>.json` under any adapter folder) in the working tree, sorted
    /// and each once; empty when there is no baseline folder.
    pub fn sets(&self) -> Vec<String> {
        let mut sets = std::collections::BTreeSet::new();
        for slug in self.adapter_slugs(None).unwrap_or_default() {
            let Ok(entries) = std::fs::read_dir(self.workdir.join(&self.baseline_dir).join(&slug)) else {
                continue;
            };
            for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
                if path.extension().is_some_and(|ext| ext == "json")
                    && let Some(stem) = path.file_stem()
                {
                    sets.insert(stem.to_string_lossy().into_owned());
                }
            }
        }
        sets.into_iter().collect()
    }

    /// The URL of remote `name` (e.g. `origin`), when it exists and is UTF-8.
    pub fn remote_url(&self, name: &str) -> Option<String> {
        self.repo.find_remote(name).ok()?.url().ok().map(str::to_string)
    }

    /// Whether the repository is a shallow clone.
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow()
    }

    /// The baseline file of `slug` and `set`, relative to the repository root.
    pub fn repo_path(&self, slug: &str, set: &str) -> Result<PathBuf> {
        check_name("adapter slug", slug)?;
        check_name("baseline set", set)?;
        Ok(self.baseline_dir.join(slug).join(format!("{set}.json")))
    }

    /// The baseline file of `slug` and `set` in the working tree.
    pub fn file_path(&self, slug: &str, set: &str) -> Result<PathBuf> {
        Ok(self.workdir.join(self.repo_path(slug, set)?))
    }

    /// The revision whose baselines count (see [`GitBaselineStore::resolve_base_from`]),
    /// reading the pull request's target branch from the `GITHUB_BASE_REF` environment
    /// variable as GitHub Actions sets it.
    pub fn resolve_base(&self, explicit: Option<&str>) -> Result<BaseRevision> {
        let github_base_ref = std::env::var("GITHUB_BASE_REF").ok();
        self.resolve_base_from(explicit, github_base_ref.as_deref().filter(|r| !r.is_empty()))
    }

    /// The revision whose baselines count:
    ///
    /// 1. `explicit` (`--baseline-rev REV`, any revision git understands);
    /// 2. else, when `github_base_ref` is given, the merge-base of `HEAD` with
    ///    `origin/<ref>`, or with the local `<ref>`; it is an error when neither exists;
    /// 3. else the merge-base of `HEAD` with the first of `origin/HEAD`, `origin/main`,
    ///    `main`, `origin/master`, `master` that exists;
    /// 4. else `HEAD` itself.
    ///
    /// A revision that is not there is [`BaselineError::RevisionNotFound`], whose message says
    /// what to fetch; in a shallow clone it says that the clone lacks the base commit and how to
    /// deepen it.
    pub fn resolve_base_from(
        &self,
        explicit: Option<&str>,
        github_base_ref: Option<&str>,
    ) -> Result<BaseRevision> {
        if let Some(rev) = explicit {
            return self.resolve_explicit(rev);
        }
        let head = self.head_commit()?;
        if let Some(base_ref) = github_base_ref {
            let candidates = [format!("origin/{base_ref}"), base_ref.to_string()];
            return match candidates
                .iter()
                .find_map(|name| self.commit_of(name).map(|oid| (name, oid)))
            {
                Some((name, oid)) => self.merge_base(head, name, oid),
                None => Err(self.missing(MissingRevision::BaseBranch {
                    branch: base_ref.to_string(),
                })),
            };
        }
        match DEFAULT_BRANCHES
            .iter()
            .find_map(|name| self.commit_of(name).map(|oid| (*name, oid)))
        {
            Some((name, oid)) => self.merge_base(head, name, oid),
            None => Ok(BaseRevision {
                description: format!("HEAD ({}), no default branch found", short(head)),
                oid: head.to_string(),
                head_for_want_of_a_branch: true,
            }),
        }
    }

    /// `REV` resolved to a commit.
    fn resolve_explicit(&self, rev: &str) -> Result<BaseRevision> {
        // `..` never occurs in a ref name (git check-ref-format): it is a range.
        if rev.trim().is_empty() || rev.contains("..") {
            return Err(BaselineError::NotARevision { rev: rev.to_string() }.into());
        }
        let object = self
            .repo
            .revparse_single(rev)
            .map_err(|_| match self.head_commit() {
                // Nothing resolves in a repository without commits: say that, not what to fetch.
                Err(unborn) => unborn,
                Ok(_) => self.missing(MissingRevision::Revision {
                    rev: rev.to_string(),
                    workdir: self.workdir.clone(),
                }),
            })?;
        let commit = object
            .peel_to_commit()
            .map_err(|_| BaselineError::NotACommit { rev: rev.to_string() })?;
        self.refuse_ambiguous(rev)?;
        Ok(BaseRevision {
            oid: commit.id().to_string(),
            description: format!("{rev} ({})", short(commit.id())),
            head_for_want_of_a_branch: false,
        })
    }

    /// Fails when `rev` names a branch or tag and, as a hexadecimal prefix of at least 4
    /// digits, also a different commit.
    fn refuse_ambiguous(&self, rev: &str) -> Result<()> {
        if rev.len() < 4 || rev.len() > 40 || !rev.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(());
        }
        let Ok(reference) = self.repo.resolve_reference_from_short_name(rev) else {
            return Ok(());
        };
        let Ok(by_prefix) = self.repo.find_object_by_prefix(rev, None) else {
            return Ok(());
        };
        let Ok(commit) = by_prefix.peel_to_commit() else {
            return Ok(());
        };
        let Ok(named) = reference.peel_to_commit() else {
            return Ok(());
        };
        if commit.id() == named.id() {
            return Ok(());
        }
        Err(BaselineError::AmbiguousRevision {
            rev: rev.to_string(),
            reference: String::from_utf8_lossy(reference.name_bytes()).into_owned(),
            named: short(named.id()),
            commit: short(commit.id()),
        }
        .into())
    }

    /// The error for a missing revision, saying whether the clone is shallow (the likely
    /// cause when it is).
    fn missing(&self, revision: MissingRevision) -> Error {
        BaselineError::RevisionNotFound {
            revision,
            shallow: self.repo.is_shallow(),
        }
        .into()
    }

    /// The commit `HEAD` points at.
    fn head_commit(&self) -> Result<Oid> {
        let head = self.repo.head().map_err(|error| match error.code() {
            ErrorCode::UnbornBranch | ErrorCode::NotFound => BaselineError::NoCommits {
                workdir: self.workdir.clone(),
                offers_file: false,
            }
            .into(),
            _ => git_error("cannot read HEAD", error),
        })?;
        let commit = head
            .peel_to_commit()
            .map_err(|error| git_error("HEAD is not a commit", error))?;
        Ok(commit.id())
    }

    /// The commit a name resolves to, if it does.
    fn commit_of(&self, name: &str) -> Option<Oid> {
        let object = self.repo.revparse_single(name).ok()?;
        Some(object.peel_to_commit().ok()?.id())
    }

    /// The merge-base of `HEAD` and `name`.
    fn merge_base(&self, head: Oid, name: &str, oid: Oid) -> Result<BaseRevision> {
        match self.repo.merge_base(head, oid) {
            Ok(base) => Ok(BaseRevision {
                oid: base.to_string(),
                description: format!("merge-base of HEAD and {name} ({})", short(base)),
                head_for_want_of_a_branch: false,
            }),
            // A shallow clone may fail on the missing parents with other codes: same cause.
            Err(error) if error.code() == ErrorCode::NotFound || self.repo.is_shallow() => {
                Err(self.missing(MissingRevision::MergeBase {
                    branch: name.to_string(),
                }))
            }
            Err(error) => Err(git_error(
                format_args!("cannot find the merge-base of HEAD and `{name}`"),
                error,
            )),
        }
    }

    /// The tree of commit `oid` (hex).
    fn tree_at(&self, oid: &str) -> Result<Tree<'_>> {
        let oid = commit_id(oid)?;
        let commit = self
            .repo
            .find_commit(oid)
            .map_err(|_| self.missing(MissingRevision::Commit { oid: oid.to_string() }))?;
        commit
            .tree()
            .map_err(|error| git_error(format_args!("cannot read the tree of {oid}"), error))
    }

    /// The blob id and contents of `path` in `tree`; `None` when there is no such file.
    fn blob_in(&self, tree: &Tree<'_>, path: &Path) -> Result<Option<(Oid, Vec<u8>)>> {
        let entry = match tree.get_path(path) {
            Ok(entry) => entry,
            Err(error) if error.code() == ErrorCode::NotFound => return Ok(None),
            Err(error) => {
                return Err(git_error(
                    format_args!("cannot look up {}", path.display()),
                    error,
                ));
            }
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Err(BaselineError::NotABlob {
                path: path.to_path_buf(),
            }
            .into());
        }
        let blob = self
            .repo
            .find_blob(entry.id())
            .map_err(|error| git_error(format_args!("cannot read {}", path.display()), error))?;
        Ok(Some((entry.id(), blob.content().to_vec())))
    }

    /// The baseline of `slug` and `set` as committed at `rev`; `None` when the file does not
    /// exist there. A corrupt or newer-format file is a [`crate::results::RecordError`] naming
    /// `<path> at <short sha>`.
    pub fn load_at(&self, rev: &BaseRevision, slug: &str, set: &str) -> Result<Option<RunRecord>> {
        let path = self.repo_path(slug, set)?;
        let tree = self.tree_at(&rev.oid)?;
        let Some((_, bytes)) = self.blob_in(&tree, &path)? else {
            return Ok(None);
        };
        let origin = format!("{} at {}", path.display(), rev.short_sha());
        parse_record(&bytes, &origin).map(Some)
    }

    /// The sets of `slug` committed at `rev` (`<set>.json` in its folder), sorted; empty when
    /// the folder is not there. A missing `--set` names them.
    pub fn sets_at(&self, rev: &BaseRevision, slug: &str) -> Result<Vec<String>> {
        check_name("adapter slug", slug)?;
        let folder = self.baseline_dir.join(slug);
        let tree = self.tree_at(&rev.oid)?;
        let Ok(entry) = tree.get_path(&folder) else {
            return Ok(Vec::new());
        };
        let Ok(subtree) = self.repo.find_tree(entry.id()) else {
            return Ok(Vec::new());
        };
        let mut sets: Vec<String> = subtree
            .iter()
            .filter(|entry| entry.kind() == Some(ObjectType::Blob))
            .filter_map(|entry| {
                entry
                    .name()
                    .ok()
                    .and_then(|name| name.strip_suffix(".json"))
                    .map(String::from)
            })
            .collect();
        sets.sort();
        Ok(sets)
    }

    /// The bytes of `path` (relative to the repository root) as committed at `rev`; `None`
    /// when the file does not exist there. `ab` reads the base revision's shaders with it.
    pub fn read_at(&self, rev: &BaseRevision, path: &Path) -> Result<Option<Vec<u8>>> {
        let tree = self.tree_at(&rev.oid)?;
        Ok(self.blob_in(&tree, path)?.map(|(_, bytes)| bytes))
    }

    /// The commits after `good` up to and including `bad`, oldest first, along first parents
    /// (the order a branch's history was merged in), each with its summary line. `good` must be
    /// an ancestor of `bad`.
    pub fn commits_between(&self, good: &BaseRevision, bad: &BaseRevision) -> Result<Vec<(String, String)>> {
        let git = |what: &str, error: git2::Error| git_error(format_args!("cannot {what}"), error);
        let (good_oid, bad_oid) = (commit_id(&good.oid)?, commit_id(&bad.oid)?);
        let is_ancestor = good_oid == bad_oid
            || self
                .repo
                .graph_descendant_of(bad_oid, good_oid)
                .map_err(|e| git("compare the two revisions", e))?;
        if !is_ancestor {
            return Err(BaselineError::NotAnAncestor {
                good: good.description.clone(),
                bad: bad.description.clone(),
            }
            .into());
        }
        let mut walk = self.repo.revwalk().map_err(|e| git("walk the history", e))?;
        walk.simplify_first_parent()
            .map_err(|e| git("walk first parents", e))?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)
            .map_err(|e| git("sort the history", e))?;
        walk.push(bad_oid).map_err(|e| git("walk from --bad", e))?;
        walk.hide(good_oid).map_err(|e| git("stop at --good", e))?;
        let mut commits = Vec::new();
        for oid in walk {
            let oid = oid.map_err(|e| git("walk the history", e))?;
            let commit = self.repo.find_commit(oid).map_err(|e| git("read a commit", e))?;
            commits.push((
                oid.to_string(),
                commit.summary().ok().flatten().unwrap_or("").to_string(),
            ));
        }
        Ok(commits)
    }

    /// Writes the regular files of the tree at `rev` under `dest` (which must exist), as a
    /// checkout of that commit would hold them, without touching the repository: `ab` reads the
    /// base revision's configuration, kernels and networks from it. Symbolic links and
    /// submodules are left out (a link could point outside `dest`); a file above
    /// `MAX_EXPORTED_FILE_BYTES` too, since no configuration, kernel or shape list is that
    /// large. Returns how many files were written.
    pub fn export_at(&self, rev: &BaseRevision, dest: &Path) -> Result<usize> {
        let tree = self.tree_at(&rev.oid)?;
        let mut written = 0;
        let mut failure: Option<Error> = None;
        tree.walk(git2::TreeWalkMode::PreOrder, |folder, entry| {
            // Regular files (mode 100644 or 100755) only.
            if entry.kind() != Some(ObjectType::Blob) || !matches!(entry.filemode(), 0o100644 | 0o100755) {
                return git2::TreeWalkResult::Ok;
            }
            let Ok(name) = entry.name() else {
                return git2::TreeWalkResult::Ok;
            };
            let relative = Path::new(folder).join(name);
            let result = self
                .repo
                .find_blob(entry.id())
                .map_err(|error| git_error(format_args!("cannot read {}", relative.display()), error))
                .and_then(|blob| {
                    if blob.size() > MAX_EXPORTED_FILE_BYTES {
                        return Ok(());
                    }
                    let path = dest.join(&relative);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent).map_err(|source| Error::io(parent, source))?;
                    }
                    std::fs::write(&path, blob.content()).map_err(|source| Error::io(&path, source))?;
                    written += 1;
                    Ok(())
                });
            match result {
                Ok(()) => git2::TreeWalkResult::Ok,
                Err(error) => {
                    failure = Some(error);
                    git2::TreeWalkResult::Abort
                }
            }
        })
        .or_else(|error| match failure.take() {
            Some(_) => Ok(()),
            None => Err(git_error(
                format_args!("cannot walk the tree of {}", rev.description),
                error,
            )),
        })?;
        match failure {
            Some(error) => Err(error),
            None => Ok(written),
        }
    }

    /// The working-tree file's bytes, `None` when it does not exist.
    fn worktree_bytes(&self, slug: &str, set: &str) -> Result<Option<(PathBuf, Vec<u8>)>> {
        let path = self.file_path(slug, set)?;
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some((path, bytes))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(Error::io(&path, source)),
        }
    }

    /// The baseline of `slug` and `set` in the working tree (possibly edited, uncommitted);
    /// `None` when the file does not exist.
    pub fn load_worktree(&self, slug: &str, set: &str) -> Result<Option<RunRecord>> {
        match self.worktree_bytes(slug, set)? {
            Some((path, bytes)) => parse_record(&bytes, &path.display().to_string()).map(Some),
            None => Ok(None),
        }
    }

    /// Whether the working-tree baseline of `slug` and `set` differs from the one at `rev`
    /// (added, removed or edited, CRLF line endings aside): the pull request edits its own
    /// baseline, which reports should say.
    pub fn worktree_differs(&self, rev: &BaseRevision, slug: &str, set: &str) -> Result<bool> {
        let path = self.repo_path(slug, set)?;
        let tree = self.tree_at(&rev.oid)?;
        let base = self.blob_in(&tree, &path)?.map(|(_, bytes)| bytes);
        let worktree = self.worktree_bytes(slug, set)?.map(|(_, bytes)| bytes);
        Ok(contents_differ(base.as_deref(), worktree.as_deref()))
    }

    /// Blesses `record` as the baseline of `slug` and `set` in the working tree.
    ///
    /// The record is merged into the existing file: benchmarks with the same id are replaced,
    /// the others kept, new ones appended; the run metadata becomes the new record's. Every
    /// benchmark, old and new, must have been measured on adapter `slug`, and the record must
    /// not be empty ([`BaselineError::OtherAdapter`] and [`BaselineError::NoBenchmarks`]
    /// otherwise). The file is replaced atomically
    /// (temporary file in the same folder, then rename), folders are created as needed, and
    /// nothing is written on a `dry_run` or when no benchmark changed.
    pub fn write(&self, record: &RunRecord, slug: &str, set: &str, dry_run: bool) -> Result<BaselineChange> {
        let path = self.file_path(slug, set)?;
        // The file is read, merged and replaced under the lock: a concurrent update waits, then
        // merges into what this one wrote.
        let _lock = if dry_run { None } else { self.lock_unless_held()? };
        let existing = self.load_worktree(slug, set)?;
        // A file broken by hand (a benchmark twice, a zero sample, rounds that do not add up)
        // is refused, not merged into: the gate could never read the result.
        if let Some(existing) = existing.as_ref().filter(|e| !e.benchmarks.is_empty()) {
            existing.validate(&path.display().to_string()).map_err(|error| {
                Error::from(error).context(format!(
                    "the blessed baseline {} cannot be added to; restore it with `git checkout -- \
                     {}` or delete it, then bless again",
                    path.display(),
                    path.display()
                ))
            })?;
        }
        let existed = existing.is_some();
        let merged = merge(existing, record, slug, self.keep_runs)?;
        let needs_write = !existed || !merged.added.is_empty() || !merged.updated.is_empty();
        let written = needs_write && !dry_run;
        if !dry_run {
            // Under the lock no other convbench is writing this file: a temporary file beside
            // it is what a killed update left.
            crate::fs::remove_stale_temporaries(&path);
        }
        if written {
            write_atomically(&path, merged.record.to_json().as_bytes())?;
        }
        Ok(BaselineChange {
            path,
            slug: slug.to_string(),
            set: set.to_string(),
            added: merged.added,
            updated: merged.updated,
            unchanged_count: merged.unchanged_count,
            written,
        })
    }

    /// Commits the baseline file of `change` on the current branch and returns the new
    /// commit's id. Only that file is committed, whatever else is staged (and it is staged
    /// too, so the index agrees with the new commit). The signature is the repository's
    /// `user.name` and `user.email`, else `convbench <convbench@localhost>`; the default
    /// message lists the added and updated benchmarks.
    pub fn commit(&self, change: &BaselineChange, message: Option<&str>) -> Result<String> {
        let _lock = self.lock_unless_held()?;
        let repo_path = self.repo_path(&change.slug, &change.set)?;
        let abs_path = self.workdir.join(&repo_path);
        if !abs_path.is_file() {
            return Err(BaselineError::NotWritten { path: abs_path }.into());
        }
        let git = |what: &str, error: git2::Error| {
            git_error(
                format_args!("cannot commit {}: {what}", repo_path.display()),
                error,
            )
        };

        let mut index = self.repo.index().map_err(|e| git("open the index", e))?;
        // Another convbench may have written the index since this store first read it.
        index.read(false).map_err(|e| git("read the index", e))?;
        index.add_path(&repo_path).map_err(|e| git("stage the file", e))?;
        index.write().map_err(|e| git("write the index", e))?;
        let entry = index
            .get_path(&repo_path, 0)
            .ok_or_else(|| BaselineError::NotInIndex {
                path: repo_path.clone(),
            })?;

        let parent = match self.repo.head() {
            Ok(head) => Some(head.peel_to_commit().map_err(|e| git("read HEAD", e))?),
            Err(error) if matches!(error.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
            Err(error) => return Err(git("read HEAD", error)),
        };
        // The new tree is HEAD's plus this one file, so that nothing else staged is committed.
        let mut tree_index = git2::Index::new().map_err(|e| git("create an index", e))?;
        if let Some(parent) = &parent {
            let tree = parent.tree().map_err(|e| git("read HEAD's tree", e))?;
            tree_index
                .read_tree(&tree)
                .map_err(|e| git("read HEAD's tree", e))?;
        }
        tree_index.add(&entry).map_err(|e| git("stage the file", e))?;
        let tree_oid = tree_index
            .write_tree_to(&self.repo)
            .map_err(|e| git("write the tree", e))?;
        if let Some(parent) = &parent
            && parent.tree_id() == tree_oid
        {
            return Err(BaselineError::Unchanged {
                path: repo_path.clone(),
            }
            .into());
        }
        let tree = self
            .repo
            .find_tree(tree_oid)
            .map_err(|e| git("read the tree", e))?;

        let signature = match self.repo.signature() {
            Ok(signature) => signature,
            Err(_) => {
                Signature::now("convbench", "convbench@localhost").map_err(|e| git("make a signature", e))?
            }
        };
        let message = match message {
            Some(message) => message.to_string(),
            // This update changed nothing, but the file differs from HEAD (an earlier `baseline
            // update` without --commit wrote it): the message lists what the commit holds.
            None if !change.has_changes() => {
                default_message(&self.against_parent(parent.as_ref(), &tree, &repo_path, change)?)
            }
            None => default_message(change),
        };
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        let oid = self
            .repo
            .commit(Some("HEAD"), &signature, &signature, &message, &tree, &parents)
            .map_err(|e| git("create the commit", e))?;
        Ok(oid.to_string())
    }

    /// `change` with the benchmarks the file adds or updates in `tree` against its version in
    /// `parent` (every benchmark when it had none), for a commit of changes an earlier update
    /// left uncommitted.
    fn against_parent(
        &self,
        parent: Option<&git2::Commit<'_>>,
        tree: &Tree<'_>,
        repo_path: &Path,
        change: &BaselineChange,
    ) -> Result<BaselineChange> {
        let origin = repo_path.display().to_string();
        let record_in = |tree: &Tree<'_>| -> Result<Vec<crate::results::BenchmarkResult>> {
            match self.blob_in(tree, repo_path)? {
                Some((_, bytes)) => Ok(parse_record(&bytes, &origin)?.benchmarks),
                None => Ok(Vec::new()),
            }
        };
        let old = match parent {
            Some(parent) => {
                let parent_tree = parent
                    .tree()
                    .map_err(|error| git_error(format_args!("cannot read HEAD's tree"), error))?;
                record_in(&parent_tree)?
            }
            None => Vec::new(),
        };
        let old: BTreeMap<String, crate::results::BenchmarkResult> =
            old.into_iter().map(|b| (b.id.clone(), b)).collect();
        let mut described = BaselineChange {
            added: Vec::new(),
            updated: Vec::new(),
            unchanged_count: 0,
            ..change.clone()
        };
        for benchmark in record_in(tree)? {
            match old.get(&benchmark.id) {
                None => described.added.push(benchmark.id),
                Some(before) if *before != benchmark => described.updated.push(benchmark.id),
                Some(_) => described.unchanged_count += 1,
            }
        }
        Ok(described)
    }

    /// The blessed medians of the baseline of `slug` and `set` through history: one point per
    /// benchmark (or only `benchmark`) and measured phase for every commit reachable from
    /// `HEAD` whose baseline file differs from that of each of its parents, oldest first
    /// (parents before children, then by commit time). Each point holds the median of the run
    /// that commit blessed (the newest of the baseline) and the medians of every run the
    /// baseline kept then. Empty when `HEAD` has no commits.
    ///
    /// A commit whose baseline file cannot be read (corrupt, or of a format this build does
    /// not read) is skipped; [`GitBaselineStore::history_walk`] says which.
    pub fn history(&self, slug: &str, set: &str, benchmark: Option<&str>) -> Result<Vec<HistoryPoint>> {
        Ok(self.history_walk(slug, set, benchmark)?.points)
    }

    /// The series `query` asks for, adapter by adapter ([`BenchmarkHistory::group`] of the
    /// points of its phases). `on_unreadable` gets one message per commit whose baseline file
    /// could not be read and was skipped (see [`GitBaselineStore::history_walk`]).
    pub fn history_series(
        &self,
        query: &HistoryQuery,
        on_unreadable: &mut dyn FnMut(&str),
    ) -> Result<Vec<BenchmarkHistory>> {
        let mut series = Vec::new();
        for slug in self.adapter_slugs(query.slug.as_deref())? {
            let walk = self.history_walk(&slug, &query.set, query.benchmark.as_deref())?;
            for reason in &walk.unreadable {
                on_unreadable(reason);
            }
            let mut points = walk.points;
            points.retain(|point| query.phases.contains(&point.phase));
            series.extend(BenchmarkHistory::group(&slug, points, &query.change_points));
        }
        Ok(series)
    }

    /// [`GitBaselineStore::history`], with the commits whose baseline file could not be read:
    /// one bad blob in the past must not take the whole history (and the dashboard) down.
    pub fn history_walk(&self, slug: &str, set: &str, benchmark: Option<&str>) -> Result<HistoryWalk> {
        let path = self.repo_path(slug, set)?;
        let git = |what: &str, error: git2::Error| {
            git_error(
                format_args!("cannot walk the history of {}: {what}", path.display()),
                error,
            )
        };
        match self.repo.head() {
            Ok(_) => {}
            Err(error) if matches!(error.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                return Ok(HistoryWalk::default());
            }
            Err(error) => return Err(git("read HEAD", error)),
        }
        if self.repo.is_shallow() {
            // The walk would stop at the shallow root and credit it with every blessing before.
            return Err(BaselineError::ShallowHistory { path }.into());
        }
        let mut walk = self.repo.revwalk().map_err(|e| git("start", e))?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME | Sort::REVERSE)
            .map_err(|e| git("sort", e))?;
        walk.push_head().map_err(|e| git("start at HEAD", e))?;

        let mut points = Vec::new();
        let mut unreadable = Vec::new();
        // The blob of the last commit read: a commit that brings the file back to it (a broken
        // file restored) blesses nothing new, and counting it would count a run twice. A return
        // to an older content (a revert) is still a point: the level did go back.
        let mut last_read = None;
        for oid in walk {
            let oid = oid.map_err(|e| git("step", e))?;
            let commit = self.repo.find_commit(oid).map_err(|e| git("read a commit", e))?;
            let tree = commit.tree().map_err(|e| git("read a tree", e))?;
            let Some((blob_id, bytes)) = self.blob_in(&tree, &path)? else {
                continue;
            };
            let mut unchanged = false;
            for parent in commit.parents() {
                let parent_tree = parent.tree().map_err(|e| git("read a tree", e))?;
                if let Ok(entry) = parent_tree.get_path(&path)
                    && entry.id() == blob_id
                {
                    unchanged = true;
                    break;
                }
            }
            if unchanged || last_read == Some(blob_id) {
                continue;
            }
            let origin = format!("{} at {}", path.display(), short(oid));
            // A baseline that parses but cannot be judged (sizes that do not add up) is skipped
            // like one that does not parse: its numbers would be drawn as a level.
            let record = match parse_record(&bytes, &origin).and_then(|record| {
                record.validate(&origin)?;
                Ok(record)
            }) {
                Ok(record) => record,
                Err(error) => {
                    unreadable.push(error.to_string());
                    continue;
                }
            };
            last_read = Some(blob_id);
            let summary = String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default()).into_owned();
            for result in &record.benchmarks {
                if benchmark.is_some_and(|wanted| wanted != result.id) {
                    continue;
                }
                for phase in &result.phases {
                    // The run this commit blessed: the newest of the baseline's history.
                    let Some(median_ns) = result.last_run_median(phase.phase) else {
                        continue;
                    };
                    points.push(HistoryPoint {
                        commit: oid.to_string(),
                        time_unix_s: commit.time().seconds(),
                        summary: summary.clone(),
                        benchmark_id: result.id.clone(),
                        model: result.model.clone(),
                        stage: result.stage,
                        batch: result.batch,
                        precision: result.precision,
                        backend: result.backend.clone(),
                        adapter: result.adapter.label(),
                        phase: phase.phase,
                        median_ns,
                        round_medians_ns: last_run_round_medians(result, phase.phase),
                        run_medians_ns: result.run_medians(phase.phase),
                    });
                }
            }
        }
        Ok(HistoryWalk { points, unreadable })
    }
}

impl BaselineStore for GitBaselineStore {
    fn load(&self, slug: &str, set: &str) -> Result<Option<RunRecord>> {
        match &self.base {
            Some(base) => self.load_at(base, slug, set),
            None => self.load_at(&self.resolve_base(None)?, slug, set),
        }
    }

    fn write(&self, record: &RunRecord, slug: &str, set: &str, dry_run: bool) -> Result<BaselineChange> {
        GitBaselineStore::write(self, record, slug, set, dry_run)
    }
}

/// The round medians of `phase` in the newest run of `result`.
fn last_run_round_medians(
    result: &crate::results::BenchmarkResult,
    phase: crate::results::Phase,
) -> Vec<f64> {
    let mut medians = result.round_medians(phase);
    let last_run = result.run_sizes().last().copied().unwrap_or(medians.len());
    medians.drain(..medians.len().saturating_sub(last_run));
    medians
}

/// The commit id `oid` (hex).
fn commit_id(oid: &str) -> Result<Oid> {
    Oid::from_str(oid).map_err(|_| BaselineError::BadCommitId { oid: oid.to_string() }.into())
}

/// The first 7 hex digits of a commit id.
fn short(oid: Oid) -> String {
    let mut hex = oid.to_string();
    hex.truncate(7);
    hex
}

/// `Update convbench baseline <slug>/<set>`, then the added and updated benchmark ids.
fn default_message(change: &BaselineChange) -> String {
    let mut message = format!("Update convbench baseline {}/{}\n", change.slug, change.set);
    if change.has_changes() {
        message.push('\n');
    }
    for (label, ids) in [("added", &change.added), ("updated", &change.updated)] {
        if !ids.is_empty() {
            message.push_str(&format!("{label}: {}\n", ids.join(", ")));
        }
    }
    message
}
