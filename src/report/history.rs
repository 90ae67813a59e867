//! The history dashboard: one SVG chart per benchmark and phase over the commits that blessed
//! it ([`history_svg`]), and a self-contained HTML page of all of them with a filter by
//! model, phase, adapter and precision ([`history_html`]).
//!
//! Each chart draws the blessed median of every commit as a line, the spread between the
//! rounds of the run it blessed (min to max of their medians) as a band, each point with a
//! title (hover text) giving its numbers and, when a commit URL is known, a link to the
//! commit; change points are dashed vertical lines labelled with their relative step.
//!
//! Everything that comes from a record or a commit (ids, names, messages) is escaped for XML
//! (and so for HTML) and never written into the script: the page's script only reads the
//! `data-` attributes of the charts. The page loads nothing from the network, so it opens from
//! disk and from GitHub Pages alike.

use super::cells::milliseconds;
use super::rfc3339_utc;
use super::svg::{coordinate, escape_xml, horizontal_grid};
use crate::baseline::BenchmarkHistory;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Width and height of a chart, in pixels.
const SIZE: (f64, f64) = (760.0, 300.0);
/// Margins: left, right, top, bottom.
const MARGIN: (f64, f64, f64, f64) = (78.0, 24.0, 44.0, 56.0);
/// Most commit labels on the x axis.
const MAX_X_LABELS: usize = 8;

/// The link of `commit` from `template` (`{commit}` replaced by the full id); `None` without a
/// template or when it is not an `http(s)` URL, so a hostile template cannot run script.
fn commit_link(template: Option<&str>, commit: &str) -> Option<String> {
    let template = template?;
    let safe = template.starts_with("https://") || template.starts_with("http://");
    safe.then(|| template.replace("{commit}", commit))
}

/// The first 10 characters of a commit id.
fn short(commit: &str) -> String {
    commit.chars().take(10).collect()
}

/// The chart's title: benchmark, phase and adapter.
fn chart_title(history: &BenchmarkHistory) -> String {
    let adapter = history
        .points
        .first()
        .map_or(history.slug.as_str(), |p| p.adapter.as_str());
    format!(
        "{} · {} · {}",
        history.benchmark_id,
        history.phase.as_str(),
        adapter
    )
}

