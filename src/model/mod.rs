//! Networks as data: layers, shapes, the model zoo, layer suites, FLOP and parameter counts.

pub mod custom;
mod error;
mod layer;
mod network;
mod precision;
mod suites;
mod zoo;

pub use error::{ModelError, NetworkProblem, ShapeRowProblem};
pub use layer::{BatchNorm, Conv2d, Linear, Lrn, Pool2d, PoolKind, Shape};
pub use network::{
    Layer, LayerKind, MAX_BATCH, MAX_TENSOR_ELEMENTS, Network, NetworkBuilder, NodeId, ShapeError,
    layer_forward_flops, layer_output_shape,
};
pub use precision::Precision;
pub use suites::{Suite, SuiteEntry, suite, suite_names, suites};
pub use zoo::{model_names, network, zoo};
