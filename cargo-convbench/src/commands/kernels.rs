//! `cargo convbench kernels`: the ops convbench runs, with `--contract OP` the binding
//! contract a WGSL kernel for that op follows, as a skeleton, and with `--emit DIR` every final
//! WGSL source (convbench's and the workspace's kernels) as the device loads it.

use crate::output::print;
use convbench::cli::Global;
use convbench::cli::ListFormat;
use convbench::cli::kernels::KernelsArgs;
use convbench::harness::plan::{representative_op, representative_ops};
use convbench::kernels::contract::wgsl_skeleton;
use convbench::kernels::emit::emit;
use convbench::{Result, report};
use std::path::Path;

/// `cargo convbench kernels`.
pub fn run(args: &Global, a: &KernelsArgs) -> Result<u8> {
    if let Some(dir) = &a.emit {
        return emit_sources(args, dir, a.format);
    }
    if let Some(name) = &a.contract {
        let op = representative_op(name)?;
        // Every op has a contract; only some can be a kernel of the user's own.
        if !convbench::kernels::user::SUPPORTED_OPS.contains(&name.as_str()) && !args.quiet {
            eprintln!(
                "notice: {name}'s contract, for reference: a kernel of your own can implement only {}",
                convbench::kernels::user::SUPPORTED_OPS.join(", ")
            );
        }
        match a.format {
            ListFormat::Json => {
                print(&serde_json::to_string_pretty(&report::contract_json(&op)).unwrap_or_default())
            }
            ListFormat::Table => print(wgsl_skeleton(&op).trim_end()),
        }
        return Ok(0);
    }
    let ops = representative_ops()?;
    if a.format == ListFormat::Json {
        let list: Vec<_> = ops.iter().map(report::contract_json).collect();
        print(&serde_json::to_string_pretty(&list).unwrap_or_default());
    } else {
        let workspace = super::workspace(args)?;
        let text = report::ops_table(&ops, &workspace.kernel_set()?, &workspace.root);
        print(&format!(
            "{text}\n\n`cargo convbench kernels --contract OP` prints an op's contract as a WGSL skeleton."
        ));
    }
    Ok(0)
}

/// `kernels --emit DIR`: convbench's final sources, then the workspace's kernels.
fn emit_sources(args: &Global, dir: &Path, format: ListFormat) -> Result<u8> {
    let workspace = super::workspace(args)?;
    let emitted = emit(dir, &workspace.kernel_set()?)?;
    match format {
        ListFormat::Json => {
            print(&serde_json::to_string_pretty(&report::emitted_json(&emitted.sources)).unwrap_or_default())
        }
        ListFormat::Table => print(&format!(
            "wrote {} final sources of convbench's shaders and {} of your kernels to {}",
            emitted.convbench,
            emitted.sources.len() - emitted.convbench,
            dir.display()
        )),
    }
    Ok(0)
}
