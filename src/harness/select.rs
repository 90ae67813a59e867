//! Choosing the kernel variant of every op of a program: forced (`--kernel`), tuned (the
//! winners `cargo convbench tune` cached for this adapter), or the shape heuristic.
//!
//! Only backends that run the registry's shaders have variants (wgpu); the others keep
//! [`Variant::Direct`], which is what their results record.

use super::tune::TuneCache;
use crate::backend::{BackendKind, Program};
use crate::kernels::user::{KernelSet, UserRef};
use crate::kernels::variant::DeviceClass;
use crate::kernels::{Op, Variant};
use crate::model::Precision;

/// How each op's kernel variant is chosen.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum KernelChoice {
    /// [`Variant::heuristic_on`]: from the op's shape and the kind of device, nothing measured.
    #[default]
    Heuristic,
    /// The winner cached by `tune` for the op's shape and precision, else the heuristic.
    Tuned {
        /// The winners.
        cache: TuneCache,
        /// The workspace's kernels: a cached `user:NAME` winner is one of them (a winner they
        /// lack is ignored).
        kernels: KernelSet,
    },
    /// This variant wherever it implements the op (at the op's precision) and fits the device
    /// ([`Variant::fits`]), the heuristic's choice elsewhere: a forced tile or Winograd, like a user's kernel, changes only the ops
    /// it can run, so the rest of the step times as usual (`--kernel direct` implements every
    /// op).
    Force(Variant),
    /// `inner`'s choice, with every user kernel it picks replaced by the kernel of the same
    /// name in `kernels` (the base revision's side of an A/B); a user kernel `kernels` lacks
    /// falls back to the heuristic.
    Mapped {
        /// The choice to map.
        inner: Box<KernelChoice>,
        /// The replacements, by name.
        kernels: std::collections::BTreeMap<String, UserRef>,
    },
}

impl KernelChoice {
    /// The variant `op` runs with at `precision` on a `device`.
    pub fn variant(&self, op: &Op, precision: Precision, device: DeviceClass) -> Variant {
        let heuristic = || Variant::heuristic_on(op, device);
        match self {
            KernelChoice::Heuristic => heuristic(),
            KernelChoice::Tuned { cache, kernels } => cache
                .winner(op, precision, kernels)
                .filter(|v| v.fits(op, device))
                .unwrap_or_else(heuristic),
            KernelChoice::Force(v) if v.implements_at(op, precision) && v.fits(op, device) => *v,
            KernelChoice::Force(_) => heuristic(),
            KernelChoice::Mapped { inner, kernels } => match inner.variant(op, precision, device) {
                Variant::User(kernel) => kernels
                    .get(&kernel.0.name)
                    .map_or_else(heuristic, |k| Variant::User(*k)),
                other => other,
            },
        }
    }
}

/// Whether programs on `backend` run kernel variants.
pub fn has_variants(backend: BackendKind) -> bool {
    backend == BackendKind::Wgpu
}

/// Sets the variant of every op of `program` as `choice` says, for a `device`.
pub fn choose(program: &mut Program, choice: &KernelChoice, device: DeviceClass) {
    let precision = program.precision;
    for call in &mut program.ops {
        call.variant = choice.variant(&call.op, precision, device);
    }
}

