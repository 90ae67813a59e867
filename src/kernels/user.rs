//! The user's own WGSL kernels: declared in the workspace's configuration, validated with naga,
//! verified against the f64 reference like every built-in variant, and then run, tuned and
//! recorded as kernel variants named `user:NAME`.
//!
//! ```toml
//! [package.metadata.convbench.kernels.tiled]     # or [workspace.metadata.convbench.kernels.tiled]
//! op = "conv2d_forward"                           # `cargo convbench kernels` lists the ops
//! source = "kernels/tiled.wgsl"                   # relative to the crate's (or workspace's) root
//! entry = "conv2d_forward_tiled"                  # default "main"
//! outputs-per-invocation = 4                      # default 1
//! f16 = true                                      # it also runs with `alias T = f16;`
//! only = { kernel = [3, 3], stride = [1, 1] }     # shapes it implements (default: all)
//! ```
//!
//! # The contract a kernel implements
//!
//! `cargo convbench kernels --contract OP` prints it as a WGSL skeleton: binding 0 of group 0 is
//! the `Params` uniform of convbench's own direct kernel of the op (the same struct, member for
//! member; `params.total` is the number of elements of the op's first written tensor); the op's
//! tensors follow as bindings 1, 2, ... in contract order, `read` tensors as
//! `var<storage, read>` and written ones as `var<storage, read_write>`, elements `array<T>`
//! (`T` is the storage type: the source declares `alias T = f32;`, which becomes
//! `enable f16; alias T = f16;` at f16) or `array<u32>`. A kernel may leave out a binding it does
//! not read (an absent bias), but it must write every written tensor.
//!
//! # The dispatch rule
//!
//! The workgroup size is the entry point's `@workgroup_size` (at most 256 invocations, WebGPU's
//! default limit; `workgroup-size` in the configuration, when given, must agree). Each workgroup
//! covers `outputs-per-workgroup` elements of the first written tensor (default: the workgroup's
//! invocations times `outputs-per-invocation`); convbench dispatches
//! `ceil(total / outputs-per-workgroup)` workgroups, over a 2-d grid when one dimension is not
//! enough: the workgroup index is `workgroup_id.y * num_workgroups.x + workgroup_id.x`, and
//! workgroups (and invocations) past the end must return without writing.
//!
//! # Verification
//!
//! Nothing is timed before it is verified: the kernel runs on random shapes that respect its
//! `only` constraints (odd sizes, strides, padding, groups, batch 1; see
//! [`crate::harness::conformance`]), with its outputs poisoned with NaN first, and every element
//! must be within the reference's rounding bound. WGSL bounds-checks every access, so a write
//! past the end of a tensor cannot reach another tensor; it lands inside the same tensor (or is
//! dropped) and verification sees the wrong or unwritten elements.

use super::dispatch::{Dispatch, Grid, Slot};
use super::error::{KernelError, UserKernelProblem};
use super::op::{Access, DType, Op};
use super::registry::Shader;
use super::uniform::{Scalar, Uniform};
use crate::model::Precision;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Prefix of a user kernel's variant id: `user:NAME`.
pub const ID_PREFIX: &str = "user:";

/// Largest workgroup (invocations) a user kernel may declare: WebGPU's default limit, so that
/// it runs on every adapter.
pub const MAX_INVOCATIONS: u32 = 256;

/// One `[...convbench.kernels.NAME]` table, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelConfig {
    /// The op it implements, e.g. `conv2d_forward` (see [`SUPPORTED_OPS`]).
    pub op: String,
    /// The WGSL file, relative to the root of the crate (or workspace) that declares it.
    pub source: PathBuf,
    /// The compute entry point.
    #[serde(default = "default_entry")]
    pub entry: String,
    /// Invocations per workgroup; checked against the entry point's `@workgroup_size`.
    #[serde(default)]
    pub workgroup_size: Option<u32>,
    /// Elements of the first written tensor each invocation computes (default 1).
    #[serde(default)]
    pub outputs_per_invocation: Option<u32>,
    /// Elements of the first written tensor each workgroup computes (instead of
    /// `outputs-per-invocation`, for kernels whose invocations share outputs).
    #[serde(default)]
    pub outputs_per_workgroup: Option<u32>,
    /// Whether the kernel also runs in f16 (`alias T = f32;` becomes `enable f16; alias T = f16;`).
    #[serde(default)]
    pub f16: bool,
    /// The shapes it implements; other shapes run convbench's own kernels.
    #[serde(default)]
    pub only: Only,
}

fn default_entry() -> String {
    "main".to_string()
}

/// The most elements a tensor of the shapes a user kernel is verified at may hold (see
/// [`Only::check`]).
pub const MAX_VERIFIED_ELEMENTS: usize = 1 << 24;

