//! `casslab compare RUN… [--baseline RUN]`: parses the flags, has the library compare the
//! saved runs (`casslab_core::analysis::study`), prints the comparison
//! (`casslab_core::report::comparison`) and judges the `--fail-if` / `--max-regression`
//! gates that make the exit code 1. `casslab experiment` shares [`plan`].
//!
//! Tables and verdicts go to stdout; gate failures (one line each) and warnings to stderr.
//! Flags are checked before the store is opened, and the store is never created here.

use super::report::resolve;
use super::store_to_read;
use crate::cli::{AnalysisArgs, CompareArgs};
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::analysis::server_figures;
use casslab_core::analysis::study::{study, Group, StudyPlan};
use casslab_core::analysis::{check_gates, AnalysisOptions, GateFailure, LatencyKind};
use casslab_core::report::comparison::{self, signed};
use casslab_core::validity;

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
    let groups: Vec<Group> = ids.iter().map(|id| Group { label: format!("run {id}"), runs: vec![*id] }).collect();
    let s = study(&store, &groups, plan)?;
    out::print(&comparison::text(&s))?;
    out::print(&server_side(&store, &groups, s.plan.opts.confidence)?.0)?;
    let report = check_gates(&s, &args.fail_if, args.max_regression)?;
    report.unchecked.iter().for_each(|w| eprintln!("warning: {w}"));
    for f in &report.failures {
        eprintln!("gate failed: {}", failure_line(f, s.plan.opts.confidence));
    }
    if !report.failures.is_empty() {
        return Ok(Exit::Failed.code());
    }
    if !args.fail_if.is_empty() || args.max_regression.is_some() {
        eprintln!("gates passed");
    }
    Ok(Exit::Success.code())
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
