//! Verdicts between a baseline [`RunRecord`] and a current one, one per benchmark and phase.
//!
//! Benchmarks are matched by id. A record with a duplicated id or phase, no benchmarks or a
//! zero-time sample cannot be judged: [`RunRecord::validate`] rejects it, and the commands
//! call it on both records before comparing (here, of a duplicated id the first counts). A benchmark
//! (or phase) only in the current record is [`Verdict::New`], only in the baseline
//! [`Verdict::Missing`]. Benchmarks measured on adapters with different fingerprints are
//! [`Verdict::Incomparable`] unless [`CompareConfig::allow_other_adapter`] is set: numbers
//! from different GPUs, drivers or runtimes say nothing about a code change.
//!
//! # Decision rule
//!
//! Conservative, in the spirit of criterion: a gate that cries wolf gets switched off, so
//! anything short of clear evidence is "no change" or "inconclusive", never "regression".
//!
//! ## The unit of evidence is a run, measured in rounds
//! Samples within one run are not independent draws: a shared machine drifts between runs far
//! more than samples vary within one (measured on a 2-core runner with a parallel build: run
//! medians 22 % apart, 15 % spread within a run), so a test on pooled samples calls that drift
//! a regression. When both sides have [`MIN_ROUNDS`] rounds or more (`run --rounds`, default
//! 3), the rows are decided on rounds instead:
//!
//! - a run's **level** is the mean of the logarithms of its rounds' medians;
//! - with a baseline of [`MIN_RUNS`] or more blessed runs (`baseline update` keeps the last 10,
//!   `baseline-runs`), the current run's level is a new draw from the blessed runs' levels:
//!   `change = exp(level - mean) - 1`, with the prediction interval and one-sided p-value of
//!   Student's t on `K - 1` degrees of freedom, scale `sd * sqrt(1 + 1/K)`. Drift between runs
//!   is measured, not assumed away;
//! - with a baseline of one run the drift between runs is unknown, and the row is
//!   inconclusive, saying so: pairs of single runs of identical code on a busy runner differed
//!   "significantly" in 8 % of cases even when judged on rounds;
//! - steps 3 to 6 below decide, with "what would settle it" in the row's evidence when it is
//!   inconclusive.
//!
//! Assumptions: run levels are roughly normal in the logarithm and the blessed runs come from
//! the same machine as the current one (the adapter fingerprint guarantees the hardware and
//! driver, not the load). Records without rounds (older ones, `--rounds 1`) are judged on
//! samples as below.
//!
//! ## Steps
//! For each phase measured on both sides, on the raw samples (ns) unless rounds decide:
//!
//! 1. With fewer than [`CompareConfig::min_samples`] samples on either side the row is
//!    [`Verdict::Inconclusive`].
//! 2. `change = median(current) / median(baseline) - 1`, its 95 % percentile-bootstrap
//!    confidence interval ([`CI_CONFIDENCE`], [`CompareConfig::bootstrap_resamples`]
//!    resamples, seeded from the benchmark id and phase so that a verdict is reproducible),
//!    and the one-sided Mann–Whitney U p-value in the direction of the observed change
//!    ("current is slower" when `change >= 0`, "current is faster" otherwise).
//! 3. The p-values of every row whose `|change|` exceeds its threshold, across all benchmarks
//!    and phases, go through Benjamini–Hochberg at [`CompareConfig::alpha`], so comparing
//!    hundreds of benchmarks does not multiply false alarms.
//! 4. [`Verdict::Regression`]: `change > threshold`, the test is a BH discovery, and the CI's
//!    lower bound is above 0 (it really is slower). [`Verdict::Improvement`] symmetrically:
//!    `change < -threshold`, a discovery, CI upper bound below 0.
//! 5. [`Verdict::NoChange`]: the CI lies wholly within `±threshold` (whatever the point
//!    estimate: an interval of `[-36%, +37%]` around a change of 1% proves nothing).
//! 6. Otherwise [`Verdict::Inconclusive`]: a change that is neither shown beyond the threshold
//!    nor shown within it. Collect more samples.
//!
//! The threshold of a benchmark is that of the first [`CompareConfig::per_benchmark`] glob
//! matching its id, else [`CompareConfig::threshold`].

pub mod ab;
mod error;

pub use error::CompareError;

