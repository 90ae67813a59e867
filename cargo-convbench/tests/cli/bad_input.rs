//! Invalid input and usage: exit code 2, and a message on stderr that names the culprit and
//! the way out.

use crate::support::{Package, assert_code, convbench, stderr_of, stdout_of, tiny};
use std::process::Output;
use std::time::{Duration, Instant};

/// Runs the tiny cpu benchmark with `overrides` (see [`tiny`]).
fn run_cpu(overrides: &[(&str, &str)]) -> Output {
    convbench()
        .args(["run", "--backend", "cpu", "--quiet"])
        .args(tiny(overrides))
        .output()
        .expect("run")
}

/// Asserts exit code 2, nothing on stdout, and every one of `needles` on stderr.
fn assert_invalid(output: &Output, needles: &[&str]) {
    assert_code(output, 2);
    let stderr = stderr_of(output);
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "`{needle}` missing from stderr:\n{stderr}"
        );
    }
    assert_eq!(stdout_of(output), "", "nothing on stdout after invalid input");
}

#[test]
fn unknown_model_exits_2_listing_the_known_models() {
    let output = run_cpu(&[("--model", "alexnett")]);
    assert_invalid(
        &output,
        &["alexnett", "known models", "alexnet", "lenet", "vgg16"],
    );
}

#[test]
fn unknown_suite_exits_2_listing_the_known_suites() {
    let output = run_cpu(&[("--suite", "nosuchsuite")]);
    assert_invalid(&output, &["nosuchsuite", "layers", "deepbench"]);
}

#[test]
fn batch_zero_exits_2() {
    let output = run_cpu(&[("--batch", "0")]);
    assert_invalid(&output, &["--batch", "'0'", "from 1 to 65536"]);
}

#[test]
fn samples_zero_exits_2() {
    let output = run_cpu(&[("--samples", "0")]);
    assert_invalid(&output, &["--samples"]);
}

#[test]
fn unknown_precision_exits_2_naming_it() {
    let output = run_cpu(&[("--precision", "f8")]);
    assert_invalid(&output, &["f8", "f32", "f16"]);
}

#[test]
fn unknown_output_format_exits_2_naming_the_formats() {
    let output = run_cpu(&[("--format", "html")]);
    assert_invalid(&output, &["html", "table", "json", "csv", "md"]);
}

#[test]
fn unknown_subcommand_exits_2() {
    let output = convbench().arg("benchmark").output().expect("run");
    assert_code(&output, 2);
    assert!(stderr_of(&output).contains("benchmark"), "{}", stderr_of(&output));
}

#[test]
fn out_in_a_missing_directory_fails_before_running() {
    let started = Instant::now();
    // A minute of warm-up: only a check made before running can answer within the timeout.
    let output = convbench()
        .args(["run", "--backend", "cpu"])
        .args(tiny(&[("--warmup-ms", "60000")]))
        .args(["--out", "/nonexistent-dir/x.json"])
        .timeout(Duration::from_secs(30))
        .output()
        .expect("run");
    assert_invalid(&output, &["/nonexistent-dir/x.json", "--out"]);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn out_a_directory_fails_before_running() {
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    // A minute of warm-up: only a check made before running can answer within the timeout.
    let output = convbench()
        .args(["run", "--backend", "cpu"])
        .args(tiny(&[("--warmup-ms", "60000")]))
        .arg("--out")
        .arg(dir.path())
        .timeout(Duration::from_secs(30))
        .output()
        .expect("run");
    assert_invalid(&output, &["--out", "it is a folder", "name a file inside it"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(std::fs::read_dir(dir.path()).expect("read dir").count(), 0);
}

#[test]
fn out_a_file_name_too_long_fails_before_running() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = convbench()
        .args(["run", "--backend", "cpu"])
        .args(tiny(&[("--warmup-ms", "60000")]))
        .arg("--out")
        .arg(dir.path().join(format!("{}.json", "x".repeat(300))))
        .timeout(Duration::from_secs(30))
        .output()
        .expect("run");
    assert_invalid(&output, &["--out", "305 bytes long", "choose a shorter name"]);
}

#[test]
fn report_of_a_missing_file_exits_2_naming_it() {
    let output = convbench()
        .args(["report", "/nonexistent-dir/rec.json"])
        .output()
        .expect("report");
    assert_invalid(&output, &["/nonexistent-dir/rec.json"]);
}

#[test]
fn report_of_corrupt_json_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("corrupt.json");
    std::fs::write(&path, "{\"format_version\": 1, \"benchm").expect("write");
    let output = convbench().arg("report").arg(&path).output().expect("report");
    assert_invalid(&output, &["corrupt.json", "not a convbench record"]);
}

#[test]
fn report_of_a_future_format_version_exits_2_saying_upgrade() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("future.json");
    let fixture = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/record-v1.json"),
    )
    .expect("fixture");
    let mut record: serde_json::Value = serde_json::from_str(&fixture).expect("fixture is JSON");
    record["format_version"] = 999.into();
    std::fs::write(&path, record.to_string()).expect("write");
    let output = convbench().arg("report").arg(&path).output().expect("report");
    assert_invalid(&output, &["future.json", "999", "upgrade"]);
}

