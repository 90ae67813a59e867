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
//!
//! # False alarms over the search
//!
//! One false regression on a commit before the real one makes the answer wrong, and a search
//! over `n` commits runs up to [`most_steps`]`(n)` A/Bs (`bad`, then `ceil(log2 n)` halvings),
//! most of them on commits as fast as `good`. So every step tests at `alpha / most_steps(n)`
//! (Bonferroni over the steps, as [`super::ab`] does over its looks): by the union bound the
//! chance that any step of the search calls identical code slower stays below `alpha` for the
//! whole iterations' verdicts (and below `alpha` for the phases', their own family). The price
//! is a few more pairs on a borderline step; a slowdown well past the threshold settles at the
//! first looks either way.

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
    /// Whether the A/B could not tell this commit from `good`: no regression, and the whole
    /// iteration of some benchmark inconclusive (too few pairs for the noise). Not "as fast".
    pub fn undecided(&self) -> bool {
        !self.slower()
            && self.outcome.rows.iter().any(|row| {
                row.phase == crate::results::Phase::Total
                    && row.layer.is_none()
                    && row.verdict == Verdict::Inconclusive
            })
    }

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
    /// The first slower commit, an index into `steps`; `None` when `bad` is not slower or
    /// [`BisectOutcome::bad_undecided`].
    pub first_slow: Option<usize>,
}

impl BisectOutcome {
    /// The endpoint check (`bad` against `good`, the first step) was inconclusive: the search
    /// did not run, and nothing is known of `bad` (more pairs may decide it).
    pub fn bad_undecided(&self) -> bool {
        self.first_slow.is_none() && self.steps.first().is_some_and(Step::undecided)
    }
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
    let step_config = CompareConfig {
        alpha: config.alpha / most_steps(commits.len()) as f64,
        ..config.clone()
    };
    let config = &step_config;
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
    let first = search(commits.len(), |index| measure(index, &mut steps))?;
    // Each commit is measured once, so the first slower one's step is the one naming it.
    let first_slow = first.and_then(|index| {
        let commit = &commits[index].0;
        steps.iter().position(|step| &step.commit == commit)
    });
    Ok(BisectOutcome {
        commits: commits.len(),
        steps,
        first_slow,
    })
}

/// The search over `commits` commits (oldest first, `commits >= 1`): `slower(index)` measures
/// one; `None` when the last is not slower, else the index of the first slower one.
fn search(commits: usize, mut slower: impl FnMut(usize) -> Result<bool>) -> Result<Option<usize>> {
    let last = commits - 1;
    if !slower(last)? {
        return Ok(None);
    }
    // Invariant: every commit up to `fast` (or `good` when `None`) is as fast as `good`;
    // `slow` is slower.
    let (mut fast, mut slow): (Option<usize>, usize) = (None, last);
    loop {
        let low = fast.map_or(0, |f| f + 1);
        if low == slow {
            return Ok(Some(slow));
        }
        let middle = low + (slow - low) / 2;
        if slower(middle)? {
            slow = middle;
        } else {
            fast = Some(middle);
        }
    }
}

/// The most A/Bs a search over `commits` commits runs: `bad` itself, then `ceil(log2 commits)`
/// halvings of the commits before it.
pub fn most_steps(commits: usize) -> usize {
    1 + commits.max(1).next_power_of_two().trailing_zeros() as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    /// `most_steps` bounds every search, and is reached: each step's alpha is the search's
    /// divided by it, so a bound too low would let the search's false alarms exceed `alpha`.
    #[test]
    fn most_steps_bounds_the_search_and_is_reached() {
        assert_eq!(most_steps(1), 1);
        assert_eq!(most_steps(2), 2);
        assert_eq!(most_steps(8), 4);
        assert_eq!(most_steps(9), 5);
        for commits in 1..=300 {
            let mut most = 0;
            // Every position of the first slower commit, and none (`commits`).
            for first in 0..=commits {
                let mut steps = 0;
                let found = search(commits, |index| {
                    steps += 1;
                    Ok(index >= first)
                })
                .expect("no error");
                assert_eq!(found, (first < commits).then_some(first), "{commits} commits");
                most = most.max(steps);
            }
            assert!(most <= most_steps(commits), "{commits} commits: {most} steps");
            assert_eq!(most, most_steps(commits), "{commits} commits: the bound is tight");
        }
    }

    fn step(verdicts: &[(crate::results::Phase, Verdict)]) -> Step {
        let rows = verdicts
            .iter()
            .map(|(phase, verdict)| crate::compare::ab::AbRow {
                phase: *phase,
                verdict: *verdict,
                ..crate::compare::ab::AbRow::not_compared("lenet/eval/b1/f32/wgpu", 0.05, String::new())
            })
            .collect();
        Step {
            commit: "c".repeat(40),
            summary: "slower".to_string(),
            outcome: AbOutcome {
                description: String::new(),
                rows,
                adapter_label: String::new(),
                measured: Vec::new(),
                looks: 1,
                interrupted: false,
                timing: None,
            },
        }
    }

    /// An inconclusive endpoint is undecided, not "as fast": bisect must not say there is
    /// nothing to bisect when it simply could not tell.
    #[test]
    fn an_inconclusive_bad_endpoint_is_undecided_not_as_fast() {
        use crate::results::Phase;
        let outcome = |verdicts: &[(Phase, Verdict)]| BisectOutcome {
            commits: 3,
            steps: vec![step(verdicts)],
            first_slow: None,
        };
        assert!(outcome(&[(Phase::Total, Verdict::Inconclusive)]).bad_undecided());
        assert!(!outcome(&[(Phase::Total, Verdict::NoChange)]).bad_undecided());
        assert!(
            !outcome(&[
                (Phase::Total, Verdict::NoChange),
                (Phase::Forward, Verdict::Inconclusive)
            ])
            .bad_undecided(),
            "a phase alone does not make the iteration undecided"
        );
        assert!(!step(&[(Phase::Total, Verdict::Regression)]).undecided());
    }

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
            hidden_table: None,
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
