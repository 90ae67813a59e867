//! Conformance of kernel variants: every variant of every op that has variants (convbench's
//! GEMM tiles and Winograd, and the user's kernels) against the f64 reference on random shapes,
//! without timing anything. It is `cargo convbench verify`'s variant table and the check a user
//! kernel passes before it is run or timed.
//!
//! Shapes are drawn from a seeded generator and respect the variant's constraints (a user
//! kernel's `only`, Winograd's 3x3 stride 1): the first is at batch 1, sizes are odd or even at
//! random, with strides, padding, dilation 2 and channel groups where the constraints allow. Each
//! shape gets fresh random inputs in `[-1, 1)`, the outputs are poisoned with NaN, and every
//! element must be within the reference's rounding bound ([`super::verify`]). Small shapes fit
//! in one workgroup of most variants, so when none of the drawn shapes gives one of the
//! variant's dispatches three workgroups or more, a wider shape that does is added: the
//! workgroups after the first, and the last one's edge, are verified on every seed.

use super::select::has_variants;
use super::verify;
use crate::backend::Backend;
use crate::kernels::user::{KernelSet, Only};
use crate::kernels::{ConvGeom, LinearGeom, Op, Variant};
use crate::model::{Conv2d, Precision};
use crate::{Error, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The ops that have kernel variants.
pub const VARIANT_OPS: [&str; 6] = crate::kernels::user::SUPPORTED_OPS;

/// One line of the conformance table: a variant of an op at a precision over random shapes.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Op name.
    pub op: &'static str,
    /// Variant id.
    pub variant: String,
    /// Storage precision.
    pub precision: Precision,
    /// Shapes verified.
    pub shapes: usize,
    /// The worst element's absolute error.
    pub worst_error: f64,
    /// That element's rounding bound (the tolerance).
    pub bound: f64,
    /// Worst ratio of error to bound; above 1 fails.
    pub ratio: f64,
    /// The shape and element of the worst ratio, for a failure's message.
    pub worst: String,
}

impl Row {
    /// Whether every element of every shape was within its bound.
    pub fn passed(&self) -> bool {
        self.ratio <= 1.0
    }
}

/// The constraints a variant's shapes must meet, as shape hints for the generator.
fn hints(variant: Variant) -> Only {
    match variant {
        Variant::User(kernel) => kernel.0.only.clone(),
        Variant::Winograd => Only {
            kernel: Some([3, 3]),
            stride: Some([1, 1]),
            dilation: Some([1, 1]),
            ..Only::default()
        },
        _ => Only::default(),
    }
}

/// The fully connected op named `op` of geometry `g`.
fn linear_named(op: &str, g: LinearGeom) -> Option<Op> {
    match op {
        "linear_forward" => Some(Op::LinearForward(g)),
        "linear_backward_data" => Some(Op::LinearBackwardData(g)),
        "linear_backward_params" => Some(Op::LinearBackwardParams(g)),
        _ => None,
    }
}

/// The convolution op named `op` of `conv` at `batch`, on an input from the kernel's extent to
/// `extra` more on each axis (none when no input fits).
fn conv_op(op: &str, conv: Conv2d, batch: usize, extra: usize, rng: &mut StdRng) -> Option<Op> {
    let (h, w) = (
        span(conv.kernel.0, conv.dilation.0) + rng.random_range(0..=extra),
        span(conv.kernel.1, conv.dilation.1) + rng.random_range(0..=extra),
    );
    let g = ConvGeom::new(conv, batch, h, w)?;
    match op {
        "conv2d_forward" => Some(Op::Conv2dForward(g)),
        "conv2d_backward_data" => Some(Op::Conv2dBackwardData(g)),
        "conv2d_backward_filter" => Some(Op::Conv2dBackwardFilter(g)),
        _ => None,
    }
}

/// `only`'s padding, or one below the kernel's extent on each axis.
fn padding_for(only: &Only, kernel: (usize, usize), rng: &mut StdRng) -> (usize, usize) {
    only.padding.map_or_else(
        || {
            (
                rng.random_range(0..kernel.0.max(1)),
                rng.random_range(0..kernel.1.max(1)),
            )
        },
        |[a, b]| (a, b),
    )
}

