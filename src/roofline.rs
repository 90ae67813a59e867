//! The roofline: what an adapter can reach (its measured peak arithmetic rate and memory
//! bandwidth, from `cargo convbench adapters --calibrate`; see [`crate::calibration`]) and where
//! each layer stands against it.
//!
//! A layer's roof is `min(peak FLOP/s, arithmetic intensity x peak bandwidth)`, where the
//! arithmetic intensity is its FLOPs over the bytes it must move at least (every binding of
//! every op read or written once in full; see [`crate::harness`]). A layer at 80% of its roof
//! is near what the adapter allows for that shape; one at 5% has room. Layers without FLOPs
//! (ReLU, pooling, copies) are placed against the bandwidth alone.
//!
//! The peak is what calibration kernels written in WGSL reach, not the vendor's datasheet
//! figure: the roof says what this tool's kernels could reach on this adapter. The peak is
//! measured in f32; f16 layers are placed against it too (the f16 arithmetic rate is not
//! calibrated).

use serde::{Deserialize, Serialize};

/// An adapter's measured peaks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// Highest f32 arithmetic rate reached (FLOP/s, an FMA counting 2).
    pub flops_per_second: f64,
    /// Highest copy bandwidth reached (bytes read plus bytes written, per second).
    pub bytes_per_second: f64,
}

/// Where a layer stands against the roof.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Achieved FLOP/s.
    pub flops_per_second: f64,
    /// Achieved bytes per second (the layer's compulsory bytes over its time).
    pub bytes_per_second: f64,
    /// Achieved share of the roof, in `[0, ...)` (above 1 only when the layer moved fewer
    /// bytes than counted, e.g. a cache absorbed reuse the count does not credit).
    pub fraction_of_roof: f64,
    /// Whether the roof at this arithmetic intensity is the bandwidth (`true`) or the
    /// arithmetic rate.
    pub memory_bound: bool,
}

impl Peak {
    /// The ridge point: the arithmetic intensity (FLOP/byte) above which a kernel can be
    /// compute-bound.
    pub fn ridge(&self) -> f64 {
        self.flops_per_second / self.bytes_per_second
    }

    /// Places a layer that did `flops` FLOPs and moved at least `bytes` bytes in `seconds`.
    /// `None` when nothing was measured (zero time) or nothing was counted.
    pub fn place(&self, flops: u64, bytes: u64, seconds: f64) -> Option<Placement> {
        if seconds.is_nan() || seconds <= 0.0 || (flops == 0 && bytes == 0) {
            return None;
        }
        let achieved_flops = flops as f64 / seconds;
        let achieved_bytes = bytes as f64 / seconds;
        let (fraction, memory_bound) = if flops == 0 {
            (achieved_bytes / self.bytes_per_second, true)
        } else if bytes == 0 {
            (achieved_flops / self.flops_per_second, false)
        } else {
            let intensity = flops as f64 / bytes as f64;
            let roof = self.flops_per_second.min(intensity * self.bytes_per_second);
            (achieved_flops / roof, intensity < self.ridge())
        };
        Some(Placement {
            flops_per_second: achieved_flops,
            bytes_per_second: achieved_bytes,
            fraction_of_roof: fraction,
            memory_bound,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEAK: Peak = Peak {
        flops_per_second: 100e9,
        bytes_per_second: 10e9,
    };

    #[test]
    fn a_layer_below_the_ridge_is_placed_against_the_bandwidth() {
        // 1 FLOP/byte, ridge at 10: roof 10 GFLOP/s; 5 GFLOP in 1 s is half of it.
        let p = PEAK.place(5_000_000_000, 5_000_000_000, 1.0).expect("placed");
        assert!(p.memory_bound);
        assert!((p.fraction_of_roof - 0.5).abs() < 1e-12, "{p:?}");
        assert!((p.bytes_per_second - 5e9).abs() < 1e-3);
    }

    #[test]
    fn a_layer_above_the_ridge_is_placed_against_the_arithmetic_rate() {
        // 100 FLOP/byte: roof 100 GFLOP/s; 25 GFLOP in 1 s is a quarter.
        let p = PEAK.place(25_000_000_000, 250_000_000, 1.0).expect("placed");
        assert!(!p.memory_bound);
        assert!((p.fraction_of_roof - 0.25).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn layers_without_flops_use_the_bandwidth_and_nothing_measured_is_not_placed() {
        let p = PEAK.place(0, 2_000_000_000, 1.0).expect("placed");
        assert!(p.memory_bound);
        assert!((p.fraction_of_roof - 0.2).abs() < 1e-12);
        assert_eq!(PEAK.place(10, 10, 0.0), None);
        assert_eq!(PEAK.place(0, 0, 1.0), None);
        assert!((PEAK.ridge() - 10.0).abs() < 1e-12);
    }
}
