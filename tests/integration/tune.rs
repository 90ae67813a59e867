//! Kernel selection and autotuning: the tune cache (format, atomic save, lookups), `tune_op`
//! verifying and timing every variant, and the variants a run records per layer.

use super::support::{gpu, seed};
use convbench::harness::plan::PlanOptions;
use convbench::harness::select::KernelChoice;
use convbench::harness::tune::{
    Outcome, TUNE_FORMAT_VERSION, TuneCache, TuneJob, TuneOptions, TuneResult, VariantResult, tune_jobs,
    tune_op,
};
use convbench::harness::{RunOptions, Target, measure, verify_target};
use convbench::kernels::user::KernelSet;
use convbench::kernels::variant::{CPU_BLOCK_TILES, DeviceClass, GEMM_TILES};
use convbench::kernels::{ConvGeom, LinearGeom, Op, PoolGeom, Variant};
use convbench::model::{Conv2d, Pool2d, Precision, Shape, SuiteEntry, network};
use convbench::results::{AdapterFingerprint, Phase, Stage};
use std::collections::HashSet;
use std::time::Duration;

fn small_conv() -> ConvGeom {
    ConvGeom {
        conv: Conv2d::square(5, 12, 3, 1, 1),
        input: Shape::new(2, 5, 9, 7),
        output: Shape::new(2, 12, 9, 7),
    }
}

fn adapter() -> AdapterFingerprint {
    AdapterFingerprint {
        backend: "vulkan".into(),
        vendor_id: 0x10005,
        device_id: 0,
        name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
        device_type: "cpu".into(),
        driver: "llvmpipe".into(),
        driver_info: "Mesa 22.3.6".into(),
        runtime_version: "30.0.1".into(),
    }
}

fn result(op: Op, winner: Variant) -> TuneResult {
    TuneResult {
        job: TuneJob {
            verify_op: op.clone(),
            op,
            precision: Precision::F32,
        },
        variants: vec![
            VariantResult {
                variant: winner,
                outcome: Outcome::Timed {
                    median_ns: 1e6,
                    samples_ns: vec![1_000_000],
                },
            },
            VariantResult {
                variant: Variant::Direct,
                outcome: Outcome::Pruned { first_ns: 9_000_000 },
            },
        ],
        winner: Some(winner),
    }
}

#[test]
fn tune_cache_round_trips_and_looks_up_winners() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = TuneCache::path(dir.path(), &adapter().slug());
    assert!(path.ends_with("convbench/tune-vulkan-llvmpipe-llvm-15-0-6-256-bits-10005-0000.json"));
    assert_eq!(TuneCache::load(&path).expect("no cache is not an error"), None);

    let op = Op::Conv2dForward(small_conv());
    let tile = Variant::Gemm(GEMM_TILES[2]);
    let mut cache = TuneCache::new(adapter());
    cache.insert(&result(op.clone(), tile));
    cache.save(&path).expect("saved");
    let loaded = TuneCache::load(&path).expect("readable").expect("present");
    assert_eq!(loaded, cache);
    assert_eq!(
        loaded.winner(&op, Precision::F32, &KernelSet::default()),
        Some(tile)
    );
    assert_eq!(
        loaded.winner(&op, Precision::F16, &KernelSet::default()),
        None,
        "precision is part of the key"
    );
    let other_batch = Op::Conv2dForward(ConvGeom {
        input: Shape::new(3, 5, 9, 7),
        output: Shape::new(3, 12, 9, 7),
        ..small_conv()
    });
    assert_eq!(
        loaded.winner(&other_batch, Precision::F32, &KernelSet::default()),
        None,
        "the shape is part of the key"
    );
    let entry = loaded.entries.values().next().expect("one entry");
    assert_eq!(
        entry.median_ns.len(),
        1,
        "only fully timed variants have a median"
    );
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().expect("folder"))
        .expect("listable")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "the atomic save leaves no temporary file");
}

#[test]
fn tune_cache_rejects_other_formats_and_ignores_unknown_winners() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("tune.json");
    let op = Op::Conv2dForward(small_conv());
    let mut cache = TuneCache::new(adapter());
    cache.insert(&result(op.clone(), Variant::Gemm(GEMM_TILES[0])));
    for entry in cache.entries.values_mut() {
        entry.winner = "gemm_from_a_newer_build".into();
    }
    cache.save(&path).expect("saved");
    let loaded = TuneCache::load(&path).expect("readable").expect("present");
    assert_eq!(loaded.winner(&op, Precision::F32, &KernelSet::default()), None);

    cache.format_version = TUNE_FORMAT_VERSION + 1;
    cache.save(&path).expect("saved");
    let error = TuneCache::load(&path).expect_err("a newer format is refused");
    assert!(error.to_string().contains("cargo convbench tune"), "{error}");
    std::fs::write(&path, "{ not json").expect("written");
    assert!(TuneCache::load(&path).is_err());
}

const GPU: DeviceClass = DeviceClass::Gpu;

