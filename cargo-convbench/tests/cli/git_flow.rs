//! Baselines in git: `baseline update --commit`, `compare` against the blessed revision,
//! `history`, and the errors outside a repository or across adapters.

use crate::support::{
    Package, assert_code, convbench, raw_samples, read_record, scaled, stderr_of, stdout_of, tiny,
    write_record,
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

/// Two `baseline update --commit` at once lost one blessed run and left the file modified
/// against HEAD: under the lock each merges into and commits on top of the other.
#[test]
fn concurrent_baseline_updates_keep_both_runs_and_commit_both() {
    let package = Package::git();
    let record = package.cpu_record("rec.json");
    let names: Vec<String> = (2..=5).map(|batch| format!("b{batch}.json")).collect();
    for (batch, name) in (2..=5).zip(&names) {
        let mut other = record.clone();
        for benchmark in &mut other.benchmarks {
            benchmark.id = benchmark.id.replace("/b1/", &format!("/b{batch}/"));
            benchmark.batch = batch;
        }
        write_record(&package.path(name), &other);
    }
    let before = package.head();
    // One thread per process, so that the four run at once.
    std::thread::scope(|scope| {
        let updates: Vec<_> = names
            .iter()
            .map(|name| {
                let package = &package;
                scope.spawn(move || {
                    package
                        .convbench()
                        .args(["baseline", "update", "--from", name, "--commit"])
                        .output()
                        .expect("baseline update")
                })
            })
            .collect();
        for update in updates {
            assert_code(&update.join().expect("a thread panicked"), 0);
        }
    });
    let slug = record.benchmarks[0].adapter.slug();
    let relative = format!("baselines/{slug}/default.json");
    let blessed = read_record(&package.path(&relative));
    let mut ids: Vec<&str> = blessed.benchmarks.iter().map(|b| b.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "lenet/train/b2/f32/cpu",
            "lenet/train/b3/f32/cpu",
            "lenet/train/b4/f32/cpu",
            "lenet/train/b5/f32/cpu"
        ]
    );
    let commits = package.git_ok(&["rev-list", "--count", &format!("{before}..HEAD")]);
    assert_eq!(commits, "4", "one commit per update");
    assert_eq!(package.git_ok(&["status", "--porcelain", "--", "baselines"]), "");
}