/// The input extent a kernel of `k` taps at dilation `d` covers.
const fn span(k: usize, d: usize) -> usize {
    d * (if k == 0 { 1 } else { k } - 1) + 1
}

/// A random op named `op` whose shape meets `only`; `first` gives batch 1.
pub fn random_op(op: &str, only: &Only, first: bool, rng: &mut StdRng) -> Option<Op> {
    random_op_scaled(op, only, first, 1, rng)
}

/// [`random_op`] with channels, features and spatial sizes drawn from ranges `scale` times as
/// wide (scale 1 is [`random_op`]'s shapes).
fn random_op_scaled(op: &str, only: &Only, first: bool, scale: usize, rng: &mut StdRng) -> Option<Op> {
    let scale = scale.max(1);
    let batch = if first { 1 } else { rng.random_range(1..=3) };
    let bias = only.bias.unwrap_or_else(|| rng.random_bool(0.5));
    if op.starts_with("linear") {
        let g = LinearGeom::new(
            batch,
            rng.random_range(1..=40 * scale),
            rng.random_range(1..=24 * scale),
            bias,
        );
        return linear_named(op, g);
    }
    let pair = |rng: &mut StdRng, fixed: Option<[usize; 2]>, range: std::ops::RangeInclusive<usize>| {
        fixed.map_or_else(
            || (rng.random_range(range.clone()), rng.random_range(range.clone())),
            |[a, b]| (a, b),
        )
    };
    let groups = only
        .groups
        .unwrap_or_else(|| if rng.random_bool(0.25) { 2 } else { 1 });
    let kernel = pair(rng, only.kernel, 1..=5);
    let stride = pair(rng, only.stride, 1..=3);
    let dilation = only.dilation.map_or_else(
        || if rng.random_bool(0.2) { (2, 2) } else { (1, 1) },
        |[a, b]| (a, b),
    );
    let padding = padding_for(only, kernel, rng);
    let conv = Conv2d {
        in_channels: groups * rng.random_range(1..=3 * scale),
        out_channels: groups * rng.random_range(1..=4 * scale),
        kernel,
        stride,
        padding,
        dilation,
        groups,
        bias,
    };
    conv_op(op, conv, batch, 9 * scale, rng)
}

/// A shape of `op` meeting `only` that exercises what random draws may miss, added to every
/// variant's shapes: for a convolution, channel groups, and a kernel, stride and dilation that
/// differ between height and width (a kernel that mixes up an axis, or ignores groups or
/// dilation, fails it); for a fully connected op, a slice of a wider output (`y_offset`,
/// `y_stride`), as a layer too large for one binding is computed. Where `only` fixes a
/// property, its value is kept.
fn demanding_op(op: &str, only: &Only, rng: &mut StdRng) -> Option<Op> {
    let batch = rng.random_range(2..=3);
    let bias = only.bias.unwrap_or_else(|| rng.random_bool(0.5));
    if op.starts_with("linear") {
        let mut g = LinearGeom::new(batch, rng.random_range(1..=40), rng.random_range(1..=24), bias);
        g.y_offset = rng.random_range(1..=5);
        g.y_stride = g.out_features + g.y_offset + rng.random_range(1..=5);
        return linear_named(op, g);
    }
    // Two different values from `range`, in a random order.
    let uneven = |rng: &mut StdRng, fixed: Option<[usize; 2]>, low: usize, high: usize| {
        fixed.map_or_else(
            || {
                let a = rng.random_range(low..=high);
                let b = low + (a - low + rng.random_range(1..=high - low)) % (high - low + 1);
                (a, b)
            },
            |[a, b]| (a, b),
        )
    };
    let groups = only.groups.unwrap_or_else(|| rng.random_range(2..=3));
    let kernel = uneven(rng, only.kernel, 2, 4);
    let stride = uneven(rng, only.stride, 1, 3);
    let dilation = uneven(rng, only.dilation, 1, 2);
    let padding = padding_for(only, kernel, rng);
    let conv = Conv2d {
        in_channels: groups * rng.random_range(1..=3),
        out_channels: groups * rng.random_range(1..=3),
        kernel,
        stride,
        padding,
        dilation,
        groups,
        bias,
    };
    conv_op(op, conv, batch, 6, rng)
}

