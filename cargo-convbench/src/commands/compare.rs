//! `cargo convbench compare`: this run (or a saved record) against the baseline blessed at the
//! base revision, with a verdict per benchmark and phase; exit code 1 on a regression.

use super::report::read_record;
use super::run::{RunArgs, run_benchmarks};
use crate::cli::{Args, EXIT_REGRESSION};
use crate::output::{print, write_atomic};
use convbench::baseline::{BaseRevision, GitBaselineStore};
use convbench::compare::{CompareConfig, Comparison, Verdict, compare};
use convbench::config::{self, Workspace};
use convbench::report::{self, Format};
use convbench::results::RunRecord;
use convbench::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Where the baseline comes from and how to judge.
#[derive(Debug, Clone, clap::Args)]
pub struct BaselineArgs {
    /// Compare against the baseline at this git revision (default: the merge-base of HEAD with
    /// the default branch, or with `GITHUB_BASE_REF` in Actions).
    #[arg(long, value_name = "REV", conflicts_with = "baseline_file")]
    pub baseline_rev: Option<String>,
    /// Compare against a plain record file instead of git.
    #[arg(long, value_name = "FILE")]
    pub baseline_file: Option<PathBuf>,
    /// Baseline set (file name under `baselines/<adapter>/`).
    #[arg(long, default_value = "default")]
    pub set: String,
    /// Slowdown that counts as a regression, as a fraction (default 0.05, or the config's).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Slowdown above which a regression fails the gate (default: the config's
    /// `compare.fail-threshold`, else every regression fails). Smaller significant slowdowns
    /// are reported as alerts, and the gate passes.
    #[arg(long, value_name = "FRACTION")]
    pub fail_threshold: Option<f64>,
    /// Compare numbers from different adapters anyway.
    #[arg(long)]
    pub allow_other_adapter: bool,
    /// Fail (exit 1) on inconclusive results too.
    #[arg(long)]
    pub fail_on_inconclusive: bool,
}

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// A saved record to judge; without it, the benchmarks run now.
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,
    /// Baseline and verdict options.
    #[command(flatten)]
    pub baseline: BaselineArgs,
    /// Benchmarks to run when no --results is given.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The baseline a comparison used, and what to tell the reader about it.
pub struct LoadedBaseline {
    /// Benchmarks blessed for the adapters of the current record.
    pub record: RunRecord,
    /// Where it came from, e.g. `baselines/... at 1a2b3c4`.
    pub origin: String,
    /// Lines for the report: missing baselines, baselines edited in the working tree.
    pub notes: Vec<String>,
    /// The base revision, when read from git.
    pub base: Option<BaseRevision>,
}

/// Loads the baseline of every adapter in `current`, restricted to the models it ran.
pub fn load_baseline(
    workspace: &Workspace,
    args: &BaselineArgs,
    current: &RunRecord,
) -> Result<LoadedBaseline> {
    let models: BTreeSet<&str> = current.benchmarks.iter().map(|b| b.model.as_str()).collect();
    let keep = |record: &mut RunRecord| record.benchmarks.retain(|b| models.contains(b.model.as_str()));
    if let Some(path) = &args.baseline_file {
        let mut record = read_record(path)?;
        if record.benchmarks.is_empty() {
            return Err(Error::InvalidInput(format!(
                "baseline {} holds no benchmarks; bless one with `cargo convbench baseline update`",
                path.display()
            )));
        }
        keep(&mut record);
        return Ok(LoadedBaseline {
            record,
            origin: path.display().to_string(),
            notes: Vec::new(),
            base: None,
        });
    }
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
    let base = store.resolve_base(args.baseline_rev.as_deref())?;
    let mut record = RunRecord::new(Some(base.oid.clone()));
    let mut notes = Vec::new();
    let slugs: BTreeSet<String> = current.benchmarks.iter().map(|b| b.adapter.slug()).collect();
    for slug in &slugs {
        let path = store.repo_path(slug, &args.set)?;
        match store.load_at(&base, slug, &args.set)? {
            Some(blessed) => record.benchmarks.extend(blessed.benchmarks),
            None => notes.push(format!(
                "no baseline {} at {}: every benchmark of this adapter is new; bless one with \
                 `cargo convbench baseline update`",
                path.display(),
                base.description
            )),
        }
        if store.worktree_differs(&base, slug, &args.set)? {
            notes.push(format!(
                "{} differs in the working tree from {}: the comparison uses the version at the base \
                 revision, so a change cannot hide a regression by editing its own baseline",
                path.display(),
                base.description
            ));
        }
    }
    keep(&mut record);
    Ok(LoadedBaseline {
        record,
        origin: format!("{} at {}", store.baseline_dir().display(), base.description),
        notes,
        base: Some(base),
    })
}

