//! Every shader file is registered, and every registered shader and precision variant parses
//! and validates with naga, without a GPU; so does every library file, as part of each shader
//! that includes it.

use convbench::kernels::include::INCLUDE_DIRECTIVE;
use convbench::kernels::registry::{
    ALIAS_LINE, LIBRARIES, SHADERS, SUBGROUPS_DIRECTIVE, Shader, naga_source,
};
use convbench::kernels::shader_set::ShaderSet;
use convbench::model::Precision;
use std::collections::BTreeSet;
use std::path::Path;

fn embedded() -> ShaderSet {
    ShaderSet::embedded().expect("the embedded includes resolve")
}

/// The `.wgsl` files under `dir`, at any depth, by their paths there (`/`-separated).
fn wgsl_files(dir: &Path, prefix: &str, found: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("shaders/ and its folders are readable") {
        let entry = entry.expect("entry");
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type().expect("file type").is_dir() {
            wgsl_files(&entry.path(), &format!("{name}/"), found);
        } else if name.ends_with(".wgsl") {
            found.insert(name);
        }
    }
}

#[test]
fn every_shader_file_is_registered() {
    let mut on_disk = BTreeSet::new();
    wgsl_files(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders")),
        "",
        &mut on_disk,
    );
    let registered: BTreeSet<String> = SHADERS
        .iter()
        .map(|s| s.file.to_string())
        .chain(LIBRARIES.iter().map(|l| l.file.to_string()))
        .collect();
    assert_eq!(
        on_disk, registered,
        "every .wgsl under shaders/ must be in kernels::registry::SHADERS (a shader, with entry \
         points) or kernels::registry::LIBRARIES (a library file that shaders include)"
    );
}

/// A library file is checked only through the shaders that include it, so each must be included
/// by one; it holds declarations only, since the shader that includes it has the `enable`
/// directives, the `alias T` line and the entry points.
#[test]
fn every_library_file_is_included_and_declares_no_entry_point() {
    for library in LIBRARIES {
        let include = format!("{INCLUDE_DIRECTIVE} \"{}\"", library.file);
        let includers: Vec<&str> = SHADERS
            .iter()
            .filter(|shader| shader.source.lines().any(|line| line.trim() == include))
            .map(|shader| shader.file)
            .collect();
        assert!(!includers.is_empty(), "no shader includes {}", library.file);
        for forbidden in ["@compute", ALIAS_LINE, "enable "] {
            assert!(
                !library.source.contains(forbidden),
                "{}: a library file has no `{forbidden}`",
                library.file
            );
        }
    }
}

#[test]
fn every_shader_variant_validates_with_naga() {
    let set = embedded();
    for shader in SHADERS {
        assert!(
            shader.source.contains(ALIAS_LINE),
            "{} lacks `{ALIAS_LINE}`",
            shader.file
        );
        let forms: &[bool] = if set.has_subgroup_blocks(shader) {
            &[false, true]
        } else {
            &[false]
        };
        for (precision, &subgroups) in [Precision::F32, Precision::F16]
            .into_iter()
            .flat_map(|p| forms.iter().map(move |s| (p, s)))
        {
            let source = set
                .final_source(shader, precision, subgroups, &[])
                .expect("no constants to set");
            let form = format!("{precision}{}", if subgroups { ", subgroups" } else { "" });
            assert!(
                !source.contains("// #"),
                "{} ({form}): a directive is left",
                shader.file
            );
            assert_eq!(
                source.contains(SUBGROUPS_DIRECTIVE),
                subgroups,
                "{} ({form}): the subgroup form, and only it, declares `{SUBGROUPS_DIRECTIVE}`",
                shader.file
            );
            let source = naga_source(&source);
            let module = naga::front::wgsl::parse_str(&source)
                .unwrap_or_else(|e| panic!("{} ({form}): {}", shader.file, e.emit_to_string(&source)));
            // The portable form must validate without the subgroup capability.
            let mut capabilities = naga::valid::Capabilities::SHADER_FLOAT16;
            if subgroups {
                capabilities |= naga::valid::Capabilities::SUBGROUP;
            }
            let mut validator =
                naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities);
            validator
                .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
                .subgroup_operations(naga::valid::SubgroupOperationSet::all());
            validator
                .validate(&module)
                .unwrap_or_else(|e| panic!("{} ({form}): {}", shader.file, e.emit_to_string(&source)));
            let entries: BTreeSet<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
            let registered: BTreeSet<&str> = shader.entries.iter().copied().collect();
            assert_eq!(
                entries, registered,
                "{}: registered entry points differ from the file's",
                shader.file
            );
        }
    }
}