/// A short description of `op`'s shape for messages.
pub fn describe(op: &Op) -> String {
    match op {
        Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) | Op::Conv2dBackwardFilter(g) => {
            let c = &g.conv;
            format!(
                "x {}x{}x{}x{} -> {} channels, kernel {}x{}, stride {}x{}, padding {}x{}, dilation {}x{}, \
                 groups {}, {}",
                g.input.n,
                g.input.c,
                g.input.h,
                g.input.w,
                c.out_channels,
                c.kernel.0,
                c.kernel.1,
                c.stride.0,
                c.stride.1,
                c.padding.0,
                c.padding.1,
                c.dilation.0,
                c.dilation.1,
                c.groups,
                if c.bias { "bias" } else { "no bias" }
            )
        }
        Op::LinearForward(g) | Op::LinearBackwardData(g) | Op::LinearBackwardParams(g) => format!(
            "batch {}, {} -> {} features, {}",
            g.batch,
            g.in_features,
            g.out_features,
            if g.bias { "bias" } else { "no bias" }
        ),
        other => other.name().to_string(),
    }
}

/// Workgroups a shape must give one of the variant's dispatches for the shapes to cover more
/// than one workgroup and a workgroup past it: the indexing of workgroups after the first, and
/// the last one's edge.
const WIDE_WORKGROUPS: u64 = 3;

/// The most arithmetic a wide shape may take (the f64 reference computes it too).
const WIDE_FLOPS: u64 = 400_000_000;

/// Whether one of `variant`'s dispatches for `op` has [`WIDE_WORKGROUPS`] or more workgroups.
fn spans_workgroups(variant: Variant, op: &Op) -> bool {
    crate::kernels::plan(op, variant)
        .is_ok_and(|dispatches| dispatches.iter().any(|d| d.grid.workgroups() >= WIDE_WORKGROUPS))
}

/// A random shape of `op` meeting `only` that [`spans_workgroups`], from ranges widened step by
/// step so that it is about the smallest such shape the draw finds. Small random shapes fit in
/// one workgroup of most variants, and a kernel that indexes workgroups wrongly (one declaring
/// `outputs-per-invocation = 4` but writing one element per invocation, say) passes every
/// shape that fits in one. `None` when no shape within [`WIDE_FLOPS`] spans that many.
fn wide_op(variant: Variant, op: &str, only: &Only, precision: Precision, rng: &mut StdRng) -> Option<Op> {
    for scale in [2, 3, 4, 6, 8, 12, 16] {
        for _ in 0..30 {
            if let Some(candidate) = random_op_scaled(op, only, false, scale, rng)
                && candidate.flops() <= WIDE_FLOPS
                && variant.implements_at(&candidate, precision)
                && spans_workgroups(variant, &candidate)
            {
                return Some(candidate);
            }
        }
    }
    None
}

/// The shapes [`check_variant`] verifies: `shapes` random ones (the first at batch 1), a
/// [`demanding_op`], and a wide one when none of them [`spans_workgroups`]; none when the
/// variant implements no such op.
fn draw_shapes(variant: Variant, op: &str, precision: Precision, shapes: usize, rng: &mut StdRng) -> Vec<Op> {
    let only = hints(variant);
    let mut ops = Vec::new();
    for _ in 0..shapes.max(1) * 50 {
        if ops.len() == shapes.max(1) {
            break;
        }
        if let Some(candidate) = random_op(op, &only, ops.is_empty(), rng)
            && variant.implements_at(&candidate, precision)
        {
            ops.push(candidate);
        }
    }
    if ops.is_empty() {
        return ops;
    }
    for _ in 0..50 {
        if let Some(candidate) = demanding_op(op, &only, rng)
            && variant.implements_at(&candidate, precision)
        {
            ops.push(candidate);
            break;
        }
    }
    if !ops.iter().any(|candidate| spans_workgroups(variant, candidate))
        && let Some(wide) = wide_op(variant, op, &only, precision, rng)
    {
        ops.push(wide);
    }
    ops
}

