//! Baselines in git: `baseline update --commit`, `compare` against the blessed revision,
//! `history`, and the errors outside a repository or across adapters.

use crate::support::{
    Package, assert_code, convbench, raw_samples, read_record, stderr_of, stdout_of, write_record,
};
use convbench::results::RunRecord;

#[test]
fn baseline_update_commit_writes_and_commits_the_baseline() {
    let package = Package::git();
    let record = package.cpu_record("rec.json");
    let before = package.head();
    let output = package
        .convbench()
        .args(["baseline", "update", "--from", "rec.json", "--commit"])
        .output()
        .expect("baseline update");
    assert_code(&output, 0);
    let slug = record.benchmarks[0].adapter.slug();
    let relative = format!("baselines/{slug}/default.json");
    let blessed = read_record(&package.path(&relative));
    assert_eq!(raw_samples(&blessed), raw_samples(&record));
    let stdout = stdout_of(&output);
    assert!(
        stdout.contains("lenet/train/b1/f32/cpu") && stdout.contains("committed"),
        "{stdout}"
    );
    assert_ne!(package.head(), before, "a new commit");
    assert_eq!(
        package.git_ok(&["show", "--name-only", "--format=", "HEAD"]),
        relative,
        "the commit holds the baseline file only"
    );
    assert_eq!(package.git_ok(&["status", "--porcelain", "--", "baselines"]), "");
}

#[test]
fn compare_with_the_blessed_record_finds_no_change() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args(["compare", "--results", "rec.json", "--baseline-rev", "HEAD"])
        .output()
        .expect("compare");
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    assert!(stdout.contains("unchanged"), "{stdout}");
    assert!(stdout.contains("no change"), "{stdout}");
    assert!(!stdout.contains("regression"), "{stdout}");
}

#[test]
fn compare_with_a_40_percent_slower_record_exits_1_with_regression() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args(["compare", "--results", "slower.json", "--baseline-rev", "HEAD"])
        .output()
        .expect("compare");
    assert_code(&output, 1);
    let stdout = stdout_of(&output);
    assert!(stdout.contains("regression"), "{stdout}");
    assert!(stdout.contains("+40.0%"), "{stdout}");
}

#[test]
fn compare_md_and_json_formats_carry_the_verdicts() {
    let (package, _) = Package::blessed();
    let compare = |format: &str| {
        let output = package
            .convbench()
            .args(["compare", "--results", "slower.json", "--baseline-rev", "HEAD"])
            .args(["--format", format])
            .output()
            .expect("compare");
        assert_code(&output, 1);
        stdout_of(&output)
    };
    let markdown = compare("md");
    assert!(
        markdown.contains("| lenet/train/b1/f32/cpu") && markdown.contains("regression"),
        "{markdown}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&compare("json")).expect("compare --format json is JSON");
    let verdicts: Vec<&str> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["verdict"].as_str())
        .collect();
    assert_eq!(verdicts.len(), 7, "{json}");
    assert!(verdicts.iter().all(|v| *v == "regression"), "{verdicts:?}");
}

#[test]
fn history_after_two_blessed_commits_shows_two_rows() {
    let (package, record) = Package::blessed();
    package.bless("slower.json");
    let history = |format: &str| {
        let output = package
            .convbench()
            .args(["history", "--format", format])
            .output()
            .expect("history");
        assert_code(&output, 0);
        stdout_of(&output)
    };
    let rows: Vec<serde_json::Value> = serde_json::from_str(&history("json")).expect("history JSON");
    assert_eq!(rows.len(), 2, "{rows:?}");
    let id = &record.benchmarks[0].id;
    assert!(rows.iter().all(|r| r["benchmark"] == id.as_str()), "{rows:?}");
    let first = rows[0]["total_median_ns"].as_f64().expect("median");
    let second = rows[1]["total_median_ns"].as_f64().expect("median");
    assert!(
        (second / first - 1.4).abs() < 0.01,
        "oldest first: {first} then {second}"
    );
    let table = history("table");
    assert_eq!(table.matches(id.as_str()).count(), 2, "{table}");
}

#[test]
fn compare_outside_a_git_repository_exits_3_with_advice() {
    let package = Package::plain();
    package.cpu_record("rec.json");
    let output = package
        .convbench()
        .args(["compare", "--results", "rec.json"])
        .output()
        .expect("compare");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("git init") || stderr.contains("--baseline-file"),
        "{stderr}"
    );
}