use crate::results::{BenchmarkResult, Phase, PhaseResult, RunRecord};
use crate::stats::{self, Alternative};
use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

#[cfg(test)]
mod tests;

/// Confidence level of the bootstrap interval of the change.
pub const CI_CONFIDENCE: f64 = 0.95;

/// How to compare two records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareConfig {
    /// Relative change of the median that matters, as a fraction: `0.05` is 5 %.
    pub threshold: f64,
    /// Per-benchmark thresholds: a glob on the benchmark id (globset syntax, `*` also matches
    /// `/`) and its threshold as a fraction. The first matching glob wins.
    pub per_benchmark: Vec<(String, f64)>,
    /// False discovery rate across all benchmarks and phases (Benjamini–Hochberg), and the
    /// significance level of a single test.
    pub alpha: f64,
    /// Fewest samples per side for a verdict other than inconclusive.
    pub min_samples: usize,
    /// Compare benchmarks even when their adapter fingerprints differ.
    pub allow_other_adapter: bool,
    /// Whether an inconclusive row fails the gate like a regression.
    pub fail_on_inconclusive: bool,
    /// Slowdown (a fraction) above which a regression fails the gate. `None`: every
    /// regression fails it. With `threshold` 0.05 and this 0.10, a significant 7% slowdown is
    /// reported (an alert: annotation and comment) but the gate passes; 12% fails it.
    pub fail_threshold: Option<f64>,
    /// Phases to compare; `None` compares every phase present.
    pub phases: Option<Vec<Phase>>,
    /// Bootstrap resamples per confidence interval.
    pub bootstrap_resamples: usize,
}

impl Default for CompareConfig {
    fn default() -> Self {
        Self {
            threshold: 0.05,
            per_benchmark: Vec::new(),
            alpha: 0.01,
            min_samples: 5,
            allow_other_adapter: false,
            fail_on_inconclusive: false,
            fail_threshold: None,
            phases: None,
            bootstrap_resamples: 2000,
        }
    }
}

/// A fraction as a user writes it: a number (`0.05`) or a percentage (`5%`), on the command line
/// or in the config; the range is checked by [`CompareConfig::validate`].
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = match text.strip_suffix('%') {
        Some(number) => (number.trim(), 100.0),
        None => (text, 1.0),
    };
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value / scale),
        _ => Err(format!(
            "`{text}` is not a number; give a fraction such as 0.05 or a percentage such as 5%"
        )),
    }
}

impl CompareConfig {
    /// Checks that thresholds are finite and non-negative, `alpha` is in `(0, 1)`, there is at
    /// least one bootstrap resample, and every glob parses. [`compare`] does not fail: it
    /// ignores a glob that does not parse, so call this on user input first.
    pub fn validate(&self) -> crate::Result<()> {
        const FRACTION: &str =
            "is not a non-negative fraction; use e.g. 0.05 (or 5% on the command line) for 5%";
        const WHOLE: &str = "is 100% or more: a threshold is a fraction below 1, e.g. 0.05 (or 5% on the \
                             command line) for 5%";
        let fraction = |value: f64| value.is_finite() && value >= 0.0;
        // 5 meant as 5% would silently be 500%: a fraction of 1 or more is refused.
        let problem = |value: f64| {
            if !fraction(value) {
                Some(FRACTION)
            } else if value >= 1.0 {
                Some(WHOLE)
            } else {
                None
            }
        };
        let invalid = |setting, value: String, problem| {
            Err(CompareError::Setting {
                setting,
                value,
                problem,
            }
            .into())
        };
        if let Some(problem) = problem(self.threshold) {
            return invalid("threshold", self.threshold.to_string(), problem);
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return invalid(
                "alpha",
                self.alpha.to_string(),
                "must lie strictly between 0 and 1, e.g. 0.05",
            );
        }
        // A fail threshold at or below the threshold is accepted: every regression then fails, as
        // without one (`--fail-threshold 0` undoes a config's), and the table says so.
        if let Some(fail) = self.fail_threshold
            && let Some(problem) = problem(fail)
        {
            return invalid("fail threshold", fail.to_string(), problem);
        }
        if self.bootstrap_resamples == 0 {
            return Err(CompareError::NoResamples.into());
        }
        for (pattern, threshold) in &self.per_benchmark {
            if let Err(error) = Glob::new(pattern) {
                return Err(CompareError::Pattern {
                    pattern: pattern.clone(),
                    message: error.to_string(),
                }
                .into());
            }
            if let Some(problem) = problem(*threshold) {
                return invalid("threshold", format!("{threshold} for `{pattern}`"), problem);
            }
        }
        Ok(())
    }

