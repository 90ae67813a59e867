//! The sticky pull-request comment and the check run through the GitHub REST API (octocrab),
//! behind a blocking interface, with convbench's own retry policy.
//!
//! octocrab's retry layer is switched off: it re-sends a POST after a 5xx (a duplicate comment)
//! and retries at once, without waiting or reading `Retry-After`. Instead every request here
//! goes through [`Session`]: bounded exponential backoff with jitter for 5xx answers, transport
//! errors and requests that got no answer in time; the wait GitHub asks for (`Retry-After`,
//! `x-ratelimit-reset`) for 429 and rate-limited 403 answers, up to a cap; one deadline for the
//! whole operation. A request that creates something (POST) is never re-sent blindly: after an
//! answer that leaves it unknown whether it landed, the caller first looks for what it created.

use super::comment::{COMMENT_MARKER, MAX_COMMENT_BYTES};
use super::env::{ActionsEnv, Token};
use super::error::GitHubError;
use octocrab::Octocrab;
use octocrab::service::middleware::retry::RetryConfig;
use serde::Deserialize;
use serde_json::Value;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a token needs to comment, and what to do without it; said for every 403 and 404.
const PERMISSION_ADVICE: &str = "the token lacks pull-requests: write; add `permissions: pull-requests: write` \
     to the job, or use the workflow_run pattern (comment.yml) for fork PRs";

/// What a token needs to create a check run, and what to do without it.
const CHECKS_ADVICE: &str = "the token lacks checks: write; add `permissions: checks: write` to the job, or \
     create the check run from the workflow_run job (comment.yml) for fork PRs, whose token is read-only";

/// Comments listed per request: the most GitHub allows, to need the fewest pages.
const COMMENTS_PER_PAGE: u8 = 100;

/// How long to wait for a connection to the API.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long one request may take before it counts as unanswered (and, when it is safe to, is
/// tried again).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Tries of one request, the first included.
const MAX_ATTEMPTS: u32 = 4;

/// The longest backoff between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The longest rate-limit wait convbench sits through; a later reset is reported instead.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// GitHub's advice for a secondary rate limit that names no time: wait at least a minute.
const SECONDARY_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// The time [`post_or_update_comment`] or [`create_check_run`] may take, retries and waits
/// included, unless set with [`GithubApi::with_deadline`].
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(120);

/// The first backoff between tries (doubled on each further try, with jitter), unless set
/// with [`GithubApi::with_backoff`].
pub const DEFAULT_BACKOFF: Duration = Duration::from_secs(1);

/// The longest check-run summary sent, in bytes. GitHub caps `output.summary` at 65,535
/// characters; counting bytes keeps within that whatever the characters are.
pub const MAX_CHECK_SUMMARY_BYTES: usize = 65_535;

/// Appended to a check-run summary cut to [`MAX_CHECK_SUMMARY_BYTES`].
const SUMMARY_TRUNCATED_NOTE: &str = "\n\n_The summary was cut to fit GitHub's limit of 65,535 characters; \
     the job summary has the full report._";

/// The login of the identity behind a GitHub Actions `GITHUB_TOKEN`: the author of the
/// comments convbench may update.
pub const DEFAULT_COMMENT_AUTHOR: &str = "github-actions[bot]";

/// Where the REST API is, the token to call it with, whose comments are convbench's, and how
/// long to keep trying.
#[derive(Debug, Clone)]
pub struct GithubApi {
    api_url: String,
    token: Option<Token>,
    comment_author: String,
    deadline: Duration,
    backoff: Duration,
}

impl GithubApi {
    /// An API at `api_url` (e.g. `https://api.github.com`, or `https://HOST/api/v3` on GitHub
    /// Enterprise Server), called with `token` when there is one.
    pub fn new(api_url: impl Into<String>, token: Option<Token>) -> Self {
        Self {
            api_url: api_url.into(),
            token,
            comment_author: DEFAULT_COMMENT_AUTHOR.to_string(),
            deadline: DEFAULT_DEADLINE,
            backoff: DEFAULT_BACKOFF,
        }
    }

    /// The API and token of a GitHub Actions job (`GITHUB_API_URL`, `GITHUB_TOKEN`), and the
    /// token's login from `CONVBENCH_COMMENT_AUTHOR` when the token is not the job's own
    /// (a GitHub App's or a bot account's).
    pub fn from_env(env: &ActionsEnv) -> Self {
        let api = Self::new(env.api_url.clone(), env.token.clone());
        match std::env::var("CONVBENCH_COMMENT_AUTHOR") {
            Ok(login) if !login.trim().is_empty() => api.with_comment_author(login.trim()),
            _ => api,
        }
    }

    /// Only comments written by `login` (the token's own identity) are ever updated.
    pub fn with_comment_author(mut self, login: impl Into<String>) -> Self {
        self.comment_author = login.into();
        self
    }

    /// The time one operation ([`post_or_update_comment`], [`create_check_run`]) may take,
    /// every request, retry and wait included; [`DEFAULT_DEADLINE`] unless set. Past it the
    /// operation fails with "timed out after N s while ...".
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The wait before the second try of a failed request; each further try waits twice as
    /// long (at most 30 s), each wait drawn between half and all of that. [`DEFAULT_BACKOFF`]
    /// unless set.
    pub fn with_backoff(mut self, first_wait: Duration) -> Self {
        self.backoff = first_wait;
        self
    }

    /// The API's base URL.
    pub fn api_url(&self) -> &str {
        &self.api_url
    }

    /// Whether a token is set.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// The time one operation may take.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }
}

/// What [`post_or_update_comment`] did, with the comment's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentAction {
    /// No comment carried the marker: a new one was posted.
    Created(u64),
    /// The comment carrying the marker was edited in place.
    Updated(u64),
}

