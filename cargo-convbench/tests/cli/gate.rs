//! The gate's modes: which one decides `ci` and says why, and A/B outcome files judged again
//! from their raw pairs by `ci --results` and `comment` (no GPU needed: the files are written
//! here as a run would write them).

use crate::support::*;

/// An A/B outcome file whose head is `slowdown` slower than its base on every pair, claiming
/// the verdict `claimed` (which must never be believed).
fn outcome_file(slowdown: f64, claimed: &str) -> String {
    let base: Vec<u64> = (0..40).map(|i| 10_000_000 + (i % 7) * 50_000).collect();
    let head: Vec<u64> = base
        .iter()
        .enumerate()
        .map(|(i, b)| (*b as f64 * (1.0 + slowdown) * (1.0 + 0.002 * (i % 3) as f64)) as u64)
        .collect();
    let base_first: Vec<bool> = (0..40).map(|i| i % 2 == 0).collect();
    serde_json::json!({
        "format": "convbench-ab-1",
        "mode": "shaders at 1234567 (A) against the working tree's shaders (B)",
        "adapter": "llvmpipe (vulkan)",
        "alpha": 0.01,
        "looks": 6,
        "rows": [{
            "benchmark_id": "lenet/train/b1/f32/wgpu",
            "pairs": 40,
            "base_median_ns": 1.0e7,
            "head_median_ns": 1.0e7,
            "change": 0.0,
            "ci": [-0.01, 0.01],
            "p_value": 1.0,
            "pair_spread": 0.01,
            "threshold": 0.05,
            "verdict": claimed,
            "evidence": "claimed by the file"
        }],
        "samples": {
            "lenet/train/b1/f32/wgpu": {"base_ns": base, "head_ns": head, "base_first": base_first}
        }
    })
    .to_string()
}

#[test]
fn ci_judges_the_raw_pairs_of_an_ab_outcome_file_not_the_verdict_it_claims() {
    let package = Package::git();
    std::fs::write(package.path("ab.json"), outcome_file(0.3, "no_change")).expect("write");
    let output = package
        .convbench()
        .args(["ci", "--results", "ab.json"])
        .output()
        .expect("ci");
    assert_code(&output, 1);
    let body = stdout_of(&output);
    assert!(body.contains("A/B mode: 40 pairs per benchmark"), "{body}");
    assert!(body.contains("lenet/train/b1/f32/wgpu"), "{body}");
    assert!(
        body.contains("as the run that measured describes itself"),
        "{body}"
    );
}

#[test]
fn comment_dry_run_judges_an_unchanged_ab_outcome_as_no_change() {
    let package = Package::git();
    std::fs::write(package.path("ab.json"), outcome_file(0.0, "regression")).expect("write");
    let output = package
        .convbench()
        .args(["comment", "--pr", "1", "--dry-run", "--results", "ab.json"])
        .output()
        .expect("comment");
    assert_code(&output, 0);
    let body = stdout_of(&output);
    assert!(!body.contains("🔴"), "{body}");
    assert!(body.contains("would have caught"), "{body}");
}

#[test]
fn records_and_ab_outcomes_together_are_a_usage_error() {
    let (package, _) = Package::blessed();
    std::fs::write(package.path("ab.json"), outcome_file(0.0, "no_change")).expect("write");
    let output = package
        .convbench()
        .args(["ci", "--results", "ab.json", "rec.json"])
        .output()
        .expect("ci");
    assert_code(&output, 2);
    assert!(stderr_of(&output).contains("mix"), "{}", stderr_of(&output));
}

#[test]
fn ci_on_the_cpu_backend_decides_in_baseline_mode_and_says_why() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args(["ci", "--backend", "cpu"])
        .args(tiny(&[]))
        .output()
        .expect("ci");
    let body = stdout_of(&output);
    assert!(body.contains("baseline mode"), "{body}");
    assert!(body.contains("A/B runs convbench's WGSL"), "{body}");
}

#[test]
fn ci_mode_baseline_in_the_configuration_is_named_as_the_reason() {
    let (package, _) = Package::blessed();
    let manifest = package.path("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    let section = if text.contains("[package.metadata.convbench.ci]") {
        text.replace(
            "[package.metadata.convbench.ci]",
            "[package.metadata.convbench.ci]\nmode = \"baseline\"",
        )
    } else {
        format!("{text}\n[workspace.metadata.convbench.ci]\nmode = \"baseline\"\n")
    };
    std::fs::write(&manifest, section).expect("write");
    let output = package
        .convbench()
        .args(["ci", "--backend", "cpu"])
        .args(tiny(&[]))
        .output()
        .expect("ci");
    let body = stdout_of(&output);
    assert!(
        body.contains("asked for by") && body.contains("ci.mode = \"baseline\""),
        "{body}\n{}",
        stderr_of(&output)
    );
}

/// A pull request that loosens the threshold in its own configuration is still judged with the
/// base's: `ci --results` (records or A/B outcome files) and `comment` alike.
#[test]
fn ci_judges_with_the_base_configuration_not_the_pull_requests() {
    let (package, _) = Package::blessed();
    std::fs::write(package.path("ab.json"), outcome_file(0.3, "no_change")).expect("write");
    std::fs::write(package.path("convbench.toml"), "[compare]\nthreshold = 0.9\n").expect("write");
    for args in [
        &["ci", "--results", "slower.json"][..],
        &["ci", "--results", "slower.json", "--baseline-rev", "main"],
        &["ci", "--results", "ab.json", "--baseline-rev", "main"],
    ] {
        let output = package.convbench().args(args).output().expect("ci");
        assert_code(&output, 1);
    }
    let output = package
        .convbench()
        .args(["comment", "--pr", "1", "--dry-run", "--results", "ab.json"])
        .output()
        .expect("comment");
    assert_code(&output, 0);
    assert!(stdout_of(&output).contains("🔴"), "{}", stdout_of(&output));
}

/// A key convbench does not know in the base's configuration is an error naming the file, the
/// revision and the key, not a setting silently dropped.
#[test]
fn an_unknown_key_in_the_base_configuration_is_an_error_naming_it() {
    let (package, _) = Package::blessed();
    std::fs::write(package.path("convbench.toml"), "[compare]\nthreshhold = 0.05\n").expect("write");
    package.git_ok(&["add", "convbench.toml"]);
    package.git_ok(&["commit", "--quiet", "-m", "typo"]);
    let base = package.head();
    package.git_ok(&["checkout", "--quiet", "-b", "line"]);
    package.git_ok(&["rm", "--quiet", "convbench.toml"]);
    package.git_ok(&["commit", "--quiet", "-m", "fix"]);
    for command in ["ci", "comment"] {
        let mut cmd = package.convbench();
        cmd.args([command, "--results", "slower.json", "--baseline-rev", "main"]);
        if command == "comment" {
            cmd.args(["--pr", "1", "--dry-run"]);
        }
        let output = cmd.output().expect(command);
        assert_code(&output, 2);
        let stderr = stderr_of(&output);
        assert!(stderr.contains("convbench.toml at"), "{stderr}");
        assert!(stderr.contains(&base[..7]), "{stderr}");
        assert!(stderr.contains("threshhold"), "{stderr}");
    }
}
