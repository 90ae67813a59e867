//! The Markdown of the sticky pull-request comment: one comment for a whole runner matrix.

use crate::compare::{Comparison, PhaseComparison, Verdict};
use crate::results::{AdapterFingerprint, RunRecord, TimingMethod};

/// Hidden first line of the comment; [`super::post_or_update_comment`] finds the comment to
/// update by it.
pub const COMMENT_MARKER: &str = "<!-- convbench-comment -->";

/// Longest comment body [`comment_body`] produces, in UTF-8 bytes. GitHub refuses bodies over
/// 65,536 characters; a character is at least one byte, so a body within this many bytes is
/// within GitHub's limit however GitHub counts.
pub const MAX_COMMENT_BYTES: usize = 65_536;

/// Longest job summary [`job_summary`] produces, in UTF-8 bytes: GitHub's limit for the summary
/// of one step (1 MiB). Larger summaries are not shown at all.
pub const MAX_STEP_SUMMARY_BYTES: usize = 1024 * 1024;

/// The most of [`MAX_STEP_SUMMARY_BYTES`] that the appendix of [`job_summary`] may take; the
/// rest is the tables'.
const MAX_APPENDIX_BYTES: usize = MAX_STEP_SUMMARY_BYTES / 4;

/// Commits of the comparison and where the full results are, for the comment's footer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommentContext {
    /// Commit of the base (the baseline's revision).
    pub base_sha: Option<String>,
    /// Head commit of the pull request, used for sections whose record has no commit.
    pub head_sha: Option<String>,
    /// Web page of the workflow run (job summary and artifacts), linked from the truncation
    /// note and from the footer. Only a plain `http(s)` URL is linked; anything else is left
    /// out.
    pub run_url: Option<String>,
    /// How the verdicts were reached, e.g. `baseline mode: the baselines blessed at 1a2b3c4`;
    /// shown under the verdict lines. Trusted text (written by convbench), escaped anyway.
    pub mode: Option<String>,
    /// How rows were timed where their section's records do not say (A/B mode).
    pub timing: Option<TimingMethod>,
    /// Where the numbers come from, e.g. that they were measured by the pull request's own
    /// workflow run; escaped.
    pub provenance: Option<String>,
    /// Notes for the reader (missing baselines, baselines edited in the pull request). They
    /// may quote record content, so every one is escaped; they count towards the size cap.
    pub notes: Vec<String>,
    /// The pull-request label that accepted a failing gate, when one did.
    pub accepted_by_label: Option<String>,
    /// Failing regressions accepted one by one: each benchmark id with the label
    /// (`<accept-label>:<glob>`) that accepted it; escaped.
    pub waived: Vec<(String, String)>,
    /// What was expected and not judged (a missing runner or benchmark, an incomplete record, a
    /// failed leg), each a sentence; shown first under the verdicts, escaped.
    pub gaps: Vec<String>,
    /// GitHub logins or `org/team`s to mention when the gate fails (from the trusted
    /// configuration, checked with [`crate::config::is_login_or_team`]; others are dropped).
    pub mentions: Vec<String>,
    /// The published history dashboard (`ci.dashboard-url`), linked under the verdicts. Only an
    /// `https://` URL of plain characters is linked ([`crate::config::is_https_url`]); anything
    /// else is left out.
    pub dashboard_url: Option<String>,
}

/// The rows of one adapter, with what identifies it, as one section of the comment.
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterSection {
    /// Heading, e.g. `NVIDIA H100 (vulkan)`; distinct per section.
    pub adapter_label: String,
    /// The full fingerprint, when a current benchmark was measured on the adapter (a section of
    /// only missing benchmarks has none).
    pub fingerprint: Option<AdapterFingerprint>,
    /// How the current benchmarks of this adapter were timed, each method once, in record order.
    pub timing_methods: Vec<TimingMethod>,
    /// Git commit of the record the rows come from, when the record knows it.
    pub commit: Option<String>,
    /// The rows of this adapter and the configuration they were compared with.
    pub comparison: Comparison,
}

/// What a section is grouped by: the exact adapter fingerprint, or for rows without a current
/// benchmark (missing ones), the adapter label.
#[derive(PartialEq)]
enum SectionKey {
    Fingerprint(AdapterFingerprint),
    Label(String),
}

