//! A [`Comparison`] as a terminal table and as the Markdown of a PR comment.

use super::cells::{self, ABSENT};
use super::markdown::{escape_markdown, table_text};
use super::terminal::{new_table, with_footer};
use crate::compare::{CI_CONFIDENCE, Comparison, PhaseComparison, Verdict};
use crate::results::Phase;

/// One line counting the rows of each verdict, worst first, verdicts without rows left
/// out: `2 regressions, 1 inconclusive, 41 unchanged`; `nothing to compare` without rows.
pub fn verdict_summary(comparison: &Comparison) -> String {
    let mut summary = summarize(&comparison.rows.iter().collect::<Vec<_>>());
    // Regressions under `fail-threshold` are alerts: say so, or "2 regressions" beside exit 0
    // reads as a gate that did not work.
    let alerts = comparison.count(Verdict::Regression) - comparison.failing_regressions();
    if let Some(fail) = comparison.config.fail_threshold
        && alerts > 0
    {
        let verb = if alerts == 1 { "is" } else { "are" };
        summary.push_str(&format!(
            "; {alerts} of the regressions {verb} within the fail threshold of {}: alerts, not \
             failures",
            percent(fail)
        ));
    }
    if comparison.current_incomplete {
        format!("{summary}; the run was interrupted, so what it did not measure fails the gate")
    } else {
        summary
    }
}

/// [`verdict_summary`] of some rows.
fn summarize(rows: &[&PhaseComparison]) -> String {
    let parts: Vec<String> = Verdict::ALL
        .into_iter()
        .filter_map(|verdict| {
            let count = rows.iter().filter(|row| row.verdict == verdict).count();
            (count > 0).then(|| counted(count, verdict))
        })
        .collect();
    if parts.is_empty() {
        "nothing to compare".to_string()
    } else {
        parts.join(", ")
    }
}

/// `1 regression`, `2 improvements`, `41 unchanged`, `3 new`.
fn counted(count: usize, verdict: Verdict) -> String {
    let plural = if count == 1 { "" } else { "s" };
    match verdict {
        Verdict::Regression => format!("{count} regression{plural}"),
        Verdict::Improvement => format!("{count} improvement{plural}"),
        Verdict::NoChange => format!("{count} unchanged"),
        other => format!("{count} {other}"),
    }
}

/// A fraction as a signed percentage with one decimal: `+12.3%`, `-4.0%`.
fn percent(fraction: f64) -> String {
    format!("{:+.1}%", 100.0 * fraction)
}

/// The cells of a row, in [`cells::COMPARISON_COLUMNS`] order, not yet escaped.
fn row_cells(row: &PhaseComparison) -> Vec<String> {
    let milliseconds = |ns: Option<f64>| ns.map_or_else(|| ABSENT.to_string(), cells::milliseconds);
    vec![
        row.benchmark_id.clone(),
        cells::phase_label(row.phase),
        milliseconds(row.baseline_median_ns),
        milliseconds(row.current_median_ns),
        row.change.map_or_else(|| ABSENT.to_string(), percent),
        row.ci.map_or_else(
            || ABSENT.to_string(),
            |(low, high)| format!("[{}, {}]", percent(low), percent(high)),
        ),
        row.verdict.to_string(),
    ]
}

/// The lines under a comparison: the rule that made the verdicts, then each adapter.
fn footer(comparison: &Comparison) -> Vec<String> {
    let config = &comparison.config;
    let overrides = if config.per_benchmark.is_empty() {
        String::new()
    } else {
        format!(" ({} per-benchmark overrides)", config.per_benchmark.len())
    };
    let by_rounds = comparison.rows.iter().any(|row| row.evidence.is_some());
    let interval = if by_rounds {
        "t interval of the change in run level (rounds)"
    } else {
        "bootstrap of the change in median"
    };
    // Every regression fails unless a fail threshold above the threshold makes the smaller
    // ones alerts; one at or below it (`--fail-threshold 0`) is said to change nothing.
    let fail = match config.fail_threshold {
        Some(fail) if fail > config.threshold => format!(", fail threshold: {:.1}%", 100.0 * fail),
        Some(fail) => format!(
            ", fail threshold: {:.1}% (not above the threshold: every regression fails)",
            100.0 * fail
        ),
        None => String::new(),
    };
    let mut lines = vec![format!(
        "threshold: {:.1}%{overrides}{fail}, false discovery rate: {}, CI: {:.0}% {interval}",
        100.0 * config.threshold,
        config.alpha,
        100.0 * CI_CONFIDENCE
    )];
    // What the undecided rows rest on and what would settle them, once per distinct text: the
    // whole iterations' first (the rows a reader looks at), then in the comparison's order.
    const EXPLAINED: usize = 3;
    let mut undecided: Vec<&PhaseComparison> = comparison
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Inconclusive && r.evidence.is_some())
        .collect();
    undecided.sort_by_key(|row| row.phase != Phase::Total);
    let mut explained = std::collections::BTreeSet::new();
    let mut unexplained = 0;
    for row in undecided {
        let Some(evidence) = &row.evidence else { continue };
        if !explained.insert(evidence.clone()) {
            continue;
        }
        if explained.len() > EXPLAINED {
            unexplained += 1;
            continue;
        }
        lines.push(format!(
            "inconclusive {} ({}): {evidence}",
            row.benchmark_id,
            cells::phase_label(row.phase)
        ));
    }
    if unexplained > 0 {
        lines.push(format!(
            "inconclusive: {unexplained} more explanations in `compare --format json` (each row's `evidence`)"
        ));
    }
    for row in &comparison.rows {
        let line = format!("adapter: {}", row.adapter_label);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    const SHOWN: usize = 10;
    let absent = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
    for change in comparison.kernel_changes.iter().take(SHOWN) {
        lines.push(format!(
            "kernel changed: {} {}: {} -> {}",
            change.benchmark_id,
            change.layer,
            absent(&change.baseline),
            absent(&change.current)
        ));
    }
    if comparison.kernel_changes.len() > SHOWN {
        lines.push(format!(
            "kernel changed: {} more layers (see `compare --format json`)",
            comparison.kernel_changes.len() - SHOWN
        ));
    }
    lines
}

