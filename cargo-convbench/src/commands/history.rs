//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline file.

use super::adapters::ListFormat;
use crate::cli::Args;
use crate::output::print;
use comfy_table::Table;
use convbench::baseline::{GitBaselineStore, HistoryPoint};
use convbench::config;
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

/// `cargo convbench history`.
pub fn run(args: &Args, a: &HistoryArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
    let slugs: Vec<String> = match &a.slug {
        Some(s) => vec![s.clone()],
        None => {
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
            slugs
        }
    };
    let mut points: Vec<(String, HistoryPoint)> = Vec::new();
    for slug in &slugs {
        points.extend(
            store
                .history(slug, &a.set, a.benchmark.as_deref())?
                .into_iter()
                .map(|p| (slug.clone(), p)),
        );
    }
    if a.format == ListFormat::Json {
        let rows: Vec<_> = points
            .iter()
            .map(|(slug, p)| {
                serde_json::json!({
                    "adapter": slug, "commit": p.commit, "time_unix_s": p.time_unix_s, "summary": p.summary,
                    "benchmark": p.benchmark_id, "total_median_ns": p.phase_total_median_ns,
                })
            })
            .collect();
        print(&serde_json::to_string_pretty(&rows).unwrap_or_default());
        return Ok(0);
    }
    if points.is_empty() {
        print("no blessed values found in the history");
        return Ok(0);
    }
    let mut table = Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header([
            "benchmark",
            "commit",
            "time (UTC)",
            "total median ms",
            "commit message",
        ]);
    for (_, p) in &points {
        table.add_row([
            p.benchmark_id.clone(),
            p.commit.chars().take(10).collect(),
            convbench::report::rfc3339_utc(p.time_unix_s.max(0) as u64),
            format!("{:.3}", p.phase_total_median_ns / 1e6),
            p.summary.clone(),
        ]);
    }
    print(&table.to_string());
    Ok(0)
}
