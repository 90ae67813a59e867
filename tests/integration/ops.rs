//! Every op, forward and backward, on the GPU against the f64 CPU reference: the shared
//! catalogue's cases ([`super::catalogue`]), random shapes and values (seed printed on failure,
//! `CONVBENCH_SEED` to replay), outputs poisoned with NaN so that an element the kernel does not
//! write fails.
//!
//! The rule is the library's per-element rounding-error bound (`convbench::harness::verify`,
//! whose docs justify it), so these tests and `cargo convbench run` judge alike.

use super::catalogue::{self, Family};
use super::support::{check_all_on, check_conventions_on, check_on, gpu, portable_gpu, rng};
use convbench::backend::Backend;
use convbench::kernels::{ConvGeom, Op};
use convbench::model::{BatchNorm, Conv2d, Precision, Shape};

/// Runs the catalogue's `family` on the GPU.
fn check_family(family: Family, salt: u64) {
    let Some(backend) = gpu() else { return };
    let mut rng = rng(salt);
    let ops = catalogue::ops(family, &mut rng);
    check_all_on(backend, &ops, &mut rng);
}

catalogue::family_tests!(check_family, 0);

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

/// The catalogue's convention cases (PyTorch's, issue 15).
#[test]
fn pytorch_conventions() {
    let Some(backend) = gpu() else { return };
    check_conventions_on(backend, &mut rng(11));
}
