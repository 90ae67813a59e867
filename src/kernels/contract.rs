//! The binding contract of every op, by name.
//!
//! [`Op::contract`] is the one table that says which tensors an op binds, in which order, how
//! each is accessed, its element type and its length. Everything else reads it: the element
//! counts and access lists the backends check ([`Op::bindings`], [`Op::binding_lens`],
//! [`Op::dtypes`]), the verifier's poisoning, `kernels --contract` (the WGSL skeleton a user
//! kernel follows), and the typed tensor structs of [`bind`].
//!
//! A backend or planner never indexes an op's tensors by position. It decodes them into the
//! op's struct (`let bind::Affine { x, w, bias, y } = op.tensors(items)?`) or builds the list
//! from one (`op.encode(bind::Affine { .. })`); both go through the contract's names, so the
//! binding order is written down exactly once.

use super::KernelError;
use super::op::{Access, DType, Op};
use crate::Result;

/// One tensor an op binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// Name, as in the op's tensor struct and in the WGSL skeleton (`x`, `w`, `bias`, `y`, ...).
    pub name: &'static str,
    /// How the kernel accesses it.
    pub access: Access,
    /// Element type.
    pub dtype: DType,
    /// Elements.
    pub len: usize,
    /// Layout and meaning, for the contract's documentation.
    pub about: &'static str,
}

impl Binding {
    /// Whether the binding exists only for some layers (a bias and its gradient). A WGSL kernel
    /// still declares it; a one-element placeholder is bound when the layer has none.
    pub fn is_optional(&self) -> bool {
        Self::optional(self.name)
    }

    /// Whether a binding of this name is optional (see [`Binding::is_optional`]).
    pub fn optional(name: &str) -> bool {
        matches!(name, "bias" | "dbias")
    }
}

const fn b(name: &'static str, access: Access, len: usize, about: &'static str) -> Binding {
    Binding {
        name,
        access,
        dtype: DType::Float,
        len,
        about,
    }
}

const fn labels(len: usize) -> Binding {
    Binding {
        name: "labels",
        access: Access::Read,
        dtype: DType::U32,
        len,
        about: "[n] class index of each image",
    }
}

use Access::{Read, ReadWrite, Write};

