//! A [`Study`] on the terminal: how it was computed (the method, and what its intervals can
//! and cannot see), what each side is, one table with a block per operation (every figure
//! with its interval per side, the change against the baseline with its own, significant
//! changes marked), then the verdicts in words — with the repetitions that disagree with
//! their variant and the figures left out — and the runs that were saturated. Returns
//! strings; `casslab compare` and `casslab experiment` print them, and the experiment's HTML
//! page reuses the sentences.

use super::table::TextTable;
use crate::analysis::block_fit::ORDER_FROM;
use crate::analysis::study::{Disagreement, Family, Method, Study};
use crate::analysis::{Comparison, Efficiency, Estimate, LatencyKind, Metric, OpRef, Outcome};
use crate::stats::ms;
use std::fmt::Write;

/// A comparison on the terminal: the study ([`text`]), then the verified reads, the recall of
/// vector searches and the servers' side, when the runs have them.
pub struct ComparisonText;

impl super::format_trait::Format<super::format_trait::ComparisonReport<'_>> for ComparisonText {
    fn name(&self) -> &'static str {
        "text"
    }
    fn render(&self, c: &super::format_trait::ComparisonReport<'_>) -> String {
        let s = c.study;
        let data = c.verified.map(super::data::verified_comparison_text).unwrap_or_default();
        let recall = c.recall.map(super::recall_text::comparison_text).unwrap_or_default();
        let server = c.server.map(|x| server_text(&x.figures, &x.differences, s.plan.opts.confidence)).unwrap_or_default();
        format!("{}{data}{recall}{server}", text(s))
    }
}

/// The whole comparison: header, table, verdicts and warnings.
pub fn text(s: &Study) -> String {
    let mut out = format!("{}{}", table(s), verdicts(s));
    let warnings = warnings(s);
    if !warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings:");
        for w in warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out
}

/// How the intervals were computed, and what they cannot see, one line each.
pub fn method_lines(a: &Study) -> Vec<String> {
    let o = &a.plan.opts;
    let mut lines = vec![match a.method {
        Method::Windows => format!("method: windowed bootstrap within each run ({} s windows, resampled with replacement)", o.window_s),
        Method::Repetitions => "method: repetitions as the unit: each figure once per run, a variant's figure the geometric mean over its repetitions with a Student t interval, a change Welch's t interval on the ratio; each run's windows only split the spread into within and between repetitions".to_string(),
        Method::PooledWindows => "method: every variant's windows pooled and resampled as if independent, each figure judged on its own (the old method: it cannot see run-to-run variation)".to_string(),
        Method::Blocks if a.plan.blocks.is_some_and(|b| b.simultaneous) => "method: blocks as the unit: in each block every variant ran once, all at the same time; a change is the mean over the blocks of ln(B) − ln(A) within each block (the same seconds seen by both, so what drifts cancels), with Student's t; a variant's own figure is the geometric mean of its runs' figures, with a t interval".to_string(),
        Method::Blocks => "method: blocks as the unit: each block runs every variant once, in counterbalanced order; a change is the mean over the blocks of ln(B) − ln(A) within each block (which cancels what drifts between blocks), with Student's t; a variant's own figure is the geometric mean of its runs' figures, with a t interval".to_string(),
    }];
    if a.method == Method::Blocks {
        lines.extend(block_lines(a));
        return lines;
    }
    if a.method == Method::Windows && a.sides.len() > 1 {
        lines.push("note: one run per side: these intervals cover the noise within each run, not how much another run of the same thing would differ; repeat the runs (`casslab experiment`, 2 repetitions or more) to see that".into());
    }
    if a.method != Method::PooledWindows && !a.pairs.is_empty() {
        let each = |n: usize| trim_percent(100.0 - (1.0 - o.confidence) * 100.0 / n.max(1) as f64);
        let total = if a.ops.contains(&OpRef::Total) { "; total is shown, not judged: it contains the operations" } else { "" };
        let conf = trim_percent(o.confidence * 100.0);
        let all: usize = a.pairs.iter().map(|p| p.judged).sum();
        let line = if a.plan.family == Family::Experiment && a.pairs.len() > 1 {
            format!(
                "changes: {conf}% intervals that hold together over all {all} figures judged in the {} comparisons (--family; Bonferroni: each at {}%){total}",
                a.pairs.len(),
                each(all)
            )
        } else {
            let (lo, hi) = a.pairs.iter().fold((usize::MAX, 0), |(lo, hi), p| (lo.min(p.judged), hi.max(p.judged)));
            let (count, level) = if lo == hi { (format!("{hi}"), each(hi)) } else { (format!("{lo}–{hi}"), format!("{}–{}", each(lo), each(hi))) };
            format!(
                "changes: {conf}% intervals that hold together over the {count} figures judged in each comparison (Bonferroni: each at {level}%){total}{}",
                many_comparisons(a)
            )
        };
        lines.push(line);
    }
    lines
}