#[test]
fn the_reductions_have_a_subgroup_form() {
    let set = embedded();
    for file in ["batchnorm.wgsl", "conv2d.wgsl"] {
        let shader: &Shader = SHADERS.iter().find(|s| s.file == file).expect("registered");
        assert!(set.has_subgroup_blocks(shader), "{file}");
        let form = |precision, subgroups| {
            set.final_source(shader, precision, subgroups, &[])
                .expect("no constants to set")
        };
        let with = form(Precision::F32, true);
        let without = form(Precision::F32, false);
        assert!(
            with.contains("subgroupAdd") && !without.contains("subgroupAdd"),
            "{file}"
        );
        // Dropped lines stay as empty lines, directives join the alias line and included files
        // come after the shader's last line, so compiler messages keep the file's line numbers
        // in every form.
        for precision in [Precision::F32, Precision::F16] {
            for subgroups in [false, true] {
                let final_lines: Vec<String> =
                    form(precision, subgroups).lines().map(str::to_string).collect();
                for (index, line) in shader.source.lines().enumerate() {
                    if line.trim_start().starts_with("// #") || line == ALIAS_LINE {
                        continue;
                    }
                    let at = &final_lines[index];
                    assert!(
                        at == line || at.is_empty(),
                        "{file} ({precision}, subgroups {subgroups}) line {}: `{at}`, not `{line}`",
                        index + 1
                    );
                }
            }
        }
    }
}

/// naga 30 stops at `enable subgroups;`, which WGSL (and Tint) require before subgroup
/// built-ins, so the source naga gets goes without it ([`naga_source`]). When naga implements
/// the directive this test fails: then give naga the source as it is and drop `naga_source`.
#[test]
fn naga_does_not_implement_the_subgroups_directive_yet() {
    let source = format!(
        "{SUBGROUPS_DIRECTIVE} alias T = f32;\n@compute @workgroup_size(64)\nfn main(@builtin(subgroup_id) id: u32) {{}}"
    );
    let error = naga::front::wgsl::parse_str(&source).expect_err("naga 30 rejects the directive");
    assert!(
        error.emit_to_string(&source).contains("subgroups"),
        "{}",
        error.emit_to_string(&source)
    );
    let without = naga_source(&source);
    assert!(!without.contains(SUBGROUPS_DIRECTIVE), "{without}");
    assert_eq!(without.lines().count(), source.lines().count());
    naga::front::wgsl::parse_str(&without).expect("naga takes the built-ins without the directive");
}

/// `kernels --emit` writes every final source: each shader at each precision and subgroup form,
/// each GEMM tile's specialisation, the calibration shader at f32. Every file validates with
/// naga, and every (shader, specialisation) the variants plan on the ops of the zoo is among
/// them.
#[test]
fn every_emitted_final_source_validates_with_naga() {
    use convbench::kernels::emit::{final_sources, specializations, write_sources};
    use convbench::kernels::{GemmTile, Variant, plan};

    let sources = final_sources(&embedded()).expect("every specialisation applies");
    let dir = tempfile::tempdir().expect("temp dir");
    write_sources(dir.path(), &sources).expect("written");
    let mut written: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read back")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    // 10 plain shaders at 2 precisions, less the calibration shader's f16; conv2d and batchnorm
    // in 2 forms; gemm in every tile.
    let tiles = convbench::kernels::variant::GEMM_TILES.len();
    assert_eq!(sources.len(), 10 * 2 - 1 + 2 * 2 * 2 + tiles * 2);
    assert_eq!(written.len(), sources.len(), "one file per source: {written:?}");
    assert!(
        written.contains(&"gemm_64x64x16_4x4.f16.wgsl".to_string()),
        "{written:?}"
    );
    assert!(
        written.contains(&"conv2d.f32.subgroups.wgsl".to_string()),
        "{written:?}"
    );
    for name in &written {
        let text = std::fs::read_to_string(dir.path().join(name)).expect("read");
        let source = naga_source(&text);
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&source)));
        let mut capabilities = naga::valid::Capabilities::SHADER_FLOAT16;
        if name.contains(".subgroups.") {
            capabilities |= naga::valid::Capabilities::SUBGROUP;
        }
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
            .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
            .subgroup_operations(naga::valid::SubgroupOperationSet::all())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&source)));
    }
    // What the variants load is emitted.
    let ops = convbench::harness::plan::representative_ops().expect("the zoo plans");
    for op in &ops {
        for variant in Variant::builtin() {
            let Ok(dispatches) = plan(op, variant) else {
                continue;
            };
            for dispatch in dispatches {
                let emitted = sources
                    .iter()
                    .any(|s| s.origin == dispatch.shader.file && s.constants == dispatch.constants);
                assert!(
                    emitted,
                    "{} with {:?} ({variant} of {}) is not emitted",
                    dispatch.shader.file,
                    dispatch.constants,
                    op.name()
                );
            }
        }
    }
    let gemm = SHADERS
        .iter()
        .find(|s| s.file == "gemm.wgsl")
        .expect("registered");
    let named: Vec<Option<Variant>> = specializations(gemm).into_iter().map(|(v, _)| v).collect();
    assert!(named.contains(&Some(Variant::Gemm(GemmTile::new(128, 128, 8, 8, 8)))));
}