/// Shape constraints of a user kernel: each key given restricts the shapes it implements.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Only {
    /// Convolutions: kernel `[height, width]`.
    pub kernel: Option<[usize; 2]>,
    /// Convolutions: stride `[vertical, horizontal]`.
    pub stride: Option<[usize; 2]>,
    /// Convolutions: padding `[vertical, horizontal]`.
    pub padding: Option<[usize; 2]>,
    /// Convolutions: dilation `[vertical, horizontal]`.
    pub dilation: Option<[usize; 2]>,
    /// Convolutions: channel groups.
    pub groups: Option<usize>,
    /// Whether the layer has a bias.
    pub bias: Option<bool>,
}

impl Only {
    /// `all shapes`, or the constraints, e.g. `kernel 3x3, stride 1x1, no bias`.
    pub fn describe(&self) -> String {
        let pair = |name: &str, v: Option<[usize; 2]>| v.map(|[a, b]| format!("{name} {a}x{b}"));
        let parts: Vec<String> = [
            pair("kernel", self.kernel),
            pair("stride", self.stride),
            pair("padding", self.padding),
            pair("dilation", self.dilation),
            self.groups.map(|g| format!("groups {g}")),
            self.bias.map(|b| if b { "bias" } else { "no bias" }.to_string()),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "all shapes".into()
        } else {
            parts.join(", ")
        }
    }

    /// Checks the numbers: every kernel size, stride, dilation and group count from 1 to
    /// `u32::MAX`, and the shapes verification generates to meet them (see
    /// [`crate::harness::conformance::random_op`]: up to 3 images of up to `3 x groups` channels,
    /// 9 pixels past the dilated kernel) within [`MAX_VERIFIED_ELEMENTS`]. The error names the
    /// key and its value.
    pub fn check(&self) -> std::result::Result<(), String> {
        let positive = |key: &str, values: &[usize]| {
            let shown = || match values {
                [one] => one.to_string(),
                _ => format!(
                    "[{}]",
                    values.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
                ),
            };
            if values.contains(&0) {
                return Err(format!("`only.{key}` is {}; it must be at least 1", shown()));
            }
            // Kernels take every size as a 32-bit integer: a larger value never matches a shape.
            if values.iter().any(|&v| v > u32::MAX as usize) {
                return Err(format!(
                    "`only.{key}` is {}; it must be at most {}",
                    shown(),
                    u32::MAX
                ));
            }
            Ok(())
        };
        let kernel = self.kernel.unwrap_or([5, 5]);
        let dilation = self.dilation.unwrap_or([2, 2]);
        let padding = self.padding.unwrap_or([0, 0]);
        let groups = self.groups.unwrap_or(2);
        positive("kernel", &kernel)?;
        positive("stride", &self.stride.unwrap_or([1, 1]))?;
        positive("dilation", &dilation)?;
        positive("groups", &[groups])?;
        // Each side of an input or output is at most the dilated kernel plus 9 pixels, plus
        // the padding on both sides; 3 images of 3 (input) or 4 (output) channels per group.
        let side = |i: usize| {
            (kernel[i] - 1)
                .checked_mul(dilation[i])?
                .checked_add(10)?
                .checked_add(padding[i].checked_mul(2)?)
        };
        let largest = (|| {
            side(0)?
                .checked_mul(side(1)?)?
                .checked_mul(groups)?
                .checked_mul(3 * 4)
        })();
        if largest.is_none_or(|n| n > MAX_VERIFIED_ELEMENTS) {
            return Err(format!(
                "`only` ({}) asks for shapes with more than {MAX_VERIFIED_ELEMENTS} elements in a \
                 tensor, too large to verify on the CPU reference; a smaller kernel, dilation, \
                 padding or group count",
                self.describe()
            ));
        }
        Ok(())
    }

    fn has_conv_keys(&self) -> bool {
        self.kernel.is_some()
            || self.stride.is_some()
            || self.padding.is_some()
            || self.dilation.is_some()
            || self.groups.is_some()
    }

    /// Whether `op`'s shape meets every constraint.
    pub fn admits(&self, op: &Op) -> bool {
        match op {
            Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) | Op::Conv2dBackwardFilter(g) => {
                let c = &g.conv;
                let pair =
                    |want: Option<[usize; 2]>, have: (usize, usize)| want.is_none_or(|[a, b]| (a, b) == have);
                pair(self.kernel, c.kernel)
                    && pair(self.stride, c.stride)
                    && pair(self.padding, c.padding)
                    && pair(self.dilation, c.dilation)
                    && self.groups.is_none_or(|groups| groups == c.groups)
                    && self.bias.is_none_or(|bias| bias == c.bias)
            }
            Op::LinearForward(g) | Op::LinearBackwardData(g) | Op::LinearBackwardParams(g) => {
                self.bias.is_none_or(|bias| bias == g.bias)
            }
            _ => false,
        }
    }
}

/// Where a kernel was declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// Its name (the table key).
    pub name: String,
    /// What it says.
    pub config: KernelConfig,
    /// The folder its `source` is relative to.
    pub base_dir: PathBuf,
    /// The manifest or configuration file that declares it, for messages.
    pub file: PathBuf,
}

