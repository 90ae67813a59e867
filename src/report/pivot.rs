//! The seeds' comparison tables (`report --pivot`): median times of one phase in a grid whose
//! rows are models or their layers and whose columns are any combination of batch size,
//! precision and backend, as the PaddlePaddle seed shows each op by batch size with CPU and
//! GPU side by side. With a reference backend, each other cell also holds
//! `ratio = this / reference` for the cell with the same model (or layer), stage, batch and
//! precision on the reference backend: below 1 is faster than the reference.
//!
//! [`pivot`] builds the grid from one or more records; [`pivot_table`], [`pivot_markdown`],
//! [`pivot_csv`] and [`pivot_json`] render it.

use super::ReportError;
use super::cells::{ABSENT, milliseconds, ratio_text};
use super::markdown::escape_markdown;
use crate::Result;
use crate::results::{BenchmarkResult, Phase, RunRecord, Stage};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// What a pivot row stands for (`--rows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PivotRows {
    /// One row per model (or suite entry).
    Model,
    /// One row per layer of the `--layers` breakdown, labelled `model/layer (op)`.
    Layer,
}

impl std::str::FromStr for PivotRows {
    type Err = ReportError;

    /// Parses `model` or `layer`.
    fn from_str(name: &str) -> Result<Self, ReportError> {
        match name.to_ascii_lowercase().as_str() {
            "model" => Ok(PivotRows::Model),
            "layer" | "op" => Ok(PivotRows::Layer),
            _ => Err(ReportError::UnknownRows {
                name: name.to_string(),
            }),
        }
    }
}

/// A coordinate the pivot columns can spread over (`--columns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PivotAxis {
    /// Images per iteration.
    Batch,
    /// Storage precision.
    Precision,
    /// `wgpu`, `cuda`, `cpu` or a peer's name.
    Backend,
}

impl PivotAxis {
    /// Parses a comma-separated list such as `backend,batch`, in the order given.
    pub fn parse_list(list: &str) -> Result<Vec<PivotAxis>, ReportError> {
        let mut axes = Vec::new();
        for name in list.split(',').map(str::trim).filter(|name| !name.is_empty()) {
            let axis = match name.to_ascii_lowercase().as_str() {
                "batch" => PivotAxis::Batch,
                "precision" => PivotAxis::Precision,
                "backend" => PivotAxis::Backend,
                _ => {
                    return Err(ReportError::UnknownColumn {
                        name: name.to_string(),
                    });
                }
            };
            if axes.contains(&axis) {
                return Err(ReportError::ColumnTwice {
                    name: name.to_string(),
                    list: list.to_string(),
                });
            }
            axes.push(axis);
        }
        if axes.is_empty() {
            return Err(ReportError::NoColumns);
        }
        Ok(axes)
    }
}

/// Parses a phase as ids write it (`grad_input`) or as tables show it (`grad-input`).
pub fn parse_phase(name: &str) -> Result<Phase, ReportError> {
    let wanted = name.to_ascii_lowercase().replace('-', "_");
    Phase::ALL
        .into_iter()
        .find(|phase| phase.as_str() == wanted)
        .ok_or_else(|| ReportError::UnknownPhase {
            name: name.to_string(),
            or_all: false,
        })
}

/// The phases `history --phase NAME` selects: `all`, or one phase as [`parse_phase`] reads it.
pub fn parse_phases(name: &str) -> Result<Vec<Phase>, ReportError> {
    if name == "all" {
        return Ok(Phase::ALL.to_vec());
    }
    parse_phase(name)
        .map(|phase| vec![phase])
        .map_err(|_| ReportError::UnknownPhase {
            name: name.to_string(),
            or_all: true,
        })
}

/// What to pivot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PivotSpec {
    /// Models or layers.
    pub rows: PivotRows,
    /// The coordinates spread over the columns, outermost first; those not named here become
    /// part of the row labels when they vary.
    pub columns: Vec<PivotAxis>,
    /// The phase whose median each cell shows; for layer rows, `total` is the sum of the
    /// layer's phases.
    pub phase: Phase,
    /// The backend (or, where no backend has the name, the precision) each ratio is taken
    /// against, if any.
    pub ratio_to: Option<String>,
}

