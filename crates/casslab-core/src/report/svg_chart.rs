//! Line charts as inline SVG for the HTML report: linear and log axes with readable ticks,
//! time axes that end where the data ends (seconds since the start, or the wall clock in UTC),
//! series drawn as paths (a NaN y leaves a gap), shaded x ranges (e.g. the warm-up), axis
//! labels, an HTML legend, and values on hover (each x a strip whose tooltip gives every
//! series' value there, SVG `<title>`s, no script). Charts scale with the page through their viewBox and need no
//! script or network. It knows nothing of runs or latency; `html_charts.rs` decides what to
//! plot.

use std::fmt::Write;

/// Size of the SVG coordinate system; the page scales it to the column width.
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 46.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    Log,
}

/// How a value of an axis reads in a tooltip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueFormat {
    Number,
    /// Seconds since the run started: "12.5 s".
    Seconds,
    /// Seconds since `t0_unix_ms`, shown as the UTC time of day: "14:03:12".
    Clock {
        t0_unix_ms: i64,
    },
    /// A "1 in N" value, shown as a percentile: "99.9%".
    Percentile,
}

impl ValueFormat {
    pub fn show(self, v: f64) -> String {
        match self {
            ValueFormat::Number => fmt_num(v),
            ValueFormat::Seconds => format!("{v:.1} s"),
            ValueFormat::Clock { t0_unix_ms } => clock_of_day(t0_unix_ms + (v * 1000.0).round() as i64, v.fract().abs() > 1e-6),
            ValueFormat::Percentile if v > 1.0 => {
                let p = 100.0 * (1.0 - 1.0 / v);
                let digits = ((1.0 / (1.0 - p / 100.0)).log10().floor() as usize).saturating_sub(2).min(5);
                format!("{p:.digits$}%")
            }
            ValueFormat::Percentile => "0%".into(),
        }
    }
}

