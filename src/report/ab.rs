//! What `ab` and `bisect` print.

use crate::compare::Verdict;
use crate::compare::ab::AbRow;
use crate::github::{format_change, format_duration_ns};
use crate::harness::bisect::BisectOutcome;
use crate::results::Phase;

/// Whether a row moved beyond its threshold (a regression or an improvement).
fn moved(row: &AbRow) -> bool {
    matches!(row.verdict, Verdict::Regression | Verdict::Improvement)
}

/// What `ab` prints: the table of verdicts, the rows that moved first (a phase that moved says where a change
/// of the whole iteration came from), then the evidence of each benchmark and of each row that
/// moved.
pub fn ab_table(description: &str, rows: &[AbRow]) -> String {
    let mut table = super::terminal::bordered(&[
        "benchmark",
        "phase",
        "pairs",
        "base",
        "head",
        "change",
        "95% CI",
        "verdict",
    ]);
    let ordered: Vec<&AbRow> = rows
        .iter()
        .filter(|r| moved(r))
        .chain(rows.iter().filter(|r| !moved(r)))
        .collect();
    for row in &ordered {
        table.add_row([
            row.benchmark_id.clone(),
            row.layer.as_ref().map_or_else(
                || row.phase.as_str().to_string(),
                |layer| format!("layer {layer}"),
            ),
            row.pairs.to_string(),
            row.sides_ns()
                .map_or_else(|| "–".to_string(), |(base, _)| format_duration_ns(base)),
            row.sides_ns()
                .map_or_else(|| "–".to_string(), |(_, head)| format_duration_ns(head)),
            if row.estimated() {
                format_change(row.change)
            } else {
                "–".to_string()
            },
            if row.estimated() {
                format!("{} to {}", format_change(row.ci.0), format_change(row.ci.1))
            } else {
                "–".to_string()
            },
            row.verdict.as_str().to_string(),
        ]);
    }
    let mut text = format!("A/B, {description}\n{table}\n");
    for row in ordered
        .iter()
        .filter(|r| (r.phase == Phase::Total && r.layer.is_none()) || moved(r))
    {
        text.push_str(&format!(
            "{} {}: {} (threshold {:.1}%)\n",
            row.benchmark_id,
            row.phase.as_str(),
            row.evidence,
            row.threshold * 100.0
        ));
    }
    text
}

/// What `bisect` prints: the commits tried, one line each, and the answer.
pub fn bisect_text(outcome: &BisectOutcome) -> String {
    let mut text = format!("bisect over {} commits after --good:\n", outcome.commits);
    for step in &outcome.steps {
        let moved = step
            .outcome
            .rows
            .iter()
            .max_by(|a, b| a.change.total_cmp(&b.change))
            .map_or_else(String::new, |row| {
                format!(
                    "{} {} ({})",
                    row.benchmark_id,
                    format_change(row.change),
                    row.verdict.as_str()
                )
            });
        text.push_str(&format!(
            "  {} {}  {}  {}\n",
            &step.commit[..step.commit.len().min(10)],
            if step.slower() { "slower" } else { "as fast" },
            moved,
            step.summary
        ));
    }
    match outcome.first_slow.map(|index| &outcome.steps[index]) {
        Some(step) => {
            let rows: Vec<String> = step
                .outcome
                .rows
                .iter()
                .filter(|row| row.verdict == Verdict::Regression)
                .map(|row| format!("{} {}", row.benchmark_id, format_change(row.change)))
                .collect();
            text.push_str(&format!(
                "first slower commit: {} {}\n  {}\n",
                step.commit,
                step.summary,
                rows.join("\n  ")
            ));
        }
        None => text.push_str("--bad is not slower than --good beyond the threshold: nothing to bisect\n"),
    }
    text
}
