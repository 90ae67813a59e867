//! `run` on a GPU adapter (lavapipe in CI). Each test skips with a notice when no adapter
//! opens, and fails instead when `CONVBENCH_REQUIRE_GPU=1`.

use crate::support::{
    Package, assert_code, convbench, gpu_adapters, parse_record, skip_without_gpu, stderr_of, stdout_of, tiny,
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
    // The kernel of every convolution and fully connected layer is recorded without --layers.
    assert!(!benchmark.kernels.is_empty(), "{benchmark:?}");
    for (layer, variant) in &benchmark.kernels {
        assert!(
            variant.parse::<convbench::kernels::Variant>().is_ok(),
            "{layer}: {variant} is a variant id"
        );
    }
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
    // f32 first: it used to be timed in full before the f16 benchmark stopped the run.
    let output = convbench()
        .args(["run", "--adapter", &adapter, "--precision", "f32,f16"])
        .args(tiny(&[]))
        .output()
        .expect("run");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("f16") && stderr.contains("--precision f32"),
        "{stderr}"
    );
    assert_eq!(stdout_of(&output), "", "nothing is measured before the refusal");
}

#[test]
fn calibrate_caches_peaks_that_run_layers_places_on_the_roofline() {
    let test = "calibrate_caches_peaks_that_run_layers_places_on_the_roofline";
    if gpu_adapters(test).is_none() {
        return;
    }
    let package = Package::plain();
    let before = package
        .convbench()
        .args(["run", "--backend", "wgpu", "--layers", "--no-verify"])
        .args(tiny(&[("--samples", "1")]))
        .output()
        .expect("run");
    assert_code(&before, 0);
    assert!(
        stdout_of(&before).contains("roof: not calibrated") && stderr_of(&before).contains("--calibrate"),
        "{}\n{}",
        stdout_of(&before),
        stderr_of(&before)
    );

    let output = package
        .convbench()
        .args([
            "adapters",
            "--calibrate",
            "--adapter",
            "vulkan",
            "--format",
            "json",
        ])
        .output()
        .expect("calibrate");
    if output.status.code() == Some(3) {
        skip_without_gpu(test, &format!("no Vulkan adapter opens: {}", stderr_of(&output)));
        return;
    }
    assert_code(&output, 0);
    let calibrations: Vec<serde_json::Value> =
        serde_json::from_str(&stdout_of(&output)).expect("calibrations as JSON");
    assert_eq!(calibrations.len(), 1, "{calibrations:?}");
    let peak = &calibrations[0]["peak"];
    for key in ["flops_per_second", "bytes_per_second"] {
        let value = peak[key].as_f64().expect("a number");
        assert!(value > 1e6 && value.is_finite(), "{key} = {value}");
    }
    let cached = std::fs::read_dir(package.path("target/convbench"))
        .expect("target/convbench")
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with("calibration-"));
    assert!(cached, "the calibration is cached under target/convbench");

    let after = package
        .convbench()
        .args([
            "run",
            "--backend",
            "wgpu",
            "--layers",
            "--no-verify",
            "--format",
            "json",
        ])
        .args(tiny(&[("--samples", "1")]))
        .output()
        .expect("run");
    assert_code(&after, 0);
    let record = parse_record(&stdout_of(&after), "run --layers after calibrating");
    let benchmark = &record.benchmarks[0];
    let recorded = benchmark.peak.expect("the peak is recorded with the layers");
    assert_eq!(
        recorded.flops_per_second,
        peak["flops_per_second"].as_f64().expect("number")
    );
    let conv = benchmark
        .layers
        .iter()
        .find(|l| l.op == "conv2d")
        .expect("lenet has convolutions");
    assert!(conv.bytes > 0 && conv.flops > 0, "{conv:?}");
    let table = package
        .convbench()
        .args(["run", "--backend", "wgpu", "--layers", "--no-verify", "--quiet"])
        .args(tiny(&[("--samples", "1")]))
        .output()
        .expect("run");
    assert_code(&table, 0);
    let text = stdout_of(&table);
    assert!(
        text.contains("% of roof") && text.contains("roof: ") && text.contains("GFLOP/s and"),
        "{text}"
    );
}