/// One chart of `history` as a standalone SVG document (no XML declaration, so it can also be
/// inlined in HTML). `commit_url` is a template such as
/// `https://github.com/OWNER/REPO/commit/{commit}` for the points' links.
pub fn history_svg(history: &BenchmarkHistory, commit_url: Option<&str>) -> String {
    let (width, height) = SIZE;
    let (left, right, top, bottom) = MARGIN;
    let (plot_width, plot_height) = (width - left - right, height - top - bottom);
    let points = &history.points;
    let spreads: Vec<_> = points.iter().map(|p| p.round_spread()).collect();
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    for (point, spread) in points.iter().zip(&spreads) {
        low = low.min(spread.min_ns.min(point.median_ns));
        high = high.max(spread.max_ns.max(point.median_ns));
    }
    if !low.is_finite() || !high.is_finite() {
        (low, high) = (0.0, 1.0);
    }
    let pad = ((high - low) * 0.08).max(high.abs() * 0.02).max(1.0);
    let (low, high) = ((low - pad).max(0.0), high + pad);
    let x = |index: usize| {
        if points.len() < 2 {
            left + plot_width / 2.0
        } else {
            left + plot_width * index as f64 / (points.len() - 1) as f64
        }
    };
    let y = |ns: f64| top + plot_height * (1.0 - (ns - low) / (high - low));

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">"
    );
    let title = escape_xml(&chart_title(history));
    let _ = writeln!(svg, "<title>{title}</title>");
    let _ = writeln!(
        svg,
        "<rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    let _ = writeln!(
        svg,
        "<text x=\"{left}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{title}</text>"
    );

    // Axes, grid and labels.
    horizontal_grid(&mut svg, (low, high), (left, left + plot_width), y, milliseconds);
    let _ = writeln!(
        svg,
        "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">median ms</text>",
        coordinate(top + plot_height / 2.0)
    );
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">blessing commits, oldest first</text>",
        coordinate(left + plot_width / 2.0),
        coordinate(height - 8.0)
    );
    let label_every = points.len().div_ceil(MAX_X_LABELS).max(1);
    for (index, point) in points.iter().enumerate() {
        if index % label_every == 0 {
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-family=\"monospace\" font-size=\"10\">{}</text>",
                coordinate(x(index)),
                coordinate(top + plot_height + 16.0),
                escape_xml(&point.commit.chars().take(7).collect::<String>())
            );
        }
    }

    // The band between the blessed runs, then the median line.
    if !points.is_empty() {
        let upper = spreads.iter().enumerate().map(|(i, s)| (x(i), y(s.max_ns)));
        let lower = spreads.iter().enumerate().rev().map(|(i, s)| (x(i), y(s.min_ns)));
        let outline: Vec<String> = upper
            .chain(lower)
            .map(|(px, py)| format!("{},{}", coordinate(px), coordinate(py)))
            .collect();
        let _ = writeln!(
            svg,
            "<polygon class=\"band\" points=\"{}\" fill=\"#4e79a7\" fill-opacity=\"0.18\" stroke=\"none\"/>",
            outline.join(" ")
        );
        let line: Vec<String> = points
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{},{}", coordinate(x(i)), coordinate(y(p.median_ns))))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline class=\"median\" points=\"{}\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2\"/>",
            line.join(" ")
        );
    }

    // Change points: a dashed line just before the first point at the new level.
    for step in &history.steps {
        let at = if step.index == 0 {
            x(0)
        } else {
            (x(step.index - 1) + x(step.index)) / 2.0
        };
        let at = coordinate(at);
        let _ = writeln!(
            svg,
            "<g class=\"change-point\"><title>{}</title>\
             <line x1=\"{at}\" x2=\"{at}\" y1=\"{top}\" y2=\"{}\" stroke=\"#e15759\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\
             <text x=\"{at}\" y=\"{}\" text-anchor=\"middle\" fill=\"#e15759\" font-weight=\"bold\">{:+.1}%</text></g>",
            escape_xml(&format!(
                "change point at {}: {} ms → {} ms ({:+.1}%, p = {:.3}): {}",
                short(&step.commit),
                milliseconds(step.before_ns),
                milliseconds(step.after_ns),
                step.relative_step * 100.0,
                step.p_value,
                step.summary
            )),
            coordinate(top + plot_height),
            coordinate(top - 6.0),
            step.relative_step * 100.0
        );
    }

    // Points with their numbers, linked to their commit.
    for (index, (point, spread)) in points.iter().zip(&spreads).enumerate() {
        let kept = point.run_spread();
        let text = format!(
            "{} {}\nmedian {} ms\nbetween its {} rounds: {}–{} ms\nbetween the {} runs kept: {}–{} ms (IQR {}–{})\n{}",
            short(&point.commit),
            rfc3339_utc(point.time_unix_s.max(0) as u64),
            milliseconds(point.median_ns),
            spread.count,
            milliseconds(spread.min_ns),
            milliseconds(spread.max_ns),
            kept.count,
            milliseconds(kept.min_ns),
            milliseconds(kept.max_ns),
            milliseconds(kept.q1_ns),
            milliseconds(kept.q3_ns),
            point.summary
        );
        let circle = format!(
            "<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#4e79a7\"><title>{}</title></circle>",
            coordinate(x(index)),
            coordinate(y(point.median_ns)),
            escape_xml(&text)
        );
        match commit_link(commit_url, &point.commit) {
            Some(link) => {
                let _ = writeln!(svg, "<a href=\"{}\">{circle}</a>", escape_xml(&link));
            }
            None => {
                let _ = writeln!(svg, "{circle}");
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// The style of the page.
const STYLE: &str = "body{font-family:sans-serif;margin:1.5rem;color:#222;background:#fafafa}\
h1{font-size:1.4rem}form{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}\
label{display:flex;flex-direction:column;font-size:.85rem}select{min-width:10rem}\
.chart{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5rem;margin:1rem 0;max-width:780px}\
.chart svg{max-width:100%;height:auto}table{border-collapse:collapse;font-size:.85rem}\
td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left}td.number{text-align:right}\
code{font-size:.85rem}[hidden]{display:none}";

/// The page's script: shows the charts whose `data-` attributes match every selector. It
/// reads only attributes, never writes markup.
const SCRIPT: &str = "(function(){\
var selects=Array.prototype.slice.call(document.querySelectorAll('#filters select'));\
var charts=Array.prototype.slice.call(document.querySelectorAll('section.chart'));\
var shown=document.getElementById('shown');\
function apply(){var count=0;charts.forEach(function(chart){\
var match=selects.every(function(select){return select.value===''||chart.getAttribute('data-'+select.name)===select.value;});\
chart.hidden=!match;if(match){count+=1;}});\
shown.textContent=count+' of '+charts.length+' charts shown';}\
selects.forEach(function(select){select.addEventListener('change',apply);});apply();})();";

/// A `<select>` of the distinct `(value, text)` pairs, with "all" first.
fn selector(name: &str, label: &str, options: &BTreeSet<(String, String)>) -> String {
    let mut html = format!("<label>{label}<select name=\"{name}\"><option value=\"\">all</option>");
    for (value, text) in options {
        let _ = write!(
            html,
            "<option value=\"{}\">{}</option>",
            escape_xml(value),
            escape_xml(text)
        );
    }
    html.push_str("</select></label>");
    html
}

/// The dashboard: one page with every chart of `series` inline, a filter by model, phase,
/// adapter and precision, and a table of every change point. `title` heads the page;
/// `commit_url` as in [`history_svg`]. Self-contained: inline CSS, script and SVG, and a
/// content security policy that forbids loading anything.
pub fn history_html(series: &[BenchmarkHistory], title: &str, commit_url: Option<&str>) -> String {
    let mut models = BTreeSet::new();
    let mut phases = BTreeSet::new();
    let mut adapters = BTreeSet::new();
    let mut precisions = BTreeSet::new();
    for history in series {
        let phase = history.phase.as_str().to_string();
        phases.insert((phase.clone(), phase));
        if let Some(point) = history.points.first() {
            models.insert((point.model.clone(), point.model.clone()));
            adapters.insert((history.slug.clone(), point.adapter.clone()));
            let precision = point.precision.as_str().to_string();
            precisions.insert((precision.clone(), precision));
        }
    }

    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\"/>\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
        title = escape_xml(title)
    );
    let steps: usize = series.iter().map(|h| h.steps.len()).sum();
    let _ = writeln!(
        html,
        "<p>{} charts, {steps} change points. Each point is the median of the run a commit blessed; \
         the band spans the medians of that run's rounds (re-warmed, so they show the drift between \
         runs); dashed lines mark change \
         points (e-divisive means). Hover a point for its numbers.</p>",
        series.len()
    );
    let _ = writeln!(
        html,
        "<form id=\"filters\">{}{}{}{}</form>\n<p id=\"shown\"></p>",
        selector("model", "model", &models),
        selector("phase", "phase", &phases),
        selector("adapter", "adapter", &adapters),
        selector("precision", "precision", &precisions)
    );

    if steps > 0 {
        html.push_str(
            "<h2>Change points</h2>\n<table><thead><tr><th>benchmark</th><th>phase</th><th>adapter</th>\
             <th>commit</th><th>before ms</th><th>after ms</th><th>step</th><th>p</th><th>message</th>\
             </tr></thead><tbody>\n",
        );
        for history in series {
            for step in &history.steps {
                let commit = match commit_link(commit_url, &step.commit) {
                    Some(link) => format!(
                        "<a href=\"{}\"><code>{}</code></a>",
                        escape_xml(&link),
                        escape_xml(&short(&step.commit))
                    ),
                    None => format!("<code>{}</code>", escape_xml(&short(&step.commit))),
                };
                let _ = writeln!(
                    html,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{commit}</td><td class=\"number\">{}</td>\
                     <td class=\"number\">{}</td><td class=\"number\">{:+.1}%</td><td class=\"number\">{:.3}</td>\
                     <td>{}</td></tr>",
                    escape_xml(&history.benchmark_id),
                    history.phase.as_str(),
                    escape_xml(&history.slug),
                    milliseconds(step.before_ns),
                    milliseconds(step.after_ns),
                    step.relative_step * 100.0,
                    step.p_value,
                    escape_xml(&step.summary)
                );
            }
        }
        html.push_str("</tbody></table>\n");
    }

    for history in series {
        let first = history.points.first();
        let _ = writeln!(
            html,
            "<section class=\"chart\" data-model=\"{}\" data-phase=\"{}\" data-adapter=\"{}\" data-precision=\"{}\">",
            escape_xml(first.map_or("", |p| p.model.as_str())),
            history.phase.as_str(),
            escape_xml(&history.slug),
            first.map_or("", |p| p.precision.as_str())
        );
        html.push_str(&history_svg(history, commit_url));
        html.push_str("</section>\n");
    }
    if series.is_empty() {
        html.push_str("<p>No blessed values in the history yet: bless some with <code>cargo convbench baseline update --commit</code>.</p>\n");
    }
    let _ = write!(html, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    html
}

/// A file name for the chart of `history`: adapter, benchmark id and phase, with every
/// character outside `[A-Za-z0-9._-]` replaced by `_`, ending in `.svg`.
pub fn history_svg_file_name(history: &BenchmarkHistory) -> String {
    let raw = format!(
        "{}__{}__{}",
        history.slug,
        history.benchmark_id,
        history.phase.as_str()
    );
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // A name of dots alone, or one starting with a dot, would be hidden or special.
    if name.starts_with('.') {
        name.insert(0, '_');
    }
    // File systems take names up to 255 bytes: a long model name keeps its start and gets a
    // digest of the whole for the rest, so names stay distinct and every file can be written.
    const KEPT: usize = 160;
    if name.len() > KEPT + 20 {
        name.truncate(KEPT);
        name.push_str(&format!("-{:016x}", crate::fnv1a64(raw.bytes())));
    }
    name.push_str(".svg");
    name
}

/// A commit URL template for a GitHub remote URL (`https://github.com/OWNER/REPO(.git)` or
/// `git@github.com:OWNER/REPO(.git)`): `https://github.com/OWNER/REPO/commit/{commit}`.
/// `None` for other hosts.
pub fn github_commit_url(remote: &str) -> Option<String> {
    let path = remote
        .strip_prefix("https://github.com/")
        .or_else(|| remote.strip_prefix("git@github.com:"))
        .or_else(|| remote.strip_prefix("ssh://git@github.com/"))?;
    let path = path.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = path.split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    let valid = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    (parts.next().is_none() && valid(owner) && valid(repo))
        .then(|| format!("https://github.com/{owner}/{repo}/commit/{{commit}}"))
}

/// Checks a `--commit-url` template: an http(s) URL, else invalid input saying what to pass.
pub fn check_commit_url(url: &str) -> Result<(), super::ReportError> {
    if url.starts_with("https://") || url.starts_with("http://") {
        return Ok(());
    }
    Err(super::ReportError::CommitUrl { url: url.to_string() })
}

/// One SVG chart per series ([`history_svg`]) with its file name ([`history_svg_file_name`],
/// a numbered suffix keeping two series whose names collide apart), in series order.
pub fn history_svg_files(series: &[BenchmarkHistory], commit_url: Option<&str>) -> Vec<(String, String)> {
    let mut used = std::collections::HashSet::new();
    let mut files = Vec::with_capacity(series.len());
    for history in series {
        let mut name = history_svg_file_name(history);
        let stem = name.trim_end_matches(".svg").to_string();
        let mut copy = 1;
        while !used.insert(name.clone()) {
            copy += 1;
            name = format!("{stem}-{copy}.svg");
        }
        files.push((name, history_svg(history, commit_url)));
    }
    files
}

/// One JSON object per series: its points with their spread, and its change points.
pub fn history_json(series: &[BenchmarkHistory]) -> String {
    let rows: Vec<_> = series
        .iter()
        .map(|history| {
            let points: Vec<_> = history
                .points
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "commit": p.commit, "time_unix_s": p.time_unix_s, "summary": p.summary,
                        "median_ns": p.median_ns,
                        "round_medians_ns": p.round_medians_ns, "round_spread": p.round_spread(),
                        "run_medians_ns": p.run_medians_ns, "run_spread": p.run_spread(),
                    })
                })
                .collect();
            let first = history.points.first();
            serde_json::json!({
                "adapter": history.slug,
                "adapter_label": first.map(|p| p.adapter.as_str()),
                "benchmark": history.benchmark_id,
                "model": first.map(|p| p.model.as_str()),
                "stage": first.map(|p| p.stage),
                "batch": first.map(|p| p.batch),
                "precision": first.map(|p| p.precision),
                "backend": first.map(|p| p.backend.as_str()),
                "phase": history.phase,
                "points": points,
                "change_points": history.steps,
            })
        })
        .collect();
    serde_json::to_string_pretty(&rows).unwrap_or_default()
}

