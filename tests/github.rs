//! Tests of `convbench::github`: the PR comment against a fake GitHub API (wiremock on loopback,
//! driven by the real octocrab client), the comment's Markdown (insta snapshots), escaping,
//! truncation and token hygiene. The workflow files and `action.yml` are checked in
//! `tests/workflows.rs`.

use convbench::compare::{CompareConfig, Comparison, PhaseComparison, Verdict, compare};
use convbench::github::{
    AdapterSection, COMMENT_MARKER, CheckConclusion, CheckRun, CommentAction, CommentContext,
    DEFAULT_COMMENT_AUTHOR, GithubApi, MAX_CHECK_SUMMARY_BYTES, MAX_COMMENT_BYTES, MAX_STEP_SUMMARY_BYTES,
    Token, comment_body, create_check_run, job_summary, merge_base, post_or_update_comment, run_jobs,
    sections_from,
};
use convbench::results::{
    AdapterFingerprint, BenchmarkResult, Host, Phase, RunRecord, RunSettings, TimingMethod, fixtures,
};
use convbench::{Error, ErrorKind};
use serde_json::json;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use wiremock::matchers::{header, method, path, path_regex, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const OWNER: &str = "octo";
const REPO: &str = "bench";
const PR: u64 = 7;
const TOKEN: &str = "ghs_TopSecretTokenValue0123456789";

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// Runs async set-up (the mock server lives on its own thread) outside of the code under test,
/// which builds its own runtime and must not be called from inside one.
fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("test runtime")
        .block_on(future)
}

fn api(server: &MockServer) -> GithubApi {
    GithubApi::new(server.uri(), Some(Token::new(TOKEN)))
}

fn comments_path() -> String {
    format!("/repos/{OWNER}/{REPO}/issues/{PR}/comments")
}

/// A comment by `someone` as the REST API returns it (every field octocrab requires).
fn comment_json(server_uri: &str, id: u64, body: &str) -> serde_json::Value {
    authored_comment(server_uri, id, body, "someone")
}

/// A comment by `login` as the REST API returns it.
fn authored_comment(server_uri: &str, id: u64, body: &str, login: &str) -> serde_json::Value {
    let user = format!("https://api.github.com/users/{login}");
    json!({
        "id": id,
        "node_id": format!("IC_{id}"),
        "url": format!("{server_uri}/repos/{OWNER}/{REPO}/issues/comments/{id}"),
        "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/{PR}#issuecomment-{id}"),
        "issue_url": format!("{server_uri}/repos/{OWNER}/{REPO}/issues/{PR}"),
        "body": body,
        "user": {
            "login": login, "id": 1, "node_id": "U_1",
            "avatar_url": "https://avatars.githubusercontent.com/u/1", "gravatar_id": "",
            "url": user, "html_url": format!("https://github.com/{login}"),
            "followers_url": format!("{user}/followers"), "following_url": format!("{user}/following"),
            "gists_url": format!("{user}/gists"), "starred_url": format!("{user}/starred"),
            "subscriptions_url": format!("{user}/subscriptions"),
            "organizations_url": format!("{user}/orgs"), "repos_url": format!("{user}/repos"),
            "events_url": format!("{user}/events"), "received_events_url": format!("{user}/received_events"),
            "type": "User", "site_admin": false
        },
        "created_at": "2026-11-01T12:00:00Z",
        "updated_at": "2026-11-01T12:00:00Z"
    })
}

fn fingerprint(name: &str, vendor_id: u32, device_id: u32, driver_info: &str) -> AdapterFingerprint {
    AdapterFingerprint {
        backend: "vulkan".to_string(),
        vendor_id,
        device_id,
        name: name.to_string(),
        device_type: "discrete".to_string(),
        driver: "vendor driver".to_string(),
        driver_info: driver_info.to_string(),
        runtime_version: "wgpu 30.0.1".to_string(),
    }
}

fn h100() -> AdapterFingerprint {
    fingerprint("NVIDIA H100", 0x10de, 0x2330, "580.95.05")
}

fn radeon() -> AdapterFingerprint {
    fingerprint("AMD Radeon RX 7900 XTX", 0x1002, 0x744c, "Mesa 25.2.6")
}

/// Ten samples (ns) spread ±1 % around `median_ns`, deterministic.
fn around(median_ns: u64) -> Vec<u64> {
    (0..10u64)
        .map(|k| median_ns - median_ns / 100 + k * median_ns / 450)
        .collect()
}

/// [`fixtures::benchmark`] on `adapter`, its phases from raw samples.
fn benchmark(id: &str, adapter: &AdapterFingerprint, phases: Vec<(Phase, Vec<u64>)>) -> BenchmarkResult {
    let phases = phases
        .into_iter()
        .map(|(phase, samples_ns)| fixtures::phase(phase, samples_ns))
        .collect();
    BenchmarkResult {
        adapter: adapter.clone(),
        ..fixtures::benchmark(id, phases)
    }
}

/// [`fixtures::record`] of `commit`, clean, at a fixed time on an unnamed host.
fn record(commit: &str, benchmarks: Vec<BenchmarkResult>) -> RunRecord {
    RunRecord {
        convbench_version: "0.1.0".to_string(),
        created_unix_s: 1_790_000_000,
        git_commit: Some(commit.to_string()),
        git_dirty: Some(false),
        host: Host::default(),
        settings: RunSettings::default(),
        ..fixtures::record(benchmarks)
    }
}

/// Baseline and current records on `adapter` whose comparison has every verdict a PR sees:
/// regression, improvement, inconclusive, no change, new and missing.
fn every_verdict(adapter: &AdapterFingerprint, commit: &str) -> (RunRecord, RunRecord) {
    let noisy_baseline = vec![
        5_000_000, 10_000_000, 15_000_000, 20_000_000, 25_000_000, 30_000_000,
    ];
    let noisy_current = vec![
        5_500_000, 11_000_000, 16_500_000, 22_000_000, 27_500_000, 33_000_000,
    ];
    let baseline = record(
        "1111111aaaaaaabbbbbbbcccccccdddddddeeeee",
        vec![
            benchmark(
                "alexnet/train/b128/f32/wgpu",
                adapter,
                vec![
                    (Phase::Forward, around(12_000_000)),
                    (Phase::Total, around(40_000_000)),
                ],
            ),
            benchmark(
                "vgg_a/train/b64/f32/wgpu",
                adapter,
                vec![(Phase::Total, around(250_000_000))],
            ),
            benchmark(
                "googlenet/train/b128/f32/wgpu",
                adapter,
                vec![(Phase::Total, noisy_baseline)],
            ),
            benchmark(
                "overfeat/train/b128/f32/wgpu",
                adapter,
                vec![(Phase::Total, around(90_000_000))],
            ),
            benchmark(
                "lenet/eval/b1/f32/wgpu",
                adapter,
                vec![(Phase::Forward, around(850))],
            ),
        ],
    );
    let current = record(
        commit,
        vec![
            benchmark(
                "alexnet/train/b128/f32/wgpu",
                adapter,
                vec![
                    (Phase::Forward, around(13_500_000)),
                    (Phase::Total, around(40_000_000)),
                ],
            ),
            benchmark(
                "vgg_a/train/b64/f32/wgpu",
                adapter,
                vec![(Phase::Total, around(200_000_000))],
            ),
            benchmark(
                "googlenet/train/b128/f32/wgpu",
                adapter,
                vec![(Phase::Total, noisy_current)],
            ),
            benchmark(
                "overfeat/train/b128/f32/wgpu",
                adapter,
                vec![(Phase::Total, around(90_000_000))],
            ),
            benchmark(
                "resnet50/train/b32/f16/wgpu",
                adapter,
                vec![(Phase::Total, around(1_500_000_000))],
            ),
        ],
    );
    (baseline, current)
}

