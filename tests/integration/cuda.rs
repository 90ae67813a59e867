//! The `cuda` backend (feature `cuda`): every op, forward and backward, against the f64 CPU
//! reference on the shared catalogue's cases ([`super::catalogue`]), as `ops.rs` does for wgpu
//! and `cpu.rs` for the cpu backend (same cases, same error bounds,
//! NaN-poisoned outputs, `CONVBENCH_SEED` to replay), plus one verified LeNet training iteration.
//!
//! Without an NVIDIA driver and the CUDA libraries these tests print why they skip; with
//! `CONVBENCH_REQUIRE_CUDA=1` they fail instead. Two tests need no GPU: opening the backend
//! where CUDA is missing is an environment error naming the library, and NVRTC (when
//! `libnvrtc` is on the library path, as in CI) compiles the backend's kernels.

use super::catalogue::{self, Family};
use super::support::{check_all_on, check_conventions_on, rng, seed};
use convbench::ErrorKind;
use convbench::backend::Backend;
use convbench::backend::cuda::{CudaBackend, CudaError, compile_kernels_without_device};
use convbench::harness::{RunOptions, Target, measure, verify_target};
use convbench::model::{Precision, network};
use convbench::results::{Phase, TimingMethod};

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
            if let convbench::Error::Cuda(error) = &e
                && let CudaError::MissingLibrary { library, remedy, .. } = &**error
            {
                assert!(
                    ["libcuda", "libnvrtc", "libcublas", "libcudnn"]
                        .iter()
                        .any(|name| library.contains(name)),
                    "the error names no library: {message}"
                );
                assert!(remedy.contains("LD_LIBRARY_PATH"), "no next step: {message}");
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
        Err(convbench::Error::Cuda(e)) if matches!(*e, CudaError::MissingLibrary { .. }) && !required => {
            eprintln!("skipping the NVRTC compilation of the CUDA kernels: {e}");
        }
        Err(e) => panic!("{e}"),
    }
}

/// Runs the catalogue's `family` on the cuda backend.
fn check_family(family: Family, salt: u64) {
    let Some(backend) = cuda() else { return };
    let mut rng = rng(salt);
    let ops = catalogue::ops(family, &mut rng);
    check_all_on(&backend, &ops, &mut rng);
}

catalogue::family_tests!(check_family, 100);

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

/// The catalogue's convention cases (PyTorch's, issue 15).
#[test]
fn pytorch_conventions() {
    let Some(backend) = cuda() else { return };
    check_conventions_on(&backend, &mut rng(111));
}
