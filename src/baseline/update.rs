//! `baseline update`: bless a saved record, or runs measured now (several when a benchmark has
//! no blessed run yet, see [`GitBaselineStore::runs_to_bless`]), as the new baseline of their
//! adapter.

use super::{GitBaselineStore, check_runs};
use crate::results::RunRecord;
use crate::{Error, Result};
use std::path::PathBuf;

/// What `baseline update` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateRequest {
    /// Bless this saved record instead of measuring.
    pub from: Option<PathBuf>,
    /// The baseline set.
    pub set: String,
    /// Say what would change without writing.
    pub dry_run: bool,
    /// Commit the changed baseline files with git.
    pub commit: bool,
    /// The commit message; `None`: one listing what changed.
    pub message: Option<String>,
    /// Runs to measure and bless; `None`: as [`GitBaselineStore::runs_to_bless`] decides.
    pub runs: Option<usize>,
}

impl UpdateRequest {
    /// Blesses into `store` the record of [`UpdateRequest::from`], or runs that `measure` takes
    /// (each a fresh sweep: its record, and beside it the error that stopped it). `on_run`
    /// hears each run after the first as it starts, with how many are wanted. A run after the
    /// first that stops early or cannot start ends the measuring: the runs finished are
    /// blessed, and the error comes beside the lines that say what changed.
    pub fn run(
        &self,
        store: &GitBaselineStore,
        measure: &mut dyn FnMut() -> Result<(RunRecord, Option<Error>)>,
        on_run: &mut dyn FnMut(usize, usize),
    ) -> Result<(Vec<String>, Option<Error>)> {
        check_runs(self.runs)?;
        super::check_set_name(&self.set)?;
        let mut records = Vec::new();
        let mut stopped = None;
        match &self.from {
            Some(path) => records.push(RunRecord::read(path)?),
            None => {
                let (first, error) = measure()?;
                if let Some(error) = error {
                    return Err(error);
                }
                let wanted = store.runs_to_bless(self.runs, &first, &self.set)?;
                records.push(first);
                for run in 2..=wanted {
                    on_run(run, wanted);
                    // A run that stops early, or fails before it measures anything (a shape
                    // list removed meanwhile, a device that no longer opens), ends the
                    // measuring; the runs that finished are still blessed.
                    match measure() {
                        Ok((record, None)) => records.push(record),
                        Ok((_, Some(error))) | Err(error) => {
                            stopped = Some(error);
                            break;
                        }
                    }
                }
            }
        }
        let lines = store.bless_runs(
            &records,
            &self.set,
            self.dry_run,
            self.commit,
            self.message.as_deref(),
        )?;
        Ok((lines, stopped))
    }
}
