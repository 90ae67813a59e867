//! `cargo convbench init`: puts a workspace under convbench's gate ([`convbench::init`]).

use convbench::cli::Global;
use convbench::cli::init::InitArgs;
use convbench::{Result, config};

/// `cargo convbench init`.
pub fn run(args: &Global, a: &InitArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    let lines = convbench::init::init(&workspace, &a.kernel, !a.no_workflows, a.force)?;
    crate::output::print(&lines.join("\n"));
    Ok(0)
}
