//! `cargo convbench adapters`: every adapter wgpu finds, its fingerprint and features.

use crate::cli::Args;
use crate::output::print;
use clap::ValueEnum;
use comfy_table::Table;
use convbench::Result;
use convbench::gpu::list_adapters;

/// Output format of listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// A table.
    Table,
    /// JSON.
    Json,
}

/// Arguments of `adapters`.
#[derive(Debug, clap::Args)]
pub struct AdaptersArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// Lists adapters.
pub fn run(_args: &Args, a: &AdaptersArgs) -> Result<u8> {
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
    let mut table = Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header([
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
    for s in &adapters {
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
    print(&table.to_string());
    Ok(0)
}
