//! The sticky pull-request comment through the GitHub REST API (octocrab), behind a blocking
//! interface.

use super::comment::{COMMENT_MARKER, MAX_COMMENT_BYTES};
use super::env::{ActionsEnv, Token};
use crate::Error;
use octocrab::Octocrab;
use octocrab::models::issues::Comment;
use std::time::Duration;

/// What a token needs, and what to do without it; said for every 403 and 404.
const PERMISSION_ADVICE: &str = "the token lacks pull-requests: write; add `permissions: pull-requests: write` \
     to the job, or use the workflow_run pattern (comment.yml) for fork PRs";

/// Comments listed per request: the most GitHub allows, to need the fewest pages.
const COMMENTS_PER_PAGE: u8 = 100;

/// How long to wait for a connection to the API.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long to wait for an answer from the API.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The login of the identity behind a GitHub Actions `GITHUB_TOKEN`: the author of the
/// comments convbench may update.
pub const DEFAULT_COMMENT_AUTHOR: &str = "github-actions[bot]";

/// Where the REST API is, the token to call it with, and whose comments are convbench's.
#[derive(Debug, Clone)]
pub struct GithubApi {
    api_url: String,
    token: Option<Token>,
    comment_author: String,
}

impl GithubApi {
    /// An API at `api_url` (e.g. `https://api.github.com`, or `https://HOST/api/v3` on GitHub
    /// Enterprise Server), called with `token` when there is one.
    pub fn new(api_url: impl Into<String>, token: Option<Token>) -> Self {
        Self {
            api_url: api_url.into(),
            token,
            comment_author: DEFAULT_COMMENT_AUTHOR.to_string(),
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

    /// The API's base URL.
    pub fn api_url(&self) -> &str {
        &self.api_url
    }

    /// Whether a token is set.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
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
/// until done.
///
/// Errors never contain the token. Without a token: [`Error::Environment`] "no GITHUB_TOKEN;
/// the job summary was still written" (callers treat it as a skipped comment), before any
/// request. A `body` over [`MAX_COMMENT_BYTES`]: [`Error::InvalidInput`] (render it with
/// [`super::comment_body`], which truncates). On 403 or 404: [`Error::Environment`] saying which
/// permission is missing and how to grant it; on any other failure, [`Error::Environment`] with
/// the HTTP status or transport error and the API URL.
pub fn post_or_update_comment(
    api: &GithubApi,
    owner: &str,
    repo: &str,
    pr: u64,
    body: &str,
) -> crate::Result<CommentAction> {
    let token = api.token.as_ref().ok_or_else(|| {
        Error::Environment("no GITHUB_TOKEN; the job summary was still written".to_string())
    })?;
    if body.len() > MAX_COMMENT_BYTES {
        return Err(Error::InvalidInput(format!(
            "the comment has {} bytes, over GitHub's limit of {MAX_COMMENT_BYTES}; render it with \
             convbench::github::comment_body, which drops rows to fit",
            body.len()
        )));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            Error::Environment(format!("cannot start the runtime for the GitHub API: {error}"))
        })?;
    let call = Call {
        api_url: &api.api_url,
        token,
        author: &api.comment_author,
        owner,
        repo,
        pr,
    };
    runtime
        .block_on(call.upsert(body))
        .map_err(|error| Error::Environment(scrub(&error, token)))
}

/// One upsert against one pull request; errors are messages, scrubbed by the caller.
struct Call<'a> {
    api_url: &'a str,
    token: &'a Token,
    author: &'a str,
    owner: &'a str,
    repo: &'a str,
    pr: u64,
}

impl Call<'_> {
    async fn upsert(&self, body: &str) -> Result<CommentAction, String> {
        let client = self.client()?;
        let existing = self.find_marker_comment(&client).await?;
        let payload = serde_json::json!({ "body": body });
        if let Some(id) = existing {
            // GitHub documents PATCH for editing a comment; octocrab 0.54's
            // `update_comment` sends POST, so the request is made here.
            let route = format!("/repos/{}/{}/issues/comments/{id}", self.owner, self.repo);
            let updated: Result<Comment, _> = client.patch(route, Some(&payload)).await;
            match updated {
                Ok(comment) => return Ok(CommentAction::Updated(comment.id.into_inner())),
                // Refused (a comment locked or gone, a token that may post but not edit):
                // post a fresh comment rather than leave the old results up.
                Err(octocrab::Error::GitHub { source, .. })
                    if matches!(source.status_code.as_u16(), 403 | 404) => {}
                Err(error) => return Err(self.describe(&error, &format!("updating comment {id}"))),
            }
        }
        let comment = client
            .issues(self.owner, self.repo)
            .create_comment(self.pr, body)
            .await
            .map_err(|error| self.describe(&error, "posting the comment"))?;
        Ok(CommentAction::Created(comment.id.into_inner()))
    }

