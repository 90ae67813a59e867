//! The gate: the whole decision of `ci` and `comment`, from records (or an A/B outcome), the
//! configuration and the Actions event to one [`Decision`]: the verdicts, whether the gate
//! fails, the label that accepted a failure, the comment body, the check run's conclusion and
//! title. The comment and the check come from this one value, so they never disagree.
//!
//! What must be judged is the trusted side's to say ([`expect`]): the models and suites the
//! configuration names at the base, the runners and benchmarks blessed there, every leg of the
//! run. Whatever the records leave out is a gap, which fails the check (or makes it neutral,
//! [`OnGap`]) and which no label accepts. The accept label accepts every failing regression;
//! `<accept-label>:<glob>` labels accept those whose benchmark id a glob matches.
//!
//! Loading what a decision needs (the baselines at the base revision, [`load_baseline`]) and
//! publishing it ([`publish`]) are the only I/O here; [`decide`] is a pure function.

pub mod ci;
mod error;
pub mod expect;
pub mod publish;

use crate::baseline::{BaseRevision, GitBaselineStore};
use crate::compare::{CompareConfig, Comparison, PhaseComparison, Verdict, compare};
use crate::config::{CiMode, CommentOn, Workspace};
use crate::github::{
    ActionsEnv, CheckConclusion, CommentContext, comment_body, escape_markdown, sections_from,
};
use crate::harness::ab::AbOutcome;
use crate::results::{Phase, RunRecord, TimingMethod};
use crate::{Error, Result};
pub use error::GateError;
pub use expect::{Expected, FailedLeg, OnGap};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Where the baseline of a comparison comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineSource {
    /// The git revision whose blessed baselines apply; `None`: the merge-base of HEAD with the
    /// default branch (with `GITHUB_BASE_REF` in Actions).
    pub rev: Option<String>,
    /// A plain record file instead of git.
    pub file: Option<PathBuf>,
    /// The baseline set (file name under `baselines/<adapter>/`).
    pub set: String,
}

impl Default for BaselineSource {
    fn default() -> Self {
        Self {
            rev: None,
            file: None,
            set: "default".to_string(),
        }
    }
}

/// The baseline a comparison used, and what to tell the reader about it.
#[derive(Debug, Clone)]
pub struct LoadedBaseline {
    /// Benchmarks blessed for the adapters of the current record.
    pub record: RunRecord,
    /// Where it came from, e.g. `baselines/... at 1a2b3c4`.
    pub origin: String,
    /// Lines for the report: missing baselines, baselines edited in the working tree.
    pub notes: Vec<String>,
    /// The base revision, when read from git.
    pub base: Option<BaseRevision>,
}