impl PivotSpec {
    /// The pivot `--rows ROWS --columns COLUMNS --phase PHASE [--ratio-to BACKEND]` asks for.
    pub fn parse(rows: &str, columns: &str, phase: &str, ratio_to: Option<String>) -> Result<Self> {
        Ok(Self {
            rows: rows.parse()?,
            columns: PivotAxis::parse_list(columns)?,
            phase: parse_phase(phase)?,
            ratio_to,
        })
    }

    /// Checks that `record` (read from `path`) can fill this pivot: layer rows need a record
    /// with the per-layer breakdown.
    pub fn check_record(&self, record: &RunRecord, path: &std::path::Path) -> Result<()> {
        if self.rows == PivotRows::Layer && record.benchmarks.iter().all(|b| b.layers.is_empty()) {
            return Err(ReportError::RecordWithoutLayers {
                path: path.to_path_buf(),
            }
            .into());
        }
        Ok(())
    }
}

/// One cell of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PivotCell {
    /// Median of the phase (ns).
    pub median_ns: f64,
    /// `median / reference median` for the same coordinates on the reference backend (or in
    /// the reference precision); `None` on the reference itself, without `--ratio-to`, or when
    /// the reference lacks that cell.
    pub ratio: Option<f64>,
}

/// The grid: `cells[row][column]`, `None` where nothing was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pivot {
    /// Models or layers.
    pub rows: PivotRows,
    /// The column coordinates, outermost first.
    pub columns: Vec<PivotAxis>,
    /// The phase shown, snake_case.
    pub phase: String,
    /// The reference backend (or precision) of the ratios.
    pub ratio_to: Option<String>,
    /// `model` or `model/layer (op)`, then the stage and the coordinates not in the columns
    /// when they vary (`lenet, b64, cpu`), in first-seen order.
    pub row_labels: Vec<String>,
    /// The column coordinates joined by spaces (`cpu b64`): every combination of the values
    /// each column axis takes, sorted (batches by size) with the first axis outermost.
    pub column_labels: Vec<String>,
    /// One vector per row, one entry per column.
    pub cells: Vec<Vec<Option<PivotCell>>>,
    /// Per column, whether it is the reference's own (`cpu` under `--ratio-to cpu --columns
    /// backend`): its cells have no ratio, so the CSV gives it no ratio column.
    #[serde(skip)]
    pub reference_columns: Vec<bool>,
}

/// A coordinate value; batches order by size, names alphabetically.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Value {
    Batch(usize),
    Name(String),
}

impl Value {
    fn label(&self) -> String {
        match self {
            Value::Batch(batch) => format!("b{batch}"),
            Value::Name(name) => name.clone(),
        }
    }
}

/// One measured median with all its coordinates.
struct Point {
    /// The benchmark's id.
    id: String,
    /// `model` or `model/layer (op)`.
    subject: String,
    stage: Stage,
    batch: usize,
    precision: String,
    backend: String,
    median_ns: f64,
}

impl Point {
    fn value(&self, axis: PivotAxis) -> Value {
        match axis {
            PivotAxis::Batch => Value::Batch(self.batch),
            PivotAxis::Precision => Value::Name(self.precision.clone()),
            PivotAxis::Backend => Value::Name(self.backend.clone()),
        }
    }

    /// The value of the reference's axis ([`Point::value`] of the backend or the precision).
    fn reference_value(&self, axis: PivotAxis) -> &str {
        match axis {
            PivotAxis::Precision => &self.precision,
            _ => &self.backend,
        }
    }

    /// Every coordinate but the reference's axis, to find the reference cell.
    fn key_without(&self, axis: PivotAxis) -> (String, Stage, Vec<Value>) {
        let values = ALL_AXES
            .into_iter()
            .filter(|other| *other != axis)
            .map(|other| self.value(other))
            .collect();
        (self.subject.clone(), self.stage, values)
    }
}

const ALL_AXES: [PivotAxis; 3] = [PivotAxis::Batch, PivotAxis::Precision, PivotAxis::Backend];

