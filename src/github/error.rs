//! What can go wrong talking to GitHub, as values. Every text here that came from GitHub or
//! from the environment is scrubbed of the token before it is stored (see `api::scrub`), and
//! escaped where it is printed as a workflow command.

use crate::ErrorKind;

/// An error of the GitHub path: the Actions environment, the REST API, or a request convbench
/// was about to send.
#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    /// No token in the environment, so the step could not run.
    #[error("no GITHUB_TOKEN; {consequence}")]
    NoToken {
        /// What was not done, or what was done anyway.
        consequence: &'static str,
    },
    /// The API refused, failed or timed out; the message names the status, the route's purpose
    /// and the permission or wait that would help, scrubbed of the token.
    #[error("{message}")]
    Api {
        /// The scrubbed message.
        message: String,
    },
    /// The async runtime for the API could not start.
    #[error("cannot start the runtime for the GitHub API: {message}")]
    Runtime {
        /// What the system said.
        message: String,
    },
    /// The upsert ended without posting or updating anything.
    #[error("the comment was neither posted nor updated")]
    NotPosted,
    /// The API answered with something that is not a commit id where one was due.
    #[error("the GitHub API at {api_url} answered {target} with merge base `{answer}`, not a commit id")]
    NotACommit {
        /// The API's base URL.
        api_url: String,
        /// What was asked.
        target: String,
        /// The answer, cut to 64 characters.
        answer: String,
    },
    /// `GITHUB_API_URL` is not a REST API base URL.
    #[error(
        "GITHUB_API_URL \"{quoted}\" {problem}; it should be the REST API's base URL, e.g. \
         {default}, or https://HOST/api/v3 on GitHub Enterprise Server (GitHub Actions sets it; \
         unset it to use {default})"
    )]
    BadApiUrl {
        /// The URL without credentials, cut short and escaped.
        quoted: String,
        /// What is wrong with it.
        problem: &'static str,
        /// The public API's URL.
        default: &'static str,
    },
    /// `GITHUB_EVENT_PATH` holds no event payload.
    #[error("GITHUB_EVENT_PATH {path} is not a GitHub event payload: {message}")]
    BadEvent {
        /// The file.
        path: String,
        /// What the JSON parser said.
        message: String,
    },
    /// The payload file `GITHUB_EVENT_PATH` names cannot be read.
    #[error(
        "cannot read GITHUB_EVENT_PATH {path}: {source}; run in a GitHub Actions job or unset \
         GITHUB_EVENT_PATH"
    )]
    EventUnreadable {
        /// The file.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The job summary file `GITHUB_STEP_SUMMARY` names cannot be written.
    #[error(
        "cannot write the job summary to GITHUB_STEP_SUMMARY {path}: {source}; point it at a \
         writable file or unset it"
    )]
    StepSummary {
        /// The file.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A comment body above GitHub's limit reached the API call.
    #[error(
        "the comment has {bytes} bytes, over GitHub's limit of {limit}; render it with \
         convbench::github::comment_body, which drops rows to fit"
    )]
    CommentTooLong {
        /// The body's size.
        bytes: usize,
        /// GitHub's limit.
        limit: usize,
    },
    /// A commit id that is not 40 hexadecimal digits.
    #[error("{what} `{value}` is not a commit id of 40 hexadecimal digits")]
    NotASha {
        /// Which commit, e.g. `head commit`.
        what: &'static str,
        /// The text given.
        value: String,
    },
    /// A check run without a name or a title.
    #[error("a check run needs a non-empty name and title")]
    UntitledCheck,
    /// A default branch that is not a plain branch name.
    #[error(
        "default branch `{branch}` is not a plain branch name; pass github.event.repository.default_branch"
    )]
    BadBranch {
        /// The text given.
        branch: String,
    },
    /// A repository name that is not `owner/name`.
    #[error("repository `{full_name}` is not of the form owner/name, e.g. convbench/convbench")]
    BadRepository {
        /// The text given.
        full_name: String,
    },
}

impl GitHubError {
    /// The exit-code category: what convbench was given is input, what GitHub or the runner
    /// did is the environment.
    pub fn kind(&self) -> ErrorKind {
        match self {
            GitHubError::CommentTooLong { .. }
            | GitHubError::NotASha { .. }
            | GitHubError::UntitledCheck
            | GitHubError::BadBranch { .. }
            | GitHubError::BadRepository { .. } => ErrorKind::InvalidInput,
            _ => ErrorKind::Environment,
        }
    }
}
