use super::*;
use crate::results::{BenchmarkResult, Phase, RecordError, Summary};
use crate::{Error, ErrorKind};
use git2::{Oid, Repository, RepositoryInitOptions, Signature, Time};
use std::path::Path;

const SET: &str = "default";

use crate::results::fixtures::adapter;

/// The baseline error `error` is, if it is one.
fn baseline_error(error: &Error) -> Option<&BaselineError> {
    match error {
        Error::Baseline(error) => Some(error),
        _ => None,
    }
}

fn slug() -> String {
    adapter("NVIDIA H100").slug()
}

/// A benchmark whose `total` samples all equal `median_ns`.
fn benchmark(id: &str, median_ns: u64) -> BenchmarkResult {
    let total = crate::results::fixtures::phase(Phase::Total, vec![median_ns; 5]);
    crate::results::fixtures::benchmark(id, vec![total])
}

fn record(benchmarks: Vec<BenchmarkResult>) -> RunRecord {
    RunRecord {
        created_unix_s: 1_700_000_000,
        ..crate::results::fixtures::record(benchmarks)
    }
}

fn total_median(record: &RunRecord, id: &str) -> f64 {
    let benchmark = record
        .benchmarks
        .iter()
        .find(|b| b.id == id)
        .expect("benchmark present");
    benchmark.phase(Phase::Total).expect("total").summary.median_ns
}

/// A repository whose first branch is `main`, with a committer identity configured.
fn init_repo() -> (tempfile::TempDir, Repository) {
    init_repo_on("main")
}

fn init_repo_on(branch: &str) -> (tempfile::TempDir, Repository) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut options = RepositoryInitOptions::new();
    options.initial_head(branch);
    let repo = Repository::init_opts(dir.path(), &options).expect("git init");
    let mut config = repo.config().expect("config");
    config.set_str("user.name", "Test").expect("user.name");
    config
        .set_str("user.email", "test@example.com")
        .expect("user.email");
    (dir, repo)
}

/// Commits `files` (path, contents; `None` deletes) over the first parent's tree, updating
/// `update_ref`, at `time` seconds. The working tree is not touched.
fn commit_files(
    repo: &Repository,
    update_ref: &str,
    parents: &[Oid],
    files: &[(&str, Option<&str>)],
    message: &str,
    time: i64,
) -> Oid {
    let mut index = git2::Index::new().expect("index");
    if let Some(first) = parents.first() {
        let tree = repo.find_commit(*first).expect("parent").tree().expect("tree");
        index.read_tree(&tree).expect("read tree");
    }
    for (path, contents) in files {
        match contents {
            Some(contents) => {
                let entry = git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100644,
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id: repo.blob(contents.as_bytes()).expect("blob"),
                    flags: 0,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                };
                index.add(&entry).expect("add");
            }
            None => index.remove_path(Path::new(path)).expect("remove"),
        }
    }
    let tree = repo
        .find_tree(index.write_tree_to(repo).expect("write tree"))
        .expect("tree");
    let signature = Signature::new("Test", "test@example.com", &Time::new(time, 0)).expect("signature");
    let parents: Vec<git2::Commit<'_>> = parents
        .iter()
        .map(|oid| repo.find_commit(*oid).expect("parent"))
        .collect();
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    repo.commit(Some(update_ref), &signature, &signature, message, &tree, &parents)
        .expect("commit")
}

/// Points `HEAD` at `branch` and makes the working tree and index match it.
fn checkout(repo: &Repository, branch: &str) {
    repo.set_head(&format!("refs/heads/{branch}")).expect("set HEAD");
    repo.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
        .expect("checkout");
}

fn baseline_path(slug: &str) -> String {
    format!("baselines/{slug}/{SET}.json")
}

fn open(dir: &Path) -> GitBaselineStore {
    GitBaselineStore::open(dir, Path::new("baselines")).expect("open store")
}

/// main: A - B - C, feature: B - D (checked out). Returns the ids of A, B, C, D.
fn forked_history(repo: &Repository) -> [Oid; 4] {
    let a = commit_files(repo, "refs/heads/main", &[], &[("README", Some("a"))], "A", 1_000);
    let b = commit_files(
        repo,
        "refs/heads/main",
        &[a],
        &[("README", Some("b"))],
        "B",
        2_000,
    );
    let c = commit_files(
        repo,
        "refs/heads/main",
        &[b],
        &[("README", Some("c"))],
        "C",
        3_000,
    );
    let d = commit_files(
        repo,
        "refs/heads/feature",
        &[b],
        &[("feature", Some("d"))],
        "D",
        4_000,
    );
    checkout(repo, "feature");
    [a, b, c, d]
}

#[test]
fn an_explicit_revision_resolves_to_its_commit() {
    let (dir, repo) = init_repo();
    let [a, _, c, _] = forked_history(&repo);
    let store = open(dir.path());

    let base = store
        .resolve_base_from(Some("main~2"), Some("ignored"))
        .expect("main~2");
    assert_eq!(base.oid, a.to_string());
    assert!(base.description.contains("main~2"), "{}", base.description);
    assert_eq!(base.short_sha(), &a.to_string()[..7]);

    let base = store
        .resolve_base_from(Some(&c.to_string()), None)
        .expect("full sha");
    assert_eq!(base.oid, c.to_string());
}

