//! The bad-input corpus: every numeric field of the configuration and of shape lists, and every
//! numeric flag, at 0, -1 and its type's largest value, and every path argument as a folder, a
//! device, a dangling symbolic link, a link to a file elsewhere, a FIFO and an unwritable place.
//! Each case is one process with a deadline. What every case must show: no panic (101), abort (134) or signal, no
//! hang, the exit code of the README's table (2 for bad input), and no file touched outside what
//! the command was asked to write: the package's folder, a file elsewhere that a link points to,
//! `/dev/null` and `/dev/full` are the same after the case as before.
//!
//! The cases fail (or succeed) before anything is measured, on the cpu backend and lenet at
//! batch 1, so the whole corpus runs in about a minute.

use crate::support::{Package, convbench, stderr_of, stdout_of};
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Longer than any case needs: a case that reaches it hung.
const CASE_TIMEOUT: Duration = Duration::from_secs(60);

/// `usize::MAX` and `u64::MAX` on the 64-bit targets the tests run on.
const MAX_U64: &str = "18446744073709551615";

/// The largest integer TOML can write (`i64::MAX`).
const MAX_TOML_INTEGER: &str = "9223372036854775807";

/// The largest finite `f64`.
const MAX_F64: &str = "1.7976931348623157e308";

/// One command line of the corpus and the exit code the README's table gives it.
struct Case {
    name: String,
    /// Arguments after the binary's name; the placeholders of [`Fixture::expand`] are replaced.
    args: Vec<String>,
    /// The `convbench.toml` of the package, if any.
    config: Option<String>,
    /// Files written into the package first: name and contents.
    files: Vec<(String, String)>,
    /// Whether the package is a git repository with one commit (for `ab`, `bisect`, `ci`,
    /// `history`).
    git: bool,
    expected: i32,
    /// Text the error on stderr must hold (placeholders replaced): the flag, key or path.
    says: Vec<String>,
}

impl Case {
    fn new(name: impl Into<String>, expected: i32, args: &[&str]) -> Self {
        Self {
            name: name.into(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            config: None,
            files: Vec::new(),
            git: false,
            expected,
            says: Vec::new(),
        }
    }

    fn says(mut self, needle: impl Into<String>) -> Self {
        self.says.push(needle.into());
        self
    }

    fn config(mut self, text: impl Into<String>) -> Self {
        self.config = Some(text.into());
        self
    }

    fn file(mut self, name: &str, contents: impl Into<String>) -> Self {
        self.files.push((name.to_string(), contents.into()));
        self
    }

    fn git(mut self) -> Self {
        self.git = true;
        self
    }
}

/// The package a case runs in, a folder elsewhere with a file that a link points to, and the
/// special files the placeholders name.
struct Fixture {
    package: Package,
    elsewhere: tempfile::TempDir,
}

/// Places a case may name: `{root}` (the package's folder), `{fifo}`, `{dangling}` (a link to
/// nothing), `{elsewhere}` (a link to a file in another folder), `{record}` (a valid record),
/// `{text}` (a file of plain text), `{missing}` (a path in a folder that does not exist).
impl Fixture {
    fn new(git: bool) -> Self {
        let package = if git { Package::git() } else { Package::plain() };
        let elsewhere = tempfile::Builder::new()
            .prefix("convbench-elsewhere-")
            .tempdir()
            .expect("temp dir");
        std::fs::write(elsewhere.path().join("victim.json"), "precious\n").expect("write victim");
        let status = std::process::Command::new("mkfifo")
            .arg(package.path("fifo"))
            .status()
            .expect("run mkfifo");
        assert!(status.success(), "mkfifo");
        std::os::unix::fs::symlink(package.path("nothing-here"), package.path("dangling"))
            .expect("dangling link");
        std::os::unix::fs::symlink(elsewhere.path().join("victim.json"), package.path("elsewhere"))
            .expect("link elsewhere");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/record-v1.json"),
            package.path("record.json"),
        )
        .expect("copy record");
        std::fs::write(package.path("notes.txt"), "not a record\n").expect("write text");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/my-kernels/kernels/conv_plain.wgsl"),
            package.path("k.wgsl"),
        )
        .expect("copy a kernel");
        Self { package, elsewhere }
    }

    fn expand(&self, arg: &str) -> String {
        let at = |name: &str| self.package.path(name).display().to_string();
        arg.replace("{root}", &self.package.root().display().to_string())
            .replace("{fifo}", &at("fifo"))
            .replace("{dangling}", &at("dangling"))
            .replace("{elsewhere}", &at("elsewhere"))
            .replace("{record}", &at("record.json"))
            .replace("{text}", &at("notes.txt"))
            .replace("{missing}", &at("no-such-folder/file"))
    }

    /// Every entry under the package's folder and the folder elsewhere: its kind, size, mode
    /// and modification time (`.git` excluded: git commands read it).
    fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut entries = BTreeMap::new();
        for root in [self.package.root(), self.elsewhere.path()] {
            walk(root, &mut entries);
        }
        entries
    }
}

