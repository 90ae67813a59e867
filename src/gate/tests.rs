//! The gate's decision, case by case: the comment and the check come from one value.

use super::*;
use crate::config::Config;
use crate::github::CheckConclusion;

fn workspace(accept_label: Option<&str>) -> Workspace {
    let mut config = Config::default();
    config.ci.accept_label = accept_label.map(String::from);
    Workspace {
        root: PathBuf::from("."),
        target_dir: PathBuf::from("target"),
        config,
        config_path: None,
        kernels: Vec::new(),
        hidden_table: None,
    }
}

fn env() -> ActionsEnv {
    ActionsEnv::from_vars(|_| None).expect("an empty environment")
}

fn row(id: &str, verdict: Verdict, change: f64) -> PhaseComparison {
    PhaseComparison {
        benchmark_id: id.to_string(),
        phase: Phase::Total,
        baseline_median_ns: Some(1e6),
        current_median_ns: Some(1e6 * (1.0 + change)),
        change: Some(change),
        ci: Some((change - 0.01, change + 0.01)),
        p_value: Some(0.001),
        threshold: 0.05,
        verdict,
        adapter_label: "llvmpipe (vulkan)".to_string(),
        evidence: None,
    }
}

fn parts(rows: Vec<PhaseComparison>, incomplete: bool) -> Parts {
    let comparison = Comparison {
        rows,
        config: CompareConfig::default(),
        kernel_changes: Vec::new(),
        current_incomplete: incomplete,
    };
    Parts {
        pairs: vec![(RunRecord::new(None), comparison)],
        notes: Vec::new(),
        base_sha: None,
        incomparable: None,
        mode: "A/B mode: test".to_string(),
        timing: None,
    }
}

fn labelled(label: &str) -> Provided {
    Provided {
        labels: vec![label.to_string()],
        ..Provided::default()
    }
}

#[test]
fn a_regression_fails_the_check_and_names_the_count() {
    let decision = decide(
        &workspace(None),
        &env(),
        Provided::default(),
        parts(
            vec![
                row("a", Verdict::Regression, 0.3),
                row("b", Verdict::NoChange, 0.0),
            ],
            false,
        ),
    );
    assert!(decision.fails());
    assert_eq!(
        decision.check(),
        (CheckConclusion::Failure, "1 regression".to_string())
    );
    assert!(decision.body.contains("A/B mode: test"), "{}", decision.body);
    assert_eq!(decision.finish().ok(), Some(true));
}

#[test]
fn no_change_passes() {
    let decision = decide(
        &workspace(None),
        &env(),
        Provided::default(),
        parts(vec![row("a", Verdict::NoChange, 0.01)], false),
    );
    assert!(!decision.fails());
    assert_eq!(
        decision.check(),
        (CheckConclusion::Success, "no regression".to_string())
    );
    assert!(!decision.wants_new_comment(CommentOn::Regression));
    assert!(!decision.wants_new_comment(CommentOn::Change));
    assert!(decision.wants_new_comment(CommentOn::Always));
}

#[test]
fn an_ab_comment_says_how_its_pairs_were_timed() {
    // A/B parts carry pairs, not records: the timing comes beside them.
    let body = |timing| {
        let mut ab = parts(vec![row("a", Verdict::NoChange, 0.01)], false);
        ab.timing = timing;
        decide(&workspace(None), &env(), Provided::default(), ab).body
    };
    assert!(body(Some(TimingMethod::GpuTimestamps)).contains("Timing: gpu timestamps;"));
    assert!(body(None).contains("Timing: unknown;"));
}

#[test]
fn the_accept_label_turns_a_failure_into_a_neutral_check() {
    let decision = decide(
        &workspace(Some("perf-accepted")),
        &env(),
        labelled("perf-accepted"),
        parts(vec![row("a", Verdict::Regression, 0.3)], false),
    );
    assert!(!decision.fails());
    assert_eq!(decision.accepted_by.as_deref(), Some("perf-accepted"));
    assert_eq!(decision.check().0, CheckConclusion::Neutral);
}

