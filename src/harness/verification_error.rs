//! What a failed verification says, as a value: which kernel, which element, how far off, the
//! seed that repeats it, and whose fault it is. Callers (the gate, `verify`, `tune`) act on the
//! fields; the message is rendered once, by `Display`.

use crate::model::Precision;

/// Whose kernel failed, which decides the next step the message gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Culprit {
    /// One of the user's kernels (`user:NAME`): fix it.
    User,
    /// convbench's own kernel, far beyond rounding: a bug to report.
    Convbench,
    /// convbench's own kernel, just beyond rounding: reported as such, not called a bug.
    Marginal,
}

/// A kernel, a peer's network or every variant of an op disagreed with the reference.
#[derive(Debug, Clone, PartialEq)]
pub enum VerificationError {
    /// One op of a program: an output element beyond its rounding bound (`run`, `ab`, `ci`).
    Mismatch {
        /// The op in its program, e.g. its layer.
        describe: String,
        /// The op's name.
        op: &'static str,
        /// The kernel variant's id.
        variant: String,
        /// The output tensor.
        tensor: String,
        /// The element's index in it.
        element: usize,
        /// What the kernel gave.
        got: f64,
        /// What the reference gives.
        expected: f64,
        /// The error over its bound.
        ratio: f64,
        /// The storage precision.
        precision: Precision,
        /// The rounding bound.
        bound: f64,
        /// The seed of the data, when known.
        seed: Option<u64>,
        /// Whose kernel it is.
        culprit: Culprit,
    },
    /// A row of the conformance table (`verify`): the worst element over its shapes.
    Conformance {
        /// The op's name.
        op: &'static str,
        /// The kernel variant's id.
        variant: String,
        /// The storage precision.
        precision: Precision,
        /// The shape and element of the worst ratio.
        worst: String,
        /// Its absolute error.
        worst_error: f64,
        /// The error over its bound.
        ratio: f64,
        /// The rounding bound.
        bound: f64,
        /// The seed; `verify --variants --seed` repeats it.
        seed: u64,
        /// Whose kernel it is ([`Culprit::User`] or [`Culprit::Convbench`]).
        culprit: Culprit,
    },
    /// `tune` found no variant of these ops that agrees with the reference.
    NoVariantAgrees {
        /// The ops, as `tune` labels them.
        ops: Vec<String>,
    },
    /// A peer built another network than the one asked for.
    PeerNetwork {
        /// The peer's backend name.
        peer: String,
        /// The network.
        model: String,
        /// The peer's parameters and convbench's.
        params: (usize, usize),
        /// The peer's forward FLOPs and convbench's.
        flops: (u64, u64),
        /// The batch.
        batch: usize,
    },
}

const REPORT_BUG: &str = "this is a kernel bug: please report it with the output of `cargo convbench adapters`; \
                          meanwhile `--kernel direct` runs the plainest kernels";

impl std::fmt::Display for VerificationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerificationError::Mismatch {
                describe,
                op,
                variant,
                tensor,
                element,
                got,
                expected,
                ratio,
                precision,
                bound,
                seed,
                culprit,
            } => {
                let seed = seed.map(|s| format!(" (data seed {s})")).unwrap_or_default();
                let verdict = match culprit {
                    Culprit::User => "fix the kernel (its contract: `cargo convbench kernels --contract OP`)",
                    Culprit::Convbench => REPORT_BUG,
                    Culprit::Marginal => {
                        "that is beyond what rounding explains, though not by far (an accumulation in \
                         lower precision or in an unusual order?): please report it with the output \
                         of `cargo convbench adapters`"
                    }
                };
                write!(
                    f,
                    "{describe} disagrees with the CPU reference: {op} ({variant} kernel) output \
                     `{tensor}` element {element} is {got:e} where the reference gives {expected:e}, \
                     an error of {:.2e}, {ratio:.1} times its {precision} rounding bound of \
                     {bound:.2e}{seed}; {verdict}. `--no-verify` skips the check, at the cost of \
                     timing kernels that may compute something else",
                    (got - expected).abs(),
                )
            }
            VerificationError::Conformance {
                op,
                variant,
                precision,
                worst,
                worst_error,
                ratio,
                bound,
                seed,
                culprit,
            } => {
                let whose = match culprit {
                    Culprit::User => {
                        "fix the kernel (its contract: `cargo convbench kernels --contract OP`); it is \
                         not run or timed until it passes"
                    }
                    Culprit::Convbench | Culprit::Marginal => {
                        "this is a convbench kernel bug: please report it with the output of \
                         `cargo convbench adapters`; meanwhile `--kernel direct` runs the plainest \
                         kernels"
                    }
                };
                write!(
                    f,
                    "kernel variant {variant} of {op} ({precision}) disagrees with the f64 reference \
                     on {worst}: an error of {worst_error:.2e}, {ratio:.1} times the rounding bound \
                     of {bound:.2e} (seed {seed}; `cargo convbench verify --variants --kernel \
                     {variant} --precision {precision} --seed {seed}` repeats it); {whose}"
                )
            }
            VerificationError::NoVariantAgrees { ops } => write!(
                f,
                "no kernel variant of {} agrees with the CPU reference; this is a kernel bug: please \
                 report it with `cargo convbench adapters` output",
                ops.join(", ")
            ),
            VerificationError::PeerNetwork {
                peer,
                model,
                params,
                flops,
                batch,
            } => write!(
                f,
                "the {peer} peer's {model} has {} parameters and {} forward FLOPs at batch {batch}, \
                 convbench's {} and {}: it built another network",
                params.0, flops.0, params.1, flops.1
            ),
        }
    }
}

impl std::error::Error for VerificationError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn mismatch(variant: &str, ratio: f64, culprit: Culprit) -> VerificationError {
        VerificationError::Mismatch {
            describe: "conv1 of lenet".into(),
            op: "conv2d_forward",
            variant: variant.into(),
            tensor: "y".into(),
            element: 7,
            got: 1.5,
            expected: 1.0,
            ratio,
            precision: Precision::F32,
            bound: 1e-6,
            seed: Some(42),
            culprit,
        }
    }

    #[test]
    fn a_user_kernel_is_for_its_author_to_fix_and_only_convbench_kernels_are_reported() {
        let user = mismatch("user:conv-tiled", 5e5, Culprit::User).to_string();
        assert!(
            user.contains("fix the kernel") && !user.contains("report"),
            "{user}"
        );
        assert!(user.contains("(data seed 42)"), "{user}");
        let bug = mismatch("direct", 5e5, Culprit::Convbench).to_string();
        assert!(
            bug.contains("kernel bug") && bug.contains("--kernel direct"),
            "{bug}"
        );
        let marginal = mismatch("direct", 1.5, Culprit::Marginal).to_string();
        assert!(
            !marginal.contains("kernel bug") && marginal.contains("not by far"),
            "{marginal}"
        );
        let error = crate::Error::from(mismatch("direct", 2.0, Culprit::Marginal));
        assert_eq!(error.kind(), crate::ErrorKind::Verification);
    }
}