fn context() -> CommentContext {
    CommentContext {
        base_sha: Some("1111111aaaaaaabbbbbbbcccccccdddddddeeeee".to_string()),
        head_sha: Some("2222222fffffff00000001111111222222233333".to_string()),
        run_url: Some("https://github.com/octo/bench/actions/runs/123456".to_string()),
        dashboard_url: Some("https://octo.github.io/bench/".to_string()),
        ..CommentContext::default()
    }
}

fn row(benchmark_id: &str, verdict: Verdict, adapter_label: &str) -> PhaseComparison {
    PhaseComparison {
        benchmark_id: benchmark_id.to_string(),
        phase: Phase::Total,
        baseline_median_ns: Some(10_000_000.0),
        current_median_ns: Some(10_100_000.0),
        change: Some(0.01),
        ci: Some((0.0, 0.02)),
        p_value: Some(0.5),
        threshold: 0.05,
        verdict,
        adapter_label: adapter_label.to_string(),
        evidence: None,
    }
}

fn section_of(rows: Vec<PhaseComparison>, adapter: &AdapterFingerprint) -> AdapterSection {
    AdapterSection {
        adapter_label: adapter.label(),
        fingerprint: Some(adapter.clone()),
        timing_methods: vec![TimingMethod::GpuTimestamps],
        commit: None,
        comparison: Comparison {
            rows,
            config: CompareConfig::default(),
            kernel_changes: Vec::new(),
            current_incomplete: false,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// The comment through the API
// ---------------------------------------------------------------------------------------------

/// A fake of the comments of one pull request: GET lists them, POST appends one. Lets two
/// consecutive runs see each other's work, as on GitHub.
#[derive(Clone)]
struct FakeComments {
    server_uri: String,
    comments: Arc<Mutex<Vec<serde_json::Value>>>,
}

struct ListComments(FakeComments);
struct CreateComment(FakeComments);

impl Respond for ListComments {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let comments = self.0.comments.lock().expect("fake state").clone();
        ResponseTemplate::new(200).set_body_json(comments)
    }
}

impl Respond for CreateComment {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let sent: serde_json::Value = request.body_json().expect("JSON body");
        let mut comments = self.0.comments.lock().expect("fake state");
        let id = 1000 + comments.len() as u64;
        let body = sent["body"].as_str().expect("body string");
        let created = authored_comment(&self.0.server_uri, id, body, DEFAULT_COMMENT_AUTHOR);
        comments.push(created.clone());
        ResponseTemplate::new(201).set_body_json(created)
    }
}

#[test]
fn first_run_creates_the_comment_and_the_second_updates_it() {
    let server = block_on(MockServer::start());
    let fake = FakeComments {
        server_uri: server.uri(),
        comments: Arc::new(Mutex::new(vec![comment_json(
            &server.uri(),
            1,
            "LGTM, unrelated comment",
        )])),
    };
    block_on(async {
        // Each run lists; the first also lists again after its POST, for concurrent runs.
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .respond_with(ListComments(fake.clone()))
            .expect(3)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(comments_path()))
            .respond_with(CreateComment(fake.clone()))
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("PATCH"))
            .and(path(format!("/repos/{OWNER}/{REPO}/issues/comments/1001")))
            .respond_with(move |request: &Request| {
                let sent: serde_json::Value = request.body_json().expect("JSON body");
                let body = sent["body"].as_str().unwrap_or_default().to_string();
                ResponseTemplate::new(200).set_body_json(comment_json("http://unused", 1001, &body))
            })
            .expect(1)
            .mount(&server)
            .await;
    });
    let api = api(&server);
    let first = format!("{COMMENT_MARKER}\nfirst run");
    let second = format!("{COMMENT_MARKER}\nsecond run");
    assert_eq!(
        post_or_update_comment(&api, OWNER, REPO, PR, &first).expect("first run"),
        CommentAction::Created(1001)
    );
    assert_eq!(
        post_or_update_comment(&api, OWNER, REPO, PR, &second).expect("second run"),
        CommentAction::Updated(1001)
    );
    let requests = block_on(server.received_requests()).expect("recording is on");
    let patch = requests
        .iter()
        .find(|request| request.method.as_str() == "PATCH")
        .expect("a PATCH was sent");
    let sent: serde_json::Value = patch.body_json().expect("JSON body");
    assert_eq!(sent["body"], second.as_str());
    block_on(server.verify());
}

#[test]
fn the_marker_comment_is_found_on_the_second_page() {
    let server = block_on(MockServer::start());
    let uri = server.uri();
    let mut first_page: Vec<serde_json::Value> = (1..=3)
        .map(|id| comment_json(&uri, id, &format!("comment {id}")))
        .collect();
    // A comment that only mentions the marker is someone's words, not convbench's comment.
    first_page.push(comment_json(
        &uri,
        5,
        &format!("convbench finds its comment by `{COMMENT_MARKER}`"),
    ));
    let second_page = vec![
        comment_json(&uri, 4, "another one"),
        authored_comment(
            &uri,
            42,
            &format!("{COMMENT_MARKER}\nold results"),
            DEFAULT_COMMENT_AUTHOR,
        ),
    ];
    let next = format!("{uri}{}?per_page=100&page=2", comments_path());
    block_on(async {
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .and(query_param_is_missing("page"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header(
                        "link",
                        format!(r#"<{next}>; rel="next", <{next}>; rel="last""#).as_str(),
                    )
                    .set_body_json(first_page),
            )
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .and(query_param("page", "2"))
            .respond_with(ResponseTemplate::new(200).set_body_json(second_page))
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("PATCH"))
            .and(path(format!("/repos/{OWNER}/{REPO}/issues/comments/42")))
            .respond_with(ResponseTemplate::new(200).set_body_json(comment_json(&uri, 42, "new")))
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500))
            .expect(0)
            .mount(&server)
            .await;
    });
    let action = post_or_update_comment(&api(&server), OWNER, REPO, PR, "new").expect("upsert");
    assert_eq!(action, CommentAction::Updated(42));
    block_on(server.verify());
}

/// Mounts a comment listing of `existing`, a PATCH of comment `patched` answering `patch_status`
/// (expected `patches` times) and a POST creating comment 900 (expected `posts` times).
fn mount_upsert(
    server: &MockServer,
    existing: Vec<serde_json::Value>,
    patched: u64,
    patch_status: u16,
    patches: u64,
    posts: u64,
) {
    let uri = server.uri();
    block_on(async {
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(ResponseTemplate::new(200).set_body_json(existing))
            .mount(server)
            .await;
        Mock::given(method("PATCH"))
            .and(path(format!("/repos/{OWNER}/{REPO}/issues/comments/{patched}")))
            .respond_with(if patch_status == 200 {
                ResponseTemplate::new(200).set_body_json(authored_comment(
                    &uri,
                    patched,
                    "new",
                    DEFAULT_COMMENT_AUTHOR,
                ))
            } else {
                ResponseTemplate::new(patch_status)
                    .set_body_json(json!({"message": "Resource not accessible by integration"}))
            })
            .expect(patches)
            .mount(server)
            .await;
        Mock::given(method("POST"))
            .and(path(comments_path()))
            .respond_with(ResponseTemplate::new(201).set_body_json(authored_comment(
                &uri,
                900,
                "new",
                DEFAULT_COMMENT_AUTHOR,
            )))
            .expect(posts)
            .mount(server)
            .await;
    });
}

#[test]
fn a_marker_comment_written_by_someone_else_is_never_edited() {
    let server = block_on(MockServer::start());
    let planted = comment_json(
        &server.uri(),
        13,
        &format!("{COMMENT_MARKER}\nall green, trust me"),
    );
    mount_upsert(&server, vec![planted], 13, 200, 0, 1);
    let body = format!("{COMMENT_MARKER}\nresults");
    let action = post_or_update_comment(&api(&server), OWNER, REPO, PR, &body).expect("upsert");
    assert_eq!(action, CommentAction::Created(900));
    block_on(server.verify());
}

