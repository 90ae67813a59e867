//! SGD update dispatch (`shaders/optimizer.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::OPTIMIZER;
use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/optimizer.wgsl`'s `Params`.
    pub(crate) struct SgdParams {
        total: u32,
        lr: f32,
        momentum: f32,
        weight_decay: f32,
    }
}

/// `grad, weight (rw), velocity (rw)`.
pub fn sgd(len: usize, lr: f32, momentum: f32, weight_decay: f32) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &OPTIMIZER,
        entry: "sgd_update",
        bindings: tensors(1, &["grad", "weight", "velocity"]),
        params: SgdParams {
            total: len as u32,
            lr,
            momentum,
            weight_decay,
        }
        .words(),
        grid: Grid::Invocations(len as u64),
        constants: Vec::new(),
    }]
}
