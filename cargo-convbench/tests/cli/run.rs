//! `run` on the cpu backend, and `report` and `plot` of the records it writes.

use crate::support::{
    TRAIN_PHASES, assert_code, cargo_convbench, convbench, parse_record, raw_samples, read_record, scaled,
    stderr_of, stdout_of, tiny, write_record,
};
use convbench::results::{FORMAT_VERSION, RunRecord};
use std::path::{Path, PathBuf};

/// The checked-in record of format version 1 (a fixture: fixed adapter, samples and time).
fn fixture_v1() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/record-v1.json")
}

/// Runs the tiny cpu benchmark at batches 1 and 2 with `--out out`, returning the record.
fn run_to_file(out: &Path) -> RunRecord {
    let output = convbench()
        .args(["run", "--backend", "cpu", "--quiet"])
        .args(tiny(&[("--batch", "1,2")]))
        .arg("--out")
        .arg(out)
        .output()
        .expect("run");
    assert_code(&output, 0);
    read_record(out)
}

#[test]
fn run_json_is_a_run_record_with_every_phase_and_raw_samples() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let output = cargo_convbench()
        .args(["run", "--backend", "cpu"])
        .args(tiny(&[("--batch", "1,2")]))
        .args(["--format", "json", "--out"])
        .arg(&out)
        .output()
        .expect("run");
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    let record = parse_record(&stdout, "stdout of run --format json");
    assert_eq!(record.format_version, FORMAT_VERSION);
    let ids: Vec<&str> = record.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["lenet/train/b1/f32/cpu", "lenet/train/b2/f32/cpu"]);
    for benchmark in &record.benchmarks {
        assert_eq!(benchmark.backend, "cpu");
        assert_eq!(benchmark.adapter.backend, "cpu");
        let phases: Vec<&str> = benchmark.phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(phases, TRAIN_PHASES, "{}", benchmark.id);
        for phase in &benchmark.phases {
            assert_eq!(
                phase.samples_ns.len(),
                3,
                "raw samples of {} {}",
                benchmark.id,
                phase.phase.as_str()
            );
            assert!(phase.summary.median_ns > 0.0, "{} {:?}", benchmark.id, phase);
        }
    }
    assert_eq!(record.settings.samples, 3);
    assert_eq!(
        std::fs::read_to_string(&out).expect("--out was written"),
        stdout,
        "--out holds what --format json prints"
    );
}

#[test]
fn run_out_writes_the_record_while_stdout_shows_the_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let output = convbench()
        .args(["run", "--backend", "cpu"])
        .args(tiny(&[]))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run");
    assert_code(&output, 0);
    let table = stdout_of(&output);
    assert!(
        table.contains("lenet") && table.contains("total ms"),
        "a table on stdout:\n{table}"
    );
    assert!(!table.trim_start().starts_with('{'), "JSON on stdout:\n{table}");
    let record = read_record(&out);
    let ids: Vec<&str> = record.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["lenet/train/b1/f32/cpu"]);
    assert_eq!(record.benchmarks[0].phases.len(), TRAIN_PHASES.len());
}

#[test]
fn run_repeated_batches_and_models_are_benchmarked_once() {
    let output = convbench()
        .args(["run", "--backend", "cpu", "--quiet", "--format", "json"])
        .args(tiny(&[("--model", "lenet,lenet"), ("--batch", "1,1")]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    let record = parse_record(&stdout_of(&output), "run");
    let ids: Vec<&str> = record.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["lenet/train/b1/f32/cpu"]);
}

#[test]
fn report_renders_a_saved_record_as_csv_md_and_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let record = run_to_file(&out);
    let report = |format: &str| {
        let output = convbench()
            .arg("report")
            .arg(&out)
            .args(["--format", format])
            .output()
            .expect("report");
        assert_code(&output, 0);
        stdout_of(&output)
    };
    let csv = report("csv");
    let header = csv.lines().next().expect("a CSV header");
    assert!(
        header.contains("benchmark_id") && header.contains("median_ns"),
        "{header}"
    );
    let rows = csv.lines().skip(1).filter(|l| !l.is_empty()).count();
    assert_eq!(
        rows,
        2 * TRAIN_PHASES.len(),
        "a row per benchmark and phase:\n{csv}"
    );
    for benchmark in &record.benchmarks {
        assert!(
            csv.contains(&benchmark.id),
            "{} missing from\n{csv}",
            benchmark.id
        );
    }

    let markdown = report("md");
    assert!(
        markdown.lines().any(|l| l.starts_with("| model |")),
        "a Markdown table:\n{markdown}"
    );
    assert!(markdown.contains("| lenet |"), "{markdown}");

    let table = report("table");
    assert!(table.contains("lenet") && table.contains("total ms"), "{table}");

    let json = report("json");
    assert_eq!(
        raw_samples(&parse_record(&json, "report --format json")),
        raw_samples(&record)
    );
}

