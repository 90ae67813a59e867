//! Blessed baselines: the [`RunRecord`]s that `compare` measures a run against.
//!
//! # Layout
//!
//! `<baseline_dir>/<adapter-slug>/<set>.json`, each file a complete [`RunRecord`] with raw
//! samples. The adapter slug is [`AdapterFingerprint::slug`](crate::results::AdapterFingerprint::slug),
//! so numbers from different adapters never share a file; `<set>` names a group of
//! benchmarks chosen by the caller (`default`, or model and suite names joined by `+`).
//!
//! # Why git
//!
//! [`GitBaselineStore`] reads the baseline as blessed at the *base revision* (the merge-base
//! of the pull request with its target branch, or a revision given explicitly), not from the
//! working tree: a pull request cannot hide a regression by editing its own baseline. An
//! edited baseline in the working tree is still detected ([`GitBaselineStore::worktree_differs`])
//! so that reports can say so. Baselines are written only by the baseline update command,
//! merged into the existing file and replaced atomically, and reviewed like any diff.
//!
//! [`BaselineStore`] is the small interface the rest of convbench needs, so that another
//! store could replace the git one.

mod error;
mod git;
mod history;
#[cfg(test)]
mod tests;
mod update;

pub use error::{BaselineError, MissingRevision};
pub use git::{BaseRevision, BaselineLock, GitBaselineStore, HistoryWalk};
pub use history::{BenchmarkHistory, HistoryPoint, HistoryQuery, Spread, Step, change_point_config};
pub use update::UpdateRequest;

use crate::Result;
use crate::results::RunRecord;
use std::collections::HashSet;
use std::path::PathBuf;

/// Where blessed baselines live.
pub trait BaselineStore {
    /// The blessed baseline of adapter `slug` and benchmark set `set`; `None` when there is
    /// none yet.
    fn load(&self, slug: &str, set: &str) -> Result<Option<RunRecord>>;

    /// Merges `record` into the stored baseline of `slug` and `set` (see
    /// [`GitBaselineStore::write`]); with `dry_run` nothing is written and the returned
    /// change says what would happen.
    fn write(&self, record: &RunRecord, slug: &str, set: &str, dry_run: bool) -> Result<BaselineChange>;
}

/// The most runs `baseline update --runs` blesses at once.
pub const MAX_RUNS: usize = 20;

/// Runs `baseline update` blesses at once by default when a benchmark has no blessed run yet.
pub const NEW_BENCHMARK_RUNS: usize = 3;

/// Checks `baseline update --runs`: between 1 and [`MAX_RUNS`] when given.
pub fn check_runs(runs: Option<usize>) -> Result<()> {
    match runs {
        Some(runs) if !(1..=MAX_RUNS).contains(&runs) => Err(BaselineError::BadRunCount { runs }.into()),
        _ => Ok(()),
    }
}

/// What writing a baseline changed (or, on a dry run, would change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineChange {
    /// The baseline file.
    pub path: PathBuf,
    /// Adapter slug of the baseline.
    pub slug: String,
    /// Benchmark set of the baseline.
    pub set: String,
    /// Ids of benchmarks that were not in the baseline, in record order.
    pub added: Vec<String>,
    /// Ids of benchmarks whose blessed results were replaced by different ones.
    pub updated: Vec<String>,
    /// Benchmarks left as they were: kept because the record did not measure them, or
    /// measured with identical results.
    pub unchanged_count: usize,
    /// Whether the file was written: false on a dry run, and when nothing changed (so that
    /// re-blessing identical results leaves no diff).
    pub written: bool,
}

impl BaselineChange {
    /// Whether any benchmark was added or updated.
    pub fn has_changes(&self) -> bool {
        !self.added.is_empty() || !self.updated.is_empty()
    }

    /// What `baseline update` says of it: the file, the counts and each added (`+`) and
    /// updated (`~`) id.
    pub fn describe(&self, dry_run: bool) -> String {
        let change = self;
        let verb = if dry_run {
            "would update"
        } else if change.written {
            "updated"
        } else {
            "unchanged"
        };
        let mut text = format!(
            "{verb} {}: {} added, {} updated, {} unchanged",
            change.path.display(),
            change.added.len(),
            change.updated.len(),
            change.unchanged_count
        );
        for id in &change.added {
            text.push_str(&format!("\n  + {id}"));
        }
        for id in &change.updated {
            text.push_str(&format!("\n  ~ {id}"));
        }
        text
    }
}

/// The longest adapter slug or set name, in bytes: with `.json.lock` after it, a file name
/// stays under the 255 bytes most file systems allow.
pub const MAX_NAME_BYTES: usize = 200;

