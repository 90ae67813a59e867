use super::*;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

use crate::results::fixtures::{adapter, phase as phase_result, record};

fn benchmark(id: &str, phases: Vec<(Phase, Vec<u64>)>) -> BenchmarkResult {
    crate::results::fixtures::benchmark(
        id,
        phases
            .into_iter()
            .map(|(phase, samples)| phase_result(phase, samples))
            .collect(),
    )
}

/// Every sample of every phase multiplied by `factor`.
fn scaled(record: &RunRecord, factor: f64) -> RunRecord {
    let mut scaled = record.clone();
    for phase in scaled.benchmarks.iter_mut().flat_map(|b| b.phases.iter_mut()) {
        *phase = phase_result(
            phase.phase,
            phase
                .samples_ns
                .iter()
                .map(|&ns| (ns as f64 * factor).round() as u64)
                .collect(),
        );
    }
    scaled
}

/// Standard normal deviate (Box–Muller).
fn standard_normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `n` log-normal durations around `median_ns` with coefficient of variation `cv`.
fn log_normal_samples(rng: &mut StdRng, n: usize, median_ns: f64, cv: f64) -> Vec<u64> {
    let sigma = (1.0 + cv * cv).ln().sqrt();
    (0..n)
        .map(|_| (median_ns * (sigma * standard_normal(rng)).exp()).round() as u64)
        .collect()
}

fn fast_config() -> CompareConfig {
    CompareConfig {
        bootstrap_resamples: 300,
        ..CompareConfig::default()
    }
}

fn row<'a>(comparison: &'a Comparison, id: &str, phase: Phase) -> &'a PhaseComparison {
    comparison
        .rows
        .iter()
        .find(|row| row.benchmark_id == id && row.phase == phase)
        .unwrap_or_else(|| panic!("no row for {id} {phase:?}"))
}

const STEADY: [u64; 10] = [
    1_000_000, 1_003_000, 998_000, 1_001_000, 999_500, 1_002_000, 997_000, 1_000_500, 1_004_000, 996_000,
];

fn steady(factor: f64) -> Vec<u64> {
    STEADY.iter().map(|&ns| (ns as f64 * factor) as u64).collect()
}

