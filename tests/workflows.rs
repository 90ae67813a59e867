//! The workflow files under `.github/workflows/` and the composite action `action.yml`, read as
//! YAML (and as text, for line numbers): least-privilege tokens, actions pinned by commit, no
//! credentials left in a checkout, no expression pasted into a script, the write token of
//! baseline.yml only where it pushes, Pages deployed by one job only when configured, a runner for pull requests' code that is never the one
//! that pushes, and a comment job that never runs that code and checks what it reads from it.
//!
//! comment.yml's step that posts the comment is also run as written (bash, with a `cargo` that
//! records its arguments) against hostile pull-request labels.
//!
//! Nothing here needs a GPU or the network. zizmor, run by `.ci/run`, audits the same files.

use serde_norway::Value;
use std::path::Path;

/// The subcommands of `cargo convbench` (DESIGN.md); a workflow calling another one is broken.
const SUBCOMMANDS: [&str; 10] = [
    "adapters", "list", "run", "report", "plot", "compare", "baseline", "history", "ci", "comment",
];

const BENCHMARK: &str = ".github/workflows/convbench.yml";
const COMMENT: &str = ".github/workflows/comment.yml";
const BASELINE: &str = ".github/workflows/baseline.yml";
const ACTION: &str = "action.yml";
const LABELS: &str = ".github/workflows/convbench-labels.yml";
const RELEASE: &str = ".github/workflows/release.yml";
const INSTALL: &str = ".github/scripts/install-convbench.sh";

/// A workflow or action file: its path from the repository root, its text and its YAML.
struct File {
    path: String,
    text: String,
    yaml: Value,
}

impl File {
    fn load(relative: &str) -> File {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let yaml = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{relative} is not YAML: {e}"));
        File {
            path: relative.to_string(),
            text,
            yaml,
        }
    }

    /// `path:line` of the first line containing `needle` (line 0 when none does).
    fn at(&self, needle: &str) -> String {
        let line = self
            .text
            .lines()
            .position(|line| line.contains(needle))
            .map_or(0, |index| index + 1);
        format!("{}:{line}", self.path)
    }

    /// `path:line` of a step, found by its name, else its `uses:`, else its script's first line.
    fn at_step(&self, step: &Value) -> String {
        if let Some(name) = step.get("name").and_then(Value::as_str) {
            return self.at(&format!("name: {name}"));
        }
        if !uses(step).is_empty() {
            return self.at(&format!("uses: {}", uses(step)));
        }
        let first = script(step).lines().next().unwrap_or_default();
        self.at(first)
    }

    /// The jobs of a workflow, by id.
    fn jobs(&self) -> Vec<(String, &Value)> {
        self.yaml
            .get("jobs")
            .and_then(Value::as_mapping)
            .unwrap_or_else(|| panic!("{}: no jobs", self.path))
            .iter()
            .map(|(name, job)| (name.as_str().unwrap_or("?").to_string(), job))
            .collect()
    }

    /// Every step of the file with its job's id (the composite action's steps under "action").
    fn steps(&self) -> Vec<(String, &Value)> {
        if let Some(steps) = self.yaml.get("runs").and_then(|runs| runs.get("steps")) {
            return sequence(steps)
                .into_iter()
                .map(|s| ("action".to_string(), s))
                .collect();
        }
        self.jobs()
            .into_iter()
            .flat_map(|(name, job)| steps(job).into_iter().map(move |s| (name.clone(), s)))
            .collect()
    }

    /// `on:` of a workflow (a YAML 1.1 reader would turn the key into `true`).
    fn triggers(&self) -> &Value {
        self.yaml
            .get("on")
            .or_else(|| self.yaml.get(Value::Bool(true)))
            .unwrap_or_else(|| panic!("{}: no `on:`", self.path))
    }
}

fn workflows() -> Vec<File> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("workflow directory")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|name| name.ends_with(".yml") || name.ends_with(".yaml"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|name| File::load(&format!(".github/workflows/{name}")))
        .collect()
}

/// The workflows and the composite action.
fn all_files() -> Vec<File> {
    let mut files = workflows();
    files.push(File::load(ACTION));
    files
}

fn sequence(value: &Value) -> Vec<&Value> {
    value
        .as_sequence()
        .map(|items| items.iter().collect())
        .unwrap_or_default()
}

fn steps(job: &Value) -> Vec<&Value> {
    job.get("steps").map(sequence).unwrap_or_default()
}

fn uses(step: &Value) -> &str {
    step.get("uses").and_then(Value::as_str).unwrap_or_default()
}

fn script(step: &Value) -> &str {
    step.get("run").and_then(Value::as_str).unwrap_or_default()
}

fn strings(value: &Value) -> Vec<&str> {
    sequence(value).into_iter().filter_map(Value::as_str).collect()
}

/// A value written back as YAML, to search all of a step or a job at once.
fn yaml_text(value: &Value) -> String {
    serde_norway::to_string(value).expect("serialises")
}

/// Each label set a job may run on: `runs-on` itself, or each entry of the matrix it names.
fn runner_label_sets(file: &File, job: &Value) -> Vec<Vec<String>> {
    let runs_on = &job["runs-on"];
    let labels = |value: &Value| -> Vec<String> {
        match value.as_str() {
            Some(label) => vec![label.to_string()],
            None => strings(value).into_iter().map(str::to_string).collect(),
        }
    };
    match runs_on.as_str() {
        Some(expression) if expression.starts_with("${{") => {
            let key = expression
                .trim_start_matches("${{")
                .trim_end_matches("}}")
                .trim()
                .strip_prefix("matrix.")
                .unwrap_or_else(|| panic!("{}: runs-on `{expression}` is not a matrix key", file.path));
            let entries = sequence(&job["strategy"]["matrix"][key]);
            assert!(
                !entries.is_empty(),
                "{}: matrix.{key} is empty",
                file.at("runs-on")
            );
            entries.into_iter().map(labels).collect()
        }
        _ => vec![labels(runs_on)],
    }
}

