//! `casslab compare RUN… [--baseline RUN]`: saved runs side by side, every figure per
//! operation with its confidence interval (the windowed bootstrap of
//! `casslab_core::analysis`), the change against the baseline with its own interval,
//! significant changes marked, the verdicts in words, and the `--fail-if` /
//! `--max-regression` gates that make the exit code 1. `casslab experiment` prints its
//! variants through [`print_groups`], each variant's repetitions pooled.
//!
//! Tables and verdicts go to stdout; gate failures (one line each) and warnings to stderr.
//! Flags are checked before the store is opened, and the store is never created here.

use super::report::resolve;
use super::store_to_read;
use crate::cli::{AnalysisArgs, CompareArgs};
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::analysis::{
    compare as compare_metric, seed_for, AnalysisOptions, Comparison, Efficiency, Estimate, Gate, GateMetric, LatencyKind,
    MaxRegression, Metric, OpRef, Outcome, Resampled, Sample, WindowBuilder, Windows,
};
use casslab_core::report::table::TextTable;
use casslab_core::report::text::ms;
use casslab_core::store::{RunId, Store};
use casslab_core::validity;
use std::fmt::Write;

/// The plain form of the analysis options on the command line.
pub(crate) struct Plan {
    pub(crate) opts: AnalysisOptions,
    pub(crate) kind: LatencyKind,
    server_cores: Option<f64>,
}

/// One operation of one side: its bootstrap distribution and its plain counts.
pub(crate) struct Figures {
    pub(crate) resampled: Resampled,
    errors: u64,
    max_ns: u64,
}

/// One side of the comparison: a run, or a variant's runs pooled.
pub(crate) struct Side {
    pub(crate) label: String,
    about: String,
    pub(crate) windows: Windows,
    client_cores: usize,
    server_cores: Option<f64>,
    /// One entry per `Analysis::ops`; `None` where the side never did the operation.
    pub(crate) figures: Vec<Option<Figures>>,
}

pub(crate) struct Analysis {
    pub(crate) plan: Plan,
    pub(crate) ops: Vec<OpRef>,
    /// `sides[0]` is the baseline.
    pub(crate) sides: Vec<Side>,
    /// `comparisons[s - 1][op][metric]`: side s against the baseline.
    pub(crate) comparisons: Vec<Vec<Vec<Option<Comparison>>>>,
}