    /// The threshold that applies to a benchmark id.
    pub fn threshold_for(&self, benchmark_id: &str) -> f64 {
        Thresholds::new(self).for_id(benchmark_id)
    }
}

/// The per-benchmark globs, compiled once per comparison.
struct Thresholds {
    rules: Vec<(GlobMatcher, f64)>,
    default: f64,
}

impl Thresholds {
    fn new(config: &CompareConfig) -> Self {
        let rules = config
            .per_benchmark
            .iter()
            .filter_map(|(pattern, threshold)| Some((Glob::new(pattern).ok()?.compile_matcher(), *threshold)))
            .collect();
        Self {
            rules,
            default: config.threshold,
        }
    }

    fn for_id(&self, benchmark_id: &str) -> f64 {
        self.rules
            .iter()
            .find(|(glob, _)| glob.is_match(benchmark_id))
            .map_or(self.default, |(_, threshold)| *threshold)
    }
}

/// The outcome for one benchmark phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly slower, by more than the threshold.
    Regression,
    /// Significantly faster, by more than the threshold.
    Improvement,
    /// Within the threshold.
    NoChange,
    /// Not enough evidence either way (too few or too noisy samples).
    Inconclusive,
    /// Only in the current record.
    New,
    /// Only in the baseline.
    Missing,
    /// Measured on a different adapter than the baseline.
    Incomparable,
}

impl Verdict {
    /// Every verdict, worst first (report order).
    pub const ALL: [Verdict; 7] = [
        Verdict::Regression,
        Verdict::Inconclusive,
        Verdict::Incomparable,
        Verdict::Missing,
        Verdict::New,
        Verdict::Improvement,
        Verdict::NoChange,
    ];

    /// Human label, e.g. `no change`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::New => "new",
            Verdict::Missing => "missing",
            Verdict::Incomparable => "incomparable",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The comparison of one phase of one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseComparison {
    /// Benchmark id.
    pub benchmark_id: String,
    /// Which phase.
    pub phase: Phase,
    /// Median of the baseline samples (ns), when the baseline has the phase.
    pub baseline_median_ns: Option<f64>,
    /// Median of the current samples (ns), when the current record has the phase.
    pub current_median_ns: Option<f64>,
    /// The change judged (`0.1` = 10 % slower), when both sides exist and the adapters are
    /// comparable: on rounds, the change of the run's level (see the [module docs](self));
    /// on samples, and where no test ran, `current / baseline - 1` of the medians.
    pub change: Option<f64>,
    /// Bootstrap confidence interval ([`CI_CONFIDENCE`]) of `change`, when computed.
    pub ci: Option<(f64, f64)>,
    /// One-sided Mann–Whitney p-value in the direction of `change`, before the
    /// Benjamini–Hochberg adjustment, when computed.
    pub p_value: Option<f64>,
    /// Threshold that applied (fraction).
    pub threshold: f64,
    /// The outcome.
    pub verdict: Verdict,
    /// The adapter, e.g. `NVIDIA H100 (vulkan)`; both when they differ.
    pub adapter_label: String,
    /// What the verdict rests on, when rounds decided it: how many rounds and blessed runs,
    /// how much runs vary, and for an inconclusive row what would settle it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// The result of comparing two records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// One row per benchmark and phase: current benchmarks in record order, then missing
    /// ones; phases in [`Phase::ALL`] order.
    pub rows: Vec<PhaseComparison>,
    /// The configuration the verdicts were reached with.
    pub config: CompareConfig,
    /// Layers whose kernel variant differs between the two records, in record order: a
    /// change of time that comes with one is explained by it (a new tune cache, a changed
    /// heuristic), not by the code of the kernel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_changes: Vec<KernelChange>,
    /// The current record comes from an interrupted run ([`RunRecord::complete`] is false):
    /// what it lacks was not measured, so the gate fails whatever the rows say.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub current_incomplete: bool,
}

/// A layer and phase of one benchmark whose kernel variant changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelChange {
    /// Benchmark id.
    pub benchmark_id: String,
    /// `"<layer> <phase>"`, as in [`BenchmarkResult::kernels`].
    pub layer: String,
    /// Variant in the baseline (`None`: the baseline did not record one).
    pub baseline: Option<String>,
    /// Variant now (`None`: not recorded now).
    pub current: Option<String>,
}

