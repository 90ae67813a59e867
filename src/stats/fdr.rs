//! Benjamini–Hochberg control of the false discovery rate.

/// Which of `p_values` are discoveries when the false discovery rate is controlled at `q`
/// with the Benjamini–Hochberg step-up procedure: with the p-values sorted,
/// `p(1) <= ... <= p(m)`, find the largest `k` with `p(k) <= k q / m` and reject the `k`
/// smallest. The answer is in the order of the input.
///
/// Valid for independent or positively dependent tests (the phases of one benchmark, which
/// share a machine, are positively dependent). A NaN p-value counts toward `m` but is never a
/// discovery. Every discovery has `p <= q`, so there are never more discoveries than
/// p-values at or below `q`, and raising `q` never removes one.
pub fn benjamini_hochberg(p_values: &[f64], q: f64) -> Vec<bool> {
    let m = p_values.len();
    let key = |p: f64| if p.is_nan() { f64::INFINITY } else { p };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| key(p_values[i]).total_cmp(&key(p_values[j])));
    let rejected = order
        .iter()
        .enumerate()
        .filter(|&(rank, &index)| key(p_values[index]) <= (rank + 1) as f64 * q / m as f64)
        .map(|(rank, _)| rank + 1)
        .max()
        .unwrap_or(0);
    let mut discoveries = vec![false; m];
    for &index in &order[..rejected] {
        discoveries[index] = true;
    }
    discoveries
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn textbook_example() {
        // Thresholds k q / m are 0.01, 0.02, 0.03, 0.04, 0.05. p(2) = 0.025 misses its own
        // threshold, but the procedure steps up: p(4) = 0.039 <= 0.04 rejects the four smallest.
        let p = [0.005, 0.039, 0.025, 0.5, 0.028];
        assert_eq!(benjamini_hochberg(&p, 0.05), [true, true, true, false, true]);
        assert_eq!(benjamini_hochberg(&[0.2, 0.3], 0.05), [false, false]);
        assert!(benjamini_hochberg(&[], 0.05).is_empty());
        assert_eq!(benjamini_hochberg(&[f64::NAN, 0.001], 0.05), [false, true]);
    }

    fn p_values() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(prop_oneof![0.0f64..=1.0, 0.0f64..0.01], 0..40)
    }

    proptest! {
        #[test]
        fn never_more_discoveries_than_p_values_at_or_below_q(p in p_values(), q in 0.0f64..=1.0) {
            let discoveries = benjamini_hochberg(&p, q);
            let below = p.iter().filter(|&&value| value <= q).count();
            prop_assert!(discoveries.iter().filter(|&&d| d).count() <= below);
            for (value, discovered) in p.iter().zip(&discoveries) {
                prop_assert!(!discovered || *value <= q);
            }
        }

        #[test]
        fn monotone_in_q(p in p_values(), q in 0.0f64..=1.0, r in 0.0f64..=1.0) {
            let (low, high) = if q <= r { (q, r) } else { (r, q) };
            let at_low = benjamini_hochberg(&p, low);
            let at_high = benjamini_hochberg(&p, high);
            for (l, h) in at_low.iter().zip(&at_high) {
                prop_assert!(!l || *h);
            }
        }

        #[test]
        fn all_ones_reject_nothing(m in 0usize..50, q in 0.0f64..1.0) {
            prop_assert!(benjamini_hochberg(&vec![1.0; m], q).iter().all(|d| !d));
        }
    }
}
