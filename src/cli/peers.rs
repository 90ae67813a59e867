//! Flags of `cargo convbench peers`.

use crate::Result;
use crate::cli::RunArgs;
use crate::peers::PeerRequest;

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
    /// convbench's side, whose models, batches, precisions and samples the peer runs too.
    #[command(flatten)]
    pub run: RunArgs,
}

impl PeersArgs {
    /// The library's peer request: an unknown peer, or a command for a peer not named, is an
    /// error naming it.
    pub fn request(&self) -> Result<PeerRequest> {
        PeerRequest::new(&self.peer, &self.peer_command, self.run.request())
    }
}
