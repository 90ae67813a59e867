//! `cargo convbench report FILE...`: re-render a saved record, or pivot several.

use crate::output::print;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::report::ReportArgs;

/// Renders the record, or the pivot of the records. Plain `print`, not `print_untrusted`: a
/// dashboard's JSON is meant for `> file`, and no line of pretty JSON can start a workflow
/// command (each opens with a space or a bracket, and JSON escapes line breaks in strings).
pub fn run(_args: &Global, a: &ReportArgs) -> Result<u8> {
    let request = a.request();
    print(&request.render()?);
    // A warning, not a notice: it shows under --quiet too.
    for file in request.unmarked_incomplete() {
        eprintln!(
            "warning: {} comes from an interrupted run: benchmarks or rounds it did not finish \
             are missing, and this format cannot say so",
            file.display()
        );
    }
    Ok(0)
}
