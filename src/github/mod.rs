//! GitHub Actions: the environment of a job, the job summary, workflow-command annotations and
//! the sticky pull-request comment.
//!
//! Everything here is a value or a function the `cargo-convbench` binary calls; nothing prints
//! to stdout. The pieces, in the order a CI run uses them:
//!
//! - [`ActionsEnv`] reads the variables GitHub sets in a job (repository, event payload, API URL,
//!   token) through a function, so tests feed it a map instead of the process environment. The
//!   token lives in a [`Token`], whose `Debug` and `Display` print `***`.
//! - [`write_step_summary`] appends Markdown to `$GITHUB_STEP_SUMMARY`; [`annotations`] turns
//!   regressions into `::error` and inconclusive rows into `::warning` workflow commands, which
//!   the binary prints.
//! - [`sections_from`] groups the comparisons of a runner matrix per adapter and
//!   [`comment_body`] renders them as ONE Markdown comment: hidden [`COMMENT_MARKER`] first,
//!   a verdict line per adapter, then a section per adapter, capped at
//!   [`MAX_COMMENT_BYTES`]. Every string that comes from a record (benchmark ids, adapter
//!   names, driver strings, commits) is escaped with [`escape_markdown`], so a benchmark named
//!   `<img src=x>` or `@someone` renders as text and pings nobody. [`job_summary`] renders the
//!   same results for the job summary, within GitHub's 1 MiB ([`MAX_STEP_SUMMARY_BYTES`])
//!   instead of the comment's 64 KiB, so it shows every row that fits there.
//! - [`post_or_update_comment`] finds the comment opening with the marker on the pull request
//!   (following the pages of comments) and updates it in place, or creates it: one comment per
//!   pull request, however many runs, concurrent ones included (after a POST it lists again and
//!   folds its new comment into an older one). It blocks on a private current-thread tokio runtime, so callers stay
//!   synchronous.
//! - [`merge_base`] asks GitHub's compare API for the merge-base of a head commit with the
//!   default branch (the base the privileged job judges against, never the pull request's
//!   choice), and [`run_jobs`] lists the jobs of a workflow run with their conclusions (a failed
//!   or cancelled leg is judged, not overlooked).
//! - [`create_check_run`] adds a completed [`CheckRun`] (success, failure or neutral, with a
//!   Markdown summary cut to [`MAX_CHECK_SUMMARY_BYTES`]) to a commit, for a line in the pull
//!   request's checks; the token needs `checks: write`.
//!
//! # Retries, rate limits and the deadline
//!
//! Both calls share one retry policy (octocrab's own retries are off). A 5xx answer, a
//! transport error or no answer within 60 s is tried again, at most 4 times, after an
//! exponential backoff with jitter ([`GithubApi::with_backoff`], 1 s doubling, at most 30 s per
//! wait). A rate limit (429, or a 403 with `Retry-After`, `x-ratelimit-remaining: 0` or a "rate
//! limit" message) is waited out for as long as GitHub asks, up to a minute; a longer one fails
//! saying "rate limited" and when it resets, never as a missing permission. A POST is never
//! re-sent blindly: after a 5xx or no answer, convbench first looks for what it may have
//! created (its marked comment; its check run by `external_id`). The whole call has a deadline
//! ([`GithubApi::with_deadline`], [`DEFAULT_DEADLINE`] 120 s), past which it fails with "timed
//! out after N s while ...".
//!
//! # Why a workflow_run job posts the comment
//!
//! A `pull_request` run from a fork gets a read-only token, and a job with a write token must
//! never run the pull request's code. So the benchmark job (`convbench.yml`) only measures and
//! uploads its record; `comment.yml`, triggered by `workflow_run`, runs the default branch's
//! convbench on those records with `pull-requests: write`. 403 and 404 answers from the API
//! come back as [`GitHubError::Api`] saying which permission is missing (a 404 while
//! listing: which read permission, or that the pull request number or repository is wrong).

mod annotations;
mod api;
mod comment;
mod env;
mod error;
mod summary;

pub use annotations::{annotations, error_annotation, escape_workflow_data};
pub use api::{
    CheckConclusion, CheckRun, CommentAction, DEFAULT_BACKOFF, DEFAULT_COMMENT_AUTHOR, DEFAULT_DEADLINE,
    GithubApi, MAX_CHECK_SUMMARY_BYTES, RunJob, create_check_run, merge_base, post_or_update_comment,
    run_jobs, update_comment_if_present,
};
pub use comment::{
    AdapterSection, COMMENT_MARKER, CommentContext, MAX_COMMENT_BYTES, MAX_STEP_SUMMARY_BYTES, comment_body,
    escape_markdown, format_change, format_duration_ns, job_summary, sections_from,
};
pub use env::{ActionsEnv, DEFAULT_API_URL, PullRequest, Repository, Token};
pub use error::GitHubError;
pub use summary::write_step_summary;
