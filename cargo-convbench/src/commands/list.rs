//! `cargo convbench list`: models (parameters, forward FLOPs), suites, kernels and kernel
//! variants, and in a workspace that declares them, its own networks and kernels (what `run
//! --model` and `run --kernel user:NAME` accept there).

use crate::args::Global;
use crate::args::ListFormat;
use crate::output::print;
use convbench::Result;
use convbench::config;

/// Arguments of `list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

/// Lists models, suites and kernels.
pub fn run(args: &Global, a: &ListArgs) -> Result<u8> {
    // Outside a cargo workspace, or with a configuration that does not load, the zoo alone:
    // `list` answers what convbench can run before anything is set up.
    let workspace = match config::load(args.manifest_path.as_deref()) {
        Ok(workspace) => Some(workspace),
        Err(error) => {
            if !args.quiet {
                eprintln!("notice: listing convbench's own models and kernels only: {error}");
            }
            None
        }
    };
    print(&convbench::report::listing(
        workspace.as_ref(),
        a.format == ListFormat::Json,
    ));
    Ok(0)
}