/// The ops a user kernel can implement: those whose direct kernel takes one `Params` struct
/// that the skeleton prints, and for which verification generates random shapes.
pub const SUPPORTED_OPS: [&str; 6] = [
    "conv2d_forward",
    "conv2d_backward_data",
    "conv2d_backward_filter",
    "linear_forward",
    "linear_backward_data",
    "linear_backward_params",
];

/// The `Params` layout (WGSL struct members) of the direct kernel of the op named `op`, the
/// struct a user kernel of that op declares at binding 0. `None` for ops without user kernels.
pub fn params_layout(op: &str) -> Option<&'static [(&'static str, Scalar)]> {
    match op {
        "conv2d_forward" | "conv2d_backward_data" | "conv2d_backward_filter" => {
            Some(super::conv2d::ConvParams::LAYOUT)
        }
        "linear_forward" | "linear_backward_data" | "linear_backward_params" => {
            Some(super::linear::LinearParams::LAYOUT)
        }
        _ => None,
    }
}

/// The WGSL declaration of a `Params` layout.
pub fn params_wgsl(layout: &[(&str, Scalar)]) -> String {
    let mut out = String::from("struct Params {\n");
    for (name, scalar) in layout {
        let ty = match scalar {
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::F32 => "f32",
        };
        out.push_str(&format!("    {name}: {ty},\n"));
    }
    out.push('}');
    out
}