/// Groups the rows of several comparisons (one per runner of a matrix, each with the record it
/// compared) into one section per adapter, in the order adapters first appear.
///
/// A row belongs to the adapter of its current benchmark; a missing row (baseline only) joins
/// the section of the same record whose label it carries, else a section of its own. Rows from
/// two records on the same adapter share a section. When two fingerprints share a label
/// (same GPU, another driver), their headings get the driver appended so that they stay
/// distinct.
pub fn sections_from<'a>(
    records_and_comparisons: impl IntoIterator<Item = (&'a RunRecord, &'a Comparison)>,
) -> Vec<AdapterSection> {
    let mut sections: Vec<(SectionKey, AdapterSection)> = Vec::new();
    for (record, comparison) in records_and_comparisons {
        for benchmark in &record.benchmarks {
            let index = section_index(&mut sections, &benchmark.adapter, record, comparison);
            let timing = &mut sections[index].1.timing_methods;
            if !timing.contains(&benchmark.timing_method) {
                timing.push(benchmark.timing_method);
            }
        }
        for row in &comparison.rows {
            let current = record.benchmarks.iter().find(|b| b.id == row.benchmark_id);
            let index = match current {
                Some(benchmark) => section_index(&mut sections, &benchmark.adapter, record, comparison),
                None => label_section_index(&mut sections, &row.adapter_label, record, comparison),
            };
            sections[index].1.comparison.rows.push(row.clone());
        }
    }
    let mut sections: Vec<AdapterSection> = sections.into_iter().map(|(_, section)| section).collect();
    disambiguate_labels(&mut sections);
    sections
}

/// The section of `adapter`, created (empty, with `comparison`'s configuration) if new.
fn section_index(
    sections: &mut Vec<(SectionKey, AdapterSection)>,
    adapter: &AdapterFingerprint,
    record: &RunRecord,
    comparison: &Comparison,
) -> usize {
    let existing = sections
        .iter()
        .position(|(key, _)| matches!(key, SectionKey::Fingerprint(known) if known == adapter));
    if let Some(index) = existing {
        return index;
    }
    sections.push((
        SectionKey::Fingerprint(adapter.clone()),
        empty_section(adapter.label(), Some(adapter.clone()), record, comparison),
    ));
    sections.len() - 1
}

/// The section a row without a current benchmark belongs to: one of this record's adapters
/// with that label, else a label-only section.
fn label_section_index(
    sections: &mut Vec<(SectionKey, AdapterSection)>,
    label: &str,
    record: &RunRecord,
    comparison: &Comparison,
) -> usize {
    let of_this_record = record
        .benchmarks
        .iter()
        .find(|benchmark| benchmark.adapter.label() == label)
        .map(|benchmark| &benchmark.adapter);
    if let Some(adapter) = of_this_record {
        return section_index(sections, adapter, record, comparison);
    }
    let key = SectionKey::Label(label.to_string());
    if let Some(index) = sections.iter().position(|(k, _)| *k == key) {
        return index;
    }
    sections.push((key, empty_section(label.to_string(), None, record, comparison)));
    sections.len() - 1
}

fn empty_section(
    adapter_label: String,
    fingerprint: Option<AdapterFingerprint>,
    record: &RunRecord,
    comparison: &Comparison,
) -> AdapterSection {
    AdapterSection {
        adapter_label,
        fingerprint,
        timing_methods: Vec::new(),
        commit: record.git_commit.clone(),
        comparison: Comparison {
            rows: Vec::new(),
            config: comparison.config.clone(),
            kernel_changes: Vec::new(),
            current_incomplete: comparison.current_incomplete,
        },
    }
}

/// Appends the driver to labels shared by sections with different fingerprints.
fn disambiguate_labels(sections: &mut [AdapterSection]) {
    let labels: Vec<String> = sections.iter().map(|s| s.adapter_label.clone()).collect();
    for (index, section) in sections.iter_mut().enumerate() {
        let shared = labels
            .iter()
            .enumerate()
            .any(|(other, label)| other != index && *label == labels[index]);
        if let (true, Some(fingerprint)) = (shared, &section.fingerprint) {
            section.adapter_label = format!(
                "{}, driver {} {}",
                section.adapter_label, fingerprint.driver, fingerprint.driver_info
            )
            .trim_end()
            .to_string();
        }
    }
}

