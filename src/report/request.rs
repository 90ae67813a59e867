//! `report FILE...` as a library value: saved records rendered in a text format, pivoted
//! into one grid, or exported for a benchmark dashboard.

use super::{
    DashboardFormat, Format, PivotSpec, ReportError, ReportFormat, pivot, render_dashboard, render_pivot,
    render_with_layers,
};
use crate::Result;
use crate::results::RunRecord;
use std::path::PathBuf;

/// What `report` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRequest {
    /// The records; several only with `pivot`.
    pub files: Vec<PathBuf>,
    /// A [`ReportFormat`] by name.
    pub format: String,
    /// Also the per-layer breakdown (table and Markdown formats; JSON holds it already).
    pub layers: bool,
    /// One grid of the records' median times instead.
    pub pivot: bool,
    /// The pivot's rows: `model` or `layer`.
    pub rows: String,
    /// The pivot's columns, comma-separated.
    pub columns: String,
    /// The phase the pivot shows.
    pub phase: String,
    /// Each pivot cell's ratio to this backend's cell too.
    pub ratio_to: Option<String>,
}

impl ReportRequest {
    /// Reads the records and renders them as asked; what does not go together (several files
    /// without a pivot, a dashboard format with a pivot or layers) is invalid input saying
    /// what to pass instead.
    pub fn render(&self) -> Result<String> {
        let format = match self.format.parse()? {
            ReportFormat::Text(format) => format,
            ReportFormat::Dashboard(format) => return self.dashboard(format),
        };
        if self.pivot {
            let spec = PivotSpec::parse(&self.rows, &self.columns, &self.phase, self.ratio_to.clone())?;
            let mut records = Vec::with_capacity(self.files.len());
            for file in &self.files {
                let record = read(file)?;
                spec.check_record(&record, file)?;
                records.push(record);
            }
            return Ok(render_pivot(&pivot(&records, &spec)?, format));
        }
        let [file] = self.files.as_slice() else {
            return Err(ReportError::OneRecord {
                files: self.files.len(),
            }
            .into());
        };
        if self.layers && format == Format::Csv {
            return Err(ReportError::CsvLayers.into());
        }
        let record = read(file)?;
        if self.layers && record.benchmarks.iter().all(|b| b.layers.is_empty()) {
            return Err(ReportError::NoLayersToShow { path: file.clone() }.into());
        }
        Ok(render_with_layers(&record, format, self.layers))
    }

    /// One record in a dashboard's format.
    fn dashboard(&self, format: DashboardFormat) -> Result<String> {
        let [file] = self.files.as_slice() else {
            return Err(ReportError::DashboardOneRecord {
                format,
                files: self.files.len(),
            }
            .into());
        };
        if self.pivot || self.layers {
            let flag = if self.pivot { "--pivot" } else { "--layers" };
            return Err(ReportError::DashboardFlags { format, flag }.into());
        }
        Ok(render_dashboard(&read(file)?, format))
    }

    /// The records of an interrupted run ([`RunRecord::complete`] false) whose mark the output
    /// asked for cannot carry: the table, Markdown and JSON say "incomplete" themselves, but a
    /// CSV, a dashboard's JSON and a pivot have no place for it, so the binary warns of each
    /// of these on stderr. Records that do not read are left to [`ReportRequest::render`].
    pub fn unmarked_incomplete(&self) -> Vec<PathBuf> {
        let marked = !self.pivot
            && matches!(
                self.format.parse(),
                Ok(ReportFormat::Text(
                    Format::Table | Format::Markdown | Format::Json
                ))
            );
        if marked {
            return Vec::new();
        }
        self.files
            .iter()
            .filter(|file| read(file).is_ok_and(|record| !record.complete))
            .cloned()
            .collect()
    }
}

/// Reads a record to render, refusing one that cannot be judged ([`RunRecord::validate`]: no
/// benchmarks, an id or phase twice, a phase without samples or with a zero sample), so
/// `report` and `plot` never show what `compare` would reject.
pub fn read(file: &std::path::Path) -> Result<RunRecord> {
    let record = RunRecord::read(file)?;
    record.validate(&file.display().to_string())?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(files: &[&str], format: &str) -> ReportRequest {
        ReportRequest {
            files: files.iter().map(PathBuf::from).collect(),
            format: format.into(),
            layers: false,
            pivot: false,
            rows: "model".into(),
            columns: "backend".into(),
            phase: "total".into(),
            ratio_to: None,
        }
    }

    #[test]
    fn several_records_need_a_pivot_before_any_is_read() {
        let error = request(&["a.json", "b.json"], "table")
            .render()
            .expect_err("two files");
        assert!(error.to_string().contains("add --pivot"), "{error}");
        let error = request(&["a.json", "b.json"], "bmf")
            .render()
            .expect_err("two files");
        assert!(error.to_string().contains("once per record"), "{error}");
    }

    #[test]
    fn a_dashboard_format_refuses_layers() {
        let layers = ReportRequest {
            layers: true,
            ..request(&["a.json"], "bmf")
        };
        let error = layers.render().expect_err("layers");
        assert!(
            error
                .to_string()
                .contains("without --layers; --layers is for table and md"),
            "{error}"
        );
    }
}
