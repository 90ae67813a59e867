//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline, with the spread between the blessed runs and the steps in its level.

use crate::output::print_untrusted;
use convbench::Result;
use convbench::baseline::GitBaselineStore;
use convbench::cli::Global;
use convbench::cli::ListFormat;
use convbench::cli::history::HistoryArgs;
use convbench::config;
use convbench::report::{self, History};

/// `cargo convbench history`.
pub fn run(args: &Global, a: &HistoryArgs) -> Result<u8> {
    let request = a.request();
    let query = request.query()?;
    let workspace = super::workspace(args)?;
    let History { series, html, svg } = request.run(&query, &workspace, &mut |reason| {
        eprintln!("warning: skipped {reason}; the other commits are shown");
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
        ListFormat::Table if series.is_empty() => print_untrusted(&nothing_blessed(&workspace, a)),
        ListFormat::Table => print_untrusted(&report::history_table(&series)),
    }
    Ok(0)
}

/// What an empty history read, and what else there is to read: the set, and the sets that
/// exist (a history of the wrong set looks the same as no history at all).
fn nothing_blessed(workspace: &config::Workspace, a: &HistoryArgs) -> String {
    let dir = workspace.baseline_dir();
    let mut text = format!(
        "no blessed values of set `{}` in the history of {}",
        a.set,
        dir.display()
    );
    if let Some(benchmark) = &a.benchmark {
        text.push_str(&format!(" for {benchmark}"));
    }
    let sets = GitBaselineStore::open(&workspace.root, &dir)
        .map(|store| store.sets())
        .unwrap_or_default();
    let others: Vec<&String> = sets.iter().filter(|set| **set != a.set).collect();
    if others.is_empty() {
        text.push_str("; bless one with `cargo convbench baseline update`");
    } else {
        let names: Vec<String> = others.iter().map(|set| format!("`{set}`")).collect();
        text.push_str(&format!("; sets there: {} (pass --set NAME)", names.join(", ")));
    }
    text
}
