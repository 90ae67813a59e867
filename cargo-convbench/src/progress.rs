//! Progress on stderr: a bar (indicatif) on a terminal; plain lines where stderr is not a
//! terminal (a CI log), one when a benchmark starts a step or ends and at most one every
//! [`PLAIN_INTERVAL`] within a step; nothing with `--quiet`. And the drawing of a library sweep.

use crate::output::write_atomic;
use convbench::compare::CompareConfig;
use convbench::config::Workspace;
use convbench::harness::Event;
use convbench::harness::ab::{self as ab_run, AbEvent, AbOutcome, AbRequest};
use convbench::harness::sweep::{Sweep, SweepEvent, SweepRequest};
use convbench::results::RunRecord;
use convbench::{Error, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The least time between two plain progress lines of one step (a sample, a verified op).
pub const PLAIN_INTERVAL: Duration = Duration::from_secs(10);

/// One bar for the whole run, its message naming the current benchmark and step.
pub struct Progress {
    bar: ProgressBar,
    quiet: bool,
    /// Where stderr is not a terminal: when the last plain line was printed.
    plain: Option<Mutex<Option<Instant>>>,
}

impl Progress {
    /// A bar over `benchmarks` benchmarks.
    pub fn new(benchmarks: usize, quiet: bool) -> Self {
        let bar = ProgressBar::new(benchmarks as u64);
        let terminal = std::io::stderr().is_terminal();
        if quiet || !terminal {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        let plain = (!quiet && !terminal).then(|| Mutex::new(None));
        Self { bar, quiet, plain }
    }

    /// Prints `message` as a plain line (stderr not a terminal): always when `step_starts`,
    /// else only when the last line is [`PLAIN_INTERVAL`] old.
    fn plain_line(&self, message: &str, step_starts: bool) {
        let Some(last) = &self.plain else { return };
        let Ok(mut last) = last.lock() else { return };
        if step_starts || last.is_none_or(|at| at.elapsed() >= PLAIN_INTERVAL) {
            *last = Some(Instant::now());
            eprintln!(
                "[{}/{}] {message}",
                self.bar.position() + 1,
                self.bar.length().unwrap_or(0)
            );
        }
    }

    /// Reports an event of benchmark `id`.
    pub fn event(&self, id: &str, event: &Event, verified: &mut usize) {
        let message = match event {
            Event::Verifying { ops } => {
                *verified = 0;
                format!("{id}: verifying {ops} ops")
            }
            Event::VerifiedOp => {
                *verified += 1;
                format!("{id}: verified {verified} ops")
            }
            Event::WarmingUp => format!("{id}: warming up"),
            Event::Sample { index, total } => format!("{id}: sample {index}/{total}"),
        };
        let step_starts = matches!(
            event,
            Event::Verifying { .. } | Event::WarmingUp | Event::Sample { index: 1, .. }
        );
        self.plain_line(&message, step_starts);
        self.bar.set_message(message);
    }

    /// Sets how many benchmarks the bar counts to.
    pub fn set_length(&self, benchmarks: usize) {
        self.bar.set_length(benchmarks as u64);
    }

    /// One benchmark done.
    pub fn finish_one(&self) {
        self.bar.inc(1);
    }

    /// Prints a line above the bar.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Prints `notice: TEXT` above the bar, unless quiet.
    pub fn notice(&self, text: &str) {
        if !self.quiet {
            self.println(&format!("notice: {text}"));
        }
    }

    /// Draws an event of an A/B (or of a `bisect` step).
    pub fn ab_event(&self, event: AbEvent<'_>, verified: &mut usize) {
        match event {
            AbEvent::Planned { benchmarks } => self.set_length(benchmarks),
            AbEvent::Notice(text) => self.notice(&text),
            AbEvent::Benchmark { label, event } => self.event(label, &event, verified),
            AbEvent::Finished => self.finish_one(),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Prepares and runs the sweep `request` asks for, drawing its progress and notices. After
/// every measured round, what is finished is saved to `out`, marked incomplete, so that even a
/// run that is killed outright leaves a valid record; the caller writes the final record over
/// it. A failed checkpoint is reported, not fatal: the final write will say more.
///
/// An error while preparing (nothing measured) is the `Err`; an error while measuring comes
/// beside the record of what was finished.
pub fn run_sweep(
    request: &SweepRequest,
    workspace: &Workspace,
    quiet: bool,
    out: Option<&Path>,
) -> Result<(RunRecord, Option<Error>)> {
    let sweep = Sweep::prepare(request, workspace, crate::interrupt::install())?;
    let progress = Progress::new(sweep.len(), quiet);
    for notice in &sweep.notices {
        progress.notice(notice);
    }
    let mut verified = 0;
    let (record, error) = sweep.run(&mut |event| match event {
        SweepEvent::Notice(text) => progress.notice(&text),
        SweepEvent::Benchmark { label, event } => progress.event(label, &event, &mut verified),
        SweepEvent::Measured { record } => {
            if let Some(out) = out
                && let Err(e) = write_atomic(out, &record.to_json())
                && !quiet
            {
                progress.println(&format!(
                    "warning: could not save progress to {}: {e}",
                    out.display()
                ));
            }
            progress.finish_one();
        }
    });
    progress.finish();
    Ok((record, error))
}

/// Runs the interleaved A/B `request` asks for (see [`convbench::harness::ab`]), drawing its
/// progress and notices.
pub fn run_ab(
    request: &AbRequest,
    workspace: &Workspace,
    config: &CompareConfig,
    quiet: bool,
) -> Result<(AbOutcome, Option<Error>)> {
    let progress = Progress::new(0, quiet);
    let mut verified = 0;
    let outcome = ab_run::run(
        request,
        workspace,
        config,
        crate::interrupt::install(),
        &mut |event| progress.ab_event(event, &mut verified),
    );
    progress.finish();
    outcome
}
