//! A program loaded on a [`Gpu`]: one buffer per tensor, one pipeline and bind group per
//! dispatch, all created up front; runs record one compute pass per op, with GPU timestamps
//! around each pass when the adapter has them.

use super::DeviceError;
use super::device::{Gpu, PipelineKey};
use crate::Result;
use crate::backend::{BackendError, Loaded, Program, TensorId, Timings, check_write, check_write_labels};
use crate::kernels::{self, DType, Slot};
use crate::model::Precision;
use std::ops::Range;
use std::time::Instant;
use wgpu::util::DeviceExt;

/// Queries per query set (wgpu's maximum); two per op.
const QUERIES_PER_SET: u32 = wgpu::QUERY_SET_MAX_QUERIES;

struct CompiledDispatch {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    grid: (u32, u32),
}

struct Timestamps {
    sets: Vec<wgpu::QuerySet>,
    resolve: Vec<wgpu::Buffer>,
    readback: Vec<wgpu::Buffer>,
    period_ns: f64,
}

/// A [`Program`] loaded on a GPU.
pub struct GpuProgram<'g> {
    gpu: &'g Gpu,
    program: Program,
    buffers: Vec<wgpu::Buffer>,
    ops: Vec<Vec<CompiledDispatch>>,
    timestamps: Option<Timestamps>,
    memory_bytes: u64,
}

