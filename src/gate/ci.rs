//! What `ci` measures and judges before the decision: the mode ([`super::choose_mode`]), then
//! an interleaved A/B of the base revision against the working tree, or records run now (or
//! read) against the blessed baselines. An A/B that cannot run here gives way to baseline mode
//! ([`super::Mode::fallback`]). And the decision of `comment` ([`CommentRequest`]) on records
//! saved by a run it trusts only as far as the `workflow_run` event vouches for it.

use super::expect::{OnGap, TrustedRun};
use super::{
    BaselineSource, CompareOverrides, Decision, Mode, ModeRequest, Parts, Provided, WORKFLOW_RUN_PROVENANCE,
    ab_parts, baseline_parts, choose_mode, compare_config, decide, parts_from_files,
};
use crate::backend::BackendKind;
use crate::compare::CompareConfig;
use crate::config::{CiMode, Workspace, parse_duration};
use crate::fs::write_atomically;
use crate::github::ActionsEnv;
use crate::harness::ab::{AbOutcome, AbRequest};
use crate::harness::sweep::SweepRequest;
use crate::results::RunRecord;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What `ci` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct CiRequest {
    /// Saved records to judge (one per runner); empty: the benchmarks run now.
    pub results: Vec<PathBuf>,
    /// The mode asked for; `None`: the configuration's, else A/B wherever it can run.
    pub mode: Option<CiMode>,
    /// A/B mode's request; its base, when `None`, is the baseline's revision, and its budget
    /// comes from `budget`.
    pub ab: AbRequest,
    /// A/B mode's time, e.g. `5m`; `None`: the configuration's `ci.budget`.
    pub budget: Option<String>,
    /// Baseline mode's sweep, when no `results` are given.
    pub sweep: SweepRequest,
    /// Where baseline mode's baselines come from (and the base revision of both modes).
    pub source: BaselineSource,
    /// What the flags override of the configuration's comparison settings.
    pub overrides: CompareOverrides,
    /// Where the measurements go: the A/B outcome, or the sweep's record.
    pub out: Option<PathBuf>,
}

/// What a measurement gives: what was finished, and beside it the error that stopped the rest.
pub type Finished<T> = Result<(T, Option<Error>)>;

/// How `ci` measures, for the caller to draw: an A/B, a sweep (saving what is finished to its
/// path as it goes), and the notice that A/B gives way.
pub struct CiMeasure<'a> {
    /// Runs an A/B judged with the configuration: the outcome, and beside it an error that
    /// stopped it.
    pub ab: &'a mut dyn FnMut(&AbRequest, &CompareConfig) -> Finished<AbOutcome>,
    /// Runs a sweep: the record, and beside it an error that stopped it.
    pub sweep: &'a mut dyn FnMut(&SweepRequest, Option<&Path>) -> Finished<RunRecord>,
    /// Hears the error of an A/B that gives way to baseline mode.
    pub fallback: &'a mut dyn FnMut(&Error),
}

impl CiRequest {
    /// The workspace whose settings judge ([`super::judging_workspace`]): the base revision's
    /// `[compare]` table and accept label, read before anything is measured. Pass it to
    /// [`CiRequest::parts`] and [`decide`].
    pub fn judging_workspace(&self, workspace: &Workspace) -> Result<Workspace> {
        let base = self.ab.base.as_deref().or(self.source.rev.as_deref());
        super::judging_workspace(workspace, &self.source, base)
    }

    /// Chooses the mode, measures and judges; `workspace` is the one that judges
    /// ([`CiRequest::judging_workspace`]).
    pub fn parts(&self, workspace: &Workspace, measure: CiMeasure<'_>) -> Result<Parts> {
        let base = self.ab.base.as_deref().or(self.source.rev.as_deref());
        let mode = choose_mode(
            &ModeRequest {
                judging_files: !self.results.is_empty(),
                asked: self.mode,
                other_backend: self.sweep.device.backends.iter().any(|b| *b != BackendKind::Wgpu),
                base,
            },
            workspace,
        );
        if let Mode::Baseline(why) = &mode {
            return self.baseline(workspace, why, measure.sweep);
        }
        match self.ab(workspace, measure.ab) {
            Ok(parts) => Ok(parts),
            Err(e) => {
                let Some(why) = mode.fallback(&e) else {
                    return Err(e);
                };
                (measure.fallback)(&e);
                self.baseline(workspace, &why, measure.sweep)
            }
        }
    }

    /// A/B mode: the base revision against the working tree, interleaved in this process.
    fn ab(
        &self,
        workspace: &Workspace,
        measure: &mut dyn FnMut(&AbRequest, &CompareConfig) -> Finished<AbOutcome>,
    ) -> Result<Parts> {
        let config = compare_config(workspace, &self.overrides)?;
        let request = AbRequest {
            base: self.ab.base.clone().or_else(|| self.source.rev.clone()),
            budget: Some(match &self.budget {
                Some(text) => parse_duration(text, "--budget")?,
                None => workspace.config.ci.budget()?,
            }),
            ..self.ab.clone()
        };
        let (outcome, stopped) = measure(&request, &config)?;
        if let Some(out) = &self.out {
            write_atomically(out, outcome.to_json(config.alpha).as_bytes())?;
        }
        if let Some(error) = stopped {
            return Err(error);
        }
        let (commit, _) = crate::baseline::git_state(&workspace.root);
        Ok(ab_parts(&outcome, config, commit))
    }