pub fn compare(args: &CompareArgs) -> Result<i32> {
    let window_s = crate::cli::parse_duration_s("window", &args.window)?;
    let plan = plan(&args.analysis, window_s)?;
    let store = store_to_read(&args.store)?;
    let mut ids = Vec::new();
    if let Some(b) = &args.baseline {
        ids.push(resolve(&store, b)?);
    }
    for r in &args.runs {
        let id = resolve(&store, r)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    // an invalid run is neither compared nor judged by a gate unless --allow-invalid
    let screened = validity::screen(&store, &ids, args.analysis.allow_invalid)?;
    screened.warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    if !screened.refused.is_empty() {
        screened.refused.iter().for_each(|r| eprintln!("refused: {r}"));
        return Ok(Exit::Failed.code());
    }
    let groups: Vec<(String, Vec<RunId>)> = ids.iter().map(|id| (format!("run {id}"), vec![*id])).collect();
    let a = analyse(&store, &groups, plan)?;
    out::print(&format!("{}{}", table(&a), verdicts(&a)))?;
    let (failures, warnings) = check_gates(&a, &args.fail_if, args.max_regression)?;
    warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    failures.iter().for_each(|f| eprintln!("gate failed: {f}"));
    if !failures.is_empty() {
        return Ok(Exit::Failed.code());
    }
    if !args.fail_if.is_empty() || args.max_regression.is_some() {
        eprintln!("gates passed");
    }
    Ok(Exit::Success.code())
}

/// Compares named groups of runs (the first is the baseline), each group's windows pooled:
/// the entry point of `casslab experiment`. Returns the analysis it printed, for the
/// experiment's HTML page.
pub(crate) fn print_groups(store: &Store, groups: &[(String, Vec<RunId>)], window_s: f64, args: &AnalysisArgs) -> Result<Analysis> {
    let a = analyse(store, groups, plan(args, window_s)?)?;
    out::print(&format!("{}{}", table(&a), verdicts(&a)))?;
    Ok(a)
}

/// The analysis of named groups of runs, as [`print_groups`] makes it, without printing.
pub(crate) fn analyse_groups(store: &Store, groups: &[(String, Vec<RunId>)], window_s: f64, args: &AnalysisArgs) -> Result<Analysis> {
    analyse(store, groups, plan(args, window_s)?)
}

fn plan(args: &AnalysisArgs, window_s: f64) -> Result<Plan> {
    let t = args.confidence.trim().trim_end_matches('%').trim();
    let confidence = match t.parse::<f64>() {
        Ok(p) if p > 50.0 && p < 100.0 => p / 100.0,
        _ => bail_usage!("--confidence {}: write a level in percent between 50 and 100, e.g. 95", args.confidence),
    };
    if args.server_cores.is_some_and(|c| !(c > 0.0 && c.is_finite())) {
        bail_usage!("--server-cores must be a positive number");
    }
    let opts = AnalysisOptions { window_s, resamples: args.resamples, confidence, min_windows: args.min_windows, ..AnalysisOptions::default() };
    opts.validate()?;
    let kind = if args.service_time { LatencyKind::Service } else { LatencyKind::Intended };
    Ok(Plan { opts, kind, server_cores: args.server_cores })
}

fn analyse(store: &Store, groups: &[(String, Vec<RunId>)], plan: Plan) -> Result<Analysis> {
    let mut sides = Vec::new();
    for (label, ids) in groups {
        let mut parts = Vec::new();
        let (mut about, mut client_cores, mut local) = (Vec::new(), 0, true);
        for &id in ids {
            let record = store.run(id)?;
            // One interval at a time: decoded, it holds two full histograms until windowed.
            let mut builder = WindowBuilder::new(plan.opts.window_s)?;
            store.for_each_interval(id, |iv| {
                builder.push(&iv);
                Ok(())
            })?;
            parts.push(builder.finish().with_context(|| format!("run {id}"))?);
            about.push((id, format!("{}, {}", record.workload, record.status.as_str())));
            client_cores = record.env.client_cores;
            local &= record.config.cluster.local;
        }
        let windows = Windows::pool(parts)?;
        let about = match &about[..] {
            [(id, what)] if *label == format!("run {id}") => what.clone(),
            _ => about.iter().map(|(id, what)| format!("run {id} ({what})")).collect::<Vec<_>>().join(", "),
        };
        // Local nodes share the client's machine: its cores serve both.
        let server_cores = plan.server_cores.or((local && client_cores > 0).then_some(client_cores as f64));
        sides.push(Side { label: label.clone(), about, windows, client_cores, server_cores, figures: Vec::new() });
    }
    let mut ops: Vec<OpRef> = Vec::new();
    for s in &sides {
        for name in &s.windows.ops {
            let op = OpRef::Op(name.clone());
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    if ops.len() > 1 {
        ops.push(OpRef::Total);
    }
    for s in &mut sides {
        for op in &ops {
            let fig = Sample::of(&s.windows, op, plan.kind).map(|sample| {
                let seed = seed_for(plan.opts.seed, &[&s.label, op.name(), plan.kind.as_str()]);
                Figures { resampled: Resampled::run(&sample, plan.opts.resamples, seed), errors: sample.errors, max_ns: sample.max_ns }
            });
            s.figures.push(fig);
        }
    }
    let comparisons = sides[1..]
        .iter()
        .map(|b| {
            (0..ops.len())
                .map(|o| {
                    let pair = sides[0].figures[o].as_ref().zip(b.figures[o].as_ref());
                    Metric::ALL.iter().map(|m| pair.map(|(fa, fb)| compare_metric(&fa.resampled, &fb.resampled, *m, &plan.opts))).collect()
                })
                .collect()
        })
        .collect();
    Ok(Analysis { plan, ops, sides, comparisons })
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

fn signed(x: f64) -> String {
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

fn table(a: &Analysis) -> String {
    let o = &a.plan.opts;
    let mut out = String::new();
    let what = match a.plan.kind {
        LatencyKind::Intended => "latency from intended start",
        LatencyKind::Service => "service time",
    };
    let _ = writeln!(
        out,
        "windows of {} s, {} resamples, {}% intervals; {what} in ms; baseline: {}",
        o.window_s,
        o.resamples,
        o.confidence * 100.0,
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
                let e = s.figures[oi].as_ref().and_then(|f| f.resampled.estimate(m, o.confidence));
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
                    let e = s.figures[oi].as_ref().and_then(|f| f.resampled.estimate(Metric::OpsPerS, o.confidence));
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

fn verdicts(a: &Analysis) -> String {
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
pub(crate) fn verdict_lines(a: &Analysis) -> Vec<(String, Vec<String>)> {
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

/// Evaluates the gates: (failure lines, warning lines). An operation a gate names that a
/// checked run never did is an error.
fn check_gates(a: &Analysis, gates: &[Gate], max_regression: Option<MaxRegression>) -> Result<(Vec<String>, Vec<String>)> {
    let (mut failures, mut warnings) = (Vec::new(), Vec::new());
    // Gates judge the compared runs; a lone run is judged itself.
    let checked = if a.sides.len() > 1 { 1 } else { 0 };
    for g in gates {
        let op = g.op_ref();
        for s in &a.sides[checked..] {
            let oi = a.ops.iter().position(|o| *o == op);
            let Some(f) = oi.and_then(|oi| s.figures[oi].as_ref()) else {
                let known: Vec<&str> = s.windows.ops.iter().map(String::as_str).chain(["total"]).collect();
                bail_usage!("--fail-if '{g}': {} has no operation \"{}\"; it has {}", s.label, g.op, known.join(", "));
            };
            let observed = match g.metric {
                GateMetric::Stat(m) => f.resampled.point(m),
                GateMetric::Max => f.max_ns as f64,
                GateMetric::Errors => f.errors as f64,
            };
            if g.fails(observed) {
                failures.push(format!("--fail-if '{g}': {} {} {} = {}", s.label, g.op, g.metric.noun(), g.format_value(observed)));
            }
        }
    }
    let Some(MaxRegression(limit)) = max_regression else { return Ok((failures, warnings)) };
    if a.sides.len() < 2 {
        warnings.push("--max-regression: only one run, nothing to compare against".into());
    }
    for (si, per_op) in a.comparisons.iter().enumerate() {
        let (base, side) = (&a.sides[0].label, &a.sides[si + 1].label);
        let mut worse = Vec::new();
        let mut short = None;
        for (oi, per_metric) in per_op.iter().enumerate() {
            for c in per_metric.iter().flatten() {
                if c.outcome == Outcome::TooShort {
                    short.get_or_insert_with(|| c.sentence(base, side, a.ops[oi].name()));
                }
                let Some(ch) = c.change.filter(|ch| c.is_regression() && ch.point.abs() > limit) else { continue };
                let interval = format!("{}% CI {}, {}", a.plan.opts.confidence * 100.0, signed(ch.lo), signed(ch.hi));
                worse.push(format!("{} {} {} ({interval})", a.ops[oi].name(), c.metric.noun(), signed(ch.point)));
            }
        }
        if let Some(s) = short {
            warnings.push(format!("--max-regression not checked: {s}"));
        }
        if !worse.is_empty() {
            failures.push(format!("--max-regression {}%: {side} is worse than {base} by more than that: {}", limit * 100.0, worse.join(", ")));
        }
    }
    Ok((failures, warnings))
}