// ---------------------------------------------------------------------------------------------
// Every file
// ---------------------------------------------------------------------------------------------

#[test]
fn every_action_is_pinned_to_a_full_commit_sha() {
    // A tag or a branch can be moved to other code by whoever controls the action's repository;
    // a commit cannot. The comment says which release the commit is.
    let mut pinned = 0;
    for file in all_files() {
        for (index, line) in file.text.lines().enumerate() {
            let code = line.trim_start().trim_start_matches("- ");
            let Some(reference) = code.strip_prefix("uses:") else {
                continue;
            };
            let place = format!("{}:{}", file.path, index + 1);
            let (reference, comment) = reference.split_once('#').unwrap_or((reference, ""));
            let reference = reference.trim().trim_matches(['"', '\'']);
            if reference.starts_with("./") {
                continue;
            }
            let (_, revision) = reference
                .split_once('@')
                .unwrap_or_else(|| panic!("{place}: `{reference}` names no revision"));
            assert!(
                revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit()),
                "{place}: `{reference}` is not pinned to a full commit SHA"
            );
            assert!(
                !comment.trim().is_empty(),
                "{place}: `{reference}` needs a `# vX.Y.Z` comment saying which release it is"
            );
            pinned += 1;
        }
    }
    assert!(pinned >= 10, "expected the workflows' actions, found {pinned}");
}

#[test]
fn every_checkout_keeps_no_credentials() {
    // A token left in .git/config is readable by every later step, and by what a pull
    // request's build leaves behind on a self-hosted runner.
    let mut checkouts = 0;
    for file in all_files() {
        for (job, step) in file.steps() {
            if !uses(step).starts_with("actions/checkout@") {
                continue;
            }
            assert_eq!(
                step["with"]["persist-credentials"].as_bool(),
                Some(false),
                "{} (job {job}): actions/checkout needs `persist-credentials: false`",
                file.at_step(step)
            );
            checkouts += 1;
        }
    }
    assert!(
        checkouts >= 4,
        "expected a checkout per workflow, found {checkouts}"
    );
}

#[test]
fn run_scripts_interpolate_no_expressions() {
    // `${{ }}` in a script is pasted into the shell before it runs: values (inputs, event
    // fields, tokens, even step outputs) must come in through `env:`.
    for file in all_files() {
        for (job, step) in file.steps() {
            if let Some(line) = script(step).lines().find(|line| line.contains("${{")) {
                panic!(
                    "{} (job {job}): `{}` interpolates an expression into a script; pass it through env:",
                    file.at(line),
                    line.trim()
                );
            }
        }
    }
}

#[test]
fn every_workflow_job_declares_permissions() {
    let files = workflows();
    for expected in [BENCHMARK, COMMENT, BASELINE] {
        assert!(files.iter().any(|f| f.path == expected), "missing {expected}");
    }
    for file in files {
        for (name, job) in file.jobs() {
            assert!(
                job.get("permissions").is_some(),
                "{}: job `{name}` declares no permissions",
                file.at(&format!("{name}:"))
            );
        }
    }
}

#[test]
fn workflows_call_only_existing_subcommands() {
    let mut calls = 0;
    for file in all_files() {
        for (job, step) in file.steps() {
            let words: Vec<&str> = script(step).split_whitespace().collect();
            for (index, pair) in words.windows(2).enumerate() {
                let installed = pair[0] == "\"$CONVBENCH_BIN\"" && pair[1] == "convbench";
                if pair != ["cargo", "convbench"] && !installed {
                    continue;
                }
                let mut rest = words[index + 2..].iter();
                let subcommand = loop {
                    match rest.next() {
                        Some(&"--manifest-path") => {
                            rest.next();
                        }
                        Some(word) if word.starts_with('-') => {}
                        other => break other.copied().unwrap_or_default(),
                    }
                };
                assert!(
                    SUBCOMMANDS.contains(&subcommand),
                    "{} (job {job}): unknown subcommand `{subcommand}`",
                    file.at_step(step)
                );
                calls += 1;
            }
        }
    }
    assert!(
        calls >= 4,
        "expected ci, comment, baseline and the action's ci calls, found {calls}"
    );
}

// ---------------------------------------------------------------------------------------------
// Runners: pull requests' code never runs where the write token does
// ---------------------------------------------------------------------------------------------

