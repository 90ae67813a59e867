//! `cargo convbench verify`: every op of the selected networks and suites against the f64
//! reference, without timing anything, and a table of the worst ratio of error to rounding
//! bound per op. It is what `run` does before it times a benchmark, for the whole zoo at once:
//! the conformance check of an adapter, a driver or a change to the kernels.

use crate::args::{DeviceArgs, KernelArgs, SelectionArgs, count, count_u64};
use crate::cli::Args;
use crate::progress::Progress;
use convbench::config::{self, MAX_REPETITIONS};
use convbench::harness::conformance;
use convbench::harness::select::{KernelChoice, has_variants};
use convbench::harness::sweep::{VerifyScope, unsupported};
use convbench::harness::verify::Summary;
use convbench::harness::{RunOptions, verify_target};
use convbench::kernels::Variant;
use convbench::kernels::tint::TintCheck;
use convbench::model::Precision;
use convbench::report::verification_table;
use convbench::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

/// Arguments of `verify`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// What to verify; with no model or suite named (here or in the configuration), every
    /// model of the zoo at batch 1, in every precision the adapter has.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Where to run it.
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Which kernels run.
    #[command(flatten)]
    pub kernels: KernelArgs,
    /// Verify this many times, each with fresh random data.
    #[arg(long, default_value_t = 1, value_name = "N", allow_negative_numbers = true, value_parser = count::<1, MAX_REPETITIONS>)]
    pub repeat: usize,
    /// Random shapes per op, variant and precision in the kernel-variant table.
    #[arg(long, default_value_t = 3, value_name = "N", allow_negative_numbers = true, value_parser = count::<0, MAX_REPETITIONS>)]
    pub random_shapes: usize,
    /// Seed of the variant table's shapes and data (default: fresh each run, printed).
    #[arg(long, value_name = "SEED")]
    pub seed: Option<u64>,
    /// Only the kernel-variant table: every variant of every op with variants (convbench's and
    /// the workspace's own kernels) on random shapes, not the networks.
    #[arg(long)]
    pub variants: bool,
    /// With `--variants`: a seed sweep, the table over this many seeds (`--seed`, `--seed` + 1,
    /// ...), with the worst ratio of each line, its seed, and every seed that failed.
    #[arg(
        long,
        value_name = "N",
        requires = "variants",
        allow_negative_numbers = true, value_parser = count_u64::<1, { MAX_REPETITIONS as u64 }>
    )]
    pub seeds: Option<u64>,
}

/// Verifies every kernel variant (and the user's kernels) on random shapes on each backend with
/// variants; prints the table; the first failed row is the error.
fn verify_variants(
    a: &VerifyArgs,
    backends: &[Box<dyn convbench::backend::Backend>],
    precisions: &[Precision],
    quiet: bool,
) -> Result<()> {
    let seed = a.seed.unwrap_or_else(rand::random);
    let variants = match a.kernels.kernel.as_str() {
        "auto" => Variant::all(),
        one => vec![one.parse::<Variant>()?],
    };
    if let Some(seeds) = a.seeds {
        return sweep_variants(a, backends, precisions, &variants, seed, seeds, quiet);
    }
    for backend in backends.iter().filter(|b| has_variants(b.kind())) {
        let label = format!("{} ({})", backend.kind().as_str(), backend.adapter().label());
        let rows = conformance::check_all(
            backend.as_ref(),
            &variants,
            precisions,
            a.random_shapes,
            seed,
            &mut |_| {},
        )?;
        crate::output::print(&format!(
            "{label}: kernel variants on {} random shapes each (seed {seed})\n{}",
            a.random_shapes,
            convbench::report::variant_table(&rows)
        ));
        if let Some(failed) = rows.iter().find(|row| !row.passed()) {
            return Err(conformance::failure(failed, seed));
        }
    }
    Ok(())
}

/// `verify --variants --seeds N`: the kernel-variant table over `seeds` seeds from `first`; one
/// line per op, variant and precision with its worst ratio and seed; the worst failed line is
/// the error.
fn sweep_variants(
    a: &VerifyArgs,
    backends: &[Box<dyn convbench::backend::Backend>],
    precisions: &[Precision],
    variants: &[Variant],
    first: u64,
    seeds: u64,
    quiet: bool,
) -> Result<()> {
    if seeds == 0 {
        return Err(Error::InvalidInput("--seeds must be at least 1".into()));
    }
    let last = first.checked_add(seeds).ok_or_else(|| {
        Error::InvalidInput(format!(
            "--seed {first} plus --seeds {seeds} passes 2^64; choose a smaller seed"
        ))
    })?;
    for backend in backends.iter().filter(|b| has_variants(b.kind())) {
        let label = format!("{} ({})", backend.kind().as_str(), backend.adapter().label());
        let lines = conformance::sweep(
            backend.as_ref(),
            variants,
            precisions,
            a.random_shapes,
            first..last,
            &mut |seed| {
                if !quiet {
                    eprintln!("verify: seed {seed} ({} of {seeds})", seed - first + 1);
                }
            },
        )?;
        let table = convbench::report::variant_sweep_table(&lines);
        crate::output::print(&format!(
            "{label}: kernel variants over seeds {first}..{last} ({seeds} seeds, {} random shapes each)\n{table}",
            a.random_shapes
        ));
        let worst_failure = lines
            .iter()
            .filter(|line| !line.failed_seeds.is_empty())
            .max_by(|x, y| x.worst.ratio.total_cmp(&y.worst.ratio));
        if let Some(line) = worst_failure {
            return Err(conformance::failure(&line.worst, line.worst_seed));
        }
    }
    Ok(())
}

