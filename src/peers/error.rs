//! What can go wrong with a peer, as values: one that is not installed or not known, a request
//! it cannot serve, a run that fails, and output that does not keep the peer protocol.

use super::Peer;
use crate::ErrorKind;
use crate::model::ShapeError;
use std::path::PathBuf;
use std::process::ExitStatus;

/// An error of `peers`: a peer, its command, its request or its output. Each message names the
/// peer or the flag and the next step (docs/peers.md has the protocol).
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// `--peer` names no peer convbench knows.
    #[error(
        "unknown peer `{name}`; use one of {} (Burn is timed per layer by \
         scripts/burn-vs-convbench.sh, see docs/peers.md)",
        Peer::ALL.map(Peer::name).join(", ")
    )]
    UnknownPeer {
        /// The name given.
        name: String,
    },
    /// `COMMAND --describe` could not be started: the peer is not installed.
    #[error(
        "the {} peer is not installed: `{} --describe` could not start: {source}; install it \
         with `{}`, or point --peer-command at an installed one",
        peer.name(),
        command.join(" "),
        peer.install()
    )]
    NotStarted {
        /// The peer.
        peer: Peer,
        /// Its command, in words.
        command: Vec<String>,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `COMMAND --describe` failed: the peer is not installed (or broken).
    #[error(
        "the {} peer is not installed: `{} --describe` failed ({status}): {last_line}; install it \
         with `{}`, or point --peer-command at an installed one",
        peer.name(),
        command.join(" "),
        peer.install()
    )]
    DescribeFailed {
        /// The peer.
        peer: Peer,
        /// Its command, in words.
        command: Vec<String>,
        /// How it ended.
        status: ExitStatus,
        /// The last line it wrote to stderr that is not blank, trimmed (empty if none).
        last_line: String,
    },
    /// `COMMAND --describe` printed something other than a [`super::PeerDescription`].
    #[error(
        "`{} --describe` printed no peer description (see docs/peers.md): {source}",
        command.join(" ")
    )]
    NoDescription {
        /// The peer's command, in words.
        command: Vec<String>,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// `--peer-command` gives no words.
    #[error("--peer-command is empty")]
    EmptyCommand,
    /// No `--peer`.
    #[error("name a peer with --peer (see docs/peers.md)")]
    NoPeer,
    /// A selection of suites or shapes, or of no model: peers build networks of the zoo.
    #[error("peers runs models of the zoo: name them with --model (see `cargo convbench list`)")]
    NotZooModels,
    /// No batch to run.
    #[error("peers needs --batch (the peer runs the batches convbench runs)")]
    NoBatch,
    /// `--samples 0` or `--rounds 0`.
    #[error("--samples and --rounds must be at least 1")]
    ZeroCount,
    /// A network of the zoo whose FLOPs cannot be counted.
    #[error("{model}: {source}")]
    Flops {
        /// The network.
        model: String,
        /// Which layer's shapes fail, and why.
        #[source]
        source: ShapeError,
    },
    /// The peer's run could not be started.
    #[error("could not start `{}`: {source}", command.join(" "))]
    RunNotStarted {
        /// The peer's command, in words.
        command: Vec<String>,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The peer's run failed.
    #[error("the {} peer failed ({status}); its messages are above", peer.name())]
    RunFailed {
        /// The peer.
        peer: Peer,
        /// How it ended.
        status: ExitStatus,
    },
    /// The peer's output file is not a [`super::PeerOutput`].
    #[error("{} is not a peer's output (see docs/peers.md): {source}", path.display())]
    NotPeerOutput {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// The peer ran a network it was not asked to.
    #[error("the {backend} peer reported {model}, which it was not asked to run")]
    NotAsked {
        /// The peer's backend name, e.g. `torch-cpu`.
        backend: String,
        /// The network it reported.
        model: String,
    },
    /// A benchmark of the peer whose phases have no samples, or different numbers of them.
    #[error(
        "the {backend} peer's {model} at batch {batch}: every phase must have the same number of \
         samples, at least one"
    )]
    UnevenSamples {
        /// The peer's backend name, e.g. `torch-cpu`.
        backend: String,
        /// The network.
        model: String,
        /// Images per iteration.
        batch: usize,
    },
}

impl PeerError {
    /// The exit-code category: a peer that is not installed or whose run fails is the
    /// environment; names, flags and what the peer wrote are input.
    pub fn kind(&self) -> ErrorKind {
        match self {
            PeerError::NotStarted { .. }
            | PeerError::DescribeFailed { .. }
            | PeerError::RunNotStarted { .. }
            | PeerError::RunFailed { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}
