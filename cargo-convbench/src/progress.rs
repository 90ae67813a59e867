//! Progress bars on stderr (indicatif), hidden when stderr is not a terminal or with `--quiet`.

use convbench::harness::Event;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// One bar for the whole run, its message naming the current benchmark and step.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar over `benchmarks` benchmarks.
    pub fn new(benchmarks: usize, quiet: bool) -> Self {
        let bar = ProgressBar::new(benchmarks as u64);
        if quiet || !std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Self { bar }
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
        self.bar.set_message(message);
    }

    /// One benchmark done.
    pub fn finish_one(&self) {
        self.bar.inc(1);
    }

    /// Prints a line above the bar.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
