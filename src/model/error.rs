//! What can go wrong naming or reading a workload, as values: a model or suite name that is not
//! known, a `[[model]]` network that cannot run, and a shape list (`--shapes FILE.csv`) with a
//! bad row or none.

use super::{MAX_BATCH, Shape, ShapeError};
use crate::ErrorKind;
use std::path::PathBuf;

/// Columns of a shape list row, in order (what `custom::shape_list` parses and these errors
/// name).
pub const SHAPE_COLUMNS: [&str; 9] = ["N", "C", "H", "W", "K", "R", "S", "stride", "pad"];

/// An error of the model area: every one is the user's input to fix, and its message names the
/// model, suite or file (and line) and what would do.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No zoo model has the name asked for.
    #[error("unknown model `{name}`; known models: {}", known.join(", "))]
    UnknownModel {
        /// The name asked for.
        name: String,
        /// The zoo's models, by name.
        known: Vec<&'static str>,
    },
    /// No suite has the name asked for.
    #[error("unknown suite `{name}`; known suites: {}", known.join(", "))]
    UnknownSuite {
        /// The name asked for.
        name: String,
        /// The suites, by name.
        known: Vec<&'static str>,
    },
    /// A `[[model]]` without a `name`.
    #[error("a [[model]] has no `name`")]
    Unnamed,
    /// A `[[model]]` whose name is not a plain word.
    #[error(
        "model `{}`: a model name is ASCII letters, digits, `-` and `_` (it becomes part of \
         benchmark ids, `--model` lists and file names); rename it",
        model.escape_debug()
    )]
    BadName {
        /// The name.
        model: String,
    },
    /// A `[[model]]` with the name of a zoo model.
    #[error("model `{model}`: the zoo already has a model `{zoo}`; give yours another name")]
    ZooName {
        /// The name.
        model: String,
        /// The zoo model of that name (perhaps in another case).
        zoo: String,
    },
    /// A `[[model]]` that is not a network convbench can run.
    #[error("model `{model}`: {problem}")]
    InvalidNetwork {
        /// The network's name.
        model: String,
        /// What is wrong with it.
        #[source]
        problem: NetworkProblem,
    },
    /// A row of a shape list that is not a convolution convbench can run.
    #[error("{}:{line}: {problem}", path.display())]
    InvalidShapeRow {
        /// The shape list.
        path: PathBuf,
        /// The row's line, from 1.
        line: usize,
        /// What is wrong with it.
        #[source]
        problem: ShapeRowProblem,
    },
    /// A shape list without a row.
    #[error("{} has no rows; each row is {}", path.display(), SHAPE_COLUMNS.join(","))]
    NoShapeRows {
        /// The shape list.
        path: PathBuf,
    },
}

impl ModelError {
    /// The exit-code category: always the user's input.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidInput
    }
}

/// What is wrong with a `[[model]]` network ([`ModelError::InvalidNetwork`] names it).
#[derive(Debug, thiserror::Error)]
pub enum NetworkProblem {
    /// It has no layers.
    #[error("has no layers")]
    NoLayers,
    /// Two of its layers have one name.
    #[error("two layers are named `{layer}`")]
    DuplicateLayer {
        /// The name.
        layer: String,
    },
    /// A layer reads a node that is not before it.
    #[error(
        "layer `{layer}` reads node {node}, which is not before it (node 0 is the input, layer k \
         is node k + 1)"
    )]
    ReadsAhead {
        /// The layer.
        layer: String,
        /// The node it reads.
        node: usize,
    },
    /// Its shapes do not chain at batch 1.
    #[error("{0}")]
    Shape(#[source] ShapeError),
    /// Its last layer does not give one score per class.
    #[error(
        "the last layer gives {last}, not class scores; end with a linear layer (or a global \
         average pool) of at least 2 outputs"
    )]
    NoClassScores {
        /// The last layer's output at batch 1.
        last: Shape,
    },
}

/// What is wrong with a row of a shape list ([`ModelError::InvalidShapeRow`] names the file and
/// line).
#[derive(Debug, thiserror::Error)]
pub enum ShapeRowProblem {
    /// A row (not the header) that is not whole numbers.
    #[error(
        "`{row}` is not {} whole numbers ({})",
        SHAPE_COLUMNS.len(),
        SHAPE_COLUMNS.join(",")
    )]
    NotNumbers {
        /// The row, less its comment.
        row: String,
    },
    /// A row of numbers with too few or too many columns.
    #[error(
        "{columns} columns, expected {} ({})",
        SHAPE_COLUMNS.len(),
        SHAPE_COLUMNS.join(",")
    )]
    ColumnCount {
        /// The columns it has.
        columns: usize,
    },
    /// A size other than the padding is zero.
    #[error("every size but the padding is at least 1")]
    ZeroSize,
    /// A batch above [`MAX_BATCH`].
    #[error("N (the batch) is {batch}, more than the {MAX_BATCH} convbench takes")]
    BatchTooLarge {
        /// The batch given, in images.
        batch: usize,
    },
    /// A size the kernels cannot take as a 32-bit integer.
    #[error("{size} is more than {}, the largest size the kernels take", u32::MAX)]
    SizeTooLarge {
        /// The size given.
        size: usize,
    },
    /// A kernel larger than its padded input.
    #[error(
        "a {}x{} kernel does not fit a {}x{} input with padding {padding}",
        kernel.0, kernel.1, input.0, input.1
    )]
    KernelDoesNotFit {
        /// The kernel, height by width (R, S).
        kernel: (usize, usize),
        /// The input, height by width (H, W).
        input: (usize, usize),
        /// The padding on each side.
        padding: usize,
    },
    /// The same shape at the same batch as an earlier row.
    #[error("repeats the row of {name} at batch {batch}")]
    RepeatedRow {
        /// The shape's name.
        name: String,
        /// The batch of both rows, in images.
        batch: usize,
    },
}