fn walk(dir: &Path, entries: &mut BTreeMap<PathBuf, String>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|name| name == ".git") {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        entries.insert(
            path.clone(),
            format!(
                "{:?} {} {:o} {}.{}",
                (kind.is_dir(), kind.is_file(), kind.is_symlink(), kind.is_fifo()),
                if kind.is_dir() { 0 } else { meta.len() },
                meta.mode(),
                meta.mtime(),
                meta.mtime_nsec()
            ),
        );
        if kind.is_dir() {
            walk(&path, entries);
        }
    }
}

/// Whether `path` is still a character device.
fn is_char_device(path: &str) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_char_device())
}

/// Runs one case; `Err` says what went wrong.
fn check(case: &Case) -> Result<Duration, String> {
    let fixture = Fixture::new(case.git);
    if let Some(config) = &case.config {
        std::fs::write(fixture.package.path("convbench.toml"), fixture.expand(config))
            .expect("write convbench.toml");
    }
    for (name, contents) in &case.files {
        std::fs::write(fixture.package.path(name), contents).expect("write a case's file");
    }
    let args: Vec<String> = case.args.iter().map(|arg| fixture.expand(arg)).collect();
    let before = fixture.snapshot();
    let started = Instant::now();
    let output = convbench()
        .current_dir(fixture.package.root())
        .args(&args)
        .timeout(CASE_TIMEOUT)
        .output()
        .expect("the binary starts");
    let elapsed = started.elapsed();
    let shown = || {
        format!(
            "`{}`\n--- stdout\n{}\n--- stderr\n{}",
            args.join(" "),
            stdout_of(&output),
            stderr_of(&output)
        )
    };
    if elapsed >= CASE_TIMEOUT {
        return Err(format!("hung past {CASE_TIMEOUT:?}: {}", shown()));
    }
    if output.status.code() != Some(case.expected) {
        return Err(format!(
            "exit {:?} (signal {:?}), expected {}: {}",
            output.status.code(),
            std::os::unix::process::ExitStatusExt::signal(&output.status),
            case.expected,
            shown()
        ));
    }
    if case.expected == 2 && !stderr_of(&output).contains("error") {
        return Err(format!("exit 2 without an error on stderr: {}", shown()));
    }
    for needle in case.says.iter().filter(|_| case.expected != 0) {
        let needle = fixture.expand(needle);
        if !stderr_of(&output).contains(&needle) {
            return Err(format!("`{needle}` missing from stderr: {}", shown()));
        }
    }
    if stderr_of(&output).contains("panicked") {
        return Err(format!("a panic: {}", shown()));
    }
    let after = fixture.snapshot();
    if before != after {
        let changed: Vec<String> = before
            .keys()
            .chain(after.keys())
            .filter(|path| before.get(*path) != after.get(*path))
            .map(|path| {
                format!(
                    "{}: {:?} -> {:?}",
                    path.display(),
                    before.get(path),
                    after.get(path)
                )
            })
            .collect();
        return Err(format!("files changed: {}: {}", changed.join("; "), shown()));
    }
    let victim = std::fs::read_to_string(fixture.elsewhere.path().join("victim.json"));
    if victim.as_deref().ok() != Some("precious\n") {
        return Err(format!("the file a link points to changed: {}", shown()));
    }
    for device in ["/dev/null", "/dev/full"] {
        if !is_char_device(device) {
            return Err(format!("{device} is no longer a character device: {}", shown()));
        }
    }
    Ok(elapsed)
}

