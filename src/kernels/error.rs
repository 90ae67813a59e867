//! What can go wrong with kernels, as values: a user kernel's declaration or source, a variant
//! id, an op's contract or inputs, a set of shader sources, an emitted source, and the Tint
//! check. Every message names the thing and the next step; all but a Tint check that could not
//! start are the user's input to fix (or, for a contract, a caller's bug reported rather than
//! a panic).

use crate::ErrorKind;
use crate::model::Shape;
use std::path::PathBuf;

/// An error of the kernels area.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// A user kernel's declaration or source is not one convbench can run.
    #[error("kernel `{name}` ({file}): {problem}")]
    InvalidUserKernel {
        /// The kernel's name (its table key).
        name: String,
        /// The manifest or configuration file that declares it.
        file: PathBuf,
        /// What is wrong with it.
        #[source]
        problem: UserKernelProblem,
    },
    /// Two kernels of one set have the same name.
    #[error("two kernels are named `{name}` ({first} and {second}); rename one")]
    DuplicateName {
        /// The name.
        name: String,
        /// The source of the kernel loaded first.
        first: PathBuf,
        /// The source of the kernel loaded second.
        second: PathBuf,
    },
    /// `user:NAME` names no kernel of the workspace.
    #[error(
        "no kernel `{name}` is declared in this workspace ({}); declare it in \
         [package.metadata.convbench.kernels.{name}] (see `cargo convbench init`)",
        declares(.declared)
    )]
    UndeclaredUserKernel {
        /// The name after `user:`.
        name: String,
        /// The variant ids of the kernels the workspace declares.
        declared: Vec<String>,
    },
    /// A user kernel's id parsed without the workspace's kernels, which alone resolve it.
    #[error(
        "`{id}` names a user kernel, which only the kernels declared in a workspace resolve; \
         parse it with them (`Variant::parse_in`)"
    )]
    UserIdAlone {
        /// The id, `user:NAME`.
        id: String,
    },
    /// A variant id that is not a known variant.
    #[error("unknown kernel variant `{id}`; known variants: {}", known.join(", "))]
    UnknownVariant {
        /// The id given.
        id: String,
        /// Every known variant id.
        known: Vec<String>,
    },
    /// A built-in variant planned for an op it does not implement.
    #[error("kernel variant {variant} does not implement {op}; use `direct`")]
    NotImplemented {
        /// The variant's id.
        variant: String,
        /// The op's name ([`super::Op::name`]).
        op: &'static str,
    },
    /// A user kernel planned for an op or a shape it does not implement.
    #[error(
        "kernel variant {variant} does not implement this {op} (it implements {implements}, {}); \
         use `direct`",
        shapes
    )]
    UserNotImplemented {
        /// The kernel's variant id, `user:NAME`.
        variant: String,
        /// The op's name.
        op: &'static str,
        /// The op the kernel implements.
        implements: &'static str,
        /// The shapes it implements, described.
        shapes: String,
    },
    /// An op name that is not one of the ops.
    #[error("no op named {name}; the ops are: {}", ops.join(", "))]
    UnknownOp {
        /// The name given.
        name: String,
        /// Every op's name.
        ops: Vec<&'static str>,
    },
    /// Batch normalisation in training over one value per channel, which has no batch variance.
    #[error(
        "{op} over {shape}: one value per channel has no batch variance (PyTorch raises \
         \"Expected more than 1 value per channel when training\"); use a batch of 2 or more, or \
         the eval stage"
    )]
    BatchOfOne {
        /// The op's name.
        op: &'static str,
        /// Its input shape.
        shape: Shape,
    },
    /// A class label not below the class count.
    #[error(
        "{op}: label {label} of image {image} is out of range for {classes} classes; labels are \
         class indices 0 to {}, so write labels below the class count (or give the last layer \
         more outputs)",
        classes.saturating_sub(1)
    )]
    LabelOutOfRange {
        /// The op's name.
        op: &'static str,
        /// The label.
        label: u32,
        /// The image it labels (0-based).
        image: usize,
        /// The class count.
        classes: usize,
    },
    /// An op given the tensor struct of another op (a caller's bug).
    #[error("{op} given the tensors of {tensors}")]
    WrongTensors {
        /// The op's name.
        op: &'static str,
        /// The struct's type name.
        tensors: &'static str,
    },
    /// An op's tensors decoded into another op's struct, or from a list of the wrong length (a
    /// caller's bug).
    #[error("{op} binds {bindings} tensors, decoded as {tensors} from {given}")]
    WrongTensorCount {
        /// The op's name.
        op: &'static str,
        /// How many tensors the op binds.
        bindings: usize,
        /// The struct's type name.
        tensors: &'static str,
        /// How many tensors were given.
        given: usize,
    },
    /// A binding decoded into a tensor struct without a field of its name.
    #[error("{tensors} has no tensor {binding}")]
    NoSuchTensor {
        /// The struct's name.
        tensors: &'static str,
        /// The binding's name.
        binding: &'static str,
    },
    /// A field of a tensor struct that no binding filled when decoding.
    #[error("{tensors}: {field} not bound")]
    FieldNotBound {
        /// The struct's name.
        tensors: &'static str,
        /// The field's name.
        field: &'static str,
    },
    /// A binding of the op that the tensor struct left empty when encoding.
    #[error("{op}: {binding} is bound but not given")]
    BindingNotGiven {
        /// The op's name.
        op: &'static str,
        /// The binding's name.
        binding: &'static str,
    },
    /// A field of the tensor struct that the op does not bind, given when encoding.
    #[error("{op}: {field} given but not bound")]
    FieldNotBinding {
        /// The op's name.
        op: &'static str,
        /// The field's name.
        field: &'static str,
    },
    /// A registered shader that a shader directory does not hold, or that cannot be read.
    #[error(
        "cannot read shader {file} from {dir}: {reason}; a shader directory holds every file of \
         convbench's shaders/ ({})",
        super::shader_set::file_list()
    )]
    UnreadableShader {
        /// The registered file name.
        file: &'static str,
        /// The directory.
        dir: PathBuf,
        /// Why it could not be read.
        reason: String,
    },
    /// A shader directory given as a path without a parent folder (`/`, `..`).
    #[error("shader directory {dir} has no parent folder; name a folder such as ./shaders")]
    ShaderDirWithoutParent {
        /// The path given.
        dir: PathBuf,
    },
    /// A registered shader missing from a git revision.
    #[error(
        "{path} does not exist at {revision}; the base revision must have every shader ({})",
        super::shader_set::file_list()
    )]
    ShaderMissingAtRevision {
        /// The shader's path in the repository.
        path: PathBuf,
        /// The revision, as [`crate::baseline::BaseRevision`] describes it.
        revision: String,
    },
    /// A shader of a git revision that is not UTF-8.
    #[error("{path} at {revision} is not UTF-8 text")]
    ShaderNotUtf8AtRevision {
        /// The shader's path in the repository.
        path: PathBuf,
        /// The revision, as [`crate::baseline::BaseRevision`] describes it.
        revision: String,
    },
    /// A `// #` line of a registered shader or library file that is not a directive the loader
    /// knows, or an include that names no valid path (see [`super::include`]).
    #[error(
        "{file} line {line}: `{text}` is not a directive of convbench's shaders; an include is \
         `// #include \"lib/NAME.wgsl\"` (a path under shaders/ in double quotes, without `.` or \
         `..` parts), the other directives are `// #if subgroups`, `// #else` and `// #endif`"
    )]
    MalformedDirective {
        /// The file, by its path under `shaders/`.
        file: String,
        /// The line, 1-based.
        line: usize,
        /// The line as written, trimmed.
        text: String,
    },
    /// An include names a file that the shader set does not have.
    #[error(
        "{file} line {line} includes {include}, which is not among the {shaders}; an include \
         names a file under shaders/ by its path there, and library files live in shaders/lib/"
    )]
    IncludeNotFound {
        /// The path the include names.
        include: String,
        /// The file with the include, by its path under `shaders/`.
        file: String,
        /// The include's line, 1-based.
        line: usize,
        /// Which set of sources, as [`super::shader_set::ShaderSet::describe`] says.
        shaders: String,
    },
    /// Includes that lead back to a file that includes them.
    #[error(
        "the includes of the {shaders} form a cycle, {}; a file may not include itself, directly \
         or through other files",
        cycle.join(" -> ")
    )]
    IncludeCycle {
        /// The files of the cycle, from the first to include the next to the first again.
        cycle: Vec<String>,
        /// Which set of sources, as [`super::shader_set::ShaderSet::describe`] says.
        shaders: String,
    },
    /// A shader source without a constant that one of its specialisations sets.
    #[error(
        "{file} ({shaders}): a constant of {stem} is not declared in the shader; a specialised \
         shader keeps `const NAME: u32 = ...;` for {}",
        constants.join(", ")
    )]
    UndeclaredConstant {
        /// The registered file name.
        file: &'static str,
        /// Which set of sources, as [`super::shader_set::ShaderSet::describe`] says.
        shaders: String,
        /// The specialisation's name (a variant id, or the file's stem).
        stem: String,
        /// The constants it sets.
        constants: Vec<&'static str>,
    },
    /// The Tint check could not start: a step before Tint ran failed.
    #[error("cannot {step} for the Tint check: {source}")]
    TintCannotRun {
        /// The step, e.g. `run node`.
        step: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// Tint rejects a user kernel that naga accepts.
    #[error(
        "Tint, the WGSL compiler of Chrome's WebGPU, rejects a kernel of yours that naga accepts; \
         fix it so that it runs in browsers and Dawn too:\n{}",
        rejections.join("\n")
    )]
    TintRejects {
        /// Tint's error lines, naming the user's file, line and column.
        rejections: Vec<String>,
    },
}