/// The whole comment: [`COMMENT_MARKER`], a verdict line per adapter, then per adapter a table
/// of regressions and improvements, the other rows folded in `<details>`, and the adapter's
/// fingerprint, the commits compared and the timing method.
///
/// At most [`MAX_COMMENT_BYTES`]: over that, table rows are dropped from the end (the folded
/// rows of the last adapter first; regressions and improvements last) and a line says how many
/// rows are not shown and where to find them. The verdict lines always count every row.
pub fn comment_body(sections: &[AdapterSection], context: &CommentContext) -> String {
    Layout::new(sections, context, Target::Comment).fit(MAX_COMMENT_BYTES)
}

/// The job summary (`$GITHUB_STEP_SUMMARY`) of the same results: the comment's verdict lines,
/// notes and tables, without the marker, with as many rows as fit in GitHub's
/// [`MAX_STEP_SUMMARY_BYTES`] (1 MiB, where the comment has 64 KiB), then `appendix` (Markdown
/// the caller adds after the tables, e.g. the blessed history of the regressed benchmarks;
/// cut at a line to a quarter of the limit when longer).
///
/// Rows are dropped as in [`comment_body`] (other rows of the last adapter first, regressions
/// and improvements last), and a line says how many are not shown and how to see every row
/// (`cargo convbench report` on the records). The summary never refers the reader to the job
/// summary: it is the job summary.
pub fn job_summary(sections: &[AdapterSection], context: &CommentContext, appendix: &str) -> String {
    let appendix = cap_appendix(appendix);
    let layout = Layout::new(sections, context, Target::JobSummary);
    let mut summary = layout.fit(MAX_STEP_SUMMARY_BYTES - appendix.len());
    summary.push_str(&appendix);
    summary
}

/// `appendix` cut at the end of a line to [`MAX_APPENDIX_BYTES`], with a line saying so.
fn cap_appendix(appendix: &str) -> String {
    const NOTE: &str = "\n… the rest was cut to keep the job summary within GitHub's 1 MiB.\n";
    if appendix.len() <= MAX_APPENDIX_BYTES {
        return appendix.to_string();
    }
    let mut end = MAX_APPENDIX_BYTES - NOTE.len();
    while !appendix.is_char_boundary(end) {
        end -= 1;
    }
    let end = appendix[..end].rfind('\n').map_or(0, |at| at + 1);
    format!("{}{NOTE}", &appendix[..end])
}

/// Cuts `text` (at a character boundary) so that it and `note` fit in `max_bytes`; only
/// reached with absurdly many adapters.
fn hard_truncate(text: &str, note: &str, max_bytes: usize) -> String {
    let budget = max_bytes.saturating_sub(note.len() + 2);
    let mut end = budget.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n\n{note}", &text[..end])
}

/// Where a rendering goes: the two differ in the marker, and in where they send the reader
/// for what they leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The sticky pull-request comment ([`comment_body`]).
    Comment,
    /// The job summary ([`job_summary`]).
    JobSummary,
}

/// The comment pre-rendered into pieces, so that rendering with fewer rows is cheap.
struct Layout {
    summary_lines: Vec<String>,
    /// Lines between the verdicts and the sections: mode, provenance, acceptance, mentions,
    /// notes. Always shown; counted in the cap like everything else.
    preamble: Vec<String>,
    sections: Vec<SectionLayout>,
    run_url: Option<String>,
    target: Target,
}

struct SectionLayout {
    heading: String,
    /// Regression and improvement rows.
    notable_rows: Vec<String>,
    /// Every other row, worst verdict first.
    other_rows: Vec<String>,
    /// `<summary>` text of the folded rows.
    other_summary: String,
    /// Whether the section has no rows at all.
    empty: bool,
    footer: Vec<String>,
}

const TABLE_HEADER: &str = "| benchmark | phase | baseline | current | change | 95% CI | verdict |\n\
                            | --- | --- | ---: | ---: | ---: | ---: | --- |\n";

impl Layout {
    fn new(sections: &[AdapterSection], context: &CommentContext, target: Target) -> Self {
        Self {
            summary_lines: sections.iter().map(summary_line).collect(),
            preamble: preamble(sections, context, target),
            sections: sections.iter().map(|s| SectionLayout::new(s, context)).collect(),
            run_url: context
                .run_url
                .as_deref()
                .filter(|url| is_plain_url(url))
                .map(str::to_string),
            target,
        }
    }

