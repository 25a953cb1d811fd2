//! A line chart in inline SVG of one figure per interval over the wall clock, one line per
//! series: an experiment's variants on one time axis (`experiment_html`), so that a page shows
//! whether they were measured in the same seconds (simultaneous blocks, their lines side by
//! side) or one after the other (their lines taking turns), and where a tail rose for one and
//! not the other. A gap of more than `GAP_S` between two points breaks the line. Plain data
//! in, one `<figure>` out; no script.

use super::svg_chart::{esc, fmt_num};
use std::fmt::Write;

/// A pause longer than this between two points breaks the line (between runs).
const GAP_S: f64 = 3.0;
const WIDTH: f64 = 880.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 36.0;

/// One line: its name, color and points (seconds on the common axis, value).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub color: String,
    pub points: Vec<(f64, f64)>,
}

/// A chart of several lines over the same seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineChart {
    pub title: String,
    pub y_label: String,
    pub lines: Vec<Line>,
}

impl TimelineChart {
    /// The chart as a `<figure>`; empty when no line has a point.
    pub fn to_html(&self) -> String {
        let all: Vec<(f64, f64)> = self.lines.iter().flat_map(|l| l.points.iter().copied()).filter(|(t, v)| t.is_finite() && v.is_finite()).collect();
        if all.is_empty() {
            return String::new();
        }
        let (t0, t1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (t, _)| (a.min(*t), b.max(*t)));
        let top = all.iter().map(|(_, v)| *v).fold(0.0, f64::max).max(1e-9) * 1.05;
        let span = (t1 - t0).max(1.0);
        let x = |t: f64| LEFT + (t - t0) / span * (WIDTH - LEFT - RIGHT);
        let y = |v: f64| TOP + (1.0 - v / top) * (HEIGHT - TOP - BOTTOM);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<figure class="chart timeline"><figcaption>{}</figcaption><svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}">"#,
            esc(&self.title),
            esc(&self.title)
        );
        for k in 0..=4 {
            let v = top * k as f64 / 4.0;
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#d8dee4" stroke-width="1"/><text x="{}" y="{:.1}" text-anchor="end" font-size="10.5">{}</text>"##,
                WIDTH - RIGHT,
                LEFT - 6.0,
                y(v) + 3.5,
                fmt_num(v),
                y = y(v)
            );
        }
        for k in 0..=5 {
            let t = t0 + span * k as f64 / 5.0;
            let _ = write!(s, r#"<text x="{:.1}" y="{}" text-anchor="middle" font-size="10.5">{}</text>"#, x(t), HEIGHT - BOTTOM + 16.0, minutes(t - t0));
        }
        let _ = write!(
            s,
            r#"<text x="12" y="{:.1}" font-size="11" transform="rotate(-90 12 {:.1})" text-anchor="middle">{}</text><text x="{:.1}" y="{}" font-size="11" text-anchor="middle">minutes since the first point</text>"#,
            HEIGHT / 2.0,
            HEIGHT / 2.0,
            esc(&self.y_label),
            (WIDTH + LEFT) / 2.0,
            HEIGHT - 4.0
        );
        for line in &self.lines {
            for segment in segments(&line.points) {
                let d: Vec<String> = segment.iter().map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v))).collect();
                let _ = write!(
                    s,
                    r#"<polyline class="series" data-series="{}" fill="none" stroke="{}" stroke-width="1.6" points="{}"/>"#,
                    esc(&line.name),
                    line.color,
                    d.join(" ")
                );
            }
        }
        s.push_str("</svg><div class=\"legend\">");
        for line in &self.lines {
            let _ = write!(s, r#"<span><svg width="14" height="4"><rect width="14" height="4" fill="{}"/></svg> {}</span> "#, line.color, esc(&line.name));
        }
        s.push_str("</div></figure>");
        s
    }
}

/// The points of a line, broken where they are more than [`GAP_S`] apart, in time order.
fn segments(points: &[(f64, f64)]) -> Vec<Vec<(f64, f64)>> {
    let mut sorted: Vec<(f64, f64)> = points.iter().copied().filter(|(t, v)| t.is_finite() && v.is_finite()).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    for p in sorted {
        match out.last_mut() {
            Some(seg) if seg.last().is_some_and(|l| p.0 - l.0 <= GAP_S) => seg.push(p),
            _ => out.push(vec![p]),
        }
    }
    out
}

fn minutes(s: f64) -> String {
    let m = s / 60.0;
    if m >= 10.0 {
        format!("{m:.0}")
    } else {
        format!("{m:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_break_between_runs_and_share_one_axis() {
        let a = Line { name: "a".into(), color: "#111".into(), points: vec![(0.0, 1.0), (1.0, 2.0), (2.0, 1.5), (20.0, 1.0), (21.0, 1.2)] };
        let b = Line { name: "b<".into(), color: "#222".into(), points: vec![(0.0, 3.0), (1.0, 2.0), (2.0, 2.5)] };
        let html = TimelineChart { title: "read p99 per interval".into(), y_label: "ms".into(), lines: vec![a, b] }.to_html();
        assert_eq!(html.matches(r#"data-series="a""#).count(), 2, "a's two runs are two lines: {html}");
        assert_eq!(html.matches(r#"data-series="b&lt;""#).count(), 1, "{html}");
        assert!(html.contains("read p99 per interval") && html.contains("minutes since the first point"));
        assert_eq!(TimelineChart { title: "x".into(), y_label: "ms".into(), lines: vec![] }.to_html(), "");
    }
}