/// Loads the baseline of every adapter in `current`, restricted to the models it ran.
pub fn load_baseline(
    workspace: &Workspace,
    source: &BaselineSource,
    current: &RunRecord,
) -> Result<LoadedBaseline> {
    let models: BTreeSet<&str> = current.benchmarks.iter().map(|b| b.model.as_str()).collect();
    let keep = |record: &mut RunRecord| record.benchmarks.retain(|b| models.contains(b.model.as_str()));
    if let Some(path) = &source.file {
        let mut record = RunRecord::read(path)?;
        if record.benchmarks.is_empty() {
            return Err(GateError::EmptyBaseline {
                path: path.display().to_string(),
            }
            .into());
        }
        keep(&mut record);
        return Ok(LoadedBaseline {
            record,
            origin: path.display().to_string(),
            notes: Vec::new(),
            base: None,
        });
    }
    let (store, base) = open_base(workspace, source.rev.as_deref())?;
    let mut record = RunRecord::new(Some(base.oid.clone()));
    let mut notes = Vec::new();
    if base.head_for_want_of_a_branch {
        notes.push(
            "the repository has no main or master branch, so the base is HEAD itself and this              branch's own edits to its baseline count; pass --baseline-rev with the branch it              merges into"
                .to_string(),
        );
    }
    let slugs: BTreeSet<String> = current.benchmarks.iter().map(|b| b.adapter.slug()).collect();
    for slug in &slugs {
        let path = store.repo_path(slug, &source.set)?;
        match store.load_at(&base, slug, &source.set)? {
            Some(blessed) => record.benchmarks.extend(blessed.benchmarks),
            None => {
                // Another set of this adapter there is more likely a typo of --set than a new
                // adapter: name them.
                let others = store.sets_at(&base, slug)?;
                let fix = if others.is_empty() {
                    "bless one with `cargo convbench baseline update`".to_string()
                } else {
                    let there = match others.as_slice() {
                        [one] => format!("this adapter's one set there is {one}"),
                        many => format!("this adapter's sets there are {}", many.join(", ")),
                    };
                    format!(
                        "{there}; pass one with --set, or bless this one with `cargo convbench \
                         baseline update --set {}`",
                        source.set
                    )
                };
                notes.push(format!(
                    "no baseline {} at {}: every benchmark of this adapter is new; {fix}",
                    path.display(),
                    base.description
                ))
            }
        }
        if store.worktree_differs(&base, slug, &source.set)? {
            notes.push(format!(
                "{} differs in the working tree from {}: the comparison uses the version at the base \
                 revision, so a change cannot hide a regression by editing its own baseline",
                path.display(),
                base.description
            ));
        }
    }
    keep(&mut record);
    Ok(LoadedBaseline {
        record,
        origin: format!("{} at {}", store.baseline_dir().display(), base.description),
        notes,
        base: Some(base),
    })
}

/// The baseline store and the base revision `rev` resolves to (`None`: the merge-base); a
/// missing repository or commit says that `--baseline-file` is the way around git, as every
/// command that reads a baseline this way has that flag.
fn open_base(workspace: &Workspace, rev: Option<&str>) -> Result<(GitBaselineStore, BaseRevision)> {
    let open = || {
        let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
        let base = store.resolve_base(rev)?;
        Ok((store, base))
    };
    open().map_err(crate::baseline::BaselineError::offer_baseline_file)
}

/// Checks, before anything is measured, that the baseline of `source` can be read: a
/// `--baseline-file` is readable later; otherwise the repository and the base revision
/// exist.
pub fn check_base(workspace: &Workspace, source: &BaselineSource) -> Result<()> {
    crate::baseline::check_set_name(&source.set)?;
    if source.file.is_some() {
        return Ok(());
    }
    open_base(workspace, source.rev.as_deref()).map(|_| ())
}

/// The workspace whose settings judge, against the base `rev` of `source` (`None`: the
/// merge-base, as [`GitBaselineStore::resolve_base`] finds it): the `[compare]` table and
/// `ci.accept-label` as committed at the base ([`expect::config_at`]; the defaults where the
/// base has no configuration), everything else the checkout's. A pull request cannot loosen
/// the gate that judges it by editing its own configuration. With `--baseline-file` and no
/// revision there is no base, and the checkout's settings judge.
pub fn judging_workspace(
    workspace: &Workspace,
    source: &BaselineSource,
    rev: Option<&str>,
) -> Result<Workspace> {
    if source.file.is_some() && rev.is_none() {
        return Ok(workspace.clone());
    }
    let (store, base) = open_base(workspace, rev)?;
    let at_base = expect::config_at(&store, &base)?.unwrap_or_default();
    let mut judging = workspace.clone();
    judging.config.compare = at_base.compare;
    judging.config.ci.accept_label = at_base.ci.accept_label;
    Ok(judging)
}

/// What the command line overrides of the configuration's comparison settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareOverrides {
    /// Slowdown that counts as a regression, as a fraction.
    pub threshold: Option<f64>,
    /// Slowdown above which a regression fails the gate.
    pub fail_threshold: Option<f64>,
    /// Compare numbers from different adapters anyway.
    pub allow_other_adapter: bool,
    /// Fail on inconclusive results too.
    pub fail_on_inconclusive: bool,
}