    /// The rendering with as many rows as fit in `max_bytes`.
    fn fit(&self, max_bytes: usize) -> String {
        let total = self.row_count();
        let full = self.render(total);
        if full.len() <= max_bytes {
            return full;
        }
        let bare = self.render(0);
        if bare.len() > max_bytes {
            return hard_truncate(&bare, &self.truncation_note(total), max_bytes);
        }
        // Invariant: `fits` rows fit, `too_many` rows do not. The length grows with the rows kept.
        let (mut fits, mut too_many) = (0, total);
        while too_many - fits > 1 {
            let middle = fits + (too_many - fits) / 2;
            if self.render(middle).len() <= max_bytes {
                fits = middle;
            } else {
                too_many = middle;
            }
        }
        self.render(fits)
    }

    fn row_count(&self) -> usize {
        self.sections
            .iter()
            .map(|s| s.notable_rows.len() + s.other_rows.len())
            .sum()
    }

    /// The comment with the first `keep` rows in priority order: every section's notable rows
    /// (in section order), then every section's other rows.
    fn render(&self, keep: usize) -> String {
        let notable_total: usize = self.sections.iter().map(|s| s.notable_rows.len()).sum();
        let mut notable_budget = keep.min(notable_total);
        let mut other_budget = keep - notable_budget;
        let mut out = String::new();
        if self.target == Target::Comment {
            out.push_str(COMMENT_MARKER);
            out.push('\n');
        }
        out.push_str("## convbench\n\n");
        if self.sections.is_empty() {
            out.push_str("No benchmark results to compare.\n");
        }
        for line in &self.summary_lines {
            out.push_str("- ");
            out.push_str(line);
            out.push('\n');
        }
        for line in &self.preamble {
            out.push('\n');
            out.push_str(line);
            out.push('\n');
        }
        for section in &self.sections {
            let notable = section.notable_rows.len().min(notable_budget);
            notable_budget -= notable;
            let other = section.other_rows.len().min(other_budget);
            other_budget -= other;
            section.render(&mut out, notable, other);
        }
        let hidden = self.row_count() - keep;
        if hidden > 0 {
            out.push('\n');
            out.push_str(&self.truncation_note(hidden));
            out.push('\n');
        }
        out
    }

    fn truncation_note(&self, hidden: usize) -> String {
        let rows = if hidden == 1 { "row" } else { "rows" };
        match self.target {
            Target::Comment => {
                let summary = match &self.run_url {
                    Some(url) => format!("[job summary]({url})"),
                    None => "job summary".to_string(),
                };
                format!("… {hidden} more {rows} not shown (see the {summary} / artifacts)")
            }
            Target::JobSummary => {
                let records = match &self.run_url {
                    Some(url) => format!("the records uploaded by [the benchmark run]({url})"),
                    None => "the records".to_string(),
                };
                format!(
                    "… {hidden} more {rows} not shown, over GitHub's limit of 1 MiB for a job summary; \
                     `cargo convbench report` on {records} lists every row."
                )
            }
        }
    }
}

impl SectionLayout {
    fn new(section: &AdapterSection, context: &CommentContext) -> Self {
        let rows = &section.comparison.rows;
        let is_notable =
            |row: &&PhaseComparison| matches!(row.verdict, Verdict::Regression | Verdict::Improvement);
        let mut notable: Vec<&PhaseComparison> = rows.iter().filter(is_notable).collect();
        notable.sort_by_key(|row| verdict_rank(row.verdict));
        let mut other: Vec<&PhaseComparison> = rows.iter().filter(|row| !is_notable(row)).collect();
        other.sort_by_key(|row| verdict_rank(row.verdict));
        let other_summary = format!(
            "{} other {}: {}",
            other.len(),
            if other.len() == 1 { "row" } else { "rows" },
            verdict_counts(other.iter().copied()).join(", ")
        );
        Self {
            heading: escape_markdown(&section.adapter_label),
            notable_rows: notable
                .into_iter()
                .map(|row| table_row(row, section.comparison.fails_gate(row)))
                .collect(),
            other_rows: other
                .into_iter()
                .map(|row| table_row(row, section.comparison.fails_gate(row)))
                .collect(),
            other_summary,
            empty: rows.is_empty(),
            footer: footer(section, context),
        }
    }

