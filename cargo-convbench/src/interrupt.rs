//! SIGINT and SIGTERM during a sweep: the first one asks the harness to stop within one
//! iteration, so the command can write what it finished (marked incomplete) and exit 130
//! (SIGINT) or 143 (SIGTERM); a second one ends the process at once with that code.

use convbench::harness::Interrupt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The flags the handlers set: any stop, and a stop by SIGTERM.
struct Flags {
    stop: Arc<AtomicBool>,
    terminated: Arc<AtomicBool>,
}

static FLAGS: OnceLock<Flags> = OnceLock::new();

/// Installs the handlers (once per process) and returns the request to stop that the harness
/// checks. Where handlers cannot be installed, signals keep their default action.
pub fn install() -> Interrupt {
    let flags = FLAGS.get_or_init(|| {
        let flags = Flags {
            stop: Arc::new(AtomicBool::new(false)),
            terminated: Arc::new(AtomicBool::new(false)),
        };
        for (signal, code) in [
            (signal_hook::consts::SIGINT, 130),
            (signal_hook::consts::SIGTERM, 143),
        ] {
            // First the shutdown for a signal that finds a stop already requested, then the flag.
            let _ = signal_hook::flag::register_conditional_shutdown(signal, code, Arc::clone(&flags.stop));
            let _ = signal_hook::flag::register(signal, Arc::clone(&flags.stop));
        }
        let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&flags.terminated));
        flags
    });
    Interrupt::new(Arc::clone(&flags.stop))
}

/// The exit code of an interrupted command: 143 after SIGTERM, else 130 (SIGINT).
pub fn exit_code() -> u8 {
    if FLAGS
        .get()
        .is_some_and(|flags| flags.terminated.load(Ordering::Relaxed))
    {
        143
    } else {
        130
    }
}
