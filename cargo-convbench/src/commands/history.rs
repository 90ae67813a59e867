//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline, with the spread between the blessed runs and the steps in its level.

use crate::args::Global;
use crate::args::ListFormat;
use crate::output::print_untrusted;
use convbench::Result;
use convbench::config;
use convbench::report::{self, History, HistoryRequest};
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
    #[arg(long, default_value_t = HistoryRequest::default().alpha)]
    pub alpha: f64,
    /// Smallest relative step reported as a change point, in percent.
    #[arg(long, default_value_t = HistoryRequest::default().min_step_percent)]
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
    let request = HistoryRequest {
        benchmark: a.benchmark.clone(),
        slug: a.slug.clone(),
        set: a.set.clone(),
        phase: a.phase.clone(),
        alpha: a.alpha,
        min_step_percent: a.min_step,
        html: a.html.clone(),
        svg: a.svg.clone(),
        commit_url: a.commit_url.clone(),
        title: a.title.clone(),
    };
    let query = request.query()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let History { series, html, svg } = request.run(&query, &workspace, &mut |reason| {
        if !args.quiet {
            eprintln!("warning: skipped {reason}; the other commits are shown");
        }
    })?;
    if let Some(path) = html {
        print_untrusted(&format!(
            "wrote the dashboard of {} charts to {}",
            series.len(),
            path.display()
        ));
    }
    if let Some(dir) = svg {
        print_untrusted(&format!("wrote {} SVG charts to {}", series.len(), dir.display()));
    }
    if request.dashboard() {
        return Ok(0);
    }
    match a.format {
        ListFormat::Json => print_untrusted(&report::history_json(&series)),
        ListFormat::Table if series.is_empty() => print_untrusted("no blessed values found in the history"),
        ListFormat::Table => print_untrusted(&report::history_table(&series)),
    }
    Ok(0)
}
