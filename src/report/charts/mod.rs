//! The seeds' comparison charts (`cargo convbench plot --kind KIND`), as SVG: throughput
//! against batch size, the phases of a training step, backends side by side, f16 against f32,
//! and the per-layer breakdown with each layer's place under the roofline.
//!
//! [`chart_svg`] takes one or more records (a peer's record, such as a `burn-wgpu` run, plots
//! beside convbench's own) and a [`ChartKind`]. Each kind reads only what its record holds:
//! a kind whose data is absent is a [`ReportError`] that names what is missing and
//! the `run` command that would measure it, never an empty chart.
//!
//! Every chart opens with a title saying what it shows, then a line saying where (the
//! adapters) and how (the median of how many timed iterations, by which timing method) it was
//! measured. Every bar, line and point carries a hover title with its numbers and a `class`
//! (`bar`, `segment`, `series`, `point`) by which tests count them.

mod draw;
mod layers;
mod phases;
mod side_by_side;
mod throughput;

use super::ReportError;
use crate::Result;
use crate::results::{BenchmarkResult, Phase, RunRecord, Stage, TimingMethod};
use std::collections::{BTreeSet, HashSet};

/// What a chart shows (`--kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChartKind {
    /// Images per second against batch size, a line per model (log-scale batch axis); a bar
    /// per model when each was run at one batch size.
    Throughput,
    /// A stacked bar per training benchmark: forward, loss, grad-input, grad-params, update.
    Phases,
    /// The same benchmarks on several backends (`wgpu`, `cuda`, `cpu`, a peer's) side by
    /// side, with the ratio of each to the reference backend.
    Backends,
    /// The same benchmarks in f32 and f16 side by side, with the ratio of f16 to f32.
    Precision,
    /// The layers of one benchmark as horizontal bars stacked by phase, each with its share
    /// of the adapter's roof (see [`crate::roofline`]).
    Layers,
}

impl ChartKind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [ChartKind; 5] = [
        ChartKind::Throughput,
        ChartKind::Phases,
        ChartKind::Backends,
        ChartKind::Precision,
        ChartKind::Layers,
    ];

    /// The name `--kind` takes.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChartKind::Throughput => "throughput",
            ChartKind::Phases => "phases",
            ChartKind::Backends => "backends",
            ChartKind::Precision => "precision",
            ChartKind::Layers => "layers",
        }
    }
}

impl std::fmt::Display for ChartKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ChartKind {
    type Err = ReportError;

    /// Parses a kind's name, ignoring ASCII case.
    fn from_str(name: &str) -> Result<Self, ReportError> {
        ChartKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| ReportError::UnknownChartKind {
                name: name.to_string(),
            })
    }
}

/// What to chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartSpec {
    /// The kind of chart.
    pub kind: ChartKind,
    /// For [`ChartKind::Layers`], the id of the benchmark whose layers to show (default: the
    /// first with a per-layer breakdown).
    pub benchmark: Option<String>,
}

/// The chart of `spec` of every benchmark of `records`, as a standalone SVG document.
///
/// # Errors
///
/// A [`ReportError`] when a benchmark id is in two records, or when the records lack
/// what the kind shows (several batch sizes, a training run, two backends, both precisions,
/// a per-layer breakdown), naming it and the `run` flags that would measure it.
pub fn chart_svg(records: &[RunRecord], spec: &ChartSpec) -> Result<String> {
    if spec.benchmark.is_some() && spec.kind != ChartKind::Layers {
        return Err(ReportError::BenchmarkWithoutLayers {
            kind: spec.kind.as_str(),
        }
        .into());
    }
    let benchmarks = super::benchmarks_of(records)?;
    let timed: Vec<&BenchmarkResult> = benchmarks
        .into_iter()
        .filter(|benchmark| total_ns(benchmark).is_some())
        .collect();
    if timed.is_empty() {
        return Err(ReportError::NothingToPlot.into());
    }
    match spec.kind {
        ChartKind::Throughput => throughput::chart(&timed),
        ChartKind::Phases => phases::chart(&timed),
        ChartKind::Backends => side_by_side::chart(&timed, side_by_side::Axis::Backend),
        ChartKind::Precision => side_by_side::chart(&timed, side_by_side::Axis::Precision),
        ChartKind::Layers => layers::chart(&timed, spec.benchmark.as_deref()),
    }
}

/// The median total time of a benchmark (ns), when it is a positive number.
fn total_ns(benchmark: &BenchmarkResult) -> Option<f64> {
    benchmark
        .phase(Phase::Total)
        .map(|total| total.summary.median_ns)
        .filter(|ns| ns.is_finite() && *ns > 0.0)
}