#[test]
fn verify_prints_the_worst_error_to_bound_ratio_of_every_op_and_times_nothing() {
    let test = "verify_prints_the_worst_error_to_bound_ratio_of_every_op_and_times_nothing";
    if gpu_adapters(test).is_none() {
        return;
    }
    // `verify` checks every kernel variant first, so it compiles every GEMM tile. On a fresh
    // machine lavapipe compiles each entry point of an 8x8-block tile in about 7 s (Mesa's
    // shader cache is empty), over three minutes in all on 2 cores shared with other tests.
    let output = convbench()
        .args([
            "verify",
            "--model",
            "lenet",
            "--batch",
            "1",
            "--precision",
            "f32",
            "--quiet",
        ])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("verify");
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    for op in [
        "conv2d_forward",
        "conv2d_backward_filter",
        "linear_backward_params",
        "sgd_update",
    ] {
        let row = stdout
            .lines()
            .find(|line| line.contains(op))
            .unwrap_or_else(|| panic!("no row for {op}:\n{stdout}"));
        assert!(row.contains("f32"), "{row}");
    }
    let worst: f64 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("worst error/bound overall: "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|ratio| ratio.parse().ok())
        .unwrap_or_else(|| panic!("no overall line:\n{stdout}"));
    assert!((0.0..=1.0).contains(&worst), "{worst}");
    assert!(!stdout.contains("images/s"), "verify times nothing:\n{stdout}");
}

#[test]
fn verify_with_repeat_zero_is_a_usage_error() {
    let output = convbench()
        .args(["verify", "--model", "lenet", "--repeat", "0"])
        .output()
        .expect("verify");
    assert_code(&output, 2);
    assert!(stderr_of(&output).contains("--repeat"), "{}", stderr_of(&output));
}

/// A package whose git history holds a copy of convbench's `shaders/` at HEAD (with the library
/// files its shaders include, under `lib/`), as a checkout of convbench does, and a second copy
/// `head/` to edit.
fn package_with_shaders() -> Package {
    let package = Package::git();
    let repo_shaders = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shaders");
    for folder in ["shaders", "head"] {
        copy_folder(&repo_shaders, &package.path(folder));
    }
    package.git_ok(&["add", "shaders"]);
    package.git_ok(&["commit", "--quiet", "-m", "shaders"]);
    package
}