/// Ten benchmarks' worth of steady samples per phase, in a strategy: `benchmarks` ids with
/// `phases` phases each, 10 samples within ±1 % of a random median.
fn low_noise_record() -> impl Strategy<Value = RunRecord> {
    let phase = (1.0e4f64..1.0e8, prop::collection::vec(-0.01f64..0.01, 10)).prop_map(|(median, noise)| {
        noise
            .iter()
            .map(|e| (median * (1.0 + e)) as u64)
            .collect::<Vec<u64>>()
    });
    prop::collection::vec(prop::collection::vec(phase, 1..4), 1..4).prop_map(|benchmarks| {
        record(
            benchmarks
                .into_iter()
                .enumerate()
                .map(|(index, phases)| {
                    benchmark(
                        &format!("net{index}/train/b8/f32/wgpu"),
                        Phase::ALL.into_iter().zip(phases).collect(),
                    )
                })
                .collect(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn identical_records_never_regress(
        benchmarks in prop::collection::vec(prop::collection::vec(prop::collection::vec(1u64..10_000_000, 0..15), 1..4), 1..4),
    ) {
        let baseline = record(
            benchmarks
                .into_iter()
                .enumerate()
                .map(|(index, phases)| benchmark(&format!("net{index}"), Phase::ALL.into_iter().zip(phases).collect()))
                .collect(),
        );
        let comparison = compare(&baseline, &baseline, &fast_config());
        prop_assert_eq!(comparison.count(Verdict::Regression), 0);
        prop_assert_eq!(comparison.count(Verdict::Improvement), 0);
        prop_assert!(!comparison.has_regression());
    }

    #[test]
    fn half_again_slower_is_a_regression_everywhere(baseline in low_noise_record()) {
        let comparison = compare(&baseline, &scaled(&baseline, 1.5), &fast_config());
        prop_assert!(!comparison.rows.is_empty());
        for row in &comparison.rows {
            prop_assert_eq!(row.verdict, Verdict::Regression, "{:?}", row);
        }
        prop_assert!(comparison.gate_fails());
    }

    #[test]
    fn per_benchmark_glob_threshold_applies(baseline in low_noise_record(), factor in 1.2f64..3.0) {
        let config = CompareConfig {
            per_benchmark: vec![
                ("net0/*".to_string(), factor + 1.0),
                // Never reached for net0: the first matching glob wins.
                ("net0/train/*".to_string(), 0.0),
            ],
            ..fast_config()
        };
        let comparison = compare(&baseline, &scaled(&baseline, factor), &config);
        for row in &comparison.rows {
            if row.benchmark_id.starts_with("net0/") {
                prop_assert_eq!(row.threshold, factor + 1.0);
                prop_assert_eq!(row.verdict, Verdict::NoChange, "{:?}", row);
            } else {
                prop_assert_eq!(row.threshold, 0.05);
                prop_assert_eq!(row.verdict, Verdict::Regression, "{:?}", row);
            }
        }
    }
}

/// Log-normal noise with a 3 % coefficient of variation, 10 samples a side, one benchmark and
/// one phase per trial: the gate must rarely fire on unchanged code and almost always catch a
/// real 10 % slowdown (twice the default 5 % threshold).
#[test]
fn simulation_false_alarm_and_detection_rates() {
    const TRIALS: usize = 1000;
    const SAMPLES: usize = 10;
    const CV: f64 = 0.03;
    let config = fast_config();
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let mut null = HashMap::<Verdict, usize>::new();
    let mut slowed = HashMap::<Verdict, usize>::new();
    for trial in 0..TRIALS {
        let id = format!("sim{trial}/train/b64/f32/wgpu");
        for (slowdown, tally) in [(1.0, &mut null), (1.1, &mut slowed)] {
            let baseline = log_normal_samples(&mut rng, SAMPLES, 2.0e6, CV);
            let current = log_normal_samples(&mut rng, SAMPLES, 2.0e6 * slowdown, CV);
            let comparison = compare(
                &record(vec![benchmark(&id, vec![(Phase::Total, baseline)])]),
                &record(vec![benchmark(&id, vec![(Phase::Total, current)])]),
                &config,
            );
            assert_eq!(comparison.rows.len(), 1);
            *tally.entry(comparison.rows[0].verdict).or_default() += 1;
        }
    }
    let rate = |tally: &HashMap<Verdict, usize>, verdict| {
        tally.get(&verdict).copied().unwrap_or(0) as f64 / TRIALS as f64
    };
    let false_alarm = rate(&null, Verdict::Regression);
    let detection = rate(&slowed, Verdict::Regression);
    println!(
        "unchanged: false-alarm (regression) rate {:.1}%, improvement {:.1}%, inconclusive {:.1}%, no change {:.1}%",
        100.0 * false_alarm,
        100.0 * rate(&null, Verdict::Improvement),
        100.0 * rate(&null, Verdict::Inconclusive),
        100.0 * rate(&null, Verdict::NoChange),
    );
    println!(
        "10% slower: detection (regression) rate {:.1}%, inconclusive {:.1}%, no change {:.1}%",
        100.0 * detection,
        100.0 * rate(&slowed, Verdict::Inconclusive),
        100.0 * rate(&slowed, Verdict::NoChange),
    );
    assert!(false_alarm <= 0.01, "false-alarm rate {false_alarm}");
    assert!(detection >= 0.95, "detection rate {detection}");
}

#[test]
fn new_missing_and_partial_phases() {
    let baseline = record(vec![
        benchmark(
            "kept",
            vec![(Phase::Forward, steady(1.0)), (Phase::Update, steady(1.0))],
        ),
        benchmark("gone", vec![(Phase::Forward, steady(1.0))]),
    ]);
    let current = record(vec![
        benchmark("added", vec![(Phase::Forward, steady(1.0))]),
        benchmark(
            "kept",
            vec![(Phase::Forward, steady(1.0)), (Phase::Total, steady(1.0))],
        ),
    ]);
    let comparison = compare(&baseline, &current, &fast_config());
    let summary: Vec<(&str, Phase, Verdict)> = comparison
        .rows
        .iter()
        .map(|row| (row.benchmark_id.as_str(), row.phase, row.verdict))
        .collect();
    assert_eq!(
        summary,
        [
            ("added", Phase::Forward, Verdict::New),
            ("kept", Phase::Forward, Verdict::NoChange),
            ("kept", Phase::Update, Verdict::Missing),
            ("kept", Phase::Total, Verdict::New),
            ("gone", Phase::Forward, Verdict::Missing),
        ]
    );
    let gone = row(&comparison, "gone", Phase::Forward);
    assert_eq!(gone.baseline_median_ns, Some(1_000_250.0));
    assert_eq!(gone.current_median_ns, None);
    assert!(!comparison.gate_fails());
}

#[test]
fn other_adapter_is_incomparable_unless_allowed() {
    let baseline = record(vec![benchmark("net", vec![(Phase::Total, steady(1.0))])]);
    let mut current = record(vec![benchmark("net", vec![(Phase::Total, steady(2.0))])]);
    current.benchmarks[0].adapter = adapter("AMD Radeon");
    let refused = compare(&baseline, &current, &fast_config());
    let only = row(&refused, "net", Phase::Total);
    assert_eq!(only.verdict, Verdict::Incomparable);
    assert_eq!(only.change, None);
    assert_eq!(
        only.adapter_label,
        "AMD Radeon (vulkan) (baseline: NVIDIA H100 (vulkan))"
    );
    assert!(!refused.gate_fails());

    let allowed = compare(
        &baseline,
        &current,
        &CompareConfig {
            allow_other_adapter: true,
            ..fast_config()
        },
    );
    assert_eq!(row(&allowed, "net", Phase::Total).verdict, Verdict::Regression);
}

#[test]
fn a_driver_update_is_another_adapter() {
    let baseline = record(vec![benchmark("net", vec![(Phase::Total, steady(1.0))])]);
    let mut current = baseline.clone();
    current.benchmarks[0].adapter.driver_info = "590.2".to_string();
    let comparison = compare(&baseline, &current, &fast_config());
    let only = row(&comparison, "net", Phase::Total);
    assert_eq!(only.verdict, Verdict::Incomparable);
    assert!(only.adapter_label.contains("590.2") && only.adapter_label.contains("580.1"));
}

#[test]
fn too_few_samples_are_inconclusive() {
    let baseline = record(vec![benchmark(
        "net",
        vec![(Phase::Total, steady(1.0)[..4].to_vec())],
    )]);
    let current = record(vec![benchmark("net", vec![(Phase::Total, steady(2.0))])]);
    let comparison = compare(&baseline, &current, &fast_config());
    let only = row(&comparison, "net", Phase::Total);
    assert_eq!(only.verdict, Verdict::Inconclusive);
    assert!(only.change.is_some_and(|change| change > 0.9));
    assert_eq!((only.ci, only.p_value), (None, None));
    assert!(!comparison.gate_fails());
    let strict = CompareConfig {
        fail_on_inconclusive: true,
        ..fast_config()
    };
    assert!(compare(&baseline, &current, &strict).gate_fails());
}

#[test]
fn improvement_is_symmetric() {
    let baseline = record(vec![benchmark("net", vec![(Phase::Forward, steady(1.0))])]);
    let comparison = compare(&baseline, &scaled(&baseline, 0.7), &CompareConfig::default());
    let only = row(&comparison, "net", Phase::Forward);
    assert_eq!(only.verdict, Verdict::Improvement);
    let (low, high) = only.ci.expect("tested");
    assert!(low < -0.25 && high < -0.25, "({low}, {high})");
    assert!(only.p_value.is_some_and(|p| p < 1e-3));
}

#[test]
fn noisy_large_change_is_inconclusive() {
    // Bimodal timings: the median jumps from 200 to 300 ns, but the ranks barely move.
    let baseline = record(vec![benchmark("net", vec![(Phase::Total, [100, 300].repeat(5))])]);
    let current = record(vec![benchmark(
        "net",
        vec![(Phase::Total, [100, 300, 300, 100, 300].repeat(2))],
    )]);
    let comparison = compare(&baseline, &current, &fast_config());
    let only = row(&comparison, "net", Phase::Total);
    assert_eq!(only.change, Some(0.5));
    assert!(only.p_value.is_some_and(|p| p > 0.2), "{only:?}");
    assert_eq!(only.verdict, Verdict::Inconclusive, "{only:?}");
}

#[test]
fn phase_filter_and_determinism() {
    let baseline = record(vec![benchmark(
        "net",
        vec![(Phase::Forward, steady(1.0)), (Phase::Total, steady(1.0))],
    )]);
    let current = scaled(&baseline, 1.03);
    let config = CompareConfig {
        phases: Some(vec![Phase::Total]),
        ..CompareConfig::default()
    };
    let comparison = compare(&baseline, &current, &config);
    assert_eq!(comparison.rows.len(), 1);
    assert_eq!(comparison.rows[0].phase, Phase::Total);
    assert_eq!(comparison, compare(&baseline, &current, &config));
}

#[test]
fn decision_rule_branches() {
    let tested = |change, ci, p_value| Tested {
        row: 0,
        change,
        ci,
        p_value,
        evidence: None,
        settle: None,
    };
    let verdict = |test: Tested, discovery| decide(&test, 0.05, discovery);
    assert_eq!(
        verdict(tested(0.10, (0.06, 0.14), 0.001), true),
        Verdict::Regression
    );
    // Significant, but the CI still reaches 0: not proven slower.
    assert_eq!(
        verdict(tested(0.10, (-0.01, 0.20), 0.001), true),
        Verdict::Inconclusive
    );
    // Beyond the threshold but not a discovery after the FDR step.
    assert_eq!(
        verdict(tested(0.10, (0.06, 0.14), 0.04), false),
        Verdict::Inconclusive
    );
    assert_eq!(
        verdict(tested(-0.10, (-0.14, -0.06), 0.001), true),
        Verdict::Improvement
    );
    // The CI within the threshold settles it even when significant.
    assert_eq!(
        verdict(tested(0.03, (0.01, 0.049), 0.001), false),
        Verdict::NoChange
    );
    // The whole CI within the threshold, no evidence of a shift either way: no change.
    assert_eq!(
        verdict(tested(0.01, (-0.04, 0.045), 0.2), false),
        Verdict::NoChange
    );
    // A point estimate within the threshold proves nothing when the CI reaches past it.
    assert_eq!(
        verdict(tested(0.03, (-0.04, 0.09), 0.2), false),
        Verdict::Inconclusive
    );
    assert_eq!(
        verdict(tested(0.04, (0.01, 0.09), 0.01), false),
        Verdict::Inconclusive
    );
    // The case that was measured: +1% with a CI of [-36%, +37%] is not "no change".
    assert_eq!(
        verdict(tested(0.01, (-0.36, 0.37), 0.5), false),
        Verdict::Inconclusive
    );
    // Beyond the threshold but not a discovery: undecided.
    assert_eq!(
        verdict(tested(0.08, (-0.01, 0.15), 0.2), false),
        Verdict::Inconclusive
    );
}

#[test]
fn verdict_names() {
    assert_eq!(Verdict::NoChange.to_string(), "no change");
    assert_eq!(
        serde_json::to_string(&Verdict::NoChange).expect("serialises"),
        "\"no_change\""
    );
    assert_eq!(
        serde_json::from_str::<Verdict>("\"incomparable\"").expect("parses"),
        Verdict::Incomparable
    );
}

#[test]
fn validate_names_the_bad_setting() {
    assert!(CompareConfig::default().validate().is_ok());
    let bad_glob = CompareConfig {
        per_benchmark: vec![("alexnet/[".to_string(), 0.1)],
        ..CompareConfig::default()
    };
    let message = bad_glob.validate().expect_err("invalid glob").to_string();
    assert!(message.contains("alexnet/["), "{message}");
    let bad_alpha = CompareConfig {
        alpha: 1.5,
        ..CompareConfig::default()
    };
    assert!(bad_alpha.validate().is_err());
    let negative = CompareConfig {
        threshold: -0.1,
        ..CompareConfig::default()
    };
    assert!(negative.validate().is_err());
}

#[test]
fn fractions_read_as_numbers_or_percentages() {
    assert_eq!(parse_fraction("0.05"), Ok(0.05));
    assert_eq!(parse_fraction(" 12.5 % "), Ok(0.125));
    assert_eq!(parse_fraction("-5%"), Ok(-0.05));
    for bad in ["five", "%", "", "inf", "NaN%"] {
        let message = parse_fraction(bad).expect_err(bad);
        assert!(message.contains("is not a number"), "{bad}: {message}");
    }
}

#[test]
fn threshold_for_uses_the_first_matching_glob() {
    let config = CompareConfig {
        per_benchmark: vec![
            ("vgg*".to_string(), 0.10),
            ("*/b1/*".to_string(), 0.20),
            ("alexnet/[".to_string(), 0.50),
        ],
        ..CompareConfig::default()
    };
    assert_eq!(config.threshold_for("vgg_a/train/b1/f32/wgpu"), 0.10);
    assert_eq!(config.threshold_for("alexnet/train/b1/f32/wgpu"), 0.20);
    assert_eq!(config.threshold_for("alexnet/train/b128/f32/wgpu"), 0.05);
}

#[test]
fn changed_kernel_variants_are_listed_beside_the_verdicts() {
    let mut old = benchmark("alexnet/train/b8/f32/wgpu", vec![(Phase::Total, steady(1.0))]);
    let mut new = old.clone();
    old.kernels = [
        ("conv1 forward".to_string(), "direct".to_string()),
        ("conv2 forward".to_string(), "gemm_64x64x16_4x4".to_string()),
        ("fc6 forward".to_string(), "gemm_64x8x16_4x4".to_string()),
    ]
    .into();
    new.kernels = old.kernels.clone();
    new.kernels
        .insert("conv2 forward".into(), "gemm_32x64x32_4x4".into());
    new.kernels.remove("fc6 forward");
    let comparison = compare(
        &record(vec![old.clone()]),
        &record(vec![new.clone()]),
        &fast_config(),
    );
    assert_eq!(
        comparison.kernel_changes,
        vec![
            KernelChange {
                benchmark_id: new.id.clone(),
                layer: "conv2 forward".into(),
                baseline: Some("gemm_64x64x16_4x4".into()),
                current: Some("gemm_32x64x32_4x4".into()),
            },
            KernelChange {
                benchmark_id: new.id.clone(),
                layer: "fc6 forward".into(),
                baseline: Some("gemm_64x8x16_4x4".into()),
                current: None,
            },
        ]
    );
    // A record from before variants were recorded reports no change rather than every layer.
    let mut before = old.clone();
    before.kernels.clear();
    assert!(
        compare(&record(vec![before]), &record(vec![new]), &fast_config())
            .kernel_changes
            .is_empty()
    );
    assert!(
        compare(&record(vec![old.clone()]), &record(vec![old]), &fast_config())
            .kernel_changes
            .is_empty()
    );
}

/// A simulated runner: each run has its own level (drift between runs, `run_sd`), each round
/// its own (`round_sd`), each sample its noise (`sample_sd`), all log-normal.
struct Runner {
    run_sd: f64,
    round_sd: f64,
    sample_sd: f64,
}

impl Runner {
    /// `runs` runs of `rounds` rounds of `samples` samples of the total phase, at `level` ns.
    fn measure(
        &self,
        rng: &mut StdRng,
        id: &str,
        runs: usize,
        rounds: usize,
        samples: usize,
        level: f64,
    ) -> BenchmarkResult {
        let normal = |rng: &mut StdRng| {
            // Box–Muller: one standard normal draw.
            let (u, v): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random_range(0.0..1.0));
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let mut all = Vec::new();
        for _ in 0..runs {
            let run = self.run_sd * normal(rng);
            for _ in 0..rounds {
                let round = self.round_sd * normal(rng);
                for _ in 0..samples {
                    let noise = self.sample_sd * normal(rng);
                    all.push((level * (run + round + noise).exp()) as u64);
                }
            }
        }
        let mut result = benchmark(id, vec![(Phase::Total, all)]);
        result.rounds = vec![samples; runs * rounds];
        result.runs = if runs > 1 { vec![rounds; runs] } else { Vec::new() };
        result
    }
}

/// False alarms and detection of the round-based rule on runners with drift between runs, in
/// baseline mode (a baseline of 10 blessed runs, a current run of 3 rounds of 10 samples), and
/// what the sample-based rule (rounds ignored) makes of the same data. "Loaded" has the drift
/// measured on a 2-core machine with a parallel build: runs 10 % apart (sd), rounds 3 %, samples
/// 15 %; "idle" 2 %, 1 % and 3 %.
#[test]
fn simulation_with_drift_between_runs() {
    const TRIALS: usize = 1000;
    let config = fast_config();
    let mut rng = StdRng::seed_from_u64(0xd21f7);
    let loaded = Runner {
        run_sd: 0.10,
        round_sd: 0.03,
        sample_sd: 0.15,
    };
    let idle = Runner {
        run_sd: 0.02,
        round_sd: 0.01,
        sample_sd: 0.03,
    };
    let mut rates = BTreeMap::new();
    for (name, runner) in [("loaded", &loaded), ("idle", &idle)] {
        for slowdown in [1.0, 1.05, 1.1, 1.2] {
            let (mut rounds_rule, mut samples_rule) = (HashMap::<Verdict, usize>::new(), HashMap::new());
            for trial in 0..TRIALS {
                let id = format!("sim{trial}/train/b8/f32/wgpu");
                let baseline = runner.measure(&mut rng, &id, 10, 3, 10, 2.0e8);
                let current = runner.measure(&mut rng, &id, 1, 3, 10, 2.0e8 * slowdown);
                let judge = |baseline: &BenchmarkResult, current: &BenchmarkResult| {
                    compare(
                        &record(vec![baseline.clone()]),
                        &record(vec![current.clone()]),
                        &config,
                    )
                    .rows[0]
                        .verdict
                };
                *rounds_rule.entry(judge(&baseline, &current)).or_default() += 1;
                let flat = |mut b: BenchmarkResult| {
                    b.rounds.clear();
                    b.runs.clear();
                    b
                };
                *samples_rule
                    .entry(judge(&flat(baseline), &flat(current)))
                    .or_default() += 1;
            }
            let rate = |tally: &HashMap<Verdict, usize>, verdict| {
                tally.get(&verdict).copied().unwrap_or(0) as f64 / TRIALS as f64
            };
            println!(
                "{name:<6} {:>+4.0}%: rounds rule: regression {:5.1}% inconclusive {:5.1}% no change {:5.1}%   \
                 samples rule: regression {:5.1}%",
                100.0 * (slowdown - 1.0),
                100.0 * rate(&rounds_rule, Verdict::Regression),
                100.0 * rate(&rounds_rule, Verdict::Inconclusive),
                100.0 * rate(&rounds_rule, Verdict::NoChange),
                100.0 * rate(&samples_rule, Verdict::Regression),
            );
            rates.insert(
                (name, (slowdown * 100.0).round() as u32),
                rate(&rounds_rule, Verdict::Regression),
            );
        }
    }
    // The rule's false-alarm rate is its one-sided level (alpha = 1 %) whatever the drift,
    // because the drift is measured from the blessed runs; 2 % allows for the simulation's own
    // spread over 1,000 trials. Under load baseline mode mostly says "inconclusive": one run
    // cannot be told from drift of 10 %. Interleaved A/B is the remedy there.
    assert!(
        rates[&("loaded", 100)] <= 0.02,
        "false alarms under load: {rates:?}"
    );
    assert!(rates[&("idle", 100)] <= 0.02, "false alarms when idle: {rates:?}");
    assert!(rates[&("idle", 110)] >= 0.80, "10% slowdown when idle: {rates:?}");
    assert!(rates[&("idle", 120)] >= 0.99, "20% slowdown when idle: {rates:?}");
}

/// Against one blessed run the drift between runs is unknown: even a 30% slowdown measured
/// in rounds is inconclusive, and the row says how to fix that.
#[test]
fn one_blessed_run_gives_no_verdict_on_rounds() {
    let mut rng = StdRng::seed_from_u64(7);
    let runner = Runner {
        run_sd: 0.0,
        round_sd: 0.01,
        sample_sd: 0.01,
    };
    let id = "one/train/b8/f32/wgpu";
    let baseline = runner.measure(&mut rng, id, 1, 3, 10, 1.0e8);
    let current = runner.measure(&mut rng, id, 1, 3, 10, 1.3e8);
    let comparison = compare(&record(vec![baseline]), &record(vec![current]), &fast_config());
    let row = &comparison.rows[0];
    assert_eq!(row.verdict, Verdict::Inconclusive);
    let evidence = row.evidence.as_deref().unwrap_or_default();
    assert!(
        evidence.contains("one blessed run") && evidence.contains("baseline update"),
        "{evidence}"
    );
}

/// On rounds, the change shown is the change judged (the level's), which lies inside its own
/// interval even where the ratio of pooled medians does not: a current run whose first two
/// rounds match the baseline and whose third is three times slower has a pooled median ratio of
/// 1, but a level 44 % above the baseline's.
#[test]
fn the_change_shown_on_rounds_is_the_one_judged() {
    let mut rng = StdRng::seed_from_u64(11);
    let runner = Runner {
        run_sd: 0.01,
        round_sd: 0.005,
        sample_sd: 0.005,
    };
    let id = "r/train/b8/f32/wgpu";
    let baseline = runner.measure(&mut rng, id, 4, 3, 10, 1.0e8);
    let mut current = runner.measure(&mut rng, id, 1, 3, 10, 1.0e8);
    for sample in &mut current.phases[0].samples_ns[20..] {
        *sample *= 3;
    }
    let comparison = compare(&record(vec![baseline]), &record(vec![current]), &fast_config());
    let row = &comparison.rows[0];
    let medians = row.current_median_ns.expect("current") / row.baseline_median_ns.expect("baseline") - 1.0;
    assert!(medians.abs() < 0.05, "pooled medians: {medians}");
    let change = row.change.expect("a change");
    let (low, high) = row.ci.expect("an interval");
    assert!((change - (3f64.ln() / 3.0).exp_m1()).abs() < 0.03, "{change}");
    assert!(
        low <= change && change <= high,
        "{change} outside [{low}, {high}]"
    );
    assert_eq!(row.verdict, Verdict::Regression);
}

/// An inconclusive row that one run cannot settle says by how much the interval stays wide,
/// beside the spread it comes from, in words that agree with each other.
#[test]
fn an_unsettleable_row_says_how_wide_its_interval_stays() {
    let mut rng = StdRng::seed_from_u64(3);
    let runner = Runner {
        run_sd: 0.04,
        round_sd: 0.005,
        sample_sd: 0.005,
    };
    let id = "u/train/b8/f32/wgpu";
    let mut config = fast_config();
    config.threshold = 0.05;
    for seed in 0..40u64 {
        let mut rng = StdRng::seed_from_u64(seed ^ rng.random::<u64>());
        let baseline = runner.measure(&mut rng, id, 5, 3, 10, 1.0e8);
        let current = runner.measure(&mut rng, id, 1, 3, 10, 1.06e8);
        let comparison = compare(&record(vec![baseline]), &record(vec![current]), &config);
        let row = &comparison.rows[0];
        let evidence = row.evidence.as_deref().unwrap_or_default();
        if row.verdict == Verdict::Inconclusive && evidence.contains("however many runs") {
            assert!(
                evidence.contains("keeps a run's interval at least ±")
                    && evidence.contains("between this change and the threshold"),
                "{evidence}"
            );
            return;
        }
    }
    panic!("no trial left a 6% slowdown on a 4% drift unsettled");
}
