//! Calibrations: each adapter's peaks ([`Peak`]) as [`crate::gpu::calibrate`] measures them,
//! cached per adapter under the workspace's target directory for the roofline of `run --layers`
//! (see [`crate::roofline`]).

use crate::Result;
use crate::adapter::AdapterFingerprint;
use crate::roofline::Peak;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The calibration file format this build writes and reads.
pub const CALIBRATION_FORMAT_VERSION: u32 = 1;

const CALIBRATION: crate::cache::Kind = crate::cache::Kind {
    name: "calibration",
    rebuild: "cargo convbench adapters --calibrate",
    version: CALIBRATION_FORMAT_VERSION,
};

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
        on_start: &mut dyn FnMut(&AdapterFingerprint),
    ) -> Result<(Calibration, PathBuf)> {
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
            return Err(crate::DeviceError::NoAdapterToCalibrate.into());
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
            return Err(crate::fs::FileError::ImplausibleCache {
                path: path.to_path_buf(),
                cache: CALIBRATION.name,
                problem: "a peak that is not a positive number",
                rebuild: CALIBRATION.rebuild,
            }
            .into());
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
    use crate::Error;

    #[test]
    fn bad_calibration_files_are_clear_errors() {
        let peak = Peak {
            flops_per_second: 100e9,
            bytes_per_second: 10e9,
        };
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
            peak,
            method: "test".into(),
        };
        c.save(&path).expect("save");
        let e = Calibration::load(&path).expect_err("future");
        assert!(e.to_string().contains("format"), "{e}");
        c.format_version = CALIBRATION_FORMAT_VERSION;
        c.peak.bytes_per_second = 0.0;
        c.save(&path).expect("save");
        let e = Calibration::load(&path).expect_err("no bandwidth");
        assert!(
            matches!(&e, Error::File(f) if matches!(**f, crate::fs::FileError::ImplausibleCache { .. })),
            "{e:?}"
        );
        assert!(e.to_string().contains("not a positive number"), "{e}");
        c.peak = peak;
        c.save(&path).expect("save");
        assert_eq!(Calibration::load(&path).expect("reads"), Some(c));
    }
}