/// The comparison settings: the workspace's, overridden by `overrides`, validated.
pub fn compare_config(workspace: &Workspace, overrides: &CompareOverrides) -> Result<CompareConfig> {
    let mut config = workspace.config.compare_config();
    if let Some(t) = overrides.threshold {
        config.threshold = t;
    }
    if let Some(fail) = overrides.fail_threshold {
        config.fail_threshold = Some(fail);
    }
    config.allow_other_adapter |= overrides.allow_other_adapter;
    config.fail_on_inconclusive |= overrides.fail_on_inconclusive;
    config.validate()?;
    Ok(config)
}

/// Checks both records ([`RunRecord::validate`]: no duplicated benchmark or phase, no
/// zero-time sample, something to judge) and compares them. `what` names the current record.
pub fn judge_records(
    baseline: &LoadedBaseline,
    current: &RunRecord,
    what: &str,
    config: &CompareConfig,
) -> Result<Comparison> {
    current.validate(what)?;
    if !baseline.record.benchmarks.is_empty() {
        baseline
            .record
            .validate(&format!("the baseline ({})", baseline.origin))?;
    }
    Ok(compare(&baseline.record, current, config))
}

/// Fails when rows were incomparable (other adapter) and that was not allowed.
pub fn refuse_incomparable(comparison: &Comparison) -> Result<()> {
    if comparison.config.allow_other_adapter {
        return Ok(());
    }
    let labels: BTreeMap<&str, usize> = comparison
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Incomparable)
        .fold(BTreeMap::new(), |mut m, r| {
            *m.entry(r.adapter_label.as_str()).or_default() += 1;
            m
        });
    if labels.is_empty() {
        return Ok(());
    }
    Err(GateError::OtherAdapter {
        adapters: labels.keys().map(|label| label.to_string()).collect(),
    }
    .into())
}

/// The [`Provided::provenance`] of `comment`: why numbers measured by the pull request's own
/// workflow run deserve the trust of the pull request, no more.
pub const WORKFLOW_RUN_PROVENANCE: &str = "These numbers were measured by the pull request's own workflow run, \
     on its runner, with its code; the default branch's convbench judged them and wrote this comment.";

/// What the caller knows that the records must not decide.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provided {
    /// The measured commit, from the `workflow_run` event; it replaces what records claim.
    pub head_sha: Option<String>,
    /// The run that measured, linked from the comment.
    pub run_url: Option<String>,
    /// Why the numbers deserve the trust they get, shown in the comment.
    pub provenance: Option<String>,
    /// Labels of the pull request (beside those of the event payload).
    pub labels: Vec<String>,
    /// The published history dashboard.
    pub dashboard_url: Option<String>,
    /// The base revision the trusted side computed (the merge-base of the head with the
    /// default branch); it replaces whatever base the records or the event name.
    pub base_sha: Option<String>,
    /// Notes of the trusted side, e.g. that the pull request named another base.
    pub notes: Vec<String>,
    /// What must be judged; `None`: whatever the records hold.
    pub expected: Option<Expected>,
    /// What a gap in `expected` does to the check.
    pub on_gap: OnGap,
}

/// What a mode measured and judged, before the decision.
#[derive(Debug)]
pub struct Parts {
    /// Each record with its comparison.
    pub pairs: Vec<(RunRecord, Comparison)>,
    /// Notes for the reader.
    pub notes: Vec<String>,
    /// The base revision the verdicts are against.
    pub base_sha: Option<String>,
    /// Rows measured on another adapter than the baseline's, not allowed.
    pub incomparable: Option<Error>,
    /// Which mode decided and why, in a sentence.
    pub mode: String,
    /// How rows were timed where no record's benchmark says (A/B mode keeps pairs, not records).
    pub timing: Option<TimingMethod>,
}

