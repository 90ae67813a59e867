//! The library's error type and the categories the binary maps to exit codes.

/// Which exit code an error deserves (see the README's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad arguments, unknown names, unreadable or corrupt input files: exit code 2.
    InvalidInput,
    /// The machine lacks something: adapter, feature, memory, git revision, API access: exit 3.
    Environment,
    /// A kernel disagrees with the CPU reference: exit code 4.
    Verification,
    /// Stopped by the user or the system (SIGINT, SIGTERM) before the work was done: exit code
    /// 130 (the binary uses 143 when the signal was SIGTERM).
    Interrupted,
}

impl ErrorKind {
    /// The process exit code documented for this kind.
    pub const fn exit_code(self) -> u8 {
        match self {
            ErrorKind::InvalidInput => 2,
            ErrorKind::Environment => 3,
            ErrorKind::Verification => 4,
            ErrorKind::Interrupted => 130,
        }
    }
}

/// Everything that can go wrong in convbench, each message naming the thing and the next step.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A backend's output disagrees with the reference.
    #[error(transparent)]
    Verification(Box<crate::harness::VerificationError>),
    /// The work was stopped by a signal before it was done (see
    /// [`crate::harness::Interrupted`]).
    #[error(transparent)]
    Interrupted(crate::harness::Interrupted),
    /// A record file could not be read.
    #[error(transparent)]
    Record(#[from] crate::results::RecordError),
    /// A program broke its ops' contracts, or a backend could not hold it (see
    /// [`crate::backend::BackendError`]).
    #[error(transparent)]
    Backend(Box<crate::backend::BackendError>),
    /// The cuda backend failed (see `convbench::backend::cuda::CudaError`).
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Cuda(Box<crate::backend::cuda::CudaError>),
    /// The gate could not judge (see [`crate::gate::GateError`]).
    #[error(transparent)]
    Gate(Box<crate::gate::GateError>),
    /// A verdict setting out of its range (see [`crate::compare::CompareError`]).
    #[error(transparent)]
    Compare(Box<crate::compare::CompareError>),
    /// The GitHub path failed (see [`crate::github::GitHubError`]).
    #[error(transparent)]
    GitHub(Box<crate::github::GitHubError>),
    /// The wgpu adapter or device failed (see [`crate::DeviceError`]).
    #[error(transparent)]
    Device(Box<crate::gpu::DeviceError>),
    /// The baselines or their git repository (see [`crate::baseline::BaselineError`]).
    #[error(transparent)]
    Baseline(Box<crate::baseline::BaselineError>),
    /// A file or folder convbench reads or writes (see [`crate::fs::FileError`]).
    #[error(transparent)]
    File(Box<crate::fs::FileError>),
    /// A kernel, its declaration or its sources failed (see [`crate::kernels::KernelError`]).
    #[error(transparent)]
    Kernel(Box<crate::kernels::KernelError>),
    /// The workspace or its configuration (see [`crate::config::ConfigError`]).
    #[error(transparent)]
    Config(Box<crate::config::ConfigError>),
    /// A model, suite or shape list (see [`crate::model::ModelError`]).
    #[error(transparent)]
    Model(Box<crate::model::ModelError>),
    /// `init` was given what it cannot set up (see [`crate::init::InitError`]).
    #[error(transparent)]
    Init(Box<crate::init::InitError>),
    /// A seed sweep that cannot be drawn (see [`crate::harness::conformance::ConformanceError`]).
    #[error(transparent)]
    Conformance(Box<crate::harness::conformance::ConformanceError>),
    /// A sweep that cannot run as asked (see [`crate::harness::SweepError`]).
    #[error(transparent)]
    Sweep(Box<crate::harness::SweepError>),
    /// A network or suite layer that cannot be planned (see [`crate::harness::PlanError`]).
    #[error(transparent)]
    Plan(Box<crate::harness::PlanError>),
    /// An A/B comparison that cannot run or read its file (see [`crate::harness::AbError`]).
    #[error(transparent)]
    Ab(Box<crate::harness::AbError>),
    /// A peer that is missing, misused or misbehaving (see [`crate::peers::PeerError`]).
    #[error(transparent)]
    Peer(Box<crate::peers::PeerError>),
    /// A report, chart or table asked of records that cannot give it (see
    /// [`crate::report::ReportError`]).
    #[error(transparent)]
    Report(Box<crate::report::ReportError>),
    /// An error of one part of the work, saying which part (e.g. which side of an A/B).
    #[error("{context}: {source}")]
    Context {
        /// The part, e.g. `the base revision's side`.
        context: String,
        /// What went wrong there; it decides the exit code.
        #[source]
        source: Box<Error>,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The exit-code category.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Record(_) => ErrorKind::InvalidInput,
            Error::Io { .. } => ErrorKind::Environment,
            Error::Verification(_) => ErrorKind::Verification,
            Error::Interrupted(interrupted) => interrupted.kind(),
            Error::Device(error) => error.kind(),
            Error::GitHub(error) => error.kind(),
            Error::Backend(error) => error.kind(),
            Error::Gate(error) => error.kind(),
            Error::Compare(error) => error.kind(),
            #[cfg(feature = "cuda")]
            Error::Cuda(error) => error.kind(),
            Error::Baseline(error) => error.kind(),
            Error::File(error) => error.kind(),
            Error::Kernel(error) => error.kind(),
            Error::Config(error) => error.kind(),
            Error::Model(error) => error.kind(),
            Error::Init(error) => error.kind(),
            Error::Conformance(error) => error.kind(),
            Error::Sweep(error) => error.kind(),
            Error::Plan(error) => error.kind(),
            Error::Ab(error) => error.kind(),
            Error::Peer(error) => error.kind(),
            Error::Report(error) => error.kind(),
            Error::Context { source, .. } => source.kind(),
        }
    }

    /// The device error under any context this error was given, if it is one.
    pub fn device(&self) -> Option<&crate::gpu::DeviceError> {
        match self {
            Error::Device(error) => Some(error),
            Error::Context { source, .. } => source.device(),
            _ => None,
        }
    }

    /// This error, in the part of the work `context` names.
    pub fn context(self, context: impl Into<String>) -> Self {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The messages of this error's causes (its chain of sources), outermost first, less those
    /// its own message already quotes: what a report shows under the message, each once.
    pub fn causes(&self) -> Vec<String> {
        let message = self.to_string();
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            // git2's `Display` appends its class and code to the message an error quotes.
            let text = match cause.downcast_ref::<git2::Error>() {
                Some(git) => git.message().to_string(),
                None => cause.to_string(),
            };
            if !message.contains(&text) {
                causes.push(text);
            }
            source = cause.source();
        }
        causes
    }

    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}