/// The medians of `benchmark` for `phase`: one point per model or per layer.
fn points_of(benchmark: &BenchmarkResult, rows: PivotRows, phase: Phase) -> Vec<Point> {
    let point = |subject: String, median_ns: f64| Point {
        id: benchmark.id.clone(),
        subject,
        stage: benchmark.stage,
        batch: benchmark.batch,
        precision: benchmark.precision.to_string(),
        backend: benchmark.backend.clone(),
        median_ns,
    };
    match rows {
        PivotRows::Model => benchmark
            .phase(phase)
            .map(|result| point(benchmark.model.clone(), result.summary.median_ns))
            .into_iter()
            .collect(),
        PivotRows::Layer => {
            let mut totals: Vec<(String, f64)> = Vec::new();
            let layers = benchmark
                .layers
                .iter()
                .filter(|layer| phase == Phase::Total || layer.phase == phase);
            for layer in layers {
                let subject = format!("{}/{} ({})", benchmark.model, layer.layer, layer.op);
                match totals.iter_mut().find(|(name, _)| *name == subject) {
                    Some((_, total)) => *total += layer.summary.median_ns,
                    None => totals.push((subject, layer.summary.median_ns)),
                }
            }
            totals
                .into_iter()
                .map(|(subject, ns)| point(subject, ns))
                .collect()
        }
    }
}

