//! `ci` and `comment`: the gate in GitHub Actions against a wiremock fake of the REST API (job
//! summary, annotations, one sticky PR comment created then updated), and outside Actions.

use crate::support::{Package, assert_code, cargo_convbench, stderr_of, stdout_of, write_record};
use assert_cmd::Command;
use serde_json::{Value, json};
use std::process::Output;
use std::sync::{Arc, Mutex};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TOKEN: &str = "secret-token-xyz";
const MARKER: &str = "<!-- convbench-comment -->";
const COMMENTS: &str = "/repos/o/r/issues/7/comments";

/// A comment as the REST API returns it (every field octocrab requires).
fn comment_json(id: u64, body: &str) -> Value {
    let user = "https://api.github.com/users/github-actions";
    json!({
        "id": id,
        "node_id": format!("IC_{id}"),
        "url": format!("https://api.github.com/repos/o/r/issues/comments/{id}"),
        "html_url": format!("https://github.com/o/r/pull/7#issuecomment-{id}"),
        "issue_url": "https://api.github.com/repos/o/r/issues/7",
        "body": body,
        "user": {
            "login": "github-actions[bot]", "id": 41898282, "node_id": "MDM6Qm90NDE4OTgyODI=",
            "avatar_url": "https://avatars.githubusercontent.com/in/15368", "gravatar_id": "",
            "url": user, "html_url": "https://github.com/apps/github-actions",
            "followers_url": format!("{user}/followers"), "following_url": format!("{user}/following"),
            "gists_url": format!("{user}/gists"), "starred_url": format!("{user}/starred"),
            "subscriptions_url": format!("{user}/subscriptions"),
            "organizations_url": format!("{user}/orgs"), "repos_url": format!("{user}/repos"),
            "events_url": format!("{user}/events"), "received_events_url": format!("{user}/received_events"),
            "type": "Bot", "site_admin": false
        },
        "created_at": "2026-11-01T12:00:00Z",
        "updated_at": "2026-11-01T12:00:00Z"
    })
}

/// The comments of pull request 7, shared by the handlers so that the second run sees what the
/// first one posted, as on GitHub.
#[derive(Clone, Default)]
struct Thread(Arc<Mutex<Vec<Value>>>);

impl Respond for Thread {
    /// GET lists the comments; POST appends one.
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut comments = self.0.lock().expect("fake state");
        if request.method.as_str() == "POST" {
            let sent: Value = request.body_json().expect("a JSON body");
            let created = comment_json(
                1000 + comments.len() as u64,
                sent["body"].as_str().expect("a body string"),
            );
            comments.push(created.clone());
            return ResponseTemplate::new(201).set_body_json(created);
        }
        ResponseTemplate::new(200).set_body_json(comments.clone())
    }
}

/// The event of pull request 7 of `o/r`, from a branch of `head_repo`.
fn write_event(package: &Package, head_repo: &str) -> std::path::PathBuf {
    let event = json!({
        "pull_request": {
            "number": 7,
            "base": {"sha": package.head()},
            "head": {"sha": "feedface", "repo": {"full_name": head_repo}}
        },
        "repository": {"full_name": "o/r"}
    });
    let path = package.path("event.json");
    std::fs::write(&path, event.to_string()).expect("write the event");
    path
}

/// `cargo convbench ci --results RESULTS --baseline-rev HEAD` in the GitHub Actions job of a
/// pull request from `head_repo` whose API is `api_url`.
fn ci_in_actions(package: &Package, api_url: &str, results: &str, head_repo: &str) -> Command {
    let event = write_event(package, head_repo);
    let mut command = cargo_convbench();
    command
        .current_dir(package.root())
        .args(["ci", "--results", results, "--baseline-rev", "HEAD"])
        .arg("--manifest-path")
        .arg(package.path("Cargo.toml"))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_API_URL", api_url)
        .env("GITHUB_STEP_SUMMARY", package.path("summary.md"))
        .env("GITHUB_TOKEN", TOKEN);
    command
}

/// Runs `command` off the async runtime, which serves the mock API meanwhile.
async fn output_of(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().expect("the command runs"))
        .await
        .expect("the blocking task")
}