/// "14:03:12" (or "14:03:12.5" with `tenths`) in UTC.
fn clock_of_day(unix_ms: i64, tenths: bool) -> String {
    let day_ms = unix_ms.rem_euclid(86_400_000);
    let (h, m, s) = (day_ms / 3_600_000, day_ms / 60_000 % 60, day_ms / 1000 % 60);
    if tenths {
        format!("{h:02}:{m:02}:{s:02}.{}", day_ms % 1000 / 100)
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// An axis: its range, scale, ticks (value, label), title and how its values read.
#[derive(Debug, Clone)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub min: f64,
    pub max: f64,
    pub ticks: Vec<(f64, String)>,
    pub format: ValueFormat,
}

impl Axis {
    /// A linear axis covering `[lo, hi]` (and 0 when `from_zero`) with 4–8 round ticks.
    pub fn linear(label: &str, lo: f64, hi: f64, from_zero: bool) -> Axis {
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
        Axis { label: label.to_string(), scale: Scale::Linear, min, max, ticks, format: ValueFormat::Number }
    }

    /// A log axis from the decade at or below `lo` to the one at or above `hi` (both > 0);
    /// 1-2-5 ticks when it spans at most three decades.
    pub fn log(label: &str, lo: f64, hi: f64) -> Axis {
        let lo = if lo > 0.0 && lo.is_finite() { lo } else { 1.0 };
        let hi = if hi >= lo && hi.is_finite() { hi } else { lo };
        let (mut d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        if d1 <= d0 {
            d0 = d1 - 1;
        }
        let multiples: &[f64] = if d1 - d0 <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        let mut ticks = Vec::new();
        for d in d0..=d1 {
            for m in multiples {
                let v = m * 10f64.powi(d);
                if v <= 10f64.powi(d1) * 1.0001 {
                    ticks.push((v, fmt_num(v)));
                }
            }
        }
        Axis { label: label.to_string(), scale: Scale::Log, min: 10f64.powi(d0), max: 10f64.powi(d1), ticks, format: ValueFormat::Number }
    }

    /// The "1 in N" percentile axis of HdrHistogram plots: log from 1 to a little past
    /// `max_one_in`, a tick at each decade labelled 0%, 90%, 99%, 99.9%, …
    pub fn percentile(label: &str, max_one_in: f64) -> Axis {
        let max = max_one_in.max(10.0) * 1.25;
        let ticks = (0..=max.log10().floor() as i32)
            .map(|d| {
                let label = match d {
                    0 => "0%".to_string(),
                    1 => "90%".to_string(),
                    d => format!("99.{}%", "9".repeat(d as usize - 2)).replace(".%", "%"),
                };
                (10f64.powi(d), label)
            })
            .collect();
        Axis { label: label.to_string(), scale: Scale::Log, min: 1.0, max, ticks, format: ValueFormat::Percentile }
    }

    /// A time axis from `lo_s` to `hi_s` exactly (it ends where the data ends), in seconds
    /// since the run started, or with `t0_unix_ms` as the UTC time of day, ticks on round
    /// seconds (or round wall-clock times).
    pub fn time(label: &str, lo_s: f64, hi_s: f64, t0_unix_ms: Option<i64>) -> Axis {
        let (lo, hi) = if lo_s.is_finite() && hi_s.is_finite() && hi_s > lo_s { (lo_s, hi_s) } else { (lo_s.min(0.0), lo_s.max(0.0) + 1.0) };
        let mut step = nice_step((hi - lo) / 5.0);
        if t0_unix_ms.is_some() {
            // wall-clock ticks on 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1 h …
            step = [1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0]
                .into_iter()
                .find(|s| (hi - lo) / s <= 7.0)
                .unwrap_or(step.max(3600.0));
        }
        let offset_s = t0_unix_ms.map_or(0.0, |t| t as f64 / 1000.0);
        let format = match t0_unix_ms {
            Some(t0_unix_ms) => ValueFormat::Clock { t0_unix_ms },
            None => ValueFormat::Number,
        };
        let mut ticks = Vec::new();
        let mut v = ((lo + offset_s) / step - 1e-9).ceil() * step - offset_s;
        while v <= hi + 1e-9 {
            let label = match format {
                ValueFormat::Clock { t0_unix_ms } => clock_of_day(t0_unix_ms + (v * 1000.0).round() as i64, false),
                _ => fmt_num(v),
            };
            ticks.push((v, label));
            v += step;
        }
        let format = if t0_unix_ms.is_some() { format } else { ValueFormat::Seconds };
        Axis { label: label.to_string(), scale: Scale::Linear, min: lo, max: hi, ticks, format }
    }

    /// Position of `v` along the axis, 0.0 at `min` to 1.0 at `max` (NaN if not drawable).
    fn frac(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.min) / (self.max - self.min),
            Scale::Log if v > 0.0 => (v.log10() - self.min.log10()) / (self.max.log10() - self.min.log10()),
            Scale::Log => f64::NAN,
        }
    }
}

/// One line of a chart.
#[derive(Debug, Clone)]
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

/// A shaded x range with a label at its top, e.g. the warm-up; or with `event`, an event of
/// the run (a marked span from its start to its end, with a line at its start).
#[derive(Debug, Clone)]
pub struct Band {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
    pub event: bool,
}

#[derive(Debug, Clone)]
pub struct LineChart {
    /// Unique within the page (used for the clip path and the `data-chart` attribute).
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
}