/// Keeps ONE convbench comment on pull request `pr` of `owner/repo`: lists the comments of the
/// pull request (following the `Link: rel="next"` pages), edits with one PATCH the first one
/// that is convbench's own (written by the token's identity, see
/// [`GithubApi::with_comment_author`], with [`COMMENT_MARKER`] as its exact first line), or
/// else posts `body` as a new comment. A comment anyone else wrote is never edited, whatever it
/// starts with; when the edit is refused (403 or 404) a new comment is posted instead. Blocks
/// until done, at most [`GithubApi::with_deadline`] (120 s by default).
///
/// Listing and editing are retried with backoff after a 5xx answer, a transport error or no
/// answer in time; rate limits (429, or 403 with `Retry-After`, `x-ratelimit-remaining: 0` or
/// a "rate limit" message) are waited out when they reset within a minute and the deadline. A
/// POST is never re-sent blindly: after a 5xx or no answer the comments are listed again, and a
/// convbench comment found there is taken as the one posted (and edited to `body` if it differs).
///
/// Concurrent runs (a matrix of `comment` jobs) converge on one comment: after a POST the
/// comments are listed again, and when an older convbench comment is there (another run posted
/// between this run's listing and its POST), that one is edited to `body` and the comment just
/// posted is deleted ([`CommentAction::Updated`] with the older id). Only the comment this run
/// created is ever deleted.
///
/// Errors never contain the token. Without a token: [`GitHubError::NoToken`] "no GITHUB_TOKEN;
/// the comment was not posted ..." (callers treat it as a skipped comment), before any
/// request. A `body` over [`MAX_COMMENT_BYTES`]: [`GitHubError::CommentTooLong`] (render it with
/// [`super::comment_body`], which truncates). Every other failure is [`GitHubError::Api`]: a
/// 403 says which permission is missing and how to grant it; a 404 while listing says to check
/// the pull request number and repository, or the token's read permission (`pull-requests:
/// read` or `issues: read`), and a 404 while posting that the pull request was not found or
/// the token cannot see it; a rate limit says "rate limited" and when it resets; the
/// deadline says "timed out after N s while ..."; anything else names the HTTP status or
/// transport error and the API URL.
pub fn post_or_update_comment(
    api: &GithubApi,
    owner: &str,
    repo: &str,
    pr: u64,
    body: &str,
) -> crate::Result<CommentAction> {
    comment(api, owner, repo, pr, body, true)?.ok_or_else(|| GitHubError::NotPosted.into())
}

/// Updates convbench's own comment on pull request `pr` to `body` when there is one (as
/// [`post_or_update_comment`] finds it, posting a new one if the edit is refused), and posts
/// nothing when there is none: the quiet modes of `comment-on`, where a run with nothing to
/// report starts no comment but never leaves an earlier one stale. `None`: nothing posted.
/// Errors as [`post_or_update_comment`]'s.
pub fn update_comment_if_present(
    api: &GithubApi,
    owner: &str,
    repo: &str,
    pr: u64,
    body: &str,
) -> crate::Result<Option<CommentAction>> {
    comment(api, owner, repo, pr, body, false)
}

/// The upsert of both functions above; `create`: post when no comment is convbench's.
fn comment(
    api: &GithubApi,
    owner: &str,
    repo: &str,
    pr: u64,
    body: &str,
    create: bool,
) -> crate::Result<Option<CommentAction>> {
    let token = api.token.as_ref().ok_or(GitHubError::NoToken {
        consequence: "the comment was not posted; set GITHUB_TOKEN to a token with `pull-requests: write`",
    })?;
    if body.len() > MAX_COMMENT_BYTES {
        return Err(GitHubError::CommentTooLong {
            bytes: body.len(),
            limit: MAX_COMMENT_BYTES,
        }
        .into());
    }
    block_on(token, async {
        let call = CommentCall {
            session: Session::open(api, token)?,
            author: &api.comment_author,
            owner,
            repo,
            pr,
        };
        if create {
            call.upsert(body).await.map(Some)
        } else {
            call.update_only(body).await
        }
    })
}

/// How a completed check run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckConclusion {
    /// Passed: no regression.
    Success,
    /// Failed: a regression (or another reason to block the merge).
    Failure,
    /// Neither: informational, inconclusive results.
    Neutral,
}

impl CheckConclusion {
    /// The value of the API's `conclusion` field.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckConclusion::Success => "success",
            CheckConclusion::Failure => "failure",
            CheckConclusion::Neutral => "neutral",
        }
    }
}

/// A completed check run on one commit: a line in the pull request's checks, with a Markdown
/// report behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    /// The check's name, as listed on the pull request (e.g. `convbench`).
    pub name: String,
    /// The commit the check is about: 40 hexadecimal digits.
    pub head_sha: String,
    /// How it ended.
    pub conclusion: CheckConclusion,
    /// The report's title (one line).
    pub title: String,
    /// The report, Markdown; cut to [`MAX_CHECK_SUMMARY_BYTES`] with a note when longer.
    pub summary: String,
    /// A page with the details (e.g. the workflow run), when there is one.
    pub details_url: Option<String>,
}

/// Creates `check` as a completed check run in `owner/repo` (`POST
/// /repos/{owner}/{repo}/check-runs`) and returns its id. Blocks until done, at most
/// [`GithubApi::with_deadline`].
///
/// The summary is cut at a character boundary to [`MAX_CHECK_SUMMARY_BYTES`], with a note
/// saying so. Each check run carries a fresh `external_id`; after a 5xx answer or no answer, the
/// check runs of the commit with that name are listed and one with that `external_id` is taken
/// as created, so a retry never makes a second one. Rate limits and the deadline are handled as
/// by [`post_or_update_comment`].
///
/// Errors never contain the token. `head_sha` not 40 hexadecimal digits, or an empty name or
/// title: [`GitHubError::NotASha`] or [`GitHubError::UntitledCheck`], before any request.
/// Without a token: [`GitHubError::NoToken`], before any request. A 403 says the token lacks
/// `checks: write` and how to grant it; other failures are [`GitHubError::Api`] as for
/// [`post_or_update_comment`].
pub fn create_check_run(api: &GithubApi, owner: &str, repo: &str, check: &CheckRun) -> crate::Result<u64> {
    if check.head_sha.len() != 40 || !check.head_sha.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err(GitHubError::NotASha {
            what: "check run head_sha",
            value: check.head_sha.clone(),
        }
        .into());
    }
    if check.name.trim().is_empty() || check.title.trim().is_empty() {
        return Err(GitHubError::UntitledCheck.into());
    }
    let token = api.token.as_ref().ok_or(GitHubError::NoToken {
        consequence: "cannot create the check run",
    })?;
    block_on(token, async {
        let call = CheckCall {
            session: Session::open(api, token)?,
            owner,
            repo,
            external_id: format!("convbench-{:016x}", rand::random::<u64>()),
        };
        call.create(check).await
    })
}

