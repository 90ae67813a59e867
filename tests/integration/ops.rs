//! Every op, forward and backward, on the GPU against the f64 CPU reference: random shapes and
//! values (seed printed on failure, `CONVBENCH_SEED` to replay), outputs poisoned with NaN so
//! that an element the kernel does not write fails.
//!
//! Error metric: `max_i |gpu_i - ref_i| / max(|ref_i|, 1e-2 * max_j |ref_j|)`, i.e. relative
//! error with a floor at a hundredth of the tensor's scale, so elements that cancel to near
//! zero are judged against the size of the values around them rather than against zero.
//! An indexing or boundary mistake, or an unwritten (NaN) element, gives an error of O(1).
//!
//! Tolerances:
//! - f32: 1e-4. Kernels accumulate in f32 in a different order from the reference; a sum of K
//!   products of values in [-1, 1] has a rounding error of about sqrt(K) * 2^-24 of the sum of
//!   the magnitudes of its terms. For the largest reductions here (K ~ 2,000) that is ~3e-6 of
//!   the scale; measured worst cases are ~2e-5, so 1e-4 keeps a 5x margin.
//! - f16: 2e-2. Inputs are rounded to f16 before both sides see them, so the difference is
//!   the f16 rounding of outputs (2^-11 ~ 4.9e-4 relative) plus intermediates stored in f16
//!   (LRN scale, batch-norm mean and inverse deviation, 4.9e-4 relative each). Near the floor
//!   (1% of the scale) those absolute errors read up to ~1e-2; 2e-2 keeps a 2x margin.

use super::support::{gpu, rng, seed, uniform};
use convbench::backend::{Backend, Program};
use convbench::kernels::{Access, ConvGeom, DType, LinearGeom, Op, PoolGeom, reference};
use convbench::model::{BatchNorm, Conv2d, Lrn, Pool2d, PoolKind, Precision, Shape};
use rand::Rng;
use rand::rngs::StdRng;
use std::collections::BTreeMap;
use std::sync::Mutex;

const F32_TOLERANCE: f64 = 1e-4;
const F16_TOLERANCE: f64 = 2e-2;

fn round(values: Vec<f32>, precision: Precision) -> Vec<f32> {
    match precision {
        Precision::F32 => values,
        Precision::F16 => values
            .into_iter()
            .map(|v| half::f16::from_f32(v).to_f32())
            .collect(),
    }
}

/// Values in the op's domain for binding `index` (positive where the op divides or takes powers).
fn input_values(op: &Op, index: usize, len: usize, rng: &mut StdRng) -> Vec<f32> {
    let positive = matches!(
        (op, index),
        (Op::LrnBackward { .. }, 2)
            | (Op::BatchNormForwardEval { .. }, 4)
            | (Op::BatchNormBackward { .. }, 4)
    ) || matches!((op, index), (Op::BatchNormForwardTrain { .. }, 7));
    let values = uniform(rng, len);
    if positive {
        values.into_iter().map(|v| 1.0 + v.abs()).collect()
    } else {
        values
    }
}

fn relative_error(gpu: &[f32], reference: &[f64]) -> f64 {
    let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let floor = (1e-2 * scale).max(1e-12);
    gpu.iter()
        .zip(reference)
        .map(|(&g, &r)| {
            let g = f64::from(g);
            if !g.is_finite() {
                f64::INFINITY
            } else {
                (g - r).abs() / r.abs().max(floor)
            }
        })
        .fold(0.0, f64::max)
}

