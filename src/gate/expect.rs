//! What the gate expects to judge, decided by the trusted side: the models and suites the
//! configuration names at the base revision, the benchmarks blessed there for each runner's
//! adapter, and the legs of the benchmark run as GitHub reports them. The records (the pull
//! request's own output) can add rows but never shrink this set: whatever they leave out is a
//! gap, and a gap fails the check (or makes it neutral, [`OnGap::Neutral`]).

use crate::baseline::{BaseRevision, GitBaselineStore};
use crate::compare::{Comparison, Verdict};
use crate::config::Config;
use crate::github::{ActionsEnv, GithubApi, Repository, merge_base, run_jobs};
use crate::results::RunRecord;
use crate::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// What a gap (an expected benchmark or leg that was not judged) does to the check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnGap {
    /// The check fails: nothing unjudged passes (the default).
    #[default]
    Fail,
    /// The check is neutral, with the reason: a required check blocks, a reviewer decides.
    Neutral,
}

impl std::str::FromStr for OnGap {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text {
            "fail" => Ok(Self::Fail),
            "neutral" => Ok(Self::Neutral),
            other => Err(format!("`{other}` is not `fail` or `neutral`")),
        }
    }
}

/// A leg of the benchmark run that did not finish well, as GitHub's jobs API reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedLeg {
    /// The job's name, e.g. `benchmarks (self-hosted, gpu, ephemeral)`.
    pub name: String,
    /// Its conclusion: `failure`, `cancelled`, `timed_out`, `skipped`, ...
    pub conclusion: String,
}

/// The set the trusted side expects, beside the records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expected {
    /// Models and suites the configuration names at the base revision (each must appear in
    /// every record), less those the pull request's configuration drops.
    pub targets: Vec<String>,
    /// Models and suites the pull request's configuration no longer names: not expected, but
    /// flagged for the reviewer like a baseline edit.
    pub dropped: Vec<String>,
    /// Where `targets` come from, e.g. `the configuration at 1a2b3c4`.
    pub origin: String,
    /// The runners blessed at the base revision: every one must send a record.
    pub blessed: Vec<BlessedRunner>,
    /// The conclusion of the whole benchmark run (`workflow_run.conclusion`), when known.
    pub run_conclusion: Option<String>,
    /// Legs that failed or were cancelled.
    pub failed_legs: Vec<FailedLeg>,
}

/// A runner (an adapter) with a baseline blessed at the base revision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlessedRunner {
    /// The adapter's slug, its folder under the baseline directory.
    pub slug: String,
    /// The adapter in words, as records and A/B outcomes name it.
    pub label: String,
    /// The benchmark ids blessed for it.
    pub ids: BTreeSet<String>,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    workspace: Option<ManifestWorkspace>,
}

#[derive(Debug, Deserialize)]
struct ManifestWorkspace {
    metadata: Option<ManifestMetadata>,
}

#[derive(Debug, Deserialize)]
struct ManifestMetadata {
    convbench: Option<Config>,
}

/// The models and suites a configuration names, each once.
fn names(config: Config) -> Vec<String> {
    let mut names: Vec<String> = config.models;
    names.extend(config.suites);
    names.extend(config.model.into_iter().map(|m| m.name));
    let mut seen = BTreeSet::new();
    names.retain(|name| seen.insert(name.clone()));
    names
}

