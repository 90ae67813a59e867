//! Every fast op against the f64 reference, on random small shapes with odd sizes, strides,
//! padding, dilation, groups, batch 1, bias on and off, pointwise convolutions and column slices
//! of linear layers; each case also runs with a scratch of a few floats, so that blocks of
//! positions and chunks of images are exercised at every size.
//!
//! Tolerance: the worst-case bound of a floating-point dot product. An output that sums `K`
//! products in any order (a GEMM's blocking, a col2im, partial gradients added at the end) is
//! within `gamma_K * sum |terms|` of the exact sum, `gamma_K = K u / (1 - K u)` with the f32 unit
//! roundoff `u = 2^-24`, the product's own rounding included. We allow `(K + 1) u * magnitude`,
//! with the magnitude `sum |terms|` computed by the reference on the absolute values of the
//! inputs. It never fails a correct kernel, whatever the summation order; a kernel that drops,
//! repeats or misplaces a term is off by about `magnitude / K`, which for the `K < 500` of these
//! shapes exceeds the bound by more than 50x.

use super::execute_with;
use crate::kernels::{Access, ConvGeom, LinearGeom, Op, reference};
use crate::model::{Conv2d, Shape};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Random cases per op.
const CASES: usize = 120;

/// The seed: `CONVBENCH_TEST_SEED` to replay a failure, else a fresh one each run.
fn seed() -> u64 {
    std::env::var("CONVBENCH_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random())
}

fn random_conv(rng: &mut StdRng) -> ConvGeom {
    loop {
        let groups = rng.random_range(1..=3);
        let (cin_g, cout_g) = (rng.random_range(1..=4), rng.random_range(1..=4));
        let pointwise = rng.random_bool(0.2);
        let mut pair = |range: std::ops::RangeInclusive<usize>| {
            (rng.random_range(range.clone()), rng.random_range(range))
        };
        let (kernel, stride, padding) = if pointwise {
            ((1, 1), (1, 1), (0, 0))
        } else {
            (pair(1..=5), pair(1..=3), pair(0..=2))
        };
        let dilation = pair(1..=2);
        let (h, w) = pair(1..=13);
        let conv = Conv2d {
            in_channels: groups * cin_g,
            out_channels: groups * cout_g,
            kernel,
            stride,
            padding,
            dilation,
            groups,
            bias: rng.random_bool(0.5),
        };
        let out = |size: usize, k: usize, s: usize, p: usize, d: usize| {
            let span = d * (k - 1) + 1;
            (size + 2 * p >= span).then(|| (size + 2 * p - span) / s + 1)
        };
        let (Some(oh), Some(ow)) = (
            out(h, kernel.0, stride.0, padding.0, dilation.0),
            out(w, kernel.1, stride.1, padding.1, dilation.1),
        ) else {
            continue;
        };
        let n = rng.random_range(1..=3);
        return ConvGeom {
            conv,
            input: Shape::new(n, conv.in_channels, h, w),
            output: Shape::new(n, conv.out_channels, oh, ow),
        };
    }
}

fn random_linear(rng: &mut StdRng) -> LinearGeom {
    let mut g = LinearGeom::new(
        rng.random_range(1..=9),
        rng.random_range(1..=40),
        rng.random_range(1..=40),
        rng.random_bool(0.5),
    );
    if rng.random_bool(0.5) {
        g.y_offset = rng.random_range(0..=5);
        g.y_stride = g.out_features + g.y_offset + rng.random_range(0..=5);
    }
    g
}

/// Most terms any output of `op` sums, counting a bias as one.
fn terms(op: &Op) -> usize {
    match op {
        Op::Conv2dForward(g) => g.conv.in_channels / g.conv.groups * g.conv.kernel.0 * g.conv.kernel.1 + 1,
        Op::Conv2dBackwardData(g) => g.conv.out_channels / g.conv.groups * g.conv.kernel.0 * g.conv.kernel.1,
        Op::Conv2dBackwardFilter(g) => g.output.n * g.output.h * g.output.w,
        Op::LinearForward(g) => g.in_features + 1,
        Op::LinearBackwardData(g) => g.out_features,
        Op::LinearBackwardParams(g) => g.batch,
        other => unreachable!("{} is not a GEMM op", other.name()),
    }
}

/// Runs `op` on random inputs in f32 (fast, outputs poisoned with NaN first; read-write outputs
/// start random and must keep what the op does not write) and in f64 (reference), and checks
/// every output element against the bound of the module docs.
fn check(op: &Op, rng: &mut StdRng, scratch: usize) -> Result<(), String> {
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    for (access, len) in op.bindings().into_iter().zip(op.binding_lens()) {
        let random: Vec<f32> = (0..len).map(|_| rng.random_range(-1.0..=1.0)).collect();
        match access {
            Access::Read => inputs.push(random),
            Access::Write => outputs.push(vec![f32::NAN; len]),
            Access::ReadWrite => outputs.push(random),
        }
    }
    let wide = |v: &Vec<f32>, abs: bool| -> Vec<f64> {
        v.iter()
            .map(|&x| if abs { f64::from(x).abs() } else { f64::from(x) })
            .collect()
    };
    let reference_of = |abs: bool| {
        let ins: Vec<Vec<f64>> = inputs.iter().map(|v| wide(v, abs)).collect();
        let mut outs: Vec<Vec<f64>> = outputs.iter().map(|v| wide(v, abs)).collect();
        let in_slices: Vec<&[f64]> = ins.iter().map(Vec::as_slice).collect();
        let mut out_slices: Vec<&mut [f64]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
        reference::execute(op, &in_slices, None, &mut out_slices);
        outs
    };
    let (expected, magnitude) = (reference_of(false), reference_of(true));
    let mut got = outputs.clone();
    {
        let in_slices: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
        let mut out_slices: Vec<&mut [f32]> = got.iter_mut().map(Vec::as_mut_slice).collect();
        execute_with(op, &op.layout(), &in_slices, None, &mut out_slices, scratch);
    }
    let roundoff = (terms(op) + 1) as f64 * 2f64.powi(-24);
    for (tensor, ((got, expected), magnitude)) in got.iter().zip(&expected).zip(&magnitude).enumerate() {
        for (i, ((&g, &e), &m)) in got.iter().zip(expected).zip(magnitude).enumerate() {
            let (error, bound) = ((f64::from(g) - e).abs(), roundoff * m);
            // NaN (an unwritten element) fails too.
            if error.is_nan() || error > bound {
                return Err(format!(
                    "output {tensor}[{i}] = {g}, reference {e}, error {error:e} > bound {bound:e} (scratch {scratch})"
                ));
            }
        }
    }
    Ok(())
}

fn check_random(family: &str, make: impl Fn(&mut StdRng) -> Vec<Op>) {
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    for case in 0..CASES {
        for op in make(&mut rng) {
            for scratch in [super::conv::SCRATCH_FLOATS, rng.random_range(1..=64)] {
                if let Err(e) = check(&op, &mut rng, scratch) {
                    panic!(
                        "{family} case {case}, seed {seed} (CONVBENCH_TEST_SEED={seed} replays it): {op:?}: {e}"
                    );
                }
            }
        }
    }
}

#[test]
fn convolutions_match_the_reference() {
    check_random("conv2d", |rng| {
        let g = random_conv(rng);
        vec![
            Op::Conv2dForward(g),
            Op::Conv2dBackwardData(g),
            Op::Conv2dBackwardFilter(g),
        ]
    });
}

#[test]
fn linear_layers_and_slices_match_the_reference() {
    check_random("linear", |rng| {
        let g = random_linear(rng);
        vec![
            Op::LinearForward(g),
            Op::LinearBackwardData(g),
            Op::LinearBackwardParams(g),
        ]
    });
}

/// The cheap ops reproduce the reference's f32 instance bit for bit (same arithmetic, same
/// order), at sizes on both sides of the sequential threshold; outputs start as NaN, and the
/// update's read-write tensors start random.
#[test]
fn cheap_ops_equal_the_reference_in_f32() {
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    for case in 0..40 {
        let len = rng.random_range(1..=100_000);
        let (batch, classes) = (rng.random_range(1..=300), rng.random_range(1..=1000));
        let ops = [
            Op::ReluForward { len },
            Op::ReluBackward { len },
            Op::SgdUpdate {
                len,
                lr: 0.01,
                momentum: 0.9,
                weight_decay: 5e-4,
            },
            Op::SoftmaxCrossEntropyForward { batch, classes },
            Op::SoftmaxCrossEntropyBackward { batch, classes },
        ];
        for op in &ops {
            let labels: Vec<u32> = (0..batch).map(|_| rng.random_range(0..classes as u32)).collect();
            let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
            for ((access, len), dtype) in op.bindings().into_iter().zip(op.binding_lens()).zip(op.dtypes()) {
                if dtype == crate::kernels::DType::U32 {
                    continue;
                }
                let random: Vec<f32> = (0..len).map(|_| rng.random_range(-4.0..=4.0)).collect();
                match access {
                    Access::Read => inputs.push(random),
                    Access::Write => outputs.push(vec![f32::NAN; len]),
                    Access::ReadWrite => outputs.push(random),
                }
            }
            let in_slices: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
            let mut expected = outputs.clone();
            let mut expected_slices: Vec<&mut [f32]> = expected.iter_mut().map(Vec::as_mut_slice).collect();
            reference::execute(op, &in_slices, Some(&labels), &mut expected_slices);
            let mut got = outputs;
            let mut got_slices: Vec<&mut [f32]> = got.iter_mut().map(Vec::as_mut_slice).collect();
            execute_with(op, &op.layout(), &in_slices, Some(&labels), &mut got_slices, 1);
            let same = got
                .iter()
                .flatten()
                .zip(expected.iter().flatten())
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "case {case}, seed {seed} (CONVBENCH_TEST_SEED={seed} replays it): {op:?} differs from the reference"
            );
        }
    }
}

