//! Every shader file is registered, and every registered shader and precision variant parses
//! and validates with naga, without a GPU.

use convbench::kernels::registry::{ALIAS_LINE, SHADERS};
use convbench::model::Precision;
use std::collections::BTreeSet;

#[test]
fn every_shader_file_is_registered() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
    let on_disk: BTreeSet<String> = std::fs::read_dir(dir)
        .expect("shaders/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    let registered: BTreeSet<String> = SHADERS.iter().map(|s| s.file.to_string()).collect();
    assert_eq!(
        on_disk, registered,
        "every shaders/*.wgsl must be in kernels::registry::SHADERS"
    );
}

#[test]
fn every_shader_variant_validates_with_naga() {
    for shader in SHADERS {
        assert!(
            shader.source.contains(ALIAS_LINE),
            "{} lacks `{ALIAS_LINE}`",
            shader.file
        );
        for precision in [Precision::F32, Precision::F16] {
            let source = shader.source(precision);
            let module = naga::front::wgsl::parse_str(&source)
                .unwrap_or_else(|e| panic!("{} ({precision}): {}", shader.file, e.emit_to_string(&source)));
            let mut validator = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::SHADER_FLOAT16,
            );
            validator
                .validate(&module)
                .unwrap_or_else(|e| panic!("{} ({precision}): {}", shader.file, e.emit_to_string(&source)));
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