#[test]
fn a_revision_naming_a_branch_and_another_commits_id_is_refused() {
    let (dir, repo) = init_repo();
    let [a, _, c, _] = forked_history(&repo);
    // A branch named like the start of A's id, pointing at C.
    let prefix = &a.to_string()[..8];
    repo.reference(&format!("refs/heads/{prefix}"), c, false, "test")
        .expect("branch");
    let store = open(dir.path());
    let error = store
        .resolve_base_from(Some(prefix), None)
        .expect_err("ambiguous");
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    assert!(
        matches!(baseline_error(&error), Some(BaselineError::AmbiguousRevision { reference, .. })
            if *reference == format!("refs/heads/{prefix}")),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains(&format!("pass `refs/heads/{prefix}` or a longer commit id")),
        "{error}"
    );
    // Either way of saying it without the ambiguity works.
    let base = store
        .resolve_base_from(Some(&format!("refs/heads/{prefix}")), None)
        .expect("the branch");
    assert_eq!(base.oid, c.to_string());
    let base = store
        .resolve_base_from(Some(&a.to_string()), None)
        .expect("the whole id");
    assert_eq!(base.oid, a.to_string());
}

#[test]
fn the_base_of_a_feature_branch_is_its_merge_base_with_main() {
    let (dir, repo) = init_repo();
    let [_, b, _, _] = forked_history(&repo);
    let store = open(dir.path());

    let base = store.resolve_base_from(None, None).expect("default branch");
    assert_eq!(base.oid, b.to_string());
    assert!(
        base.description.contains("merge-base of HEAD and main"),
        "{}",
        base.description
    );

    let base = store
        .resolve_base_from(None, Some("main"))
        .expect("GITHUB_BASE_REF");
    assert_eq!(base.oid, b.to_string());
}

#[test]
fn the_remote_branch_is_preferred_to_a_stale_local_one() {
    let (dir, repo) = init_repo();
    let [a, b, c, _] = forked_history(&repo);
    // A stale local `main` at A; the remote's at C.
    repo.reference("refs/heads/main", a, true, "stale").expect("main");
    repo.reference("refs/remotes/origin/main", c, true, "remote")
        .expect("origin/main");
    let store = open(dir.path());

    let base = store.resolve_base_from(None, Some("main")).expect("origin/main");
    assert_eq!(base.oid, b.to_string());
    assert!(base.description.contains("origin/main"), "{}", base.description);
    assert_eq!(
        store.resolve_base_from(None, None).expect("default").oid,
        b.to_string()
    );
}

#[test]
fn without_a_default_branch_the_base_is_head() {
    let (dir, repo) = init_repo_on("trunk");
    let head = commit_files(
        &repo,
        "refs/heads/trunk",
        &[],
        &[("README", Some("x"))],
        "X",
        1_000,
    );
    let store = open(dir.path());
    let base = store.resolve_base_from(None, None).expect("HEAD");
    assert_eq!(base.oid, head.to_string());
    assert!(base.head_for_want_of_a_branch, "reports warn of it");
    let named = store.resolve_base_from(Some("trunk"), None).expect("trunk");
    assert_eq!(named.oid, head.to_string());
    assert!(!named.head_for_want_of_a_branch);
}