/// Baseline mode: each record against the baselines blessed at the base revision.
pub fn baseline_parts(
    workspace: &Workspace,
    source: &BaselineSource,
    config: &CompareConfig,
    records: Vec<RunRecord>,
    why: Option<&str>,
) -> Result<Parts> {
    let mut pairs = Vec::new();
    let mut notes = Vec::new();
    let mut base_sha = None;
    let mut incomparable = None;
    for record in records {
        let baseline = load_baseline(workspace, source, &record)?;
        let comparison = judge_records(&baseline, &record, "the record under test", config)?;
        base_sha = base_sha.or(baseline.base.map(|b| b.oid));
        notes.extend(baseline.notes);
        if incomparable.is_none() {
            incomparable = refuse_incomparable(&comparison).err();
        }
        pairs.push((record, comparison));
    }
    let mut mode = match &base_sha {
        Some(base) => format!(
            "baseline mode: each benchmark's blessed runs at {}, compared on run medians",
            base.chars().take(7).collect::<String>()
        ),
        None => "baseline mode: the baseline file given on the command line".to_string(),
    };
    if let Some(why) = why {
        mode.push_str(&format!(" ({why})"));
    }
    Ok(Parts {
        pairs,
        notes,
        base_sha,
        incomparable,
        mode,
        timing: None,
    })
}

/// A/B mode: the outcome of an interleaved A/B as one comparison. `commit` is the head's.
pub fn ab_parts(outcome: &AbOutcome, config: CompareConfig, commit: Option<String>) -> Parts {
    let rows = outcome
        .rows
        .iter()
        .map(|row| PhaseComparison {
            benchmark_id: match &row.layer {
                Some(layer) => format!("{} layer {layer}", row.benchmark_id),
                None => row.benchmark_id.clone(),
            },
            phase: row.phase,
            // The times the change rests on, so the comment's columns agree with its change.
            baseline_median_ns: row.sides_ns().map(|(base, _)| base),
            current_median_ns: row.sides_ns().map(|(_, head)| head),
            change: row.estimated().then_some(row.change),
            ci: row.estimated().then_some(row.ci),
            p_value: Some(row.p_value),
            threshold: row.threshold,
            verdict: row.verdict,
            adapter_label: outcome.adapter_label.clone(),
            evidence: Some(row.evidence.clone()),
        })
        .collect();
    let comparison = Comparison {
        rows,
        config,
        kernel_changes: Vec::new(),
        current_incomplete: outcome.interrupted,
    };
    let counts = outcome.measured.iter().map(|m| m.base_ns.len());
    let (fewest, most) = (counts.clone().min().unwrap_or(0), counts.max().unwrap_or(0));
    let pairs_per_benchmark = if outcome.measured.is_empty() {
        "no benchmark timed".to_string()
    } else if fewest == most {
        format!("{most} pairs per benchmark")
    } else {
        format!("{fewest} to {most} pairs per benchmark")
    };
    let same_code = outcome.rows.iter().filter(|row| row.same_code).count();
    let same_code = match same_code {
        0 => String::new(),
        1 => "; 1 benchmark runs the same code on both sides and was not timed".to_string(),
        n => format!("; {n} benchmarks run the same code on both sides and were not timed"),
    };
    Parts {
        pairs: vec![(RunRecord::new(commit), comparison)],
        notes: Vec::new(),
        base_sha: None,
        incomparable: None,
        mode: format!(
            "A/B mode: {pairs_per_benchmark}, interleaved in one process on one device ({}){same_code}{}",
            outcome.description,
            detectable(outcome)
        ),
        timing: outcome.timing,
    }
}

/// The parts of saved files: run records are judged in baseline mode against the baselines of
/// `source`; A/B outcome files (`ab --out`, `ci --out` in A/B mode) have their raw pairs judged
/// again with `config` (never the verdicts they claim). One kind at a time.
pub fn parts_from_files(
    workspace: &Workspace,
    source: &BaselineSource,
    config: &CompareConfig,
    paths: &[PathBuf],
    why: Option<&str>,
) -> Result<Parts> {
    let mut records = Vec::new();
    let mut outcomes = Vec::new();
    for path in paths {
        let text =
            crate::fs::read_text(path, crate::fs::MAX_RECORD_FILE_BYTES).map_err(|error| match error {
                Error::Io { source, .. } => GateError::Unreadable {
                    path: path.display().to_string(),
                    message: source.to_string(),
                }
                .into(),
                other => other,
            })?;
        if AbOutcome::is_outcome_json(&text) {
            outcomes.push(AbOutcome::from_json(&text, &path.display().to_string(), config)?);
        } else {
            records.push(RunRecord::from_json(&text, &path.display().to_string())?);
        }
    }
    match (records.is_empty(), outcomes.is_empty()) {
        (false, false) => Err(GateError::MixedFiles.into()),
        (true, false) => {
            let mut merged: Option<Parts> = None;
            for outcome in &outcomes {
                let parts = ab_parts(outcome, config.clone(), None);
                match &mut merged {
                    None => merged = Some(parts),
                    Some(all) => all.pairs.extend(parts.pairs),
                }
            }
            merged.ok_or_else(|| GateError::NoFiles.into())
        }
        _ => baseline_parts(workspace, source, config, records, why),
    }
}