/// A comment as the REST API lists it once its author's account is deleted: `user` is null.
fn ghost_comment(server_uri: &str, id: u64, body: &str) -> serde_json::Value {
    let mut comment = comment_json(server_uri, id, body);
    comment["user"] = serde_json::Value::Null;
    comment
}

#[test]
fn a_comment_whose_user_is_null_is_listed_and_never_ours() {
    // Without our comment: the page still parses, and the deleted account's marker comment is
    // not taken for convbench's.
    let server = block_on(MockServer::start());
    let ghost = ghost_comment(&server.uri(), 12, &format!("{COMMENT_MARKER}\nold results"));
    mount_upsert(&server, vec![ghost.clone()], 12, 200, 0, 1);
    let body = format!("{COMMENT_MARKER}\nresults");
    let action = post_or_update_comment(&api(&server), OWNER, REPO, PR, &body).expect("upsert");
    assert_eq!(action, CommentAction::Created(900));
    block_on(server.verify());

    // With ours after it: ours is found and updated.
    let server = block_on(MockServer::start());
    let ghost = ghost_comment(&server.uri(), 12, "a comment by a deleted account");
    let ours = authored_comment(
        &server.uri(),
        14,
        &format!("{COMMENT_MARKER}\nold"),
        DEFAULT_COMMENT_AUTHOR,
    );
    mount_upsert(&server, vec![ghost, ours], 14, 200, 1, 0);
    let action = post_or_update_comment(&api(&server), OWNER, REPO, PR, &body).expect("upsert");
    assert_eq!(action, CommentAction::Updated(14));
    block_on(server.verify());
}

#[test]
fn only_a_comment_opening_with_the_exact_marker_line_is_convbenchs() {
    let server = block_on(MockServer::start());
    let uri = server.uri();
    let existing = vec![
        // The token's own identity, but a note with text before the marker: a maintainer's.
        authored_comment(
            &uri,
            21,
            &format!("  {COMMENT_MARKER}\nmy notes"),
            DEFAULT_COMMENT_AUTHOR,
        ),
        authored_comment(
            &uri,
            22,
            &format!("{COMMENT_MARKER} and more\nnotes"),
            DEFAULT_COMMENT_AUTHOR,
        ),
        authored_comment(
            &uri,
            23,
            &format!("{COMMENT_MARKER}\r\nold results"),
            DEFAULT_COMMENT_AUTHOR,
        ),
    ];
    mount_upsert(&server, existing, 23, 200, 1, 0);
    let action = post_or_update_comment(&api(&server), OWNER, REPO, PR, "new").expect("upsert");
    assert_eq!(action, CommentAction::Updated(23));
    block_on(server.verify());
}

#[test]
fn another_token_identity_is_configurable() {
    let server = block_on(MockServer::start());
    let ours = authored_comment(
        &server.uri(),
        31,
        &format!("{COMMENT_MARKER}\nold"),
        "perf-bot[bot]",
    );
    mount_upsert(&server, vec![ours], 31, 200, 1, 0);
    let api = api(&server).with_comment_author("perf-bot[bot]");
    assert_eq!(
        post_or_update_comment(&api, OWNER, REPO, PR, "new").expect("upsert"),
        CommentAction::Updated(31)
    );
    block_on(server.verify());
}

#[test]
fn a_refused_edit_posts_a_new_comment_instead() {
    let server = block_on(MockServer::start());
    let ours = authored_comment(
        &server.uri(),
        41,
        &format!("{COMMENT_MARKER}\nold"),
        DEFAULT_COMMENT_AUTHOR,
    );
    mount_upsert(&server, vec![ours], 41, 403, 1, 1);
    let action = post_or_update_comment(&api(&server), OWNER, REPO, PR, "new").expect("upsert");
    assert_eq!(action, CommentAction::Created(900));
    block_on(server.verify());
}

#[test]
fn an_oversized_body_is_refused_before_any_request() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(200))
            .expect(0)
            .mount(&server),
    );
    let body = "x".repeat(MAX_COMMENT_BYTES + 1);
    let error = post_or_update_comment(&api(&server), OWNER, REPO, PR, &body).expect_err("too long");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    block_on(server.verify());
}

#[test]
fn forbidden_says_which_permission_to_add() {
    let server = block_on(MockServer::start());
    block_on(async {
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(ResponseTemplate::new(403).set_body_json(json!({
                "message": "Resource not accessible by integration",
                "documentation_url": "https://docs.github.com/rest/issues/comments"
            })))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201))
            .expect(0)
            .mount(&server)
            .await;
    });
    let error = post_or_update_comment(&api(&server), OWNER, REPO, PR, "body").expect_err("403");
    assert_eq!(error.kind(), ErrorKind::Environment);
    let message = error.to_string();
    assert!(message.contains("403"), "{message}");
    assert!(
        message.contains(
            "the token lacks pull-requests: write; add `permissions: pull-requests: write` to the job, \
             or use the workflow_run pattern (comment.yml) for fork PRs"
        ),
        "{message}"
    );
    assert!(message.contains(&server.uri()), "names the API URL: {message}");
    block_on(server.verify());
}

#[test]
fn not_found_while_listing_names_the_read_permission_not_a_write_one() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
            .mount(&server),
    );
    let error = post_or_update_comment(&api(&server), OWNER, REPO, PR, "body").expect_err("404");
    let message = error.to_string();
    assert_eq!(error.kind(), ErrorKind::Environment);
    assert!(
        message.contains("`permissions: pull-requests: read` or `issues: read`"),
        "{message}"
    );
    // Listing needs no write permission: blaming one sends the user the wrong way.
    assert!(!message.contains("lacks pull-requests: write"), "{message}");
    assert!(
        message.contains("the `--pr` of `comment`"),
        "names the number to check: {message}"
    );
    assert!(message.contains("GITHUB_REPOSITORY"), "{message}");
}

#[test]
fn other_http_errors_name_the_status_and_the_api_url() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(422).set_body_json(json!({"message": "Validation Failed"})))
            .mount(&server),
    );
    let error = post_or_update_comment(&api(&server), OWNER, REPO, PR, "body").expect_err("422");
    let message = error.to_string();
    assert_eq!(error.kind(), ErrorKind::Environment);
    assert!(
        message.contains("422") && message.contains("Validation Failed"),
        "{message}"
    );
    assert!(message.contains(&server.uri()), "{message}");
}

#[test]
fn no_token_is_an_environment_error_without_any_request() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(200))
            .expect(0)
            .mount(&server),
    );
    let api = GithubApi::new(server.uri(), None);
    let error = post_or_update_comment(&api, OWNER, REPO, PR, "body").expect_err("no token");
    assert!(matches!(
        &error,
        Error::GitHub(e) if matches!(**e, convbench::github::GitHubError::NoToken { .. })
    ));
    assert_eq!(error.kind(), convbench::ErrorKind::Environment);
    assert_eq!(
        error.to_string(),
        "no GITHUB_TOKEN; the comment was not posted; set GITHUB_TOKEN to a token with `pull-requests: write`"
    );
    block_on(server.verify());
}

#[test]
fn an_api_url_without_a_scheme_is_an_environment_error_not_a_panic() {
    let api = GithubApi::new("api.github.com", Some(Token::new(TOKEN)));
    let comment = post_or_update_comment(&api, OWNER, REPO, PR, "body").expect_err("no scheme");
    let check = create_check_run(&api, OWNER, REPO, &check_run("summary")).expect_err("no scheme");
    for error in [comment, check] {
        assert_eq!(error.kind(), ErrorKind::Environment);
        let message = error.to_string();
        assert!(
            message.starts_with("GITHUB_API_URL \"api.github.com\" has no http:// or https:// scheme"),
            "{message}"
        );
        assert!(message.contains("e.g. https://api.github.com"), "{message}");
    }
}

