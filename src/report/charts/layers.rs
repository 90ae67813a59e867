//! `--kind layers`: the per-layer breakdown of one benchmark (`run --layers`) as horizontal
//! bars, one per layer stacked by phase, as `report --layers` tables it. After each bar, the
//! layer's place under the roofline (see [`crate::roofline`]): its share of the roof at its
//! arithmetic intensity and whether that roof is the bandwidth or the arithmetic rate, from
//! its FLOPs, bytes and time summed over its phases.

use super::draw::{Bar, BarChart, Segment};
use super::{Caption, total_ns};
use crate::Result;
use crate::report::ReportError;
use crate::report::cells::{milliseconds, phase_label};
use crate::results::{BenchmarkResult, LayerResult, Phase};

/// The benchmark to break down: the one named, else the first with layers.
fn pick<'a>(benchmarks: &[&'a BenchmarkResult], id: Option<&str>) -> Result<&'a BenchmarkResult> {
    let with_layers: Vec<&BenchmarkResult> = benchmarks
        .iter()
        .copied()
        .filter(|benchmark| !benchmark.layers.is_empty())
        .collect();
    let Some(&first) = with_layers.first() else {
        return Err(ReportError::NoLayersToChart.into());
    };
    let Some(id) = id else {
        return Ok(first);
    };
    with_layers
        .iter()
        .copied()
        .find(|benchmark| benchmark.id == id)
        .ok_or_else(|| {
            ReportError::UnknownLayersBenchmark {
                id: id.to_string(),
                with_layers: with_layers.iter().map(|benchmark| benchmark.id.clone()).collect(),
            }
            .into()
        })
}

/// A layer's results, all its phases, in first-seen order of the layers.
fn by_layer(benchmark: &BenchmarkResult) -> Vec<Vec<&LayerResult>> {
    let mut layers: Vec<Vec<&LayerResult>> = Vec::new();
    for result in &benchmark.layers {
        match layers.iter_mut().find(|phases| phases[0].layer == result.layer) {
            Some(phases) => phases.push(result),
            None => layers.push(vec![result]),
        }
    }
    layers
}

/// The layer's time and, with a calibrated peak, its share of the roof and what bounds it.
fn roofline_note(benchmark: &BenchmarkResult, phases: &[&LayerResult]) -> String {
    let ns: f64 = phases.iter().map(|layer| layer.summary.median_ns).sum();
    let flops: u64 = phases.iter().map(|layer| layer.flops).sum();
    let bytes: u64 = phases.iter().map(|layer| layer.bytes).sum();
    let placement = benchmark.peak.and_then(|peak| peak.place(flops, bytes, ns / 1e9));
    match placement {
        Some(placement) => format!(
            "{} ms, {:.1}% of roof ({})",
            milliseconds(ns),
            100.0 * placement.fraction_of_roof,
            if placement.memory_bound {
                "memory"
            } else {
                "compute"
            }
        ),
        None => format!("{} ms", milliseconds(ns)),
    }
}

pub(super) fn chart(benchmarks: &[&BenchmarkResult], id: Option<&str>) -> Result<String> {
    let benchmark = pick(benchmarks, id)?;
    let phases: Vec<Phase> = Phase::ALL
        .into_iter()
        .filter(|phase| benchmark.layers.iter().any(|layer| layer.phase == *phase))
        .collect();
    let total = total_ns(benchmark).unwrap_or(0.0);
    let bars = by_layer(benchmark)
        .into_iter()
        .map(|results| {
            let label = format!("{} ({})", results[0].layer, results[0].op);
            let segments = results
                .iter()
                .map(|result| Segment {
                    series: phases
                        .iter()
                        .position(|phase| *phase == result.phase)
                        .unwrap_or(0),
                    value: result.summary.median_ns / 1e6,
                    hover: format!(
                        "{label} {}: {} ms ({:.1}% of the {} ms iteration), kernel {}",
                        phase_label(result.phase),
                        milliseconds(result.summary.median_ns),
                        100.0 * result.summary.median_ns / total,
                        milliseconds(total),
                        result.variant
                    ),
                })
                .collect();
            Bar {
                note: roofline_note(benchmark, &results),
                label,
                segments,
                group_start: false,
            }
        })
        .collect();
    let roof = match benchmark.peak {
        Some(peak) => format!(
            "% of the roof of {:.1} GFLOP/s and {:.1} GB/s",
            peak.flops_per_second / 1e9,
            peak.bytes_per_second / 1e9
        ),
        None => "roof not calibrated: `cargo convbench adapters --calibrate` places each layer".to_string(),
    };
    let chart = BarChart {
        caption: Caption::new(
            format!("Layers of {}, by phase; {roof}", benchmark.id),
            &[benchmark],
        ),
        axis: "median ms per layer, stacked by phase".to_string(),
        legend: phases.into_iter().map(phase_label).collect(),
        bars,
    };
    Ok(chart.svg())
}