    fn render(&self, out: &mut String, notable: usize, other: usize) {
        out.push_str("\n### ");
        out.push_str(&self.heading);
        out.push_str("\n\n");
        if self.empty {
            out.push_str("No benchmarks were compared on this adapter.\n");
        } else if self.notable_rows.is_empty() {
            out.push_str("No regression or improvement beyond the threshold.\n");
        }
        if notable > 0 {
            out.push_str(TABLE_HEADER);
            for row in &self.notable_rows[..notable] {
                out.push_str(row);
            }
        }
        if other > 0 {
            out.push_str("\n<details>\n<summary>");
            out.push_str(&self.other_summary);
            out.push_str("</summary>\n\n");
            out.push_str(TABLE_HEADER);
            for row in &self.other_rows[..other] {
                out.push_str(row);
            }
            out.push_str("\n</details>\n");
        }
        out.push('\n');
        for line in &self.footer {
            out.push_str("- ");
            out.push_str(line);
            out.push('\n');
        }
    }
}

/// The lines under the verdicts: how the verdict was reached, where the numbers come from,
/// an accepting label, mentions (only when the gate fails), then the notes.
fn preamble(sections: &[AdapterSection], context: &CommentContext, target: Target) -> Vec<String> {
    // What was not judged comes first: the verdicts above cover only what was.
    let mut lines: Vec<String> = context
        .gaps
        .iter()
        .map(|gap| format!("❌ **Not judged:** {}", escape_markdown(gap)))
        .collect();
    if let Some(mode) = &context.mode {
        lines.push(format!("Decided by {}.", escape_markdown(mode)));
    }
    if let Some(provenance) = &context.provenance {
        lines.push(escape_markdown(provenance));
    }
    if let Some(url) = context.run_url.as_deref().filter(|url| is_plain_url(url)) {
        lines.push(match target {
            Target::Comment => format!(
                "Measured in [this workflow run]({url}); its job summary shows the blessed history of \
                 every regressed benchmark."
            ),
            Target::JobSummary => format!("Measured in [the benchmark run]({url})."),
        });
    }
    if let Some(url) = context
        .dashboard_url
        .as_deref()
        .filter(|url| crate::config::is_https_url(url))
    {
        lines.push(format!(
            "Every benchmark's blessed history, with its change points: [the convbench dashboard]({url})."
        ));
    }
    for (id, label) in &context.waived {
        lines.push(format!(
            "✅ **Accepted:** {} by the label \"{}\"",
            escape_markdown(id),
            escape_markdown(label)
        ));
    }
    let gate_fails = !context.gaps.is_empty() || sections.iter().any(|s| s.comparison.gate_fails());
    if let Some(label) = &context.accepted_by_label {
        lines.push(format!(
            "✅ **Accepted:** the pull request carries the label \"{}\", so the regressions \
             above do not fail the gate.",
            escape_markdown(label)
        ));
    } else if gate_fails {
        let mentions: Vec<String> = context
            .mentions
            .iter()
            .filter(|name| crate::config::is_login_or_team(name))
            .map(|name| format!("@{name}"))
            .collect();
        if !mentions.is_empty() {
            lines.push(format!("cc {}", mentions.join(" ")));
        }
    }
    for note in &context.notes {
        lines.push(format!("> **Note:** {}", escape_markdown(note)));
    }
    lines
}

/// Position of a verdict in report order (worst first).
fn verdict_rank(verdict: Verdict) -> usize {
    Verdict::ALL
        .iter()
        .position(|v| *v == verdict)
        .unwrap_or(Verdict::ALL.len())
}

/// The verdict line of a section, e.g. `🔴 **2 regressions**, 1 inconclusive, 41 unchanged on
/// NVIDIA H100 (vulkan)`.
fn summary_line(section: &AdapterSection) -> String {
    let comparison = &section.comparison;
    let icon = if comparison.failing_regressions() > 0 {
        "🔴"
    } else if comparison.has_regression() {
        // Regressions under the fail threshold: an alert, the gate passes.
        "🟠"
    } else if [Verdict::Inconclusive, Verdict::Incomparable, Verdict::Missing]
        .iter()
        .any(|v| comparison.count(*v) > 0)
    {
        "🟡"
    } else {
        "🟢"
    };
    let mut counts = verdict_counts(comparison.rows.iter());
    if comparison.has_regression() {
        // Counts are worst first, so the regressions lead.
        counts[0] = format!("**{}**", counts[0]);
    }
    let counts = if counts.is_empty() {
        "no benchmarks compared".to_string()
    } else {
        counts.join(", ")
    };
    format!("{icon} {counts} on {}", escape_markdown(&section.adapter_label))
}

