//! `cargo convbench ci`: the GitHub Actions gate. Runs the configured benchmarks (or takes
//! saved records), compares them with the baselines at the pull request's base, writes the job
//! summary (with the blessed history of every regressed benchmark), emits annotations, posts or
//! updates the one PR comment when allowed, and exits with the gate's code. Outside Actions it
//! prints what it would post.
//!
//! `cargo convbench comment` posts the same comment from saved records; it is what the
//! `workflow_run` job runs, with a write token and without the pull request's code. There the
//! records are hostile data: the head commit and the run link come from the `workflow_run`
//! event (`--head-sha`, `--run-url`), never from a record, and the comment says that the
//! numbers were measured by the pull request's own run.

use super::ab::{AbArgs, measure_and_judge};
use super::compare::{BaselineArgs, compare_config, judge_records, load_baseline, refuse_incomparable};
use super::report::read_record;
use super::run::{RunArgs, run_benchmarks};
use crate::cli::{Args, EXIT_REGRESSION};
use crate::output::{print, print_untrusted, write_atomic};
use convbench::baseline::GitBaselineStore;
use convbench::compare::{Comparison, PhaseComparison, Verdict};
use convbench::config::{self, CommentOn, Workspace};
use convbench::github::{
    ActionsEnv, CommentAction, CommentContext, GithubApi, annotations, comment_body, escape_markdown,
    escape_workflow_data, post_or_update_comment, sections_from, write_step_summary,
};
use convbench::results::{Phase, RunRecord};
use convbench::{Error, Result};
use std::path::PathBuf;

/// What decides whether a comment is posted, shared by `ci` and `comment`.
#[derive(Debug, Clone, clap::Args)]
pub struct PostArgs {
    /// When to post a NEW comment: always, change (a regression, an improvement, or rows that
    /// could not be judged) or regression. An existing convbench comment is always updated.
    /// Default: the config's `ci.comment-on`, else always.
    #[arg(long, value_name = "WHEN", value_parser = clap::value_parser!(CommentOn))]
    pub comment_on: Option<CommentOn>,
    /// A label of the pull request (repeatable). When the config's `ci.accept-label` is among
    /// them, a gate that fails on regressions passes, and the comment names the label. `ci`
    /// also reads the labels from the event payload.
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
}

/// Arguments of `ci`.
#[derive(Debug, clap::Args)]
pub struct CiArgs {
    /// Saved records to judge (one per runner); without them, the benchmarks run now.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// Do not post the PR comment (the `workflow_run` job posts it).
    #[arg(long)]
    pub no_comment: bool,
    /// Decide by interleaved A/B (see `ab`): the base revision's shaders against the working
    /// tree's, in this process on this device, instead of against the blessed baselines.
    /// Also `ci.ab = true` in the configuration.
    #[arg(long, conflicts_with = "results")]
    pub ab: bool,
    /// The base revision of A/B mode (implies --ab). Default: the merge-base of HEAD with the
    /// default branch, or with `GITHUB_BASE_REF` in Actions.
    #[arg(long, value_name = "REV", conflicts_with = "results")]
    pub ab_base: Option<String>,
    /// Pairs of interleaved iterations per benchmark in A/B mode.
    #[arg(long, default_value_t = 60)]
    pub pairs: usize,
    /// Comment policy and labels.
    #[command(flatten)]
    pub post: PostArgs,
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
    /// The commit that was measured, from the `workflow_run` event (40 hex digits); it replaces
    /// whatever commit the records claim.
    #[arg(long, value_name = "SHA")]
    pub head_sha: Option<String>,
    /// The web page of the run that measured, from the `workflow_run` event; linked from the
    /// comment.
    #[arg(long, value_name = "URL")]
    pub run_url: Option<String>,
    /// Also create a check run named `convbench` on --head-sha with the verdict and the
    /// comment as its summary (needs `checks: write`), so the gate can be a required check
    /// for fork pull requests too.
    #[arg(long, requires = "head_sha")]
    pub check_run: bool,
    /// Print the comment instead of posting it.
    #[arg(long)]
    pub dry_run: bool,
    /// Comment policy and labels.
    #[command(flatten)]
    pub post: PostArgs,
    /// Baseline and verdict options.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// Records compared with their baselines, and the comment that reports them.
struct Judged {
    pairs: Vec<(RunRecord, Comparison)>,
    notes: Vec<String>,
    body: String,
    /// The label that turned a failing gate into a pass.
    accepted_by: Option<String>,
    /// Rows measured on another adapter than the baseline's, not allowed: reported in the
    /// comment and the summary, then the command fails with this error (exit 2).
    incomparable: Option<Error>,
}

impl Judged {
    /// Whether the gate fails, after an accepting label.
    fn gate_fails(&self) -> bool {
        self.accepted_by.is_none() && self.pairs.iter().any(|(_, c)| c.gate_fails())
    }

