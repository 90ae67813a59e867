//! The variables GitHub Actions sets in a job, and the pull request of the event payload.

use serde::Deserialize;
use std::path::PathBuf;

/// The REST API of github.com, used when `GITHUB_API_URL` is unset.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// The web server used when `GITHUB_SERVER_URL` is unset.
const DEFAULT_SERVER_URL: &str = "https://github.com";

/// The longest part of a bad `GITHUB_API_URL` quoted in an error message, in characters.
const MAX_QUOTED_URL_CHARS: usize = 200;

/// Whether `api_url` can be the base URL of GitHub's REST API: `http://` or `https://` (any
/// case), a host of letters, digits, `.`, `-`, `_` (an IPv6 address in brackets), an optional
/// port, then an optional path of printable characters without a query or fragment.
/// `Err`: the [`super::GitHubError::BadApiUrl`] that names `GITHUB_API_URL`, its value (escaped, so that
/// control characters, a line break or a bidirectional override print as escapes, and cut at
/// 200 characters) and what it should look like.
///
/// octocrab panics on a base URL without a scheme (`api.github.com`) when it builds the first
/// request; checked here, a mistyped variable is an error with the fix instead.
pub(super) fn check_api_url(api_url: &str) -> crate::Result<()> {
    let lower = api_url.to_ascii_lowercase();
    let rest = ["https://", "http://"]
        .iter()
        .find(|scheme| lower.starts_with(*scheme))
        .map(|scheme| &api_url[scheme.len()..]);
    let problem = match rest {
        None => Some("has no http:// or https:// scheme"),
        Some(rest) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let (host, port) = match authority.rsplit_once(':') {
                Some((host, port)) if !host.ends_with(':') && !port.contains(']') => (host, Some(port)),
                _ => (authority, None),
            };
            let plain_host = |host: &str| {
                !host.is_empty()
                    && host
                        .bytes()
                        .all(|byte| byte.is_ascii_alphanumeric() || b".-_".contains(&byte))
            };
            let ipv6 = |host: &str| {
                host.strip_prefix('[')
                    .and_then(|inner| inner.strip_suffix(']'))
                    .is_some_and(|inner| {
                        !inner.is_empty()
                            && inner.bytes().all(|byte| byte.is_ascii_hexdigit() || byte == b':')
                    })
            };
            if authority.contains('@') {
                Some("has credentials before the host (the token belongs in GITHUB_TOKEN)")
            } else if !(plain_host(host) || ipv6(host)) {
                Some("has no valid host name after the scheme")
            } else if port.is_some_and(|port| port.parse::<u16>().is_err()) {
                Some("has a port that is not a number up to 65535")
            } else if path.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
                Some("has white space or control characters in its path")
            } else if path.contains(['?', '#']) {
                Some("has a query or a fragment, which a base URL cannot have")
            } else {
                None
            }
        }
    };
    match problem {
        None => Ok(()),
        Some(problem) => {
            let shown = without_userinfo(api_url);
            let mut quoted: String = shown.chars().take(MAX_QUOTED_URL_CHARS).collect();
            if quoted.len() < shown.len() {
                quoted.push('…');
            }
            Err(super::GitHubError::BadApiUrl {
                quoted: quoted.escape_debug().to_string(),
                problem,
                default: DEFAULT_API_URL,
            }
            .into())
        }
    }
}

/// `url` with anything before an `@` in its authority (a user name and password) replaced by
/// `***`, so that an error message never repeats a credential.
fn without_userinfo(url: &str) -> String {
    let start = url.find("://").map_or(0, |at| at + 3);
    let end = url[start..].find('/').map_or(url.len(), |at| start + at);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..start], &url[start + at..]),
        None => url.to_string(),
    }
}

/// An API token. `Debug` and `Display` print `***` so that the token cannot end up in a log,
/// an error message or a panic through formatting; [`Token::expose`] is the one way to read it.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Wraps a token.
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The secret itself, for the HTTP client only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// A repository as `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// User or organisation.
    pub owner: String,
    /// Repository name.
    pub name: String,
}