/// What the benchmarks timed, for a title: ` of a training step` or ` of a forward pass` when
/// they all share a stage, else nothing (their labels then say it).
fn stage_words(benchmarks: &[&BenchmarkResult]) -> &'static str {
    let stages: HashSet<Stage> = benchmarks.iter().map(|benchmark| benchmark.stage).collect();
    match stages.into_iter().collect::<Vec<_>>().as_slice() {
        [Stage::Train] => " of a training step",
        [Stage::Eval] => " of a forward pass",
        _ => "",
    }
}

/// The two lines over a chart: what it shows, then where and how it was measured.
#[derive(Debug, Clone, PartialEq)]
struct Caption {
    title: String,
    measured: String,
}

impl Caption {
    /// `title`, and a line naming the adapters, timing methods and sample counts of
    /// `benchmarks`: `median of 20 timed iterations each; llvmpipe (vulkan), GPU timestamps`.
    fn new(title: impl Into<String>, benchmarks: &[&BenchmarkResult]) -> Self {
        let mut samples = BTreeSet::new();
        let mut adapters: Vec<String> = Vec::new();
        for benchmark in benchmarks {
            samples.insert(
                benchmark
                    .phase(Phase::Total)
                    .map_or(0, |total| total.samples_ns.len()),
            );
            let adapter = format!(
                "{}, {}",
                benchmark.adapter.label(),
                timing_label(benchmark.timing_method)
            );
            if !adapters.contains(&adapter) {
                adapters.push(adapter);
            }
        }
        let count = match (samples.first(), samples.last()) {
            (Some(low), Some(high)) if low != high => format!("{low} to {high}"),
            (Some(count), _) => count.to_string(),
            _ => "no".to_string(),
        };
        Self {
            title: title.into(),
            measured: format!("median of {count} timed iterations each; {}", adapters.join("; ")),
        }
    }
}

/// How a timing method reads in a caption.
fn timing_label(method: TimingMethod) -> &'static str {
    match method {
        TimingMethod::GpuTimestamps => "GPU timestamps",
        TimingMethod::DeviceEvents => "device events",
        TimingMethod::WallClock => "synchronized wall clock",
    }
}

/// Short names of benchmarks, from the coordinates that tell them apart: the model always,
/// then the stage, batch, precision, backend and adapter where `benchmarks` hold several
/// values of them, except those in `hidden` (the coordinates a chart shows another way).
struct Labeller {
    shown: Vec<Coordinate>,
}

/// A coordinate of a benchmark besides its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coordinate {
    Stage,
    Batch,
    Precision,
    Backend,
    Adapter,
}

impl Coordinate {
    const ALL: [Coordinate; 5] = [
        Coordinate::Stage,
        Coordinate::Batch,
        Coordinate::Precision,
        Coordinate::Backend,
        Coordinate::Adapter,
    ];

    fn of(self, benchmark: &BenchmarkResult) -> String {
        match self {
            Coordinate::Stage => benchmark.stage.as_str().to_string(),
            Coordinate::Batch => format!("b{}", benchmark.batch),
            Coordinate::Precision => benchmark.precision.as_str().to_string(),
            Coordinate::Backend => benchmark.backend.clone(),
            Coordinate::Adapter => benchmark.adapter.label(),
        }
    }
}

impl Labeller {
    fn new(benchmarks: &[&BenchmarkResult], hidden: &[Coordinate]) -> Self {
        let distinct = |coordinates: &[Coordinate]| {
            benchmarks
                .iter()
                .map(|benchmark| coordinates.iter().map(|c| c.of(benchmark)).collect::<Vec<_>>())
                .collect::<HashSet<_>>()
                .len()
        };
        // The adapter says nothing more where each backend ran on one adapter (wgpu on the
        // GPU, cpu on the CPU); the caption names them.
        let adapter_follows_backend =
            distinct(&[Coordinate::Backend]) == distinct(&[Coordinate::Backend, Coordinate::Adapter]);
        let shown = Coordinate::ALL
            .into_iter()
            .filter(|coordinate| !hidden.contains(coordinate))
            .filter(|coordinate| distinct(&[*coordinate]) > 1)
            .filter(|coordinate| {
                !(*coordinate == Coordinate::Adapter
                    && adapter_follows_backend
                    && distinct(&[Coordinate::Backend]) > 1)
            })
            .collect();
        Self { shown }
    }

    fn label(&self, benchmark: &BenchmarkResult) -> String {
        let mut parts = vec![benchmark.model.clone()];
        parts.extend(self.shown.iter().map(|coordinate| coordinate.of(benchmark)));
        parts.join(" ")
    }
}
