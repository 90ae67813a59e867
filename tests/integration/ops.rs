//! Every op, forward and backward, on the GPU against the f64 CPU reference: random shapes and
//! values (seed printed on failure, `CONVBENCH_SEED` to replay), outputs poisoned with NaN so
//! that an element the kernel does not write fails.
//!
//! The rule is the library's per-element rounding-error bound (`convbench::harness::verify`,
//! whose docs justify it), so these tests and `cargo convbench run` judge alike.

use super::support::{assert_within_bound, gpu, input_values, portable_gpu, random_conv, rng, seed};
use convbench::backend::wgpu::WgpuBackend;
use convbench::backend::{Backend, Program};
use convbench::harness::verify;
use convbench::kernels::{ConvGeom, DType, LinearGeom, Op, PoolGeom};
use convbench::model::{BatchNorm, Conv2d, Lrn, Pool2d, PoolKind, Precision, Shape};
use rand::Rng;
use rand::rngs::StdRng;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Per (op, precision): worst ratio of error to bound on the largest case and that case's
/// element count.
type WorstTable = BTreeMap<(String, &'static str), (f64, usize)>;
static WORST: Mutex<WorstTable> = Mutex::new(BTreeMap::new());

/// Runs `op` on the GPU on random inputs and checks it against the reference; returns the
/// worst ratio of error to bound over its outputs.
fn check(op: &Op, precision: Precision, rng: &mut StdRng) -> f64 {
    let Some(backend) = gpu() else { return 0.0 };
    check_on(backend, op, precision, rng)
}

/// [`check`] on `backend`.
fn check_on(backend: &WgpuBackend, op: &Op, precision: Precision, rng: &mut StdRng) -> f64 {
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
            "{} {precision} (seed {}, replay with CONVBENCH_SEED={}); op: {op:?}",
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
    let size: usize = lens.iter().sum();
    let mut table = WORST.lock().expect("lock");
    let entry = table
        .entry((op.name().to_string(), precision.as_str()))
        .or_insert((0.0, 0));
    if size > entry.1 {
        *entry = (result.ratio, size);
    } else if size == entry.1 {
        entry.0 = entry.0.max(result.ratio);
    }
    result.ratio
}

/// Runs each op in f32, and in f16 when the adapter has it.
fn check_all(ops: &[Op], rng: &mut StdRng) {
    let Some(backend) = gpu() else { return };
    for op in ops {
        check(op, Precision::F32, rng);
        if backend.supports(Precision::F16) {
            check(op, Precision::F16, rng);
        }
    }
    let table = WORST.lock().expect("lock");
    for op in ops
        .iter()
        .map(Op::name)
        .collect::<std::collections::BTreeSet<_>>()
    {
        for p in ["f32", "f16"] {
            if let Some((err, size)) = table.get(&(op.to_string(), p)) {
                eprintln!("error/bound {op:<32} {p}  {err:.3}  (largest case: {size} elements)");
            }
        }
    }
}

fn conv_cases(rng: &mut StdRng) -> Vec<ConvGeom> {
    let mut cases: Vec<ConvGeom> = (0..8).map(|_| random_conv(rng)).collect();
    // Larger, AlexNet-like: 5x5 pad 2 over 16 channels at 17x17, batch 2.
    let conv = Conv2d::square(16, 24, 5, 1, 2);
    cases.push(ConvGeom {
        conv,
        input: Shape::new(2, 16, 17, 17),
        output: Shape::new(2, 24, 17, 17),
    });
    // Batch 1, stride 4, 11x11 (AlexNet's first layer shape at small size).
    let conv = Conv2d::square(3, 8, 11, 4, 2);
    cases.push(ConvGeom {
        conv,
        input: Shape::new(1, 3, 35, 35),
        output: Shape::new(1, 8, 8, 8),
    });
    cases
}

#[test]
fn conv2d_forward() {
    let mut rng = rng(1);
    let ops: Vec<Op> = conv_cases(&mut rng).into_iter().map(Op::Conv2dForward).collect();
    check_all(&ops, &mut rng);
}

#[test]
fn conv2d_backward_data() {
    let mut rng = rng(2);
    let ops: Vec<Op> = conv_cases(&mut rng)
        .into_iter()
        .map(Op::Conv2dBackwardData)
        .collect();
    check_all(&ops, &mut rng);
}

#[test]
fn conv2d_backward_filter() {
    let mut rng = rng(3);
    let ops: Vec<Op> = conv_cases(&mut rng)
        .into_iter()
        .map(Op::Conv2dBackwardFilter)
        .collect();
    check_all(&ops, &mut rng);
}

fn pool_cases(rng: &mut StdRng) -> Vec<PoolGeom> {
    let mut cases = Vec::new();
    while cases.len() < 10 {
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
        if let Some((h, w)) = pool.output_hw(input.h, input.w) {
            cases.push(PoolGeom {
                pool,
                input,
                output: Shape::new(input.n, input.c, h, w),
            });
        }
    }
    // GoogLeNet's ceil-mode 3/2 max pool and a 3/1 pad-1 pool on an odd size.
    for pool in [
        Pool2d::max(3, 2, 0, true),
        Pool2d::max(3, 1, 1, true),
        Pool2d::avg(3, 2, 1, true),
    ] {
        let input = Shape::new(2, 8, 15, 15);
        let (h, w) = pool.output_hw(15, 15).expect("fits");
        cases.push(PoolGeom {
            pool,
            input,
            output: Shape::new(2, 8, h, w),
        });
    }
    cases
}

#[test]
fn pool_forward_and_backward() {
    let mut rng = rng(4);
    let cases = pool_cases(&mut rng);
    let ops: Vec<Op> = cases
        .iter()
        .flat_map(|&g| [Op::PoolForward(g), Op::PoolBackward(g)])
        .collect();
    check_all(&ops, &mut rng);
}

#[test]
fn relu_add_and_sgd() {
    let mut rng = rng(5);
    let mut ops = Vec::new();
    for _ in 0..3 {
        let len = rng.random_range(1..=70_000);
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
    let mut rng = rng(6);
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
    let mut rng = rng(7);
    let mut ops = Vec::new();
    for _ in 0..4 {
        let shape = Shape::new(
            rng.random_range(1..=3),
            rng.random_range(1..=6),
            rng.random_range(2..=9),
            rng.random_range(1..=9),
        );
        let bn = BatchNorm {
            channels: shape.c,
            eps: 1e-5,
            momentum: 0.1,
        };
        ops.push(Op::BatchNormForwardTrain { bn, shape });
        ops.push(Op::BatchNormForwardEval { bn, shape });
        ops.push(Op::BatchNormBackward { bn, shape });
    }
    // Batch 1 with many pixels (a reduction longer than one workgroup).
    let shape = Shape::new(1, 3, 40, 40);
    let bn = BatchNorm {
        channels: 3,
        eps: 1e-5,
        momentum: 0.1,
    };
    ops.push(Op::BatchNormForwardTrain { bn, shape });
    ops.push(Op::BatchNormBackward { bn, shape });
    check_all(&ops, &mut rng);
}

#[test]
fn linear_forward_and_backward() {
    let mut rng = rng(8);
    let mut ops = Vec::new();
    for _ in 0..5 {
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
        ops.extend([
            Op::LinearForward(g),
            Op::LinearBackwardData(g),
            Op::LinearBackwardParams(g),
        ]);
    }
    check_all(&ops, &mut rng);
}

#[test]
fn softmax_cross_entropy() {
    let mut rng = rng(9);
    let mut ops = Vec::new();
    for (batch, classes) in [
        (1, 2),
        (3, 17),
        (rng.random_range(1..=8), rng.random_range(2..=50)),
        (4, 1000),
    ] {
        ops.push(Op::SoftmaxCrossEntropyForward { batch, classes });
        ops.push(Op::SoftmaxCrossEntropyBackward { batch, classes });
    }
    check_all(&ops, &mut rng);
}

#[test]
fn concat_split_and_global_avgpool() {
    let mut rng = rng(10);
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
    check_all(&ops, &mut rng);
}

/// The reductions (batch norm statistics and gradients, convolution bias gradients) have a
/// subgroup form, used where the adapter has subgroup operations, and a portable one: both are
/// checked here whatever the adapter (the portable one on a device opened with subgroups off).
#[test]
fn reductions_with_and_without_subgroups() {
    let (Some(backend), Some(portable)) = (gpu(), portable_gpu()) else {
        return;
    };
    assert!(!portable.gpu().uses_subgroups());
    if backend.gpu().summary().subgroups {
        assert!(
            backend.gpu().uses_subgroups(),
            "the adapter has subgroups, so they are used"
        );
    } else {
        eprintln!("notice: this adapter has no subgroup operations; only the portable form runs");
    }
    let mut rng = rng(12);
    let mut ops = Vec::new();
    for (n, c, h, w) in [(1, 3, 40, 40), (3, 5, 7, 9), (2, 1, 1, 1)] {
        let shape = Shape::new(n, c, h, w);
        let bn = BatchNorm {
            channels: c,
            eps: 1e-5,
            momentum: 0.1,
        };
        ops.push(Op::BatchNormForwardTrain { bn, shape });
        ops.push(Op::BatchNormBackward { bn, shape });
    }
    let mut conv = Conv2d::square(4, 6, 3, 1, 1);
    conv.bias = true;
    ops.push(Op::Conv2dBackwardFilter(ConvGeom {
        conv,
        input: Shape::new(2, 4, 23, 19),
        output: Shape::new(2, 6, 23, 19),
    }));
    for op in &ops {
        for device in [backend, portable] {
            check_on(device, op, Precision::F32, &mut rng);
            if device.supports(Precision::F16) {
                check_on(device, op, Precision::F16, &mut rng);
            }
        }
    }
}
