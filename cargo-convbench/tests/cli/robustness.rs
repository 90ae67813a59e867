//! What must survive a kill, a second writer or a kernel that never ends: `baseline update`
//! killed at random points leaves no temporary file after the next update and every baseline
//! parses; two `tune` runs at once keep both sets of entries; SIGINT stops `tune` keeping
//! what it finished; a GPU submission past its deadline is an error naming its kernels.

use crate::support::{
    Package, assert_code, convbench, gpu_adapters, read_record, stderr_of, steady, write_record,
};
use convbench::results::Summary;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every file under `dir` whose name ends in `.tmp`.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(temporaries(&path));
        } else if path.to_string_lossy().ends_with(".tmp") {
            found.push(path);
        }
    }
    found
}

/// Every `.json` file under `dir`.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(json_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "json") {
            found.push(path);
        }
    }
    found
}

/// A pseudo-random sequence seeded from the clock (printed, to replay a failure).
struct Lcg(u64);

impl Lcg {
    fn from_clock() -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |elapsed| elapsed.as_nanos() as u64);
        eprintln!("seed {seed}");
        Self(seed)
    }

    /// A fraction in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// SIGKILL lands anywhere in `baseline update` (reading, merging, writing the temporary file,
/// renaming, committing): the blessed file is the old one or the new one, never half, and the
/// next update removes what the killed one left.
#[cfg(unix)]
#[test]
fn baseline_update_killed_at_random_points_leaves_no_temporary_and_a_consistent_tree() {
    let package = Package::git();
    // A large record (7 phases of 20,000 samples, about 1 MB a run) so that writing takes long
    // enough for kills to land inside it.
    let mut record = steady(package.cpu_record("rec.json"));
    for benchmark in &mut record.benchmarks {
        for phase in &mut benchmark.phases {
            let level = phase.summary.median_ns;
            phase.samples_ns = (0..20_000u64)
                .map(|i| (level * (1.0 + 0.002 * (i % 5) as f64)) as u64)
                .collect();
            phase.summary = Summary::of(&phase.samples_ns).expect("samples");
        }
    }
    write_record(&package.path("big.json"), &record);
    package.bless("big.json");
    let baselines = package.path("baselines");
    let update = |commit: bool| {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("cargo-convbench"));
        command
            .current_dir(package.root())
            .args(["--manifest-path"])
            .arg(package.path("Cargo.toml"))
            .args(["baseline", "update", "--from", "big.json", "--quiet"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if commit {
            command.arg("--commit");
        }
        command
    };
    let started = Instant::now();
    assert!(update(false).status().expect("update").success());
    let whole = started.elapsed();
    let mut random = Lcg::from_clock();
    for iteration in 0..8 {
        let delay = whole.mul_f64(random.next() * 1.2);
        let mut child = update(iteration % 2 == 0).spawn().expect("spawn update");
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        // Whatever the kill left, the blessed files parse.
        for file in json_files(&baselines) {
            read_record(&file);
        }
        let output = update(false).output().expect("the next update");
        assert!(
            output.status.success(),
            "iteration {iteration} (killed after {delay:?})"
        );
        assert_eq!(
            temporaries(&baselines),
            Vec::<PathBuf>::new(),
            "iteration {iteration}: killed after {delay:?}"
        );
        for file in json_files(&baselines) {
            read_record(&file);
        }
    }
    // A killed `--commit` may leave git's index lock: git reports it, and nothing is lost.
    let _ = std::fs::remove_file(package.path(".git/index.lock"));
    let status = package.git_ok(&["status", "--porcelain", "--", "baselines"]);
    assert!(!status.contains(".tmp"), "{status}");
}

/// Two `tune` runs at once, each of another shape: the cache keeps both shapes' entries. (The
/// cache lives in the package's own target folder, whatever the tests' `CARGO_TARGET_DIR`.)
#[test]
fn concurrent_tunes_keep_both_sets_of_entries() {
    if gpu_adapters("concurrent_tunes_keep_both_sets_of_entries").is_none() {
        return;
    }
    let package = Package::plain();
    std::fs::write(package.path("a.csv"), "1,3,12,12,4,3,3,1,1\n").expect("write a.csv");
    std::fs::write(package.path("b.csv"), "1,4,10,10,6,3,3,1,0\n").expect("write b.csv");
    let outputs: Vec<_> = std::thread::scope(|scope| {
        let runs: Vec<_> = ["a.csv", "b.csv"]
            .into_iter()
            .map(|shapes| {
                let package = &package;
                scope.spawn(move || {
                    package
                        .convbench()
                        .env("CARGO_TARGET_DIR", package.path("target"))
                        .args([
                            "tune",
                            "--quiet",
                            "--stage",
                            "eval",
                            "--samples",
                            "1",
                            "--shapes",
                            shapes,
                        ])
                        .output()
                        .expect("tune")
                })
            })
            .collect();
        runs.into_iter()
            .map(|run| run.join().expect("a thread"))
            .collect()
    });
    for output in &outputs {
        assert_code(output, 0);
    }
    let dir = package.path("target/convbench");
    let caches: Vec<PathBuf> = json_files(&dir)
        .into_iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("tune-"))
        })
        .collect();
    assert_eq!(caches.len(), 1, "{caches:?}");
    let cache: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&caches[0]).expect("read cache")).expect("JSON");
    let keys: Vec<&String> = cache["entries"].as_object().expect("entries").keys().collect();
    assert!(
        keys.iter().any(|key| key.contains("1x3x12x12")) && keys.iter().any(|key| key.contains("1x4x10x10")),
        "both shapes are kept: {keys:?}"
    );
    assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
}