/// A job of a workflow run, as the jobs API lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RunJob {
    /// The job's name, e.g. `benchmarks (self-hosted, gpu, ephemeral)`.
    pub name: String,
    /// `completed`, `in_progress`, ...
    pub status: String,
    /// `success`, `failure`, `cancelled`, `timed_out`, `skipped`, ...; null until completed.
    pub conclusion: Option<String>,
}

#[derive(Debug, Deserialize)]
struct JobList {
    jobs: Vec<RunJob>,
}

#[derive(Debug, Deserialize)]
struct CompareAnswer {
    merge_base_commit: CommitRef,
}

#[derive(Debug, Deserialize)]
struct CommitRef {
    sha: String,
}

/// The merge-base of `head_sha` with `branch`, as GitHub computes it (`GET
/// /repos/{owner}/{repo}/compare/{branch}...{head_sha}`, its `merge_base_commit`): the base a
/// pull request's numbers are judged against, computed by the trusted side, never named by the
/// pull request. `head_sha` must be 40 hexadecimal digits and `branch` a plain branch name
/// ([`GitHubError::NotASha`], [`GitHubError::BadBranch`], before any request); an answer
/// without a 40-digit merge base is [`GitHubError::NotACommit`].
pub fn merge_base(
    api: &GithubApi,
    owner: &str,
    repo: &str,
    branch: &str,
    head_sha: &str,
) -> crate::Result<String> {
    if !is_full_sha(head_sha) {
        return Err(GitHubError::NotASha {
            what: "head commit",
            value: head_sha.to_string(),
        }
        .into());
    }
    if branch.is_empty()
        || branch.starts_with('-')
        || !branch
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || "-._/".contains(ch))
    {
        return Err(GitHubError::BadBranch {
            branch: branch.to_string(),
        }
        .into());
    }
    let token = api.token.as_ref().ok_or(GitHubError::NoToken {
        consequence: "cannot ask GitHub for the merge-base",
    })?;
    let route = format!("/repos/{owner}/{repo}/compare/{branch}...{head_sha}?per_page=1");
    let target = format!("comparing {head_sha} with {branch} in {owner}/{repo}");
    let advice = format!(
        "branch {branch} or commit {head_sha} not found in {owner}/{repo}, or the token cannot read it;          the job needs `contents: read`"
    );
    let sha = block_on(token, async {
        let session = Session::open(api, token)?;
        let answer: CompareAnswer = get_json(&session, &route, &target, &advice).await?;
        Ok(answer.merge_base_commit.sha)
    })?;
    if !is_full_sha(&sha) {
        return Err(GitHubError::NotACommit {
            api_url: api.api_url.clone(),
            target,
            answer: sha.chars().take(64).collect(),
        }
        .into());
    }
    Ok(sha)
}

/// The jobs of workflow run `run_id` (its first 100: a benchmark matrix is smaller), with
/// their conclusions, so that a failed or cancelled leg is judged, not overlooked.
pub fn run_jobs(api: &GithubApi, owner: &str, repo: &str, run_id: u64) -> crate::Result<Vec<RunJob>> {
    let token = api.token.as_ref().ok_or(GitHubError::NoToken {
        consequence: "cannot list the jobs of the benchmark run",
    })?;
    let route = format!("/repos/{owner}/{repo}/actions/runs/{run_id}/jobs?filter=latest&per_page=100");
    let target = format!("listing the jobs of run {run_id} in {owner}/{repo}");
    let advice = format!(
        "run {run_id} not found in {owner}/{repo}, or the token cannot read it; the job needs `actions: read` \
         and --run-id github.event.workflow_run.id"
    );
    block_on(token, async {
        let session = Session::open(api, token)?;
        let list: JobList = get_json(&session, &route, &target, &advice).await?;
        Ok(list.jobs)
    })
}

fn is_full_sha(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// A GET answered as `T`; a refusal says `advice_404` for a 404, what is missing for a 403.
async fn get_json<T: serde::de::DeserializeOwned>(
    session: &Session<'_>,
    route: &str,
    target: &str,
    advice_404: &str,
) -> Result<T, String> {
    let answer = session
        .idempotent(Verb::Get, route, None, target)
        .await
        .map_err(|stop| match stop {
            Stop::GaveUp(message) => message,
            Stop::Refused(answer) => {
                let advice = match answer.status {
                    404 => advice_404.to_string(),
                    403 => format!("{}; the token lacks a read permission", answer.message()),
                    _ => answer.message(),
                };
                session.refused(&answer, target, &advice)
            }
        })?;
    answer.json(session.api_url, target)
}

/// Runs `operation` on a private current-thread runtime; its error message, scrubbed of the
/// token, becomes [`GitHubError::Api`].
fn block_on<T>(
    token: &Token,
    operation: impl std::future::Future<Output = Result<T, String>>,
) -> crate::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| GitHubError::Runtime {
            message: error.to_string(),
        })?;
    runtime.block_on(operation).map_err(|error| {
        GitHubError::Api {
            message: scrub(&error, token),
        }
        .into()
    })
}

/// One upsert against one pull request; errors are messages, scrubbed by the caller.
struct CommentCall<'a> {
    session: Session<'a>,
    author: &'a str,
    owner: &'a str,
    repo: &'a str,
    pr: u64,
}

