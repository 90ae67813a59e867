//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline, with the spread between the blessed runs and the steps in its level.

use crate::args::Global;
use crate::args::ListFormat;
use crate::output::{print_untrusted, write_atomic};
use convbench::baseline::{GitBaselineStore, HistoryQuery, change_point_config};
use convbench::config;
use convbench::stats::ChangePointConfig;
use convbench::{Error, Result, report};
use std::path::PathBuf;

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
pub fn run(args: &Global, a: &HistoryArgs) -> Result<u8> {
    let dashboard = a.html.is_some() || a.svg.is_some();
    let default_phase = if dashboard { "all" } else { "total" };
    let phases = report::parse_phases(a.phase.as_deref().unwrap_or(default_phase))?;
    let change_points = change_point_config(a.alpha, a.min_step)?;
    if let Some(url) = &a.commit_url {
        report::check_commit_url(url)?;
    }
    for (flag, dir) in [("--html", &a.html), ("--svg", &a.svg)] {
        if let Some(dir) = dir {
            convbench::fs::check_output_folder(dir)
                .map_err(|error| Error::InvalidInput(format!("{flag}: {error}")))?;
        }
    }
    let workspace = config::load(args.manifest_path.as_deref())?;
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
    let query = HistoryQuery {
        slug: a.slug.clone(),
        set: a.set.clone(),
        benchmark: a.benchmark.clone(),
        phases,
        change_points,
    };
    let series = store.history_series(&query, &mut |reason| {
        if !args.quiet {
            eprintln!("warning: skipped {reason}; the other commits are shown");
        }
    })?;
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
            for (name, svg) in report::history_svg_files(&series, commit_url.as_deref()) {
                write_atomic(&dir.join(&name), &svg)?;
            }
            print_untrusted(&format!("wrote {} SVG charts to {}", series.len(), dir.display()));
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