/// The job summary the runs appended to.
fn summary_of(package: &Package) -> String {
    std::fs::read_to_string(package.path("summary.md")).expect("the job summary was written")
}

/// Asserts that the token appears on neither stream.
fn assert_no_token(output: &Output) {
    assert!(!stdout_of(output).contains(TOKEN), "token on stdout");
    assert!(!stderr_of(output).contains(TOKEN), "token on stderr");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_in_actions_posts_one_sticky_comment_then_updates_it() {
    let (package, _) = Package::blessed();
    let server = MockServer::start().await;
    let thread = Thread::default();
    let bearer = format!("Bearer {TOKEN}");
    // Each run lists; the first also lists again after its POST, for concurrent runs.
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(header("authorization", bearer.as_str()))
        .respond_with(thread.clone())
        .expect(3)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .and(header("authorization", bearer.as_str()))
        .respond_with(thread.clone())
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/o/r/issues/comments/1000"))
        .and(header("authorization", bearer.as_str()))
        .respond_with(|request: &Request| {
            let sent: Value = request.body_json().expect("a JSON body");
            ResponseTemplate::new(200)
                .set_body_json(comment_json(1000, sent["body"].as_str().unwrap_or_default()))
        })
        .expect(1)
        .mount(&server)
        .await;

    for run in ["first", "second"] {
        let output = output_of(ci_in_actions(&package, &server.uri(), "slower.json", "o/r")).await;
        assert_code(&output, 1);
        assert_no_token(&output);
        let stdout = stdout_of(&output);
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("::error title=convbench regression::lenet/train/b1/f32/cpu")),
            "{run} run: no ::error annotation in\n{stdout}"
        );
        let verb = if run == "first" { "created" } else { "updated" };
        assert!(
            stderr_of(&output).contains(&format!("{verb} PR comment 1000")),
            "{run} run:\n{}",
            stderr_of(&output)
        );
    }
    server.verify().await;

    let requests = server.received_requests().await.expect("requests are recorded");
    for request in requests.iter().filter(|r| r.method.as_str() != "GET") {
        let sent: Value = request.body_json().expect("a JSON body");
        let body = sent["body"].as_str().expect("a body string");
        assert!(body.starts_with(MARKER), "{body}");
        assert!(body.contains("regression"), "{body}");
    }
    let summary = summary_of(&package);
    assert!(
        !summary.contains(MARKER),
        "the summary is not the comment: {summary}"
    );
    assert!(summary.contains("regression"), "{summary}");
    assert_eq!(
        summary.matches("## convbench").count(),
        2,
        "each run appends its summary"
    );
    let comments = thread.0.lock().expect("fake state");
    assert_eq!(comments.len(), 1, "one comment on the pull request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_when_commenting_is_forbidden_still_writes_the_summary_and_exits_with_the_gate_code() {
    let (package, _) = Package::blessed();
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
        })))
        .expect(1)
        .mount(&server)
        .await;

    let output = output_of(ci_in_actions(&package, &server.uri(), "slower.json", "o/r")).await;
    assert_code(&output, 1);
    assert_no_token(&output);
    let stdout = stdout_of(&output);
    let warning = stdout
        .lines()
        .find(|l| l.starts_with("::warning"))
        .unwrap_or_else(|| panic!("no ::warning in\n{stdout}"));
    assert!(warning.contains("pull-requests: write"), "{warning}");
    assert!(warning.contains("403"), "{warning}");
    assert!(stdout.contains("::error"), "{stdout}");
    let summary = summary_of(&package);
    assert!(
        summary.contains("## convbench") && summary.contains("regression"),
        "{summary}"
    );
    server.verify().await;
}