/// `run` on the cpu backend with the tiny workload, `flag` set to `value`.
fn run_with(flag: &str, value: &str) -> Vec<String> {
    let mut args: Vec<String> = ["run", "--backend", "cpu", "--quiet"]
        .iter()
        .map(|arg| arg.to_string())
        .collect();
    args.extend(crate::support::tiny(&[(flag, value)]));
    args
}

/// A `[[model]]` with one layer of `kind` (TOML inline table) before a classifier, the input
/// `input`.
fn model_config(input: &str, kind: &str) -> String {
    format!(
        "[[model]]\nname = \"tiny\"\ninput = {input}\nlayers = [\n  {{ name = \"layer1\", kind = {kind} }},\n  \
         {{ name = \"pool\", kind = {{ op = \"global_avg_pool\" }} }},\n  \
         {{ name = \"fc\", kind = {{ op = \"linear\", in_features = 4, out_features = 10, bias = true }} }},\n]\n"
    )
}

/// A conv2d layer of 1 to 4 channels, each named field replaced.
fn conv(overrides: &[(&str, &str)]) -> String {
    let mut fields = [
        ("in_channels", "1"),
        ("out_channels", "4"),
        ("kernel", "[3, 3]"),
        ("stride", "[1, 1]"),
        ("padding", "[0, 0]"),
        ("dilation", "[1, 1]"),
        ("groups", "1"),
        ("bias", "true"),
    ];
    for (name, value) in overrides {
        if let Some(field) = fields.iter_mut().find(|(n, _)| n == name) {
            field.1 = value;
        }
    }
    let body: Vec<String> = fields.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    format!("{{ op = \"conv2d\", {} }}", body.join(", "))
}

/// A pool layer (max or avg) of window 2, each named field replaced.
fn pool(kind: &str, overrides: &[(&str, &str)]) -> String {
    let mut fields = [("kernel", "[2, 2]"), ("stride", "[2, 2]"), ("padding", "[0, 0]")];
    for (name, value) in overrides {
        if let Some(field) = fields.iter_mut().find(|(n, _)| n == name) {
            field.1 = value;
        }
    }
    let body: Vec<String> = fields.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    format!("{{ op = \"pool\", kind = \"{kind}\", {} }}", body.join(", "))
}

/// A comparison of two records: it loads the configuration and measures nothing.
const COMPARE_RECORDS: &[&str] = &[
    "compare",
    "--quiet",
    "--results",
    "{record}",
    "--baseline-file",
    "{record}",
];

/// lenet on the cpu backend at the configuration's batches and precisions, the least work.
const RUN_LENET: &[&str] = &[
    "run",
    "--backend",
    "cpu",
    "--quiet",
    "--model",
    "lenet",
    "--samples",
    "1",
    "--rounds",
    "1",
    "--warmup",
    "0",
    "--warmup-ms",
    "0",
];

/// The command that loads a `[[model]]` and fails before measuring.
const RUN_TINY_MODEL: &[&str] = &[
    "run",
    "--backend",
    "cpu",
    "--quiet",
    "--model",
    "tiny",
    "--samples",
    "1",
    "--rounds",
    "1",
    "--warmup",
    "0",
    "--warmup-ms",
    "0",
];

/// A user kernel `k` for conv2d forward with `only` set to `only`, its source a valid kernel
/// named `source`.
fn kernel_config(source: &str, only: &str) -> String {
    format!("[kernels.k]\nop = \"conv2d_forward\"\nsource = \"{source}\"\nonly = {only}\n")
}

