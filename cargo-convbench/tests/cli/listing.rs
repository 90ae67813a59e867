//! `list`, `adapters` and the help: what a user reads before running anything.

use crate::support::{assert_code, cargo_convbench, convbench, stderr_of, stdout_of};
use serde_json::Value;

#[test]
fn list_json_has_the_ten_models_with_alexnets_parameter_count() {
    let output = convbench()
        .args(["list", "--format", "json"])
        .output()
        .expect("list");
    assert_code(&output, 0);
    let doc: Value = serde_json::from_slice(&output.stdout).expect("list --format json is JSON");
    let models = doc["models"].as_array().expect("a models array");
    let names: Vec<&str> = models.iter().filter_map(|m| m["name"].as_str()).collect();
    assert_eq!(models.len(), 10, "{names:?}");
    for name in ["alexnet", "overfeat", "vgg-a", "googlenet", "resnet50", "lenet"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let alexnet = models.iter().find(|m| m["name"] == "alexnet").expect("alexnet");
    assert_eq!(alexnet["params"], 61_100_840);
    let suites: Vec<&str> = doc["suites"]
        .as_array()
        .expect("a suites array")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        suites.contains(&"layers") && suites.contains(&"deepbench"),
        "{suites:?}"
    );
    assert!(!doc["kernels"].as_array().expect("a kernels array").is_empty());
    let variants: Vec<&str> = doc["variants"]
        .as_array()
        .expect("a variants array")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for id in ["direct", "gemm_64x64x16_4x4", "winograd_2x2_3x3"] {
        assert!(variants.contains(&id), "{id} missing from {variants:?}");
    }
}

#[test]
fn list_table_names_every_model() {
    let output = convbench().arg("list").output().expect("list");
    assert_code(&output, 0);
    let text = stdout_of(&output);
    for name in [
        "alexnet",
        "vgg16",
        "densenet161",
        "lenet",
        "suite layers",
        "kernels:",
        "kernel variants",
    ] {
        assert!(text.contains(name), "{name} missing from\n{text}");
    }
}

#[test]
fn adapters_json_is_an_array_of_fingerprints() {
    let output = convbench()
        .args(["adapters", "--format", "json"])
        .output()
        .expect("adapters");
    assert_code(&output, 0);
    let adapters: Value = serde_json::from_slice(&output.stdout).expect("adapters --format json is JSON");
    let adapters = adapters.as_array().expect("a JSON array");
    for adapter in adapters {
        assert!(adapter["fingerprint"]["backend"].is_string(), "{adapter}");
        assert!(adapter["slug"].is_string(), "{adapter}");
        assert!(adapter["f16"].is_boolean(), "{adapter}");
    }
}

#[test]
fn cargo_form_and_direct_form_give_the_same_output() {
    let direct = convbench()
        .args(["list", "--format", "json"])
        .output()
        .expect("direct");
    let via_cargo = cargo_convbench()
        .args(["list", "--format", "json"])
        .output()
        .expect("cargo form");
    assert_code(&direct, 0);
    assert_code(&via_cargo, 0);
    assert_eq!(stdout_of(&direct), stdout_of(&via_cargo));
}

#[test]
fn help_lists_every_subcommand() {
    let output = cargo_convbench().arg("--help").output().expect("help");
    assert_code(&output, 0);
    insta::assert_snapshot!("help", stdout_of(&output));
}

#[test]
fn kernels_contract_prints_the_bindings_of_an_op_as_wgsl() {
    let output = convbench()
        .args(["kernels", "--contract", "conv2d_forward"])
        .output()
        .expect("kernels --contract");
    assert_code(&output, 0);
    let text = stdout_of(&output);
    for line in [
        "@group(0) @binding(1) var<storage, read> x: array<T>;",
        "@group(0) @binding(2) var<storage, read> w: array<T>;",
        "@group(0) @binding(3) var<storage, read> bias: array<T>;",
        "@group(0) @binding(4) var<storage, read_write> y: array<T>;",
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    let output = convbench()
        .args(["kernels", "--contract", "conv3d_forward"])
        .output()
        .expect("kernels --contract");
    assert_code(&output, 2);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("no op named conv3d_forward") && err.contains("conv2d_backward_filter"),
        "{err}"
    );
}

#[test]
fn kernels_json_lists_every_op_with_named_bindings() {
    let output = convbench()
        .args(["kernels", "--format", "json"])
        .output()
        .expect("kernels");
    assert_code(&output, 0);
    let doc: Value = serde_json::from_slice(&output.stdout).expect("kernels --format json is JSON");
    let ops = doc.as_array().expect("an array of ops");
    assert_eq!(ops.len(), 22);
    let bn = ops
        .iter()
        .find(|o| o["op"] == "batchnorm_backward")
        .expect("batchnorm_backward listed");
    let names: Vec<&str> = bn["bindings"]
        .as_array()
        .expect("bindings")
        .iter()
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "x",
            "dy",
            "gamma",
            "saved_mean",
            "saved_invstd",
            "dx",
            "dgamma",
            "dbeta"
        ]
    );
}