/// A server that fails the test if anything calls it.
async fn untouchable_api() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_on_a_fork_pull_request_leaves_the_comment_to_workflow_run() {
    let (package, _) = Package::blessed();
    let server = untouchable_api().await;
    let output = output_of(ci_in_actions(&package, &server.uri(), "slower.json", "someone/r")).await;
    assert_code(&output, 1);
    let stdout = stdout_of(&output);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::notice") && l.contains("fork")),
        "{stdout}"
    );
    assert!(summary_of(&package).contains("## convbench"));
    server.verify().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_without_a_token_warns_and_exits_with_the_gate_code() {
    let (package, _) = Package::blessed();
    let server = untouchable_api().await;
    let mut command = ci_in_actions(&package, &server.uri(), "rec.json", "o/r");
    command.env_remove("GITHUB_TOKEN");
    let output = output_of(command).await;
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::warning") && l.contains("GITHUB_TOKEN")),
        "{stdout}"
    );
    assert!(summary_of(&package).contains("## convbench"));
    server.verify().await;
}

#[test]
fn ci_outside_actions_prints_the_comment_and_exits_with_the_gate_code() {
    let (package, _) = Package::blessed();
    for (results, code) in [("rec.json", 0), ("slower.json", 1)] {
        let output = package
            .convbench()
            .args(["ci", "--results", results, "--baseline-rev", "HEAD"])
            .output()
            .expect("ci");
        assert_code(&output, code);
        let stdout = stdout_of(&output);
        assert!(stdout.starts_with(MARKER), "{stdout}");
        assert!(stdout.contains("lenet/train/b1/f32/cpu"), "{stdout}");
        assert!(
            !stdout.contains("::error"),
            "no annotations outside Actions:\n{stdout}"
        );
    }
}

#[test]
fn comment_dry_run_prints_the_comment() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args(["comment", "--pr", "7", "--results", "slower.json", "--dry-run"])
        .args(["--baseline-rev", "HEAD"])
        .output()
        .expect("comment");
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    assert!(stdout.starts_with(MARKER), "{stdout}");
    assert!(stdout.contains("regression"), "{stdout}");
}

#[test]
fn comment_links_the_dashboard_from_the_workflow_variable_or_the_configuration() {
    let (package, _) = Package::blessed();
    let comment = |dashboard: Option<&str>| {
        let mut command = package.convbench();
        command
            .args(["comment", "--pr", "7", "--results", "slower.json", "--dry-run"])
            .args(["--baseline-rev", "HEAD"])
            .env_remove("CONVBENCH_DASHBOARD_URL");
        if let Some(url) = dashboard {
            command.env("CONVBENCH_DASHBOARD_URL", url);
        }
        command.output().expect("comment")
    };
    let link = "[the convbench dashboard](https://octo.github.io/bench/)";
    let plain = comment(None);
    assert_code(&plain, 0);
    assert!(!stdout_of(&plain).contains("dashboard"), "{}", stdout_of(&plain));
    let linked = comment(Some("https://octo.github.io/bench/"));
    assert!(stdout_of(&linked).contains(link), "{}", stdout_of(&linked));
    let hostile = comment(Some("javascript:alert(1)//https://octo.github.io/"));
    assert_code(&hostile, 0);
    assert!(
        !stdout_of(&hostile).contains("dashboard"),
        "{}",
        stdout_of(&hostile)
    );

    configure(
        &package,
        "\n[workspace.metadata.convbench.ci]\ndashboard-url = \"https://octo.github.io/bench/\"\n",
    );
    let configured = comment(None);
    assert!(
        stdout_of(&configured).contains(link),
        "{}",
        stdout_of(&configured)
    );
    edited(&package, "Cargo.toml", "Cargo.toml", |text| {
        text.replace("https://octo.github.io/bench/", "http://octo.github.io/bench/")
    });
    let refused = comment(None);
    assert_code(&refused, 2);
    assert!(
        stderr_of(&refused).contains("ci.dashboard-url"),
        "{}",
        stderr_of(&refused)
    );
}

/// Rewrites `from` into `to` in the package with `edit` applied to its text; asserts it changed.
fn edited(package: &Package, from: &str, to: &str, edit: impl Fn(&str) -> String) {
    let text = std::fs::read_to_string(package.path(from)).expect("read the record");
    let changed = edit(&text);
    assert_ne!(changed, text, "the edit changed nothing");
    std::fs::write(package.path(to), changed).expect("write the edited record");
}

