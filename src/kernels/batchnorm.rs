//! Batch normalisation dispatches (`shaders/batchnorm.wgsl`): a per-channel reduction
//! (one workgroup per channel) followed by an elementwise pass.

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::BATCHNORM;
use crate::model::{BatchNorm, Shape};

use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/batchnorm.wgsl`'s `Params`.
    pub(crate) struct BatchNormParams {
        total: u32,
        n: u32,
        c: u32,
        hw: u32,
        eps: f32,
        momentum: f32,
    }
}

fn params(bn: &BatchNorm, s: &Shape) -> Vec<u32> {
    BatchNormParams {
        total: s.len() as u32,
        n: s.n as u32,
        c: s.c as u32,
        hw: (s.h * s.w) as u32,
        eps: bn.eps as f32,
        momentum: bn.momentum as f32,
    }
    .words()
}

/// `x, gamma, beta -> y, mean, invstd`, running statistics updated.
pub fn forward_train(bn: &BatchNorm, s: &Shape) -> Vec<Dispatch> {
    let bindings = tensors(
        1,
        &[
            "x",
            "gamma",
            "beta",
            "y",
            "saved_mean",
            "saved_invstd",
            "running_mean",
            "running_var",
        ],
    );
    vec![
        Dispatch {
            shader: &BATCHNORM,
            entry: "batchnorm_stats",
            bindings: bindings
                .iter()
                .copied()
                .filter(|(b, _)| [1, 5, 6, 7, 8].contains(b))
                .collect(),
            params: params(bn, s),
            grid: Grid::Workgroups(s.c as u64),
            constants: Vec::new(),
        },
        Dispatch {
            shader: &BATCHNORM,
            entry: "batchnorm_apply_train",
            bindings: bindings.into_iter().filter(|(b, _)| *b <= 6).collect(),
            params: params(bn, s),
            grid: Grid::Invocations(s.len() as u64),
            constants: Vec::new(),
        },
    ]
}

/// `x, gamma, beta, running_mean, running_var -> y`.
pub fn forward_eval(bn: &BatchNorm, s: &Shape) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &BATCHNORM,
        entry: "batchnorm_forward_eval",
        bindings: tensors(9, &["x", "gamma", "beta", "running_mean", "running_var", "y"]),
        params: params(bn, s),
        grid: Grid::Invocations(s.len() as u64),
        constants: Vec::new(),
    }]
}

/// `x, dy, gamma, mean, invstd -> dx, dgamma, dbeta`.
pub fn backward(bn: &BatchNorm, s: &Shape) -> Vec<Dispatch> {
    let bindings = tensors(
        15,
        &[
            "x",
            "dy",
            "gamma",
            "saved_mean",
            "saved_invstd",
            "dx",
            "dgamma",
            "dbeta",
        ],
    );
    vec![
        Dispatch {
            shader: &BATCHNORM,
            entry: "batchnorm_backward_reduce",
            bindings: bindings
                .iter()
                .copied()
                .filter(|(b, _)| ![17, 20].contains(b))
                .collect(),
            params: params(bn, s),
            grid: Grid::Workgroups(s.c as u64),
            constants: Vec::new(),
        },
        Dispatch {
            shader: &BATCHNORM,
            entry: "batchnorm_backward_data",
            bindings,
            params: params(bn, s),
            grid: Grid::Invocations(s.len() as u64),
            constants: Vec::new(),
        },
    ]
}