#[test]
fn the_token_never_appears_in_errors_or_debug_output() {
    // A server that echoes the Authorization header into its error message.
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(|request: &Request| {
                let echoed = request
                    .headers
                    .get("authorization")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                ResponseTemplate::new(401)
                    .set_body_json(json!({ "message": format!("bad credentials {echoed}") }))
            })
            .mount(&server),
    );
    let echoed = post_or_update_comment(&api(&server), OWNER, REPO, PR, "body").expect_err("401");
    let forbidden = {
        let server = block_on(MockServer::start());
        block_on(
            Mock::given(method("GET"))
                .respond_with(ResponseTemplate::new(403))
                .mount(&server),
        );
        post_or_update_comment(&api(&server), OWNER, REPO, PR, "body").expect_err("403")
    };
    // Nothing listens on port 9 (discard) of loopback in the test environment.
    let unreachable =
        GithubApi::new("http://127.0.0.1:9", Some(Token::new(TOKEN))).with_backoff(Duration::from_millis(1));
    let transport = post_or_update_comment(&unreachable, OWNER, REPO, PR, "body").expect_err("unreachable");
    let bad_url = GithubApi::new("not a url", Some(Token::new(TOKEN)));
    let url_error = post_or_update_comment(&bad_url, OWNER, REPO, PR, "body").expect_err("bad URL");
    for error in [&echoed, &forbidden, &transport, &url_error] {
        let shown = format!("{error} / {error:?}");
        assert!(!shown.contains(TOKEN), "token leaked: {shown}");
        assert!(!shown.contains("TopSecret"), "token leaked: {shown}");
    }
    assert!(echoed.to_string().contains("401"), "{echoed}");
    let api = api(&server);
    assert!(!format!("{api:?}").contains(TOKEN));
    assert!(!format!("{:?} {}", Token::new(TOKEN), Token::new(TOKEN)).contains(TOKEN));
}

// ---------------------------------------------------------------------------------------------
// Retries, rate limits and the deadline
// ---------------------------------------------------------------------------------------------

/// An API whose retries wait a millisecond instead of a second.
fn fast_api(server: &MockServer) -> GithubApi {
    api(server).with_backoff(Duration::from_millis(1))
}

/// Answers `failure` to the first `failures` requests, then `success`.
fn failing_first(
    failures: usize,
    failure: ResponseTemplate,
    success: ResponseTemplate,
) -> impl Fn(&Request) -> ResponseTemplate + Send + Sync {
    let seen = AtomicUsize::new(0);
    move |_: &Request| {
        if seen.fetch_add(1, Ordering::SeqCst) < failures {
            failure.clone()
        } else {
            success.clone()
        }
    }
}

/// Mounts a POST creating comment 900, expected `posts` times.
fn mount_create(server: &MockServer, posts: u64) {
    block_on(
        Mock::given(method("POST"))
            .and(path(comments_path()))
            .respond_with(ResponseTemplate::new(201).set_body_json(authored_comment(
                &server.uri(),
                900,
                "new",
                DEFAULT_COMMENT_AUTHOR,
            )))
            .expect(posts)
            .mount(server),
    );
}

#[test]
fn bad_gateway_twice_is_retried_after_a_backoff() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(failing_first(
                2,
                ResponseTemplate::new(502),
                ResponseTemplate::new(200).set_body_json(json!([])),
            ))
            .expect(4)
            .mount(&server),
    );
    mount_create(&server, 1);
    let api = api(&server).with_backoff(Duration::from_millis(100));
    let started = Instant::now();
    let action = post_or_update_comment(&api, OWNER, REPO, PR, "new").expect("third try succeeds");
    assert_eq!(action, CommentAction::Created(900));
    // At least half of 100 ms, then half of 200 ms: not octocrab's immediate retries.
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(150), "{elapsed:?}");
    block_on(server.verify());
}

#[test]
fn a_lasting_server_error_is_tried_four_times_then_named() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(503).set_body_json(json!({"message": "Service Unavailable"})))
            .expect(4)
            .mount(&server),
    );
    let error = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, "new").expect_err("503");
    let message = error.to_string();
    assert_eq!(error.kind(), ErrorKind::Environment);
    assert!(
        message.contains("503") && message.contains("tried 4 times"),
        "{message}"
    );
    assert!(message.contains(&server.uri()), "{message}");
    block_on(server.verify());
}

#[test]
fn too_many_requests_waits_as_long_as_retry_after_says() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(failing_first(
                1,
                ResponseTemplate::new(429).insert_header("retry-after", "1"),
                ResponseTemplate::new(200).set_body_json(json!([])),
            ))
            .expect(3)
            .mount(&server),
    );
    mount_create(&server, 1);
    let started = Instant::now();
    let action = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, "new").expect("after the wait");
    assert_eq!(action, CommentAction::Created(900));
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(950), "{elapsed:?}");
    block_on(server.verify());
}

#[test]
fn a_secondary_rate_limit_is_reported_as_a_rate_limit_not_a_permission() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(403)
                    .insert_header("retry-after", "3600")
                    .set_body_json(json!({
                        "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
                    })),
            )
            .expect(1)
            .mount(&server),
    );
    let started = Instant::now();
    let error = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, "new").expect_err("limited");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "does not wait an hour"
    );
    let message = error.to_string();
    assert!(message.contains("rate limited"), "{message}");
    assert!(message.contains("secondary rate limit"), "{message}");
    assert!(message.contains("resets in 3600 s"), "{message}");
    assert!(!message.contains("pull-requests: write"), "{message}");
    block_on(server.verify());
}

#[test]
fn an_exhausted_primary_rate_limit_says_when_it_resets() {
    let server = block_on(MockServer::start());
    let reset = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
        + 1800;
    block_on(
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(403)
                    .insert_header("x-ratelimit-remaining", "0")
                    .insert_header("x-ratelimit-reset", reset.to_string().as_str())
                    .set_body_json(json!({"message": "API rate limit exceeded for installation ID 1."})),
            )
            .expect(1)
            .mount(&server),
    );
    let error = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, "new").expect_err("limited");
    let message = error.to_string();
    assert!(
        message.contains("rate limited") && message.contains("UTC"),
        "{message}"
    );
    assert!(!message.contains("pull-requests: write"), "{message}");
    block_on(server.verify());
}

#[test]
fn a_wrong_pull_request_number_says_not_found() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
            .expect(1)
            .mount(&server),
    );
    let error = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, "new").expect_err("404");
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "answered 404 Not Found to listing the comments on pull request #{PR} in {OWNER}/{REPO}: \
             pull request #{PR} was not found in {OWNER}/{REPO}. Check the number"
        )),
        "{message}"
    );
    block_on(server.verify());
}

#[test]
fn a_failed_post_that_landed_is_not_sent_again() {
    let server = block_on(MockServer::start());
    let body = format!("{COMMENT_MARKER}\nresults");
    let landed = authored_comment(&server.uri(), 77, &body, DEFAULT_COMMENT_AUTHOR);
    block_on(async {
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(failing_first(
                1,
                ResponseTemplate::new(200).set_body_json(json!([])),
                ResponseTemplate::new(200).set_body_json(json!([landed])),
            ))
            .expect(2)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500))
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("PATCH"))
            .respond_with(ResponseTemplate::new(500))
            .expect(0)
            .mount(&server)
            .await;
    });
    let action = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, &body).expect("found");
    assert_eq!(action, CommentAction::Created(77));
    block_on(server.verify());
}

#[test]
fn a_failed_post_that_did_not_land_is_sent_again() {
    let server = block_on(MockServer::start());
    block_on(async {
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .expect(3)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(comments_path()))
            .respond_with(failing_first(
                1,
                ResponseTemplate::new(502),
                ResponseTemplate::new(201).set_body_json(authored_comment(
                    &server.uri(),
                    900,
                    "new",
                    DEFAULT_COMMENT_AUTHOR,
                )),
            ))
            .expect(2)
            .mount(&server)
            .await;
    });
    let action = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, "new").expect("second POST");
    assert_eq!(action, CommentAction::Created(900));
    block_on(server.verify());
}