/// Appends `table` to the package's `Cargo.toml` (the `[workspace]` there is its root).
fn configure(package: &Package, table: &str) {
    let manifest = package.path("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).expect("read Cargo.toml");
    text.push_str(table);
    std::fs::write(&manifest, text).expect("write Cargo.toml");
}

#[test]
fn an_error_quoting_a_hostile_record_is_one_escaped_workflow_command_in_actions() {
    let (package, _) = Package::blessed();
    // serde's "unknown variant" message repeats the text it read, line break included.
    edited(&package, "rec.json", "evil.json", |text| {
        text.replacen(
            "\"stage\": \"train\"",
            "\"stage\": \"x\\n::add-mask::boom\\n::error::fake\"",
            1,
        )
    });
    let output = package
        .convbench()
        .args(["comment", "--pr", "7", "--results", "evil.json", "--dry-run"])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("comment");
    assert_code(&output, 2);
    let stderr = stderr_of(&output);
    let stdout = stdout_of(&output);
    for line in stderr.lines().chain(stdout.lines()) {
        assert!(
            !line.trim_start().starts_with("::") || line.starts_with("::error title=convbench::"),
            "a second workflow command: {line}"
        );
    }
    assert!(stderr.contains("%0A::add-mask::boom"), "{stderr}");
    // Outside Actions the message stays readable.
    let plain = package
        .convbench()
        .args(["comment", "--pr", "7", "--results", "evil.json", "--dry-run"])
        .output()
        .expect("comment");
    assert_code(&plain, 2);
    assert!(stderr_of(&plain).starts_with("error: "), "{}", stderr_of(&plain));
}

#[test]
fn a_dry_run_comment_in_actions_is_fenced_off_from_workflow_commands() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args([
            "comment",
            "--pr",
            "7",
            "--results",
            "slower.json",
            "--dry-run",
            "--baseline-rev",
            "HEAD",
        ])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("comment");
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    let first = stdout.lines().next().unwrap_or_default();
    let token = first
        .strip_prefix("::stop-commands::")
        .unwrap_or_else(|| panic!("not fenced:\n{stdout}"));
    assert!(token.len() >= 32, "{token}");
    assert_eq!(stdout.lines().last(), Some(format!("::{token}::").as_str()));
    assert!(stdout.contains(MARKER), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_driver_is_reported_in_the_summary_and_the_comment_then_exits_2() {
    let (package, _) = Package::blessed();
    edited(&package, "slower.json", "newdriver.json", |text| {
        text.replace("\"driver_info\": \"", "\"driver_info\": \"9.9 ")
    });
    let server = MockServer::start().await;
    let thread = Thread::default();
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .expect(1)
        .mount(&server)
        .await;
    let output = output_of(ci_in_actions(&package, &server.uri(), "newdriver.json", "o/r")).await;
    assert_code(&output, 2);
    assert!(
        stderr_of(&output).contains("another adapter"),
        "{}",
        stderr_of(&output)
    );
    let summary = summary_of(&package);
    assert!(summary.contains("incomparable"), "{summary}");
    server.verify().await;
    let comments = thread.0.lock().expect("fake state");
    let body = comments[0]["body"].as_str().unwrap_or_default();
    assert!(body.contains("incomparable") && body.contains("🟡"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comment_on_change_stays_quiet_when_nothing_changed_but_updates_an_existing_comment() {
    let (package, _) = Package::blessed();
    configure(
        &package,
        "\n[workspace.metadata.convbench.ci]\ncomment-on = \"change\"\n",
    );
    let server = MockServer::start().await;
    let thread = Thread::default();
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/o/r/issues/comments/1000"))
        .respond_with(|request: &Request| {
            let sent: Value = request.body_json().expect("a JSON body");
            ResponseTemplate::new(200)
                .set_body_json(comment_json(1000, sent["body"].as_str().unwrap_or_default()))
        })
        .expect(1)
        .mount(&server)
        .await;
    // Unchanged, no comment yet: nothing is posted.
    let quiet = output_of(ci_in_actions(&package, &server.uri(), "rec.json", "o/r")).await;
    assert_code(&quiet, 0);
    assert!(
        stderr_of(&quiet).contains("no PR comment"),
        "{}",
        stderr_of(&quiet)
    );
    assert!(thread.0.lock().expect("fake state").is_empty());
    // A regression posts one.
    let loud = output_of(ci_in_actions(&package, &server.uri(), "slower.json", "o/r")).await;
    assert_code(&loud, 1);
    // Unchanged again: the existing comment is updated to the new state, not left stale.
    let fixed = output_of(ci_in_actions(&package, &server.uri(), "rec.json", "o/r")).await;
    assert_code(&fixed, 0);
    assert!(
        stderr_of(&fixed).contains("updated PR comment 1000"),
        "{}",
        stderr_of(&fixed)
    );
    server.verify().await;
}

#[test]
fn an_accept_label_passes_a_failing_gate_and_says_so() {
    let (package, _) = Package::blessed();
    configure(
        &package,
        "\n[workspace.metadata.convbench.ci]\naccept-label = \"convbench-accept\"\nmention = [\"octocat\"]\n",
    );
    // The accept label judges, so it is the base's: committed, as on the default branch.
    package.git_ok(&["commit", "--quiet", "-am", "accept label"]);
    let gate = |labels: &[&str]| {
        let mut command = package.convbench();
        command.args(["ci", "--results", "slower.json", "--baseline-rev", "HEAD"]);
        for label in labels {
            command.args(["--label", label]);
        }
        command.output().expect("ci")
    };
    let failing = gate(&["bug"]);
    assert_code(&failing, 1);
    assert!(
        stdout_of(&failing).contains("cc @octocat"),
        "{}",
        stdout_of(&failing)
    );
    let accepted = gate(&["convbench-accept"]);
    assert_code(&accepted, 0);
    let body = stdout_of(&accepted);
    assert!(
        body.contains("**Accepted:**") && body.contains("convbench-accept"),
        "{body}"
    );
    assert!(!body.contains("cc @octocat"), "{body}");
}

#[test]
fn a_fail_threshold_turns_small_regressions_into_alerts() {
    let (package, _) = Package::blessed();
    // slower.json is 40% slower.
    for (fail, code, mark) in [("0.5", 0, "🟠"), ("0.2", 1, "🔴")] {
        let output = package
            .convbench()
            .args([
                "ci",
                "--results",
                "slower.json",
                "--baseline-rev",
                "HEAD",
                "--fail-threshold",
                fail,
            ])
            .output()
            .expect("ci");
        assert_code(&output, code);
        assert!(stdout_of(&output).contains(mark), "{}", stdout_of(&output));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_shows_the_blessed_history_of_regressed_benchmarks() {
    let (package, _) = Package::blessed();
    let server = untouchable_api().await;
    let output = output_of(ci_in_actions(&package, &server.uri(), "slower.json", "someone/r")).await;
    assert_code(&output, 1);
    let summary = summary_of(&package);
    assert!(
        summary.contains("#### History of lenet/train/b1/f32/cpu"),
        "{summary}"
    );
    assert!(summary.contains(&package.head()[..10]), "{summary}");
    server.verify().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_comment_job_takes_the_commit_and_link_from_the_event_and_creates_a_check_run() {
    let (package, _) = Package::blessed();
    let head = "abcdef0123456789abcdef0123456789abcdef01";
    let server = MockServer::start().await;
    let thread = Thread::default();
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/check-runs"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 55, "head_sha": head})))
        .expect(1)
        .mount(&server)
        .await;
    let mut command = cargo_convbench();
    command
        .current_dir(package.root())
        .args([
            "comment",
            "--pr",
            "7",
            "--results",
            "slower.json",
            "--baseline-rev",
            "HEAD",
        ])
        .args([
            "--head-sha",
            head,
            "--run-url",
            "https://github.com/o/r/actions/runs/99",
            "--check-run",
        ])
        .arg("--manifest-path")
        .arg(package.path("Cargo.toml"))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN);
    let output = output_of(command).await;
    assert_code(&output, 0);
    assert_no_token(&output);
    server.verify().await;
    let requests = server.received_requests().await.expect("requests are recorded");
    let check = requests
        .iter()
        .find(|r| r.url.path() == "/repos/o/r/check-runs")
        .expect("a check run");
    let sent: Value = check.body_json().expect("a JSON body");
    assert_eq!(sent["head_sha"], head);
    assert_eq!(sent["conclusion"], "failure");
    let body = thread.0.lock().expect("fake state")[0]["body"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(body.contains("Commits: ") && body.contains("..abcdef0"), "{body}");
    assert!(body.contains("pull request's own workflow run"), "{body}");
    assert!(
        body.contains("(https://github.com/o/r/actions/runs/99)"),
        "{body}"
    );
    // A head commit that is not a commit id is refused before anything is read.
    let bad = package
        .convbench()
        .args([
            "comment",
            "--pr",
            "7",
            "--results",
            "slower.json",
            "--head-sha",
            "main;rm",
        ])
        .output()
        .expect("comment");
    assert_code(&bad, 2);
}

#[test]
fn a_github_api_url_without_a_scheme_is_an_environment_error_not_a_panic() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args([
            "comment",
            "--pr",
            "7",
            "--results",
            "slower.json",
            "--baseline-rev",
            "HEAD",
        ])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_API_URL", "api.github.com")
        .env("GITHUB_TOKEN", TOKEN)
        .output()
        .expect("comment");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("GITHUB_API_URL \"api.github.com\" has no http:// or https:// scheme"),
        "{stderr}"
    );
    assert!(stderr.contains("https://api.github.com"), "{stderr}");
    assert_no_token(&output);
}

/// A mock of GitHub's API that answers the compare of `main...head` with merge base `base`,
/// and the jobs of run 99 with `jobs` (name, conclusion).
async fn trusted_api(head: &str, base: &str, jobs: &[(&str, &str)]) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/repos/o/r/compare/main...{head}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "merge_base_commit": {"sha": base},
            "status": "ahead"
        })))
        .mount(&server)
        .await;
    let jobs: Vec<Value> = jobs
        .iter()
        .map(|(name, conclusion)| json!({"name": name, "status": "completed", "conclusion": conclusion}))
        .collect();
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/runs/99/jobs"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"total_count": jobs.len(), "jobs": jobs})),
        )
        .mount(&server)
        .await;
    server
}

