//! Fixtures shared by the tests: the binary with a clean environment, tiny workloads, records
//! with steady samples, temporary cargo packages in git repositories, and the GPU gate.

use assert_cmd::Command;
use convbench::results::{RunRecord, Summary};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

/// The smallest benchmark that exercises every phase (lenet, one image, three samples, no
/// warm-up time), each `(flag, value)` of `overrides` replacing the default of its flag or
/// added. (clap refuses a single-valued flag given twice, and appends list flags such as
/// `--batch`, so overriding by repeating a flag does not work.)
pub fn tiny(overrides: &[(&str, &str)]) -> Vec<String> {
    let mut args: Vec<(String, String)> = [
        ("--model", "lenet"),
        ("--batch", "1"),
        ("--samples", "3"),
        ("--rounds", "1"),
        ("--warmup", "1"),
        ("--warmup-ms", "0"),
    ]
    .iter()
    .map(|(flag, value)| (flag.to_string(), value.to_string()))
    .collect();
    for (flag, value) in overrides {
        match args.iter_mut().find(|(f, _)| f == flag) {
            Some(arg) => arg.1 = value.to_string(),
            None => args.push((flag.to_string(), value.to_string())),
        }
    }
    args.into_iter().flat_map(|(flag, value)| [flag, value]).collect()
}

/// The phases of a training benchmark, in record order.
pub const TRAIN_PHASES: [&str; 7] = [
    "forward",
    "loss_forward",
    "loss_backward",
    "grad_input",
    "grad_params",
    "update",
    "total",
];

/// Longer than any command of these tests needs; a hang fails instead of blocking the suite.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// The binary invoked directly (`cargo-convbench <command>`), without the variables of the
/// GitHub Actions job the tests may themselves run in: they would turn `ci` into the real gate
/// and make `compare` look for `GITHUB_BASE_REF`.
pub fn convbench() -> Command {
    let mut command = Command::cargo_bin("cargo-convbench").expect("the cargo-convbench binary is built");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GITHUB_") {
            command.env_remove(name);
        }
    }
    command.timeout(COMMAND_TIMEOUT);
    command
}

/// The binary as cargo invokes it: `cargo-convbench convbench <command>`.
pub fn cargo_convbench() -> Command {
    let mut command = convbench();
    command.arg("convbench");
    command
}

/// The process's stdout as text.
pub fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The process's stderr as text.
pub fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the exit code, showing both streams when it differs.
pub fn assert_code(output: &std::process::Output, expected: i32) {
    assert_eq!(
        output.status.code(),
        Some(expected),
        "exit code\n--- stdout\n{}\n--- stderr\n{}",
        stdout_of(output),
        stderr_of(output)
    );
}

/// Parses a record the way every convbench command does.
pub fn parse_record(text: &str, origin: &str) -> RunRecord {
    RunRecord::from_json(text, origin).unwrap_or_else(|error| panic!("{error}\n{text}"))
}

/// Reads a record file.
pub fn read_record(path: &Path) -> RunRecord {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    parse_record(&text, &path.display().to_string())
}