/// A comment as listed: only the fields convbench reads. GitHub's schema lets `body` and
/// `user` be null (`user` is null once the author's account is deleted): such a comment is
/// listed like any other, and is never convbench's.
#[derive(Debug, Deserialize)]
struct ListedComment {
    id: u64,
    body: Option<String>,
    user: Option<Login>,
}

/// The author of a comment.
#[derive(Debug, Deserialize)]
struct Login {
    login: String,
}

/// What a create answers with: the new thing's id.
#[derive(Debug, Deserialize)]
struct Created {
    id: u64,
}

impl CommentCall<'_> {
    /// Edits convbench's comment when there is one (posting anew if the edit is refused);
    /// `None` when there is none.
    async fn update_only(&self, body: &str) -> Result<Option<CommentAction>, String> {
        let Some(existing) = self.find_marker_comment().await? else {
            return Ok(None);
        };
        if let Some(id) = self.edit(existing.id, body).await? {
            return Ok(Some(CommentAction::Updated(id)));
        }
        self.create(body).await.map(Some)
    }

    async fn upsert(&self, body: &str) -> Result<CommentAction, String> {
        if let Some(existing) = self.find_marker_comment().await? {
            // Refused (a comment locked or gone, a token that may post but not edit): post a
            // fresh comment rather than leave the old results up.
            if let Some(id) = self.edit(existing.id, body).await? {
                return Ok(CommentAction::Updated(id));
            }
        }
        self.create(body).await
    }

    /// Edits comment `id` to `body` with PATCH (GitHub's documented method; octocrab 0.54's
    /// `update_comment` sends POST). `None` when the edit is refused with 403 or 404.
    async fn edit(&self, id: u64, body: &str) -> Result<Option<u64>, String> {
        let route = format!("/repos/{}/{}/issues/comments/{id}", self.owner, self.repo);
        let target = format!("updating comment {id} {}", self.on_pull_request());
        let payload = serde_json::json!({ "body": body });
        match self
            .session
            .idempotent(Verb::Patch, &route, Some(&payload), &target)
            .await
        {
            Ok(answer) => Ok(Some(answer.json::<Created>(self.session.api_url, &target)?.id)),
            Err(Stop::Refused(answer)) if matches!(answer.status, 403 | 404) => Ok(None),
            Err(stop) => Err(self.stop_message(stop, &target)),
        }
    }

    /// Posts `body` as a new comment, then makes sure it is the only convbench comment
    /// ([`CommentCall::converge`]). After an answer that leaves it unknown whether the
    /// comment was made (5xx, no answer), the comments are listed again before another POST:
    /// a convbench comment there now is the one this POST made (or a concurrent run's), and
    /// is edited to `body` if it says something else.
    async fn create(&self, body: &str) -> Result<CommentAction, String> {
        let route = format!("/repos/{}/{}/issues/{}/comments", self.owner, self.repo, self.pr);
        let target = format!("posting the comment {}", self.on_pull_request());
        let payload = serde_json::json!({ "body": body });
        let posted = self
            .session
            .create(&route, &payload, &target, async || {
                self.find_marker_comment().await
            })
            .await
            .map_err(|stop| self.stop_message(stop, &target))?;
        match posted {
            Posted::Answer(answer) => {
                let created = answer.json::<Created>(self.session.api_url, &target)?.id;
                Ok(self.converge(created, body).await)
            }
            Posted::Found(found) if found.body.as_deref() == Some(body) => {
                Ok(CommentAction::Created(found.id))
            }
            Posted::Found(found) => match self.edit(found.id, body).await? {
                Some(id) => Ok(CommentAction::Updated(id)),
                None => Err(format!(
                    "the GitHub API at {} refused to edit comment {} {}, which appeared after a failed \
                     POST: {PERMISSION_ADVICE}",
                    self.session.api_url,
                    found.id,
                    self.on_pull_request()
                )),
            },
        }
    }

    /// The first comment that is convbench's own, reading pages until found: written by the
    /// token's identity, with the marker as its exact first line (as every body
    /// [`super::comment_body`] renders opens). Anyone can write the marker, so a comment by
    /// anyone else is never taken for convbench's, however it starts; and a comment of the
    /// token's identity that merely mentions the marker is not overwritten either.
    async fn find_marker_comment(&self) -> Result<Option<ListedComment>, String> {
        Ok(self.marker_comments(true).await?.into_iter().next())
    }

    /// convbench's own comments (as [`CommentCall::find_marker_comment`] tells them), in the
    /// order GitHub lists them (oldest first), following the pages; `first_only`: stop at the
    /// first one.
    async fn marker_comments(&self, first_only: bool) -> Result<Vec<ListedComment>, String> {
        let target = format!("listing the comments {}", self.on_pull_request());
        let mut route = format!(
            "/repos/{}/{}/issues/{}/comments?per_page={COMMENTS_PER_PAGE}",
            self.owner, self.repo, self.pr
        );
        let mut ours = Vec::new();
        loop {
            let answer = self
                .session
                .idempotent(Verb::Get, &route, None, &target)
                .await
                .map_err(|stop| self.listing_stop_message(stop, &target))?;
            let page: Vec<ListedComment> = answer.json(self.session.api_url, &target)?;
            ours.extend(page.into_iter().filter(|comment| self.is_ours(comment)));
            if first_only && !ours.is_empty() {
                ours.truncate(1);
                return Ok(ours);
            }
            match answer.next_page {
                Some(next) => route = next,
                None => return Ok(ours),
            }
        }
    }

    /// Whether `comment` is convbench's: by the token's identity (a comment whose user is
    /// null, a deleted account's, never is), opening with the marker line.
    fn is_ours(&self, comment: &ListedComment) -> bool {
        comment
            .user
            .as_ref()
            .is_some_and(|user| user.login == self.author)
            && comment
                .body
                .as_deref()
                .and_then(|text| text.lines().next())
                .is_some_and(|first| first == COMMENT_MARKER)
    }

    /// After this run posted comment `created`: two runs at once (a matrix of `comment` jobs)
    /// may each have listed no comment and posted one. Lists again; when a convbench comment
    /// older than `created` is there, that one is kept, as every later run will find it: it is
    /// edited to `body` and `created` is deleted. The newer comments of other runs are theirs
    /// to delete, since each run lists after its own POST, the later of two runs sees both.
    ///
    /// Never fails: the comment is posted either way, so when listing, editing or deleting
    /// fails, `created` stands (a duplicate at worst).
    async fn converge(&self, created: u64, body: &str) -> CommentAction {
        let Ok(ours) = self.marker_comments(false).await else {
            return CommentAction::Created(created);
        };
        let Some(oldest) = ours.first().map(|comment| comment.id) else {
            return CommentAction::Created(created);
        };
        if oldest == created || !ours.iter().any(|comment| comment.id == created) {
            return CommentAction::Created(created);
        }
        match self.edit(oldest, body).await {
            Ok(Some(kept)) => {
                // Gone already (404) is as good as deleted; any other failure leaves a duplicate
                // with the same text, which the comment kept supersedes.
                let _ = self.delete(created).await;
                CommentAction::Updated(kept)
            }
            Ok(None) | Err(_) => CommentAction::Created(created),
        }
    }

    /// Deletes comment `id`; a 404 (deleted already) counts as done.
    async fn delete(&self, id: u64) -> Result<(), String> {
        let route = format!("/repos/{}/{}/issues/comments/{id}", self.owner, self.repo);
        let target = format!("deleting the duplicate comment {id} {}", self.on_pull_request());
        match self.session.idempotent(Verb::Delete, &route, None, &target).await {
            Ok(_) => Ok(()),
            Err(Stop::Refused(answer)) if answer.status == 404 => Ok(()),
            Err(stop) => Err(self.stop_message(stop, &target)),
        }
    }

    fn on_pull_request(&self) -> String {
        format!("on pull request #{} in {}/{}", self.pr, self.owner, self.repo)
    }

    /// The message for a listing that stopped. Reading needs no write permission, so a 404
    /// is a wrong pull request or repository, or a token that may not read them; anything else
    /// is worded as for a write.
    fn listing_stop_message(&self, stop: Stop, target: &str) -> String {
        match stop {
            Stop::Refused(answer) if answer.status == 404 => {
                let advice = format!(
                    "pull request #{pr} was not found in {owner}/{repo}. Check the number (the `--pr` of \
                     `comment`, which comment.yml reads from the pr/number artifact; the event payload's for \
                     `ci`) and the repository (GITHUB_REPOSITORY). If both \
                     are right, the token cannot read that pull request: in a private repository the job \
                     needs `permissions: pull-requests: read` or `issues: read` (write includes read), and \
                     a token of another repository or GitHub App installation cannot see it",
                    pr = self.pr,
                    owner = self.owner,
                    repo = self.repo
                );
                self.session.refused(&answer, target, &advice)
            }
            stop => self.stop_message(stop, target),
        }
    }

    /// The message for a request that stopped: the fix for 403 and 404, else the status.
    fn stop_message(&self, stop: Stop, target: &str) -> String {
        let answer = match stop {
            Stop::GaveUp(message) => return message,
            Stop::Refused(answer) => answer,
        };
        let advice = match answer.status {
            403 => PERMISSION_ADVICE.to_string(),
            // 404 is also GitHub's answer when the token may not even see the pull request.
            404 => format!(
                "pull request #{} not found in {}/{}, or the token cannot see it; {PERMISSION_ADVICE}",
                self.pr, self.owner, self.repo
            ),
            _ => answer.message(),
        };
        self.session.refused(&answer, target, &advice)
    }
}