/// With several comparisons judged each on its own: what that means for all of them
/// together, "; 95% per comparison: over its 9 comparisons, the chance of some false claim can
/// reach 45% (--family holds them all together)". Empty with one comparison.
fn many_comparisons(a: &Study) -> String {
    let k = a.pairs.len();
    if k < 2 || a.plan.family == Family::Experiment {
        return String::new();
    }
    let conf = trim_percent(a.plan.opts.confidence * 100.0);
    let any = ((1.0 - a.plan.opts.confidence) * k as f64).min(1.0) * 100.0;
    format!(
        "; {conf}% per comparison: over its {k} comparisons, the chance of some false claim can reach {}% (--family holds them all together)",
        trim_percent(any)
    )
}

/// With blocks: what is judged and at which level, and the sequential design's look.
fn block_lines(a: &Study) -> Vec<String> {
    let o = &a.plan.opts;
    let conf = trim_percent(o.confidence * 100.0);
    let judged: Vec<String> = a.judged.iter().map(|f| format!("{} {}", f.op, f.metric.label())).collect();
    let judged_per_pair: Vec<usize> = a.pairs.iter().map(|p| p.judged).collect();
    let n = (0..judged_per_pair.len()).map(|i| a.plan.family.size(&judged_per_pair, i)).max().unwrap_or(1);
    let each = trim_percent(100.0 - (1.0 - o.confidence) * 100.0 / n as f64);
    let exploratory = format!("every other figure is exploratory ({conf}% on its own, no verdict)");
    let mut lines = vec![if a.plan.family == Family::Experiment && a.pairs.len() > 1 {
        format!(
            "judged: {} — {conf}% intervals that hold together over all {} comparisons ({n} figures; --family; Bonferroni: each at {each}%); {exploratory}",
            judged.join(", "),
            a.pairs.len()
        )
    } else if n > 1 {
        format!("judged: {} — {conf}% intervals that hold together (Bonferroni: each at {each}%){}; {exploratory}", judged.join(", "), many_comparisons(a))
    } else {
        format!("judged: {} — a {conf}% interval{}; {exploratory}", judged.join(", "), many_comparisons(a))
    }];
    let all = || a.comparisons.iter().flatten().flatten().flatten();
    if let Some(l) = all().find_map(|c| c.look) {
        let final_look = if l.spent_the_rest { "final look (the budget ended the experiment, so it spends all the error rate left)" } else { "look" };
        lines.push(format!(
            "sequential: {final_look} after {} of at most {} blocks; repeated confidence intervals ({} spending, Lan–DeMets, calibrated for a spread estimated from the blocks), valid whenever the experiment stops; a change's interval is the intersection of every look's so far, so a change found at one look stays found",
            l.blocks,
            l.max_blocks,
            l.spending.name()
        ));
    }
    if a.plan.blocks.is_some_and(|b| b.simultaneous) {
        lines.push(
            "design: simultaneous — every block the same seconds seen by each variant, so what the machine did then it did to all; intervals widened where neighbouring blocks' changes move together".into(),
        );
    }
    if all().any(|c| c.order_effect.is_some()) {
        lines.push(format!(
            "order: the blocks ran the variants in both orders, so from {ORDER_FROM} blocks on each change is fitted with an order effect (what running second in a block does to a figure): taken out of the change and its spread, and shown as \"running second\""
        ));
    }
    lines
}

fn trim_percent(p: f64) -> String {
    let s = format!("{p:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
        // an upper bound a thousand times the estimate says only that it is unbounded
        Some(e) if e.has_interval() && e.point > 0.0 && e.hi > 1000.0 * e.point => format!("{} [{}, ∞]", number(m, e.point), number(m, e.lo)),
        Some(e) if e.has_interval() => format!("{} [{}, {}]", number(m, e.point), number(m, e.lo), number(m, e.hi)),
        Some(e) => format!("{} [—]", number(m, e.point)),
    }
}