/// SIGINT while `tune` works: it stops after the op in flight, exits 130, and the cache keeps
/// every op it finished.
#[cfg(unix)]
#[test]
fn sigint_during_tune_exits_130_keeping_the_finished_ops() {
    if gpu_adapters("sigint_during_tune_exits_130_keeping_the_finished_ops").is_none() {
        return;
    }
    let package = Package::plain();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cargo-convbench"))
        .current_dir(package.root())
        .arg("--manifest-path")
        .arg(package.path("Cargo.toml"))
        .env("CARGO_TARGET_DIR", package.path("target"))
        .args(["tune", "--model", "lenet", "--batch", "1", "--samples", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn tune");
    let dir = package.path("target/convbench");
    let started = Instant::now();
    while json_files(&dir).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no op was ever tuned"
        );
        if let Some(status) = child.try_wait().expect("poll") {
            panic!("tune ended before it was interrupted: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(0) {
        // The signal came as the last op finished: nothing was left to stop.
        return;
    }
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("before the interruption"), "{stderr}");
    assert!(
        stderr.contains("interrupted before every op was tuned"),
        "{stderr}"
    );
    let cache: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_files(&dir)[0]).expect("read cache"))
            .expect("JSON");
    assert!(!cache["entries"].as_object().expect("entries").is_empty());
}

/// SIGINT during a seed sweep of `verify`: it printed nothing of the seeds it had checked. It
/// now stops before the next variant, prints the table of the seeds finished, and exits 130.
#[cfg(unix)]
#[test]
fn sigint_during_a_verify_seed_sweep_prints_the_seeds_finished_and_exits_130() {
    use std::io::BufRead;
    if gpu_adapters("sigint_during_a_verify_seed_sweep_prints_the_seeds_finished_and_exits_130").is_none() {
        return;
    }
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cargo-convbench"))
        .args(["verify", "--variants", "--kernel", "direct", "--precision", "f32"])
        .args(["--seed", "1", "--seeds", "10000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn verify");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    // Seed 3 starting: seeds 1 and 2 are finished.
    while !seen.contains("verify: seed 3 (3 of 10000)") {
        let mut line = String::new();
        let read = stderr.read_line(&mut line).expect("read stderr");
        assert!(read > 0, "verify ended before seed 3:\n{seen}");
        seen.push_str(&line);
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).expect("read stderr");
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(130), "{seen}{rest}");
    assert!(
        rest.contains("interrupted before every kernel variant was checked"),
        "{rest}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("kernel variants over seeds 1 to 10000"),
        "{stdout}"
    );
    // Every line of the table counts the seeds finished: 2, or 3 where the stop came after.
    let counts: Vec<&str> = stdout
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            // `│ op direct f32 SEEDS ...`
            (cells.get(2) == Some(&"direct")).then(|| cells.get(4).copied().unwrap_or(""))
        })
        .collect();
    assert!(!counts.is_empty(), "{stdout}");
    assert!(
        counts.iter().all(|count| ["2", "3"].contains(count)),
        "{counts:?}\n{stdout}"
    );
}

