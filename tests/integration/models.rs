//! Every model of the zoo verifies one training iteration at batch 1 on the GPU, in f32 and in
//! f16: each op checked against the f64 reference with the GPU's own inputs and fresh random
//! data (see `harness::verify`). Nothing is timed here but LeNet's phases, so the whole zoo runs
//! in CI on a software adapter.

use super::support::{gpu, seed};
use convbench::backend::Backend;
use convbench::harness::{RunOptions, Target, measure, verify_target};
use convbench::model::{Precision, network};
use convbench::results::{Phase, Stage};
use std::sync::{Condvar, Mutex, PoisonError};

fn options() -> RunOptions {
    RunOptions {
        samples: 1,
        warmup_iterations: 0,
        warmup_min: std::time::Duration::ZERO,
        ..RunOptions::default()
    }
}

/// Verifies one training iteration of `name` at batch 1 in f32, and in f16 where the adapter
/// has it (a software adapter in CI does).
fn verified(name: &str) {
    let Some(backend) = gpu() else { return };
    // At most two models at a time. The reference and a software adapter use every core while
    // they compute, but between ops one thread reads the tensors back and copies them (a third
    // of OverFeat's time, measured with perf, most of it on its large fully connected weights):
    // a second model fills those gaps. More would only add memory (a few GiB each, for the f64
    // copies of VGG's and OverFeat's weights).
    let _turn = Turn::take();
    let target = Target::Model(network(name).expect("model in the zoo"));
    for precision in [Precision::F32, Precision::F16] {
        if !backend.supports(precision) {
            // CI's adapter (lavapipe) has f16: there, missing it is a failure, not a skip.
            assert!(
                !std::env::var("CONVBENCH_REQUIRE_GPU").is_ok_and(|v| v == "1"),
                "CONVBENCH_REQUIRE_GPU=1 but the adapter has no {precision}"
            );
            eprintln!("{name}: the adapter has no {precision}; not verified in {precision}");
            continue;
        }
        let summary = verify_target(backend, &target, 1, precision, &options(), &mut |_| {})
            .unwrap_or_else(|e| panic!("{name} {precision} (seed {}): {e}", seed()));
        eprintln!(
            "{name} {precision}: every op verified at batch 1, worst error/bound {:.3}",
            summary.worst_ratio()
        );
    }
}

/// One of [`Turn::MODELS`] places for a model's verification, held until dropped.
struct Turn;

impl Turn {
    const MODELS: usize = 2;

    /// How many places are taken, and a signal when one is freed.
    fn places() -> &'static (Mutex<usize>, Condvar) {
        static PLACES: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());
        &PLACES
    }

    fn take() -> Self {
        let (taken, freed) = Self::places();
        let mut taken = taken.lock().unwrap_or_else(PoisonError::into_inner);
        while *taken >= Self::MODELS {
            taken = freed.wait(taken).unwrap_or_else(PoisonError::into_inner);
        }
        *taken += 1;
        Turn
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let (taken, freed) = Self::places();
        *taken.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
        freed.notify_one();
    }
}

#[test]
fn lenet_phases_are_timed() {
    let Some(backend) = gpu() else { return };
    let target = Target::Model(network("lenet").expect("model in the zoo"));
    let result = measure(backend, &target, 1, Precision::F32, &options(), &mut |_| {}).expect("measured");
    assert_eq!(result.stage, Stage::Train);
    for phase in [
        Phase::Forward,
        Phase::LossForward,
        Phase::LossBackward,
        Phase::GradInput,
        Phase::GradParams,
        Phase::Update,
        Phase::Total,
    ] {
        let p = result
            .phase(phase)
            .unwrap_or_else(|| panic!("lenet: phase {phase:?} missing"));
        assert!(
            p.samples_ns.len() == 1 && p.summary.median_ns > 0.0,
            "lenet: {phase:?} not timed"
        );
    }
}

#[test]
fn lenet() {
    verified("lenet");
}

#[test]
fn alexnet() {
    verified("alexnet");
}

#[test]
fn googlenet() {
    verified("googlenet");
}

#[test]
fn resnet50() {
    verified("resnet50");
}

#[test]
fn resnet152() {
    verified("resnet152");
}

#[test]
fn densenet161() {
    verified("densenet161");
}

#[test]
fn overfeat() {
    verified("overfeat");
}

#[test]
fn overfeat_accurate() {
    verified("overfeat-accurate");
}

#[test]
fn vgg_a() {
    verified("vgg-a");
}

#[test]
fn vgg16() {
    verified("vgg16");
}
