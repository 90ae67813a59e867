//! `cargo convbench list`: models (parameters, forward FLOPs), suites, kernels and kernel
//! variants, and in a workspace that declares them, its own networks and kernels (what `run
//! --model` and `run --kernel user:NAME` accept there).

use crate::output::print;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::ListFormat;
use convbench::cli::list::ListArgs;

/// Lists models, suites and kernels.
pub fn run(args: &Global, a: &ListArgs) -> Result<u8> {
    // Outside a cargo workspace the zoo alone: `list` answers what convbench can run before
    // anything is set up. A workspace whose configuration does not load (a broken convbench.toml
    // or kernel declaration) still gets the zoo's listing, then the error and its exit code (2
    // or 3), as every other command would give it: a notice alone, hidden by --quiet, let a
    // script read exit 0 from a workspace no command can run in.
    let (workspace, error) = match super::workspace(args) {
        Ok(workspace) => (Some(workspace), None),
        Err(error) if args.manifest_path.is_some() => return Err(error),
        Err(error) => {
            eprintln!(
                "listing convbench's own models and kernels only: the workspace's configuration does not load"
            );
            (None, Some(error))
        }
    };
    print(&convbench::report::listing(
        workspace.as_ref(),
        a.format == ListFormat::Json,
    ));
    error.map_or(Ok(0), Err)
}
