//! What a stop (SIGINT, SIGTERM) cut short, as a value: the work that had not finished when the
//! harness saw the [`super::Interrupt`], with how far it got where that is counted.

use crate::ErrorKind;

/// The work an interruption stopped before; the message is `interrupted before ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Interrupted {
    /// Verifying the ops of a benchmark.
    #[error("interrupted before {target} was verified")]
    Verifying {
        /// The benchmark's name (model or suite layer).
        target: String,
    },
    /// Warming up or sampling a benchmark.
    #[error("interrupted before {target} at batch {batch} was measured in full")]
    Measuring {
        /// The benchmark's name (model or suite layer).
        target: String,
        /// Images per iteration.
        batch: usize,
    },
    /// Taking an A/B benchmark's pairs.
    #[error("interrupted before {target} at batch {batch} was compared")]
    Comparing {
        /// The benchmark's name (model or suite layer).
        target: String,
        /// Images per iteration.
        batch: usize,
    },
    /// A sweep, between two benchmarks.
    #[error("interrupted before every benchmark was measured")]
    Sweep,
    /// `tune`, between two ops.
    #[error("interrupted before every op was tuned ({tuned} of {ops} were)")]
    Tuning {
        /// Ops tuned.
        tuned: usize,
        /// Ops to tune.
        ops: usize,
    },
    /// Process mode of `ab`, between two rounds.
    #[error("interrupted before all {pairs} pairs of rounds were run ({run} were)")]
    RoundPairs {
        /// Pairs of rounds run.
        run: usize,
        /// Pairs of rounds asked for.
        pairs: usize,
    },
    /// `peers`, while a peer ran (it was stopped).
    #[error("interrupted while the {peer} peer ran round {round}")]
    Peer {
        /// The peer, by name.
        peer: String,
        /// The round it ran.
        round: usize,
    },
    /// `verify`, between two kernel variants or two seeds of a sweep.
    #[error(
        "interrupted before every kernel variant was checked; those that were (in a seed sweep, the \
         seeds finished) are in the table printed, if any"
    )]
    Variants,
    /// `verify`, between the networks' benchmarks.
    #[error(
        "interrupted before every benchmark was verified ({verified} of {total} were{})",
        if *verified == 0 { "" } else { "; the table shows them" }
    )]
    Verifications {
        /// Verifications finished.
        verified: usize,
        /// Verifications asked for.
        total: usize,
    },
    /// `ab`, before its first pair.
    #[error("interrupted before a pair was measured")]
    FirstPair,
}

impl Interrupted {
    /// The exit-code category: always [`ErrorKind::Interrupted`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Interrupted
    }
}
