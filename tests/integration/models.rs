//! Every model of the zoo runs one verified training iteration at batch 1 on the GPU: each op
//! checked against the f64 reference with the GPU's own inputs (see `harness::verify`).
//!
//! The large networks take minutes on a software adapter and are `#[ignore]`d; run them with
//! `cargo test --test integration models -- --ignored` (CI runs the others).

use super::support::{gpu, seed};
use convbench::harness::{RunOptions, Target, measure, verify_target};
use convbench::model::{Precision, network};
use convbench::results::{Phase, Stage};

fn verified_train_iteration(name: &str) {
    let Some(backend) = gpu() else { return };
    let target = Target::Model(network(name).expect("model in the zoo"));
    let options = RunOptions {
        samples: 1,
        warmup_iterations: 0,
        warmup_min: std::time::Duration::ZERO,
        ..RunOptions::default()
    };
    let worst = verify_target(backend, &target, 1, Precision::F32, &options, &mut |_| {})
        .unwrap_or_else(|e| panic!("{name} (seed {}): {e}", seed()));
    eprintln!("{name}: every op verified at batch 1, worst relative error {worst:.2e}");
    let result = measure(backend, &target, 1, Precision::F32, &options, &mut |_| {}).expect("measured");
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
            .unwrap_or_else(|| panic!("{name}: phase {phase:?} missing"));
        assert!(
            p.samples_ns.len() == 1 && p.summary.median_ns > 0.0,
            "{name}: {phase:?} not timed"
        );
    }
}

#[test]
fn lenet() {
    verified_train_iteration("lenet");
}

#[test]
fn alexnet() {
    verified_train_iteration("alexnet");
}

#[test]
fn googlenet() {
    verified_train_iteration("googlenet");
}

#[test]
#[ignore = "minutes on a software adapter; run with --ignored"]
fn resnet50() {
    verified_train_iteration("resnet50");
}

#[test]
#[ignore = "minutes on a software adapter; run with --ignored"]
fn resnet152() {
    verified_train_iteration("resnet152");
}

#[test]
#[ignore = "minutes on a software adapter; run with --ignored"]
fn densenet161() {
    verified_train_iteration("densenet161");
}

#[test]
#[ignore = "minutes on a software adapter; run with --ignored"]
fn overfeat() {
    verified_train_iteration("overfeat");
}

#[test]
#[ignore = "minutes on a software adapter; run with --ignored"]
fn overfeat_accurate() {
    verified_train_iteration("overfeat-accurate");
}

#[test]
#[ignore = "minutes on a software adapter; run with --ignored"]
fn vgg_a() {
    verified_train_iteration("vgg-a");
}

#[test]
#[ignore = "minutes on a software adapter; run with --ignored"]
fn vgg16() {
    verified_train_iteration("vgg16");
}
