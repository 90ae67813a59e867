//! `cargo convbench peers`: another framework and convbench on one selection, rounds
//! interleaved, into one record; prints the seeds' table of backends.

use crate::output::{check_writable, print, refuse_out_over_inputs, write_atomic};
use crate::progress::run_sweep;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::peers::PeersArgs;
use convbench::peers::PeerSession;

/// `cargo convbench peers`.
pub fn run(args: &Global, a: &PeersArgs) -> Result<u8> {
    if let Some(out) = &a.run.out {
        check_writable(out)?;
    }
    let request = a.request()?;
    let workspace = super::workspace(args)?;
    if let Some(out) = &a.run.out {
        refuse_out_over_inputs(out, &a.run, &workspace)?;
    }
    let session = PeerSession::prepare(request, &workspace.target_dir.join("convbench/peers"))?
        .with_interrupt(crate::interrupt::install());
    let (record, error) = session.run(
        &mut |sweep| run_sweep(sweep, &workspace, args.quiet, None).and_then(|(r, e)| e.map_or(Ok(r), Err)),
        &mut |event| {
            if !args.quiet {
                eprintln!("{event}");
            }
        },
    );
    // The rounds that finished are written and printed even when a later one failed; written
    // first, so that a table that cannot be drawn loses none of them.
    if let Some(record) = &record {
        if let Some(out) = &a.run.out {
            write_atomic(out, &record.to_json())?;
            if !args.quiet && !record.complete {
                eprintln!(
                    "wrote {} (incomplete: {} of {} rounds)",
                    out.display(),
                    record.settings.rounds,
                    a.run.rounds
                );
            }
        }
        print(&session.tables(record)?);
    } else if error.is_some()
        && let Some(out) = &a.run.out
    {
        eprintln!("no round finished, so {} was not written", out.display());
    }
    error.map_or(Ok(0), Err)
}
