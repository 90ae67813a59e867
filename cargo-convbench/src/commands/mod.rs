//! One file per subcommand.

pub mod ab;
pub mod adapters;
pub mod baseline;
pub mod bisect;
pub mod ci;
pub mod compare;
pub mod history;
pub mod init;
pub mod kernels;
pub mod list;
pub mod peers;
pub mod plot;
pub mod report;
pub mod run;
pub mod tune;
pub mod verify;

/// Loads the workspace (`--manifest-path`, or found from the current directory) and warns of
/// what its configuration hides ([`convbench::config::Workspace::notices`]): a setting that
/// does not apply is a mistake to fix, so the warning shows even with `--quiet`.
pub fn workspace(args: &convbench::cli::Global) -> convbench::Result<convbench::config::Workspace> {
    let workspace = convbench::config::load(args.manifest_path.as_deref())?;
    for notice in workspace.notices() {
        eprintln!("warning: {notice}");
    }
    Ok(workspace)
}