impl From<crate::harness::VerificationError> for Error {
    fn from(error: crate::harness::VerificationError) -> Self {
        Error::Verification(Box::new(error))
    }
}

impl From<crate::backend::BackendError> for Error {
    fn from(error: crate::backend::BackendError) -> Self {
        Error::Backend(Box::new(error))
    }
}

#[cfg(feature = "cuda")]
impl From<crate::backend::cuda::CudaError> for Error {
    fn from(error: crate::backend::cuda::CudaError) -> Self {
        Error::Cuda(Box::new(error))
    }
}

impl From<crate::gate::GateError> for Error {
    fn from(error: crate::gate::GateError) -> Self {
        Error::Gate(Box::new(error))
    }
}

impl From<crate::compare::CompareError> for Error {
    fn from(error: crate::compare::CompareError) -> Self {
        Error::Compare(Box::new(error))
    }
}

impl From<crate::github::GitHubError> for Error {
    fn from(error: crate::github::GitHubError) -> Self {
        Error::GitHub(Box::new(error))
    }
}

impl From<crate::gpu::DeviceError> for Error {
    fn from(error: crate::gpu::DeviceError) -> Self {
        Error::Device(Box::new(error))
    }
}

impl From<crate::baseline::BaselineError> for Error {
    fn from(error: crate::baseline::BaselineError) -> Self {
        Error::Baseline(Box::new(error))
    }
}

impl From<crate::fs::FileError> for Error {
    fn from(error: crate::fs::FileError) -> Self {
        Error::File(Box::new(error))
    }
}

impl From<crate::kernels::KernelError> for Error {
    fn from(error: crate::kernels::KernelError) -> Self {
        Error::Kernel(Box::new(error))
    }
}

impl From<crate::config::ConfigError> for Error {
    fn from(error: crate::config::ConfigError) -> Self {
        Error::Config(Box::new(error))
    }
}

impl From<crate::model::ModelError> for Error {
    fn from(error: crate::model::ModelError) -> Self {
        Error::Model(Box::new(error))
    }
}

impl From<crate::init::InitError> for Error {
    fn from(error: crate::init::InitError) -> Self {
        Error::Init(Box::new(error))
    }
}

impl From<crate::harness::conformance::ConformanceError> for Error {
    fn from(error: crate::harness::conformance::ConformanceError) -> Self {
        Error::Conformance(Box::new(error))
    }
}

impl From<crate::harness::Interrupted> for Error {
    fn from(interrupted: crate::harness::Interrupted) -> Self {
        Error::Interrupted(interrupted)
    }
}

impl From<crate::harness::SweepError> for Error {
    fn from(error: crate::harness::SweepError) -> Self {
        Error::Sweep(Box::new(error))
    }
}

impl From<crate::harness::PlanError> for Error {
    fn from(error: crate::harness::PlanError) -> Self {
        Error::Plan(Box::new(error))
    }
}

impl From<crate::harness::AbError> for Error {
    fn from(error: crate::harness::AbError) -> Self {
        Error::Ab(Box::new(error))
    }
}

impl From<crate::peers::PeerError> for Error {
    fn from(error: crate::peers::PeerError) -> Self {
        Error::Peer(Box::new(error))
    }
}

impl From<crate::report::ReportError> for Error {
    fn from(error: crate::report::ReportError) -> Self {
        Error::Report(Box::new(error))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_message_quotes_is_not_repeated() {
        let io = || std::io::Error::other("disk full");
        let quoted = Error::io("out.json", io()).context("the record");
        assert_eq!(quoted.to_string(), "the record: out.json: disk full");
        assert!(quoted.causes().is_empty(), "{:?}", quoted.causes());
        let plain = Error::from(crate::gpu::DeviceError::NoneCalibrated);
        assert!(plain.causes().is_empty());
        assert_eq!(quoted.kind(), ErrorKind::Environment);
    }
}