impl Op {
    /// The tensors this op binds, in binding order.
    pub fn contract(&self) -> Vec<Binding> {
        let mut c = match self {
            Op::Conv2dForward(g) => vec![
                b("x", Read, g.input.len(), "[n, c_in, h_in, w_in] input"),
                b(
                    "w",
                    Read,
                    g.conv.weight_len(),
                    "[c_out, c_in / groups, kh, kw] filters",
                ),
                b("bias", Read, g.conv.out_channels, "[c_out]"),
                b("y", Write, g.output.len(), "[n, c_out, h_out, w_out] output"),
            ],
            Op::Conv2dBackwardData(g) => vec![
                b(
                    "dy",
                    Read,
                    g.output.len(),
                    "[n, c_out, h_out, w_out] output gradient",
                ),
                b(
                    "w",
                    Read,
                    g.conv.weight_len(),
                    "[c_out, c_in / groups, kh, kw] filters",
                ),
                b("dx", Write, g.input.len(), "[n, c_in, h_in, w_in] input gradient"),
            ],
            Op::Conv2dBackwardFilter(g) => vec![
                b("x", Read, g.input.len(), "[n, c_in, h_in, w_in] input"),
                b(
                    "dy",
                    Read,
                    g.output.len(),
                    "[n, c_out, h_out, w_out] output gradient",
                ),
                b(
                    "dw",
                    Write,
                    g.conv.weight_len(),
                    "[c_out, c_in / groups, kh, kw] filter gradient",
                ),
                b("dbias", Write, g.conv.out_channels, "[c_out]"),
            ],
            Op::PoolForward(g) => vec![
                b("x", Read, g.input.len(), "[n, c, h_in, w_in] input"),
                b("y", Write, g.output.len(), "[n, c, h_out, w_out] output"),
            ],
            Op::PoolBackward(g) => vec![
                b(
                    "x",
                    Read,
                    g.input.len(),
                    "[n, c, h_in, w_in] forward input (max pooling finds in it the element each window chose: its first maximum, or its last NaN)",
                ),
                b("dy", Read, g.output.len(), "[n, c, h_out, w_out] output gradient"),
                b("dx", Write, g.input.len(), "[n, c, h_in, w_in] input gradient"),
            ],
            Op::ReluForward { len } => vec![b("x", Read, *len, "input"), b("y", Write, *len, "max(x, 0)")],
            Op::ReluBackward { len } => vec![
                b("y", Read, *len, "forward output"),
                b("dy", Read, *len, "output gradient"),
                b("dx", Write, *len, "dy where y > 0, else 0"),
            ],
            Op::LrnForward { shape, .. } => vec![
                b("x", Read, shape.len(), "[n, c, h, w] input"),
                b("y", Write, shape.len(), "x * scale^-beta"),
                b(
                    "scale",
                    Write,
                    shape.len(),
                    "k + alpha / size * sum of x^2 over channels c - size / 2 ..= c + (size - 1) / 2",
                ),
            ],
            Op::LrnBackward { shape, .. } => vec![
                b("x", Read, shape.len(), "[n, c, h, w] forward input"),
                b("y", Read, shape.len(), "forward output"),
                b("scale", Read, shape.len(), "forward scale"),
                b("dy", Read, shape.len(), "output gradient"),
                b("dx", Write, shape.len(), "input gradient"),
            ],
            Op::BatchNormForwardTrain { shape, .. } => vec![
                b("x", Read, shape.len(), "[n, c, h, w] input"),
                b("gamma", Read, shape.c, "[c] scale"),
                b("beta", Read, shape.c, "[c] shift"),
                b("y", Write, shape.len(), "[n, c, h, w] output"),
                b("saved_mean", Write, shape.c, "[c] batch mean"),
                b(
                    "saved_invstd",
                    Write,
                    shape.c,
                    "[c] 1 / sqrt(biased batch variance + eps)",
                ),
                b("running_mean", ReadWrite, shape.c, "[c] updated with momentum"),
                b(
                    "running_var",
                    ReadWrite,
                    shape.c,
                    "[c] updated with momentum and the unbiased variance",
                ),
            ],
            Op::BatchNormForwardEval { shape, .. } => vec![
                b("x", Read, shape.len(), "[n, c, h, w] input"),
                b("gamma", Read, shape.c, "[c] scale"),
                b("beta", Read, shape.c, "[c] shift"),
                b("running_mean", Read, shape.c, "[c] mean"),
                b("running_var", Read, shape.c, "[c] variance"),
                b("y", Write, shape.len(), "[n, c, h, w] output"),
            ],
            Op::BatchNormBackward { shape, .. } => vec![
                b("x", Read, shape.len(), "[n, c, h, w] forward input"),
                b("dy", Read, shape.len(), "output gradient"),
                b("gamma", Read, shape.c, "[c] scale"),
                b("saved_mean", Read, shape.c, "[c] forward batch mean"),
                b("saved_invstd", Read, shape.c, "[c] forward 1 / std"),
                b("dx", Write, shape.len(), "input gradient"),
                b("dgamma", Write, shape.c, "[c] scale gradient"),
                b("dbeta", Write, shape.c, "[c] shift gradient"),
            ],
            Op::LinearForward(g) => vec![
                b("x", Read, g.batch * g.in_features, "[n, in] input"),
                b("w", Read, g.out_features * g.in_features, "[out, in] weights"),
                b("bias", Read, g.out_features, "[out]"),
                b(
                    "y",
                    if g.is_slice() { ReadWrite } else { Write },
                    g.batch * g.y_stride,
                    "[n, y_stride] output; columns y_offset .. y_offset + out written",
                ),
            ],
            Op::LinearBackwardData(g) => vec![
                b(
                    "dy",
                    Read,
                    g.batch * g.y_stride,
                    "[n, y_stride] output gradient; columns y_offset .. y_offset + out read",
                ),
                b("w", Read, g.out_features * g.in_features, "[out, in] weights"),
                b("dx", Write, g.batch * g.in_features, "[n, in] input gradient"),
            ],
            Op::LinearBackwardParams(g) => vec![
                b("x", Read, g.batch * g.in_features, "[n, in] input"),
                b(
                    "dy",
                    Read,
                    g.batch * g.y_stride,
                    "[n, y_stride] output gradient; columns y_offset .. y_offset + out read",
                ),
                b(
                    "dw",
                    Write,
                    g.out_features * g.in_features,
                    "[out, in] weight gradient",
                ),
                b("dbias", Write, g.out_features, "[out]"),
            ],
            Op::SoftmaxCrossEntropyForward { batch, classes } => vec![
                b("logits", Read, batch * classes, "[n, classes]"),
                labels(*batch),
                b(
                    "loss",
                    Write,
                    *batch,
                    "[n] -log softmax(logits)[label]; labels are below classes",
                ),
                b("probs", Write, batch * classes, "[n, classes] softmax(logits)"),
            ],
            Op::SoftmaxCrossEntropyBackward { batch, classes } => vec![
                b(
                    "probs",
                    Read,
                    batch * classes,
                    "[n, classes] forward probabilities",
                ),
                labels(*batch),
                b(
                    "dlogits",
                    Write,
                    batch * classes,
                    "[n, classes] gradient of the mean loss",
                ),
            ],
            Op::ChannelCopy {
                n,
                hw,
                total_channels,
                part_channels,
                into_concat,
                ..
            } => {
                let (part, total) = (n * hw * part_channels, n * hw * total_channels);
                if *into_concat {
                    vec![
                        b(
                            "src",
                            Read,
                            part,
                            "[n, part, h, w] one input of the concatenation",
                        ),
                        b(
                            "dst",
                            ReadWrite,
                            total,
                            "[n, total, h, w] channels offset .. offset + part written",
                        ),
                    ]
                } else {
                    vec![
                        b(
                            "src",
                            Read,
                            total,
                            "[n, total, h, w] gradient of the concatenation",
                        ),
                        b(
                            "dst",
                            Write,
                            part,
                            "[n, part, h, w] channels offset .. offset + part of src",
                        ),
                    ]
                }
            }
            Op::Add { len } => vec![
                b("a", Read, *len, "addend"),
                b("b", Read, *len, "addend"),
                b("y", Write, *len, "a + b"),
            ],
            Op::GlobalAvgPoolForward { shape } => vec![
                b("x", Read, shape.len(), "[n, c, h, w] input"),
                b("y", Write, shape.n * shape.c, "[n, c] mean over h, w"),
            ],
            Op::GlobalAvgPoolBackward { shape } => vec![
                b("dy", Read, shape.n * shape.c, "[n, c] output gradient"),
                b("dx", Write, shape.len(), "[n, c, h, w] dy / (h w) everywhere"),
            ],
            Op::SgdUpdate { len, .. } => vec![
                b("grad", Read, *len, "parameter gradient"),
                b("weight", ReadWrite, *len, "parameter, updated: w -= lr * v"),
                b(
                    "velocity",
                    ReadWrite,
                    *len,
                    "momentum buffer, updated: v = momentum v + grad + weight_decay w",
                ),
            ],
        };
        if !self.has_bias() {
            c.retain(|b| b.name != "bias" && b.name != "dbias");
        }
        c
    }

