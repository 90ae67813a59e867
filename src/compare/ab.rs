//! Verdicts of interleaved A/B measurements (`cargo convbench ab`): the base and the head run
//! alternately on one device in one process, so each pair of iterations saw the same machine.
//!
//! # Decision rule
//!
//! For each benchmark, with `n` pairs `(base_i, head_i)`:
//!
//! 1. `d_i = ln(head_i / base_i)`: the drift of the machine (clocks, load, heat) multiplies
//!    both times of a pair alike and cancels in the ratio, which is why pairs and not pooled
//!    samples are the unit. ABBA order (A first, then B first, alternating) cancels a linear
//!    trend within the pairs too.
//! 2. `change = exp(m) - 1` where `m` is the 20 %-trimmed mean of the `d_i` ([`TRIM`]), with
//!    the 95 % confidence interval and the one-sided p-value of Yuen's test (the winsorized
//!    variance, `n - 2g - 1` degrees of freedom for `g` pairs trimmed from each end). On a
//!    loaded runner one iteration in a pair is now and then preempted, making that pair's
//!    ratio 40 % off; a plain mean and t-test let such pairs decide (measured under load: 1
//!    false alarm in 30 unchanged trials with the plain t-test, none with Yuen's on the same
//!    pairs).
//! 3. The p-values of every benchmark whose `|change|` exceeds half its threshold
//!    ([`FLOOR`]) go through Benjamini–Hochberg at `alpha`, as in baseline mode.
//! 4. [`Verdict::Regression`]: `change > threshold / 2`, a discovery, and the interval above 0;
//!    [`Verdict::Improvement`] symmetrically; [`Verdict::NoChange`]: the change is shown to lie
//!    within `±threshold` by two one-sided tests at level `alpha` (TOST: the `1 - 2 alpha`
//!    interval lies within `±threshold`); otherwise [`Verdict::Inconclusive`], with the number
//!    of pairs that would settle it at the spread observed.
//!
//! # What the threshold means here
//!
//! The threshold is the slowdown the gate is built to catch: with pairs taken until the
//! verdict settles ([`crate::harness::ab`]), a true slowdown of the threshold ends as a
//! regression at least 95% of the time and identical code at most `alpha` of the time. A rule
//! that asked the estimate itself to exceed the threshold would catch a slowdown of exactly the
//! threshold only about as often as its estimate landed above it (74-82% after adaptive
//! stopping: `scripts/ab-rule-simulation.py`, the same procedure with both rules), so the bar for the estimate is half the
//! threshold: changes between half the threshold and the threshold are the zone where either
//! verdict may come. "No change" has to be shown at the same level as a regression (TOST at
//! `alpha`, not a 95% interval), so that a real slowdown of the threshold is not waved through
//! by one lucky look. Measured by simulation (`simulation_of_adaptive_looks`, 1,000 runs per
//! cell, pair ratios varying by 3-12% with heavy tails and 3% outliers): identical code
//! 0.1-0.9% regressions, a slowdown of the threshold 98.2-99.9%, half of it 38-52%, four times
//! the threshold 100% (median 8 pairs, 12 at a 12% spread). The standard error is Yuen's exact
//! one ([`yuen_standard_error`]); the shorthand it replaced overstated the error at the first
//! looks, where 20% trimming rounds down, and took 12-18 pairs for a 20% slowdown at a 8-12%
//! spread where 8-12 now do.
//!
//! Assumptions: the middle of the distribution of the log-ratios is roughly symmetric, the
//! pairs are independent of each other (the machine's drift is slow beside one pair), and both
//! sides ran the same plan on the same inputs (the harness guarantees it).

use super::{CI_CONFIDENCE, Verdict};
use crate::results::Phase;
use crate::stats::benjamini_hochberg;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

fn total_phase() -> Phase {
    Phase::Total
}

/// Fewest pairs for a verdict other than inconclusive.
pub const MIN_PAIRS: usize = 5;

/// Share of the pairs' log-ratios trimmed from each end (Yuen's 20%).
pub const TRIM: f64 = 0.2;

/// Share of its threshold a change's estimate must exceed to be a regression or an
/// improvement (see "What the threshold means here" in the module docs).
pub const FLOOR: f64 = 0.5;

