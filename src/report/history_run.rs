//! `history` as a library value: the blessed values of each benchmark across the commits that
//! changed its baseline ([`crate::baseline::GitBaselineStore::history_series`]), and with
//! `--html` or `--svg` the dashboard written from them.

use super::ReportError;
use super::history::{check_commit_url, github_commit_url, history_html, history_svg_files};
use super::pivot::parse_phases;
use crate::Result;
use crate::baseline::{BenchmarkHistory, GitBaselineStore, HistoryQuery, change_point_config};
use crate::config::Workspace;
use crate::fs::{check_output_folder, write_atomically};
use crate::stats::ChangePointConfig;
use std::path::PathBuf;

/// What `history` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRequest {
    /// Only this benchmark id.
    pub benchmark: Option<String>,
    /// Only this adapter folder under the baseline directory.
    pub slug: Option<String>,
    /// The baseline set.
    pub set: String,
    /// One phase, or `all`; `None`: `all` for a dashboard, else `total`.
    pub phase: Option<String>,
    /// Significance of a change point: the largest permutation p-value accepted.
    pub alpha: f64,
    /// Smallest relative step reported as a change point, in percent.
    pub min_step_percent: f64,
    /// Write the dashboard page to this folder's `index.html`.
    pub html: Option<PathBuf>,
    /// Write one SVG chart per benchmark and phase into this folder.
    pub svg: Option<PathBuf>,
    /// Link of a commit in the charts, `{commit}` standing for its id; `None`: the GitHub
    /// commit page of the `origin` remote, when it is on GitHub.
    pub commit_url: Option<String>,
    /// Heading of the dashboard.
    pub title: String,
}

impl Default for HistoryRequest {
    fn default() -> Self {
        let change_points = ChangePointConfig::default();
        Self {
            benchmark: None,
            slug: None,
            set: "default".into(),
            phase: None,
            alpha: change_points.alpha,
            min_step_percent: change_points.min_relative_step * 100.0,
            html: None,
            svg: None,
            commit_url: None,
            title: "convbench history".into(),
        }
    }
}

/// What `history` found, and the dashboard files it wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// One series per benchmark and phase.
    pub series: Vec<BenchmarkHistory>,
    /// The dashboard page written.
    pub html: Option<PathBuf>,
    /// The folder the SVG charts were written into.
    pub svg: Option<PathBuf>,
}

impl HistoryRequest {
    /// Whether a dashboard (HTML or SVG) is asked for rather than a table or JSON.
    pub fn dashboard(&self) -> bool {
        self.html.is_some() || self.svg.is_some()
    }

    /// The query of the flags, checked before anything is read: phases, change-point settings,
    /// commit link and output folders (invalid input names the flag).
    pub fn query(&self) -> Result<HistoryQuery> {
        let default_phase = if self.dashboard() { "all" } else { "total" };
        let phases = parse_phases(self.phase.as_deref().unwrap_or(default_phase))?;
        let change_points = change_point_config(self.alpha, self.min_step_percent)?;
        if let Some(url) = &self.commit_url {
            check_commit_url(url)?;
        }
        for (flag, dir) in [("--html", &self.html), ("--svg", &self.svg)] {
            if let Some(dir) = dir {
                check_output_folder(dir).map_err(|source| ReportError::OutputFolder {
                    flag,
                    source: Box::new(source),
                })?;
            }
        }
        Ok(HistoryQuery {
            slug: self.slug.clone(),
            set: self.set.clone(),
            benchmark: self.benchmark.clone(),
            phases,
            change_points,
        })
    }