    /// Baseline mode: runs or reads the records and compares them with the baselines.
    fn baseline(
        &self,
        workspace: &Workspace,
        why: &str,
        sweep: &mut dyn FnMut(&SweepRequest, Option<&Path>) -> Finished<RunRecord>,
    ) -> Result<Parts> {
        let config = compare_config(workspace, &self.overrides)?;
        if !self.results.is_empty() {
            return parts_from_files(workspace, &self.source, &config, &self.results, Some(why));
        }
        let (record, error) = sweep(&self.sweep, self.out.as_deref())?;
        if let Some(out) = &self.out {
            write_atomically(out, record.to_json().as_bytes())?;
        }
        if let Some(e) = error {
            return Err(e);
        }
        baseline_parts(workspace, &self.source, &config, vec![record], Some(why))
    }
}

/// What `comment` judges: records saved by the pull request's run, hostile data, with what
/// the `workflow_run` event says of that run.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentRequest {
    /// What the event vouches for: the head commit, the default branch, the run.
    pub run: TrustedRun,
    /// The records, one per runner of the matrix.
    pub results: Vec<PathBuf>,
    /// Where the baselines come from; a base the trusted side computes replaces its revision.
    pub source: BaselineSource,
    /// What the flags override of the configuration's comparison settings.
    pub overrides: CompareOverrides,
    /// The run's web page, linked from the comment.
    pub run_url: Option<String>,
    /// Labels of the pull request.
    pub labels: Vec<String>,
    /// The published history dashboard.
    pub dashboard_url: Option<String>,
    /// What a gap (something expected and not judged) does to the check.
    pub on_gap: OnGap,
}

impl CommentRequest {
    /// The decision on the records: judged against the base the trusted side computes, with
    /// what must be judged from that base and the run's jobs ([`TrustedRun::expected`]).
    pub fn decide(&self, workspace: &Workspace, env: &ActionsEnv) -> Result<Decision> {
        let mut notes = Vec::new();
        let mut source = self.source.clone();
        let trusted_base = self.run.base(env, &mut notes)?;
        if let Some(base) = &trusted_base {
            source.rev = Some(base.clone());
        }
        let judging = super::judging_workspace(workspace, &source, source.rev.as_deref())?;
        let config = compare_config(&judging, &self.overrides)?;
        let parts = parts_from_files(workspace, &source, &config, &self.results, None)?;
        let expected = self.run.expected(
            env,
            workspace,
            trusted_base.as_deref(),
            &source.set,
            parts.pairs.len(),
            &mut notes,
        )?;
        let provided = Provided {
            head_sha: self.run.head_sha.clone(),
            run_url: self.run_url.clone(),
            provenance: Some(WORKFLOW_RUN_PROVENANCE.to_string()),
            labels: self.labels.clone(),
            dashboard_url: self.dashboard_url.clone(),
            base_sha: trusted_base,
            notes,
            expected,
            on_gap: self.on_gap,
        };
        Ok(decide(&judging, env, provided, parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn workspace(root: &Path) -> Workspace {
        Workspace {
            root: root.to_path_buf(),
            target_dir: root.join("target"),
            config: Config::default(),
            config_path: None,
            kernels: Vec::new(),
            hidden_table: None,
        }
    }

    fn request(mode: CiMode, out: Option<PathBuf>) -> CiRequest {
        CiRequest {
            results: Vec::new(),
            mode: Some(mode),
            ab: AbRequest::default(),
            budget: None,
            sweep: SweepRequest::default(),
            source: BaselineSource::default(),
            overrides: CompareOverrides::default(),
            out,
        }
    }

    /// A/B asked for is the command's: its environment error does not give way to baseline mode.
    #[test]
    fn an_ab_asked_for_fails_with_its_own_error() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut fell_back = false;
        let error = request(CiMode::Ab, None)
            .parts(
                &workspace(dir.path()),
                CiMeasure {
                    ab: &mut |ab, _| {
                        assert!(ab.budget.is_some(), "the configuration's budget applies");
                        Err(crate::DeviceError::NoAdapter.into())
                    },
                    sweep: &mut |_, _| unreachable!("no baseline mode"),
                    fallback: &mut |_| fell_back = true,
                },
            )
            .expect_err("A/B failed");
        assert!(
            matches!(error.device(), Some(crate::DeviceError::NoAdapter)),
            "{error}"
        );
        assert!(!fell_back);
    }

    /// A sweep that stopped early still leaves its record at `out`, and its error is the result.
    #[test]
    fn baseline_mode_saves_the_record_of_a_stopped_sweep() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let out = dir.path().join("record.json");
        let error = request(CiMode::Baseline, Some(out.clone()))
            .parts(
                &workspace(dir.path()),
                CiMeasure {
                    ab: &mut |_, _| unreachable!("baseline mode was asked for"),
                    sweep: &mut |_, checkpoint| {
                        assert_eq!(checkpoint, Some(out.as_path()));
                        let record = crate::results::fixtures::record(Vec::new());
                        Ok((record, Some(crate::harness::Interrupted::Sweep.into())))
                    },
                    fallback: &mut |_| unreachable!("baseline mode was asked for"),
                },
            )
            .expect_err("the sweep stopped");
        assert!(matches!(error, Error::Interrupted(_)), "{error}");
        assert!(RunRecord::read(&out).is_ok(), "the record is saved");
    }
}
