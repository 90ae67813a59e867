//! `run` on a GPU adapter (lavapipe in CI). Each test skips with a notice when no adapter
//! opens, and fails instead when `CONVBENCH_REQUIRE_GPU=1`.

use crate::support::{
    assert_code, convbench, gpu_adapters, parse_record, skip_without_gpu, stderr_of, stdout_of, tiny,
};

#[test]
fn run_on_the_gpu_adapter_writes_a_wgpu_record() {
    let test = "run_on_the_gpu_adapter_writes_a_wgpu_record";
    if gpu_adapters(test).is_none() {
        return;
    }
    let output = convbench()
        .args(["run", "--backend", "wgpu", "--quiet", "--format", "json"])
        .args(tiny(&[]))
        .output()
        .expect("run");
    if output.status.code() == Some(3) {
        skip_without_gpu(
            test,
            &format!("the adapter does not open: {}", stderr_of(&output)),
        );
        return;
    }
    assert_code(&output, 0);
    let record = parse_record(&stdout_of(&output), "run --backend wgpu");
    assert_eq!(record.benchmarks.len(), 1);
    let benchmark = &record.benchmarks[0];
    assert_eq!(benchmark.id, "lenet/train/b1/f32/wgpu");
    assert_ne!(benchmark.adapter.backend, "cpu", "{:?}", benchmark.adapter);
    assert!(benchmark.verified, "checked against the CPU reference");
}

#[test]
fn f16_on_an_adapter_without_shader_f16_exits_3_naming_f16() {
    let test = "f16_on_an_adapter_without_shader_f16_exits_3_naming_f16";
    let Some(adapters) = gpu_adapters(test) else {
        return;
    };
    // llvmpipe through GL lacks SHADER_F16; on other machines, any adapter that lacks it.
    let without_f16 = |adapter: &&serde_json::Value| adapter["f16"] == false;
    let choice = adapters
        .iter()
        .filter(without_f16)
        .find(|a| a["fingerprint"]["backend"] == "gl")
        .map(|_| "gl".to_string())
        .or_else(|| adapters.iter().find(without_f16).map(|a| a["index"].to_string()));
    let Some(adapter) = choice else {
        eprintln!("notice: skipping {test}: every adapter has SHADER_F16");
        return;
    };
    let output = convbench()
        .args(["run", "--adapter", &adapter, "--precision", "f16"])
        .args(tiny(&[]))
        .output()
        .expect("run");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("f16") && stderr.contains("--precision f32"),
        "{stderr}"
    );
}