/// `--layers` with `--format md` dropped the per-layer tables without a word, and with csv
/// (which has no room for them) said nothing either: md shows them, `run` says where the CSV
/// of layers is, and `report` refuses csv and a record without layers.
#[test]
fn layers_show_in_markdown_and_csv_says_where_they_are() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let output = convbench()
        .args(["run", "--backend", "cpu", "--layers", "--format", "md"])
        .args(tiny(&[]))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run");
    assert_code(&output, 0);
    let markdown = stdout_of(&output);
    assert!(markdown.contains("**lenet/train/b1/f32/cpu**"), "{markdown}");
    assert!(markdown.lines().any(|l| l.starts_with("| layer |")), "{markdown}");
    let output = convbench()
        .args(["run", "--backend", "cpu", "--layers", "--format", "csv"])
        .args(tiny(&[]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    assert!(
        stderr_of(&output).contains("--rows layer --format csv"),
        "{}",
        stderr_of(&output)
    );
    let report = |args: &[&str], file: &Path| {
        convbench()
            .arg("report")
            .arg(file)
            .args(args)
            .output()
            .expect("report")
    };
    let output = report(&["--layers", "--format", "md"], &out);
    assert_code(&output, 0);
    assert!(stdout_of(&output).lines().any(|l| l.starts_with("| layer |")));
    let output = report(&["--layers", "--format", "csv"], &out);
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("--pivot --rows layer"),
        "{}",
        stderr_of(&output)
    );
    let plain = dir.path().join("plain.json");
    run_to_file(&plain);
    let output = report(&["--layers"], &plain);
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("no per-layer breakdown"),
        "{}",
        stderr_of(&output)
    );
}

/// The record of an interrupted run says "incomplete" in a table, Markdown and JSON; a CSV,
/// a dashboard's JSON and a pivot cannot, so `report` warns on stderr.
#[test]
fn report_warns_where_its_format_cannot_mark_an_incomplete_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let mut record = run_to_file(&out);
    record.complete = false;
    write_record(&out, &record);
    for (args, warns) in [
        (&["--format", "csv"][..], true),
        // A warning, not a notice: --quiet keeps it.
        (&["--format", "csv", "--quiet"], true),
        (&["--format", "bmf"], true),
        (&["--pivot"], true),
        (&["--format", "table"], false),
        (&["--format", "md"], false),
    ] {
        let output = convbench()
            .arg("report")
            .arg(&out)
            .args(args)
            .output()
            .expect("report");
        assert_code(&output, 0);
        assert_eq!(
            stderr_of(&output).contains("comes from an interrupted run"),
            warns,
            "{args:?}: {}",
            stderr_of(&output)
        );
    }
}

/// `plot` of an interrupted record warns as `report` does (a chart cannot say so), and its
/// `--benchmark`, which only `--kind layers` reads, is refused with another kind.
#[test]
fn plot_warns_of_an_incomplete_record_and_refuses_a_benchmark_it_would_ignore() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let mut record = run_to_file(&out);
    record.complete = false;
    write_record(&out, &record);
    let chart = dir.path().join("chart.svg");
    let output = convbench()
        .arg("plot")
        .arg(&out)
        .args(["--quiet", "--output"])
        .arg(&chart)
        .output()
        .expect("plot");
    assert_code(&output, 0);
    assert!(
        stderr_of(&output).contains("comes from an interrupted run"),
        "{}",
        stderr_of(&output)
    );
    let output = convbench()
        .arg("plot")
        .arg(&out)
        .args([
            "--kind",
            "phases",
            "--benchmark",
            &record.benchmarks[0].id,
            "--output",
        ])
        .arg(dir.path().join("phases.svg"))
        .output()
        .expect("plot");
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("--benchmark picks the benchmark that `--kind layers` breaks down"),
        "{}",
        stderr_of(&output)
    );
    assert!(!dir.path().join("phases.svg").exists());
}

