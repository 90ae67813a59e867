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

catalogue::family_tests!(check_family, 200);

/// The catalogue's convention cases (PyTorch's, issue 15).
#[test]
fn pytorch_conventions() {
    check_conventions_on(&CpuBackend::new(), &mut rng(211));
}
