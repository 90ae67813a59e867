//! The one catalogue of op cases that every backend runs against the f64 reference: wgpu
//! (`ops.rs`), cpu (`cpu.rs`) and cuda (`cuda.rs`) draw the same families from here, so a case
//! added for one backend is checked on all of them.
//!
//! Random shapes come from the run's seed (printed on failure, `CONVBENCH_SEED` to replay);
//! fixed cases cover the shapes that made bugs before: AlexNet's strided 11x11 layer at batch
//! 1, ceil-mode and floor-sized pools, batch norm over many pixels at batch 1, column slices of
//! fully connected layers, ImageNet-22k's 21,841 classes, ResNet's last pool. Convention cases
//! ([`conventions`]) pin PyTorch's behaviour on fixed values, where frameworks differ.

use super::support::random_conv;
use convbench::kernels::{ConvGeom, LinearGeom, Op, PoolGeom};
use convbench::model::{BatchNorm, Conv2d, Lrn, Pool2d, PoolKind, Shape};
use rand::Rng;
use rand::rngs::StdRng;

/// One test per family, named alike in every backend's suite, each calling `$check(family,
/// $salt + k)` for the family's number `k` (1 to 10): a backend's file (`ops.rs`, `cpu.rs`,
/// `cuda.rs`) says only how a family runs there and its seed salt, and a family added here is
/// tested on every backend, as Burn's `testgen_*!` macros generate each backend's tests.
macro_rules! family_tests {
    ($check:ident, $salt:expr) => {
        $crate::catalogue::family_tests!(@each $check, $salt;
            conv2d_forward = ConvForward, 1;
            conv2d_backward_data = ConvBackwardData, 2;
            conv2d_backward_filter = ConvBackwardFilter, 3;
            pool_forward_and_backward = Pool, 4;
            relu_add_and_sgd = Elementwise, 5;
            lrn_forward_and_backward = Lrn, 6;
            batch_norm_train_eval_and_backward = BatchNorm, 7;
            linear_forward_and_backward = Linear, 8;
            softmax_cross_entropy = Softmax, 9;
            concat_split_and_global_avgpool = Tensor, 10;
        );
    };
    (@each $check:ident, $salt:expr; $($name:ident = $family:ident, $k:expr;)*) => {
        $(
            #[test]
            fn $name() {
                $check($crate::catalogue::Family::$family, $salt + $k);
            }
        )*
    };
}
pub(crate) use family_tests;

/// A group of ops tested together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `conv2d_forward`.
    ConvForward,
    /// `conv2d_backward_data`.
    ConvBackwardData,
    /// `conv2d_backward_filter`.
    ConvBackwardFilter,
    /// `pool_forward`, `pool_backward`.
    Pool,
    /// `relu_forward`, `relu_backward`, `add`, `sgd_update`.
    Elementwise,
    /// `lrn_forward`, `lrn_backward`.
    Lrn,
    /// `batchnorm_forward_train`, `batchnorm_forward_eval`, `batchnorm_backward`.
    BatchNorm,
    /// `linear_forward`, `linear_backward_data`, `linear_backward_params`.
    Linear,
    /// `softmax_cross_entropy_forward`, `softmax_cross_entropy_backward`.
    Softmax,
    /// `channel_copy` both ways, `global_avgpool_forward`, `global_avgpool_backward`.
    Tensor,
}

