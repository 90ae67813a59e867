//! The identity of an adapter that produced numbers: what keys baselines, records and
//! calibrations, so that numbers from different adapters are never compared. Its own module so
//! that records ([`crate::results`]) and calibrations ([`crate::calibration`]) both use it without
//! importing each other.

use serde::{Deserialize, Serialize};

/// Identity of the adapter that produced numbers. Numbers from different fingerprints are
/// never compared.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AdapterFingerprint {
    /// Graphics API: `vulkan`, `metal`, `dx12`, `gl`, `cuda`, `cpu`.
    pub backend: String,
    /// PCI vendor id (0 when unknown).
    pub vendor_id: u32,
    /// PCI device id (0 when unknown).
    pub device_id: u32,
    /// Adapter name as the driver reports it.
    pub name: String,
    /// `discrete`, `integrated`, `virtual`, `cpu` or `other`.
    pub device_type: String,
    /// Driver name.
    pub driver: String,
    /// Driver version or build information.
    pub driver_info: String,
    /// Version of the runtime that drove it (wgpu, CUDA driver, or convbench for `cpu`).
    pub runtime_version: String,
}

/// Longest [`AdapterFingerprint::slug`], in bytes: far under any file system's limit on a
/// file name.
pub const MAX_SLUG_LEN: usize = 80;

impl AdapterFingerprint {
    /// A stable folder-safe name: lower-case `backend-name-vendor-device`, runs of other
    /// characters collapsed to `-`. Driver versions are left out so that a baseline folder
    /// survives a driver update; the full fingerprint inside the record still tells them apart.
    ///
    /// At most [`MAX_SLUG_LEN`] bytes: a longer slug (a driver that reports a 240-character
    /// name) keeps its head and replaces its tail with 16 hex digits of a hash of the whole
    /// slug (FNV-1a, fixed forever), so that it stays a valid file name and stays distinct.
    pub fn slug(&self) -> String {
        let slug = self.full_slug();
        if slug.len() <= MAX_SLUG_LEN {
            return slug;
        }
        let hash = crate::fnv1a64(slug.bytes());
        // The slug is ASCII, so any byte index is a character boundary.
        let head = slug[..MAX_SLUG_LEN - 17].trim_end_matches('-');
        format!("{head}-{hash:016x}")
    }

    fn full_slug(&self) -> String {
        let raw = format!(
            "{}-{}-{:04x}-{:04x}",
            self.backend, self.name, self.vendor_id, self.device_id
        );
        let mut slug = String::with_capacity(raw.len());
        for ch in raw.chars() {
            if ch.is_ascii_alphanumeric() {
                slug.push(ch.to_ascii_lowercase());
            } else if !slug.ends_with('-') {
                slug.push('-');
            }
        }
        slug.trim_matches('-').to_string()
    }

    /// Short human description, e.g. `NVIDIA H100 (vulkan)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.name, self.backend)
    }
}
