//! What `adapters` prints: the adapters wgpu sees, and the calibrations it measured.

use crate::calibration::Calibration;
use crate::gpu::{AdapterSummary, CALIBRATION_METHOD};
use std::path::PathBuf;

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// One row per adapter: name, backend, type, ids, driver, features, binding limit, slug.
pub fn adapters_table(adapters: &[AdapterSummary]) -> String {
    let mut table = super::terminal::bordered(&[
        "#",
        "name",
        "backend",
        "type",
        "vendor:device",
        "driver",
        "timestamps",
        "f16",
        "subgroups",
        "max binding",
        "slug",
    ]);
    for s in adapters {
        let f = &s.fingerprint;
        table.add_row([
            s.index.to_string(),
            f.name.clone(),
            f.backend.clone(),
            f.device_type.clone(),
            format!("{:04x}:{:04x}", f.vendor_id, f.device_id),
            format!("{} {}", f.driver, f.driver_info).trim().to_string(),
            yes(s.timestamps).into(),
            yes(s.f16).into(),
            yes(s.subgroups).into(),
            format!("{} MiB", s.max_storage_binding_bytes / (1024 * 1024)),
            s.slug.clone(),
        ]);
    }
    table.to_string()
}

/// One row per calibration: the adapter, its peaks, the ridge point and where it is cached.
pub fn calibrations_table(calibrations: &[(Calibration, PathBuf)]) -> String {
    let mut table =
        super::terminal::bordered(&["adapter", "GFLOP/s (f32)", "GB/s", "ridge FLOP/byte", "cached in"]);
    for (c, path) in calibrations {
        table.add_row([
            c.adapter.label(),
            format!("{:.1}", c.peak.flops_per_second / 1e9),
            format!("{:.1}", c.peak.bytes_per_second / 1e9),
            format!("{:.1}", c.peak.ridge()),
            path.display().to_string(),
        ]);
    }
    format!("{table}\nmeasured with {CALIBRATION_METHOD}")
}