#[test]
fn report_reads_the_checked_in_version_1_record() {
    let render = |format: &str| {
        let output = cargo_convbench()
            .arg("report")
            .arg(fixture_v1())
            .args(["--format", format])
            .output()
            .expect("report");
        assert_code(&output, 0);
        stdout_of(&output)
    };
    insta::assert_snapshot!("report_v1_csv", render("csv"));
    insta::assert_snapshot!("report_v1_md", render("md"));
}

#[test]
fn report_exports_a_record_for_bencher_and_github_action_benchmark() {
    let render = |args: &[&str]| {
        cargo_convbench()
            .arg("report")
            .arg(fixture_v1())
            .args(args)
            .output()
            .expect("report")
    };
    let record = parse_record(
        &std::fs::read_to_string(fixture_v1()).expect("fixture"),
        "fixture",
    );
    let phases: usize = record.benchmarks.iter().map(|b| b.phases.len()).sum();
    let bmf = render(&["--format", "bmf"]);
    assert_code(&bmf, 0);
    let bmf: serde_json::Value = serde_json::from_str(&stdout_of(&bmf)).expect("BMF is JSON");
    let benchmarks = bmf.as_object().expect("an object of benchmarks");
    assert_eq!(benchmarks.len(), phases, "a benchmark per benchmark and phase");
    for (name, measures) in benchmarks {
        assert!(
            measures["latency"]["value"].as_f64().is_some(),
            "{name}: {measures}"
        );
    }
    let action = render(&["--format", "github-action-benchmark"]);
    assert_code(&action, 0);
    let entries: serde_json::Value = serde_json::from_str(&stdout_of(&action)).expect("JSON");
    let entries = entries.as_array().expect("an array");
    assert_eq!(entries.len(), phases);
    assert!(
        entries
            .iter()
            .all(|entry| entry["name"].is_string() && entry["unit"] == "ns" && entry["value"].is_number())
    );

    let pivot = render(&["--format", "bmf", "--pivot"]);
    assert_code(&pivot, 2);
    assert!(
        stderr_of(&pivot).contains("without --pivot; --pivot is for table, md, csv and json"),
        "{}",
        stderr_of(&pivot)
    );
    let layers = render(&["--format", "bmf", "--layers"]);
    assert_code(&layers, 2);
    assert!(
        stderr_of(&layers).contains("--layers is for table and md (json holds the layers already)"),
        "{}",
        stderr_of(&layers)
    );
    let unknown = render(&["--format", "html"]);
    assert_code(&unknown, 2);
    assert!(
        stderr_of(&unknown).contains("use one of table, json, csv, md, bmf, github-action-benchmark"),
        "{}",
        stderr_of(&unknown)
    );
}

#[test]
fn report_json_reproduces_the_record_byte_for_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("rec.json");
    // Samples whose standard deviation takes all 17 digits of an f64: the summaries are derived
    // from the samples on load, so the record is the one `cargo convbench run` would write.
    let mut record = crate::support::parse_record(
        &std::fs::read_to_string(fixture_v1()).expect("fixture"),
        "fixture",
    );
    let forward = &mut record.benchmarks[0].phases[0];
    forward.samples_ns = vec![2_000_000, 2_020_000, 25_523_569];
    forward.summary = convbench::results::Summary::of(&forward.samples_ns).expect("samples");
    let stddev = format!("{:?}", forward.summary.stddev_ns);
    let text = record.to_json();
    assert!(stddev.len() >= 17 && text.contains(&stddev), "{stddev}");
    std::fs::write(&path, &text).expect("write");
    let output = convbench()
        .arg("report")
        .arg(&path)
        .args(["--format", "json"])
        .output()
        .expect("report");
    assert_code(&output, 0);
    assert_eq!(stdout_of(&output), text);
}