#[test]
fn report_pivot_bad_input_exits_2_naming_it() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/record-v1.json");
    let pivot = |args: &[&str]| {
        convbench()
            .arg("report")
            .arg(&fixture)
            .args(args)
            .output()
            .expect("report --pivot")
    };
    assert_invalid(
        &pivot(&["--pivot", "--ratio-to", "cuda"]),
        &["`cuda`", "backends: wgpu", "--ratio-to"],
    );
    // The record's one backend: no cell has another to divide by.
    assert_invalid(
        &pivot(&["--pivot", "--ratio-to", "wgpu"]),
        &["--ratio-to wgpu", "a second backend beside wgpu"],
    );
    assert_invalid(
        &pivot(&["--pivot", "--rows", "layer"]),
        &["record-v1.json", "run --layers", "--rows model"],
    );
    assert_invalid(
        &pivot(&["--pivot", "--phase", "backward"]),
        &["`backward`", "grad-input"],
    );
    assert_invalid(
        &pivot(&["--pivot", "--columns", "adapter"]),
        &["`adapter`", "backend,batch"],
    );
    let output = convbench()
        .arg("report")
        .arg(&fixture)
        .arg(&fixture)
        .output()
        .expect("report");
    assert_invalid(&output, &["2 files", "--pivot"]);
    assert_code(&pivot(&["--ratio-to", "wgpu"]), 2);
}

/// A `[[model]]` of one convolution and a classifier, `conv` replacing the convolution's
/// settings, in a package of its own.
fn package_with_model(conv: &str) -> Package {
    let package = Package::plain();
    let manifest = std::fs::read_to_string(package.path("Cargo.toml")).expect("Cargo.toml");
    let model = format!(
        "\n[[workspace.metadata.convbench.model]]\nname = \"tiny\"\ninput = [1, 12, 12]\nlayers = [\n  \
         {{ name = \"conv1\", kind = {{ op = \"conv2d\", {conv}, padding = [0, 0], bias = true }} }},\n  \
         {{ name = \"fc\", kind = {{ op = \"linear\", in_features = 256, out_features = 10, bias = true }} }},\n]\n"
    );
    std::fs::write(package.path("Cargo.toml"), format!("{manifest}{model}")).expect("write");
    package
}

