//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline, with the spread between the blessed runs and the steps in its level.

use crate::args::ListFormat;
use crate::cli::Args;
use crate::output::{print_untrusted, write_atomic};
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
    for slug in store.adapter_slugs(a.slug.as_deref())? {
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
        ListFormat::Json => print_untrusted(&report::history_json(&series)),
        ListFormat::Table if series.is_empty() => print_untrusted("no blessed values found in the history"),
        ListFormat::Table => print_untrusted(&report::history_table(&series)),
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
