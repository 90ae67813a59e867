//! `cargo convbench verify`: every op of the selected networks and suites against the f64
//! reference, without timing anything, and a table of the worst ratio of error to rounding
//! bound per op. It is what `run` does before it times a benchmark, for the whole zoo at once:
//! the conformance check of an adapter, a driver or a change to the kernels.

use crate::output::print;
use crate::progress::Progress;
use convbench::cli::Global;
use convbench::cli::verify::VerifyArgs;
use convbench::harness::VerifyEvent;
use convbench::harness::verify::Summary;
use convbench::harness::verify_run::VariantTables;
use convbench::kernels::tint::TintCheck;
use convbench::model::Precision;
use convbench::{Result, report};

/// Prints the variant tables (`verify` prints them before it checks the networks).
fn print_variant_tables(tables: &VariantTables, shapes: usize) {
    match tables {
        VariantTables::Seed { seed, tables } => {
            for table in tables {
                print(&format!(
                    "{}: kernel variants on {shapes} random shapes each, and one spanning 3 workgroups where none does (seed {seed})\n{}",
                    table.label,
                    report::variant_table(&table.rows)
                ));
            }
        }
        VariantTables::Sweep { seeds, tables } => {
            // The range as people read it: both ends included.
            let (first, last, count) = (seeds.start, seeds.end - 1, seeds.end - seeds.start);
            for table in tables {
                print(&format!(
                    "{}: kernel variants over seeds {first} to {last} ({count} seeds, {shapes} random shapes each, and one spanning 3 workgroups where none does)\n{}",
                    table.label,
                    report::variant_sweep_table(&table.rows)
                ));
            }
        }
    }
}

/// `cargo convbench verify`: exit 0 when every op is within its bound, 4 on the first that is
/// not (the message names it, its element, error, bound and the data seed).
pub fn run(args: &Global, a: &VerifyArgs) -> Result<u8> {
    let workspace = super::workspace(args)?;
    let mine = workspace.kernel_set()?;
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
    // SIGINT or SIGTERM stops the checking between two variants, seeds or benchmarks: what was
    // checked is printed, then the interruption (exit 130 or 143).
    let session = a
        .request()
        .prepare(&workspace, mine, crate::interrupt::install())?;
    if !args.quiet {
        for n in &session.notices {
            eprintln!("notice: {n}");
        }
    }
    if a.variants {
        session.check_variants_run()?;
    }
    let seeds = a.seeds.unwrap_or(1);
    let (tables, error) = session.variants(&mut |seed, place| {
        if !args.quiet {
            eprintln!("verify: seed {seed} ({place} of {seeds})");
        }
    })?;
    print_variant_tables(&tables, a.random_shapes);
    if let Some(error) = error {
        return Err(error);
    }
    if a.variants {
        return Ok(0);
    }
    let jobs = session.jobs()?;
    let progress = Progress::new(session.verifications(&jobs), args.quiet);
    let mut verified = 0;
    let summaries = session.networks(&jobs, &mut |event| match event {
        VerifyEvent::Notice(text) => progress.notice(&text),
        VerifyEvent::Benchmark { label, event } => progress.event(label, &event, &mut verified),
        VerifyEvent::Verified => progress.finish_one(),
    });
    progress.finish();
    let (summaries, stopped) = summaries?;
    for backend in summaries {
        let rows: Vec<(Precision, &Summary)> = backend.precisions.iter().map(|(p, s)| (*p, s)).collect();
        print(&format!(
            "{}\n{}",
            backend.label,
            report::verification_table(&rows)
        ));
    }
    stopped.map_or(Ok(0), Err)
}
