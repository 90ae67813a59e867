//! Numerical gradient checks of the f64 CPU reference: every backward op is the true gradient
//! of its forward op.
//!
//! Method: for a forward op `f` and a random upstream gradient `r`, the scalar
//! `L(x) = sum(r * f(x))` has gradient `dL/dx` = the backward op given `dy = r`. That analytic
//! gradient is compared with central differences `(L(x + h e_i) - L(x - h e_i)) / 2h` for every
//! element of small tensors and a random sample of larger ones. Values come from the run's seed
//! (printed on failure, `CONVBENCH_SEED` to replay).
//!
//! Written (not read-write) outputs are poisoned with NaN before each run, so an element a
//! backward op forgets to write fails the comparison instead of passing as a stale zero.

use super::support::{rng, seed, uniform};
use convbench::kernels::{Access, ConvGeom, DType, LinearGeom, Op, PoolGeom, reference};
use convbench::model::{BatchNorm, Conv2d, Lrn, Pool2d, PoolKind, Shape};
use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::{SliceRandom, index};

/// Finite-difference step. With f64 central differences the truncation error is O(h^2 * L''')
/// ~ 1e-12 and the rounding error O(eps * |L| / h) ~ 1e-10 relative to the size of `L`; h = 1e-6
/// balances the two.
const STEP: f64 = 1e-6;

/// Allowed `|analytic - numeric|`, relative to `max(1, |numeric|)`. Both error sources above are
/// below 1e-8 for the small, O(1)-valued tensors used here, so 1e-6 leaves a 100x margin while
/// any wrong term of a gradient (an O(1) contribution) is far above it.
const TOLERANCE: f64 = 1e-6;

/// Tensors up to this many elements are checked at every element, larger ones at a sample.
const EXHAUSTIVE_UP_TO: usize = 256;

/// Elements checked in a tensor larger than [`EXHAUSTIVE_UP_TO`].
const SAMPLED: usize = 50;

fn replay() -> String {
    let seed = seed();
    format!("seed {seed}, replay with CONVBENCH_SEED={seed}")
}

