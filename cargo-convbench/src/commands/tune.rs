//! `cargo convbench tune`: for every distinct (op, shape, precision) of the selected
//! benchmarks, verify and time each kernel variant, cache the fastest for this adapter (which
//! `run` then uses), and print a table of the timings.

use crate::args::Global;
use crate::args::{SelectionArgs, count};
use crate::output::print;
use convbench::config::{self, MAX_REPETITIONS, MAX_WARMUP_ITERATIONS};
use convbench::harness::tune::{TuneEvent, TuneProgress};
use convbench::harness::tune_run::TuneRequest;
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
    #[arg(long, default_value_t = TuneRequest::default().samples, allow_negative_numbers = true, value_parser = count::<1, MAX_REPETITIONS>)]
    pub samples: usize,
    /// Untimed runs of each variant first (at least 1).
    #[arg(long, default_value_t = TuneRequest::default().warmup_iterations, allow_negative_numbers = true, value_parser = count::<1, MAX_WARMUP_ITERATIONS>)]
    pub warmup: usize,
    /// Time variants without verifying them against the CPU reference first.
    #[arg(long)]
    pub no_verify: bool,
}

/// `cargo convbench tune`.
pub fn run(args: &Global, a: &TuneArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    let request = TuneRequest {
        selection: a.selection.selection(),
        data_grad: a.data_grad,
        adapter: a.adapter.clone(),
        samples: a.samples,
        warmup_iterations: a.warmup,
        verify: !a.no_verify,
    };
    let session = request.prepare(&workspace)?;
    let say = |line: &str| {
        if !args.quiet {
            eprintln!("{line}");
        }
    };
    for n in &session.notices {
        say(&format!("notice: {n}"));
    }
    say(&format!(
        "tuning {} distinct ops on {} ({} variants each at most)",
        session.ops.len(),
        session.adapter_label(),
        session.variants()
    ));
    // SIGINT or SIGTERM stops after the op being tuned: every finished op is already in the
    // cache, and the table shows them.
    let (results, stopped) = session.run(&crate::interrupt::install(), &mut |event| match event {
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
    })?;
    print(&convbench::report::tune_table(&results));
    let path = session.cache_path.display();
    match &stopped {
        Some(e) if e.kind() == ErrorKind::Interrupted => say(&format!(
            "tuned {} of {} ops before the interruption; {path} keeps them",
            results.len(),
            session.ops.len(),
        )),
        _ => say(&format!("wrote {path}")),
    }
    stopped.map_or(Ok(0), Err)
}
