//! Flags of `cargo convbench ci`.

use crate::cli::{BaselineArgs, RunArgs};
use crate::config::{self, CiMode, CommentOn};
use crate::gate::OnGap;
use crate::gate::ci::{CiRequest, CommentRequest};
use crate::gate::expect::TrustedRun;
use crate::harness::ab::{AbRequest, DEFAULT_PAIRS, FIRST_LOOK};
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
    /// Saved records to judge (one per runner) in baseline mode; without them, the benchmarks
    /// run now (the flags that shape a run or an A/B comparison are then refused).
    #[arg(
        long,
        value_name = "FILE",
        num_args = 1..,
        conflicts_with_all = crate::cli::FRESH_RUN_FLAGS,
        conflicts_with_all = ["mode", "pairs", "first_look", "budget", "time_identical"]
    )]
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
    #[arg(long, default_value_t = DEFAULT_PAIRS, allow_negative_numbers = true, value_parser = crate::cli::count::<1, { config::MAX_PAIRS }>)]
    pub pairs: usize,
    /// Pairs before the first look at the verdict in A/B mode; `--first-look N --pairs N`
    /// takes exactly N pairs.
    #[arg(long, value_name = "PAIRS", default_value_t = FIRST_LOOK, allow_negative_numbers = true, value_parser = crate::cli::count::<1, { config::MAX_PAIRS }>)]
    pub first_look: usize,
    /// Time for the A/B comparison, e.g. `5m` or `90s`. Default: the config's `ci.budget`,
    /// else 5 minutes.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// In A/B mode, time a benchmark whose every op runs the same code on both sides too (an
    /// A/A run, which measures the runner's false alarms); without it such a benchmark is "no
    /// change", not timed.
    #[arg(long)]
    pub time_identical: bool,
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
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::count_u64::<1, { u64::MAX }>)]
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

impl CiArgs {
    /// The library's request of the gate: `--ab` is `--mode ab`, and `--ab-base` implies it;
    /// A/B mode measures what `--model`, `--kernel` and the other run flags select.
    pub fn request(&self) -> CiRequest {
        CiRequest {
            results: self.results.clone(),
            mode: (self.mode)
                .or(self.ab.then_some(CiMode::Ab))
                .or(self.ab_base.as_ref().map(|_| CiMode::Ab)),
            ab: AbRequest {
                base: self.ab_base.clone(),
                github_base_ref: AbRequest::github_base_ref_from_env(),
                shaders: self.run.device.shaders.clone(),
                selection: self.run.selection.selection(),
                adapter: self.run.device.adapter.clone(),
                pairs: self.pairs,
                first_look: self.first_look,
                warmup_iterations: self.run.warmup,
                warmup_min_ms: self.run.warmup_ms,
                kernels: self.run.kernels.request(),
                layers: self.run.layers,
                time_identical: self.time_identical,
                ..AbRequest::default()
            },
            budget: self.budget.clone(),
            sweep: self.run.request(),
            source: self.baseline.source(),
            overrides: self.baseline.overrides(),
            out: self.run.out.clone(),
        }
    }
}

impl CommentArgs {
    /// The library's request of the `comment` job. What the run was (head commit, base
    /// branch, run id and conclusion) comes from the `workflow_run` event's flags, never from a
    /// record; `--baseline-rev` only becomes the base the records claim.
    pub fn request(&self, dashboard_url: Option<String>) -> CommentRequest {
        CommentRequest {
            run: TrustedRun {
                head_sha: self.head_sha.clone(),
                default_branch: self.default_branch.clone(),
                claimed_base: self.baseline.baseline_rev.clone(),
                run_id: self.run_id,
                run_conclusion: self.run_conclusion.clone(),
            },
            results: self.results.clone(),
            source: self.baseline.source(),
            overrides: self.baseline.overrides(),
            run_url: self.run_url.clone(),
            labels: self.post.labels.clone(),
            dashboard_url,
            on_gap: self.on_gap,
        }
    }
}
