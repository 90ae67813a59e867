//! Change points in a series: where its level shifted, by hierarchical e-divisive means.
//!
//! The method is E-Divisive of Matteson and James ("A Nonparametric Approach for Multiple
//! Change Point Analysis of Multivariate Data", JASA 2014), the one MongoDB's performance CI
//! and Apache Otava (formerly Hunter) use on benchmark histories, with `alpha = 1`:
//!
//! 1. For a segment of the series and every split `τ` leaving at least
//!    [`ChangePointConfig::min_segment`] points on each side, the divergence between the
//!    left part `X` (`m` points) and the right part `Y` (`k` points) is
//!    `Q(τ) = m·k/(m+k) · (2·mean|X−Y| − mean|X−X'| − mean|Y−Y'|)`, the energy distance: it
//!    grows with a shift of level and assumes no distribution.
//! 2. The split with the largest `Q` over every current segment is a candidate. Its
//!    significance is a permutation test: the points of each segment are shuffled within it
//!    [`ChangePointConfig::permutations`] times (seeded, so the answer is reproducible) and
//!    `p = (1 + #{max Q of a shuffle ≥ Q}) / (1 + permutations)`.
//! 3. With `p <= alpha` the split is accepted, its segment is cut in two and the search goes
//!    on; otherwise it stops.
//! 4. The level of each segment is its median. A change point whose relative step
//!    `after / before − 1` is smaller in size than [`ChangePointConfig::min_relative_step`] is
//!    dropped (the smallest first, merging its segments and recomputing the levels): a
//!    statistically clear shift of 1% is not worth a reader's attention.
//!
//! Assumptions: the points are independent draws around a piecewise-constant level (drift
//! within a segment reads as noise, or as a step when large), and values are positive (the
//! relative step divides by the level). With `n` points a scan costs `O(n²)`, the whole search
//! `O(permutations · n²)` per change point found.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;

/// Parameters of [`change_points`].
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePointConfig {
    /// Largest permutation p-value at which a split is accepted.
    pub alpha: f64,
    /// Shuffles per permutation test; the smallest p-value possible is `1 / (1 + permutations)`.
    pub permutations: usize,
    /// Fewest points on each side of a split: a step is found once this many points show it.
    pub min_segment: usize,
    /// Smallest `|after / before − 1|` reported.
    pub min_relative_step: f64,
    /// Seed of the shuffles.
    pub seed: u64,
}

impl Default for ChangePointConfig {
    /// `alpha` 0.05 with 199 permutations, 3 points a side, steps of 5% or more, seed 0.
    fn default() -> Self {
        Self {
            alpha: 0.05,
            permutations: 199,
            min_segment: 3,
            min_relative_step: 0.05,
            seed: 0,
        }
    }
}

/// A shift of level found by [`change_points`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Index of the first value at the new level.
    pub index: usize,
    /// Median of the values from the previous change point (or the start) up to `index`.
    pub before: f64,
    /// Median of the values from `index` up to the next change point (or the end).
    pub after: f64,
    /// Permutation p-value of the split when it was accepted.
    pub p_value: f64,
}

impl ChangePoint {
    /// `after / before − 1` (0 when `before` is not positive).
    pub fn relative_step(&self) -> f64 {
        if self.before > 0.0 {
            self.after / self.before - 1.0
        } else {
            0.0
        }
    }
}

