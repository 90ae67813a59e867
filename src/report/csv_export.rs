//! CSV, one row per benchmark and phase, with the columns of the seed benchmark of
//! frameworks and GPUs (timestamp, framework, algorithm, stage, precision, result in ms)
//! first so that its plotting scripts read it, then everything needed to redo the numbers.

use crate::results::{Phase, RunRecord};

/// The header row.
const HEADER: [&str; 17] = [
    "timestamp",
    "framework",
    "algorithm",
    "bench_stage",
    "precision",
    "result_ms",
    "batch",
    "phase",
    "adapter",
    "backend",
    "benchmark_id",
    "median_ns",
    "mean_ns",
    "min_ns",
    "max_ns",
    "stddev_ns",
    "samples",
];

/// One row per benchmark and measured phase (phases in [`Phase::ALL`] order): `timestamp` is
/// the record's start ([`rfc3339_utc`]), `framework` is `convbench-<backend>`, `algorithm` the
/// model, `bench_stage` `train` or `eval`, `result_ms` the median in ms, `phase` the snake_case
/// phase name, `adapter` its label, then the summary in ns and the sample count. Numbers are
/// written in full (shortest round-trip form), not rounded for display.
pub fn csv(record: &RunRecord) -> String {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    let timestamp = rfc3339_utc(record.created_unix_s);
    writer
        .write_record(HEADER)
        .expect("writing CSV to memory cannot fail");
    for benchmark in &record.benchmarks {
        let framework = format!("convbench-{}", benchmark.backend);
        let adapter = benchmark.adapter.label();
        for phase in Phase::ALL {
            let Some(result) = benchmark.phase(phase) else {
                continue;
            };
            let summary = &result.summary;
            let row = [
                timestamp.clone(),
                inert(&framework),
                inert(&benchmark.model),
                benchmark.stage.as_str().to_string(),
                benchmark.precision.as_str().to_string(),
                (summary.median_ns / 1e6).to_string(),
                benchmark.batch.to_string(),
                phase.as_str().to_string(),
                inert(&adapter),
                inert(&benchmark.backend),
                inert(&benchmark.id),
                summary.median_ns.to_string(),
                summary.mean_ns.to_string(),
                summary.min_ns.to_string(),
                summary.max_ns.to_string(),
                summary.stddev_ns.to_string(),
                result.samples_ns.len().to_string(),
            ];
            writer
                .write_record(&row)
                .expect("writing CSV to memory cannot fail");
        }
    }
    let bytes = writer.into_inner().expect("flushing CSV to memory cannot fail");
    String::from_utf8(bytes).expect("CSV of Rust strings is UTF-8")
}

/// A text cell from a record, made inert for spreadsheets: one that starts with `=`, `+`, `-`,
/// `@`, a tab or a carriage return would be read as a formula by Excel, LibreOffice or Google
/// Sheets (CSV injection), so it gets a leading `'`, which they show as text. Names convbench
/// makes never start so; a record's strings are not trusted.
fn inert(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    }
}

/// A Unix time (seconds) as an RFC 3339 UTC timestamp, `2026-11-03T14:05:09Z`, computed
/// with the proleptic Gregorian calendar (no time-zone database needed: it is UTC).
pub fn rfc3339_utc(unix_s: u64) -> String {
    const SECONDS_PER_DAY: u64 = 86_400;
    let days = unix_s / SECONDS_PER_DAY;
    let seconds_of_day = unix_s % SECONDS_PER_DAY;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds_of_day / 3600,
        seconds_of_day / 60 % 60,
        seconds_of_day % 60
    )
}

/// Year, month (1–12) and day (1–31) of a day count since 1970-01-01, after Howard
/// Hinnant's `civil_from_days`: shift to eras of 400 years starting on 0000-03-01, so that
/// the leap day is the last day of a year.
fn civil_from_days(days_since_epoch: u64) -> (u64, u64, u64) {
    /// Days from 0000-03-01 to 1970-01-01.
    const EPOCH_SHIFT: u64 = 719_468;
    /// Days in 400 years.
    const DAYS_PER_ERA: u64 = 146_097;
    let shifted = days_since_epoch + EPOCH_SHIFT;
    let era = shifted / DAYS_PER_ERA;
    let day_of_era = shifted % DAYS_PER_ERA;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months counted from March: 0 = March ... 11 = February.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::inert;

    #[test]
    fn formula_cells_are_made_text_and_names_left_alone() {
        for formula in ["=cmd|' /C calc'!A0", "+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"] {
            assert_eq!(inert(formula), format!("'{formula}"));
        }
        for name in [
            "alexnet",
            "layers/L5/train/b1/f32/wgpu",
            "convbench-torch-cpu",
            "a=b",
            "",
        ] {
            assert_eq!(inert(name), name);
        }
    }
}
