//! Adapters: enumeration on every backend, fingerprints, selection.

use super::DeviceError;
use crate::Result;
use crate::results::AdapterFingerprint;
use serde::Serialize;

/// The wgpu version this build links (checked against `Cargo.lock` in tests).
pub const WGPU_VERSION: &str = "30.0.1";

/// An adapter as `cargo convbench adapters` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdapterSummary {
    /// Position in the enumeration, usable as `--adapter <index>`.
    pub index: usize,
    /// Identity.
    pub fingerprint: AdapterFingerprint,
    /// Stable folder-safe name.
    pub slug: String,
    /// `TIMESTAMP_QUERY`: per-op GPU timing.
    pub timestamps: bool,
    /// `SHADER_F16`: f16 storage and arithmetic.
    pub f16: bool,
    /// `SUBGROUP`: subgroup operations.
    pub subgroups: bool,
    /// Largest buffer (bytes).
    pub max_buffer_bytes: u64,
    /// Largest storage-buffer binding (bytes).
    pub max_storage_binding_bytes: u64,
    /// Largest dispatch along one dimension (workgroups).
    pub max_workgroups_per_dimension: u32,
}

/// An instance of `backends`. Only an instance with GL probes EGL, whose loader prints
/// `XDG_RUNTIME_DIR` errors on stderr in containers and CI: commands that pick a native adapter
/// never create one (see [`select`]).
fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.backends = backends;
    wgpu::Instance::new(descriptor)
}

pub(super) fn fingerprint(info: &wgpu::AdapterInfo) -> AdapterFingerprint {
    let device_type = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => "discrete",
        wgpu::DeviceType::IntegratedGpu => "integrated",
        wgpu::DeviceType::VirtualGpu => "virtual",
        wgpu::DeviceType::Cpu => "cpu",
        wgpu::DeviceType::Other => "other",
    };
    AdapterFingerprint {
        backend: info.backend.to_str().to_string(),
        vendor_id: info.vendor,
        device_id: info.device,
        name: info.name.clone(),
        device_type: device_type.to_string(),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        runtime_version: format!("wgpu {WGPU_VERSION}"),
    }
}

pub(super) fn summarize(index: usize, adapter: &wgpu::Adapter) -> AdapterSummary {
    let features = adapter.features();
    let limits = adapter.limits();
    let fingerprint = fingerprint(&adapter.get_info());
    AdapterSummary {
        index,
        slug: fingerprint.slug(),
        fingerprint,
        timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
        f16: features.contains(wgpu::Features::SHADER_F16),
        subgroups: features.contains(wgpu::Features::SUBGROUP),
        max_buffer_bytes: limits.max_buffer_size,
        max_storage_binding_bytes: limits.max_storage_buffer_binding_size,
        max_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
    }
}

/// Every adapter of `backends`, in enumeration order.
fn enumerate(backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance(backends).enumerate_adapters(backends))
}

/// Every adapter wgpu finds on every backend, in enumeration order.
pub fn list_adapters() -> Vec<AdapterSummary> {
    enumerate(wgpu::Backends::all())
        .iter()
        .enumerate()
        .map(|(i, a)| summarize(i, a))
        .collect()
}

/// Preference when no adapter is named: real GPUs before software ones, native APIs before GL.
fn rank(summary: &AdapterSummary) -> (u8, u8) {
    let device = match summary.fingerprint.device_type.as_str() {
        "discrete" => 0,
        "integrated" => 1,
        "virtual" => 2,
        "other" => 3,
        _ => 4,
    };
    let api = u8::from(summary.fingerprint.backend == "gl");
    (device, api)
}

/// Picks an adapter: `selector` is an index, a backend name (`vulkan`, `metal`, `dx12`, `gl`)
/// or a case-insensitive substring of the adapter name; `None` picks the best one. Without an
/// index or `gl`, the native backends (Vulkan, Metal, DX12) are searched first and GL only when
/// none of theirs matches, so that GL's probe (and its stderr noise) happens only when needed;
/// an index counts every backend's adapters, as `cargo convbench adapters` lists them.
pub(super) fn select(selector: Option<&str>) -> Result<wgpu::Adapter> {
    let wanted = selector.map(str::trim).filter(|s| !s.is_empty());
    let needs_gl = wanted.is_some_and(|sel| sel.parse::<usize>().is_ok() || sel.eq_ignore_ascii_case("gl"));
    if !needs_gl && let Ok(adapter) = select_among(enumerate(wgpu::Backends::PRIMARY), wanted) {
        return Ok(adapter);
    }
    select_among(enumerate(wgpu::Backends::all()), wanted)
}

/// [`select`] among `adapters`.
/// Whether an adapter `name` matches `selector` (lowercase): a substring of the name, except
/// that a number (one that is no adapter's index) matches only a whole word, as `4090` in
/// "RTX 4090": `5` must not pick "llvmpipe (LLVM 15.0.6, 256 bits)".
fn name_matches(name: &str, selector: &str) -> bool {
    let name = name.to_ascii_lowercase();
    if selector.bytes().all(|b| b.is_ascii_digit()) {
        name.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| word == selector)
    } else {
        name.contains(selector)
    }
}

fn select_among(adapters: Vec<wgpu::Adapter>, selector: Option<&str>) -> Result<wgpu::Adapter> {
    if adapters.is_empty() {
        return Err(DeviceError::NoAdapter.into());
    }
    let summaries: Vec<AdapterSummary> = adapters
        .iter()
        .enumerate()
        .map(|(i, a)| summarize(i, a))
        .collect();
    let chosen = match selector.map(str::trim).filter(|s| !s.is_empty()) {
        None => summaries.iter().min_by_key(|s| rank(s)).map(|s| s.index),
        Some(sel) => {
            let lower = sel.to_ascii_lowercase();
            sel.parse::<usize>()
                .ok()
                .filter(|&i| i < summaries.len())
                .or_else(|| {
                    summaries
                        .iter()
                        .filter(|s| s.fingerprint.backend == lower)
                        .min_by_key(|s| rank(s))
                        .map(|s| s.index)
                })
                .or_else(|| {
                    summaries
                        .iter()
                        .find(|s| name_matches(&s.fingerprint.name, &lower))
                        .map(|s| s.index)
                })
        }
    };
    let Some(index) = chosen else {
        return Err(DeviceError::NoMatchingAdapter {
            selector: selector.unwrap_or_default().to_string(),
            available: summaries
                .iter()
                .map(|s| format!("{}: {}", s.index, s.fingerprint.label()))
                .collect(),
        }
        .into());
    };
    Ok(adapters
        .into_iter()
        .nth(index)
        .expect("index comes from the same list"))
}

#[cfg(test)]
mod tests {
    use super::name_matches;

    #[test]
    fn a_number_matches_a_name_only_as_a_whole_word() {
        let llvmpipe = "llvmpipe (LLVM 15.0.6, 256 bits)";
        assert!(name_matches(llvmpipe, "llvmpipe"));
        assert!(name_matches(llvmpipe, "256"));
        assert!(!name_matches(llvmpipe, "5"), "a digit inside 256 or 15");
        assert!(!name_matches(llvmpipe, "2"));
        assert!(name_matches("NVIDIA GeForce RTX 4090", "4090"));
        assert!(name_matches("NVIDIA GeForce RTX 4090", "rtx 40"));
        assert!(!name_matches("NVIDIA H200", "20"));
    }
}
