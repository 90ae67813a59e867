//! Pure statistics for comparing timing samples: quantiles, a bootstrap confidence interval of
//! a ratio of medians, the Mann–Whitney U rank test and Benjamini–Hochberg false-discovery
//! control, and change points in a history (e-divisive means).
//!
//! Nothing here does I/O or keeps state; every random procedure takes an explicit seed, so the
//! same inputs always give the same answer and a CI verdict can be reproduced on a laptop.
//! Medians and rank tests are used rather than means and t-tests because GPU timings are
//! skewed and have outliers (a preempted frame, a clock change) that should not move a verdict.

mod bootstrap;
mod change_points;
mod fdr;
mod rank;

pub use bootstrap::bootstrap_ratio_ci;
pub use change_points::{ChangePoint, ChangePointConfig, change_points};
pub use fdr::benjamini_hochberg;
pub use rank::{Alternative, mann_whitney_u, normal_cdf};

/// The `p`-quantile (`0 <= p <= 1`) of a sample sorted in ascending order, interpolating
/// linearly between order statistics (Hyndman and Fan's type 7, the default of R and NumPy).
///
/// `None` when the sample is empty or `p` is outside `[0, 1]`. The caller guarantees the
/// order; an unsorted slice gives a meaningless (but finite) answer.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let position = p * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let weight = position - below as f64;
    if weight == 0.0 {
        return Some(sorted[below]);
    }
    // This form (rather than `a + w * (b - a)`) is monotone in both order statistics even
    // after rounding, which keeps bootstrap bounds monotone in the data.
    Some((1.0 - weight) * sorted[below] + weight * sorted[above])
}

/// The `p`-quantile (`0 <= p <= 1`) of an unsorted sample, as [`quantile_sorted`].
///
/// `None` when the sample is empty, contains NaN, or `p` is outside `[0, 1]`.
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    if values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile_sorted(&sorted, p)
}

/// The median of a sample (the mean of the two middle values when the length is even).
///
/// `None` when the sample is empty or contains NaN.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut scratch = values.to_vec();
    Some(median_in_place(&mut scratch))
}

/// Median of a non-empty, NaN-free slice, reordering it. Linear time: this runs once per
/// bootstrap resample, where sorting would dominate.
fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    let (below, middle, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *middle;
    if n % 2 == 1 {
        return upper;
    }
    let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lower + upper) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn median_of_odd_and_even_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn quantile_interpolates_like_numpy() {
        let sorted = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&sorted, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&sorted, 1.0), Some(4.0));
        assert_eq!(quantile_sorted(&sorted, 0.5), Some(2.5));
        // numpy.quantile([1, 2, 3, 4], 0.25) == 1.75
        assert_eq!(quantile_sorted(&sorted, 0.25), Some(1.75));
        assert_eq!(quantile_sorted(&sorted, 1.5), None);
        assert_eq!(quantile(&[4.0, 3.0, 2.0, 1.0], 0.75), Some(3.25));
    }

    proptest! {
        #[test]
        fn median_matches_the_half_quantile(values in prop::collection::vec(-1e9f64..1e9, 1..40)) {
            let from_median = median(&values).expect("non-empty");
            let from_quantile = quantile(&values, 0.5).expect("non-empty");
            prop_assert!((from_median - from_quantile).abs() <= 1e-9 * from_median.abs().max(1.0));
        }

        #[test]
        fn quantile_is_monotone_in_p(values in prop::collection::vec(-1e6f64..1e6, 1..40), p in 0.0f64..1.0, q in 0.0f64..1.0) {
            let (low, high) = if p <= q { (p, q) } else { (q, p) };
            let below = quantile(&values, low).expect("non-empty");
            let above = quantile(&values, high).expect("non-empty");
            // Interpolation may round by an ulp across an order statistic.
            prop_assert!(below <= above + 1e-9 * above.abs().max(1.0));
        }
    }
}