/// One check-run creation; errors are messages, scrubbed by the caller.
struct CheckCall<'a> {
    session: Session<'a>,
    owner: &'a str,
    repo: &'a str,
    /// Sent with the check run, to recognise it when listing after a failed POST.
    external_id: String,
}

/// A check run as listed: only the fields convbench reads.
#[derive(Debug, Deserialize)]
struct ListedCheckRun {
    id: u64,
    external_id: Option<String>,
}

/// The answer to listing the check runs of a commit.
#[derive(Debug, Deserialize)]
struct CheckRunList {
    check_runs: Vec<ListedCheckRun>,
}

impl CheckCall<'_> {
    async fn create(&self, check: &CheckRun) -> Result<u64, String> {
        let route = format!("/repos/{}/{}/check-runs", self.owner, self.repo);
        let target = format!(
            "creating check run `{}` on commit {} in {}/{}",
            check.name, check.head_sha, self.owner, self.repo
        );
        let mut payload = serde_json::json!({
            "name": check.name,
            "head_sha": check.head_sha,
            "status": "completed",
            "conclusion": check.conclusion.as_str(),
            "external_id": self.external_id,
            "output": { "title": check.title, "summary": cap_summary(&check.summary) },
        });
        if let Some(url) = &check.details_url {
            payload["details_url"] = Value::from(url.as_str());
        }
        let posted = self
            .session
            .create(&route, &payload, &target, async || self.find(check).await)
            .await
            .map_err(|stop| self.stop_message(stop, &target, check))?;
        match posted {
            Posted::Answer(answer) => Ok(answer.json::<Created>(self.session.api_url, &target)?.id),
            Posted::Found(id) => Ok(id),
        }
    }

    /// The id of this call's check run among the commit's runs named `check.name`, if GitHub
    /// made it.
    async fn find(&self, check: &CheckRun) -> Result<Option<u64>, String> {
        let route = format!(
            "/repos/{}/{}/commits/{}/check-runs?check_name={}&filter=all&per_page=100",
            self.owner,
            self.repo,
            check.head_sha,
            percent_encode(&check.name)
        );
        let target = format!(
            "listing the check runs named `{}` on commit {} in {}/{}",
            check.name, check.head_sha, self.owner, self.repo
        );
        let answer = self
            .session
            .idempotent(Verb::Get, &route, None, &target)
            .await
            .map_err(|stop| self.stop_message(stop, &target, check))?;
        let listed: CheckRunList = answer.json(self.session.api_url, &target)?;
        Ok(listed
            .check_runs
            .into_iter()
            .find(|run| run.external_id.as_deref() == Some(self.external_id.as_str()))
            .map(|run| run.id))
    }

    fn stop_message(&self, stop: Stop, target: &str, check: &CheckRun) -> String {
        let answer = match stop {
            Stop::GaveUp(message) => return message,
            Stop::Refused(answer) => answer,
        };
        let advice = match answer.status {
            403 => CHECKS_ADVICE.to_string(),
            404 => format!(
                "repository {}/{} or commit {} not found, or the token cannot see it; {CHECKS_ADVICE}",
                self.owner, self.repo, check.head_sha
            ),
            _ => answer.message(),
        };
        self.session.refused(&answer, target, &advice)
    }
}

