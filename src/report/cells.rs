//! The cells the terminal and Markdown renderers share, so that both show the same columns
//! with the same number formatting.

use crate::results::{BenchmarkResult, Phase, RunRecord};

/// Shown for a value that was not measured.
pub(super) const ABSENT: &str = "-";

/// A column: its header and whether it holds numbers (right-aligned, and formatted by this
/// module from numbers, so never escaped).
pub(super) struct Column {
    pub(super) header: &'static str,
    pub(super) numeric: bool,
}

const fn text(header: &'static str) -> Column {
    Column {
        header,
        numeric: false,
    }
}

const fn number(header: &'static str) -> Column {
    Column {
        header,
        numeric: true,
    }
}

/// The phases the benchmark table shows, in column order. The loss phases are left out as
/// the seed tables leave them out; they are still in `total`.
const TABLE_PHASES: [Phase; 5] = [
    Phase::Forward,
    Phase::GradInput,
    Phase::GradParams,
    Phase::Update,
    Phase::Total,
];

/// Columns of the one-row-per-benchmark table. `stage` is there because a record may hold a
/// train and an eval run of the same model and batch, which would otherwise look alike.
pub(super) const BENCHMARK_COLUMNS: [Column; 13] = [
    text("model"),
    text("stage"),
    number("batch"),
    text("precision"),
    text("backend"),
    number("forward ms"),
    number("grad-input ms"),
    number("grad-params ms"),
    number("update ms"),
    number("total ms"),
    number("images/s"),
    number("GFLOP/s"),
    number("memory MiB"),
];

/// Columns of the per-layer breakdown: the roofline columns (`GB/s` of compulsory traffic,
/// `% of roof`, and whether the roof at the layer's arithmetic intensity is `memory` or
/// `compute`) need the adapter's calibrated peak, see [`crate::roofline`].
pub(super) const LAYER_COLUMNS: [Column; 10] = [
    text("layer"),
    text("op"),
    text("phase"),
    number("median ms"),
    number("% of total"),
    number("GFLOP/s"),
    number("GB/s"),
    number("% of roof"),
    text("bound"),
    text("variant"),
];

/// Columns of a comparison.
pub(super) const COMPARISON_COLUMNS: [Column; 7] = [
    text("benchmark"),
    text("phase"),
    number("baseline ms"),
    number("current ms"),
    number("change"),
    number("95% CI of change"),
    text("verdict"),
];

/// Nanoseconds as milliseconds: 3 decimals, more below 1 ms so that at least 3 significant
/// digits show (`0.0146`, not `0.015`), at most 9 (a picosecond).
pub(super) fn milliseconds(ns: f64) -> String {
    let ms = ns / 1e6;
    if !ms.is_finite() {
        return ABSENT.to_string();
    }
    let decimals = if ms == 0.0 || ms.abs() >= 1.0 {
        3
    } else {
        // ms.abs() is in (0, 1), so its log10 is negative and finite.
        (2 - ms.abs().log10().floor() as i64).clamp(3, 9) as usize
    };
    format!("{ms:.decimals$}")
}

/// A ratio with 2 decimals, 3 below 0.1 so that a 12x speed-up does not read as `0.08`.
pub(super) fn ratio_text(ratio: f64) -> String {
    if ratio.abs() < 0.1 {
        format!("{ratio:.3}")
    } else {
        format!("{ratio:.2}")
    }
}

/// A phase name for people: `grad-input` rather than the `grad_input` of ids and files.
pub(super) fn phase_label(phase: Phase) -> String {
    phase.label().to_string()
}

/// A rate or size with one decimal, or [`ABSENT`].
fn one_decimal(value: Option<f64>) -> String {
    match value {
        Some(value) if value.is_finite() => format!("{value:.1}"),
        _ => ABSENT.to_string(),
    }
}

/// A bandwidth in GB/s: one decimal from 10 GB/s, more below so that a layer far from its
/// bandwidth roof (a few MB/s) does not read as `0.0`.
fn bandwidth(value: Option<f64>) -> String {
    match value {
        Some(value) if value.is_finite() && value.abs() < 10.0 => format!("{value:.3}"),
        other => one_decimal(other),
    }
}