    /// Whether the op binds a bias (or its gradient).
    fn has_bias(&self) -> bool {
        match self {
            Op::Conv2dForward(g) | Op::Conv2dBackwardFilter(g) => g.conv.bias,
            Op::LinearForward(g) | Op::LinearBackwardParams(g) => g.bias,
            _ => false,
        }
    }

    /// Position of the tensor `name` in the binding order, if the op binds it.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.contract().iter().position(|b| b.name == name)
    }

    /// Decodes the op's tensors, given in binding order, into its tensor struct `S`.
    ///
    /// Fails when `S` is not this op's struct or `items` does not have one item per binding:
    /// both are bugs in the caller, reported rather than panicking. This builds the contract;
    /// code that decodes the same op on every run resolves a [`Layout`] once instead.
    pub fn tensors<T, S: bind::Tensors<T>>(&self, items: Vec<T>) -> Result<S> {
        self.layout().tensors(items)
    }

    /// The op's [`Layout`], to resolve once where the op runs many times.
    pub fn layout(&self) -> Layout {
        Layout {
            op: self.name(),
            bindings: self
                .contract()
                .into_iter()
                .map(|b| (b.name, b.access, b.dtype))
                .collect(),
        }
    }

    /// The tensors of `s` in this op's binding order.
    pub fn encode<T, S: bind::Tensors<T>>(&self, s: S) -> Result<Vec<T>> {
        if !S::OPS.contains(&self.name()) {
            return Err(KernelError::WrongTensors {
                op: self.name(),
                tensors: std::any::type_name::<S>(),
            }
            .into());
        }
        let names: Vec<&'static str> = self.contract().iter().map(|b| b.name).collect();
        s.encode(self.name(), &names)
    }
}

