//! Grouped bar charts as inline SVG for the experiment page (one bar per variant in each
//! group, its confidence interval as a whisker, the baseline outlined; values in `<title>`s),
//! and the escaping and short numbers every HTML page uses. Bars of categories with whiskers
//! are not a time series: the report's line charts are `uplot_chart`'s. Charts scale with the
//! page through their viewBox and need no script or network.

use std::fmt::Write;

/// Size of the SVG coordinate system; the page scales it to the column width.
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 46.0;

/// The value axis of a bar chart: its range and round ticks (value, label).
#[derive(Debug, Clone)]
struct Axis {
    min: f64,
    max: f64,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// A linear axis covering `[lo, hi]` (and 0 when `from_zero`) with 4–8 round ticks.
    fn linear(lo: f64, hi: f64, from_zero: bool) -> Axis {
        let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() && hi >= lo { (lo, hi) } else { (0.0, 1.0) };
        if from_zero {
            lo = lo.min(0.0);
        }
        if hi - lo < 1e-12 {
            hi = if hi == 0.0 { 1.0 } else { hi + hi.abs() * 0.5 };
        }
        let step = nice_step((hi - lo) / 5.0);
        let (min, max) = ((lo / step).floor() * step, (hi / step).ceil() * step);
        let n = ((max - min) / step).round() as usize;
        let ticks = (0..=n).map(|i| min + step * i as f64).map(|v| (v, fmt_num(v))).collect();
        Axis { min, max, ticks }
    }

    /// Position of `v` along the axis, 0.0 at `min` to 1.0 at `max`.
    fn frac(&self, v: f64) -> f64 {
        (v - self.min) / (self.max - self.min)
    }
}