/// Verifies `variant` of the op named `op` at `precision` on `shapes` random shapes drawn from
/// `seed`, and one wider shape when none of them spans three workgroups of a
/// dispatch. `None` when the variant implements no such op (or not at this precision).
pub fn check_variant(
    backend: &dyn Backend,
    variant: Variant,
    op: &'static str,
    precision: Precision,
    shapes: usize,
    seed: u64,
) -> Result<Option<Row>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let ops = draw_shapes(variant, op, precision, shapes, &mut rng);
    if ops.is_empty() {
        return Ok(None);
    }
    let mut row = Row {
        op,
        variant: variant.id(),
        precision,
        shapes: ops.len(),
        worst_error: 0.0,
        bound: 0.0,
        ratio: 0.0,
        worst: String::new(),
    };
    for candidate in ops {
        let (program, mut loaded) =
            verify::load_variants(backend, &candidate, precision, &[variant], None, &mut rng)?;
        let expected = verify::reference_outputs(loaded.as_mut(), &program, 0)?;
        let check = verify::check_against(loaded.as_mut(), &program, 0, &expected)?;
        if check.ratio > row.ratio || (row.worst.is_empty() && check.ratio >= row.ratio) {
            row.ratio = check.ratio;
            row.worst_error = (check.got - check.expected).abs();
            row.bound = check.bound;
            let output = candidate.contract().get(check.binding).map_or("?", |b| b.name);
            row.worst = format!(
                "{}: output `{output}` element {} is {:e} where the reference gives {:e}",
                describe(&candidate),
                check.element,
                check.got,
                check.expected
            );
        }
    }
    Ok(Some(row))
}