fn numeric_flag_cases(cases: &mut Vec<Case>) {
    // run: every count; zero warm-up is valid and runs.
    for (flag, zero_ok) in [
        ("--batch", false),
        ("--samples", false),
        ("--rounds", false),
        ("--warmup", true),
        ("--warmup-ms", true),
    ] {
        for value in ["0", "-1", MAX_U64] {
            let expected = if value == "0" && zero_ok { 0 } else { 2 };
            let args = run_with(flag, value);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            cases.push(Case::new(format!("run {flag} {value}"), expected, &args).says(flag));
        }
    }
    cases.push(Case::new(
        "run --batch 4294967296",
        2,
        &run_with("--batch", "4294967296")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    ));
    cases.push(Case::new(
        "run --samples 4294967296",
        2,
        &run_with("--samples", "4294967296")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    ));
    // tune and verify: the same counts, refused before any device opens.
    for (command, flag) in [
        ("tune", "--batch"),
        ("tune", "--samples"),
        ("tune", "--warmup"),
        ("verify", "--batch"),
        ("verify", "--repeat"),
        ("verify", "--random-shapes"),
        ("verify", "--seeds"),
    ] {
        for value in ["0", "-1", MAX_U64] {
            // Valid and slow: they would run.
            if value == "0" && (flag == "--warmup" || flag == "--random-shapes") {
                continue;
            }
            let mut args = vec![command, "--model", "lenet", flag, value];
            if command == "verify" {
                args.extend(["--backend", "cpu"]);
            }
            cases.push(Case::new(format!("{command} {flag} {value}"), 2, &args).says(flag));
        }
    }
    cases.push(Case::new(
        "verify --seed -1",
        2,
        &["verify", "--backend", "cpu", "--seed", "-1"],
    ));
    // ab and bisect: counts, durations and the threshold.
    for flag in ["--batch", "--pairs", "--samples", "--warmup", "--warmup-ms"] {
        for value in ["0", "-1", MAX_U64] {
            if value == "0" && (flag == "--warmup" || flag == "--warmup-ms") {
                continue;
            }
            cases.push(
                Case::new(
                    format!("ab {flag} {value}"),
                    2,
                    &["ab", "--base", "HEAD", "--model", "lenet", flag, value],
                )
                .git()
                .says(flag),
            );
        }
    }
    for flag in ["--pairs", "--batch"] {
        for value in ["0", "-1", MAX_U64] {
            cases.push(
                Case::new(
                    format!("bisect {flag} {value}"),
                    2,
                    &[
                        "bisect", "--good", "HEAD", "--bad", "HEAD", "--model", "lenet", flag, value,
                    ],
                )
                .git()
                .says(flag),
            );
        }
    }
    for value in ["0s", "-1s", "0", "18446744073709551615s", "1000000h"] {
        cases.push(
            Case::new(
                format!("ab --budget {value}"),
                2,
                &[
                    "ab",
                    "--base",
                    "HEAD",
                    "--model",
                    "lenet",
                    &format!("--budget={value}"),
                ],
            )
            .git()
            .says("--budget"),
        );
        cases.push(
            Case::new(
                format!("ci --budget {value}"),
                2,
                &[
                    "ci",
                    "--ab",
                    "--model",
                    "lenet",
                    &format!("--budget={value}"),
                    "--no-comment",
                ],
            )
            .git()
            .says("--budget"),
        );
    }
    for value in ["-1", "NaN", "inf"] {
        cases.push(
            Case::new(
                format!("ab --threshold {value}"),
                2,
                &[
                    "ab",
                    "--base",
                    "HEAD",
                    "--model",
                    "lenet",
                    &format!("--threshold={value}"),
                ],
            )
            .git()
            .says("threshold"),
        );
    }
    // compare: thresholds on two records, nothing measured.
    for (flag, value, expected) in [
        ("--threshold", "0", 0),
        ("--threshold", "-1", 2),
        ("--threshold", MAX_F64, 2),
        ("--threshold", "5", 2),
        ("--threshold", "5%", 0),
        ("--threshold", "five", 2),
        ("--threshold", "NaN", 2),
        ("--threshold", "inf", 2),
        ("--fail-threshold", "0", 0),
        ("--fail-threshold", "-1", 2),
        ("--fail-threshold", "NaN", 2),
        ("--fail-threshold", "10", 2),
        ("--fail-threshold", "10%", 0),
    ] {
        cases.push(
            Case::new(
                format!("compare {flag} {value}"),
                expected,
                &[
                    "compare",
                    "--quiet",
                    "--results",
                    "{record}",
                    "--baseline-file",
                    "{record}",
                    &format!("{flag}={value}"),
                ],
            )
            .says("threshold"),
        );
    }
    // history: its statistics.
    for (flag, value) in [
        ("--alpha", "0"),
        ("--alpha", "-1"),
        ("--alpha", "1"),
        ("--alpha", MAX_F64),
        ("--alpha", "NaN"),
        ("--min-step", "-1"),
        ("--min-step", "NaN"),
        ("--min-step", "inf"),
    ] {
        cases.push(
            Case::new(
                format!("history {flag} {value}"),
                2,
                &["history", &format!("{flag}={value}")],
            )
            .git()
            .says(&flag[2..]),
        );
    }
    for value in ["0", "-1", MAX_U64] {
        cases.push(
            Case::new(
                format!("comment --pr {value}"),
                if value == MAX_U64 { 0 } else { 2 },
                &[
                    "comment",
                    "--pr",
                    value,
                    "--results",
                    "{record}",
                    "--baseline-file",
                    "{record}",
                    "--dry-run",
                ],
            )
            .git(),
        );
    }
}

