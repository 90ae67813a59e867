//! `--kind phases`: a stacked bar per training benchmark of the phases of its step, as the
//! seeds break an iteration into `updateOutput`, `updateGradInput`, `accGradParameters` and the
//! update. The loss (forward and backward) is a segment of its own, so that a bar adds up to
//! the step.

use super::draw::{Bar, BarChart, Segment};
use super::{Caption, Coordinate, Labeller, total_ns};
use crate::Result;
use crate::report::ReportError;
use crate::report::cells::milliseconds;
use crate::results::{BenchmarkResult, Phase};

/// The segments of a bar, in the order of a step, each with the phases it sums.
const SEGMENTS: [(&str, &[Phase]); 5] = [
    ("forward", &[Phase::Forward]),
    ("loss", &[Phase::LossForward, Phase::LossBackward]),
    ("grad-input", &[Phase::GradInput]),
    ("grad-params", &[Phase::GradParams]),
    ("update", &[Phase::Update]),
];

fn is_training(benchmark: &BenchmarkResult) -> bool {
    benchmark.phase(Phase::GradInput).is_some() || benchmark.phase(Phase::GradParams).is_some()
}

pub(super) fn chart(benchmarks: &[&BenchmarkResult]) -> Result<String> {
    let training: Vec<&BenchmarkResult> = benchmarks.iter().copied().filter(|b| is_training(b)).collect();
    if training.is_empty() {
        return Err(ReportError::NoTrainingStep.into());
    }
    let labeller = Labeller::new(&training, &[Coordinate::Stage]);
    let mut bars = Vec::with_capacity(training.len());
    for (index, benchmark) in training.iter().enumerate() {
        let label = labeller.label(benchmark);
        let total = total_ns(benchmark).unwrap_or(0.0);
        let segments = SEGMENTS
            .iter()
            .enumerate()
            .filter_map(|(series, (name, phases))| {
                let medians: Vec<f64> = phases
                    .iter()
                    .filter_map(|&phase| benchmark.phase(phase))
                    .map(|result| result.summary.median_ns)
                    .collect();
                if medians.is_empty() {
                    return None;
                }
                let ns: f64 = medians.iter().sum();
                Some(Segment {
                    series,
                    value: ns / 1e6,
                    hover: format!(
                        "{label}: {name} {} ms ({:.1}% of the {} ms step)",
                        milliseconds(ns),
                        100.0 * ns / total,
                        milliseconds(total)
                    ),
                })
            })
            .collect();
        let group_start = index == 0 || training[index - 1].model != benchmark.model;
        bars.push(Bar {
            note: format!("{} ms", milliseconds(total)),
            label,
            segments,
            group_start,
        });
    }
    let chart = BarChart {
        caption: Caption::new("Phases of a training step (median of each phase)", &training),
        axis: "median ms per phase, stacked".to_string(),
        legend: SEGMENTS.iter().map(|(name, _)| name.to_string()).collect(),
        bars,
    };
    Ok(chart.svg())
}