/// The comparison settings: the workspace's, overridden by the command line.
pub fn compare_config(workspace: &Workspace, args: &BaselineArgs) -> Result<CompareConfig> {
    let mut config = workspace.config.compare_config();
    if let Some(t) = args.threshold {
        config.threshold = t;
    }
    if let Some(fail) = args.fail_threshold {
        config.fail_threshold = Some(fail);
    }
    config.allow_other_adapter |= args.allow_other_adapter;
    config.fail_on_inconclusive |= args.fail_on_inconclusive;
    config.validate()?;
    Ok(config)
}

/// Checks both records ([`RunRecord::validate`]: no duplicated benchmark or phase, no
/// zero-time sample, something to judge) and compares them. `what` names the current record.
pub fn judge_records(
    baseline: &LoadedBaseline,
    current: &RunRecord,
    what: &str,
    config: &CompareConfig,
) -> Result<Comparison> {
    current.validate(what)?;
    if !baseline.record.benchmarks.is_empty() {
        baseline
            .record
            .validate(&format!("the baseline ({})", baseline.origin))?;
    }
    Ok(compare(&baseline.record, current, config))
}

/// Fails when rows were incomparable (other adapter) and that was not allowed.
pub fn refuse_incomparable(comparison: &Comparison) -> Result<()> {
    if comparison.config.allow_other_adapter {
        return Ok(());
    }
    let labels: BTreeMap<&str, usize> = comparison
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Incomparable)
        .fold(BTreeMap::new(), |mut m, r| {
            *m.entry(r.adapter_label.as_str()).or_default() += 1;
            m
        });
    if labels.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidInput(format!(
        "the baseline was measured on another adapter ({}); numbers from different adapters are not \
         compared. Bless a baseline on this one with `cargo convbench baseline update`, or pass \
         --allow-other-adapter",
        labels.keys().copied().collect::<Vec<_>>().join("; ")
    )))
}

/// Renders a comparison in `format` with notes first.
pub fn render(comparison: &Comparison, notes: &[String], origin: &str, format: Format) -> Result<String> {
    let mut text = String::new();
    match format {
        Format::Json => {
            text = serde_json::to_string_pretty(comparison).unwrap_or_default();
        }
        Format::Markdown => {
            for n in notes {
                text.push_str(&format!("> **Note:** {n}\n\n"));
            }
            text.push_str(&report::comparison_markdown(comparison));
            text.push_str(&format!("\nbaseline: {origin}\n"));
        }
        Format::Table => {
            for n in notes {
                text.push_str(&format!("note: {n}\n"));
            }
            text.push_str(&report::comparison_table(comparison));
            text.push_str(&format!("\nbaseline: {origin}\n"));
        }
        Format::Csv => {
            return Err(Error::InvalidInput(
                "compare renders table, md or json; csv is for `run` and `report`".into(),
            ));
        }
    }
    Ok(text)
}

/// `cargo convbench compare`.
pub fn run(args: &Args, a: &CompareArgs) -> Result<u8> {
    let format: Format = a.run.format.parse()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let config = compare_config(&workspace, &a.baseline)?;
    let current = match &a.results {
        Some(path) => read_record(path)?,
        None => {
            let (record, error) = run_benchmarks(&a.run, &workspace, args.quiet);
            if let Some(out) = &a.run.out {
                write_atomic(out, &record.to_json())?;
            }
            if let Some(e) = error {
                return Err(e);
            }
            record
        }
    };
    let baseline = load_baseline(&workspace, &a.baseline, &current)?;
    let what = a
        .results
        .as_ref()
        .map_or_else(|| "this run".to_string(), |p| p.display().to_string());
    let comparison = judge_records(&baseline, &current, &what, &config)?;
    print(&render(&comparison, &baseline.notes, &baseline.origin, format)?);
    refuse_incomparable(&comparison)?;
    Ok(if comparison.gate_fails() {
        EXIT_REGRESSION
    } else {
        0
    })
}