static WORST: Mutex<BTreeMap<(String, &'static str), (f64, usize)>> = Mutex::new(BTreeMap::new());

/// Runs `op` on the GPU and the reference; returns the worst relative error over its outputs.
fn check(op: &Op, precision: Precision, rng: &mut StdRng) -> f64 {
    let Some(backend) = gpu() else { return 0.0 };
    let accesses = op.bindings();
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
    let mut loaded = backend
        .load(&program)
        .unwrap_or_else(|e| panic!("{} (seed {}): {e}", op.name(), seed()));

    let mut initial: Vec<Vec<f32>> = Vec::new();
    let mut labels: Option<Vec<u32>> = None;
    for (i, (&access, &dtype)) in accesses.iter().zip(&dtypes).enumerate() {
        match dtype {
            DType::U32 => {
                let classes = (lens[0] / lens[i]) as u32;
                let l: Vec<u32> = (0..lens[i]).map(|_| rng.random_range(0..classes)).collect();
                loaded.write_u32(ids[i], &l).expect("write labels");
                labels = Some(l);
                initial.push(Vec::new());
            }
            DType::Float => {
                let values = if access == Access::Write {
                    vec![f32::NAN; lens[i]]
                } else {
                    round(input_values(op, i, lens[i], rng), precision)
                };
                loaded.write(ids[i], &values).expect("write");
                initial.push(values);
            }
        }
    }
    loaded
        .run(0..1, false)
        .unwrap_or_else(|e| panic!("{} (seed {}): {e}", op.name(), seed()));

    let as_f64 = |v: &Vec<f32>| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let inputs: Vec<Vec<f64>> = (0..accesses.len())
        .filter(|&i| accesses[i] == Access::Read && dtypes[i] == DType::Float)
        .map(|i| as_f64(&initial[i]))
        .collect();
    let output_bindings: Vec<usize> = (0..accesses.len())
        .filter(|&i| accesses[i] != Access::Read)
        .collect();
    let mut outputs: Vec<Vec<f64>> = output_bindings.iter().map(|&i| as_f64(&initial[i])).collect();
    {
        let input_refs: Vec<&[f64]> = inputs.iter().map(Vec::as_slice).collect();
        let mut output_refs: Vec<&mut [f64]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
        reference::execute(op, &input_refs, labels.as_deref(), &mut output_refs);
    }
    let mut worst = 0.0f64;
    for (k, &b) in output_bindings.iter().enumerate() {
        let got = loaded.read(ids[b]).expect("read");
        let err = relative_error(&got, &outputs[k]);
        let tolerance = if precision == Precision::F32 {
            F32_TOLERANCE
        } else {
            F16_TOLERANCE
        };
        assert!(
            err <= tolerance,
            "{} {precision} binding {b}: relative error {err:.3e} > {tolerance:.0e} (seed {}, replay with \
             CONVBENCH_SEED={}); op: {op:?}",
            op.name(),
            seed(),
            seed()
        );
        worst = worst.max(err);
    }
    let size: usize = lens.iter().sum();
    let mut table = WORST.lock().expect("lock");
    let entry = table
        .entry((op.name().to_string(), precision.as_str()))
        .or_insert((0.0, 0));
    if size >= entry.1 {
        *entry = (worst.max(if size == entry.1 { entry.0 } else { 0.0 }), size);
    }
    worst
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
                eprintln!("max-rel-error {op:<32} {p}  {err:.2e}  (largest case: {size} elements)");
            }
        }
    }
}

fn random_conv(rng: &mut StdRng) -> ConvGeom {
    loop {
        let groups = rng.random_range(1..=3);
        let conv = Conv2d {
            in_channels: groups * rng.random_range(1..=4),
            out_channels: groups * rng.random_range(1..=4),
            kernel: (rng.random_range(1..=4), rng.random_range(1..=4)),
            stride: (rng.random_range(1..=3), rng.random_range(1..=3)),
            padding: (rng.random_range(0..=2), rng.random_range(0..=2)),
            dilation: (rng.random_range(1..=2), rng.random_range(1..=2)),
            groups,
            bias: rng.random_bool(0.7),
        };
        let input = Shape::new(
            rng.random_range(1..=3),
            conv.in_channels,
            rng.random_range(3..=12),
            rng.random_range(3..=12),
        );
        if let Some((h, w)) = conv.output_hw(input.h, input.w) {
            return ConvGeom {
                conv,
                input,
                output: Shape::new(input.n, conv.out_channels, h, w),
            };
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
        let g = LinearGeom {
            batch: rng.random_range(1..=5),
            in_features: rng.random_range(1..=300),
            out_features: rng.random_range(1..=40),
            bias: rng.random_bool(0.7),
        };
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