/// The change points of `values` in order (see the module docs). Empty when there are fewer
/// than `2 · min_segment` values, when a value is not finite, or when no split is significant.
pub fn change_points(values: &[f64], config: &ChangePointConfig) -> Vec<ChangePoint> {
    let min_segment = config.min_segment.max(1);
    if values.len() < 2 * min_segment || values.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut rng = SmallRng::seed_from_u64(config.seed);
    // Accepted splits (index of the first value after the split) with their p-values.
    let mut found: Vec<(usize, f64)> = Vec::new();
    let mut shuffled = values.to_vec();
    loop {
        let bounds = segment_bounds(values.len(), &found);
        let Some((index, observed)) = best_split(values, &bounds, min_segment) else {
            break;
        };
        let mut exceed = 0;
        for _ in 0..config.permutations {
            shuffled.copy_from_slice(values);
            for window in bounds.windows(2) {
                shuffled[window[0]..window[1]].shuffle(&mut rng);
            }
            if best_split(&shuffled, &bounds, min_segment).is_some_and(|(_, q)| q >= observed) {
                exceed += 1;
            }
        }
        let p_value = (1 + exceed) as f64 / (1 + config.permutations) as f64;
        if p_value > config.alpha {
            break;
        }
        found.push((index, p_value));
    }
    found.sort_by_key(|&(index, _)| index);
    loop {
        let points = with_levels(values, &found);
        let smallest = points
            .iter()
            .enumerate()
            .filter(|(_, point)| point.relative_step().abs() < config.min_relative_step)
            .min_by(|a, b| a.1.relative_step().abs().total_cmp(&b.1.relative_step().abs()));
        match smallest {
            Some((position, _)) => {
                found.remove(position);
            }
            None => return points,
        }
    }
}

/// `[0, splits..., len]`: the boundaries of the segments the splits cut the series into.
fn segment_bounds(len: usize, found: &[(usize, f64)]) -> Vec<usize> {
    let mut bounds: Vec<usize> = found.iter().map(|&(index, _)| index).collect();
    bounds.push(0);
    bounds.push(len);
    bounds.sort_unstable();
    bounds.dedup();
    bounds
}

/// The change points at the sorted `found` splits with the median level on each side.
fn with_levels(values: &[f64], found: &[(usize, f64)]) -> Vec<ChangePoint> {
    let bounds = segment_bounds(values.len(), found);
    let levels: Vec<f64> = bounds
        .windows(2)
        .map(|window| super::median(&values[window[0]..window[1]]).unwrap_or(0.0))
        .collect();
    found
        .iter()
        .enumerate()
        .map(|(position, &(index, p_value))| ChangePoint {
            index,
            before: levels[position],
            after: levels[position + 1],
            p_value,
        })
        .collect()
}