/// A deadline shorter than any kernel (`CONVBENCH_GPU_TIMEOUT=1ns`) turns every submission into
/// a hang: the error names the kernel and the way out, exit 3, no hung process.
#[test]
fn a_gpu_submission_past_its_deadline_is_an_error_naming_its_kernel() {
    if gpu_adapters("a_gpu_submission_past_its_deadline_is_an_error_naming_its_kernel").is_none() {
        return;
    }
    let run = |timeout: &str| {
        convbench()
            .env("CONVBENCH_GPU_TIMEOUT", timeout)
            .args([
                "run",
                "--quiet",
                "--model",
                "lenet",
                "--batch",
                "1",
                "--samples",
                "1",
            ])
            .args(["--rounds", "1", "--warmup", "0", "--warmup-ms", "0"])
            .timeout(Duration::from_secs(300))
            .output()
            .expect("run")
    };
    let output = run("1ns");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("did not finish"), "{stderr}");
    assert!(stderr.contains("CONVBENCH_GPU_TIMEOUT"), "{stderr}");
    assert!(stderr.contains("kernel"), "{stderr}");
    let output = run("soon");
    assert_code(&output, 2);
    assert!(stderr_of(&output).contains("CONVBENCH_GPU_TIMEOUT `soon`"));
}

/// `ab --base-bin` of a program that writes no record says so, instead of naming a temporary
/// file it cannot read.
#[cfg(unix)]
#[test]
fn ab_with_a_base_bin_that_writes_no_record_says_so() {
    let output = convbench()
        .args([
            "ab",
            "--base-bin",
            "/bin/true",
            "--model",
            "lenet",
            "--pairs",
            "2",
        ])
        .output()
        .expect("ab");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("without writing a record"), "{stderr}");
    assert!(stderr.contains("/bin/true"), "{stderr}");
}

/// A GPU run whose stderr is a file (a CI log): plain progress lines, and none of the Wayland
/// loader's `XDG_RUNTIME_DIR` errors.
#[test]
fn a_gpu_run_logs_plain_progress_and_no_loader_noise() {
    if gpu_adapters("a_gpu_run_logs_plain_progress_and_no_loader_noise").is_none() {
        return;
    }
    let output = convbench()
        .env_remove("XDG_RUNTIME_DIR")
        .args(["run", "--model", "lenet", "--batch", "1", "--samples", "2"])
        .args(["--rounds", "1", "--warmup", "0", "--warmup-ms", "0"])
        .output()
        .expect("run");
    assert_code(&output, 0);
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
    assert!(stderr.contains("[1/1] lenet/b1/f32/wgpu: verifying"), "{stderr}");
    assert!(stderr.contains("[1/1] lenet/b1/f32/wgpu: sample 1/2"), "{stderr}");
}

/// A record whose stored summary disagrees with its samples (edited, or written by a buggy
/// tool): every command reads the summary its samples give, so `report` and `compare` agree.
#[test]
fn a_summary_that_disagrees_with_its_samples_is_derived_from_them_on_load() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/record-v1.json");
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).expect("fixture")).expect("JSON");
    let phase = &mut record["benchmarks"][0]["phases"][0];
    let samples: Vec<u64> = serde_json::from_value(phase["samples_ns"].clone()).expect("samples");
    let truth = Summary::of(&samples).expect("samples").median_ns;
    phase["summary"]["median_ns"] = 26.7e12.into();
    let path = dir.path().join("edited.json");
    std::fs::write(&path, record.to_string()).expect("write");
    let output = convbench()
        .args(["report", "--format", "json"])
        .arg(&path)
        .output()
        .expect("report");
    assert_code(&output, 0);
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(shown["benchmarks"][0]["phases"][0]["summary"]["median_ns"], truth);
    let output = convbench()
        .args(["compare", "--quiet", "--results"])
        .arg(&path)
        .arg("--baseline-file")
        .arg(&path)
        .output()
        .expect("compare");
    assert_code(&output, 0);
}