    fn exit_code(&self) -> u8 {
        if self.gate_fails() { EXIT_REGRESSION } else { 0 }
    }

    /// Whether `policy` asks for a new comment on these results.
    fn wants_new_comment(&self, policy: CommentOn) -> bool {
        let comparisons = || self.pairs.iter().map(|(_, c)| c);
        match policy {
            CommentOn::Always => true,
            CommentOn::Regression => comparisons().any(Comparison::has_regression),
            CommentOn::Change => comparisons().any(|c| {
                c.current_incomplete
                    || c.rows
                        .iter()
                        .any(|row| !matches!(row.verdict, Verdict::NoChange | Verdict::New))
            }),
        }
    }

    /// The error to end with after everything was reported.
    fn finish(self) -> Result<u8> {
        let code = self.exit_code();
        match self.incomparable {
            Some(error) => Err(error),
            None => Ok(code),
        }
    }
}

/// What the caller knows that the records must not decide.
#[derive(Default)]
struct Provided {
    head_sha: Option<String>,
    run_url: Option<String>,
    provenance: Option<String>,
    labels: Vec<String>,
}

fn judge(
    workspace: &Workspace,
    args: &BaselineArgs,
    records: Vec<RunRecord>,
    env: &ActionsEnv,
    provided: Provided,
) -> Result<Judged> {
    let config = compare_config(workspace, args)?;
    let mut pairs = Vec::new();
    let mut notes = Vec::new();
    let mut base_sha = None;
    let mut incomparable = None;
    for record in records {
        let baseline = load_baseline(workspace, args, &record)?;
        let comparison = judge_records(&baseline, &record, "the record under test", &config)?;
        base_sha = base_sha.or(baseline.base.map(|b| b.oid));
        notes.extend(baseline.notes);
        if incomparable.is_none() {
            incomparable = refuse_incomparable(&comparison).err();
        }
        pairs.push((record, comparison));
    }
    let mode = match &base_sha {
        Some(base) => format!(
            "baseline mode: each benchmark's blessed runs at {}, compared on run medians",
            base.chars().take(7).collect::<String>()
        ),
        None => "baseline mode: the baseline file given on the command line".to_string(),
    };
    Ok(assemble(
        workspace,
        env,
        provided,
        Parts {
            pairs,
            notes,
            base_sha,
            incomparable,
            mode,
        },
    ))
}

/// What a mode measured and decided, before the comment is written.
struct Parts {
    pairs: Vec<(RunRecord, Comparison)>,
    notes: Vec<String>,
    base_sha: Option<String>,
    incomparable: Option<Error>,
    mode: String,
}

/// The accept label, the context and the comment of `parts`.
fn assemble(workspace: &Workspace, env: &ActionsEnv, provided: Provided, parts: Parts) -> Judged {
    let Parts {
        pairs,
        notes,
        base_sha,
        incomparable,
        mode,
    } = parts;
    let fails = pairs.iter().any(|(_, c)| c.gate_fails());
    let fails_otherwise = pairs.iter().any(|(_, c)| {
        c.current_incomplete || (c.config.fail_on_inconclusive && c.count(Verdict::Inconclusive) > 0)
    });
    let accept_label = workspace.config.ci.accept_label.as_ref();
    let labels: Vec<&String> = provided
        .labels
        .iter()
        .chain(env.pull_request.iter().flat_map(|pr| pr.labels.iter()))
        .collect();
    let accepted_by = accept_label
        .filter(|label| fails && !fails_otherwise && labels.contains(label))
        .cloned();
    let explicit_head = provided.head_sha.is_some();
    let context = CommentContext {
        base_sha: env.pull_request.as_ref().map(|p| p.base_sha.clone()).or(base_sha),
        head_sha: provided.head_sha.or_else(|| {
            env.pull_request
                .as_ref()
                .map(|p| p.head_sha.clone())
                .or_else(|| env.sha.clone())
        }),
        run_url: provided.run_url.or_else(|| env.run_url()),
        mode: Some(mode),
        provenance: provided.provenance,
        notes: notes.clone(),
        accepted_by_label: accepted_by.clone(),
        mentions: workspace.config.ci.mention.clone(),
        dashboard_url: dashboard_url(workspace),
    };
    let mut sections = sections_from(pairs.iter().map(|(r, c)| (r, c)));
    if explicit_head {
        // The commit a record claims is the pull request's word; the event's is GitHub's.
        for section in &mut sections {
            section.commit = None;
        }
    }
    let body = comment_body(&sections, &context);
    Judged {
        pairs,
        notes,
        body,
        accepted_by,
        incomparable,
    }
}

/// Where the history dashboard is published: `ci.dashboard-url`, else `CONVBENCH_DASHBOARD_URL`
/// (a workflow passes its repository variable through it). The comment links only an https
/// URL; an invalid configured one was refused when the configuration was read.
fn dashboard_url(workspace: &Workspace) -> Option<String> {
    workspace.config.ci.dashboard_url.clone().or_else(|| {
        std::env::var("CONVBENCH_DASHBOARD_URL")
            .ok()
            .filter(|url| !url.is_empty())
    })
}

/// A/B mode of `ci`: the base revision's shaders against the working tree's, interleaved in
/// this process (see `ab`), as one comparison for the comment.
fn judge_ab(
    args: &Args,
    a: &CiArgs,
    workspace: &Workspace,
    env: &ActionsEnv,
    provided: Provided,
) -> Result<Judged> {
    let config = compare_config(workspace, &a.baseline)?;
    let ab_args = AbArgs {
        base: a.ab_base.clone(),
        base_bin: None,
        shaders: a.run.device.shaders.clone(),
        selection: a.run.selection.clone(),
        adapter: a.run.device.adapter.clone(),
        pairs: a.pairs,
        samples: a.run.samples,
        warmup: a.run.warmup,
        warmup_ms: a.run.warmup_ms,
        kernels: a.run.kernels.clone(),
        threshold: a.baseline.threshold,
        out: None,
    };
    let outcome = measure_and_judge(args, &ab_args, workspace, &config)?;
    if let Some(out) = &a.run.out {
        write_atomic(out, &outcome.to_json(config.alpha))?;
    }
    let rows = outcome
        .rows
        .iter()
        .map(|row| PhaseComparison {
            benchmark_id: row.benchmark_id.clone(),
            phase: Phase::Total,
            baseline_median_ns: Some(row.base_median_ns),
            current_median_ns: Some(row.head_median_ns),
            change: row.estimated().then_some(row.change),
            ci: row.estimated().then_some(row.ci),
            p_value: Some(row.p_value),
            threshold: row.threshold,
            verdict: row.verdict,
            adapter_label: outcome.adapter_label.clone(),
            evidence: Some(row.evidence.clone()),
        })
        .collect();
    let comparison = Comparison {
        rows,
        config,
        kernel_changes: Vec::new(),
        current_incomplete: false,
    };
    let (commit, _) = convbench::baseline::git_state(&workspace.root);
    let mode = format!(
        "A/B mode: {} pairs per benchmark, interleaved in one process on one device ({})",
        a.pairs, outcome.description
    );
    Ok(assemble(
        workspace,
        env,
        provided,
        Parts {
            pairs: vec![(RunRecord::new(commit), comparison)],
            notes: Vec::new(),
            base_sha: None,
            incomparable: None,
            mode,
        },
    ))
}

fn read_records(paths: &[PathBuf]) -> Result<Vec<RunRecord>> {
    paths.iter().map(|p| read_record(p)).collect()
}

/// The blessed history of every benchmark with a regression, as Markdown for the job summary;
/// empty when there is none or the baselines are not in git.
fn regression_history(workspace: &Workspace, set: &str, judged: &Judged) -> String {
    const MAX_BENCHMARKS: usize = 20;
    const MAX_POINTS: usize = 10;
    let Ok(store) = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir()) else {
        return String::new();
    };
    let mut out = String::new();
    let mut shown = Vec::new();
    for (record, comparison) in &judged.pairs {
        for row in comparison
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::Regression)
        {
            let Some(benchmark) = record.benchmarks.iter().find(|b| b.id == row.benchmark_id) else {
                continue;
            };
            if shown.contains(&row.benchmark_id) || shown.len() == MAX_BENCHMARKS {
                continue;
            }
            shown.push(row.benchmark_id.clone());
            let Ok(mut points) = store.history(&benchmark.adapter.slug(), set, Some(&row.benchmark_id))
            else {
                continue;
            };
            points.retain(|point| point.phase == convbench::results::Phase::Total);
            out.push_str(&format!(
                "\n#### History of {}\n\n| commit | blessed (UTC) | total median | commit message |\n| --- | --- | ---: | --- |\n",
                escape_markdown(&row.benchmark_id)
            ));
            let skip = points.len().saturating_sub(MAX_POINTS);
            for point in points.iter().skip(skip) {
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    escape_markdown(&point.commit.chars().take(10).collect::<String>()),
                    convbench::report::rfc3339_utc(point.time_unix_s.max(0) as u64),
                    convbench::github::format_duration_ns(point.median_ns),
                    escape_markdown(&point.summary),
                ));
            }
            if points.is_empty() {
                out.push_str("| – | – | – | no blessed value in the history yet |\n");
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    format!(
        "\n### Blessed history of the regressed benchmarks\n\nFrom `cargo convbench history --benchmark ID` \
         (the last {MAX_POINTS} blessings each).\n{out}"
    )
}