/// A validated user kernel, ready to plan dispatches (see the module docs).
#[derive(Debug)]
pub struct UserKernel {
    /// Its name (`user:NAME` is its variant id).
    pub name: String,
    /// The op it implements ([`Op::name`]).
    pub op: &'static str,
    /// Where its source was read from.
    pub source_path: PathBuf,
    /// 16 hex digits of FNV-1a over its source and configuration: recorded with every run, so a
    /// change of numbers can be traced to a change of kernel.
    pub digest: String,
    /// Whether it runs in f16.
    pub f16: bool,
    /// Invocations per workgroup.
    pub invocations: u32,
    /// Elements of the first written tensor per workgroup.
    pub outputs_per_workgroup: u32,
    /// Shape constraints.
    pub only: Only,
    /// The contract bindings (by name) its entry point uses, with their binding numbers.
    bindings: Vec<(u32, &'static str)>,
    /// The source as a shader (leaked when loaded: kernels live as long as the run).
    shader: &'static Shader,
    entry: &'static str,
}

/// An op of family `op` with the smallest shapes, for contract checks (a bias, so that every
/// binding exists).
fn probe_op(op: &str) -> Option<Op> {
    use super::op::{ConvGeom, LinearGeom};
    use crate::model::{Conv2d, Shape};
    let conv = ConvGeom {
        conv: Conv2d::square(1, 1, 1, 1, 0),
        input: Shape::new(1, 1, 1, 1),
        output: Shape::new(1, 1, 1, 1),
    };
    let linear = LinearGeom::new(1, 1, 1, true);
    Some(match op {
        "conv2d_forward" => Op::Conv2dForward(conv),
        "conv2d_backward_data" => Op::Conv2dBackwardData(conv),
        "conv2d_backward_filter" => Op::Conv2dBackwardFilter(conv),
        "linear_forward" => Op::LinearForward(linear),
        "linear_backward_data" => Op::LinearBackwardData(linear),
        "linear_backward_params" => Op::LinearBackwardParams(linear),
        _ => return None,
    })
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

impl UserKernel {
    /// Reads, parses and validates the kernel `declared` names: the file exists, naga accepts it
    /// (at f16 too when it says `f16 = true`), the entry point is a compute shader within the
    /// workgroup limit, binding 0 is the op's `Params` and every other binding is a tensor of the
    /// op's contract with its access and element type. Errors name the kernel and, where there is
    /// one, the file and line ([`KernelError::InvalidUserKernel`]).
    pub fn load(declared: &Declared) -> Result<UserKernel> {
        Self::validated(declared).map_err(|problem| {
            KernelError::InvalidUserKernel {
                name: declared.name.clone(),
                file: declared.file.clone(),
                problem,
            }
            .into()
        })
    }

    /// [`UserKernel::load`], its errors without the kernel's name and file.
    fn validated(declared: &Declared) -> std::result::Result<UserKernel, UserKernelProblem> {
        let name = &declared.name;
        let config = &declared.config;
        if !is_kernel_name(name) {
            return Err(UserKernelProblem::BadName);
        }
        let Some(probe) = probe_op(&config.op) else {
            return Err(UserKernelProblem::UnsupportedOp {
                op: config.op.clone(),
                supported: &SUPPORTED_OPS,
            });
        };
        if probe.name().starts_with("linear") && config.only.has_conv_keys() {
            return Err(UserKernelProblem::ConvKeysOnLinear {
                op: config.op.clone(),
            });
        }
        config
            .only
            .check()
            .map_err(|reason| UserKernelProblem::BadOnly { reason })?;
        let path = declared.base_dir.join(&config.source);
        let text = crate::fs::read_text(&path, crate::fs::MAX_KERNEL_SOURCE_BYTES).map_err(|error| {
            let reason = match error {
                Error::Io { source, .. } => format!("cannot read its source {}: {source}", path.display()),
                other => other.to_string(),
            };
            UserKernelProblem::UnreadableSource {
                reason,
                base_dir: declared.base_dir.clone(),
            }
        })?;
        let shown = path.display().to_string();
        let module = parse_and_validate(&text, &shown)?;
        if config.f16 {
            if !text
                .lines()
                .any(|line| line.trim() == super::registry::ALIAS_LINE)
            {
                return Err(UserKernelProblem::NoF16Alias { file: shown });
            }
            let f16 = super::registry::variant_source(&text, Precision::F16, false);
            let f16_shown = format!("{shown} (as f16)");
            let (f16_module, f16_info) = parse_and_validate(&f16, &f16_shown)?;
            // Its tensors must follow `T` there too: an `array<f32>` would read f16 buffers as
            // f32 ones, a mismatch of every element rather than an error naming the binding.
            if let Some(index) = f16_module
                .entry_points
                .iter()
                .position(|e| e.name == config.entry)
            {
                check_bindings(&f16_module, &f16_info, index, &probe, &f16, &f16_shown, 2)?;
            }
        }
        let (module, info) = module;
        if let Some((handle, constant)) = module.overrides.iter().find(|(_, o)| o.init.is_none()) {
            let line = module.overrides.get_span(handle).location(&text).line_number;
            return Err(UserKernelProblem::OverrideWithoutDefault {
                name: constant.name.clone().unwrap_or_else(|| "?".to_string()),
                at: format!("{shown}:{line}"),
            });
        }
        let Some((index, entry)) = module
            .entry_points
            .iter()
            .enumerate()
            .find(|(_, e)| e.name == config.entry)
        else {
            return Err(UserKernelProblem::NoEntryPoint {
                file: shown,
                entry: config.entry.clone(),
                found: module.entry_points.iter().map(|e| e.name.clone()).collect(),
            });
        };
        if entry.stage != naga::ShaderStage::Compute {
            return Err(UserKernelProblem::NotCompute {
                entry: config.entry.clone(),
            });
        }
        // In u64: three u32 sizes can overflow a u32 product.
        let product: u64 = entry.workgroup_size.iter().map(|&d| u64::from(d)).product();
        let invocations = u32::try_from(product).unwrap_or(u32::MAX);
        if invocations == 0 || invocations > MAX_INVOCATIONS {
            return Err(UserKernelProblem::TooManyInvocations {
                max: MAX_INVOCATIONS,
                workgroup_size: entry.workgroup_size,
                invocations: product,
            });
        }
        if let Some(configured) = config.workgroup_size.filter(|&size| size != invocations) {
            return Err(UserKernelProblem::WorkgroupSizeMismatch {
                configured,
                entry: config.entry.clone(),
                workgroup_size: entry.workgroup_size,
                invocations,
            });
        }
        let outputs_per_workgroup = match (config.outputs_per_invocation, config.outputs_per_workgroup) {
            (Some(_), Some(_)) => return Err(UserKernelProblem::BothOutputCounts),
            (Some(0), _) | (_, Some(0)) => return Err(UserKernelProblem::NoOutputs),
            (per_invocation, None) => invocations.saturating_mul(per_invocation.unwrap_or(1)),
            (None, Some(per_workgroup)) => per_workgroup,
        };
        let bindings = check_bindings(&module, &info, index, &probe, &text, &shown, 4)?;
        let digest = format!(
            "{:016x}",
            crate::fnv1a64(text.bytes().chain([0]).chain(format!("{config:?}").into_bytes()))
        );
        let shader: &'static Shader = Box::leak(Box::new(Shader {
            file: leak(format!("{ID_PREFIX}{name} ({shown})")),
            source: leak(text),
            entries: Box::leak(vec![leak(config.entry.clone())].into_boxed_slice()),
        }));
        Ok(UserKernel {
            name: name.clone(),
            op: probe.name(),
            source_path: path,
            digest,
            f16: config.f16,
            invocations,
            outputs_per_workgroup,
            only: config.only.clone(),
            bindings,
            shader,
            entry: shader.entries[0],
        })
    }

    /// Its WGSL source as read from its file (the f32 form).
    pub fn source(&self) -> &'static str {
        self.shader.source
    }

    /// Its variant id, `user:NAME`.
    pub fn id(&self) -> String {
        format!("{ID_PREFIX}{}", self.name)
    }

    /// What a record keeps of it, its source relative to the workspace `root`.
    pub fn record(&self, root: &std::path::Path) -> crate::results::UserKernelRecord {
        let source = self.source_path.strip_prefix(root).unwrap_or(&self.source_path);
        crate::results::UserKernelRecord {
            id: self.id(),
            op: self.op.to_string(),
            source: source.display().to_string().replace('\\', "/"),
            digest: self.digest.clone(),
        }
    }

    /// Whether it implements `op` (its op, a shape its constraints admit).
    pub fn implements(&self, op: &Op) -> bool {
        op.name() == self.op && self.only.admits(op)
    }

    /// Its one dispatch for `op` (see the module docs).
    pub fn plan(&self, op: &Op) -> Result<Vec<Dispatch>> {
        if !self.implements(op) {
            return Err(KernelError::UserNotImplemented {
                variant: self.id(),
                op: op.name(),
                implements: self.op,
                shapes: self.only.describe(),
            }
            .into());
        }
        let direct = super::plan(op, super::Variant::Direct)?;
        let params = direct.first().map(|d| d.params.clone()).unwrap_or_default();
        let contract = op.contract();
        let total = contract
            .iter()
            .find(|b| b.access != Access::Read)
            .map_or(0, |b| b.len);
        Ok(vec![Dispatch {
            shader: self.shader,
            entry: self.entry,
            bindings: self
                .bindings
                .iter()
                .map(|&(binding, name)| (binding, Slot::Tensor(name)))
                .collect(),
            params,
            grid: Grid::Workgroups((total as u64).div_ceil(u64::from(self.outputs_per_workgroup))),
            constants: Vec::new(),
        }])
    }
}