// ---------------------------------------------------------------------------------------------
// Concurrent runs
// ---------------------------------------------------------------------------------------------

/// PATCH and DELETE of one comment of a [`FakeComments`], by the id at the end of the path;
/// 404 for a comment that is not there.
struct EditComment(FakeComments);

impl Respond for EditComment {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let id: u64 = (request.url.path().rsplit('/').next())
            .and_then(|id| id.parse().ok())
            .expect("a comment id");
        let mut comments = self.0.comments.lock().expect("fake state");
        let Some(index) = comments.iter().position(|comment| comment["id"] == id) else {
            return ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}));
        };
        if request.method.as_str() == "DELETE" {
            comments.remove(index);
            return ResponseTemplate::new(204);
        }
        let sent: serde_json::Value = request.body_json().expect("JSON body");
        comments[index]["body"] = sent["body"].clone();
        ResponseTemplate::new(200).set_body_json(comments[index].clone())
    }
}

/// Mounts the comments of `fake` on `server`: GET (the first `slow_listings` answered after
/// `delay`, from the state when they arrived), POST, PATCH and DELETE.
fn mount_fake(server: &MockServer, fake: &FakeComments, slow_listings: usize, delay: Duration) {
    let listed = Arc::new(AtomicUsize::new(0));
    let list = ListComments(fake.clone());
    block_on(async {
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(move |request: &Request| {
                let answer = list.respond(request);
                if listed.fetch_add(1, Ordering::SeqCst) < slow_listings {
                    answer.set_delay(delay)
                } else {
                    answer
                }
            })
            .mount(server)
            .await;
        Mock::given(method("POST"))
            .and(path(comments_path()))
            .respond_with(CreateComment(fake.clone()))
            .mount(server)
            .await;
        Mock::given(method("PATCH"))
            .and(path_regex(r"^/repos/octo/bench/issues/comments/[0-9]+$"))
            .respond_with(EditComment(fake.clone()))
            .mount(server)
            .await;
        Mock::given(method("DELETE"))
            .and(path_regex(r"^/repos/octo/bench/issues/comments/[0-9]+$"))
            .respond_with(EditComment(fake.clone()))
            .mount(server)
            .await;
    });
}

/// The requests `server` received with `verb`, as `VERB /path`.
fn requests_of(server: &MockServer, verb: &str) -> Vec<String> {
    block_on(server.received_requests())
        .expect("recording is on")
        .iter()
        .filter(|request| request.method.as_str() == verb)
        .map(|request| format!("{verb} {}", request.url.path()))
        .collect()
}

#[test]
fn a_comment_posted_after_another_runs_is_folded_into_the_older_one() {
    // Another run posted comment 1000 between this run's listing and its POST (the first
    // listing is answered from the empty thread, after the other comment landed).
    let server = block_on(MockServer::start());
    let fake = FakeComments {
        server_uri: server.uri(),
        comments: Arc::new(Mutex::new(Vec::new())),
    };
    mount_fake(&server, &fake, 0, Duration::ZERO);
    let answer_first_listing_empty = {
        let fake = fake.clone();
        let uri = server.uri();
        move || {
            fake.comments.lock().expect("fake state").push(authored_comment(
                &uri,
                1000,
                &format!("{COMMENT_MARKER}\nthe other runner's results"),
                DEFAULT_COMMENT_AUTHOR,
            ));
        }
    };
    // The first listing sees no comment: mount an empty answer for it on top.
    block_on(
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(move |_: &Request| {
                answer_first_listing_empty();
                ResponseTemplate::new(200).set_body_json(json!([]))
            })
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&server),
    );
    let body = format!("{COMMENT_MARKER}\nthis runner's results");
    let action = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, &body).expect("upsert");
    assert_eq!(action, CommentAction::Updated(1000), "the older comment is kept");
    let comments = fake.comments.lock().expect("fake state").clone();
    assert_eq!(comments.len(), 1, "one comment left: {comments:#?}");
    assert_eq!(comments[0]["id"], 1000);
    assert_eq!(comments[0]["body"], body.as_str());
    assert_eq!(
        requests_of(&server, "DELETE"),
        [format!("DELETE /repos/{OWNER}/{REPO}/issues/comments/1001")],
        "only the comment this run created is deleted"
    );
}

#[test]
fn the_oldest_comment_is_kept_and_other_runs_newer_ones_are_left_to_them() {
    // This run's comment is the oldest of two: it stays as posted, and the other run's newer
    // comment is not this run's to delete.
    let server = block_on(MockServer::start());
    let uri = server.uri();
    let body = format!("{COMMENT_MARKER}\nthis runner's results");
    let first = Arc::new(AtomicUsize::new(0));
    let (mine, theirs) = (
        authored_comment(&uri, 900, &body, DEFAULT_COMMENT_AUTHOR),
        authored_comment(
            &uri,
            950,
            &format!("{COMMENT_MARKER}\nother"),
            DEFAULT_COMMENT_AUTHOR,
        ),
    );
    block_on(async {
        Mock::given(method("GET"))
            .and(path(comments_path()))
            .respond_with(move |_: &Request| {
                if first.fetch_add(1, Ordering::SeqCst) == 0 {
                    ResponseTemplate::new(200).set_body_json(json!([]))
                } else {
                    ResponseTemplate::new(200).set_body_json(json!([mine, theirs]))
                }
            })
            .expect(2)
            .mount(&server)
            .await;
        Mock::given(method("PATCH"))
            .respond_with(ResponseTemplate::new(500))
            .expect(0)
            .mount(&server)
            .await;
        Mock::given(method("DELETE"))
            .respond_with(ResponseTemplate::new(500))
            .expect(0)
            .mount(&server)
            .await;
    });
    mount_create(&server, 1);
    let action = post_or_update_comment(&fast_api(&server), OWNER, REPO, PR, &body).expect("upsert");
    assert_eq!(action, CommentAction::Created(900));
    block_on(server.verify());
}

#[test]
fn two_concurrent_runs_converge_on_one_comment() {
    let server = block_on(MockServer::start());
    let fake = FakeComments {
        server_uri: server.uri(),
        comments: Arc::new(Mutex::new(vec![comment_json(&server.uri(), 1, "LGTM")])),
    };
    // Both first listings see the thread before either run posts: both post.
    mount_fake(&server, &fake, 2, Duration::from_millis(500));
    let runs: Vec<_> = ["runner A", "runner B"]
        .into_iter()
        .map(|runner| {
            let api = fast_api(&server);
            std::thread::spawn(move || {
                let body = format!("{COMMENT_MARKER}\nresults of {runner}");
                post_or_update_comment(&api, OWNER, REPO, PR, &body).expect("upsert")
            })
        })
        .collect();
    let mut actions: Vec<CommentAction> = runs
        .into_iter()
        .map(|run| run.join().expect("the run finished"))
        .collect();
    actions.sort_by_key(|action| matches!(action, CommentAction::Updated(_)));
    assert_eq!(requests_of(&server, "POST").len(), 2, "both runs posted");
    let comments = fake.comments.lock().expect("fake state").clone();
    let ours: Vec<&serde_json::Value> = comments
        .iter()
        .filter(|comment| {
            comment["body"]
                .as_str()
                .is_some_and(|body| body.starts_with(COMMENT_MARKER))
        })
        .collect();
    assert_eq!(ours.len(), 1, "one convbench comment left: {comments:#?}");
    let kept = ours[0]["id"].as_u64().expect("an id");
    assert_eq!(
        actions,
        [CommentAction::Created(kept), CommentAction::Updated(kept)],
        "the first to post keeps its comment; the second folds its own into it"
    );
    assert_eq!(requests_of(&server, "DELETE").len(), 1);
    assert_eq!(comments.len(), 2, "the other comment is untouched");
}

