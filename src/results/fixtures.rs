//! Records for tests, built in one place: a field added to [`BenchmarkResult`] is added here
//! once. The library's unit tests use it, and other test suites through the `testing` feature. A test that needs other values overrides them with struct update syntax
//! (`BenchmarkResult { batch: 64, ..benchmark(id, phases) }`).

use super::{
    AdapterFingerprint, BenchmarkResult, Phase, PhaseResult, RunRecord, Stage, Summary, TimingMethod,
};
use crate::model::Precision;

/// An NVIDIA adapter on Vulkan named `name`.
pub fn adapter(name: &str) -> AdapterFingerprint {
    AdapterFingerprint {
        backend: "vulkan".to_string(),
        vendor_id: 0x10de,
        device_id: 0x2330,
        name: name.to_string(),
        device_type: "discrete".to_string(),
        driver: "NVIDIA".to_string(),
        driver_info: "580.1".to_string(),
        runtime_version: "30.0.1".to_string(),
    }
}

/// A phase with these samples (an all-zero summary when there are none).
pub fn phase(phase: Phase, samples_ns: Vec<u64>) -> PhaseResult {
    let summary = Summary::of(&samples_ns).unwrap_or(Summary {
        median_ns: 0.0,
        mean_ns: 0.0,
        min_ns: 0.0,
        max_ns: 0.0,
        stddev_ns: 0.0,
    });
    PhaseResult {
        phase,
        samples_ns,
        summary,
    }
}

/// A verified benchmark `id`, on an H100, timed with GPU timestamps, with `phases`. Its model,
/// stage, batch, precision and backend are read from the id when it has the shape
/// `<model>/<stage>/b<batch>/<precision>/<backend>` (so the record passes
/// [`RunRecord::validate`]); otherwise the model is the id's first part and the rest is a train
/// benchmark of batch 128 in f32 on wgpu.
pub fn benchmark(id: &str, phases: Vec<PhaseResult>) -> BenchmarkResult {
    let parts: Vec<&str> = id.split('/').collect();
    let parsed = match parts.as_slice() {
        [model, stage, batch, precision, backend] => {
            let stage = match *stage {
                "train" => Some(Stage::Train),
                "eval" => Some(Stage::Eval),
                _ => None,
            };
            let batch = batch.strip_prefix('b').and_then(|b| b.parse::<usize>().ok());
            match (stage, batch, precision.parse::<Precision>()) {
                (Some(stage), Some(batch), Ok(precision)) => {
                    Some((*model, stage, batch, precision, *backend))
                }
                _ => None,
            }
        }
        _ => None,
    };
    let (model, stage, batch, precision, backend) = parsed.unwrap_or((
        id.split('/').next().unwrap_or(id),
        Stage::Train,
        128,
        Precision::F32,
        "wgpu",
    ));
    BenchmarkResult {
        id: id.to_string(),
        model: model.to_string(),
        stage,
        batch,
        precision,
        backend: backend.to_string(),
        adapter: adapter("NVIDIA H100"),
        timing_method: TimingMethod::GpuTimestamps,
        warmup_iterations: 3,
        verified: true,
        params: 0,
        forward_flops: 0,
        iteration_flops: 0,
        device_memory_bytes: 0,
        phases,
        layers: Vec::new(),
        peak: None,
        kernels: Default::default(),
        rounds: Vec::new(),
        runs: Vec::new(),
    }
}

/// A record of `benchmarks`, made now, from no commit.
pub fn record(benchmarks: Vec<BenchmarkResult>) -> RunRecord {
    let mut record = RunRecord::new(None);
    record.benchmarks = benchmarks;
    record
}