/// A relative change in percent with its sign: "+4.2%".
pub fn signed(x: f64) -> String {
    // beyond 10,000% a bound says only "very large" (two repetitions far apart give such)
    if x > 100.0 {
        return ">+10000%".into();
    }
    format!("{:+.1}%", x * 100.0)
}

fn change_cell(c: &Option<Comparison>) -> String {
    let Some(ch) = c.as_ref().and_then(|c| c.change) else { return "—".into() };
    let interval = if ch.has_interval() { format!(" [{}, {}]", signed(ch.lo), signed(ch.hi)) } else { String::new() };
    let exploratory = c.as_ref().is_some_and(|c| c.exploratory);
    let mark = match c.as_ref().map(|c| c.outcome) {
        _ if exploratory => " ~",
        Some(Outcome::Higher | Outcome::Lower) => " *",
        Some(Outcome::Equivalent) => " =",
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
    for line in method_lines(a) {
        let _ = writeln!(out, "{line}");
    }
    for s in &a.sides {
        let w = &s.windows;
        let dropped = match w.dropped_s {
            d if d >= 0.5 && s.runs.len() == 1 => format!("; last {d:.0} s left out"),
            d if d >= 0.05 => format!("; {d:.1} s of partial windows at the ends left out"),
            _ => String::new(),
        };
        let reps = if s.runs.len() > 1 { format!("{} repetitions, ", s.runs.len()) } else { String::new() };
        let _ = writeln!(out, "  {}: {} · {reps}{} windows, {:.0} s of the {} phase{dropped}", s.label, s.about, w.len(), w.measured_s(), w.phase.as_str());
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
                let e = s.figures[oi].as_ref().and_then(|f| f.estimate(m));
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
                    let e = s.figures[oi].as_ref().and_then(|f| f.estimate(Metric::OpsPerS));
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
        let per = if a.pairs.len() > 1 && a.plan.family == Family::Comparison { " of a comparison" } else { "" };
        if a.method == Method::Blocks {
            let _ = writeln!(
                out,
                "\n  * a judged figure's change is significant: its interval excludes 0 (with no real change anywhere, any judged figure{per} is marked at most {chance:.0}% of the time)\n  = equivalent: the interval lies within the equivalence margin\n  ~ exploratory: its own {}% interval, no verdict (look at it, then judge it in an experiment of its own)",
                o.confidence * 100.0
            );
            return out;
        }
        let _ = if a.method == Method::PooledWindows {
            writeln!(
                out,
                "\n  * the change is significant: its {}% interval excludes 0 (by chance alone, about {chance:.0}% of unchanged figures are marked)",
                o.confidence * 100.0
            )
        } else {
            let who = if a.pairs.len() > 1 && a.plan.family == Family::Experiment { "the comparisons mark" } else { "a comparison marks" };
            writeln!(
                out,
                "\n  * the change is significant: its interval excludes 0 (with no real change anywhere, {who} any figure at most {chance:.0}% of the time)"
            )
        };
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

/// The verdicts in words, per compared side: ("B against A", sentences): first the
/// repetitions of either side that disagree with their variant, then a sentence per judged
/// figure, then the figures left out.
pub fn verdict_lines(a: &Study) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (si, per_op) in a.comparisons.iter().enumerate() {
        let (base, side) = (&a.sides[0].label, &a.sides[si + 1].label);
        let mut lines: Vec<String> = a.disagreements.iter().filter(|d| d.side == 0 || d.side == si + 1).map(|d| disagreement(a, d)).collect();
        // figures too short to judge share one reason (the sides' windows): said once
        let mut short: Vec<&Comparison> = Vec::new();
        for (oi, per_metric) in per_op.iter().enumerate() {
            for c in per_metric.iter().flatten().filter(|c| c.outcome != Outcome::NotJudged && !c.exploratory) {
                if c.outcome == Outcome::TooShort && c.change.is_some() {
                    short.push(c);
                } else {
                    lines.push(c.sentence(base, side, a.ops[oi].name()));
                }
            }
        }
        if let Some(c) = short.first() {
            let n = short.len();
            let what = if n == 1 { "1 figure".to_string() } else { format!("{n} figures") };
            let fix = if a.method == Method::Repetitions {
                "run longer, or pass a shorter --window or a lower --min-windows"
            } else {
                "compare longer runs, or pass a shorter --window"
            };
            lines.insert(0, format!("{side} vs {base}: too short to judge ({what} not judged): {}; {fix}", c.too_short(base, side)));
        }
        for (op, why) in &a.pairs[si].left_out {
            lines.push(format!("{side} vs {base}, {op}: left out: {why}"));
        }
        out.push((format!("{side} against {base}"), lines));
    }
    out
}

/// "run 7 (a, repetition 1, 1st in the order) disagrees with the other repetitions of a:
/// read p95 1.74 ms against 0.71–0.80 ms, …".
pub fn disagreement(a: &Study, d: &Disagreement) -> String {
    let s = &a.sides[d.side];
    let at = s.runs.iter().position(|r| *r == d.run).and_then(|i| s.run_notes[i].clone());
    let at = at.map(|n| format!(", {n}")).unwrap_or_default();
    let shown = 3;
    let mut figures: Vec<String> = d
        .figures
        .iter()
        .take(shown)
        .map(|(op, m, o)| format!("{op} {} {} against {}–{}", m.noun(), with_unit(*m, o.value), number(*m, o.others.0), with_unit(*m, o.others.1)))
        .collect();
    if d.figures.len() > shown {
        figures.push(format!("and {} more figures", d.figures.len() - shown));
    }
    format!("run {} ({}{at}) disagrees with the other repetitions of {}: {}", d.run, s.label, s.label, figures.join(", "))
}

fn with_unit(m: Metric, v: f64) -> String {
    if m.is_latency() {
        format!("{} ms", ms(v))
    } else {
        format!("{}/s", number(m, v))
    }
}

/// The runs that were saturated, one sentence each.
pub fn warnings(a: &Study) -> Vec<String> {
    a.saturated
        .iter()
        .map(|s| {
            let of = if a.sides[s.side].label == format!("run {}", s.run) { String::new() } else { format!(" of {}", a.sides[s.side].label) };
            format!("run {}{of} was saturated: {}; its latency measures the queue, not what is compared", s.run, s.why)
        })
        .collect()
}

/// The servers' side of a comparison: how the groups' server definitions differ, and what
/// the nodes did in each group's runs (mean over its runs, with a t interval from two runs
/// on). Empty when there is nothing to say.
pub fn server_text(groups: &[crate::analysis::server_figures::GroupServer], differences: &[String], confidence: f64) -> String {
    use crate::analysis::server_figures::FIGURES;
    let mut out = String::new();
    if !differences.is_empty() {
        let _ = writeln!(out, "\nservers differ (in the order of the variants):");
        for d in differences {
            let _ = writeln!(out, "  {d}");
        }
    }
    if groups.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\nserver side, measured phase (mean over runs [{:.0}% t interval]):", confidence * 100.0);
    let mut header = vec!["variant".to_string(), "runs".to_string()];
    header.extend(FIGURES.iter().map(|(name, unit)| format!("{name} ({unit})")));
    let mut t = TextTable::new(header).indent(2).right([1]);
    for g in groups {
        let mut row = vec![g.label.clone(), g.runs.len().to_string()];
        for i in 0..FIGURES.len() {
            row.push(match g.spread(i, confidence) {
                Some(s) if s.runs > 1 => format!("{} [{}, {}]", fig(s.mean), fig(s.lo.max(0.0)), fig(s.hi)),
                Some(s) => fig(s.mean),
                None => "—".into(),
            });
        }
        t.row(row);
    }
    let _ = write!(out, "{t}");
    if groups.iter().any(|g| g.runs.is_empty()) {
        let _ = writeln!(out, "  (0 runs: no server figures of its own; variants measured at the same time on one server are polled once, through the first)");
    }
    out
}

/// A server figure with three significant digits at most.
fn fig(v: f64) -> String {
    // an empty sum is -0.0: no sign on nothing
    let v = v + 0.0;
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbounded_intervals_are_said_so_not_printed_digit_by_digit() {
        assert_eq!(signed(0.042), "+4.2%");
        assert_eq!(signed(4.6e40), ">+10000%");
        let wide = Estimate { point: 5.8e6, lo: 6.0e4, hi: 4.8e11 };
        assert_eq!(value_cell(Metric::Mean, Some(wide)), format!("{} [{}, ∞]", number(Metric::Mean, 5.8e6), number(Metric::Mean, 6.0e4)));
        let narrow = Estimate { point: 5.8e6, lo: 5.0e6, hi: 6.5e6 };
        assert!(value_cell(Metric::Mean, Some(narrow)).ends_with(&format!("{}]", number(Metric::Mean, 6.5e6))));
    }
}
