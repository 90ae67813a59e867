//! `cargo convbench list`: models (parameters, forward FLOPs), suites, kernels and kernel
//! variants.

use super::adapters::ListFormat;
use crate::cli::Args;
use crate::output::print;
use comfy_table::Table;
use convbench::Result;
use convbench::kernels::Variant;
use convbench::kernels::registry::SHADERS;
use convbench::model::{suites, zoo};
use serde_json::json;

/// Arguments of `list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

/// Lists models, suites and kernels.
pub fn run(_args: &Args, a: &ListArgs) -> Result<u8> {
    let models = zoo();
    let suites = suites();
    if a.format == ListFormat::Json {
        let models: Vec<_> = models
            .iter()
            .map(|n| {
                json!({
                    "name": n.name,
                    "description": n.description,
                    "input": [n.input.0, n.input.1, n.input.2],
                    "params": n.param_count(),
                    "forward_flops_per_image": n.forward_flops_per_image().unwrap_or(0),
                    "layers": n.layers.len(),
                })
            })
            .collect();
        let suites: Vec<_> = suites
            .iter()
            .map(|s| {
                let entries: Vec<_> = s
                    .entries
                    .iter()
                    .map(|e| json!({"name": e.name, "input": [e.input.0, e.input.1, e.input.2], "conv": e.conv, "default_batch": e.default_batch}))
                    .collect();
                json!({"name": s.name, "description": s.description, "entries": entries})
            })
            .collect();
        let kernels: Vec<_> = SHADERS
            .iter()
            .map(|s| json!({"file": s.file, "entries": s.entries}))
            .collect();
        let variants: Vec<String> = Variant::all().iter().map(Variant::id).collect();
        let doc = json!({"models": models, "suites": suites, "kernels": kernels, "variants": variants});
        print(&serde_json::to_string_pretty(&doc).unwrap_or_default());
        return Ok(0);
    }
    let mut table = Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header([
            "model",
            "input",
            "layers",
            "params (M)",
            "forward GFLOP/image",
            "description",
        ]);
    for n in &models {
        table.add_row([
            n.name.clone(),
            format!("{}x{}x{}", n.input.0, n.input.1, n.input.2),
            n.layers.len().to_string(),
            format!("{:.1}", n.param_count() as f64 / 1e6),
            format!("{:.3}", n.forward_flops_per_image().unwrap_or(0) as f64 / 1e9),
            n.description.clone(),
        ]);
    }
    let mut text = table.to_string();
    for s in &suites {
        let mut t = Table::new();
        t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
            .set_header([
                "entry",
                "input",
                "out",
                "kernel",
                "stride",
                "pad",
                "batch",
                "GFLOP/batch",
            ]);
        for e in &s.entries {
            let c = &e.conv;
            t.add_row([
                e.name.clone(),
                format!("{}x{}x{}", e.input.0, e.input.1, e.input.2),
                c.out_channels.to_string(),
                format!("{}x{}", c.kernel.0, c.kernel.1),
                format!("{}x{}", c.stride.0, c.stride.1),
                format!("{}x{}", c.padding.0, c.padding.1),
                e.default_batch.to_string(),
                format!("{:.1}", e.forward_flops(e.default_batch) as f64 / 1e9),
            ]);
        }
        text.push_str(&format!("\n\nsuite {}: {}\n{t}", s.name, s.description));
    }
    text.push_str("\n\nkernels:\n");
    for s in SHADERS.iter() {
        text.push_str(&format!("  shaders/{}: {}\n", s.file, s.entries.join(", ")));
    }
    let variants: Vec<String> = Variant::all().iter().map(Variant::id).collect();
    text.push_str(&format!(
        "\nkernel variants (`run --kernel`, `tune`): {}\n",
        variants.join(", ")
    ));
    print(&text);
    Ok(0)
}