/// What the smallest slowdowns the rows could see were, as a clause for the mode line: a "no
/// change" is never mistaken for "fast enough".
fn detectable(outcome: &AbOutcome) -> String {
    let sizes: Vec<f64> = outcome.rows.iter().filter_map(|r| r.min_detectable).collect();
    let (Some(least), Some(most)) = (
        sizes.iter().copied().reduce(f64::min),
        sizes.iter().copied().reduce(f64::max),
    ) else {
        return String::new();
    };
    let range = if (most - least).abs() < 0.0005 {
        format!("{:.1}%", 100.0 * most)
    } else {
        format!("{:.1}% to {:.1}%", 100.0 * least, 100.0 * most)
    };
    format!("; these pairs would have caught a slowdown of {range} 95% of the time")
}

/// The gate's decision on one pull request (or push).
#[derive(Debug)]
pub struct Decision {
    /// Each record with its comparison.
    pub pairs: Vec<(RunRecord, Comparison)>,
    /// Notes for the reader.
    pub notes: Vec<String>,
    /// The comment (and check-run summary) body.
    pub body: String,
    /// The label that turned a failing gate into a pass.
    pub accepted_by: Option<String>,
    /// Failing regressions accepted one by one, by a `<accept-label>:<glob>` label: each
    /// benchmark id with the label that accepted it.
    pub waived: Vec<(String, String)>,
    /// What was expected and not judged (a missing benchmark or runner, an incomplete record, a
    /// failed or cancelled leg), each a sentence; no label accepts these.
    pub gaps: Vec<String>,
    /// What a gap does to the check.
    pub on_gap: OnGap,
    /// Rows measured on another adapter than the baseline's, not allowed: reported in the
    /// comment and the summary, then the command fails with this error (exit 2).
    pub incomparable: Option<Error>,
    /// The comment's sections and context, for the job summary's own rendering.
    sections: Vec<crate::github::AdapterSection>,
    context: CommentContext,
}

/// The longest check-run title convbench writes, in characters (GitHub shows about one line).
const MAX_TITLE_CHARS: usize = 200;

impl Decision {
    /// The job summary: the same decision under GitHub's 1 MiB summary limit rather than the
    /// comment's 65,536 characters, with `appendix` (e.g. the regressions' history) after it.
    pub fn job_summary(&self, appendix: &str) -> String {
        crate::github::job_summary(&self.sections, &self.context, appendix)
    }

    /// Failing regressions that no per-benchmark label accepted.
    fn unwaived_regressions(&self) -> usize {
        self.pairs
            .iter()
            .flat_map(|(_, c)| c.rows.iter().filter(move |row| c.fails_gate(row)))
            .filter(|row| !self.waived.iter().any(|(id, _)| *id == row.benchmark_id))
            .count()
    }

    /// Whether something other than a regression fails the gate: an interrupted record, or an
    /// inconclusive row under `fail-on-inconclusive`.
    fn fails_otherwise(&self) -> bool {
        self.pairs.iter().any(|(_, c)| {
            c.current_incomplete || (c.config.fail_on_inconclusive && c.count(Verdict::Inconclusive) > 0)
        })
    }

