//! The two shapes every chart kind is drawn in: horizontal bars, each stacked from coloured
//! segments with a note after it ([`BarChart`]), and lines over a log-scale batch axis
//! ([`LineChart`]). Both open with the [`Caption`] and close with a legend of their colours.

use super::Caption;
use crate::report::svg::{coordinate, escape_xml, horizontal_grid, ticks};
use std::fmt::Write;

/// Width of every chart, in pixels.
const WIDTH: f64 = 960.0;
/// Top of the plot area, under the two caption lines.
const PLOT_TOP: f64 = 72.0;
/// Height of a bar, and the distance from one bar to the next.
const BAR_HEIGHT: f64 = 16.0;
const BAR_PITCH: f64 = 22.0;
/// Extra space above a bar that starts a new group.
const GROUP_GAP: f64 = 12.0;
/// Height of the line chart's plot area.
const LINE_PLOT_HEIGHT: f64 = 340.0;
/// Approximate width of a character of the 12-pixel sans-serif font, to lay out labels.
const CHAR_WIDTH: f64 = 6.8;
/// Tableau 10: distinguishable, and readable for the common colour-vision deficiencies.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
    "#bab0ac",
];

fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// A number on an axis: as short as its value allows (`0.25`, `12000`).
fn tick_text(value: f64) -> String {
    let rounded = (value * 1e6).round() / 1e6;
    format!("{rounded}")
}

/// Width of `text` in the chart font, roughly.
fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_WIDTH
}

/// One coloured piece of a bar.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Segment {
    /// Index of its entry in the legend (and so its colour).
    pub(super) series: usize,
    /// Its length, in the unit of the chart's axis.
    pub(super) value: f64,
    /// Hover text.
    pub(super) hover: String,
}

/// One bar: a label on its left, segments left to right, a note on its right.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Bar {
    pub(super) label: String,
    pub(super) segments: Vec<Segment>,
    pub(super) note: String,
    /// Whether a gap separates it from the bar above (the first bar of a group).
    pub(super) group_start: bool,
}

/// Horizontal bars under a caption, with a value axis below and a legend of the segments.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BarChart {
    pub(super) caption: Caption,
    /// What the bars' length measures, with its unit: `median ms per iteration`.
    pub(super) axis: String,
    /// The names of the segments' series, by [`Segment::series`].
    pub(super) legend: Vec<String>,
    pub(super) bars: Vec<Bar>,
}

/// One line of a [`LineChart`]: `(batch size, value, hover text)` per point, by batch.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Line {
    pub(super) label: String,
    pub(super) points: Vec<(usize, f64, String)>,
}

/// Lines of a value against batch size (log scale, ticks at the batch sizes run).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LineChart {
    pub(super) caption: Caption,
    /// What the vertical axis measures, with its unit.
    pub(super) axis: String,
    pub(super) lines: Vec<Line>,
}

/// The opening tag, the document's title, the background and the two caption lines.
fn open(svg: &mut String, caption: &Caption, height: f64) {
    let title = escape_xml(&caption.title);
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">"
    );
    let _ = writeln!(svg, "<title>{title}</title>");
    let _ = writeln!(
        svg,
        "<rect width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    let _ = writeln!(
        svg,
        "<text class=\"title\" x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\">{title}</text>"
    );
    let _ = writeln!(
        svg,
        "<text class=\"measured\" x=\"16\" y=\"48\" fill=\"#555555\">{}</text>",
        escape_xml(&caption.measured)
    );
}

/// Rows of legend entries from `top` on; returns the height they take.
fn legend(svg: &mut String, names: &[String], top: f64) -> f64 {
    let (mut x, mut y) = (16.0, top);
    let _ = writeln!(svg, "<g class=\"legend\">");
    for (index, name) in names.iter().enumerate() {
        let width = 18.0 + text_width(name) + 18.0;
        if x > 16.0 && x + width > WIDTH - 16.0 {
            (x, y) = (16.0, y + 20.0);
        }
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>",
            coordinate(x),
            coordinate(y),
            colour(index),
            coordinate(x + 18.0),
            coordinate(y + 6.0),
            escape_xml(name)
        );
        x += width;
    }
    let _ = writeln!(svg, "</g>");
    y + 20.0 - top
}

