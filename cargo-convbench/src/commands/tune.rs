//! `cargo convbench tune`: for every distinct (op, shape, precision) of the selected
//! benchmarks, verify and time each kernel variant, cache the fastest for this adapter (which
//! `run` then uses), and print a table of the timings.

use crate::args::Global;
use crate::args::{SelectionArgs, count};
use crate::output::print;
use convbench::backend::Backend;
use convbench::backend::wgpu::WgpuBackend;
use convbench::config::{self, MAX_REPETITIONS, MAX_WARMUP_ITERATIONS};
use convbench::harness::plan::PlanOptions;
use convbench::harness::sweep::is_real_gpu;
use convbench::harness::tune::{TuneCache, TuneEvent, TuneOptions, TuneProgress, distinct_ops, tune_all};
use convbench::kernels::Variant;
use convbench::{ErrorKind, Result};

/// Arguments of `tune`.
#[derive(Debug, Clone, clap::Args)]
pub struct TuneArgs {
    /// What to tune: the ops of the benchmarks `run` would run with the same flags.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Also tune the first layer's input gradient (as `run --data-grad` computes it).
    #[arg(long)]
    pub data_grad: bool,
    /// Adapter: index, backend name (vulkan, metal, dx12, gl) or part of its name.
    #[arg(long, env = "CONVBENCH_ADAPTER")]
    pub adapter: Option<String>,
    /// Timed runs of each variant (the median is compared).
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = count::<1, MAX_REPETITIONS>)]
    pub samples: usize,
    /// Untimed runs of each variant first (at least 1).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = count::<1, MAX_WARMUP_ITERATIONS>)]
    pub warmup: usize,
    /// Time variants without verifying them against the CPU reference first.
    #[arg(long)]
    pub no_verify: bool,
}

/// `cargo convbench tune`.
pub fn run(args: &Global, a: &TuneArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    let kernels = workspace.kernel_set()?;
    let backend = WgpuBackend::open(a.adapter.as_deref())?;
    let options = TuneOptions {
        warmup_iterations: a.warmup.max(1),
        samples: a.samples,
        verify: !a.no_verify,
        ..TuneOptions::default()
    };
    let plan_options = PlanOptions {
        stage: a.selection.selection().stage,
        data_grad: a.data_grad,
        max_tensor_bytes: backend.max_tensor_bytes(),
    };
    let mut notices = Vec::new();
    let benchmarks = a
        .selection
        .selection()
        .jobs(&workspace.config, is_real_gpu(&backend), &mut notices)?;
    let say = |line: &str| {
        if !args.quiet {
            eprintln!("{line}");
        }
    };
    for n in &notices {
        say(&format!("notice: {n}"));
    }
    let jobs = benchmarks
        .iter()
        .map(|job| (&job.target, job.batch, job.precision));
    let ops = distinct_ops(&backend, jobs, plan_options)?;
    let adapter = backend.adapter().clone();
    let path = TuneCache::path(&workspace.target_dir, &adapter.slug());
    if let Some(notice) = TuneCache::restart_notice(&path, &adapter) {
        say(&format!("notice: {notice}"));
    }
    say(&format!(
        "tuning {} distinct ops on {} ({} variants each at most)",
        ops.len(),
        adapter.label(),
        Variant::all_in(&kernels).len()
    ));
    // SIGINT or SIGTERM stops after the op being tuned: every finished op is already in the
    // cache, and the table shows them.
    let interrupt = crate::interrupt::install();
    let (results, stopped) = tune_all(
        &backend,
        &ops,
        &kernels,
        &options,
        &path,
        &interrupt,
        &mut |event| match event {
            TuneProgress::Op {
                label,
                event: TuneEvent::Verifying,
            } => say(&format!("{label}: verifying every variant")),
            TuneProgress::Op {
                label,
                event: TuneEvent::Timing(v),
            } => say(&format!("{label}: timing {v}")),
            TuneProgress::Rejected {
                label,
                variant,
                ratio,
            } => say(&format!(
                "warning: {label}: {variant} disagrees with the CPU reference (error {ratio:.1} times its \
             rounding bound); skipped"
            )),
        },
    )?;
    print(&convbench::report::tune_table(&results));
    match &stopped {
        Some(e) if e.kind() == ErrorKind::Interrupted => say(&format!(
            "tuned {} of {} ops before the interruption; {} keeps them",
            results.len(),
            ops.len(),
            path.display()
        )),
        _ => say(&format!("wrote {}", path.display())),
    }
    stopped.map_or(Ok(0), Err)
}