    /// Whether the gate fails, after the accepting labels; a gap fails it under
    /// [`OnGap::Fail`] whatever the labels say.
    pub fn fails(&self) -> bool {
        (self.accepted_by.is_none() && self.unwaived_regressions() > 0)
            || self.fails_otherwise()
            || (!self.gaps.is_empty() && self.on_gap == OnGap::Fail)
    }

    /// Whether `policy` asks for a new comment on these results.
    pub fn wants_new_comment(&self, policy: CommentOn) -> bool {
        let comparisons = || self.pairs.iter().map(|(_, c)| c);
        match policy {
            CommentOn::Always => true,
            CommentOn::Regression => comparisons().any(Comparison::has_regression),
            CommentOn::Change => {
                !self.gaps.is_empty()
                    || comparisons().any(|c| {
                        c.current_incomplete
                            || c.rows
                                .iter()
                                .any(|row| !matches!(row.verdict, Verdict::NoChange | Verdict::New))
                    })
            }
        }
    }

    /// The check run's conclusion and title: failure when the gate fails, the baseline is of
    /// another adapter, a record is incomplete, or something expected was not judged (neutral
    /// for that under [`OnGap::Neutral`]); neutral when labels accepted the regressions;
    /// success otherwise.
    pub fn check(&self) -> (CheckConclusion, String) {
        let regressions: usize = self.pairs.iter().map(|(_, c)| c.count(Verdict::Regression)).sum();
        let incomplete = self.pairs.iter().any(|(_, c)| c.current_incomplete);
        if self.incomparable.is_some() {
            return (
                CheckConclusion::Failure,
                "baseline measured on another adapter".to_string(),
            );
        }
        let count = match regressions {
            0 => "no regression".to_string(),
            1 => "1 regression".to_string(),
            n => format!("{n} regressions"),
        };
        let unjudged = |gaps: &[String]| {
            let first = gaps[0].chars().take(MAX_TITLE_CHARS).collect::<String>();
            match gaps.len() {
                1 => format!("not judged: {first}"),
                n => format!("{n} things not judged, first: {first}"),
            }
        };
        if self.fails() {
            let title = if self.accepted_by.is_none() && self.unwaived_regressions() > 0 {
                count
            } else if incomplete {
                "incomplete record: a run stopped early".to_string()
            } else if !self.gaps.is_empty() {
                unjudged(&self.gaps)
            } else {
                count
            };
            return (CheckConclusion::Failure, title);
        }
        if !self.gaps.is_empty() {
            return (CheckConclusion::Neutral, unjudged(&self.gaps));
        }
        if self.accepted_by.is_some() {
            return (CheckConclusion::Neutral, format!("{count}, accepted by label"));
        }
        if !self.waived.is_empty() {
            return (
                CheckConclusion::Neutral,
                format!("{count}, {} accepted by benchmark labels", self.waived.len()),
            );
        }
        (CheckConclusion::Success, count)
    }

    /// The error to end with after everything was reported, else whether the gate failed.
    pub fn finish(self) -> Result<bool> {
        let fails = self.fails();
        match self.incomparable {
            Some(error) => Err(error),
            None => Ok(fails),
        }
    }
}

/// The failing regressions that a per-benchmark label (`<accept_label>:<glob>`, globset
/// syntax on the benchmark id) accepts, each with its label. A glob that does not parse
/// accepts nothing.
fn waivers(
    pairs: &[(RunRecord, Comparison)],
    accept_label: Option<&String>,
    labels: &[&String],
) -> Vec<(String, String)> {
    let Some(prefix) = accept_label.map(|label| format!("{label}:")) else {
        return Vec::new();
    };
    let globs: Vec<(globset::GlobMatcher, &String)> = labels
        .iter()
        .filter_map(|label| {
            let pattern = label.strip_prefix(&prefix)?;
            Some((globset::Glob::new(pattern.trim()).ok()?.compile_matcher(), *label))
        })
        .collect();
    let mut waived: Vec<(String, String)> = Vec::new();
    for (_, comparison) in pairs {
        for row in comparison.rows.iter().filter(|row| comparison.fails_gate(row)) {
            if let Some((_, label)) = globs.iter().find(|(glob, _)| glob.is_match(&row.benchmark_id))
                && !waived.iter().any(|(id, _)| *id == row.benchmark_id)
            {
                waived.push((row.benchmark_id.clone(), (*label).clone()));
            }
        }
    }
    waived
}