#[test]
fn a_label_that_is_not_the_configured_one_accepts_nothing() {
    let decision = decide(
        &workspace(Some("perf-accepted")),
        &env(),
        labelled("something-else"),
        parts(vec![row("a", Verdict::Regression, 0.3)], false),
    );
    assert!(decision.fails());
    assert_eq!(decision.check().0, CheckConclusion::Failure);
}

#[test]
fn an_incomplete_record_fails_with_a_title_that_says_so_and_no_label_accepts_it() {
    let decision = decide(
        &workspace(Some("perf-accepted")),
        &env(),
        labelled("perf-accepted"),
        parts(vec![row("a", Verdict::NoChange, 0.0)], true),
    );
    assert!(decision.fails());
    assert_eq!(decision.accepted_by, None);
    let (conclusion, title) = decision.check();
    assert_eq!(conclusion, CheckConclusion::Failure);
    assert!(title.contains("incomplete"), "{title}");
}

#[test]
fn an_incomparable_baseline_fails_the_check_and_the_command() {
    let mut parts = parts(vec![row("a", Verdict::Incomparable, 0.0)], false);
    parts.incomparable = Some(
        GateError::OtherAdapter {
            adapters: vec!["other adapter".into()],
        }
        .into(),
    );
    let decision = decide(&workspace(None), &env(), Provided::default(), parts);
    assert_eq!(decision.check().0, CheckConclusion::Failure);
    assert!(decision.finish().is_err());
}

#[test]
fn an_explicit_head_replaces_the_commit_a_record_claims() {
    let mut parts = parts(vec![row("a", Verdict::NoChange, 0.0)], false);
    parts.pairs[0].0.git_commit = Some("b".repeat(40));
    let provided = Provided {
        head_sha: Some("a".repeat(40)),
        ..Provided::default()
    };
    let decision = decide(&workspace(None), &env(), provided, parts);
    assert!(!decision.body.contains(&"b".repeat(40)), "{}", decision.body);
}

fn expecting(expected: Expected, on_gap: OnGap) -> Provided {
    Provided {
        expected: Some(expected),
        on_gap,
        ..Provided::default()
    }
}

#[test]
fn a_model_the_base_configuration_names_and_no_record_measured_fails_the_check() {
    let expected = Expected {
        targets: vec!["a".into(), "vgg-a".into()],
        origin: "the configuration at 1a2b3c4".into(),
        ..Expected::default()
    };
    let decision = decide(
        &workspace(None),
        &env(),
        expecting(expected, OnGap::Fail),
        parts(vec![row("a/train/b1/f32/wgpu", Verdict::NoChange, 0.0)], false),
    );
    assert!(decision.fails());
    let (conclusion, title) = decision.check();
    assert_eq!(conclusion, CheckConclusion::Failure);
    assert!(title.contains("measure vgg-a named by"), "{title}");
    assert!(
        decision.body.contains("Not judged:") && decision.body.contains("llvmpipe (vulkan)"),
        "{}",
        decision.body
    );
}

#[test]
fn a_gap_can_be_made_neutral_but_no_label_accepts_it() {
    let expected = Expected {
        failed_legs: vec![FailedLeg {
            name: "benchmarks (gpu-b)".into(),
            conclusion: "cancelled".into(),
        }],
        ..Expected::default()
    };
    let rows = || parts(vec![row("a/train/b1/f32/wgpu", Verdict::NoChange, 0.0)], false);
    let mut provided = expecting(expected.clone(), OnGap::Fail);
    provided.labels = vec!["perf-accepted".into()];
    let failed = decide(&workspace(Some("perf-accepted")), &env(), provided, rows());
    assert!(failed.fails());
    assert_eq!(failed.check().0, CheckConclusion::Failure);
    assert!(failed.check().1.contains("cancelled"), "{:?}", failed.check());
    let neutral = decide(
        &workspace(None),
        &env(),
        expecting(expected, OnGap::Neutral),
        rows(),
    );
    assert!(!neutral.fails());
    assert_eq!(neutral.check().0, CheckConclusion::Neutral);
}