    fn client(&self) -> Result<Octocrab, String> {
        let builder = Octocrab::builder().base_uri(self.api_url).map_err(|_| {
            format!(
                "GitHub API URL `{}` is not a URL; set GITHUB_API_URL to e.g. {}",
                self.api_url,
                super::DEFAULT_API_URL
            )
        })?;
        builder
            .personal_token(self.token.expose().to_string())
            .set_connect_timeout(Some(CONNECT_TIMEOUT))
            .set_read_timeout(Some(READ_TIMEOUT))
            .build()
            .map_err(|error| {
                format!(
                    "cannot set up a client for the GitHub API at {}: {error}",
                    self.api_url
                )
            })
    }

    /// The id of the first comment that is convbench's own, reading pages until found: written
    /// by the token's identity, with the marker as its exact first line (as every body
    /// [`super::comment_body`] renders opens). Anyone can write the marker, so a comment by
    /// anyone else is never taken for convbench's, however it starts; and a comment of the
    /// token's identity that merely mentions the marker is not overwritten either.
    async fn find_marker_comment(&self, client: &Octocrab) -> Result<Option<u64>, String> {
        let listing = "listing the comments";
        let mut page = client
            .issues(self.owner, self.repo)
            .list_comments(self.pr)
            .per_page(COMMENTS_PER_PAGE)
            .send()
            .await
            .map_err(|error| self.describe(&error, listing))?;
        loop {
            let marked = page.items.iter().find(|comment| {
                comment.user.login == self.author
                    && comment
                        .body
                        .as_deref()
                        .and_then(|text| text.lines().next())
                        .is_some_and(|first| first == COMMENT_MARKER)
            });
            if let Some(comment) = marked {
                return Ok(Some(comment.id.into_inner()));
            }
            match client
                .get_page::<Comment>(&page.next)
                .await
                .map_err(|error| self.describe(&error, listing))?
            {
                Some(next) => page = next,
                None => return Ok(None),
            }
        }
    }

    /// A message for a failed request: the fix for 403 and 404, else the status or the
    /// transport error, naming the API URL and what was being done.
    fn describe(&self, error: &octocrab::Error, doing: &str) -> String {
        let target = format!(
            "{doing} on pull request #{} in {}/{}",
            self.pr, self.owner, self.repo
        );
        match error {
            octocrab::Error::GitHub { source, .. } => {
                let status = source.status_code;
                // 404 is also GitHub's answer when the token may not even see the pull request.
                if matches!(status.as_u16(), 403 | 404) {
                    format!(
                        "the GitHub API at {} answered {status} to {target}: {PERMISSION_ADVICE}",
                        self.api_url
                    )
                } else {
                    format!(
                        "the GitHub API at {} answered {status} to {target}: {}",
                        self.api_url, source.message
                    )
                }
            }
            other => format!(
                "could not reach the GitHub API at {} while {target}: {other}",
                self.api_url
            ),
        }
    }
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