#[test]
fn a_stalled_api_times_out_within_the_deadline() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!([]))
                    .set_delay(Duration::from_secs(30)),
            )
            .mount(&server),
    );
    let api = fast_api(&server).with_deadline(Duration::from_secs(1));
    let started = Instant::now();
    let error = post_or_update_comment(&api, OWNER, REPO, PR, "new").expect_err("stalled");
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "timed out after 1 s while listing the comments on pull request #{PR} in {OWNER}/{REPO}"
        )),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------------------
// Check runs
// ---------------------------------------------------------------------------------------------

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn check_runs_path() -> String {
    format!("/repos/{OWNER}/{REPO}/check-runs")
}

fn check_run(summary: &str) -> CheckRun {
    CheckRun {
        name: "convbench".to_string(),
        head_sha: SHA.to_string(),
        conclusion: CheckConclusion::Failure,
        title: "1 regression on NVIDIA H100".to_string(),
        summary: summary.to_string(),
        details_url: Some("https://github.com/octo/bench/actions/runs/1".to_string()),
    }
}

/// The JSON body of the one POST the server received.
fn posted_json(server: &MockServer) -> serde_json::Value {
    let requests = block_on(server.received_requests()).expect("recording is on");
    let posts: Vec<_> = requests
        .iter()
        .filter(|request| request.method.as_str() == "POST")
        .collect();
    assert_eq!(posts.len(), 1, "one POST");
    posts[0].body_json().expect("JSON body")
}

#[test]
fn a_check_run_is_created_completed_with_its_output() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("POST"))
            .and(path(check_runs_path()))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 4242, "name": "convbench"})))
            .expect(1)
            .mount(&server),
    );
    let id =
        create_check_run(&fast_api(&server), OWNER, REPO, &check_run("| model | change |")).expect("created");
    assert_eq!(id, 4242);
    let sent = posted_json(&server);
    assert_eq!(sent["name"], "convbench");
    assert_eq!(sent["head_sha"], SHA);
    assert_eq!(sent["status"], "completed");
    assert_eq!(sent["conclusion"], "failure");
    assert_eq!(sent["output"]["title"], "1 regression on NVIDIA H100");
    assert_eq!(sent["output"]["summary"], "| model | change |");
    assert_eq!(
        sent["details_url"],
        "https://github.com/octo/bench/actions/runs/1"
    );
    block_on(server.verify());
}

#[test]
fn a_long_check_summary_is_cut_at_a_character_boundary_with_a_note() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
            .mount(&server),
    );
    let long = "ü".repeat(MAX_CHECK_SUMMARY_BYTES);
    create_check_run(&fast_api(&server), OWNER, REPO, &check_run(&long)).expect("created");
    let sent = posted_json(&server);
    let summary = sent["output"]["summary"].as_str().expect("a string");
    assert!(summary.len() <= MAX_CHECK_SUMMARY_BYTES, "{}", summary.len());
    assert!(
        summary.starts_with("üü") && summary.contains("cut to fit"),
        "{summary:.40}"
    );
}

#[test]
fn a_check_run_for_a_malformed_commit_is_refused_before_any_request() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(wiremock::matchers::any())
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
            .expect(0)
            .mount(&server),
    );
    for sha in [
        "abc123",
        "g123456789abcdef0123456789abcdef01234567",
        &format!("{SHA}0"),
        "",
    ] {
        let check = CheckRun {
            head_sha: sha.to_string(),
            ..check_run("summary")
        };
        let error = create_check_run(&fast_api(&server), OWNER, REPO, &check).expect_err("bad sha");
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{sha}: {error}");
    }
    block_on(server.verify());
}

#[test]
fn a_forbidden_check_run_says_the_token_lacks_checks_write() {
    let server = block_on(MockServer::start());
    block_on(
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(403)
                    .set_body_json(json!({"message": "Resource not accessible by integration"})),
            )
            .expect(1)
            .mount(&server),
    );
    let error = create_check_run(&fast_api(&server), OWNER, REPO, &check_run("s")).expect_err("403");
    let message = error.to_string();
    assert_eq!(error.kind(), ErrorKind::Environment);
    assert!(
        message.contains("403") && message.contains("the token lacks checks: write"),
        "{message}"
    );
    assert!(!message.contains(TOKEN), "{message}");
    block_on(server.verify());
}

#[test]
fn a_check_run_whose_post_failed_but_landed_is_not_created_twice() {
    let server = block_on(MockServer::start());
    let external_id = Arc::new(Mutex::new(String::new()));
    let recorded = Arc::clone(&external_id);
    block_on(async {
        Mock::given(method("POST"))
            .and(path(check_runs_path()))
            .respond_with(move |request: &Request| {
                let sent: serde_json::Value = request.body_json().expect("JSON body");
                *recorded.lock().expect("lock") =
                    sent["external_id"].as_str().unwrap_or_default().to_string();
                ResponseTemplate::new(502)
            })
            .expect(1)
            .mount(&server)
            .await;
        let listed = Arc::clone(&external_id);
        Mock::given(method("GET"))
            .and(path(format!("/repos/{OWNER}/{REPO}/commits/{SHA}/check-runs")))
            .and(query_param("check_name", "convbench"))
            .respond_with(move |_: &Request| {
                let ours = listed.lock().expect("lock").clone();
                ResponseTemplate::new(200).set_body_json(json!({
                    "total_count": 2,
                    "check_runs": [
                        {"id": 70, "name": "convbench", "external_id": "convbench-from-an-earlier-run"},
                        {"id": 71, "name": "convbench", "external_id": ours}
                    ]
                }))
            })
            .expect(1)
            .mount(&server)
            .await;
    });
    let id = create_check_run(&fast_api(&server), OWNER, REPO, &check_run("s")).expect("found");
    assert_eq!(id, 71);
    assert!(external_id.lock().expect("lock").starts_with("convbench-"));
    block_on(server.verify());
}

// ---------------------------------------------------------------------------------------------
// The comment's Markdown
// ---------------------------------------------------------------------------------------------

#[test]
fn comment_with_every_verdict() {
    let (baseline, current) = every_verdict(&h100(), "2222222fffffff00000001111111222222233333");
    let comparison = compare(&baseline, &current, &CompareConfig::default());
    for verdict in [
        Verdict::Regression,
        Verdict::Improvement,
        Verdict::Inconclusive,
        Verdict::NoChange,
        Verdict::New,
        Verdict::Missing,
    ] {
        assert!(
            comparison.count(verdict) > 0,
            "fixture lacks a {verdict} row: {:#?}",
            comparison.rows
        );
    }
    let sections = sections_from([(&current, &comparison)]);
    assert_eq!(sections.len(), 1, "missing rows join their adapter's section");
    assert_eq!(sections[0].comparison.rows.len(), comparison.rows.len());
    let body = comment_body(&sections, &context());
    assert!(body.starts_with(COMMENT_MARKER));
    insta::assert_snapshot!("comment_every_verdict", body);
}

#[test]
fn comment_links_the_dashboard_only_at_a_plain_https_url() {
    let body = comment_body(&[], &context());
    assert!(
        body.contains("[the convbench dashboard](https://octo.github.io/bench/)"),
        "{body}"
    );
    for hostile in [
        "http://octo.github.io/bench/",
        "javascript:alert(document.cookie)",
        "https://octo.github.io/bench/)[phish](https://evil.example",
        "https://octo.github.io/\"><script>alert(1)</script>",
        "https://octo.github.io/bench/ <img src=x>",
    ] {
        let context = CommentContext {
            dashboard_url: Some(hostile.to_string()),
            ..context()
        };
        let body = comment_body(&[], &context);
        assert!(!body.contains("dashboard"), "{hostile} was linked:\n{body}");
        assert!(
            !body.contains("<script>") && !body.contains("evil.example"),
            "{body}"
        );
    }
}

