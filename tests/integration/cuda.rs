//! The `cuda` backend (feature `cuda`): every op, forward and backward, against the f64 CPU
//! reference on random shapes and values, as `ops.rs` does for wgpu (same error bounds,
//! NaN-poisoned outputs, `CONVBENCH_SEED` to replay), plus one verified LeNet training iteration.
//!
//! Without an NVIDIA driver and the CUDA libraries these tests print why they skip; with
//! `CONVBENCH_REQUIRE_CUDA=1` they fail instead. Two tests need no GPU: opening the backend
//! where CUDA is missing is an environment error naming the library, and NVRTC (when
//! `libnvrtc` is on the library path, as in CI) compiles the backend's kernels.

use super::support::{assert_within_bound, input_values, random_conv, rng, seed};
use convbench::ErrorKind;
use convbench::backend::cuda::{CudaBackend, compile_kernels_without_device};
use convbench::backend::{Backend, Program};
use convbench::harness::{RunOptions, Target, measure, verify, verify_target};
use convbench::kernels::{ConvGeom, DType, LinearGeom, Op, PoolGeom};
use convbench::model::{BatchNorm, Conv2d, Lrn, Pool2d, PoolKind, Precision, Shape, network};
use convbench::results::{Phase, TimingMethod};
use rand::Rng;
use rand::rngs::StdRng;

fn cuda_required() -> bool {
    std::env::var("CONVBENCH_REQUIRE_CUDA").is_ok_and(|v| v == "1")
}

/// The first CUDA device, or `None` (with a notice naming what is missing) when it cannot be
/// opened and `CONVBENCH_REQUIRE_CUDA` is not `1`.
fn cuda() -> Option<CudaBackend> {
    match CudaBackend::open(0) {
        Ok(backend) => Some(backend),
        Err(e) if cuda_required() => {
            panic!("CONVBENCH_REQUIRE_CUDA=1 but the cuda backend did not open: {e}")
        }
        Err(e) => {
            eprintln!("skipping CUDA tests: {e}");
            None
        }
    }
}

#[test]
fn opening_without_cuda_is_an_environment_error_naming_what_is_missing() {
    match CudaBackend::open(0) {
        Ok(backend) => eprintln!("{} opened; nothing to check", backend.adapter().label()),
        Err(e) => {
            let message = e.to_string();
            assert_eq!(e.kind(), ErrorKind::Environment, "{message}");
            if message.contains("was not found") {
                assert!(
                    ["libcuda", "libnvrtc", "libcublas", "libcudnn"]
                        .iter()
                        .any(|library| message.contains(library)),
                    "the error names no library: {message}"
                );
                assert!(message.contains("LD_LIBRARY_PATH"), "no next step: {message}");
            }
        }
    }
}

/// `CONVBENCH_REQUIRE_NVRTC=1` (CI, which installs NVRTC) fails the compilation test instead of
/// skipping it when `libnvrtc` is missing.
#[test]
fn nvrtc_compiles_the_kernels() {
    let required = cuda_required() || std::env::var("CONVBENCH_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    match compile_kernels_without_device() {
        Ok(()) => {}
        Err(e) if e.to_string().contains("was not found") && !required => {
            eprintln!("skipping the NVRTC compilation of the CUDA kernels: {e}");
        }
        Err(e) => panic!("{e}"),
    }
}

