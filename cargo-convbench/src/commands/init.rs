//! `cargo convbench init`: puts a workspace under convbench's gate ([`convbench::init`]).

use convbench::Result;
use convbench::cli::Global;
use convbench::cli::init::InitArgs;

/// `cargo convbench init`.
pub fn run(args: &Global, a: &InitArgs) -> Result<u8> {
    let workspace = super::workspace(args)?;
    let mut lines = convbench::init::init(&workspace, &a.kernel, !a.no_workflows, a.force)?;
    // The paths below are the workspace root's; run from a member crate, say which folder
    // that is, or they read as paths from where the user stands.
    let canonical = |path: &std::path::Path| std::fs::canonicalize(path).ok();
    let here = std::env::current_dir().ok().and_then(|dir| canonical(&dir));
    if here != canonical(&workspace.root) {
        lines.insert(0, format!("in the workspace root {}:", workspace.root.display()));
    }
    crate::output::print(&lines.join("\n"));
    Ok(0)
}
