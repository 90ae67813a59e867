//! `cargo convbench peers`: another framework and convbench on one selection, rounds
//! interleaved, into one record; prints the seeds' table of backends.

use crate::args::{RunArgs, StageArg};
use crate::cli::Args;
use crate::output::{check_writable, print, write_atomic};
use crate::progress::run_sweep;
use convbench::peers::{PeerRequest, PeerSession};
use convbench::results::Stage;
use convbench::{Result, config};

/// Arguments of `peers`: `run`'s, and the peer.
#[derive(Debug, clap::Args)]
pub struct PeersArgs {
    /// The peer: `torch` (the package of peers/torch; see docs/peers.md).
    #[arg(long)]
    pub peer: String,
    /// The command that starts the peer, words split on spaces (default: the peer's own).
    #[arg(long, env = "CONVBENCH_PEER_COMMAND", value_name = "COMMAND")]
    pub peer_command: Option<String>,
    /// Several stages, comma-separated (`eval,train`), instead of the one of --stage.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub stages: Vec<StageArg>,
    /// convbench's side, whose models, batches, precisions and samples the peer runs too.
    #[command(flatten)]
    pub run: RunArgs,
}

/// `cargo convbench peers`.
pub fn run(args: &Args, a: &PeersArgs) -> Result<u8> {
    if let Some(out) = &a.run.out {
        check_writable(out)?;
    }
    let stages = (a.stages.iter().copied())
        .chain(a.stages.is_empty().then_some(a.run.selection.stage))
        .map(|s| {
            if s == StageArg::Eval {
                Stage::Eval
            } else {
                Stage::Train
            }
        });
    let request = PeerRequest {
        peer: a.peer.parse()?,
        command: (a.peer_command.iter())
            .flat_map(|c| c.split_whitespace())
            .map(String::from)
            .collect(),
        sweep: a.run.request(),
        stages: stages.collect(),
        rounds: a.run.rounds,
    };
    let workspace = config::load(args.manifest_path.as_deref())?;
    let session = PeerSession::prepare(request, &workspace.target_dir.join("convbench/peers"))?;
    let record = session.run(
        &mut |sweep| run_sweep(sweep, &workspace, args.quiet, None).and_then(|(r, e)| e.map_or(Ok(r), Err)),
        &mut |round, rounds| {
            if !args.quiet {
                eprintln!("round {round} of {rounds} done: convbench, then {}", a.peer);
            }
        },
    )?;
    print(&session.tables(&record)?);
    if let Some(out) = &a.run.out {
        write_atomic(out, &record.to_json())?;
    }
    Ok(0)
}
