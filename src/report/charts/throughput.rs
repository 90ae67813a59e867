//! `--kind throughput`: images per second against batch size, a line per model (and per
//! precision, backend, stage or adapter where the records hold several), as the seeds plot
//! their sweeps. When every model was run at one batch size, a bar per benchmark instead, and
//! the title says how to get the curve.

use super::draw::{Bar, BarChart, Line, LineChart, Segment};
use super::{Caption, Coordinate, Labeller, stage_words, total_ns};
use crate::Result;
use crate::report::cells::milliseconds;
use crate::results::BenchmarkResult;

/// Images per second at the median total time.
fn images_per_second(benchmark: &BenchmarkResult) -> f64 {
    total_ns(benchmark).map_or(0.0, |ns| benchmark.batch as f64 * 1e9 / ns)
}

fn hover(label: &str, benchmark: &BenchmarkResult) -> String {
    format!(
        "{label} at batch {}: {:.1} images/s (median total {} ms)",
        benchmark.batch,
        images_per_second(benchmark),
        total_ns(benchmark).map_or_else(|| "-".to_string(), milliseconds)
    )
}

pub(super) fn chart(benchmarks: &[&BenchmarkResult]) -> Result<String> {
    let labeller = Labeller::new(benchmarks, &[Coordinate::Batch]);
    let mut lines: Vec<Line> = Vec::new();
    for benchmark in benchmarks {
        let label = labeller.label(benchmark);
        let point = (
            benchmark.batch,
            images_per_second(benchmark),
            hover(&label, benchmark),
        );
        match lines.iter_mut().find(|line| line.label == label) {
            Some(line) if line.points.iter().all(|&(batch, _, _)| batch != benchmark.batch) => {
                line.points.push(point);
            }
            Some(_) => {}
            None => lines.push(Line {
                label,
                points: vec![point],
            }),
        }
    }
    let stage = stage_words(benchmarks);
    if lines.iter().any(|line| line.points.len() > 1) {
        for line in &mut lines {
            line.points.sort_by_key(|&(batch, _, _)| batch);
        }
        let chart = LineChart {
            caption: Caption::new(format!("Images per second{stage} against batch size"), benchmarks),
            axis: "images/s at the median total time".to_string(),
            lines,
        };
        return Ok(chart.svg());
    }
    let labeller = Labeller::new(benchmarks, &[]);
    let bars = benchmarks
        .iter()
        .map(|benchmark| {
            let label = labeller.label(benchmark);
            Bar {
                note: format!("{:.1}", images_per_second(benchmark)),
                segments: vec![Segment {
                    series: 0,
                    value: images_per_second(benchmark),
                    hover: hover(&label, benchmark),
                }],
                label,
                group_start: false,
            }
        })
        .collect();
    let chart = BarChart {
        caption: Caption::new(
            format!(
                "Images per second{stage}: one batch size per model (run with --batch 1,8,32 to plot them against batch size)"
            ),
            benchmarks,
        ),
        axis: "images/s at the median total time".to_string(),
        legend: vec!["images/s".to_string()],
        bars,
    };
    Ok(chart.svg())
}