/// The configuration committed at `rev` (`convbench.toml` at the root wins over
/// `[workspace.metadata.convbench]` of `Cargo.toml`, as for a checkout); `None` when neither
/// holds one. Parsed as strictly as a checkout's: a key convbench does not know (a typo such
/// as `threshhold`) is an input error naming the file, the revision and the key, never a
/// setting silently dropped.
pub fn config_at(store: &GitBaselineStore, rev: &BaseRevision) -> Result<Option<Config>> {
    let at = |path: &str| -> Result<Option<String>> {
        Ok(store
            .read_at(rev, Path::new(path))?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    };
    let invalid = |path: &str, text: &str, error: toml::de::Error| {
        let line = error
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        Error::from(super::GateError::ConfigAt {
            path: path.to_string(),
            rev: rev.short_sha().to_string(),
            message: match line {
                Some(line) => format!("line {line}: {}", error.message()),
                None => error.message().to_string(),
            },
        })
    };
    if let Some(text) = at(crate::config::CONFIG_FILE_NAME)? {
        let config: Config =
            toml::from_str(&text).map_err(|e| invalid(crate::config::CONFIG_FILE_NAME, &text, e))?;
        return Ok(Some(config));
    }
    let Some(text) = at("Cargo.toml")? else {
        return Ok(None);
    };
    let manifest: Manifest = toml::from_str(&text).map_err(|e| invalid("Cargo.toml", &text, e))?;
    Ok(manifest
        .workspace
        .and_then(|w| w.metadata)
        .and_then(|m| m.convbench))
}

/// The models and suites the configuration names at `rev` ([`config_at`]); empty when it
/// names none.
pub fn targets_at(store: &GitBaselineStore, rev: &BaseRevision) -> Result<Vec<String>> {
    Ok(config_at(store, rev)?.map(names).unwrap_or_default())
}

/// Whether benchmark `id` belongs to model or suite `target` (`alexnet/train/b128/f32/wgpu`
/// belongs to `alexnet`; `deepbench/conv1/...` to `deepbench`).
fn belongs(id: &str, target: &str) -> bool {
    id.strip_prefix(target).is_some_and(|rest| rest.starts_with('/'))
}

/// The runner a record or comparison stands for, in words.
fn runner_of(record: &RunRecord, comparison: &Comparison) -> String {
    record
        .benchmarks
        .first()
        .map(|b| b.adapter.label())
        .or_else(|| comparison.rows.first().map(|r| r.adapter_label.clone()))
        .unwrap_or_else(|| "a runner with no benchmark".to_string())
}

/// At most this many ids are named per gap; the rest are counted.
const MAX_NAMED: usize = 20;

fn named(ids: &[&str]) -> String {
    let mut out = ids
        .iter()
        .take(MAX_NAMED)
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > MAX_NAMED {
        out.push_str(&format!(" and {} more", ids.len() - MAX_NAMED));
    }
    out
}

/// Each way the judged records fall short of `expected`, as a sentence naming the runner and
/// the benchmarks: a failed or cancelled run or leg, an incomplete record, a configured model
/// or suite a record left out, a benchmark blessed at the base that a runner did not measure.
pub fn gaps(expected: &Expected, pairs: &[(RunRecord, Comparison)]) -> Vec<String> {
    let mut gaps = Vec::new();
    if let Some(conclusion) = expected
        .run_conclusion
        .as_deref()
        .filter(|c| !matches!(*c, "success" | "failure"))
    {
        gaps.push(format!(
            "the benchmark run ended {conclusion}: its records may be partial; re-run it"
        ));
    }
    for leg in &expected.failed_legs {
        gaps.push(format!(
            "the leg {} ended {}; re-run it",
            leg.name, leg.conclusion
        ));
    }
    if pairs.is_empty() {
        gaps.push("no record reached the gate: nothing was judged".to_string());
    }
    for runner in &expected.blessed {
        let present = pairs.iter().any(|(record, comparison)| {
            record.benchmarks.iter().any(|b| b.adapter.slug() == runner.slug)
                || comparison.rows.iter().any(|r| r.adapter_label == runner.label)
        });
        if !present && !pairs.is_empty() {
            gaps.push(format!(
                "no record from {}, whose baselines are blessed at the base revision: its leg did not run \
                 or uploaded nothing (retire a runner by removing its baselines)",
                runner.label
            ));
        }
    }
    for (record, comparison) in pairs {
        let runner = runner_of(record, comparison);
        if comparison.current_incomplete {
            gaps.push(format!(
                "the record of {runner} is incomplete: its run stopped early"
            ));
        }
        let ids: Vec<&str> = comparison
            .rows
            .iter()
            .filter(|r| r.verdict != Verdict::Missing)
            .map(|r| r.benchmark_id.as_str())
            .chain(record.benchmarks.iter().map(|b| b.id.as_str()))
            .collect();
        let absent: Vec<&str> = expected
            .targets
            .iter()
            .filter(|t| !ids.iter().any(|id| belongs(id, t)))
            .map(String::as_str)
            .collect();
        if !absent.is_empty() {
            gaps.push(format!(
                "{runner} did not measure {} named by {}",
                named(&absent),
                expected.origin
            ));
        }
        let slug = record.benchmarks.first().map(|b| b.adapter.slug());
        let mut missing: BTreeSet<&str> = comparison
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::Missing)
            .map(|r| r.benchmark_id.as_str())
            .collect();
        if let Some(runner) = expected.blessed.iter().find(|r| Some(&r.slug) == slug.as_ref()) {
            missing.extend(
                runner
                    .ids
                    .iter()
                    .map(String::as_str)
                    .filter(|id| !ids.contains(id))
                    .filter(|id| !expected.dropped.iter().any(|d| belongs(id, d)))
                    // A blessed benchmark the base's configuration no longer names is history.
                    .filter(|id| {
                        expected.targets.is_empty() || expected.targets.iter().any(|t| belongs(id, t))
                    }),
            );
        }
        if !missing.is_empty() {
            let missing: Vec<&str> = missing.into_iter().collect();
            gaps.push(format!(
                "{runner} did not measure {} blessed at the base revision",
                named(&missing)
            ));
        }
    }
    gaps
}