#[test]
fn kernel_choice_forces_only_where_a_variant_implements_the_op() {
    // Large enough for a tile: the heuristic runs small GEMMs `direct`.
    let conv = Op::Conv2dForward(ConvGeom::new(Conv2d::square(16, 32, 3, 1, 1), 2, 32, 32).expect("fits"));
    let pool = Op::PoolForward(PoolGeom {
        pool: Pool2d::max(2, 2, 0, false),
        input: Shape::new(1, 2, 4, 4),
        output: Shape::new(1, 2, 2, 2),
    });
    let tile = Variant::Gemm(GEMM_TILES[1]);
    let forced = KernelChoice::Force(tile);
    assert_eq!(forced.variant(&conv, Precision::F32, GPU), tile);
    assert_eq!(forced.variant(&pool, Precision::F32, GPU), Variant::Direct);
    // Winograd runs only 3x3 stride-1 convolutions: elsewhere the usual choice, not `direct`.
    let wide = Op::Conv2dForward(ConvGeom::new(Conv2d::square(6, 10, 5, 1, 2), 2, 48, 48).expect("fits"));
    let winograd = KernelChoice::Force(Variant::Winograd);
    assert_eq!(
        winograd.variant(&wide, Precision::F32, GPU),
        Variant::heuristic(&wide)
    );
    assert_ne!(Variant::heuristic(&wide), Variant::Direct);
    assert_eq!(
        KernelChoice::Heuristic.variant(&pool, Precision::F32, GPU),
        Variant::Direct
    );
    assert_ne!(
        KernelChoice::Heuristic.variant(&conv, Precision::F32, GPU),
        Variant::Direct
    );
    let mut cache = TuneCache::new(adapter());
    cache.insert(&result(conv.clone(), Variant::Direct));
    let tuned = KernelChoice::Tuned {
        cache,
        kernels: KernelSet::default(),
    };
    assert_eq!(
        tuned.variant(&conv, Precision::F32, GPU),
        Variant::Direct,
        "the cached winner"
    );
    assert_eq!(
        tuned.variant(&conv, Precision::F16, GPU),
        Variant::heuristic(&conv),
        "not tuned: the heuristic"
    );
    // On a CPU adapter the heuristic's block tiles are their 16x16-block twins.
    let Variant::Gemm(tile) = tuned.variant(&conv, Precision::F16, DeviceClass::Cpu) else {
        panic!("a tile for {conv:?}");
    };
    assert!(CPU_BLOCK_TILES.contains(&tile), "{tile:?}");
    assert_eq!(
        tuned.variant(&pool, Precision::F16, DeviceClass::Cpu),
        Variant::Direct
    );
}

#[test]
fn tune_jobs_are_the_distinct_gemm_ops() {
    let target = Target::Model(network("alexnet").expect("in the zoo"));
    let options = PlanOptions {
        stage: Stage::Train,
        data_grad: false,
        max_tensor_bytes: u64::MAX,
    };
    let mut seen = HashSet::new();
    let jobs = tune_jobs(&target, 4, Precision::F32, options, &mut seen).expect("planned");
    // 5 convolutions x 3 ops, less conv1's input gradient; 3 fully connected layers x 3.
    assert_eq!(jobs.len(), 5 * 3 - 1 + 3 * 3);
    assert!(jobs.iter().all(|j| Variant::has_gemm(&j.op)));
    for job in &jobs {
        assert_eq!(job.op.name(), job.verify_op.name());
        assert!(
            job.verify_op.flops() <= job.op.flops() / 2,
            "verified at a smaller batch"
        );
    }
    let again = tune_jobs(&target, 4, Precision::F32, options, &mut seen).expect("planned");
    assert!(again.is_empty(), "already seen");
}

#[test]
fn tune_op_verifies_and_times_every_variant() {
    let Some(backend) = gpu() else { return };
    let g = LinearGeom::new(3, 40, 24, true);
    let job = TuneJob {
        op: Op::LinearForward(g),
        verify_op: Op::LinearForward(g),
        precision: Precision::F32,
    };
    let options = TuneOptions {
        samples: 2,
        prune_factor: f64::INFINITY,
        ..TuneOptions::default()
    };
    let mut timed = Vec::new();
    let result = tune_op(backend, &job, &KernelSet::default(), &options, &mut |e| {
        timed.push(e)
    })
    .unwrap_or_else(|e| panic!("seed {}: {e}", seed()));
    assert_eq!(
        result.variants.len(),
        Variant::candidates_in(&job.op, &KernelSet::default()).len()
    );
    for v in &result.variants {
        match &v.outcome {
            Outcome::Timed { samples_ns, .. } => assert_eq!(samples_ns.len(), 2),
            other => panic!("{}: {other:?}", v.variant),
        }
    }
    let winner = result.winner.expect("a winner");
    let fastest = result
        .variants
        .iter()
        .filter_map(|v| match v.outcome {
            Outcome::Timed { median_ns, .. } => Some((median_ns, v.variant)),
            _ => None,
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, v)| v);
    assert_eq!(Some(winner), fastest);
}

fn small_entry() -> Target {
    Target::SuiteLayer {
        suite: "test".into(),
        entry: SuiteEntry {
            name: "small".into(),
            conv: Conv2d::square(6, 10, 3, 1, 1),
            input: (6, 11, 9),
            default_batch: 2,
        },
    }
}

#[test]
fn runs_record_the_variant_of_every_layer() {
    let Some(backend) = gpu() else { return };
    let tile = Variant::Gemm(GEMM_TILES[3]);
    for (choice, expected) in [
        (KernelChoice::Force(Variant::Direct), Variant::Direct),
        (KernelChoice::Force(tile), tile),
    ] {
        let options = RunOptions {
            samples: 1,
            warmup_iterations: 0,
            warmup_min: Duration::ZERO,
            layers: true,
            kernels: choice,
            ..RunOptions::default()
        };
        let target = small_entry();
        verify_target(backend, &target, 2, Precision::F32, &options, &mut |_| {})
            .unwrap_or_else(|e| panic!("{expected} (seed {}): {e}", seed()));
        let result = measure(backend, &target, 2, Precision::F32, &options, &mut |_| {}).expect("measured");
        let phases: Vec<Phase> = result.layers.iter().map(|l| l.phase).collect();
        assert_eq!(phases, [Phase::Forward, Phase::GradInput, Phase::GradParams]);
        for layer in &result.layers {
            assert_eq!(layer.variant, expected.id(), "{:?}", layer.phase);
        }
    }
}
