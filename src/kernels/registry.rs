//! Every WGSL file under `shaders/`, embedded at compile time: the shaders, their precision
//! variants, and the library files they include.
//!
//! Each shader starts with `alias T = f32;`. The f16 variant replaces that line with
//! `enable f16; alias T = f16;`: one source, two variants, both validated by naga in tests.
//! Directives go on the alias line, so that every form keeps the file's line numbers.
//!
//! A shader may also be specialised: [`specialize`] replaces the value of module-scope
//! `const NAME: u32 = ...;` declarations (the tile sizes of `gemm.wgsl`), so that each variant
//! is still plain WGSL whose sizes are compile-time constants (array lengths, unrolled loops).
//!
//! WGSL that several shaders share lives once, in a library file under `shaders/lib/`
//! ([`LIBRARIES`]), which a shader takes in with a line `// #include "lib/NAME.wgsl"` (see
//! [`super::include`]). A shader's text here is the file as written: a
//! [`super::shader_set::ShaderSet`] resolves its includes, and final sources come from the set
//! ([`super::shader_set::ShaderSet::final_source`]).

use crate::model::Precision;

/// A registered shader file.
#[derive(Debug)]
pub struct Shader {
    /// File name under `shaders/`.
    pub file: &'static str,
    /// WGSL source as written (the f32 variant; its includes unresolved, see
    /// [`super::include`]).
    pub source: &'static str,
    /// Compute entry points.
    pub entries: &'static [&'static str],
}

macro_rules! shader {
    ($file:literal, [$($entry:literal),* $(,)?]) => {
        Shader {
            file: $file,
            source: include_str!(concat!("../../shaders/", $file)),
            entries: &[$($entry),*],
        }
    };
}

/// Direct convolution.
pub static CONV2D: Shader = shader!(
    "conv2d.wgsl",
    [
        "conv2d_forward",
        "conv2d_backward_data",
        "conv2d_backward_filter",
        "conv2d_backward_bias"
    ]
);
/// Backward data's col2im, after the column matrix's GEMM (`gemm.wgsl`).
pub static COL2IM: Shader = shader!("col2im.wgsl", ["conv2d_col2im"]);
/// Max and average pooling.
pub static POOL: Shader = shader!("pool.wgsl", ["pool_forward", "pool_backward"]);
/// ReLU.
pub static ACTIVATION: Shader = shader!("activation.wgsl", ["relu_forward", "relu_backward"]);
/// Local response normalisation.
pub static LRN: Shader = shader!("lrn.wgsl", ["lrn_forward", "lrn_backward"]);
/// Batch normalisation.
pub static BATCHNORM: Shader = shader!(
    "batchnorm.wgsl",
    [
        "batchnorm_stats",
        "batchnorm_apply_train",
        "batchnorm_forward_eval",
        "batchnorm_backward_reduce",
        "batchnorm_backward_data",
    ]
);
/// Fully connected layers.
pub static LINEAR: Shader = shader!(
    "linear.wgsl",
    [
        "linear_forward",
        "linear_backward_data",
        "linear_backward_weight",
        "linear_backward_bias"
    ]
);
/// Tiled GEMM: implicit-GEMM convolution and fully connected layers, specialised per tile.
pub static GEMM: Shader = shader!(
    "gemm.wgsl",
    [
        "conv2d_forward_gemm",
        "conv2d_backward_data_gemm",
        "conv2d_backward_data_strided_gemm",
        "conv2d_backward_data_cols_gemm",
        "conv2d_backward_filter_gemm",
        "conv2d_backward_filter_split_gemm",
        "conv2d_backward_filter_sum_splits",
        "linear_forward_gemm",
        "linear_backward_data_gemm",
        "linear_backward_weight_gemm",
    ]
);
/// Winograd F(2x2, 3x3): fused 3x3 stride-1 convolution forward and backward-data.
pub static WINOGRAD: Shader = shader!(
    "winograd.wgsl",
    ["conv2d_forward_winograd", "conv2d_backward_data_winograd"]
);
/// Softmax cross-entropy.
pub static LOSS: Shader = shader!(
    "loss.wgsl",
    ["softmax_cross_entropy_forward", "softmax_cross_entropy_backward"]
);
/// Concatenation, split, addition, global average pooling.
pub static TENSOR: Shader = shader!(
    "tensor.wgsl",
    [
        "concat_forward",
        "split_forward",
        "add",
        "global_avgpool_forward",
        "global_avgpool_backward"
    ]
);
/// SGD update.
pub static OPTIMIZER: Shader = shader!("optimizer.wgsl", ["sgd_update"]);
/// Peak arithmetic rate and bandwidth, for the roofline (`adapters --calibrate`).
pub static CALIBRATE: Shader = shader!("calibrate.wgsl", ["peak_flops", "peak_bandwidth"]);

/// Every registered shader.
pub static SHADERS: [&Shader; 13] = [
    &CONV2D,
    &COL2IM,
    &POOL,
    &ACTIVATION,
    &LRN,
    &BATCHNORM,
    &LINEAR,
    &GEMM,
    &WINOGRAD,
    &LOSS,
    &TENSOR,
    &OPTIMIZER,
    &CALIBRATE,
];