type Checked = (naga::Module, naga::valid::ModuleInfo);

/// naga's parse and validation, with errors pointing at `shown:line:column`.
fn parse_and_validate(text: &str, shown: &str) -> std::result::Result<Checked, UserKernelProblem> {
    let module = naga::front::wgsl::parse_str(text).map_err(|error| UserKernelProblem::NotWgsl {
        diagnostic: error.emit_to_string_with_path(text, shown),
    })?;
    let capabilities = naga::valid::Capabilities::default() | naga::valid::Capabilities::SHADER_FLOAT16;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
        .validate(&module)
        .map_err(|error| UserKernelProblem::NagaRejects {
            diagnostic: error.emit_to_string_with_path(text, shown),
        })?;
    Ok((module, info))
}

/// Checks every resource binding of `module` against the contract of `probe` (see the module
/// docs), its float tensors' elements `float_width` bytes wide (4 in the source as written, 2
/// in its f16 form), and returns the tensor bindings entry point `index` uses.
fn check_bindings(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    index: usize,
    probe: &Op,
    text: &str,
    shown: &str,
    float_width: u8,
) -> std::result::Result<Vec<(u32, &'static str)>, UserKernelProblem> {
    let contract = probe.contract();
    let used = info.get_entry_point(index);
    let mut bindings = Vec::new();
    let mut reads_params = false;
    for (handle, global) in module.global_variables.iter() {
        let Some(binding) = &global.binding else {
            continue;
        };
        let line = module
            .global_variables
            .get_span(handle)
            .location(text)
            .line_number;
        let at = format!("{shown}:{line}");
        let var = global.name.clone().unwrap_or_else(|| "?".to_string());
        if binding.group != 0 {
            return Err(UserKernelProblem::NotGroupZero {
                var,
                at,
                group: binding.group,
            });
        }
        if binding.binding == 0 {
            check_params(module, global, probe.name(), &at)?;
            // convbench always binds the params uniform; an entry point that never reads it
            // would have no binding 0 in its layout, and could not know the shape anyway.
            if used[handle].is_empty() {
                return Err(UserKernelProblem::ParamsUnread { var, at });
            }
            reads_params = true;
            continue;
        }
        let Some(expected) = contract.get(binding.binding as usize - 1) else {
            return Err(UserKernelProblem::BindingOutOfRange {
                var,
                at,
                binding: binding.binding,
                op: probe.name(),
                tensors: contract.len(),
            });
        };
        let want_access = if expected.access == Access::Read {
            naga::StorageAccess::LOAD
        } else {
            naga::StorageAccess::LOAD | naga::StorageAccess::STORE
        };
        let access_ok =
            matches!(global.space, naga::AddressSpace::Storage { access } if access == want_access);
        let element = match &module.types[global.ty].inner {
            naga::TypeInner::Array { base, .. } => match &module.types[*base].inner {
                naga::TypeInner::Scalar(s) => Some((s.kind, s.width)),
                _ => None,
            },
            _ => None,
        };
        let element_ok = match expected.dtype {
            DType::Float => element == Some((naga::ScalarKind::Float, float_width)),
            DType::U32 => element == Some((naga::ScalarKind::Uint, 4)),
        };
        if !access_ok || !element_ok {
            return Err(UserKernelProblem::WrongStorage {
                var,
                at,
                binding: binding.binding,
                tensor: expected.name,
                about: expected.about,
                access: if expected.access == Access::Read {
                    "read"
                } else {
                    "read_write"
                },
                element: if expected.dtype == DType::Float {
                    "T"
                } else {
                    "u32"
                },
            });
        }
        if !used[handle].is_empty() {
            bindings.push((binding.binding, expected.name));
        }
    }
    if !reads_params {
        return Err(UserKernelProblem::NoParams {
            params: params_of(probe.name()),
            op: probe.name(),
        });
    }
    for (k, b) in contract.iter().enumerate() {
        let number = k as u32 + 1;
        if b.access != Access::Read && !b.is_optional() && !bindings.iter().any(|&(n, _)| n == number) {
            return Err(UserKernelProblem::NeverWrites {
                tensor: b.name,
                binding: number,
                op: probe.name(),
            });
        }
    }
    bindings.sort_unstable();
    Ok(bindings)
}