/// Milliseconds with three decimals.
fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The points of every series as a table, then the change points and, for each slowdown, the
/// `bisect` command that finds its commit among those between two blessings.
pub fn history_table(series: &[BenchmarkHistory]) -> String {
    let mut points = super::terminal::bordered(&[
        "benchmark",
        "phase",
        "commit",
        "time (UTC)",
        "median ms",
        "rounds min–max ms",
        "kept runs min–max ms",
        "step",
        "commit message",
    ]);
    for history in series {
        for (index, p) in history.points.iter().enumerate() {
            let (rounds, runs) = (p.round_spread(), p.run_spread());
            let step = history
                .steps
                .iter()
                .find(|step| step.index == index)
                .map(|step| format!("{:+.1}%", step.relative_step * 100.0))
                .unwrap_or_default();
            points.add_row([
                p.benchmark_id.clone(),
                super::cells::phase_label(p.phase),
                p.commit.chars().take(10).collect(),
                rfc3339_utc(p.time_unix_s.max(0) as u64),
                ms(p.median_ns),
                format!("{}–{} ({})", ms(rounds.min_ns), ms(rounds.max_ns), rounds.count),
                format!("{}–{} ({})", ms(runs.min_ns), ms(runs.max_ns), runs.count),
                step,
                p.summary.clone(),
            ]);
        }
    }
    let steps: Vec<_> = series
        .iter()
        .flat_map(|history| history.steps.iter().map(move |step| (history, step)))
        .collect();
    if steps.is_empty() {
        return format!("{points}\nno change points");
    }
    let mut changes = super::terminal::bordered(&[
        "benchmark",
        "phase",
        "step at commit",
        "before ms",
        "after ms",
        "step",
        "p",
        "commit message",
    ]);
    let mut bisects = Vec::new();
    for (history, step) in steps {
        if let Some(command) = bisect_command(history, step) {
            bisects.push(command);
        }
        changes.add_row([
            history.benchmark_id.clone(),
            super::cells::phase_label(history.phase),
            step.commit.chars().take(10).collect(),
            ms(step.before_ns),
            ms(step.after_ns),
            format!("{:+.1}%", step.relative_step * 100.0),
            format!("{:.3}", step.p_value),
            step.summary.clone(),
        ]);
    }
    let mut text = format!("{points}\nchange points:\n{changes}");
    if !bisects.is_empty() {
        bisects.dedup();
        text.push_str("\nto find the commit of a step among those between two blessings:\n");
        for command in bisects {
            text.push_str(&format!("  {command}\n"));
        }
    }
    text
}

