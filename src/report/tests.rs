use super::*;
use crate::compare::{CompareConfig, Comparison, PhaseComparison, Verdict};
use crate::model::Precision;
use crate::results::{
    AdapterFingerprint, BenchmarkResult, LayerResult, Phase, PhaseResult, RunSettings, Stage, Summary,
};
use std::str::FromStr;

/// The report error `error` is, or a panic saying what it is instead.
fn report_error(error: &crate::Error) -> &ReportError {
    match error {
        crate::Error::Report(error) => error,
        other => panic!("not a report error: {other:?}"),
    }
}

/// 2026-11-18T11:06:40Z.
const CREATED_UNIX_S: u64 = 1_795_000_000;

fn adapter() -> AdapterFingerprint {
    crate::results::fixtures::adapter("NVIDIA H100")
}

/// Five samples whose median is exactly `median_ns`.
fn samples(median_ns: u64) -> Vec<u64> {
    [0.998, 1.0, 1.003, 0.999, 1.006]
        .iter()
        .map(|factor| (median_ns as f64 * factor).round() as u64)
        .collect()
}

fn summary(samples_ns: &[u64]) -> Summary {
    Summary::of(samples_ns).expect("fixture samples are not empty")
}

fn phase(phase: Phase, median_ns: u64) -> PhaseResult {
    let samples_ns = samples(median_ns);
    PhaseResult {
        phase,
        summary: summary(&samples_ns),
        samples_ns,
    }
}

fn layer(name: &str, op: &str, phase: Phase, median_ns: u64, flops: u64, variant: &str) -> LayerResult {
    let samples_ns = samples(median_ns);
    LayerResult {
        layer: name.to_string(),
        op: op.to_string(),
        phase,
        summary: summary(&samples_ns),
        samples_ns,
        flops,
        variant: variant.to_string(),
        bytes: if flops == 0 { 2_000_000 } else { flops / 8 },
    }
}

/// A benchmark; `phases` are `(phase, median ns)`.
fn benchmark(
    model: &str,
    stage: Stage,
    batch: usize,
    precision: Precision,
    phases: &[(Phase, u64)],
    iteration_flops: u64,
    device_memory_bytes: u64,
) -> BenchmarkResult {
    let id = BenchmarkResult::make_id(model, stage, batch, precision, "wgpu");
    let phases = phases
        .iter()
        .map(|&(which, median_ns)| phase(which, median_ns))
        .collect();
    BenchmarkResult {
        model: model.to_string(),
        stage,
        batch,
        precision,
        params: 61_100_840,
        forward_flops: iteration_flops / 3,
        iteration_flops,
        device_memory_bytes,
        ..crate::results::fixtures::benchmark(&id, phases)
    }
}

fn train_phases(
    forward_ns: u64,
    grad_input_ns: u64,
    grad_params_ns: u64,
    update_ns: u64,
) -> Vec<(Phase, u64)> {
    let (loss_forward_ns, loss_backward_ns) = (40_000, 15_000);
    let total_ns =
        forward_ns + loss_forward_ns + loss_backward_ns + grad_input_ns + grad_params_ns + update_ns;
    vec![
        (Phase::Forward, forward_ns),
        (Phase::LossForward, loss_forward_ns),
        (Phase::LossBackward, loss_backward_ns),
        (Phase::GradInput, grad_input_ns),
        (Phase::GradParams, grad_params_ns),
        (Phase::Update, update_ns),
        (Phase::Total, total_ns),
    ]
}

/// AlexNet trained at batch 64 and 128 (with a layer breakdown at 64) and VGG-11 evaluated
/// in f16, all on one adapter.
fn record() -> RunRecord {
    let mut alexnet_64 = benchmark(
        "alexnet",
        Stage::Train,
        64,
        Precision::F32,
        &train_phases(8_730_000, 7_150_000, 7_310_000, 1_214_600),
        275_000_000_000,
        1_572_864_000,
    );
    alexnet_64.peak = Some(crate::roofline::Peak {
        flops_per_second: 20e12,
        bytes_per_second: 1.5e12,
    });
    alexnet_64.layers = vec![
        layer(
            "conv1",
            "conv2d",
            Phase::Forward,
            2_104_000,
            8_995_430_400,
            "direct",
        ),
        layer("relu1", "relu", Phase::Forward, 14_600, 0, "elementwise"),
        layer("pool1", "max_pool2d", Phase::Forward, 96_500, 0, "direct"),
        layer(
            "conv2",
            "conv2d",
            Phase::Forward,
            3_380_000,
            28_665_446_400,
            "winograd",
        ),
        layer("fc6", "linear", Phase::Forward, 1_020_000, 4_831_838_208, "tiled"),
        layer(
            "conv1",
            "conv2d",
            Phase::GradParams,
            2_950_000,
            8_995_430_400,
            "direct",
        ),
    ];
    let alexnet_128 = benchmark(
        "alexnet",
        Stage::Train,
        128,
        Precision::F32,
        &train_phases(17_440_000, 14_290_000, 14_620_000, 1_214_600),
        550_000_000_000,
        2_936_012_800,
    );
    let vgg11 = benchmark(
        "vgg11",
        Stage::Eval,
        64,
        Precision::F16,
        &[(Phase::Forward, 30_120_000), (Phase::Total, 30_250_000)],
        487_000_000_000,
        0,
    );
    RunRecord {
        format_version: crate::results::FORMAT_VERSION,
        convbench_version: "0.1.0".to_string(),
        created_unix_s: CREATED_UNIX_S,
        git_commit: Some("0123456789abcdef0123456789abcdef01234567".to_string()),
        git_dirty: Some(false),
        host: crate::results::Host {
            os: "linux".to_string(),
            arch: "x86_64".to_string(),
            cpus: 16,
        },
        settings: RunSettings {
            samples: 5,
            ..RunSettings::default()
        },
        benchmarks: vec![alexnet_64, alexnet_128, vgg11],
        complete: true,
    }
}

/// A record with one batch size per model, so that the chart is a bar chart.
fn one_batch_record() -> RunRecord {
    let mut record = record();
    record.benchmarks.remove(0);
    record
}

fn row(
    benchmark_id: &str,
    phase: Phase,
    medians_ms: (Option<f64>, Option<f64>),
    ci: Option<(f64, f64)>,
    verdict: Verdict,
) -> PhaseComparison {
    let (baseline_median_ns, current_median_ns) =
        (medians_ms.0.map(|ms| ms * 1e6), medians_ms.1.map(|ms| ms * 1e6));
    let change = match (baseline_median_ns, current_median_ns, verdict) {
        (_, _, Verdict::Incomparable) => None,
        (Some(baseline), Some(current), _) => Some(current / baseline - 1.0),
        _ => None,
    };
    PhaseComparison {
        benchmark_id: benchmark_id.to_string(),
        phase,
        baseline_median_ns,
        current_median_ns,
        change,
        ci,
        p_value: ci.map(|_| 0.01),
        threshold: 0.05,
        verdict,
        adapter_label: adapter().label(),
        evidence: None,
    }
}

