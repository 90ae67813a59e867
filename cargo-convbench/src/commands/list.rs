//! `cargo convbench list`: models (parameters, forward FLOPs), suites, kernels and kernel
//! variants, and in a workspace that declares them, its own networks and kernels (what `run
//! --model` and `run --kernel user:NAME` accept there).

use crate::output::print;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::ListFormat;
use convbench::cli::list::ListArgs;
use convbench::config;

/// Lists models, suites and kernels.
pub fn run(args: &Global, a: &ListArgs) -> Result<u8> {
    // Outside a cargo workspace, or with a configuration that does not load, the zoo alone:
    // `list` answers what convbench can run before anything is set up. A workspace named with
    // --manifest-path is what the user asked about, so its failure is the answer (exit 2 or 3).
    let workspace = match config::load(args.manifest_path.as_deref()) {
        Ok(workspace) => Some(workspace),
        Err(error) if args.manifest_path.is_some() => return Err(error),
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