/// The note that flags targets the pull request dropped from the configuration.
pub fn dropped_note(expected: &Expected) -> Option<String> {
    if expected.dropped.is_empty() {
        return None;
    }
    let dropped: Vec<&str> = expected.dropped.iter().map(String::as_str).collect();
    Some(format!(
        "this pull request removes {} from the configuration: they are no longer expected; review \
         that like an edit of a baseline",
        named(&dropped)
    ))
}

/// The expected set of a pull request judged at trusted base `base` (a full commit id):
/// the models and suites its configuration names, less those the configuration at `head`
/// drops (read as data when the head's objects were fetched; else nothing counts as dropped
/// and a note says so), and every runner with a baseline of `set` blessed at `base`, with its
/// benchmarks.
pub fn expected_at(
    store: &GitBaselineStore,
    base: &str,
    head: Option<&str>,
    set: &str,
    notes: &mut Vec<String>,
) -> Result<Expected> {
    let base_rev = store.resolve_base(Some(base))?;
    let mut targets = targets_at(store, &base_rev)?;
    let mut dropped = Vec::new();
    match head.map(|head| store.resolve_base(Some(head))) {
        Some(Ok(head_rev)) => match targets_at(store, &head_rev) {
            Ok(at_head) if !at_head.is_empty() => {
                dropped = targets.iter().filter(|t| !at_head.contains(t)).cloned().collect();
                targets.retain(|t| at_head.contains(t));
            }
            Ok(_) => {}
            Err(error) => notes.push(format!(
                "the pull request's configuration does not parse ({error}); every benchmark of the base is expected"
            )),
        },
        Some(Err(_)) => notes.push(
            "the pull request's head was not fetched, so its configuration was not read: every benchmark \
             named at the base is expected"
                .to_string(),
        ),
        None => {}
    }
    let blessed = blessed_runners(store, &base_rev, set)?;
    Ok(Expected {
        targets,
        dropped,
        origin: format!("the configuration at {}", base_rev.short_sha()),
        blessed,
        ..Expected::default()
    })
}

/// Every adapter with a baseline of `set` committed at `rev`: the folders under the baseline
/// directory in that commit's tree that hold `<set>.json`.
fn blessed_runners(store: &GitBaselineStore, rev: &BaseRevision, set: &str) -> Result<Vec<BlessedRunner>> {
    let cannot = |error: git2::Error| {
        Error::from(super::GateError::ListBaselines {
            rev: rev.short_sha().to_string(),
            message: error.message().to_string(),
        })
    };
    let repo = git2::Repository::open(store.workdir()).map_err(cannot)?;
    let oid = git2::Oid::from_str(&rev.oid).map_err(cannot)?;
    let tree = repo.find_commit(oid).and_then(|c| c.tree()).map_err(cannot)?;
    let Ok(entry) = tree.get_path(store.baseline_dir()) else {
        return Ok(Vec::new());
    };
    let Ok(folder) = repo.find_tree(entry.id()) else {
        return Ok(Vec::new());
    };
    let mut runners = Vec::new();
    for slug in folder
        .iter()
        .filter(|e| e.kind() == Some(git2::ObjectType::Tree))
        .filter_map(|e| e.name().ok().map(str::to_string))
    {
        let Some(baseline) = store.load_at(rev, &slug, set)? else {
            continue;
        };
        let Some(first) = baseline.benchmarks.first() else {
            continue;
        };
        runners.push(BlessedRunner {
            label: first.adapter.label(),
            ids: baseline.benchmarks.iter().map(|b| b.id.clone()).collect(),
            slug,
        });
    }
    Ok(runners)
}

