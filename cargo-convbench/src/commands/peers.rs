//! `cargo convbench peers`: another framework and convbench on one selection, rounds
//! interleaved, into one record; prints the seeds' table of backends.

use crate::args::Global;
use crate::args::{RunArgs, StageArg};
use crate::output::{check_writable, print, write_atomic};
use crate::progress::run_sweep;
use convbench::peers::{PeerRequest, PeerSession};
use convbench::results::Stage;
use convbench::{Result, config};

/// Arguments of `peers`: `run`'s, and the peer.
#[derive(Debug, clap::Args)]
pub struct PeersArgs {
    /// Peers, comma-separated: `torch` (peers/torch), `jax` (scripts/cpu-peer.py); the first
    /// is the reference of the ratios (docs/peers.md).
    #[arg(long, value_delimiter = ',', required = true)]
    pub peer: Vec<String>,
    /// The command that starts a peer, words split on spaces, as `NAME=COMMAND` (or just
    /// `COMMAND` with one peer); default: the peer's own.
    #[arg(long, value_name = "[NAME=]COMMAND")]
    pub peer_command: Vec<String>,
    /// Several stages, comma-separated (`eval,train`), instead of the one of --stage.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub stages: Vec<StageArg>,
    /// convbench's side, whose models, batches, precisions and samples the peer runs too.
    #[command(flatten)]
    pub run: RunArgs,
}

/// `cargo convbench peers`.
pub fn run(args: &Global, a: &PeersArgs) -> Result<u8> {
    if let Some(out) = &a.run.out {
        check_writable(out)?;
    }
    let stages: Vec<Stage> = a.stages.iter().map(|&stage| stage.into()).collect();
    let request = PeerRequest::new(&a.peer, &a.peer_command, a.run.request(), &stages)?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let session = PeerSession::prepare(request, &workspace.target_dir.join("convbench/peers"))?;
    let (record, error) = session.run(
        &mut |sweep| run_sweep(sweep, &workspace, args.quiet, None).and_then(|(r, e)| e.map_or(Ok(r), Err)),
        &mut |round, rounds| {
            if !args.quiet {
                eprintln!(
                    "round {round} of {rounds} done: convbench, then {}",
                    a.peer.join(", ")
                );
            }
        },
    );
    // The rounds that finished are written and printed even when a later one failed; written
    // first, so that a table that cannot be drawn loses none of them.
    if let Some(record) = &record {
        if let Some(out) = &a.run.out {
            write_atomic(out, &record.to_json())?;
            if !args.quiet && !record.complete {
                eprintln!(
                    "wrote {} (incomplete: {} of {} rounds)",
                    out.display(),
                    record.settings.rounds,
                    a.run.rounds
                );
            }
        }
        print(&session.tables(record)?);
    }
    error.map_or(Ok(0), Err)
}