/// Copies the folder `from`, with its subfolders, to `to` (created).
fn copy_folder(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read the folder") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

#[test]
fn ab_interleaves_two_shader_sets_and_verifies_both_first() {
    let test = "ab_interleaves_two_shader_sets_and_verifies_both_first";
    if gpu_adapters(test).is_none() {
        return;
    }
    let package = package_with_shaders();
    let ab = |extra: &[&str]| {
        package
            .convbench()
            .args([
                "ab", "--base", "HEAD", "--model", "lenet", "--batch", "1", "--pairs", "6",
            ])
            .args([
                "--warmup",
                "1",
                "--warmup-ms",
                "0",
                "--quiet",
                "--shaders",
                "head",
            ])
            .args(extra)
            .output()
            .expect("ab")
    };
    // Identical shaders: no change, and nothing timed (the row says so, the file keeps it).
    let output = ab(&["--out", "same.json"]);
    if output.status.code() == Some(3) {
        skip_without_gpu(
            test,
            &format!("the adapter does not open: {}", stderr_of(&output)),
        );
        return;
    }
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    assert!(stdout.contains("so it was not timed"), "{stdout}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(package.path("same.json")).expect("--out"))
            .expect("JSON");
    assert_eq!(saved["rows"][0]["same_code"], true, "{saved}");
    assert_eq!(saved["rows"][0]["verdict"], "no_change", "{saved}");
    assert_eq!(saved["samples"], serde_json::json!({}), "{saved}");
    // --time-identical times them anyway (an A/A run): a verdict, every pair kept in --out.
    let output = ab(&["--time-identical", "--out", "ab.json"]);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        stderr_of(&output)
    );
    let stdout = stdout_of(&output);
    assert!(stdout.contains("no shader differs"), "{stdout}");
    assert!(stdout.contains("lenet/train/b1/f32/wgpu"), "{stdout}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(package.path("ab.json")).expect("--out"))
            .expect("JSON");
    let pairs = &saved["samples"]["lenet/train/b1/f32/wgpu"];
    assert_eq!(pairs["base_ns"].as_array().map(Vec::len), Some(6), "{saved}");
    assert_eq!(pairs["head_ns"].as_array().map(Vec::len), Some(6), "{saved}");
    assert_eq!(pairs["base_first"][0], true);
    assert_eq!(pairs["base_first"][1], false, "ABBA order");
    // Verified once where both sides run the same code: identical shaders leave nothing to
    // verify on the base; an equivalent rewrite of ReLU leaves only the ops that run it.
    let verified = |output: &std::process::Output, side: &str| -> usize {
        let stderr = stderr_of(output);
        let prefix = format!("({side}): verifying ");
        let line = stderr
            .lines()
            .find_map(|line| line.split_once(&prefix).map(|(_, rest)| rest.to_string()))
            .unwrap_or_else(|| panic!("no `{prefix}` line in {stderr}"));
        line.split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count")
    };
    let loud = |package: &Package| {
        package
            .convbench()
            .args([
                "ab", "--base", "HEAD", "--model", "lenet", "--batch", "1", "--pairs", "6",
            ])
            .args([
                "--warmup",
                "1",
                "--warmup-ms",
                "0",
                "--shaders",
                "head",
                "--time-identical",
            ])
            .output()
            .expect("ab")
    };
    let output = loud(&package);
    let head_ops = verified(&output, "head");
    assert_eq!(verified(&output, "base"), 0, "{}", stderr_of(&output));
    assert!(head_ops > 10, "{}", stderr_of(&output));
    let relu = package.path("head/activation.wgsl");
    let original = std::fs::read_to_string(&relu).expect("read");
    let rewritten = original.replacen(
        "fwd_y[i] = max(fwd_x[i], T(0.0));",
        "fwd_y[i] = max(T(0.0), fwd_x[i]);",
        1,
    );
    assert_ne!(rewritten, original, "relu_forward is where this test expects it");
    std::fs::write(&relu, &rewritten).expect("write");
    let output = loud(&package);
    let base_ops = verified(&output, "base");
    assert!(base_ops > 0 && base_ops < head_ops, "{}", stderr_of(&output));
    assert_eq!(verified(&output, "head"), head_ops);
    std::fs::write(&relu, &original).expect("write");
    // --layers judges each layer too, and keeps each layer's pairs.
    let output = ab(&["--layers", "--time-identical", "--out", "layers.json"]);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        stderr_of(&output)
    );
    let stdout = stdout_of(&output);
    assert!(stdout.contains("layer conv1"), "{stdout}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(package.path("layers.json")).expect("--out"))
            .expect("JSON");
    let layers = &saved["samples"]["lenet/train/b1/f32/wgpu"]["layers"];
    assert!(
        layers.as_array().is_some_and(|layers| layers.len() >= 4),
        "{layers}"
    );
    assert_eq!(layers[0]["base_ns"].as_array().map(Vec::len), Some(6), "{layers}");
    // A head kernel that computes a wrong value is stopped before anything is timed.
    let relu = package.path("head/activation.wgsl");
    let text = std::fs::read_to_string(&relu).expect("read");
    let wrong = text.replacen(
        "fwd_y[i] = max(fwd_x[i], T(0.0));",
        "fwd_y[i] = max(fwd_x[i], T(0.0)) * T(1.5);",
        1,
    );
    assert_ne!(wrong, text, "relu_forward is where this test expects it");
    std::fs::write(&relu, wrong).expect("write");
    let output = ab(&[]);
    assert_code(&output, 4);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("working tree's shaders"), "{stderr}");
    assert!(stderr.contains("relu"), "{stderr}");
}

/// A base build stand-in for `ab --base-bin`: runs the real binary, then makes every time in
/// its record `factor` times as long (python3, which `.ci/run` installs).
fn scaled_build(package: &Package, factor: f64) -> std::path::PathBuf {
    let binary = assert_cmd::cargo::cargo_bin("cargo-convbench");
    let script = package.path("base-build.sh");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
"{binary}" "$@" || exit $?
exec python3 - "$@" <<'PY'
import json, sys
out = sys.argv[sys.argv.index("--out") + 1]
record = json.load(open(out))
for benchmark in record["benchmarks"]:
    for phase in benchmark["phases"]:
        phase["summary"]["median_ns"] *= {factor}
        phase["samples_ns"] = [max(1, round(v * {factor})) for v in phase["samples_ns"]]
json.dump(record, open(out, "w"))
PY
"#,
            binary = binary.display()
        ),
    )
    .expect("write the script");
    executable(&script);
    script
}