/// `["2 regressions", "1 inconclusive", "41 unchanged"]`: the non-zero counts, worst first.
fn verdict_counts<'a>(rows: impl Iterator<Item = &'a PhaseComparison>) -> Vec<String> {
    let mut counts = [0usize; Verdict::ALL.len()];
    for row in rows {
        if let Some(slot) = counts.get_mut(verdict_rank(row.verdict)) {
            *slot += 1;
        }
    }
    Verdict::ALL
        .iter()
        .zip(counts)
        .filter(|(_, count)| *count > 0)
        .map(|(verdict, count)| format!("{count} {}", verdict_word(*verdict, count)))
        .collect()
}

fn verdict_word(verdict: Verdict, count: usize) -> &'static str {
    let plural = count != 1;
    match verdict {
        Verdict::Regression if plural => "regressions",
        Verdict::Regression => "regression",
        Verdict::Improvement if plural => "improvements",
        Verdict::Improvement => "improvement",
        Verdict::NoChange => "unchanged",
        Verdict::Inconclusive => "inconclusive",
        Verdict::New => "new",
        Verdict::Missing => "missing",
        Verdict::Incomparable => "incomparable",
    }
}

/// One table row, every cell escaped. `fails_gate`: whether a regression fails the gate
/// (else it is an alert under the fail threshold).
fn table_row(row: &PhaseComparison, fails_gate: bool) -> String {
    let duration = |ns: Option<f64>| ns.map_or_else(|| "–".to_string(), format_duration_ns);
    let change = row.change.map_or_else(|| "–".to_string(), format_change);
    let ci = row.ci.map_or_else(
        || "–".to_string(),
        |(low, high)| format!("{} to {}", format_change(low), format_change(high)),
    );
    let verdict = match row.verdict {
        Verdict::Regression if fails_gate => "🔴 regression".to_string(),
        Verdict::Regression => "🟠 regression (alert, under the fail threshold)".to_string(),
        Verdict::Improvement => "🟢 improvement".to_string(),
        Verdict::Inconclusive => "🟡 inconclusive".to_string(),
        Verdict::Incomparable => format!("incomparable: {}", escape_markdown(&row.adapter_label)),
        other => other.as_str().to_string(),
    };
    format!(
        "| {} | {} | {} | {} | {change} | {ci} | {verdict} |\n",
        escape_markdown(&row.benchmark_id),
        row.phase.label(),
        duration(row.baseline_median_ns),
        duration(row.current_median_ns),
    )
}