/// Uniform values in `[-1, 1)` from the seeded generator.
fn values(rng: &mut StdRng, len: usize) -> Vec<f64> {
    uniform(rng, len).into_iter().map(f64::from).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "dot of unequal lengths ({})", replay());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Runs `op` on the f64 reference with `outputs` (its written and read-write float bindings, in
/// binding order) updated in place.
fn run_into(op: &Op, inputs: &[&[f64]], labels: Option<&[u32]>, outputs: &mut [Vec<f64>]) {
    let lens = op.binding_lens();
    let floats: Vec<(Access, usize)> = op
        .bindings()
        .into_iter()
        .zip(op.dtypes())
        .zip(lens)
        .filter(|((_, dtype), _)| *dtype == DType::Float)
        .map(|((access, _), len)| (access, len))
        .collect();
    let input_lens: Vec<usize> = floats
        .iter()
        .filter(|(access, _)| *access == Access::Read)
        .map(|&(_, len)| len)
        .collect();
    let output_lens: Vec<usize> = floats
        .iter()
        .filter(|(access, _)| *access != Access::Read)
        .map(|&(_, len)| len)
        .collect();
    let given: Vec<usize> = inputs.iter().map(|v| v.len()).collect();
    assert_eq!(given, input_lens, "{} input lengths ({})", op.name(), replay());
    let given: Vec<usize> = outputs.iter().map(Vec::len).collect();
    assert_eq!(given, output_lens, "{} output lengths ({})", op.name(), replay());
    let mut slices: Vec<&mut [f64]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
    reference::execute::<f64>(op, inputs, labels, &mut slices);
}

/// Runs `op` on the f64 reference; returns its written and read-write float bindings in binding
/// order (written ones poisoned with NaN beforehand, read-write ones starting at zero).
fn run(op: &Op, inputs: &[&[f64]], labels: Option<&[u32]>) -> Vec<Vec<f64>> {
    let mut outputs: Vec<Vec<f64>> = op
        .bindings()
        .into_iter()
        .zip(op.binding_lens())
        .filter_map(|(access, len)| match access {
            Access::Read => None,
            Access::Write => Some(vec![f64::NAN; len]),
            Access::ReadWrite => Some(vec![0.0; len]),
        })
        .collect();
    run_into(op, inputs, labels, &mut outputs);
    outputs
}

/// The single output of a one-output op.
fn run1(op: &Op, inputs: &[&[f64]]) -> Vec<f64> {
    run(op, inputs, None).swap_remove(0)
}

/// Compares `analytic`, the claimed gradient of `loss` at `at`, with central differences at every
/// element (or a random sample of a large tensor). Returns the worst `|analytic - numeric|`.
fn check_gradient(
    what: &str,
    at: &[f64],
    analytic: &[f64],
    loss: impl Fn(&[f64]) -> f64,
    rng: &mut StdRng,
) -> f64 {
    assert_eq!(analytic.len(), at.len(), "{what}: gradient length ({})", replay());
    let indices = if at.len() <= EXHAUSTIVE_UP_TO {
        (0..at.len()).collect()
    } else {
        index::sample(rng, at.len(), SAMPLED).into_vec()
    };
    let mut point = at.to_vec();
    let mut worst = 0.0f64;
    for i in indices {
        let (plus, minus) = (at[i] + STEP, at[i] - STEP);
        point[i] = plus;
        let loss_plus = loss(&point);
        point[i] = minus;
        let loss_minus = loss(&point);
        point[i] = at[i];
        // The step actually taken: `at[i] +- STEP` is rounded, dividing by it removes that error.
        let numeric = (loss_plus - loss_minus) / (plus - minus);
        let diff = (analytic[i] - numeric).abs();
        assert!(
            diff <= TOLERANCE * numeric.abs().max(1.0),
            "{what}: element {i} of {}: analytic {:.12e}, numeric {numeric:.12e}, |diff| {diff:.3e} > \
             {TOLERANCE:.0e} * max(1, |numeric|) ({})",
            at.len(),
            analytic[i],
            replay()
        );
        worst = worst.max(diff);
    }
    worst
}

fn report(family: &str, worst: &[(&str, f64)]) {
    for (op, diff) in worst {
        eprintln!("gradcheck {family}: {op}: worst |analytic - numeric| = {diff:.3e}");
    }
}

fn conv_geom(batch: usize, conv: Conv2d, h: usize, w: usize) -> ConvGeom {
    ConvGeom::new(conv, batch, h, w).expect("test convolution fits its input")
}

#[test]
fn gradcheck_conv2d() {
    let mut rng = rng(101);
    let cases = [
        conv_geom(
            2,
            Conv2d {
                in_channels: 4,
                out_channels: 6,
                kernel: (3, 3),
                stride: (2, 2),
                padding: (1, 1),
                dilation: (2, 2),
                groups: 2,
                bias: true,
            },
            7,
            9,
        ),
        conv_geom(
            1,
            Conv2d {
                in_channels: 3,
                out_channels: 2,
                kernel: (3, 2),
                stride: (1, 2),
                padding: (2, 1),
                dilation: (1, 2),
                groups: 1,
                bias: false,
            },
            5,
            7,
        ),
        conv_geom(
            2,
            Conv2d {
                in_channels: 2,
                out_channels: 4,
                kernel: (5, 3),
                stride: (3, 1),
                padding: (2, 0),
                dilation: (1, 1),
                groups: 2,
                bias: true,
            },
            9,
            5,
        ),
    ];
    let (mut worst_data, mut worst_filter, mut worst_bias) = (0.0f64, 0.0f64, 0.0f64);
    for g in cases {
        let name = format!("conv2d {:?} input {}", g.conv, g.input);
        let x = values(&mut rng, g.input.len());
        let w = values(&mut rng, g.conv.weight_len());
        let bias = values(&mut rng, if g.conv.bias { g.conv.out_channels } else { 0 });
        let r = values(&mut rng, g.output.len());
        let forward = Op::Conv2dForward(g);
        let loss = |x: &[f64], w: &[f64], bias: &[f64]| {
            let mut inputs = vec![x, w];
            if g.conv.bias {
                inputs.push(bias);
            }
            dot(&r, &run1(&forward, &inputs))
        };

        let dx = run1(&Op::Conv2dBackwardData(g), &[&r, &w]);
        let worst = check_gradient(&format!("{name} dx"), &x, &dx, |x| loss(x, &w, &bias), &mut rng);
        worst_data = worst_data.max(worst);

        let mut grads = run(&Op::Conv2dBackwardFilter(g), &[&x, &r], None);
        let dw = grads.remove(0);
        let worst = check_gradient(&format!("{name} dw"), &w, &dw, |w| loss(&x, w, &bias), &mut rng);
        worst_filter = worst_filter.max(worst);
        if g.conv.bias {
            let dbias = grads.remove(0);
            let worst = check_gradient(
                &format!("{name} dbias"),
                &bias,
                &dbias,
                |bias| loss(&x, &w, bias),
                &mut rng,
            );
            worst_bias = worst_bias.max(worst);
        }
        assert!(
            grads.is_empty(),
            "{name}: unexpected extra outputs ({})",
            replay()
        );
    }
    report(
        "conv2d",
        &[
            ("conv2d_backward_data", worst_data),
            ("conv2d_backward_filter dw", worst_filter),
            ("conv2d_backward_filter dbias", worst_bias),
        ],
    );
}

fn pool(kind: PoolKind, k: usize, s: usize, p: usize, ceil_mode: bool, count_include_pad: bool) -> Pool2d {
    Pool2d {
        kind,
        kernel: (k, k),
        stride: (s, s),
        padding: (p, p),
        ceil_mode,
        count_include_pad,
    }
}

#[test]
fn gradcheck_pool() {
    let mut rng = rng(102);
    let mut pools = vec![
        pool(PoolKind::Max, 3, 2, 1, false, true),
        pool(PoolKind::Max, 3, 2, 1, true, true),
        pool(PoolKind::Max, 2, 2, 0, true, true),
        pool(PoolKind::Avg, 2, 2, 0, true, true),
        Pool2d {
            kind: PoolKind::Avg,
            kernel: (3, 2),
            stride: (1, 2),
            padding: (1, 1),
            ceil_mode: true,
            count_include_pad: false,
        },
    ];
    for ceil_mode in [false, true] {
        for count_include_pad in [false, true] {
            pools.push(pool(PoolKind::Avg, 3, 2, 1, ceil_mode, count_include_pad));
        }
    }
    let (mut worst_max, mut worst_avg) = (0.0f64, 0.0f64);
    // Heights and widths where ceil mode adds a window (6, 8) and where it does not (7).
    for (p, input) in pools
        .into_iter()
        .zip([Shape::new(2, 2, 7, 6), Shape::new(1, 3, 8, 7)].iter().cycle())
    {
        let (oh, ow) = p.output_hw(input.h, input.w).expect("test pool fits its input");
        let g = PoolGeom {
            pool: p,
            input: *input,
            output: Shape::new(input.n, input.c, oh, ow),
        };
        let name = format!("pool {p:?} input {input}");
        let x = match p.kind {
            // Distinct values 2 / len apart (far more than the step), so every window has a
            // unique maximum and max pooling is differentiable at x.
            PoolKind::Max => {
                let mut ranks: Vec<usize> = (0..input.len()).collect();
                ranks.shuffle(&mut rng);
                let len = input.len() as f64;
                ranks.into_iter().map(|v| 2.0 * v as f64 / len - 1.0).collect()
            }
            PoolKind::Avg => values(&mut rng, input.len()),
        };
        let r = values(&mut rng, g.output.len());
        let forward = Op::PoolForward(g);
        let dx = run1(&Op::PoolBackward(g), &[&x, &r]);
        let worst = check_gradient(
            &format!("{name} dx"),
            &x,
            &dx,
            |x| dot(&r, &run1(&forward, &[x])),
            &mut rng,
        );
        match p.kind {
            PoolKind::Max => worst_max = worst_max.max(worst),
            PoolKind::Avg => worst_avg = worst_avg.max(worst),
        }
    }
    report(
        "pool",
        &[("pool_backward max", worst_max), ("pool_backward avg", worst_avg)],
    );
}

#[test]
fn gradcheck_relu() {
    let mut rng = rng(103);
    let len = 97;
    // |x| in [0.1, 1): the step never crosses the kink at 0.
    let x: Vec<f64> = values(&mut rng, len)
        .into_iter()
        .map(|v| v.signum() * (0.1 + 0.9 * v.abs()))
        .collect();
    let r = values(&mut rng, len);
    let forward = Op::ReluForward { len };
    let y = run1(&forward, &[&x]);
    let dx = run1(&Op::ReluBackward { len }, &[&y, &r]);
    let worst = check_gradient("relu dx", &x, &dx, |x| dot(&r, &run1(&forward, &[x])), &mut rng);
    report("relu", &[("relu_backward", worst)]);
}

#[test]
fn gradcheck_lrn() {
    let mut rng = rng(104);
    // Channel counts above and below the window, so windows are clipped at both ends; even
    // sizes, whose windows are not centred (PyTorch's reach one channel further down than up).
    let cases = [
        (3, Shape::new(2, 7, 2, 3)),
        (5, Shape::new(1, 7, 3, 2)),
        (5, Shape::new(2, 4, 1, 3)),
        (4, Shape::new(2, 7, 2, 3)),
        (2, Shape::new(1, 5, 2, 2)),
    ];
    let mut worst_dx = 0.0f64;
    for (size, shape) in cases {
        let lrn = Lrn {
            size,
            alpha: 0.5,
            beta: 0.75,
            k: 2.0,
        };
        let name = format!("lrn size {size} shape {shape}");
        let x = values(&mut rng, shape.len());
        let r = values(&mut rng, shape.len());
        let forward = Op::LrnForward { lrn, shape };
        let [y, scale] = <[Vec<f64>; 2]>::try_from(run(&forward, &[&x], None))
            .unwrap_or_else(|_| panic!("{name}: lrn forward writes y and scale ({})", replay()));
        let dx = run1(&Op::LrnBackward { lrn, shape }, &[&x, &y, &scale, &r]);
        let loss = |x: &[f64]| dot(&r, &run(&forward, &[x], None)[0]);
        worst_dx = worst_dx.max(check_gradient(&format!("{name} dx"), &x, &dx, loss, &mut rng));
    }
    report("lrn", &[("lrn_backward", worst_dx)]);
}

#[test]
fn gradcheck_batch_norm() {
    let mut rng = rng(105);
    let (mut worst_dx, mut worst_dgamma, mut worst_dbeta) = (0.0f64, 0.0f64, 0.0f64);
    for shape in [Shape::new(2, 3, 3, 2), Shape::new(1, 2, 5, 3)] {
        let bn = BatchNorm {
            channels: shape.c,
            eps: 1e-5,
            momentum: 0.1,
        };
        let name = format!("batch norm shape {shape}");
        // Off-centre and wider than [-1, 1] so the mean and variance terms are not trivial.
        let x: Vec<f64> = values(&mut rng, shape.len())
            .into_iter()
            .map(|v| 1.5 * v + 0.5)
            .collect();
        let gamma = values(&mut rng, shape.c);
        let beta = values(&mut rng, shape.c);
        let r = values(&mut rng, shape.len());
        let forward = Op::BatchNormForwardTrain { bn, shape };
        // Outputs: y, saved mean, saved inverse deviation, running mean, running variance.
        let saved = run(&forward, &[&x, &gamma, &beta], None);
        let [dx, dgamma, dbeta] = <[Vec<f64>; 3]>::try_from(run(
            &Op::BatchNormBackward { bn, shape },
            &[&x, &r, &gamma, &saved[1], &saved[2]],
            None,
        ))
        .unwrap_or_else(|_| panic!("{name}: batch norm backward writes three ({})", replay()));
        let loss =
            |x: &[f64], gamma: &[f64], beta: &[f64]| dot(&r, &run(&forward, &[x, gamma, beta], None)[0]);
        let worst = check_gradient(
            &format!("{name} dx"),
            &x,
            &dx,
            |x| loss(x, &gamma, &beta),
            &mut rng,
        );
        worst_dx = worst_dx.max(worst);
        let worst = check_gradient(
            &format!("{name} dgamma"),
            &gamma,
            &dgamma,
            |gamma| loss(&x, gamma, &beta),
            &mut rng,
        );
        worst_dgamma = worst_dgamma.max(worst);
        let worst = check_gradient(
            &format!("{name} dbeta"),
            &beta,
            &dbeta,
            |beta| loss(&x, &gamma, beta),
            &mut rng,
        );
        worst_dbeta = worst_dbeta.max(worst);
    }
    report(
        "batch_norm",
        &[
            ("batchnorm_backward dx", worst_dx),
            ("batchnorm_backward dgamma", worst_dgamma),
            ("batchnorm_backward dbeta", worst_dbeta),
        ],
    );
}

#[test]
fn gradcheck_linear() {
    let mut rng = rng(106);
    let cases = [LinearGeom::new(3, 7, 5, true), LinearGeom::new(1, 4, 3, false)];
    let (mut worst_data, mut worst_weight, mut worst_bias) = (0.0f64, 0.0f64, 0.0f64);
    for g in cases {
        let name = format!("linear {g:?}");
        let x = values(&mut rng, g.batch * g.in_features);
        let w = values(&mut rng, g.out_features * g.in_features);
        let bias = values(&mut rng, if g.bias { g.out_features } else { 0 });
        let r = values(&mut rng, g.batch * g.out_features);
        let forward = Op::LinearForward(g);
        let loss = |x: &[f64], w: &[f64], bias: &[f64]| {
            let mut inputs = vec![x, w];
            if g.bias {
                inputs.push(bias);
            }
            dot(&r, &run1(&forward, &inputs))
        };

        let dx = run1(&Op::LinearBackwardData(g), &[&r, &w]);
        let worst = check_gradient(&format!("{name} dx"), &x, &dx, |x| loss(x, &w, &bias), &mut rng);
        worst_data = worst_data.max(worst);

        let mut grads = run(&Op::LinearBackwardParams(g), &[&x, &r], None);
        let dw = grads.remove(0);
        let worst = check_gradient(&format!("{name} dw"), &w, &dw, |w| loss(&x, w, &bias), &mut rng);
        worst_weight = worst_weight.max(worst);
        if g.bias {
            let dbias = grads.remove(0);
            let worst = check_gradient(
                &format!("{name} dbias"),
                &bias,
                &dbias,
                |bias| loss(&x, &w, bias),
                &mut rng,
            );
            worst_bias = worst_bias.max(worst);
        }
        assert!(
            grads.is_empty(),
            "{name}: unexpected extra outputs ({})",
            replay()
        );
    }
    report(
        "linear",
        &[
            ("linear_backward_data", worst_data),
            ("linear_backward_params dw", worst_weight),
            ("linear_backward_params dbias", worst_bias),
        ],
    );
}

#[test]
fn gradcheck_softmax_cross_entropy() {
    let mut rng = rng(107);
    let mut worst_dlogits = 0.0f64;
    for (batch, classes) in [(4, 7), (1, 3)] {
        let name = format!("softmax cross-entropy batch {batch} classes {classes}");
        let logits: Vec<f64> = values(&mut rng, batch * classes)
            .into_iter()
            .map(|v| 3.0 * v)
            .collect();
        let labels: Vec<u32> = (0..batch).map(|_| rng.random_range(0..classes as u32)).collect();
        let forward = Op::SoftmaxCrossEntropyForward { batch, classes };
        // Outputs: per-image loss, probabilities.
        let probs = run(&forward, &[&logits], Some(&labels)).swap_remove(1);
        let dlogits = run(
            &Op::SoftmaxCrossEntropyBackward { batch, classes },
            &[&probs],
            Some(&labels),
        )
        .swap_remove(0);
        // The backward op is the gradient of the mean loss over the batch (no upstream r).
        let mean_loss = |logits: &[f64]| {
            let loss = run(&forward, &[logits], Some(&labels)).swap_remove(0);
            loss.iter().sum::<f64>() / batch as f64
        };
        let worst = check_gradient(&format!("{name} dlogits"), &logits, &dlogits, mean_loss, &mut rng);
        worst_dlogits = worst_dlogits.max(worst);
    }
    report(
        "softmax_cross_entropy",
        &[("softmax_cross_entropy_backward", worst_dlogits)],
    );
}

#[test]
fn gradcheck_channel_copy() {
    let mut rng = rng(108);
    let (n, hw) = (2, 3);
    let part_channels = [2, 1, 3];
    let total_channels: usize = part_channels.iter().sum();
    let offsets: Vec<usize> = part_channels
        .iter()
        .scan(0, |next, &c| {
            let offset = *next;
            *next += c;
            Some(offset)
        })
        .collect();
    let copy = |part: usize, into_concat: bool| Op::ChannelCopy {
        n,
        hw,
        total_channels,
        part_channels: part_channels[part],
        offset: offsets[part],
        into_concat,
    };
    let parts: Vec<Vec<f64>> = part_channels
        .iter()
        .map(|&c| values(&mut rng, n * c * hw))
        .collect();
    let r = values(&mut rng, n * total_channels * hw);
    let concat = |parts: &[&[f64]]| {
        let mut dst = vec![vec![0.0; n * total_channels * hw]];
        for (part, values) in parts.iter().enumerate() {
            run_into(&copy(part, true), &[values], None, &mut dst);
        }
        dst.swap_remove(0)
    };
    let mut worst_split = 0.0f64;
    for part in 0..parts.len() {
        let dpart = run1(&copy(part, false), &[&r]);
        let loss = |values: &[f64]| {
            let mut inputs: Vec<&[f64]> = parts.iter().map(Vec::as_slice).collect();
            inputs[part] = values;
            dot(&r, &concat(&inputs))
        };
        let worst = check_gradient(
            &format!("split of part {part} (channels {})", part_channels[part]),
            &parts[part],
            &dpart,
            loss,
            &mut rng,
        );
        worst_split = worst_split.max(worst);
    }
    report("channel_copy", &[("channel_copy split", worst_split)]);
}

#[test]
fn gradcheck_global_avg_pool() {
    let mut rng = rng(109);
    let mut worst_dx = 0.0f64;
    for shape in [
        Shape::new(2, 3, 3, 5),
        Shape::new(1, 2, 7, 1),
        Shape::new(3, 2, 1, 1),
    ] {
        let x = values(&mut rng, shape.len());
        let r = values(&mut rng, shape.n * shape.c);
        let forward = Op::GlobalAvgPoolForward { shape };
        let dx = run1(&Op::GlobalAvgPoolBackward { shape }, &[&r]);
        let loss = |x: &[f64]| dot(&r, &run1(&forward, &[x]));
        let worst = check_gradient(
            &format!("global avg pool shape {shape} dx"),
            &x,
            &dx,
            loss,
            &mut rng,
        );
        worst_dx = worst_dx.max(worst);
    }
    report("global_avg_pool", &[("global_avgpool_backward", worst_dx)]);
}

#[test]
fn gradcheck_add() {
    let mut rng = rng(110);
    let len = 37;
    let a = values(&mut rng, len);
    let b = values(&mut rng, len);
    let r = values(&mut rng, len);
    let forward = Op::Add { len };
    // The backward of a residual add passes the upstream gradient unchanged to both inputs.
    let worst_a = check_gradient("add da", &a, &r, |a| dot(&r, &run1(&forward, &[a, &b])), &mut rng);
    let worst_b = check_gradient("add db", &b, &r, |b| dot(&r, &run1(&forward, &[&a, b])), &mut rng);
    report("add", &[("add da", worst_a), ("add db", worst_b)]);
}
