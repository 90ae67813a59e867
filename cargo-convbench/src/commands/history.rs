//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline, with the spread between the blessed runs and the steps in its level.

use super::adapters::ListFormat;
use crate::cli::Args;
use crate::output::print_untrusted;
use comfy_table::Table;
use convbench::baseline::{BenchmarkHistory, GitBaselineStore};
use convbench::config;
use convbench::results::Phase;
use convbench::stats::ChangePointConfig;
use convbench::{Error, Result};

/// Arguments of `history`.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// Only this benchmark id.
    #[arg(long)]
    pub benchmark: Option<String>,
    /// Adapter folder under the baseline directory (default: every one).
    #[arg(long)]
    pub slug: Option<String>,
    /// Baseline set.
    #[arg(long, default_value = "default")]
    pub set: String,
    /// Only this phase (`total`, `forward`, `grad_input`, ...) or `all`.
    #[arg(long, default_value = "total")]
    pub phase: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Significance of a change point: the largest permutation p-value accepted.
    #[arg(long, default_value_t = ChangePointConfig::default().alpha)]
    pub alpha: f64,
    /// Smallest relative step reported as a change point, in percent.
    #[arg(long, default_value_t = ChangePointConfig::default().min_relative_step * 100.0)]
    pub min_step: f64,
}

/// `cargo convbench history`.
pub fn run(args: &Args, a: &HistoryArgs) -> Result<u8> {
    let phases = phases(&a.phase)?;
    if !(a.alpha > 0.0 && a.alpha < 1.0) || !(a.min_step >= 0.0) {
        return Err(Error::InvalidInput(format!(
            "--alpha {} must lie strictly between 0 and 1 and --min-step {} must not be negative",
            a.alpha, a.min_step
        )));
    }
    let change_points = ChangePointConfig {
        alpha: a.alpha,
        min_relative_step: a.min_step / 100.0,
        ..ChangePointConfig::default()
    };
    let workspace = config::load(args.manifest_path.as_deref())?;
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
    let mut series = Vec::new();
    for slug in slugs(&store, a.slug.as_deref())? {
        let mut points = store.history(&slug, &a.set, a.benchmark.as_deref())?;
        points.retain(|point| phases.contains(&point.phase));
        series.extend(BenchmarkHistory::group(&slug, points, &change_points));
    }
    match a.format {
        ListFormat::Json => print_untrusted(&json(&series)),
        ListFormat::Table if series.is_empty() => print_untrusted("no blessed values found in the history"),
        ListFormat::Table => print_untrusted(&table(&series)),
    }
    Ok(0)
}

/// The phases `--phase` selects.
fn phases(name: &str) -> Result<Vec<Phase>> {
    if name == "all" {
        return Ok(Phase::ALL.to_vec());
    }
    Phase::ALL
        .into_iter()
        .find(|phase| phase.as_str() == name)
        .map(|phase| vec![phase])
        .ok_or_else(|| {
            let known: Vec<&str> = Phase::ALL.iter().map(|phase| phase.as_str()).collect();
            Error::InvalidInput(format!(
                "unknown phase `{name}`; use one of {} or `all`",
                known.join(", ")
            ))
        })
}

/// The adapter folders to read: `only`, else every folder under the baseline directory.
fn slugs(store: &GitBaselineStore, only: Option<&str>) -> Result<Vec<String>> {
    if let Some(slug) = only {
        return Ok(vec![slug.to_string()]);
    }
    let dir = store.workdir().join(store.baseline_dir());
    let mut slugs: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| {
            Error::InvalidInput(format!(
                "no baselines in {}: {e}; bless some with `cargo convbench baseline update`",
                dir.display()
            ))
        })?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    slugs.sort();
    Ok(slugs)
}

/// One JSON object per series: its points with their spread, and its change points.
fn json(series: &[BenchmarkHistory]) -> String {
    let rows: Vec<_> = series
        .iter()
        .map(|history| {
            let points: Vec<_> = history
                .points
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "commit": p.commit, "time_unix_s": p.time_unix_s, "summary": p.summary,
                        "median_ns": p.median_ns, "run_medians_ns": p.run_medians_ns,
                        "spread": p.spread(),
                    })
                })
                .collect();
            let first = history.points.first();
            serde_json::json!({
                "adapter": history.slug,
                "adapter_label": first.map(|p| p.adapter.as_str()),
                "benchmark": history.benchmark_id,
                "model": first.map(|p| p.model.as_str()),
                "stage": first.map(|p| p.stage),
                "batch": first.map(|p| p.batch),
                "precision": first.map(|p| p.precision),
                "backend": first.map(|p| p.backend.as_str()),
                "phase": history.phase,
                "points": points,
                "change_points": history.steps,
            })
        })
        .collect();
    serde_json::to_string_pretty(&rows).unwrap_or_default()
}

/// Milliseconds with three decimals.
fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The points of every series, then the change points.
fn table(series: &[BenchmarkHistory]) -> String {
    let mut points = Table::new();
    points
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header([
            "benchmark",
            "phase",
            "commit",
            "time (UTC)",
            "median ms",
            "between runs ms (min–max)",
            "runs",
            "step",
            "commit message",
        ]);
    for history in series {
        for (index, p) in history.points.iter().enumerate() {
            let spread = p.spread();
            let step = history
                .steps
                .iter()
                .find(|step| step.index == index)
                .map(|step| format!("{:+.1}%", step.relative_step * 100.0))
                .unwrap_or_default();
            points.add_row([
                p.benchmark_id.clone(),
                p.phase.as_str().to_string(),
                p.commit.chars().take(10).collect(),
                convbench::report::rfc3339_utc(p.time_unix_s.max(0) as u64),
                ms(p.median_ns),
                format!("{}–{}", ms(spread.min_ns), ms(spread.max_ns)),
                spread.runs.to_string(),
                step,
                p.summary.clone(),
            ]);
        }
    }
    let steps: Vec<_> = series
        .iter()
        .flat_map(|history| history.steps.iter().map(move |step| (history, step)))
        .collect();
    if steps.is_empty() {
        return format!("{points}\nno change points");
    }
    let mut changes = Table::new();
    changes
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header([
            "benchmark",
            "phase",
            "step at commit",
            "before ms",
            "after ms",
            "step",
            "p",
            "commit message",
        ]);
    for (history, step) in steps {
        changes.add_row([
            history.benchmark_id.clone(),
            history.phase.as_str().to_string(),
            step.commit.chars().take(10).collect(),
            ms(step.before_ns),
            ms(step.after_ns),
            format!("{:+.1}%", step.relative_step * 100.0),
            format!("{:.3}", step.p_value),
            step.summary.clone(),
        ]);
    }
    format!("{points}\nchange points:\n{changes}")
}
