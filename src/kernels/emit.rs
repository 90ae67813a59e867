//! Every final WGSL source convbench can compile, as the device loads it: each registered shader
//! at each precision, in its portable and (where it has subgroup blocks) subgroup form, with each
//! specialisation a variant uses (the GEMM tiles), and the users' kernels. `cargo convbench
//! kernels --emit DIR` writes them so that they can be read, diffed, ported and given to another
//! WGSL compiler (CI runs Tint on them, `scripts/tint-check.mjs`).
//!
//! A final source is the text of [`ShaderSet::final_source`] (includes resolved, see
//! [`super::include`]), the function the device compiles through; only naga's copy differs, by
//! [`super::registry::naga_source`].

use super::KernelError;
use super::registry::{CALIBRATE, GEMM, SHADERS, Shader};
use super::shader_set::ShaderSet;
use super::user::KernelSet;
use super::variant::{GEMM_TILES, Variant};
use crate::Result;
use crate::model::Precision;
use std::path::Path;

/// The `(name, value)` pairs of the shader constants a specialisation replaces.
pub type Constants = Vec<(&'static str, u32)>;

/// One final source and how it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalSource {
    /// File name, `STEM.PRECISION[.subgroups].wgsl`: the shader's file stem (`conv2d`), the
    /// variant id for a specialisation (`gemm_64x64x16_4x4`), `user_NAME` for a user's kernel.
    pub name: String,
    /// The registered file it comes from (`conv2d.wgsl`), or the user kernel's source path.
    pub origin: String,
    /// Storage precision.
    pub precision: Precision,
    /// Whether this is the form for devices with subgroup operations.
    pub subgroups: bool,
    /// The shader constants it specialises (empty for most shaders).
    pub constants: Constants,
    /// The WGSL text.
    pub text: String,
}

/// The specialisations of `shader` that the variants use, each with the variant it is named
/// after: every GEMM tile for `gemm.wgsl`, the source as written for every other shader.
pub fn specializations(shader: &Shader) -> Vec<(Option<Variant>, Constants)> {
    if std::ptr::eq(shader, &GEMM) {
        GEMM_TILES
            .iter()
            .map(|tile| (Some(Variant::Gemm(*tile)), tile.constants()))
            .collect()
    } else {
        vec![(None, Vec::new())]
    }
}

/// The precisions `shader` is loaded at: both, except the calibration shader (f32 only).
fn precisions(shader: &Shader) -> &'static [Precision] {
    if std::ptr::eq(shader, &CALIBRATE) {
        &[Precision::F32]
    } else {
        &[Precision::F32, Precision::F16]
    }
}

fn file_name(stem: &str, precision: Precision, subgroups: bool) -> String {
    let form = if subgroups { ".subgroups" } else { "" };
    format!("{stem}.{precision}{form}.wgsl")
}

/// Every final source of convbench's own shaders, from the sources of `set`, in registry order.
pub fn final_sources(set: &ShaderSet) -> Result<Vec<FinalSource>> {
    let mut sources = Vec::new();
    for shader in SHADERS {
        let forms: &[bool] = if set.has_subgroup_blocks(shader) {
            &[false, true]
        } else {
            &[false]
        };
        let stem = shader.file.trim_end_matches(".wgsl");
        for (variant, constants) in specializations(shader) {
            let stem = variant.map_or_else(|| stem.to_string(), |v| v.id());
            for &precision in precisions(shader) {
                for &subgroups in forms {
                    let text = set
                        .final_source(shader, precision, subgroups, &constants)
                        .ok_or_else(|| KernelError::UndeclaredConstant {
                            file: shader.file,
                            shaders: set.describe(),
                            stem: stem.clone(),
                            constants: constants.iter().map(|&(name, _)| name).collect(),
                        })?;
                    sources.push(FinalSource {
                        name: file_name(&stem, precision, subgroups),
                        origin: shader.file.to_string(),
                        precision,
                        subgroups,
                        constants: constants.clone(),
                        text,
                    });
                }
            }
        }
    }
    Ok(sources)
}

/// The final sources of the users' `kernels`: f32, and f16 for those that declare `f16 = true`.
pub fn user_sources(kernels: &KernelSet) -> Vec<FinalSource> {
    let mut sources = Vec::new();
    for kernel in kernels.iter() {
        let precisions: &[Precision] = if kernel.f16 {
            &[Precision::F32, Precision::F16]
        } else {
            &[Precision::F32]
        };
        for &precision in precisions {
            sources.push(FinalSource {
                name: file_name(&format!("user_{}", kernel.name), precision, false),
                origin: kernel.source_path.display().to_string(),
                precision,
                subgroups: false,
                constants: Vec::new(),
                text: super::registry::variant_source(kernel.source(), precision, false),
            });
        }
    }
    sources
}

/// What `kernels --emit` wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    /// Every source written: convbench's shaders, then the workspace's kernels.
    pub sources: Vec<FinalSource>,
    /// How many of `sources` are convbench's (the rest are the workspace's).
    pub convbench: usize,
}

/// `kernels --emit DIR`: writes the final sources of convbench's embedded shaders, then of the
/// workspace's `kernels`, into `dir` (checked first: it must be a folder or a new path).
pub fn emit(dir: &Path, kernels: &KernelSet) -> Result<Emitted> {
    crate::fs::check_output_folder(dir)?;
    let mut sources = final_sources(&ShaderSet::embedded()?)?;
    let convbench = sources.len();
    sources.extend(user_sources(kernels));
    write_sources(dir, &sources)?;
    Ok(Emitted { sources, convbench })
}

/// Writes each of `sources` to `dir/NAME` (creating `dir`), replacing regular files of the same
/// name; see [`crate::fs::write_atomically`] for what else is refused.
pub fn write_sources(dir: &Path, sources: &[FinalSource]) -> Result<()> {
    crate::fs::create_output_folder(dir)?;
    // Every name is checked before the first is written: a folder or link in the way of one
    // must not leave the others half replaced.
    for source in sources {
        crate::fs::refuse_unless_regular_file(&dir.join(&source.name))?;
    }
    for source in sources {
        crate::fs::write_atomically(&dir.join(&source.name), source.text.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_in_the_way_of_one_source_leaves_every_other_unwritten() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let source = |name: &str| FinalSource {
            name: name.to_string(),
            origin: "test".to_string(),
            precision: Precision::F32,
            subgroups: false,
            constants: Vec::new(),
            text: "// a kernel\n".to_string(),
        };
        std::fs::create_dir(dir.path().join("b.f32.wgsl")).expect("mkdir");
        let sources = [source("a.f32.wgsl"), source("b.f32.wgsl")];
        let error = write_sources(dir.path(), &sources).expect_err("a folder in the way");
        assert!(error.to_string().contains("b.f32.wgsl"), "{error}");
        assert!(
            !dir.path().join("a.f32.wgsl").exists(),
            "nothing written before the check"
        );
        std::fs::remove_dir(dir.path().join("b.f32.wgsl")).expect("rmdir");
        write_sources(dir.path(), &sources).expect("written");
        assert!(dir.path().join("a.f32.wgsl").is_file() && dir.path().join("b.f32.wgsl").is_file());
    }
}
