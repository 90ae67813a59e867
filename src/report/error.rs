//! What a report, chart or table cannot be made of, as values: a flag's value that names no
//! format, kind, axis or phase; records that lack what was asked (a per-layer breakdown, a
//! training step, a second backend or precision, a phase); records that overlap.

use super::cells::phase_label;
use super::charts::ChartKind;
use super::{DashboardFormat, Format};
use crate::ErrorKind;
use crate::results::Phase;
use std::path::PathBuf;

/// An error of `report`, `plot`, `history` or `compare`'s rendering. Each message names the
/// flag or what the records lack, and the flag or the run that would give it.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// `history --benchmark` or `--slug` names nothing blessed in the set, which has other
    /// benchmarks or adapters: a typo, not an empty history.
    #[error(
        "{flag} {value}: nothing of that name is blessed in set `{set}`; {what} there: {}{}",
        known.iter().take(12).map(String::as_str).collect::<Vec<_>>().join(", "),
        if known.len() > 12 { format!(" and {} more", known.len() - 12) } else { String::new() }
    )]
    NothingNamed {
        /// `--benchmark` or `--slug`.
        flag: &'static str,
        /// The value given.
        value: String,
        /// The baseline set read.
        set: String,
        /// `benchmarks` or `adapter folders`.
        what: &'static str,
        /// What the set does hold, sorted.
        known: Vec<String>,
    },
    /// `history --set` names no set of the baseline folder, which holds others: a typo, not an
    /// empty history.
    #[error(
        "--set {set}: the baseline folder holds no set of that name; its sets: {} (pass one with \
         --set NAME)",
        known.join(", ")
    )]
    NoSuchSet {
        /// The set given.
        set: String,
        /// The sets the folder holds, sorted.
        known: Vec<String>,
    },
    /// `--format` names no text format.
    #[error("unknown report format `{name}`; use one of table, json, csv, md (or markdown)")]
    UnknownFormat {
        /// The name given.
        name: String,
    },
    /// `--format` names no dashboard format.
    #[error("unknown dashboard format `{name}`; use bmf or github-action-benchmark")]
    UnknownDashboardFormat {
        /// The name given.
        name: String,
    },
    /// `report --format` names neither a text format nor a dashboard's.
    #[error(
        "unknown report format `{name}`; use one of {}",
        Format::ALL.map(Format::as_str).into_iter()
            .chain(DashboardFormat::ALL.map(DashboardFormat::as_str))
            .collect::<Vec<_>>()
            .join(", ")
    )]
    UnknownReportFormat {
        /// The name given.
        name: String,
    },
    /// `--kind` names no chart kind.
    #[error("unknown chart kind `{name}`; use one of {}", ChartKind::ALL.map(ChartKind::as_str).join(", "))]
    UnknownChartKind {
        /// The name given.
        name: String,
    },
    /// `--rows` is neither `model` nor `layer`.
    #[error("unknown pivot rows `{name}`; use --rows model or --rows layer")]
    UnknownRows {
        /// The name given.
        name: String,
    },
    /// `--columns` names something other than batch, precision or backend.
    #[error(
        "unknown pivot column `{name}`; use batch, precision or backend, comma-separated (e.g. \
         --columns backend,batch)"
    )]
    UnknownColumn {
        /// The column given.
        name: String,
    },
    /// `--columns` names a column twice.
    #[error("pivot column `{name}` is given twice in --columns {list}; name each once")]
    ColumnTwice {
        /// The column given twice.
        name: String,
        /// The whole `--columns` list.
        list: String,
    },
    /// `--columns` names no column.
    #[error("--columns is empty; use batch, precision or backend, comma-separated")]
    NoColumns,
    /// `--phase` names no phase (nor `all`, where `all` is allowed).
    #[error(
        "unknown phase `{name}`; use one of {}{}",
        Phase::ALL.map(phase_label).join(", "),
        if *or_all { " or `all`" } else { "" }
    )]
    UnknownPhase {
        /// The name given.
        name: String,
        /// Whether `all` is allowed too (`history --phase`).
        or_all: bool,
    },
    /// Layer rows asked of a record without the per-layer breakdown.
    #[error(
        "record {} has no per-layer breakdown; re-run it with `run --layers`, or pivot with \
         --rows model",
        path.display()
    )]
    RecordWithoutLayers {
        /// The record's file.
        path: PathBuf,
    },
    /// `report --layers` of a record none of whose benchmarks has the per-layer breakdown.
    #[error(
        "record {} has no per-layer breakdown to show; re-run the benchmarks with `cargo \
         convbench run --layers --out FILE`, or leave out --layers",
        path.display()
    )]
    NoLayersToShow {
        /// The record's file.
        path: PathBuf,
    },
    /// `report --layers --format csv`: the CSV has one row per benchmark and phase.
    #[error(
        "the CSV has one row per benchmark and phase and no room for layers; for one row per \
         layer use `cargo convbench report --pivot --rows layer --format csv FILE`, or pass \
         --layers with --format table, md or json"
    )]
    CsvLayers,
    /// Layer rows asked of records none of which has the per-layer breakdown.
    #[error(
        "no benchmark in the records has a per-layer breakdown; re-run with `run --layers`, or \
         pivot with --rows model"
    )]
    NoLayerRows,
    /// A pivot of a phase no benchmark measured.
    #[error(
        "no benchmark in the records measured phase `{}`; pick another with --phase (an eval run \
         has only forward and total)",
        phase_label(*phase)
    )]
    PhaseNotMeasured {
        /// The phase asked for.
        phase: Phase,
    },
    /// `--ratio-to` names neither a backend nor a precision of the benchmarks.
    #[error(
        "no benchmark in the records ran on backend or in precision `{reference}` (backends: {}; \
         precisions: {}); pass one of those to --ratio-to, or add a record of `{reference}`",
        present.join(", "),
        precisions.join(", ")
    )]
    NoReferenceBackend {
        /// The name given.
        reference: String,
        /// The backends present, sorted.
        present: Vec<String>,
        /// The precisions present, sorted.
        precisions: Vec<String>,
    },
    /// `--ratio-to` gives no cell a ratio: every benchmark is the reference's own, or none has a
    /// reference cell with the same other coordinates.
    #[error(
        "--ratio-to {reference}: no cell has a {reference} cell to divide by (one with the same \
         coordinates but the {axis}); the records need benchmarks of a second {axis} beside \
         {reference}, at the same models, batches and stages, or drop --ratio-to"
    )]
    NoRatios {
        /// The reference given.
        reference: String,
        /// `backend` or `precision`.
        axis: &'static str,
    },
    /// A benchmark id in more than one of the records: the two would show as one.
    #[error(
        "benchmark {id} is in more than one record; pass records of different backends, batches \
         or precisions"
    )]
    DuplicateBenchmark {
        /// The benchmark id.
        id: String,
    },
    /// Two benchmarks of different ids with the same model, stage, batch, precision and backend:
    /// a pivot would show one and hide the other.
    #[error(
        "benchmarks {first} and {second} have the same model, stage, batch, precision and \
         backend, so one pivot cell would hide the other; an id that disagrees with its fields \
         comes from an edited record: pass records made by `cargo convbench run --out`"
    )]
    SameCell {
        /// The benchmark that filled the cell first.
        first: String,
        /// The one that would have replaced it.
        second: String,
    },
    /// `plot --benchmark` with a chart of every benchmark: it picks the one `--kind layers`
    /// breaks down, and would be ignored.
    #[error(
        "--benchmark picks the benchmark that `--kind layers` breaks down; the {kind} chart shows \
         every benchmark of the records: pass --kind layers, or leave out --benchmark"
    )]
    BenchmarkWithoutLayers {
        /// The chart kind given.
        kind: &'static str,
    },
    /// A chart of records none of which has a total time.
    #[error(
        "nothing to plot: no benchmark in the records has a total time; run `cargo convbench run \
         --out FILE` and plot the record it writes"
    )]
    NothingToPlot,
    /// A phases chart of records without a training step.
    #[error(
        "the records hold no training step, only forward passes (`--stage eval`), so there are no \
         backward phases to stack; run with `--stage train` (the default), e.g. `cargo convbench \
         run --model lenet --stage train --out FILE`"
    )]
    NoTrainingStep,
    /// A backends chart of records of one backend.
    #[error(
        "the records hold one backend ({}), nothing to set beside it; run with `--backend \
         wgpu,cpu` (and `cuda` in a build with the `cuda` feature), or pass a peer's record too: \
         `cargo convbench plot wgpu.json burn-wgpu.json --kind backends`",
        present.join(", ")
    )]
    OneBackend {
        /// The backend present (none if the records are empty).
        present: Vec<String>,
    },
    /// A backends chart of records where no benchmark ran on two backends alike.
    #[error(
        "no benchmark was measured on two of the backends ({}) with the same model, stage, batch \
         and precision; run them with the same `--model`, `--batch` and `--precision`, e.g. \
         `cargo convbench run --backend wgpu,cpu --out FILE`",
        present.join(", ")
    )]
    NoBackendPair {
        /// The backends present, sorted.
        present: Vec<String>,
    },
    /// A precision chart of records of one precision.
    #[error("the records hold one precision ({}); run with `--precision f32,f16`", present.join(", "))]
    OnePrecision {
        /// The precision present (none if the records are empty).
        present: Vec<String>,
    },
    /// A precision chart of records where no benchmark ran in both precisions alike.
    #[error(
        "no benchmark was measured in both f32 and f16 with the same model, stage, batch and \
         backend; run them together with `--precision f32,f16`"
    )]
    NoPrecisionPair,
    /// A layers chart of records without the per-layer breakdown.
    #[error(
        "the records hold no per-layer breakdown; run with `--layers`, e.g. `cargo convbench run \
         --model lenet --layers --out FILE`"
    )]
    NoLayersToChart,
    /// `--benchmark` names no benchmark with the per-layer breakdown.
    #[error(
        "no benchmark `{id}` with a per-layer breakdown in the records; pick one of {}",
        with_layers.join(", ")
    )]
    UnknownLayersBenchmark {
        /// The id given.
        id: String,
        /// The ids of the benchmarks with a breakdown.
        with_layers: Vec<String>,
    },
    /// `report` without `--pivot` given several records.
    #[error(
        "report renders one record, got {files} files; pass one FILE, or add --pivot to show \
         several records in one grid"
    )]
    OneRecord {
        /// The number of files given.
        files: usize,
    },
    /// A dashboard format given several records.
    #[error("--format {format} renders one record, got {files} files; run it once per record")]
    DashboardOneRecord {
        /// The dashboard format.
        format: DashboardFormat,
        /// The number of files given.
        files: usize,
    },
    /// A dashboard format with `--pivot` or `--layers`.
    #[error(
        "--format {format} exports every benchmark and phase of the record, without {flag}; {flag} \
         is for {formats}",
        formats = if *flag == "--layers" { "table and md (json holds the layers already)" } else { "table, md, csv and json" }
    )]
    DashboardFlags {
        /// The dashboard format.
        format: DashboardFormat,
        /// `--pivot` or `--layers`.
        flag: &'static str,
    },
    /// `compare --format csv`.
    #[error("compare renders table, md or json; csv is for `run` and `report`")]
    CompareCsv,
    /// `--commit-url` is not an http(s) URL.
    #[error(
        "--commit-url `{url}` is not an http(s) URL; pass e.g. \
         `https://github.com/OWNER/REPO/commit/{{commit}}`"
    )]
    CommitUrl {
        /// The template given.
        url: String,
    },
    /// An output folder flag (`--html`, `--svg`) names something that cannot be one.
    #[error("{flag}: {source}")]
    OutputFolder {
        /// The flag.
        flag: &'static str,
        /// Why the path cannot be written into.
        #[source]
        source: Box<crate::Error>,
    },
}

impl ReportError {
    /// The exit-code category: everything here is about what the user passed (flags and
    /// records), so input.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidInput
    }
}