fn executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn ab_base_bin_alternates_two_builds_and_flags_a_slower_head() {
    let test = "ab_base_bin_alternates_two_builds_and_flags_a_slower_head";
    if gpu_adapters(test).is_none() {
        return;
    }
    let package = Package::git();
    let ab = |base: &std::path::Path, out: &str| {
        package
            .convbench()
            .arg("ab")
            .arg("--base-bin")
            .arg(base)
            .args([
                "--model",
                "lenet",
                "--batch",
                "1",
                "--pairs",
                "6",
                "--samples",
                "2",
            ])
            .args(["--warmup", "1", "--warmup-ms", "0", "--quiet", "--out", out])
            .output()
            .expect("ab --base-bin")
    };
    // The same build on both sides: rounds alternate ABBA, every pair kept.
    let same = assert_cmd::cargo::cargo_bin("cargo-convbench");
    let output = ab(&same, "aa.json");
    if output.status.code() == Some(3) {
        skip_without_gpu(
            test,
            &format!("the adapter does not open: {}", stderr_of(&output)),
        );
        return;
    }
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        stderr_of(&output)
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(package.path("aa.json")).expect("--out"))
            .expect("JSON");
    let pairs = &saved["samples"]["lenet/train/b1/f32/wgpu"];
    assert_eq!(pairs["base_ns"].as_array().map(Vec::len), Some(6), "{saved}");
    assert_eq!(pairs["base_first"][0], true);
    assert_eq!(pairs["base_first"][1], false, "ABBA order");
    // A base build ten times as fast as this one: the head is a regression, exit 1. (Ten,
    // not two: with 6 pairs of rounds on a loaded runner the ratios vary by a third, and the
    // interval must clear the threshold every time.)
    let faster_base = scaled_build(&package, 0.1);
    let output = ab(&faster_base, "ab.json");
    assert_code(&output, 1);
    let stdout = stdout_of(&output);
    assert!(stdout.contains("regression"), "{stdout}");
    // A base build that fails its run is an environment error naming it.
    let broken = package.path("broken.sh");
    std::fs::write(&broken, "#!/bin/sh\nexit 7\n").expect("write");
    executable(&broken);
    let output = ab(&broken, "broken.json");
    assert_code(&output, 3);
    assert!(stderr_of(&output).contains("broken.sh"), "{}", stderr_of(&output));
}

#[test]
fn ab_with_shaders_outside_convbench_says_what_it_compares() {
    let package = Package::git();
    let output = package
        .convbench()
        .args([
            "ab",
            "--shaders",
            "no-such-folder",
            "--model",
            "lenet",
            "--batch",
            "1",
        ])
        .output()
        .expect("ab");
    assert_code(&output, 2);
    // The folder given, not the checkout's `shaders/` (which is missing too).
    assert!(
        stderr_of(&output).contains("no-such-folder is not a folder"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn ci_in_ab_mode_says_so_in_the_comment() {
    let test = "ci_in_ab_mode_says_so_in_the_comment";
    if gpu_adapters(test).is_none() {
        return;
    }
    let package = package_with_shaders();
    let output = package
        .convbench()
        .args([
            "ci",
            "--ab-base",
            "HEAD",
            "--pairs",
            "6",
            "--model",
            "lenet",
            "--batch",
            "1",
        ])
        .args(["--warmup", "1", "--warmup-ms", "0", "--quiet", "--out", "ab.json"])
        .arg("--time-identical")
        .output()
        .expect("ci --ab-base");
    if output.status.code() == Some(3) {
        skip_without_gpu(
            test,
            &format!("the adapter does not open: {}", stderr_of(&output)),
        );
        return;
    }
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        stderr_of(&output)
    );
    let body = stdout_of(&output);
    assert!(body.starts_with("<!-- convbench-comment -->"), "{body}");
    assert!(
        body.contains("Decided by A/B mode: 6 pairs per benchmark"),
        "{body}"
    );
    assert!(body.contains("lenet/train/b1/f32/wgpu"), "{body}");
    assert!(package.path("ab.json").is_file(), "--out keeps every pair");
}

/// A tune cache whose winner this build or workspace lacks (a user kernel removed since it was
/// tuned) left its op to the heuristic without a word: `run` names the winner and what to do.
#[test]
fn a_tuned_winner_this_build_lacks_is_named() {
    let test = "a_tuned_winner_this_build_lacks_is_named";
    let Some(adapters) = gpu_adapters(test) else {
        return;
    };
    let package = Package::plain();
    for adapter in &adapters {
        let fingerprint: convbench::results::AdapterFingerprint =
            serde_json::from_value(adapter["fingerprint"].clone()).expect("a fingerprint");
        let cache = serde_json::json!({
            "format_version": convbench::harness::tune::TUNE_FORMAT_VERSION,
            "adapter": adapter["fingerprint"],
            "entries": {
                "conv2d_forward some-shape f32": {
                    "op": "conv2d_forward",
                    "shape": "some-shape",
                    "precision": "f32",
                    "winner": "user:gone",
                    "median_ns": {}
                }
            }
        });
        let path = package.path(&format!("target/convbench/tune-{}.json", fingerprint.slug()));
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the cache folder");
        std::fs::write(&path, cache.to_string()).expect("write the tune cache");
    }
    let output = package
        .convbench()
        .env("CARGO_TARGET_DIR", package.path("target"))
        .arg("run")
        .args(tiny(&[]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("user:gone") && stderr.contains("`cargo convbench tune` runs again"),
        "{stderr}"
    );
}
