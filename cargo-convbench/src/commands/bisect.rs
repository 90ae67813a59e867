//! `cargo convbench bisect --good REV --bad REV`: the first commit that slowed a benchmark beyond
//! its threshold, by interleaved A/B of each commit tried against `good` (see
//! `convbench::harness::bisect`); nothing is rebuilt. Exit 1 when a slower commit is found, or
//! when the endpoint check could not tell `bad` from `good` (undecided: more `--pairs`); 0
//! when `bad` is not slower than `good`.

use crate::output::EXIT_REGRESSION;
use crate::output::print;
use crate::progress::Progress;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::bisect::BisectArgs;
use convbench::gate::compare_config;
use convbench::harness::bisect;

/// `cargo convbench bisect`.
pub fn run(args: &Global, a: &BisectArgs) -> Result<u8> {
    let workspace = super::workspace(args)?;
    let config = compare_config(&workspace, &a.overrides())?;
    let request = a.request()?;
    let progress = Progress::new(0, args.quiet);
    let mut verified = 0;
    let outcome = bisect::run(
        &request,
        &a.good,
        &a.bad,
        &workspace,
        &config,
        crate::interrupt::install(),
        &mut |event| progress.ab_event(event, &mut verified),
    );
    progress.finish();
    let outcome = outcome?;
    if outcome.bad_undecided() {
        let endpoint = &outcome.steps[0];
        print(&convbench::report::ab_table(
            &endpoint.outcome.description,
            &endpoint.outcome.rows,
        ));
        print(&format!(
            "undecided: the A/B of --bad ({}) against --good could not tell whether it is slower \
             within --pairs {}; nothing was bisected. Run again with more pairs (e.g. --pairs {})",
            &endpoint.commit[..endpoint.commit.len().min(10)],
            a.pairs,
            (a.pairs * 4).min(convbench::config::MAX_PAIRS)
        ));
        return Ok(EXIT_REGRESSION);
    }
    print(&convbench::report::bisect_text(&outcome));
    Ok(if outcome.first_slow.is_some() {
        EXIT_REGRESSION
    } else {
        0
    })
}