impl LineChart {
    /// The chart as a `<figure class="chart">`: title, SVG, legend.
    pub fn to_html(&self) -> String {
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let px = |x: f64| LEFT + self.x.frac(x) * pw;
        let py = |y: f64| TOP + (1.0 - self.y.frac(y)) * ph;
        let mut s = String::new();
        let id = esc(&self.id);
        let _ = write!(
            s,
            r#"<figure class="chart" data-chart="{id}"><figcaption>{}</figcaption><svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">"#,
            esc(&self.title),
            esc(&self.title)
        );
        let _ = write!(s, r#"<defs><clipPath id="clip-{id}"><rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}"/></clipPath></defs>"#);
        let _ = write!(s, r#"<rect class="plot" x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}"/>"#);
        for (i, b) in self.bands.iter().filter(|b| b.event).enumerate() {
            // at least 2 px wide, so an instant event (a kill) still shows
            let x0 = px(b.x0).clamp(LEFT, LEFT + pw);
            let x1 = px(b.x1).clamp(LEFT, LEFT + pw).max(x0 + 2.0);
            let _ = write!(
                s,
                r#"<g class="event" data-event="{label}"><title>{label}</title><rect class="event-span" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{ph}"/><line class="event-start" x1="{x0:.1}" x2="{x0:.1}" y1="{TOP}" y2="{:.1}"/><text class="event-label" x="{:.1}" y="{:.1}">{label}</text></g>"#,
                x1 - x0,
                TOP + ph,
                x0 + 3.0,
                TOP + 28.0 + 12.0 * (i % 4) as f64,
                label = esc(&b.label)
            );
        }
        for b in self.bands.iter().filter(|b| !b.event) {
            let (x0, x1) = (px(b.x0).clamp(LEFT, LEFT + pw), px(b.x1).clamp(LEFT, LEFT + pw));
            if x1 > x0 {
                let _ = write!(
                    s,
                    r#"<rect class="band" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{ph}"/><text class="band-label" x="{:.1}" y="{:.1}">{}</text>"#,
                    x1 - x0,
                    x0 + 4.0,
                    TOP + 13.0,
                    esc(&b.label)
                );
            }
        }
        for (v, label) in &self.y.ticks {
            let y = py(*v);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                esc(label)
            );
        }
        for (v, label) in &self.x.ticks {
            let x = px(*v);
            // A label at the right edge would be cut in half.
            let anchor = if x > LEFT + pw - 20.0 { "end" } else { "middle" };
            let _ = write!(
                s,
                r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
                TOP + ph,
                TOP + ph + 16.0,
                esc(label)
            );
        }
        let _ = write!(s, r#"<path class="axis" d="M{LEFT},{TOP}V{:.1}H{:.1}"/>"#, TOP + ph, LEFT + pw);
        let _ = write!(s, r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, LEFT + pw / 2.0, HEIGHT - 8.0, esc(&self.x.label));
        let (ly, lx) = (TOP + ph / 2.0, 16.0);
        let _ = write!(
            s,
            r#"<text class="axis-label" x="{lx}" y="{ly:.1}" text-anchor="middle" transform="rotate(-90 {lx} {ly:.1})">{}</text>"#,
            esc(&self.y.label)
        );
        let _ = write!(s, r#"<g clip-path="url(#clip-{id})">"#);
        for series in &self.series {
            draw_series(&mut s, series, &px, &py);
        }
        s.push_str("</g>");
        self.hover_strips(&mut s, &px);
        s.push_str("</svg>");
        if self.series.len() > 1 || self.series.iter().any(|x| x.dashed) {
            s.push_str(r#"<div class="legend">"#);
            for series in &self.series {
                let _ = write!(
                    s,
                    r#"<span><svg width="26" height="10" aria-hidden="true"><line x1="1" x2="25" y1="5" y2="5" stroke="{}" stroke-width="{}"{}/></svg>{}</span>"#,
                    esc(&series.color),
                    if series.bold { 3 } else { 2 },
                    if series.dashed { r#" stroke-dasharray="5 3""# } else { "" },
                    esc(&series.name)
                );
            }
            s.push_str("</div>");
        }
        s.push_str("</figure>");
        s
    }
}

impl LineChart {
    /// A transparent strip around each x that has data, whose tooltip gives that x and every
    /// series' value there: hovering shows the values without a script.
    fn hover_strips(&self, s: &mut String, px: &impl Fn(f64) -> f64) {
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let mut xs: Vec<f64> = self.series.iter().flat_map(|se| se.points.iter().filter(|p| p.0.is_finite() && p.1.is_finite()).map(|p| p.0)).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let pos: Vec<f64> = xs.iter().map(|x| px(*x)).collect();
        s.push_str(r#"<g class="hover">"#);
        for (i, x) in xs.iter().enumerate() {
            let p = pos[i];
            if !(p.is_finite() && (LEFT - 0.5..=LEFT + pw + 0.5).contains(&p)) {
                continue;
            }
            let x0 = if i == 0 { LEFT } else { ((pos[i - 1] + p) / 2.0).max(LEFT) };
            let x1 = if i + 1 == xs.len() { LEFT + pw } else { ((pos[i + 1] + p) / 2.0).min(LEFT + pw) };
            let mut text = self.x.format.show(*x);
            for se in &self.series {
                if let Some((_, y)) = se.points.iter().find(|q| q.0 == *x && q.1.is_finite()) {
                    let _ = write!(text, "\n{}: {}", se.name, fmt_num(*y));
                }
            }
            let _ =
                write!(s, r#"<rect class="hover" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{ph}"><title>{}</title></rect>"#, (x1 - x0).max(0.5), esc(&text));
        }
        s.push_str("</g>");
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
        let y = Axis::linear(&self.y_label, 0.0, top, true);
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

fn draw_series(s: &mut String, series: &Series, px: &impl Fn(f64) -> f64, py: &impl Fn(f64) -> f64) {
    let pts: Vec<Option<(f64, f64)>> = series
        .points
        .iter()
        .map(|&(x, y)| {
            let (cx, cy) = (px(x), py(y));
            (cx.is_finite() && cy.is_finite()).then_some((cx, cy))
        })
        .collect();
    let mut d = String::new();
    let mut dots = String::new();
    for (i, p) in pts.iter().enumerate() {
        let Some((x, y)) = p else { continue };
        let prev = i > 0 && pts[i - 1].is_some();
        let next = pts.get(i + 1).is_some_and(Option::is_some);
        if !prev && !next {
            let _ = write!(dots, r#"<circle class="series" cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{}"/>"#, esc(&series.color));
            continue;
        }
        let _ = write!(d, "{}{x:.1},{y:.1}", if prev { "L" } else { "M" });
    }
    let title = format!("<title>{}</title>", esc(&series.name));
    if !d.is_empty() {
        let _ = write!(
            s,
            r#"<path class="series" d="{d}" stroke="{}" stroke-width="{}"{}>{title}</path>"#,
            esc(&series.color),
            if series.bold { 2.6 } else { 1.8 },
            if series.dashed { r#" stroke-dasharray="6 4""# } else { "" }
        );
    }
    s.push_str(&dots);
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
        let a = Axis::linear("ops/s", 0.0, 9_730.0, true);
        assert_eq!((a.min, a.max), (0.0, 10_000.0));
        let labels: Vec<&str> = a.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0", "2000", "4000", "6000", "8000", "10k"]);
        let flat = Axis::linear("ms", 3.0, 3.0, false);
        assert!(flat.min <= 3.0 && flat.max > 3.0);
    }

    #[test]
    fn log_and_percentile_axes() {
        let a = Axis::log("ms", 0.3, 45.0);
        assert_eq!((a.min, a.max), (0.1, 100.0));
        assert!(a.ticks.iter().any(|(_, l)| l == "0.2") && a.ticks.iter().any(|(_, l)| l == "50"));
        let wide = Axis::log("ms", 0.01, 5000.0);
        assert_eq!(wide.ticks.len(), 7);
        let p = Axis::percentile("percentile", 25_000.0);
        let labels: Vec<&str> = p.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%"]);
        assert!(p.max > 25_000.0 && p.max < 100_000.0);
        assert!((p.frac(p.max.sqrt()) - 0.5).abs() < 1e-9);
        let p = Axis::percentile("percentile", 100_000.0);
        assert_eq!(p.ticks.last().unwrap().1, "99.999%");
    }

    #[test]
    fn gaps_break_lines_and_lonely_points_are_dots() {
        let chart = LineChart {
            id: "t".into(),
            title: "a <b>".into(),
            x: Axis::linear("s", 0.0, 10.0, true),
            y: Axis::log("ms", 1.0, 100.0),
            series: vec![Series::new("p99", "#f00", vec![(1.0, 2.0), (2.0, 3.0), (3.0, f64::NAN), (4.0, 5.0), (5.0, 0.0), (6.0, 7.0), (7.0, 8.0)])],
            bands: vec![Band { x0: 0.0, x1: 2.0, label: "warm-up".into(), event: false }, Band { x0: 3.0, x1: 3.0, label: "kill <node2>".into(), event: true }],
        };
        let html = chart.to_html();
        assert_eq!(html.matches("<path class=\"series\"").count(), 1);
        assert_eq!(html.matches("<circle class=\"series\"").count(), 1, "the point at x=4 stands alone");
        let d = html.split("class=\"series\" d=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(d.matches('M').count(), 2, "{d}");
        assert!(html.contains("a &lt;b&gt;") && html.contains("class=\"band\""));
        assert!(html.contains(r#"<g class="event" data-event="kill &lt;node2&gt;">"#), "{html}");
        assert!(html.contains(r#"<rect class="event-span""#) && html.contains(r#"width="2.0""#), "an instant event is 2 px wide");
        assert!(!html.contains("class=\"legend\""), "one solid series needs no legend");
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