/// The verdict on one benchmark's pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbRow {
    /// Benchmark id.
    pub benchmark_id: String,
    /// The phase judged: the whole iteration ([`Phase::Total`]) or one of its phases.
    #[serde(default = "total_phase")]
    pub phase: Phase,
    /// The layer judged (`--layers`: the layer's ops in every phase); `None` for the whole
    /// iteration or a phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// Pairs measured.
    pub pairs: usize,
    /// Median whole-iteration time of the base (ns).
    pub base_median_ns: f64,
    /// Median whole-iteration time of the head (ns).
    pub head_median_ns: f64,
    /// The base's time the change rests on (ns): the geometric mean of its times over the pairs
    /// the trimmed mean kept (the middle 60% by ratio), so `head_ns / base_ns` is exactly
    /// `1 + change`. Each side's median can disagree with the change, even in sign: the change
    /// divides within pairs (the machine's drift cancels) and trims outliers, a median does
    /// neither. 0 when not estimated (too few pairs, or a file written before it was kept).
    #[serde(default)]
    pub base_ns: f64,
    /// The head's time the change rests on (ns); see [`AbRow::base_ns`].
    #[serde(default)]
    pub head_ns: f64,
    /// `exp(mean log-ratio) - 1`: `0.1` is 10 % slower.
    pub change: f64,
    /// 95 % confidence interval of the change.
    pub ci: (f64, f64),
    /// One-sided p-value in the direction of the change.
    pub p_value: f64,
    /// Spread of the pairs' log-ratios (their winsorized standard deviation).
    pub pair_spread: f64,
    /// The threshold that applied.
    pub threshold: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// What the verdict rests on, and for an inconclusive one, what would settle it.
    pub evidence: String,
    /// The smallest slowdown these pairs would have called a regression 95% of the time
    /// ([`min_detectable_change`]), as a fraction; `None` with too few pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_detectable: Option<f64>,
    /// Every op ran the same code on both sides, so the benchmark was not timed
    /// ([`AbRow::same_code`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub same_code: bool,
}

impl AbRow {
    /// A benchmark that was not measured on both sides, with the reason (a kernel or network
    /// that exists on one side only, or changed).
    pub fn not_compared(benchmark_id: &str, threshold: f64, reason: String) -> Self {
        Self {
            benchmark_id: benchmark_id.to_string(),
            phase: Phase::Total,
            layer: None,
            pairs: 0,
            base_median_ns: 0.0,
            head_median_ns: 0.0,
            base_ns: 0.0,
            head_ns: 0.0,
            change: 0.0,
            ci: (f64::NEG_INFINITY, f64::INFINITY),
            p_value: 1.0,
            pair_spread: 0.0,
            threshold,
            verdict: Verdict::New,
            evidence: reason,
            min_detectable: None,
            same_code: false,
        }
    }

    /// A benchmark every op of which runs the same code on both sides (the same WGSL, comments
    /// and spacing aside, entry points, constants and dispatch): no change, and not timed. Two
    /// sides that compute alike with the same kernels differ only by the machine's noise and
    /// where their buffers happen to lie, which no verdict should be about; timing them would
    /// spend the comparison's time to risk a false alarm.
    pub fn same_code(benchmark_id: &str, threshold: f64) -> Self {
        Self {
            verdict: Verdict::NoChange,
            evidence: "every op runs the same code on both sides (the same WGSL, comments and \
                       spacing aside, entry points, constants and dispatch), so it was not timed; \
                       --time-identical times it anyway"
                .to_string(),
            same_code: true,
            ..Self::not_compared(benchmark_id, threshold, String::new())
        }
    }

    /// Whether there were enough pairs to estimate the change (else `change` is 0 and the
    /// interval unbounded: show neither).
    pub fn estimated(&self) -> bool {
        self.ci.0.is_finite() && self.ci.1.is_finite()
    }

    /// Each side's time as tables show it: [`AbRow::base_ns`] and [`AbRow::head_ns`], which
    /// agree with the change, or the medians where those were not estimated; `None` for a row
    /// without pairs (not compared, or the same code on both sides).
    pub fn sides_ns(&self) -> Option<(f64, f64)> {
        if self.pairs == 0 {
            None
        } else if self.base_ns > 0.0 && self.head_ns > 0.0 {
            Some((self.base_ns, self.head_ns))
        } else {
            Some((self.base_median_ns, self.head_median_ns))
        }
    }
}