/// The `bisect` command over a slowdown's range: from the last commit blessed at the old level
/// to the first at the new one, with the benchmark's selection flags where its id names them
/// (`model/stage/bBATCH/precision/backend`).
fn bisect_command(history: &BenchmarkHistory, step: &crate::baseline::Step) -> Option<String> {
    let before = history.points.get(step.index.checked_sub(1)?)?;
    if step.relative_step <= 0.0 || before.commit == step.commit {
        return None;
    }
    // `bisect` times the wgpu backend only: a cpu or cuda benchmark's step gets no command
    // that would time something else.
    if !history.benchmark_id.ends_with("/wgpu") {
        return None;
    }
    let short = |commit: &str| commit.chars().take(12).collect::<String>();
    let mut command = format!(
        "cargo convbench bisect --good {} --bad {}",
        short(&before.commit),
        short(&step.commit)
    );
    if let [model, stage, batch, precision, _backend] =
        history.benchmark_id.split('/').collect::<Vec<_>>()[..]
        && let Some(batch) = batch.strip_prefix('b')
        && [model, stage, batch, precision].iter().all(|part| {
            part.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
    {
        command.push_str(&format!(
            " --model {model} --batch {batch} --precision {precision} --stage {stage}"
        ));
    }
    Some(command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::{HistoryPoint, Step};
    use crate::model::Precision;
    use crate::results::{Phase, Stage};

    /// A hostile string: markup, quotes, an entity, a control character and a script.
    const HOSTILE: &str = "<script>alert('x')</script> & \"quoted\" &amp; \u{7} ]]> {{";

    fn point(index: usize, median_ns: f64, runs: &[f64], summary: &str) -> HistoryPoint {
        HistoryPoint {
            commit: format!("{index:x}{}", "0123456789abcdef0123456789abcdef01234567")[..40].to_string(),
            time_unix_s: 1_790_000_000 + 86_400 * index as i64,
            summary: summary.to_string(),
            benchmark_id: "alexnet/train/b128/f32/wgpu".to_string(),
            model: "alexnet".to_string(),
            stage: Stage::Train,
            batch: 128,
            precision: Precision::F32,
            backend: "wgpu".to_string(),
            adapter: "NVIDIA H100 (vulkan)".to_string(),
            phase: Phase::Total,
            median_ns,
            round_medians_ns: vec![median_ns * 0.98, median_ns, median_ns * 1.03],
            run_medians_ns: runs.to_vec(),
        }
    }

    /// Six blessings of alexnet, a 15% step at the fourth.
    fn history() -> BenchmarkHistory {
        let medians = [100.0e6, 103.0e6, 98.0e6, 115.0e6, 117.0e6, 114.0e6];
        let points: Vec<HistoryPoint> = medians
            .iter()
            .enumerate()
            .map(|(index, &median)| {
                let summary = if index == 3 {
                    HOSTILE.to_string()
                } else {
                    format!("bless run {}", index + 1)
                };
                point(index, median, &medians[..=index], &summary)
            })
            .collect();
        let steps = vec![Step {
            index: 3,
            commit: points[3].commit.clone(),
            summary: points[3].summary.clone(),
            before_ns: 100.0e6,
            after_ns: 115.0e6,
            relative_step: 0.15,
            p_value: 0.02,
        }];
        BenchmarkHistory {
            slug: "vulkan-nvidia-h100-10de-2330".to_string(),
            benchmark_id: "alexnet/train/b128/f32/wgpu".to_string(),
            phase: Phase::Total,
            points,
            steps,
        }
    }

    const URL: Option<&str> = Some("https://github.com/convbench/convbench/commit/{commit}");

    #[test]
    fn colliding_chart_names_get_numbered_files() {
        let series = [history(), history(), history()];
        let names: Vec<String> = history_svg_files(&series, None)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        let first = history_svg_file_name(&series[0]);
        let stem = first.trim_end_matches(".svg");
        assert_eq!(
            names,
            [first.clone(), format!("{stem}-2.svg"), format!("{stem}-3.svg")]
        );
    }

    /// `bisect` times wgpu only: a cpu benchmark's step offered a command that bisected the
    /// wgpu one.
    #[test]
    fn only_a_wgpu_benchmarks_step_offers_a_bisect() {
        let wgpu = history();
        let command = bisect_command(&wgpu, &wgpu.steps[0]).expect("a wgpu step");
        assert!(
            command.ends_with("--model alexnet --batch 128 --precision f32 --stage train"),
            "{command}"
        );
        for backend in ["cpu", "cuda"] {
            let mut other = history();
            other.benchmark_id = format!("alexnet/train/b128/f32/{backend}");
            assert_eq!(bisect_command(&other, &other.steps[0]), None, "{backend}");
        }
    }

    #[test]
    fn a_commit_url_must_be_http() {
        assert!(check_commit_url("https://example.com/{commit}").is_ok());
        assert!(check_commit_url("http://example.com/{commit}").is_ok());
        for url in ["javascript:alert(1)", "ftp://x/{commit}", ""] {
            let kind = check_commit_url(url).err().map(|e| e.kind());
            assert_eq!(kind, Some(crate::ErrorKind::InvalidInput), "{url}");
        }
    }

    #[test]
    fn history_svg_snapshot() {
        insta::assert_snapshot!("history_svg", history_svg(&history(), URL));
    }

    #[test]
    fn the_svg_is_xml_with_a_linked_point_per_commit_and_the_change_point() {
        let mut hostile = history();
        hostile.benchmark_id = HOSTILE.to_string();
        hostile.points[0].adapter = HOSTILE.to_string();
        let svg = history_svg(&hostile, URL);
        let document = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
        let root = document.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let count = |tag: &str| root.descendants().filter(|n| n.has_tag_name(tag)).count();
        assert_eq!(count("circle"), 6);
        assert_eq!(count("a"), 6);
        assert_eq!(count("script"), 0, "a record's text never becomes an element");
        let links: Vec<&str> = root
            .descendants()
            .filter(|n| n.has_tag_name("a"))
            .filter_map(|n| n.attribute("href"))
            .collect();
        assert_eq!(
            links[3],
            format!(
                "https://github.com/convbench/convbench/commit/{}",
                hostile.points[3].commit
            )
        );
        let change = root
            .descendants()
            .find(|n| n.attribute("class") == Some("change-point"))
            .expect("the change point is drawn");
        let title = change
            .first_element_child()
            .and_then(|t| t.text())
            .expect("its title");
        assert!(title.contains("+15.0%") && title.contains("p = 0.020"), "{title}");
        // The hostile message comes back as text, its control character replaced.
        assert!(title.ends_with(&HOSTILE.replace('\u{7}', "\u{fffd}")), "{title}");
    }

    #[test]
    fn the_page_is_well_formed_with_a_filterable_chart_per_series_and_no_record_text_in_its_script() {
        let mut other = history();
        other.phase = Phase::Forward;
        other.steps.clear();
        let mut hostile = history();
        hostile.points[0].model = HOSTILE.to_string();
        let html = history_html(&[history(), other, hostile], "convbench <history>", URL);
        let options = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        };
        let document =
            roxmltree::Document::parse_with_options(&html, options).expect("the page is well-formed XML too");
        let root = document.root_element();
        let sections: Vec<_> = root.descendants().filter(|n| n.has_tag_name("section")).collect();
        assert_eq!(sections.len(), 3);
        assert_eq!(sections[1].attribute("data-phase"), Some("forward"));
        assert_eq!(
            sections[2].attribute("data-model"),
            Some(HOSTILE.replace('\u{7}', "\u{fffd}").as_str())
        );
        let selects: Vec<_> = root
            .descendants()
            .filter(|n| n.has_tag_name("select"))
            .filter_map(|n| n.attribute("name"))
            .collect();
        assert_eq!(selects, ["model", "phase", "adapter", "precision"]);
        let script = root
            .descendants()
            .find(|n| n.has_tag_name("script"))
            .and_then(|n| n.text())
            .expect("one script");
        assert_eq!(script, SCRIPT);
        assert!(!html.contains("<script>alert"), "hostile markup is escaped");
        assert!(!html.contains("http://") || html.contains("http://www.w3.org/2000/svg"));
        assert!(!html.contains("src=\""), "nothing is loaded");
    }

    #[test]
    fn only_http_commit_urls_become_links() {
        let svg = history_svg(&history(), Some("javascript:alert(1)//{commit}"));
        assert!(!svg.contains("javascript:") && !svg.contains("<a "), "{svg}");
        assert!(!history_svg(&history(), None).contains("<a "));
    }

    #[test]
    fn github_remotes_give_commit_urls_and_others_none() {
        let expected = Some("https://github.com/owner/repo/commit/{commit}".to_string());
        assert_eq!(github_commit_url("https://github.com/owner/repo.git"), expected);
        assert_eq!(github_commit_url("git@github.com:owner/repo.git"), expected);
        assert_eq!(github_commit_url("ssh://git@github.com/owner/repo"), expected);
        assert_eq!(github_commit_url("https://gitlab.com/owner/repo"), None);
        assert_eq!(github_commit_url("https://github.com/owner/re\"po"), None);
        assert_eq!(github_commit_url("https://github.com/owner/repo/extra"), None);
    }

    #[test]
    fn svg_file_names_keep_to_safe_characters() {
        let mut history = history();
        assert_eq!(
            history_svg_file_name(&history),
            "vulkan-nvidia-h100-10de-2330__alexnet_train_b128_f32_wgpu__total.svg"
        );
        history.slug = "../..".to_string();
        history.benchmark_id = "a/../../b c".to_string();
        let name = history_svg_file_name(&history);
        assert_eq!(name, "_.._..__a_.._.._b_c__total.svg");
        assert!(!name.contains('/'));
        // A 300-character model name gives a name a file system takes, distinct per benchmark.
        history.benchmark_id = format!("{}/train/b1/f32/wgpu", "m".repeat(300));
        let long = history_svg_file_name(&history);
        history.benchmark_id = format!("{}/train/b2/f32/wgpu", "m".repeat(300));
        let other = history_svg_file_name(&history);
        assert!(long.len() <= 200, "{} bytes", long.len());
        assert!(long.ends_with(".svg") && long != other, "{long} {other}");
    }
}