/// The base of `comment`'s judgment: the merge-base GitHub computes for `head_sha` with
/// `branch` (the pull request cannot choose it). A different base the benchmark run `claimed`
/// is reported in `notes`, never used.
pub fn trusted_base(
    api: &GithubApi,
    repository: &Repository,
    branch: &str,
    head_sha: &str,
    claimed: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<String> {
    let base = merge_base(api, &repository.owner, &repository.name, branch, head_sha)?;
    if let Some(claimed) = claimed
        && !claimed.eq_ignore_ascii_case(&base)
    {
        notes.push(format!(
            "the benchmark run named base {} but the merge-base of {} with {branch} is {}: the numbers \
             are judged against {}",
            claimed.chars().take(40).collect::<String>(),
            &head_sha[..7],
            &base[..7],
            &base[..7]
        ));
    }
    Ok(base)
}

/// The legs of run `run_id` that did not end well (cancelled, timed out, never started...),
/// and one more when the run's jobs outnumber the `records` that reached the gate (a failed
/// leg that uploaded nothing).
pub fn failed_legs(
    api: &GithubApi,
    repository: &Repository,
    run_id: u64,
    records: usize,
) -> Result<Vec<FailedLeg>> {
    let jobs = run_jobs(api, &repository.owner, &repository.name, run_id)?;
    let mut legs: Vec<FailedLeg> = jobs
        .iter()
        .filter(|job| !matches!(job.conclusion.as_deref(), Some("success" | "failure")))
        .map(|job| FailedLeg {
            name: job.name.clone(),
            conclusion: job.conclusion.clone().unwrap_or_else(|| job.status.clone()),
        })
        .collect();
    let finished = jobs.len() - legs.len();
    if records < finished {
        let mut failed: Vec<&str> = jobs
            .iter()
            .filter(|job| job.conclusion.as_deref() == Some("failure"))
            .map(|job| job.name.as_str())
            .collect();
        if failed.is_empty() {
            failed = jobs.iter().map(|job| job.name.as_str()).collect();
        }
        legs.push(FailedLeg {
            name: failed.join(", "),
            conclusion: format!("failure, and {records} of {finished} finished legs uploaded a record"),
        });
    }
    Ok(legs)
}

/// What `comment` knows of the benchmark run from the `workflow_run` event and the flags,
/// beside the records: what its expected set and base are decided from ([`TrustedRun::base`],
/// [`TrustedRun::expected`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustedRun {
    /// The commit that was measured (`--head-sha`).
    pub head_sha: Option<String>,
    /// The repository's default branch (`--default-branch`): with `head_sha`, the base is the
    /// merge-base GitHub computes for the head.
    pub default_branch: Option<String>,
    /// The base the benchmark run named (`--baseline-rev`): only cross-checked.
    pub claimed_base: Option<String>,
    /// The benchmark run (`--run-id`): its legs that did not end well are gaps.
    pub run_id: Option<u64>,
    /// The benchmark run's conclusion (`--run-conclusion`).
    pub run_conclusion: Option<String>,
}

impl TrustedRun {
    /// Checks `--head-sha`: 40 hex digits (quoted escaped for a workflow command otherwise).
    pub fn check_head_sha(&self) -> Result<()> {
        match &self.head_sha {
            Some(sha) if !(sha.len() == 40 && sha.chars().all(|ch| ch.is_ascii_hexdigit())) => {
                Err(super::GateError::HeadSha {
                    sha: crate::github::escape_workflow_data(sha),
                }
                .into())
            }
            _ => Ok(()),
        }
    }

    /// The base of the judgment: with a default branch and a head, the merge-base GitHub
    /// computes ([`trusted_base`], a claimed base that differs noted in `notes`); else `None`,
    /// and the baseline options decide.
    pub fn base(&self, env: &ActionsEnv, notes: &mut Vec<String>) -> Result<Option<String>> {
        let (Some(branch), Some(head_sha)) = (&self.default_branch, &self.head_sha) else {
            return Ok(None);
        };
        let repository = env.repository.as_ref().ok_or_else(|| {
            Error::from(super::GateError::NoRepository {
                next: "it names the repository to ask for the merge-base",
            })
        })?;
        let api = GithubApi::from_env(env);
        let claimed = self.claimed_base.as_deref();
        trusted_base(&api, repository, branch, head_sha, claimed, notes).map(Some)
    }

    /// What must be judged, given the trusted `base` (from [`TrustedRun::base`]) and the number
    /// of `records` that reached the gate: at a base, [`expected_at`] of `set` (in `workspace`'s
    /// baselines) with the run's
    /// conclusion and failed legs; without one, only the run's conclusion and legs when a run
    /// is named; else `None` (whatever the records hold).
    pub fn expected(
        &self,
        env: &ActionsEnv,
        workspace: &crate::config::Workspace,
        base: Option<&str>,
        set: &str,
        records: usize,
        notes: &mut Vec<String>,
    ) -> Result<Option<Expected>> {
        let mut expected = match base {
            Some(base) => {
                let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
                expected_at(&store, base, self.head_sha.as_deref(), set, notes)?
            }
            None if self.run_id.is_some() || self.run_conclusion.is_some() => Expected::default(),
            None => return Ok(None),
        };
        expected.run_conclusion = self.run_conclusion.clone();
        expected.failed_legs = match (self.run_id, env.repository.as_ref()) {
            (Some(run_id), Some(repository)) => {
                failed_legs(&GithubApi::from_env(env), repository, run_id, records)?
            }
            _ => Vec::new(),
        };
        Ok(Some(expected))
    }
}
