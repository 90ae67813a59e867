//! `cargo convbench history`: the blessed value of each benchmark across the commits that
//! changed its baseline, with the spread between the blessed runs and the steps in its level.

use crate::output::print_untrusted;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::ListFormat;
use convbench::cli::history::HistoryArgs;
use convbench::config;
use convbench::report::{self, History};

/// `cargo convbench history`.
pub fn run(args: &Global, a: &HistoryArgs) -> Result<u8> {
    let request = a.request();
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
