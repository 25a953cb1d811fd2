//! Line charts of the HTML report as data for uPlot: a [`LineChart`] says what to draw (axes
//! with their labels and units, series, shaded marks such as the warm-up, events, suspect
//! intervals or a knee) and renders as a `<figure>` holding its JSON; the page embeds uPlot and
//! `assets/casslab-charts.js` once ([`scripts`]), which draws every figure with hover, zoom and
//! series toggling, offline. It knows nothing of runs or latency (`html_charts` decides what to
//! plot) and draws nothing itself: ticks, tooltips and layout are the script's.

use serde::Serialize;

/// uPlot 1.6.32 (MIT, `assets/uPlot.LICENSE`), from the npm registry's `uplot` package.
const UPLOT_JS: &str = include_str!("../../assets/uPlot.iife.min.js");
/// uPlot's stylesheet, for the page's `<style>`.
pub const UPLOT_CSS: &str = include_str!("../../assets/uPlot.min.css");
/// Turns each figure's JSON into a uPlot chart; its header documents the JSON and the
/// `casslab:window` event.
const CHARTS_JS: &str = include_str!("../../assets/casslab-charts.js");

/// The scripts that draw the page's charts, to go at the end of its `<body>`.
pub fn scripts() -> String {
    format!("<script>{UPLOT_JS}</script><script>{CHARTS_JS}</script>")
}

/// What the x axis shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum XAxis {
    /// Seconds since the run started from `from` to `to` exactly (the axis ends where the
    /// data ends), shown as the UTC time of day when `t0_ms` (the wall clock of 0) is given.
    Time { label: String, from: f64, to: f64, t0_ms: Option<i64> },
    /// A linear axis from 0.
    Linear { label: String, from: f64, to: f64 },
    /// The "1 in N" percentile axis of HdrHistogram plots: log, ticks 0%, 90%, 99%, 99.9%…
    Percentile { label: String, from: f64, to: f64, max_one_in: f64 },
}

impl XAxis {
    pub fn time(label: &str, from_s: f64, to_s: f64, t0_unix_ms: Option<i64>) -> XAxis {
        XAxis::Time { label: label.into(), from: from_s, to: to_s, t0_ms: t0_unix_ms }
    }
    /// From 0 to a little past `max` (at least 1).
    pub fn linear(label: &str, max: f64) -> XAxis {
        XAxis::Linear { label: label.into(), from: 0.0, to: if max > 0.0 && max.is_finite() { max } else { 1.0 } }
    }
    /// From 1 (0%) to a little past `max_one_in`.
    pub fn percentile(label: &str, max_one_in: f64) -> XAxis {
        let max_one_in = max_one_in.max(10.0);
        XAxis::Percentile { label: label.into(), from: 1.0, to: max_one_in * 1.25, max_one_in }
    }
    pub fn label(&self) -> &str {
        match self {
            XAxis::Time { label, .. } | XAxis::Linear { label, .. } | XAxis::Percentile { label, .. } => label,
        }
    }
}

/// The y axis: its label (with the unit) and whether it is logarithmic; the range follows the
/// data (from 0 when linear).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct YAxis {
    pub label: String,
    pub log: bool,
}

impl YAxis {
    pub fn linear(label: &str) -> YAxis {
        YAxis { label: label.into(), log: false }
    }
}

/// One line of a chart.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub name: String,
    pub color: String,
    pub dashed: bool,
    /// Thicker line, for totals.
    pub bold: bool,
    /// `(x, y)`; a non-finite y (or a y ≤ 0 on a log axis) breaks the line.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    pub fn new(name: impl Into<String>, color: &str, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), color: color.to_string(), dashed: false, bold: false, points }
    }
    pub fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }
    pub fn bold(mut self) -> Series {
        self.bold = true;
        self
    }
}

/// What a marked x range is; each kind has its own look.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkKind {
    /// A phase that is not measured (the warm-up): shaded, labelled.
    Warmup,
    /// An event of the run: shaded from its start to its end, a line at its start.
    Event,
    /// An interval whose p99 spiked: shaded.
    Suspect,
    /// The knee of a latency-versus-throughput curve: a dashed line.
    Knee,
}

/// A marked x range (`from == to` for an instant) with its label.
#[derive(Debug, Clone, Serialize)]
pub struct Mark {
    pub kind: MarkKind,
    pub from: f64,
    pub to: f64,
    pub label: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct LineChart {
    /// Unique within the page (the `data-chart` attribute, and the chart's name for scripts).
    #[serde(skip)]
    pub id: String,
    pub title: String,
    pub x: XAxis,
    pub y: YAxis,
    pub series: Vec<Series>,
    pub marks: Vec<Mark>,
}

impl LineChart {
    /// Whether any series has a point to draw.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| s.points.iter().any(|p| p.1.is_finite()))
    }

