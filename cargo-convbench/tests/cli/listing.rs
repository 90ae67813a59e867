//! `list`, `adapters` and the help: what a user reads before running anything.

use crate::support::{assert_code, cargo_convbench, convbench, stdout_of};
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
