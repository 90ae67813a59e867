//! `cargo convbench tune`: for every distinct (op, shape, precision) of the selected
//! benchmarks, verify and time each kernel variant, cache the fastest for this adapter (which
//! `run` then uses), and print a table of the timings.

use crate::args::{SelectionArgs, count};
use crate::cli::Args;
use crate::output::print;
use convbench::backend::Backend;
use convbench::backend::wgpu::WgpuBackend;
use convbench::config::{self, MAX_REPETITIONS, MAX_WARMUP_ITERATIONS};
use convbench::harness::plan::PlanOptions;
use convbench::harness::sweep::is_real_gpu;
use convbench::harness::tune::{Outcome, TuneCache, TuneEvent, TuneOptions, shape_key, tune_jobs, tune_op};
use convbench::kernels::Variant;
use convbench::{Error, Result};
use std::collections::HashSet;

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
pub fn run(args: &Args, a: &TuneArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    convbench::kernels::user::load_all(&workspace.kernels)?;
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
    let mut seen = HashSet::new();
    let mut ops = Vec::new();
    for job in &benchmarks {
        if !backend.supports(job.precision) {
            return Err(Error::Environment(format!(
                "{} cannot run {} (the adapter lacks SHADER_F16); use --precision f32",
                backend.adapter().label(),
                job.precision
            )));
        }
        ops.extend(tune_jobs(
            &job.target,
            job.batch,
            job.precision,
            plan_options,
            &mut seen,
        )?);
    }

    let adapter = backend.adapter().clone();
    let path = TuneCache::path(&workspace.target_dir, &adapter.slug());
    match TuneCache::load(&path) {
        Ok(Some(c)) if c.adapter != adapter => say(&format!(
            "notice: {} was tuned on another driver; starting afresh",
            path.display()
        )),
        Ok(_) => {}
        Err(e) => say(&format!("notice: {e}; starting afresh")),
    }
    say(&format!(
        "tuning {} distinct ops on {} ({} variants each at most)",
        ops.len(),
        adapter.label(),
        Variant::all().len()
    ));
    // SIGINT or SIGTERM stops after the op being tuned: every finished op is already in the
    // cache, and the table shows them.
    let interrupt = crate::interrupt::install();
    let mut results = Vec::with_capacity(ops.len());
    let mut unverified = Vec::new();
    for (index, job) in ops.iter().enumerate() {
        if interrupt.requested() {
            print(&convbench::report::tune_table(&results));
            say(&format!(
                "tuned {index} of {} ops before the interruption; {} keeps them",
                ops.len(),
                path.display()
            ));
            return Err(Error::Interrupted(format!(
                "every op was tuned ({index} of {} were)",
                ops.len()
            )));
        }
        let name = format!(
            "[{}/{}] {} {} {}",
            index + 1,
            ops.len(),
            job.op.name(),
            shape_key(&job.op),
            job.precision
        );
        let result = tune_op(&backend, job, &options, &mut |event| match event {
            TuneEvent::Verifying => say(&format!("{name}: verifying every variant")),
            TuneEvent::Timing(v) => say(&format!("{name}: timing {v}")),
        })?;
        for v in &result.variants {
            if let Outcome::Failed { ratio } = v.outcome {
                say(&format!(
                    "warning: {name}: {} disagrees with the CPU reference (error {ratio:.1} times its \
                     rounding bound); skipped",
                    v.variant
                ));
            }
        }
        match result.winner {
            // Merged into the file as it is now: a concurrent `tune` keeps its entries too.
            Some(_) => {
                TuneCache::insert_saved(&path, &adapter, &result)?;
            }
            None => unverified.push(name),
        }
        results.push(result);
    }
    print(&convbench::report::tune_table(&results));
    say(&format!("wrote {}", path.display()));
    if !unverified.is_empty() {
        return Err(Error::Verification(format!(
            "no kernel variant of {} agrees with the CPU reference; this is a kernel bug: please \
             report it with `cargo convbench adapters` output",
            unverified.join(", ")
        )));
    }
    Ok(0)
}