#[test]
fn other_ops_run_the_reference() {
    let op = Op::Add { len: 3 };
    let mut y = [f32::NAN; 3];
    execute_with(
        &op,
        &op.layout(),
        &[&[-1.0, 0.5, 2.0], &[1.0, 1.0, 1.0]],
        None,
        &mut [&mut y],
        1,
    );
    assert_eq!(y, [0.0, 1.5, 3.0]);
}

/// A label at or above the class count is an error in both (PyTorch raises), never clamped to
/// the last class.
#[test]
fn a_label_out_of_range_is_an_error_not_a_clamp() {
    for op in [
        Op::SoftmaxCrossEntropyForward { batch: 2, classes: 3 },
        Op::SoftmaxCrossEntropyBackward { batch: 2, classes: 3 },
    ] {
        let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
        for ((access, len), dtype) in op.bindings().into_iter().zip(op.binding_lens()).zip(op.dtypes()) {
            match (access, dtype) {
                (_, crate::kernels::DType::U32) => {}
                (Access::Read, _) => inputs.push(vec![0.5f32; len]),
                _ => outputs.push(vec![f32::NAN; len]),
            }
        }
        let in_slices: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
        let (labels, layout) = ([2, 3], op.layout());
        let mut out_slices: Vec<&mut [f32]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
        let err = super::run(
            &op,
            &layout,
            reference::bound(&layout, &in_slices, Some(&labels), &mut out_slices),
            1,
        )
        .expect_err("cpu backend")
        .to_string();
        assert!(
            err.contains("label 3 of image 1 is out of range for 3 classes"),
            "{err}"
        );
        let mut out_slices: Vec<&mut [f32]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
        let err = reference::run(
            &op,
            &layout,
            reference::bound(&layout, &in_slices, Some(&labels), &mut out_slices),
        )
        .expect_err("reference")
        .to_string();
        assert!(err.contains(op.name()), "{err}");
    }
}
