//! The roofline: what an adapter can reach (its measured peak arithmetic rate and memory
//! bandwidth, from `cargo convbench adapters --calibrate`) and where each layer stands against
//! it.
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

use crate::adapter::AdapterFingerprint;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The calibration file format this build writes and reads.
pub const CALIBRATION_FORMAT_VERSION: u32 = 1;

const CALIBRATION: crate::cache::Kind = crate::cache::Kind {
    name: "calibration",
    rebuild: "cargo convbench adapters --calibrate",
    version: CALIBRATION_FORMAT_VERSION,
};

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

/// A calibration as cached per adapter under the workspace's target directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// [`CALIBRATION_FORMAT_VERSION`] of the build that wrote it.
    pub format_version: u32,
    /// The adapter it was measured on (driver included).
    pub adapter: AdapterFingerprint,
    /// The peaks.
    pub peak: Peak,
    /// How the peaks were measured, for people.
    pub method: String,
}

/// What [`Calibration::calibrate_all`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibrated {
    /// Each calibration with the file it was cached in.
    pub calibrations: Vec<(Calibration, PathBuf)>,
    /// One message per adapter that could not be calibrated: `adapter SELECTOR: ERROR`.
    pub failures: Vec<String>,
}

impl Calibration {
    /// Opens the adapter `selector` names, measures its peaks ([`crate::gpu::calibrate`],
    /// after `on_start` hears which adapter it is) and caches them under `target_dir`.
    pub fn measure_and_cache(
        selector: &str,
        target_dir: &Path,
        on_start: &mut dyn FnMut(&crate::results::AdapterFingerprint),
    ) -> crate::Result<(Calibration, PathBuf)> {
        let gpu = crate::gpu::Gpu::open(Some(selector))?;
        let adapter = gpu.summary().fingerprint.clone();
        on_start(&adapter);
        let peak = crate::gpu::calibrate(&gpu)?;
        let calibration = Calibration {
            format_version: CALIBRATION_FORMAT_VERSION,
            adapter,
            peak,
            method: crate::gpu::CALIBRATION_METHOD.to_string(),
        };
        let path = Calibration::path(target_dir, &calibration.adapter.slug());
        calibration.save(&path)?;
        Ok((calibration, path))
    }

    /// `adapters --calibrate`: [`Calibration::measure_and_cache`] of the adapter `only` names,
    /// or of every adapter wgpu finds (none found is an error). With `only`, its error is the
    /// error; otherwise an adapter that fails is a message beside the calibrations of the others.
    pub fn calibrate_all(
        only: Option<&str>,
        target_dir: &Path,
        on_start: &mut dyn FnMut(&AdapterFingerprint),
    ) -> Result<Calibrated> {
        let selectors: Vec<String> = match only {
            Some(selector) => vec![selector.to_string()],
            None => (crate::gpu::list_adapters().iter())
                .map(|s| s.index.to_string())
                .collect(),
        };
        if selectors.is_empty() {
            return Err(Error::Environment(
                "no GPU adapter found to calibrate; install a Vulkan driver, e.g. Debian's mesa-vulkan-drivers"
                    .into(),
            ));
        }
        let mut calibrations = Vec::new();
        let mut failures = Vec::new();
        for selector in &selectors {
            match Calibration::measure_and_cache(selector, target_dir, on_start) {
                Ok(c) => calibrations.push(c),
                Err(e) if only.is_some() => return Err(e),
                Err(e) => failures.push(format!("adapter {selector}: {e}")),
            }
        }
        Ok(Calibrated {
            calibrations,
            failures,
        })
    }

    /// Where the calibration of the adapter with `slug` lives under a target directory.
    pub fn path(target_dir: &Path, slug: &str) -> PathBuf {
        target_dir
            .join("convbench")
            .join(format!("calibration-{slug}.json"))
    }

    /// Reads the calibration at `path`; `None` when there is none.
    pub fn load(path: &Path) -> Result<Option<Self>> {
        let Some(calibration) = crate::cache::load(path, &CALIBRATION, |c: &Self| c.format_version)? else {
            return Ok(None);
        };
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let peak = calibration.peak;
        if !positive(peak.flops_per_second) || !positive(peak.bytes_per_second) {
            return Err(Error::InvalidInput(format!(
                "{} holds a peak that is not a positive number; run `{}` again",
                path.display(),
                CALIBRATION.rebuild
            )));
        }
        Ok(Some(calibration))
    }

    /// Writes the calibration to `path` atomically, creating the directory.
    pub fn save(&self, path: &Path) -> Result<()> {
        crate::cache::save(path, self, &CALIBRATION)
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

    #[test]
    fn bad_calibration_files_are_clear_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = Calibration::path(dir.path(), "x");
        assert_eq!(Calibration::load(&path).expect("absent is fine"), None);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "{").expect("write");
        let e = Calibration::load(&path).expect_err("corrupt");
        assert!(e.to_string().contains("--calibrate"), "{e}");
        let adapter = AdapterFingerprint {
            backend: "vulkan".into(),
            vendor_id: 0,
            device_id: 0,
            name: "x".into(),
            device_type: "cpu".into(),
            driver: "d".into(),
            driver_info: "1".into(),
            runtime_version: "wgpu".into(),
        };
        let mut c = Calibration {
            format_version: CALIBRATION_FORMAT_VERSION + 1,
            adapter,
            peak: PEAK,
            method: "test".into(),
        };
        c.save(&path).expect("save");
        let e = Calibration::load(&path).expect_err("future");
        assert!(e.to_string().contains("format"), "{e}");
        c.format_version = CALIBRATION_FORMAT_VERSION;
        c.peak.bytes_per_second = 0.0;
        c.save(&path).expect("save");
        assert!(Calibration::load(&path).is_err());
        c.peak = PEAK;
        c.save(&path).expect("save");
        assert_eq!(Calibration::load(&path).expect("reads"), Some(c));
    }
}
