//! `cargo convbench tune`: for every distinct (op, shape, precision) of the selected
//! benchmarks, verify and time each kernel variant, cache the fastest for this adapter (which
//! `run` then uses), and print a table of the timings.

use crate::output::print;
use convbench::cli::Global;
use convbench::cli::tune::TuneArgs;
use convbench::harness::tune::{TuneEvent, TuneProgress};
use convbench::{ErrorKind, Result};

/// `cargo convbench tune`.
pub fn run(args: &Global, a: &TuneArgs) -> Result<u8> {
    // Installed first, so that a signal while the ops are planned stops before the first.
    let interrupt = crate::interrupt::install();
    let workspace = super::workspace(args)?;
    let session = a.request().prepare(&workspace)?;
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
    // SIGINT or SIGTERM stops before the next variant is timed: every finished op is already in
    // the cache, and the table shows them.
    let (results, stopped) = session.run(&interrupt, &mut |event| match event {
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