fn configuration_cases(cases: &mut Vec<Case>) {
    for (field, value) in [
        ("batches", "[0]"),
        ("batches", "[-1]"),
        ("batches", &format!("[{MAX_TOML_INTEGER}]")),
        ("baseline-runs", "0"),
        ("baseline-runs", "-1"),
        ("baseline-runs", MAX_TOML_INTEGER),
        ("baseline-dir", "\"\""),
        ("models", "[\"\"]"),
        ("precisions", "[\"f8\"]"),
    ] {
        let valid = field == "baseline-runs" && value == MAX_TOML_INTEGER;
        // `run` reads the batches, models and precisions of the configuration; every command
        // checks the whole configuration when it loads it.
        let command: &[&str] = match field {
            _ if valid => COMPARE_RECORDS,
            "models" => &RUN_TINY_MODEL[..4],
            _ => RUN_LENET,
        };
        cases.push(
            Case::new(
                format!("convbench.toml {field} = {value}"),
                if valid { 0 } else { 2 },
                command,
            )
            .config(format!("{field} = {value}\n"))
            .says(if value.contains("-1") {
                "TOML parse error"
            } else {
                field
            }),
        );
    }
    for (field, value, expected) in [
        ("threshold", "0", 0),
        ("threshold", "-1", 2),
        ("threshold", "nan", 2),
        ("threshold", "inf", 2),
        ("threshold", MAX_F64, 2),
        ("threshold", "5", 2),
        ("alpha", "0", 2),
        ("alpha", "-1", 2),
        ("alpha", "1", 2),
        ("alpha", MAX_F64, 2),
        ("min-samples", "0", 2),
        ("min-samples", "-1", 2),
        ("min-samples", MAX_TOML_INTEGER, 0),
        ("fail-threshold", "-1", 2),
        ("fail-threshold", "nan", 2),
        ("thresholds", "{ \"*\" = -1.0 }", 2),
        ("thresholds", "{ \"[\" = 0.1 }", 2),
    ] {
        cases.push(
            Case::new(
                format!("convbench.toml compare.{field} = {value}"),
                expected,
                &[
                    "compare",
                    "--quiet",
                    "--results",
                    "{record}",
                    "--baseline-file",
                    "{record}",
                ],
            )
            .config(format!("[compare]\n{field} = {value}\n"))
            .says(match field {
                "min-samples" if value == "-1" => "TOML parse error",
                "fail-threshold" => "fail threshold",
                "thresholds" if value.contains('[') => "pattern",
                "thresholds" => "threshold",
                other => other,
            }),
        );
    }
    for value in ["\"0s\"", "\"-1s\"", "\"18446744073709551615s\"", "\"soon\""] {
        cases.push(
            Case::new(format!("convbench.toml ci.budget = {value}"), 2, COMPARE_RECORDS)
                .config(format!("[ci]\nbudget = {value}\n"))
                .says("budget"),
        );
    }
    // [[model]]: every count and size of every layer kind, and the input.
    let max = MAX_TOML_INTEGER;
    let mut layer_cases: Vec<(String, String, String)> = Vec::new();
    for field in ["in_channels", "out_channels", "groups"] {
        for value in ["0", "-1", max] {
            layer_cases.push((
                format!("conv {field} = {value}"),
                "[1, 8, 8]".into(),
                conv(&[(field, value)]),
            ));
        }
    }
    for field in ["kernel", "stride", "padding", "dilation"] {
        for value in ["[0, 0]", "[-1, 1]", &format!("[{max}, 1]")] {
            if field == "padding" && value == "[0, 0]" {
                continue;
            }
            layer_cases.push((
                format!("conv {field} = {value}"),
                "[1, 8, 8]".into(),
                conv(&[(field, value)]),
            ));
        }
    }
    for kind in ["max", "avg"] {
        for field in ["kernel", "stride", "padding"] {
            for value in ["[0, 0]", "[-1, 1]", &format!("[{max}, 1]")] {
                if field == "padding" && value == "[0, 0]" {
                    continue;
                }
                layer_cases.push((
                    format!("{kind} pool {field} = {value}"),
                    "[4, 8, 8]".into(),
                    pool(kind, &[(field, value)]),
                ));
            }
        }
    }
    for value in ["0", "-1", max] {
        layer_cases.push((
            format!("linear in_features = {value}"),
            "[1, 2, 2]".into(),
            format!("{{ op = \"linear\", in_features = {value}, out_features = 4, bias = true }}"),
        ));
        layer_cases.push((
            format!("batch_norm channels = {value}"),
            "[4, 2, 2]".into(),
            format!("{{ op = \"batch_norm\", channels = {value}, eps = 1e-5, momentum = 0.1 }}"),
        ));
        layer_cases.push((
            format!("lrn size = {value}"),
            "[4, 2, 2]".into(),
            format!("{{ op = \"lrn\", size = {value}, alpha = 1e-4, beta = 0.75, k = 1.0 }}"),
        ));
    }
    for (what, input) in [
        ("input channels 0", "[0, 8, 8]"),
        ("input height 0", "[1, 0, 8]"),
        ("input -1", "[1, -1, 8]"),
        ("input max", &format!("[1, {max}, {max}]")),
        ("input of 2^32 pixels", "[1, 65536, 65536]"),
    ] {
        layer_cases.push((what.to_string(), input.to_string(), conv(&[])));
    }
    for (what, input, layer) in layer_cases {
        let layer_named = if what.contains("-1") {
            "TOML parse error"
        } else if what.starts_with("input") {
            "model `tiny`"
        } else {
            "layer1"
        };
        cases.push(
            Case::new(format!("[[model]] {what}"), 2, RUN_TINY_MODEL)
                .config(model_config(&input, &layer))
                .says(layer_named),
        );
    }
    // User kernels: `only` filters, sizes and the source.
    for key in ["kernel", "stride", "dilation"] {
        for value in ["[0, 0]", "[-1, 1]", &format!("[{max}, {max}]")] {
            cases.push(
                Case::new(format!("kernel only.{key} = {value}"), 2, &["kernels", "--quiet"])
                    .config(kernel_config("k.wgsl", &format!("{{ {key} = {value} }}")))
                    .says(if value.contains("-1") {
                        "TOML parse error"
                    } else {
                        "kernel `k`"
                    }),
            );
        }
    }
    for value in ["0", "-1", max] {
        cases.push(
            Case::new(
                format!("kernel only.groups = {value}"),
                2,
                &["kernels", "--quiet"],
            )
            .config(kernel_config("k.wgsl", &format!("{{ groups = {value} }}")))
            .says(if value == "-1" {
                "TOML parse error"
            } else {
                "kernel `k`"
            }),
        );
    }
    cases.push(
        Case::new("kernel only.padding = [max, max]", 2, &["kernels", "--quiet"])
            .config(kernel_config(
                "k.wgsl",
                &format!("{{ padding = [{max}, {max}] }}"),
            ))
            .says("kernel `k`"),
    );
    for (field, value) in [
        ("workgroup-size", "0"),
        ("workgroup-size", "-1"),
        ("workgroup-size", "4294967296"),
        ("outputs-per-invocation", "0"),
        ("outputs-per-workgroup", "0"),
    ] {
        cases.push(
            Case::new(format!("kernel {field} = {value}"), 2, &["kernels", "--quiet"])
                .config(format!(
                    "[kernels.k]\nop = \"conv2d_forward\"\nsource = \"k.wgsl\"\n{field} = {value}\n"
                ))
                .says(match value {
                    "-1" => "TOML parse error",
                    _ if field.starts_with("outputs") => "outputs per",
                    _ => field,
                }),
        );
    }
    // Shape lists: every column of a row at 0, -1 and a value past any tensor.
    let columns = ["N", "C", "H", "W", "K", "R", "S", "stride", "pad"];
    let row = ["1", "3", "12", "12", "4", "3", "3", "1", "1"];
    for (column, name) in columns.iter().enumerate() {
        for value in ["0", "-1", MAX_U64, "4294967296"] {
            if *name == "pad" && value == "0" {
                continue;
            }
            let mut fields = row;
            fields[column] = value;
            let mut args: Vec<&str> = RUN_LENET.to_vec();
            args.retain(|arg| *arg != "--model" && *arg != "lenet");
            args.extend(["--shapes", "{root}/rows.csv"]);
            cases.push(
                Case::new(format!("--shapes row {name} = {value}"), 2, &args)
                    .file("rows.csv", format!("{}\n", fields.join(",")))
                    .says("rows.csv:1"),
            );
        }
    }
    for (what, source) in [
        ("a folder", "{root}"),
        ("/dev/null", "/dev/null"),
        ("/dev/zero", "/dev/zero"),
        ("a FIFO", "{fifo}"),
        ("a dangling link", "{dangling}"),
        ("missing", "{missing}"),
    ] {
        cases.push(
            Case::new(format!("kernel source {what}"), 2, &["kernels", "--quiet"])
                .config(kernel_config(source, "{}"))
                .says("kernel `k`"),
        );
    }
}

