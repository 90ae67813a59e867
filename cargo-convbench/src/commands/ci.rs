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
//! numbers were measured by the pull request's own run. With `--default-branch` the base is
//! the merge-base GitHub computes for the head (`--baseline-rev` only cross-checks it), and what
//! must be judged comes from that base and from the run's jobs (`--run-id`,
//! `--run-conclusion`): see [`convbench::gate::expect`].

use crate::args::{BaselineArgs, RunArgs};
use crate::args::{EXIT_REGRESSION, Global};
use crate::output::{print, print_untrusted};
use crate::progress::{run_ab, run_sweep};
use convbench::Result;
use convbench::config::{self, CiMode, CommentOn, Workspace};
use convbench::gate::ci::{CiMeasure, CiRequest, CommentRequest};
use convbench::gate::expect::TrustedRun;
use convbench::gate::publish::{ActionsReport, create_check, describe, post_comment, publish_in_actions};
use convbench::gate::{Decision, OnGap, Provided, decide, regression_history};
use convbench::github::{ActionsEnv, escape_workflow_data, write_step_summary};
use convbench::harness::ab::{AbRequest, DEFAULT_PAIRS, FIRST_LOOK};
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
    /// Also create a check run named `convbench` on the pull request's head commit (or
    /// `GITHUB_SHA`) with the same decision as the comment (needs `checks: write`).
    #[arg(long)]
    pub check_run: bool,
    /// How to decide: `ab` (interleaved A/B of the base revision against the working tree, in
    /// this process on this device) or `baseline` (against the blessed baselines). Default: the
    /// config's `ci.mode`, else A/B wherever the base revision can be read and a wgpu adapter
    /// opens, else baseline mode; the comment says which decided and why.
    #[arg(long, value_name = "MODE", value_parser = clap::value_parser!(CiMode))]
    pub mode: Option<CiMode>,
    /// The same as `--mode ab`.
    #[arg(long, conflicts_with_all = ["results", "mode"])]
    pub ab: bool,
    /// The base revision of A/B mode (implies --mode ab). Default: the merge-base of HEAD with the
    /// default branch, or with `GITHUB_BASE_REF` in Actions.
    #[arg(long, value_name = "REV", conflicts_with = "results")]
    pub ab_base: Option<String>,
    /// The most pairs of interleaved iterations per benchmark in A/B mode; fewer when the
    /// verdict settles sooner.
    #[arg(long, default_value_t = DEFAULT_PAIRS, allow_negative_numbers = true, value_parser = crate::args::count::<1, { config::MAX_PAIRS }>)]
    pub pairs: usize,
    /// Pairs before the first look at the verdict in A/B mode; `--first-look N --pairs N`
    /// takes exactly N pairs.
    #[arg(long, value_name = "PAIRS", default_value_t = FIRST_LOOK, allow_negative_numbers = true, value_parser = crate::args::count::<1, { config::MAX_PAIRS }>)]
    pub first_look: usize,
    /// Time for the A/B comparison, e.g. `5m` or `90s`. Default: the config's `ci.budget`,
    /// else 5 minutes.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
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
    #[arg(long, allow_negative_numbers = true, value_parser = crate::args::count_u64::<1, { u64::MAX }>)]
    pub pr: u64,
    /// Records to report (one per runner of the matrix). Required unless --default-branch or
    /// --run-id says what to expect: then no record at all is judged, and fails the check.
    #[arg(long, value_name = "FILE", num_args = 1.., required_unless_present_any = ["default_branch", "run_id"])]
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
    /// The repository's default branch (github.event.repository.default_branch). With
    /// --head-sha, the base is the merge-base of the head with it, asked of GitHub's API: the
    /// pull request cannot choose it, and --baseline-rev only cross-checks it.
    #[arg(long, value_name = "BRANCH", requires = "head_sha")]
    pub default_branch: Option<String>,
    /// The benchmark run (github.event.workflow_run.id): a job of it that failed, was cancelled
    /// or timed out, or a run with fewer records than jobs, is a gap in the check.
    #[arg(long, value_name = "ID")]
    pub run_id: Option<u64>,
    /// The benchmark run's conclusion (github.event.workflow_run.conclusion): anything but
    /// success or failure is a gap in the check.
    #[arg(long, value_name = "CONCLUSION")]
    pub run_conclusion: Option<String>,
    /// What a gap (an expected benchmark, record or leg that was not judged) does to the check:
    /// `fail` (default) or `neutral` (the check says why; a reviewer decides).
    #[arg(long, value_name = "fail|neutral", default_value = "fail")]
    pub on_gap: OnGap,
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

