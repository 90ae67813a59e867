//! The blessed history of each benchmark: one [`HistoryPoint`] per commit that changed its
//! baseline, grouped into [`BenchmarkHistory`] series with the steps
//! ([`crate::stats::change_points`]) found in them.
//!
//! A point's level is the median of the run that commit blessed; its band is the spread
//! between the runs the baseline kept at that commit ([`HistoryPoint::spread`]), the same
//! drift between runs that `compare` measures.

use crate::model::Precision;
use crate::results::{Phase, Stage};
use crate::stats::{self, ChangePointConfig};
use serde::Serialize;

/// One blessed value in the history of a baseline file: a benchmark and phase at a commit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryPoint {
    /// Commit that changed the baseline file (full hex id).
    pub commit: String,
    /// Commit time, seconds since the Unix epoch.
    pub time_unix_s: i64,
    /// First line of the commit message.
    pub summary: String,
    /// Benchmark id.
    pub benchmark_id: String,
    /// Model or suite entry of the benchmark.
    pub model: String,
    /// Train or eval.
    pub stage: Stage,
    /// Images per iteration.
    pub batch: usize,
    /// Storage precision.
    pub precision: Precision,
    /// `wgpu`, `cpu` or `cuda`.
    pub backend: String,
    /// The adapter's human label, e.g. `NVIDIA H100 (vulkan)`.
    pub adapter: String,
    /// The phase these numbers are of.
    pub phase: Phase,
    /// Median of the samples of the run this commit blessed, the newest of the baseline (ns).
    pub median_ns: f64,
    /// Median of each round of the run this commit blessed (ns): rounds are re-warmed and
    /// interleaved across a sweep, so their spread is the drift between runs of that moment.
    pub round_medians_ns: Vec<f64>,
    /// Median of every run the baseline keeps at this commit, oldest first; the last is the
    /// run this commit blessed (ns).
    pub run_medians_ns: Vec<f64>,
}

/// The spread of a few medians (ns): a point's band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Medians it is computed from.
    pub count: usize,
    /// Smallest median (ns).
    pub min_ns: f64,
    /// First quartile of the medians (ns; type 7 quantile).
    pub q1_ns: f64,
    /// Third quartile of the medians (ns).
    pub q3_ns: f64,
    /// Largest median (ns).
    pub max_ns: f64,
}

impl Spread {
    /// The spread of `medians_ns`; of `fallback_ns` alone when there are none.
    pub fn of(medians_ns: &[f64], fallback_ns: f64) -> Self {
        let mut sorted = medians_ns.to_vec();
        if sorted.is_empty() {
            sorted.push(fallback_ns);
        }
        sorted.sort_by(f64::total_cmp);
        let at = |p| stats::quantile_sorted(&sorted, p).unwrap_or(fallback_ns);
        Spread {
            count: medians_ns.len(),
            min_ns: at(0.0),
            q1_ns: at(0.25),
            q3_ns: at(0.75),
            max_ns: at(1.0),
        }
    }
}

impl HistoryPoint {
    /// The spread between the rounds of the run this commit blessed: the band of the point,
    /// how far apart runs of the same code landed at that moment.
    pub fn round_spread(&self) -> Spread {
        Spread::of(&self.round_medians_ns, self.median_ns)
    }

    /// The spread between the blessed runs the baseline keeps at this commit: the drift
    /// `compare` allows for. After a step it spans both levels until the older runs roll out.
    pub fn run_spread(&self) -> Spread {
        Spread::of(&self.run_medians_ns, self.median_ns)
    }
}

/// What `history` asks of the blessed baselines (see [`super::GitBaselineStore::history_series`]).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryQuery {
    /// One adapter folder, or every one under the baseline directory.
    pub slug: Option<String>,
    /// The baseline set.
    pub set: String,
    /// One benchmark id, or every one.
    pub benchmark: Option<String>,
    /// The phases shown.
    pub phases: Vec<Phase>,
    /// What counts as a step.
    pub change_points: ChangePointConfig,
}

/// The change-point settings of `history --alpha ALPHA --min-step PERCENT`: invalid input unless
/// `alpha` lies strictly between 0 and 1 and `min_step_percent` is finite and not negative.
pub fn change_point_config(alpha: f64, min_step_percent: f64) -> crate::Result<ChangePointConfig> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(super::BaselineError::BadChangePoints {
            flag: "--alpha",
            value: alpha,
            rule: "must lie strictly between 0 and 1, e.g. 0.05",
        }
        .into());
    }
    if !(min_step_percent.is_finite() && min_step_percent >= 0.0) {
        return Err(super::BaselineError::BadChangePoints {
            flag: "--min-step",
            value: min_step_percent,
            rule: "must be a finite percentage of 0 or more, e.g. 5",
        }
        .into());
    }
    Ok(ChangePointConfig {
        alpha,
        min_relative_step: min_step_percent / 100.0,
        ..ChangePointConfig::default()
    })
}

/// A step in a benchmark's history: the level of its blessed medians shifted at a commit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Index of the first point at the new level in [`BenchmarkHistory::points`].
    pub index: usize,
    /// The commit that introduced the step: the first blessed at the new level (full hex id).
    pub commit: String,
    /// First line of that commit's message.
    pub summary: String,
    /// Median of the blessed medians from the previous step (or the start) up to this one (ns).
    pub before_ns: f64,
    /// Median of the blessed medians from this step up to the next one (or the end) (ns).
    pub after_ns: f64,
    /// `after / before - 1`: positive when the benchmark became slower.
    pub relative_step: f64,
    /// Permutation p-value of the split when it was found.
    pub p_value: f64,
}

/// The history of one benchmark and phase on one adapter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchmarkHistory {
    /// Adapter folder (slug) of the baseline.
    pub slug: String,
    /// Benchmark id.
    pub benchmark_id: String,
    /// The phase.
    pub phase: Phase,
    /// Blessed values, oldest first.
    pub points: Vec<HistoryPoint>,
    /// Steps in [`HistoryPoint::median_ns`] over the points, oldest first.
    pub steps: Vec<Step>,
}

impl BenchmarkHistory {
    /// Groups `points` of adapter `slug` (in history order) into one series per benchmark and
    /// phase, in order of first appearance, and finds the steps of each with `config`.
    pub fn group(slug: &str, points: Vec<HistoryPoint>, config: &ChangePointConfig) -> Vec<Self> {
        let mut series: Vec<Self> = Vec::new();
        for point in points {
            match series
                .iter_mut()
                .find(|s| s.benchmark_id == point.benchmark_id && s.phase == point.phase)
            {
                Some(found) => found.points.push(point),
                None => series.push(Self {
                    slug: slug.to_string(),
                    benchmark_id: point.benchmark_id.clone(),
                    phase: point.phase,
                    points: vec![point],
                    steps: Vec::new(),
                }),
            }
        }
        for history in &mut series {
            history.steps = history.find_steps(config);
        }
        series
    }

    /// The steps of this series' medians (see [`crate::stats::change_points`]).
    fn find_steps(&self, config: &ChangePointConfig) -> Vec<Step> {
        let medians: Vec<f64> = self.points.iter().map(|p| p.median_ns).collect();
        stats::change_points(&medians, config)
            .into_iter()
            .map(|found| {
                let point = &self.points[found.index];
                Step {
                    index: found.index,
                    commit: point.commit.clone(),
                    summary: point.summary.clone(),
                    before_ns: found.before,
                    after_ns: found.after,
                    relative_step: found.relative_step(),
                    p_value: found.p_value,
                }
            })
            .collect()
    }
}
