//! The tables `verify` prints of the kernel variants.

use crate::harness::conformance::{Row, SweepRow};

/// The kernel-variant table of `rows`.
pub fn variant_table(rows: &[Row]) -> String {
    let mut table = super::terminal::bordered(&[
        "op",
        "variant",
        "precision",
        "shapes",
        "worst error",
        "tolerance",
        "error/tolerance",
        "pass",
    ]);
    for row in rows {
        table.add_row([
            row.op.to_string(),
            row.variant.clone(),
            row.precision.to_string(),
            row.shapes.to_string(),
            format!("{:.2e}", row.worst_error),
            format!("{:.2e}", row.bound),
            format!("{:.3}", row.ratio),
            if row.passed() { "yes" } else { "NO" }.to_string(),
        ]);
    }
    table.to_string()
}

/// `verify --variants --seeds N`: one line per op, variant and precision with its worst ratio,
/// the seed that gave it and the seeds that failed (the first five, then a count).
pub fn variant_sweep_table(lines: &[SweepRow]) -> String {
    let mut table = super::terminal::bordered(&[
        "op",
        "variant",
        "precision",
        "seeds",
        "shapes",
        "worst error/tolerance",
        "worst seed",
        "failed seeds",
    ]);
    for line in lines {
        let failed = if line.failed_seeds.is_empty() {
            "0".to_string()
        } else {
            let shown: Vec<String> = line.failed_seeds.iter().take(5).map(u64::to_string).collect();
            let more = line.failed_seeds.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(", +{more}")
            } else {
                String::new()
            };
            format!("{} ({}{more})", line.failed_seeds.len(), shown.join(", "))
        };
        table.add_row([
            line.worst.op.to_string(),
            line.worst.variant.clone(),
            line.worst.precision.to_string(),
            line.seeds.to_string(),
            line.worst.shapes.to_string(),
            format!("{:.3}", line.worst.ratio),
            line.worst_seed.to_string(),
            failed,
        ]);
    }
    table.to_string()
}
