//! `cargo convbench ci`: the GitHub Actions gate. Runs the configured benchmarks (or takes
//! saved records), compares them with the baselines at the pull request's base, writes the job
//! summary, emits annotations, posts or updates the one PR comment when allowed, and exits with
//! the gate's code. Outside Actions it prints what it would post.
//!
//! `cargo convbench comment` posts the same comment from saved records; it is what the
//! `workflow_run` job runs, with a write token and without the pull request's code.

use super::compare::{BaselineArgs, compare_config, judge_records, load_baseline, refuse_incomparable};
use super::report::read_record;
use super::run::{RunArgs, run_benchmarks};
use crate::cli::{Args, EXIT_REGRESSION};
use crate::output::{print, write_atomic};
use convbench::compare::Comparison;
use convbench::config::{self, Workspace};
use convbench::github::{
    ActionsEnv, CommentAction, CommentContext, GithubApi, annotations, comment_body, post_or_update_comment,
    sections_from, write_step_summary,
};
use convbench::results::RunRecord;
use convbench::{Error, Result};
use std::path::PathBuf;

/// Arguments of `ci`.
#[derive(Debug, clap::Args)]
pub struct CiArgs {
    /// Saved records to judge (one per runner); without them, the benchmarks run now.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// Do not post the PR comment (the `workflow_run` job posts it).
    #[arg(long)]
    pub no_comment: bool,
    /// Baseline and verdict options.
    #[command(flatten)]
    pub baseline: BaselineArgs,
    /// Benchmarks to run when no --results is given.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Arguments of `comment`.
#[derive(Debug, clap::Args)]
pub struct CommentArgs {
    /// Pull request number.
    #[arg(long)]
    pub pr: u64,
    /// Records to report (one per runner of the matrix).
    #[arg(long, value_name = "FILE", num_args = 1.., required = true)]
    pub results: Vec<PathBuf>,
    /// Print the comment instead of posting it.
    #[arg(long)]
    pub dry_run: bool,
    /// Baseline and verdict options.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// Records compared with their baselines, and the comment that reports them.
struct Judged {
    pairs: Vec<(RunRecord, Comparison)>,
    notes: Vec<String>,
    body: String,
}

impl Judged {
    fn gate_fails(&self) -> bool {
        self.pairs.iter().any(|(_, c)| c.gate_fails())
    }
}

fn judge(
    workspace: &Workspace,
    args: &BaselineArgs,
    records: Vec<RunRecord>,
    env: &ActionsEnv,
) -> Result<Judged> {
    let config = compare_config(workspace, args)?;
    let mut pairs = Vec::new();
    let mut notes = Vec::new();
    let mut base_sha = None;
    for record in records {
        let baseline = load_baseline(workspace, args, &record)?;
        let comparison = judge_records(&baseline, &record, "the record under test", &config)?;
        base_sha = base_sha.or(baseline.base.map(|b| b.oid));
        notes.extend(baseline.notes);
        refuse_incomparable(&comparison)?;
        pairs.push((record, comparison));
    }
    let context = CommentContext {
        base_sha: env.pull_request.as_ref().map(|p| p.base_sha.clone()).or(base_sha),
        head_sha: env
            .pull_request
            .as_ref()
            .map(|p| p.head_sha.clone())
            .or_else(|| env.sha.clone()),
        run_url: env.run_url(),
    };
    let mut body = comment_body(&sections_from(pairs.iter().map(|(r, c)| (r, c))), &context);
    for note in &notes {
        body.push_str(&format!(
            "\n> **Note:** {}\n",
            convbench::github::escape_markdown(note)
        ));
    }
    Ok(Judged { pairs, notes, body })
}

fn read_records(paths: &[PathBuf]) -> Result<Vec<RunRecord>> {
    paths.iter().map(|p| read_record(p)).collect()
}

/// Posts the comment; a missing token or a refusal is reported, not fatal, in `ci`.
fn post(env: &ActionsEnv, pr: u64, body: &str) -> Result<CommentAction> {
    let repository = env.repository.as_ref().ok_or_else(|| {
        Error::Environment(
            "GITHUB_REPOSITORY is not set; run inside GitHub Actions or set it to owner/repo".into(),
        )
    })?;
    post_or_update_comment(
        &GithubApi::from_env(env),
        &repository.owner,
        &repository.name,
        pr,
        body,
    )
}

fn describe(action: &CommentAction) -> String {
    match action {
        CommentAction::Created(id) => format!("created PR comment {id}"),
        CommentAction::Updated(id) => format!("updated PR comment {id}"),
    }
}

/// `cargo convbench ci`.
pub fn run_ci(args: &Args, a: &CiArgs) -> Result<u8> {
    let env = ActionsEnv::from_env()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let records = if a.results.is_empty() {
        let (record, error) = run_benchmarks(&a.run, &workspace, args.quiet);
        if let Some(out) = &a.run.out {
            write_atomic(out, &record.to_json())?;
        }
        if let Some(e) = error {
            return Err(e);
        }
        vec![record]
    } else {
        read_records(&a.results)?
    };
    let judged = judge(&workspace, &a.baseline, records, &env)?;
    if !env.in_actions {
        print(&judged.body);
        return Ok(if judged.gate_fails() { EXIT_REGRESSION } else { 0 });
    }
    if let Some(path) = &env.step_summary {
        write_step_summary(path, &judged.body)?;
    }
    for line in judged.pairs.iter().flat_map(|(_, c)| annotations(c)) {
        print(&line);
    }
    for note in &judged.notes {
        print(&format!(
            "::notice title=convbench::{}",
            convbench::github::escape_workflow_data(note)
        ));
    }
    match (&env.pull_request, a.no_comment) {
        (Some(pr), false) if pr.is_fork => print(
            "::notice title=convbench::pull request from a fork: its token cannot comment; the comment.yml \
             workflow (workflow_run) posts it",
        ),
        (Some(pr), false) => match post(&env, pr.number, &judged.body) {
            Ok(action) => eprintln!("{}", describe(&action)),
            Err(e) => print(&format!(
                "::warning title=convbench comment::{}",
                convbench::github::escape_workflow_data(&e.to_string())
            )),
        },
        _ => {}
    }
    Ok(if judged.gate_fails() { EXIT_REGRESSION } else { 0 })
}

/// `cargo convbench comment`.
pub fn run_comment(args: &Args, a: &CommentArgs) -> Result<u8> {
    let env = ActionsEnv::from_env()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let judged = judge(&workspace, &a.baseline, read_records(&a.results)?, &env)?;
    if a.dry_run {
        print(&judged.body);
        return Ok(0);
    }
    let action = post(&env, a.pr, &judged.body)?;
    eprintln!("{}", describe(&action));
    Ok(0)
}
