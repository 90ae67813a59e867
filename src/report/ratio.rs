//! The vendor comparison: when a record holds the same benchmark on the `wgpu` and `cuda`
//! backends (`run --backend wgpu,cuda`), the ratio of WGSL time to CUDA (cuDNN/cuBLAS) time per
//! phase and per layer. A ratio of 1.25 means the WGSL kernels take 25% longer than the vendor
//! library on the same GPU.

use super::cells::{Column, milliseconds, phase_label};
use super::terminal::new_table;
use crate::results::{BenchmarkResult, Phase, RunRecord};

const COLUMNS: [Column; 7] = [
    Column {
        header: "model",
        numeric: false,
    },
    Column {
        header: "batch",
        numeric: true,
    },
    Column {
        header: "precision",
        numeric: false,
    },
    Column {
        header: "phase or layer",
        numeric: false,
    },
    Column {
        header: "wgpu ms",
        numeric: true,
    },
    Column {
        header: "cuda ms",
        numeric: true,
    },
    Column {
        header: "wgpu / cuda",
        numeric: true,
    },
];

/// Pairs of (wgpu, cuda) results of the same model, stage, batch and precision.
fn pairs(record: &RunRecord) -> Vec<(&BenchmarkResult, &BenchmarkResult)> {
    record
        .benchmarks
        .iter()
        .filter(|b| b.backend == "wgpu")
        .filter_map(|w| {
            record
                .benchmarks
                .iter()
                .find(|c| {
                    c.backend == "cuda"
                        && (c.model.as_str(), c.stage, c.batch, c.precision)
                            == (w.model.as_str(), w.stage, w.batch, w.precision)
                })
                .map(|c| (w, c))
        })
        .collect()
}

fn ratio(wgpu_ns: f64, cuda_ns: f64) -> String {
    if cuda_ns > 0.0 {
        format!("{:.2}", wgpu_ns / cuda_ns)
    } else {
        "-".into()
    }
}

/// Median per layer summed over its phases (ns), in first-seen order.
fn layer_totals(b: &BenchmarkResult) -> Vec<(String, f64)> {
    let mut totals: Vec<(String, f64)> = Vec::new();
    for l in &b.layers {
        match totals.iter_mut().find(|(name, _)| *name == l.layer) {
            Some((_, t)) => *t += l.summary.median_ns,
            None => totals.push((l.layer.clone(), l.summary.median_ns)),
        }
    }
    totals
}

/// The ratio table, or `None` when no benchmark ran on both backends.
pub fn vendor_ratio_table(record: &RunRecord) -> Option<String> {
    let pairs = pairs(record);
    if pairs.is_empty() {
        return None;
    }
    let mut table = new_table(&COLUMNS);
    for (w, c) in pairs {
        let head = |label: String, wn: f64, cn: f64| {
            vec![
                w.model.clone(),
                w.batch.to_string(),
                w.precision.to_string(),
                label,
                milliseconds(wn),
                milliseconds(cn),
                ratio(wn, cn),
            ]
        };
        for phase in [
            Phase::Forward,
            Phase::GradInput,
            Phase::GradParams,
            Phase::Update,
            Phase::Total,
        ] {
            if let (Some(wp), Some(cp)) = (w.phase(phase), c.phase(phase)) {
                table.add_row(head(
                    phase_label(phase),
                    wp.summary.median_ns,
                    cp.summary.median_ns,
                ));
            }
        }
        let cuda_layers = layer_totals(c);
        for (layer, wn) in layer_totals(w) {
            if let Some((_, cn)) = cuda_layers.iter().find(|(name, _)| *name == layer) {
                table.add_row(head(format!("  {layer}"), wn, *cn));
            }
        }
    }
    Some(format!(
        "WGSL vs vendor library on the same device (median times):\n{table}\n"
    ))
}