/// `cargo convbench verify`: exit 0 when every op is within its bound, 4 on the first that is
/// not (the message names it, its element, error, bound and the data seed).
pub fn run(args: &Args, a: &VerifyArgs) -> Result<u8> {
    if a.repeat == 0 {
        return Err(Error::InvalidInput("--repeat must be at least 1".into()));
    }
    let workspace = config::load(args.manifest_path.as_deref())?;
    let mine = convbench::kernels::user::load_all(&workspace.kernels)?;
    // The second compiler: a kernel naga accepts may not compile in browsers.
    match convbench::kernels::tint::check_user_kernels(&mine)? {
        TintCheck::Accepted { files: 0 } => {}
        TintCheck::Accepted { files } if !args.quiet => {
            eprintln!("Tint (Chrome's WGSL compiler) accepts your kernels ({files} final sources)");
        }
        TintCheck::Accepted { .. } => {}
        TintCheck::Unavailable(why) if !args.quiet => {
            eprintln!("notice: your kernels were not checked with Tint (Chrome's WGSL compiler): {why}");
        }
        TintCheck::Unavailable(_) => {}
    }
    let mut notices = Vec::new();
    let backends = a.device.request().open(&mut notices)?;
    let kernels = KernelChoice::resolve(
        &a.kernels.request(),
        &workspace.target_dir,
        &backends,
        &mut notices,
    )?;
    if !args.quiet {
        for n in &notices {
            eprintln!("notice: {n}");
        }
    }
    let VerifyScope {
        selection,
        explicit_precisions,
        variant_precisions,
    } = a.selection.selection().verify_scope(&workspace.config);
    verify_variants(a, &backends, &variant_precisions, args.quiet)?;
    if a.variants {
        return Ok(0);
    }
    let jobs = selection.jobs(&workspace.config, false, &mut Vec::new())?;
    let options = RunOptions {
        stage: selection.stage,
        kernels,
        ..RunOptions::default()
    };
    let progress = Progress::new(jobs.len() * backends.len() * a.repeat, args.quiet);
    let mut summaries: BTreeMap<(String, Precision), Summary> = BTreeMap::new();
    let mut missing = BTreeSet::new();
    for backend in &backends {
        let label = format!("{} ({})", backend.kind().as_str(), backend.adapter().label());
        for job in &jobs {
            if !backend.supports(job.precision) {
                if explicit_precisions {
                    progress.finish();
                    return Err(unsupported(backend.as_ref(), job.precision));
                }
                if !args.quiet && missing.insert((label.clone(), job.precision)) {
                    progress.println(&format!(
                        "notice: {label} has no {}; not verified in it",
                        job.precision
                    ));
                }
                continue;
            }
            let id = format!("{}/b{}/{}", job.target.name(), job.batch, job.precision);
            for _ in 0..a.repeat {
                let mut count = 0;
                let mut on_event = |e: convbench::harness::Event| progress.event(&id, &e, &mut count);
                let summary = verify_target(
                    backend.as_ref(),
                    &job.target,
                    job.batch,
                    job.precision,
                    &options,
                    &mut on_event,
                );
                let summary = match summary {
                    Ok(s) => s,
                    Err(e) => {
                        progress.finish();
                        return Err(e);
                    }
                };
                summaries
                    .entry((label.clone(), job.precision))
                    .or_default()
                    .merge(summary);
                progress.finish_one();
            }
        }
    }
    progress.finish();
    for backend in &backends {
        let label = format!("{} ({})", backend.kind().as_str(), backend.adapter().label());
        let rows: Vec<(Precision, &Summary)> = summaries
            .iter()
            .filter(|((l, _), _)| *l == label)
            .map(|((_, p), s)| (*p, s))
            .collect();
        if rows.is_empty() {
            continue;
        }
        crate::output::print(&format!("{label}\n{}", verification_table(&rows)));
    }
    Ok(0)
}