/// The lines closing a section: adapter fingerprint, commits compared, timing and threshold.
fn footer(section: &AdapterSection, context: &CommentContext) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(fingerprint) = &section.fingerprint {
        lines.push(format!("Adapter: {}", describe_fingerprint(fingerprint)));
    }
    let head = section.commit.as_ref().or(context.head_sha.as_ref());
    match (&context.base_sha, head) {
        (Some(base), Some(head)) => lines.push(format!("Commits: {}..{}", short_sha(base), short_sha(head))),
        (None, Some(head)) => lines.push(format!("Commit: {}", short_sha(head))),
        (Some(base), None) => lines.push(format!("Baseline commit: {}", short_sha(base))),
        (None, None) => {}
    }
    let timing = if section.timing_methods.is_empty() {
        context.timing.map_or("unknown", TimingMethod::as_str).to_string()
    } else {
        section
            .timing_methods
            .iter()
            .map(|method| method.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let fail = section
        .comparison
        .config
        .fail_threshold
        .map(|fail| format!(", fail threshold {:.1}%", fail * 100.0))
        .unwrap_or_default();
    lines.push(format!(
        "Timing: {timing}; threshold {:.1}%{fail}, false discovery rate {:.1}%",
        section.comparison.config.threshold * 100.0,
        section.comparison.config.alpha * 100.0
    ));
    lines
}

/// `NVIDIA H100 · vulkan · discrete · PCI 10de:2330 · driver NVIDIA 550.54 · runtime 30.0.1`,
/// empty fields left out, everything escaped.
fn describe_fingerprint(fingerprint: &AdapterFingerprint) -> String {
    let driver = format!("{} {}", fingerprint.driver, fingerprint.driver_info);
    let mut parts: Vec<String> = [&fingerprint.name, &fingerprint.backend, &fingerprint.device_type]
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .map(|part| escape_markdown(part.trim()))
        .collect();
    parts.push(format!(
        "PCI {:04x}:{:04x}",
        fingerprint.vendor_id, fingerprint.device_id
    ));
    if !driver.trim().is_empty() {
        parts.push(format!("driver {}", escape_markdown(driver.trim())));
    }
    if !fingerprint.runtime_version.trim().is_empty() {
        parts.push(format!(
            "runtime {}",
            escape_markdown(fingerprint.runtime_version.trim())
        ));
    }
    parts.join(" · ")
}

/// The first seven characters of a commit, escaped.
fn short_sha(sha: &str) -> String {
    escape_markdown(&sha.chars().take(7).collect::<String>())
}

/// Whether `url` can go into a Markdown link as it is: `http(s)://` and only characters that
/// cannot end the link or start markup.
fn is_plain_url(url: &str) -> bool {
    crate::config::is_plain_url(url, &["https://", "http://"])
}

/// A duration for people: `850 ns`, `12.34 µs`, `1.50 ms`, `2.345 s`.
pub fn format_duration_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "n/a".to_string()
    } else if ns.abs() < 1e3 {
        format!("{ns:.0} ns")
    } else if ns.abs() < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns.abs() < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// A relative change as a signed percentage with one decimal: `0.123` is `+12.3%`.
pub fn format_change(change: f64) -> String {
    format!("{:+.1}%", change * 100.0)
}

/// Makes text from a record (benchmark ids, adapter and driver names, commits) inert in GitHub
/// Markdown, in tables, headings and list items:
///
/// - `&`, `<`, `>` become entities, so no HTML tag (`<img>`, `<details>`) can open;
/// - Markdown punctuation `\`, `` ` ``, `*`, `_`, `~`, `[`, `]`, `|`, `$` is backslash-escaped,
///   so no code span, emphasis, link, table cell or math can start;
/// - `@` and `#` are followed by a zero-width space, so `@someone` mentions nobody and `#123`,
///   `owner/repo#5` refer to no issue; so is the `GH` of `GH-123`;
/// - bare URLs cannot become links: a zero-width space goes after the `:` of `://` and after
///   the `www` of `www.`;
/// - bidirectional controls (U+202A to U+202E, U+2066 to U+2069, the marks U+200E, U+200F
///   and U+061C) become U+FFFD, so a right-to-left override cannot make text read
///   differently from what it is;
/// - line breaks and other control characters become spaces, so a table row stays one row.
pub fn escape_markdown(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + text.len() / 8);
    for ch in text.chars() {
        match ch {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '~' | '[' | ']' | '|' | '$' => {
                escaped.push('\\');
                escaped.push(ch);
            }
            '@' => escaped.push_str("@\u{200b}"),
            '#' => escaped.push_str("#\u{200b}"),
            ch if is_bidi_control(ch) => escaped.push('\u{fffd}'),
            ch if ch.is_control() => escaped.push(' '),
            ch => escaped.push(ch),
        }
    }
    break_autolinks(&escaped)
}

