//! A [`Study`] on the terminal: how it was computed, what each side is, one table with a block
//! per operation (every figure with its interval per side, the change against the baseline
//! with its own, significant changes marked), then the verdicts in words. Returns strings;
//! `casslab compare` and `casslab experiment` print them.

use super::table::TextTable;
use crate::analysis::study::Study;
use crate::analysis::{Comparison, Efficiency, Estimate, LatencyKind, Metric, Outcome};
use crate::stats::ms;
use std::fmt::Write;

/// The whole comparison: header, table and verdicts.
pub fn text(s: &Study) -> String {
    format!("{}{}", table(s), verdicts(s))
}

/// "latency from intended start" or "service time".
pub fn latency_kind(kind: LatencyKind) -> &'static str {
    match kind {
        LatencyKind::Intended => "latency from intended start",
        LatencyKind::Service => "service time",
    }
}

fn number(m: Metric, v: f64) -> String {
    if m.is_latency() {
        ms(v)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn value_cell(m: Metric, e: Option<Estimate>) -> String {
    match e {
        None => "—".into(),
        Some(e) if e.has_interval() => format!("{} [{}, {}]", number(m, e.point), number(m, e.lo), number(m, e.hi)),
        Some(e) => format!("{} [—]", number(m, e.point)),
    }
}

/// A relative change in percent with its sign: "+4.2%".
pub fn signed(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

fn change_cell(c: &Option<Comparison>) -> String {
    let Some(ch) = c.as_ref().and_then(|c| c.change) else { return "—".into() };
    let interval = if ch.has_interval() { format!(" [{}, {}]", signed(ch.lo), signed(ch.hi)) } else { String::new() };
    let mark = match c.as_ref().map(|c| c.outcome) {
        Some(Outcome::Higher | Outcome::Lower) => " *",
        Some(Outcome::TooShort) => " (too short)",
        _ => "",
    };
    format!("{}{interval}{mark}", signed(ch.point))
}

fn table(a: &Study) -> String {
    let o = &a.plan.opts;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "windows of {} s, {} resamples, {}% intervals; {} in ms; baseline: {}",
        o.window_s,
        o.resamples,
        o.confidence * 100.0,
        latency_kind(a.plan.kind),
        a.sides[0].label
    );
    for s in &a.sides {
        let w = &s.windows;
        let dropped = if w.dropped_s > 0.0 { format!("; last {:.0} s left out", w.dropped_s) } else { String::new() };
        let _ = writeln!(out, "  {}: {} · {} windows, {:.0} s of the {} phase{dropped}", s.label, s.about, w.len(), w.measured_s(), w.phase.as_str());
    }
    let mut header = vec![String::new()];
    for (i, s) in a.sides.iter().enumerate() {
        header.push(s.label.clone());
        if i > 0 {
            header.push(format!("vs {}", a.sides[0].label));
        }
    }
    let mut blocks: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    for (oi, op) in a.ops.iter().enumerate() {
        let mut rows = Vec::new();
        for m in Metric::ALL {
            let mut row = vec![m.label().to_string()];
            for (si, s) in a.sides.iter().enumerate() {
                let e = s.figures[oi].as_ref().and_then(|f| f.estimate(m, o.confidence));
                row.push(value_cell(m, e));
                if si > 0 {
                    row.push(change_cell(&a.comparisons[si - 1][oi][m.index()]));
                }
            }
            rows.push(row);
        }
        if oi + 1 == a.ops.len() {
            for (name, server) in [("ops/s per client core", false), ("ops/s per server core", true)] {
                let mut row = vec![name.to_string()];
                for (si, s) in a.sides.iter().enumerate() {
                    let e = s.figures[oi].as_ref().and_then(|f| f.estimate(Metric::OpsPerS, o.confidence));
                    let eff = e.map(|e| Efficiency::of(&e, s.client_cores, s.server_cores));
                    row.push(value_cell(Metric::OpsPerS, eff.and_then(|f| if server { f.per_server_core } else { f.per_client_core })));
                    if si > 0 {
                        row.push(String::new());
                    }
                }
                rows.push(row);
            }
        }
        blocks.push((op.name().to_string(), rows));
    }
    // one table for every block, so the columns line up from one operation to the next
    let mut t = TextTable::headless().indent(4).gap(3);
    for (_, rows) in &blocks {
        t.row(header.iter().cloned());
        for r in rows {
            t.row(r.iter().cloned());
        }
    }
    let mut lines = t.lines().into_iter();
    for (name, rows) in &blocks {
        let _ = writeln!(out, "\n  {name}");
        for line in lines.by_ref().take(rows.len() + 1) {
            let _ = writeln!(out, "{line}");
        }
    }
    if a.sides.len() > 1 {
        let chance = (1.0 - o.confidence) * 100.0;
        let _ = writeln!(
            out,
            "\n  * the change is significant: its {}% interval excludes 0 (by chance alone, about {chance:.0}% of unchanged figures are marked)",
            o.confidence * 100.0
        );
    }
    out
}

fn verdicts(a: &Study) -> String {
    let mut out = String::new();
    for (heading, sentences) in verdict_lines(a) {
        let _ = writeln!(out, "\n{heading}:");
        for line in sentences {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// The verdicts in words, per compared side: ("B against A", sentences).
pub fn verdict_lines(a: &Study) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (si, per_op) in a.comparisons.iter().enumerate() {
        let (base, side) = (&a.sides[0].label, &a.sides[si + 1].label);
        let mut lines = Vec::new();
        for (oi, per_metric) in per_op.iter().enumerate() {
            for c in per_metric.iter().flatten() {
                lines.push(c.sentence(base, side, a.ops[oi].name()));
            }
        }
        out.push((format!("{side} against {base}"), lines));
    }
    out
}
