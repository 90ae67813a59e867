//! Publishing a [`Decision`]: the sticky pull-request comment and the `convbench` check run,
//! through GitHub's API.

use super::Decision;
use crate::config::CommentOn;
use crate::github::{
    ActionsEnv, CheckRun, CommentAction, GithubApi, Repository, create_check_run, post_or_update_comment,
    update_comment_if_present,
};
use crate::{Error, Result};

/// The repository of the job, or what to set.
fn repository(env: &ActionsEnv) -> Result<&Repository> {
    env.repository.as_ref().ok_or_else(|| {
        Error::Environment(
            "GITHUB_REPOSITORY is not set; run inside GitHub Actions or set it to owner/repo".into(),
        )
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