impl Repository {
    /// Parses `owner/name`; both parts must be non-empty and there must be exactly one `/`.
    pub fn parse(full_name: &str) -> crate::Result<Self> {
        match full_name.split_once('/') {
            Some((owner, name)) if !owner.is_empty() && !name.is_empty() && !name.contains('/') => Ok(Self {
                owner: owner.to_string(),
                name: name.to_string(),
            }),
            _ => Err(super::GitHubError::BadRepository {
                full_name: full_name.to_string(),
            }
            .into()),
        }
    }

    /// `owner/name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// The pull request of a `pull_request` (or `pull_request_target`) event payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    /// Pull request number.
    pub number: u64,
    /// Commit of the base branch the pull request was opened against.
    pub base_sha: String,
    /// Head commit of the pull request.
    pub head_sha: String,
    /// `owner/name` of the repository the head branch lives in; `None` when GitHub no longer
    /// knows it (a deleted fork).
    pub head_repo: Option<String>,
    /// Whether the head branch lives in another repository than the base (a fork, or a
    /// deleted head repository). Such runs get a read-only token: the comment must come from
    /// the `workflow_run` job.
    pub is_fork: bool,
    /// The pull request's label names when the event was sent (only people with triage
    /// access can set them: a fork's author cannot).
    pub labels: Vec<String>,
}

/// What GitHub Actions tells a job about itself, read from its environment variables.
///
/// Empty variables count as unset (GitHub sets `GITHUB_BASE_REF` to `""` outside pull requests).
#[derive(Debug, Clone)]
pub struct ActionsEnv {
    /// `GITHUB_ACTIONS=true`: running inside GitHub Actions.
    pub in_actions: bool,
    /// `GITHUB_REPOSITORY`.
    pub repository: Option<Repository>,
    /// `GITHUB_EVENT_NAME`, e.g. `pull_request`.
    pub event_name: Option<String>,
    /// The pull request from the payload at `GITHUB_EVENT_PATH`, when the event has one.
    pub pull_request: Option<PullRequest>,
    /// `GITHUB_BASE_REF`: the target branch of a pull request.
    pub base_ref: Option<String>,
    /// `GITHUB_SHA`: the commit the workflow runs on (for a pull request, the merge commit).
    pub sha: Option<String>,
    /// `GITHUB_API_URL`, else [`DEFAULT_API_URL`]; GitHub Enterprise Server sets its own.
    pub api_url: String,
    /// `GITHUB_SERVER_URL`, else `https://github.com`.
    pub server_url: String,
    /// `GITHUB_RUN_ID`.
    pub run_id: Option<String>,
    /// `GITHUB_STEP_SUMMARY`: the file the job summary is appended to.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_TOKEN`.
    pub token: Option<Token>,
}

/// The parts of an event payload this module reads.
#[derive(Deserialize)]
struct EventPayload {
    pull_request: Option<PullRequestPayload>,
}

#[derive(Deserialize)]
struct PullRequestPayload {
    number: u64,
    base: BranchPayload,
    head: BranchPayload,
    #[serde(default)]
    labels: Vec<LabelPayload>,
}

#[derive(Deserialize)]
struct LabelPayload {
    name: String,
}

#[derive(Deserialize)]
struct BranchPayload {
    sha: String,
    repo: Option<RepoPayload>,
}

#[derive(Deserialize)]
struct RepoPayload {
    full_name: String,
}

impl ActionsEnv {
    /// Reads the process environment (and the event payload file it names).
    pub fn from_env() -> crate::Result<Self> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Reads the variables through `var`, which returns a variable's value or `None`; the
    /// payload file named by `GITHUB_EVENT_PATH` is read from disk.
    ///
    /// Fails when `GITHUB_REPOSITORY` is not `owner/name`, when `GITHUB_API_URL` is not an
    /// `http(s)` URL with a host ([`super::GitHubError::BadApiUrl`] naming it), or when the payload file
    /// cannot be read or is not JSON.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> crate::Result<Self> {
        let var = |name: &str| var(name).filter(|value| !value.is_empty());
        let repository = var("GITHUB_REPOSITORY")
            .map(|full| Repository::parse(&full))
            .transpose()?;
        let api_url = var("GITHUB_API_URL").unwrap_or_else(|| DEFAULT_API_URL.to_string());
        check_api_url(&api_url)?;
        let pull_request = match var("GITHUB_EVENT_PATH") {
            Some(path) => read_pull_request(&PathBuf::from(path), repository.as_ref())?,
            None => None,
        };
        Ok(Self {
            in_actions: var("GITHUB_ACTIONS").is_some_and(|value| value == "true"),
            repository,
            event_name: var("GITHUB_EVENT_NAME"),
            pull_request,
            base_ref: var("GITHUB_BASE_REF"),
            sha: var("GITHUB_SHA"),
            api_url,
            server_url: var("GITHUB_SERVER_URL").unwrap_or_else(|| DEFAULT_SERVER_URL.to_string()),
            run_id: var("GITHUB_RUN_ID"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            token: var("GITHUB_TOKEN").map(Token::new),
        })
    }