/// Writes a record file.
pub fn write_record(path: &Path, record: &RunRecord) {
    std::fs::write(path, record.to_json()).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// The raw samples of every benchmark and phase, keyed `<id> <phase>`: what must survive a round trip
/// through a file exactly. (The summaries are floats, which JSON round trips may perturb; see
/// `run::report_json_reproduces_the_record_byte_for_byte`.)
pub fn raw_samples(record: &RunRecord) -> Vec<(String, Vec<u64>)> {
    record
        .benchmarks
        .iter()
        .flat_map(|b| {
            b.phases
                .iter()
                .map(|p| (format!("{} {}", b.id, p.phase.as_str()), p.samples_ns.clone()))
        })
        .collect()
}

/// `record` with every phase's samples replaced by a steady series around its median (spread
/// 0.8 %): wall-clock samples of a loaded 2-core machine vary by tens of percent, which
/// would make the verdicts of the gate tests depend on the machine's load.
pub fn steady(mut record: RunRecord) -> RunRecord {
    for benchmark in &mut record.benchmarks {
        for phase in &mut benchmark.phases {
            let level = phase.summary.median_ns.max(10_000.0);
            phase.samples_ns = (0..phase.samples_ns.len().max(10))
                .map(|i| (level * (1.0 + 0.002 * (i % 5) as f64)) as u64)
                .collect();
            phase.summary = Summary::of(&phase.samples_ns).expect("samples");
        }
    }
    record
}

/// `record` with every sample multiplied by `factor` (above 1 is slower).
pub fn scaled(mut record: RunRecord, factor: f64) -> RunRecord {
    for benchmark in &mut record.benchmarks {
        for phase in &mut benchmark.phases {
            for sample in &mut phase.samples_ns {
                *sample = (*sample as f64 * factor) as u64;
            }
            phase.summary = Summary::of(&phase.samples_ns).expect("samples");
        }
    }
    record
}

/// Whether CI demands the GPU tests run (`CONVBENCH_REQUIRE_GPU` set, and not `0`).
pub fn gpu_required() -> bool {
    std::env::var("CONVBENCH_REQUIRE_GPU").is_ok_and(|value| !value.is_empty() && value != "0")
}

/// Says why `test` does not run; panics instead when the GPU is required.
pub fn skip_without_gpu(test: &str, why: &str) {
    assert!(
        !gpu_required(),
        "{test}: CONVBENCH_REQUIRE_GPU is set but {why}; install a Vulkan driver (Debian: mesa-vulkan-drivers)"
    );
    eprintln!("notice: skipping {test}: {why} (set CONVBENCH_REQUIRE_GPU=1 to fail instead)");
}

/// The adapters `cargo convbench adapters --format json` lists; `None` (after the notice of
/// [`skip_without_gpu`]) when there are none.
pub fn gpu_adapters(test: &str) -> Option<Vec<serde_json::Value>> {
    let output = convbench()
        .args(["adapters", "--format", "json"])
        .output()
        .expect("run adapters");
    assert_code(&output, 0);
    let adapters: Vec<serde_json::Value> =
        serde_json::from_slice(&output.stdout).expect("`adapters --format json` is a JSON array");
    if adapters.is_empty() {
        skip_without_gpu(test, "no GPU adapter is found");
        return None;
    }
    Some(adapters)
}

/// A temporary cargo package (its own workspace) in a temporary folder, optionally a git
/// repository with one commit on `main`.
pub struct Package {
    dir: TempDir,
}

impl Package {
    /// A package in a folder that is not a git repository.
    pub fn plain() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("convbench-cli-")
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir src");
        // `[workspace]` keeps cargo from adopting the package into an enclosing workspace
        // when the temporary folder happens to lie inside one.
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )
        .expect("write Cargo.toml");
        std::fs::write(dir.path().join("src/lib.rs"), "").expect("write lib.rs");
        Self { dir }
    }

    /// A package in a git repository with one commit on `main`.
    pub fn git() -> Self {
        let package = Self::plain();
        package.git_ok(&["init", "--quiet", "--initial-branch=main"]);
        package.git_ok(&["add", "Cargo.toml", "src/lib.rs"]);
        package.git_ok(&["commit", "--quiet", "-m", "init"]);
        package
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A path in the folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The binary, run in the folder with `--manifest-path` naming its Cargo.toml.
    pub fn convbench(&self) -> Command {
        let mut command = convbench();
        command
            .current_dir(self.root())
            .arg("--manifest-path")
            .arg(self.path("Cargo.toml"));
        command
    }

    /// Runs git in the folder (with a fixed identity, isolated from the caller's repository)
    /// and returns its stdout; panics when it fails.
    pub fn git_ok(&self, args: &[&str]) -> String {
        let output = std::process::Command::new("git")
            .current_dir(self.root())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .args([
                "-c",
                "user.name=convbench tests",
                "-c",
                "user.email=tests@convbench.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            stderr_of(&output)
        );
        stdout_of(&output).trim().to_string()
    }

    /// `git rev-parse HEAD`.
    pub fn head(&self) -> String {
        self.git_ok(&["rev-parse", "HEAD"])
    }

    /// Runs the tiny cpu benchmark with 10 samples into `name`, makes its samples steady
    /// (see [`steady`]) and returns the record.
    pub fn cpu_record(&self, name: &str) -> RunRecord {
        let output = self
            .convbench()
            .args(["run", "--backend", "cpu", "--quiet", "--out", name])
            .args(tiny(&[("--samples", "10")]))
            .output()
            .expect("run");
        assert_code(&output, 0);
        let record = steady(read_record(&self.path(name)));
        write_record(&self.path(name), &record);
        record
    }

    /// Blesses the record in `name` with `baseline update --from NAME --commit`.
    pub fn bless(&self, name: &str) {
        let output = self
            .convbench()
            .args(["baseline", "update", "--from", name, "--commit"])
            .output()
            .expect("baseline update");
        assert_code(&output, 0);
    }

    /// A package with the tiny cpu record in `rec.json` blessed and committed, and the same
    /// record 40 % slower in `slower.json`.
    pub fn blessed() -> (Self, RunRecord) {
        let package = Self::git();
        let record = package.cpu_record("rec.json");
        package.bless("rec.json");
        write_record(&package.path("slower.json"), &scaled(record.clone(), 1.4));
        (package, record)
    }
}

/// Spawns `command` with stderr piped, reads stderr until a line satisfies `ready`, waits
/// `settle`, sends SIGINT and waits for the process: its exit code and the stderr lines after
/// the signal. Panics (with the lines seen) when stderr ends before a ready line.
#[cfg(unix)]
pub fn interrupt_when(
    command: &mut std::process::Command,
    ready: impl Fn(&str) -> bool,
    settle: Duration,
) -> (Option<i32>, Vec<String>) {
    use std::io::BufRead;
    let mut child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the command");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("a line");
        let done = ready(&line);
        seen.push(line);
        if done {
            break;
        }
    }
    assert!(seen.last().is_some_and(|line| ready(line)), "{seen:?}");
    std::thread::sleep(settle);
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("wait");
    (status.code(), rest)
}
