//! SVG charts (plotters), like the seed benchmarks' comparison graphs: time against batch
//! size when a model was run at several batch sizes, else images per second side by side.

use crate::results::{Phase, RunRecord};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::{HashMap, HashSet};

/// Width and height of the SVG, in pixels.
const SIZE: (u32, u32) = (960, 540);
const FONT: &str = "sans-serif";
/// Width of a bar's slot on the bar chart's integer axis; the bar fills 8 tenths of it.
const BAR_SLOT: u32 = 10;

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Benchmarks that differ only by batch size: one line, or one bar when there is one point.
struct Series {
    model: String,
    label: String,
    /// `(batch, median total ns)`, sorted by batch, one point per batch.
    points: Vec<(usize, f64)>,
}

impl Series {
    /// Total median (ms) against batch size.
    fn milliseconds(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points
            .iter()
            .map(|&(batch, total_ns)| (batch as f64, total_ns / 1e6))
    }
}

/// The fields that tell series apart; `model` and `precision` always show in a label, the
/// others only when the record holds several values of them (a merged matrix record has
/// several adapters).
#[derive(Clone, PartialEq, Eq, Hash)]
struct SeriesKey {
    model: String,
    precision: &'static str,
    stage: &'static str,
    backend: String,
    adapter: String,
}

/// Every benchmark with a positive total median, grouped into series in record order.
fn collect_series(record: &RunRecord) -> Vec<Series> {
    let mut keys: Vec<SeriesKey> = Vec::new();
    let mut points: HashMap<SeriesKey, Vec<(usize, f64)>> = HashMap::new();
    for benchmark in &record.benchmarks {
        let Some(total_ns) = benchmark
            .phase(Phase::Total)
            .map(|total| total.summary.median_ns)
            .filter(|ns| ns.is_finite() && *ns > 0.0)
        else {
            continue;
        };
        let key = SeriesKey {
            model: benchmark.model.clone(),
            precision: benchmark.precision.as_str(),
            stage: benchmark.stage.as_str(),
            backend: benchmark.backend.clone(),
            adapter: benchmark.adapter.label(),
        };
        let series = points.entry(key.clone()).or_default();
        if series.is_empty() {
            keys.push(key);
        }
        if series.iter().all(|&(batch, _)| batch != benchmark.batch) {
            series.push((benchmark.batch, total_ns));
        }
    }
    let varies = |field: fn(&SeriesKey) -> &str| keys.iter().map(field).collect::<HashSet<_>>().len() > 1;
    let (show_stage, show_backend, show_adapter) = (
        varies(|key| key.stage),
        varies(|key| &key.backend),
        varies(|key| &key.adapter),
    );
    keys.into_iter()
        .map(|key| {
            let mut label = format!("{} {}", key.model, key.precision);
            for (show, part) in [
                (show_stage, key.stage),
                (show_backend, &key.backend),
                (show_adapter, &key.adapter),
            ] {
                if show {
                    label.push(' ');
                    label.push_str(part);
                }
            }
            let mut points = points.remove(&key).unwrap_or_default();
            points.sort_by_key(|&(batch, _)| batch);
            Series {
                model: key.model,
                label,
                points,
            }
        })
        .collect()
}

/// Whether some model was run at several batch sizes.
fn several_batches_for_a_model(series: &[Series]) -> bool {
    let mut batches: HashMap<&str, HashSet<usize>> = HashMap::new();
    for one in series {
        batches
            .entry(one.model.as_str())
            .or_default()
            .extend(one.points.iter().map(|&(batch, _)| batch));
    }
    batches.values().any(|batches| batches.len() > 1)
}