impl KernelError {
    /// The exit-code category: a Tint check that could not start is the machine's, everything
    /// else the input's (a user kernel, a name, a shader set, or a caller's bug).
    pub fn kind(&self) -> ErrorKind {
        match self {
            KernelError::TintCannotRun { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}

/// What is wrong with a user kernel ([`KernelError::InvalidUserKernel`] names the kernel and its file).
#[derive(Debug, thiserror::Error)]
pub enum UserKernelProblem {
    /// Its name has other characters than letters, digits, `_` and `-`.
    #[error("a kernel name is ASCII letters, digits, `_` and `-`")]
    BadName,
    /// Its op is not one user kernels can implement.
    #[error(
        "op `{op}` cannot have user kernels; choose one of {} (`cargo convbench kernels` lists \
         every op)",
        supported.join(", ")
    )]
    UnsupportedOp {
        /// The op it names.
        op: String,
        /// The ops user kernels can implement.
        supported: &'static [&'static str],
    },
    /// `only` names convolution keys for a fully connected op.
    #[error(
        "`only` may name kernel, stride, padding, dilation and groups for convolutions only; {op} \
         takes `only.bias` at most"
    )]
    ConvKeysOnLinear {
        /// The op it names.
        op: String,
    },
    /// `only` has a value out of range.
    #[error("{reason}")]
    BadOnly {
        /// What its check says: the key and its value.
        reason: String,
    },
    /// Its source cannot be read.
    #[error("{reason}; `source` is relative to {base_dir}")]
    UnreadableSource {
        /// Why: the path and what the system said, or why the file was refused.
        reason: String,
        /// The folder `source` is relative to.
        base_dir: PathBuf,
    },
    /// `f16 = true` without the alias line convbench replaces.
    #[error(
        "`f16 = true` needs the line `{}` in {file}: convbench replaces it with \
         `enable f16; alias T = f16;`",
        super::registry::ALIAS_LINE
    )]
    NoF16Alias {
        /// Its source file.
        file: String,
    },
    /// naga cannot parse it.
    #[error("not valid WGSL:\n{diagnostic}")]
    NotWgsl {
        /// naga's diagnostic, pointing at `file:line:column`.
        diagnostic: String,
    },
    /// naga's validation rejects it.
    #[error("naga rejects it:\n{diagnostic}")]
    NagaRejects {
        /// naga's diagnostic, pointing at `file:line:column`.
        diagnostic: String,
    },
    /// Its source has no entry point of the configured name.
    #[error(
        "{file} has no entry point `{entry}`{}",
        if found.is_empty() {
            " (it has none: is it the kernel's source? `cargo convbench kernels --contract OP` \
             prints a skeleton to start from)"
                .to_string()
        } else {
            format!(" (it has: {}); set `entry` to one of them", found.join(", "))
        }
    )]
    NoEntryPoint {
        /// Its source file.
        file: String,
        /// The configured entry point.
        entry: String,
        /// The entry points the source has.
        found: Vec<String>,
    },
    /// A pipeline-overridable constant without a default: convbench sets no pipeline constants
    /// on a kernel of yours, so the pipeline could not be created.
    #[error(
        "`override {name}` ({at}) has no default, and convbench sets no pipeline constants on \
         your kernels: give it one (`override {name}: f32 = 1.0;`) or make it a `const`"
    )]
    OverrideWithoutDefault {
        /// The constant's name.
        name: String,
        /// `file:line`.
        at: String,
    },
    /// Its entry point is not a compute shader.
    #[error("entry point `{entry}` is not a @compute function")]
    NotCompute {
        /// The entry point.
        entry: String,
    },
    /// Its workgroup has no invocations, or more than every adapter runs.
    #[error(
        "@workgroup_size {workgroup_size:?} has {invocations} invocations; at most {} run on \
         every adapter (WebGPU's default limit)",
        max
    )]
    TooManyInvocations {
        /// The most invocations a workgroup may have.
        max: u32,
        /// The entry point's `@workgroup_size`.
        workgroup_size: [u32; 3],
        /// Their product.
        invocations: u64,
    },
    /// `workgroup-size` disagrees with the entry point's `@workgroup_size`.
    #[error(
        "workgroup-size = {configured} but `{entry}` declares @workgroup_size {workgroup_size:?} \
         ({invocations} invocations); make them agree, or leave workgroup-size out"
    )]
    WorkgroupSizeMismatch {
        /// What the configuration says.
        configured: u32,
        /// The entry point.
        entry: String,
        /// The entry point's `@workgroup_size`.
        workgroup_size: [u32; 3],
        /// Their product.
        invocations: u32,
    },
    /// Both `outputs-per-invocation` and `outputs-per-workgroup` are given.
    #[error("give outputs-per-invocation or outputs-per-workgroup, not both")]
    BothOutputCounts,
    /// `outputs-per-invocation` or `outputs-per-workgroup` is 0.
    #[error("outputs per invocation or workgroup must be at least 1")]
    NoOutputs,
    /// A binding outside group 0.
    #[error("`{var}` ({at}) is in @group({group}); every binding is in @group(0)")]
    NotGroupZero {
        /// The variable.
        var: String,
        /// Where it is declared, `file:line`.
        at: String,
        /// Its group.
        group: u32,
    },
    /// Binding 0 is not the op's `Params` uniform.
    #[error("@binding(0) ({at}) must be `var<uniform> params: Params` with\n{params}")]
    WrongParams {
        /// The WGSL declaration of the op's `Params`.
        params: String,
        /// Where it is declared, `file:line`.
        at: String,
        /// The op, whose `Params` it must be.
        op: &'static str,
    },
    /// The entry point never reads binding 0, so it cannot know the shape.
    #[error(
        "entry point never reads `{var}` (@binding(0), {at}), the op's geometry; a kernel takes \
         its sizes from it"
    )]
    ParamsUnread {
        /// The variable.
        var: String,
        /// Where it is declared, `file:line`.
        at: String,
    },
    /// No binding 0 at all.
    #[error("no @binding(0); declare `@group(0) @binding(0) var<uniform> params: Params;` with\n{params}")]
    NoParams {
        /// The WGSL declaration of the op's `Params`.
        params: String,
        /// The op, whose `Params` it must declare.
        op: &'static str,
    },
    /// A binding past the op's tensors.
    #[error(
        "`{var}` ({at}) is @binding({binding}), but {op} has {tensors} tensors, bindings 1 to \
         {tensors}; see `cargo convbench kernels --contract {op}`"
    )]
    BindingOutOfRange {
        /// The variable.
        var: String,
        /// Where it is declared, `file:line`.
        at: String,
        /// Its binding number.
        binding: u32,
        /// The op.
        op: &'static str,
        /// How many tensors the op binds.
        tensors: usize,
    },
    /// A tensor binding with the wrong access or element type.
    #[error(
        "`{var}` ({at}) is @binding({binding}), which is `{tensor}` ({about}): declare it \
         `var<storage, {access}> {tensor}: array<{element}>`"
    )]
    WrongStorage {
        /// The variable.
        var: String,
        /// Where it is declared, `file:line`.
        at: String,
        /// Its binding number.
        binding: u32,
        /// The contract's tensor at that binding.
        tensor: &'static str,
        /// The tensor's layout and meaning.
        about: &'static str,
        /// The access it needs, `read` or `read_write`.
        access: &'static str,
        /// The element type it needs, `T` or `u32`.
        element: &'static str,
    },
    /// The entry point never writes a tensor the op writes.
    #[error(
        "entry point never writes `{tensor}` (@binding({binding})), which {op} must write; see \
         `cargo convbench kernels --contract {op}`"
    )]
    NeverWrites {
        /// The tensor.
        tensor: &'static str,
        /// Its binding number.
        binding: u32,
        /// The op.
        op: &'static str,
    },
}

/// `it declares none`, or `it declares user:a, user:b`.
fn declares(ids: &[String]) -> String {
    if ids.is_empty() {
        "it declares none".to_string()
    } else {
        format!("it declares {}", ids.join(", "))
    }
}