/// Runs `op` on the backend on random inputs and checks it against the reference.
fn check(backend: &CudaBackend, op: &Op, precision: Precision, rng: &mut StdRng) {
    let dtypes = op.dtypes();
    let lens = op.binding_lens();
    let mut program = Program::new(precision);
    let ids: Vec<usize> = lens
        .iter()
        .zip(&dtypes)
        .enumerate()
        .map(|(i, (&len, &dtype))| program.tensor(format!("binding{i}"), len, dtype))
        .collect();
    program.push(op.clone(), ids.clone()).expect("op contract");
    let context = || {
        format!(
            "{} {precision} on cuda (seed {}, replay with CONVBENCH_SEED={}); op: {op:?}",
            op.name(),
            seed(),
            seed()
        )
    };
    let mut loaded = backend
        .load(&program)
        .unwrap_or_else(|e| panic!("{}: {e}", context()));
    for (i, &dtype) in dtypes.iter().enumerate() {
        match dtype {
            DType::U32 => {
                let classes = (lens[0] / lens[i]) as u32;
                let labels: Vec<u32> = (0..lens[i]).map(|_| rng.random_range(0..classes)).collect();
                loaded.write_u32(ids[i], &labels).expect("write labels");
            }
            DType::Float => loaded
                .write(ids[i], &input_values(op, i, lens[i], rng))
                .expect("write"),
        }
    }
    let result =
        verify::check_op(loaded.as_mut(), &program, 0).unwrap_or_else(|e| panic!("{}: {e}", context()));
    assert_within_bound(&result, context());
    eprintln!("error/bound {:<32} {precision}  {:.3}", op.name(), result.ratio);
}

/// Runs each op in f32 and f16 (when the device has it) on one backend.
fn check_all(ops: &[Op], rng: &mut StdRng) {
    let Some(backend) = cuda() else { return };
    for op in ops {
        check(&backend, op, Precision::F32, rng);
        if backend.supports(Precision::F16) {
            check(&backend, op, Precision::F16, rng);
        }
    }
}

fn conv_cases(rng: &mut StdRng) -> Vec<ConvGeom> {
    let mut cases: Vec<ConvGeom> = (0..8).map(|_| random_conv(rng)).collect();
    // AlexNet-like layers at small sizes: 5x5 pad 2, and 11x11 stride 4 at batch 1.
    cases.push(ConvGeom {
        conv: Conv2d::square(16, 24, 5, 1, 2),
        input: Shape::new(2, 16, 17, 17),
        output: Shape::new(2, 24, 17, 17),
    });
    cases.push(ConvGeom {
        conv: Conv2d::square(3, 8, 11, 4, 2),
        input: Shape::new(1, 3, 35, 35),
        output: Shape::new(1, 8, 8, 8),
    });
    // A 3x3 layer wide enough for cuDNN's Winograd and FFT algorithms to compete.
    cases.push(ConvGeom {
        conv: Conv2d::square(64, 64, 3, 1, 1),
        input: Shape::new(4, 64, 28, 28),
        output: Shape::new(4, 64, 28, 28),
    });
    cases
}

#[test]
fn conv2d_forward() {
    let mut rng = rng(101);
    let ops: Vec<Op> = conv_cases(&mut rng).into_iter().map(Op::Conv2dForward).collect();
    check_all(&ops, &mut rng);
}

#[test]
fn conv2d_backward_data() {
    let mut rng = rng(102);
    let ops: Vec<Op> = conv_cases(&mut rng)
        .into_iter()
        .map(Op::Conv2dBackwardData)
        .collect();
    check_all(&ops, &mut rng);
}

#[test]
fn conv2d_backward_filter() {
    let mut rng = rng(103);
    let ops: Vec<Op> = conv_cases(&mut rng)
        .into_iter()
        .map(Op::Conv2dBackwardFilter)
        .collect();
    check_all(&ops, &mut rng);
}

fn pool_case(pool: Pool2d, input: Shape) -> PoolGeom {
    let (h, w) = pool.output_hw(input.h, input.w).expect("window fits");
    PoolGeom {
        pool,
        input,
        output: Shape::new(input.n, input.c, h, w),
    }
}