/// A blessing blocked behind another holder of the baselines' lock said nothing for up to ten
/// minutes: it now says what it waits for, and goes on once the lock is released.
#[test]
fn a_blessing_waiting_for_the_lock_says_so_and_goes_on_when_it_is_released() {
    let package = Package::git();
    package.cpu_record("rec.json");
    let lock_path = package.path(".git/convbench-baselines.lock");
    let lock = std::fs::File::create(&lock_path).expect("create the lock file");
    lock.lock().expect("hold the baselines' lock");
    let update = std::process::Command::new(assert_cmd::cargo::cargo_bin("cargo-convbench"))
        .current_dir(package.root())
        .arg("--manifest-path")
        .arg(package.path("Cargo.toml"))
        .args(["baseline", "update", "--from", "rec.json"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("baseline update");
    // Past the notice's second, then let it go.
    std::thread::sleep(std::time::Duration::from_secs(3));
    drop(lock);
    let output = update.wait_with_output().expect("baseline update ends");
    assert_code(&output, 0);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("waiting for the lock on the baselines")
            && stderr.contains("convbench-baselines.lock"),
        "{stderr}"
    );
    assert!(stdout_of(&output).contains("lenet/train/b1/f32/cpu"));
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
fn a_set_not_at_the_base_names_the_sets_that_are() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args([
            "compare",
            "--results",
            "rec.json",
            "--baseline-rev",
            "HEAD",
            "--set",
            "nosuch",
        ])
        .output()
        .expect("compare");
    // The note heads the comparison on stdout.
    let stdout = stdout_of(&output);
    assert!(
        stdout.contains("nosuch.json at HEAD")
            && stdout.contains("this adapter's one set there is default; pass one with --set"),
        "{stdout}"
    );
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
    // Where the baseline came from, as the table and Markdown say it.
    let origin = json["baseline"].as_str().expect("the baseline's origin");
    assert!(
        markdown.contains(&format!("baseline: {origin}")),
        "{origin}\n{markdown}"
    );
    // The notes are always there, an empty list when there are none.
    assert!(json["notes"].is_array(), "{json}");
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
    let series: Vec<serde_json::Value> = serde_json::from_str(&history("json")).expect("history JSON");
    assert_eq!(series.len(), 1, "one series per benchmark and phase: {series:?}");
    let id = &record.benchmarks[0].id;
    assert_eq!(series[0]["benchmark"], id.as_str());
    assert_eq!(series[0]["phase"], "total");
    let points = series[0]["points"].as_array().expect("points");
    assert_eq!(points.len(), 2, "{points:?}");
    let first = points[0]["median_ns"].as_f64().expect("median");
    let second = points[1]["median_ns"].as_f64().expect("median");
    assert!(
        (second / first - 1.4).abs() < 0.01,
        "oldest first: {first} then {second}"
    );
    // The second blessing keeps both runs: the spread between kept runs covers both medians.
    assert_eq!(points[1]["run_spread"]["count"], 2);
    assert_eq!(points[1]["run_spread"]["min_ns"].as_f64(), Some(first));
    assert_eq!(points[1]["run_spread"]["max_ns"].as_f64(), Some(second));
    let rounds = &points[1]["round_spread"];
    assert!(rounds["min_ns"].as_f64() <= Some(second) && rounds["max_ns"].as_f64() >= Some(second));
    assert_eq!(
        series[0]["change_points"],
        serde_json::json!([]),
        "two points are too few"
    );
    let table = history("table");
    assert_eq!(table.matches(id.as_str()).count(), 2, "{table}");
    // A phase as tables show it (`grad-input`) or as ids write it (`grad_input`).
    for spelling in ["grad-input", "grad_input"] {
        let output = package
            .convbench()
            .args(["history", "--format", "json", "--phase", spelling])
            .output()
            .expect("history --phase");
        assert_code(&output, 0);
        let series: serde_json::Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
        assert_eq!(series[0]["phase"], "grad_input", "{spelling}: {series}");
    }
}

/// Between-run noise of ten blessed runs: log-normal draws with a CV of 3.7%, the spread
/// between run medians of an idle 2-core machine.
const RUN_NOISE: [f64; 10] = [
    1.046, 0.958, 1.012, 0.967, 1.038, 0.981, 1.052, 0.949, 1.021, 0.994,
];

/// Blesses ten runs of the tiny cpu benchmark with `baseline update --commit`, run `i` scaled
/// by `RUN_NOISE[i]` and by `step` from the sixth run on; returns the package and the commits.
pub fn ten_blessed_runs(step: f64) -> (Package, Vec<String>) {
    let package = Package::git();
    let record = package.cpu_record("rec.json");
    let commits = RUN_NOISE
        .iter()
        .enumerate()
        .map(|(run, noise)| {
            let factor = noise * if run >= 5 { step } else { 1.0 };
            write_record(&package.path("run.json"), &scaled(record.clone(), factor));
            package.bless("run.json");
            package.head()
        })
        .collect();
    (package, commits)
}

/// The change points `history --format json` lists: (commit, relative step) of every series.
fn listed_change_points(package: &Package) -> Vec<(String, f64)> {
    let output = package
        .convbench()
        .args(["history", "--format", "json"])
        .output()
        .expect("history");
    assert_code(&output, 0);
    let series: Vec<serde_json::Value> = serde_json::from_str(&stdout_of(&output)).expect("history JSON");
    assert!(!series.is_empty());
    series
        .iter()
        .flat_map(|s| s["change_points"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["commit"].as_str().unwrap_or_default().to_string(),
                c["relative_step"].as_f64().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn history_finds_a_15_percent_step_at_the_sixth_blessing_and_no_other() {
    let (package, commits) = ten_blessed_runs(1.15);
    let found = listed_change_points(&package);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, commits[5], "{found:?}");
    assert!((found[0].1 - 0.15).abs() < 0.05, "{found:?}");
    let output = package.convbench().arg("history").output().expect("history");
    assert_code(&output, 0);
    let table = stdout_of(&output);
    assert!(
        table.contains("change points:") && table.contains(&commits[5][..10]),
        "{table}"
    );
    // A cpu benchmark: `bisect` times wgpu only, so no command that would time something else.
    assert!(!table.contains("cargo convbench bisect"), "{table}");
}

#[test]
fn history_of_a_flat_noisy_baseline_lists_no_change_point() {
    let (package, _) = ten_blessed_runs(1.0);
    assert_eq!(listed_change_points(&package), []);
}

/// `text` with every commit id of `commits` (full, 10 and 7 digits) named by its run, the
/// y-axis ticks (their count follows the timings) left out, and every number (digits with an
/// optional decimal part) replaced by `#`: the structure of a chart without its timings,
/// coordinates, dates or hashes, which differ from run to run.
fn without_timings(text: &str, commits: &[String]) -> String {
    let mut text: String = text
        .lines()
        .filter(|line| !line.contains("dominant-baseline=\"middle\""))
        .map(|line| format!("{line}\n"))
        .collect();
    for (run, commit) in commits.iter().enumerate() {
        for length in [40, 10, 7] {
            text = text.replace(&commit[..length], &format!("<commit of run {}>", run + 1));
        }
    }
    let mut filtered = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if !ch.is_ascii_digit() {
            filtered.push(ch);
            continue;
        }
        while chars.peek().is_some_and(|c| c.is_ascii_digit() || *c == '.') {
            chars.next();
        }
        filtered.push('#');
    }
    filtered
}

#[test]
fn history_html_and_svg_write_a_well_formed_dashboard_with_the_step_marked() {
    let (package, commits) = ten_blessed_runs(1.15);
    let output = package
        .convbench()
        .args(["history", "--html", "site", "--svg", "charts"])
        .args(["--commit-url", "https://example.com/commit/{commit}"])
        .output()
        .expect("history --html --svg");
    assert_code(&output, 0);
    let html = std::fs::read_to_string(package.path("site/index.html")).expect("index.html");
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let page = roxmltree::Document::parse_with_options(&html, options).expect("the page is XML");
    let sections = page.descendants().filter(|n| n.has_tag_name("section")).count();
    assert!(sections >= 2, "a chart for every measured phase: {sections}");
    assert!(
        html.contains(&format!("https://example.com/commit/{}", commits[5])),
        "the step's commit is linked"
    );
    assert!(
        !html.contains(" src=") && !html.contains("<link"),
        "nothing is loaded"
    );

    let mut names: Vec<String> = std::fs::read_dir(package.path("charts"))
        .expect("charts")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), sections, "{names:?}");
    for name in &names {
        let svg = std::fs::read_to_string(package.path(&format!("charts/{name}"))).expect("svg");
        let chart = roxmltree::Document::parse(&svg).expect("each SVG is XML");
        let points = chart
            .descendants()
            .filter(|n| n.attribute("class") == Some("point"))
            .count();
        assert_eq!(points, 10, "{name}");
    }
    let total = names
        .iter()
        .find(|name| name.ends_with("__total.svg"))
        .expect("the total chart");
    let svg = std::fs::read_to_string(package.path(&format!("charts/{total}"))).expect("svg");
    insta::assert_snapshot!("history_total_svg", without_timings(&svg, &commits));
}