/// The cells of a benchmark's row, in [`BENCHMARK_COLUMNS`] order, not yet escaped.
pub(super) fn benchmark_row(benchmark: &BenchmarkResult) -> Vec<String> {
    let mut row = vec![
        benchmark.model.clone(),
        benchmark.stage.as_str().to_string(),
        benchmark.batch.to_string(),
        benchmark.precision.as_str().to_string(),
        benchmark.backend.clone(),
    ];
    row.extend(TABLE_PHASES.iter().map(|&phase| {
        benchmark.phase(phase).map_or_else(
            || ABSENT.to_string(),
            |result| milliseconds(result.summary.median_ns),
        )
    }));
    // Zero FLOPs or bytes means "not counted" (an uncounted op, a backend that does not
    // report its allocations), not an infinitely fast or free benchmark.
    let gflops_per_sec = benchmark
        .gflops_per_sec()
        .filter(|_| benchmark.iteration_flops > 0);
    let memory_mib =
        (benchmark.device_memory_bytes > 0).then(|| benchmark.device_memory_bytes as f64 / (1024.0 * 1024.0));
    row.push(one_decimal(benchmark.images_per_sec()));
    row.push(one_decimal(gflops_per_sec));
    row.push(one_decimal(memory_mib));
    row
}

/// The cells of each layer's row, in [`LAYER_COLUMNS`] order, and the footer line that
/// says what "% of total" is a share of.
pub(super) fn layer_rows(benchmark: &BenchmarkResult) -> (Vec<Vec<String>>, Vec<String>) {
    let layers_sum_ns: f64 = benchmark.layers.iter().map(|layer| layer.summary.median_ns).sum();
    let total_ns = benchmark
        .phase(Phase::Total)
        .map(|total| total.summary.median_ns)
        .filter(|&ns| ns > 0.0);
    let reference_ns = total_ns.unwrap_or(layers_sum_ns);
    let rows = benchmark
        .layers
        .iter()
        .map(|layer| {
            let median_ns = layer.summary.median_ns;
            let share = (reference_ns > 0.0).then(|| 100.0 * median_ns / reference_ns);
            let gflops_per_sec = (layer.flops > 0 && median_ns > 0.0).then(|| layer.flops as f64 / median_ns);
            let gbytes_per_sec = (layer.bytes > 0 && median_ns > 0.0).then(|| layer.bytes as f64 / median_ns);
            let placement = benchmark
                .peak
                .and_then(|peak| peak.place(layer.flops, layer.bytes, median_ns / 1e9));
            vec![
                layer.layer.clone(),
                layer.op.clone(),
                phase_label(layer.phase),
                milliseconds(median_ns),
                one_decimal(share),
                one_decimal(gflops_per_sec),
                bandwidth(gbytes_per_sec),
                one_decimal(placement.map(|p| 100.0 * p.fraction_of_roof)),
                placement
                    .map_or(ABSENT, |p| if p.memory_bound { "memory" } else { "compute" })
                    .to_string(),
                layer.variant.clone(),
            ]
        })
        .collect();
    let total_line = match total_ns {
        Some(total_ns) => format!(
            "total: {} ms median; the layers sum to {} ms ({:.1}% of it)",
            milliseconds(total_ns),
            milliseconds(layers_sum_ns),
            100.0 * layers_sum_ns / total_ns
        ),
        None => format!(
            "no total phase recorded; % of total is a share of the layers' sum, {} ms",
            milliseconds(layers_sum_ns)
        ),
    };
    let roof_line = match benchmark.peak {
        Some(peak) => format!(
            "roof: {:.1} GFLOP/s and {:.1} GB/s measured on this adapter (ridge at {:.1} FLOP/byte); \
             GB/s counts each binding once",
            peak.flops_per_second / 1e9,
            peak.bytes_per_second / 1e9,
            peak.ridge()
        ),
        None => "roof: not calibrated; `cargo convbench adapters --calibrate` measures the adapter's \
                 peaks for the % of roof column"
            .to_string(),
    };
    (rows, vec![total_line, roof_line])
}

/// One line per distinct adapter (with its timing method and sample count), in record
/// order: `adapter: NVIDIA H100 (vulkan), timing: gpu timestamps, samples: 10`.
pub(super) fn adapter_lines(record: &RunRecord) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for benchmark in &record.benchmarks {
        let samples = benchmark
            .phases
            .iter()
            .map(|phase| phase.samples_ns.len())
            .max()
            .unwrap_or(0);
        let line = format!(
            "adapter: {}, timing: {}, samples: {samples}",
            benchmark.adapter.label(),
            benchmark.timing_method.as_str()
        );
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    if !record.complete {
        lines.push(
            "incomplete: the run was interrupted, so benchmarks or rounds it did not finish are \
             missing (the gate fails such a record)"
                .to_string(),
        );
    }
    lines
}
