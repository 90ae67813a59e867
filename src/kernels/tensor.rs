//! Concatenation, split, addition and global average pooling dispatches (`shaders/tensor.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::TENSOR;
use super::uniform::{Uniform, uniform};
use crate::model::Shape;

uniform! {
    /// `shaders/tensor.wgsl`'s `Params`.
    pub(crate) struct TensorParams {
        total: u32,
        hw: u32,
        total_channels: u32,
        part_channels: u32,
        offset: u32,
    }
}

fn dispatch(
    entry: &'static str,
    first_binding: u32,
    names: &[&'static str],
    params: TensorParams,
) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &TENSOR,
        entry,
        bindings: tensors(first_binding, names),
        params: params.words(),
        grid: Grid::Invocations(u64::from(params.total)),
        constants: Vec::new(),
    }]
}

/// Copies a channel slice between a part and the concatenated tensor.
pub fn channel_copy(
    n: usize,
    hw: usize,
    total_channels: usize,
    part_channels: usize,
    offset: usize,
    into_concat: bool,
) -> Vec<Dispatch> {
    let u = |v: usize| v as u32;
    let params = TensorParams {
        total: u(n * part_channels * hw),
        hw: u(hw),
        total_channels: u(total_channels),
        part_channels: u(part_channels),
        offset: u(offset),
    };
    if into_concat {
        dispatch("concat_forward", 1, &["src", "dst"], params)
    } else {
        dispatch("split_forward", 3, &["src", "dst"], params)
    }
}

/// `a, b -> a + b`.
pub fn add(len: usize) -> Vec<Dispatch> {
    let params = TensorParams {
        total: len as u32,
        ..TensorParams::default()
    };
    dispatch("add", 5, &["a", "b", "y"], params)
}

/// `x -> mean over h*w`.
pub fn global_avgpool_forward(s: &Shape) -> Vec<Dispatch> {
    dispatch(
        "global_avgpool_forward",
        8,
        &["x", "y"],
        TensorParams {
            total: (s.n * s.c) as u32,
            hw: (s.h * s.w) as u32,
            ..TensorParams::default()
        },
    )
}

/// `dy -> dx`.
pub fn global_avgpool_backward(s: &Shape) -> Vec<Dispatch> {
    dispatch(
        "global_avgpool_backward",
        10,
        &["dy", "dx"],
        TensorParams {
            total: s.len() as u32,
            hw: (s.h * s.w) as u32,
            ..TensorParams::default()
        },
    )
}
