//! Measures an adapter's peak f32 arithmetic rate and copy bandwidth with the kernels of
//! `shaders/calibrate.wgsl`, for the roofline (see [`crate::roofline`]).
//!
//! Each kernel is first run at growing sizes until one submission takes at least
//! [`MIN_TRIAL`], so that submission overhead is a small part of what is timed; then
//! [`TRIALS`] submissions of that size are timed by the wall clock from submit to the device
//! going idle, and the fastest is kept: a peak is the best the adapter did, not its typical
//! speed.

use super::DeviceError;
use super::Gpu;
use crate::Result;
use crate::kernels::registry::CALIBRATE;
use crate::model::Precision;
use crate::roofline::Peak;
use std::time::{Duration, Instant};
use wgpu::util::DeviceExt;

/// Shortest submission timed.
const MIN_TRIAL: Duration = Duration::from_millis(50);
/// Timed submissions per kernel.
const TRIALS: usize = 5;
/// Workgroups of the arithmetic kernel: 2^20 invocations, enough to fill any GPU.
const FLOP_WORKGROUPS: u32 = 4096;
/// Independent vec4 FMA chains per invocation (`CHAINS` in the shader): 64 FLOPs per step.
const FLOPS_PER_STEP: u64 = 8 * 4 * 2;
/// Largest buffer the bandwidth kernel copies (each of source and destination); larger than
/// the last-level cache of any GPU or CPU it may run on.
const COPY_BYTES: u64 = 256 << 20;

/// How [`calibrate`] measured, for the calibration file.
pub const CALIBRATION_METHOD: &str = "shaders/calibrate.wgsl: f32 vec4 FMA chains and a vec4 copy; \
     wall clock from submit to idle, fastest of 5 submissions of at least 50 ms";

struct Kernel<'g> {
    gpu: &'g Gpu,
    params: wgpu::Buffer,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: u32,
}

impl Kernel<'_> {
    /// Replaces the params uniform (takes effect at the next submission).
    fn set_params(&self, params: [u32; 4]) {
        self.gpu
            .queue
            .write_buffer(&self.params, 0, bytemuck::cast_slice(&params));
    }

    /// Wall-clock time of `repeats` dispatches in one compute pass.
    fn time(&self, repeats: u32) -> Result<Duration> {
        let gpu = self.gpu;
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("calibrate"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("calibrate"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            for _ in 0..repeats {
                pass.dispatch_workgroups(self.workgroups, 1, 1);
            }
        }
        let start = Instant::now();
        gpu.queue.submit([encoder.finish()]);
        gpu.watchdog
            .wait(&gpu.device, gpu.watchdog.deadline(0), "calibrating")?;
        let elapsed = start.elapsed();
        gpu.check_uncaptured("calibrating")?;
        Ok(elapsed)
    }
}

fn kernel<'g>(
    gpu: &'g Gpu,
    entry: &'static str,
    params: [u32; 4],
    src_bytes: u64,
    dst_bytes: u64,
    workgroups: u32,
) -> Result<Kernel<'g>> {
    let pipeline = gpu.pipeline(&CALIBRATE, entry, Precision::F32, &[])?;
    gpu.scoped(&format!("preparing calibration kernel {entry}"), || {
        let uniform = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("calibration params"),
            contents: bytemuck::cast_slice(&params),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        let buffer = |label, size| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let src = buffer("calibration source", src_bytes);
        let dst = buffer("calibration destination", dst_bytes);
        let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(entry),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: src.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: dst.as_entire_binding(),
                },
            ],
        });
        Kernel {
            gpu,
            params: uniform,
            pipeline: pipeline.clone(),
            bind_group,
            workgroups,
        }
    })
}

/// The fastest of [`TRIALS`] timings of `work(scale)` after growing `scale` (doubling from 1,
/// up to `max_scale`) until one run takes [`MIN_TRIAL`]; returns `(scale, seconds)`.
fn fastest(max_scale: u32, mut work: impl FnMut(u32) -> Result<Duration>) -> Result<(u32, f64)> {
    let mut scale = 1;
    while work(scale)? < MIN_TRIAL && scale < max_scale {
        scale = (scale * 2).min(max_scale);
    }
    let mut best = f64::INFINITY;
    for _ in 0..TRIALS {
        best = best.min(work(scale)?.as_secs_f64());
    }
    Ok((scale, best))
}

/// Measures the adapter's peak f32 FLOP/s and copy bandwidth.
pub fn calibrate(gpu: &Gpu) -> Result<Peak> {
    // Arithmetic: the scale is the number of loop steps per invocation, the operands keep the
    // chains finite (|x| converges towards b / (1 - a)).
    let invocations = u64::from(FLOP_WORKGROUPS) * 256;
    let flops_params = |iterations: u32| [iterations, 0, 0.999_f32.to_bits(), 0.001_f32.to_bits()];
    let flops = kernel(
        gpu,
        "peak_flops",
        flops_params(1),
        16,
        invocations * 16,
        FLOP_WORKGROUPS,
    )?;
    let (iterations, seconds) = fastest(1 << 24, |iterations| {
        flops.set_params(flops_params(iterations));
        flops.time(1)
    })?;
    let flops_per_second = (invocations * u64::from(iterations) * FLOPS_PER_STEP) as f64 / seconds;

    // Bandwidth: the scale is the number of copies in one pass.
    let bytes = COPY_BYTES.min(gpu.max_tensor_bytes()) / 16 * 16;
    let count = bytes / 16;
    let max_dim = gpu.limits.max_compute_workgroups_per_dimension;
    let workgroups = count.div_ceil(256).min(u64::from(max_dim)) as u32;
    let copy = kernel(
        gpu,
        "peak_bandwidth",
        [0, count as u32, 0, 0],
        bytes,
        bytes,
        workgroups,
    )?;
    let (repeats, seconds) = fastest(1 << 12, |repeats| copy.time(repeats))?;
    let bytes_per_second = (2 * bytes * u64::from(repeats)) as f64 / seconds;

    if !(flops_per_second.is_finite() && bytes_per_second.is_finite()) {
        return Err(DeviceError::NoTime {
            adapter: gpu.summary.fingerprint.label(),
        }
        .into());
    }
    Ok(Peak {
        flops_per_second,
        bytes_per_second,
    })
}