fn element_bytes(dtype: DType, precision: Precision) -> u64 {
    dtype.bytes(precision) as u64
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

impl<'g> GpuProgram<'g> {
    /// Allocates every tensor and prepares every dispatch of `program`.
    pub fn load(gpu: &'g Gpu, program: &Program) -> Result<Self> {
        let precision = program.precision;
        if !gpu.supports(precision) {
            return Err(DeviceError::NoF16 {
                adapter: gpu.summary.fingerprint.label(),
            }
            .into());
        }
        let max_binding = gpu.max_tensor_bytes();
        let mut buffers = Vec::with_capacity(program.tensors.len());
        let mut memory_bytes = 0;
        for t in &program.tensors {
            let bytes = (t.len as u64 * element_bytes(t.dtype, precision))
                .next_multiple_of(4)
                .max(4);
            if bytes > max_binding {
                return Err(DeviceError::AboveLimit {
                    what: format!("tensor {}", t.name),
                    needs: format!("{:.1} MiB", mib(bytes)),
                    limit: format!("{:.1} MiB in one storage binding", mib(max_binding)),
                    adapter: gpu.summary.fingerprint.label(),
                    next: "use a smaller --batch, or fewer channels or features in the largest layer",
                }
                .into());
            }
            memory_bytes += bytes;
            let buffer = gpu.scoped(
                &format!("allocating tensor {} ({:.1} MiB)", t.name, mib(bytes)),
                || {
                    gpu.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&t.name),
                        size: bytes,
                        usage: wgpu::BufferUsages::STORAGE
                            | wgpu::BufferUsages::COPY_DST
                            | wgpu::BufferUsages::COPY_SRC,
                        mapped_at_creation: false,
                    })
                },
            )?;
            buffers.push(buffer);
        }
        let unused = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("unused binding"),
            size: 4,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let plans = program
            .ops
            .iter()
            .map(|call| kernels::plan_pinned(&call.op, call.variant, call.pin))
            .collect::<Result<Vec<_>>>()?;
        // The scratch buffer: as long as the longest any dispatch needs (one element when none
        // does), shared by every op (ops run one after another, and each writes the scratch
        // before reading it).
        let scratch_len = plans
            .iter()
            .flatten()
            .flat_map(|d| &d.bindings)
            .filter_map(|&(_, slot)| match slot {
                Slot::Scratch(n) => Some(n),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        let scratch_bytes = 4 * scratch_len.max(1);
        if scratch_bytes > max_binding {
            return Err(DeviceError::AboveLimit {
                what: "a kernel's scratch buffer".to_string(),
                needs: format!("{:.1} MiB", mib(scratch_bytes)),
                limit: format!("{:.1} MiB in one storage binding", mib(max_binding)),
                adapter: gpu.summary.fingerprint.label(),
                next: "use --kernel direct",
            }
            .into());
        }
        memory_bytes += scratch_bytes;
        let scratch = gpu.scoped(
            &format!("allocating the scratch buffer ({:.1} MiB)", mib(scratch_bytes)),
            || {
                gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("scratch"),
                    size: scratch_bytes,
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                })
            },
        )?;
        let mut seen = std::collections::HashSet::new();
        let distinct: Vec<PipelineKey> = plans
            .iter()
            .flatten()
            .filter(|d| seen.insert((d.shader.file, d.entry, &d.constants)))
            .map(|d| (d.shader, d.entry, precision, d.constants.clone()))
            .collect();
        gpu.precompile(&distinct);
        let max_dim = gpu.limits.max_compute_workgroups_per_dimension;
        let mut ops = Vec::with_capacity(program.ops.len());
        for (call, dispatches) in program.ops.iter().zip(plans) {
            let contract = call.op.contract();
            let mut compiled = Vec::new();
            for dispatch in dispatches {
                let pipeline =
                    gpu.pipeline(dispatch.shader, dispatch.entry, precision, &dispatch.constants)?;
                let grid = dispatch
                    .grid
                    .split(max_dim)
                    .ok_or_else(|| DeviceError::AboveLimit {
                        what: call.op.name().to_string(),
                        needs: format!("{} workgroups", dispatch.grid.workgroups()),
                        limit: format!("{max_dim} workgroups per dimension"),
                        adapter: gpu.summary.fingerprint.label(),
                        next: "use a smaller --batch, or fewer channels or features in the largest layer",
                    })?;
                let mut words = dispatch.params.clone();
                words.resize(words.len().next_multiple_of(4), 0);
                let params = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("params"),
                    contents: bytemuck::cast_slice(&words),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let mut entries = vec![wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params.as_entire_binding(),
                }];
                for &(binding, slot) in &dispatch.bindings {
                    let buffer = match slot {
                        Slot::Tensor(name) => match contract.iter().position(|b| b.name == name) {
                            Some(i) => &buffers[call.tensors[i]],
                            None if crate::kernels::Binding::optional(name) => &unused,
                            None => {
                                return Err(BackendError::UnboundTensor {
                                    entry: dispatch.entry,
                                    op: call.op.name(),
                                    tensor: name,
                                }
                                .into());
                            }
                        },
                        Slot::Unused => &unused,
                        Slot::Scratch(_) => &scratch,
                    };
                    entries.push(wgpu::BindGroupEntry {
                        binding,
                        resource: buffer.as_entire_binding(),
                    });
                }
                let bind_group = gpu.scoped(&format!("binding {}", dispatch.entry), || {
                    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some(dispatch.entry),
                        layout: &pipeline.get_bind_group_layout(0),
                        entries: &entries,
                    })
                })?;
                compiled.push(CompiledDispatch {
                    pipeline,
                    bind_group,
                    grid,
                });
            }
            ops.push(compiled);
        }
        let timestamps = gpu
            .has_timestamps()
            .then(|| Self::timestamps(gpu, program.ops.len()));
        Ok(Self {
            gpu,
            program: program.clone(),
            buffers,
            ops,
            timestamps,
            memory_bytes,
        })
    }

    fn timestamps(gpu: &Gpu, ops: usize) -> Timestamps {
        let queries = (2 * ops as u32).max(2);
        let sets_needed = queries.div_ceil(QUERIES_PER_SET);
        let mut t = Timestamps {
            sets: Vec::new(),
            resolve: Vec::new(),
            readback: Vec::new(),
            period_ns: f64::from(gpu.queue.get_timestamp_period()),
        };
        for s in 0..sets_needed {
            let count = (queries - s * QUERIES_PER_SET).min(QUERIES_PER_SET);
            let bytes = u64::from(count) * 8;
            t.sets
                .push(gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("op timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count,
                }));
            t.resolve.push(gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }));
            t.readback.push(gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        t
    }

    fn encode_op(&self, encoder: &mut wgpu::CommandEncoder, index: usize, timed: bool) {
        let writes = match (&self.timestamps, timed) {
            (Some(t), true) => {
                let q = 2 * index as u32;
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: &t.sets[(q / QUERIES_PER_SET) as usize],
                    beginning_of_pass_write_index: Some(q % QUERIES_PER_SET),
                    end_of_pass_write_index: Some(q % QUERIES_PER_SET + 1),
                })
            }
            _ => None,
        };
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(self.program.ops[index].op.name()),
            timestamp_writes: writes,
        });
        for d in &self.ops[index] {
            pass.set_pipeline(&d.pipeline);
            pass.set_bind_group(0, &d.bind_group, &[]);
            pass.dispatch_workgroups(d.grid.0, d.grid.1, 1);
        }
    }

    /// Submits `encoder` (which runs no kernel) and waits for it.
    fn submit_and_wait(&self, encoder: wgpu::CommandEncoder, what: &str) -> Result<()> {
        self.gpu.queue.submit([encoder.finish()]);
        self.wait(what, 0)
    }

    /// Submits `encoder`, which runs the kernels of `ops`, and waits for it; past the watchdog's
    /// deadline the error names those kernels.
    fn submit_ops_and_wait(&self, encoder: wgpu::CommandEncoder, ops: Range<usize>) -> Result<()> {
        let calls = &self.program.ops[ops];
        let flops = calls
            .iter()
            .map(|call| call.op.flops())
            .fold(0u64, u64::saturating_add);
        let mut kernels: Vec<String> = Vec::new();
        for call in calls {
            let kernel = format!("{} ({})", call.op.name(), call.variant.id());
            if !kernels.contains(&kernel) {
                kernels.push(kernel);
            }
        }
        let what = match kernels.as_slice() {
            [one] => format!("kernel {one}"),
            _ => format!("{} ops, kernels {}", calls.len(), kernels.join(", ")),
        };
        self.gpu.queue.submit([encoder.finish()]);
        self.wait(&what, flops)
    }

    /// Waits for the device, at most the watchdog's deadline for `flops` of work.
    fn wait(&self, what: &str, flops: u64) -> Result<()> {
        let watchdog = self.gpu.watchdog;
        watchdog.wait(&self.gpu.device, watchdog.deadline(flops), what)?;
        self.gpu.check_uncaptured(what)
    }

    fn map_read(&self, buffer: &wgpu::Buffer, what: &str) -> Result<Vec<u8>> {
        let (sender, receiver) = std::sync::mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = sender.send(r);
        });
        self.wait(what, 0)?;
        receiver
            .recv()
            .map_err(|_| DeviceError::Readback {
                what: what.to_string(),
                message: "its mapping was cancelled".to_string(),
            })?
            .map_err(|e| DeviceError::Readback {
                what: what.to_string(),
                message: format!("mapping failed: {e}"),
            })?;
        let bytes = buffer
            .get_mapped_range(..)
            .map_err(|e| DeviceError::Readback {
                what: what.to_string(),
                message: e.to_string(),
            })?
            .to_vec();
        buffer.unmap();
        Ok(bytes)
    }

    /// Copies a tensor to a mappable buffer and returns its element count and raw bytes.
    fn read_bytes(&self, tensor: TensorId, dtype: DType) -> Result<(usize, Vec<u8>)> {
        let desc = self
            .program
            .tensors
            .get(tensor)
            .ok_or(BackendError::NoTensor { op: None, tensor })?;
        check_write(&self.program, tensor, desc.len, dtype)?;
        let size = self.buffers[tensor].size();
        let staging = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&self.buffers[tensor], 0, &staging, 0, size);
        self.submit_and_wait(encoder, &format!("copying {}", desc.name))?;
        Ok((desc.len, self.map_read(&staging, &desc.name)?))
    }

    fn run_timestamped(&self, ops: Range<usize>) -> Result<Timings> {
        let t = self.timestamps.as_ref().expect("only called with timestamps");
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        for index in ops.clone() {
            self.encode_op(&mut encoder, index, true);
        }
        let first_query = 2 * ops.start as u32;
        let end_query = 2 * ops.end as u32;
        let mut touched = Vec::new();
        for (s, set) in t.sets.iter().enumerate() {
            let base = s as u32 * QUERIES_PER_SET;
            let lo = first_query.max(base);
            let hi = end_query.min(base + QUERIES_PER_SET);
            if lo < hi {
                encoder.resolve_query_set(set, (lo - base)..(hi - base), &t.resolve[s], 0);
                encoder.copy_buffer_to_buffer(&t.resolve[s], 0, &t.readback[s], 0, u64::from(hi - lo) * 8);
                touched.push((s, lo, hi));
            }
        }
        self.submit_ops_and_wait(encoder, ops.clone())?;
        let mut ticks: Vec<u64> = Vec::with_capacity(2 * ops.len());
        for (s, lo, hi) in touched {
            let bytes = self.map_read(&t.readback[s], "reading timestamps")?;
            ticks.extend(
                bytes
                    .chunks_exact(8)
                    .take((hi - lo) as usize)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk"))),
            );
        }
        let to_ns = |dt: u64| (dt as f64 * t.period_ns).round() as u64;
        let per_op_ns: Vec<u64> = ticks
            .chunks_exact(2)
            .map(|p| to_ns(p[1].saturating_sub(p[0])))
            .collect();
        let total_ns = match (ticks.first(), ticks.last()) {
            (Some(&begin), Some(&end)) => to_ns(end.saturating_sub(begin)),
            _ => 0,
        };
        Ok(Timings { per_op_ns, total_ns })
    }
}