/// How `ci` decides this time, and why, when it is not A/B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// A/B; `forced` when asked for (its errors are the command's), else chosen by default
    /// (an environment error falls back to baseline mode).
    Ab {
        /// Whether the flags or the configuration asked for A/B.
        forced: bool,
    },
    /// Baseline mode, with the reason.
    Baseline(String),
}

impl Mode {
    /// Why an A/B that failed with `error` gives way to baseline mode, the sentence the
    /// comment shows; `None` when the error is the command's: A/B was asked for, or the error
    /// is not the environment's (a failed verification, an interruption, bad input), or the
    /// device failed while the kernels ran on it (rejected, out of memory, never finishing),
    /// which baseline mode's run would meet again. The environment errors that give way are
    /// a device that could not be had at all ([`crate::DeviceError::is_unavailable`]) and the
    /// base revision's tree or configuration that could not be read.
    pub fn fallback(&self, error: &Error) -> Option<String> {
        let environment = error.kind() == crate::ErrorKind::Environment
            && error.device().is_none_or(crate::DeviceError::is_unavailable);
        match self {
            Mode::Ab { forced: false } if environment => Some(format!("A/B could not run: {error}")),
            _ => None,
        }
    }
}

/// What the command line says about `ci`'s mode.
#[derive(Debug, Clone, Default)]
pub struct ModeRequest<'a> {
    /// Saved files are given to judge (`--results`): nothing is run.
    pub judging_files: bool,
    /// The mode the flags ask for (`--mode`, `--ab`, `--ab-base`).
    pub asked: Option<CiMode>,
    /// A backend other than wgpu is selected.
    pub other_backend: bool,
    /// The base revision named (`--ab-base` or `--baseline-rev`).
    pub base: Option<&'a str>,
}

/// `ci`'s mode: the flags, then `ci.mode` (or `ci.ab`), then A/B whenever a base revision can
/// be read and the backends are wgpu's; baseline mode otherwise, with the reason.
pub fn choose_mode(request: &ModeRequest<'_>, workspace: &Workspace) -> Mode {
    let config = &workspace.config.ci;
    if request.judging_files {
        return Mode::Baseline("judging the saved files of --results".into());
    }
    match request.asked.or(config.mode).or(config.ab.then_some(CiMode::Ab)) {
        Some(CiMode::Ab) => return Mode::Ab { forced: true },
        Some(CiMode::Baseline) => {
            let by = if request.asked.is_some() {
                "--mode baseline"
            } else {
                "`ci.mode = \"baseline\"`"
            };
            return Mode::Baseline(format!("asked for by {by}"));
        }
        None => {}
    }
    if request.other_backend {
        return Mode::Baseline(
            "--backend names a backend other than wgpu, and A/B runs convbench's WGSL".into(),
        );
    }
    let base = open_base(workspace, request.base);
    match base {
        Ok(_) => Mode::Ab { forced: false },
        Err(e) => Mode::Baseline(format!("no base revision to run A/B against: {e}")),
    }
}