/// Numbers that panicked (exit 101) or were called a kernel bug (exit 4) are input errors that
/// name the model, the layer and the field.
#[test]
fn a_model_layer_of_zero_size_exits_2_naming_model_layer_and_field() {
    let conv =
        |in_channels: &str, out_channels: &str, kernel: &str, stride: &str, dilation: &str, groups: &str| {
            format!(
                "in_channels = {in_channels}, out_channels = {out_channels}, kernel = {kernel}, \
             stride = {stride}, dilation = {dilation}, groups = {groups}"
            )
        };
    for (field, settings) in [
        ("out_channels", conv("1", "0", "[5, 5]", "[1, 1]", "[1, 1]", "1")),
        ("in_channels", conv("0", "4", "[5, 5]", "[1, 1]", "[1, 1]", "1")),
        ("kernel", conv("1", "4", "[0, 0]", "[1, 1]", "[1, 1]", "1")),
        ("stride", conv("1", "4", "[5, 5]", "[0, 1]", "[1, 1]", "1")),
        ("dilation", conv("1", "4", "[5, 5]", "[1, 1]", "[0, 0]", "1")),
        ("groups", conv("1", "4", "[5, 5]", "[1, 1]", "[1, 1]", "0")),
    ] {
        let package = package_with_model(&settings);
        let output = package
            .convbench()
            .args(["run", "--backend", "cpu", "--model", "tiny", "--samples", "1"])
            .output()
            .expect("run");
        assert_invalid(&output, &["model `tiny`", "layer conv1", &format!("`{field}`")]);
    }
}

/// A FIFO as a kernel source hung every command that loads the workspace's kernels.
#[cfg(unix)]
#[test]
fn a_kernel_source_that_is_a_fifo_exits_2_without_hanging() {
    let package = Package::plain();
    let status = std::process::Command::new("mkfifo")
        .arg(package.path("pipe.wgsl"))
        .status()
        .expect("run mkfifo");
    assert!(status.success());
    let manifest = std::fs::read_to_string(package.path("Cargo.toml")).expect("Cargo.toml");
    let kernel =
        "\n[workspace.metadata.convbench.kernels.piped]\nop = \"conv2d_forward\"\nsource = \"pipe.wgsl\"\n";
    std::fs::write(package.path("Cargo.toml"), format!("{manifest}{kernel}")).expect("write");
    let output = package
        .convbench()
        .arg("kernels")
        .timeout(Duration::from_secs(30))
        .output()
        .expect("kernels");
    assert_invalid(&output, &["kernel `piped`", "pipe.wgsl", "a named pipe (FIFO)"]);
}

/// A flag that shapes a fresh run, given with a saved record (`--from`, `--results`), was
/// silently ignored: the user believed they had judged or blessed a selection they had not.
#[test]
fn flags_of_a_fresh_run_are_refused_beside_a_saved_record() {
    let package = Package::git();
    package.cpu_record("rec.json");
    for (args, ignored) in [
        (
            &["baseline", "update", "--from", "rec.json", "--batch", "8"][..],
            "--batch",
        ),
        (
            &["compare", "--results", "rec.json", "--model", "alexnet"],
            "--model",
        ),
        (&["compare", "--results", "rec.json", "--out", "x.json"], "--out"),
        (&["ci", "--results", "rec.json", "--layers"], "--layers"),
        (&["ci", "--results", "rec.json", "--mode", "ab"], "--mode"),
        (&["ci", "--results", "rec.json", "--pairs", "3"], "--pairs"),
        (
            &["ci", "--results", "rec.json", "--time-identical"],
            "--time-identical",
        ),
    ] {
        let output = package.convbench().args(args).output().expect("the command runs");
        let record_flag = if args.contains(&"--from") {
            "--from"
        } else {
            "--results"
        };
        assert_invalid(&output, &[record_flag, "cannot be used with", ignored]);
    }
    assert!(!package.path("x.json").exists());
}

/// `baseline update --out` and `--format json` wrote and printed nothing of what they asked.
#[test]
fn baseline_update_refuses_the_output_flags_it_cannot_honour() {
    let package = Package::git();
    for (flag, value) in [("--out", "kept.json"), ("--format", "json")] {
        let output = package
            .convbench()
            .args(["baseline", "update", "--backend", "cpu", flag, value])
            .output()
            .expect("baseline update");
        assert_invalid(&output, &["takes no", flag, "--from FILE"]);
    }
    assert!(!package.path("kept.json").exists());
}

