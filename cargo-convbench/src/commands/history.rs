//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline, with the spread between the blessed runs and the steps in its level.

use super::adapters::ListFormat;
use crate::cli::Args;
use crate::output::{print_untrusted, write_atomic};
use comfy_table::Table;
use convbench::baseline::{BenchmarkHistory, GitBaselineStore};
use convbench::config;
use convbench::results::Phase;
use convbench::stats::ChangePointConfig;
use convbench::{Error, Result, report};
use std::path::{Path, PathBuf};

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
    /// Only this phase (`total`, `forward`, `grad_input`, ...) or `all` [default: `total` in the
    /// table and JSON, `all` in the dashboard].
    #[arg(long)]
    pub phase: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Significance of a change point: the largest permutation p-value accepted.
    #[arg(long, default_value_t = ChangePointConfig::default().alpha)]
    pub alpha: f64,
    /// Smallest relative step reported as a change point, in percent.
    #[arg(long, default_value_t = ChangePointConfig::default().min_relative_step * 100.0)]
    pub min_step: f64,
    /// Write the dashboard to DIR/index.html: one self-contained page with a chart per
    /// benchmark and phase, a filter and the change points.
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
    /// Write one SVG chart per benchmark and phase into DIR.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Link of a commit in the charts, `{commit}` standing for its id [default: the GitHub
    /// commit page of the `origin` remote, when it is on GitHub].
    #[arg(long, value_name = "URL")]
    pub commit_url: Option<String>,
    /// Heading of the dashboard.
    #[arg(long, default_value = "convbench history")]
    pub title: String,
}

/// `cargo convbench history`.
pub fn run(args: &Args, a: &HistoryArgs) -> Result<u8> {
    let dashboard = a.html.is_some() || a.svg.is_some();
    let default_phase = if dashboard { "all" } else { "total" };
    let phases = phases(a.phase.as_deref().unwrap_or(default_phase))?;
    let valid = a.alpha > 0.0 && a.alpha < 1.0 && a.min_step.is_finite() && a.min_step >= 0.0;
    if !valid {
        return Err(Error::InvalidInput(format!(
            "--alpha {} must lie strictly between 0 and 1 and --min-step {} must be a finite \
             number, not negative",
            a.alpha, a.min_step
        )));
    }
    if let Some(url) = &a.commit_url
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        return Err(Error::InvalidInput(format!(
            "--commit-url `{url}` is not an http(s) URL; pass e.g. \
             `https://github.com/OWNER/REPO/commit/{{commit}}`"
        )));
    }
    for (flag, dir) in [("--html", &a.html), ("--svg", &a.svg)] {
        if let Some(dir) = dir {
            convbench::fs::check_output_folder(dir)
                .map_err(|error| Error::InvalidInput(format!("{flag}: {error}")))?;
        }
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
        let walk = store.history_walk(&slug, &a.set, a.benchmark.as_deref())?;
        for reason in &walk.unreadable {
            if !args.quiet {
                eprintln!("warning: skipped {reason}; the other commits are shown");
            }
        }
        let mut points = walk.points;
        points.retain(|point| phases.contains(&point.phase));
        series.extend(BenchmarkHistory::group(&slug, points, &change_points));
    }
    if dashboard {
        let commit_url = a.commit_url.clone().or_else(|| {
            store
                .remote_url("origin")
                .and_then(|remote| report::github_commit_url(&remote))
        });
        if let Some(dir) = &a.html {
            let path = dir.join("index.html");
            write_atomic(
                &path,
                &report::history_html(&series, &a.title, commit_url.as_deref()),
            )?;
            print_untrusted(&format!(
                "wrote the dashboard of {} charts to {}",
                series.len(),
                path.display()
            ));
        }
        if let Some(dir) = &a.svg {
            write_svgs(dir, &series, commit_url.as_deref())?;
        }
        return Ok(0);
    }
    match a.format {
        ListFormat::Json => print_untrusted(&json(&series)),
        ListFormat::Table if series.is_empty() => print_untrusted("no blessed values found in the history"),
        ListFormat::Table => print_untrusted(&table(&series)),
    }
    Ok(0)
}

/// One SVG per series into `dir`, named by [`report::history_svg_file_name`] (a numbered
/// suffix keeps two series whose names collide apart).
fn write_svgs(dir: &Path, series: &[BenchmarkHistory], commit_url: Option<&str>) -> Result<()> {
    let mut used = std::collections::HashSet::new();
    for history in series {
        let mut name = report::history_svg_file_name(history);
        let stem = name.trim_end_matches(".svg").to_string();
        let mut copy = 1;
        while !used.insert(name.clone()) {
            copy += 1;
            name = format!("{stem}-{copy}.svg");
        }
        write_atomic(&dir.join(&name), &report::history_svg(history, commit_url))?;
    }
    print_untrusted(&format!("wrote {} SVG charts to {}", series.len(), dir.display()));
    Ok(())
}

/// The phases `--phase` selects: `all`, or one phase as ids write it (`grad_input`) or as
/// tables show it (`grad-input`).
fn phases(name: &str) -> Result<Vec<Phase>> {
    if name == "all" {
        return Ok(Phase::ALL.to_vec());
    }
    convbench::report::parse_phase(name)
        .map(|phase| vec![phase])
        .map_err(|error| Error::InvalidInput(format!("{error} or `all`")))
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
                        "median_ns": p.median_ns,
                        "round_medians_ns": p.round_medians_ns, "round_spread": p.round_spread(),
                        "run_medians_ns": p.run_medians_ns, "run_spread": p.run_spread(),
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
            "rounds min–max ms",
            "kept runs min–max ms",
            "step",
            "commit message",
        ]);
    for history in series {
        for (index, p) in history.points.iter().enumerate() {
            let (rounds, runs) = (p.round_spread(), p.run_spread());
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
                format!("{}–{} ({})", ms(rounds.min_ns), ms(rounds.max_ns), rounds.count),
                format!("{}–{} ({})", ms(runs.min_ns), ms(runs.max_ns), runs.count),
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
    let mut bisects = Vec::new();
    for (history, step) in steps {
        if let Some(command) = bisect_command(history, step) {
            bisects.push(command);
        }
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
    let mut text = format!("{points}\nchange points:\n{changes}");
    if !bisects.is_empty() {
        bisects.dedup();
        text.push_str("\nto find the commit of a step among those between two blessings:\n");
        for command in bisects {
            text.push_str(&format!("  {command}\n"));
        }
    }
    text
}

/// The `bisect` command over a slowdown's range: from the last commit blessed at the old level
/// to the first at the new one, with the benchmark's selection flags where its id names them
/// (`model/stage/bBATCH/precision/backend`).
fn bisect_command(
    history: &convbench::baseline::BenchmarkHistory,
    step: &convbench::baseline::Step,
) -> Option<String> {
    let before = history.points.get(step.index.checked_sub(1)?)?;
    if step.relative_step <= 0.0 || before.commit == step.commit {
        return None;
    }
    let short = |commit: &str| commit.chars().take(12).collect::<String>();
    let mut command = format!(
        "cargo convbench bisect --good {} --bad {}",
        short(&before.commit),
        short(&step.commit)
    );
    if let [model, stage, batch, precision, _backend] =
        history.benchmark_id.split('/').collect::<Vec<_>>()[..]
        && let Some(batch) = batch.strip_prefix('b')
        && [model, stage, batch, precision].iter().all(|part| {
            part.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
    {
        command.push_str(&format!(
            " --model {model} --batch {batch} --precision {precision} --stage {stage}"
        ));
    }
    Some(command)
}