/// The repository of the job, or what to set.
fn repository(env: &ActionsEnv) -> Result<&convbench::github::Repository> {
    env.repository.as_ref().ok_or_else(|| {
        Error::Environment(
            "GITHUB_REPOSITORY is not set; run inside GitHub Actions or set it to owner/repo".into(),
        )
    })
}

/// Posts or updates the comment as `policy` says; a missing token or a refusal is reported,
/// not fatal, in `ci`.
fn post(env: &ActionsEnv, pr: u64, body: &str, create: bool) -> Result<Option<CommentAction>> {
    let repository = repository(env)?;
    let api = GithubApi::from_env(env);
    if create {
        post_or_update_comment(&api, &repository.owner, &repository.name, pr, body).map(Some)
    } else {
        convbench::github::update_comment_if_present(&api, &repository.owner, &repository.name, pr, body)
    }
}

fn describe(action: Option<CommentAction>, policy: CommentOn) -> String {
    match action {
        Some(CommentAction::Created(id)) => format!("created PR comment {id}"),
        Some(CommentAction::Updated(id)) => format!("updated PR comment {id}"),
        None => format!(
            "no PR comment: nothing to report under comment-on = {}",
            policy.as_str()
        ),
    }
}

fn policy(workspace: &Workspace, post: &PostArgs) -> CommentOn {
    post.comment_on.unwrap_or(workspace.config.ci.comment_on)
}

