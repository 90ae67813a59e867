//! `cargo bench --bench cpu_dispatch`: what the `cpu` backend spends around its kernels, on
//! programs whose ops are so small that this overhead is most of their time: 256 ReLUs of one
//! element each, and LeNet's training step at batch 1 (the smallest real program of the zoo).
//!
//! The durations are wall clock around `Loaded::run`, which waits for every op (the cpu backend
//! is synchronous), as `cargo convbench run --backend cpu` times it.

use convbench::backend::cpu::CpuBackend;
use convbench::backend::{Backend, Program};
use convbench::harness::plan::{PlanOptions, plan_network};
use convbench::kernels::{DType, Op};
use convbench::model::{Precision, network};
use convbench::results::Stage;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

/// ReLUs of one element in a chain, so each reads what the previous one wrote.
const TINY_OPS: usize = 256;

fn tiny_ops() -> Program {
    let mut program = Program::new(Precision::F32);
    let mut x = program.tensor("x0", 1, DType::Float);
    for k in 1..=TINY_OPS {
        let y = program.tensor(format!("x{k}"), 1, DType::Float);
        program
            .push(Op::ReluForward { len: 1 }, vec![x, y])
            .expect("a ReLU of one element");
        x = y;
    }
    program
}

fn cpu_dispatch(c: &mut Criterion) {
    let backend = CpuBackend::new();
    let mut group = c.benchmark_group("cpu");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));

    let program = tiny_ops();
    let mut loaded = backend.load(&program).expect("loads");
    group.throughput(Throughput::Elements(TINY_OPS as u64));
    group.bench_function("relu_1_element_x256", |b| {
        b.iter(|| loaded.run(0..TINY_OPS, false).expect("runs"));
    });

    let lenet = network("lenet").expect("the zoo has lenet");
    let options = PlanOptions {
        stage: Stage::Train,
        data_grad: false,
        max_tensor_bytes: backend.max_tensor_bytes(),
    };
    let plan = plan_network(&lenet, 1, Precision::F32, options).expect("lenet plans");
    let ops = plan.program.ops.len();
    let mut loaded = backend.load(&plan.program).expect("loads");
    group.throughput(Throughput::Elements(ops as u64));
    group.bench_function("lenet_train_batch_1", |b| {
        b.iter(|| loaded.run(0..ops, false).expect("runs"));
    });
    group.finish();
}

criterion_group!(benches, cpu_dispatch);
criterion_main!(benches);