/// The summary line, then one row per benchmark phase in the comparison's order: benchmark,
/// phase, baseline and current medians (ms), change (signed %), its 95 % confidence interval
/// (%) and verdict; then the threshold and the adapters.
pub fn comparison_table(comparison: &Comparison) -> String {
    let mut text = verdict_summary(comparison);
    text.push('\n');
    if comparison.rows.is_empty() {
        return text;
    }
    let mut table = new_table(&cells::COMPARISON_COLUMNS);
    table.add_rows(comparison.rows.iter().map(row_cells));
    text.push_str(&with_footer(&table, &footer(comparison)));
    text
}

/// Rank of a verdict in [`Verdict::ALL`] (worst first).
fn severity(verdict: Verdict) -> usize {
    Verdict::ALL
        .iter()
        .position(|&v| v == verdict)
        .unwrap_or(Verdict::ALL.len())
}

/// For a PR comment or job summary: the summary line in bold; regressions then improvements
/// in a table; every other row (worst verdict first) folded in `<details>`; then the
/// threshold and the adapters. Ids and labels are escaped with [`escape_markdown`].
pub fn comparison_markdown(comparison: &Comparison) -> String {
    let mut text = format!("**{}**\n", verdict_summary(comparison));
    if comparison.rows.is_empty() {
        return text;
    }
    let is_notable =
        |row: &&PhaseComparison| matches!(row.verdict, Verdict::Regression | Verdict::Improvement);
    let mut notable: Vec<&PhaseComparison> = comparison.rows.iter().filter(is_notable).collect();
    let mut rest: Vec<&PhaseComparison> = comparison.rows.iter().filter(|row| !is_notable(row)).collect();
    // Stable sorts: within a verdict, rows keep the comparison's order.
    notable.sort_by_key(|row| severity(row.verdict));
    rest.sort_by_key(|row| severity(row.verdict));
    let table_of = |rows: &[&PhaseComparison]| {
        let cells: Vec<Vec<String>> = rows.iter().map(|row| row_cells(row)).collect();
        table_text(&cells::COMPARISON_COLUMNS, cells.iter().map(Vec::as_slice))
    };
    text.push('\n');
    if notable.is_empty() {
        text.push_str("No regression or improvement beyond the threshold.\n");
    } else {
        text.push_str(&table_of(&notable));
    }
    if !rest.is_empty() {
        let noun = if rest.len() == 1 { "row" } else { "rows" };
        text.push_str(&format!(
            "\n<details>\n<summary>{} other {noun}: {}</summary>\n\n{}\n</details>\n",
            rest.len(),
            summarize(&rest),
            table_of(&rest)
        ));
    }
    for line in footer(comparison) {
        text.push('\n');
        text.push_str(&escape_markdown(&line));
        text.push('\n');
    }
    text
}

/// `compare`'s output: the comparison in `format` with the `notes` first and the baseline's
/// `origin` last (table and Markdown), or the comparison itself as JSON. CSV is invalid input.
pub fn comparison_text(
    comparison: &Comparison,
    notes: &[String],
    origin: &str,
    format: super::Format,
) -> crate::Result<String> {
    let mut text = String::new();
    match format {
        super::Format::Json => {
            // The comparison's own fields at the top, and beside them what the table and
            // Markdown print around it: where the baseline came from and the notes.
            #[derive(serde::Serialize)]
            struct WithOrigin<'a> {
                #[serde(flatten)]
                comparison: &'a Comparison,
                baseline: &'a str,
                // Always present (empty without notes), so a script can read it unguarded.
                notes: &'a [String],
            }
            text = serde_json::to_string_pretty(&WithOrigin {
                comparison,
                baseline: origin,
                notes,
            })
            .unwrap_or_default();
        }
        super::Format::Markdown => {
            for n in notes {
                text.push_str(&format!("> **Note:** {n}\n\n"));
            }
            text.push_str(&comparison_markdown(comparison));
            text.push_str(&format!("\nbaseline: {origin}\n"));
        }
        super::Format::Table => {
            for n in notes {
                text.push_str(&format!("note: {n}\n"));
            }
            text.push_str(&comparison_table(comparison));
            text.push_str(&format!("\nbaseline: {origin}\n"));
        }
        super::Format::Csv => {
            return Err(super::ReportError::CompareCsv.into());
        }
    }
    Ok(text)
}
