//! What `kernels` prints: the ops with what each reads and writes, the workspace's kernels,
//! an op's contract as JSON, and the final sources `--emit` wrote.

use crate::kernels::emit::FinalSource;
use crate::kernels::user::KernelSet;
use crate::kernels::{Access, Op};
use serde_json::json;
use std::path::Path;

/// The ops and the bindings each reads and writes, then the workspace's kernels (`mine`, their
/// sources shown relative to `root`).
pub fn ops_table(ops: &[Op], mine: &KernelSet, root: &Path) -> String {
    let mut table = super::terminal::bordered(&["op", "reads", "writes"]);
    for op in ops {
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
    let mut text = table.to_string();
    if !mine.is_empty() {
        let mut yours = super::terminal::bordered(&["your kernel", "op", "source", "f16", "only", "digest"]);
        for k in mine.iter() {
            let source = k.source_path.strip_prefix(root).unwrap_or(&k.source_path);
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
    text
}

/// An op's contract as JSON: its bindings in order, numbered from 1 (0 is the parameters).
pub fn contract_json(op: &Op) -> serde_json::Value {
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

/// The final sources `kernels --emit` wrote, as JSON: file, origin, precision, subgroup form
/// and specialisation constants.
pub fn emitted_json(sources: &[FinalSource]) -> serde_json::Value {
    let list: Vec<_> = sources
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
    serde_json::Value::Array(list)
}