/// The kinds of place every path argument is tried as, with `{root}` a folder.
const OUTPUT_PLACES: [(&str, &str); 8] = [
    ("a folder", "{root}"),
    ("/dev/null", "/dev/null"),
    ("/dev/full", "/dev/full"),
    ("a dangling link", "{dangling}"),
    ("a link elsewhere", "{elsewhere}"),
    ("a FIFO", "{fifo}"),
    ("in a missing folder", "{missing}"),
    ("an unwritable place", "/proc/convbench-corpus.json"),
];

/// Files a command reads, tried as these.
const INPUT_PLACES: [(&str, &str); 8] = [
    ("a folder", "{root}"),
    ("/dev/null", "/dev/null"),
    ("/dev/full", "/dev/full"),
    ("/dev/zero", "/dev/zero"),
    ("a dangling link", "{dangling}"),
    ("a FIFO", "{fifo}"),
    ("missing", "{missing}"),
    ("plain text", "{text}"),
];

fn path_cases(cases: &mut Vec<Case>) {
    for (what, place) in OUTPUT_PLACES {
        let mut run = run_with("--warmup-ms", "60000");
        run.extend(["--out".to_string(), place.to_string()]);
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        cases.push(
            Case::new(format!("run --out {what}"), 2, &run)
                .says("--out")
                .says(place),
        );
        // A fresh run (`--out` beside `--results` is refused by clap), a minute of warm-up that
        // the check of --out before the sweep never reaches.
        let mut compare = run_with("--warmup-ms", "60000");
        compare[0] = "compare".to_string();
        compare.extend(["--baseline-file", "{record}", "--out", place].map(String::from));
        let compare: Vec<&str> = compare.iter().map(String::as_str).collect();
        cases.push(Case::new(format!("compare --out {what}"), 2, &compare).says(place));
        cases.push(Case::new(format!("plot -o {what}"), 2, &["plot", "{record}", "-o", place]).says(place));
        cases.push(
            Case::new(
                format!("ab --out {what}"),
                2,
                &["ab", "--base", "HEAD", "--model", "lenet", "--out", place],
            )
            .git()
            .says(place),
        );
    }
    for (what, place) in [
        ("/dev/null", "/dev/null"),
        ("a FIFO", "{fifo}"),
        ("a file", "{text}"),
        ("a dangling link", "{dangling}"),
        ("an unwritable place", "/proc/convbench-corpus"),
    ] {
        cases.push(Case::new(format!("kernels --emit {what}"), 2, &["kernels", "--emit", place]).says(place));
        cases.push(
            Case::new(format!("history --html {what}"), 2, &["history", "--html", place])
                .git()
                .says(place),
        );
    }
    for (what, place) in INPUT_PLACES {
        cases.push(Case::new(format!("report {what}"), 2, &["report", place]).says(place));
        cases.push(
            Case::new(
                format!("plot {what}"),
                2,
                &["plot", place, "-o", "{root}/chart.svg"],
            )
            .says(place),
        );
        cases.push(
            Case::new(
                format!("compare --results {what}"),
                2,
                &[
                    "compare",
                    "--quiet",
                    "--results",
                    place,
                    "--baseline-file",
                    "{record}",
                ],
            )
            .says(place),
        );
        cases.push(
            Case::new(
                format!("compare --baseline-file {what}"),
                2,
                &[
                    "compare",
                    "--quiet",
                    "--results",
                    "{record}",
                    "--baseline-file",
                    place,
                ],
            )
            .says(place),
        );
        cases.push(
            Case::new(
                format!("baseline update --from {what}"),
                2,
                &["baseline", "update", "--from", place, "--dry-run"],
            )
            .git()
            .says(place),
        );
        let mut shapes = run_with("--shapes", place);
        shapes.retain(|arg| arg != "--model" && arg != "lenet");
        let shapes: Vec<&str> = shapes.iter().map(String::as_str).collect();
        cases.push(Case::new(format!("run --shapes {what}"), 2, &shapes).says(place));
        cases.push(
            Case::new(
                format!("--manifest-path {what}"),
                2,
                &["kernels", "--manifest-path", place],
            )
            .says(place),
        );
    }
    for (what, place) in [
        ("a file", "{text}"),
        ("/dev/null", "/dev/null"),
        ("a FIFO", "{fifo}"),
    ] {
        let shaders = run_with("--shaders", place);
        let shaders: Vec<&str> = shaders.iter().map(String::as_str).collect();
        cases.push(Case::new(format!("run --shaders {what}"), 2, &shaders).says(place));
    }
}