/// Builds the grid of `spec` from every benchmark of `records`.
///
/// Fails with a [`ReportError`] when a benchmark id appears in two records, when
/// nothing measured the phase (or, for layer rows, no benchmark has a `--layers`
/// breakdown), or when no benchmark ran on the `ratio_to` backend.
pub fn pivot(records: &[RunRecord], spec: &PivotSpec) -> Result<Pivot> {
    let mut points = Vec::new();
    for benchmark in super::benchmarks_of(records)? {
        points.extend(points_of(benchmark, spec.rows, spec.phase));
    }
    if points.is_empty() {
        let has_layers = records
            .iter()
            .flat_map(|record| &record.benchmarks)
            .any(|benchmark| !benchmark.layers.is_empty());
        return Err(if spec.rows == PivotRows::Layer && !has_layers {
            ReportError::NoLayerRows
        } else {
            ReportError::PhaseNotMeasured { phase: spec.phase }
        }
        .into());
    }
    let backends: BTreeSet<&str> = points.iter().map(|point| point.backend.as_str()).collect();
    let precisions: BTreeSet<&str> = points.iter().map(|point| point.precision.as_str()).collect();
    // The reference is a backend, or else a precision (`--ratio-to f32`: each f16 cell against
    // the f32 cell of the same model, batch and backend).
    let reference_axis = match &spec.ratio_to {
        Some(reference) if backends.contains(reference.as_str()) => PivotAxis::Backend,
        Some(reference) if precisions.contains(reference.as_str()) => PivotAxis::Precision,
        Some(reference) => {
            return Err(ReportError::NoReferenceBackend {
                reference: reference.clone(),
                present: backends.into_iter().map(String::from).collect(),
                precisions: precisions.into_iter().map(String::from).collect(),
            }
            .into());
        }
        None => PivotAxis::Backend,
    };

    let varies = |values: BTreeSet<Value>| values.len() > 1;
    let stage_varies = points
        .iter()
        .map(|p| p.stage.as_str())
        .collect::<BTreeSet<_>>()
        .len()
        > 1;
    let row_axes: Vec<PivotAxis> = ALL_AXES
        .into_iter()
        .filter(|axis| !spec.columns.contains(axis))
        .filter(|axis| varies(points.iter().map(|p| p.value(*axis)).collect()))
        .collect();

    let row_key = |p: &Point| -> (String, Stage, Vec<Value>) {
        let values = row_axes.iter().map(|axis| p.value(*axis)).collect();
        (p.subject.clone(), p.stage, values)
    };
    let column_key = |p: &Point| -> Vec<Value> { spec.columns.iter().map(|axis| p.value(*axis)).collect() };

    let mut row_keys: Vec<(String, Stage, Vec<Value>)> = Vec::new();
    for point in &points {
        let key = row_key(point);
        if !row_keys.contains(&key) {
            row_keys.push(key);
        }
    }
    // Every combination of the values each column axis takes, so that a combination nothing
    // measured shows as a missing cell rather than vanishing from the grid.
    let mut column_keys: Vec<Vec<Value>> = vec![Vec::new()];
    for axis in &spec.columns {
        let values: BTreeSet<Value> = points.iter().map(|p| p.value(*axis)).collect();
        column_keys = column_keys
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |value| {
                    let mut key = prefix.clone();
                    key.push(value.clone());
                    key
                })
            })
            .collect();
    }

    let reference_medians: HashMap<(String, Stage, Vec<Value>), f64> = match &spec.ratio_to {
        Some(reference) => points
            .iter()
            .filter(|p| p.reference_value(reference_axis) == reference)
            .map(|p| (p.key_without(reference_axis), p.median_ns))
            .collect(),
        None => HashMap::new(),
    };

    let mut cells = vec![vec![None; column_keys.len()]; row_keys.len()];
    let mut filled_by: Vec<Vec<Option<&str>>> = vec![vec![None; column_keys.len()]; row_keys.len()];
    for point in &points {
        let row = row_keys.iter().position(|key| *key == row_key(point));
        let column = column_keys.iter().position(|key| *key == column_key(point));
        let (Some(row), Some(column)) = (row, column) else {
            continue;
        };
        // Two benchmarks of different ids at one model, stage, batch, precision and backend
        // (a record whose id and fields disagree): one would hide the other.
        if let Some(first) = filled_by[row][column].replace(&point.id) {
            return Err(ReportError::SameCell {
                first: first.to_string(),
                second: point.id.clone(),
            }
            .into());
        }
        let ratio = match &spec.ratio_to {
            Some(reference) if point.reference_value(reference_axis) != reference => reference_medians
                .get(&point.key_without(reference_axis))
                .filter(|reference_ns| **reference_ns > 0.0)
                .map(|reference_ns| point.median_ns / reference_ns),
            _ => None,
        };
        cells[row][column] = Some(PivotCell {
            median_ns: point.median_ns,
            ratio,
        });
    }

    // `--ratio-to` asked for ratios: a grid with none (every benchmark is the reference's own, or
    // none has a reference cell) would print the caption's promise over plain times.
    if let Some(reference) = &spec.ratio_to
        && cells.iter().flatten().flatten().all(|cell| cell.ratio.is_none())
    {
        return Err(ReportError::NoRatios {
            reference: reference.clone(),
            axis: if reference_axis == PivotAxis::Precision {
                "precision"
            } else {
                "backend"
            },
        }
        .into());
    }
    let reference_columns = match (
        &spec.ratio_to,
        spec.columns.iter().position(|axis| *axis == reference_axis),
    ) {
        (Some(reference), Some(at)) => column_keys
            .iter()
            .map(|key| key[at].label() == *reference)
            .collect(),
        _ => vec![false; column_keys.len()],
    };

    let row_labels = row_keys
        .iter()
        .map(|(subject, stage, values)| {
            let mut parts = vec![subject.clone()];
            if stage_varies {
                parts.push(stage.as_str().to_string());
            }
            parts.extend(values.iter().map(Value::label));
            parts.join(", ")
        })
        .collect();
    let column_labels = column_keys
        .iter()
        .map(|values| values.iter().map(Value::label).collect::<Vec<_>>().join(" "))
        .collect();
    Ok(Pivot {
        rows: spec.rows,
        columns: spec.columns.clone(),
        phase: spec.phase.as_str().to_string(),
        ratio_to: spec.ratio_to.clone(),
        row_labels,
        column_labels,
        cells,
        reference_columns,
    })
}

impl Pivot {
    /// The header of the row-label column.
    fn row_header(&self) -> &'static str {
        match self.rows {
            PivotRows::Model => "model",
            PivotRows::Layer => "layer (op)",
        }
    }

    /// The line above the grid: what the cells are and which way the ratio goes.
    fn caption(&self) -> String {
        let phase = self.phase.replace('_', "-");
        match &self.ratio_to {
            Some(reference) => format!(
                "median {phase} ms; (Nx) = this cell / the {reference} cell with the same other coordinates, \
                 below 1 is faster than {reference}"
            ),
            None => format!("median {phase} ms"),
        }
    }

    /// The rows as display text: label, then one `ms (ratio)` cell per column, `-` if absent.
    fn text_rows(&self) -> Vec<Vec<String>> {
        self.row_labels
            .iter()
            .zip(&self.cells)
            .map(|(label, cells)| {
                std::iter::once(label.clone())
                    .chain(cells.iter().map(|cell| match cell {
                        None => ABSENT.to_string(),
                        Some(PivotCell {
                            median_ns,
                            ratio: Some(ratio),
                        }) => format!("{} ({}x)", milliseconds(*median_ns), ratio_text(*ratio)),
                        Some(PivotCell { median_ns, .. }) => milliseconds(*median_ns),
                    }))
                    .collect()
            })
            .collect()
    }
}