/// A set name too long for a file name failed with the operating system's error (exit 3) after
/// the whole run: it is refused first, exit 2.
#[test]
fn a_set_name_too_long_for_a_file_is_refused_before_anything_runs() {
    let package = Package::git();
    package.cpu_record("rec.json");
    let long = "s".repeat(300);
    for args in [
        &["baseline", "update", "--from", "rec.json", "--set", &long][..],
        &["compare", "--results", "rec.json", "--set", &long],
    ] {
        let output = package.convbench().args(args).output().expect("the command runs");
        assert_invalid(&output, &["baseline set", "at most 200 bytes"]);
    }
}

/// `list --manifest-path` of a workspace that does not exist listed convbench's own models and
/// exited 0, and `report`, `plot` and `adapters`, which read no workspace, ignored the flag: the
/// workspace named is what was asked about.
#[test]
fn a_named_workspace_that_does_not_exist_fails_every_command() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/record-v1.json");
    let fixture = fixture.to_str().expect("a UTF-8 path");
    for args in [
        &["list"][..],
        &["report", fixture],
        &["plot", fixture, "--output", "/nonexistent-dir/chart.svg"],
        &["adapters"],
    ] {
        let output = convbench()
            .args(args)
            .args(["--manifest-path", "/nonexistent/convbench/Cargo.toml"])
            .output()
            .expect("the command runs");
        assert_ne!(output.status.code(), Some(0), "{args:?}: {}", stderr_of(&output));
        assert!(
            stderr_of(&output).contains("/nonexistent/convbench/Cargo.toml"),
            "{args:?}: {}",
            stderr_of(&output)
        );
        assert_eq!(stdout_of(&output), "", "{args:?}");
    }
}

/// A `baselines` that is a file or a dangling link failed every command with the operating
/// system's "Not a directory" (exit 3): it is named, with what to do, exit 2.
#[test]
fn a_baseline_folder_that_is_not_a_folder_is_named() {
    let package = Package::git();
    package.cpu_record("rec.json");
    let baselines = package.path("baselines");
    std::fs::write(&baselines, "not a folder\n").expect("write a file in the way");
    for (what, args) in [
        ("a file", &["baseline", "update", "--from", "rec.json"][..]),
        ("a file", &["compare", "--results", "rec.json"]),
        ("a file", &["history"]),
    ] {
        let output = package.convbench().args(args).output().expect("the command runs");
        assert_invalid(&output, &["baselines", what, "baseline-dir"]);
    }
    std::fs::remove_file(&baselines).expect("remove the file");
    std::os::unix::fs::symlink(package.path("nowhere"), &baselines).expect("a dangling link");
    let output = package
        .convbench()
        .args(["baseline", "update", "--from", "rec.json"])
        .output()
        .expect("baseline update");
    assert_invalid(&output, &["a link to nothing"]);
    // A link to itself is a loop, not a link to nothing.
    std::fs::remove_file(&baselines).expect("remove the link");
    std::os::unix::fs::symlink(&baselines, &baselines).expect("a link loop");
    let output = package
        .convbench()
        .args(["baseline", "update", "--from", "rec.json"])
        .output()
        .expect("baseline update");
    assert_invalid(&output, &["a link that cannot be followed (a loop of links"]);
}

/// A batch the cpu backend cannot hold was refused only after its benchmark was verified (at a
/// small batch, for minutes on a large network): it is refused first, exit 3.
#[test]
fn a_batch_the_cpu_cannot_hold_is_refused_before_it_is_verified() {
    // `verify` checks at a small batch, and passed a benchmark `run` cannot time; --no-verify
    // named only "the cpu backend's program".
    for command in [&["run"][..], &["run", "--no-verify"], &["verify"]] {
        let started = Instant::now();
        let output = convbench()
            .args(command)
            .args(["--backend", "cpu", "--model", "vgg16", "--batch", "1024"])
            .output()
            .expect("the command runs");
        assert_code(&output, 3);
        assert!(
            stderr_of(&output).contains("vgg16 at batch 1024 in f32 on the cpu backend needs")
                && stderr_of(&output).contains("MiB of host memory"),
            "{command:?}: {}",
            stderr_of(&output)
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{command:?} refused after {:?}: vgg16 was verified first",
            started.elapsed()
        );
    }
}
