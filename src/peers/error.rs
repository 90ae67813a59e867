//! What can go wrong with a peer, as values: one that is not installed or not known, a request
//! it cannot serve, a run that fails, and output that does not keep the peer protocol.

use super::Peer;
use crate::ErrorKind;
use crate::model::{Precision, ShapeError};
use crate::results::{RecordProblem, Stage};
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
    /// `COMMAND --describe` could not be started: with the peer's default command, the peer is
    /// not installed; with a `--peer-command`, that command is wrong.
    #[error(
        "{}: `{} --describe` could not start: {source}; {}",
        who(*peer, *default),
        command.join(" "),
        next_step(*peer, *default)
    )]
    NotStarted {
        /// The peer.
        peer: Peer,
        /// Its command, in words.
        command: Vec<String>,
        /// Whether the command is the peer's default (not one `--peer-command` gave).
        default: bool,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `COMMAND --describe` failed: with the peer's default command, the peer is not installed
    /// (or broken); with a `--peer-command`, that command is wrong.
    #[error(
        "{}: `{} --describe` failed ({status}){}; {}",
        who(*peer, *default),
        command.join(" "),
        said(last_line),
        next_step(*peer, *default)
    )]
    DescribeFailed {
        /// The peer.
        peer: Peer,
        /// Its command, in words.
        command: Vec<String>,
        /// Whether the command is the peer's default (not one `--peer-command` gave).
        default: bool,
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
    /// `COMMAND --describe` printed more than a description can take: not a peer.
    #[error(
        "`{} --describe` printed more than {max_bytes} bytes, not a peer description (see \
         docs/peers.md); point --peer-command at a peer",
        command.join(" ")
    )]
    DescriptionTooLarge {
        /// The peer's command, in words.
        command: Vec<String>,
        /// The most bytes read, [`super::MAX_DESCRIPTION_BYTES`].
        max_bytes: u64,
    },
    /// A peer did not end within its deadline, and was killed.
    #[error(
        "the {} peer did not answer `{} {what}` within {deadline} and was stopped; give it \
         longer with --peer-timeout or {}, or check why it hangs",
        peer.name(),
        command.join(" "),
        super::TIMEOUT_ENV
    )]
    TimedOut {
        /// The peer.
        peer: Peer,
        /// Its command, in words.
        command: Vec<String>,
        /// What it was asked: `--describe`, or `--networks ...` for a run.
        what: &'static str,
        /// The deadline, as people write it (`10m`).
        deadline: String,
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
    #[error("could not start the {} peer's run `{}`: {source}", peer.name(), command.join(" "))]
    RunNotStarted {
        /// The peer.
        peer: Peer,
        /// The peer's command, in words.
        command: Vec<String>,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The peer's run failed.
    #[error(
        "the {} peer's run `{} --networks ...` failed ({status}); its messages are above",
        peer.name(),
        command.join(" ")
    )]
    RunFailed {
        /// The peer.
        peer: Peer,
        /// The peer's command, in words.
        command: Vec<String>,
        /// How it ended.
        status: ExitStatus,
    },
    /// The peer's run succeeded but left no output file: it did not keep the protocol.
    #[error(
        "the {} peer's run `{} --networks ...` succeeded but wrote nothing to {}; a peer writes \
         its benchmarks to the file --out names (see docs/peers.md)",
        peer.name(),
        command.join(" "),
        path.display()
    )]
    NoOutput {
        /// The peer.
        peer: Peer,
        /// The peer's command, in words.
        command: Vec<String>,
        /// The file it was asked to write.
        path: PathBuf,
    },
    /// The peer's output file is larger than the request can account for.
    #[error(
        "the {} peer's output {} is {bytes} bytes, more than the {max_bytes} its request can \
         fill (see docs/peers.md); check what the peer writes",
        peer.name(),
        path.display()
    )]
    OutputTooLarge {
        /// The peer.
        peer: Peer,
        /// The file.
        path: PathBuf,
        /// Its size, in bytes.
        bytes: u64,
        /// The most convbench reads, in bytes.
        max_bytes: u64,
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
    /// The peer ran a network or a benchmark it was not asked to.
    #[error("the {backend} peer reported {what}, which it was not asked to run")]
    NotAsked {
        /// The peer's backend name, e.g. `torch-cpu`.
        backend: String,
        /// The network, or the benchmark's id.
        what: String,
    },
    /// The peer reported nothing for a benchmark it was asked to run.
    #[error(
        "the {backend} peer reported nothing for {model} at batch {batch} ({}, {}); a peer \
         reports every model, batch, stage and precision it is given (see docs/peers.md)",
        stage.as_str(),
        precision.as_str()
    )]
    NothingFor {
        /// The peer's backend name, e.g. `torch-cpu`.
        backend: String,
        /// The network.
        model: String,
        /// Train or eval.
        stage: Stage,
        /// Images per iteration.
        batch: usize,
        /// Storage precision.
        precision: Precision,
    },
    /// The peer's benchmarks break what a record holds (a sample of 0 ns, a benchmark twice).
    #[error(
        "the {backend} peer's output is not a measurement: {}; fix the peer (see docs/peers.md)",
        problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Invalid {
        /// The peer's backend name, e.g. `torch-cpu`.
        backend: String,
        /// Every offender, as a record's validation names them.
        problems: Vec<RecordProblem>,
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
    /// The exit-code category: a peer that is not installed, hangs, or whose run fails or
    /// writes nothing is the environment; names, flags and what the peer wrote are input.
    pub fn kind(&self) -> ErrorKind {
        match self {
            PeerError::NotStarted { .. }
            | PeerError::DescribeFailed { .. }
            | PeerError::TimedOut { .. }
            | PeerError::RunNotStarted { .. }
            | PeerError::RunFailed { .. }
            | PeerError::NoOutput { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}

/// Who failed to describe itself: a peer not installed (its default command) or the command
/// `--peer-command` gave.
fn who(peer: Peer, default: bool) -> String {
    if default {
        format!("the {} peer is not installed", peer.name())
    } else {
        format!(
            "the --peer-command of the {} peer does not start a peer",
            peer.name()
        )
    }
}

/// What to do about a peer that does not describe itself.
fn next_step(peer: Peer, default: bool) -> String {
    if default {
        format!(
            "install it with `{}`{}, or point --peer-command at an installed one",
            peer.install(),
            peer.install_note()
        )
    } else {
        "check the command (its path, and that it is executable and speaks the peer protocol of \
         docs/peers.md)"
            .to_string()
    }
}

/// `: LINE` when the peer said something on stderr.
fn said(last_line: &str) -> String {
    if last_line.is_empty() {
        String::new()
    } else {
        format!(": {last_line}")
    }
}
