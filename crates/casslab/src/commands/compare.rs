//! `casslab compare RUN… [--baseline RUN]`: parses the flags, has the library compare the
//! saved runs (`casslab_core::analysis::study`), prints the comparison
//! (`casslab_core::report::comparison`) and judges the `--fail-if` / `--max-regression`
//! gates that make the exit code 1. `casslab experiment` shares [`plan`].
//!
//! Without `--window` the window length is chosen from the runs' length (and said on stderr).
//! Tables and verdicts go to stdout; gate failures (one line each) and warnings to stderr.
//! Flags are checked before the store is opened, and the store is never created here.

use super::report::resolve;
use super::store_to_read;
use crate::cli::{AnalysisArgs, CompareArgs, OutputFormat};
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::analysis::server_figures;
use casslab_core::analysis::study::{study, Group, Study, StudyPlan};
use casslab_core::analysis::{approx_duration, auto_window_s, check_gates, AnalysisOptions, Gate, GateFailure, LatencyKind, MaxRegression};
use casslab_core::report::comparison::{self, signed};
use casslab_core::report::{comparison_json, csv};
use casslab_core::stats::Phase;
use casslab_core::store::{RunId, Store};
use casslab_core::validity;

pub fn compare(args: &CompareArgs) -> Result<i32> {
    let window_s = args.window.as_deref().map(|w| crate::cli::parse_duration_s("window", w)).transpose()?;
    let mut plan = plan(&args.analysis, window_s.unwrap_or(AnalysisOptions::default().window_s))?;
    let store = store_to_read(&args.store)?;
    let mut ids = Vec::new();
    let mut named_twice = Vec::new();
    if let Some(b) = &args.baseline {
        ids.push(resolve(&store, b)?);
    }
    let mut listed = Vec::new();
    for r in &args.runs {
        let id = resolve(&store, r)?;
        if listed.contains(&id) && !named_twice.contains(&id) {
            named_twice.push(id);
        }
        listed.push(id);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    for id in &named_twice {
        let alone = if ids.len() == 1 { " and it is the only run: it is shown alone, compared with nothing" } else { "" };
        eprintln!("warning: run {id} is named more than once; a run is never compared with itself{alone}; name two different runs, e.g. `casslab compare {id} latest`");
    }
    if window_s.is_none() {
        plan.opts.window_s = chosen_window(&store, &ids, plan.opts.min_windows)?;
    }
    // an invalid run is neither compared nor judged by a gate unless --allow-invalid
    let screened = validity::screen(&store, &ids, args.analysis.allow_invalid)?;
    screened.warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    if !screened.refused.is_empty() {
        screened.refused.iter().for_each(|r| eprintln!("refused: {r}"));
        return Ok(Exit::Failed.code());
    }
    let groups: Vec<Group> = ids.iter().map(|id| Group { label: format!("run {id}"), runs: vec![*id] }).collect();
    let s = study(&store, &groups, plan)?;
    match args.format {
        OutputFormat::Text => {
            out::print(&comparison::text(&s))?;
            out::print(&server_side(&store, &groups, s.plan.opts.confidence)?.0)?;
        }
        OutputFormat::Json => out::print(&format!("{}\n", serde_json::to_string_pretty(&comparison_json::comparison_json(&s))?))?,
        OutputFormat::Csv => out::print(&csv::comparison_csv(&s))?,
    }
    Ok(if gates_pass(&s, &args.fail_if, args.max_regression)? { Exit::Success } else { Exit::Failed }.code())
}

/// Judges the `--fail-if` and `--max-regression` gates on a study (for `compare` and
/// `experiment`): a failed gate is one line on stderr; `false` when any failed.
pub(crate) fn gates_pass(s: &Study, fail_if: &[Gate], max_regression: Option<MaxRegression>) -> Result<bool> {
    let report = check_gates(s, fail_if, max_regression)?;
    report.unchecked.iter().for_each(|w| eprintln!("warning: {w}"));
    for f in &report.failures {
        eprintln!("gate failed: {}", failure_line(f, s.plan.opts.confidence));
    }
    if !report.failures.is_empty() {
        return Ok(false);
    }
    if !fail_if.is_empty() || max_regression.is_some() {
        out::note("gates passed");
    }
    Ok(true)
}

/// The window length chosen from the runs' measured length (no `--window`), said on stderr.
fn chosen_window(store: &Store, ids: &[RunId], min_windows: usize) -> Result<f64> {
    let mut measured = Vec::new();
    for id in ids {
        let r = store.run(*id)?;
        let phase = r.summary.as_ref().and_then(|s| s.phases.iter().find(|p| p.phase == Phase::Run).or_else(|| s.phases.iter().find(|p| p.phase == Phase::Load)));
        if let Some(s) = phase.map(|p| p.duration_s).or(r.config.duration_s) {
            measured.push(s);
        }
    }
    let interval_s = store.run(ids[0])?.config.interval_ms as f64 / 1000.0;
    let w = auto_window_s(&measured, interval_s);
    let shortest = measured.iter().copied().fold(f64::INFINITY, f64::min);
    if shortest.is_finite() {
        let n = (shortest / w).floor() as usize;
        let enough = if n < min_windows { format!(", fewer than the {min_windows} a verdict needs: run longer") } else { String::new() };
        eprintln!("window: {} (from the runs' length: the shortest measured {shortest:.0} s, so {n} windows{enough}); --window sets it", approx_duration(w));
    }
    Ok(w)
}

/// The servers' side of a comparison of `groups`, as text, and the same as lines for a page.
pub(crate) fn server_side(store: &casslab_core::store::Store, groups: &[Group], confidence: f64) -> Result<(String, Vec<String>)> {
    let figures = server_figures::of_groups(store, groups)?;
    let differences = server_figures::differences(store, groups)?;
    let text = comparison::server_text(&figures, &differences, confidence);
    let lines = text.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect();
    Ok((text, lines))
}

/// A failed gate in one line, named by its flag.
fn failure_line(f: &GateFailure, confidence: f64) -> String {
    match f {
        GateFailure::Threshold { gate, side, observed } => {
            format!("--fail-if '{gate}': {side} {} {} = {}", gate.op, gate.metric.noun(), gate.format_value(*observed))
        }
        GateFailure::Regression { limit, side, baseline, worse } => {
            let worse: Vec<String> = worse
                .iter()
                .map(|(op, noun, ch)| format!("{op} {noun} {} ({}% CI {}, {})", signed(ch.point), confidence * 100.0, signed(ch.lo), signed(ch.hi)))
                .collect();
            format!("--max-regression {}%: {side} is worse than {baseline} by more than that: {}", limit * 100.0, worse.join(", "))
        }
    }
}

/// The analysis options of the command line, checked.
pub(crate) fn plan(args: &AnalysisArgs, window_s: f64) -> Result<StudyPlan> {
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
    Ok(StudyPlan { opts, kind, server_cores: args.server_cores, pool_windows: args.pool_windows })
}