/// The layers whose recorded kernel variant differs between `old` and `new` (nothing when
/// either record predates the recording of variants).
fn kernel_changes(old: &BenchmarkResult, new: &BenchmarkResult) -> Vec<KernelChange> {
    if old.kernels.is_empty() || new.kernels.is_empty() {
        return Vec::new();
    }
    let layers: std::collections::BTreeSet<&String> = old.kernels.keys().chain(new.kernels.keys()).collect();
    layers
        .into_iter()
        .filter(|layer| old.kernels.get(*layer) != new.kernels.get(*layer))
        .map(|layer| KernelChange {
            benchmark_id: new.id.clone(),
            layer: layer.clone(),
            baseline: old.kernels.get(layer).cloned(),
            current: new.kernels.get(layer).cloned(),
        })
        .collect()
}

impl Comparison {
    /// Rows with this verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows.iter().filter(|row| row.verdict == verdict).count()
    }

    /// Whether any row is a regression.
    pub fn has_regression(&self) -> bool {
        self.count(Verdict::Regression) > 0
    }

    /// Whether `row` fails the gate: a regression whose change exceeds
    /// [`CompareConfig::fail_threshold`] (every regression when there is none). A regression
    /// under the fail threshold is an alert only.
    pub fn fails_gate(&self, row: &PhaseComparison) -> bool {
        row.verdict == Verdict::Regression
            && match (self.config.fail_threshold, row.change) {
                (Some(fail), Some(change)) => change > fail,
                _ => true,
            }
    }

    /// Regressions that fail the gate (see [`Comparison::fails_gate`]).
    pub fn failing_regressions(&self) -> usize {
        self.rows.iter().filter(|row| self.fails_gate(row)).count()
    }

    /// Whether the gate fails: a regression beyond the fail threshold, an interrupted current
    /// run, or an inconclusive row when [`CompareConfig::fail_on_inconclusive`] is set.
    pub fn gate_fails(&self) -> bool {
        self.failing_regressions() > 0
            || self.current_incomplete
            || (self.config.fail_on_inconclusive && self.count(Verdict::Inconclusive) > 0)
    }
}

/// Compares `current` against `baseline` with the rule in the module documentation.
pub fn compare(baseline: &RunRecord, current: &RunRecord, config: &CompareConfig) -> Comparison {
    let thresholds = Thresholds::new(config);
    let mut baseline_by_id: HashMap<&str, &BenchmarkResult> = HashMap::new();
    for benchmark in &baseline.benchmarks {
        baseline_by_id.entry(benchmark.id.as_str()).or_insert(benchmark);
    }
    let mut rows = Vec::new();
    let mut tests = Vec::new();
    let mut changes = Vec::new();
    let mut seen = HashSet::new();
    for benchmark in &current.benchmarks {
        if !seen.insert(benchmark.id.as_str()) {
            continue;
        }
        let threshold = thresholds.for_id(&benchmark.id);
        match baseline_by_id.get(benchmark.id.as_str()) {
            None => rows.extend(one_sided_rows(benchmark, Verdict::New, threshold, config)),
            Some(old) => {
                changes.extend(kernel_changes(old, benchmark));
                compare_benchmark(old, benchmark, threshold, config, &mut rows, &mut tests);
            }
        }
    }
    for benchmark in &baseline.benchmarks {
        if seen.insert(benchmark.id.as_str()) {
            let threshold = thresholds.for_id(&benchmark.id);
            rows.extend(one_sided_rows(benchmark, Verdict::Missing, threshold, config));
        }
    }
    decide_all(&mut rows, &tests, config.alpha);
    Comparison {
        rows,
        config: config.clone(),
        kernel_changes: changes,
        current_incomplete: !current.complete,
    }
}

/// A row that has a change, a CI and a p-value, waiting for the multiple-testing step.
struct Tested {
    row: usize,
    change: f64,
    ci: (f64, f64),
    p_value: f64,
    /// What the test rests on (round-based tests only).
    evidence: Option<String>,
    /// What would settle an inconclusive verdict (round-based tests only).
    settle: Option<String>,
}