/// An SVG chart of the record. When some model was run at several batch sizes: a line per
/// model and precision of the total median (ms) against batch size (log scale). Otherwise a
/// bar per model and precision of images per second at the total median. Stage, backend and
/// adapter join the labels when the record holds several of them.
///
/// # Errors
///
/// [`crate::Error::InvalidInput`] when no benchmark has a total time to plot.
pub fn chart_svg(record: &RunRecord) -> crate::Result<String> {
    let series = collect_series(record);
    if series.is_empty() {
        return Err(crate::Error::InvalidInput(
            "nothing to plot: no benchmark in the record has a total time; \
             run `cargo convbench run` and plot the record it writes"
                .to_string(),
        ));
    }
    let mut svg = String::new();
    let drawn = if several_batches_for_a_model(&series) {
        draw_time_against_batch(&mut svg, &series)
    } else {
        draw_images_per_second(&mut svg, &series)
    };
    drawn.map_err(|error| crate::Error::InvalidInput(format!("could not draw the chart: {error}")))?;
    Ok(svg)
}

fn draw_time_against_batch(svg: &mut String, series: &[Series]) -> DrawResult {
    let mut batches: Vec<f64> = series
        .iter()
        .flat_map(|one| one.points.iter().map(|&(batch, _)| batch as f64))
        .collect();
    batches.sort_by(f64::total_cmp);
    batches.dedup();
    let (min_batch, max_batch) = match (batches.first(), batches.last()) {
        (Some(&first), Some(&last)) => (first.max(1.0), last.max(1.0)),
        _ => return Ok(()),
    };
    let max_ms = series
        .iter()
        .flat_map(Series::milliseconds)
        .map(|(_, ms)| ms)
        .fold(0.0_f64, f64::max);
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    // Log scale, as batch sizes usually double; ticks at the batch sizes that were run.
    let batch_axis = (min_batch / 1.25..max_batch * 1.25)
        .log_scale()
        .with_key_points(batches);
    let mut chart = ChartBuilder::on(&root)
        .caption("total time per iteration (median) against batch size", (FONT, 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(batch_axis, 0.0..max_ms * 1.1)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc("batch size")
        .y_desc("total ms")
        .x_label_formatter(&|batch| format!("{batch:.0}"))
        .draw()?;
    for (index, one) in series.iter().enumerate() {
        let color = Palette99::pick(index).to_rgba();
        chart
            .draw_series(LineSeries::new(one.milliseconds(), color.stroke_width(2)))?
            .label(one.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(
            one.milliseconds()
                .map(|point| Circle::new(point, 4, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn draw_images_per_second(svg: &mut String, series: &[Series]) -> DrawResult {
    // Drawn only when no model has several batch sizes: each series has one point.
    let bars: Vec<(&str, f64)> = series
        .iter()
        .filter_map(|one| {
            let &(batch, total_ns) = one.points.last()?;
            Some((one.label.as_str(), batch as f64 * 1e9 / total_ns))
        })
        .collect();
    let max_images_per_sec = bars.iter().map(|&(_, value)| value).fold(0.0_f64, f64::max);
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    // Bar `i` spans [10 i, 10 (i + 1)) of an integer axis (integer axes format their ticks,
    // unlike f64 ones with custom key points), labelled at its centre; plotters' segmented
    // axes misplace a lone bar.
    let count = u32::try_from(bars.len())?;
    let centres: Vec<u32> = (0..count).map(|index| BAR_SLOT * index + BAR_SLOT / 2).collect();
    let bar_axis = (0..BAR_SLOT * count).with_key_points(centres);
    let mut chart = ChartBuilder::on(&root)
        .caption("images per second (median total time)", (FONT, 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(bar_axis, 0.0..max_images_per_sec * 1.15)?;
    let label_at = |centre: &u32| {
        let index = (centre / BAR_SLOT) as usize;
        bars.get(index)
            .map_or_else(String::new, |&(label, _)| label.to_string())
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&label_at)
        .y_label_formatter(&|value| format!("{value:.0}"))
        .y_desc("images/s")
        .draw()?;
    for (&(_, value), index) in bars.iter().zip(0..count) {
        let color = Palette99::pick(index as usize).to_rgba();
        let left = BAR_SLOT * index;
        chart.draw_series([Rectangle::new(
            [(left + 1, 0.0), (left + BAR_SLOT - 1, value)],
            color.filled(),
        )])?;
        chart.draw_series([Text::new(
            format!("{value:.0}"),
            (left + BAR_SLOT / 2, value + max_images_per_sec * 0.02),
            (FONT, 14)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Bottom)),
        )])?;
    }
    root.present()?;
    Ok(())
}
