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
    parts.incomparable = Some(Error::InvalidInput("other adapter".into()));
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