fn selected_phases(config: &CompareConfig) -> impl Iterator<Item = Phase> + '_ {
    Phase::ALL
        .into_iter()
        .filter(|phase| config.phases.as_ref().is_none_or(|wanted| wanted.contains(phase)))
}

fn samples(result: &PhaseResult) -> Vec<f64> {
    result.samples_ns.iter().map(|&ns| ns as f64).collect()
}

/// Median of the raw samples, or the recorded summary when there are none.
fn median_ns(result: &PhaseResult) -> f64 {
    stats::median(&samples(result)).unwrap_or(result.summary.median_ns)
}

/// Rows of a benchmark present on one side only ([`Verdict::New`] or [`Verdict::Missing`]).
fn one_sided_rows(
    benchmark: &BenchmarkResult,
    verdict: Verdict,
    threshold: f64,
    config: &CompareConfig,
) -> Vec<PhaseComparison> {
    selected_phases(config)
        .filter_map(|phase| {
            let result = benchmark.phase(phase)?;
            Some(one_sided_row(
                benchmark,
                result,
                verdict,
                threshold,
                benchmark.adapter.label(),
            ))
        })
        .collect()
}

/// A row for a phase measured on one side only.
fn one_sided_row(
    benchmark: &BenchmarkResult,
    result: &PhaseResult,
    verdict: Verdict,
    threshold: f64,
    adapter_label: String,
) -> PhaseComparison {
    let median = Some(median_ns(result));
    let (baseline_median_ns, current_median_ns) = match verdict {
        Verdict::Missing => (median, None),
        _ => (None, median),
    };
    PhaseComparison {
        benchmark_id: benchmark.id.clone(),
        phase: result.phase,
        baseline_median_ns,
        current_median_ns,
        change: None,
        ci: None,
        p_value: None,
        threshold,
        verdict,
        adapter_label,
        evidence: None,
    }
}

fn compare_benchmark(
    baseline: &BenchmarkResult,
    current: &BenchmarkResult,
    threshold: f64,
    config: &CompareConfig,
    rows: &mut Vec<PhaseComparison>,
    tests: &mut Vec<Tested>,
) {
    let same_adapter = baseline.adapter == current.adapter;
    let adapter_label = adapter_label(baseline, current);
    for phase in selected_phases(config) {
        let (old, new) = match (baseline.phase(phase), current.phase(phase)) {
            (Some(old), Some(new)) => (old, new),
            (None, Some(new)) => {
                rows.push(one_sided_row(
                    current,
                    new,
                    Verdict::New,
                    threshold,
                    adapter_label.clone(),
                ));
                continue;
            }
            (Some(old), None) => {
                rows.push(one_sided_row(
                    baseline,
                    old,
                    Verdict::Missing,
                    threshold,
                    adapter_label.clone(),
                ));
                continue;
            }
            (None, None) => continue,
        };
        let (baseline_median, current_median) = (median_ns(old), median_ns(new));
        let mut row = PhaseComparison {
            benchmark_id: current.id.clone(),
            phase,
            baseline_median_ns: Some(baseline_median),
            current_median_ns: Some(current_median),
            change: None,
            ci: None,
            p_value: None,
            threshold,
            verdict: Verdict::Inconclusive,
            adapter_label: adapter_label.clone(),
            evidence: None,
        };
        if !same_adapter && !config.allow_other_adapter {
            row.verdict = Verdict::Incomparable;
            rows.push(row);
            continue;
        }
        if baseline_median > 0.0 {
            row.change = Some(current_median / baseline_median - 1.0);
        }
        let rounds = baseline.round_sizes().len() >= MIN_ROUNDS && current.round_sizes().len() >= MIN_ROUNDS;
        let enough = old.samples_ns.len() >= config.min_samples && new.samples_ns.len() >= config.min_samples;
        let tested = if rounds {
            match level_test(baseline, current, phase, rows.len(), row.threshold) {
                Ok(test) => Some(test),
                Err(why) => {
                    row.evidence = Some(why);
                    None
                }
            }
        } else {
            enough
                .then(|| test_phase(old, new, &current.id, rows.len(), config))
                .flatten()
        };
        if let Some(test) = tested {
            // The change shown is the one judged: on rounds, the level's change, which can
            // differ from the ratio of pooled medians (and lie outside its interval).
            row.change = Some(test.change);
            row.evidence.clone_from(&test.evidence);
            row.ci = Some(test.ci);
            row.p_value = Some(test.p_value);
            tests.push(test);
        }
        rows.push(row);
    }
}