#[test]
fn an_unknown_revision_is_an_environment_error_naming_it() {
    let (dir, repo) = init_repo();
    forked_history(&repo);
    let store = open(dir.path());

    let error = store
        .resolve_base_from(Some("v9.9.9"), None)
        .expect_err("unknown rev");
    assert_eq!(error.kind(), ErrorKind::Environment);
    assert!(
        matches!(
            baseline_error(&error),
            Some(BaselineError::RevisionNotFound {
                revision: MissingRevision::Revision { rev, .. },
                shallow: false,
            }) if rev == "v9.9.9"
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("v9.9.9"), "{message}");
    assert!(message.contains("git fetch"), "{message}");

    let error = store
        .resolve_base_from(None, Some("release"))
        .expect_err("unknown base ref");
    assert_eq!(error.kind(), ErrorKind::Environment);
    assert!(
        matches!(
            baseline_error(&error),
            Some(BaselineError::RevisionNotFound {
                revision: MissingRevision::BaseBranch { branch },
                ..
            }) if branch == "release"
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("origin/release"), "{message}");
    assert!(message.contains("git fetch"), "{message}");
}

#[test]
fn a_shallow_clone_without_the_base_says_to_fetch_the_full_history() {
    let (origin_dir, origin) = init_repo();
    let [a, _, _, _] = forked_history(&origin);
    checkout(&origin, "main"); // so that the clone's origin/HEAD is main
    drop(origin);
    let clone_parent = tempfile::tempdir().expect("temporary directory");
    let clone_dir = clone_parent.path().join("clone");
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "protocol.file.allow=always",
            "clone",
            "--quiet",
            "--depth",
            "1",
        ])
        .args(["--no-single-branch", "--branch", "feature"])
        .arg(format!("file://{}", origin_dir.path().display()))
        .arg(&clone_dir)
        .status()
        .expect("the git CLI runs");
    assert!(status.success(), "git clone --depth 1 failed");

    let store = open(&clone_dir);
    assert!(store.is_shallow());
    let advice = "the clone is shallow and lacks the base commit; use `fetch-depth: 0` in \
                  actions/checkout (or `git fetch --unshallow`)";
    let cases = [
        store.resolve_base_from(None, Some("main")),
        store.resolve_base_from(None, None),
        store.resolve_base_from(Some(&a.to_string()), None),
    ];
    for result in cases {
        let error = result.expect_err("the base is not in the clone");
        assert_eq!(error.kind(), ErrorKind::Environment);
        assert!(
            matches!(
                baseline_error(&error),
                Some(BaselineError::RevisionNotFound { shallow: true, .. })
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains(advice), "{error}");
    }
}

#[test]
fn outside_a_git_repository_open_fails_with_the_next_step() {
    let dir = tempfile::tempdir().expect("temporary directory");
    if Repository::discover(dir.path()).is_ok() {
        return; // the temporary directory lies inside some repository; nothing to test here
    }
    let error = GitBaselineStore::open(dir.path(), Path::new("baselines")).expect_err("no repo");
    assert_eq!(error.kind(), ErrorKind::Environment);
    assert!(
        matches!(
            baseline_error(&error),
            Some(BaselineError::NotARepository { path, .. }) if path == dir.path()
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("is not inside a git repository"), "{message}");
    assert!(message.contains("git init"), "{message}");
    assert!(
        !message.contains("--baseline-file"),
        "only the commands that have the flag offer it: {message}"
    );
    let offered = BaselineError::offer_baseline_file(error).to_string();
    assert!(offered.contains("--baseline-file"), "{offered}");
}

#[test]
fn a_baseline_dir_outside_the_repository_is_refused() {
    let (dir, _repo) = init_repo();
    let error = GitBaselineStore::open(dir.path(), Path::new("../elsewhere")).expect_err("outside");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(
        matches!(
            baseline_error(&error),
            Some(BaselineError::OutsideRepository { dir, .. }) if dir.ends_with("elsewhere")
        ),
        "{error:?}"
    );
}

#[test]
fn the_baseline_dir_is_relative_to_the_workspace_inside_the_repository() {
    let (dir, _repo) = init_repo();
    let workspace = dir.path().join("crates/bench");
    std::fs::create_dir_all(&workspace).expect("mkdir");
    let store = GitBaselineStore::open(&workspace, Path::new("baselines")).expect("open");
    assert_eq!(store.baseline_dir(), Path::new("crates/bench/baselines"));
    assert_eq!(
        store.repo_path("gpu", SET).expect("path"),
        Path::new("crates/bench/baselines/gpu/default.json")
    );
}

#[test]
fn the_base_is_read_from_git_and_an_edited_worktree_is_detected() {
    let (dir, repo) = init_repo();
    let slug = slug();
    let blessed = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
    let path = baseline_path(&slug);
    let a = commit_files(
        &repo,
        "refs/heads/main",
        &[],
        &[(&path, Some(&blessed.to_json()))],
        "bless",
        1_000,
    );
    checkout(&repo, "main");
    let store = open(dir.path());
    let base = store.resolve_base_from(None, None).expect("base");
    assert_eq!(base.oid, a.to_string());
    assert!(!store.worktree_differs(&base, &slug, SET).expect("compare"));

    // The pull request makes its own baseline slower to hide a regression.
    let edited = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 200)]);
    std::fs::write(dir.path().join(&path), edited.to_json()).expect("edit");
    assert!(store.worktree_differs(&base, &slug, SET).expect("compare"));
    let at_base = store.load_at(&base, &slug, SET).expect("load").expect("present");
    assert_eq!(total_median(&at_base, "alexnet/train/b128/f32/wgpu"), 100.0);
    let in_worktree = store.load_worktree(&slug, SET).expect("load").expect("present");
    assert_eq!(total_median(&in_worktree, "alexnet/train/b128/f32/wgpu"), 200.0);

    // Through the trait, at a given base.
    let store = store.with_base(base.clone());
    let dyn_store: &dyn BaselineStore = &store;
    let loaded = dyn_store.load(&slug, SET).expect("load").expect("present");
    assert_eq!(total_median(&loaded, "alexnet/train/b128/f32/wgpu"), 100.0);

    // CRLF line endings from a checkout are not an edit.
    std::fs::write(dir.path().join(&path), blessed.to_json().replace('\n', "\r\n")).expect("crlf");
    assert!(!store.worktree_differs(&base, &slug, SET).expect("compare"));
    // A deleted baseline is.
    std::fs::remove_file(dir.path().join(&path)).expect("remove");
    assert!(store.worktree_differs(&base, &slug, SET).expect("compare"));
    // Another set exists on neither side.
    assert!(!store.worktree_differs(&base, &slug, "other").expect("compare"));
    assert!(store.load_at(&base, &slug, "other").expect("load").is_none());
    // The sets committed at the base are named for a --set that is not there.
    assert_eq!(store.sets_at(&base, &slug).expect("sets"), [SET]);
    assert!(store.sets_at(&base, "no-such-adapter").expect("sets").is_empty());
}

#[test]
fn corrupt_and_future_baselines_at_the_base_are_record_errors() {
    let (dir, repo) = init_repo();
    let slug = slug();
    let mut future = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
    future.format_version = crate::results::FORMAT_VERSION + 1;
    let corrupt_path = format!("baselines/{slug}/corrupt.json");
    let future_path = format!("baselines/{slug}/future.json");
    let files = [
        (corrupt_path.as_str(), Some("{ not json")),
        (future_path.as_str(), Some(&*future.to_json())),
    ];
    let a = commit_files(&repo, "refs/heads/main", &[], &files, "bad", 1_000);
    let store = open(dir.path());
    let base = store.resolve_base_from(Some("main"), None).expect("base");
    let short = &a.to_string()[..7];

    let error = store.load_at(&base, &slug, "corrupt").expect_err("corrupt");
    assert!(
        matches!(error, Error::Record(RecordError::Parse { .. })),
        "{error}"
    );
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(
        error.to_string().contains(&format!("{corrupt_path} at {short}")),
        "{error}"
    );

    let error = store.load_at(&base, &slug, "future").expect_err("future");
    assert!(
        matches!(error, Error::Record(RecordError::FutureVersion { .. })),
        "{error}"
    );
}

