//! `cargo bench`: the convolution kernels of the `layers` suite (convnet-benchmarks' L1–L5),
//! forward, backward-data and backward-filter, timed with GPU timestamps, each with the
//! `direct` kernels and with the variant the shape heuristic picks (`Variant::heuristic`).
//!
//! Criterion drives the iteration counts and statistics; the durations it receives come from
//! `iter_custom` and are the GPU's own timestamps around each op's compute pass (wall clock
//! after a synchronising wait only on adapters without `TIMESTAMP_QUERY`), so host overhead
//! and submission latency are not counted. The kernels are verified against the CPU reference
//! before they are timed. `CONVBENCH_BENCH_BATCH` sets the batch (default 1, sized for software
//! adapters); `CONVBENCH_ADAPTER` picks the adapter.

use convbench::backend::Backend;
use convbench::backend::wgpu::WgpuBackend;
use convbench::harness::plan::plan_suite_entry;
use convbench::harness::select::{KernelChoice, choose};
use convbench::harness::verify::check_program;
use convbench::kernels::Variant;
use convbench::kernels::variant::DeviceClass;
use convbench::model::{Precision, suite};
use convbench::results::Stage;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

fn kernels(c: &mut Criterion) {
    let backend = match WgpuBackend::open(std::env::var("CONVBENCH_ADAPTER").ok().as_deref()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("no GPU adapter, nothing to benchmark: {e}");
            return;
        }
    };
    let batch: usize = std::env::var("CONVBENCH_BENCH_BATCH")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(1);
    let layers = suite("layers").expect("the layers suite exists");
    let mut group = c.benchmark_group(format!("conv2d/{}", backend.adapter().label()));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for entry in &layers.entries {
        for choice in [KernelChoice::Force(Variant::Direct), KernelChoice::Heuristic] {
            let mut plan = plan_suite_entry(entry, batch, Precision::F32, Stage::Train).expect("plan");
            choose(&mut plan.program, &choice, DeviceClass::of(backend.adapter()));
            let mut loaded = backend.load(&plan.program).expect("load");
            for &(tensor, _) in &plan.inits {
                let len = plan.program.tensors[tensor].len;
                let values: Vec<f32> = (0..len)
                    .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
                    .collect();
                loaded.write(tensor, &values).expect("write");
            }
            check_program(loaded.as_mut(), &plan.program, |i| {
                format!("{} op {i}", entry.name)
            })
            .expect("verified");
            for (index, call) in plan.program.ops.iter().enumerate() {
                group.throughput(Throughput::Elements(call.op.flops()));
                let id = format!("{}/b{batch}/{}/{}", entry.name, call.op.name(), call.variant);
                group.bench_function(id, |b| {
                    b.iter_custom(|iterations| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iterations {
                            let timings = loaded.run(index..index + 1, true).expect("run");
                            total += Duration::from_nanos(timings.total_ns);
                        }
                        total
                    });
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