fn pool_cases(rng: &mut StdRng) -> Vec<PoolGeom> {
    let mut cases = Vec::new();
    while cases.len() < 12 {
        let k = rng.random_range(1..=4);
        let pool = Pool2d {
            kind: if rng.random_bool(0.5) {
                PoolKind::Max
            } else {
                PoolKind::Avg
            },
            kernel: (k, rng.random_range(1..=4)),
            stride: (rng.random_range(1..=3), rng.random_range(1..=3)),
            padding: (rng.random_range(0..=k / 2), 0),
            ceil_mode: rng.random_bool(0.5),
            count_include_pad: rng.random_bool(0.5),
        };
        let input = Shape::new(
            rng.random_range(1..=3),
            rng.random_range(1..=4),
            rng.random_range(3..=13),
            rng.random_range(3..=13),
        );
        if pool.output_hw(input.h, input.w).is_some() {
            cases.push(pool_case(pool, input));
        }
    }
    let input = Shape::new(2, 8, 15, 15);
    // GoogLeNet's ceil-mode pools (our kernels: rounding up adds a window) ...
    cases.push(pool_case(Pool2d::max(3, 2, 0, true), Shape::new(2, 8, 14, 14)));
    cases.push(pool_case(Pool2d::max(3, 1, 1, true), input));
    cases.push(pool_case(Pool2d::avg(3, 2, 1, true), Shape::new(2, 8, 14, 14)));
    // ... and floor-sized ones (cuDNN), with and without padding in the average's divisor.
    cases.push(pool_case(Pool2d::max(3, 2, 0, false), input));
    cases.push(pool_case(Pool2d::max(3, 2, 1, false), input));
    cases.push(pool_case(Pool2d::avg(3, 2, 1, false), input));
    cases.push(pool_case(
        Pool2d {
            count_include_pad: false,
            ..Pool2d::avg(3, 2, 1, false)
        },
        input,
    ));
    cases
}

#[test]
fn pool_forward_and_backward() {
    let mut rng = rng(104);
    let ops: Vec<Op> = pool_cases(&mut rng)
        .iter()
        .flat_map(|&g| [Op::PoolForward(g), Op::PoolBackward(g)])
        .collect();
    check_all(&ops, &mut rng);
}

#[test]
fn relu_add_and_sgd() {
    let mut rng = rng(105);
    let mut ops = Vec::new();
    for len in [1, rng.random_range(2..=70_000), 1 << 20] {
        ops.push(Op::ReluForward { len });
        ops.push(Op::ReluBackward { len });
        ops.push(Op::Add { len });
        ops.push(Op::SgdUpdate {
            len,
            lr: 0.01,
            momentum: 0.9,
            weight_decay: 5e-4,
        });
    }
    check_all(&ops, &mut rng);
}

#[test]
fn lrn_forward_and_backward() {
    let mut rng = rng(106);
    let mut ops = Vec::new();
    for size in [1, 3, 5, 4] {
        let lrn = Lrn {
            size,
            alpha: rng.random_range(0.1..1.0),
            beta: 0.75,
            k: if rng.random_bool(0.5) { 1.0 } else { 2.0 },
        };
        let shape = Shape::new(
            rng.random_range(1..=3),
            rng.random_range(1..=9),
            rng.random_range(1..=7),
            rng.random_range(1..=7),
        );
        ops.push(Op::LrnForward { lrn, shape });
        ops.push(Op::LrnBackward { lrn, shape });
    }
    check_all(&ops, &mut rng);
}

#[test]
fn batch_norm_train_eval_and_backward() {
    let mut rng = rng(107);
    let mut ops = Vec::new();
    let mut shapes: Vec<Shape> = (0..4)
        .map(|_| {
            Shape::new(
                rng.random_range(1..=3),
                rng.random_range(1..=6),
                rng.random_range(2..=9),
                rng.random_range(1..=9),
            )
        })
        .collect();
    // Batch 1 with many pixels, and a ResNet-like layer.
    shapes.push(Shape::new(1, 3, 40, 40));
    shapes.push(Shape::new(8, 64, 14, 14));
    for shape in shapes {
        let bn = BatchNorm {
            channels: shape.c,
            eps: 1e-5,
            momentum: 0.1,
        };
        ops.push(Op::BatchNormForwardTrain { bn, shape });
        ops.push(Op::BatchNormForwardEval { bn, shape });
        ops.push(Op::BatchNormBackward { bn, shape });
    }
    check_all(&ops, &mut rng);
}

