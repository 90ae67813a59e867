//! The deadline of every wait for the GPU. A kernel that never ends (an infinite loop in a
//! user's WGSL) would otherwise block the host for ever in `device.poll`: lavapipe ends loops
//! after 65,535 iterations, a real GPU does not. Each submission gets a deadline from the work
//! it holds, [`FLOOR`] plus its FLOPs at [`SLOWEST_FLOPS_PER_SECOND`] (so a big network on a slow
//! software device is never cut short), or a fixed one from `CONVBENCH_GPU_TIMEOUT`; past it the
//! wait ends with an error naming the kernels of the submission.

use super::DeviceError;
use crate::Result;
use std::time::Duration;

/// The variable that fixes the deadline of every GPU submission, e.g. `10m` or `30s`.
pub const TIMEOUT_ENV: &str = "CONVBENCH_GPU_TIMEOUT";

/// The least time a submission is given, whatever little work it holds.
pub const FLOOR: Duration = Duration::from_secs(60);

/// The slowest throughput a device is expected to reach, in FLOP/s: a fiftieth of lavapipe's on
/// two CPU cores for a good f32 matrix product.
pub const SLOWEST_FLOPS_PER_SECOND: f64 = 2e7;

/// How long a wait for the GPU may last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Watchdog {
    /// The deadline of every submission when `CONVBENCH_GPU_TIMEOUT` sets one.
    fixed: Option<Duration>,
}

impl Watchdog {
    /// The watchdog `CONVBENCH_GPU_TIMEOUT` asks for (unset or empty: derived from the work).
    pub fn from_env() -> Result<Self> {
        let Ok(text) = std::env::var(TIMEOUT_ENV) else {
            return Ok(Self::default());
        };
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let fixed = humantime::parse_duration(text.trim())
            .ok()
            .filter(|duration| !duration.is_zero())
            .ok_or_else(|| DeviceError::BadTimeout {
                env: TIMEOUT_ENV,
                text: text.to_string(),
            })?;
        Ok(Self { fixed: Some(fixed) })
    }

    /// A watchdog that gives every submission `deadline`.
    pub fn fixed(deadline: Duration) -> Self {
        Self {
            fixed: Some(deadline),
        }
    }

    /// The deadline of a submission of `flops` floating-point operations.
    pub fn deadline(&self, flops: u64) -> Duration {
        self.fixed.unwrap_or_else(|| {
            FLOOR.saturating_add(Duration::from_secs_f64(
                (flops as f64 / SLOWEST_FLOPS_PER_SECOND).min(1e9),
            ))
        })
    }

    /// Waits until the device has finished its latest submission, at most `deadline`; `what`
    /// names the work (the kernels) for the error.
    pub(super) fn wait(&self, device: &wgpu::Device, deadline: Duration, what: &str) -> Result<()> {
        let poll = wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(deadline),
        };
        match device.poll(poll) {
            Ok(_) => Ok(()),
            Err(wgpu::PollError::Timeout) => Err(DeviceError::Timeout {
                what: what.to_string(),
                deadline: humantime::format_duration(deadline).to_string(),
                env: TIMEOUT_ENV,
            }
            .into()),
            Err(error) => Err(DeviceError::Lost {
                what: what.to_string(),
                message: error.to_string(),
            }
            .into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_grows_with_the_work_from_the_floor() {
        let watchdog = Watchdog::default();
        assert_eq!(watchdog.deadline(0), FLOOR);
        assert_eq!(watchdog.deadline(2_000_000_000), FLOOR + Duration::from_secs(100));
        assert!(watchdog.deadline(u64::MAX) > FLOOR);
        assert_eq!(
            Watchdog::fixed(Duration::from_millis(5)).deadline(u64::MAX),
            Duration::from_millis(5)
        );
    }
}