/// `summary` cut at a character boundary so that it and a note saying so fit in
/// [`MAX_CHECK_SUMMARY_BYTES`].
fn cap_summary(summary: &str) -> String {
    if summary.len() <= MAX_CHECK_SUMMARY_BYTES {
        return summary.to_string();
    }
    let mut end = MAX_CHECK_SUMMARY_BYTES - SUMMARY_TRUNCATED_NOTE.len();
    while !summary.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{SUMMARY_TRUNCATED_NOTE}", &summary[..end])
}

/// `text` as a URL query value: unreserved characters kept, every other byte `%XX`.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// The HTTP methods convbench uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Get,
    Post,
    Patch,
    Delete,
}

/// An HTTP answer, read whole: the status, the headers the retry policy and pagination read,
/// and the body.
#[derive(Debug)]
struct Answer {
    status: u16,
    /// The status with its reason, e.g. `502 Bad Gateway`.
    status_line: String,
    retry_after: Option<String>,
    rate_limit_remaining: Option<String>,
    rate_limit_reset: Option<String>,
    /// The `rel="next"` URL of the `Link` header.
    next_page: Option<String>,
    body: String,
}

impl Answer {
    fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as `T`, or a message saying it is not one.
    fn json<T: serde::de::DeserializeOwned>(&self, api_url: &str, target: &str) -> Result<T, String> {
        serde_json::from_str(&self.body).map_err(|error| {
            format!(
                "the GitHub API at {api_url} answered {} to {target} with a body convbench cannot read: {error}",
                self.status_line
            )
        })
    }

    /// GitHub's `message`, else the body, else the status's reason.
    fn message(&self) -> String {
        let from_json = serde_json::from_str::<Value>(&self.body)
            .ok()
            .and_then(|value| value.get("message")?.as_str().map(str::to_string));
        match from_json {
            Some(message) => message,
            None if !self.body.trim().is_empty() => self.body.trim().to_string(),
            None => self.status_line.clone(),
        }
    }

    /// Whether this is a rate limit, and how long GitHub asks to wait when it says: every 429;
    /// a 403 with `Retry-After`, with `x-ratelimit-remaining: 0`, or whose message speaks of a
    /// rate limit (primary "API rate limit exceeded", or "secondary rate limit"). A plain 403 is
    /// a permission problem.
    fn rate_limit(&self, now: SystemTime) -> Option<RateLimit> {
        let exhausted = self.rate_limit_remaining.as_deref().map(str::trim) == Some("0");
        let secondary = self
            .message()
            .to_ascii_lowercase()
            .contains("secondary rate limit");
        let limited = match self.status {
            429 => true,
            403 => {
                self.retry_after.is_some()
                    || exhausted
                    || secondary
                    || self.message().to_ascii_lowercase().contains("rate limit")
            }
            _ => false,
        };
        if !limited {
            return None;
        }
        let from_retry_after = self
            .retry_after
            .as_deref()
            .and_then(|value| parse_retry_after(value, now));
        let from_reset = || {
            let reset = self.rate_limit_reset.as_deref()?.trim().parse::<u64>().ok()?;
            let now_s = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
            Some(Duration::from_secs(reset.saturating_sub(now_s).max(1)))
        };
        let wait = from_retry_after
            .or_else(|| if exhausted { from_reset() } else { None })
            .or(if secondary {
                Some(SECONDARY_RATE_LIMIT_WAIT)
            } else {
                None
            });
        Some(RateLimit { secondary, wait })
    }
}

/// A rate-limit answer.
#[derive(Debug, Clone, Copy)]
struct RateLimit {
    secondary: bool,
    /// How long until it resets, when the answer says (or GitHub documents it).
    wait: Option<Duration>,
}

/// `Retry-After` as a wait: delay seconds, or an HTTP date (IMF-fixdate,
/// `Sun, 06 Nov 1994 08:49:37 GMT`) taken relative to `now`.
fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let mut fields = value.split_whitespace().skip(1);
    let day: u32 = fields.next()?.parse().ok()?;
    let month = match fields.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = fields.next()?.parse().ok()?;
    let mut clock = fields.next()?.split(':').map(|part| part.parse::<u64>().ok());
    let (hours, minutes, seconds) = (clock.next()??, clock.next()??, clock.next()??);
    if fields.next()? != "GMT" || !(1..=31).contains(&day) || hours > 23 || minutes > 59 || seconds > 60 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    let at = UNIX_EPOCH + Duration::from_secs(days * 86_400 + hours * 3_600 + minutes * 60 + seconds);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// A time as `YYYY-MM-DD HH:MM:SS UTC`: the report's RFC 3339 date, spelled for a sentence.
fn format_utc(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    crate::report::rfc3339_utc(seconds)
        .replacen('T', " ", 1)
        .replacen('Z', " UTC", 1)
}

/// A duration for a message: whole seconds as `N s`, else to a tenth.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// What one try of a request came to.
#[derive(Debug)]
enum Outcome {
    Answered(Answer),
    /// The request failed before an answer: connection, TLS, a broken response.
    Unreachable(String),
    /// No answer within the time given.
    NoAnswer(Duration),
}