/// Every case of the corpus.
fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    numeric_flag_cases(&mut cases);
    configuration_cases(&mut cases);
    path_cases(&mut cases);
    cases
}

#[test]
fn corpus_of_bad_input_exits_as_documented_without_harm() {
    let cases = corpus();
    assert!(cases.len() >= 100, "the corpus has {} cases", cases.len());
    let filter = std::env::var("CONVBENCH_CORPUS_FILTER").unwrap_or_default();
    let cases: Vec<&Case> = cases.iter().filter(|case| case.name.contains(&filter)).collect();
    let started = Instant::now();
    // Four cases at a time: most of a case is process start-up and `cargo metadata`.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<Vec<&Case>> = (0..4)
            .map(|lane| cases.iter().skip(lane).step_by(4).copied().collect())
            .collect();
        let lanes: Vec<_> = chunks
            .into_iter()
            .map(|lane| {
                scope.spawn(move || {
                    lane.into_iter()
                        .filter_map(|case| check(case).err().map(|why| format!("[{}] {why}", case.name)))
                        .collect::<Vec<String>>()
                })
            })
            .collect();
        lanes
            .into_iter()
            .flat_map(|lane| lane.join().expect("a lane"))
            .collect()
    });
    eprintln!(
        "corpus: {} cases in {:.1} s, {} failed",
        cases.len(),
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
