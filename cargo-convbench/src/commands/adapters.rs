//! `cargo convbench adapters`: every adapter wgpu finds, its fingerprint and features; with
//! `--calibrate`, each adapter's measured peak arithmetic rate and bandwidth, cached for the
//! roofline of `run --layers` (see `convbench::roofline`).

use crate::output::print;
use convbench::calibration::{Calibrated, Calibration};
use convbench::cli::Global;
use convbench::cli::ListFormat;
use convbench::cli::adapters::AdaptersArgs;
use convbench::gpu::list_adapters;
use convbench::{DeviceError, Result};

/// Lists adapters, or calibrates them.
pub fn run(args: &Global, a: &AdaptersArgs) -> Result<u8> {
    if a.calibrate {
        return calibrate_adapters(args, a);
    }
    let adapters = list_adapters();
    if a.format == ListFormat::Json {
        print(&serde_json::to_string_pretty(&adapters).unwrap_or_default());
        return Ok(0);
    }
    if adapters.is_empty() {
        print(
            "no GPU adapter found (install a Vulkan driver, e.g. Debian's mesa-vulkan-drivers); `run` falls back to the cpu backend",
        );
        return Ok(0);
    }
    print(&convbench::report::adapters_table(&adapters));
    Ok(0)
}

/// `adapters --calibrate`: calibrates the selected adapter, or every adapter (one that fails is
/// reported and the others still run; the exit code is 3 when none could be calibrated).
fn calibrate_adapters(args: &Global, a: &AdaptersArgs) -> Result<u8> {
    let workspace = super::workspace(args)?;
    let Calibrated {
        calibrations,
        failures,
    } = Calibration::calibrate_all(a.adapter.as_deref(), &workspace.target_dir, &mut |adapter| {
        if !args.quiet {
            eprintln!("calibrating {} ...", adapter.label());
        }
    })?;
    for failure in &failures {
        eprintln!("error: {failure}");
    }
    if a.format == ListFormat::Json {
        let list: Vec<&Calibration> = calibrations.iter().map(|(c, _)| c).collect();
        print(&serde_json::to_string_pretty(&list).unwrap_or_default());
    } else if !calibrations.is_empty() {
        print(&convbench::report::calibrations_table(&calibrations));
    }
    if calibrations.is_empty() {
        return Err(DeviceError::NoneCalibrated.into());
    }
    Ok(0)
}