/// What running an op needs of its contract, resolved once when a program is loaded or planned
/// ([`Op::layout`]): each binding's name, access and element type, in binding order. Decoding
/// through it ([`Layout::tensors`]) is [`Op::tensors`] without building the contract again,
/// which a backend would otherwise do for every op of every run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    op: &'static str,
    bindings: Vec<(&'static str, Access, DType)>,
}

impl Layout {
    /// Access and element type of each binding, in binding order.
    pub fn bindings(&self) -> impl Iterator<Item = (Access, DType)> + '_ {
        self.bindings.iter().map(|&(_, access, dtype)| (access, dtype))
    }

    /// Decodes the op's tensors, given in binding order, into its tensor struct `S`, failing as
    /// [`Op::tensors`] does.
    pub fn tensors<T, S: bind::Tensors<T>>(&self, items: Vec<T>) -> Result<S> {
        if !S::OPS.contains(&self.op) || items.len() != self.bindings.len() {
            return Err(KernelError::WrongTensorCount {
                op: self.op,
                bindings: self.bindings.len(),
                tensors: std::any::type_name::<S>(),
                given: items.len(),
            }
            .into());
        }
        S::decode(self.bindings.iter().map(|&(name, ..)| name).zip(items))
    }
}

/// The tensor structs: one per shape of contract, named after what the tensors are.
///
/// `T` is whatever a backend binds: a tensor id while planning, a slice in the reference, a
/// device region in the cuda backend.
pub mod bind {
    use super::KernelError;
    use crate::Result;

    /// A struct of an op's tensors.
    pub trait Tensors<T>: Sized {
        /// Names of the ops ([`super::Op::name`]) whose tensors this struct holds.
        const OPS: &'static [&'static str];
        /// Builds the struct from `(name, item)` pairs.
        fn decode(items: impl Iterator<Item = (&'static str, T)>) -> Result<Self>;
        /// The items in the order of `names`, the bindings of the op named `op`; `Err` names a
        /// field the contract does not bind, or a binding the struct leaves empty.
        fn encode(self, op: &'static str, names: &[&'static str]) -> Result<Vec<T>>;
    }

