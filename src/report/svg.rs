//! What the hand-written SVG charts share (the history dashboard's and `plot`'s): escaping
//! for XML, coordinates and round tick values. The charts are written as text rather than
//! through a plotting library so that every bar, line and point can carry a hover title and a
//! `class` that tests (and the page's script) can find.

use std::fmt::Write;

/// `text` safe inside XML and HTML text and quoted attributes: `& < > " '` become entities
/// and characters XML 1.0 forbids (controls other than tab and newlines) become U+FFFD.
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A number for an SVG coordinate: 1 decimal, no `-0.0`.
pub(super) fn coordinate(value: f64) -> String {
    let rounded = (value * 10.0).round() / 10.0;
    if rounded == 0.0 {
        "0".to_string()
    } else {
        format!("{rounded}")
    }
}

/// Evenly spaced round tick values covering `[low, high]`.
pub(super) fn ticks(low: f64, high: f64) -> Vec<f64> {
    let span = (high - low).max(f64::MIN_POSITIVE);
    let raw = span / 6.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw)
        .unwrap_or(raw);
    let first = (low / step).ceil() as i64;
    let last = (high / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A horizontal grid line across `[left, right]` at each tick of `[low, high]`, placed by `y`,
/// each labelled by `label` on the left of `left`.
pub(super) fn horizontal_grid(
    svg: &mut String,
    (low, high): (f64, f64),
    (left, right): (f64, f64),
    y: impl Fn(f64) -> f64,
    label: impl Fn(f64) -> String,
) {
    for tick in ticks(low, high) {
        let at = coordinate(y(tick));
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" x2=\"{}\" y1=\"{at}\" y2=\"{at}\" stroke=\"#e5e5e5\"/>\
             <text x=\"{}\" y=\"{at}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
            coordinate(left),
            coordinate(right),
            coordinate(left - 6.0),
            label(tick)
        );
    }
}