/// Binding 0 is `var<uniform>` of a struct with exactly the members of the `Params` of the op
/// named `op`.
fn check_params(
    module: &naga::Module,
    global: &naga::GlobalVariable,
    op: &'static str,
    at: &str,
) -> std::result::Result<(), UserKernelProblem> {
    let members: Option<Vec<(String, Option<Scalar>)>> = match (&global.space, &module.types[global.ty].inner)
    {
        (naga::AddressSpace::Uniform, naga::TypeInner::Struct { members, .. }) => Some(
            members
                .iter()
                .map(|m| {
                    let scalar = match &module.types[m.ty].inner {
                        naga::TypeInner::Scalar(s) => match (s.kind, s.width) {
                            (naga::ScalarKind::Uint, 4) => Some(Scalar::U32),
                            (naga::ScalarKind::Sint, 4) => Some(Scalar::I32),
                            (naga::ScalarKind::Float, 4) => Some(Scalar::F32),
                            _ => None,
                        },
                        _ => None,
                    };
                    (m.name.clone().unwrap_or_default(), scalar)
                })
                .collect(),
        ),
        _ => None,
    };
    let expected: Vec<(String, Option<Scalar>)> = params_layout(op)
        .unwrap_or(&[])
        .iter()
        .map(|&(name, scalar)| (name.to_string(), Some(scalar)))
        .collect();
    if members.as_ref() != Some(&expected) {
        return Err(UserKernelProblem::WrongParams {
            params: params_of(op),
            at: at.to_string(),
            op,
        });
    }
    Ok(())
}

/// Whether `name` can name a kernel (`user:NAME`, a TOML key, a file name): one or more ASCII
/// letters, digits, `_` and `-`.
pub fn is_kernel_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The user's kernels of one workspace, by name, each loaded and validated once
/// ([`KernelSet::load`]). It is a value, passed to whatever parses, lists or runs variants
/// ([`super::Variant::parse_in`], [`super::Variant::all_in`]): two sets with different kernels of
/// the same name coexist, as the two sides of an A/B do.
#[derive(Debug, Clone, Default)]
pub struct KernelSet {
    kernels: BTreeMap<String, &'static UserKernel>,
}

impl KernelSet {
    /// Loads every kernel of `declared` ([`UserKernel::load`]), in order; the first that fails
    /// is the error, and so is a second kernel of a name already loaded.
    pub fn load(declared: &[Declared]) -> Result<KernelSet> {
        let mut kernels: BTreeMap<String, &'static UserKernel> = BTreeMap::new();
        for declared in declared {
            let kernel = UserKernel::load(declared)?;
            if let Some(known) = kernels.get(&kernel.name) {
                return Err(KernelError::DuplicateName {
                    name: kernel.name.clone(),
                    first: known.source_path.clone(),
                    second: kernel.source_path.clone(),
                }
                .into());
            }
            // Leaked: a kernel's shader is `'static` (see [`UserKernel`]), and kernels live as
            // long as the run.
            let kernel: &'static UserKernel = Box::leak(Box::new(kernel));
            kernels.insert(kernel.name.clone(), kernel);
        }
        Ok(KernelSet { kernels })
    }

    /// The kernel `name` (without the `user:` prefix).
    pub fn get(&self, name: &str) -> Option<&'static UserKernel> {
        self.kernels.get(name).copied()
    }

    /// Every kernel, by name.
    pub fn iter(&self) -> impl Iterator<Item = &'static UserKernel> + '_ {
        self.kernels.values().copied()
    }

    /// Whether the set has no kernel.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }
}

/// Two sets are equal when they hold kernels of the same names with the same sources and
/// configurations (digests).
impl PartialEq for KernelSet {
    fn eq(&self, other: &Self) -> bool {
        self.kernels.len() == other.kernels.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.name == b.name && a.digest == b.digest)
    }
}

impl Eq for KernelSet {}

/// A user kernel as a [`super::Variant`]: compared, ordered and hashed by name.
#[derive(Clone, Copy)]
pub struct UserRef(pub &'static UserKernel);

impl std::fmt::Debug for UserRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.id())
    }
}

impl PartialEq for UserRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for UserRef {}

impl PartialOrd for UserRef {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for UserRef {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.name.cmp(&other.0.name)
    }
}

impl std::hash::Hash for UserRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

