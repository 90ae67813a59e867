//! Concatenation, split, addition and global average pooling dispatches (`shaders/tensor.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::TENSOR;
use crate::model::Shape;

fn dispatch(
    entry: &'static str,
    first_binding: u32,
    names: &[&'static str],
    params: [usize; 5],
) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &TENSOR,
        entry,
        bindings: tensors(first_binding, names),
        params: params.map(|v| v as u32).to_vec(),
        grid: Grid::Invocations(params[0] as u64),
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
    let params = [n * part_channels * hw, hw, total_channels, part_channels, offset];
    if into_concat {
        dispatch("concat_forward", 1, &["src", "dst"], params)
    } else {
        dispatch("split_forward", 3, &["src", "dst"], params)
    }
}

/// `a, b -> a + b`.
pub fn add(len: usize) -> Vec<Dispatch> {
    dispatch("add", 5, &["a", "b", "y"], [len, 0, 0, 0, 0])
}

/// `x -> mean over h*w`.
pub fn global_avgpool_forward(s: &Shape) -> Vec<Dispatch> {
    dispatch(
        "global_avgpool_forward",
        8,
        &["x", "y"],
        [s.n * s.c, s.h * s.w, 0, 0, 0],
    )
}

/// `dy -> dx`.
pub fn global_avgpool_backward(s: &Shape) -> Vec<Dispatch> {
    dispatch(
        "global_avgpool_backward",
        10,
        &["dy", "dx"],
        [s.len(), s.h * s.w, 0, 0, 0],
    )
}