/// One bar: a point estimate and its interval (`lo`/`hi` non-finite when it has none).
#[derive(Debug, Clone, Copy)]
pub struct Bar {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

/// One series of a bar chart (e.g. a variant): a bar per group, `None` where it has no value.
#[derive(Debug, Clone)]
pub struct BarSeries {
    pub name: String,
    pub color: String,
    /// Drawn with a dark outline and named "(baseline)" in the legend.
    pub baseline: bool,
    pub bars: Vec<Option<Bar>>,
}

/// Grouped bars from zero with interval whiskers: one group per category (e.g. p50, p99),
/// one bar per series in each.
#[derive(Debug, Clone)]
pub struct BarChart {
    /// Unique within the page (the `data-chart` attribute).
    pub id: String,
    pub title: String,
    pub y_label: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
}

impl BarChart {
    /// The chart as a `<figure class="chart bars">`: title, SVG, legend.
    pub fn to_html(&self) -> String {
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let bars = || self.series.iter().flat_map(|s| s.bars.iter().flatten());
        // Whiskers reach at most 3× the highest bar: an interval from two repetitions can
        // span orders of magnitude and would flatten every bar; a clipped whisker has no cap
        // (its title gives the whole interval).
        let highest = bars().map(|b| b.value).filter(|v| v.is_finite()).fold(0.0, f64::max);
        let top = bars().map(|b| if b.hi.is_finite() { b.hi.max(b.value) } else { b.value }).filter(|v| v.is_finite()).fold(0.0, f64::max).min(3.0 * highest);
        let y = Axis::linear(0.0, top, true);
        let py = |v: f64| TOP + (1.0 - y.frac(v).clamp(0.0, 1.0)) * ph;
        let mut s = String::new();
        let id = esc(&self.id);
        let _ = write!(
            s,
            r#"<figure class="chart bars" data-chart="{id}"><figcaption>{}</figcaption><svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">"#,
            esc(&self.title),
            esc(&self.title)
        );
        let _ = write!(s, r#"<rect class="plot" x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}"/>"#);
        for (v, label) in &y.ticks {
            let yy = py(*v);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT + pw,
                LEFT - 6.0,
                yy + 4.0,
                esc(label)
            );
        }
        let groups = self.groups.len().max(1) as f64;
        let gw = pw / groups;
        let n = self.series.len().max(1) as f64;
        let bw = gw * 0.7 / n;
        for (gi, group) in self.groups.iter().enumerate() {
            let g0 = LEFT + gw * gi as f64;
            let _ = write!(s, r#"<text class="tick group" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, g0 + gw / 2.0, TOP + ph + 16.0, esc(group));
            for (si, series) in self.series.iter().enumerate() {
                let Some(b) = series.bars.get(gi).copied().flatten().filter(|b| b.value.is_finite()) else { continue };
                let x = g0 + gw * 0.15 + bw * si as f64;
                let (y0, y1) = (py(b.value), py(0.0));
                let outline = if series.baseline { r##" stroke="#1f2328" stroke-width="1.5""## } else { "" };
                let interval = if b.lo.is_finite() && b.hi.is_finite() { format!(" [{}, {}]", fmt_num(b.lo), fmt_num(b.hi)) } else { String::new() };
                let _ = write!(
                    s,
                    r#"<rect class="bar" x="{:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{}"{outline}><title>{}: {}{interval}</title></rect>"#,
                    x + bw * 0.08,
                    bw * 0.84,
                    (y1 - y0).max(0.0),
                    esc(&series.color),
                    esc(&series.name),
                    fmt_num(b.value)
                );
                let cx = x + bw / 2.0;
                let mut label_y = y0;
                if b.lo.is_finite() && b.hi.is_finite() {
                    let (ylo, yhi, w) = (py(b.lo), py(b.hi), (bw * 0.2).min(8.0));
                    let cap = if b.hi > top { String::new() } else { format!("M{:.1},{yhi:.1}H{:.1}", cx - w, cx + w) };
                    let _ = write!(s, r#"<path class="whisker" d="M{cx:.1},{ylo:.1}V{yhi:.1}M{:.1},{ylo:.1}H{:.1}{cap}"/>"#, cx - w, cx + w);
                    label_y = label_y.min(yhi);
                }
                let _ =
                    write!(s, r#"<text class="value" x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, (label_y - 6.0).max(TOP + 9.0), fmt_num(b.value));
            }
        }
        let _ = write!(s, r#"<path class="axis" d="M{LEFT},{TOP}V{:.1}H{:.1}"/>"#, TOP + ph, LEFT + pw);
        let (ly, lx) = (TOP + ph / 2.0, 16.0);
        let _ = write!(
            s,
            r#"<text class="axis-label" x="{lx}" y="{ly:.1}" text-anchor="middle" transform="rotate(-90 {lx} {ly:.1})">{}</text>"#,
            esc(&self.y_label)
        );
        s.push_str(r#"</svg><div class="legend">"#);
        for series in &self.series {
            let _ = write!(
                s,
                r#"<span><svg width="14" height="12" aria-hidden="true"><rect x="1" y="1" width="12" height="10" fill="{}"{}/></svg>{}{}</span>"#,
                esc(&series.color),
                if series.baseline { r##" stroke="#1f2328" stroke-width="1.5""## } else { "" },
                esc(&series.name),
                if series.baseline { " (baseline)" } else { "" }
            );
        }
        s.push_str("</div></figure>");
        s
    }
}

/// 1, 2 or 5 times a power of ten, near `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm < 1.5 {
        1.0
    } else if norm < 3.0 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Short tick labels: 0.05, 2.5, 150, 12k, 1.5M.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        trim(format!("{v:.4}"))
    }
}

/// Escapes text for HTML and SVG (content and attribute values).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_cover_the_data() {
        let a = Axis::linear(0.0, 9_730.0, true);
        assert_eq!((a.min, a.max), (0.0, 10_000.0));
        let labels: Vec<&str> = a.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0", "2000", "4000", "6000", "8000", "10k"]);
        let flat = Axis::linear(3.0, 3.0, false);
        assert!(flat.min <= 3.0 && flat.max > 3.0);
    }

    #[test]
    fn bars_have_whiskers_and_mark_the_baseline() {
        let bar = |v: f64| Some(Bar { value: v, lo: v * 0.9, hi: v * 1.1 });
        let chart = BarChart {
            id: "b".into(),
            title: "latency".into(),
            y_label: "ms".into(),
            groups: vec!["p50".into(), "p99".into()],
            series: vec![
                BarSeries { name: "a".into(), color: "#f00".into(), baseline: true, bars: vec![bar(1.0), bar(4.0)] },
                BarSeries { name: "b".into(), color: "#00f".into(), baseline: false, bars: vec![bar(1.2), None] },
            ],
        };
        let html = chart.to_html();
        assert_eq!(html.matches("<rect class=\"bar\"").count(), 3);
        assert_eq!(html.matches("<path class=\"whisker\"").count(), 3);
        assert!(html.contains("a (baseline)") && html.contains(">p99</text>"));
        // an interval of two repetitions can be enormous: its whisker is clipped, the bars stay
        let wide = BarChart {
            series: vec![BarSeries { name: "c".into(), color: "#0f0".into(), baseline: false, bars: vec![Some(Bar { value: 2.0, lo: 0.1, hi: 9e9 })] }],
            ..chart
        };
        let html = wide.to_html();
        assert!(html.contains("<title>c: 2 [0.1, 9000M]</title>") && html.contains(r#"text-anchor="end">6</text>"#), "{html}");
        assert!(!html.contains(r#"height="0.0""#), "{html}");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(fmt_num(12_500.0), "12.5k");
        assert_eq!(fmt_num(2_000_000.0), "2M");
        assert_eq!(fmt_num(0.05), "0.05");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(150.0), "150");
        assert_eq!(fmt_num(0.0), "0");
    }
}
