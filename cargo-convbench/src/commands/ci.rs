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

use crate::output::EXIT_REGRESSION;
use crate::output::{print, print_untrusted};
use crate::progress::{run_ab, run_sweep};
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::ci::{CiArgs, CommentArgs, PostArgs};
use convbench::config::{CommentOn, Workspace};
use convbench::gate::ci::CiMeasure;
use convbench::gate::publish::{
    ActionsReport, create_check, describe, post_comment, publish_in_actions, write_summary,
};
use convbench::gate::{Decision, Provided, decide};
use convbench::github::{ActionsEnv, GitHubError, escape_workflow_data};

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
    convbench::baseline::check_set_name(&a.baseline.set)?;
    let env = ActionsEnv::from_env()?;
    let workspace = super::workspace(args)?;
    let request = a.request();
    let judging = request.judging_workspace(&workspace)?;
    let parts = request.parts(
        &judging,
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
    let decision = decide(&judging, &env, provided, parts);
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
    let request = a.request(dashboard_url());
    request.run.check_head_sha()?;
    let env = ActionsEnv::from_env()?;
    let workspace = super::workspace(args)?;
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
    let summary_written = match write_summary(&workspace, &env, &a.baseline.set, &judged) {
        Some(warning) => {
            print(&warning);
            false
        }
        None => env.step_summary.is_some(),
    };
    if env.token.is_none() {
        return Err(GitHubError::NoToken {
            consequence: if summary_written {
                "the job summary was written, but no comment was posted; set GITHUB_TOKEN to a token \
                 with `pull-requests: write`, or pass --dry-run to print the comment"
            } else {
                "nothing was posted or written; set GITHUB_TOKEN to a token with `pull-requests: write`, \
                 or pass --dry-run to print the comment"
            },
        }
        .into());
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
