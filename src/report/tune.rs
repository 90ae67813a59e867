//! The table `tune` prints.

use crate::harness::tune::{Outcome, TuneResult, shape_key};
use crate::kernels::Variant;

fn ms(ns: f64) -> String {
    format!("{:.2}", ns / 1e6)
}

/// One line per variant: id, median ms and GFLOP/s, or why it was not timed.
fn timings_cell(result: &TuneResult) -> String {
    let flops = result.job.op.flops() as f64;
    result
        .variants
        .iter()
        .map(|v| {
            let what = match &v.outcome {
                Outcome::Timed { median_ns, .. } if flops > 0.0 => {
                    format!("{} ms  {:.2} GFLOP/s", ms(*median_ns), flops / median_ns)
                }
                Outcome::Timed { median_ns, .. } => format!("{} ms", ms(*median_ns)),
                Outcome::Pruned { first_ns } => {
                    format!(">{} ms (first sample, not timed further)", ms(*first_ns as f64))
                }
                Outcome::Failed { ratio } => {
                    format!("FAILED verification (error {ratio:.1} times its rounding bound)")
                }
            };
            format!("{}  {what}", v.variant)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The median of `variant`, or (`true`) a lower bound of it when it was pruned.
fn median_of(result: &TuneResult, variant: Variant) -> Option<(f64, bool)> {
    result.variants.iter().find_map(|v| match v.outcome {
        Outcome::Timed { median_ns, .. } if v.variant == variant => Some((median_ns, false)),
        Outcome::Pruned { first_ns } if v.variant == variant => Some((first_ns as f64, true)),
        _ => None,
    })
}

/// What `tune` prints: per op, shape and precision, every variant's median (or why it was not
/// timed), the winner and its speed-up over the direct kernel.
pub fn tune_table(results: &[TuneResult]) -> String {
    let mut table = super::terminal::bordered(&[
        "op",
        "shape",
        "precision",
        "variant timings (median)",
        "winner",
        "vs direct",
    ]);
    for r in results {
        let winner = r.winner.map_or_else(|| "none".into(), |w| w.id());
        let speedup = match (
            r.winner.and_then(|w| median_of(r, w)),
            median_of(r, Variant::Direct),
        ) {
            (Some((best, _)), Some((direct, pruned))) => {
                format!("{}{:.1}x", if pruned { ">" } else { "" }, direct / best)
            }
            _ => "-".into(),
        };
        table.add_row([
            r.job.op.name().to_string(),
            shape_key(&r.job.op),
            r.job.precision.to_string(),
            timings_cell(r),
            winner,
            speedup,
        ]);
    }
    table.to_string()
}