#[test]
fn plot_writes_an_svg() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    run_to_file(&out);
    let svg = dir.path().join("x.svg");
    let output = convbench()
        .arg("plot")
        .arg(&out)
        .arg("-o")
        .arg(&svg)
        .output()
        .expect("plot");
    assert_code(&output, 0);
    let text = std::fs::read_to_string(&svg).expect("the SVG was written");
    assert!(
        text.contains("<svg") && text.trim_end().ends_with("</svg>"),
        "not an SVG:\n{text}"
    );
    assert!(text.contains("lenet"), "the chart names the model");
}

/// A chart written over its own record would destroy the record: refused, the record intact.
#[test]
fn plot_refuses_to_write_over_one_of_its_records() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    run_to_file(&out);
    let before = std::fs::read(&out).expect("the record");
    let output = convbench()
        .arg("plot")
        .arg(&out)
        .arg("-o")
        .arg(dir.path().join(".").join("rec.json"))
        .output()
        .expect("plot");
    assert_code(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("one of this command's inputs"), "{stderr}");
    assert_eq!(
        std::fs::read(&out).expect("the record"),
        before,
        "the record is untouched"
    );
}

/// `run --out` naming a file the run reads (a shape list, the manifest) is exit 2 before
/// anything runs, and the file is untouched.
#[test]
fn run_refuses_to_write_its_record_over_one_of_its_inputs() {
    let package = crate::support::Package::plain();
    std::fs::write(package.path("s.csv"), "2,3,8,8,4,3,3,1,1\n").expect("write");
    let manifest = std::fs::read(package.path("Cargo.toml")).expect("read");
    for (out, extra) in [
        ("s.csv", vec!["--shapes", "s.csv"]),
        ("./Cargo.toml", vec!["--model", "lenet"]),
    ] {
        let output = package
            .convbench()
            .args([
                "run",
                "--backend",
                "cpu",
                "--batch",
                "1",
                "--samples",
                "1",
                "--rounds",
                "1",
            ])
            .args(["--warmup", "0", "--warmup-ms", "0", "--out", out])
            .args(&extra)
            .output()
            .expect("run");
        assert_code(&output, 2);
        let stderr = stderr_of(&output);
        assert!(
            stderr.contains("--out") && stderr.contains("one of this command's inputs"),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(package.path("s.csv")).expect("read"),
        "2,3,8,8,4,3,3,1,1\n"
    );
    assert_eq!(std::fs::read(package.path("Cargo.toml")).expect("read"), manifest);
}

/// Output lost to a full disk is not success: exit 3, naming stdout (a closed pipe stays 0).
#[cfg(target_os = "linux")]
#[test]
fn a_report_that_cannot_reach_stdout_exits_3() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    run_to_file(&out);
    for format in ["table", "csv", "json"] {
        let full = std::fs::File::create("/dev/full").expect("/dev/full");
        // assert_cmd captures stdout; std's Command takes the file given.
        let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("cargo-convbench"))
            .args(["report", "--format", format])
            .arg(&out)
            .env_remove("GITHUB_ACTIONS")
            .stdout(full)
            .output()
            .expect("report");
        assert_code(&output, 3);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("could not write the output to stdout"),
            "{format}: {stderr}"
        );
    }
}

