//! A run whose load changed over time, on the terminal: a summary per stage of its schedule
//! (offered, started and achieved rates, latency from intended start, errors, backlog), and
//! latency against offered load — one line per level of load, the knee marked — from an
//! [`LoadAnalysis`]. Words only; the figures are `analysis::load_curve`'s.

use super::table::TextTable;
use crate::analysis::load_curve::{LoadAnalysis, LoadGroup, KNEE_P99_FACTOR};
use std::fmt::Write;

fn ms(ns: u64) -> String {
    let v = ns as f64 / 1e6;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The columns every group shows, after its own first ones.
fn figures(g: &LoadGroup, open_loop: bool) -> Vec<String> {
    let t = &g.summary.total;
    let mut cells = Vec::new();
    if open_loop {
        cells.push(g.offered_per_s.map_or("-".into(), |o| format!("{o:.0}")));
        cells.push(format!("{:.0}", g.started_per_s));
    } else {
        cells.push(g.concurrency.map_or("-".into(), |c| format!("{c:.0}")));
    }
    cells.push(format!("{:.0}", t.ops_per_s));
    cells.push(ms(t.latency.p50_ns));
    cells.push(ms(t.latency.p99_ns));
    cells.push(t.error_count().to_string());
    if open_loop {
        cells.push(g.max_backlog.to_string());
    }
    cells
}

fn heading(first: &[&str], open_loop: bool) -> Vec<String> {
    let mut h: Vec<String> = first.iter().map(|s| s.to_string()).collect();
    if open_loop {
        h.extend(["offered/s", "started/s"].map(String::from));
    } else {
        h.push("in flight".into());
    }
    h.extend(["achieved/s", "p50", "p99", "errors"].map(String::from));
    if open_loop {
        h.push("backlog".into());
    }
    h
}

/// The stage table and the latency-against-load table; empty without stages, and for a load
/// that never changed (one stage at one level: the summary above says it all).
pub fn stages_text(a: &LoadAnalysis) -> String {
    if a.stages.is_empty() || (a.stages.len() == 1 && a.curve.len() < 2) {
        return String::new();
    }
    let mut out = String::new();
    let numbers = |from: usize, n: usize| (from..from + n).collect::<Vec<_>>();
    let _ = writeln!(out, "\nstages of the schedule (measured intervals; latency from intended start, ms; backlog: most operations due but not started):");
    let head = heading(&["from", "to", "stage"], a.open_loop);
    let n = head.len();
    let mut t = TextTable::new(head).indent(2).right([0, 1]).right(numbers(3, n - 3));
    for g in &a.stages {
        let mut row = vec![format!("{:.0}s", g.from_ms as f64 / 1000.0), format!("{:.0}s", g.to_ms as f64 / 1000.0), g.label.clone()];
        row.extend(figures(g, a.open_loop));
        t.row(row);
    }
    let _ = write!(out, "{t}");
    if a.curve.len() < 2 {
        return out;
    }
    let what = if a.open_loop { "offered rate" } else { "requests in flight" };
    let _ = writeln!(
        out,
        "\nlatency against {what} (intervals grouped by level; knee: the last level before two in a row had p99 above {KNEE_P99_FACTOR:.0}× its low-load value{}):",
        if a.open_loop { " or an achieved rate 5% short" } else { "" }
    );
    let head = heading(&["level", "intervals"], a.open_loop);
    let n = head.len();
    let mut t = TextTable::new(head).indent(2).right(numbers(1, n - 1));
    for (i, g) in a.curve.iter().enumerate() {
        let mut row = vec![format!("{}{}", g.label, if a.knee == Some(i) { " ← knee" } else { "" }), g.intervals.to_string()];
        row.extend(figures(g, a.open_loop));
        t.row(row);
    }
    let _ = write!(out, "{t}");
    match a.knee.map(|k| &a.curve[k]) {
        Some(k) => {
            let _ = writeln!(out, "  knee at {} achieved, p99 {} ms", format_args!("{:.0}/s", k.achieved_per_s()), ms(k.summary.total.latency.p99_ns));
        }
        None if a.curve.first().is_some_and(|g| !g.kept()) => {
            let _ = writeln!(out, "  no knee: the lowest level offered was not kept already");
        }
        None => {
            let _ = writeln!(out, "  no knee within the levels offered");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load_curve::LoadAccumulator;
    use crate::stats::{IntervalLoad, OpStats, Phase};
    use crate::store::StoredInterval;

    #[test]
    fn stages_and_levels_are_tabled_with_the_knee() {
        let mut loads = Vec::new();
        let mut rows = Vec::new();
        for (i, (offered, lat_ms)) in [(100.0, 1), (200.0, 1), (400.0, 50)].into_iter().enumerate() {
            let mut st = OpStats::default();
            for _ in 0..offered as u64 {
                st.record_ok(lat_ms * 1_000_000, 1_000_000);
            }
            loads.push(IntervalLoad {
                index: i as u32,
                offered_per_s: Some(offered),
                started: offered as u64,
                concurrency: None,
                stage: i as u32,
                stage_label: format!("{offered} for 1s"),
                phase: Phase::Run,
                course: Some(crate::load_shape::Course::Held(offered)),
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
        let text = stages_text(&acc.finish());
        assert!(text.contains("stages of the schedule"), "{text}");
        assert!(text.contains("200 for 1s"), "{text}");
        let knee_line = text.lines().find(|l| l.contains("← knee")).unwrap_or_else(|| panic!("{text}"));
        assert!(knee_line.trim_start().starts_with("200/s"), "{knee_line}");
        assert!(text.contains("knee at 200/s achieved"), "{text}");
        // one stage at one level is a fixed rate: nothing to add to the summary
        let mut acc = LoadAccumulator::new(&loads[..1]).unwrap();
        acc.add(&rows[0]);
        assert_eq!(stages_text(&acc.finish()), "");
        // a client behind from the first level: not "no knee within the levels offered"
        let mut acc = LoadAccumulator::new(&loads).unwrap();
        rows.iter().map(|r| StoredInterval { stats: OpStats::default(), ..r.clone() }).for_each(|r| acc.add(&r));
        let text = stages_text(&acc.finish());
        assert!(text.contains("no knee: the lowest level offered was not kept already"), "{text}");
    }
}