#[test]
fn a_blessed_benchmark_a_record_left_out_is_a_gap_unless_the_configuration_dropped_it() {
    let mut record = RunRecord::new(None);
    let parts_with = |record: RunRecord| {
        let mut parts = parts(vec![row("a/train/b1/f32/wgpu", Verdict::NoChange, 0.0)], false);
        parts.pairs[0].0 = record;
        parts
    };
    record.benchmarks.clear();
    let blessed = |ids: &[&str]| {
        vec![expect::BlessedRunner {
            slug: "slug".to_string(),
            label: "llvmpipe (vulkan)".to_string(),
            ids: ids.iter().map(|id| id.to_string()).collect::<BTreeSet<_>>(),
        }]
    };
    // Rows marked missing by the comparison are gaps too.
    let mut missing = parts_with(record.clone());
    missing.pairs[0]
        .1
        .rows
        .push(row("a/train/b8/f32/wgpu", Verdict::Missing, 0.0));
    let decision = decide(
        &workspace(None),
        &env(),
        expecting(Expected::default(), OnGap::Fail),
        missing,
    );
    assert!(decision.fails(), "{:?}", decision.gaps);
    assert!(
        decision.gaps[0].contains("a/train/b8/f32/wgpu"),
        "{:?}",
        decision.gaps
    );
    // A target the pull request's configuration dropped is flagged, not failed.
    let expected = Expected {
        targets: vec!["a".into()],
        dropped: vec!["b".into()],
        blessed: blessed(&["b/train/b1/f32/wgpu"]),
        ..Expected::default()
    };
    let decision = decide(
        &workspace(None),
        &env(),
        expecting(expected, OnGap::Fail),
        parts_with(record),
    );
    assert!(!decision.fails(), "{:?}", decision.gaps);
    assert!(
        decision.body.contains("removes b from the configuration"),
        "{}",
        decision.body
    );
}

#[test]
fn a_benchmark_label_accepts_the_regressions_it_names_and_no_others() {
    let rows = || {
        parts(
            vec![
                row("resnet/train/b1/f32/wgpu", Verdict::Regression, 0.3),
                row("vgg/train/b1/f32/wgpu", Verdict::Regression, 0.3),
            ],
            false,
        )
    };
    let one = decide(
        &workspace(Some("convbench-accept")),
        &env(),
        labelled("convbench-accept:resnet/*"),
        rows(),
    );
    assert!(one.fails());
    assert_eq!(one.waived.len(), 1);
    let both = decide(
        &workspace(Some("convbench-accept")),
        &env(),
        Provided {
            labels: vec![
                "convbench-accept:resnet/*".into(),
                "convbench-accept:vgg/*".into(),
            ],
            ..Provided::default()
        },
        rows(),
    );
    assert!(!both.fails());
    assert_eq!(both.check().0, CheckConclusion::Neutral);
    assert!(both.body.contains("Accepted:"), "{}", both.body);
    // Without an accept label configured, no label waives anything.
    let none = decide(&workspace(None), &env(), labelled("convbench-accept:*"), rows());
    assert!(none.fails() && none.waived.is_empty());
}

#[test]
fn a_runner_blessed_at_the_base_that_sent_no_record_fails_the_check() {
    let expected = Expected {
        blessed: vec![
            expect::BlessedRunner {
                slug: "llvmpipe".into(),
                label: "llvmpipe (vulkan)".into(),
                ids: BTreeSet::new(),
            },
            expect::BlessedRunner {
                slug: "amd-mi300".into(),
                label: "AMD Instinct MI300X (vulkan)".into(),
                ids: BTreeSet::new(),
            },
        ],
        ..Expected::default()
    };
    let decision = decide(
        &workspace(None),
        &env(),
        expecting(expected, OnGap::Fail),
        parts(vec![row("a/train/b1/f32/wgpu", Verdict::NoChange, 0.0)], false),
    );
    assert!(decision.fails());
    assert_eq!(decision.gaps.len(), 1, "{:?}", decision.gaps);
    assert!(
        decision.gaps[0].contains("no record from AMD Instinct MI300X (vulkan)"),
        "{:?}",
        decision.gaps
    );
}