    /// The chart's data and settings as JSON (non-finite numbers as `null`), safe inside a
    /// `<script>` element.
    pub fn json(&self) -> String {
        // "</" would end the script element early; "<\/" is the same string to JSON
        serde_json::to_string(self).expect("a chart serializes").replace("</", "<\\/")
    }

    /// The chart as a `<figure class="chart">`: title, the host the script draws into, its JSON.
    pub fn to_html(&self) -> String {
        let title = super::svg_chart::esc(&self.title);
        format!(
            r#"<figure class="chart" data-chart="{}"><figcaption>{title}</figcaption><div class="plot-host" role="img" aria-label="{title}"></div><script type="application/json" class="chart-data">{}</script></figure>"#,
            super::svg_chart::esc(&self.id),
            self.json()
        )
    }
}

/// The page's own look of the charts, beside [`UPLOT_CSS`].
pub const CHART_CSS: &str = r#"
.plot-host{min-height:300px}
.charts.wide .plot-host{min-height:380px}
.plot-host .u-legend{font-size:12px;color:#444c56;text-align:left;margin:2px 0 0}
.plot-host .u-legend .u-marker{width:14px;height:3px;border-width:0 0 3px}
.plot-host .u-legend th{font-weight:400}
.plot-host .u-legend .u-series{padding:0 6px 0 0}
.plot-host .u-legend .u-series > *{padding:2px}
.plot-host .u-select{background:rgba(78,121,167,.15)}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> LineChart {
        LineChart {
            id: "t".into(),
            title: "a <b>".into(),
            x: XAxis::time("time since the run started (s)", 0.0, 10.0, None),
            y: YAxis { label: "latency (ms), log scale".into(), log: true },
            series: vec![Series::new("p99 </script>", "#f00", vec![(1.0, 2.0), (2.0, 3.0), (3.0, f64::NAN), (4.0, 5.0)]).dashed()],
            marks: vec![
                Mark { kind: MarkKind::Warmup, from: 0.0, to: 2.0, label: "warm-up".into() },
                Mark { kind: MarkKind::Event, from: 3.0, to: 3.0, label: "kill <node2>".into() },
            ],
        }
    }

    #[test]
    fn a_chart_is_its_data_as_json_with_gaps_as_null() {
        let c = chart();
        let v: serde_json::Value = serde_json::from_str(&c.json().replace("<\\/", "</")).unwrap();
        assert_eq!(v["x"]["kind"], "time");
        assert_eq!((v["x"]["from"].as_f64(), v["x"]["to"].as_f64()), (Some(0.0), Some(10.0)));
        assert!(v["x"]["t0_ms"].is_null());
        assert_eq!((v["y"]["label"].as_str(), v["y"]["log"].as_bool()), (Some("latency (ms), log scale"), Some(true)));
        let s = &v["series"][0];
        assert_eq!((s["name"].as_str(), s["dashed"].as_bool(), s["bold"].as_bool()), (Some("p99 </script>"), Some(true), Some(false)));
        let pts = s["points"].as_array().unwrap();
        assert_eq!(pts.len(), 4);
        assert!(pts[2][1].is_null(), "NaN is a gap: {pts:?}");
        assert_eq!(pts[3][1].as_f64(), Some(5.0));
        let kinds: Vec<&str> = v["marks"].as_array().unwrap().iter().map(|m| m["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["warmup", "event"]);
        assert_eq!(v["marks"][1]["label"], "kill <node2>");
    }

    #[test]
    fn the_figure_escapes_its_title_and_cannot_end_its_script_early() {
        let html = chart().to_html();
        assert!(html.starts_with(r#"<figure class="chart" data-chart="t"><figcaption>a &lt;b&gt;</figcaption>"#), "{html}");
        assert_eq!(html.matches("</script>").count(), 1, "{html}");
        assert!(html.contains(r#"p99 <\/script>"#));
        let empty = LineChart { series: vec![Series::new("x", "#000", vec![(1.0, f64::NAN)])], ..chart() };
        assert!(chart().has_data() && !empty.has_data());
    }

    #[test]
    fn axes_cover_their_range() {
        assert_eq!(XAxis::linear("ops/s", 0.0), XAxis::Linear { label: "ops/s".into(), from: 0.0, to: 1.0 });
        let XAxis::Percentile { to, max_one_in, .. } = XAxis::percentile("percentile", 25_000.0) else { panic!() };
        assert!(to > max_one_in && max_one_in == 25_000.0);
        assert_eq!(XAxis::time("t", 2.0, 9.0, Some(5)).label(), "t");
    }

    #[test]
    fn the_scripts_are_embedded_and_fetch_nothing() {
        let s = scripts();
        assert!(s.contains("uPlot") && s.contains("casslab:window") && s.contains("from_s"));
        assert_eq!(s.matches("<script>").count(), 2);
        assert_eq!(s.matches("</script>").count(), 2, "no vendored file may end its script early");
        for fetch in ["fetch(", "XMLHttpRequest", "import(", " src=", "<link"] {
            assert!(!s.contains(fetch), "{fetch}");
        }
    }
}
