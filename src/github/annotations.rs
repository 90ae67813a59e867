//! Workflow-command annotations: `::error` for regressions, `::warning` for inconclusive rows.

use super::comment::{format_change, format_duration_ns};
use crate::compare::{Comparison, PhaseComparison, Verdict};

/// Title of the annotation of a regression.
const REGRESSION_TITLE: &str = "convbench regression";
/// Title of the annotation of a regression under the fail threshold.
const ALERT_TITLE: &str = "convbench alert";
/// Title of the annotation of an inconclusive row.
const INCONCLUSIVE_TITLE: &str = "convbench inconclusive";

/// One workflow command per regression (`::error`; `::warning` titled "convbench alert" for a
/// regression under [`crate::compare::CompareConfig::fail_threshold`]) and per inconclusive row
/// (`::warning`), in row order, e.g.
/// `::error title=convbench regression::alexnet/train/b128/f32/wgpu forward +12.3% (...)`.
///
/// The binary prints them on stdout, where the runner turns them into annotations on the run
/// and the pull request. Message data is escaped with [`escape_workflow_data`], so a newline
/// in a benchmark id cannot start a second command.
pub fn annotations(comparison: &Comparison) -> Vec<String> {
    comparison
        .rows
        .iter()
        .filter_map(|row| {
            let (command, title) = match row.verdict {
                Verdict::Regression if comparison.fails_gate(row) => ("error", REGRESSION_TITLE),
                Verdict::Regression => ("warning", ALERT_TITLE),
                Verdict::Inconclusive => ("warning", INCONCLUSIVE_TITLE),
                _ => return None,
            };
            Some(format!(
                "::{command} title={title}::{}",
                escape_workflow_data(&message(row))
            ))
        })
        .collect()
}

/// The human sentence of one annotated row.
fn message(row: &PhaseComparison) -> String {
    let change = row
        .change
        .map_or_else(|| "change unknown".to_string(), format_change);
    let mut text = format!("{} {} {change}", row.benchmark_id, row.phase.label());
    if let (Some(baseline), Some(current)) = (row.baseline_median_ns, row.current_median_ns) {
        text.push_str(&format!(
            " (median {} -> {}",
            format_duration_ns(baseline),
            format_duration_ns(current)
        ));
        if let Some((low, high)) = row.ci {
            text.push_str(&format!(
                ", 95% CI {} to {}",
                format_change(low),
                format_change(high)
            ));
        }
        text.push(')');
    }
    text.push_str(&format!(
        ", threshold {:.1}% on {}",
        row.threshold * 100.0,
        row.adapter_label
    ));
    if row.verdict == Verdict::Inconclusive {
        text.push_str("; not significant: collect more samples");
    }
    text
}

/// Escapes the data part of a workflow command as the runner expects: `%` as `%25`, carriage
/// return as `%0D`, line feed as `%0A`.
pub fn escape_workflow_data(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '%' => escaped.push_str("%25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// A fatal error as ONE `::error` workflow command: the message, then a `caused by:` line per
/// cause, all escaped as data. An error can quote a hostile record (serde's "unknown variant"
/// repeats the text it read), and a line break in it must not start a command of its own
/// (`::add-mask::`, `::error::`) in the job that reads the record.
pub fn error_annotation(message: &str, causes: &[String]) -> String {
    let mut text = message.to_string();
    for cause in causes {
        text.push_str("\n  caused by: ");
        text.push_str(cause);
    }
    format!("::error title=convbench::{}", escape_workflow_data(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::CompareConfig;
    use crate::results::Phase;

    fn row(id: &str, verdict: Verdict, change: Option<f64>) -> PhaseComparison {
        PhaseComparison {
            benchmark_id: id.to_string(),
            phase: Phase::Forward,
            baseline_median_ns: Some(10_000_000.0),
            current_median_ns: change.map(|c| 10_000_000.0 * (1.0 + c)),
            change,
            ci: change.map(|c| (c - 0.01, c + 0.01)),
            p_value: Some(0.001),
            threshold: 0.05,
            verdict,
            adapter_label: "NVIDIA H100 (vulkan)".to_string(),
            evidence: None,
        }
    }

    #[test]
    fn an_error_is_one_workflow_command_whatever_it_quotes() {
        let hostile = "unknown variant `x\n::add-mask::secret`".to_string();
        let line = error_annotation("cannot read the record", &[hostile]);
        assert_eq!(
            line,
            "::error title=convbench::cannot read the record%0A  caused by: unknown variant `x%0A::add-mask::secret`"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn regressions_are_errors_and_inconclusive_rows_warnings() {
        let comparison = Comparison {
            rows: vec![
                row("a/train/b1/f32/wgpu", Verdict::Regression, Some(0.123)),
                row("b/train/b1/f32/wgpu", Verdict::NoChange, Some(0.01)),
                row("c/train/b1/f32/wgpu", Verdict::Inconclusive, Some(0.08)),
                row("d/train/b1/f32/wgpu", Verdict::Improvement, Some(-0.2)),
            ],
            config: CompareConfig::default(),
            kernel_changes: Vec::new(),
            current_incomplete: false,
        };
        let lines = annotations(&comparison);
        assert_eq!(lines.len(), 2);
        // The runner decodes `%25` back to `%` when it shows the annotation.
        assert_eq!(
            lines[0],
            "::error title=convbench regression::a/train/b1/f32/wgpu forward +12.3%25 \
             (median 10.00 ms -> 11.23 ms, 95%25 CI +11.3%25 to +13.3%25), threshold 5.0%25 on NVIDIA H100 (vulkan)"
        );
        assert!(
            lines[1].starts_with("::warning title=convbench inconclusive::c/train/b1/f32/wgpu forward +8.0%")
        );
        assert!(lines[1].ends_with("collect more samples"));
    }

    #[test]
    fn regressions_under_the_fail_threshold_are_alerts() {
        let comparison = Comparison {
            rows: vec![
                row("a/train/b1/f32/wgpu", Verdict::Regression, Some(0.07)),
                row("b/train/b1/f32/wgpu", Verdict::Regression, Some(0.12)),
            ],
            config: CompareConfig {
                fail_threshold: Some(0.10),
                ..CompareConfig::default()
            },
            kernel_changes: Vec::new(),
            current_incomplete: false,
        };
        let lines = annotations(&comparison);
        assert!(
            lines[0].starts_with("::warning title=convbench alert::a/"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("::error title=convbench regression::b/"),
            "{}",
            lines[1]
        );
        assert_eq!(comparison.failing_regressions(), 1);
        assert!(comparison.gate_fails());
        let lenient = Comparison {
            rows: comparison.rows[..1].to_vec(),
            ..comparison
        };
        assert!(!lenient.gate_fails() && lenient.has_regression());
    }

    #[test]
    fn escapes_percent_and_newlines() {
        assert_eq!(
            escape_workflow_data("100%\r\n::error::x"),
            "100%25%0D%0A::error::x"
        );
        let comparison = Comparison {
            rows: vec![row("evil\n::error::injected", Verdict::Regression, Some(0.5))],
            config: CompareConfig::default(),
            kernel_changes: Vec::new(),
            current_incomplete: false,
        };
        let lines = annotations(&comparison);
        assert_eq!(lines.len(), 1);
        assert!(!lines[0].contains('\n'));
        assert!(lines[0].contains("evil%0A::error::injected"));
    }
}