/// `cargo convbench ci`.
pub fn run_ci(args: &Args, a: &CiArgs) -> Result<u8> {
    let env = ActionsEnv::from_env()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let ab_mode = a.ab || a.ab_base.is_some() || (workspace.config.ci.ab && a.results.is_empty());
    let provided = Provided {
        labels: a.post.labels.clone(),
        ..Provided::default()
    };
    let judged = if ab_mode {
        judge_ab(args, a, &workspace, &env, provided)?
    } else {
        judge_baseline(args, a, &workspace, &env, provided)?
    };
    report(&workspace, a, &env, judged)
}

/// Baseline mode of `ci`: runs or reads the records and compares them with the baselines.
fn judge_baseline(
    args: &Args,
    a: &CiArgs,
    workspace: &Workspace,
    env: &ActionsEnv,
    provided: Provided,
) -> Result<Judged> {
    let records = if a.results.is_empty() {
        let (record, error) = run_benchmarks(&a.run, workspace, args.quiet);
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
    judge(workspace, &a.baseline, records, env, provided)
}

/// Summary, annotations, notices and the comment of `ci`, then its exit code.
fn report(workspace: &Workspace, a: &CiArgs, env: &ActionsEnv, judged: Judged) -> Result<u8> {
    if !env.in_actions {
        print(&judged.body);
        return judged.finish();
    }
    if let Some(path) = &env.step_summary {
        let history = regression_history(workspace, &a.baseline.set, &judged);
        write_step_summary(path, &format!("{}{history}", judged.body))?;
    }
    for line in judged.pairs.iter().flat_map(|(_, c)| annotations(c)) {
        print(&line);
    }
    for note in &judged.notes {
        print(&format!(
            "::notice title=convbench::{}",
            escape_workflow_data(note)
        ));
    }
    if let Some(label) = &judged.accepted_by {
        print(&format!(
            "::notice title=convbench::regressions accepted by the pull request label {}",
            escape_workflow_data(label)
        ));
    }
    let policy = policy(workspace, &a.post);
    match (&env.pull_request, a.no_comment) {
        (Some(pr), false) if pr.is_fork => print(
            "::notice title=convbench::pull request from a fork: its token cannot comment; the comment.yml \
             workflow (workflow_run) posts it",
        ),
        (Some(pr), false) => match post(env, pr.number, &judged.body, judged.wants_new_comment(policy)) {
            Ok(action) => eprintln!("{}", describe(action, policy)),
            Err(e) => print(&format!(
                "::warning title=convbench comment::{}",
                escape_workflow_data(&e.to_string())
            )),
        },
        _ => {}
    }
    judged.finish()
}

/// Why the numbers in a `comment` deserve the trust of the pull request, no more.
const PROVENANCE: &str = "These numbers were measured by the pull request's own workflow run, on its runner, \
                          with its code; the default branch's convbench judged them and wrote this comment.";

/// `cargo convbench comment`.
pub fn run_comment(args: &Args, a: &CommentArgs) -> Result<u8> {
    if let Some(sha) = &a.head_sha
        && !(sha.len() == 40 && sha.chars().all(|ch| ch.is_ascii_hexdigit()))
    {
        return Err(Error::InvalidInput(format!(
            "--head-sha `{}` is not a 40-digit commit id; pass github.event.workflow_run.head_sha",
            escape_workflow_data(sha)
        )));
    }
    let env = ActionsEnv::from_env()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let provided = Provided {
        head_sha: a.head_sha.clone(),
        run_url: a.run_url.clone(),
        provenance: Some(PROVENANCE.to_string()),
        labels: a.post.labels.clone(),
    };
    let judged = judge(&workspace, &a.baseline, read_records(&a.results)?, &env, provided)?;
    if a.dry_run {
        print_untrusted(&judged.body);
        return Ok(0);
    }
    if let Some(path) = &env.step_summary {
        let history = regression_history(&workspace, &a.baseline.set, &judged);
        write_step_summary(path, &format!("{}{history}", judged.body))?;
    }
    let policy = policy(&workspace, &a.post);
    let action = post(&env, a.pr, &judged.body, judged.wants_new_comment(policy))?;
    eprintln!("{}", describe(action, policy));
    if a.check_run
        && let Some(head_sha) = &a.head_sha
    {
        check_run(&env, head_sha, a.run_url.clone(), &judged)?;
    }
    // The gate's exit code belongs to the benchmark job; this job reports (an incomparable
    // baseline included, in the comment and the check run) and succeeds when it could.
    Ok(0)
}

/// Creates the `convbench` check run on the measured commit: failure when the gate fails,
/// success otherwise (neutral when a label accepted a regression).
fn check_run(env: &ActionsEnv, head_sha: &str, details_url: Option<String>, judged: &Judged) -> Result<()> {
    use convbench::github::{CheckConclusion, CheckRun, create_check_run};
    let repository = repository(env)?;
    let conclusion = if judged.gate_fails() || judged.incomparable.is_some() {
        CheckConclusion::Failure
    } else if judged.accepted_by.is_some() {
        CheckConclusion::Neutral
    } else {
        CheckConclusion::Success
    };
    let regressions: usize = judged
        .pairs
        .iter()
        .map(|(_, c)| c.count(Verdict::Regression))
        .sum();
    let title = match (&conclusion, regressions) {
        (CheckConclusion::Failure, _) if judged.incomparable.is_some() => {
            "baseline measured on another adapter".to_string()
        }
        (_, 0) => "no regression".to_string(),
        (_, 1) => "1 regression".to_string(),
        (_, n) => format!("{n} regressions"),
    };
    let check = CheckRun {
        name: "convbench".to_string(),
        head_sha: head_sha.to_string(),
        conclusion,
        title,
        summary: judged.body.clone(),
        details_url,
    };
    let id = create_check_run(
        &GithubApi::from_env(env),
        &repository.owner,
        &repository.name,
        &check,
    )?;
    eprintln!("created check run {id}");
    Ok(())
}