    /// Reads `query` (from [`HistoryRequest::query`]) from the workspace's git history and
    /// writes the dashboard asked for. `on_unreadable` hears each commit skipped and why.
    pub fn run(
        &self,
        query: &HistoryQuery,
        workspace: &Workspace,
        on_unreadable: &mut dyn FnMut(&str),
    ) -> Result<History> {
        let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
        let series = store.history_series(query, on_unreadable)?;
        if series.is_empty() {
            check_names_blessed(&store, query)?;
        }
        let mut history = History {
            series,
            html: None,
            svg: None,
        };
        if !self.dashboard() {
            return Ok(history);
        }
        let commit_url = self.commit_url.clone().or_else(|| {
            store
                .remote_url("origin")
                .and_then(|remote| github_commit_url(&remote))
        });
        if let Some(dir) = &self.html {
            let path = dir.join("index.html");
            let page = history_html(&history.series, &self.title, commit_url.as_deref());
            write_atomically(&path, page.as_bytes())?;
            history.html = Some(path);
        }
        if let Some(dir) = &self.svg {
            for (name, svg) in history_svg_files(&history.series, commit_url.as_deref()) {
                write_atomically(&dir.join(&name), svg.as_bytes())?;
            }
            history.svg = Some(dir.clone());
        }
        Ok(history)
    }
}

/// With nothing found for `--set`, `--benchmark` or `--slug`, the error naming what there is
/// when it holds something: a misspelt id reads otherwise as a history never blessed. The
/// second read (without the filters) happens only on this path.
fn check_names_blessed(store: &GitBaselineStore, query: &HistoryQuery) -> Result<()> {
    // A set named that is not there is a typo; the default set not blessed yet (others are)
    // is a fact, said beside the empty history.
    let sets = store.sets();
    if query.set != crate::baseline::DEFAULT_SET && !sets.is_empty() && !sets.contains(&query.set) {
        return Err(ReportError::NoSuchSet {
            set: query.set.clone(),
            known: sets,
        }
        .into());
    }
    if query.benchmark.is_none() && query.slug.is_none() {
        return Ok(());
    }
    let unfiltered = HistoryQuery {
        slug: None,
        benchmark: None,
        ..query.clone()
    };
    let all = store.history_series(&unfiltered, &mut |_| {})?;
    if all.is_empty() {
        return Ok(());
    }
    let known = |of: fn(&BenchmarkHistory) -> &str| {
        let mut names: Vec<String> = all.iter().map(|s| of(s).to_string()).collect();
        names.sort();
        names.dedup();
        names
    };
    if let Some(slug) = &query.slug {
        let slugs = known(|s| s.slug.as_str());
        if !slugs.contains(slug) {
            return Err(ReportError::NothingNamed {
                flag: "--slug",
                value: slug.clone(),
                set: query.set.clone(),
                what: "adapter folders",
                known: slugs,
            }
            .into());
        }
    }
    if let Some(benchmark) = &query.benchmark {
        let in_slug: Vec<BenchmarkHistory> = all
            .into_iter()
            .filter(|s| query.slug.as_ref().is_none_or(|slug| *slug == s.slug))
            .collect();
        let mut ids: Vec<String> = in_slug.iter().map(|s| s.benchmark_id.clone()).collect();
        ids.sort();
        ids.dedup();
        if !ids.is_empty() && !ids.contains(benchmark) {
            return Err(ReportError::NothingNamed {
                flag: "--benchmark",
                value: benchmark.clone(),
                set: query.set.clone(),
                what: "benchmarks",
                known: ids,
            }
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::results::Phase;

    #[test]
    fn the_table_shows_the_total_and_a_dashboard_every_phase() {
        let table = HistoryRequest::default().query().expect("valid");
        assert_eq!(table.phases, [Phase::Total]);
        let dir = tempfile::tempdir().expect("a temporary folder");
        let dashboard = HistoryRequest {
            svg: Some(dir.path().to_path_buf()),
            ..HistoryRequest::default()
        };
        assert!(dashboard.query().expect("valid").phases.len() > 1);
    }

    #[test]
    fn an_output_folder_that_is_a_file_is_invalid_input_naming_its_flag() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let file = dir.path().join("index.html");
        std::fs::write(&file, "").expect("a file");
        let request = HistoryRequest {
            html: Some(file),
            ..HistoryRequest::default()
        };
        let error = request.query().expect_err("a file, not a folder");
        assert!(
            matches!(&error, Error::Report(e) if matches!(&**e, ReportError::OutputFolder { flag: "--html", .. })),
            "{error:?}"
        );
        assert!(error.to_string().starts_with("--html: "), "{error}");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    }
}