/// A record that shares no benchmark with its baseline passes, but says nothing was compared.
#[test]
fn compare_with_nothing_in_common_warns_that_nothing_was_compared() {
    let dir = tempfile::tempdir().expect("temp dir");
    let baseline = dir.path().join("baseline.json");
    run_to_file(&baseline);
    let current = dir.path().join("current.json");
    let output = convbench()
        .args(["run", "--backend", "cpu", "--quiet"])
        .args(tiny(&[("--batch", "3")]))
        .arg("--out")
        .arg(&current)
        .output()
        .expect("run");
    assert_code(&output, 0);
    let output = convbench()
        .arg("compare")
        .arg("--results")
        .arg(&current)
        .arg("--baseline-file")
        .arg(&baseline)
        .output()
        .expect("compare");
    assert_code(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning: nothing was compared"), "{stderr}");
    let output = convbench()
        .arg("compare")
        .arg("--results")
        .arg(&baseline)
        .arg("--baseline-file")
        .arg(&baseline)
        .output()
        .expect("compare");
    assert_code(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("nothing was compared"), "{stderr}");
}

/// Elements `<tag class="class">` of an SVG, which must be well-formed XML.
fn count_in_svg(svg: &str, tag: &str, class: &str) -> usize {
    let document = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"));
    document
        .descendants()
        .filter(|node| node.has_tag_name(tag) && node.attribute("class") == Some(class))
        .count()
}

#[test]
fn plot_kind_draws_each_chart_of_a_record_and_a_peer_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let own = dir.path().join("cpu.json");
    let output = convbench()
        .args(["run", "--backend", "cpu", "--quiet", "--layers", "--out"])
        .arg(&own)
        .args(tiny(&[("--batch", "1,2"), ("--precision", "f32,f16")]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    let record = read_record(&own);
    assert_eq!(record.benchmarks.len(), 4, "2 batches x 2 precisions");
    // A peer's record of the same benchmarks, as a framework run outside convbench writes it.
    let peer = dir.path().join("peer.json");
    let mut peer_record = scaled(record.clone(), 0.5);
    for benchmark in &mut peer_record.benchmarks {
        benchmark.backend = "burn-wgpu".into();
        benchmark.id = benchmark.id.replace("/cpu", "/burn-wgpu");
    }
    write_record(&peer, &peer_record);
    let layers: std::collections::BTreeSet<&str> = record.benchmarks[0]
        .layers
        .iter()
        .map(|layer| layer.layer.as_str())
        .collect();
    // (kind, element, class, how many): 2 precisions x 2 backends of lines with 2 batches
    // each; 8 training steps; 4 pairs of backends; 4 pairs of precisions; one bar per layer.
    let expected = [
        ("throughput", "g", "series", 4),
        ("throughput", "circle", "point", 8),
        ("phases", "g", "bar", 8),
        ("backends", "g", "bar", 8),
        ("precision", "g", "bar", 8),
        ("layers", "g", "bar", layers.len()),
    ];
    for (kind, tag, class, count) in expected {
        let svg_path = dir.path().join(format!("{kind}.svg"));
        let output = convbench()
            .arg("plot")
            .arg(&own)
            .arg(&peer)
            .args(["--kind", kind, "-o"])
            .arg(&svg_path)
            .output()
            .expect("plot");
        assert_code(&output, 0);
        let svg = std::fs::read_to_string(&svg_path).expect("the SVG was written");
        assert_eq!(
            count_in_svg(&svg, tag, class),
            count,
            "{kind}: <{tag} class={class}>\n{svg}"
        );
        assert!(
            svg.contains("median of 3 timed iterations each")
                && svg.contains("(cpu), synchronized wall clock"),
            "{kind}: the title says how and where it was measured:\n{svg}"
        );
    }
    let backends = std::fs::read_to_string(dir.path().join("backends.svg")).expect("written");
    assert!(backends.contains("2.00x burn-wgpu"), "{backends}");
}

#[test]
fn stage_takes_a_list_and_runs_every_benchmark_at_each() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("both.json");
    let output = convbench()
        .args([
            "run",
            "--backend",
            "cpu",
            "--quiet",
            "--stage",
            "eval,train",
            "--out",
        ])
        .arg(&out)
        .args(tiny(&[("--batch", "1,2")]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    let record = read_record(&out);
    let ids: Vec<&str> = record.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "lenet/eval/b1/f32/cpu",
            "lenet/eval/b2/f32/cpu",
            "lenet/train/b1/f32/cpu",
            "lenet/train/b2/f32/cpu"
        ]
    );
    let phases = |index: usize| record.benchmarks[index].phases.len();
    assert!(
        phases(0) < phases(2),
        "an eval benchmark times fewer phases than a train step"
    );
}

#[test]
fn plot_kind_without_its_data_exits_2_naming_the_run_flags() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let output = convbench()
        .args(["run", "--backend", "cpu", "--quiet", "--stage", "eval", "--out"])
        .arg(&out)
        .args(tiny(&[]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    let svg = dir.path().join("x.svg");
    for (kind, fix) in [
        ("phases", "--stage train"),
        ("backends", "--backend wgpu,cpu"),
        ("precision", "--precision f32,f16"),
        ("layers", "--layers"),
        (
            "pie",
            "use one of throughput, phases, backends, precision, layers",
        ),
    ] {
        let output = convbench()
            .arg("plot")
            .arg(&out)
            .args(["--kind", kind, "-o"])
            .arg(&svg)
            .output()
            .expect("plot");
        assert_code(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(fix), "{kind}: {stderr}");
        assert!(!svg.exists(), "{kind}: no chart is written");
    }
}

#[test]
fn cpu_backend_emulates_f16() {
    let output = convbench()
        .args([
            "run",
            "--backend",
            "cpu",
            "--precision",
            "f16",
            "--format",
            "json",
        ])
        .args(tiny(&[]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    let record = parse_record(&stdout_of(&output), "run --precision f16");
    let ids: Vec<&str> = record.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["lenet/train/b1/f16/cpu"]);
    assert!(
        record.benchmarks[0].verified,
        "f16 is checked against the reference"
    );
}

/// Starts a cpu sweep whose second benchmark takes long, waits until `--out` holds the first
/// one (it is saved after every benchmark), sends `signal` and returns the exit code and the
/// record left behind.
#[cfg(unix)]
fn interrupt_a_sweep(signal: &str) -> (Option<i32>, RunRecord) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("partial.json");
    let binary = assert_cmd::cargo::cargo_bin("cargo-convbench");
    let mut child = std::process::Command::new(binary)
        .args([
            "run",
            "--backend",
            "cpu",
            "--quiet",
            "--model",
            "lenet,alexnet",
            "--batch",
            "1",
        ])
        .args([
            "--samples",
            "500",
            "--warmup",
            "0",
            "--warmup-ms",
            "0",
            "--format",
            "json",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn run");
    let started = std::time::Instant::now();
    while !out.exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(300),
            "lenet never finished"
        );
        if let Some(status) = child.try_wait().expect("poll") {
            panic!("the sweep ended before it was interrupted: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let status = child.wait().expect("wait");
    (status.code(), read_record(&out))
}

#[cfg(unix)]
#[test]
fn sigint_during_a_sweep_keeps_the_finished_benchmarks_and_exits_130() {
    let (code, record) = interrupt_a_sweep("-INT");
    assert_eq!(code, Some(130));
    assert!(!record.complete, "the record says it is incomplete");
    assert_eq!(record.benchmarks[0].id, "lenet/train/b1/f32/cpu");
    assert!(record.benchmarks.iter().all(|b| !b.id.starts_with("alexnet")));
}

#[cfg(unix)]
#[test]
fn sigterm_during_a_sweep_keeps_the_finished_benchmarks_and_exits_143() {
    let (code, record) = interrupt_a_sweep("-TERM");
    assert_eq!(code, Some(143));
    assert!(!record.complete);
    assert_eq!(record.benchmarks.len(), 1);
}

/// `--out` is written like a baseline: mode 0666 less the umask (0644 under umask 022), not
/// the 0600 of a temporary file.
#[cfg(unix)]
#[test]
fn out_file_gets_the_mode_the_umask_gives() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rec.json");
    let binary = assert_cmd::cargo::cargo_bin("cargo-convbench");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 022 && exec \"$0\" run --backend cpu --quiet --model lenet --batch 1 --samples 1 --warmup 0 --warmup-ms 0 --out \"$1\" > /dev/null")
        .arg(&binary)
        .arg(&out)
        .status()
        .expect("sh");
    assert!(status.success());
    let mode = std::fs::metadata(&out).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "mode {mode:o}");
}

#[test]
fn rounds_are_recorded_per_benchmark() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rounds.json");
    let output = convbench()
        .args(["run", "--backend", "cpu", "--quiet", "--out"])
        .arg(&out)
        .args(tiny(&[("--batch", "1,2"), ("--rounds", "3")]))
        .output()
        .expect("run");
    assert_code(&output, 0);
    let record = read_record(&out);
    assert_eq!(record.settings.rounds, 3);
    assert!(record.complete);
    for benchmark in &record.benchmarks {
        assert_eq!(benchmark.rounds, [3, 3, 3], "{}", benchmark.id);
        assert!(
            benchmark.phases.iter().all(|p| p.samples_ns.len() == 9),
            "{}",
            benchmark.id
        );
        assert_eq!(benchmark.round_medians(convbench::results::Phase::Total).len(), 3);
    }
}

#[test]
fn rounds_zero_is_a_usage_error() {
    let output = convbench()
        .args(["run", "--backend", "cpu", "--quiet"])
        .args(tiny(&[("--rounds", "0")]))
        .output()
        .expect("run");
    assert_code(&output, 2);
}

#[test]
fn report_pivots_two_records_of_different_backends_with_ratios() {
    let dir = tempfile::tempdir().expect("temp dir");
    let peer_path = dir.path().join("peer.json");
    let mut peer = scaled(read_record(&fixture_v1()), 0.5);
    for benchmark in &mut peer.benchmarks {
        benchmark.backend = "burn-wgpu".into();
        benchmark.id = benchmark.id.replace("/wgpu", "/burn-wgpu");
    }
    write_record(&peer_path, &peer);
    let pivot = |format: &str| {
        let output = convbench()
            .arg("report")
            .arg(fixture_v1())
            .arg(&peer_path)
            .args(["--pivot", "--columns", "backend,batch", "--ratio-to", "wgpu"])
            .args(["--format", format])
            .output()
            .expect("report --pivot");
        assert_code(&output, 0);
        stdout_of(&output)
    };
    let markdown = pivot("md");
    assert!(
        markdown.contains("| model | burn-wgpu b1 | burn-wgpu b2 | wgpu b1 | wgpu b2 |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("(0.50x)") && markdown.contains("this cell / the wgpu cell"),
        "{markdown}"
    );
    let table = pivot("table");
    assert!(table.contains("lenet") && table.contains("(0.50x)"), "{table}");
    let csv = pivot("csv");
    assert!(csv.starts_with("row,burn-wgpu b1 ms,"), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&pivot("json")).expect("pivot JSON");
    assert_eq!(json["ratio_to"], "wgpu");
    assert_eq!(json["cells"][0][0]["ratio"], 0.5);
}

/// Rounds are interleaved, so a stop in the first round leaves the benchmark before it short
/// too: `run --out` says how many rounds the record holds, not only which benchmark it stopped.
#[cfg(unix)]
#[test]
fn sigint_in_the_first_round_says_how_many_rounds_the_record_holds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("partial.json");
    let binary = assert_cmd::cargo::cargo_bin("cargo-convbench");
    let (code, rest) = crate::support::interrupt_when(
        std::process::Command::new(binary)
            .args(["run", "--backend", "cpu", "--model", "lenet", "--batch", "1,2"])
            .args([
                "--rounds",
                "3",
                "--samples",
                "100",
                "--warmup",
                "0",
                "--warmup-ms",
                "0",
                "--out",
            ])
            .arg(&out),
        |line| line.contains("lenet/b2") && line.contains("sample"),
        std::time::Duration::ZERO,
    );
    assert_eq!(code, Some(130), "{rest:?}");
    let rest = rest.join("\n");
    assert!(
        rest.contains("(incomplete: the run stopped early; its benchmarks hold 1 of the 3 rounds asked for)"),
        "{rest}"
    );
    assert_eq!(read_record(&out).benchmarks[0].round_sizes().len(), 1);
}

/// Interrupted before any benchmark finished, `run --out` said "the rounds that finished are in
/// the output" and wrote nothing: it says nothing was written.
#[cfg(unix)]
#[test]
fn sigint_before_any_benchmark_finished_says_out_was_not_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("partial.json");
    let binary = assert_cmd::cargo::cargo_bin("cargo-convbench");
    let (code, rest) = crate::support::interrupt_when(
        std::process::Command::new(binary)
            .args(["run", "--backend", "cpu", "--model", "alexnet", "--batch", "1"])
            .args([
                "--samples",
                "100000",
                "--warmup",
                "0",
                "--warmup-ms",
                "0",
                "--out",
            ])
            .arg(&out),
        |line| line.contains("sample"),
        std::time::Duration::ZERO,
    );
    assert_eq!(code, Some(130), "{rest:?}");
    assert!(!out.exists(), "nothing finished, nothing written");
    let rest = rest.join("\n");
    assert!(
        rest.contains(&format!(
            "no benchmark finished a round, so {} was not written",
            out.display()
        )),
        "{rest}"
    );
    assert!(!rest.contains("are in the output"), "{rest}");
}
