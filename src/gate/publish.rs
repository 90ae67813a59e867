//! Publishing a [`Decision`]: the sticky pull-request comment and the `convbench` check run,
//! through GitHub's API.

use super::{Decision, regression_history};
use crate::config::{CommentOn, Workspace};
use crate::github::{
    ActionsEnv, CheckRun, CommentAction, GithubApi, Repository, annotations, create_check_run,
    escape_workflow_data, post_or_update_comment, update_comment_if_present, write_step_summary,
};
use crate::{Error, Result};

/// The repository of the job, or what to set.
fn repository(env: &ActionsEnv) -> Result<&Repository> {
    env.repository.as_ref().ok_or_else(|| {
        Error::from(super::GateError::NoRepository {
            next: "run inside GitHub Actions or set it to owner/repo",
        })
    })
}

/// Posts or updates the comment of pull request `pr` as `policy` asks: a new comment only when
/// the decision wants one, an existing convbench comment always updated.
pub fn post_comment(
    env: &ActionsEnv,
    pr: u64,
    decision: &Decision,
    policy: CommentOn,
) -> Result<Option<CommentAction>> {
    let repository = repository(env)?;
    let api = GithubApi::from_env(env);
    if decision.wants_new_comment(policy) {
        post_or_update_comment(&api, &repository.owner, &repository.name, pr, &decision.body).map(Some)
    } else {
        update_comment_if_present(&api, &repository.owner, &repository.name, pr, &decision.body)
    }
}

/// What a comment action did, for the log.
pub fn describe(action: Option<CommentAction>, policy: CommentOn) -> String {
    match action {
        Some(CommentAction::Created(id)) => format!("created PR comment {id}"),
        Some(CommentAction::Updated(id)) => format!("updated PR comment {id}"),
        None => format!(
            "no PR comment: nothing to report under comment-on = {}",
            policy.as_str()
        ),
    }
}

/// Creates the `convbench` check run on `head_sha` with the decision's conclusion and title
/// and the comment as its summary; returns its id.
pub fn create_check(
    env: &ActionsEnv,
    head_sha: &str,
    details_url: Option<String>,
    decision: &Decision,
) -> Result<u64> {
    let repository = repository(env)?;
    let (conclusion, title) = decision.check();
    let check = CheckRun {
        name: "convbench".to_string(),
        head_sha: head_sha.to_string(),
        conclusion,
        title,
        summary: decision.body.clone(),
        details_url,
    };
    create_check_run(
        &GithubApi::from_env(env),
        &repository.owner,
        &repository.name,
        &check,
    )
}

/// What `ci` publishes from inside Actions.
#[derive(Debug, Clone)]
pub struct ActionsReport<'a> {
    /// The baseline set (for the blessed history of each regression in the job summary).
    pub set: &'a str,
    /// When a comment is posted.
    pub policy: CommentOn,
    /// Whether to post or update the comment (`--no-comment` turns it off).
    pub comment: bool,
    /// Whether to create the `convbench` check run.
    pub check_run: bool,
}

/// Writes the job summary (with the blessed history of every regressed benchmark) when
/// `GITHUB_STEP_SUMMARY` names a file; a file that cannot be written gives the `::warning`
/// workflow command to print instead of an error: the summary never decides the gate, so it
/// must not replace the gate's exit code.
pub fn write_summary(
    workspace: &Workspace,
    env: &ActionsEnv,
    set: &str,
    judged: &Decision,
) -> Option<String> {
    let path = env.step_summary.as_ref()?;
    let history = regression_history(workspace, set, judged);
    write_step_summary(path, &judged.job_summary(&history))
        .err()
        .map(|e| {
            format!(
                "::warning title=convbench summary::{}",
                escape_workflow_data(&e.to_string())
            )
        })
}

/// `ci` inside GitHub Actions: writes the job summary (with the blessed history of every
/// regressed benchmark), then returns the workflow commands to print (annotations, notices,
/// and warnings for a comment or check run that could not be made); posts or updates the
/// comment (a fork's token cannot: a notice says `comment.yml` does it) and creates the check
/// run when asked. `on_message` hears what was done, for the log.
pub fn publish_in_actions(
    workspace: &Workspace,
    env: &ActionsEnv,
    judged: &Decision,
    request: &ActionsReport<'_>,
    on_message: &mut dyn FnMut(String),
) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    if let Some(warning) = write_summary(workspace, env, request.set, judged) {
        lines.push(warning);
    }
    lines.extend(judged.pairs.iter().flat_map(|(_, c)| annotations(c)));
    for note in &judged.notes {
        lines.push(format!(
            "::notice title=convbench::{}",
            escape_workflow_data(note)
        ));
    }
    if let Some(label) = &judged.accepted_by {
        lines.push(format!(
            "::notice title=convbench::regressions accepted by the pull request label {}",
            escape_workflow_data(label)
        ));
    }
    let policy = request.policy;
    match (&env.pull_request, request.comment) {
        (Some(pr), true) if pr.is_fork => lines.push(
            "::notice title=convbench::pull request from a fork: its token cannot comment; the comment.yml \
             workflow (workflow_run) posts it"
                .to_string(),
        ),
        (Some(pr), true) => match post_comment(env, pr.number, judged, policy) {
            Ok(action) => on_message(describe(action, policy)),
            Err(e) => lines.push(format!(
                "::warning title=convbench comment::{}",
                escape_workflow_data(&e.to_string())
            )),
        },
        _ => {}
    }
    if request.check_run {
        let head = env
            .pull_request
            .as_ref()
            .map(|pr| pr.head_sha.clone())
            .or_else(|| env.sha.clone());
        match head {
            Some(head_sha) => match create_check(env, &head_sha, env.run_url(), judged) {
                Ok(id) => on_message(format!("created check run {id}")),
                Err(e) => lines.push(format!(
                    "::warning title=convbench check run::{}",
                    escape_workflow_data(&e.to_string())
                )),
            },
            None => lines.push(
                "::warning title=convbench check run::no head commit (GITHUB_SHA) to put the check run on"
                    .to_string(),
            ),
        }
    }
    Ok(lines)
}