#[test]
fn compare_against_another_adapters_baseline_exits_2_mentioning_allow_other_adapter() {
    let package = Package::plain();
    let record = package.cpu_record("rec.json");
    let mut other = record.clone();
    for benchmark in &mut other.benchmarks {
        benchmark.adapter.name = "Some Other GPU".to_string();
        benchmark.adapter.backend = "vulkan".to_string();
    }
    write_record(&package.path("other.json"), &other);
    let compare = |extra: &[&str]| {
        package
            .convbench()
            .args([
                "compare",
                "--results",
                "rec.json",
                "--baseline-file",
                "other.json",
            ])
            .args(extra)
            .output()
            .expect("compare")
    };
    let refused = compare(&[]);
    assert_code(&refused, 2);
    let stderr = stderr_of(&refused);
    assert!(stderr.contains("--allow-other-adapter"), "{stderr}");
    assert!(
        stderr.contains("Some Other GPU"),
        "names the other adapter: {stderr}"
    );

    let allowed = compare(&["--allow-other-adapter"]);
    assert_code(&allowed, 0);
}

#[test]
fn compare_with_a_baseline_file_needs_no_git() {
    let package = Package::plain();
    package.cpu_record("rec.json");
    let output = package
        .convbench()
        .args(["compare", "--results", "rec.json", "--baseline-file", "rec.json"])
        .output()
        .expect("compare");
    assert_code(&output, 0);
    assert!(stdout_of(&output).contains("no change"), "{}", stdout_of(&output));
}

#[test]
fn compare_at_a_missing_revision_exits_3() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args([
            "compare",
            "--results",
            "rec.json",
            "--baseline-rev",
            "no-such-branch",
        ])
        .output()
        .expect("compare");
    assert_code(&output, 3);
    assert!(
        stderr_of(&output).contains("no-such-branch"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn history_outside_a_git_repository_exits_3() {
    let package = Package::plain();
    let output = convbench()
        .current_dir(package.root())
        .arg("history")
        .output()
        .expect("history");
    assert_code(&output, 3);
}

/// Compares `name` (written from `edit` of the blessed record) against the blessed baseline.
fn compare_edited(edit: impl FnOnce(&mut RunRecord)) -> std::process::Output {
    let (package, mut record) = Package::blessed();
    edit(&mut record);
    write_record(&package.path("edited.json"), &record);
    package
        .convbench()
        .args(["compare", "--results", "edited.json", "--baseline-rev", "HEAD"])
        .output()
        .expect("compare")
}

#[test]
fn a_record_with_a_duplicated_benchmark_is_an_input_error_naming_it() {
    let output = compare_edited(|record| {
        let twin = record.benchmarks[0].clone();
        record.benchmarks.push(twin);
    });
    assert_code(&output, 2);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("lenet/train/b1/f32/cpu appears 2 times"),
        "{stderr}"
    );
}

#[test]
fn a_record_with_a_duplicated_phase_is_an_input_error_naming_it() {
    let output = compare_edited(|record| {
        let twin = record.benchmarks[0].phases[0].clone();
        record.benchmarks[0].phases.push(twin);
    });
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("has phase forward 2 times"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn an_all_zero_record_is_an_input_error_not_improvements() {
    let output = compare_edited(|record| {
        for phase in &mut record.benchmarks[0].phases {
            phase.samples_ns.iter_mut().for_each(|s| *s = 0);
        }
    });
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("sample of 0 ns"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn a_record_without_benchmarks_is_an_input_error_not_a_pass() {
    let output = compare_edited(|record| record.benchmarks.clear());
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("holds no benchmarks"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn an_interrupted_record_fails_the_gate_even_when_what_it_holds_is_unchanged() {
    let output = compare_edited(|record| record.complete = false);
    assert_code(&output, 1);
    assert!(
        stdout_of(&output).contains("interrupted"),
        "{}",
        stdout_of(&output)
    );
}

#[test]
fn an_interrupted_record_cannot_be_blessed() {
    let (package, mut record) = Package::blessed();
    record.complete = false;
    write_record(&package.path("partial.json"), &record);
    let output = package
        .convbench()
        .args(["baseline", "update", "--from", "partial.json"])
        .output()
        .expect("baseline update");
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("interrupted"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn blessed_runs_build_a_history_that_compare_judges_by_rounds() {
    let package = Package::git();
    let run = |name: &str| {
        let output = package
            .convbench()
            .args(["run", "--backend", "cpu", "--quiet", "--out", name])
            .args(crate::support::tiny(&[("--rounds", "3")]))
            .output()
            .expect("run");
        assert_code(&output, 0);
    };
    for name in ["first.json", "second.json"] {
        run(name);
        package.bless(name);
    }
    let slug = read_record(&package.path("first.json")).benchmarks[0]
        .adapter
        .slug();
    let blessed = read_record(&package.path(&format!("baselines/{slug}/default.json")));
    assert_eq!(
        blessed.benchmarks[0].run_sizes(),
        [3, 3],
        "two blessed runs of three rounds"
    );
    run("now.json");
    let output = package
        .convbench()
        .args([
            "compare",
            "--results",
            "now.json",
            "--baseline-rev",
            "HEAD",
            "--format",
            "json",
        ])
        .output()
        .expect("compare");
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&output)).expect("compare JSON");
    let evidence = json["rows"][0]["evidence"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(evidence.contains("3 rounds against 2 blessed runs"), "{json}");
}
