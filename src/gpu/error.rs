//! What can go wrong with a wgpu adapter and device, as values callers can act on: `ci`
//! gives way to baseline mode and `run` to the cpu backend only when the device could not be
//! had at all ([`DeviceError::is_unavailable`]), never when a kernel failed on it.

use crate::ErrorKind;

/// An error of the wgpu adapter or device. Each message names the thing and the next step.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// No adapter is installed.
    #[error(
        "no GPU adapter found: install a Vulkan, Metal, DX12 or GL driver (on Debian, the software \
         driver `mesa-vulkan-drivers`), or use `--backend cpu`"
    )]
    NoAdapter,
    /// No adapter is installed to calibrate (`adapters --calibrate`).
    #[error("no GPU adapter found to calibrate; install a Vulkan driver, e.g. Debian's mesa-vulkan-drivers")]
    NoAdapterToCalibrate,
    /// `--adapter` matches none of the adapters.
    #[error(
        "no adapter matches `{selector}`; adapters: {}. Pass an index, a backend name or part of a name",
        available.join(", ")
    )]
    NoMatchingAdapter {
        /// What `--adapter` said.
        selector: String,
        /// Every adapter, `index: label`.
        available: Vec<String>,
    },
    /// The adapter would not open a device.
    #[error("could not open a device on {adapter}: {message}; try another adapter with --adapter")]
    Open {
        /// The adapter's label.
        adapter: String,
        /// What wgpu said.
        message: String,
    },
    /// The driver panicked while the device was opened.
    #[error("opening the device failed inside the driver (a panic); try another adapter with --adapter")]
    OpenPanicked,
    /// f16 was asked of a device without `SHADER_F16`.
    #[error("{adapter} has no SHADER_F16 feature, so f16 cannot run; use --precision f32")]
    NoF16 {
        /// The adapter's label.
        adapter: String,
    },
    /// One buffer or dispatch is above what the adapter allows.
    #[error("{what} needs {needs}, above the {limit} this adapter allows ({adapter}); {next}")]
    AboveLimit {
        /// The tensor, scratch buffer or dispatch.
        what: String,
        /// How much it needs.
        needs: String,
        /// The adapter's limit, with its unit.
        limit: String,
        /// The adapter's label.
        adapter: String,
        /// What to do instead.
        next: &'static str,
    },
    /// The device ran out of memory.
    #[error("out of device memory while {what}: {message}; use a smaller --batch or another adapter")]
    OutOfMemory {
        /// The step.
        what: String,
        /// What wgpu said.
        message: String,
    },
    /// wgpu's validation rejected a step (a pipeline, a bind group, a dispatch).
    #[error("wgpu rejected {what}: {message}")]
    Rejected {
        /// The step.
        what: String,
        /// What wgpu said.
        message: String,
    },
    /// wgpu reported errors outside any error scope.
    #[error("wgpu error while {what}: {}", messages.join("; "))]
    Uncaptured {
        /// The step.
        what: String,
        /// What wgpu said, in order.
        messages: Vec<String>,
    },
    /// The device did not finish a submission before its deadline.
    #[error(
        "the GPU did not finish {what} within {deadline}: a kernel that never ends (check its \
         loops) or a device far slower than expected; set {env} (e.g. `30m`) to wait longer"
    )]
    Timeout {
        /// The work (the kernels).
        what: String,
        /// The deadline, as `humantime` writes it.
        deadline: String,
        /// The variable that sets the deadline.
        env: &'static str,
    },
    /// Waiting for the device failed (a lost device, a driver error).
    #[error("GPU did not finish {what}: {message}")]
    Lost {
        /// The work.
        what: String,
        /// What wgpu said.
        message: String,
    },
    /// A buffer could not be read back.
    #[error("could not read back {what}: {message}")]
    Readback {
        /// The tensor or query.
        what: String,
        /// What wgpu said.
        message: String,
    },
    /// Calibration timed nothing: the adapter may not have run its kernels.
    #[error("calibration of {adapter} measured no time; the adapter may not have run the kernels")]
    NoTime {
        /// The adapter's label.
        adapter: String,
    },
    /// `adapters --calibrate` calibrated no adapter (each failure was reported on its own).
    #[error("no adapter could be calibrated (see the errors above); try `--adapter` with another one")]
    NoneCalibrated,
    /// The deadline variable holds no positive duration.
    #[error(
        "{env} `{text}` is not a positive duration; write it as `30s` or `10m`, or unset it to \
         derive each deadline from the work"
    )]
    BadTimeout {
        /// The variable.
        env: &'static str,
        /// What it holds.
        text: String,
    },
    /// A shader was specialised with a constant it does not declare.
    #[error("{what}: a constant is not declared in the shader")]
    UndeclaredConstant {
        /// The shader, its precision and constants.
        what: String,
    },
    /// A lock of the device's caches was poisoned by a panic on another thread.
    #[error("the device's {what} is poisoned by an earlier panic")]
    Poisoned {
        /// Which cache.
        what: &'static str,
    },
}

impl DeviceError {
    /// The exit-code category: a bad `--adapter`, deadline or shader is the user's input, the
    /// rest the machine's.
    pub fn kind(&self) -> ErrorKind {
        match self {
            DeviceError::NoMatchingAdapter { .. }
            | DeviceError::BadTimeout { .. }
            | DeviceError::UndeclaredConstant { .. } => ErrorKind::InvalidInput,
            _ => ErrorKind::Environment,
        }
    }

    /// Whether no device could be had at all (none installed, or it would not open): the one
    /// case where a command may do its work another way. Everything else happened while the
    /// work ran (a kernel rejected, out of memory, never finishing) and would happen again.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            DeviceError::NoAdapter
                | DeviceError::NoAdapterToCalibrate
                | DeviceError::Open { .. }
                | DeviceError::OpenPanicked
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_device_that_could_not_be_had_is_unavailable_and_a_bad_selector_is_input() {
        let open = DeviceError::Open {
            adapter: "llvmpipe".into(),
            message: "denied".into(),
        };
        assert!(open.is_unavailable() && DeviceError::NoAdapter.is_unavailable());
        assert!(DeviceError::NoAdapterToCalibrate.is_unavailable());
        assert_eq!(DeviceError::NoAdapterToCalibrate.kind(), ErrorKind::Environment);
        let timeout = DeviceError::Timeout {
            what: "conv1".into(),
            deadline: "1m".into(),
            env: super::super::TIMEOUT_ENV,
        };
        assert!(!timeout.is_unavailable());
        assert_eq!(timeout.kind(), ErrorKind::Environment);
        assert!(!DeviceError::NoneCalibrated.is_unavailable());
        assert_eq!(DeviceError::NoneCalibrated.kind(), ErrorKind::Environment);
        let selector = DeviceError::NoMatchingAdapter {
            selector: "nvidia".into(),
            available: vec!["0: llvmpipe".into()],
        };
        assert_eq!(selector.kind(), ErrorKind::InvalidInput);
        let wrapped = crate::Error::from(selector).context("the head's side");
        assert_eq!(wrapped.kind(), ErrorKind::InvalidInput);
        assert!(matches!(
            wrapped.device(),
            Some(DeviceError::NoMatchingAdapter { selector, .. }) if selector == "nvidia"
        ));
    }
}