/// Refuses a baseline set name that cannot name a file (see [`BaselineError::BadName`]):
/// commands check `--set` before they measure, so a bad name does not cost a run.
pub fn check_set_name(set: &str) -> Result<()> {
    check_name("baseline set", set)
}

/// Refuses slugs and set names that would escape their folder or make odd file names (or
/// names too long for one).
fn check_name(what: &'static str, name: &str) -> Result<()> {
    let odd = name.is_empty()
        || name.len() > MAX_NAME_BYTES
        || name.starts_with('.')
        || name.chars().any(|c| c == '/' || c == '\\' || c.is_control());
    if odd {
        return Err(BaselineError::BadName {
            what,
            name: name.to_string(),
        }
        .into());
    }
    Ok(())
}

/// The record that blessing `record` over `existing` produces, and what that changes.
struct Merged {
    record: RunRecord,
    added: Vec<String>,
    updated: Vec<String>,
    unchanged_count: usize,
}

/// Blessed runs a baseline keeps per benchmark unless configured (`baseline-runs`).
pub const DEFAULT_KEEP_RUNS: usize = 10;

/// The baseline set read and written when no `--set` is given.
pub const DEFAULT_SET: &str = "default";

/// Merges `record` into `existing`: a benchmark already blessed on the same adapter
/// fingerprint gets the new run appended to its history (the last `keep_runs` runs are kept);
/// one blessed under another driver or runtime is replaced; the others are kept, new ones
/// appended. Run metadata (version, time, commit, host, settings) is the new record's. Every
/// benchmark must carry adapter `slug`.
fn merge(existing: Option<RunRecord>, record: &RunRecord, slug: &str, keep_runs: usize) -> Result<Merged> {
    if record.benchmarks.is_empty() {
        return Err(BaselineError::NoBenchmarks.into());
    }
    let mut seen = HashSet::new();
    for benchmark in &record.benchmarks {
        if !seen.insert(benchmark.id.as_str()) {
            return Err(BaselineError::DuplicateBenchmark {
                id: benchmark.id.clone(),
            }
            .into());
        }
    }

    let mut merged = record.clone();
    merged.benchmarks = existing.map(|existing| existing.benchmarks).unwrap_or_default();
    let mut added = Vec::new();
    let mut updated = Vec::new();
    for benchmark in &record.benchmarks {
        match merged.benchmarks.iter_mut().find(|old| old.id == benchmark.id) {
            Some(old) if old == benchmark || old.contains_run(benchmark) => {}
            // Another run on the same adapter, driver and runtime joins the history.
            Some(old) if old.adapter == benchmark.adapter => {
                old.append_run(benchmark.clone(), keep_runs);
                updated.push(benchmark.id.clone());
            }
            // Numbers from another driver or runtime start a new history.
            Some(old) => {
                *old = benchmark.clone();
                updated.push(benchmark.id.clone());
            }
            None => {
                merged.benchmarks.push(benchmark.clone());
                added.push(benchmark.id.clone());
            }
        }
    }
    for benchmark in &merged.benchmarks {
        let found = benchmark.adapter.slug();
        if found != slug {
            return Err(BaselineError::OtherAdapter {
                id: benchmark.id.clone(),
                found,
                label: benchmark.adapter.label(),
                slug: slug.to_string(),
            }
            .into());
        }
    }
    let unchanged_count = merged.benchmarks.len() - added.len() - updated.len();
    Ok(Merged {
        record: merged,
        added,
        updated,
        unchanged_count,
    })
}

/// Parses baseline bytes, `origin` naming them in errors.
fn parse_record(bytes: &[u8], origin: &str) -> Result<RunRecord> {
    let text = std::str::from_utf8(bytes).map_err(|source| BaselineError::NotUtf8 {
        origin: origin.to_string(),
        source,
    })?;
    Ok(RunRecord::from_json(text, origin)?)
}

/// Whether two baseline files differ, ignoring CRLF line endings a checkout may introduce.
fn contents_differ(a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    fn normalized(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        for (i, &byte) in bytes.iter().enumerate() {
            if !(byte == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
                out.push(byte);
            }
        }
        out
    }
    match (a, b) {
        (None, None) => false,
        (Some(a), Some(b)) => a != b && normalized(a) != normalized(b),
        _ => true,
    }
}

/// The commit checked out at `path` and whether the working tree has changes to tracked
/// files; `(None, None)` outside a git repository.
pub fn git_state(path: &std::path::Path) -> (Option<String>, Option<bool>) {
    let Ok(repo) = git2::Repository::discover(path) else {
        return (None, None);
    };
    let commit = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .map(|c| c.id().to_string());
    let mut options = git2::StatusOptions::new();
    options.include_untracked(false).include_ignored(false);
    let dirty = repo.statuses(Some(&mut options)).ok().map(|s| !s.is_empty());
    (commit, dirty)
}
