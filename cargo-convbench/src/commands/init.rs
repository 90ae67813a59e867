//! `cargo convbench init`: puts a workspace under convbench's gate ([`convbench::init`]).

use convbench::Result;
use convbench::cli::Global;
use convbench::cli::init::InitArgs;

/// `cargo convbench init`.
pub fn run(args: &Global, a: &InitArgs) -> Result<u8> {
    let workspace = super::workspace(args)?;
    let lines = convbench::init::init(&workspace, &a.kernel, !a.no_workflows, a.force)?;
    crate::output::print(&lines.join("\n"));
    Ok(0)
}