/// One benchmark's pairs before judging.
#[derive(Debug, Clone, PartialEq)]
pub struct AbInput<'a> {
    /// Benchmark id.
    pub benchmark_id: &'a str,
    /// Base times, one per pair (ns).
    pub base_ns: &'a [u64],
    /// Head times, one per pair (ns).
    pub head_ns: &'a [u64],
    /// Threshold of this benchmark.
    pub threshold: f64,
}

/// Judges every benchmark with the rule in the module documentation; Benjamini–Hochberg at
/// `alpha` across them.
pub fn judge_pairs(inputs: &[AbInput<'_>], alpha: f64) -> Vec<AbRow> {
    let mut rows: Vec<AbRow> = inputs.iter().map(|input| row_of(input, alpha)).collect();
    for row in &mut rows {
        row.min_detectable = min_detectable_change(row.pairs, row.pair_spread, row.threshold, alpha);
        if let Some(mde) = row.min_detectable {
            row.evidence.push_str(&format!(
                "; these pairs would have caught a {:.1}% slowdown 95% of the time",
                100.0 * mde
            ));
        }
    }
    let tested: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, row)| row.pairs >= MIN_PAIRS && row.change.abs() > FLOOR * row.threshold)
        .map(|(index, _)| index)
        .collect();
    let p_values: Vec<f64> = tested.iter().map(|&index| rows[index].p_value).collect();
    let discoveries = benjamini_hochberg(&p_values, alpha);
    for (row_index, discovered) in tested.iter().zip(discoveries) {
        let row = &mut rows[*row_index];
        let floor = FLOOR * row.threshold;
        if discovered && row.change > floor && row.ci.0 > 0.0 {
            row.verdict = Verdict::Regression;
        } else if discovered && row.change < -floor && row.ci.1 < 0.0 {
            row.verdict = Verdict::Improvement;
        } else {
            continue;
        }
        row.evidence = format!(
            "{} interleaved pairs, whose ratios vary by {:.1}%; p = {:.2e}",
            row.pairs,
            100.0 * row.pair_spread,
            row.p_value
        );
    }
    rows
}

/// Power of [`min_detectable_change`]: the share of runs that catch a slowdown of that size.
pub const DETECTION_POWER: f64 = 0.95;

/// The smallest true slowdown that `pairs` pairs whose log-ratios vary by `spread` (winsorized
/// standard deviation) call a regression with probability [`DETECTION_POWER`], under the rule
/// of this module at level `alpha`: the estimate must clear both [`FLOOR`] of the threshold and
/// the one-sided critical value, so the slowdown must exceed the larger of the two by the power
/// quantile's worth of standard errors:
/// `exp(max(ln(1 + FLOOR threshold), t(1-alpha) se) + t(power) se) - 1`,
/// with Yuen's standard error ([`yuen_standard_error`]) and its degrees of
/// freedom. It ignores the false-discovery control across benchmarks, which can only make
/// the real figure larger when many benchmarks move at once. `None` below [`MIN_PAIRS`].
pub fn min_detectable_change(pairs: usize, spread: f64, threshold: f64, alpha: f64) -> Option<f64> {
    if pairs < MIN_PAIRS || !spread.is_finite() || !(0.0..1.0).contains(&alpha) || alpha == 0.0 {
        return None;
    }
    let cut = (TRIM * pairs as f64).floor() as usize;
    let degrees = (pairs - 2 * cut - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, degrees).ok()?;
    let standard_error = yuen_standard_error(spread, pairs);
    let significant = t.inverse_cdf(1.0 - alpha) * standard_error;
    let needed =
        (FLOOR * threshold).ln_1p().max(significant) + t.inverse_cdf(DETECTION_POWER) * standard_error;
    Some(needed.exp_m1())
}

