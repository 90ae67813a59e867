//! The `cpu` backend (the embedded fallback): every op, forward and backward, against the f64
//! reference on the shared catalogue's cases ([`super::catalogue`]), in f32 and in f16 storage,
//! with the same error bounds and NaN-poisoned outputs as the GPU backends.

use super::catalogue::{self, Family};
use super::support::{check_all_on, check_conventions_on, rng};
use convbench::backend::cpu::CpuBackend;

/// Runs the catalogue's `family` on the cpu backend.
fn check_family(family: Family, salt: u64) {
    let mut rng = rng(salt);
    let ops = catalogue::ops(family, &mut rng);
    check_all_on(&CpuBackend::new(), &ops, &mut rng);
}

#[test]
fn conv2d_forward() {
    check_family(Family::ConvForward, 201);
}

#[test]
fn conv2d_backward_data() {
    check_family(Family::ConvBackwardData, 202);
}

#[test]
fn conv2d_backward_filter() {
    check_family(Family::ConvBackwardFilter, 203);
}

#[test]
fn pool_forward_and_backward() {
    check_family(Family::Pool, 204);
}

#[test]
fn relu_add_and_sgd() {
    check_family(Family::Elementwise, 205);
}

#[test]
fn lrn_forward_and_backward() {
    check_family(Family::Lrn, 206);
}

#[test]
fn batch_norm_train_eval_and_backward() {
    check_family(Family::BatchNorm, 207);
}

#[test]
fn linear_forward_and_backward() {
    check_family(Family::Linear, 208);
}

#[test]
fn softmax_cross_entropy() {
    check_family(Family::Softmax, 209);
}

#[test]
fn concat_split_and_global_avgpool() {
    check_family(Family::Tensor, 210);
}

/// The catalogue's convention cases (PyTorch's, issue 15).
#[test]
fn pytorch_conventions() {
    check_conventions_on(&CpuBackend::new(), &mut rng(211));
}