/// Why a request stopped being tried.
#[derive(Debug)]
enum Stop {
    /// An answer that trying again does not change (a 4xx that is not a rate limit); the
    /// caller words it, knowing what was asked.
    Refused(Box<Answer>),
    /// Tries spent, a rate limit too long to wait, or the deadline: the finished message.
    GaveUp(String),
}

/// A failed try worth another one.
#[derive(Debug)]
struct Retry {
    wait: Duration,
    /// Whether the request may have taken effect all the same (5xx, no answer, broken
    /// connection): a POST must then look before it is sent again.
    may_have_landed: bool,
}

/// What a create ([`Session::create`]) came to.
enum Posted<T> {
    /// The POST's own success answer.
    Answer(Answer),
    /// The POST's result, found after an answer that left it unknown.
    Found(T),
}

/// The client and the retry policy of one operation, with its deadline running.
struct Session<'a> {
    client: Octocrab,
    api_url: &'a str,
    started: Instant,
    deadline: Duration,
    backoff: Duration,
}

impl<'a> Session<'a> {
    fn open(api: &'a GithubApi, token: &Token) -> Result<Self, String> {
        super::env::check_api_url(&api.api_url).map_err(|error| error.to_string())?;
        let builder = Octocrab::builder().base_uri(&api.api_url).map_err(|_| {
            format!(
                "GitHub API URL `{}` is not a URL; set GITHUB_API_URL to e.g. {}",
                api.api_url,
                super::DEFAULT_API_URL
            )
        })?;
        let client = builder
            .personal_token(token.expose().to_string())
            // The policy is convbench's (see the module docs): octocrab's own layer would
            // re-send a POST after a 5xx, and retry at once whatever GitHub asks.
            .add_retry_config(RetryConfig::None)
            .set_connect_timeout(Some(CONNECT_TIMEOUT))
            .set_read_timeout(Some(REQUEST_TIMEOUT))
            .build()
            .map_err(|error| {
                format!(
                    "cannot set up a client for the GitHub API at {}: {error}",
                    api.api_url
                )
            })?;
        Ok(Self {
            client,
            api_url: &api.api_url,
            started: Instant::now(),
            deadline: api.deadline,
            backoff: api.backoff,
        })
    }

    fn remaining(&self) -> Duration {
        self.deadline.saturating_sub(self.started.elapsed())
    }