/// `comment --dry-run` as comment.yml runs it: the trusted base from --default-branch, the
/// legs from --run-id, `base` as the pull request's pr/base.
fn trusted_comment(
    package: &Package,
    api_url: &str,
    head: &str,
    claimed_base: &str,
    results: &str,
) -> Command {
    let mut command = package.convbench();
    command
        .args(["comment", "--pr", "7", "--results", results, "--dry-run"])
        .args(["--baseline-rev", claimed_base, "--head-sha", head])
        .args([
            "--default-branch",
            "main",
            "--run-id",
            "99",
            "--run-conclusion",
            "failure",
        ])
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_API_URL", api_url)
        .env("GITHUB_TOKEN", TOKEN);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_base_is_reported_and_the_merge_base_judges() {
    // The pull request names the commit before the baselines were blessed, where every row is
    // "new"; the comment job asks GitHub for the merge-base and judges against it instead.
    let (package, _) = Package::blessed();
    let before_blessing = package.git_ok(&["rev-parse", "HEAD~1"]);
    let head = "abcdef0123456789abcdef0123456789abcdef01";
    let server = trusted_api(head, &package.head(), &[("benchmarks (gpu)", "failure")]).await;
    let output = output_of(trusted_comment(
        &package,
        &server.uri(),
        head,
        &before_blessing,
        "slower.json",
    ))
    .await;
    assert_code(&output, 0);
    assert_no_token(&output);
    let (stdout, stderr) = (stdout_of(&output), stderr_of(&output));
    assert!(stderr.contains("check run: failure"), "{stderr}");
    assert!(stdout.contains("regression"), "{stdout}");
    assert!(
        stdout.contains(&format!("named base {before_blessing}")),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_benchmark_the_record_leaves_out_fails_the_check_unless_the_configuration_drops_it() {
    let (package, _) = Package::blessed();
    // The base configuration names lenet and alexnet; the record measured lenet only.
    configure(
        &package,
        "\n[workspace.metadata.convbench]\nmodels = [\"lenet\", \"alexnet\"]\n",
    );
    package.git_ok(&["commit", "--quiet", "-am", "configure"]);
    let base = package.head();
    let head = "abcdef0123456789abcdef0123456789abcdef01";
    let server = trusted_api(head, &base, &[("benchmarks (gpu)", "success")]).await;
    let output = output_of(trusted_comment(&package, &server.uri(), head, &base, "rec.json")).await;
    assert_code(&output, 0);
    let (stdout, stderr) = (stdout_of(&output), stderr_of(&output));
    assert!(stderr.contains("check run: failure"), "{stderr}");
    assert!(stderr.contains("did not measure alexnet"), "{stderr}");
    assert!(stdout.contains("Not judged:"), "{stdout}");

    // A pull request whose configuration drops alexnet: flagged for the reviewer, not failed.
    package.git_ok(&["checkout", "--quiet", "-b", "pr"]);
    edited(&package, "Cargo.toml", "Cargo.toml", |text| {
        text.replace("\"lenet\", \"alexnet\"", "\"lenet\"")
    });
    package.git_ok(&["commit", "--quiet", "-am", "drop alexnet"]);
    let pr_head = package.head();
    package.git_ok(&["checkout", "--quiet", "main"]);
    let server = trusted_api(&pr_head, &base, &[("benchmarks (gpu)", "success")]).await;
    let output = output_of(trusted_comment(
        &package,
        &server.uri(),
        &pr_head,
        &base,
        "rec.json",
    ))
    .await;
    assert_code(&output, 0);
    let (stdout, stderr) = (stdout_of(&output), stderr_of(&output));
    assert!(stderr.contains("check run: success"), "{stderr}");
    assert!(
        stdout.contains("removes alexnet from the configuration"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_leg_fails_the_check_and_is_named() {
    let (package, _) = Package::blessed();
    let head = "abcdef0123456789abcdef0123456789abcdef01";
    let server = trusted_api(
        head,
        &package.head(),
        &[
            ("benchmarks (gpu-a)", "success"),
            ("benchmarks (gpu-b)", "cancelled"),
        ],
    )
    .await;
    let output = output_of(trusted_comment(
        &package,
        &server.uri(),
        head,
        &package.head(),
        "rec.json",
    ))
    .await;
    assert_code(&output, 0);
    let (stdout, stderr) = (stdout_of(&output), stderr_of(&output));
    assert!(stderr.contains("check run: failure"), "{stderr}");
    assert!(stdout.contains("benchmarks (gpu-b) ended cancelled"), "{stdout}");
    // --on-gap neutral: the check says why instead of failing.
    let mut neutral = trusted_comment(&package, &server.uri(), head, &package.head(), "rec.json");
    neutral.args(["--on-gap", "neutral"]);
    let output = output_of(neutral).await;
    assert!(
        stderr_of(&output).contains("check run: neutral"),
        "{}",
        stderr_of(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_creates_the_check_run_with_the_decision_of_its_comment() {
    let (package, _) = Package::blessed();
    let head = "abcdef0123456789abcdef0123456789abcdef01";
    let server = MockServer::start().await;
    let thread = Thread::default();
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(thread.clone())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/check-runs"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 77, "head_sha": head})))
        .expect(1)
        .mount(&server)
        .await;
    let event = json!({
        "pull_request": {
            "number": 7,
            "base": {"sha": package.head()},
            "head": {"sha": head, "repo": {"full_name": "o/r"}}
        },
        "repository": {"full_name": "o/r"}
    });
    std::fs::write(package.path("event-head.json"), event.to_string()).expect("write the event");
    let mut command = ci_in_actions(&package, &server.uri(), "slower.json", "o/r");
    command
        .arg("--check-run")
        .env("GITHUB_EVENT_PATH", package.path("event-head.json"));
    let output = output_of(command).await;
    assert_code(&output, 1);
    assert_no_token(&output);
    assert!(
        stderr_of(&output).contains("created check run 77"),
        "{}",
        stderr_of(&output)
    );
    server.verify().await;
    let requests = server.received_requests().await.expect("requests are recorded");
    let check = requests
        .iter()
        .find(|r| r.url.path() == "/repos/o/r/check-runs")
        .expect("a check run");
    let sent: Value = check.body_json().expect("a JSON body");
    assert_eq!(sent["head_sha"], head);
    assert_eq!(sent["conclusion"], "failure");
    let comment = thread.0.lock().expect("fake state")[0]["body"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        sent["output"]["summary"].as_str(),
        Some(comment.as_str()),
        "one decision, one text"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_uploaded_no_record_fails_the_check() {
    let (package, _) = Package::blessed();
    let head = "abcdef0123456789abcdef0123456789abcdef01";
    let server = trusted_api(head, &package.head(), &[("benchmarks (gpu)", "failure")]).await;
    let mut command = package.convbench();
    command
        .args(["comment", "--pr", "7", "--dry-run", "--head-sha", head])
        .args(["--default-branch", "main", "--run-id", "99"])
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN);
    let output = output_of(command).await;
    assert_code(&output, 0);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("check run: failure"), "{stderr}");
    assert!(
        stderr.contains("0 of 1 finished legs uploaded a record"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_blessed_at_the_base_that_sent_no_record_fails_the_check() {
    // Two runners are blessed at the base; the pull request's run sends one runner's record.
    let (package, record) = Package::blessed();
    let mut other = record;
    for benchmark in &mut other.benchmarks {
        benchmark.adapter.name = "Other GPU".to_string();
        benchmark.adapter.device_id = 0x2330;
    }
    write_record(&package.path("other.json"), &other);
    package.bless("other.json");
    let head = "abcdef0123456789abcdef0123456789abcdef01";
    let server = trusted_api(head, &package.head(), &[("benchmarks (gpu)", "success")]).await;
    let output = output_of(trusted_comment(
        &package,
        &server.uri(),
        head,
        &package.head(),
        "rec.json",
    ))
    .await;
    assert_code(&output, 0);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("check run: failure"), "{stderr}");
    assert!(stderr.contains("no record from Other GPU"), "{stderr}");
}

/// A job summary that cannot be written (a folder, a missing parent, a full device) is a
/// warning naming `GITHUB_STEP_SUMMARY`; the gate's exit code stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_step_summary_warns_and_keeps_the_gate_code() {
    let (package, _) = Package::blessed();
    let server = untouchable_api().await;
    let summaries = [
        package.root().to_path_buf(),
        package.path("missing/summary.md"),
        std::path::PathBuf::from("/dev/full"),
    ];
    for summary in summaries.iter().filter(|p| p.parent().is_some()) {
        let mut command = ci_in_actions(&package, &server.uri(), "slower.json", "someone/r");
        command.env("GITHUB_STEP_SUMMARY", summary);
        let output = output_of(command).await;
        assert_code(&output, 1);
        let stdout = stdout_of(&output);
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("::warning") && l.contains("GITHUB_STEP_SUMMARY")),
            "{}: {stdout}",
            summary.display()
        );
    }
    server.verify().await;
}

#[test]
fn a_missing_event_payload_names_github_event_path() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args(["ci", "--results", "rec.json", "--baseline-rev", "HEAD"])
        .env("GITHUB_EVENT_PATH", package.path("no-event.json"))
        .output()
        .expect("ci");
    assert_code(&output, 3);
    assert!(
        stderr_of(&output).contains("GITHUB_EVENT_PATH"),
        "{}",
        stderr_of(&output)
    );
}

/// `comment` without a token says what happened (no summary, no comment) and what to do.
#[test]
fn comment_without_a_token_or_summary_says_nothing_was_written() {
    let (package, _) = Package::blessed();
    let output = package
        .convbench()
        .args(["comment", "--pr", "5", "--results", "rec.json"])
        .env("GITHUB_REPOSITORY", "o/r")
        .output()
        .expect("comment");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("summary was still written"), "{stderr}");
    assert!(stderr.contains("nothing was posted or written"), "{stderr}");
    assert!(stderr.contains("--dry-run"), "{stderr}");
}