    macro_rules! tensors {
        ($(
            $(#[$meta:meta])*
            $name:ident [$($op:literal),+] { $($req:ident),+ $(; $($opt:ident),+)? }
        )*) => {$(
            $(#[$meta])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
            #[allow(missing_docs)]
            pub struct $name<T> {
                $(pub $req: T,)+
                $($(pub $opt: Option<T>,)+)?
            }

            impl<T> $name<T> {
                /// The same tensors through `f`: positions resolved by name once (when a
                /// program loads) become whatever a backend binds on each run.
                pub fn try_map<U, E>(
                    self,
                    mut f: impl FnMut(T) -> std::result::Result<U, E>,
                ) -> std::result::Result<$name<U>, E> {
                    let Self { $($req,)+ $($($opt,)+)? } = self;
                    Ok($name {
                        $($req: f($req)?,)+
                        $($($opt: $opt.map(&mut f).transpose()?,)+)?
                    })
                }
            }

            impl<T> Tensors<T> for $name<T> {
                const OPS: &'static [&'static str] = &[$($op),+];

                fn decode(items: impl Iterator<Item = (&'static str, T)>) -> Result<Self> {
                    $(let mut $req = None;)+
                    $($(let mut $opt = None;)+)?
                    for (name, item) in items {
                        match name {
                            $(stringify!($req) => $req = Some(item),)+
                            $($(stringify!($opt) => $opt = Some(item),)+)?
                            other => {
                                return Err(KernelError::NoSuchTensor {
                                    tensors: stringify!($name),
                                    binding: other,
                                }
                                .into())
                            }
                        }
                    }
                    Ok(Self {
                        $($req: $req.ok_or(KernelError::FieldNotBound {
                            tensors: stringify!($name),
                            field: stringify!($req),
                        })?,)+
                        $($($opt,)+)?
                    })
                }

                fn encode(self, op: &'static str, names: &[&'static str]) -> Result<Vec<T>> {
                    let Self { $($req,)+ $($($opt,)+)? } = self;
                    $(let mut $req = Some($req);)+
                    $($(let mut $opt = $opt;)+)?
                    let mut out = Vec::with_capacity(names.len());
                    for &name in names {
                        let item = match name {
                            $(stringify!($req) => $req.take(),)+
                            $($(stringify!($opt) => $opt.take(),)+)?
                            _ => None,
                        };
                        out.push(item.ok_or(KernelError::BindingNotGiven { op, binding: name })?);
                    }
                    $(if $req.is_some() {
                        return Err(KernelError::FieldNotBinding { op, field: stringify!($req) }.into());
                    })+
                    $($(if $opt.is_some() {
                        return Err(KernelError::FieldNotBinding { op, field: stringify!($opt) }.into());
                    })+)?
                    Ok(out)
                }
            }
        )*};
    }

    tensors! {
        /// `x, w, [bias] -> y`: a convolution or fully connected layer's forward pass.
        Affine ["conv2d_forward", "linear_forward"] { x, w, y; bias }
        /// `dy, w -> dx`.
        BackwardData ["conv2d_backward_data", "linear_backward_data"] { dy, w, dx }
        /// `x, dy -> dw, [dbias]`.
        BackwardParams ["conv2d_backward_filter", "linear_backward_params"] { x, dy, dw; dbias }
        /// `x -> y`.
        Unary ["pool_forward", "relu_forward", "global_avgpool_forward"] { x, y }
        /// `x, dy -> dx` (pooling reads the forward input).
        PoolBackward ["pool_backward"] { x, dy, dx }
        /// `y, dy -> dx` (relu reads the forward output).
        ReluBackward ["relu_backward"] { y, dy, dx }
        /// `dy -> dx`.
        Gradient ["global_avgpool_backward"] { dy, dx }
        /// `x -> y, scale`.
        LrnForward ["lrn_forward"] { x, y, scale }
        /// `x, y, scale, dy -> dx`.
        LrnBackward ["lrn_backward"] { x, y, scale, dy, dx }
        /// `x, gamma, beta -> y, saved_mean, saved_invstd; running_mean, running_var` updated.
        BatchNormTrain ["batchnorm_forward_train"] {
            x, gamma, beta, y, saved_mean, saved_invstd, running_mean, running_var
        }
        /// `x, gamma, beta, running_mean, running_var -> y`.
        BatchNormEval ["batchnorm_forward_eval"] { x, gamma, beta, running_mean, running_var, y }
        /// `x, dy, gamma, saved_mean, saved_invstd -> dx, dgamma, dbeta`.
        BatchNormBackward ["batchnorm_backward"] {
            x, dy, gamma, saved_mean, saved_invstd, dx, dgamma, dbeta
        }
        /// `logits, labels -> loss, probs`.
        SoftmaxForward ["softmax_cross_entropy_forward"] { logits, labels, loss, probs }
        /// `probs, labels -> dlogits`.
        SoftmaxBackward ["softmax_cross_entropy_backward"] { probs, labels, dlogits }
        /// `src -> dst` (a channel slice of a concatenation, one way or the other).
        Copy ["channel_copy"] { src, dst }
        /// `a, b -> y`.
        Add ["add"] { a, b, y }
        /// `grad; weight, velocity` updated.
        Sgd ["sgd_update"] { grad, weight, velocity }
    }
}

/// The contract of `op` as a WGSL skeleton: what a kernel implementing the op declares, and what
/// each invocation may assume. `op` should be an instance with its optional tensors (a layer with
/// a bias), so that every binding is shown.
///
/// Bindings are in group 0: binding 0 is the op's params uniform, the tensors follow in contract
/// order from binding 1. An optional tensor (`bias`, `dbias`) keeps its binding when the layer
/// has none: a one-element placeholder is bound there and the kernel must not touch it.
pub fn wgsl_skeleton(op: &Op) -> String {
    use std::fmt::Write as _;
    let contract = op.contract();
    let mut out = String::new();
    let signature = contract
        .iter()
        .map(|b| if b.access == Access::Read { b.name } else { "" })
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let written = contract
        .iter()
        .filter(|b| b.access != Access::Read)
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "// convbench op contract: {} ({signature} -> {written})",
        op.name()
    );
    let _ = writeln!(out, "//");
    let _ = writeln!(out, "// Layout NCHW, row-major; shapes below are in elements.");
    let _ = writeln!(
        out,
        "// An f16 program declares `enable f16;` and `alias T = f16;`; accumulate in f32."
    );
    let _ = writeln!(
        out,
        "// Every element of a `write` tensor is written; nothing else may be assumed"
    );
    let _ = writeln!(
        out,
        "// about its contents (convbench fills outputs with NaN before verifying)."
    );
    let _ = writeln!(out, "// `read_write` tensors are read and updated in place.");
    let _ = writeln!(out);
    let _ = writeln!(out, "alias T = f32;");
    let _ = writeln!(out);
    match super::user::params_layout(op.name()) {
        Some(layout) => {
            let written = contract
                .iter()
                .find(|b| b.access != Access::Read)
                .map_or("", |b| b.name);
            let _ = writeln!(
                out,
                "// The op's geometry; `total` is the number of elements of `{written}`."
            );
            let _ = writeln!(out, "{}", super::user::params_wgsl(layout));
            let _ = writeln!(out);
            let _ = writeln!(out, "@group(0) @binding(0) var<uniform> params: Params;");
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "// Dispatch: ceil(total / outputs per workgroup) workgroups, over a 2-d grid when needed:"
            );
            let _ = writeln!(
                out,
                "// workgroup index = workgroup_id.y * num_workgroups.x + workgroup_id.x; invocations past"
            );
            let _ = writeln!(out, "// the end return without writing. (See `kernels::user`.)");
        }
        None => {
            let _ = writeln!(
                out,
                "// @group(0) @binding(0) var<uniform> params: Params;  // the op's geometry, as in the Params struct of convbench's own kernel for this op (shaders/)"
            );
        }
    }
    for (k, b) in contract.iter().enumerate() {
        let access = if b.access == Access::Read {
            "read"
        } else {
            "read_write"
        };
        let ty = match b.dtype {
            DType::Float => "T",
            DType::U32 => "u32",
        };
        let role = match b.access {
            Access::Read => "read",
            Access::Write => "write",
            Access::ReadWrite => "read_write",
        };
        let optional = if b.is_optional() {
            " (optional: a placeholder when the layer has no bias)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "@group(0) @binding({}) var<storage, {access}> {}: array<{ty}>;  // {role}: {}{optional}",
            k + 1,
            b.name,
            b.about
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::bind;
    use crate::harness::plan::{PlanOptions, plan_network};
    use crate::kernels::{Access, KernelError, LinearGeom, Op};
    use crate::model::{Precision, zoo};
    use crate::results::Stage;

    /// Every op the zoo plans (training and inference, fully connected layers sliced and not).
    fn planned_ops() -> Vec<Op> {
        let mut ops = Vec::new();
        for network in zoo() {
            for (stage, max_tensor_bytes) in [
                (Stage::Train, u64::MAX),
                (Stage::Train, 1 << 16),
                (Stage::Eval, u64::MAX),
            ] {
                let options = PlanOptions {
                    stage,
                    data_grad: true,
                    max_tensor_bytes,
                };
                let plan = plan_network(&network, 2, Precision::F32, options).expect("zoo plans");
                ops.extend(plan.program.ops.into_iter().map(|call| call.op));
            }
        }
        ops
    }

    /// Decodes `op`'s positions into the struct `S` and encodes them back.
    fn round_trip<S: bind::Tensors<usize>>(op: &Op) -> Vec<usize> {
        let positions: Vec<usize> = (0..op.contract().len()).collect();
        let s: S = op.tensors(positions).expect("decodes");
        op.encode(s).expect("encodes")
    }

    #[test]
    fn every_planned_op_decodes_and_encodes_by_name() {
        let ops = planned_ops();
        let mut names: Vec<&str> = ops.iter().map(Op::name).collect();
        names.sort_unstable();
        names.dedup();
        // Every op family the kernels implement appears in the zoo's plans.
        assert_eq!(names.len(), 22, "ops planned: {names:?}");
        for op in &ops {
            let contract = op.contract();
            let mut unique: Vec<&str> = contract.iter().map(|b| b.name).collect();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), contract.len(), "{}: duplicate names", op.name());
            let expected: Vec<usize> = (0..contract.len()).collect();
            let got = match op {
                Op::Conv2dForward(_) | Op::LinearForward(_) => round_trip::<bind::Affine<usize>>(op),
                Op::Conv2dBackwardData(_) | Op::LinearBackwardData(_) => {
                    round_trip::<bind::BackwardData<usize>>(op)
                }
                Op::Conv2dBackwardFilter(_) | Op::LinearBackwardParams(_) => {
                    round_trip::<bind::BackwardParams<usize>>(op)
                }
                Op::PoolForward(_) | Op::ReluForward { .. } | Op::GlobalAvgPoolForward { .. } => {
                    round_trip::<bind::Unary<usize>>(op)
                }
                Op::PoolBackward(_) => round_trip::<bind::PoolBackward<usize>>(op),
                Op::ReluBackward { .. } => round_trip::<bind::ReluBackward<usize>>(op),
                Op::GlobalAvgPoolBackward { .. } => round_trip::<bind::Gradient<usize>>(op),
                Op::LrnForward { .. } => round_trip::<bind::LrnForward<usize>>(op),
                Op::LrnBackward { .. } => round_trip::<bind::LrnBackward<usize>>(op),
                Op::BatchNormForwardTrain { .. } => round_trip::<bind::BatchNormTrain<usize>>(op),
                Op::BatchNormForwardEval { .. } => round_trip::<bind::BatchNormEval<usize>>(op),
                Op::BatchNormBackward { .. } => round_trip::<bind::BatchNormBackward<usize>>(op),
                Op::SoftmaxCrossEntropyForward { .. } => round_trip::<bind::SoftmaxForward<usize>>(op),
                Op::SoftmaxCrossEntropyBackward { .. } => round_trip::<bind::SoftmaxBackward<usize>>(op),
                Op::ChannelCopy { .. } => round_trip::<bind::Copy<usize>>(op),
                Op::Add { .. } => round_trip::<bind::Add<usize>>(op),
                Op::SgdUpdate { .. } => round_trip::<bind::Sgd<usize>>(op),
            };
            assert_eq!(got, expected, "{}", op.name());
        }
    }

    #[test]
    fn every_op_writes_something_and_lengths_are_positive() {
        for op in planned_ops() {
            let contract = op.contract();
            assert!(contract.iter().any(|b| b.access != Access::Read), "{}", op.name());
            assert!(contract.iter().all(|b| b.len > 0), "{}", op.name());
        }
    }

    #[test]
    fn a_bias_is_bound_exactly_when_the_layer_has_one() {
        let with = Op::LinearForward(LinearGeom::new(2, 3, 4, true));
        let without = Op::LinearForward(LinearGeom::new(2, 3, 4, false));
        let names = |op: &Op| op.contract().iter().map(|b| b.name).collect::<Vec<_>>();
        assert_eq!(names(&with), ["x", "w", "bias", "y"]);
        assert_eq!(names(&without), ["x", "w", "y"]);
        let t = bind::Affine {
            x: 0,
            w: 1,
            bias: Some(2),
            y: 3,
        };
        assert_eq!(with.encode(t).expect("bias bound"), [0, 1, 2, 3]);
        let err = without.encode(t).expect_err("no bias binding").to_string();
        assert!(err.contains("bias given but not bound"), "{err}");
        let err = with
            .encode(bind::Affine { bias: None, ..t })
            .expect_err("bias missing")
            .to_string();
        assert!(err.contains("bias is bound but not given"), "{err}");
    }

    #[test]
    fn every_skeleton_is_valid_wgsl_declaring_each_binding() {
        for op in crate::harness::plan::representative_ops().expect("zoo plans") {
            let skeleton = super::wgsl_skeleton(&op);
            let module = naga::front::wgsl::parse_str(&skeleton)
                .unwrap_or_else(|e| panic!("{}: {}\n{skeleton}", op.name(), e.emit_to_string(&skeleton)));
            let declared: Vec<String> = module
                .global_variables
                .iter()
                .filter_map(|(_, v)| v.name.clone())
                .filter(|name| name != "params")
                .collect();
            let names: Vec<String> = op.contract().iter().map(|b| b.name.to_string()).collect();
            assert_eq!(declared, names, "{}", op.name());
        }
    }

    #[test]
    fn every_wgsl_dispatch_binds_tensors_the_op_names() {
        use crate::kernels::{Binding, Slot, Variant, plan};
        let mut checked = 0;
        for op in planned_ops() {
            let names: Vec<&str> = op.contract().iter().map(|b| b.name).collect();
            for variant in Variant::builtin().into_iter().filter(|v| v.implements(&op)) {
                for dispatch in plan(&op, variant).expect("implemented variants plan") {
                    for (binding, slot) in &dispatch.bindings {
                        if let Slot::Tensor(name) = slot {
                            assert!(
                                names.contains(name) || Binding::optional(name),
                                "{} ({}): binding {binding} is {name}, not in {names:?}",
                                dispatch.entry,
                                op.name()
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "only {checked} slots checked");
    }

    #[test]
    fn the_wrong_struct_for_an_op_is_an_error_not_a_panic() {
        let op = Op::Add { len: 4 };
        let err = op.encode(bind::Unary { x: 0, y: 1 }).expect_err("wrong struct");
        assert!(err.to_string().contains("add given the tensors of"), "{err}");
        assert!(matches!(
            err,
            crate::Error::Kernel(e) if matches!(*e, KernelError::WrongTensors { op: "add", .. })
        ));
        let err = op
            .tensors::<usize, bind::Add<usize>>(vec![0, 1])
            .expect_err("too few");
        assert!(err.to_string().contains("add binds 3 tensors"), "{err}");
        assert!(matches!(
            err,
            crate::Error::Kernel(e) if matches!(*e, KernelError::WrongTensorCount { bindings: 3, given: 2, .. })
        ));
    }
}
