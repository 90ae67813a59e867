//! The second WGSL compiler for the user's kernels: Tint, the compiler of Dawn (Chrome's
//! WebGPU), run through node and the npm package `webgpu` when both are on the machine.
//!
//! naga (wgpu's compiler) validates every kernel when it is loaded; Tint differs from it in
//! constant evaluation, uniformity analysis, f16 rules and limits, so a kernel naga accepts may
//! not compile in a browser. `verify` gives each final source of the workspace's kernels (f32,
//! and f16 where declared) to the script `scripts/tint-check.mjs` (embedded here, so an
//! installed binary carries it), and reports a rejection against the user's own file and line
//! (the final sources keep the source's line numbers). Without node or the package the check is
//! skipped with a notice saying how to enable it: it is an extra compiler, not a requirement.

use super::KernelError;
use super::emit;
use super::user::KernelSet;
use crate::{Error, Result};
use std::path::PathBuf;
use std::process::Command;

/// The version of the npm package `webgpu` the check is written for (and `.ci/run` installs).
pub const WEBGPU_VERSION: &str = "0.6.2";

/// The validation script, as in the repository's `scripts/`.
const SCRIPT: &str = include_str!("../../scripts/tint-check.mjs");

/// What the check found, when it could run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TintCheck {
    /// Tint compiled every file.
    Accepted {
        /// Final sources checked.
        files: usize,
    },
    /// The check could not run here; the text says why and how to enable it.
    Unavailable(String),
}

/// Where `webgpu` is installed: `CONVBENCH_WEBGPU_DIR`, else the cache folder `.ci/run` uses
/// (`$XDG_CACHE_HOME/convbench/webgpu-VERSION`, or `~/.cache/...`), when it holds the package.
pub fn webgpu_dir() -> Option<PathBuf> {
    let configured = std::env::var_os("CONVBENCH_WEBGPU_DIR").map(PathBuf::from);
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .map(|cache| cache.join("convbench").join(format!("webgpu-{WEBGPU_VERSION}")));
    configured
        .into_iter()
        .chain(cache)
        .find(|dir| dir.join("node_modules/webgpu/package.json").is_file())
}

fn how_to_enable() -> String {
    format!(
        "install Node.js and `npm install --prefix ~/.cache/convbench/webgpu-{WEBGPU_VERSION} \
         webgpu@{WEBGPU_VERSION}` (or set CONVBENCH_WEBGPU_DIR to where it is installed)"
    )
}

/// Compiles every final source of `kernels` with Tint. A rejection is
/// [`KernelError::TintRejects`], naming the kernel's file, line and column and Tint's message.
pub fn check_user_kernels(kernels: &KernelSet) -> Result<TintCheck> {
    if kernels.is_empty() {
        return Ok(TintCheck::Accepted { files: 0 });
    }
    let node_runs = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !node_runs {
        return Ok(TintCheck::Unavailable(format!(
            "node is not on PATH; {}",
            how_to_enable()
        )));
    }
    let Some(webgpu) = webgpu_dir() else {
        return Ok(TintCheck::Unavailable(format!(
            "the npm package `webgpu` is not installed; {}",
            how_to_enable()
        )));
    };
    let folder = tempfile::tempdir().map_err(|source| KernelError::TintCannotRun {
        step: "create a temporary folder",
        source,
    })?;
    let script = folder.path().join("tint-check.mjs");
    std::fs::write(&script, SCRIPT).map_err(|error| Error::io(&script, error))?;
    let sources = emit::user_sources(kernels);
    let dir = folder.path().join("sources");
    emit::write_sources(&dir, &sources)?;
    let output = Command::new("node")
        .arg(&script)
        .arg("--webgpu")
        .arg(&webgpu)
        .arg(&dir)
        .output()
        .map_err(|source| KernelError::TintCannotRun {
            step: "run node",
            source,
        })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    match output.status.code() {
        Some(0) => Ok(TintCheck::Accepted { files: sources.len() }),
        Some(1) => {
            // The script names the emitted file; the user knows their own.
            let mut report = text;
            for source in &sources {
                let emitted = dir.join(&source.name).display().to_string();
                let named = format!("{} (as `{}` at {})", source.origin, source.name, source.precision);
                report = report.replace(&emitted, &named);
            }
            Err(KernelError::TintRejects {
                rejections: report
                    .lines()
                    .filter(|line| line.contains("error"))
                    .map(str::to_string)
                    .collect(),
            }
            .into())
        }
        _ => Ok(TintCheck::Unavailable(format!(
            "the Tint check could not run ({}); {}",
            text.lines().last().unwrap_or("no output"),
            how_to_enable()
        ))),
    }
}
