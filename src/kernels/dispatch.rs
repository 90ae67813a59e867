//! Backend-neutral description of the compute dispatches that implement an op.

use super::registry::Shader;

/// Invocations per workgroup of every kernel (`@workgroup_size(256)`).
pub const WORKGROUP_SIZE: u32 = 256;

/// What a shader binding is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The op's tensor of this name ([`super::Op::contract`]). An optional tensor the op does
    /// not bind (a bias the layer does not have) gets a one-element placeholder.
    Tensor(&'static str),
    /// A one-element placeholder for a binding the kernel declares but this entry point does
    /// not touch.
    Unused,
    /// The program's f32 scratch buffer, of which this dispatch uses the first `n` elements
    /// (the column matrix of an explicit backward data). Its contents live only within one op:
    /// every op that uses it writes it before reading it.
    Scratch(u64),
}

/// How many workgroups a dispatch needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grid {
    /// One invocation per element: `ceil(n / WORKGROUP_SIZE)` workgroups.
    Invocations(u64),
    /// One workgroup per item (per-channel reductions).
    Workgroups(u64),
}

impl Grid {
    /// Workgroups in total.
    pub fn workgroups(self) -> u64 {
        match self {
            Grid::Invocations(n) => n.div_ceil(u64::from(WORKGROUP_SIZE)),
            Grid::Workgroups(n) => n,
        }
    }

    /// A 2-d grid `(x, y)` covering the workgroups within `max_per_dimension`, as the kernels
    /// linearise `workgroup_id.y * num_workgroups.x + workgroup_id.x` and skip the excess.
    /// `None` when even a full 2-d grid is too small.
    pub fn split(self, max_per_dimension: u32) -> Option<(u32, u32)> {
        let total = self.workgroups().max(1);
        let max = u64::from(max_per_dimension.max(1));
        let x = total.min(max);
        let y = total.div_ceil(x);
        (y <= max).then_some((x as u32, y as u32))
    }
}

/// One compute dispatch.
#[derive(Debug, Clone)]
pub struct Dispatch {
    /// Shader file.
    pub shader: &'static Shader,
    /// Entry point.
    pub entry: &'static str,
    /// `(binding number, what is bound)`; binding 0 is always the params uniform.
    pub bindings: Vec<(u32, Slot)>,
    /// Params uniform words (f32 values as bits), in the shader's `Params` order.
    pub params: Vec<u32>,
    /// Size of the dispatch.
    pub grid: Grid,
    /// Shader constants this dispatch specialises (tile sizes, see
    /// [`super::registry::specialize`]); empty for the shader as written. Part of the
    /// pipeline's identity.
    pub constants: Vec<(&'static str, u32)>,
}

/// Shorthand for `(binding, Slot::Tensor(name))` pairs numbered from `first_binding`.
pub fn tensors(first_binding: u32, names: &[&'static str]) -> Vec<(u32, Slot)> {
    names
        .iter()
        .enumerate()
        .map(|(k, &name)| (first_binding + k as u32, Slot::Tensor(name)))
        .collect()
}