#[test]
fn pull_request_jobs_and_the_baseline_push_never_share_a_runner() {
    // A runner is given a job when it carries every label the job asks for. So each side must
    // ask for a label the other side's runners lack, or a baseline runner could take a pull
    // request's job (and what it leaves behind), or a PR runner the job with the write token.
    let benchmark = File::load(BENCHMARK);
    let baseline = File::load(BASELINE);
    for (pr_job_name, pr_job) in benchmark.jobs() {
        for pr_labels in runner_label_sets(&benchmark, pr_job) {
            for (push_job_name, push_job) in baseline.jobs() {
                for push_labels in runner_label_sets(&baseline, push_job) {
                    let only_pr = pr_labels.iter().any(|label| !push_labels.contains(label));
                    let only_push = push_labels.iter().any(|label| !pr_labels.contains(label));
                    assert!(
                        only_pr && only_push,
                        "{} (job {pr_job_name}) runs on {pr_labels:?} and {} (job {push_job_name}) on \
                         {push_labels:?}: each needs a label the other's runners do not carry",
                        benchmark.at("runs-on"),
                        baseline.at("runs-on"),
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// convbench.yml: runs the pull request's code
// ---------------------------------------------------------------------------------------------

#[test]
fn the_benchmark_workflow_has_a_read_only_token_and_uploads_always() {
    let file = File::load(BENCHMARK);
    assert!(file.triggers().get("pull_request").is_some());
    assert!(
        !file.text.contains(": write"),
        "{}: convbench.yml runs PR code: no write permission anywhere",
        file.at(": write")
    );
    for (name, job) in file.jobs() {
        assert_eq!(
            job["permissions"]["contents"].as_str(),
            Some("read"),
            "{}: job {name}",
            file.at("permissions:")
        );
        let checkout = steps(job)
            .into_iter()
            .find(|s| uses(s).starts_with("actions/checkout@"))
            .expect("checks out the code");
        assert_eq!(
            checkout["with"]["fetch-depth"].as_u64(),
            Some(0),
            "{}: baselines need history",
            file.at_step(checkout)
        );
        let uploads: Vec<_> = steps(job)
            .into_iter()
            .filter(|s| uses(s).starts_with("actions/upload-artifact@"))
            .collect();
        assert!(!uploads.is_empty(), "uploads the records");
        for upload in uploads {
            let condition = upload.get("if").and_then(Value::as_str).unwrap_or_default();
            assert!(
                condition.contains("always()"),
                "{}: uploads even when the gate fails: {condition}",
                file.at_step(upload)
            );
        }
    }
}

#[test]
fn the_benchmark_workflow_uploads_the_base_revision_it_compared_against() {
    // Under workflow_run GITHUB_BASE_REF is empty: without the base from this run, comment.yml
    // would compare against the tip of the default branch while the gate used the merge-base.
    let file = File::load(BENCHMARK);
    for (name, job) in file.jobs() {
        let job_steps = steps(job);
        let finds_base = job_steps
            .iter()
            .find(|s| script(s).contains("git merge-base HEAD \"origin/$BASE_REF\""))
            .unwrap_or_else(|| panic!("{}: job {name} does not find the merge-base", file.path));
        assert_eq!(
            finds_base["env"]["BASE_REF"].as_str(),
            Some("${{ github.base_ref }}"),
            "{}",
            file.at_step(finds_base)
        );
        let gate = job_steps
            .iter()
            .find(|s| script(s).contains("cargo convbench ci"))
            .expect("runs the gate");
        assert!(
            script(gate).contains("--baseline-rev \"$BASE_REV\""),
            "{}: the gate compares against the revision that is uploaded",
            file.at_step(gate)
        );
        assert!(
            job_steps
                .iter()
                .any(|s| script(s).contains("> pr/base") && yaml_text(s).contains("steps.base.outputs.rev")),
            "{}: job {name} writes no pr/base",
            file.path
        );
        assert!(
            job_steps
                .iter()
                .any(|s| uses(s).starts_with("actions/upload-artifact@")
                    && s["with"]["path"].as_str().unwrap_or_default().contains("pr/base")),
            "{}: job {name} uploads no pr/base",
            file.path
        );
    }
}

// ---------------------------------------------------------------------------------------------
// comment.yml: a write token, and only the artifacts of the pull request's run
// ---------------------------------------------------------------------------------------------

#[test]
fn the_comment_workflow_never_checks_out_pull_request_code() {
    let file = File::load(COMMENT);
    let on = file.triggers();
    let run = on.get("workflow_run").expect("triggered by workflow_run");
    assert!(on.get("pull_request").is_none() && on.get("pull_request_target").is_none());
    assert_eq!(strings(&run["types"]), ["completed"]);
    for (name, job) in file.jobs() {
        assert_eq!(
            job["permissions"]["pull-requests"].as_str(),
            Some("write"),
            "{}: job {name}",
            file.at("permissions:")
        );
        for step in steps(job) {
            if uses(step).starts_with("actions/checkout@") {
                for key in ["ref", "repository"] {
                    assert!(
                        step["with"].get(key).is_none(),
                        "{}: checks out `{key}`: only the default branch may be checked out",
                        file.at_step(step)
                    );
                }
            }
            // The head is fetched as objects into a ref outside refs/heads, never into a branch.
            if script(step).contains("git fetch") {
                assert!(
                    script(step).contains(":refs/convbench/pr-head\"")
                        && !script(step).contains("FETCH_HEAD"),
                    "{}: fetches into something other than refs/convbench/pr-head",
                    file.at_step(step)
                );
            }
            for forbidden in [
                "git checkout",
                "git switch",
                "git worktree",
                "git reset",
                "git merge ",
                "gh pr checkout",
                "git pull",
                "cargo convbench",
            ] {
                assert!(
                    !script(step).contains(forbidden),
                    "{}: runs `{forbidden}`",
                    file.at(forbidden)
                );
            }
        }
    }
    for needle in ["ref: ${{ github.event.workflow_run.head", "pull_request.head.sha"] {
        assert!(
            !file.text.contains(needle),
            "{}: refers to the PR head: {needle}",
            file.at(needle)
        );
    }
    // The head branch names the concurrency group, and is used for nothing else.
    for (index, line) in file.text.lines().enumerate() {
        assert!(
            !line.contains("head_branch") || line.trim_start().starts_with("group: "),
            "{}:{}: refers to the PR head branch: {}",
            file.path,
            index + 1,
            line.trim()
        );
    }
    assert!(file.text.contains("uses: actions/download-artifact@"));
    assert!(file.text.contains("run-id: ${{ github.event.workflow_run.id }}"));
}

/// Runs comment.yml's step that calls `cargo convbench comment` as GitHub runs a `run:` script
/// (`bash --noprofile --norc -eo pipefail`), in a folder holding a record and `labels` as the
/// pull request's labels, with a `cargo` on `PATH` that records its arguments. Returns those
/// arguments and whether the script left anything else behind in the folder.
fn run_the_comment_step(labels: &str) -> (Vec<String>, Vec<String>) {
    let file = File::load(COMMENT);
    let post = file
        .steps()
        .into_iter()
        .map(|(_, step)| step)
        .find(|step| script(step).contains("convbench comment"))
        .expect("a step posts the comment");
    let dir = tempfile::tempdir().expect("temp dir");
    let work = dir.path().join("work");
    let bin = dir.path().join("bin");
    for folder in [work.join("records"), bin.clone()] {
        std::fs::create_dir_all(&folder).expect("folder");
    }
    std::fs::write(work.join("records/runner-1.json"), "{}").expect("record");
    std::fs::write(work.join("pr-labels.txt"), labels).expect("labels");
    let arguments = dir.path().join("arguments");
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\nfor argument in \"$@\"; do printf '%s\\0' \"$argument\"; done > \"$ARGUMENTS\"\n",
    )
    .expect("stub cargo");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let status = std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script(post)])
        .current_dir(&work)
        .env("PATH", path)
        .env("CONVBENCH_BIN", &cargo)
        .env("DEFAULT_BRANCH", "main")
        .env("RUN_ID", "99")
        .env("RUN_CONCLUSION", "cancelled")
        .env("ARGUMENTS", &arguments)
        .env("PR_NUMBER", "7")
        .env("BASE_REV", "0123456789abcdef0123456789abcdef01234567")
        .env("HEAD_SHA", "89abcdef0123456789abcdef0123456789abcdef")
        .env("RUN_URL", "https://github.com/o/r/actions/runs/1")
        .status()
        .expect("bash runs");
    assert!(status.success(), "{}: the script failed", file.at_step(post));
    let recorded = std::fs::read(&arguments).expect("cargo was called");
    let arguments = recorded
        .split(|byte| *byte == 0)
        .filter(|argument| !argument.is_empty())
        .map(|argument| String::from_utf8_lossy(argument).to_string())
        .collect();
    let mut left_behind: Vec<String> = std::fs::read_dir(&work)
        .expect("work folder")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|name| name != "records" && name != "pr-labels.txt")
        .collect();
    left_behind.sort();
    (arguments, left_behind)
}

#[test]
fn the_comment_workflow_passes_labels_as_data_never_as_options() {
    let (without_labels, _) = run_the_comment_step("");
    assert_eq!(
        without_labels[..2],
        ["convbench", "comment"],
        "{without_labels:?}"
    );
    assert!(
        !without_labels
            .iter()
            .any(|argument| argument.starts_with("--label")),
        "no label, no --label: {without_labels:?}"
    );
    let hostile = [
        "--help",
        "--pr",
        "8",
        "--results=/etc/passwd",
        "--label",
        "-x",
        "$(touch pwned)",
        "`touch pwned2`",
        "needs review; touch pwned3",
        "a label with spaces",
        "convbench-accept",
    ];
    // An empty line and a last line without a newline, as `gh --jq` may leave them.
    let labels = format!(
        "{}\n\n{}",
        hostile[..hostile.len() - 1].join("\n"),
        hostile[hostile.len() - 1]
    );
    let (arguments, left_behind) = run_the_comment_step(&labels);
    let passed: Vec<&str> = arguments
        .iter()
        .filter_map(|argument| argument.strip_prefix("--label="))
        .collect();
    assert_eq!(
        passed, hostile,
        "every label, in order, as one `--label=VALUE` each"
    );
    let others: Vec<&String> = arguments
        .iter()
        .filter(|argument| !argument.starts_with("--label="))
        .collect();
    assert_eq!(
        others,
        without_labels.iter().collect::<Vec<_>>(),
        "a label became an argument of its own"
    );
    assert!(left_behind.is_empty(), "a label ran as code: {left_behind:?}");
}

#[test]
fn the_comment_workflow_runs_one_job_per_pull_request_at_a_time() {
    let file = File::load(COMMENT);
    let concurrency = file.yaml.get("concurrency").unwrap_or_else(|| {
        panic!(
            "{}: no workflow-level concurrency: two runs could race on one comment",
            file.path
        )
    });
    let group = concurrency["group"].as_str().unwrap_or_default();
    assert!(
        group.contains("github.event.workflow_run.head_branch"),
        "{}: the group `{group}` is not per pull request branch",
        file.at("group:")
    );
    assert_eq!(
        concurrency["cancel-in-progress"].as_bool(),
        Some(false),
        "{}: a cancelled run would leave a stale comment",
        file.at("concurrency:")
    );
}

#[test]
fn the_comment_judges_against_the_merge_base_it_computes_and_every_leg_of_the_run() {
    let file = File::load(COMMENT);
    for (name, job) in file.jobs() {
        assert_eq!(
            job["permissions"]["checks"].as_str(),
            Some("write"),
            "{}: job {name} creates a check run",
            file.at("permissions:")
        );
        assert_eq!(
            job["permissions"]["actions"].as_str(),
            Some("read"),
            "{}: job {name} lists the legs of the run",
            file.at("permissions:")
        );
        // A cancelled or timed-out benchmark run is judged too (and fails the check).
        let condition = job["if"].as_str().unwrap_or_default();
        assert!(
            !condition.contains("conclusion"),
            "{}: job {name} skips some conclusions: {condition}",
            file.at("if:")
        );
        let job_steps = steps(job);
        let check = job_steps
            .iter()
            .find(|s| script(s).contains("pr/base"))
            .unwrap_or_else(|| panic!("{}: job {name} never reads pr/base", file.path));
        assert!(
            script(check).contains("=~ ^[0-9a-f]{40}$"),
            "{}: pr/base is used without checking that it is a commit id",
            file.at_step(check)
        );
        let post = job_steps
            .iter()
            .find(|s| script(s).contains("convbench comment"))
            .expect("posts the comment");
        for flag in [
            "\"--baseline-rev=$BASE_REV\"",
            "--default-branch \"$DEFAULT_BRANCH\"",
            "--head-sha \"$HEAD_SHA\"",
            "--run-url \"$RUN_URL\"",
            "--run-id \"$RUN_ID\"",
            "--run-conclusion \"$RUN_CONCLUSION\"",
            "--check-run",
        ] {
            assert!(
                script(post).contains(flag),
                "{}: `convbench comment` without `{flag}`",
                file.at_step(post)
            );
        }
        for (variable, expected) in [
            ("BASE_REV", "${{ steps.base.outputs.rev }}"),
            ("HEAD_SHA", "${{ github.event.workflow_run.head_sha }}"),
            ("RUN_URL", "${{ github.event.workflow_run.html_url }}"),
            ("RUN_ID", "${{ github.event.workflow_run.id }}"),
            ("RUN_CONCLUSION", "${{ github.event.workflow_run.conclusion }}"),
            ("DEFAULT_BRANCH", "${{ github.event.repository.default_branch }}"),
            ("CONVBENCH_BIN", "${{ steps.install.outputs.binary }}"),
        ] {
            assert_eq!(
                post["env"][variable].as_str(),
                Some(expected),
                "{}: {variable} must come from {expected}",
                file.at_step(post)
            );
        }
    }
}

#[test]
fn the_comment_step_passes_the_run_and_the_trusted_base_and_judges_a_run_without_records() {
    let (arguments, _) = run_the_comment_step("");
    for pair in [
        ["--default-branch", "main"],
        ["--run-id", "99"],
        ["--run-conclusion", "cancelled"],
    ] {
        assert!(
            arguments.windows(2).any(|w| w == pair),
            "{pair:?} missing: {arguments:?}"
        );
    }
    assert!(
        arguments.contains(&"--baseline-rev=0123456789abcdef0123456789abcdef01234567".to_string()),
        "{arguments:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// convbench-labels.yml: waivers take effect at once
// ---------------------------------------------------------------------------------------------

#[test]
fn a_label_change_reruns_the_last_comment_run_without_touching_pull_request_code() {
    let file = File::load(LABELS);
    let on = file.triggers();
    assert_eq!(
        on.as_mapping().map(|m| m.len()),
        Some(1),
        "{}: one trigger",
        file.path
    );
    assert_eq!(
        strings(&on["pull_request_target"]["types"]),
        ["labeled", "unlabeled"]
    );
    assert!(
        file.yaml["permissions"]
            .as_mapping()
            .is_some_and(|m| m.is_empty()),
        "{}: the workflow's default token must have no permission",
        file.at("permissions:")
    );
    for (name, job) in file.jobs() {
        let permissions = job["permissions"].as_mapping().expect("job permissions");
        assert_eq!(
            permissions.len(),
            1,
            "{}: job {name}: only actions: write",
            file.path
        );
        assert_eq!(job["permissions"]["actions"].as_str(), Some("write"));
        for step in steps(job) {
            assert!(
                uses(step).is_empty(),
                "{}: runs an action; this job must check out and run nothing",
                file.at_step(step)
            );
            for forbidden in ["git ", "cargo", "convbench ", "${{"] {
                assert!(
                    !script(step).contains(forbidden),
                    "{}: the script runs `{forbidden}`",
                    file.at_step(step)
                );
            }
            assert!(script(step).contains("actions/workflows/comment.yml/runs?head_sha=$HEAD_SHA"));
            assert!(script(step).contains("/rerun"));
        }
    }
}

/// Runs the labels workflow's script with a `gh` on PATH that answers `run_id` to the listing
/// and records its calls; returns the calls and whether the script succeeded.
fn run_the_label_step(head_sha: &str, run_id: &str) -> (Vec<String>, bool) {
    let file = File::load(LABELS);
    let (_, step) = file.steps().into_iter().next().expect("a step");
    let dir = tempfile::tempdir().expect("temp dir");
    let calls = dir.path().join("calls");
    let gh = dir.path().join("gh");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$CALLS\"\ncase \"$*\" in *--jq*) printf '%s\\n' '{run_id}';; esac\n"
        ),
    )
    .expect("stub gh");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script(step)])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("CALLS", &calls)
        .env("REPOSITORY", "o/r")
        .env("HEAD_SHA", head_sha)
        .status()
        .expect("bash runs");
    let calls = std::fs::read_to_string(&calls).unwrap_or_default();
    (calls.lines().map(str::to_string).collect(), status.success())
}