/// SIGINT during `ab --base-bin --out`: the round in flight ends, the pairs finished are judged
/// and written, and the exit code is 130.
#[cfg(unix)]
#[test]
fn sigint_during_ab_process_mode_writes_the_pairs_finished() {
    if gpu_adapters("sigint_during_ab_process_mode_writes_the_pairs_finished").is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("ab.json");
    let binary = assert_cmd::cargo::cargo_bin("cargo-convbench");
    let (code, rest) = crate::support::interrupt_when(
        std::process::Command::new(&binary)
            .current_dir(dir.path())
            .args(["ab", "--base-bin"])
            .arg(&binary)
            .args([
                "--model",
                "lenet",
                "--batch",
                "1",
                "--samples",
                "2",
                "--warmup",
                "0",
            ])
            .args(["--warmup-ms", "0", "--pairs", "50", "--no-tune", "--out"])
            .arg(&out),
        |line| line.starts_with("round pair 1 of 50 done"),
        Duration::ZERO,
    );
    assert_eq!(code, Some(130), "{rest:?}");
    let outcome: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the outcome is written")).expect("JSON");
    let text = outcome.to_string();
    assert!(text.contains("interrupted after"), "{text}");
    assert!(text.contains("lenet/train/b1/f32/wgpu"), "{text}");
}

/// SIGINT during shader-mode `ab --out` (the default): the pairs taken so far are judged and
/// written, marked interrupted, and the exit code is 130.
#[cfg(unix)]
#[test]
fn sigint_during_ab_shader_mode_writes_the_pairs_finished() {
    if gpu_adapters("sigint_during_ab_shader_mode_writes_the_pairs_finished").is_none() {
        return;
    }
    let package = Package::git();
    let out = package.path("ab.json");
    let binary = assert_cmd::cargo::cargo_bin("cargo-convbench");
    // Long enough after the first pair for the judge's fewest pairs even on a loaded runner.
    let (code, rest) = crate::support::interrupt_when(
        std::process::Command::new(&binary)
            .current_dir(package.path(""))
            .args([
                "ab", "--base", "HEAD", "--model", "lenet", "--batch", "1", "--stage", "eval",
            ])
            .args([
                "--warmup",
                "1",
                "--warmup-ms",
                "0",
                "--pairs",
                "100000",
                "--first-look",
                "100000",
                "--time-identical",
            ])
            .arg("--out")
            .arg(&out),
        |line| line.contains("sample 1/"),
        Duration::from_secs(4),
    );
    assert_eq!(code, Some(130), "{rest:?}");
    let outcome: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the outcome is written")).expect("JSON");
    assert_eq!(outcome["interrupted"], true, "{outcome}");
    let pairs = outcome["samples"]["lenet/eval/b1/f32/wgpu"]["base_ns"]
        .as_array()
        .map_or(0, Vec::len);
    assert!((5..100_000).contains(&pairs), "{pairs} pairs: {outcome}");
    // Cut short between two looks, it has no settled verdict (it had `no_change` at 63 pairs).
    for row in outcome["rows"].as_array().expect("rows") {
        assert_eq!(row["verdict"], "inconclusive", "{row}");
        assert!(
            row["evidence"]
                .as_str()
                .is_some_and(|e| e.starts_with("interrupted after")),
            "{row}"
        );
    }
    // A gate reading the file treats it as an incomplete run.
    let output = package
        .convbench()
        .args(["ci", "--results"])
        .arg(&out)
        .output()
        .expect("ci");
    assert_code(&output, 1);
}