#[test]
fn kernels_emit_writes_every_final_source_and_the_workspaces_kernels() {
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/my-kernels/Cargo.toml");
    let output = convbench()
        .arg("kernels")
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--emit")
        .arg(dir.path())
        .output()
        .expect("kernels --emit");
    assert_code(&output, 0);
    let text = stdout_of(&output);
    // 10 plain shaders at 2 precisions less the calibration shader's f16, conv2d and batchnorm
    // in 2 forms at 2 precisions, gemm in every tile at 2 precisions.
    let sources = 10 * 2 - 1 + 2 * 2 * 2 + convbench::kernels::variant::GEMM_TILES.len() * 2;
    assert!(
        text.contains(&format!(
            "wrote {sources} final sources of convbench's shaders and 4 of your kernels"
        )),
        "{text}"
    );
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .expect("the folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), sources + 4, "{files:?}");
    for name in [
        "conv2d.f16.subgroups.wgsl",
        "gemm_128x128x8_8x8.f32.wgsl",
        "loss.f32.wgsl",
        "user_conv-tiled.f16.wgsl",
    ] {
        assert!(files.contains(&name.to_string()), "{name} missing from {files:?}");
    }
    let subgroup_form = std::fs::read_to_string(dir.path().join("conv2d.f16.subgroups.wgsl")).expect("read");
    assert!(subgroup_form.contains("enable f16; enable subgroups; alias T = f16;"));
}

/// A GPU machine is often given the binary and no Rust toolchain: the workspace's kernels are
/// then read from the manifests themselves, and every command works without cargo.
#[test]
fn list_finds_the_workspaces_kernels_without_cargo_on_path() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/my-kernels/Cargo.toml");
    let empty = tempfile::tempdir().expect("temp dir");
    let output = convbench()
        .env("PATH", empty.path())
        .arg("list")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--format", "json"])
        .output()
        .expect("list");
    assert_code(&output, 0);
    let doc: Value = serde_json::from_slice(&output.stdout).expect("list --format json is JSON");
    let kernels = doc["user_kernels"].to_string();
    assert!(
        kernels.contains("conv-tiled") && kernels.contains("conv-plain"),
        "{kernels}"
    );
}

/// `list` in a workspace whose configuration does not load exited 0 with a notice (hidden by
/// `--quiet`), though the README gives such a configuration exit 2: it lists the zoo, then fails
/// with the configuration's error.
#[test]
fn list_in_a_workspace_whose_configuration_does_not_load_exits_2() {
    let package = crate::support::Package::plain();
    std::fs::write(package.path("convbench.toml"), "models = 3\n").expect("write");
    // Found from the current folder, the zoo is listed before the error.
    let output = convbench()
        .current_dir(package.path(""))
        .args(["list", "--quiet"])
        .output()
        .expect("list");
    assert_code(&output, 2);
    assert!(stdout_of(&output).contains("lenet"), "{}", stdout_of(&output));
    assert!(
        stderr_of(&output).contains("convbench.toml"),
        "{}",
        stderr_of(&output)
    );
    // Named with --manifest-path, the workspace is what was asked about: the error alone.
    let output = package
        .convbench()
        .args(["list", "--quiet"])
        .output()
        .expect("list");
    assert_code(&output, 2);
    assert_eq!(stdout_of(&output), "");
}

/// `convbench.toml` is the whole configuration, so a `[workspace.metadata.convbench]` table
/// beside it is ignored: every command that reads the workspace warns of it, even an empty
/// `convbench.toml` and even with `--quiet`, and goes on with convbench.toml's settings.
#[test]
fn a_cargo_table_hidden_by_convbench_toml_is_warned_of() {
    let package = crate::support::Package::plain();
    let manifest = std::fs::read_to_string(package.path("Cargo.toml")).expect("read");
    std::fs::write(
        package.path("Cargo.toml"),
        format!("{manifest}\n[workspace.metadata.convbench]\nmodels = [\"lenet\"]\n"),
    )
    .expect("write");
    let warning = "is the configuration, so the [workspace.metadata.convbench] table of";
    let output = package
        .convbench()
        .args(["list", "--quiet"])
        .output()
        .expect("list");
    assert_code(&output, 0);
    assert!(!stderr_of(&output).contains(warning), "{}", stderr_of(&output));
    std::fs::write(package.path("convbench.toml"), "").expect("write");
    for args in [&["list", "--quiet"][..], &["kernels"]] {
        let output = package.convbench().args(args).output().expect("convbench");
        let stderr = stderr_of(&output);
        assert_eq!(stderr.matches(warning).count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("Cargo.toml is ignored"), "{args:?}: {stderr}");
    }
}