/// One row of every verdict, two regressions, in the order `compare` would give.
fn comparison() -> Comparison {
    const ALEXNET: &str = "alexnet/train/b128/f32/wgpu";
    const VGG: &str = "vgg11/eval/b64/f16/wgpu";
    let mut incomparable = row(
        "resnet50/train/b32/f32/wgpu",
        Phase::Total,
        (Some(120.0), Some(80.0)),
        None,
        Verdict::Incomparable,
    );
    incomparable.adapter_label =
        "NVIDIA H100 (vulkan) (baseline: AMD Radeon RX 7900 XTX (vulkan))".to_string();
    Comparison {
        rows: vec![
            row(
                ALEXNET,
                Phase::Forward,
                (Some(17.44), Some(17.5)),
                Some((-0.012, 0.017)),
                Verdict::NoChange,
            ),
            row(
                ALEXNET,
                Phase::GradParams,
                (Some(14.62), Some(16.1)),
                Some((0.021, 0.187)),
                Verdict::Regression,
            ),
            row(
                ALEXNET,
                Phase::Total,
                (Some(46.35), Some(51.2)),
                Some((0.071, 0.139)),
                Verdict::Regression,
            ),
            row(
                VGG,
                Phase::Forward,
                (Some(30.12), Some(26.1)),
                Some((-0.161, -0.102)),
                Verdict::Improvement,
            ),
            row(
                VGG,
                Phase::Total,
                (Some(30.25), Some(32.7)),
                Some((-0.021, 0.19)),
                Verdict::Inconclusive,
            ),
            incomparable,
            row(
                "googlenet/train/b32/f32/wgpu",
                Phase::Total,
                (None, Some(75.69)),
                None,
                Verdict::New,
            ),
            row(
                "vgg16/train/b16/f32/wgpu",
                Phase::Total,
                (Some(294.063), None),
                None,
                Verdict::Missing,
            ),
        ],
        config: CompareConfig::default(),
        kernel_changes: Vec::new(),
        current_incomplete: false,
    }
}

#[test]
fn table_snapshot() {
    insta::assert_snapshot!("table", table(&record()));
}

#[test]
fn layers_table_snapshot() {
    insta::assert_snapshot!("layers_table", layers_table(&record().benchmarks[0]));
}

#[test]
fn layers_table_without_layers_says_how_to_get_them() {
    let text = layers_table(&record().benchmarks[1]);
    assert!(text.contains("--layers"), "{text}");
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!("markdown", markdown(&record()));
}

#[test]
fn csv_snapshot() {
    insta::assert_snapshot!("csv", csv(&record()));
}

#[test]
fn csv_reads_back_with_the_documented_header() {
    let text = csv(&record());
    let mut reader = ::csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    assert_eq!(
        header.join(","),
        "timestamp,framework,algorithm,bench_stage,precision,result_ms,batch,phase,adapter,backend,\
         benchmark_id,median_ns,mean_ns,min_ns,max_ns,stddev_ns,samples"
    );
    let rows: Vec<::csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
    // 7 phases of each AlexNet run, forward and total of VGG-11.
    assert_eq!(rows.len(), 7 + 7 + 2);
    assert_eq!(&rows[0][0], "2026-11-18T11:06:40Z");
    assert_eq!(&rows[0][1], "convbench-wgpu");
    assert_eq!(&rows[0][5], "8.73");
}

#[test]
fn comparison_table_snapshot() {
    insta::assert_snapshot!("comparison_table", comparison_table(&comparison()));
}

#[test]
fn comparison_markdown_snapshot() {
    insta::assert_snapshot!("comparison_markdown", comparison_markdown(&comparison()));
}

#[test]
fn compare_text_puts_notes_first_and_the_origin_last_and_refuses_csv() {
    let notes = vec!["the baseline was edited in this pull request".to_string()];
    let table = comparison_text(&comparison(), &notes, "main at 1a2b3c4", Format::Table).expect("table");
    assert!(table.starts_with(&format!("note: {}\n", notes[0])), "{table}");
    assert!(table.contains(&comparison_table(&comparison())), "{table}");
    assert!(table.ends_with("\nbaseline: main at 1a2b3c4\n"), "{table}");
    let markdown = comparison_text(&comparison(), &notes, "main", Format::Markdown).expect("md");
    assert!(markdown.starts_with("> **Note:** "), "{markdown}");
    let json = comparison_text(&comparison(), &notes, "main", Format::Json).expect("json");
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok(), "{json}");
    let error = comparison_text(&comparison(), &notes, "main", Format::Csv).expect_err("no csv");
    assert!(
        matches!(report_error(&error), ReportError::CompareCsv),
        "{error:?}"
    );
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
}

#[test]
fn verdict_summary_counts_worst_first() {
    assert_eq!(
        verdict_summary(&comparison()),
        "2 regressions, 1 inconclusive, 1 incomparable, 1 missing, 1 new, 1 improvement, 1 unchanged"
    );
    let empty = Comparison {
        rows: Vec::new(),
        config: CompareConfig::default(),
        kernel_changes: Vec::new(),
        current_incomplete: false,
    };
    assert_eq!(verdict_summary(&empty), "nothing to compare");
    assert_eq!(comparison_markdown(&empty), "**nothing to compare**\n");

    // Regressions within the fail threshold are alerts, and the summary says so.
    let mut lenient = comparison();
    lenient.config.fail_threshold = Some(5.0);
    assert_eq!(lenient.failing_regressions(), 0);
    assert!(
        verdict_summary(&lenient).ends_with(
            "; 2 of the regressions are within the fail threshold of +500.0%: alerts, not failures"
        ),
        "{}",
        verdict_summary(&lenient)
    );
    let mut strict = comparison();
    strict.config.fail_threshold = Some(0.0);
    assert_eq!(strict.failing_regressions(), 2);
    assert!(!verdict_summary(&strict).contains("alerts"));

    // The settings line shows the fail threshold, and says when it changes nothing.
    lenient.config.fail_threshold = Some(0.10);
    let text = comparison_table(&lenient);
    assert!(
        text.contains("threshold: 5.0%, fail threshold: 10.0%, false"),
        "{text}"
    );
    let text = comparison_table(&strict);
    assert!(
        text.contains("fail threshold: 0.0% (not above the threshold: every regression fails)"),
        "{text}"
    );
    assert!(!comparison_table(&comparison()).contains("fail threshold"));
}