#[test]
fn comment_for_a_matrix_of_two_adapters() {
    let (h100_baseline, h100_current) = every_verdict(&h100(), "2222222fffffff00000001111111222222233333");
    let radeon_baseline = record(
        "1111111aaaaaaabbbbbbbcccccccdddddddeeeee",
        vec![
            benchmark(
                "alexnet/train/b128/f32/wgpu",
                &radeon(),
                vec![(Phase::Total, around(55_000_000))],
            ),
            benchmark(
                "vgg_a/train/b64/f32/wgpu",
                &radeon(),
                vec![(Phase::Total, around(310_000_000))],
            ),
        ],
    );
    let radeon_current = record(
        "2222222fffffff00000001111111222222233333",
        vec![
            benchmark(
                "alexnet/train/b128/f32/wgpu",
                &radeon(),
                vec![(Phase::Total, around(55_200_000))],
            ),
            benchmark(
                "vgg_a/train/b64/f32/wgpu",
                &radeon(),
                vec![(Phase::Total, around(309_000_000))],
            ),
        ],
    );
    let config = CompareConfig::default();
    let h100_comparison = compare(&h100_baseline, &h100_current, &config);
    let radeon_comparison = compare(&radeon_baseline, &radeon_current, &config);
    assert!(
        radeon_comparison
            .rows
            .iter()
            .all(|row| row.verdict == Verdict::NoChange)
    );
    let sections = sections_from([
        (&h100_current, &h100_comparison),
        (&radeon_current, &radeon_comparison),
    ]);
    let labels: Vec<&str> = sections.iter().map(|s| s.adapter_label.as_str()).collect();
    assert_eq!(
        labels,
        ["NVIDIA H100 (vulkan)", "AMD Radeon RX 7900 XTX (vulkan)"]
    );
    let body = comment_body(&sections, &context());
    assert_eq!(
        body.matches(COMMENT_MARKER).count(),
        1,
        "one comment for the whole matrix"
    );
    insta::assert_snapshot!("comment_two_adapters", body);
}

#[test]
fn same_gpu_with_another_driver_gets_its_own_section() {
    let newer = fingerprint("NVIDIA H100", 0x10de, 0x2330, "590.10");
    let first = record(
        "a",
        vec![benchmark(
            "x/train/b1/f32/wgpu",
            &h100(),
            vec![(Phase::Total, around(1000))],
        )],
    );
    let second = record(
        "a",
        vec![benchmark(
            "x/train/b1/f32/wgpu",
            &newer,
            vec![(Phase::Total, around(1000))],
        )],
    );
    let config = CompareConfig::default();
    let (c1, c2) = (
        compare(&first, &first, &config),
        compare(&second, &second, &config),
    );
    let sections = sections_from([(&first, &c1), (&second, &c2)]);
    assert_eq!(sections.len(), 2);
    assert_ne!(sections[0].adapter_label, sections[1].adapter_label);
    assert!(
        sections[1].adapter_label.contains("590.10"),
        "{}",
        sections[1].adapter_label
    );
}

#[test]
fn names_from_records_cannot_inject_markdown_or_html() {
    let mut adapter = h100();
    adapter.name = "GPU | <script>alert(1)</script> [x](https://evil.example) @admin".to_string();
    adapter.driver_info = "`code` **bold** <!-- hide".to_string();
    let id = "<img src=x onerror=alert(1)>/@someone/b1/f32/wgpu";
    let (baseline, current) = (
        record(
            "base",
            vec![benchmark(id, &adapter, vec![(Phase::Total, around(10_000_000))])],
        ),
        record(
            "head\n<b>x</b>",
            vec![benchmark(id, &adapter, vec![(Phase::Total, around(13_000_000))])],
        ),
    );
    let comparison = compare(&baseline, &current, &CompareConfig::default());
    assert_eq!(comparison.count(Verdict::Regression), 1);
    let sections = sections_from([(&current, &comparison)]);
    let body = comment_body(&sections, &CommentContext::default());
    for forbidden in [
        "<img",
        "<script",
        "<b>",
        "<!-- hide",
        "@someone",
        "@admin",
        "[x](",
        "`code`",
        "**bold**",
    ] {
        assert!(
            !body.contains(forbidden),
            "`{forbidden}` survived escaping:\n{body}"
        );
    }
    assert!(
        body.contains("&lt;img src=x onerror=alert(1)&gt;/@\u{200b}someone/b1/f32/wgpu"),
        "{body}"
    );
    assert!(body.contains("@\u{200b}admin"), "{body}");
    // The link cannot form, and the bare URL is not auto-linked either.
    assert!(body.contains("\\[x\\](https:\u{200b}//evil.example)"), "{body}");
    // The only raw HTML is ours: the marker and the folded block.
    let ours = ["<details>", "</details>", "<summary>", "</summary>"]
        .iter()
        .fold(body.replacen(COMMENT_MARKER, "", 1), |text, tag| {
            text.replace(tag, "")
        });
    assert!(!ours.contains('<'), "raw HTML from a record:\n{body}");
    // Every table row still has exactly its 7 cells: no `|` got through unescaped.
    for line in body.lines().filter(|line| line.starts_with("| ")) {
        let cells = line.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 8, "row split by a `|`: {line}");
    }
}

#[test]
fn an_oversized_comment_is_truncated_with_a_note() {
    let adapter = h100();
    let label = adapter.label();
    let long = "x".repeat(120);
    let mut rows: Vec<PhaseComparison> = (0..2_000)
        .map(|i| {
            row(
                &format!("model{i}_{long}/train/b1/f32/wgpu"),
                Verdict::NoChange,
                &label,
            )
        })
        .collect();
    rows.push(row("late/regression/b1/f32/wgpu", Verdict::Regression, &label));
    let sections = vec![section_of(rows, &adapter)];
    let body = comment_body(&sections, &context());
    assert!(body.len() <= MAX_COMMENT_BYTES, "{} bytes", body.len());
    assert!(body.chars().count() <= 65_536);
    assert!(body.starts_with(COMMENT_MARKER));
    let note = body.lines().last().expect("a last line");
    assert!(
        note.starts_with("… ") && note.contains(" more rows not shown (see the [job summary]("),
        "{note}"
    );
    assert!(note.ends_with(") / artifacts)"), "{note}");
    let hidden: usize = note
        .trim_start_matches("… ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count");
    let shown = body.lines().filter(|line| line.starts_with("| model")).count();
    assert_eq!(
        shown + hidden,
        2_000,
        "every unchanged row is either shown or counted"
    );
    assert!(hidden > 0 && shown > 0);
    assert!(body.contains("late/regression"), "regressions are dropped last");
    assert!(
        body.contains("**1 regression**, 2000 unchanged on NVIDIA H100 (vulkan)"),
        "the verdict line counts every row"
    );
    assert!(body.contains("</details>"), "the folded block stays closed");

    let plain = comment_body(&sections, &CommentContext::default());
    assert!(
        plain.ends_with("more rows not shown (see the job summary / artifacts)\n"),
        "{}",
        &plain[plain.len() - 200..]
    );
}

#[test]
fn a_comment_within_the_cap_is_not_truncated() {
    let adapter = h100();
    let rows = (0..10)
        .map(|i| {
            row(
                &format!("m{i}/train/b1/f32/wgpu"),
                Verdict::NoChange,
                &adapter.label(),
            )
        })
        .collect();
    let body = comment_body(&[section_of(rows, &adapter)], &context());
    assert!(!body.contains("not shown"));
    assert_eq!(body.lines().filter(|line| line.starts_with("| m")).count(), 10);
}

// ---------------------------------------------------------------------------------------------
// The job summary
// ---------------------------------------------------------------------------------------------