#[test]
fn the_label_step_reruns_only_a_run_id_and_refuses_hostile_answers() {
    let head = "89abcdef0123456789abcdef0123456789abcdef";
    let (calls, ok) = run_the_label_step(head, "4242");
    assert!(ok, "{calls:?}");
    assert_eq!(
        calls.last().map(String::as_str),
        Some("api --method POST repos/o/r/actions/runs/4242/rerun --silent")
    );
    let (calls, ok) = run_the_label_step(head, "1; touch pwned");
    assert!(!ok && !calls.iter().any(|c| c.contains("rerun")), "{calls:?}");
    let (calls, ok) = run_the_label_step("main;id", "4242");
    assert!(!ok && calls.is_empty(), "{calls:?}");
    let (calls, ok) = run_the_label_step(head, "");
    assert!(ok && calls.len() == 1, "no run yet, nothing to re-run: {calls:?}");
}

// ---------------------------------------------------------------------------------------------
// release.yml, binstall metadata and the installer
// ---------------------------------------------------------------------------------------------

#[test]
fn the_release_workflow_builds_every_platform_with_least_privilege() {
    let file = File::load(RELEASE);
    assert_eq!(strings(&file.triggers()["push"]["tags"]), ["v*"]);
    let build = &file.yaml["jobs"]["build"];
    let targets: Vec<&str> = sequence(&build["strategy"]["matrix"]["include"])
        .into_iter()
        .map(|entry| entry["target"].as_str().unwrap_or_default())
        .collect();
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        assert!(targets.contains(&target), "{}: no {target}", file.path);
    }
    assert_eq!(build["permissions"]["contents"].as_str(), Some("read"));
    assert!(
        !file.text.contains("actions/cache") && !file.text.contains("rust-cache"),
        "{}: a release is built without caches",
        file.path
    );
    let publish = &file.yaml["jobs"]["publish"];
    assert_eq!(publish["permissions"]["contents"].as_str(), Some("write"));
    let publish_text = yaml_text(publish);
    assert!(publish_text.contains("sha256sum cargo-convbench-*.tar.gz > SHA256SUMS"));
    assert!(
        !publish_text.contains("actions/checkout") && !publish_text.contains("cargo "),
        "{}: the job that may write builds nothing",
        file.path
    );
}