#[test]
fn linear_forward_and_backward() {
    let mut rng = rng(108);
    let mut geoms: Vec<LinearGeom> = (0..5)
        .map(|_| {
            let mut g = LinearGeom::new(
                rng.random_range(1..=5),
                rng.random_range(1..=300),
                rng.random_range(1..=40),
                rng.random_bool(0.7),
            );
            if rng.random_bool(0.5) {
                // A column slice of a wider layer (how layers too large for one binding run).
                g.y_stride = g.out_features + rng.random_range(1..=20);
                g.y_offset = rng.random_range(0..=g.y_stride - g.out_features);
            }
            g
        })
        .collect();
    // AlexNet's fc7 at batch 8, and an odd slice (unaligned f16 column offset).
    geoms.push(LinearGeom::new(8, 4096, 4096, true));
    geoms.push(LinearGeom {
        y_stride: 37,
        y_offset: 3,
        ..LinearGeom::new(3, 65, 31, true)
    });
    let ops: Vec<Op> = geoms
        .into_iter()
        .flat_map(|g| {
            [
                Op::LinearForward(g),
                Op::LinearBackwardData(g),
                Op::LinearBackwardParams(g),
            ]
        })
        .collect();
    check_all(&ops, &mut rng);
}

#[test]
fn softmax_cross_entropy() {
    let mut rng = rng(109);
    let mut ops = Vec::new();
    for (batch, classes) in [
        (1, 2),
        (3, 17),
        (rng.random_range(1..=8), rng.random_range(2..=50)),
        (4, 1000),
        (2, 21_841),
    ] {
        ops.push(Op::SoftmaxCrossEntropyForward { batch, classes });
        ops.push(Op::SoftmaxCrossEntropyBackward { batch, classes });
    }
    check_all(&ops, &mut rng);
}

#[test]
fn concat_split_and_global_avgpool() {
    let mut rng = rng(110);
    let mut ops = Vec::new();
    for _ in 0..4 {
        let (n, hw, total) = (
            rng.random_range(1..=3),
            rng.random_range(1..=30),
            rng.random_range(2..=9),
        );
        let part = rng.random_range(1..total);
        let offset = rng.random_range(0..=total - part);
        for into_concat in [true, false] {
            ops.push(Op::ChannelCopy {
                n,
                hw,
                total_channels: total,
                part_channels: part,
                offset,
                into_concat,
            });
        }
        let shape = Shape::new(n, total, rng.random_range(1..=9), rng.random_range(1..=9));
        ops.push(Op::GlobalAvgPoolForward { shape });
        ops.push(Op::GlobalAvgPoolBackward { shape });
    }
    // ResNet-50's last pool at batch 4: more planes than one block of warps.
    let shape = Shape::new(4, 2048, 7, 7);
    ops.push(Op::GlobalAvgPoolForward { shape });
    ops.push(Op::GlobalAvgPoolBackward { shape });
    check_all(&ops, &mut rng);
}

/// One verified training iteration of `name` (every op against the reference with the device's
/// own inputs), then one timed iteration measured with CUDA events.
fn verified_train_iteration(name: &str, batch: usize, precision: Precision) {
    let Some(backend) = cuda() else { return };
    if !backend.supports(precision) {
        return;
    }
    assert_eq!(backend.timing_method(), TimingMethod::DeviceEvents);
    let target = Target::Model(network(name).expect("model in the zoo"));
    let options = RunOptions {
        samples: 1,
        warmup_iterations: 0,
        warmup_min: std::time::Duration::ZERO,
        ..RunOptions::default()
    };
    let worst = verify_target(&backend, &target, batch, precision, &options, &mut |_| {})
        .unwrap_or_else(|e| panic!("{name} b{batch} {precision} on cuda (seed {}): {e}", seed()));
    eprintln!(
        "{name} b{batch} {precision}: every op verified on cuda, worst error/bound {:.3}",
        worst.worst_ratio()
    );
    let result = measure(&backend, &target, batch, precision, &options, &mut |_| {}).expect("measured");
    for phase in [
        Phase::Forward,
        Phase::GradInput,
        Phase::GradParams,
        Phase::Update,
        Phase::Total,
    ] {
        let p = result
            .phase(phase)
            .unwrap_or_else(|| panic!("{name}: phase {phase:?} missing"));
        assert!(p.summary.median_ns > 0.0, "{name}: {phase:?} not timed");
    }
}

#[test]
fn lenet_train_iteration() {
    verified_train_iteration("lenet", 8, Precision::F32);
    verified_train_iteration("lenet", 8, Precision::F16);
}
