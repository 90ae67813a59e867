//! `cargo convbench init`: puts a workspace under convbench's gate ([`convbench::init`]).

use crate::args::Global;
use convbench::{Result, config};

/// Arguments of `init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Name of the sample kernel (its variant is `user:NAME`).
    #[arg(long, default_value = "my-conv", value_name = "NAME")]
    pub kernel: String,
    /// Do not write the GitHub Actions workflows.
    #[arg(long)]
    pub no_workflows: bool,
    /// Overwrite files that exist with other contents.
    #[arg(long)]
    pub force: bool,
}

/// `cargo convbench init`.
pub fn run(args: &Global, a: &InitArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    let lines = convbench::init::init(&workspace, &a.kernel, !a.no_workflows, a.force)?;
    crate::output::print(&lines.join("\n"));
    Ok(0)
}
