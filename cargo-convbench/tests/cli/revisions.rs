//! Repositories and revisions the gate's commands cannot use: outside git, no commit yet, a bare
//! repository, a range or an empty text where one revision is due. Each is refused before
//! anything is measured, and the hint offers only the flags the command has.

use crate::support::{Package, assert_code, convbench, stderr_of, tiny};

/// A folder with no Cargo.toml, `git init`ed (no commit) when `init`.
fn folder(init: bool) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("convbench-cli-")
        .tempdir()
        .expect("temp dir");
    if init {
        let status = std::process::Command::new("git")
            .current_dir(dir.path())
            .args(["init", "--quiet"])
            .status()
            .expect("git init");
        assert!(status.success());
    }
    dir
}

#[test]
fn ab_base_outside_a_cargo_workspace_is_resolved_not_ignored() {
    let bare = folder(false);
    let status = std::process::Command::new("git")
        .current_dir(bare.path())
        .args(["init", "--quiet", "--bare"])
        .status()
        .expect("git init --bare");
    assert!(status.success());
    for (dir, expected) in [
        (folder(false), "not inside a git repository"),
        (folder(true), "no commits yet"),
        (bare, "bare"),
    ] {
        let output = convbench()
            .current_dir(dir.path())
            .args(["ab", "--base", "nosuch-rev", "--model", "lenet", "--batch", "1"])
            .output()
            .expect("ab");
        assert_code(&output, 3);
        let stderr = stderr_of(&output);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(
            !stderr.contains("--baseline-file"),
            "ab has no --baseline-file: {stderr}"
        );
    }
}

#[test]
fn ab_base_head_in_a_repository_without_commits_says_so_not_what_to_fetch() {
    let dir = folder(true);
    let output = convbench()
        .current_dir(dir.path())
        .args(["ab", "--base", "HEAD", "--model", "lenet", "--batch", "1"])
        .output()
        .expect("ab");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("no commits yet"), "{stderr}");
    assert!(!stderr.contains("git fetch"), "{stderr}");
    assert!(!stderr.contains("--baseline-file"), "{stderr}");
}

#[test]
fn an_empty_or_range_revision_is_a_usage_error() {
    let package = Package::git();
    package.git_ok(&["branch", "line"]);
    for rev in ["", "main..line", "main...line"] {
        for args in [
            vec!["ab", "--base", rev, "--model", "lenet", "--batch", "1"],
            vec!["compare", "--baseline-rev", rev, "--backend", "cpu"],
        ] {
            let output = package
                .convbench()
                .args(&args)
                .args(if args[0] == "compare" {
                    tiny(&[])
                } else {
                    Vec::new()
                })
                .output()
                .expect("runs");
            assert_code(&output, 2);
            let stderr = stderr_of(&output);
            assert!(stderr.contains("is not a revision"), "{args:?}: {stderr}");
            assert!(!stderr.contains("git fetch"), "{args:?}: {stderr}");
        }
    }
}

/// `compare` outside git fails before the sweep (no `--out` written), offering its
/// `--baseline-file`; the commands without that flag never suggest it.
#[test]
fn outside_git_each_command_fails_first_and_suggests_only_its_own_flags() {
    let package = Package::plain();
    let output = package
        .convbench()
        .args(["compare", "--backend", "cpu", "--out", "out.json"])
        .args(tiny(&[]))
        .output()
        .expect("compare");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("not inside a git repository"), "{stderr}");
    assert!(stderr.contains("--baseline-file"), "{stderr}");
    assert!(!package.path("out.json").exists(), "nothing was measured");
    for args in [
        &["history"][..],
        &[
            "bisect", "--good", "main", "--bad", "HEAD", "--model", "lenet", "--batch", "1",
        ],
        &["baseline", "update", "--from", "rec.json"],
    ] {
        let output = package.convbench().args(args).output().expect("runs");
        let stderr = stderr_of(&output);
        assert!(
            stderr.contains("not inside a git repository"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("--baseline-file"), "{args:?}: {stderr}");
        assert_code(&output, 3);
    }
}

/// `history` in a shallow clone would start at the shallow root and credit it with every
/// blessing before: it fails as `compare` does, saying to fetch the whole history.
#[test]
fn history_in_a_shallow_clone_says_to_fetch_the_whole_history() {
    let (package, _) = Package::blessed();
    let clone = folder(false);
    let source = format!("file://{}", package.root().display());
    let status = std::process::Command::new("git")
        .args(["clone", "--quiet", "--depth", "1", &source])
        .arg(clone.path().join("c"))
        .status()
        .expect("git clone");
    assert!(status.success());
    let root = clone.path().join("c");
    let output = convbench()
        .current_dir(&root)
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .arg("history")
        .output()
        .expect("history");
    assert_code(&output, 3);
    assert!(
        stderr_of(&output).contains("fetch-depth: 0"),
        "{}",
        stderr_of(&output)
    );
}

/// An empty history names the set it read and the sets there are.
#[test]
fn history_of_an_empty_set_names_the_sets_that_exist() {
    let package = Package::git();
    package.cpu_record("rec.json");
    let output = package
        .convbench()
        .args([
            "baseline", "update", "--from", "rec.json", "--set", "nightly", "--commit",
        ])
        .output()
        .expect("bless");
    assert_code(&output, 0);
    let output = package.convbench().arg("history").output().expect("history");
    assert_code(&output, 0);
    let stdout = crate::support::stdout_of(&output);
    assert!(stdout.contains("set `default`"), "{stdout}");
    assert!(stdout.contains("`nightly`"), "{stdout}");
}

/// `history --benchmark nope` (or `--slug nope`) said "no blessed values ... bless one", exit 0,
/// in a set full of blessed benchmarks: a misspelt name is named, with what the set holds.
#[test]
fn history_of_a_name_nothing_is_blessed_under_lists_the_names_there() {
    let package = Package::git();
    package.cpu_record("rec.json");
    package.bless("rec.json");
    let output = package
        .convbench()
        .args(["history", "--benchmark", "lenet/train/b1/f32/wgpu"])
        .output()
        .expect("history");
    assert_code(&output, 2);
    let stderr = crate::support::stderr_of(&output);
    assert!(
        stderr.contains("--benchmark lenet/train/b1/f32/wgpu: nothing of that name is blessed in set `default`; benchmarks there: lenet/train/b1/f32/cpu"),
        "{stderr}"
    );
    let output = package
        .convbench()
        .args(["history", "--slug", "nope"])
        .output()
        .expect("history");
    assert_code(&output, 2);
    let stderr = crate::support::stderr_of(&output);
    assert!(
        stderr.contains(
            "--slug nope: nothing of that name is blessed in set `default`; adapter folders there: cpu-"
        ),
        "{stderr}"
    );
    let output = package
        .convbench()
        .args(["history", "--set", "nope"])
        .output()
        .expect("history");
    assert_code(&output, 2);
    let stderr = crate::support::stderr_of(&output);
    assert!(
        stderr.contains("--set nope: the baseline folder holds no set of that name; its sets: default"),
        "{stderr}"
    );
    // The right name reads its history.
    let output = package
        .convbench()
        .args(["history", "--benchmark", "lenet/train/b1/f32/cpu"])
        .output()
        .expect("history");
    assert_code(&output, 0);
}
