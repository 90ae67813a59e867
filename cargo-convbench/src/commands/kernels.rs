//! `cargo convbench kernels`: the ops convbench runs, with `--contract OP` the binding
//! contract a WGSL kernel for that op follows, as a skeleton, and with `--emit DIR` every final
//! WGSL source (convbench's and the workspace's kernels) as the device loads it.

use crate::args::ListFormat;
use crate::cli::Args;
use crate::output::print;
use comfy_table::Table;
use convbench::harness::plan::representative_ops;
use convbench::kernels::Access;
use convbench::kernels::contract::wgsl_skeleton;
use convbench::kernels::shader_set::ShaderSet;
use convbench::kernels::{emit, user};
use convbench::{Error, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Arguments of `kernels`.
#[derive(Debug, clap::Args)]
pub struct KernelsArgs {
    /// Print the contract of this op (e.g. `conv2d_forward`) as a WGSL skeleton.
    #[arg(long, value_name = "OP")]
    pub contract: Option<String>,
    /// Write every final WGSL source (each shader at each precision, subgroup form and
    /// specialisation, and the workspace's kernels) into this folder, one file per source.
    #[arg(long, value_name = "DIR", conflicts_with = "contract")]
    pub emit: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

/// `cargo convbench kernels`.
pub fn run(_args: &Args, a: &KernelsArgs) -> Result<u8> {
    if let Some(dir) = &a.emit {
        return emit_sources(_args, dir, a.format);
    }
    let ops = representative_ops()?;
    let Some(name) = &a.contract else {
        if a.format == ListFormat::Json {
            let list: Vec<_> = ops.iter().map(contract_json).collect();
            print(&serde_json::to_string_pretty(&list).unwrap_or_default());
        } else {
            let mut table = Table::new();
            table
                .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
                .set_header(["op", "reads", "writes"]);
            for op in &ops {
                let names = |read: bool| {
                    op.contract()
                        .iter()
                        .filter(|b| (b.access == Access::Read) == read)
                        .map(|b| b.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                table.add_row([op.name().to_string(), names(true), names(false)]);
            }
            let workspace = convbench::config::load(_args.manifest_path.as_deref())?;
            let mine = convbench::kernels::user::load_all(&workspace.kernels)?;
            let mut text = table.to_string();
            if !mine.is_empty() {
                let mut yours = Table::new();
                yours
                    .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
                    .set_header(["your kernel", "op", "source", "f16", "only", "digest"]);
                for k in &mine {
                    let source = k
                        .source_path
                        .strip_prefix(&workspace.root)
                        .unwrap_or(&k.source_path);
                    yours.add_row([
                        k.id(),
                        k.op.to_string(),
                        source.display().to_string(),
                        if k.f16 { "yes" } else { "no" }.to_string(),
                        k.only.describe(),
                        k.digest.clone(),
                    ]);
                }
                text = format!("{text}\n\n{yours}");
            }
            print(&format!(
                "{text}\n\n`cargo convbench kernels --contract OP` prints an op's contract as a WGSL skeleton."
            ));
        }
        return Ok(0);
    };
    let op = ops.iter().find(|op| op.name() == name).ok_or_else(|| {
        let known: Vec<&str> = ops.iter().map(|op| op.name()).collect();
        Error::InvalidInput(format!("no op named {name}; the ops are: {}", known.join(", ")))
    })?;
    match a.format {
        ListFormat::Json => print(&serde_json::to_string_pretty(&contract_json(op)).unwrap_or_default()),
        ListFormat::Table => print(wgsl_skeleton(op).trim_end()),
    }
    Ok(0)
}

fn contract_json(op: &convbench::kernels::Op) -> serde_json::Value {
    let bindings: Vec<_> = op
        .contract()
        .iter()
        .enumerate()
        .map(|(k, b)| {
            json!({
                "binding": k + 1,
                "name": b.name,
                "access": format!("{:?}", b.access).to_lowercase(),
                "dtype": format!("{:?}", b.dtype).to_lowercase(),
                "about": b.about,
                "optional": b.is_optional(),
            })
        })
        .collect();
    json!({ "op": op.name(), "bindings": bindings })
}

/// `kernels --emit DIR`: convbench's final sources, then the workspace's kernels.
fn emit_sources(args: &Args, dir: &Path, format: ListFormat) -> Result<u8> {
    convbench::fs::check_output_folder(dir)?;
    let own = emit::final_sources(&ShaderSet::embedded())?;
    let workspace = convbench::config::load(args.manifest_path.as_deref())?;
    let mine = user::load_all(&workspace.kernels)?;
    let yours = emit::user_sources(&mine);
    let all: Vec<_> = own.iter().chain(&yours).cloned().collect();
    emit::write_sources(dir, &all)?;
    match format {
        ListFormat::Json => {
            let list: Vec<_> = all
                .iter()
                .map(|s| {
                    json!({
                        "file": s.name,
                        "origin": s.origin,
                        "precision": s.precision.as_str(),
                        "subgroups": s.subgroups,
                        "constants": s.constants.iter().map(|(n, v)| json!({ "name": n, "value": v })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            print(&serde_json::to_string_pretty(&list).unwrap_or_default());
        }
        ListFormat::Table => print(&format!(
            "wrote {} final sources of convbench's shaders and {} of your kernels to {}",
            own.len(),
            yours.len(),
            dir.display()
        )),
    }
    Ok(0)
}