/// The grid as a terminal table (comfy-table, as the other tables), under its caption.
pub fn pivot_table(pivot: &Pivot) -> String {
    let mut table = Table::new();
    table
        .force_no_tty()
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(std::iter::once(pivot.row_header().to_string()).chain(pivot.column_labels.clone()));
    for index in 1..=pivot.column_labels.len() {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.add_rows(pivot.text_rows());
    format!("{}:\n{table}\n", pivot.caption())
}

/// The grid as a GitHub Markdown table under its caption; labels from records are escaped.
pub fn pivot_markdown(pivot: &Pivot) -> String {
    let mut text = format!("{}\n\n", escape_markdown(&pivot.caption()));
    let header: Vec<String> = std::iter::once(pivot.row_header().to_string())
        .chain(pivot.column_labels.iter().map(|label| escape_markdown(label)))
        .collect();
    let alignment: Vec<String> = std::iter::once(":---".to_string())
        .chain(pivot.column_labels.iter().map(|_| "---:".to_string()))
        .collect();
    let mut push_row = |cells: Vec<String>| {
        text.push_str("| ");
        text.push_str(&cells.join(" | "));
        text.push_str(" |\n");
    };
    push_row(header);
    push_row(alignment);
    for mut row in pivot.text_rows() {
        row[0] = escape_markdown(&row[0]);
        push_row(row);
    }
    text
}

/// The grid as CSV: a `row` column, then `<column> ms` per column and, with a reference
/// backend or precision, `<column> / <reference>` per column but the reference's own. Numbers are written in full; a missing cell
/// or ratio is an empty field (not `-`) so that spreadsheets and data-frame readers see a
/// missing number rather than text.
pub fn pivot_csv(pivot: &Pivot) -> String {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    let mut header = vec!["row".to_string()];
    header.extend(pivot.column_labels.iter().map(|label| format!("{label} ms")));
    // A ratio column per column but the reference's own (whose ratios would all be empty).
    let ratio_columns: Vec<usize> = match pivot.ratio_to {
        Some(_) => (0..pivot.column_labels.len())
            .filter(|&column| !pivot.reference_columns.get(column).copied().unwrap_or(false))
            .collect(),
        None => Vec::new(),
    };
    if let Some(reference) = &pivot.ratio_to {
        header.extend(
            ratio_columns
                .iter()
                .map(|&column| format!("{} / {reference}", pivot.column_labels[column])),
        );
    }
    writer
        .write_record(&header)
        .expect("writing CSV to memory cannot fail");
    for (label, cells) in pivot.row_labels.iter().zip(&pivot.cells) {
        let mut row = vec![label.clone()];
        row.extend(cells.iter().map(|cell| {
            cell.map(|cell| (cell.median_ns / 1e6).to_string())
                .unwrap_or_default()
        }));
        row.extend(ratio_columns.iter().map(|&column| {
            cells
                .get(column)
                .copied()
                .flatten()
                .and_then(|cell| cell.ratio)
                .map(|ratio| ratio.to_string())
                .unwrap_or_default()
        }));
        writer
            .write_record(&row)
            .expect("writing CSV to memory cannot fail");
    }
    let bytes = writer.into_inner().expect("flushing CSV to memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8")
}

/// The grid as pretty JSON ([`Pivot`]'s fields; a missing cell is `null`).
pub fn pivot_json(pivot: &Pivot) -> String {
    let mut text = serde_json::to_string_pretty(pivot).expect("a pivot serializes to JSON");
    text.push('\n');
    text
}

/// Renders the grid in `format`.
pub fn render_pivot(pivot: &Pivot, format: super::Format) -> String {
    match format {
        super::Format::Table => pivot_table(pivot),
        super::Format::Json => pivot_json(pivot),
        super::Format::Csv => pivot_csv(pivot),
        super::Format::Markdown => pivot_markdown(pivot),
    }
}