    /// One try: the request and its whole answer, within the per-request timeout and what is
    /// left of the deadline.
    async fn exchange(&self, verb: Verb, route: &str, body: Option<&Value>) -> Outcome {
        let limit = REQUEST_TIMEOUT.min(self.remaining());
        let exchange = async {
            let response = match verb {
                Verb::Get => self.client._get(route).await,
                Verb::Post => self.client._post(route, body).await,
                Verb::Patch => self.client._patch(route, body).await,
                Verb::Delete => self.client._delete(route, body).await,
            }?;
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_string)
            };
            let (retry_after, rate_limit_remaining, rate_limit_reset) = (
                header("retry-after"),
                header("x-ratelimit-remaining"),
                header("x-ratelimit-reset"),
            );
            let next_page = header("link").and_then(|link| next_link(&link));
            let status = response.status();
            let body = self.client.body_to_string(response).await?;
            Ok::<_, octocrab::Error>(Answer {
                status: status.as_u16(),
                status_line: status.to_string(),
                retry_after,
                rate_limit_remaining,
                rate_limit_reset,
                next_page,
                body,
            })
        };
        match tokio::time::timeout(limit, exchange).await {
            Ok(Ok(answer)) => Outcome::Answered(answer),
            Ok(Err(error)) => Outcome::Unreachable(error_chain(&error)),
            Err(_) => Outcome::NoAnswer(limit),
        }
    }

    /// A request that may be sent again as it is (GET; PATCH of a known comment), retried
    /// while [`Session::judge`] says so. `target` says what it does, for messages.
    async fn idempotent(
        &self,
        verb: Verb,
        route: &str,
        body: Option<&Value>,
        target: &str,
    ) -> Result<Answer, Stop> {
        let mut attempt = 1;
        loop {
            match self.exchange(verb, route, body).await {
                Outcome::Answered(answer) if answer.is_success() => return Ok(answer),
                failed => {
                    let retry = self.judge(failed, attempt, target)?;
                    tokio::time::sleep(retry.wait).await;
                }
            }
            attempt += 1;
        }
    }

    /// A POST that creates something, retried like [`Session::idempotent`] except that after a
    /// failure that may have landed, `landed` looks for the thing first: found, it is the
    /// result and the POST is not sent again.
    async fn create<T>(
        &self,
        route: &str,
        payload: &Value,
        target: &str,
        landed: impl AsyncFn() -> Result<Option<T>, String>,
    ) -> Result<Posted<T>, Stop> {
        let mut attempt = 1;
        loop {
            match self.exchange(Verb::Post, route, Some(payload)).await {
                Outcome::Answered(answer) if answer.is_success() => return Ok(Posted::Answer(answer)),
                failed => {
                    let retry = self.judge(failed, attempt, target)?;
                    tokio::time::sleep(retry.wait).await;
                    if retry.may_have_landed
                        && let Some(found) = landed().await.map_err(Stop::GaveUp)?
                    {
                        return Ok(Posted::Found(found));
                    }
                }
            }
            attempt += 1;
        }
    }

    /// Whether a failed try (the `attempt`th) is worth another, and after how long: a 5xx,
    /// a transport error or no answer after a backoff; a rate limit after the wait GitHub
    /// asks for. Stops after [`MAX_ATTEMPTS`], when a rate limit resets later than
    /// [`MAX_RATE_LIMIT_WAIT`], or when the wait would pass the deadline.
    fn judge(&self, failed: Outcome, attempt: u32, target: &str) -> Result<Retry, Stop> {
        let api_url = self.api_url;
        let (wait, may_have_landed, failure) = match failed {
            Outcome::Answered(answer) => {
                if let Some(limit) = answer.rate_limit(SystemTime::now()) {
                    return self.rate_limited(&answer, limit, attempt, target);
                }
                if !matches!(answer.status, 500 | 502 | 503 | 504) {
                    return Err(Stop::Refused(Box::new(answer)));
                }
                let failure = format!(
                    "the GitHub API at {api_url} answered {} to {target}: {}",
                    answer.status_line,
                    answer.message()
                );
                // A 503 may say when to come back; never sooner than the backoff, never
                // longer than the longest backoff.
                let asked = (answer.retry_after.as_deref())
                    .and_then(|value| parse_retry_after(value, SystemTime::now()))
                    .unwrap_or(Duration::ZERO);
                let wait = backoff_wait(self.backoff, attempt).max(asked.min(MAX_BACKOFF));
                (wait, true, failure)
            }
            Outcome::Unreachable(error) => {
                let failure = format!("could not reach the GitHub API at {api_url} while {target}: {error}");
                (backoff_wait(self.backoff, attempt), true, failure)
            }
            Outcome::NoAnswer(limit) => {
                if self.remaining().is_zero() {
                    return Err(Stop::GaveUp(format!(
                        "timed out after {} while {target} (no answer from the GitHub API at {api_url})",
                        seconds(self.deadline)
                    )));
                }
                let failure = format!(
                    "the GitHub API at {api_url} did not answer within {} while {target}",
                    seconds(limit)
                );
                (backoff_wait(self.backoff, attempt), true, failure)
            }
        };
        if attempt >= MAX_ATTEMPTS {
            return Err(Stop::GaveUp(format!(
                "{failure} (tried {MAX_ATTEMPTS} times over {}; GitHub's status is at https://www.githubstatus.com)",
                seconds(self.started.elapsed())
            )));
        }
        if wait >= self.remaining() {
            return Err(Stop::GaveUp(format!(
                "timed out while {target}: {} of the {} deadline spent, too little left to wait {} for \
                 another try (last: {failure})",
                seconds(self.started.elapsed()),
                seconds(self.deadline),
                seconds(wait)
            )));
        }
        Ok(Retry {
            wait,
            may_have_landed,
        })
    }

    /// The retry (or the message) for a rate-limit answer.
    fn rate_limited(
        &self,
        answer: &Answer,
        limit: RateLimit,
        attempt: u32,
        target: &str,
    ) -> Result<Retry, Stop> {
        let kind = if limit.secondary {
            "secondary rate limit"
        } else {
            "rate limit"
        };
        let wait = limit.wait.unwrap_or_else(|| backoff_wait(self.backoff, attempt));
        let resets = format!(
            "it resets in {}, at {}",
            seconds(wait),
            format_utc(SystemTime::now() + wait)
        );
        let gave_up = |why: &str| {
            Stop::GaveUp(format!(
                "rate limited by the GitHub API at {} ({}, {kind}) while {target}: {resets}; {why}; run the \
                 job again after that ({})",
                self.api_url,
                answer.status_line,
                answer.message()
            ))
        };
        if attempt >= MAX_ATTEMPTS {
            return Err(gave_up(&format!("still limited after {MAX_ATTEMPTS} tries")));
        }
        if wait > MAX_RATE_LIMIT_WAIT {
            return Err(gave_up(&format!(
                "convbench waits at most {}",
                seconds(MAX_RATE_LIMIT_WAIT)
            )));
        }
        if wait >= self.remaining() {
            return Err(gave_up(&format!(
                "that is past the deadline of {}",
                seconds(self.deadline)
            )));
        }
        Ok(Retry {
            wait,
            may_have_landed: false,
        })
    }

    /// The message for an answer GitHub will not change its mind about.
    fn refused(&self, answer: &Answer, target: &str, advice: &str) -> String {
        format!(
            "the GitHub API at {} answered {} to {target}: {advice}",
            self.api_url, answer.status_line
        )
    }
}

/// The wait after the `attempt`th try: `first` doubled per further try, capped at
/// [`MAX_BACKOFF`], drawn between half and all of that so that concurrent jobs spread out.
fn backoff_wait(first: Duration, attempt: u32) -> Duration {
    let doublings = attempt.saturating_sub(1).min(16);
    let full = first.saturating_mul(1 << doublings).min(MAX_BACKOFF);
    full / 2 + (full / 2).mul_f64(rand::random::<f64>())
}

/// The `rel="next"` URL of a `Link` header.
fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|param| param.trim().replace(' ', "") == r#"rel="next""#);
        is_next.then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

/// An error with its sources, `outer: inner: ...`.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = cause.source();
    }
    message
}

/// `message` with every occurrence of the token replaced by `***`, in case a server or a
/// library echoes it.
fn scrub(message: &str, token: &Token) -> String {
    if token.expose().is_empty() {
        message.to_string()
    } else {
        message.replace(token.expose(), "***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(format_utc(now), "1994-11-06 08:49:37 UTC");
        assert_eq!(
            format_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29 00:00:00 UTC"
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        for (attempt, full) in [(1, 1), (2, 2), (3, 4), (10, 30)] {
            let wait = backoff_wait(Duration::from_secs(1), attempt);
            let full = Duration::from_secs(full);
            assert!(wait >= full / 2 && wait <= full, "try {attempt}: {wait:?}");
        }
    }

    #[test]
    fn next_link_and_summary_cap() {
        let link =
            r#"<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last""#;
        assert_eq!(
            next_link(link).as_deref(),
            Some("https://api.github.com/x?page=2")
        );
        assert_eq!(
            next_link(r#"<https://api.github.com/x?page=1>; rel="prev""#),
            None
        );
        let long = "é".repeat(MAX_CHECK_SUMMARY_BYTES);
        let capped = cap_summary(&long);
        assert!(capped.len() <= MAX_CHECK_SUMMARY_BYTES);
        assert!(capped.ends_with(SUMMARY_TRUNCATED_NOTE));
        assert_eq!(cap_summary("short"), "short");
        assert_eq!(percent_encode("convbench / H100"), "convbench%20%2F%20H100");
    }
}