/// The WGSL declaration of `op`'s `Params`, for the errors that ask for it.
fn params_of(op: &str) -> String {
    params_wgsl(params_layout(op).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const PLAIN: &str = include_str!("../../examples/my-kernels/kernels/conv_plain.wgsl");

    /// What is wrong with the kernel `name` that `error` is about.
    fn problem(error: Error, name: &str) -> UserKernelProblem {
        match error {
            Error::Kernel(error) => match *error {
                KernelError::InvalidUserKernel {
                    name: about, problem, ..
                } if about == name => problem,
                other => panic!("not an error of kernel `{name}`: {other}"),
            },
            other => panic!("not a kernel error: {other}"),
        }
    }

    fn declare(dir: &Path, name: &str, source: &str, extra: &str) -> Declared {
        std::fs::write(dir.join(format!("{name}.wgsl")), source).expect("write kernel");
        let toml = format!("op = \"conv2d_forward\"\nsource = \"{name}.wgsl\"\nentry = \"main\"\n{extra}");
        Declared {
            name: name.to_string(),
            config: toml::from_str(&toml).expect("a valid table"),
            base_dir: dir.to_path_buf(),
            file: dir.join("Cargo.toml"),
        }
    }

    /// Two workspaces, or two revisions of one, may each declare a kernel `tiled`: each set
    /// resolves `user:tiled` to its own.
    #[test]
    fn two_sets_with_different_kernels_of_one_name_coexist() {
        let (first, second) = (
            tempfile::tempdir().expect("temp dir"),
            tempfile::tempdir().expect("temp dir"),
        );
        let changed = format!("{PLAIN}\n// another revision\n");
        let ours = KernelSet::load(&[declare(first.path(), "tiled", PLAIN, "")]).expect("valid");
        let theirs = KernelSet::load(&[declare(second.path(), "tiled", &changed, "")]).expect("valid");
        let digest = |set: &KernelSet| match super::super::Variant::parse_in("user:tiled", set) {
            Ok(super::super::Variant::User(kernel)) => kernel.0.digest.clone(),
            other => panic!("user:tiled is not the set's kernel: {other:?}"),
        };
        assert_ne!(digest(&ours), digest(&theirs));
        assert_eq!(ours.get("tiled").map(|k| k.digest.clone()), Some(digest(&ours)));
        assert_eq!(
            theirs.get("tiled").map(|k| k.digest.clone()),
            Some(digest(&theirs))
        );
        assert_ne!(ours, theirs);
        assert!(KernelSet::default().is_empty() && !ours.is_empty());
    }

    #[test]
    fn a_name_loaded_twice_is_an_error_naming_both_sources() {
        let (first, second) = (
            tempfile::tempdir().expect("temp dir"),
            tempfile::tempdir().expect("temp dir"),
        );
        let error = KernelSet::load(&[
            declare(first.path(), "tiled", PLAIN, ""),
            declare(second.path(), "tiled", PLAIN, ""),
        ])
        .expect_err("one name twice");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        let message = error.to_string();
        assert!(
            matches!(&error, Error::Kernel(e) if matches!(&**e, KernelError::DuplicateName { name, .. } if name == "tiled")),
            "{message}"
        );
        for dir in [&first, &second] {
            let source = dir.path().join("tiled.wgsl");
            assert!(message.contains(&source.display().to_string()), "{message}");
        }
    }

    #[test]
    fn all_in_lists_the_builtins_then_the_sets_kernels_by_name() {
        use super::super::Variant;
        let dir = tempfile::tempdir().expect("temp dir");
        let set = KernelSet::load(&[
            declare(dir.path(), "second", PLAIN, ""),
            declare(dir.path(), "first", PLAIN, ""),
        ])
        .expect("valid");
        let ids: Vec<String> = Variant::all_in(&set).iter().map(Variant::id).collect();
        let builtin: Vec<String> = Variant::builtin().iter().map(Variant::id).collect();
        assert_eq!(ids[..builtin.len()], builtin[..]);
        assert_eq!(ids[builtin.len()..], ["user:first", "user:second"]);
        let error = Variant::parse_in("user:third", &set)
            .expect_err("not declared")
            .to_string();
        assert!(error.contains("it declares user:first, user:second"), "{error}");
    }

    #[test]
    fn the_example_kernel_loads_with_its_bindings() {
        let dir = tempfile::tempdir().expect("temp dir");
        let kernel = UserKernel::load(&declare(dir.path(), "plain", PLAIN, "f16 = true")).expect("valid");
        assert_eq!(kernel.op, "conv2d_forward");
        assert_eq!(kernel.bindings, [(1, "x"), (2, "w"), (3, "bias"), (4, "y")]);
        assert_eq!(kernel.outputs_per_workgroup, kernel.invocations);
    }

    /// A FIFO as `source` hung every command that read the configuration: it is refused
    /// without being opened.
    #[cfg(unix)]
    #[test]
    fn a_source_that_is_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut declared = declare(dir.path(), "piped", PLAIN, "");
        let fifo = dir.path().join("pipe.wgsl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("run mkfifo");
        assert!(status.success());
        declared.config.source = "pipe.wgsl".into();
        let error = UserKernel::load(&declared).expect_err("a FIFO");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        let message = error.to_string();
        assert!(
            message.contains("kernel `piped`") && message.contains("a named pipe (FIFO), not a regular file"),
            "{message}"
        );
    }

    #[test]
    fn bad_kernels_are_errors_that_name_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cases: [(&str, String, &str, &str); 10] = [
            (
                "syntax",
                PLAIN.replacen("fn main", "fn main(", 1),
                "",
                "syntax.wgsl:",
            ),
            (
                "entry",
                PLAIN.to_string(),
                "",
                "no entry point `nope` (it has: main); set `entry` to one of them",
            ),
            // An empty file: no entry point at all, and not "set `entry`".
            (
                "empty",
                String::new(),
                "",
                "(it has none: is it the kernel's source?",
            ),
            (
                "binding",
                PLAIN.replacen("@binding(4)", "@binding(7)", 1),
                "",
                "bindings 1 to 4",
            ),
            (
                "access",
                PLAIN.replacen("var<storage, read> x", "var<storage, read_write> x", 1),
                "",
                "`x`",
            ),
            (
                "params",
                PLAIN.replacen("kh: u32, kw: u32,", "kw: u32, kh: u32,", 1),
                "",
                "@binding(0)",
            ),
            (
                "size",
                PLAIN.to_string(),
                "workgroup-size = 32",
                "workgroup-size = 32",
            ),
            (
                "f16",
                PLAIN.replacen("alias T = f32;", "alias T = f32 ;", 1),
                "f16 = true",
                "alias T",
            ),
            (
                "override",
                PLAIN.replacen("alias T = f32;", "alias T = f32;\noverride SCALE: f32;", 1),
                "",
                "`override SCALE` (",
            ),
            // Right as written, wrong in its f16 form: f32 elements where the buffers hold f16.
            (
                "f16-element",
                PLAIN.replacen(
                    "var<storage, read> x: array<T>",
                    "var<storage, read> x: array<f32>",
                    1,
                ),
                "f16 = true",
                "(as f16):",
            ),
        ];
        for (name, source, extra, needle) in cases {
            let mut declared = declare(dir.path(), name, &source, extra);
            if name == "entry" {
                declared.config.entry = "nope".into();
            }
            let error = UserKernel::load(&declared).expect_err(name).to_string();
            assert!(error.contains(&format!("kernel `{name}`")), "{name}: {error}");
            assert!(error.contains(needle), "{name}: {error}");
        }
        // Past the kernel cap (it would stall naga): refused before it is parsed, naming it.
        let huge = format!("{PLAIN}{}", "// padding\n".repeat(30_000));
        let error = UserKernel::load(&declare(dir.path(), "huge", &huge, ""))
            .expect_err("over the cap")
            .to_string();
        assert!(
            error.contains("kernel `huge`")
                && error.contains(&format!("more than the {}", crate::fs::MAX_KERNEL_SOURCE_BYTES)),
            "{error}"
        );
        let mut missing = declare(dir.path(), "missing", PLAIN, "");
        missing.config.source = "absent.wgsl".into();
        let error = UserKernel::load(&missing).expect_err("missing file").to_string();
        assert!(error.contains("absent.wgsl"), "{error}");
        let mut unknown = declare(dir.path(), "unknown", PLAIN, "");
        unknown.config.op = "conv3d".into();
        let error = UserKernel::load(&unknown).expect_err("unknown op").to_string();
        assert!(error.contains("conv2d_forward"), "{error}");
        let typo: std::result::Result<KernelConfig, _> =
            toml::from_str("op = \"conv2d_forward\"\nsource = \"a.wgsl\"\nentyr = \"main\"\n");
        assert!(typo.expect_err("unknown key").to_string().contains("entyr"));
    }

    #[test]
    fn a_kernel_must_read_its_params() {
        let dir = tempfile::tempdir().expect("temp dir");
        let blind = PLAIN.replacen("if (i >= p.total) {", "if (i >= arrayLength(&y)) {", 1);
        let blind = blind.replace("p.", "q.").replacen(
            "var<uniform> p: Params;",
            "var<uniform> p: Params;\nvar<private> q: Params;",
            1,
        );
        let error =
            UserKernel::load(&declare(dir.path(), "blind", &blind, "")).expect_err("never reads params");
        assert!(error.to_string().contains("never reads `p`"), "{error}");
        assert!(matches!(
            problem(error, "blind"),
            UserKernelProblem::ParamsUnread { var, .. } if var == "p"
        ));
        let none = blind.replacen("@group(0) @binding(0) var<uniform> p: Params;", "", 1);
        let error = UserKernel::load(&declare(dir.path(), "none", &none, "")).expect_err("no params");
        assert!(error.to_string().contains("no @binding(0)"), "{error}");
        assert!(matches!(
            problem(error, "none"),
            UserKernelProblem::NoParams {
                op: "conv2d_forward",
                ..
            }
        ));
    }

    #[test]
    fn a_kernel_that_never_writes_its_output_is_rejected() {
        let dir = tempfile::tempdir().expect("temp dir");
        let lazy = PLAIN.replacen("y[i] = T(acc);", "", 1);
        let error = UserKernel::load(&declare(dir.path(), "lazy", &lazy, "")).expect_err("never writes y");
        assert!(error.to_string().contains("never writes `y`"), "{error}");
        assert!(matches!(
            problem(error, "lazy"),
            UserKernelProblem::NeverWrites {
                tensor: "y",
                binding: 4,
                op: "conv2d_forward"
            }
        ));
    }
}