#[test]
fn write_merges_into_the_existing_baseline() {
    let (dir, _repo) = init_repo();
    let slug = slug();
    let store = open(dir.path());
    let first = record(vec![
        benchmark("alexnet/train/b128/f32/wgpu", 100),
        benchmark("vgg-a/train/b64/f32/wgpu", 300),
    ]);
    let change = store.write(&first, &slug, SET, false).expect("first write");
    assert_eq!(change.added.len(), 2);
    assert!(change.written);
    assert_eq!(change.path, dir.path().join(baseline_path(&slug)));

    let second = record(vec![
        benchmark("vgg-a/train/b64/f32/wgpu", 310),
        benchmark("googlenet/train/b128/f32/wgpu", 500),
    ]);
    let change = store.write(&second, &slug, SET, false).expect("merge");
    assert_eq!(change.added, ["googlenet/train/b128/f32/wgpu"]);
    assert_eq!(change.updated, ["vgg-a/train/b64/f32/wgpu"]);
    assert_eq!(change.unchanged_count, 1);
    assert!(change.written && change.has_changes());

    let merged = store.load_worktree(&slug, SET).expect("load").expect("present");
    let ids: Vec<&str> = merged.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "alexnet/train/b128/f32/wgpu",
            "vgg-a/train/b64/f32/wgpu",
            "googlenet/train/b128/f32/wgpu"
        ]
    );
    assert_eq!(total_median(&merged, "alexnet/train/b128/f32/wgpu"), 100.0);
    // A benchmark blessed again joins its history as a second run.
    let vgg = merged
        .benchmarks
        .iter()
        .find(|b| b.id == "vgg-a/train/b64/f32/wgpu")
        .expect("vgg-a");
    assert_eq!(vgg.run_sizes(), [1, 1]);
    assert_eq!(vgg.round_medians(Phase::Total).last(), Some(&310.0));

    // Blessing identical results changes nothing and leaves the file alone.
    let before = std::fs::read(&change.path).expect("read");
    let mut again = second.clone();
    again.created_unix_s += 60;
    let change = store.write(&again, &slug, SET, false).expect("identical");
    assert!(!change.has_changes() && !change.written);
    assert_eq!(change.unchanged_count, 3);
    assert_eq!(std::fs::read(&change.path).expect("read"), before);

    // So does blessing again a record whose run is no longer the newest: the first record's
    // vgg-a run (300) is the first of its two runs.
    let change = store.write(&first, &slug, SET, false).expect("blessed before");
    assert!(!change.has_changes() && !change.written, "{change:?}");
    assert_eq!(std::fs::read(&change.path).expect("read"), before);
}

#[test]
fn a_run_already_in_the_history_is_found_wherever_it_is() {
    let run = |median: u64| benchmark("vgg-a/train/b64/f32/wgpu", median);
    let mut history = run(100);
    for median in [110, 120, 130] {
        history.append_run(run(median), 10);
    }
    for median in [100, 110, 120, 130] {
        assert!(history.contains_run(&run(median)), "{median}");
    }
    assert!(!history.contains_run(&run(140)));
    // Samples that straddle two runs are not a run of the history.
    let mut straddling = run(110);
    if let Some(total) = straddling.phases.first_mut() {
        total.samples_ns = [vec![110; 3], vec![120; 2]].concat();
    }
    assert!(!history.contains_run(&straddling));
}

#[test]
fn write_is_atomic_and_leaves_no_temporary_files() {
    let (dir, _repo) = init_repo();
    let slug = slug();
    let store = open(dir.path());
    for median in [100, 110, 120] {
        let run = record(vec![benchmark("alexnet/train/b128/f32/wgpu", median)]);
        store.write(&run, &slug, SET, false).expect("write");
    }
    let folder = dir.path().join("baselines").join(&slug);
    let names: Vec<String> = std::fs::read_dir(&folder)
        .expect("folder")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [format!("{SET}.json")]);
}