#[test]
fn an_inconclusive_rows_evidence_names_its_benchmark_and_phase() {
    let mut comparison = comparison();
    let row = comparison
        .rows
        .iter_mut()
        .find(|row| row.verdict == Verdict::Inconclusive)
        .expect("an inconclusive row");
    row.evidence = Some("3 rounds against 2 blessed runs".to_string());
    let text = comparison_table(&comparison);
    assert!(
        text.contains("inconclusive vgg11/eval/b64/f16/wgpu (total): 3 rounds against 2 blessed runs"),
        "{text}"
    );
}

/// Five undecided rows with distinct explanations: the whole iteration's comes first though
/// it is last in the comparison, three are shown, the rest are counted, alike in both formats.
#[test]
fn the_undecided_rows_explained_put_the_total_first_and_count_the_rest() {
    let mut comparison = comparison();
    let id = "googlenet/train/b32/f32/wgpu";
    comparison.rows = [
        Phase::Forward,
        Phase::GradInput,
        Phase::GradParams,
        Phase::Update,
        Phase::Total,
    ]
    .into_iter()
    .map(|phase| {
        let mut undecided = row(
            id,
            phase,
            (Some(10.0), Some(11.0)),
            Some((-0.1, 0.3)),
            Verdict::Inconclusive,
        );
        undecided.evidence = Some(format!("why {}", phase.as_str()));
        undecided
    })
    .collect();
    for text in [comparison_table(&comparison), comparison_markdown(&comparison)] {
        let total = text.find("(total): why total").expect("the total explained");
        let forward = text
            .find("(forward): why forward")
            .expect("the first phase explained");
        assert!(total < forward, "{text}");
        assert!(
            !text.contains("why grad_params") && !text.contains("why update"),
            "{text}"
        );
        assert!(text.contains("2 more explanations in"), "{text}");
    }
}

#[test]
fn comparison_markdown_without_notable_rows_says_so() {
    let mut comparison = comparison();
    comparison.rows.retain(|row| row.verdict == Verdict::NoChange);
    let text = comparison_markdown(&comparison);
    assert!(text.starts_with("**1 unchanged**\n\nNo regression or improvement beyond the threshold.\n"));
    assert!(
        text.contains("<details>\n<summary>1 other row: 1 unchanged</summary>"),
        "{text}"
    );
}

/// The number of `|` that delimit cells (not escaped with a backslash).
fn cell_delimiters(line: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for ch in line.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match ch {
            '\\' => escaped = true,
            '|' => count += 1,
            _ => {}
        }
    }
    count
}

#[test]
fn markdown_escapes_names() {
    let mut record = record();
    record.benchmarks[0].model = "evil|<script>alert(1)</script>".to_string();
    record.benchmarks[0].adapter.name = "A & B [x](y)".to_string();
    let text = markdown(&record);
    assert!(!text.contains("<script>"), "{text}");
    assert!(
        text.contains("evil\\|&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{text}"
    );
    assert!(text.contains("A &amp; B \\[x\\](y)"), "{text}");
    let table_lines: Vec<&str> = text.lines().filter(|line| line.starts_with('|')).collect();
    assert_eq!(table_lines.len(), 2 + 3);
    for line in &table_lines {
        assert_eq!(cell_delimiters(line), 13 + 1, "{line}");
    }

    let mut comparison = comparison();
    comparison.rows[1].benchmark_id = "evil|<script>/train/b1/f32/wgpu".to_string();
    comparison.rows[1].adapter_label = "<img src=x onerror=alert(1)>".to_string();
    let text = comparison_markdown(&comparison);
    assert!(!text.contains("<script>") && !text.contains("<img"), "{text}");
    assert!(
        text.contains("| evil\\|&lt;script&gt;/train/b1/f32/wgpu |"),
        "{text}"
    );
}

#[test]
fn escape_markdown_leaves_plain_names_alone() {
    assert_eq!(
        escape_markdown("alexnet/train/b128/f32/wgpu"),
        "alexnet/train/b128/f32/wgpu"
    );
    assert_eq!(escape_markdown("a\nb"), "a b");
    assert_eq!(escape_markdown("`x` *y* \\"), "\\`x\\` \\*y\\* \\\\");
    // `_x_` would be emphasis, `~x~` struck through, `$x$` math; a tab ends nothing.
    assert_eq!(escape_markdown("_x_ ~y~ $z$\t"), "\\_x\\_ \\~y\\~ \\$z\\$ ");
}

fn chart(records: &[RunRecord], kind: ChartKind) -> crate::Result<String> {
    chart_svg(
        records,
        &ChartSpec {
            kind,
            benchmark: None,
        },
    )
}

/// Parses an SVG (it must be well-formed XML) and checks that it opens with the two caption
/// lines.
fn parse_svg(svg: &str) -> roxmltree::Document<'_> {
    let document = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"));
    assert_eq!(document.root_element().tag_name().name(), "svg");
    for class in ["title", "measured"] {
        assert_eq!(count(&document, "text", class), 1, "one {class} line:\n{svg}");
    }
    document
}

/// Elements `<tag class="class">`.
fn count(document: &roxmltree::Document<'_>, tag: &str, class: &str) -> usize {
    elements(document, tag, class).len()
}

fn elements<'a>(
    document: &'a roxmltree::Document<'a>,
    tag: &str,
    class: &str,
) -> Vec<roxmltree::Node<'a, 'a>> {
    document
        .descendants()
        .filter(|node| node.has_tag_name(tag) && node.attribute("class") == Some(class))
        .collect()
}

/// The text of the first `<text class="class">`.
fn text_of(document: &roxmltree::Document<'_>, class: &str) -> String {
    elements(document, "text", class)
        .first()
        .and_then(|node| node.text())
        .unwrap_or_default()
        .to_string()
}

/// The `data-series` of each segment, in document order.
fn segment_series(document: &roxmltree::Document<'_>) -> Vec<String> {
    elements(document, "rect", "segment")
        .iter()
        .map(|node| node.attribute("data-series").unwrap_or_default().to_string())
        .collect()
}

