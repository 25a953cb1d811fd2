//! The HTML of a run whose load changed over time: the latency-versus-throughput curve (the
//! "hockey stick": p50 and p99 from intended start against the achieved rate, one point per
//! level of offered load, the knee marked) and the tables of stages and levels. A small
//! drawing of what `analysis::load_curve` computed: it turns a [`LoadAnalysis`] into a
//! [`LineChart`] (drawn by the page's uPlot script) and table rows, and decides nothing about
//! the figures.

use super::html_charts::latency_axis;
use super::svg_chart::esc;
use super::uplot_chart::{LineChart, Mark, MarkKind, Series, XAxis};
use crate::analysis::load_curve::{LoadAnalysis, LoadGroup, KNEE_P99_FACTOR};
use std::fmt::Write;

const P50_COLOR: &str = "#4e79a7";
const P99_COLOR: &str = "#e15759";

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// p50 and p99 against the achieved rate, one point per level, the knee as a marked line;
/// `None` with fewer than two levels.
pub fn curve_chart(run_label: &str, a: &LoadAnalysis, id: &str) -> Option<LineChart> {
    let points: Vec<&LoadGroup> = a.curve.iter().filter(|g| g.summary.total.latency.count > 0).collect();
    if points.len() < 2 {
        return None;
    }
    let at = |f: fn(&LoadGroup) -> u64| points.iter().map(|g| (g.achieved_per_s(), ms(f(g)))).collect::<Vec<_>>();
    let series = vec![
        Series::new("p50", P50_COLOR, at(|g| g.summary.total.latency.p50_ns)),
        Series::new("p99", P99_COLOR, at(|g| g.summary.total.latency.p99_ns)).bold(),
    ];
    let hi = points.iter().map(|g| g.achieved_per_s()).fold(0.0, f64::max) * 1.05;
    let marks = a
        .knee
        .map(|k| &a.curve[k])
        .map(|k| Mark { kind: MarkKind::Knee, from: k.achieved_per_s(), to: k.achieved_per_s(), label: format!("knee {:.0} ops/s", k.achieved_per_s()) })
        .into_iter()
        .collect();
    let y = latency_axis("latency from intended start (ms)", series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let what = if a.open_loop { "per level of offered rate" } else { "per level of requests in flight" };
    Some(LineChart {
        id: id.to_string(),
        title: format!("{run_label} · latency against throughput ({what})"),
        x: XAxis::linear("achieved operations per second", hi),
        y,
        series,
        marks,
    })
}

fn cells(g: &LoadGroup, open_loop: bool) -> String {
    let t = &g.summary.total;
    let mut c = String::new();
    if open_loop {
        let _ = write!(c, "<td>{}</td><td>{:.0}</td>", g.offered_per_s.map_or("-".into(), |o| format!("{o:.0}")), g.started_per_s);
    } else {
        let _ = write!(c, "<td>{}</td>", g.concurrency.map_or("-".into(), |x| format!("{x:.0}")));
    }
    let _ = write!(c, "<td>{:.0}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td>", t.ops_per_s, ms(t.latency.p50_ns), ms(t.latency.p99_ns), t.error_count());
    if open_loop {
        let _ = write!(c, "<td>{}</td>", g.max_backlog);
    }
    c
}

fn head(first: &[&str], open_loop: bool) -> String {
    let mut h: String = first.iter().map(|f| format!(r#"<th class="t">{f}</th>"#)).collect();
    h.push_str(if open_loop { "<th>offered/s</th><th>started/s</th>" } else { "<th>in flight</th>" });
    h.push_str("<th>achieved/s</th><th>p50</th><th>p99</th><th>errors</th>");
    if open_loop {
        h.push_str("<th>backlog</th>");
    }
    h
}

/// The section: the stages, the curve and its levels.
pub fn load_html(s: &mut String, run_label: &str, a: &LoadAnalysis, id: &str) {
    if a.stages.is_empty() {
        return;
    }
    s.push_str(r#"<h4>Stages of the schedule <span class="sub">measured intervals; latency from intended start (ms)</span></h4>"#);
    let _ = write!(s, r#"<table class="num stages"><thead><tr>{}</tr></thead><tbody>"#, head(&["from (s)", "to (s)", "stage"], a.open_loop));
    for g in &a.stages {
        let _ = write!(
            s,
            r#"<tr><td class="t">{:.0}</td><td class="t">{:.0}</td><td class="t">{}</td>{}</tr>"#,
            g.from_ms as f64 / 1000.0,
            g.to_ms as f64 / 1000.0,
            esc(&g.label),
            cells(g, a.open_loop)
        );
    }
    s.push_str("</tbody></table>");
    let Some(chart) = curve_chart(run_label, a, id) else { return };
    s.push_str(r#"<h4>Latency against offered load</h4><div class="charts wide">"#);
    s.push_str(&chart.to_html());
    s.push_str("</div>");
    let knee = match a.knee.map(|k| &a.curve[k]) {
        Some(k) => format!("Knee: {:.0} ops/s achieved at p99 {:.2} ms — the last level before two in a row had p99 above {KNEE_P99_FACTOR:.0}× its low-load value or an achieved rate 5% short of the offered one.", k.achieved_per_s(), ms(k.summary.total.latency.p99_ns)),
        None if a.curve.first().is_some_and(|g| !g.kept()) => "No knee: the lowest level offered was not kept already.".into(),
        None => "No knee within the levels offered: every level was served.".into(),
    };
    let _ = write!(s, r#"<p class="hint knee">{}</p>"#, esc(&knee));
    let _ = write!(s, r#"<table class="num levels"><thead><tr>{}</tr></thead><tbody>"#, head(&["level", "intervals"], a.open_loop));
    for (i, g) in a.curve.iter().enumerate() {
        let mark = if a.knee == Some(i) { r#" class="knee""# } else { "" };
        let _ = write!(s, r#"<tr{mark}><td class="t">{}</td><td class="t">{}</td>{}</tr>"#, esc(&g.label), g.intervals, cells(g, a.open_loop));
    }
    s.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load_curve::LoadAccumulator;
    use crate::stats::{IntervalLoad, OpStats, Phase};
    use crate::store::StoredInterval;

    fn analysis(levels: &[(f64, u64)]) -> LoadAnalysis {
        let mut loads = Vec::new();
        let mut rows = Vec::new();
        for (i, (offered, lat_ms)) in levels.iter().enumerate() {
            let mut st = OpStats::default();
            for _ in 0..*offered as u64 {
                st.record_ok(lat_ms * 1_000_000, 1_000_000);
            }
            loads.push(IntervalLoad {
                index: i as u32,
                offered_per_s: Some(*offered),
                started: *offered as u64,
                concurrency: None,
                stage: 0,
                stage_label: "ramp 100..400 over 4s".into(),
                phase: Phase::Run,
                course: Some(crate::load_shape::Course::Moving),
            });
            rows.push(StoredInterval {
                index: i as u32,
                phase: Phase::Run,
                start_ms: i as u64 * 1000,
                end_ms: i as u64 * 1000 + 1000,
                op: "read".into(),
                stats: st,
                backlog: 0,
            });
        }
        let mut acc = LoadAccumulator::new(&loads).unwrap();
        rows.iter().for_each(|r| acc.add(r));
        acc.finish()
    }

    #[test]
    fn the_curve_plots_latency_against_achieved_rate_with_the_knee_marked() {
        let a = analysis(&[(100.0, 1), (200.0, 1), (300.0, 2), (400.0, 30)]);
        let c = curve_chart("run 3", &a, "r0-curve").unwrap();
        assert_eq!(c.series[1].name, "p99");
        assert_eq!(c.series[1].points.iter().map(|p| p.0).collect::<Vec<_>>(), [100.0, 200.0, 300.0, 400.0]);
        assert_eq!(c.marks.len(), 1);
        assert_eq!((c.marks[0].kind, c.marks[0].from, c.marks[0].label.as_str()), (MarkKind::Knee, 300.0, "knee 300 ops/s"));
        let XAxis::Linear { to, .. } = c.x else { panic!("{:?}", c.x) };
        assert!(to >= 400.0, "the axis reaches the highest level: {to}");
        assert!(c.json().contains(r#""kind":"knee""#));
        let mut html = String::new();
        load_html(&mut html, "run 3", &a, "r0-curve");
        assert!(html.contains("ramp 100..400 over 4s") && html.contains(r#"data-chart="r0-curve""#) && html.contains("Knee: 300 ops/s"), "{html}");
        assert_eq!(html.matches(r#"<tr class="knee">"#).count(), 1);
        assert!(curve_chart("run 3", &analysis(&[(100.0, 1)]), "x").is_none(), "one level is no curve");
    }
}