fn adapter_label(baseline: &BenchmarkResult, current: &BenchmarkResult) -> String {
    let (old, new) = (&baseline.adapter, &current.adapter);
    if old == new {
        new.label()
    } else if old.label() != new.label() {
        format!("{} (baseline: {})", new.label(), old.label())
    } else {
        format!(
            "{} (driver {} {}, runtime {}; baseline: driver {} {}, runtime {})",
            new.label(),
            new.driver,
            new.driver_info,
            new.runtime_version,
            old.driver,
            old.driver_info,
            old.runtime_version
        )
    }
}

/// Change, CI and one-sided p-value of one phase, for `row`; `None` when the ratio is
/// undefined (a zero baseline median).
fn test_phase(
    old: &PhaseResult,
    new: &PhaseResult,
    benchmark_id: &str,
    row: usize,
    config: &CompareConfig,
) -> Option<Tested> {
    let (baseline, current) = (samples(old), samples(new));
    let change = stats::median(&current)? / stats::median(&baseline)? - 1.0;
    if !change.is_finite() {
        return None;
    }
    let seed = seed_for(benchmark_id, old.phase);
    let (low, high) = stats::bootstrap_ratio_ci(
        &baseline,
        &current,
        CI_CONFIDENCE,
        config.bootstrap_resamples,
        seed,
    )?;
    let alternative = if change >= 0.0 {
        Alternative::Greater
    } else {
        Alternative::Less
    };
    let p_value = stats::mann_whitney_u(&baseline, &current, alternative)?;
    Some(Tested {
        row,
        change,
        ci: (low - 1.0, high - 1.0),
        p_value,
        evidence: None,
        settle: None,
    })
}

/// Rounds each side needs before rounds, not samples, are the unit of evidence.
pub const MIN_ROUNDS: usize = 2;

/// Blessed runs a baseline needs before the spread between runs is known and a verdict other
/// than inconclusive can be given on rounds.
pub const MIN_RUNS: usize = 2;