#[test]
fn binstall_metadata_names_the_release_archives() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("cargo-convbench/Cargo.toml"))
            .expect("read cargo-convbench/Cargo.toml");
    let manifest: toml::Value = toml::from_str(&manifest).expect("TOML");
    let binstall = &manifest["package"]["metadata"]["binstall"];
    assert_eq!(
        binstall["pkg-url"].as_str(),
        Some("{ repo }/releases/download/v{ version }/cargo-convbench-{ target }.tar.gz")
    );
    assert_eq!(
        binstall["bin-dir"].as_str(),
        Some("cargo-convbench-{ target }/{ bin }{ binary-ext }")
    );
    assert_eq!(binstall["pkg-fmt"].as_str(), Some("tgz"));
    let release = File::load(RELEASE);
    assert!(release.text.contains("name=\"cargo-convbench-$TARGET\""));
    assert!(release.text.contains("tar -czf \"$name.tar.gz\" \"$name\""));
}

#[test]
fn the_action_and_the_comment_job_run_the_installed_binary_never_cargo_convbench() {
    for path in [ACTION, COMMENT] {
        let file = File::load(path);
        for (_, step) in file.steps() {
            assert!(
                !script(step).contains("cargo convbench") && !script(step).contains("cargo install"),
                "{}: runs cargo (a checkout's .cargo/config.toml could alias the subcommand)",
                file.at_step(step)
            );
        }
        assert!(
            file.text.contains(".github/scripts/install-convbench.sh"),
            "{}: does not use the installer",
            file.path
        );
        assert!(
            file.text.contains("\"$CONVBENCH_BIN\" convbench "),
            "{}",
            file.path
        );
        assert!(
            file.text.contains("uses: actions/cache@"),
            "{}: no cache",
            file.path
        );
    }
}