impl Loaded for GpuProgram<'_> {
    fn write(&mut self, tensor: TensorId, values: &[f32]) -> Result<()> {
        check_write(&self.program, tensor, values.len(), DType::Float)?;
        let mut bytes: Vec<u8> = match self.program.precision {
            Precision::F32 => bytemuck::cast_slice(values).to_vec(),
            Precision::F16 => values
                .iter()
                .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
                .collect(),
        };
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        self.gpu.queue.write_buffer(&self.buffers[tensor], 0, &bytes);
        Ok(())
    }

    fn write_u32(&mut self, tensor: TensorId, values: &[u32]) -> Result<()> {
        check_write_labels(&self.program, tensor, values)?;
        self.gpu
            .queue
            .write_buffer(&self.buffers[tensor], 0, bytemuck::cast_slice(values));
        Ok(())
    }

    fn read(&mut self, tensor: TensorId) -> Result<Vec<f32>> {
        let (len, bytes) = self.read_bytes(tensor, DType::Float)?;
        Ok(match self.program.precision {
            Precision::F32 => bytemuck::cast_slice::<u8, f32>(&bytes)[..len].to_vec(),
            Precision::F16 => bytes
                .chunks_exact(2)
                .take(len)
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        })
    }

    fn read_u32(&mut self, tensor: TensorId) -> Result<Vec<u32>> {
        let (len, bytes) = self.read_bytes(tensor, DType::U32)?;
        Ok(bytemuck::cast_slice::<u8, u32>(&bytes)[..len].to_vec())
    }

    fn run(&mut self, ops: Range<usize>, per_op: bool) -> Result<Timings> {
        if ops.end > self.ops.len() || ops.start > ops.end {
            return Err(BackendError::OpRange {
                start: ops.start,
                end: ops.end,
                ops: self.ops.len(),
            }
            .into());
        }
        if ops.is_empty() {
            return Ok(Timings {
                per_op_ns: Vec::new(),
                total_ns: 0,
            });
        }
        if self.timestamps.is_some() {
            return self.run_timestamped(ops);
        }
        if per_op {
            let mut per_op_ns = Vec::with_capacity(ops.len());
            for index in ops {
                let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
                self.encode_op(&mut encoder, index, false);
                let start = Instant::now();
                self.submit_ops_and_wait(encoder, index..index + 1)?;
                per_op_ns.push(start.elapsed().as_nanos() as u64);
            }
            let total_ns = per_op_ns.iter().sum();
            return Ok(Timings { per_op_ns, total_ns });
        }
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        for index in ops.clone() {
            self.encode_op(&mut encoder, index, false);
        }
        let start = Instant::now();
        self.submit_ops_and_wait(encoder, ops)?;
        Ok(Timings {
            per_op_ns: Vec::new(),
            total_ns: start.elapsed().as_nanos() as u64,
        })
    }

    fn memory_bytes(&self) -> u64 {
        self.memory_bytes
    }
}