/// Where the history dashboard is published: `ci.dashboard-url` (in the decision), else
/// `CONVBENCH_DASHBOARD_URL` (a workflow passes its repository variable through it).
fn dashboard_url() -> Option<String> {
    std::env::var("CONVBENCH_DASHBOARD_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

fn policy(workspace: &Workspace, post: &PostArgs) -> CommentOn {
    post.comment_on.unwrap_or(workspace.config.ci.comment_on)
}

/// The exit code of a finished decision.
fn exit_code(decision: Decision) -> Result<u8> {
    Ok(if decision.finish()? { EXIT_REGRESSION } else { 0 })
}

/// `cargo convbench ci`.
pub fn run_ci(args: &Global, a: &CiArgs) -> Result<u8> {
    if let Some(out) = &a.run.out {
        crate::output::check_writable(out)?;
    }
    let env = ActionsEnv::from_env()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let request = CiRequest {
        results: a.results.clone(),
        // `--ab` is `--mode ab`, and `--ab-base` implies it.
        mode: (a.mode)
            .or(a.ab.then_some(CiMode::Ab))
            .or(a.ab_base.as_ref().map(|_| CiMode::Ab)),
        ab: AbRequest {
            base: a.ab_base.clone(),
            github_base_ref: AbRequest::github_base_ref_from_env(),
            shaders: a.run.device.shaders.clone(),
            selection: a.run.selection.selection(),
            adapter: a.run.device.adapter.clone(),
            pairs: a.pairs,
            first_look: a.first_look,
            warmup_iterations: a.run.warmup,
            warmup_min_ms: a.run.warmup_ms,
            kernels: a.run.kernels.request(),
            layers: a.run.layers,
            ..AbRequest::default()
        },
        budget: a.budget.clone(),
        sweep: a.run.request(),
        source: a.baseline.source(),
        overrides: a.baseline.overrides(),
        out: a.run.out.clone(),
    };
    let parts = request.parts(
        &workspace,
        CiMeasure {
            ab: &mut |ab, config| run_ab(ab, &workspace, config, args.quiet),
            sweep: &mut |sweep, out| run_sweep(sweep, &workspace, args.quiet, out),
            fallback: &mut |e| {
                if !args.quiet {
                    eprintln!("notice: A/B cannot run here ({e}); deciding in baseline mode");
                }
            },
        },
    )?;
    let provided = Provided {
        labels: a.post.labels.clone(),
        dashboard_url: dashboard_url(),
        ..Provided::default()
    };
    let decision = decide(&workspace, &env, provided, parts);
    report(&workspace, a, &env, decision)
}

/// Summary, annotations, notices and the comment of `ci` (see
/// [`convbench::gate::publish::publish_in_actions`]), then its exit code.
fn report(workspace: &Workspace, a: &CiArgs, env: &ActionsEnv, judged: Decision) -> Result<u8> {
    if !env.in_actions {
        print(&judged.body);
        return exit_code(judged);
    }
    let request = ActionsReport {
        set: &a.baseline.set,
        policy: policy(workspace, &a.post),
        comment: !a.no_comment,
        check_run: a.check_run,
    };
    for line in publish_in_actions(workspace, env, &judged, &request, &mut |message| {
        eprintln!("{message}")
    })? {
        print(&line);
    }
    exit_code(judged)
}

/// `cargo convbench comment`.
pub fn run_comment(args: &Global, a: &CommentArgs) -> Result<u8> {
    let run = TrustedRun {
        head_sha: a.head_sha.clone(),
        default_branch: a.default_branch.clone(),
        claimed_base: a.baseline.baseline_rev.clone(),
        run_id: a.run_id,
        run_conclusion: a.run_conclusion.clone(),
    };
    run.check_head_sha()?;
    let env = ActionsEnv::from_env()?;
    let workspace = config::load(args.manifest_path.as_deref())?;
    let request = CommentRequest {
        run,
        results: a.results.clone(),
        source: a.baseline.source(),
        overrides: a.baseline.overrides(),
        run_url: a.run_url.clone(),
        labels: a.post.labels.clone(),
        dashboard_url: dashboard_url(),
        on_gap: a.on_gap,
    };
    let judged = request.decide(&workspace, &env)?;
    if a.dry_run {
        print_untrusted(&judged.body);
        let (conclusion, title) = judged.check();
        eprintln!(
            "check run: {} ({})",
            conclusion.as_str(),
            escape_workflow_data(&title)
        );
        return Ok(0);
    }
    if let Some(path) = &env.step_summary {
        let history = regression_history(&workspace, &a.baseline.set, &judged);
        write_step_summary(path, &judged.job_summary(&history))?;
    }
    let policy = policy(&workspace, &a.post);
    let action = post_comment(&env, a.pr, &judged, policy)?;
    eprintln!("{}", describe(action, policy));
    if a.check_run
        && let Some(head_sha) = &a.head_sha
    {
        let id = create_check(&env, head_sha, a.run_url.clone(), &judged)?;
        eprintln!("created check run {id}");
    }
    // The gate's exit code belongs to the benchmark job; this job reports (an incomparable
    // baseline included, in the comment and the check run) and succeeds when it could.
    Ok(0)
}