/// The split with the largest divergence `Q` over every segment between `bounds`, as the
/// index of the first value after it and its `Q`; `None` when no segment can be split.
fn best_split(values: &[f64], bounds: &[usize], min_segment: usize) -> Option<(usize, f64)> {
    bounds
        .windows(2)
        .filter_map(|window| best_split_in(&values[window[0]..window[1]], min_segment))
        .zip(bounds.iter())
        .map(|((offset, q), &start)| (start + offset, q))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The best split of one segment: the `τ` with the largest `Q(τ)` among those leaving
/// `min_segment` values a side, found in `O(n²)` by moving one value at a time from the
/// right part to the left and updating the three sums of distances.
fn best_split_in(segment: &[f64], min_segment: usize) -> Option<(usize, f64)> {
    let n = segment.len();
    if n < 2 * min_segment {
        return None;
    }
    let distance = |i: usize, j: usize| (segment[i] - segment[j]).abs();
    // With τ = 0: everything on the right.
    let mut within_left = 0.0;
    let mut within_right: f64 = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| distance(i, j))
        .sum();
    let mut between = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..=n - min_segment {
        // Move value `tau - 1` from the right part to the left.
        let moved = tau - 1;
        let to_left: f64 = (0..moved).map(|i| distance(i, moved)).sum();
        let to_right: f64 = (tau..n).map(|j| distance(moved, j)).sum();
        within_left += to_left;
        within_right -= to_right;
        between += to_right - to_left;
        if tau < min_segment {
            continue;
        }
        let (m, k) = (tau as f64, (n - tau) as f64);
        let mean_within = |sum: f64, count: f64| {
            if count >= 2.0 {
                sum / (count * (count - 1.0) / 2.0)
            } else {
                0.0
            }
        };
        let energy = 2.0 * between / (m * k) - mean_within(within_left, m) - mean_within(within_right, k);
        let q = m * k / (m + k) * energy;
        if best.is_none_or(|(_, best_q)| q > best_q) {
            best = Some((tau, q));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// `n` values around `level` with log-normal noise of coefficient of variation about `cv`.
    fn noisy(rng: &mut SmallRng, n: usize, level: f64, cv: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                // Box–Muller: a standard normal draw from two uniforms.
                let (u1, u2): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                level * (cv * z).exp()
            })
            .collect()
    }

    #[test]
    fn a_clean_step_is_found_at_its_first_value_with_both_levels() {
        let values = [
            100.0, 101.0, 99.0, 100.0, 100.5, 115.0, 116.0, 114.0, 115.5, 115.0,
        ];
        let found = change_points(&values, &ChangePointConfig::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 5);
        assert_eq!(found[0].before, 100.0);
        assert_eq!(found[0].after, 115.0);
        assert!((found[0].relative_step() - 0.15).abs() < 1e-12);
        assert!(found[0].p_value <= 0.05);
    }

    #[test]
    fn two_steps_are_both_found_in_order() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut values = noisy(&mut rng, 8, 100.0, 0.02);
        values.extend(noisy(&mut rng, 8, 130.0, 0.02));
        values.extend(noisy(&mut rng, 8, 90.0, 0.02));
        let found = change_points(&values, &ChangePointConfig::default());
        let indices: Vec<usize> = found.iter().map(|c| c.index).collect();
        assert_eq!(indices, [8, 16], "{found:?}");
        assert!(found[0].relative_step() > 0.25 && found[1].relative_step() < -0.25);
    }

    #[test]
    fn a_flat_noisy_series_rarely_has_a_change_point() {
        // 4% CV, as the blessed runs of an idle machine: the false alarms stay near alpha.
        let config = ChangePointConfig::default();
        let mut rng = SmallRng::seed_from_u64(11);
        let alarms = (0..100)
            .filter(|_| !change_points(&noisy(&mut rng, 10, 100.0, 0.04), &config).is_empty())
            .count();
        assert!(alarms <= 5, "{alarms} of 100 flat series had a change point");
    }

    #[test]
    fn a_15_percent_step_in_4_percent_noise_is_found_at_the_right_index() {
        let config = ChangePointConfig::default();
        let mut rng = SmallRng::seed_from_u64(3);
        let mut right = 0;
        for _ in 0..100 {
            let mut values = noisy(&mut rng, 5, 100.0, 0.04);
            values.extend(noisy(&mut rng, 5, 115.0, 0.04));
            let found = change_points(&values, &config);
            if found.len() == 1 && found[0].index == 5 {
                right += 1;
            }
        }
        assert!(
            right >= 80,
            "the step found alone at its commit in {right} of 100 series"
        );
    }

    #[test]
    fn steps_below_the_minimum_are_dropped() {
        let values = [100.0, 100.1, 99.9, 100.0, 102.0, 102.1, 101.9, 102.0];
        assert!(change_points(&values, &ChangePointConfig::default()).is_empty());
        let config = ChangePointConfig {
            min_relative_step: 0.01,
            ..ChangePointConfig::default()
        };
        let found = change_points(&values, &config);
        assert_eq!(found.iter().map(|c| c.index).collect::<Vec<_>>(), [4]);
    }

    #[test]
    fn short_or_non_finite_series_have_none() {
        let config = ChangePointConfig::default();
        assert!(change_points(&[], &config).is_empty());
        assert!(change_points(&[1.0, 2.0, 3.0, 4.0, 5.0], &config).is_empty());
        assert!(change_points(&[1.0, 1.0, 1.0, 9.0, f64::NAN, 9.0], &config).is_empty());
    }

    #[test]
    fn the_answer_depends_only_on_the_values_and_the_seed() {
        let mut rng = SmallRng::seed_from_u64(5);
        let mut values = noisy(&mut rng, 6, 100.0, 0.05);
        values.extend(noisy(&mut rng, 6, 112.0, 0.05));
        let config = ChangePointConfig::default();
        assert_eq!(change_points(&values, &config), change_points(&values, &config));
        // Scale-free: the same series in other units gives the same change points.
        let scaled: Vec<f64> = values.iter().map(|v| v * 1e6).collect();
        let indices = |found: Vec<ChangePoint>| found.iter().map(|c| c.index).collect::<Vec<_>>();
        assert_eq!(
            indices(change_points(&values, &config)),
            indices(change_points(&scaled, &config))
        );
    }
}