/// The decision on `parts`: the accept labels, what was expected and not judged, the
/// comment's context and body. Pure: the same parts, configuration and event always give the
/// same decision.
pub fn decide(workspace: &Workspace, env: &ActionsEnv, provided: Provided, parts: Parts) -> Decision {
    let Parts {
        pairs,
        mut notes,
        base_sha,
        incomparable,
        mode,
        timing,
    } = parts;
    notes.extend(provided.notes.iter().cloned());
    let gaps = provided
        .expected
        .as_ref()
        .map(|expected| expect::gaps(expected, &pairs))
        .unwrap_or_default();
    if let Some(note) = provided.expected.as_ref().and_then(expect::dropped_note) {
        notes.push(note);
    }
    let fails = pairs.iter().any(|(_, c)| c.failing_regressions() > 0);
    let fails_otherwise = pairs.iter().any(|(_, c)| {
        c.current_incomplete || (c.config.fail_on_inconclusive && c.count(Verdict::Inconclusive) > 0)
    });
    let accept_label = workspace.config.ci.accept_label.as_ref();
    let labels: Vec<&String> = provided
        .labels
        .iter()
        .chain(env.pull_request.iter().flat_map(|pr| pr.labels.iter()))
        .collect();
    let accepted_by = accept_label
        .filter(|label| fails && !fails_otherwise && labels.contains(label))
        .cloned();
    let waived = match accepted_by {
        Some(_) => Vec::new(),
        None => waivers(&pairs, accept_label, &labels),
    };
    let explicit_head = provided.head_sha.is_some();
    let context = CommentContext {
        base_sha: provided
            .base_sha
            .or_else(|| env.pull_request.as_ref().map(|p| p.base_sha.clone()))
            .or(base_sha),
        head_sha: provided.head_sha.or_else(|| {
            env.pull_request
                .as_ref()
                .map(|p| p.head_sha.clone())
                .or_else(|| env.sha.clone())
        }),
        run_url: provided.run_url.or_else(|| env.run_url()),
        mode: Some(mode),
        timing,
        provenance: provided.provenance,
        notes: notes.clone(),
        accepted_by_label: accepted_by.clone(),
        waived: waived.clone(),
        gaps: gaps.clone(),
        mentions: workspace.config.ci.mention.clone(),
        dashboard_url: workspace
            .config
            .ci
            .dashboard_url
            .clone()
            .or(provided.dashboard_url),
    };
    let mut sections = sections_from(pairs.iter().map(|(r, c)| (r, c)));
    if explicit_head {
        // The commit a record claims is the pull request's word; the event's is GitHub's.
        for section in &mut sections {
            section.commit = None;
        }
    }
    let body = comment_body(&sections, &context);
    Decision {
        pairs,
        notes,
        body,
        accepted_by,
        waived,
        gaps,
        on_gap: provided.on_gap,
        incomparable,
        sections,
        context,
    }
}

/// The blessed history of every benchmark with a regression, as Markdown for the job summary;
/// empty when there is none or the baselines are not in git.
pub fn regression_history(workspace: &Workspace, set: &str, decision: &Decision) -> String {
    const MAX_BENCHMARKS: usize = 20;
    const MAX_POINTS: usize = 10;
    let Ok(store) = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir()) else {
        return String::new();
    };
    let mut out = String::new();
    let mut shown = Vec::new();
    for (record, comparison) in &decision.pairs {
        for row in comparison
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::Regression)
        {
            let Some(benchmark) = record.benchmarks.iter().find(|b| b.id == row.benchmark_id) else {
                continue;
            };
            if shown.contains(&row.benchmark_id) || shown.len() == MAX_BENCHMARKS {
                continue;
            }
            shown.push(row.benchmark_id.clone());
            let Ok(mut points) = store.history(&benchmark.adapter.slug(), set, Some(&row.benchmark_id))
            else {
                continue;
            };
            points.retain(|point| point.phase == Phase::Total);
            out.push_str(&format!(
                "\n#### History of {}\n\n| commit | blessed (UTC) | total median | commit message |\n| --- | --- | ---: | --- |\n",
                escape_markdown(&row.benchmark_id)
            ));
            let skip = points.len().saturating_sub(MAX_POINTS);
            for point in points.iter().skip(skip) {
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    escape_markdown(&point.commit.chars().take(10).collect::<String>()),
                    crate::report::rfc3339_utc(point.time_unix_s.max(0) as u64),
                    crate::github::format_duration_ns(point.median_ns),
                    escape_markdown(&point.summary),
                ));
            }
            if points.is_empty() {
                out.push_str("| – | – | – | no blessed value in the history yet |\n");
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    format!(
        "\n### Blessed history of the regressed benchmarks\n\nFrom `cargo convbench history --benchmark ID` \
         (the last {MAX_POINTS} blessings each).\n{out}"
    )
}

#[cfg(test)]
mod tests;