/// Two writers at once, each with a store of its own (as two `baseline update` processes):
/// under the lock each merges into what the other wrote, so no blessed benchmark is lost.
#[test]
fn concurrent_writes_and_commits_keep_every_blessed_benchmark() {
    let (dir, _repo) = init_repo();
    let slug = slug();
    let writers: Vec<_> = ["alexnet", "vgg-a"]
        .into_iter()
        .map(|model| {
            let root = dir.path().to_path_buf();
            let slug = slug.clone();
            std::thread::spawn(move || {
                let store = open(&root);
                for batch in 1..=8 {
                    let id = format!("{model}/train/b{batch}/f32/wgpu");
                    let lock = store.lock().expect("lock");
                    let change = store
                        .write(&record(vec![benchmark(&id, 100)]), &slug, SET, false)
                        .expect("write");
                    store.commit(&change, None).expect("commit");
                    drop(lock);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer panicked");
    }
    let store = open(dir.path());
    let blessed = store.load_worktree(&slug, SET).expect("load").expect("present");
    assert_eq!(blessed.benchmarks.len(), 16);
    // Committed too: HEAD holds what the working tree does.
    let head = store.resolve_base_from(Some("HEAD"), None).expect("HEAD");
    let committed = store.load_at(&head, &slug, SET).expect("load").expect("present");
    assert_eq!(committed.benchmarks.len(), 16);
}

#[test]
fn writes_without_an_explicit_lock_keep_every_blessed_benchmark() {
    let (dir, _repo) = init_repo();
    let slug = slug();
    let writers: Vec<_> = ["alexnet", "vgg-a", "googlenet"]
        .into_iter()
        .map(|model| {
            let root = dir.path().to_path_buf();
            let slug = slug.clone();
            std::thread::spawn(move || {
                let store = open(&root);
                for batch in 1..=10 {
                    let id = format!("{model}/train/b{batch}/f32/wgpu");
                    store
                        .write(&record(vec![benchmark(&id, 100)]), &slug, SET, false)
                        .expect("write");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer panicked");
    }
    let blessed = open(dir.path())
        .load_worktree(&slug, SET)
        .expect("load")
        .expect("present");
    assert_eq!(blessed.benchmarks.len(), 30);
}

/// A killed update leaves its temporary file; the next update removes it, so `git add
/// baselines` never commits one.
#[test]
fn a_write_removes_the_temporary_files_of_a_killed_update() {
    let (dir, _repo) = init_repo();
    let slug = slug();
    let folder = dir.path().join("baselines").join(&slug);
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::write(folder.join(format!(".{SET}.json.4242.0.tmp")), "partial").expect("write");
    let store = open(dir.path());
    let run = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
    store.write(&run, &slug, SET, false).expect("write");
    let names: Vec<String> = std::fs::read_dir(&folder)
        .expect("folder")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [format!("{SET}.json")]);
}

#[test]
fn a_dry_run_writes_nothing() {
    let (dir, _repo) = init_repo();
    let slug = slug();
    let store = open(dir.path());
    let run = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
    let change = store.write(&run, &slug, SET, true).expect("dry run");
    assert_eq!(change.added, ["alexnet/train/b128/f32/wgpu"]);
    assert!(!change.written);
    assert!(!dir.path().join("baselines").exists());

    store.write(&run, &slug, SET, false).expect("write");
    let before = std::fs::read(&change.path).expect("read");
    let faster = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 90)]);
    let change = store.write(&faster, &slug, SET, true).expect("dry run");
    assert_eq!(change.updated, ["alexnet/train/b128/f32/wgpu"]);
    assert_eq!(std::fs::read(&change.path).expect("read"), before);
}

#[test]
fn write_refuses_bad_input() {
    let (dir, _repo) = init_repo();
    let slug = slug();
    let store = open(dir.path());
    let invalid = |result: Result<BaselineChange>| {
        let error = result.expect_err("refused");
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        error.to_string()
    };

    invalid(store.write(&record(Vec::new()), &slug, SET, false));

    let mut other = benchmark("alexnet/train/b128/f32/wgpu", 100);
    other.adapter = adapter("Radeon RX 7900");
    let message = invalid(store.write(&record(vec![other]), &slug, SET, false));
    assert!(message.contains("alexnet/train/b128/f32/wgpu"), "{message}");

    let twice = record(vec![
        benchmark("a/train/b1/f32/wgpu", 1),
        benchmark("a/train/b1/f32/wgpu", 2),
    ]);
    invalid(store.write(&twice, &slug, SET, false));

    let run = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
    invalid(store.write(&run, "../escape", SET, false));
    invalid(store.write(&run, &slug, "", false));
    invalid(store.write(&run, &slug, ".hidden", false));
    assert!(!dir.path().join("baselines").exists());

    // A blessed file broken by hand is refused, not merged into.
    let change = store.write(&run, &slug, SET, false).expect("blessed");
    let mut broken = store.load_worktree(&slug, SET).expect("load").expect("present");
    broken.benchmarks.push(broken.benchmarks[0].clone());
    std::fs::write(&change.path, broken.to_json()).expect("break it");
    let before = std::fs::read(&change.path).expect("read");
    let message = invalid(store.write(&run, &slug, SET, false));
    assert!(
        message.contains("cannot be added to; restore it with `git checkout --"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(&change.path).expect("read"),
        before,
        "left as it was"
    );
}

#[test]
fn commit_records_only_the_baseline_file() {
    let (dir, repo) = init_repo();
    commit_files(
        &repo,
        "refs/heads/main",
        &[],
        &[("README", Some("x"))],
        "init",
        1_000,
    );
    checkout(&repo, "main");
    // Something else the user staged must not be swept into the baseline commit.
    std::fs::write(dir.path().join("unrelated.txt"), "staged").expect("write");
    let mut index = repo.index().expect("index");
    index.add_path(Path::new("unrelated.txt")).expect("stage");
    index.write().expect("write index");

    let slug = slug();
    let store = open(dir.path());
    let run = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
    let change = store.write(&run, &slug, SET, false).expect("write");
    let sha = store.commit(&change, None).expect("commit");

    let head = repo.head().expect("HEAD").peel_to_commit().expect("commit");
    assert_eq!(head.id().to_string(), sha);
    let message = head.message().expect("utf-8 message");
    assert!(
        message.starts_with(&format!("Update convbench baseline {slug}/{SET}\n")),
        "{message}"
    );
    assert!(
        message.contains("added: alexnet/train/b128/f32/wgpu"),
        "{message}"
    );
    let tree = head.tree().expect("tree");
    assert!(tree.get_path(Path::new(&baseline_path(&slug))).is_ok());
    assert!(tree.get_path(Path::new("unrelated.txt")).is_err());
    assert_eq!(head.author().name().ok(), Some("Test"));

    // The committed baseline is now the base, and the working tree agrees with it.
    let base = store.resolve_base_from(None, None).expect("base");
    assert_eq!(base.oid, sha);
    assert!(!store.worktree_differs(&base, &slug, SET).expect("compare"));
    let status = repo
        .status_file(Path::new(&baseline_path(&slug)))
        .expect("status");
    assert!(status.is_empty(), "{status:?}");

    // Nothing left to commit is an error, not an empty commit.
    let error = store.commit(&change, Some("again")).expect_err("nothing");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(
        matches!(
            baseline_error(&error),
            Some(BaselineError::Unchanged { path }) if *path == Path::new(&baseline_path(&slug))
        ),
        "{error:?}"
    );
}

/// A blessing written without `--commit`, then repeated with it, commits the file though the
/// second changed nothing; a third, with nothing to commit, says only what it blessed.
#[test]
fn bless_with_commit_commits_a_file_an_earlier_update_left_uncommitted() {
    let (dir, repo) = init_repo();
    commit_files(
        &repo,
        "refs/heads/main",
        &[],
        &[("README", Some("x"))],
        "init",
        1_000,
    );
    checkout(&repo, "main");
    let slug = slug();
    let store = open(dir.path());
    let run = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
    store.bless(&run, SET, false, false, None).expect("bless");
    let path = Path::new(&baseline_path(&slug)).to_path_buf();
    assert!(
        !repo.status_file(&path).expect("status").is_empty(),
        "left uncommitted"
    );

    let lines = store.bless(&run, SET, false, true, None).expect("bless --commit");
    assert!(
        lines.iter().any(|line| line.starts_with("committed ")),
        "{lines:?}"
    );
    // What the earlier blessing (or a hand) changed goes into the commit, and it says so.
    assert!(
        lines
            .iter()
            .any(|line| line.contains("had changes not committed before this update")),
        "{lines:?}"
    );
    assert!(
        repo.status_file(&path).expect("status").is_empty(),
        "now committed"
    );
    // The message lists what the commit holds, though this update itself changed nothing.
    let message = repo
        .head()
        .and_then(|head| head.peel_to_commit())
        .expect("the new commit")
        .message()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.ends_with("\n\nadded: alexnet/train/b128/f32/wgpu\n"),
        "{message}"
    );

    let lines = store.bless(&run, SET, false, true, None).expect("nothing new");
    assert!(
        !lines
            .iter()
            .any(|line| line.starts_with("committed ") || line.starts_with("note: ")),
        "{lines:?}"
    );

    // On a detached HEAD the commit is on no branch: said, so it is not lost.
    let head = repo.head().expect("HEAD").target().expect("a commit");
    repo.set_head_detached(head).expect("detach HEAD");
    let other = record(vec![benchmark("alexnet/train/b64/f32/wgpu", 100)]);
    let lines = store
        .bless(&other, SET, false, true, None)
        .expect("bless on a detached HEAD");
    assert!(
        lines.iter().any(|line| line.contains("HEAD is detached")),
        "{lines:?}"
    );
}

/// One corrupt baseline in the past made `history` (and the dashboard) fail for good.
#[test]
fn history_skips_a_commit_whose_baseline_is_corrupt_and_says_which() {
    let (dir, repo) = init_repo();
    let slug = slug();
    let path = baseline_path(&slug);
    let id = "alexnet/train/b128/f32/wgpu";
    let a = commit_files(
        &repo,
        "refs/heads/main",
        &[],
        &[(&path, Some(&record(vec![benchmark(id, 100)]).to_json()))],
        "bless v1",
        1_000,
    );
    let v2 = record(vec![benchmark(id, 120)]).to_json();
    let b = commit_files(
        &repo,
        "refs/heads/main",
        &[a],
        &[(&path, Some("{\"format_version\": 1, \"benchm"))],
        "broken",
        2_000,
    );
    let c = commit_files(
        &repo,
        "refs/heads/main",
        &[b],
        &[(&path, Some(&v2))],
        "bless v2",
        3_000,
    );
    checkout(&repo, "main");
    let store = open(dir.path());
    let walk = store.history_walk(&slug, SET, None).expect("history");
    let commits: Vec<String> = walk.points.iter().map(|p| p.commit.clone()).collect();
    assert_eq!(commits, [a.to_string(), c.to_string()]);
    assert_eq!(walk.unreadable.len(), 1);
    let short = &b.to_string()[..7];
    assert!(
        walk.unreadable[0].contains(&format!("{path} at {short}")),
        "{:?}",
        walk.unreadable
    );
    assert_eq!(store.history(&slug, SET, None).expect("history").len(), 2);

    // Broken again, then restored to what it held: the restoring commit blesses nothing new,
    // and counting it would count v2's run twice.
    let d = commit_files(
        &repo,
        "refs/heads/main",
        &[c],
        &[(&path, Some("not json"))],
        "broken",
        4_000,
    );
    commit_files(
        &repo,
        "refs/heads/main",
        &[d],
        &[(&path, Some(&v2))],
        "restored",
        5_000,
    );
    checkout(&repo, "main");
    let walk = store.history_walk(&slug, SET, None).expect("history");
    let commits: Vec<String> = walk.points.iter().map(|p| p.commit.clone()).collect();
    assert_eq!(commits, [a.to_string(), c.to_string()]);

    // JSON that parses but cannot be judged (rounds that overflow): skipped and said, like a
    // file that does not parse, not drawn as a level.
    let mut hostile = record(vec![benchmark(id, 90)]);
    hostile.benchmarks[0].rounds = vec![usize::MAX, 6];
    let e = commit_files(
        &repo,
        "refs/heads/main",
        &[repo.head().expect("HEAD").target().expect("a commit")],
        &[(&path, Some(&hostile.to_json()))],
        "hostile",
        6_000,
    );
    checkout(&repo, "main");
    let walk = store.history_walk(&slug, SET, None).expect("history");
    assert!(walk.points.iter().all(|p| p.commit != e.to_string()));
    assert!(
        walk.unreadable.iter().any(|u| u.contains("do not add up")),
        "{:?}",
        walk.unreadable
    );
}

#[test]
fn history_lists_each_blessed_value() {
    let (dir, repo) = init_repo();
    let slug = slug();
    let path = baseline_path(&slug);
    let ids = ["alexnet/train/b128/f32/wgpu", "vgg-a/train/b64/f32/wgpu"];
    let v1 = record(vec![benchmark(ids[0], 100), benchmark(ids[1], 300)]);
    let v2 = record(vec![benchmark(ids[0], 120), benchmark(ids[1], 300)]);
    let a = commit_files(
        &repo,
        "refs/heads/main",
        &[],
        &[(&path, Some(&v1.to_json()))],
        "bless v1",
        1_000,
    );
    let b = commit_files(
        &repo,
        "refs/heads/main",
        &[a],
        &[("README", Some("x"))],
        "unrelated",
        2_000,
    );
    let c = commit_files(
        &repo,
        "refs/heads/main",
        &[b],
        &[(&path, Some(&v2.to_json()))],
        "bless v2",
        3_000,
    );
    checkout(&repo, "main");
    let store = open(dir.path());

    let points = store.history(&slug, SET, Some(ids[0])).expect("history");
    let values: Vec<(String, i64, &str, f64)> = points
        .iter()
        .map(|p| (p.commit.clone(), p.time_unix_s, p.summary.as_str(), p.median_ns))
        .collect();
    assert_eq!(
        values,
        [
            (a.to_string(), 1_000, "bless v1", 100.0),
            (c.to_string(), 3_000, "bless v2", 120.0)
        ]
    );
    assert!(points.iter().all(|p| p.benchmark_id == ids[0]));

    let all = store.history(&slug, SET, None).expect("history");
    assert_eq!(all.len(), 4);
    assert!(store.history(&slug, "other", None).expect("history").is_empty());
}

#[test]
fn contents_differ_ignores_only_line_endings() {
    assert!(!contents_differ(None, None));
    assert!(contents_differ(Some(b"a"), None));
    assert!(!contents_differ(Some(b"a\nb\n"), Some(b"a\r\nb\r\n")));
    assert!(contents_differ(Some(b"a\nb\n"), Some(b"a\nc\n")));
}

#[test]
fn an_adapter_with_a_240_character_name_gets_a_short_distinct_slug() {
    let long = "Vendor Engineering Sample ".repeat(10);
    assert!(long.len() >= 240);
    let first = adapter(&long);
    let mut second = adapter(&long);
    second.name.push('2');
    let (a, b) = (first.slug(), second.slug());
    assert!(a.len() <= crate::results::MAX_SLUG_LEN, "{a}");
    assert_ne!(a, b, "the hash keeps long names apart");
    assert!(a.starts_with("vulkan-vendor-engineering-sample"), "{a}");
    // Short names keep the slug they always had.
    assert_eq!(slug(), "vulkan-nvidia-h100-10de-2330");
    // And the baseline can be written and read back under it.
    let (dir, _repo) = init_repo();
    let store = open(dir.path());
    let mut bench = benchmark("alexnet/train/b128/f32/wgpu", 100);
    bench.adapter = first;
    store
        .write(&record(vec![bench]), &a, SET, false)
        .expect("write under a long name");
    assert!(store.load_worktree(&a, SET).expect("load").is_some());
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut rand::rngs::SmallRng) -> f64 {
    use rand::Rng;
    let (u1, u2): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A run of `id` around `level_ns` as `run --rounds 3 --samples 5` records it: each round's
/// level off by 2% (CV), each sample by 1% around its round.
fn noisy_run(id: &str, level_ns: f64, rng: &mut rand::rngs::SmallRng) -> BenchmarkResult {
    let mut samples_ns = Vec::new();
    for _ in 0..3 {
        let round_ns = level_ns * (0.02 * normal(rng)).exp();
        samples_ns.extend((0..5).map(|_| (round_ns * (0.01 * normal(rng)).exp()) as u64));
    }
    let mut result = benchmark(id, 0);
    result.phases[0].summary = Summary::of(&samples_ns).expect("samples");
    result.phases[0].samples_ns = samples_ns;
    result.rounds = vec![5; 3];
    result
}

/// Blesses and commits 10 runs of one benchmark through the store, run `i`'s level
/// `level(i)` with 4% noise between runs (CV, log-normal): the spread between blessed runs of
/// an idle machine. Returns the store, its folder and the ids of the 10 commits.
fn blessed_history(
    level: impl Fn(usize) -> f64,
    seed: u64,
) -> (tempfile::TempDir, GitBaselineStore, Vec<String>) {
    use rand::SeedableRng;
    let (dir, _repo) = init_repo();
    let store = open(dir.path());
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let commits = (0..10)
        .map(|run| {
            let level_ns = level(run) * (0.04 * normal(&mut rng)).exp();
            let blessed = record(vec![noisy_run("alexnet/train/b128/f32/wgpu", level_ns, &mut rng)]);
            let change = store.write(&blessed, &slug(), SET, false).expect("write");
            store
                .commit(&change, Some(&format!("bless run {}", run + 1)))
                .expect("commit")
        })
        .collect();
    (dir, store, commits)
}

fn total_history(store: &GitBaselineStore) -> BenchmarkHistory {
    let mut points = store.history(&slug(), SET, None).expect("history");
    points.retain(|p| p.phase == Phase::Total);
    let mut series = BenchmarkHistory::group(&slug(), points, &crate::stats::ChangePointConfig::default());
    assert_eq!(series.len(), 1);
    series.remove(0)
}

#[test]
fn history_finds_a_15_percent_step_at_the_commit_that_blessed_it_and_no_other() {
    for seed in [1, 2, 3] {
        let (_dir, store, commits) = blessed_history(|run| if run < 5 { 2e6 } else { 2.3e6 }, seed);
        let history = total_history(&store);
        assert_eq!(history.points.len(), 10);
        let steps: Vec<(&str, f64)> = history
            .steps
            .iter()
            .map(|s| (s.commit.as_str(), s.relative_step))
            .collect();
        assert_eq!(steps.len(), 1, "seed {seed}: {steps:?}");
        assert_eq!(
            steps[0].0, commits[5],
            "seed {seed}: the step is blessed by run 6"
        );
        assert!((steps[0].1 - 0.15).abs() < 0.06, "seed {seed}: {steps:?}");
        assert_eq!(history.steps[0].summary, "bless run 6");
        // The baseline keeps every run so far, so the last point spreads over all ten.
        let last = history.points.last().expect("points").run_spread();
        assert_eq!(last.count, 10);
        assert!(last.min_ns < 2.2e6 && last.max_ns > 2.2e6, "{last:?}");
    }
}

#[test]
fn a_flat_noisy_history_has_no_change_point() {
    for seed in [1, 2, 3] {
        let (_dir, store, _) = blessed_history(|_| 2e6, seed);
        let history = total_history(&store);
        assert_eq!(history.points.len(), 10);
        assert!(history.steps.is_empty(), "seed {seed}: {:?}", history.steps);
    }
}

#[test]
fn history_points_carry_the_median_of_every_kept_run() {
    let (_dir, store, _) = blessed_history(|run| 1e6 * (run + 1) as f64, 9);
    let history = total_history(&store);
    for (index, point) in history.points.iter().enumerate() {
        assert_eq!(point.run_medians_ns.len(), index + 1);
        assert_eq!(point.run_medians_ns.last(), Some(&point.median_ns));
        assert_eq!(point.round_medians_ns.len(), 3, "the rounds of the blessed run");
        for spread in [point.run_spread(), point.round_spread()] {
            assert!(
                spread.min_ns <= spread.q1_ns
                    && spread.q1_ns <= spread.q3_ns
                    && spread.q3_ns <= spread.max_ns
            );
        }
        let rounds = point.round_spread();
        assert!(rounds.min_ns <= point.median_ns && point.median_ns <= rounds.max_ns);
    }
}

#[test]
fn change_points_need_an_alpha_inside_0_1_and_a_finite_step() {
    let config = change_point_config(0.01, 10.0).expect("valid");
    assert_eq!(config.alpha, 0.01);
    assert!((config.min_relative_step - 0.1).abs() < 1e-12);
    for (alpha, step) in [
        (0.0, 5.0),
        (1.0, 5.0),
        (f64::NAN, 5.0),
        (0.05, -1.0),
        (0.05, f64::INFINITY),
    ] {
        let kind = change_point_config(alpha, step).err().map(|e| e.kind());
        assert_eq!(kind, Some(ErrorKind::InvalidInput), "{alpha} {step}");
    }
}

#[test]
fn between_one_and_max_runs_are_blessed_at_once() {
    for runs in [None, Some(1), Some(MAX_RUNS)] {
        assert!(check_runs(runs).is_ok(), "{runs:?}");
    }
    for runs in [0, MAX_RUNS + 1] {
        let error = check_runs(Some(runs)).expect_err("out of range");
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{runs}");
        assert!(
            matches!(
                baseline_error(&error),
                Some(BaselineError::BadRunCount { runs: given }) if *given == runs
            ),
            "{error:?}"
        );
    }
}

/// git2's `Display` adds its class and code to the message the error already quotes: a report
/// must not repeat it as a cause.
#[test]
fn a_git_error_shows_gits_message_once() {
    let source = git2::Error::new(
        git2::ErrorCode::NotFound,
        git2::ErrorClass::Reference,
        "reference 'refs/heads/main' not found",
    );
    let error = Error::from(BaselineError::Git {
        context: "cannot read HEAD".into(),
        source,
    });
    assert_eq!(
        error.to_string(),
        "cannot read HEAD: reference 'refs/heads/main' not found"
    );
    assert!(error.causes().is_empty(), "{:?}", error.causes());
    assert_eq!(error.kind(), ErrorKind::Environment);
}

/// `baseline update` measures three runs of a benchmark never blessed, and when a run stops
/// early, blesses the runs finished and hands back why the rest were not measured.
#[test]
fn an_update_blesses_the_runs_finished_before_one_stopped() {
    let (dir, _repo) = init_repo();
    let store = open(dir.path());
    let request = UpdateRequest {
        from: None,
        set: SET.into(),
        dry_run: false,
        commit: false,
        message: None,
        runs: None,
    };
    let mut measured = 0;
    let mut heard = Vec::new();
    let (lines, stopped) = request
        .run(
            &store,
            &mut || {
                measured += 1;
                let run = record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]);
                let error = (measured == 3).then(|| Error::from(crate::harness::Interrupted::Sweep));
                Ok((run, error))
            },
            &mut |run, wanted| heard.push((run, wanted)),
        )
        .expect("blessed");
    assert_eq!(heard, [(2, NEW_BENCHMARK_RUNS), (3, NEW_BENCHMARK_RUNS)]);
    assert!(matches!(stopped, Some(Error::Interrupted(_))), "{stopped:?}");
    assert!(!lines.is_empty());
    let path = dir.path().join(baseline_path(&slug()));
    assert!(path.is_file(), "the two runs finished are blessed");

    // A later run that cannot even start (a shape list removed meanwhile) keeps the first.
    let (dir, _repo) = init_repo();
    let store = open(dir.path());
    let mut measured = 0;
    let (_, stopped) = request
        .run(
            &store,
            &mut || {
                measured += 1;
                if measured == 2 {
                    return Err(Error::io("shapes.csv", std::io::ErrorKind::NotFound.into()));
                }
                Ok((record(vec![benchmark("alexnet/train/b128/f32/wgpu", 100)]), None))
            },
            &mut |_, _| {},
        )
        .expect("the first run is blessed");
    assert!(matches!(stopped, Some(Error::Io { .. })), "{stopped:?}");
    assert!(
        dir.path().join(baseline_path(&slug())).is_file(),
        "the run finished is blessed"
    );

    let error = UpdateRequest {
        runs: Some(0),
        ..request
    }
    .run(&store, &mut || unreachable!("checked first"), &mut |_, _| {})
    .expect_err("--runs 0");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
}
