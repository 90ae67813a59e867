//! A peer's process, bounded: what it prints is read up to a limit, and a peer that outlives its
//! deadline is killed. A peer is another program (Python, a user's script); convbench must not
//! hang on it nor run out of memory reading it.

use crate::harness::Interrupt;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes of the end of a child's stderr kept for an error message.
const STDERR_TAIL_BYTES: usize = 4096;

/// The longest pause between two looks at a running child: how late a deadline may be seen.
const LONGEST_POLL: Duration = Duration::from_millis(100);

/// How a child's run ended.
#[derive(Debug)]
pub(super) enum Ended {
    /// It exited (on its own, or by a signal).
    Exited {
        /// How.
        status: ExitStatus,
        /// Its stdout, when captured (at most the limit).
        stdout: Vec<u8>,
        /// The end of its stderr, when captured.
        stderr_tail: String,
    },
    /// It printed more than the limit to stdout; it was killed.
    TooMuchOutput,
    /// It was still running at its deadline; it was killed.
    TimedOut,
    /// convbench was asked to stop (SIGINT or SIGTERM) while it ran; it was killed.
    Interrupted,
}

/// Runs `command` until it ends, or kills it at `deadline` or when `interrupt` is requested
/// (a SIGTERM sent to convbench alone reaches no peer: convbench ends it, within
/// [`LONGEST_POLL`]). With `capture`, its stdout (at most `max_stdout_bytes`; past that it is
/// killed) and the end of its stderr are kept and its stdin is closed; without, it shares
/// convbench's terminal. An error is a child that could not be started or watched.
pub(super) fn run(
    mut command: Command,
    capture: bool,
    max_stdout_bytes: u64,
    deadline: Duration,
    interrupt: &Interrupt,
) -> std::io::Result<Ended> {
    if capture {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    }
    let start = Instant::now();
    let mut child = command.spawn()?;
    // Both pipes are drained on threads of their own: a child blocks when either one fills.
    let mut stdout = (child.stdout.take()).map(|pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            // One byte past the limit tells "too much" from "exactly the limit"; the pipe closes
            // when the thread ends, so a child that writes on gets SIGPIPE.
            let _ = pipe.take(max_stdout_bytes + 1).read_to_end(&mut bytes);
            bytes
        })
    });
    let mut stderr = (child.stderr.take()).map(|pipe| std::thread::spawn(move || tail(pipe)));
    let mut stdout_bytes = Vec::new();
    let mut status = None;
    let mut pause = Duration::from_millis(1);
    loop {
        if status.is_none() {
            status = child.try_wait()?;
        }
        if let Some(bytes) = join_if_finished(&mut stdout) {
            if bytes.len() as u64 > max_stdout_bytes {
                kill(&mut child, status);
                return Ok(Ended::TooMuchOutput);
            }
            stdout_bytes = bytes;
        }
        let stderr_done = stderr.as_ref().is_none_or(JoinHandle::is_finished);
        if let Some(status) = status
            && stdout.is_none()
            && stderr_done
        {
            let stderr_tail = join_if_finished(&mut stderr).unwrap_or_default();
            return Ok(Ended::Exited {
                status,
                stdout: stdout_bytes,
                stderr_tail,
            });
        }
        if interrupt.requested() {
            kill(&mut child, status);
            return Ok(Ended::Interrupted);
        }
        let elapsed = start.elapsed();
        if elapsed >= deadline {
            // A reader still blocked (a grandchild holding the pipe) is left to end with it.
            kill(&mut child, status);
            return Ok(Ended::TimedOut);
        }
        std::thread::sleep(pause.min(deadline - elapsed));
        pause = (pause * 2).min(LONGEST_POLL);
    }
}

/// The thread's result when it has ended (taking it), else `None`.
fn join_if_finished<T: Default>(handle: &mut Option<JoinHandle<T>>) -> Option<T> {
    if handle.as_ref().is_some_and(JoinHandle::is_finished) {
        // A reader does not panic; were it to, nothing was read.
        handle.take().map(|handle| handle.join().unwrap_or_default())
    } else {
        None
    }
}

/// Kills a child that has not exited, and reaps it.
fn kill(child: &mut Child, status: Option<ExitStatus>) {
    if status.is_none() {
        // It may have exited since it was last looked at: then there is nothing to kill.
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Reads `pipe` to its end, keeping the last [`STDERR_TAIL_BYTES`].
fn tail(mut pipe: impl Read) -> String {
    let mut kept = Vec::new();
    let mut buffer = [0_u8; 8192];
    loop {
        let read = match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            // What was kept is all the message there is.
            Err(_) => break,
        };
        kept.extend_from_slice(&buffer[..read]);
        if kept.len() > 2 * STDERR_TAIL_BYTES {
            kept.drain(..kept.len() - STDERR_TAIL_BYTES);
        }
    }
    let start = kept.len().saturating_sub(STDERR_TAIL_BYTES);
    String::from_utf8_lossy(&kept[start..]).into_owned()
}