/// Characters that change the direction of the text around them.
fn is_bidi_control(ch: char) -> bool {
    matches!(ch, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Puts a zero-width space into every `://`, `www.` and `GH-` (any case), which GitHub
/// would otherwise turn into links.
fn break_autolinks(text: &str) -> String {
    // ASCII lowercasing keeps every byte where it is, so indices into `lower` are indices
    // into `text`.
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len() + 8);
    let mut at = 0;
    while let Some(ch) = text[at..].chars().next() {
        let rest = &lower[at..];
        if rest.starts_with("://") {
            out.push_str(":\u{200b}//");
            at += 3;
        } else if rest.starts_with("www.") || rest.starts_with("gh-") {
            let prefix = if rest.starts_with("www.") { 3 } else { 2 };
            out.push_str(&text[at..at + prefix]);
            out.push('\u{200b}');
            at += prefix;
        } else {
            out.push(ch);
            at += ch.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_html_markdown_and_mentions() {
        assert_eq!(escape_markdown("<img src=x>"), "&lt;img src=x&gt;");
        assert_eq!(escape_markdown("@someone"), "@\u{200b}someone");
        assert_eq!(escape_markdown("a|b`c`[d](e)"), "a\\|b\\`c\\`\\[d\\](e)");
        assert_eq!(escape_markdown("x\ny\r\tz &amp;"), "x y  z &amp;amp;");
        assert_eq!(
            escape_markdown("**b** _i_ ~s~ $m$ \\"),
            "\\*\\*b\\*\\* \\_i\\_ \\~s\\~ \\$m\\$ \\\\"
        );
    }

    #[test]
    fn neutralises_links_references_and_direction_overrides() {
        let escaped = escape_markdown("see https://evil.example/x and WWW.evil.example, #12 o/r#5 gh-7");
        assert!(!escaped.contains("://"), "{escaped}");
        assert!(!escaped.to_lowercase().contains("www."), "{escaped}");
        assert!(!escaped.contains("#1") && !escaped.contains("#5"), "{escaped}");
        assert!(!escaped.to_lowercase().contains("gh-"), "{escaped}");
        assert_eq!(
            escaped.replace('\u{200b}', ""),
            "see https://evil.example/x and WWW.evil.example, #12 o/r#5 gh-7"
        );
        let rtl = escape_markdown("abc\u{202e}fed\u{2066}x\u{200f}");
        assert_eq!(rtl, "abc\u{fffd}fed\u{fffd}x\u{fffd}");
        // Multi-byte text around the patterns keeps its bytes.
        assert_eq!(escape_markdown("µs://é").replace('\u{200b}', ""), "µs://é");
    }

    #[test]
    fn formats_durations_and_changes() {
        assert_eq!(format_duration_ns(850.0), "850 ns");
        assert_eq!(format_duration_ns(12_340.0), "12.34 µs");
        assert_eq!(format_duration_ns(1_500_000.0), "1.50 ms");
        assert_eq!(format_duration_ns(2_345_000_000.0), "2.345 s");
        assert_eq!(format_change(0.123), "+12.3%");
        assert_eq!(format_change(-0.04), "-4.0%");
    }

    #[test]
    fn only_plain_urls_are_linked() {
        assert!(is_plain_url("https://github.com/o/r/actions/runs/42"));
        assert!(!is_plain_url("javascript:alert(1)"));
        assert!(!is_plain_url("https://x/)[evil](https://y"));
        assert!(!is_plain_url("https://x/ y"));
    }

    #[test]
    fn the_dashboard_is_linked_only_from_an_https_url() {
        let linked = |url: &str| {
            let context = CommentContext {
                dashboard_url: Some(url.to_string()),
                ..CommentContext::default()
            };
            comment_body(&[], &context).contains("[the convbench dashboard](")
        };
        assert!(linked("https://my-org.github.io/my-repo/"));
        for hostile in [
            "http://my-org.github.io/my-repo/",
            "javascript:alert(1)",
            "https://x/)[evil](https://y",
            "https://x/\"><img src=x>",
        ] {
            assert!(!linked(hostile), "{hostile}");
        }
    }

    #[test]
    fn notes_count_towards_the_cap() {
        // 1,000 notes of about 120 bytes: twice the cap on their own.
        let context = CommentContext {
            notes: (0..1000)
                .map(|i| {
                    format!("no baseline for benchmark model{i}/train/b1/f32/wgpu yet; it is reported as new")
                })
                .collect(),
            mode: Some("baseline mode".to_string()),
            ..CommentContext::default()
        };
        let body = comment_body(&[], &context);
        assert!(body.len() <= MAX_COMMENT_BYTES, "{} bytes", body.len());
        assert!(body.starts_with(COMMENT_MARKER));
        assert!(body.contains("Decided by baseline mode."));
        // A few notes fit whole, after the verdicts.
        let few = CommentContext {
            notes: vec!["the baseline file was edited in this pull request".to_string()],
            ..CommentContext::default()
        };
        let body = comment_body(&[], &few);
        assert!(body.contains("> **Note:** the baseline file was edited in this pull request"));
    }

    #[test]
    fn empty_input_still_has_the_marker() {
        let body = comment_body(&[], &CommentContext::default());
        assert!(body.starts_with(COMMENT_MARKER));
        assert!(body.contains("No benchmark results"));
    }
}
