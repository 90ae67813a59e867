//! The `wgpu` backend: WGSL compute shaders on any adapter wgpu drives (Vulkan, Metal, DX12,
//! GL, software adapters such as lavapipe).

use super::{Backend, BackendKind, Loaded, Program};
use crate::Result;
use crate::gpu::{Gpu, GpuOptions, GpuProgram};
use crate::model::Precision;
use crate::results::{AdapterFingerprint, TimingMethod};

/// WGSL kernels through wgpu on one adapter.
#[derive(Debug)]
pub struct WgpuBackend {
    gpu: Gpu,
}

impl WgpuBackend {
    /// Opens the adapter named by `selector` (index, backend or name substring), or the best one.
    pub fn open(selector: Option<&str>) -> Result<Self> {
        Ok(Self {
            gpu: Gpu::open(selector)?,
        })
    }

    /// [`Self::open`] with device options (e.g. subgroup operations off).
    pub fn open_with(selector: Option<&str>, options: GpuOptions) -> Result<Self> {
        Ok(Self {
            gpu: Gpu::open_with(selector, options)?,
        })
    }

    /// The same device running the WGSL of `shaders` (see [`Gpu::with_shaders`]).
    pub fn with_shaders(&self, shaders: crate::kernels::shader_set::ShaderSet) -> Self {
        Self {
            gpu: self.gpu.with_shaders(shaders),
        }
    }

    /// The opened device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// One digest per op of `program`: of the code the op runs here (each dispatch's shader
    /// source in this device's shader set, comments and spacing aside
    /// ([`crate::kernels::shader_set::code_of`]), entry point, constants, parameters, bindings
    /// and grid). Two backends of one device (see [`Self::with_shaders`]) run the same code for an
    /// op exactly when its digests agree, so `ab` verifies such an op once.
    pub fn kernel_digests(&self, program: &Program) -> Result<Vec<u64>> {
        program
            .ops
            .iter()
            .map(|call| {
                let mut text = String::new();
                for d in crate::kernels::plan_pinned(&call.op, call.variant, call.pin)? {
                    text.push_str(&crate::kernels::shader_set::code_of(
                        self.gpu.shaders().source_of(d.shader),
                    ));
                    text.push_str(&format!(
                        "\0{}\0{:?}\0{:?}\0{:?}\0{:?}\0",
                        d.entry, d.constants, d.params, d.bindings, d.grid
                    ));
                }
                Ok(crate::fnv1a64(text.bytes()))
            })
            .collect()
    }
}

impl Backend for WgpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Wgpu
    }

    fn adapter(&self) -> &AdapterFingerprint {
        &self.gpu.summary().fingerprint
    }

    fn timing_method(&self) -> TimingMethod {
        if self.gpu.has_timestamps() {
            TimingMethod::GpuTimestamps
        } else {
            TimingMethod::WallClock
        }
    }

    fn supports(&self, precision: Precision) -> bool {
        self.gpu.supports(precision)
    }

    fn max_tensor_bytes(&self) -> u64 {
        self.gpu.max_tensor_bytes()
    }

    fn load(&self, program: &Program) -> Result<Box<dyn Loaded + '_>> {
        Ok(Box::new(GpuProgram::load(&self.gpu, program)?))
    }
}