/// A release folder for the installer: `v0.1.0/` holding a stub binary's archive for `target`
/// and SHA256SUMS, the checksum spoiled when `spoil`.
fn fake_release(dir: &Path, target: &str, version: &str, spoil: bool) -> String {
    let release = dir.join("release").join(format!("v{version}"));
    let name = format!("cargo-convbench-{target}");
    std::fs::create_dir_all(release.join(&name)).expect("release folder");
    let binary = release.join(&name).join("cargo-convbench");
    std::fs::write(&binary, format!("#!/bin/sh\necho cargo-convbench {version}\n")).expect("stub");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let tar = std::process::Command::new("tar")
        .current_dir(&release)
        .args(["-czf", &format!("{name}.tar.gz"), &name])
        .status()
        .expect("tar");
    assert!(tar.success());
    let sums = std::process::Command::new("sha256sum")
        .current_dir(&release)
        .arg(format!("{name}.tar.gz"))
        .output()
        .expect("sha256sum");
    let mut sums = String::from_utf8_lossy(&sums.stdout).to_string();
    if spoil {
        sums = format!("{}{}", "0".repeat(64), &sums[64..]);
    }
    std::fs::write(release.join("SHA256SUMS"), sums).expect("SHA256SUMS");
    format!("file://{}", dir.join("release").display())
}

/// Runs the installer against `release_url` with a `cargo` on PATH that records that it was
/// called; returns the printed binary path and whether cargo was called.
fn install(dir: &Path, release_url: &str) -> (String, bool) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, "#!/bin/sh\ntouch \"$CARGO_CALLED\"\n").expect("stub cargo");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let called = dir.join("cargo-called");
    let _ = std::fs::remove_file(&called);
    let root = dir.join("root");
    let _ = std::fs::remove_dir_all(&root);
    let output = std::process::Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(INSTALL))
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()),
        )
        .env("CONVBENCH_SOURCE", env!("CARGO_MANIFEST_DIR"))
        .env("CONVBENCH_ROOT", &root)
        .env("CONVBENCH_RELEASE_URL", release_url)
        .env("CARGO_CALLED", &called)
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8_lossy(&output.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    (printed, called.exists())
}

#[test]
fn the_installer_takes_the_release_binary_only_when_its_checksum_matches() {
    let target = match std::env::consts::ARCH {
        "x86_64" if cfg!(target_os = "linux") => "x86_64-unknown-linux-gnu",
        "aarch64" if cfg!(target_os = "linux") => "aarch64-unknown-linux-gnu",
        _ => return,
    };
    let version = env!("CARGO_PKG_VERSION");
    let dir = tempfile::tempdir().expect("temp dir");
    let url = fake_release(dir.path(), target, version, false);
    let (binary, built) = install(dir.path(), &url);
    assert!(!built, "the release binary was there, yet cargo install ran");
    assert!(binary.ends_with("root/bin/cargo-convbench"), "{binary}");
    let version_line = std::process::Command::new(&binary)
        .output()
        .expect("the binary runs");
    assert_eq!(
        String::from_utf8_lossy(&version_line.stdout).trim(),
        format!("cargo-convbench {version}")
    );

    let spoiled = tempfile::tempdir().expect("temp dir");
    let url = fake_release(spoiled.path(), target, version, true);
    let (_, built) = install(spoiled.path(), &url);
    assert!(built, "a binary whose checksum does not match was installed");
    let (_, built) = install(spoiled.path(), "file:///nonexistent/release");
    assert!(built, "without a release, cargo install --locked builds it");
}