#[test]
fn the_mode_follows_the_flags_then_the_configuration_then_the_base() {
    let mut ws = workspace(None);
    let files = ModeRequest {
        judging_files: true,
        asked: Some(CiMode::Ab),
        ..ModeRequest::default()
    };
    assert_eq!(
        choose_mode(&files, &ws),
        Mode::Baseline("judging the saved files of --results".into())
    );
    let asked = ModeRequest {
        asked: Some(CiMode::Baseline),
        ..ModeRequest::default()
    };
    assert_eq!(
        choose_mode(&asked, &ws),
        Mode::Baseline("asked for by --mode baseline".into())
    );
    ws.config.ci.mode = Some(CiMode::Ab);
    assert_eq!(
        choose_mode(&ModeRequest::default(), &ws),
        Mode::Ab { forced: true }
    );
    ws.config.ci.mode = Some(CiMode::Baseline);
    let Mode::Baseline(why) = choose_mode(&ModeRequest::default(), &ws) else {
        panic!("ci.mode = baseline decides in baseline mode");
    };
    assert!(why.contains("ci.mode"), "{why}");
    ws.config.ci.mode = None;
    let other = ModeRequest {
        other_backend: true,
        ..ModeRequest::default()
    };
    let Mode::Baseline(why) = choose_mode(&other, &ws) else {
        panic!("a cuda run cannot be A/B");
    };
    assert!(why.contains("other than wgpu"), "{why}");
    // No repository at the root: no base, so baseline mode says why.
    let dir = tempfile::tempdir().expect("temporary directory");
    ws.root = dir.path().to_path_buf();
    let Mode::Baseline(why) = choose_mode(&ModeRequest::default(), &ws) else {
        panic!("without a repository there is no base");
    };
    assert!(why.starts_with("no base revision"), "{why}");
}

#[test]
fn only_a_default_ab_gives_way_and_only_to_the_environment() {
    let no_adapter = Error::from(crate::DeviceError::NoAdapter).context("the base revision's side");
    let chosen = Mode::Ab { forced: false };
    let why = chosen.fallback(&no_adapter).expect("no adapter gives way");
    assert!(
        why.starts_with("A/B could not run: the base revision's side: no GPU adapter found"),
        "{why}"
    );
    let unreadable = Error::from(crate::baseline::BaselineError::Git {
        context: "cannot read the base revision's tree".into(),
        source: git2::Error::from_str("object not found"),
    });
    assert!(chosen.fallback(&unreadable).is_some());
    // Failures of the kernels on a device that opened are the command's: baseline mode would
    // run the same kernels.
    for while_running in [
        crate::DeviceError::Rejected {
            what: "conv.wgsl".into(),
            message: "invalid".into(),
        },
        crate::DeviceError::Timeout {
            what: "a pair".into(),
            deadline: "1m".into(),
            env: "CONVBENCH_GPU_TIMEOUT",
        },
        crate::DeviceError::OutOfMemory {
            what: "allocating".into(),
            message: "oom".into(),
        },
    ] {
        let error = Error::from(while_running).context("the head's side");
        assert_eq!(chosen.fallback(&error), None, "{error}");
    }
    let mismatch = crate::harness::VerificationError::NoVariantAgrees {
        ops: vec!["conv2d_forward".into()],
    };
    assert_eq!(chosen.fallback(&mismatch.into()), None);
    assert_eq!(
        chosen.fallback(&crate::harness::Interrupted::FirstPair.into()),
        None
    );
    assert_eq!(Mode::Ab { forced: true }.fallback(&no_adapter), None);
    assert_eq!(Mode::Baseline("asked".into()).fallback(&no_adapter), None);
}