#[test]
fn history_rejects_an_unknown_phase_a_script_url_and_a_bad_alpha_with_exit_2() {
    let (package, _) = Package::blessed();
    for (args, said) in [
        (&["--phase", "backward"][..], "unknown phase"),
        (
            &["--html", "site", "--commit-url", "javascript:alert(1)//{commit}"][..],
            "not an http(s) URL",
        ),
        (&["--alpha", "1.5"][..], "--alpha"),
    ] {
        let output = package
            .convbench()
            .arg("history")
            .args(args)
            .output()
            .expect("history");
        assert_code(&output, 2);
        assert!(
            stderr_of(&output).contains(said),
            "{args:?}: {}",
            stderr_of(&output)
        );
    }
    assert!(!package.path("site").exists(), "nothing is written on bad input");
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

/// A benchmark whose fields were edited apart from its id would be reported, charted and blessed
/// under another benchmark's name: every command that reads a record refuses it.
#[test]
fn a_record_whose_fields_contradict_its_id_is_refused_by_every_reader() {
    let (package, mut record) = Package::blessed();
    let id = record.benchmarks[0].id.clone();
    record.benchmarks[0].batch = 0;
    write_record(&package.path("edited.json"), &record);
    for args in [
        &["compare", "--results", "edited.json", "--baseline-rev", "HEAD"][..],
        &["report", "edited.json"],
        &["plot", "edited.json", "--output", "chart.svg"],
        &["baseline", "update", "--from", "edited.json"],
    ] {
        let output = package.convbench().args(args).output().expect("convbench");
        assert_code(&output, 2);
        let stderr = stderr_of(&output);
        assert!(
            stderr.contains(&format!(
                "{id}: its model, stage, batch, precision and backend make the id"
            )) && stderr.contains(&format!("{id} has batch 0")),
            "{args:?}: {stderr}"
        );
    }
    assert!(!package.path("chart.svg").exists());
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

/// `baseline update` without `--from` blesses three fresh runs of a benchmark the baseline has
/// never seen (so its drift between runs is known at once), one run of a known one, and
/// `--runs N` exactly N; `--runs 0` is refused before anything runs.
#[test]
fn baseline_update_blesses_several_runs_of_a_new_benchmark() {
    let package = Package::git();
    let update = |extra: &[&str]| {
        package
            .convbench()
            .args(["baseline", "update", "--backend", "cpu", "--quiet"])
            .args(tiny(&[("--samples", "5"), ("--rounds", "2")]))
            .args(extra)
            .output()
            .expect("baseline update")
    };
    let runs_of = || {
        let blessed = std::fs::read_dir(package.path("baselines"))
            .expect("baselines/")
            .flatten()
            .map(|slug| read_record(&slug.path().join("default.json")))
            .next()
            .expect("one adapter");
        blessed.benchmarks[0].run_sizes()
    };
    let output = update(&[]);
    assert_code(&output, 0);
    assert_eq!(runs_of(), [2, 2, 2], "{}", stdout_of(&output));
    let output = update(&[]);
    assert_code(&output, 0);
    assert_eq!(runs_of().len(), 4, "a known benchmark gets one run");
    let output = update(&["--runs", "2"]);
    assert_code(&output, 0);
    assert_eq!(runs_of().len(), 6);
    let output = update(&["--runs", "0"]);
    assert_code(&output, 2);
    assert!(stderr_of(&output).contains("--runs 0"), "{}", stderr_of(&output));
    assert_eq!(runs_of().len(), 6, "nothing blessed");
}
