//! What stops a sweep before it measures, as values: a selection that names nothing runnable
//! (an unknown model, a batch of zero or beyond the limit, a precision the configuration or the
//! adapter cannot give, a kernel that does not exist, a backend this build lacks) and counts
//! out of range.

use crate::model::{MAX_BATCH, Precision};
use crate::{Error, ErrorKind};

/// An error of a sweep's request or selection (`run`, `verify`, `peers`, `ci`). Each message
/// names the flag or the thing and what to pass instead.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A precision of the configuration's `precisions` that is not one.
    #[error("{source}")]
    ConfiguredPrecision {
        /// What the precision's parser said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A model that is neither in the zoo nor in the configuration, which declares some.
    #[error("{source}; the configuration's models: {}", configured.join(", "))]
    UnknownModel {
        /// Why the zoo has no such model.
        #[source]
        source: Box<Error>,
        /// The models the configuration declares, by name.
        configured: Vec<String>,
    },
    /// `--batch 0`.
    #[error("--batch 0: a batch needs at least one image")]
    ZeroBatch,
    /// A batch beyond [`MAX_BATCH`] (or of zero) given to the harness.
    #[error("batch {batch} is out of range; use a batch between 1 and {}", MAX_BATCH)]
    BatchOutOfRange {
        /// The batch given.
        batch: usize,
    },
    /// `--kernel NAME` names no kernel variant.
    #[error("--kernel: {source}, or `auto`")]
    UnknownKernel {
        /// Why the name is not a variant (it lists the known ones).
        #[source]
        source: Box<Error>,
    },
    /// `--kernel NAME` names a variant that implements no op of the selection, so it would run
    /// nowhere and every benchmark would time convbench's other kernels under its name.
    #[error(
        "--kernel {variant}: it implements {implements}, and no op of {selection} is one, so it would \
         run nowhere; select a model or suite with such a layer (`cargo convbench list`){widen}"
    )]
    KernelRunsNowhere {
        /// The variant's id.
        variant: String,
        /// What it implements: `conv2d_forward (kernel 3x3, stride 1x1)`, or `conv2d_forward
        /// with a 3x3 stride-1 kernel` for Winograd.
        implements: String,
        /// The selection, by job label (a few, then a count).
        selection: String,
        /// `, or widen its `only` in the configuration` for a user kernel.
        widen: &'static str,
    },
    /// `--backend cuda` in a build without the `cuda` feature.
    #[error(
        "the cuda backend is not in this build; install with `cargo install cargo-convbench --features cuda`"
    )]
    NoCuda,
    /// A backend asked for a precision it cannot run.
    #[error(
        "{adapter} cannot run {precision} (the adapter lacks SHADER_F16); use --precision f32 or \
         another --adapter"
    )]
    UnsupportedPrecision {
        /// The backend's adapter, by label.
        adapter: String,
        /// The precision asked for.
        precision: Precision,
    },
    /// `verify --variants` where no backend runs WGSL kernel variants (`--backend cpu`): it
    /// would check nothing.
    #[error(
        "--variants checks the WGSL kernel variants, and the {backends} backend runs its own \
         kernels, so it would check nothing: pass --backend wgpu, or drop --variants to verify the \
         networks on {backends}"
    )]
    NoVariantBackend {
        /// The backends asked for, e.g. `cpu`.
        backends: String,
    },
    /// `verify --variants` whose variants implement no op at the precisions asked for (a kernel
    /// of your own without `f16 = true`, checked in f16): it would check nothing.
    #[error(
        "--variants: no op at {precisions} is implemented by {variants}, so there is nothing to \
         check; \
         pass --precision f32 (a kernel of your own runs in f16 only with `f16 = true` in its \
         declaration and `alias T = f32;` in its source)"
    )]
    NoVariantToCheck {
        /// The variant asked for (`--kernel`), or `any kernel variant`.
        variants: String,
        /// The precisions asked for, e.g. `f16`.
        precisions: String,
    },
    /// A count that must be at least 1 (`--samples`, `--rounds`, `--repeat`) is 0.
    #[error("{flag} must be at least 1")]
    ZeroCount {
        /// The flag, e.g. `--samples`.
        flag: &'static str,
    },
    /// More samples per benchmark than a record can keep.
    #[error(
        "--samples {samples} x --rounds {rounds} keeps more than {} samples per benchmark; the \
         gate needs rounds, not more samples: try --samples 10 --rounds 5",
        super::sweep::MAX_SAMPLES_PER_BENCHMARK
    )]
    TooManySamples {
        /// Timed iterations per round.
        samples: usize,
        /// Rounds.
        rounds: usize,
    },
}

impl SweepError {
    /// The exit-code category: what the adapter or the build lacks is the environment, the
    /// rest the user's input.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SweepError::NoCuda | SweepError::UnsupportedPrecision { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}