/// The ops of `family`.
pub fn ops(family: Family, rng: &mut StdRng) -> Vec<Op> {
    match family {
        Family::ConvForward => conv_cases(rng).into_iter().map(Op::Conv2dForward).collect(),
        Family::ConvBackwardData => conv_cases(rng).into_iter().map(Op::Conv2dBackwardData).collect(),
        Family::ConvBackwardFilter => conv_cases(rng)
            .into_iter()
            .map(Op::Conv2dBackwardFilter)
            .collect(),
        Family::Pool => pool_cases(rng)
            .into_iter()
            .flat_map(|g| [Op::PoolForward(g), Op::PoolBackward(g)])
            .collect(),
        Family::Elementwise => [1, rng.random_range(2..=70_000), 1 << 20]
            .into_iter()
            .flat_map(|len| {
                [
                    Op::ReluForward { len },
                    Op::ReluBackward { len },
                    Op::Add { len },
                    Op::SgdUpdate {
                        len,
                        lr: 0.01,
                        momentum: 0.9,
                        weight_decay: 5e-4,
                    },
                ]
            })
            .collect(),
        Family::Lrn => [1, 3, 5, 4]
            .into_iter()
            .flat_map(|size| {
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
                [Op::LrnForward { lrn, shape }, Op::LrnBackward { lrn, shape }]
            })
            .collect(),
        Family::BatchNorm => batch_norm_cases(rng),
        Family::Linear => linear_cases(rng)
            .into_iter()
            .flat_map(|g| {
                [
                    Op::LinearForward(g),
                    Op::LinearBackwardData(g),
                    Op::LinearBackwardParams(g),
                ]
            })
            .collect(),
        Family::Softmax => [
            (1, 2),
            (3, 17),
            (rng.random_range(1..=8), rng.random_range(2..=50)),
            (4, 1000),
            (2, 21_841),
        ]
        .into_iter()
        .flat_map(|(batch, classes)| {
            [
                Op::SoftmaxCrossEntropyForward { batch, classes },
                Op::SoftmaxCrossEntropyBackward { batch, classes },
            ]
        })
        .collect(),
        Family::Tensor => tensor_cases(rng),
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
    // GoogLeNet's ceil-mode pools (rounding up adds a window) ...
    cases.push(pool_case(Pool2d::max(3, 2, 0, true), Shape::new(2, 8, 14, 14)));
    cases.push(pool_case(Pool2d::max(3, 1, 1, true), input));
    cases.push(pool_case(Pool2d::avg(3, 2, 1, true), Shape::new(2, 8, 14, 14)));
    cases.push(pool_case(Pool2d::avg(3, 2, 1, true), input));
    // ... and floor-sized ones, with and without padding in the average's divisor.
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

fn batch_norm_cases(rng: &mut StdRng) -> Vec<Op> {
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
    // Batch 1 with many pixels (a reduction longer than one workgroup), and a ResNet-like layer.
    shapes.push(Shape::new(1, 3, 40, 40));
    shapes.push(Shape::new(8, 64, 14, 14));
    shapes
        .into_iter()
        .flat_map(|shape| {
            let bn = BatchNorm {
                channels: shape.c,
                eps: 1e-5,
                momentum: 0.1,
            };
            [
                Op::BatchNormForwardTrain { bn, shape },
                Op::BatchNormForwardEval { bn, shape },
                Op::BatchNormBackward { bn, shape },
            ]
        })
        .collect()
}

fn linear_cases(rng: &mut StdRng) -> Vec<LinearGeom> {
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
    // AlexNet's fc7 at batch 8, and an odd slice (an unaligned f16 column offset).
    geoms.push(LinearGeom::new(8, 4096, 4096, true));
    geoms.push(LinearGeom {
        y_stride: 37,
        y_offset: 3,
        ..LinearGeom::new(3, 65, 31, true)
    });
    geoms
}

fn tensor_cases(rng: &mut StdRng) -> Vec<Op> {
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
    // ResNet-50's last pool at batch 4: more planes than one block of threads.
    let shape = Shape::new(4, 2048, 7, 7);
    ops.push(Op::GlobalAvgPoolForward { shape });
    ops.push(Op::GlobalAvgPoolBackward { shape });
    ops
}

/// A case pinned to one of PyTorch's conventions (issue 15: an independent cross-check against
/// JAX found the first four differences; the fifth, max pooling's ties, is what the max-pooling
/// gradient's shortened scan in `shaders/pool.wgsl` must keep): an op on fixed values, and what
/// every backend must do with it.
pub struct Convention {
    /// The convention, for messages.
    pub about: &'static str,
    /// The op.
    pub op: Op,
    /// Values of some float bindings, by name; the others are random.
    pub floats: Vec<(&'static str, Vec<f32>)>,
    /// The labels, when the op binds them (else random and valid).
    pub labels: Option<Vec<u32>>,
    /// What must happen.
    pub expect: Expect,
}

/// What a backend must do with a [`Convention`] case.
pub enum Expect {
    /// Run it: the reference gives these values of the named outputs (PyTorch's, computed
    /// independently of convbench in f64 below), and the backend agrees with the reference.
    Outputs(Vec<(&'static str, Vec<f64>)>),
    /// Refuse it, before anything runs, with an error whose message holds each of these.
    Rejected(&'static [&'static str]),
}

/// The convention cases, run by every backend.
pub fn conventions() -> Vec<Convention> {
    let mut cases = Vec::new();
    // 1. LRN with an even size: PyTorch's window of channel c is c - size/2 ..= c + (size-1)/2.
    for size in [2, 4] {
        let lrn = Lrn {
            size,
            alpha: 0.9,
            beta: 0.75,
            k: 1.0,
        };
        let shape = Shape::new(2, 6, 1, 2);
        let x: Vec<f32> = (0..shape.len())
            .map(|i| ((i * 7 % 11) as f32 - 5.0) / 4.0)
            .collect();
        let exact: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let (y, scale) = lrn_pytorch(&lrn, &shape, &exact);
        cases.push(Convention {
            about: "LRN with an even size reaches one channel further down than up",
            op: Op::LrnForward { lrn, shape },
            floats: vec![("x", x.clone())],
            labels: None,
            expect: Expect::Outputs(vec![("y", y.clone()), ("scale", scale.clone())]),
        });
        // The true gradient of that forward pass, by central differences of the definition.
        let dy: Vec<f32> = (0..shape.len())
            .map(|i| ((i * 5 % 7) as f32 - 3.0) / 2.0)
            .collect();
        let loss = |x: &[f64]| -> f64 {
            let (y, _) = lrn_pytorch(&lrn, &shape, x);
            y.iter().zip(&dy).map(|(y, &d)| y * f64::from(d)).sum()
        };
        let step = 1e-6;
        let dx = (0..shape.len())
            .map(|i| {
                let (mut up, mut down) = (exact.clone(), exact.clone());
                up[i] += step;
                down[i] -= step;
                (loss(&up) - loss(&down)) / (2.0 * step)
            })
            .collect();
        let rounded = |v: &[f64]| v.iter().map(|&v| v as f32).collect::<Vec<_>>();
        cases.push(Convention {
            about: "LRN's gradient with an even size sums over the mirrored windows",
            op: Op::LrnBackward { lrn, shape },
            floats: vec![
                ("x", x),
                ("y", rounded(&y)),
                ("scale", rounded(&scale)),
                ("dy", dy),
            ],
            labels: None,
            expect: Expect::Outputs(vec![("dx", dx)]),
        });
    }
    // 2. A label at or above the class count is an error (PyTorch raises), not clamped.
    for op in [
        Op::SoftmaxCrossEntropyForward { batch: 2, classes: 3 },
        Op::SoftmaxCrossEntropyBackward { batch: 2, classes: 3 },
    ] {
        cases.push(Convention {
            about: "a label out of range is rejected",
            op,
            floats: Vec::new(),
            labels: Some(vec![1, 3]),
            expect: Expect::Rejected(&["softmax_cross_entropy", "label 3 of image 1", "3 classes"]),
        });
    }
    // 3. Batch norm in training over one value per channel is an error (PyTorch raises).
    let shape = Shape::new(1, 2, 1, 1);
    cases.push(Convention {
        about: "batch norm in training over one value per channel is rejected",
        op: Op::BatchNormForwardTrain {
            bn: BatchNorm {
                channels: 2,
                eps: 1e-5,
                momentum: 0.1,
            },
            shape,
        },
        floats: Vec::new(),
        labels: None,
        expect: Expect::Rejected(&[
            "batchnorm_forward_train",
            "Expected more than 1 value per channel",
        ]),
    });
    // 4. Max pooling propagates NaN; the gradient goes to the window's last NaN.
    let geom = pool_case(Pool2d::max(2, 1, 0, false), Shape::new(1, 1, 3, 3));
    let nan = f32::NAN;
    #[rustfmt::skip]
    let x = vec![
        0.5, nan, -1.0,
        2.0, 0.25, nan,
        1.0, 3.0, -2.0,
    ];
    cases.push(Convention {
        about: "max pooling over a window holding a NaN gives NaN",
        op: Op::PoolForward(geom),
        floats: vec![("x", x.clone())],
        labels: None,
        expect: Expect::Outputs(vec![("y", vec![f64::NAN, f64::NAN, 3.0, f64::NAN])]),
    });
    #[rustfmt::skip]
    let dx = vec![
        0.0, 1.0, 0.0,
        0.0, 0.0, 10.0,
        0.0, 4.0, 0.0,
    ];
    cases.push(Convention {
        about: "max pooling's gradient goes to the last NaN of a window",
        op: Op::PoolBackward(geom),
        floats: vec![("x", x), ("dy", vec![1.0, 2.0, 4.0, 8.0])],
        labels: None,
        expect: Expect::Outputs(vec![("dx", dx)]),
    });
    // 5. Max pooling takes a window's first maximum: ties within a row and across rows, and a
    // zero after a negative zero, go to the element the scan meets first.
    #[rustfmt::skip]
    let x = vec![
        -0.0, 0.0, 3.0,
        0.0, -1.0, 3.0,
        5.0, 5.0, -2.0,
    ];
    cases.push(Convention {
        about: "max pooling takes a window's first maximum",
        op: Op::PoolForward(geom),
        floats: vec![("x", x.clone())],
        labels: None,
        expect: Expect::Outputs(vec![("y", vec![0.0, 3.0, 5.0, 5.0])]),
    });
    #[rustfmt::skip]
    let dx = vec![
        1.0, 0.0, 2.0,
        0.0, 0.0, 0.0,
        4.0, 8.0, 0.0,
    ];
    cases.push(Convention {
        about: "max pooling's gradient goes to a window's first maximum",
        op: Op::PoolBackward(geom),
        floats: vec![("x", x), ("dy", vec![1.0, 2.0, 4.0, 8.0])],
        labels: None,
        expect: Expect::Outputs(vec![("dx", dx)]),
    });
    cases
}

/// `torch.nn.LocalResponseNorm` written as PyTorch writes it: squares padded with `size / 2`
/// zero channels before and `(size - 1) / 2` after, averaged over `size` channels; returns
/// `(y, scale)` with `scale = k + alpha * average`.
fn lrn_pytorch(lrn: &Lrn, s: &Shape, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let hw = s.h * s.w;
    let before = lrn.size / 2;
    let padded_channels = s.c + lrn.size - 1;
    let mut y = vec![0.0; x.len()];
    let mut scale = vec![0.0; x.len()];
    for n in 0..s.n {
        for q in 0..hw {
            let padded: Vec<f64> = (0..padded_channels)
                .map(|p| match p.checked_sub(before).filter(|&c| c < s.c) {
                    Some(c) => x[(n * s.c + c) * hw + q].powi(2),
                    None => 0.0,
                })
                .collect();
            for c in 0..s.c {
                let average = padded[c..c + lrn.size].iter().sum::<f64>() / lrn.size as f64;
                let i = (n * s.c + c) * hw + q;
                scale[i] = lrn.k + lrn.alpha * average;
                y[i] = x[i] * scale[i].powf(-lrn.beta);
            }
        }
    }
    (y, scale)
}
