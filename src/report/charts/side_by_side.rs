//! `--kind backends` and `--kind precision`: the same benchmarks measured another way side by
//! side, as the seeds set frameworks and precisions next to each other. A group per model,
//! stage and batch (and precision or backend); a bar per backend or precision in it, each with
//! its median total time and its ratio to the reference: `wgpu` (else the first backend by
//! name) or `f32`. Groups measured one way only are left out.

use super::draw::{Bar, BarChart, Segment};
use super::{Caption, Coordinate, Labeller, stage_words, total_ns};
use crate::Result;
use crate::report::ReportError;
use crate::report::cells::{milliseconds, ratio_text};
use crate::results::{BenchmarkResult, Stage};
use std::collections::BTreeSet;

/// Model, stage, batch, and the precision or the backend and adapter: what a group shares.
type GroupKey = (String, Stage, usize, String);

/// The coordinate the bars of a group differ in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Axis {
    Backend,
    Precision,
}

impl Axis {
    fn value(self, benchmark: &BenchmarkResult) -> String {
        match self {
            Axis::Backend => benchmark.backend.clone(),
            Axis::Precision => benchmark.precision.as_str().to_string(),
        }
    }

    /// The coordinates a group label leaves out: this one, and with the backend its adapter.
    fn hidden(self) -> &'static [Coordinate] {
        match self {
            Axis::Backend => &[Coordinate::Backend, Coordinate::Adapter],
            Axis::Precision => &[Coordinate::Precision],
        }
    }

    /// What the group of a benchmark is: every coordinate but this one (and the adapter, which
    /// goes with the backend).
    fn group(self, benchmark: &BenchmarkResult) -> GroupKey {
        let other = match self {
            Axis::Backend => benchmark.precision.as_str().to_string(),
            Axis::Precision => format!("{} {}", benchmark.backend, benchmark.adapter.label()),
        };
        (benchmark.model.clone(), benchmark.stage, benchmark.batch, other)
    }

    /// The reference among the values present.
    fn reference(self, values: &BTreeSet<String>) -> Option<String> {
        let preferred = match self {
            Axis::Backend => "wgpu",
            Axis::Precision => "f32",
        };
        values.get(preferred).or_else(|| values.first()).cloned()
    }

    /// The error when no group holds two values.
    fn missing(self, values: &BTreeSet<String>) -> ReportError {
        let present = values.iter().cloned().collect();
        match (self, values.len()) {
            (Axis::Backend, 0 | 1) => ReportError::OneBackend { present },
            (Axis::Backend, _) => ReportError::NoBackendPair { present },
            (Axis::Precision, 0 | 1) => ReportError::OnePrecision { present },
            (Axis::Precision, _) => ReportError::NoPrecisionPair,
        }
    }
}

pub(super) fn chart(benchmarks: &[&BenchmarkResult], axis: Axis) -> Result<String> {
    let values: BTreeSet<String> = benchmarks.iter().map(|b| axis.value(b)).collect();
    let reference = axis.reference(&values);
    let mut groups: Vec<(GroupKey, Vec<&BenchmarkResult>)> = Vec::new();
    for benchmark in benchmarks {
        let key = axis.group(benchmark);
        match groups.iter_mut().find(|(group, _)| *group == key) {
            Some((_, members)) => members.push(benchmark),
            None => groups.push((key, vec![benchmark])),
        }
    }
    groups.retain(|(_, members)| {
        members
            .iter()
            .map(|b| axis.value(b))
            .collect::<BTreeSet<_>>()
            .len()
            > 1
    });
    let (Some(reference), false) = (reference, groups.is_empty()) else {
        return Err(axis.missing(&values).into());
    };
    let compared: Vec<&BenchmarkResult> = groups.iter().flat_map(|(_, members)| members.clone()).collect();
    let legend: Vec<String> = std::iter::once(reference.clone())
        .chain(values.iter().filter(|value| **value != reference).cloned())
        .collect();
    let labeller = Labeller::new(&compared, axis.hidden());
    let mut bars = Vec::new();
    for (_, mut members) in groups {
        members.sort_by_key(|b| legend.iter().position(|value| *value == axis.value(b)));
        let reference_ns = members
            .iter()
            .find(|b| axis.value(b) == reference)
            .and_then(|b| total_ns(b));
        for (index, benchmark) in members.iter().enumerate() {
            let value = axis.value(benchmark);
            let ns = total_ns(benchmark).unwrap_or(0.0);
            let ratio = reference_ns
                .filter(|_| value != reference)
                .map(|reference_ns| format!(", {}x {reference}", ratio_text(ns / reference_ns)))
                .unwrap_or_default();
            let label = format!("{} · {value}", labeller.label(benchmark));
            bars.push(Bar {
                segments: vec![Segment {
                    series: legend.iter().position(|name| *name == value).unwrap_or(0),
                    value: ns / 1e6,
                    hover: format!("{label}: median total {} ms{ratio}", milliseconds(ns)),
                }],
                note: format!("{} ms{ratio}", milliseconds(ns)),
                label,
                group_start: index == 0,
            });
        }
    }
    let what = match axis {
        Axis::Backend => "Backends side by side",
        Axis::Precision => "f16 against f32",
    };
    let chart = BarChart {
        caption: Caption::new(
            format!(
                "{what}: median time{}, ratio to {reference} (below 1 is faster)",
                stage_words(&compared)
            ),
            &compared,
        ),
        axis: "median ms per iteration".to_string(),
        legend,
        bars,
    };
    Ok(chart.svg())
}