/// Gives `verify` (a plan of the same target at a smaller batch, op for op) the variants
/// chosen for `measured`, and pins the size-dependent paths each takes at the measured size
/// (split-K runs, the input gradient's lowering and chunks: [`crate::kernels::path`]), so that
/// verification checks the kernels and the code paths that will be timed. When the programs do
/// not match op for op, `verify` chooses for itself.
pub fn copy_variants(measured: &Program, verify: &mut Program, choice: &KernelChoice, device: DeviceClass) {
    let same_ops = measured.ops.len() == verify.ops.len()
        && measured
            .ops
            .iter()
            .zip(&verify.ops)
            .all(|(m, v)| m.op.name() == v.op.name());
    if same_ops {
        for (m, v) in measured.ops.iter().zip(&mut verify.ops) {
            v.variant = m.variant;
            v.pin = crate::kernels::path(&m.op, m.variant);
        }
    } else {
        choose(verify, choice, device);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::ConvGeom;
    use crate::model::Conv2d;

    /// A forced or tuned `direct` that would loop past a CPU adapter's limit leaves the op to
    /// the heuristic there, and runs as asked on a GPU.
    #[test]
    fn direct_past_the_loop_limit_falls_back_to_the_heuristic_on_cpu_adapters() {
        let conv = Conv2d::square(3, 64, 3, 1, 1);
        let long = Op::Conv2dBackwardFilter(ConvGeom::new(conv, 1, 320, 320).expect("fits"));
        let short = Op::Conv2dBackwardFilter(ConvGeom::new(conv, 1, 32, 32).expect("fits"));
        let force = KernelChoice::Force(Variant::Direct);
        let f32 = Precision::F32;
        assert_eq!(force.variant(&long, f32, DeviceClass::Gpu), Variant::Direct);
        assert_eq!(force.variant(&short, f32, DeviceClass::Cpu), Variant::Direct);
        let cpu = force.variant(&long, f32, DeviceClass::Cpu);
        assert_eq!(cpu, Variant::heuristic_on(&long, DeviceClass::Cpu));
        assert!(matches!(cpu, Variant::Gemm(_)), "{cpu:?}");
    }

    /// Asserts that every op of `verify` runs the entry points its twin in `measured` runs.
    /// Returns how many of them run split-K.
    fn assert_same_entry_points(measured: &Program, verify: &Program, context: &str) -> usize {
        let entries = |call: &crate::backend::OpCall| -> std::collections::BTreeSet<&str> {
            let planned = crate::kernels::plan_pinned(&call.op, call.variant, call.pin);
            planned.expect("plans").iter().map(|d| d.entry).collect()
        };
        assert_eq!(measured.ops.len(), verify.ops.len(), "{context}");
        for (m, v) in measured.ops.iter().zip(&verify.ops) {
            assert_eq!(entries(m), entries(v), "{context}: {}", m.op.name());
        }
        verify.ops.iter().filter(|v| v.pin.runs.is_some()).count()
    }

    /// Verification at batch 2 takes the paths the timed batch 8 takes, with every tile: split-K
    /// (AlexNet's conv2 weight gradient splits at 8, 5,832 positions, and not at 2 by itself)
    /// and the lowering of input gradients (which the cost model may choose differently at 2).
    #[test]
    fn the_verified_plan_takes_the_timed_plans_paths() {
        let alexnet = crate::model::network("alexnet").expect("alexnet");
        let options = crate::harness::PlanOptions {
            stage: crate::results::Stage::Train,
            data_grad: false,
            max_tensor_bytes: u64::MAX,
        };
        let plan = |batch| crate::harness::plan::plan_network(&alexnet, batch, Precision::F32, options);
        let mut split = 0;
        for tile in crate::kernels::variant::GEMM_TILES {
            let mut measured = plan(8).expect("plans").program;
            let mut verify = plan(2).expect("plans").program;
            let choice = KernelChoice::Force(Variant::Gemm(tile));
            choose(&mut measured, &choice, DeviceClass::Gpu);
            copy_variants(&measured, &mut verify, &choice, DeviceClass::Gpu);
            split += assert_same_entry_points(&measured, &verify, &format!("{tile:?}"));
        }
        assert!(split > 0, "no weight gradient of AlexNet at batch 8 splits");
    }

    /// The same for the heuristic's choices on every network of the zoo, timed at batch 64, on
    /// both kinds of device.
    #[test]
    fn the_zoo_verifies_the_paths_it_times() {
        let options = crate::harness::PlanOptions {
            stage: crate::results::Stage::Train,
            data_grad: true,
            max_tensor_bytes: u64::MAX,
        };
        for network in crate::model::zoo() {
            for device in [DeviceClass::Gpu, DeviceClass::Cpu] {
                let plan =
                    |batch| crate::harness::plan::plan_network(&network, batch, Precision::F32, options);
                let mut measured = plan(64).expect("plans").program;
                let mut verify = plan(2).expect("plans").program;
                choose(&mut measured, &KernelChoice::Heuristic, device);
                copy_variants(&measured, &mut verify, &KernelChoice::Heuristic, device);
                assert_same_entry_points(&measured, &verify, &format!("{} {device:?}", network.name));
            }
        }
    }
}
