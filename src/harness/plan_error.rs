//! What stops a network or a suite layer from being planned, as values: shapes that do not
//! work out, a batch norm without a batch variance, a suite entry whose parts disagree, and
//! the planner's own invariants.

use crate::ErrorKind;
use crate::model::{Shape, ShapeError};

/// An error of planning a benchmark's iteration ([`super::plan`]). Each message names the
/// network or suite entry.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The shapes of a network (or of a suite entry alone) at the batch do not work out.
    #[error("{target}: {source}")]
    Shapes {
        /// The network or suite entry.
        target: String,
        /// Which layer's shapes fail, and why.
        #[source]
        source: ShapeError,
    },
    /// A batch norm layer trained on one value per channel.
    #[error(
        "{network}: batch norm layer {layer} normalises one value per channel in training (input \
         {input}), which has no batch variance (PyTorch raises \"Expected more than 1 value per \
         channel when training\"); use a batch of 2 or more, or --stage eval"
    )]
    NoBatchVariance {
        /// The network.
        network: String,
        /// The batch norm layer.
        layer: String,
        /// The layer's input shape.
        input: Shape,
    },
    /// A suite entry whose input has another channel count than its convolution takes.
    #[error(
        "{entry}: its input has {input_channels} channels but its convolution takes \
         {conv_channels}; make the two agree"
    )]
    SuiteChannels {
        /// The suite entry.
        entry: String,
        /// Channels of its input.
        input_channels: usize,
        /// Input channels of its convolution.
        conv_channels: usize,
    },
    /// A suite entry whose kernel is larger than its (padded) input.
    #[error("{entry}: kernel larger than the input")]
    KernelLargerThanInput {
        /// The suite entry.
        entry: String,
    },
    /// The planner found no forward op to derive a layer's backward pass from (a bug).
    #[error("a layer's backward pass has no forward op")]
    NoForwardOp,
    /// The planner planned a fully connected layer as another op (a bug).
    #[error("{layer}: a fully connected layer planned as {op}")]
    LinearPlannedAs {
        /// The layer.
        layer: String,
        /// The op it was planned as.
        op: &'static str,
    },
}

impl PlanError {
    /// The exit-code category: what was asked cannot be planned, which is the user's input.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidInput
    }
}