// ---------------------------------------------------------------------------------------------
// baseline.yml: the only workflow that pushes
// ---------------------------------------------------------------------------------------------

#[test]
fn the_baseline_workflow_runs_on_main_and_may_push() {
    let file = File::load(BASELINE);
    let on = file.triggers();
    assert_eq!(strings(&on["push"]["branches"]), ["main"]);
    assert!(on.get("workflow_dispatch").is_some());
    let pushing = pushing_jobs(&file);
    assert_eq!(
        pushing.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>(),
        ["update"],
        "{}: one job pushes the baselines",
        file.path
    );
    for (name, job) in pushing {
        assert!(
            job["strategy"]["matrix"].get("runner").is_some(),
            "{}: job {name} runs on the GPU runner matrix",
            file.at("runs-on")
        );
    }
}

/// The jobs of `file` whose token may write the repository.
fn pushing_jobs(file: &File) -> Vec<(String, &Value)> {
    file.jobs()
        .into_iter()
        .filter(|(_, job)| job["permissions"]["contents"].as_str() == Some("write"))
        .collect()
}

#[test]
fn only_the_pages_job_may_deploy_pages_and_only_when_configured() {
    // `pages: write` and `id-token: write` deploy a site anyone can visit: one job, switched
    // on by a repository variable, on a GitHub-hosted runner, after the baselines are pushed,
    // with a read-only view of the repository and no step that sees a token.
    let deploy_scopes = |job: &Value| {
        ["pages", "id-token"]
            .into_iter()
            .filter(|scope| job["permissions"][*scope].as_str() == Some("write"))
            .count()
    };
    for file in workflows() {
        for (name, job) in file.jobs() {
            if file.path == BASELINE && name == "pages" {
                continue;
            }
            assert_eq!(
                deploy_scopes(job),
                0,
                "{}: only baseline.yml's pages job may write pages or id-token",
                file.at(&format!("{name}:"))
            );
        }
    }
    let file = File::load(BASELINE);
    let (_, job) = file
        .jobs()
        .into_iter()
        .find(|(name, _)| name == "pages")
        .unwrap_or_else(|| panic!("{}: no pages job", file.path));
    let at = file.at("pages:");
    let permissions = job["permissions"].as_mapping().expect("permissions");
    let granted: Vec<(String, String)> = permissions
        .iter()
        .map(|(scope, level)| {
            (
                scope.as_str().unwrap_or("?").to_string(),
                level.as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    let expected = [("contents", "read"), ("pages", "write"), ("id-token", "write")]
        .map(|(scope, level)| (scope.to_string(), level.to_string()));
    assert_eq!(granted, expected, "{at}: the pages job's permissions");
    assert_eq!(
        job["if"].as_str(),
        Some("vars.CONVBENCH_PAGES == 'true'"),
        "{at}: off unless the repository variable is set"
    );
    assert_eq!(job["needs"].as_str(), Some("update"), "{at}: after the push");
    assert_eq!(
        job["runs-on"].as_str(),
        Some("ubuntu-latest"),
        "{at}: a GitHub-hosted runner"
    );
    assert_eq!(job["environment"]["name"].as_str(), Some("github-pages"));
    let actions: Vec<&str> = steps(job)
        .into_iter()
        .map(uses)
        .filter(|action| !action.is_empty())
        .map(|action| action.split('@').next().unwrap_or_default())
        .collect();
    for action in ["actions/upload-pages-artifact", "actions/deploy-pages"] {
        assert!(actions.contains(&action), "{at}: uses {action}");
    }
    for step in steps(job) {
        let text = yaml_text(step);
        assert!(
            !text.contains("token") && !script(step).contains("git push"),
            "{}: the pages job pushes nothing and hands no step a token",
            file.at_step(step)
        );
    }
    assert!(
        steps(job)
            .into_iter()
            .any(|step| script(step).contains("cargo convbench history --html")),
        "{at}: publishes the history dashboard"
    );
}

#[test]
fn the_baseline_write_token_reaches_only_the_push_step() {
    // The benchmark builds and runs code; with the token in its environment, in .git/config or
    // in a workflow- or job-level env, anything it starts could push to main.
    let file = File::load(BASELINE);
    let mentions_token = |text: &str| {
        ["github.token", "secrets.GITHUB_TOKEN", "GITHUB_TOKEN"]
            .iter()
            .any(|needle| text.contains(needle))
    };
    if let Some(env) = file.yaml.get("env") {
        assert!(
            !mentions_token(&yaml_text(env)),
            "{}: workflow-level env passes the token to every step",
            file.at("env:")
        );
    }
    for (name, job) in pushing_jobs(&file) {
        if let Some(env) = job.get("env") {
            assert!(
                !mentions_token(&yaml_text(env)),
                "{}: job {name}'s env passes the token to every step",
                file.at("env:")
            );
        }
        let with_token: Vec<&Value> = steps(job)
            .into_iter()
            .filter(|step| mentions_token(&yaml_text(step)))
            .collect();
        let pushes = |step: &Value| script(step).contains("git push");
        for step in &with_token {
            assert!(
                pushes(step),
                "{} (job {name}): only the push step may see the write token",
                file.at_step(step)
            );
        }
        let push = steps(job)
            .into_iter()
            .find(|step| pushes(step))
            .unwrap_or_else(|| panic!("{}: job {name} does not push", file.path));
        assert!(
            with_token.len() == 1
                && push["env"]["PUSH_TOKEN"].as_str() == Some("${{ github.token }}")
                && script(push).contains("$PUSH_TOKEN"),
            "{}: the push step takes the token from its own env (PUSH_TOKEN)",
            file.at_step(push)
        );
        assert!(
            !script(push).contains("-c http") && !script(push).contains("remote set-url"),
            "{}: the credential must not be on a command line (ps shows it) or in .git/config",
            file.at_step(push)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// action.yml
// ---------------------------------------------------------------------------------------------

#[test]
fn the_composite_action_passes_the_token_and_arguments_through_env() {
    let file = File::load(ACTION);
    let action = &file.yaml;
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    assert_eq!(action["inputs"]["args"]["default"].as_str(), Some(""));
    assert!(action["inputs"].get("github-token").is_some());
    let mut passes_token = false;
    for (_, step) in file.steps() {
        if step.get("run").is_some() {
            assert!(
                step.get("shell").is_some(),
                "{}: composite run steps need a shell",
                file.at_step(step)
            );
        }
        if let Some(env) = step.get("env") {
            passes_token |= env["GITHUB_TOKEN"].as_str() == Some("${{ inputs.github-token }}");
        }
    }
    assert!(
        passes_token,
        "{}: GITHUB_TOKEN comes from the github-token input, through env:",
        file.path
    );
}

#[test]
fn the_action_can_create_the_check_run_with_the_same_decision() {
    let file = File::load(ACTION);
    assert_eq!(
        file.yaml["inputs"]["check-run"]["default"].as_str(),
        Some("false"),
        "{}: check-run is opt-in (it needs checks: write)",
        file.path
    );
    let run = file
        .steps()
        .into_iter()
        .map(|(_, step)| step)
        .find(|step| script(step).contains("convbench ci"))
        .expect("a step runs ci");
    assert_eq!(run["env"]["CHECK_RUN"].as_str(), Some("${{ inputs.check-run }}"));
    assert!(
        script(run).contains("args+=(--check-run)"),
        "{}",
        file.at_step(run)
    );
}

/// Runs the comment.yml step named `name` as GitHub would, in a folder holding `pr/base` =
/// `base`, with stubs of `git` and `gh` on PATH that record their arguments and environment;
/// returns (success, what the step wrote to GITHUB_OUTPUT, the stubs' record, stdout).
fn run_comment_step_named(name: &str, base: &str, env: &[(&str, &str)]) -> (bool, String, String, String) {
    let file = File::load(COMMENT);
    let step = file
        .steps()
        .into_iter()
        .map(|(_, step)| step)
        .find(|step| step["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("{}: no step `{name}`", file.path));
    let dir = tempfile::tempdir().expect("temp dir");
    let work = dir.path().join("work");
    let bin = dir.path().join("bin");
    for folder in [work.join("pr"), bin.clone()] {
        std::fs::create_dir_all(&folder).expect("folder");
    }
    std::fs::write(work.join("pr/base"), base).expect("pr/base");
    let record = dir.path().join("record");
    for tool in ["git", "gh"] {
        let stub = bin.join(tool);
        std::fs::write(
            &stub,
            format!("#!/bin/sh\n{{ printf '{tool} %s\\n' \"$*\"; env; }} >> \"$RECORD\"\n"),
        )
        .expect("stub");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    let output_file = dir.path().join("output");
    let mut command = std::process::Command::new("bash");
    command
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script(step)])
        .current_dir(&work)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()),
        )
        .env("RECORD", &record)
        .env("GITHUB_OUTPUT", &output_file);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("bash runs");
    let left: Vec<String> = std::fs::read_dir(&work)
        .expect("work")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|name| name != "pr")
        .collect();
    assert!(left.is_empty(), "{name}: hostile input ran as code: {left:?}");
    (
        output.status.success(),
        std::fs::read_to_string(&output_file).unwrap_or_default(),
        std::fs::read_to_string(&record).unwrap_or_default(),
        String::from_utf8_lossy(&output.stdout).to_string(),
    )
}

#[test]
fn a_hostile_pr_base_is_never_passed_on_and_a_good_one_only_for_the_cross_check() {
    let step = "Read the base revision the benchmark run named";
    let good = "0123456789abcdef0123456789abcdef01234567";
    let (ok, output, _, _) = run_comment_step_named(step, &format!("{good}\n"), &[]);
    assert!(ok);
    assert_eq!(output.trim(), format!("rev={good}"));
    for hostile in [
        "$(touch pwned)",
        "--upload-pack=touch pwned",
        "0123456789abcdef0123456789abcdef0123456\nrev=deadbeef",
        "HEAD~3",
        "",
    ] {
        let (ok, output, _, _) = run_comment_step_named(step, hostile, &[]);
        assert!(ok, "{hostile:?}: the merge-base alone decides, the job goes on");
        assert!(output.is_empty(), "{hostile:?} was passed on: {output}");
    }
}

#[test]
fn the_head_is_fetched_into_a_data_ref_with_the_token_out_of_the_command_line() {
    let token = "ghs_NeverOnACommandLine0123";
    let (ok, _, record, stdout) = run_comment_step_named(
        "Fetch the pull request's head as data",
        "",
        &[("GH_TOKEN", token), ("PR_NUMBER", "7")],
    );
    assert!(ok);
    let git_line = record
        .lines()
        .find(|line| line.starts_with("git "))
        .expect("git was called");
    assert!(
        git_line.ends_with("origin +refs/pull/7/head:refs/convbench/pr-head"),
        "{git_line}"
    );
    assert!(
        !git_line.contains("ghs_") && !git_line.contains("basic"),
        "{git_line}"
    );
    assert!(record.contains("GIT_CONFIG_KEY_0=http.extraheader"), "{record}");
    assert!(!stdout.contains(token), "the token was printed: {stdout}");
}
