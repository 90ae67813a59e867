//! The `cpu` backend: f32 ops on every core, convolutions and fully connected layers through
//! im2col and GEMM ([`super::cpu_fast`]), the other ops as the reference computes them. It is the
//! embedded fallback when no GPU adapter exists, so `cargo convbench run` works on any machine.
//!
//! f16 programs store tensors rounded to f16 after every op (arithmetic in f32), which matches
//! what a GPU with f16 storage and f32 accumulation does.

use super::cpu_fast;
use super::{
    Backend, BackendKind, Loaded, OpCall, Program, TensorId, Timings, check_write, check_write_labels,
};
use crate::Result;
use crate::kernels::contract::Layout;
use crate::kernels::{Access, DType};
use crate::model::Precision;
use crate::results::{AdapterFingerprint, TimingMethod};
use std::ops::Range;
use std::time::Instant;

/// The CPU backend.
#[derive(Debug, Clone)]
pub struct CpuBackend {
    fingerprint: AdapterFingerprint,
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuBackend {
    /// A CPU backend on this machine (all cores, through rayon).
    pub fn new() -> Self {
        let threads = rayon::current_num_threads();
        Self {
            fingerprint: AdapterFingerprint {
                backend: "cpu".into(),
                vendor_id: 0,
                device_id: 0,
                name: format!("{} CPU ({threads} threads)", std::env::consts::ARCH),
                device_type: "cpu".into(),
                driver: "convbench reference".into(),
                driver_info: String::new(),
                runtime_version: env!("CARGO_PKG_VERSION").into(),
            },
        }
    }
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn adapter(&self) -> &AdapterFingerprint {
        &self.fingerprint
    }

    fn timing_method(&self) -> TimingMethod {
        TimingMethod::WallClock
    }

    fn supports(&self, _precision: Precision) -> bool {
        true
    }

    fn max_tensor_bytes(&self) -> u64 {
        u64::MAX
    }

    fn check_holds(&self, program: &Program, what: &dyn Fn() -> String) -> Result<()> {
        let bytes = program.tensors.iter().map(|t| t.len as u64 * 4).sum();
        super::check_host_memory(what, bytes)
    }

    fn load(&self, program: &Program) -> Result<Box<dyn Loaded + '_>> {
        self.check_holds(program, &|| "the cpu backend's program".to_string())?;
        let mut floats = Vec::with_capacity(program.tensors.len());
        let mut labels = Vec::with_capacity(program.tensors.len());
        for t in &program.tensors {
            let (f, l) = match t.dtype {
                DType::Float => (try_alloc(t.len, &t.name)?, Vec::new()),
                DType::U32 => (Vec::new(), vec![0; t.len]),
            };
            floats.push(f);
            labels.push(l);
        }
        Ok(Box::new(CpuProgram {
            program: program.clone(),
            calls: program.ops.iter().map(CpuCall::new).collect(),
            floats,
            labels,
        }))
    }
}

fn try_alloc(len: usize, name: &str) -> Result<Vec<f32>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| super::BackendError::HostMemory {
            tensor: name.to_string(),
            len,
        })?;
    v.resize(len, 0.0);
    Ok(v)
}

struct CpuProgram {
    program: Program,
    /// The program's ops, resolved once.
    calls: Vec<CpuCall>,
    floats: Vec<Vec<f32>>,
    labels: Vec<Vec<u32>>,
}

/// One op of a loaded program with its tensors sorted as the kernels take them, resolved from
/// its contract when the program loads rather than on every run.
struct CpuCall {
    layout: Layout,
    /// Read-only float tensors, in binding order.
    inputs: Vec<TensorId>,
    /// Written and read-write float tensors, in binding order.
    outputs: Vec<TensorId>,
    /// The labels, when the op binds them.
    labels: Option<TensorId>,
}

impl CpuCall {
    fn new(call: &OpCall) -> Self {
        let layout = call.op.layout();
        let (mut inputs, mut outputs, mut labels) = (Vec::new(), Vec::new(), None);
        for (&t, (access, dtype)) in call.tensors.iter().zip(layout.bindings()) {
            match (dtype, access) {
                (DType::U32, _) => labels = Some(t),
                (DType::Float, Access::Read) => inputs.push(t),
                (DType::Float, _) => outputs.push(t),
            }
        }
        Self {
            layout,
            inputs,
            outputs,
            labels,
        }
    }
}

impl CpuProgram {
    fn round(&mut self, tensor: TensorId) {
        if self.program.precision == Precision::F16 {
            for v in &mut self.floats[tensor] {
                *v = half::f16::from_f32(*v).to_f32();
            }
        }
    }
}

impl Loaded for CpuProgram {
    fn write(&mut self, tensor: TensorId, values: &[f32]) -> Result<()> {
        check_write(&self.program, tensor, values.len(), DType::Float)?;
        self.floats[tensor].copy_from_slice(values);
        self.round(tensor);
        Ok(())
    }

    fn write_u32(&mut self, tensor: TensorId, values: &[u32]) -> Result<()> {
        check_write_labels(&self.program, tensor, values)?;
        self.labels[tensor].copy_from_slice(values);
        Ok(())
    }

    fn read(&mut self, tensor: TensorId) -> Result<Vec<f32>> {
        check_write(
            &self.program,
            tensor,
            self.floats.get(tensor).map_or(0, Vec::len),
            DType::Float,
        )?;
        Ok(self.floats[tensor].clone())
    }

    fn read_u32(&mut self, tensor: TensorId) -> Result<Vec<u32>> {
        check_write(
            &self.program,
            tensor,
            self.labels.get(tensor).map_or(0, Vec::len),
            DType::U32,
        )?;
        Ok(self.labels[tensor].clone())
    }

    fn run(&mut self, ops: Range<usize>, per_op: bool) -> Result<Timings> {
        let mut per_op_ns = Vec::new();
        let start = Instant::now();
        for index in ops {
            let op_start = Instant::now();
            let call = &self.calls[index];
            // Outputs are moved out so inputs can be borrowed alongside them.
            let mut outputs: Vec<(TensorId, Vec<f32>)> = call
                .outputs
                .iter()
                .map(|&t| (t, std::mem::take(&mut self.floats[t])))
                .collect();
            {
                let inputs: Vec<&[f32]> = call.inputs.iter().map(|&t| self.floats[t].as_slice()).collect();
                let labels = call.labels.map(|t| self.labels[t].as_slice());
                let mut out_slices: Vec<&mut [f32]> =
                    outputs.iter_mut().map(|(_, v)| v.as_mut_slice()).collect();
                let op = &self.program.ops[index].op;
                cpu_fast::execute_laid_out(op, &call.layout, &inputs, labels, &mut out_slices);
            }
            for (t, v) in outputs {
                self.floats[t] = v;
                self.round(t);
            }
            if per_op {
                per_op_ns.push(op_start.elapsed().as_nanos() as u64);
            }
        }
        let total_ns = if per_op {
            per_op_ns.iter().sum()
        } else {
            start.elapsed().as_nanos() as u64
        };
        Ok(Timings { per_op_ns, total_ns })
    }

    fn memory_bytes(&self) -> u64 {
        let element = self.program.precision.bytes() as u64;
        self.program
            .tensors
            .iter()
            .map(|t| t.len as u64 * if t.dtype == DType::U32 { 4 } else { element })
            .sum()
    }
}