#[test]
fn chart_kinds_parse_by_name() {
    for kind in ChartKind::ALL {
        assert_eq!(ChartKind::from_str(kind.as_str()).expect("parses"), kind);
    }
    assert_eq!(
        ChartKind::from_str("Phases").expect("any case"),
        ChartKind::Phases
    );
    let error = ChartKind::from_str("pie").expect_err("unknown");
    assert!(
        matches!(&error, ReportError::UnknownChartKind { name } if name == "pie"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("throughput, phases, backends, precision, layers"),
        "{error}"
    );
}

#[test]
fn throughput_is_a_line_per_model_against_batch_when_a_model_has_several() {
    let svg = chart(&[record()], ChartKind::Throughput).expect("chart");
    let document = parse_svg(&svg);
    let series: Vec<&str> = elements(&document, "g", "series")
        .iter()
        .filter_map(|node| node.attribute("data-series"))
        .collect();
    assert_eq!(series, ["alexnet train f32", "vgg11 eval f16"]);
    assert_eq!(
        count(&document, "circle", "point"),
        3,
        "alexnet at 64 and 128, vgg11 at 64"
    );
    assert_eq!(
        text_of(&document, "title"),
        "Images per second against batch size"
    );
    assert_eq!(
        text_of(&document, "measured"),
        "median of 5 timed iterations each; NVIDIA H100 (vulkan), GPU timestamps"
    );
    assert!(svg.contains("batch size (log scale)"));
    // 128 images in AlexNet's 47.620 ms step.
    assert!(
        svg.contains("alexnet train f32 at batch 128: 2688.0 images/s (median total 47.620 ms)"),
        "{svg}"
    );
}

#[test]
fn throughput_at_one_batch_size_is_a_bar_per_benchmark_and_says_how_to_get_the_curve() {
    let svg = chart(&[one_batch_record()], ChartKind::Throughput).expect("chart");
    let document = parse_svg(&svg);
    assert_eq!(count(&document, "g", "bar"), 2);
    assert_eq!(count(&document, "g", "series"), 0, "no lines");
    assert!(text_of(&document, "title").contains("run with --batch 1,8,32"));
}

#[test]
fn phases_stack_the_segments_of_each_training_step() {
    let svg = chart(&[record()], ChartKind::Phases).expect("chart");
    let document = parse_svg(&svg);
    // The two AlexNet training steps; VGG-11 was only evaluated.
    assert_eq!(count(&document, "g", "bar"), 2);
    let one_step = ["forward", "loss", "grad-input", "grad-params", "update"];
    assert_eq!(segment_series(&document), [one_step, one_step].concat());
    assert!(text_of(&document, "title").starts_with("Phases of a training step"));
    assert!(!svg.contains("vgg11"), "{svg}");
}

#[test]
fn phases_chart_snapshot() {
    let svg = chart(&[record()], ChartKind::Phases).expect("chart");
    insta::assert_snapshot!(svg);
}

#[test]
fn phases_of_forward_passes_only_is_an_error_naming_the_run_flag() {
    let mut record = record();
    record
        .benchmarks
        .retain(|benchmark| benchmark.stage == Stage::Eval);
    let error = chart(&[record], ChartKind::Phases).expect_err("no training step");
    assert!(
        matches!(report_error(&error), ReportError::NoTrainingStep),
        "{error:?}"
    );
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("--stage train"), "{error}");
}

/// LeNet on `burn-wgpu` at batch 1, a peer's record: twice as fast as convbench's wgpu.
fn peer_record() -> RunRecord {
    let mut peer = pivot_record();
    peer.benchmarks.truncate(1);
    let lenet = &mut peer.benchmarks[0];
    lenet.backend = "burn-wgpu".to_string();
    lenet.id = BenchmarkResult::make_id("lenet", Stage::Eval, 1, Precision::F32, "burn-wgpu");
    lenet.phases = vec![phase(Phase::Total, 250_000)];
    peer
}

#[test]
fn backends_sit_beside_wgpu_with_their_ratio_and_a_peer_record_joins_them() {
    let svg = chart(&[pivot_record(), peer_record()], ChartKind::Backends).expect("chart");
    let document = parse_svg(&svg);
    // Batch 1 ran on wgpu, cpu and burn-wgpu; batch 64 on cpu alone, so it is left out.
    assert_eq!(count(&document, "g", "bar"), 3);
    assert_eq!(segment_series(&document), ["wgpu", "burn-wgpu", "cpu"]);
    assert!(svg.contains("2.000 ms, 4.00x wgpu"), "{svg}");
    assert!(svg.contains("0.250 ms, 0.50x wgpu"), "{svg}");
    assert!(text_of(&document, "title").contains("ratio to wgpu"));
}

#[test]
fn backends_of_one_backend_is_an_error_naming_the_flag_and_peer_records() {
    let error = chart(&[record()], ChartKind::Backends).expect_err("one backend");
    assert!(
        matches!(report_error(&error), ReportError::OneBackend { present } if present == &["wgpu"]),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("one backend (wgpu)")
            && text.contains("--backend wgpu,cpu")
            && text.contains("--kind backends"),
        "{text}"
    );
}

#[test]
fn precision_sets_f16_beside_f32_with_the_ratio() {
    let mut record = record();
    let mut f16 = record.benchmarks[0].clone();
    f16.precision = Precision::F16;
    f16.id = BenchmarkResult::make_id("alexnet", Stage::Train, 64, Precision::F16, "wgpu");
    let total = f16.phase(Phase::Total).expect("total").summary.median_ns as u64;
    f16.phases = vec![phase(Phase::Total, total / 2)];
    record.benchmarks.push(f16);
    let svg = chart(&[record], ChartKind::Precision).expect("chart");
    let document = parse_svg(&svg);
    assert_eq!(segment_series(&document), ["f32", "f16"]);
    assert!(svg.contains("0.50x f32"), "{svg}");
}

#[test]
fn precision_of_one_precision_is_an_error_naming_the_flag() {
    let error = chart(&[pivot_record()], ChartKind::Precision).expect_err("f32 only");
    assert!(
        matches!(report_error(&error), ReportError::OnePrecision { present } if present == &["f32"]),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("one precision (f32)")
            && error.to_string().contains("--precision f32,f16"),
        "{error}"
    );
}

#[test]
fn layers_are_a_bar_each_stacked_by_phase_with_their_share_of_the_roof() {
    let svg = chart(&[record()], ChartKind::Layers).expect("chart");
    let document = parse_svg(&svg);
    // conv1 (forward and grad-params), relu1, pool1, conv2, fc6.
    assert_eq!(count(&document, "g", "bar"), 5);
    assert_eq!(
        segment_series(&document),
        [
            "forward",
            "grad-params",
            "forward",
            "forward",
            "forward",
            "forward"
        ]
    );
    assert!(text_of(&document, "title").starts_with("Layers of alexnet/train/b64/f32/wgpu"));
    assert!(text_of(&document, "title").contains("20000.0 GFLOP/s and 1500.0 GB/s"));
    // conv1: 2 x 8.995 GFLOP and 2 x 1.124 GB in 2.104 + 2.950 ms: 8 FLOP/byte, under the
    // ridge of 13.3, so its roof is 8 x 1.5 TB/s = 12 TFLOP/s, of which 3.56 is 29.7%.
    assert!(svg.contains("conv1 (conv2d)"), "{svg}");
    assert!(svg.contains("5.054 ms, 29.7% of roof (memory)"), "{svg}");
}

