//! What `list` prints: the models (the workspace's first), the suites, the shader files, the
//! kernel variants and the workspace's own kernels with their sources (and, for one that does
//! not load, why: `"problem"` in the JSON, `null` for one that does).

use crate::config::Workspace;
use crate::kernels::Variant;
use crate::kernels::registry::SHADERS;
use crate::model::{suites, zoo};
use serde_json::json;

/// The listing of everything `run` accepts in `workspace` (convbench's own alone without
/// one), as a table and text, or with `json` as one JSON document.
pub fn listing(workspace: Option<&Workspace>, json: bool) -> String {
    let (root, mine, declared) = workspace
        .map(|w| (w.root.clone(), w.config.model.clone(), w.kernels.clone()))
        .unwrap_or_default();
    let source_of = |k: &crate::kernels::user::Declared| {
        let source = k.base_dir.join(&k.config.source);
        source
            .strip_prefix(&root)
            .map(|p| p.to_path_buf())
            .unwrap_or(source)
    };
    // A kernel `run`, `kernels` and `verify` would refuse is listed with the reason, not as if
    // it could run (loading validates the WGSL and the bindings; nothing runs).
    let problem_of = |k: &crate::kernels::user::Declared| {
        crate::kernels::user::UserKernel::load(k).err().map(|error| {
            // One line: the first, and where it only introduces the diagnostic below it
            // (`not valid WGSL:`), the diagnostic's first line too.
            let text = error.to_string();
            let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
            let first = lines.next().unwrap_or_default();
            match lines.next() {
                Some(next) if first.ends_with(':') => format!("{first} {next}"),
                _ => first.to_string(),
            }
        })
    };
    let workspace_models = mine.len();
    let models: Vec<_> = mine.into_iter().chain(zoo()).collect();
    let suites = suites();
    if json {
        let models: Vec<_> = models
            .iter()
            .enumerate()
            .map(|(index, n)| {
                json!({
                    "name": n.name,
                    "from": if index < workspace_models { "workspace" } else { "zoo" },
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
        let variants: Vec<String> = Variant::builtin().iter().map(Variant::id).collect();
        let user_kernels: Vec<_> = declared
            .iter()
            .map(|k| json!({"name": format!("user:{}", k.name), "op": k.config.op, "source": source_of(k), "problem": problem_of(k)}))
            .collect();
        let doc = json!({"models": models, "suites": suites, "kernels": kernels, "variants": variants, "user_kernels": user_kernels});
        return serde_json::to_string_pretty(&doc).unwrap_or_default();
    }
    let mut table = super::terminal::bordered(&[
        "model",
        "input",
        "layers",
        "params (M)",
        "forward GFLOP/image",
        "description",
    ]);
    for (index, n) in models.iter().enumerate() {
        table.add_row([
            if index < workspace_models {
                format!("{} (workspace)", n.name)
            } else {
                n.name.clone()
            },
            format!("{}x{}x{}", n.input.0, n.input.1, n.input.2),
            n.layers.len().to_string(),
            format!("{:.1}", n.param_count() as f64 / 1e6),
            format!("{:.3}", n.forward_flops_per_image().unwrap_or(0) as f64 / 1e9),
            n.description.clone(),
        ]);
    }
    let mut text = table.to_string();
    for s in &suites {
        let mut t = super::terminal::bordered(&[
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
    let variants: Vec<String> = Variant::builtin().iter().map(Variant::id).collect();
    text.push_str(&format!(
        "\nkernel variants (`run --kernel`, `tune`): {}\n",
        variants.join(", ")
    ));
    if !declared.is_empty() {
        text.push_str("\nthis workspace's kernels (`run --kernel user:NAME`):\n");
        for k in &declared {
            let problem = problem_of(k).map_or_else(String::new, |problem| {
                format!(" (invalid: {problem}; `cargo convbench kernels` says more)")
            });
            text.push_str(&format!(
                "  user:{}: {} in {}{problem}\n",
                k.name,
                k.config.op,
                source_of(k).display()
            ));
        }
    }
    text
}
