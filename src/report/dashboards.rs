//! A record in the formats of the benchmark dashboards teams already run, so that convbench's
//! numbers can be charted there: Bencher's Metric Format ([`bmf`]) and github-action-benchmark's
//! `customSmallerIsBetter` JSON ([`github_action_benchmark`]).
//!
//! Both name one benchmark per measured phase, `<benchmark id>/<phase>` (e.g.
//! `alexnet/train/b128/f32/wgpu/total`): the names stay the same from run to run, which is what
//! both dashboards key their history on. Values are medians in nanoseconds, smaller is better.
//! A phase whose median is not a finite number (it cannot be written as JSON) is left out.

use crate::results::{BenchmarkResult, Phase, PhaseResult, RunRecord};
use serde_json::{Map, Value, json};

/// The dashboard formats a record can be exported in (`report --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DashboardFormat {
    /// Bencher Metric Format ([`bmf`]).
    Bmf,
    /// github-action-benchmark's `customSmallerIsBetter` ([`github_action_benchmark`]).
    GithubActionBenchmark,
}

impl DashboardFormat {
    /// Every dashboard format, in the order help texts list them.
    pub const ALL: [DashboardFormat; 2] = [DashboardFormat::Bmf, DashboardFormat::GithubActionBenchmark];

    /// The name `--format` takes: `bmf` or `github-action-benchmark`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DashboardFormat::Bmf => "bmf",
            DashboardFormat::GithubActionBenchmark => "github-action-benchmark",
        }
    }
}

impl std::fmt::Display for DashboardFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for DashboardFormat {
    type Err = super::ReportError;

    /// Parses `bmf` or `github-action-benchmark`, ignoring ASCII case.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.to_ascii_lowercase().as_str() {
            "bmf" => Ok(DashboardFormat::Bmf),
            "github-action-benchmark" => Ok(DashboardFormat::GithubActionBenchmark),
            _ => Err(super::ReportError::UnknownDashboardFormat {
                name: name.to_string(),
            }),
        }
    }
}

/// Renders a record in a dashboard's `format`.
pub fn render_dashboard(record: &RunRecord, format: DashboardFormat) -> String {
    match format {
        DashboardFormat::Bmf => bmf(record),
        DashboardFormat::GithubActionBenchmark => github_action_benchmark(record),
    }
}

/// The measure [`bmf`] reports: Bencher's built-in wall-clock measure, in nanoseconds.
pub const BMF_MEASURE: &str = "latency";

/// The record in Bencher Metric Format, for `bencher run --adapter json`: an object with one
/// key per benchmark and phase, each holding the [`BMF_MEASURE`] measure
/// `{"value": median, "lower_value": min, "upper_value": max}` of the phase's samples, in ns.
/// Keys are sorted.
pub fn bmf(record: &RunRecord) -> String {
    let mut benchmarks = Map::new();
    for (name, _, result) in measured_phases(record) {
        let summary = &result.summary;
        let mut measure = Map::new();
        measure.insert("value".to_string(), json!(summary.median_ns));
        if summary.min_ns.is_finite() && summary.max_ns.is_finite() {
            measure.insert("lower_value".to_string(), json!(summary.min_ns));
            measure.insert("upper_value".to_string(), json!(summary.max_ns));
        }
        let mut measures = Map::new();
        measures.insert(BMF_MEASURE.to_string(), Value::Object(measure));
        benchmarks.insert(name, Value::Object(measures));
    }
    pretty(&Value::Object(benchmarks))
}

/// The record as github-action-benchmark's `customSmallerIsBetter` input (`tool:
/// customSmallerIsBetter`): an array, in record order, of `{"name", "unit": "ns", "value":
/// median, "range": "± stddev", "extra"}` per benchmark and phase, where `extra` names the
/// adapter, the timing method and the sample count (shown in the chart's tooltip).
pub fn github_action_benchmark(record: &RunRecord) -> String {
    let entries: Vec<Value> = measured_phases(record)
        .map(|(name, benchmark, result)| {
            let summary = &result.summary;
            let mut entry = json!({
                "name": name,
                "unit": "ns",
                "value": summary.median_ns,
                "extra": format!(
                    "adapter: {}\ntiming: {}\nsamples: {}",
                    benchmark.adapter.label(),
                    benchmark.timing_method.as_str(),
                    result.samples_ns.len()
                ),
            });
            if summary.stddev_ns.is_finite() {
                entry["range"] = Value::from(format!("± {:.0}", summary.stddev_ns));
            }
            entry
        })
        .collect();
    pretty(&Value::Array(entries))
}

/// Every measured phase of the record with a finite median, as `(name, benchmark, phase)`, in
/// record order and [`Phase::ALL`] order within a benchmark.
fn measured_phases(record: &RunRecord) -> impl Iterator<Item = (String, &BenchmarkResult, &PhaseResult)> {
    record.benchmarks.iter().flat_map(|benchmark| {
        Phase::ALL.into_iter().filter_map(move |phase| {
            let result = benchmark.phase(phase)?;
            result
                .summary
                .median_ns
                .is_finite()
                .then(|| (format!("{}/{}", benchmark.id, phase.as_str()), benchmark, result))
        })
    })
}

/// Pretty JSON ending with one newline, as every text of this module's renderers does.
fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
