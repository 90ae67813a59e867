//! Percentile bootstrap of the ratio of two medians.

use super::{median_in_place, quantile_sorted};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Percentile bootstrap confidence interval of `median(current) / median(baseline)`.
///
/// Each of `resamples` rounds draws both samples with replacement (each at its own size) and
/// records the ratio of the resampled medians; the interval is the `(1 - confidence) / 2` and
/// `(1 + confidence) / 2` quantiles of those ratios. The indices drawn depend only on `seed`
/// and the two sample sizes, never on the values, so the answer is reproducible for a seed
/// (for one build and platform: `SmallRng`'s stream may differ between `rand` releases and
/// between 32- and 64-bit targets, a price paid for its speed), scale-free
/// (multiplying both samples by a constant gives the same interval) and monotone (raising
/// current values never lowers a bound).
///
/// `None` when either sample is empty, a value is negative or not finite, `confidence` is not
/// strictly between 0 and 1, `resamples` is 0, or a resampled baseline median is 0 (the ratio
/// is then undefined).
pub fn bootstrap_ratio_ci(
    baseline: &[f64],
    current: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    let valid = |sample: &[f64]| !sample.is_empty() && sample.iter().all(|v| v.is_finite() && *v >= 0.0);
    let usable = valid(baseline) && valid(current) && confidence > 0.0 && confidence < 1.0;
    if !usable || resamples == 0 {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut baseline_draw = vec![0.0; baseline.len()];
    let mut current_draw = vec![0.0; current.len()];
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in &mut baseline_draw {
            *slot = baseline[rng.random_range(0..baseline.len())];
        }
        for slot in &mut current_draw {
            *slot = current[rng.random_range(0..current.len())];
        }
        let baseline_median = median_in_place(&mut baseline_draw);
        if baseline_median <= 0.0 {
            return None;
        }
        ratios.push(median_in_place(&mut current_draw) / baseline_median);
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Some((
        quantile_sorted(&ratios, tail)?,
        quantile_sorted(&ratios, 1.0 - tail)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::median;
    use proptest::prelude::*;

    /// Positive timing-like samples (ns), small enough to keep debug-mode proptests fast.
    fn samples() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(1.0e3f64..1.0e7, 2..16)
    }

    const RESAMPLES: usize = 300;

    #[test]
    fn same_seed_same_interval() {
        let baseline = [10.0, 11.0, 9.5, 10.2, 10.8, 9.9];
        let current = [11.0, 12.0, 10.5, 11.2, 11.9, 10.9];
        let first = bootstrap_ratio_ci(&baseline, &current, 0.95, 1000, 7);
        assert_eq!(first, bootstrap_ratio_ci(&baseline, &current, 0.95, 1000, 7));
        let (low, high) = first.expect("valid input");
        assert!(
            low < 1.1 && 1.1 < high,
            "({low}, {high}) should surround the 10% slowdown"
        );
    }

    #[test]
    fn rejects_degenerate_input() {
        assert_eq!(bootstrap_ratio_ci(&[], &[1.0], 0.95, 100, 0), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[f64::NAN], 0.95, 100, 0), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[-1.0], 0.95, 100, 0), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[1.0], 1.0, 100, 0), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[1.0], 0.95, 0, 0), None);
        assert_eq!(bootstrap_ratio_ci(&[0.0, 0.0], &[1.0], 0.95, 100, 0), None);
    }

    proptest! {
        #[test]
        fn interval_contains_the_point_estimate(baseline in samples(), current in samples(), seed: u64) {
            let point = median(&current).expect("non-empty") / median(&baseline).expect("non-empty");
            let (low, high) = bootstrap_ratio_ci(&baseline, &current, 0.95, RESAMPLES, seed).expect("valid input");
            prop_assert!(low <= point && point <= high, "{point} outside ({low}, {high})");
        }

        #[test]
        fn scaling_both_samples_leaves_the_interval_unchanged(
            baseline in samples(), current in samples(), scale in 1e-3f64..1e3, seed: u64,
        ) {
            let scaled = |sample: &[f64]| sample.iter().map(|v| v * scale).collect::<Vec<_>>();
            let (low, high) = bootstrap_ratio_ci(&baseline, &current, 0.95, RESAMPLES, seed).expect("valid input");
            let (scaled_low, scaled_high) =
                bootstrap_ratio_ci(&scaled(&baseline), &scaled(&current), 0.95, RESAMPLES, seed).expect("valid input");
            prop_assert!((low - scaled_low).abs() <= 1e-9 * low);
            prop_assert!((high - scaled_high).abs() <= 1e-9 * high);
        }

        #[test]
        fn shifting_current_up_never_lowers_the_ratio(
            baseline in samples(), current in samples(), shift in 0.0f64..1e6, seed: u64,
        ) {
            let shifted: Vec<f64> = current.iter().map(|v| v + shift).collect();
            let (low, high) = bootstrap_ratio_ci(&baseline, &current, 0.95, RESAMPLES, seed).expect("valid input");
            let (shifted_low, shifted_high) =
                bootstrap_ratio_ci(&baseline, &shifted, 0.95, RESAMPLES, seed).expect("valid input");
            let point = median(&current).expect("non-empty") / median(&baseline).expect("non-empty");
            let shifted_point = median(&shifted).expect("non-empty") / median(&baseline).expect("non-empty");
            prop_assert!(shifted_low >= low && shifted_high >= high);
            prop_assert!(shifted_point >= point);
        }
    }
}