#[test]
fn layers_without_a_breakdown_or_of_an_unknown_benchmark_are_errors_naming_the_fix() {
    let error = chart(&[pivot_record_without_layers()], ChartKind::Layers).expect_err("no layers");
    assert!(
        matches!(report_error(&error), ReportError::NoLayersToChart),
        "{error:?}"
    );
    assert!(error.to_string().contains("--layers"), "{error}");
    let spec = ChartSpec {
        kind: ChartKind::Layers,
        benchmark: Some("vgg11/eval/b64/f16/wgpu".to_string()),
    };
    let error = chart_svg(&[record()], &spec).expect_err("vgg11 has no layers");
    assert!(
        matches!(report_error(&error), ReportError::UnknownLayersBenchmark { id, .. } if id == "vgg11/eval/b64/f16/wgpu"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("pick one of alexnet/train/b64/f32/wgpu"),
        "{error}"
    );
    let mut uncalibrated = record();
    uncalibrated.benchmarks[0].peak = None;
    let svg = chart(&[uncalibrated], ChartKind::Layers).expect("chart");
    assert!(svg.contains("adapters --calibrate"), "{svg}");
}

fn pivot_record_without_layers() -> RunRecord {
    let mut record = pivot_record();
    for benchmark in &mut record.benchmarks {
        benchmark.layers.clear();
    }
    record
}

#[test]
fn chart_labels_from_records_are_escaped() {
    let mut record = one_batch_record();
    record.benchmarks[1].model = "<script>&".to_string();
    record.benchmarks[1].adapter.name = "\"AMD\" <b>".to_string();
    for kind in [ChartKind::Throughput, ChartKind::Phases] {
        let svg = chart(std::slice::from_ref(&record), kind).expect("chart");
        parse_svg(&svg);
        assert!(!svg.contains("<script>") && !svg.contains("<b>"), "{svg}");
    }
    let svg = chart(&[record], ChartKind::Throughput).expect("chart");
    assert!(
        svg.contains("&lt;script&gt;&amp; eval b64 f16 &quot;AMD&quot; &lt;b&gt; (vulkan)"),
        "{svg}"
    );
}

#[test]
fn chart_of_nothing_or_of_a_benchmark_twice_is_invalid_input() {
    let mut record = record();
    let twice = chart(&[record.clone(), record.clone()], ChartKind::Throughput).expect_err("twice");
    assert!(
        matches!(report_error(&twice), ReportError::DuplicateBenchmark { .. }),
        "{twice:?}"
    );
    assert!(twice.to_string().contains("in more than one record"), "{twice}");
    for benchmark in &mut record.benchmarks {
        benchmark.phases.retain(|phase| phase.phase != Phase::Total);
    }
    for kind in ChartKind::ALL {
        let error = chart(std::slice::from_ref(&record), kind).expect_err("nothing to plot");
        assert!(
            matches!(report_error(&error), ReportError::NothingToPlot),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(
            error
                .to_string()
                .contains("no benchmark in the records has a total time")
        );
    }
}

#[test]
fn format_names_parse() {
    for (name, format) in [
        ("table", Format::Table),
        ("json", Format::Json),
        ("csv", Format::Csv),
        ("md", Format::Markdown),
        ("markdown", Format::Markdown),
        ("MD", Format::Markdown),
    ] {
        assert_eq!(Format::from_str(name).expect(name), format);
    }
    for format in Format::ALL {
        assert_eq!(format.to_string().parse::<Format>().expect("round trip"), format);
    }
    let error = Format::from_str("html").expect_err("unknown format");
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    let message = error.to_string();
    assert!(message.contains("`html`"), "{message}");
    for name in ["table", "json", "csv", "md"] {
        assert!(message.contains(name), "{message}");
    }
}

#[test]
fn render_dispatches_on_the_format() {
    let record = record();
    assert_eq!(render(&record, Format::Table), table(&record));
    assert_eq!(render(&record, Format::Json), record.to_json());
    assert_eq!(render(&record, Format::Csv), csv(&record));
    assert_eq!(render(&record, Format::Markdown), markdown(&record));
    let parsed = RunRecord::from_json(&json(&record), "test").expect("json reads back");
    assert_eq!(parsed, record);
}

#[test]
fn empty_record_renders_a_message() {
    let mut record = record();
    record.benchmarks.clear();
    assert_eq!(table(&record), "no benchmarks in this record\n");
    assert_eq!(markdown(&record), "No benchmarks in this record.\n");
    assert_eq!(csv(&record).lines().count(), 1);
}

#[test]
fn milliseconds_keep_three_significant_digits() {
    use super::cells::milliseconds;
    assert_eq!(milliseconds(17_440_000.0), "17.440");
    assert_eq!(milliseconds(771_550_416.9), "771.550");
    assert_eq!(milliseconds(500_000.0), "0.500");
    assert_eq!(milliseconds(14_600.0), "0.0146");
    assert_eq!(milliseconds(7_246.06), "0.00725");
    assert_eq!(milliseconds(1.0), "0.00000100");
    assert_eq!(milliseconds(0.0), "0.000");
    assert_eq!(milliseconds(f64::NAN), "-");
}

#[test]
fn rfc3339_of_known_instants() {
    assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
    assert_eq!(rfc3339_utc(4_107_542_399), "2100-02-28T23:59:59Z");
    assert_eq!(rfc3339_utc(CREATED_UNIX_S), "2026-11-18T11:06:40Z");
}

/// Every day from 1970 to 2300 follows the previous one in the Gregorian calendar.
#[test]
fn rfc3339_days_follow_each_other() {
    fn is_leap(year: u64) -> bool {
        year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
    }
    fn days_in(year: u64, month: u64) -> u64 {
        match month {
            2 if is_leap(year) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }
    let date = |day: u64| {
        let text = rfc3339_utc(day * 86_400);
        let field = |range: std::ops::Range<usize>| text[range].parse::<u64>().expect("number");
        (field(0..4), field(5..7), field(8..10))
    };
    let mut expected = (1970, 1, 1);
    for day in 0..120_000 {
        assert_eq!(date(day), expected, "day {day}");
        let (year, month, day_of_month) = expected;
        expected = if day_of_month < days_in(year, month) {
            (year, month, day_of_month + 1)
        } else if month < 12 {
            (year, month + 1, 1)
        } else {
            (year + 1, 1, 1)
        };
    }
}

#[test]
fn vendor_ratio_appears_only_for_benchmarks_on_both_backends() {
    let mut record = record();
    assert!(vendor_ratio_table(&record).is_none());
    let mut cuda = record.benchmarks[0].clone();
    cuda.backend = "cuda".into();
    for p in &mut cuda.phases {
        p.summary.median_ns /= 2.0;
    }
    for l in &mut cuda.layers {
        l.summary.median_ns /= 4.0;
    }
    record.benchmarks.push(cuda);
    let table = vendor_ratio_table(&record).expect("a wgpu/cuda pair");
    assert!(table.contains("2.00") && table.contains("4.00"), "{table}");
    assert!(super::table(&record).contains("wgpu / cuda"));
}

#[test]
fn comparison_footer_names_changed_kernels() {
    let mut comparison = comparison();
    comparison.kernel_changes = (0..12)
        .map(|i| crate::compare::KernelChange {
            benchmark_id: "alexnet/train/b128/f32/wgpu".into(),
            layer: format!("conv{i} forward"),
            baseline: Some("direct".into()),
            current: (i != 0).then(|| "gemm_64x64x16_4x4".into()),
        })
        .collect();
    let text = comparison_table(&comparison);
    assert!(
        text.contains("kernel changed: alexnet/train/b128/f32/wgpu conv0 forward: direct -> (none)"),
        "{text}"
    );
    assert!(
        text.contains("conv9 forward: direct -> gemm_64x64x16_4x4"),
        "{text}"
    );
    assert!(!text.contains("conv10 forward"), "{text}");
    assert!(text.contains("2 more layers"), "{text}");
    assert!(comparison_markdown(&comparison).contains("kernel changed"));
}

/// LeNet evaluated on `cpu` at batch 1 and 64 and on `wgpu` at batch 1 only (the missing
/// cell), each with a forward breakdown of two layers.
fn pivot_record() -> RunRecord {
    let lenet = |backend: &str, batch: usize, total_ns: u64, conv_ns: u64, relu_ns: u64| {
        let mut result = benchmark(
            "lenet",
            Stage::Eval,
            batch,
            Precision::F32,
            &[(Phase::Forward, total_ns - 10_000), (Phase::Total, total_ns)],
            1_000_000,
            0,
        );
        result.backend = backend.to_string();
        result.id = BenchmarkResult::make_id("lenet", Stage::Eval, batch, Precision::F32, backend);
        result.layers = vec![
            layer("conv1", "conv2d", Phase::Forward, conv_ns, 600_000, "direct"),
            layer("relu1", "relu", Phase::Forward, relu_ns, 0, "elementwise"),
        ];
        result
    };
    let mut record = record();
    record.benchmarks = vec![
        lenet("cpu", 1, 2_000_000, 1_500_000, 100_000),
        lenet("cpu", 64, 96_000_000, 80_000_000, 4_000_000),
        lenet("wgpu", 1, 500_000, 300_000, 20_000),
    ];
    record
}

fn pivot_spec(rows: PivotRows, columns: &[PivotAxis], ratio_to: Option<&str>) -> PivotSpec {
    PivotSpec {
        rows,
        columns: columns.to_vec(),
        phase: Phase::Total,
        ratio_to: ratio_to.map(str::to_string),
    }
}

fn backend_by_batch() -> Pivot {
    let spec = pivot_spec(
        PivotRows::Model,
        &[PivotAxis::Backend, PivotAxis::Batch],
        Some("cpu"),
    );
    pivot(&[pivot_record()], &spec).expect("a valid pivot")
}

#[test]
fn pivot_spreads_backend_and_batch_over_columns_with_ratios_to_the_reference() {
    let grid = backend_by_batch();
    assert_eq!(grid.row_labels, ["lenet"]);
    assert_eq!(grid.column_labels, ["cpu b1", "cpu b64", "wgpu b1", "wgpu b64"]);
    let cells = &grid.cells[0];
    let cpu_b1 = cells[0].expect("cpu b1 measured");
    assert_eq!((cpu_b1.median_ns, cpu_b1.ratio), (2_000_000.0, None));
    assert_eq!(cells[1].map(|cell| cell.ratio), Some(None));
    let wgpu_b1 = cells[2].expect("wgpu b1 measured");
    assert_eq!(wgpu_b1.median_ns, 500_000.0);
    assert_eq!(wgpu_b1.ratio, Some(0.25));
    assert_eq!(cells[3], None, "wgpu at batch 64 was not measured");
}

#[test]
fn a_ratio_to_that_gives_no_cell_a_ratio_is_an_error() {
    // Only the reference's own benchmarks: nothing to divide.
    let mut cpu_only = pivot_record();
    cpu_only.benchmarks.retain(|b| b.backend == "cpu");
    let spec = pivot_spec(PivotRows::Model, &[PivotAxis::Precision], Some("cpu"));
    let error = pivot(&[cpu_only], &spec).expect_err("no ratio");
    assert!(
        matches!(report_error(&error), ReportError::NoRatios { reference, axis: "backend" } if reference == "cpu"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("a second backend beside cpu"),
        "{error}"
    );
}

#[test]
fn pivot_keeps_the_coordinates_not_in_the_columns_in_the_row_labels() {
    let spec = pivot_spec(PivotRows::Model, &[PivotAxis::Backend], Some("wgpu"));
    let grid = pivot(&[pivot_record()], &spec).expect("a valid pivot");
    assert_eq!(grid.row_labels, ["lenet, b1", "lenet, b64"]);
    assert_eq!(grid.column_labels, ["cpu", "wgpu"]);
    assert_eq!(grid.cells[0][0].and_then(|cell| cell.ratio), Some(4.0));
    assert_eq!(
        grid.cells[1][0].and_then(|cell| cell.ratio),
        None,
        "no wgpu b64 to divide by"
    );
    assert_eq!(grid.cells[1][1], None);
}

#[test]
fn pivot_by_layer_sums_a_layers_phases_for_total_and_takes_one_phase_otherwise() {
    let mut record = pivot_record();
    record.benchmarks[0].layers.push(layer(
        "conv1",
        "conv2d",
        Phase::GradInput,
        700_000,
        600_000,
        "direct",
    ));
    let mut spec = pivot_spec(PivotRows::Layer, &[PivotAxis::Backend, PivotAxis::Batch], None);
    let total = pivot(std::slice::from_ref(&record), &spec).expect("a valid pivot");
    assert_eq!(total.row_labels, ["lenet/conv1 (conv2d)", "lenet/relu1 (relu)"]);
    assert_eq!(total.cells[0][0].map(|cell| cell.median_ns), Some(2_200_000.0));
    spec.phase = Phase::Forward;
    let forward = pivot(&[record], &spec).expect("a valid pivot");
    assert_eq!(forward.cells[0][0].map(|cell| cell.median_ns), Some(1_500_000.0));
    assert_eq!(forward.cells[1][2].map(|cell| cell.median_ns), Some(20_000.0));
}

/// `--columns precision --ratio-to f32` gave no ratio at all: the reference was looked for
/// among the backends only. A precision is a reference too: each f16 cell against the f32
/// cell of the same model, batch and backend.
#[test]
fn a_pivot_by_precision_takes_its_ratios_to_a_reference_precision() {
    let mut record = pivot_record();
    let f16: Vec<BenchmarkResult> = record
        .benchmarks
        .iter()
        .map(|b| {
            let mut half = b.clone();
            half.precision = Precision::F16;
            half.id = BenchmarkResult::make_id(&b.model, b.stage, b.batch, Precision::F16, &b.backend);
            for phase in &mut half.phases {
                phase.summary.median_ns /= 2.0;
            }
            half
        })
        .collect();
    record.benchmarks.extend(f16);
    let spec = pivot_spec(PivotRows::Model, &[PivotAxis::Precision], Some("f32"));
    let grid = pivot(std::slice::from_ref(&record), &spec).expect("a valid pivot");
    assert_eq!(grid.column_labels, ["f16", "f32"]);
    assert_eq!(grid.row_labels.len(), 3, "{:?}", grid.row_labels);
    for row in &grid.cells {
        assert_eq!(row[0].and_then(|cell| cell.ratio), Some(0.5), "{grid:?}");
        assert_eq!(row[1].and_then(|cell| cell.ratio), None, "the reference itself");
    }
    assert!(pivot_table(&grid).contains("(0.50x)"), "{}", pivot_table(&grid));
    // A backend keeps its meaning beside precisions.
    let by_backend = pivot_spec(PivotRows::Model, &[PivotAxis::Backend], Some("cpu"));
    let grid = pivot(&[record], &by_backend).expect("a valid pivot");
    assert!(
        grid.cells
            .iter()
            .flatten()
            .flatten()
            .any(|cell| cell.ratio.is_some())
    );
}

#[test]
fn pivot_bad_input_is_invalid_input_naming_the_thing() {
    let record = pivot_record();
    let error =
        |records: &[RunRecord], spec: &PivotSpec| pivot(records, spec).expect_err("bad input").to_string();
    let unknown = pivot_spec(PivotRows::Model, &[PivotAxis::Backend], Some("burn-wgpu"));
    let refused = pivot(std::slice::from_ref(&record), &unknown).expect_err("no burn-wgpu");
    assert!(
        matches!(report_error(&refused), ReportError::NoReferenceBackend { reference, present, precisions }
            if reference == "burn-wgpu" && present == &["cpu", "wgpu"] && precisions == &["f32"]),
        "{refused:?}"
    );
    let text = error(std::slice::from_ref(&record), &unknown);
    assert!(
        text.contains("`burn-wgpu`") && text.contains("cpu, wgpu"),
        "{text}"
    );

    let mut without_layers = record.clone();
    for benchmark in &mut without_layers.benchmarks {
        benchmark.layers.clear();
    }
    let layers = pivot_spec(PivotRows::Layer, &[PivotAxis::Backend], None);
    let text = error(&[without_layers], &layers);
    assert!(text.contains("run --layers"), "{text}");

    let text = error(&[record.clone(), record.clone()], &layers);
    assert!(text.contains("lenet/eval/b1/f32/cpu"), "{text}");

    let mut grad_input = pivot_spec(PivotRows::Model, &[PivotAxis::Batch], None);
    grad_input.phase = Phase::GradInput;
    let text = error(&[record], &grad_input);
    assert!(
        text.contains("`grad-input`") && text.contains("--phase"),
        "{text}"
    );

    let text = parse_phase("backward").expect_err("unknown phase").to_string();
    assert!(
        text.contains("`backward`") && text.contains("grad-input"),
        "{text}"
    );
    assert_eq!(parse_phase("grad-params").ok(), Some(Phase::GradParams));
    assert_eq!(parse_phase("grad_params").ok(), Some(Phase::GradParams));
    assert_eq!(parse_phases("all").ok(), Some(Phase::ALL.to_vec()));
    assert_eq!(parse_phases("grad-input").ok(), Some(vec![Phase::GradInput]));
    let unknown_phase = parse_phases("backward").expect_err("unknown phase");
    assert!(
        matches!(&unknown_phase, ReportError::UnknownPhase { name, or_all: true } if name == "backward"),
        "{unknown_phase:?}"
    );
    assert_eq!(
        unknown_phase.to_string(),
        "unknown phase `backward`; use one of forward, loss-forward, loss-backward, grad-input, \
         grad-params, update, total or `all`"
    );
    let text = PivotAxis::parse_list("backend,size")
        .expect_err("unknown column")
        .to_string();
    assert!(text.contains("`size`"), "{text}");
    assert!(matches!(
        PivotAxis::parse_list("batch,batch"),
        Err(ReportError::ColumnTwice { name, .. }) if name == "batch"
    ));
    assert!(matches!(PivotAxis::parse_list(""), Err(ReportError::NoColumns)));
    assert_eq!("layer".parse::<PivotRows>().ok(), Some(PivotRows::Layer));
    let text = "cell".parse::<PivotRows>().expect_err("unknown rows").to_string();
    assert!(text.contains("`cell`") && text.contains("--rows model"), "{text}");
}

#[test]
fn pivot_table_snapshot() {
    insta::assert_snapshot!("pivot_table", pivot_table(&backend_by_batch()));
}

#[test]
fn pivot_markdown_snapshot() {
    insta::assert_snapshot!("pivot_markdown", pivot_markdown(&backend_by_batch()));
}

#[test]
fn pivot_csv_snapshot() {
    insta::assert_snapshot!("pivot_csv", pivot_csv(&backend_by_batch()));
}

#[test]
fn pivot_json_snapshot() {
    insta::assert_snapshot!("pivot_json", pivot_json(&backend_by_batch()));
}

#[test]
fn pivot_of_layers_table_snapshot() {
    let spec = pivot_spec(
        PivotRows::Layer,
        &[PivotAxis::Batch, PivotAxis::Backend],
        Some("cpu"),
    );
    let grid = pivot(&[pivot_record()], &spec).expect("a valid pivot");
    insta::assert_snapshot!("pivot_layers_table", pivot_table(&grid));
}

#[test]
fn render_pivot_dispatches_on_the_format() {
    let grid = backend_by_batch();
    assert_eq!(render_pivot(&grid, Format::Csv), pivot_csv(&grid));
    assert_eq!(render_pivot(&grid, Format::Markdown), pivot_markdown(&grid));
    assert_eq!(render_pivot(&grid, Format::Json), pivot_json(&grid));
    assert_eq!(render_pivot(&grid, Format::Table), pivot_table(&grid));
}

#[test]
fn pivot_ratios_below_a_tenth_keep_two_significant_digits() {
    let mut record = pivot_record();
    for phase in &mut record.benchmarks[2].phases {
        phase.summary.median_ns = 78_000.0;
    }
    let spec = pivot_spec(PivotRows::Model, &[PivotAxis::Backend], Some("cpu"));
    let grid = pivot(&[record], &spec).expect("a valid pivot");
    let table = pivot_table(&grid);
    assert!(table.contains("(0.039x)"), "{table}");
}

/// The names the dashboard formats give the record's phases, in record order.
fn dashboard_names(record: &RunRecord) -> Vec<String> {
    record
        .benchmarks
        .iter()
        .flat_map(|benchmark| {
            Phase::ALL
                .into_iter()
                .filter(|phase| benchmark.phase(*phase).is_some())
                .map(|phase| format!("{}/{}", benchmark.id, phase.as_str()))
        })
        .collect()
}

#[test]
fn bmf_has_the_documented_shape_one_latency_measure_per_benchmark_and_phase() {
    let record = record();
    let text = bmf(&record);
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("BMF is JSON");
    // {"<benchmark name>": {"<measure>": {"value": n, "lower_value"?: n, "upper_value"?: n}}}
    let benchmarks = parsed.as_object().expect("a JSON object of benchmarks");
    let mut names: Vec<&String> = benchmarks.keys().collect();
    let mut expected = dashboard_names(&record);
    expected.sort();
    names.sort();
    assert_eq!(names, expected.iter().collect::<Vec<_>>());
    for (name, measures) in benchmarks {
        let measures = measures.as_object().expect("an object of measures");
        assert_eq!(measures.keys().collect::<Vec<_>>(), [BMF_MEASURE], "{name}");
        let metric = measures[BMF_MEASURE].as_object().expect("a metric object");
        for key in metric.keys() {
            assert!(
                ["value", "lower_value", "upper_value"].contains(&key.as_str()),
                "{name}: `{key}` is not a BMF metric field"
            );
        }
        let number = |key: &str| metric[key].as_f64().unwrap_or_else(|| panic!("{name}: {key}"));
        let (value, lower, upper) = (number("value"), number("lower_value"), number("upper_value"));
        assert!(
            lower <= value && value <= upper,
            "{name}: {lower} {value} {upper}"
        );
    }
    let total = &benchmarks["alexnet/train/b128/f32/wgpu/total"][BMF_MEASURE];
    let summary = &record.benchmarks[1].phase(Phase::Total).expect("a total").summary;
    assert_eq!(total["value"].as_f64(), Some(summary.median_ns));
    assert_eq!(total["lower_value"].as_f64(), Some(summary.min_ns));
    assert_eq!(total["upper_value"].as_f64(), Some(summary.max_ns));
}

#[test]
fn github_action_benchmark_is_a_custom_smaller_is_better_array() {
    let record = record();
    let text = github_action_benchmark(&record);
    assert!(text.ends_with("]\n") && !text.ends_with("\n\n"));
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    // [{"name": string, "unit": string, "value": number, "range"?: string, "extra"?: string}]
    let entries = parsed.as_array().expect("a JSON array");
    let names: Vec<&str> = entries
        .iter()
        .map(|entry| entry["name"].as_str().expect("a name string"))
        .collect();
    assert_eq!(names, dashboard_names(&record), "every phase, in record order");
    for entry in entries {
        let fields = entry.as_object().expect("an object per benchmark");
        for key in fields.keys() {
            assert!(
                ["name", "unit", "value", "range", "extra"].contains(&key.as_str()),
                "`{key}` is not a customSmallerIsBetter field"
            );
        }
        assert_eq!(entry["unit"].as_str(), Some("ns"));
        assert!(
            entry["value"].as_f64().is_some_and(|value| value > 0.0),
            "{entry}"
        );
        assert!(
            entry["range"]
                .as_str()
                .is_some_and(|range| range.starts_with("± ")),
            "{entry}"
        );
        assert!(entry["extra"].is_string(), "{entry}");
    }
    let forward = &entries[0];
    assert_eq!(forward["name"], "alexnet/train/b64/f32/wgpu/forward");
    assert_eq!(forward["value"].as_f64(), Some(8_730_000.0));
    assert_eq!(
        forward["extra"],
        "adapter: NVIDIA H100 (vulkan)\ntiming: gpu timestamps\nsamples: 5"
    );
}

#[test]
fn dashboard_formats_leave_out_phases_that_json_cannot_hold() {
    let mut record = record();
    record.benchmarks[2].phases[0].summary.median_ns = f64::NAN;
    record.benchmarks[2].phases[1].summary.stddev_ns = f64::INFINITY;
    let parsed: serde_json::Value = serde_json::from_str(&bmf(&record)).expect("JSON");
    assert!(parsed.get("vgg11/eval/b64/f16/wgpu/forward").is_none());
    assert!(parsed.get("vgg11/eval/b64/f16/wgpu/total").is_some());
    let parsed: serde_json::Value = serde_json::from_str(&github_action_benchmark(&record)).expect("JSON");
    let entries = parsed.as_array().expect("an array");
    assert!(
        !entries
            .iter()
            .any(|e| e["name"] == "vgg11/eval/b64/f16/wgpu/forward")
    );
    let total = entries
        .iter()
        .find(|e| e["name"] == "vgg11/eval/b64/f16/wgpu/total")
        .expect("the total stays");
    assert!(
        total.get("range").is_none(),
        "no range from an infinite deviation"
    );
    assert!(entries.iter().all(|entry| !entry["value"].is_null()));
}

#[test]
fn dashboard_format_names_parse() {
    for format in DashboardFormat::ALL {
        assert_eq!(
            format.to_string().parse::<DashboardFormat>().expect("round trip"),
            format
        );
        assert!(Format::from_str(format.as_str()).is_err(), "one name, one format");
    }
    assert_eq!(
        DashboardFormat::from_str("BMF").expect("any case"),
        DashboardFormat::Bmf
    );
    assert_eq!(
        render_dashboard(&record(), DashboardFormat::GithubActionBenchmark),
        github_action_benchmark(&record())
    );
    let error = DashboardFormat::from_str("json").expect_err("not a dashboard format");
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
}

#[test]
fn pivot_refuses_two_benchmarks_in_one_cell_in_either_order() {
    let record = pivot_record();
    let mut renamed = record.clone();
    renamed.benchmarks.truncate(1);
    renamed.benchmarks[0].id = "whatever".to_string();
    let spec = pivot_spec(PivotRows::Model, &[PivotAxis::Backend], None);
    for records in [[record.clone(), renamed.clone()], [renamed, record]] {
        let error = pivot(&records, &spec).expect_err("one cell, two benchmarks");
        assert!(
            matches!(report_error(&error), ReportError::SameCell { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("whatever"), "{error}");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    }
}

#[test]
fn an_interrupted_record_says_so_under_its_table() {
    let mut record = record();
    assert!(!table(&record).contains("incomplete"));
    record.complete = false;
    for text in [table(&record), markdown(&record)] {
        assert!(text.contains("incomplete: the run was interrupted"), "{text}");
    }
}
