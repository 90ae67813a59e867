//! Flags of `cargo convbench history`.

use crate::cli::ListFormat;
use crate::report::HistoryRequest;
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
    #[arg(long, default_value = crate::baseline::DEFAULT_SET)]
    pub set: String,
    /// Only this phase (`total`, `forward`, `grad_input`, ...) or `all` [default: `total` in the
    /// table and JSON, `all` in the dashboard].
    #[arg(long)]
    pub phase: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Significance of a change point: the largest permutation p-value accepted.
    #[arg(long, default_value_t = HistoryRequest::default().alpha, allow_negative_numbers = true)]
    pub alpha: f64,
    /// Smallest relative step reported as a change point, in percent (`5` or `5%`).
    #[arg(long, default_value_t = HistoryRequest::default().min_step_percent, value_parser = crate::cli::percent, allow_hyphen_values = true)]
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

impl HistoryArgs {
    /// The library's history request.
    pub fn request(&self) -> HistoryRequest {
        HistoryRequest {
            benchmark: self.benchmark.clone(),
            slug: self.slug.clone(),
            set: self.set.clone(),
            phase: self.phase.clone(),
            alpha: self.alpha,
            min_step_percent: self.min_step,
            html: self.html.clone(),
            svg: self.svg.clone(),
            commit_url: self.commit_url.clone(),
            title: self.title.clone(),
        }
    }
}