    /// The web page of this workflow run, e.g. `https://github.com/o/r/actions/runs/42`.
    pub fn run_url(&self) -> Option<String> {
        let repository = self.repository.as_ref()?;
        let run_id = self.run_id.as_ref()?;
        Some(format!(
            "{}/{}/actions/runs/{run_id}",
            self.server_url.trim_end_matches('/'),
            repository.full_name()
        ))
    }
}

/// The pull request of the payload at `path`, if the event has one.
fn read_pull_request(
    path: &std::path::Path,
    repository: Option<&Repository>,
) -> crate::Result<Option<PullRequest>> {
    let text = std::fs::read_to_string(path).map_err(|source| super::GitHubError::EventUnreadable {
        path: path.display().to_string(),
        source,
    })?;
    let payload: EventPayload =
        serde_json::from_str(&text).map_err(|error| super::GitHubError::BadEvent {
            path: path.display().to_string(),
            message: error.to_string(),
        })?;
    Ok(payload.pull_request.map(|pr| {
        let head_repo = pr.head.repo.map(|repo| repo.full_name);
        let base_repo = pr
            .base
            .repo
            .map(|repo| repo.full_name)
            .or_else(|| repository.map(Repository::full_name));
        let is_fork = match (&head_repo, &base_repo) {
            (Some(head), Some(base)) => !head.eq_ignore_ascii_case(base),
            // Without both names, assume the restricted case: it only changes advice.
            _ => true,
        };
        PullRequest {
            number: pr.number,
            base_sha: pr.base.sha,
            head_sha: pr.head.sha,
            head_repo,
            is_fork,
            labels: pr.labels.into_iter().map(|label| label.name).collect(),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> crate::Result<ActionsEnv> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ActionsEnv::from_vars(|name| map.get(name).cloned())
    }

    fn payload_file(json: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(file.path(), json).expect("write payload");
        file
    }

    #[test]
    fn defaults_outside_actions() {
        let env = env_of(&[]).expect("empty environment");
        assert!(!env.in_actions);
        assert_eq!(env.api_url, DEFAULT_API_URL);
        assert!(env.repository.is_none() && env.pull_request.is_none() && env.token.is_none());
        assert!(env.run_url().is_none());
    }

    #[test]
    fn reads_a_pull_request_from_the_same_repository() {
        let payload = payload_file(
            r#"{"pull_request": {"number": 7, "labels": [{"name": "convbench-accept"}],
                "base": {"sha": "aaa", "repo": {"full_name": "o/r"}},
                "head": {"sha": "bbb", "repo": {"full_name": "o/r"}}}}"#,
        );
        let path = payload.path().to_string_lossy().to_string();
        let env = env_of(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_EVENT_PATH", &path),
            ("GITHUB_BASE_REF", "main"),
            ("GITHUB_SHA", "ccc"),
            ("GITHUB_API_URL", "https://ghe.example.com/api/v3"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_TOKEN", "ghs_secret"),
        ])
        .expect("valid environment");
        assert!(env.in_actions);
        let pr = env.pull_request.as_ref().expect("pull request");
        assert_eq!(
            (pr.number, pr.base_sha.as_str(), pr.head_sha.as_str()),
            (7, "aaa", "bbb")
        );
        assert!(!pr.is_fork);
        assert_eq!(pr.labels, ["convbench-accept"]);
        assert_eq!(env.api_url, "https://ghe.example.com/api/v3");
        assert_eq!(env.base_ref.as_deref(), Some("main"));
        assert_eq!(
            env.run_url().as_deref(),
            Some("https://github.com/o/r/actions/runs/42")
        );
        assert!(!format!("{env:?}").contains("ghs_secret"));
    }

    #[test]
    fn detects_forks_and_deleted_head_repositories() {
        let fork = payload_file(
            r#"{"pull_request": {"number": 8, "base": {"sha": "a", "repo": {"full_name": "o/r"}},
                "head": {"sha": "b", "repo": {"full_name": "someone/r"}}}}"#,
        );
        let deleted = payload_file(
            r#"{"pull_request": {"number": 9, "base": {"sha": "a"}, "head": {"sha": "b", "repo": null}}}"#,
        );
        for file in [&fork, &deleted] {
            let path = file.path().to_string_lossy().to_string();
            let env = env_of(&[("GITHUB_REPOSITORY", "o/r"), ("GITHUB_EVENT_PATH", &path)]).expect("env");
            assert!(env.pull_request.expect("pull request").is_fork);
        }
    }

    #[test]
    fn push_events_have_no_pull_request_and_empty_base_ref_is_unset() {
        let push = payload_file(r#"{"ref": "refs/heads/main", "after": "abc"}"#);
        let path = push.path().to_string_lossy().to_string();
        let env = env_of(&[("GITHUB_EVENT_PATH", &path), ("GITHUB_BASE_REF", "")]).expect("env");
        assert!(env.pull_request.is_none());
        assert!(env.base_ref.is_none());
    }

    #[test]
    fn rejects_bad_repositories_and_payloads() {
        assert!(env_of(&[("GITHUB_REPOSITORY", "no-slash")]).is_err());
        assert!(env_of(&[("GITHUB_REPOSITORY", "a/b/c")]).is_err());
        let garbage = payload_file("not json");
        let path = garbage.path().to_string_lossy().to_string();
        let error = env_of(&[("GITHUB_EVENT_PATH", &path)]).expect_err("not json");
        assert!(
            error.to_string().contains("not a GitHub event payload"),
            "{error}"
        );
    }

    #[test]
    fn a_github_api_url_without_a_scheme_is_an_environment_error_naming_it() {
        for bad in [
            "api.github.com",
            "ftp://api.github.com",
            "https://",
            "https:///api/v3",
            "https://ghe.example.com:http/api/v3",
            "https://ghe.example.com/api v3",
            "https://ghe.example.com/api/v3?x=1",
        ] {
            let error = env_of(&[("GITHUB_API_URL", bad)]).expect_err(bad);
            assert_eq!(error.kind(), crate::ErrorKind::Environment, "{bad}");
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("GITHUB_API_URL \"{bad}\" ")),
                "{message}"
            );
            assert!(message.contains("e.g. https://api.github.com"), "{message}");
        }
        // Escaped: a line break cannot start a workflow command in the log.
        let error =
            env_of(&[("GITHUB_API_URL", "api.github.com\n::error::forged\u{202e}")]).expect_err("bad");
        let message = error.to_string();
        assert!(
            !message.contains('\n') && !message.contains('\u{202e}'),
            "{message}"
        );
        assert!(
            message.contains("api.github.com\\n::error::forged\\u{202e}"),
            "{message}"
        );
        let credentials = env_of(&[("GITHUB_API_URL", "https://user:hunter2@ghe.example.com/api/v3")])
            .expect_err("credentials");
        assert!(
            credentials
                .to_string()
                .starts_with("GITHUB_API_URL \"https://***@ghe.example.com/api/v3\" has credentials"),
            "{credentials}"
        );
        let long = format!("api.{}.com", "x".repeat(10_000));
        assert!(
            env_of(&[("GITHUB_API_URL", &long)])
                .expect_err("long")
                .to_string()
                .len()
                < 600
        );
        for good in [
            "https://api.github.com",
            "HTTPS://API.GITHUB.COM/",
            "https://ghe.example.com/api/v3",
            "http://127.0.0.1:8080",
            "http://[::1]:8080/api",
            "http://localhost",
        ] {
            let env = env_of(&[("GITHUB_API_URL", good)]).expect(good);
            assert_eq!(env.api_url, good);
        }
    }

    #[test]
    fn token_never_formats() {
        let token = Token::new("ghp_abcdef");
        assert_eq!(
            format!("{token} {token:?} {:?}", Some(&token)),
            "*** *** Some(***)"
        );
        assert_eq!(token.expose(), "ghp_abcdef");
    }
}