/// `count` unchanged rows with ids of about 140 bytes, then one regression.
fn many_rows(count: usize, adapter: &AdapterFingerprint) -> Vec<AdapterSection> {
    let label = adapter.label();
    let long = "x".repeat(120);
    let mut rows: Vec<PhaseComparison> = (0..count)
        .map(|i| {
            row(
                &format!("model{i}_{long}/train/b1/f32/wgpu"),
                Verdict::NoChange,
                &label,
            )
        })
        .collect();
    rows.push(row("late/regression/b1/f32/wgpu", Verdict::Regression, &label));
    vec![section_of(rows, adapter)]
}

/// Asserts that `summary` never sends its reader to the job summary, which it is.
fn assert_never_refers_to_itself(summary: &str) {
    for self_reference in ["see the job summary", "see the [job summary]", "its job summary"] {
        assert!(
            !summary.contains(self_reference),
            "the job summary says `{self_reference}`"
        );
    }
}

#[test]
fn the_job_summary_shows_every_row_the_comment_had_to_drop() {
    let adapter = h100();
    let sections = many_rows(2_000, &adapter);
    let comment = comment_body(&sections, &context());
    assert!(comment.contains("more rows not shown"), "the comment is cut");
    let history = "\n### Blessed history of the regressed benchmarks\n\n| commit |\n";
    let summary = job_summary(&sections, &context(), history);
    assert!(
        summary.len() > MAX_COMMENT_BYTES,
        "{} bytes: not cut to the comment's cap",
        summary.len()
    );
    assert!(summary.len() <= MAX_STEP_SUMMARY_BYTES);
    assert_eq!(
        summary.lines().filter(|line| line.starts_with("| model")).count(),
        2_000,
        "every row"
    );
    assert!(!summary.contains("not shown"));
    assert!(!summary.contains(COMMENT_MARKER), "the marker is the comment's");
    assert!(summary.starts_with("## convbench\n"));
    assert!(summary.ends_with(history), "the appendix follows the tables");
    assert!(
        summary
            .contains("Measured in [the benchmark run](https://github.com/octo/bench/actions/runs/123456)."),
        "{}",
        &summary[..600]
    );
    assert_never_refers_to_itself(&summary);
}

#[test]
fn an_oversized_job_summary_keeps_every_row_that_fits_in_one_mebibyte() {
    let adapter = h100();
    // 700 benchmarks of 7 phases: about 1.7 MB of rows.
    let sections = many_rows(4_900, &adapter);
    let history = "\n### Blessed history\n\n| commit |\n| --- |\n| abc |\n";
    let summary = job_summary(&sections, &context(), history);
    assert!(summary.len() <= MAX_STEP_SUMMARY_BYTES, "{} bytes", summary.len());
    assert!(
        summary.len() > MAX_STEP_SUMMARY_BYTES - 1_000,
        "{} bytes: rows that fit were dropped",
        summary.len()
    );
    assert!(summary.ends_with(history), "the appendix is kept");
    assert!(
        summary.contains("late/regression"),
        "regressions are dropped last"
    );
    let note = summary
        .lines()
        .find(|line| line.starts_with("… "))
        .expect("a note on the rows not shown");
    assert!(
        note.contains("more rows not shown, over GitHub's limit of 1 MiB for a job summary"),
        "{note}"
    );
    assert!(
        note.contains("`cargo convbench report` on the records uploaded by [the benchmark run]("),
        "{note}"
    );
    let hidden: usize = note
        .trim_start_matches("… ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count");
    let shown = summary.lines().filter(|line| line.starts_with("| model")).count();
    assert_eq!(shown + hidden, 4_900, "every row is either shown or counted");
    assert!(shown > 4_000, "{shown} rows shown");
    assert_never_refers_to_itself(&summary);
    // Without a run link, the note still says how to see every row.
    let plain = job_summary(&sections, &CommentContext::default(), "");
    assert!(plain.contains("`cargo convbench report` on the records lists every row."));
    assert_never_refers_to_itself(&plain);
}

#[test]
fn an_appendix_over_a_quarter_of_the_limit_is_cut_at_a_line() {
    let adapter = h100();
    let sections = many_rows(10, &adapter);
    let appendix: String = (0..100_000).map(|i| format!("| point {i} |\n")).collect();
    let summary = job_summary(&sections, &context(), &appendix);
    assert!(summary.len() <= MAX_STEP_SUMMARY_BYTES);
    assert_eq!(
        summary.lines().filter(|line| line.starts_with("| model")).count(),
        10
    );
    assert!(
        summary.ends_with("\n… the rest was cut to keep the job summary within GitHub's 1 MiB.\n"),
        "{}",
        &summary[summary.len() - 200..]
    );
    let kept = summary
        .lines()
        .filter(|line| line.starts_with("| point "))
        .count();
    assert!(kept > 10_000 && kept < 100_000, "{kept} lines of the appendix");
    assert!(
        summary
            .lines()
            .filter(|line| line.starts_with("| point "))
            .all(|line| line.ends_with(" |")),
        "cut at the end of a line"
    );
}

// ---------------------------------------------------------------------------------------------
// The trusted base and the legs of the run
// ---------------------------------------------------------------------------------------------

const HEAD: &str = "abcdef0123456789abcdef0123456789abcdef01";
const BASE: &str = "0123456789abcdef0123456789abcdef01234567";

#[test]
fn the_merge_base_comes_from_githubs_compare_of_the_default_branch_with_the_head() {
    let server = block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path(format!("/repos/{OWNER}/{REPO}/compare/main...{HEAD}")))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"merge_base_commit": {"sha": BASE}})),
            )
            .expect(1)
            .mount(&server)
            .await;
        server
    });
    assert_eq!(
        merge_base(&api(&server), OWNER, REPO, "main", HEAD).expect("the merge base"),
        BASE
    );
}

#[test]
fn a_merge_base_that_is_not_a_commit_or_a_missing_head_is_an_environment_error_naming_it() {
    let server = block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path(format!("/repos/{OWNER}/{REPO}/compare/main...{HEAD}")))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"merge_base_commit": {"sha": "HEAD~9"}})),
            )
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/repos/{OWNER}/{REPO}/compare/gone...{HEAD}")))
            .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
            .mount(&server)
            .await;
        server
    });
    let forged = merge_base(&api(&server), OWNER, REPO, "main", HEAD).expect_err("not a commit");
    assert_eq!(forged.kind(), ErrorKind::Environment);
    assert!(forged.to_string().contains("HEAD~9"), "{forged}");
    let missing = merge_base(&api(&server), OWNER, REPO, "gone", HEAD).expect_err("404");
    assert!(missing.to_string().contains("contents: read"), "{missing}");
    assert!(!missing.to_string().contains(TOKEN), "{missing}");
    // What the event supplies is checked before any request.
    for (branch, head) in [("main", "main"), ("--upload-pack=x", HEAD), ("a b", HEAD)] {
        let refused = merge_base(&api(&server), OWNER, REPO, branch, head).expect_err("refused");
        assert_eq!(refused.kind(), ErrorKind::InvalidInput, "{refused}");
    }
}

#[test]
fn the_jobs_of_a_run_are_listed_with_their_conclusions_null_included() {
    let server = block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path(format!("/repos/{OWNER}/{REPO}/actions/runs/42/jobs")))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"total_count": 2, "jobs": [
                    {"name": "benchmarks (a)", "status": "completed", "conclusion": "cancelled"},
                    {"name": "benchmarks (b)", "status": "in_progress", "conclusion": null}
                ]})),
            )
            .mount(&server)
            .await;
        server
    });
    let jobs = run_jobs(&api(&server), OWNER, REPO, 42).expect("the jobs");
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].conclusion.as_deref(), Some("cancelled"));
    assert_eq!(jobs[1].conclusion, None);
    let gone = run_jobs(&api(&server), OWNER, REPO, 43).expect_err("no such run");
    assert!(gone.to_string().contains("actions: read"), "{gone}");
}