/// [`check_variant`] for every variant in `variants` and every op it implements, at each of
/// `precisions` the backend supports: the rows of the conformance table, in op order. `interrupt`
/// set stops it before the next variant ([`super::Interrupted::Variants`]); `on_row` has heard
/// each row finished before.
pub fn check_all(
    backend: &dyn Backend,
    variants: &[Variant],
    precisions: &[Precision],
    shapes: usize,
    seed: u64,
    interrupt: &super::Interrupt,
    on_row: &mut dyn FnMut(&Row),
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for op in VARIANT_OPS {
        for &precision in precisions {
            if !backend.supports(precision) {
                continue;
            }
            for &variant in variants {
                interrupt.check(&super::Interrupted::Variants)?;
                if let Some(row) = check_variant(backend, variant, op, precision, shapes, seed)? {
                    on_row(&row);
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

/// The error for a failed row: the variant, the worst element, the seed, and what to do.
pub fn failure(row: &Row, seed: u64) -> Error {
    super::VerificationError::Conformance {
        op: row.op,
        variant: row.variant.clone(),
        precision: row.precision,
        worst: row.worst.clone(),
        worst_error: row.worst_error,
        ratio: row.ratio,
        bound: row.bound,
        seed,
        culprit: if row.variant.starts_with(crate::kernels::user::ID_PREFIX) {
            super::Culprit::User
        } else {
            super::Culprit::Convbench
        },
    }
    .into()
}

/// One line of a seed sweep ([`sweep`]): a row of the conformance table over many seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// The row of the worst seed (its `shapes` summed over every seed).
    pub worst: Row,
    /// The seed of the worst row.
    pub worst_seed: u64,
    /// Seeds verified.
    pub seeds: usize,
    /// Seeds whose row failed, in order.
    pub failed_seeds: Vec<u64>,
}

/// [`check_all`] once per seed of `seeds`, each with fresh shapes and data: per op, variant and
/// precision, the worst ratio and its seed, and every seed that failed. `on_seed` is called
/// before each seed (for progress). Failures do not stop the sweep: they are its result. An
/// error (a device lost, `interrupt` set before a seed) stops it, and is returned beside the
/// lines of the seeds finished before it.
pub fn sweep(
    backend: &dyn Backend,
    variants: &[Variant],
    precisions: &[Precision],
    shapes: usize,
    seeds: std::ops::Range<u64>,
    interrupt: &super::Interrupt,
    on_seed: &mut dyn FnMut(u64),
) -> (Vec<SweepRow>, Option<Error>) {
    let mut lines: Vec<SweepRow> = Vec::new();
    for seed in seeds {
        if let Err(e) = interrupt.check(&super::Interrupted::Variants) {
            return (lines, Some(e));
        }
        on_seed(seed);
        let rows = match check_all(
            backend,
            variants,
            precisions,
            shapes,
            seed,
            interrupt,
            &mut |_| {},
        ) {
            Ok(rows) => rows,
            Err(e) => return (lines, Some(e)),
        };
        for row in rows {
            let same = |line: &&mut SweepRow| {
                line.worst.op == row.op
                    && line.worst.variant == row.variant
                    && line.worst.precision == row.precision
            };
            match lines.iter_mut().find(same) {
                Some(line) => {
                    line.seeds += 1;
                    if !row.passed() {
                        line.failed_seeds.push(seed);
                    }
                    let shapes = line.worst.shapes + row.shapes;
                    if row.ratio > line.worst.ratio {
                        line.worst = row;
                        line.worst_seed = seed;
                    }
                    line.worst.shapes = shapes;
                }
                None => lines.push(SweepRow {
                    failed_seeds: if row.passed() { Vec::new() } else { vec![seed] },
                    worst: row,
                    worst_seed: seed,
                    seeds: 1,
                }),
            }
        }
    }
    (lines, None)
}

/// Verifies a user kernel on `shapes` random shapes at each of `precisions` it runs in, before
/// anything runs it: the first failure is a [`Error::Verification`] naming the element and seed.
pub fn verify_user_kernel(
    backend: &dyn Backend,
    variant: Variant,
    precisions: &[Precision],
    shapes: usize,
    seed: u64,
) -> Result<Vec<Row>> {
    let rows = check_all(
        backend,
        &[variant],
        precisions,
        shapes,
        seed,
        &super::Interrupt::default(),
        &mut |_| {},
    )?;
    if let Some(failed) = rows.iter().find(|row| !row.passed()) {
        return Err(failure(failed, seed));
    }
    Ok(rows)
}

/// The variants `--kernel NAME` puts in the conformance table: every one for `auto`
/// (convbench's and the user's `kernels`), else the one named.
pub fn requested_variants(name: &str, kernels: &KernelSet) -> Result<Vec<Variant>> {
    match name {
        "auto" => Ok(Variant::all_in(kernels)),
        one => Ok(vec![Variant::parse_in(one, kernels)?]),
    }
}

/// The table of one backend with variants: its label ([`super::backend_label`]) and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendRows<R> {
    /// The backend, e.g. `wgpu (llvmpipe, Vulkan)`.
    pub label: String,
    /// Its rows: [`Row`]s of one seed, or [`SweepRow`]s of many.
    pub rows: Vec<R>,
}

/// [`check_all`] on each of `backends` that has variants, in order, stopping after the first
/// whose table has a failed row: the tables checked, and beside them the error that stopped the
/// check ([`failure`] of the first failed row, or the device's).
pub fn check_backends(
    backends: &[Box<dyn Backend>],
    variants: &[Variant],
    precisions: &[Precision],
    shapes: usize,
    seed: u64,
    interrupt: &super::Interrupt,
) -> (Vec<BackendRows<Row>>, Option<Error>) {
    each_backend(backends, |backend| {
        let mut done = Vec::new();
        match check_all(
            backend,
            variants,
            precisions,
            shapes,
            seed,
            interrupt,
            &mut |row| done.push(row.clone()),
        ) {
            Ok(rows) => {
                let failed = rows
                    .iter()
                    .find(|row| !row.passed())
                    .map(|row| failure(row, seed));
                (rows, failed)
            }
            // The variants checked before the stop are shown.
            Err(e) => (done, Some(e)),
        }
    })
}

/// Runs `check` on each of `backends` that has variants, in order, and makes a table of each
/// one's rows; the first error `check` returns beside its rows (its own, or a failed row's) stops
/// the rest and is returned beside the tables. A stopped backend's table is left out when it
/// has no rows.
fn each_backend<R>(
    backends: &[Box<dyn Backend>],
    mut check: impl FnMut(&dyn Backend) -> (Vec<R>, Option<Error>),
) -> (Vec<BackendRows<R>>, Option<Error>) {
    let mut tables = Vec::new();
    for backend in backends.iter().filter(|b| has_variants(b.kind())) {
        let (rows, error) = check(backend.as_ref());
        if error.is_none() || !rows.is_empty() {
            tables.push(BackendRows {
                label: super::backend_label(backend.as_ref()),
                rows,
            });
        }
        if error.is_some() {
            return (tables, error);
        }
    }
    (tables, None)
}

/// A seed sweep that cannot be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ConformanceError {
    /// `--seeds 0`.
    #[error("--seeds must be at least 1")]
    NoSeeds,
    /// `--seed` and `--seeds` run past the last 64-bit seed.
    #[error("--seed {first} plus --seeds {seeds} passes 2^64; choose a smaller seed")]
    SeedsPastU64 {
        /// The first seed.
        first: u64,
        /// How many seeds.
        seeds: u64,
    },
}

impl ConformanceError {
    /// The exit-code category: always the user's input.
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::InvalidInput
    }
}

/// The seeds of a seed sweep: `seeds` seeds from `first`; none, or more than fit below 2^64, is
/// invalid input.
pub fn seed_range(first: u64, seeds: u64) -> Result<std::ops::Range<u64>, ConformanceError> {
    if seeds == 0 {
        return Err(ConformanceError::NoSeeds);
    }
    let last = first
        .checked_add(seeds)
        .ok_or(ConformanceError::SeedsPastU64 { first, seeds })?;
    Ok(first..last)
}

/// [`sweep`] over `seeds` on each of `backends` that has variants, in order, stopping after the
/// first whose table has a failed line: the tables, and beside them the error that stopped the
/// sweep ([`failure`] of the worst failed line at its seed, or the device's). `on_seed` is
/// called before each seed.
pub fn sweep_backends(
    backends: &[Box<dyn Backend>],
    variants: &[Variant],
    precisions: &[Precision],
    shapes: usize,
    seeds: std::ops::Range<u64>,
    interrupt: &super::Interrupt,
    on_seed: &mut dyn FnMut(u64),
) -> (Vec<BackendRows<SweepRow>>, Option<Error>) {
    each_backend(backends, |backend| {
        let (lines, error) = sweep(
            backend,
            variants,
            precisions,
            shapes,
            seeds.clone(),
            interrupt,
            on_seed,
        );
        if error.is_some() {
            // The seeds finished before the stop are shown.
            return (lines, error);
        }
        let failed = lines
            .iter()
            .filter(|line| !line.failed_seeds.is_empty())
            .max_by(|x, y| x.worst.ratio.total_cmp(&y.worst.ratio))
            .map(|line| failure(&line.worst, line.worst_seed));
        (lines, failed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_without_variants_has_no_table() {
        let backends: Vec<Box<dyn Backend>> = vec![Box::new(crate::backend::cpu::CpuBackend::new())];
        let (tables, error) = check_backends(
            &backends,
            &[Variant::Direct],
            &[Precision::F32],
            1,
            7,
            &crate::harness::Interrupt::default(),
        );
        assert!(tables.is_empty() && error.is_none(), "{tables:?} {error:?}");
        let (lines, error) = sweep_backends(
            &backends,
            &[Variant::Direct],
            &[Precision::F32],
            1,
            7..9,
            &crate::harness::Interrupt::default(),
            &mut |_| {},
        );
        assert!(lines.is_empty() && error.is_none(), "{lines:?} {error:?}");
    }

    #[test]
    fn a_seed_sweep_needs_a_seed_and_room_below_2_to_the_64() {
        assert_eq!(seed_range(5, 3).ok(), Some(5..8));
        assert_eq!(seed_range(u64::MAX - 1, 1).ok(), Some(u64::MAX - 1..u64::MAX));
        assert!(matches!(seed_range(5, 0), Err(ConformanceError::NoSeeds)));
        for (first, seeds) in [(u64::MAX, 1), (2, u64::MAX)] {
            let error = seed_range(first, seeds).expect_err("past 2^64");
            assert!(
                matches!(error, ConformanceError::SeedsPastU64 { first: f, seeds: s } if (f, s) == (first, seeds)),
                "{error}"
            );
            let kind = crate::Error::from(error).kind();
            assert_eq!(kind, crate::ErrorKind::InvalidInput, "{first} + {seeds}");
        }
    }

    #[test]
    fn auto_puts_every_variant_in_the_table_and_a_name_only_its_own() {
        let none = KernelSet::default();
        assert_eq!(requested_variants("auto", &none).ok(), Some(Variant::builtin()));
        assert_eq!(
            requested_variants("direct", &none).ok(),
            Some(vec![Variant::Direct])
        );
        let kind = requested_variants("no_such_variant", &none)
            .err()
            .map(|e| e.kind());
        assert_eq!(kind, Some(crate::ErrorKind::InvalidInput));
    }

    #[test]
    fn every_variant_is_verified_on_a_shape_spanning_several_workgroups() {
        use crate::harness::verify_run::RANDOM_SHAPES;
        use crate::kernels::GemmTile;
        let variants = Variant::builtin();
        assert!(
            variants
                .iter()
                .any(|v| matches!(v, Variant::Gemm(GemmTile { .. })))
        );
        for seed in 0..8 {
            for op in VARIANT_OPS {
                for &variant in &variants {
                    let mut rng = StdRng::seed_from_u64(seed);
                    let ops = draw_shapes(variant, op, Precision::F32, RANDOM_SHAPES, &mut rng);
                    if ops.is_empty() {
                        continue;
                    }
                    assert!(
                        ops.iter().any(|shape| spans_workgroups(variant, shape)),
                        "{op} with {} at seed {seed}: {:?}",
                        variant.id(),
                        ops.iter().map(describe).collect::<Vec<_>>()
                    );
                    assert!(ops.len() <= RANDOM_SHAPES + 2);
                    if ops.len() > RANDOM_SHAPES + 1 {
                        assert!(ops[RANDOM_SHAPES + 1].flops() <= WIDE_FLOPS);
                    }
                }
            }
        }
    }

    /// Whatever the seed, a variant is verified on a convolution with groups and a kernel,
    /// stride and dilation that differ between the axes, or on a sliced fully connected op,
    /// where it implements one (left to chance, a kernel that ignores dilation passed many
    /// seeds); `only` keeps what it fixes.
    #[test]
    fn every_seed_draws_a_demanding_shape() {
        let user_like = Variant::builtin()
            .into_iter()
            .filter(|v| matches!(v, Variant::Direct))
            .collect::<Vec<_>>();
        assert!(!user_like.is_empty());
        for seed in 0..40 {
            for op in VARIANT_OPS {
                let mut rng = StdRng::seed_from_u64(seed);
                let ops = draw_shapes(user_like[0], op, Precision::F32, 1, &mut rng);
                let demanding = ops.iter().any(|shape| match shape {
                    Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) | Op::Conv2dBackwardFilter(g) => {
                        let c = &g.conv;
                        c.groups > 1
                            && c.kernel.0 != c.kernel.1
                            && c.stride.0 != c.stride.1
                            && c.dilation.0 != c.dilation.1
                    }
                    Op::LinearForward(g) | Op::LinearBackwardData(g) | Op::LinearBackwardParams(g) => {
                        g.is_slice() && g.y_offset > 0
                    }
                    _ => false,
                });
                assert!(
                    demanding,
                    "{op} at seed {seed}: {:?}",
                    ops.iter().map(describe).collect::<Vec<_>>()
                );
            }
        }
        let only = Only {
            kernel: Some([3, 3]),
            groups: Some(1),
            ..Only::default()
        };
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..50 {
            let drawn = demanding_op("conv2d_forward", &only, &mut rng).expect("a shape");
            assert!(only.admits(&drawn), "{drawn:?}");
        }
    }

    #[test]
    fn random_shapes_respect_the_constraints_and_start_at_batch_1() {
        let only = Only {
            kernel: Some([3, 3]),
            stride: Some([1, 1]),
            groups: Some(2),
            bias: Some(false),
            ..Only::default()
        };
        let mut rng = StdRng::seed_from_u64(7);
        let mut seen_dilated = false;
        for op in VARIANT_OPS.iter().filter(|op| op.starts_with("conv")) {
            for k in 0..200 {
                let Some(drawn) = random_op(op, &only, k == 0, &mut rng) else {
                    continue;
                };
                assert!(only.admits(&drawn), "{drawn:?}");
                assert_eq!(drawn.name(), *op);
                if let Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) | Op::Conv2dBackwardFilter(g) = &drawn
                {
                    assert!(k != 0 || g.input.n == 1, "the first shape is at batch 1");
                    seen_dilated |= g.conv.dilation != (1, 1);
                }
            }
        }
        assert!(seen_dilated, "dilation is drawn where the constraints allow it");
        assert_eq!(only.describe(), "kernel 3x3, stride 1x1, groups 2, no bias");
        assert_eq!(Only::default().describe(), "all shapes");
    }
}