/// Yuen's standard error of the trimmed mean of `pairs` values whose winsorized standard
/// deviation is `spread`: `spread * sqrt((n - 1) / (h (h - 1)))`, where `h = n - 2g` values
/// remain after trimming `g = floor(TRIM n)` from each end. The textbook shorthand
/// `spread / ((1 - 2 TRIM) sqrt(n))` assumes `g = TRIM n` exactly; at the first looks, where
/// the floor trims less (1 of 8 pairs, 2 of 12), it overstates the error by 8-22% and made
/// the early looks needlessly slow to settle.
pub fn yuen_standard_error(spread: f64, pairs: usize) -> f64 {
    let cut = (TRIM * pairs as f64).floor() as usize;
    let kept = pairs.saturating_sub(2 * cut) as f64;
    if kept < 2.0 {
        return f64::INFINITY;
    }
    spread * ((pairs as f64 - 1.0) / (kept * (kept - 1.0))).sqrt()
}

fn row_of(input: &AbInput<'_>, alpha: f64) -> AbRow {
    let pairs = input.base_ns.len().min(input.head_ns.len());
    // Each usable pair as (log-ratio, ln base, ln head), ordered by log-ratio.
    let mut by_ratio: Vec<(f64, f64, f64)> = input
        .base_ns
        .iter()
        .zip(input.head_ns)
        .filter(|(base, head)| **base > 0 && **head > 0)
        .map(|(&base, &head)| {
            let (base, head) = ((base as f64).ln(), (head as f64).ln());
            (head - base, base, head)
        })
        .collect();
    let median = |values: &[u64]| {
        crate::stats::median(&values.iter().map(|&v| v as f64).collect::<Vec<_>>()).unwrap_or(0.0)
    };
    let mut row = AbRow {
        benchmark_id: input.benchmark_id.to_string(),
        phase: Phase::Total,
        layer: None,
        pairs,
        base_median_ns: median(input.base_ns),
        head_median_ns: median(input.head_ns),
        base_ns: 0.0,
        head_ns: 0.0,
        change: 0.0,
        ci: (f64::NEG_INFINITY, f64::INFINITY),
        p_value: 1.0,
        pair_spread: 0.0,
        threshold: input.threshold,
        verdict: Verdict::Inconclusive,
        evidence: String::new(),
        min_detectable: None,
        same_code: false,
    };
    if by_ratio.len() < MIN_PAIRS || by_ratio.len() < pairs {
        row.evidence = format!(
            "{} usable pairs; at least {MIN_PAIRS} pairs with non-zero times are needed",
            by_ratio.len()
        );
        return row;
    }
    // Yuen's test on the 20%-trimmed mean: a pair hit by a preemption (one side 40% slower
    // for one iteration, common on a loaded runner) moves neither the estimate nor the spread.
    by_ratio.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sorted: Vec<f64> = by_ratio.iter().map(|pair| pair.0).collect();
    let count = sorted.len();
    let n = count as f64;
    let cut = (TRIM * n).floor() as usize;
    let kept = &sorted[cut..count - cut];
    let mean = kept.iter().sum::<f64>() / kept.len() as f64;
    // The sides over the same pairs: their geometric means divide to exactly exp(mean).
    let kept_pairs = &by_ratio[cut..count - cut];
    let side_mean = |side: fn(&(f64, f64, f64)) -> f64| {
        (kept_pairs.iter().map(side).sum::<f64>() / kept_pairs.len() as f64).exp()
    };
    row.base_ns = side_mean(|pair| pair.1);
    row.head_ns = side_mean(|pair| pair.2);
    let (low, high) = (sorted[cut], sorted[count - cut - 1]);
    let winsorized: Vec<f64> = sorted.iter().map(|d| d.clamp(low, high)).collect();
    let winsorized_mean = winsorized.iter().sum::<f64>() / n;
    let spread = (winsorized
        .iter()
        .map(|d| (d - winsorized_mean).powi(2))
        .sum::<f64>()
        / (n - 1.0))
        .sqrt();
    let standard_error = yuen_standard_error(spread, count);
    let degrees = (count - 2 * cut - 1) as f64;
    let Ok(t) = StudentsT::new(0.0, 1.0, degrees) else {
        row.evidence = format!("no t distribution for {count} pairs");
        return row;
    };
    let quantile = t.inverse_cdf(0.5 + CI_CONFIDENCE / 2.0);
    row.change = mean.exp_m1();
    row.pair_spread = spread;
    if standard_error > 0.0 {
        row.ci = (
            (mean - quantile * standard_error).exp_m1(),
            (mean + quantile * standard_error).exp_m1(),
        );
        let score = mean / standard_error;
        row.p_value = if mean >= 0.0 {
            1.0 - t.cdf(score)
        } else {
            t.cdf(score)
        };
    } else {
        row.ci = (row.change, row.change);
        row.p_value = if mean == 0.0 { 1.0 } else { 0.0 };
    }
    // TOST: both one-sided tests at `alpha` reject a change beyond the threshold.
    let critical = t.inverse_cdf(1.0 - alpha.clamp(1e-12, 0.5));
    let equivalence = critical * standard_error;
    let within =
        (mean - equivalence).exp_m1() >= -row.threshold && (mean + equivalence).exp_m1() <= row.threshold;
    row.verdict = if within {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    };
    // What would settle it: a change beyond the floor needs a significant difference from 0,
    // one within it an interval inside the threshold.
    let gap = if row.change.abs() > FLOOR * row.threshold {
        row.change.abs()
    } else {
        row.threshold - row.change.abs()
    }
    .max(0.005);
    let needed = ((critical * spread / ((1.0 - 2.0 * TRIM) * gap.ln_1p())).powi(2)).ceil();
    row.evidence = if within {
        format!(
            "{pairs} interleaved pairs, whose ratios vary by {:.1}%",
            100.0 * spread
        )
    } else {
        format!(
            "{pairs} interleaved pairs, whose ratios vary by {:.1}%; about {} pairs would settle \
             it at this spread",
            100.0 * spread,
            needed.max(n + 1.0)
        )
    };
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// `pairs` pairs on a machine whose speed drifts by up to ±`drift` between pairs (and
    /// within a pair by `noise`), the head `slowdown` slower.
    fn simulate(
        rng: &mut StdRng,
        pairs: usize,
        drift: f64,
        noise: f64,
        slowdown: f64,
    ) -> (Vec<u64>, Vec<u64>) {
        let mut base = Vec::new();
        let mut head = Vec::new();
        let mut level = 1.0e6;
        for _ in 0..pairs {
            level *= 1.0 + rng.random_range(-drift..drift);
            level = level.clamp(0.5e6, 2.0e6);
            let jitter = |rng: &mut StdRng| 1.0 + rng.random_range(-noise..noise);
            base.push((level * jitter(rng)) as u64);
            head.push((level * (1.0 + slowdown) * jitter(rng)) as u64);
        }
        (base, head)
    }

    fn verdict_of(base: &[u64], head: &[u64]) -> Verdict {
        let input = AbInput {
            benchmark_id: "m/train/b1/f32/wgpu",
            base_ns: base,
            head_ns: head,
            threshold: 0.05,
        };
        judge_pairs(&[input], 0.01)[0].verdict
    }

    #[test]
    fn a_clear_slowdown_is_a_regression_and_identical_code_is_no_change() {
        let mut rng = StdRng::seed_from_u64(7);
        let (base, head) = simulate(&mut rng, 30, 0.10, 0.03, 0.10);
        assert_eq!(verdict_of(&base, &head), Verdict::Regression);
        let (base, head) = simulate(&mut rng, 30, 0.10, 0.03, 0.0);
        assert_eq!(verdict_of(&base, &head), Verdict::NoChange);
        let (base, head) = simulate(&mut rng, 30, 0.10, 0.03, -0.10);
        assert_eq!(verdict_of(&base, &head), Verdict::Improvement);
    }

    /// The sides' medians disagree with the paired change in sign here: the head's median is
    /// below the base's, yet in every pair but the drifting ones the head is 4% slower. The
    /// table's columns are the times the change rests on, which divide to exactly 1 + change.
    #[test]
    fn the_sides_shown_agree_with_the_change_where_the_medians_do_not() {
        // The machine slows from 100 us to 300 us per iteration half-way; the head is 4%
        // slower in every pair but one, whose base was preempted (an outlier the trim drops).
        // The base's median falls between the halves, the head's in the fast half.
        let base: Vec<u64> = (0..12).map(|i| if i < 6 { 100_000 } else { 300_000 }).collect();
        let mut head: Vec<u64> = base.iter().map(|&b| b * 104 / 100).collect();
        head[6] = 104_000;
        let rows = judge_pairs(
            &[AbInput {
                benchmark_id: "m/train/b1/f32/wgpu",
                base_ns: &base,
                head_ns: &head,
                threshold: 0.05,
            }],
            0.01,
        );
        let row = &rows[0];
        assert!(row.head_median_ns < row.base_median_ns, "{row:?}");
        assert!((row.change - 0.04).abs() < 1e-9, "{row:?}");
        let (base_ns, head_ns) = row.sides_ns().expect("12 pairs");
        assert!(
            (head_ns / base_ns - 1.0 - row.change).abs() < 1e-9,
            "{base_ns} {head_ns} {}",
            row.change
        );
        assert!(head_ns > base_ns);
        // Too few pairs: the medians, as before.
        let rows = judge_pairs(
            &[AbInput {
                benchmark_id: "m/train/b1/f32/wgpu",
                base_ns: &base[..3],
                head_ns: &head[..3],
                threshold: 0.05,
            }],
            0.01,
        );
        assert_eq!(
            rows[0].sides_ns(),
            Some((rows[0].base_median_ns, rows[0].head_median_ns))
        );
    }

    #[test]
    fn too_few_pairs_are_inconclusive() {
        let verdict = judge_pairs(
            &[AbInput {
                benchmark_id: "x",
                base_ns: &[100, 100],
                head_ns: &[200, 200],
                threshold: 0.05,
            }],
            0.01,
        );
        assert_eq!(verdict[0].verdict, Verdict::Inconclusive);
        assert!(
            verdict[0].evidence.contains("at least 5 pairs"),
            "{}",
            verdict[0].evidence
        );
        assert!(!verdict[0].estimated());
    }

    /// Drift between pairs as large as measured between runs on a loaded 2-core runner (run
    /// levels 12 % apart, here up to ±15 % per pair, a random walk) and 8 % noise within a
    /// pair: the false-alarm and detection rates of A/B mode. Printed with `--nocapture`.
    #[test]
    fn simulation_of_a_drifting_runner() {
        let trials = 1000;
        let mut rng = StdRng::seed_from_u64(20261124);
        let mut rates = Vec::new();
        for slowdown in [0.0, 0.05, 0.10, 0.20] {
            let flagged = (0..trials)
                .filter(|_| {
                    let (base, head) = simulate(&mut rng, 30, 0.15, 0.08, slowdown);
                    verdict_of(&base, &head) == Verdict::Regression
                })
                .count();
            let rate = flagged as f64 / trials as f64;
            println!(
                "A/B, 30 pairs, drift ±15%, noise ±8%: +{:.0}% flagged in {:.1}%",
                slowdown * 100.0,
                rate * 100.0
            );
            rates.push(rate);
        }
        assert!(rates[0] <= 0.01, "false alarms {:.3}", rates[0]);
        assert!(rates[2] >= 0.95, "detection of +10% {:.3}", rates[2]);
        assert!(rates[3] >= 0.99, "detection of +20% {:.3}", rates[3]);
    }

    #[test]
    fn the_min_detectable_change_shrinks_with_pairs_and_never_goes_below_the_floor() {
        let at = |pairs| min_detectable_change(pairs, 0.05, 0.05, 0.05).expect("enough pairs");
        assert!(at(20) > at(80), "{} vs {}", at(20), at(80));
        assert!(at(10_000) >= FLOOR * 0.05);
        assert_eq!(min_detectable_change(MIN_PAIRS - 1, 0.05, 0.05, 0.05), None);
        let exact = min_detectable_change(40, 0.0, 0.05, 0.05).expect("enough pairs");
        assert!((exact - FLOOR * 0.05).abs() < 1e-12, "{exact}");
    }

    /// One pair's log-ratio on a loaded runner: normal noise of `spread`, every tenth pair
    /// twice as noisy, and 3% of pairs preempted (40% off either way).
    fn noisy_ratio(rng: &mut StdRng, spread: f64) -> f64 {
        let (u, v): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
        let normal = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        let scale = if rng.random_bool(0.1) { 2.0 } else { 1.0 };
        let preempted = if rng.random_bool(0.03) {
            if rng.random_bool(0.5) { 0.4 } else { -0.4 }
        } else {
            0.0
        };
        normal * spread * scale + preempted
    }

    /// The adaptive procedure of `crate::harness::ab` (its default looks, 8, 12, 18, ... 240
    /// pairs, each at `alpha / K`, stop at the first settled verdict) on simulated pairs:
    /// identical code is a regression at most `alpha` of the time, a slowdown of the threshold
    /// at least 95%. Printed with `--nocapture`.
    #[test]
    fn simulation_of_adaptive_looks() {
        use crate::harness::ab::{DEFAULT_PAIRS, FIRST_LOOK, looks};
        let schedule = looks(FIRST_LOOK, DEFAULT_PAIRS);
        let (alpha, threshold, runs) = (0.01, 0.05, 2000);
        let look_alpha = alpha / schedule.len() as f64;
        let mut rng = StdRng::seed_from_u64(20261125);
        for spread in [0.03, 0.05, 0.08, 0.12] {
            let mut rates = Vec::new();
            for slowdown in [0.0, threshold / 2.0, threshold, 4.0 * threshold] {
                let mut flagged = 0;
                let mut pairs_taken = Vec::new();
                for _ in 0..runs {
                    let mut base = Vec::new();
                    let mut head = Vec::new();
                    let mut verdict = Verdict::Inconclusive;
                    for &look in &schedule {
                        while base.len() < look {
                            let ratio = (1.0f64 + slowdown).ln() + noisy_ratio(&mut rng, spread);
                            base.push(1_000_000u64);
                            head.push((1.0e6 * ratio.exp()) as u64);
                        }
                        let input = AbInput {
                            benchmark_id: "b",
                            base_ns: &base,
                            head_ns: &head,
                            threshold,
                        };
                        verdict = judge_pairs(&[input], look_alpha)[0].verdict;
                        if verdict != Verdict::Inconclusive {
                            break;
                        }
                    }
                    flagged += usize::from(verdict == Verdict::Regression);
                    pairs_taken.push(base.len());
                }
                pairs_taken.sort_unstable();
                let rate = flagged as f64 / runs as f64;
                println!(
                    "spread {:.0}%, slowdown {:.1}%: regression in {:.1}% of runs, median {} pairs",
                    100.0 * spread,
                    100.0 * slowdown,
                    100.0 * rate,
                    pairs_taken[runs / 2]
                );
                rates.push(rate);
            }
            assert!(
                rates[0] <= alpha,
                "false alarms {:.3} at spread {spread}",
                rates[0]
            );
            assert!(
                rates[2] >= 0.95,
                "slowdowns of the threshold caught {:.3}",
                rates[2]
            );
            assert!(
                rates[3] >= 0.99,
                "slowdowns of 4x the threshold caught {:.3}",
                rates[3]
            );
        }
    }

    /// A slowdown of the size the rows claim they would catch is caught about that often.
    #[test]
    fn a_slowdown_of_the_min_detectable_size_is_caught_at_least_nine_times_in_ten() {
        let mut rng = StdRng::seed_from_u64(27);
        let (pairs, noise) = (40, 0.08);
        let (base, head) = simulate(&mut rng, pairs, 0.02, noise, 0.0);
        let pilot = judge_pairs(
            &[AbInput {
                benchmark_id: "pilot",
                base_ns: &base,
                head_ns: &head,
                threshold: 0.05,
            }],
            0.05,
        );
        let mde = pilot[0].min_detectable.expect("enough pairs");
        let trials = 300;
        let caught = (0..trials)
            .filter(|_| {
                let (base, head) = simulate(&mut rng, pairs, 0.02, noise, mde);
                let rows = judge_pairs(
                    &[AbInput {
                        benchmark_id: "b",
                        base_ns: &base,
                        head_ns: &head,
                        threshold: 0.05,
                    }],
                    0.05,
                );
                rows[0].verdict == Verdict::Regression
            })
            .count();
        let rate = caught as f64 / trials as f64;
        assert!(
            rate >= 0.9,
            "caught {rate:.3} of slowdowns of {:.1}%",
            100.0 * mde
        );
    }
}
