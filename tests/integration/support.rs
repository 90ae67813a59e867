//! Shared test support: seeds, the GPU under test, random tensors.

use super::catalogue::{self, Convention, Expect};
use convbench::backend::wgpu::WgpuBackend;
use convbench::backend::{Backend, Program};
use convbench::harness::verify::{self, OpCheck};
use convbench::kernels::{Access, ConvGeom, DType, Op};
use convbench::model::{Conv2d, Precision};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};

/// The seed of this test run: `CONVBENCH_SEED` to replay, else fresh. Printed on failure by the
/// callers (every assertion message includes it).
pub fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        std::env::var("CONVBENCH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| rand::rng().random())
    })
}

/// A generator seeded from the run's seed and a test-specific salt.
pub fn rng(salt: u64) -> StdRng {
    StdRng::seed_from_u64(seed() ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Uniform values in `[-1, 1)`.
pub fn uniform(rng: &mut StdRng, len: usize) -> Vec<f32> {
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// The GPU under test, or `None` (with a notice) when there is none and
/// `CONVBENCH_REQUIRE_GPU` is not set. With `CONVBENCH_REQUIRE_GPU=1` a missing GPU fails.
pub fn gpu() -> Option<&'static WgpuBackend> {
    static GPU: OnceLock<Option<WgpuBackend>> = OnceLock::new();
    GPU.get_or_init(|| {
        let selector = std::env::var("CONVBENCH_ADAPTER").ok();
        match WgpuBackend::open(selector.as_deref()) {
            Ok(b) => Some(b),
            Err(e) if std::env::var("CONVBENCH_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
                panic!("CONVBENCH_REQUIRE_GPU=1 but no GPU adapter could be opened: {e}")
            }
            Err(e) => {
                eprintln!("skipping GPU tests: {e}");
                None
            }
        }
    })
    .as_ref()
}

/// The same adapter as [`gpu`], opened with subgroup operations off, so that the portable
/// form of the reductions runs even where the adapter has subgroups.
pub fn portable_gpu() -> Option<&'static WgpuBackend> {
    static GPU: OnceLock<Option<WgpuBackend>> = OnceLock::new();
    GPU.get_or_init(|| {
        gpu()?;
        let selector = std::env::var("CONVBENCH_ADAPTER").ok();
        let options = convbench::gpu::GpuOptions { subgroups: false };
        Some(WgpuBackend::open_with(selector.as_deref(), options).expect("the adapter opened once already"))
    })
    .as_ref()
}

/// A random convolution that fits its input: odd sizes, stride above one, padding, dilation,
/// groups, with or without bias, batch 1 to 3 (the op tests of every backend draw from it).
pub fn random_conv(rng: &mut StdRng) -> ConvGeom {
    loop {
        let groups = rng.random_range(1..=3);
        let conv = Conv2d {
            in_channels: groups * rng.random_range(1..=4),
            out_channels: groups * rng.random_range(1..=4),
            kernel: (rng.random_range(1..=4), rng.random_range(1..=4)),
            stride: (rng.random_range(1..=3), rng.random_range(1..=3)),
            padding: (rng.random_range(0..=2), rng.random_range(0..=2)),
            dilation: (rng.random_range(1..=2), rng.random_range(1..=2)),
            groups,
            bias: rng.random_bool(0.7),
        };
        let (n, h, w) = (
            rng.random_range(1..=3),
            rng.random_range(3..=12),
            rng.random_range(3..=12),
        );
        if let Some(g) = ConvGeom::new(conv, n, h, w) {
            return g;
        }
    }
}

/// Values in the op's domain for its binding `name`, uniform in `[-1, 1)` or, where the op
/// divides by them or takes their powers (LRN's scale, batch norm's variances), in `[1, 2)`.
pub fn input_values(op: &Op, name: &str, len: usize, rng: &mut StdRng) -> Vec<f32> {
    let positive = matches!(
        (op, name),
        (Op::LrnBackward { .. }, "scale")
            | (Op::BatchNormForwardEval { .. }, "running_var")
            | (Op::BatchNormBackward { .. }, "saved_invstd")
            | (Op::BatchNormForwardTrain { .. }, "running_var")
    );
    let values = uniform(rng, len);
    if positive {
        values.into_iter().map(|v| 1.0 + v.abs()).collect()
    } else {
        values
    }
}

/// Per (backend, op, precision): worst ratio of error to bound on the largest case, and that
/// case's element count.
type WorstTable = BTreeMap<(String, String, &'static str), (f64, usize)>;
static WORST: Mutex<WorstTable> = Mutex::new(BTreeMap::new());

/// Runs `op` on `backend` on random inputs (outputs poisoned with NaN by the verifier) and
/// checks it against the f64 reference; returns the worst ratio of error to bound.
pub fn check_on(backend: &dyn Backend, op: &Op, precision: Precision, rng: &mut StdRng) -> f64 {
    let contract = op.contract();
    let mut program = Program::new(precision);
    let ids: Vec<usize> = contract
        .iter()
        .map(|b| program.tensor(b.name, b.len, b.dtype))
        .collect();
    program.push(op.clone(), ids.clone()).expect("op contract");
    let kind = backend.kind().as_str();
    let context = || {
        format!(
            "{} {precision} on {kind} (seed {}, replay with CONVBENCH_SEED={}); op: {op:?}",
            op.name(),
            seed(),
            seed()
        )
    };
    let mut loaded = backend
        .load(&program)
        .unwrap_or_else(|e| panic!("{}: {e}", context()));
    for (b, &id) in contract.iter().zip(&ids) {
        match b.dtype {
            DType::U32 => {
                let classes = (contract[0].len / b.len) as u32;
                let labels: Vec<u32> = (0..b.len).map(|_| rng.random_range(0..classes)).collect();
                loaded.write_u32(id, &labels).expect("write labels");
            }
            DType::Float => loaded
                .write(id, &input_values(op, b.name, b.len, rng))
                .expect("write"),
        }
    }
    let result =
        verify::check_op(loaded.as_mut(), &program, 0).unwrap_or_else(|e| panic!("{}: {e}", context()));
    assert_within_bound(&result, context());
    let size: usize = contract.iter().map(|b| b.len).sum();
    let mut table = WORST.lock().expect("lock");
    let entry = table
        .entry((kind.to_string(), op.name().to_string(), precision.as_str()))
        .or_insert((0.0, 0));
    if size > entry.1 {
        *entry = (result.ratio, size);
    } else if size == entry.1 {
        entry.0 = entry.0.max(result.ratio);
    }
    result.ratio
}

/// Runs each op on `backend` in f32, and in f16 when the backend has it, then prints the worst
/// ratio of error to bound per op and precision.
pub fn check_all_on(backend: &dyn Backend, ops: &[Op], rng: &mut StdRng) {
    for op in ops {
        check_on(backend, op, Precision::F32, rng);
        if backend.supports(Precision::F16) {
            check_on(backend, op, Precision::F16, rng);
        }
    }
    let kind = backend.kind().as_str();
    let table = WORST.lock().expect("lock");
    for op in ops.iter().map(Op::name).collect::<BTreeSet<_>>() {
        for p in ["f32", "f16"] {
            if let Some((err, size)) = table.get(&(kind.to_string(), op.to_string(), p)) {
                eprintln!("error/bound {kind:<5} {op:<32} {p}  {err:.3}  (largest case: {size} elements)");
            }
        }
    }
}

/// Fails with the worst element, its error and bound, and `context` (which names the seed),
/// unless `check` passed.
pub fn assert_within_bound(check: &OpCheck, context: impl std::fmt::Display) {
    assert!(
        check.passed(),
        "binding {} element {}: got {:e}, expected {:e}, error {:.1} times its bound {:.2e}: {context}",
        check.binding,
        check.element,
        check.got,
        check.expected,
        check.ratio,
        check.bound,
    );
}

/// Runs every convention case of the catalogue ([`catalogue::conventions`]) on `backend`, in f32
/// and in f16 when the backend has it.
pub fn check_conventions_on(backend: &dyn Backend, rng: &mut StdRng) {
    for case in catalogue::conventions() {
        check_convention_on(backend, &case, Precision::F32, rng);
        if backend.supports(Precision::F16) {
            check_convention_on(backend, &case, Precision::F16, rng);
        }
    }
}

/// Allowed `|reference - PyTorch|`, relative to `max(1, |PyTorch|)`, at `precision`: the expected
/// values are exact f64 (or, for LRN's gradient, central differences good to about 1e-9); the
/// reference reads the inputs as the backend stores them. The LRN cases' `x` and `dy` are
/// multiples of 1/4, exact in f16, but the saved `y` and `scale` are rounded (relative 2^-24 in
/// f32, 2^-11 in f16), which moves the gradient by a few times that. A mirrored window is off
/// by 0.1 or more.
fn convention_tolerance(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => 1e-5,
        Precision::F16 => 1e-2,
    }
}

/// Runs one convention case on `backend` at `precision`: a rejected case must fail to push,
/// load or take its inputs with the expected message; any other must give the expected values
/// in the reference and agree with the reference on the backend.
pub fn check_convention_on(backend: &dyn Backend, case: &Convention, precision: Precision, rng: &mut StdRng) {
    let op = &case.op;
    let kind = backend.kind().as_str();
    let context = format!(
        "{} ({} {precision} on {kind}, seed {})",
        case.about,
        op.name(),
        seed()
    );
    let outcome = (|| -> convbench::Result<convbench::harness::verify::OpCheck> {
        let contract = op.contract();
        let mut program = Program::new(precision);
        let ids: Vec<usize> = contract
            .iter()
            .map(|b| program.tensor(b.name, b.len, b.dtype))
            .collect();
        program.push(op.clone(), ids.clone())?;
        let mut loaded = backend.load(&program)?;
        for (b, &id) in contract.iter().zip(&ids) {
            match b.dtype {
                DType::U32 => {
                    let classes = (contract[0].len / b.len) as u32;
                    let labels = case
                        .labels
                        .clone()
                        .unwrap_or_else(|| (0..b.len).map(|_| rng.random_range(0..classes)).collect());
                    loaded.write_u32(id, &labels)?;
                }
                DType::Float if b.access != Access::Write => {
                    let values = case
                        .floats
                        .iter()
                        .find(|(name, _)| *name == b.name)
                        .map_or_else(|| input_values(op, b.name, b.len, rng), |(_, v)| v.clone());
                    loaded.write(id, &values)?;
                }
                DType::Float => {}
            }
        }
        let expected = verify::reference_outputs(loaded.as_mut(), &program, 0)?;
        if let Expect::Outputs(outputs) = &case.expect {
            for (name, want) in outputs {
                let binding = op.position(name).expect("the case names a binding");
                let got = &expected
                    .iter()
                    .find(|e| e.binding == binding)
                    .expect("an output")
                    .values;
                for (element, (&r, &w)) in got.iter().zip(want).enumerate() {
                    let agree = (r.is_nan() && w.is_nan())
                        || (r - w).abs() <= convention_tolerance(precision) * w.abs().max(1.0);
                    assert!(
                        agree,
                        "reference {name}[{element}] = {r}, PyTorch's {w}: {context}"
                    );
                }
                assert_eq!(got.len(), want.len(), "{name}: {context}");
            }
        }
        verify::check_against(loaded.as_mut(), &program, 0, &expected)
    })();
    match (&case.expect, outcome) {
        (Expect::Outputs(_), Ok(check)) => assert_within_bound(&check, &context),
        (Expect::Outputs(_), Err(e)) => panic!("{e}: {context}"),
        (Expect::Rejected(fragments), Err(e)) => {
            let message = e.to_string();
            assert_eq!(
                e.kind(),
                convbench::ErrorKind::InvalidInput,
                "{message}: {context}"
            );
            for fragment in *fragments {
                assert!(
                    message.contains(fragment),
                    "no `{fragment}` in `{message}`: {context}"
                );
            }
        }
        (Expect::Rejected(_), Ok(_)) => panic!("ran instead of being rejected: {context}"),
    }
}