/// A registered library file: WGSL that shaders include (see [`super::include`]), with no entry
/// point of its own.
#[derive(Debug)]
pub struct Library {
    /// Path under `shaders/`, as includes name it (`lib/reduce.wgsl`).
    pub file: &'static str,
    /// WGSL source as written.
    pub source: &'static str,
}

/// Workgroup sums (`reduce`, `reduce_pair`, in a subgroup and a portable form), included by
/// `conv2d.wgsl` and `batchnorm.wgsl`.
pub static REDUCE: Library = Library {
    file: "lib/reduce.wgsl",
    source: include_str!("../../shaders/lib/reduce.wgsl"),
};

/// Every registered library file: the files the embedded shaders may include.
pub static LIBRARIES: [&Library; 1] = [&REDUCE];

/// The line every shader uses to name its storage type.
pub const ALIAS_LINE: &str = "alias T = f32;";

/// Opens the block a shader uses where the device has subgroup operations (WGSL's subgroup
/// built-ins and `subgroupAdd`); `// #else` starts the portable block and `// #endif` ends both.
/// Both blocks define the same names, so the rest of the shader is the same either way. The
/// subgroup form also declares [`SUBGROUPS_DIRECTIVE`].
pub const SUBGROUPS_BEGIN: &str = "// #if subgroups";

/// The directive WGSL requires before a module uses subgroup built-ins or functions: Tint
/// (Dawn, Chrome) rejects `@builtin(subgroup_id)` without it ("requires enabling extension
/// 'subgroups'"). naga 30 does not implement it yet (it stops at the directive, "not yet
/// implemented", gfx-rs/wgpu#5555) while it accepts the built-ins without it: the source given
/// to naga goes through [`naga_source`], which removes it.
pub const SUBGROUPS_DIRECTIVE: &str = "enable subgroups;";
/// Starts the portable block of a [`SUBGROUPS_BEGIN`] block.
pub const SUBGROUPS_ELSE: &str = "// #else";
/// Ends a [`SUBGROUPS_BEGIN`] block.
pub const SUBGROUPS_END: &str = "// #endif";

/// Whether `source` (a final source, or a shader's resolved f32 source) has a subgroup block,
/// and so a second form on devices with subgroup operations.
pub fn has_subgroup_blocks(source: &str) -> bool {
    source.lines().any(|line| line.trim() == SUBGROUPS_BEGIN)
}

/// `source` (a shader's f32 source with its includes resolved, from a
/// [`super::shader_set::ShaderSet`], or a user's kernel) at `precision`, with the subgroup blocks
/// when `subgroups` (see [`SUBGROUPS_BEGIN`]) and the portable ones otherwise.
pub fn variant_source(source: &str, precision: Precision, subgroups: bool) -> String {
    let has_blocks = has_subgroup_blocks(source);
    let subgroups_directive = if subgroups && has_blocks {
        format!("{SUBGROUPS_DIRECTIVE} ")
    } else {
        String::new()
    };
    let alias = match precision {
        Precision::F32 => format!("{subgroups_directive}{ALIAS_LINE}"),
        Precision::F16 => format!("enable f16; {subgroups_directive}alias T = f16;"),
    };
    let source = source.replacen(ALIAS_LINE, &alias, 1);
    if !has_blocks {
        return source;
    }
    // Lines of the dropped block become empty, so line numbers in errors still match.
    let mut keep = true;
    let lines: Vec<&str> = source
        .lines()
        .map(|line| match line.trim() {
            SUBGROUPS_BEGIN => {
                keep = subgroups;
                ""
            }
            SUBGROUPS_ELSE => {
                keep = !subgroups;
                ""
            }
            SUBGROUPS_END => {
                keep = true;
                ""
            }
            _ if keep => line,
            _ => "",
        })
        .collect();
    lines.join("\n")
}

/// `source` (a final source, from [`variant_source`] or [`specialize`]) as naga 30 takes it:
/// without [`SUBGROUPS_DIRECTIVE`], which it does not implement yet (the rest of the line, and
/// so every line number, stays). The source itself keeps the directive, which WGSL and Tint
/// require.
pub fn naga_source(source: &str) -> std::borrow::Cow<'_, str> {
    let is_directive_line =
        |line: &str| line.trim_start().starts_with("enable ") && line.contains(SUBGROUPS_DIRECTIVE);
    if !source.lines().any(is_directive_line) {
        return std::borrow::Cow::Borrowed(source);
    }
    let lines: Vec<String> = source
        .split('\n')
        .map(|line| {
            if is_directive_line(line) {
                line.replacen(SUBGROUPS_DIRECTIVE, "", 1).replacen("  ", " ", 1)
            } else {
                line.to_string()
            }
        })
        .collect();
    std::borrow::Cow::Owned(lines.join("\n"))
}

/// [`variant_source`] with each `(name, value)` of `constants` replacing the value of the
/// module-scope declaration `const name: u32 = ...;`; `None` when a name has no such
/// declaration.
pub fn specialize(
    source: &str,
    precision: Precision,
    subgroups: bool,
    constants: &[(&str, u32)],
) -> Option<String> {
    let mut lines: Vec<String> = variant_source(source, precision, subgroups)
        .lines()
        .map(str::to_string)
        .collect();
    for (name, value) in constants {
        let prefix = format!("const {name}: u32 = ");
        let line = lines.iter_mut().find(|line| line.starts_with(&prefix))?;
        *line = format!("{prefix}{value}u;");
    }
    Some(lines.join("\n"))
}
