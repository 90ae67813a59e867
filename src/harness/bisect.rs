//! `bisect`: the first commit between a good and a bad revision that slowed a benchmark beyond
//! its threshold, found with the machinery of [`super::ab`] (as Chromium's Pinpoint does with
//! its A/B jobs).
//!
//! Every step is an interleaved A/B in this process of `good` (side A) against one commit (side
//! B), both read from git: convbench's shaders in convbench's own repository, the workspace's
//! kernels and networks everywhere; nothing is rebuilt. The endpoints are measured first:
//! without a regression from `good` to `bad` there is nothing to look for. Then a binary search
//! over the first-parent commits between them, `good` always the reference, keeps the last
//! commit known to be as fast as `good` and the first known to be slower; when they are
//! neighbours, the slower one is the answer. A step whose verdict is not a regression counts as
//! fast (the search looks for a change the A/B can see), and each step says what it measured.

use super::Interrupt;
use super::ab::{AbEvent, AbOutcome, AbRequest};
use crate::Result;
use crate::baseline::GitBaselineStore;
use crate::compare::{CompareConfig, Verdict};
use crate::config::Workspace;

/// One A/B of the search.
#[derive(Debug, Clone)]
pub struct Step {
    /// The commit measured against `good` (full id).
    pub commit: String,
    /// Its summary line.
    pub summary: String,
    /// What the A/B decided.
    pub outcome: AbOutcome,
}

impl Step {
    /// Whether this commit is slower than `good` beyond a threshold.
    pub fn slower(&self) -> bool {
        self.outcome
            .rows
            .iter()
            .any(|row| row.verdict == Verdict::Regression)
    }
}

/// What the search found.
#[derive(Debug, Clone)]
pub struct BisectOutcome {
    /// The commits between good (exclusive) and bad (inclusive), oldest first.
    pub commits: usize,
    /// Every A/B, in the order they ran (the first is `bad` itself).
    pub steps: Vec<Step>,
    /// The first slower commit, an index into `steps`; `None` when `bad` is not slower.
    pub first_slow: Option<usize>,
}

/// Finds the first commit after `good` up to `bad` that is slower than `good`. `request` says
/// what to measure (its `base` and `head` are set here).
pub fn run(
    request: &AbRequest,
    good: &str,
    bad: &str,
    workspace: &Workspace,
    config: &CompareConfig,
    interrupt: Interrupt,
    on_event: &mut dyn FnMut(AbEvent<'_>),
) -> Result<BisectOutcome> {
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
    let good_rev = store.resolve_base_from(Some(good), None)?;
    let bad_rev = store.resolve_base_from(Some(bad), None)?;
    let commits = store.commits_between(&good_rev, &bad_rev)?;
    if commits.is_empty() {
        return Err(crate::baseline::BaselineError::NoCommitsBetween {
            good: good_rev.description.clone(),
            bad: bad_rev.description.clone(),
        }
        .into());
    }
    let mut steps: Vec<Step> = Vec::new();
    let mut measure = |index: usize, steps: &mut Vec<Step>| -> Result<bool> {
        let (commit, summary) = &commits[index];
        on_event(AbEvent::Notice(format!(
            "bisect: {} ({} of {} commits after good) against {}",
            &commit[..commit.len().min(10)],
            index + 1,
            commits.len(),
            good_rev.short_sha()
        )));
        let step_request = AbRequest {
            base: Some(good_rev.oid.clone()),
            github_base_ref: None,
            head: Some(commit.clone()),
            shaders: None,
            ..request.clone()
        };
        let (outcome, stopped) =
            super::ab::run(&step_request, workspace, config, interrupt.clone(), on_event)?;
        if let Some(error) = stopped {
            return Err(error);
        }
        let step = Step {
            commit: commit.clone(),
            summary: summary.clone(),
            outcome,
        };
        let slower = step.slower();
        steps.push(step);
        Ok(slower)
    };
    let last = commits.len() - 1;
    if !measure(last, &mut steps)? {
        return Ok(BisectOutcome {
            commits: commits.len(),
            steps,
            first_slow: None,
        });
    }
    // Invariant: every commit up to `fast` (or `good` when `None`) is as fast as `good`;
    // `slow` is slower.
    let (mut fast, mut slow): (Option<usize>, usize) = (None, last);
    let mut slow_step = 0;
    loop {
        let low = fast.map_or(0, |f| f + 1);
        if low == slow {
            break;
        }
        let middle = low + (slow - low) / 2;
        if measure(middle, &mut steps)? {
            slow = middle;
            slow_step = steps.len() - 1;
        } else {
            fast = Some(middle);
        }
    }
    Ok(BisectOutcome {
        commits: commits.len(),
        steps,
        first_slow: Some(slow_step),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    /// `--good` and `--bad` at one commit: nothing to bisect, and nothing is measured.
    #[test]
    fn one_commit_for_good_and_bad_is_input_naming_both() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let repo = git2::Repository::init(dir.path()).expect("git init");
        let signature = git2::Signature::now("Test", "test@example.com").expect("signature");
        let tree = repo
            .find_tree(repo.index().expect("index").write_tree().expect("empty tree"))
            .expect("tree");
        repo.commit(Some("HEAD"), &signature, &signature, "init", &tree, &[])
            .expect("commit");
        let workspace = Workspace {
            root: dir.path().to_path_buf(),
            target_dir: dir.path().join("target"),
            config: crate::config::Config::default(),
            config_path: None,
            kernels: Vec::new(),
        };
        let error = run(
            &AbRequest::default(),
            "HEAD",
            "HEAD",
            &workspace,
            &CompareConfig::default(),
            Interrupt::default(),
            &mut |_| unreachable!("nothing is measured"),
        )
        .expect_err("no commit between");
        assert!(
            matches!(
                &error,
                Error::Baseline(e) if matches!(**e, crate::baseline::BaselineError::NoCommitsBetween { .. })
            ),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(error.to_string().starts_with("no commit lies after"), "{error}");
    }
}