/// The round-based test of one phase (see the module docs): the level of a run is the mean of
/// the logarithms of its round medians, and the current run's level is compared with the
/// blessed runs' levels as a new draw from them (a prediction interval, Student's t with
/// `K - 1` degrees of freedom). `Err` says why it cannot decide: a side lacks two positive
/// round medians, or the baseline holds fewer than [`MIN_RUNS`] runs, so the drift between
/// runs is unknown and no verdict would be honest.
fn level_test(
    baseline: &BenchmarkResult,
    current: &BenchmarkResult,
    phase: Phase,
    row: usize,
    threshold: f64,
) -> Result<Tested, String> {
    let runs = |benchmark: &BenchmarkResult| -> Vec<Vec<f64>> {
        let medians = benchmark.round_medians(phase);
        let mut start = 0usize;
        let mut runs = Vec::new();
        for size in benchmark.run_sizes() {
            let end = start.saturating_add(size).min(medians.len());
            let levels: Vec<f64> = medians[start..end]
                .iter()
                .filter(|m| **m > 0.0)
                .map(|m| m.ln())
                .collect();
            if !levels.is_empty() {
                runs.push(levels);
            }
            start = end;
        }
        runs
    };
    let blessed = runs(baseline);
    let now: Vec<f64> = runs(current).concat();
    if now.len() < MIN_ROUNDS || blessed.concat().len() < MIN_ROUNDS {
        return Err(format!(
            "too few rounds to judge ({} now, {} blessed); run with `--rounds 3` or more",
            now.len(),
            blessed.concat().len()
        ));
    }
    if blessed.len() < MIN_RUNS {
        return Err(format!(
            "{} rounds against one blessed run: how much runs drift apart is not known until the \
             baseline holds {MIN_RUNS} runs (on a busy 2-core runner they differ by 12%), so no \
             verdict would be honest; bless another run with `cargo convbench baseline update`",
            now.len()
        ));
    }
    let level = mean(&now);
    let levels: Vec<f64> = blessed.iter().map(|run| mean(run)).collect();
    let count = levels.len() as f64;
    let run_spread = variance(&levels).sqrt();
    let (reference, spread, degrees) = (
        mean(&levels),
        run_spread * (1.0 + 1.0 / count).sqrt(),
        count - 1.0,
    );
    let evidence = format!(
        "{} rounds against {} blessed runs, whose levels vary by {:.1}%",
        now.len(),
        levels.len(),
        100.0 * run_spread
    );
    let difference = level - reference;
    let change = difference.exp() - 1.0;
    let t = statrs::distribution::StudentsT::new(0.0, 1.0, degrees.max(1.0))
        .map_err(|e| format!("no t distribution with {degrees} degrees of freedom: {e}"))?;
    use statrs::distribution::ContinuousCDF;
    let quantile = t.inverse_cdf(0.5 + CI_CONFIDENCE / 2.0);
    let (ci, p_value) = if spread > 0.0 {
        let ci = (
            (difference - quantile * spread).exp() - 1.0,
            (difference + quantile * spread).exp() - 1.0,
        );
        let score = difference / spread;
        let p = if difference >= 0.0 {
            1.0 - t.cdf(score)
        } else {
            t.cdf(score)
        };
        (ci, p)
    } else {
        ((change, change), if difference == 0.0 { 1.0 } else { 0.0 })
    };
    // The prediction interval narrows with more blessed runs only down to the runs' own spread
    // (Student's t tends to the normal): a change closer to the threshold than that cannot be
    // settled by one run, however many runs are blessed.
    let gap = (change.abs() - threshold).abs().max(0.005);
    let normal = statrs::distribution::Normal::new(0.0, 1.0)
        .map_err(|e| format!("no normal distribution: {e}"))?
        .inverse_cdf(0.5 + CI_CONFIDENCE / 2.0);
    let floor = (normal * run_spread).exp_m1();
    let settle = if floor >= gap {
        format!(
            "however many runs are blessed, that spread keeps a run's interval at least \
             ±{:.1}% wide, more than the {:.1}% between this change and the threshold, so one \
             run cannot settle it against the baseline",
            100.0 * floor,
            100.0 * gap
        )
    } else {
        "more blessed runs in the baseline would narrow the interval".to_string()
    };
    Ok(Tested {
        row,
        change,
        ci,
        p_value,
        evidence: Some(evidence),
        settle: Some(settle),
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// Sample variance (0 for fewer than two values).
fn variance(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let m = mean(values);
    values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64
}

/// A bootstrap seed that depends only on the benchmark id and phase (FNV-1a, stable across
/// Rust releases unlike `DefaultHasher`), so a verdict is reproducible.
fn seed_for(benchmark_id: &str, phase: Phase) -> u64 {
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    benchmark_id
        .bytes()
        .chain(std::iter::once(b'#'))
        .chain(phase.as_str().bytes())
        .fold(FNV_OFFSET, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME)
        })
}

/// Applies Benjamini–Hochberg across the rows beyond their threshold, then the verdict rule.
fn decide_all(rows: &mut [PhaseComparison], tests: &[Tested], alpha: f64) {
    let candidates: Vec<&Tested> = tests
        .iter()
        .filter(|test| test.change.abs() > rows[test.row].threshold)
        .collect();
    let p_values: Vec<f64> = candidates.iter().map(|test| test.p_value).collect();
    let discoveries: HashSet<usize> = stats::benjamini_hochberg(&p_values, alpha)
        .into_iter()
        .zip(&candidates)
        .filter_map(|(discovered, test)| discovered.then_some(test.row))
        .collect();
    for test in tests {
        let row = &mut rows[test.row];
        row.verdict = decide(test, row.threshold, discoveries.contains(&test.row));
        if let (Verdict::Inconclusive, Some(evidence), Some(settle)) =
            (row.verdict, &row.evidence, &test.settle)
        {
            row.evidence = Some(format!("{evidence}; {settle}"));
        }
    }
}

/// The verdict rule of the module documentation for one tested row.
fn decide(test: &Tested, threshold: f64, discovery: bool) -> Verdict {
    let (low, high) = test.ci;
    if test.change > threshold && discovery && low > 0.0 {
        Verdict::Regression
    } else if test.change < -threshold && discovery && high < 0.0 {
        Verdict::Improvement
    } else if low >= -threshold && high <= threshold {
        // The whole interval lies within what the user said matters: no change, significant
        // or not. A point estimate within the threshold with a wider interval proves nothing.
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}
