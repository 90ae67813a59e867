//! ReLU dispatches (`shaders/activation.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::ACTIVATION;
use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/activation.wgsl`'s `Params`.
    pub(crate) struct ActivationParams {
        total: u32,
    }
}

/// `x -> y`.
pub fn relu_forward(len: usize) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &ACTIVATION,
        entry: "relu_forward",
        bindings: tensors(1, &["x", "y"]),
        params: ActivationParams { total: len as u32 }.words(),
        grid: Grid::Invocations(len as u64),
        constants: Vec::new(),
    }]
}

/// `y, dy -> dx`.
pub fn relu_backward(len: usize) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &ACTIVATION,
        entry: "relu_backward",
        bindings: tensors(3, &["y", "dy", "dx"]),
        params: ActivationParams { total: len as u32 }.words(),
        grid: Grid::Invocations(len as u64),
        constants: Vec::new(),
    }]
}