impl BarChart {
    /// The chart as a standalone SVG document.
    pub(super) fn svg(&self) -> String {
        let label_width = self
            .bars
            .iter()
            .map(|bar| text_width(&bar.label))
            .fold(60.0, f64::max)
            .min(360.0);
        let note_width = self
            .bars
            .iter()
            .map(|bar| text_width(&bar.note))
            .fold(30.0, f64::max)
            .min(300.0);
        let left = 16.0 + label_width + 8.0;
        let plot_width = WIDTH - left - note_width - 24.0;
        let longest = self
            .bars
            .iter()
            .map(|bar| bar.segments.iter().map(|segment| segment.value).sum::<f64>())
            .fold(0.0, f64::max);
        let high = if longest > 0.0 { longest } else { 1.0 };
        let x = |value: f64| left + plot_width * value / high;

        let mut tops = Vec::with_capacity(self.bars.len());
        let mut y = PLOT_TOP;
        for (index, bar) in self.bars.iter().enumerate() {
            if bar.group_start && index > 0 {
                y += GROUP_GAP;
            }
            tops.push(y);
            y += BAR_PITCH;
        }
        let axis_y = y + 2.0;
        let legend_top = axis_y + 48.0;
        let legend_height = self.legend_height();
        let height = (legend_top + legend_height + 8.0).round();

        let mut svg = String::new();
        open(&mut svg, &self.caption, height);
        for tick in ticks(0.0, high) {
            let at = coordinate(x(tick));
            let _ = writeln!(
                svg,
                "<line x1=\"{at}\" x2=\"{at}\" y1=\"{PLOT_TOP}\" y2=\"{}\" stroke=\"#e5e5e5\"/>\
                 <text x=\"{at}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                coordinate(axis_y),
                coordinate(axis_y + 16.0),
                tick_text(tick)
            );
        }
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#333333\"/>",
            coordinate(left),
            coordinate(left + plot_width),
            coordinate(axis_y),
            coordinate(axis_y)
        );
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            coordinate(left + plot_width / 2.0),
            coordinate(axis_y + 34.0),
            escape_xml(&self.axis)
        );
        for (bar, top) in self.bars.iter().zip(tops) {
            let middle = coordinate(top + BAR_HEIGHT / 2.0);
            let _ = writeln!(
                svg,
                "<g class=\"bar\"><text x=\"{}\" y=\"{middle}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
                coordinate(left - 8.0),
                escape_xml(&bar.label)
            );
            let mut start = 0.0;
            for segment in &bar.segments {
                let _ = writeln!(
                    svg,
                    "<rect class=\"segment\" data-series=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{BAR_HEIGHT}\" fill=\"{}\"><title>{}</title></rect>",
                    escape_xml(self.legend.get(segment.series).map_or("", String::as_str)),
                    coordinate(x(start)),
                    coordinate(top),
                    coordinate(x(start + segment.value) - x(start)),
                    colour(segment.series),
                    escape_xml(&segment.hover)
                );
                start += segment.value;
            }
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{middle}\" dominant-baseline=\"middle\">{}</text></g>",
                coordinate(x(start) + 6.0),
                escape_xml(&bar.note)
            );
        }
        legend(&mut svg, &self.legend, legend_top);
        svg.push_str("</svg>\n");
        svg
    }

    /// The height of the legend, measured by laying it out.
    fn legend_height(&self) -> f64 {
        legend(&mut String::new(), &self.legend, 0.0)
    }
}

impl LineChart {
    /// The chart as a standalone SVG document.
    pub(super) fn svg(&self) -> String {
        let (left, right) = (84.0, 32.0);
        let plot_width = WIDTH - left - right;
        let mut batches: Vec<usize> = self
            .lines
            .iter()
            .flat_map(|line| line.points.iter().map(|&(batch, _, _)| batch.max(1)))
            .collect();
        batches.sort_unstable();
        batches.dedup();
        let (first, last) = match (batches.first(), batches.last()) {
            (Some(&first), Some(&last)) => (first as f64, last as f64),
            _ => (1.0, 1.0),
        };
        // A quarter of a step of 2 beyond the extreme batch sizes, so that no point sits on an
        // edge; log scale, as batch sizes usually double.
        let (low, high) = ((first / 1.25).ln(), (last * 1.25).ln());
        let x = |batch: usize| left + plot_width * ((batch.max(1) as f64).ln() - low) / (high - low);
        let highest = self
            .lines
            .iter()
            .flat_map(|line| line.points.iter().map(|&(_, value, _)| value))
            .fold(0.0, f64::max);
        let top_value = if highest > 0.0 { highest * 1.1 } else { 1.0 };
        let bottom = PLOT_TOP + LINE_PLOT_HEIGHT;
        let y = |value: f64| bottom - LINE_PLOT_HEIGHT * value / top_value;
        let legend_top = bottom + 52.0;
        let names: Vec<String> = self.lines.iter().map(|line| line.label.clone()).collect();
        let height = (legend_top + legend(&mut String::new(), &names, 0.0) + 8.0).round();

        let mut svg = String::new();
        open(&mut svg, &self.caption, height);
        horizontal_grid(
            &mut svg,
            (0.0, top_value),
            (left, left + plot_width),
            y,
            tick_text,
        );
        for &batch in &batches {
            let at = coordinate(x(batch));
            let _ = writeln!(
                svg,
                "<line x1=\"{at}\" x2=\"{at}\" y1=\"{bottom}\" y2=\"{}\" stroke=\"#333333\"/>\
                 <text x=\"{at}\" y=\"{}\" text-anchor=\"middle\">{batch}</text>",
                coordinate(bottom + 5.0),
                coordinate(bottom + 18.0)
            );
        }
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{bottom}\" y2=\"{bottom}\" stroke=\"#333333\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">batch size (log scale)</text>\
             <text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            coordinate(left + plot_width),
            coordinate(left + plot_width / 2.0),
            coordinate(bottom + 38.0),
            coordinate(PLOT_TOP + LINE_PLOT_HEIGHT / 2.0),
            escape_xml(&self.axis)
        );
        for (index, line) in self.lines.iter().enumerate() {
            let path: Vec<String> = line
                .points
                .iter()
                .map(|&(batch, value, _)| format!("{},{}", coordinate(x(batch)), coordinate(y(value))))
                .collect();
            let _ = writeln!(
                svg,
                "<g class=\"series\" data-series=\"{}\"><polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>",
                escape_xml(&line.label),
                path.join(" "),
                colour(index)
            );
            for (batch, value, hover) in &line.points {
                let _ = writeln!(
                    svg,
                    "<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"><title>{}</title></circle>",
                    coordinate(x(*batch)),
                    coordinate(y(*value)),
                    colour(index),
                    escape_xml(hover)
                );
            }
            let _ = writeln!(svg, "</g>");
        }
        legend(&mut svg, &names, legend_top);
        svg.push_str("</svg>\n");
        svg
    }
}
