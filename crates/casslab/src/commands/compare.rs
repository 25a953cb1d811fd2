//! `casslab compare RUN… [--baseline RUN]`: parses the flags, has the library compare the
//! saved runs (`casslab_core::analysis::study`), prints the comparison
//! (`casslab_core::report::comparison`) and judges the `--fail-if` / `--max-regression`
//! gates that make the exit code 1. `compare --experiment ID|NAME` takes its groups from a
//! saved experiment (`casslab_core::analysis::saved_experiment`) instead of run ids; `-o`
//! writes the study's page. `casslab experiment` shares [`plan`] and [`write_page`].
//!
//! Without `--window` the window length is chosen from the runs' length (and said on stderr).
//! Tables and verdicts go to stdout; gate failures (one line each) and warnings to stderr.
//! Flags are checked before the store is opened, and the store is never created here.

use super::report::resolve;
use super::store_to_read;
use crate::cli::{AnalysisArgs, CompareArgs, OutputFormat};
use crate::exit::{bail_usage, usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::analysis::saved_experiment::{saved_experiment, SavedExperimentError};
use casslab_core::analysis::server_figures;
use casslab_core::analysis::study::{study, Group, Study, StudyPlan};
use casslab_core::analysis::{approx_duration, auto_window_s, check_gates, AnalysisOptions, Gate, GateFailure, LatencyKind, MaxRegression};
use casslab_core::report::comparison::{self, signed};
use casslab_core::report::experiment_html::ExperimentPage;
use casslab_core::report::{comparison_json, csv};
use casslab_core::stats::Phase;
use casslab_core::store::{RunId, Store};
use casslab_core::validity;

pub fn compare(args: &CompareArgs) -> Result<i32> {
    let window_s = args.window.as_deref().map(|w| crate::cli::parse_duration_s("window", w)).transpose()?;
    let mut plan = plan(&args.analysis, window_s.unwrap_or(AnalysisOptions::default().window_s))?;
    let store = store_to_read(&args.store)?;
    if let Some(key) = &args.experiment {
        return compare_experiment(&store, key, args, window_s.is_none(), plan);
    }
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
    let name = format!("runs {}", ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    show(&store, &groups, &s, args, (&name, ""), Vec::new())?;
    Ok(if gates_pass(&s, &args.fail_if, args.max_regression)? { Exit::Success } else { Exit::Failed }.code())
}

/// Prints a study in the chosen format (with the servers' side in text) and writes its page
/// for `-o`; `page` is the page's (name, experiment id), `notes` go on it first.
fn show(store: &Store, groups: &[Group], s: &Study, args: &CompareArgs, page: (&str, &str), notes: Vec<String>) -> Result<()> {
    let (server_text, server_lines) = server_side(store, groups, s.plan.opts.confidence)?;
    match args.format {
        OutputFormat::Text => out::print(&format!("{}{server_text}", comparison::text(s)))?,
        OutputFormat::Json => out::print(&format!("{}\n", serde_json::to_string_pretty(&comparison_json::comparison_json(s))?))?,
        OutputFormat::Csv => out::print(&csv::comparison_csv(s))?,
    }
    if let Some(path) = &args.output {
        write_page(path, ExperimentPage::of_study(page.0, "", page.1, s), notes, server_lines)?;
    }
    Ok(())
}

/// Writes a study's page to `path` (`-`: stdout), with `notes` first among its notes and the
/// servers' side (`server_side`'s lines) last; for `compare -o` and `experiment -o`.
pub(crate) fn write_page(path: &std::path::Path, mut page: ExperimentPage, notes: Vec<String>, server_lines: Vec<String>) -> Result<()> {
    page.notes.splice(0..0, notes);
    page.notes.extend(server_lines);
    let html = page.render();
    out::write_to_file_or_stdout(path, |w| w.write_all(html.as_bytes()))
}

/// `compare --experiment`: the saved experiment's variants compared again, its invalid runs
/// left out (exit 1, as `casslab experiment`); a `rates:` experiment rate by rate.
fn compare_experiment(store: &Store, key: &str, args: &CompareArgs, auto_window: bool, mut plan: StudyPlan) -> Result<i32> {
    let saved = saved_experiment(store, key).map_err(|e| match e {
        SavedExperimentError::NotFound(_) | SavedExperimentError::FindMax(_) => usage(format!("--experiment {key}: {e}")),
        e => anyhow::Error::new(e),
    })?;
    let all: Vec<RunId> = saved.groups.iter().flat_map(|g| g.runs.iter().copied()).collect();
    let runs = |ids: &[RunId]| ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
    let variants: Vec<String> = saved.groups.iter().map(|g| format!("{} (runs {})", g.label, runs(&g.runs))).collect();
    out::note(&format!("experiment {} ({}): {}; baseline: {}", saved.name, saved.id, variants.join(", "), saved.groups[0].label));
    let seed = saved.order_seed.as_ref().map(|s| format!(", seed {s}")).unwrap_or_default();
    let kind = saved.order_kind.as_deref().unwrap_or("as run");
    let mut notes = vec![format!("measured order ({kind}{seed}): {}", saved.order.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>().join(" "))];
    if !saved.unmeasured.is_empty() {
        notes.push(format!("unmeasured round: runs {}", runs(&saved.unmeasured)));
    }
    if auto_window {
        plan.opts.window_s = chosen_window(store, &all, plan.opts.min_windows)?;
    }
    let screened = validity::screen(store, &all, args.analysis.allow_invalid)?;
    screened.warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    screened.refused.iter().for_each(|r| eprintln!("left out of the comparison: {r}"));
    notes.extend(screened.refused.iter().map(|r| format!("left out of the comparison: {r}")));
    let refused: Vec<RunId> = screened.refused.iter().map(|r| r.run).collect();
    let kept = |groups: Vec<Group>| -> Vec<Group> {
        groups
            .into_iter()
            .map(|g| Group { runs: g.runs.into_iter().filter(|id| !refused.contains(id)).collect(), ..g })
            .filter(|g| !g.runs.is_empty())
            .collect()
    };
    let mut gates_ok = true;
    if saved.rates.len() > 1 {
        if args.format != OutputFormat::Text || args.output.is_some() {
            bail_usage!(
                "experiment {} ran every variant at {} fixed rates, so it is {} comparisons: --format json, csv and -o take one; compare one rate's runs by their ids (`casslab runs --tag experiment_id={}`)",
                saved.id,
                saved.rates.len(),
                saved.rates.len(),
                saved.id
            );
        }
        for &rate in &saved.rates {
            let groups = kept(saved.groups_at(Some(rate)));
            if groups.len() < 2 {
                eprintln!("at {rate:.0} ops/s: fewer than two variants have runs to compare");
                continue;
            }
            out::print(&format!("\nat {rate:.0} ops/s:\n"))?;
            let s = study(store, &groups, plan.clone())?;
            show(store, &groups, &s, args, (&saved.name, &saved.id), Vec::new())?;
            gates_ok &= gates_pass(&s, &args.fail_if, args.max_regression)?;
        }
    } else {
        let groups = kept(saved.groups_at(None));
        if groups.len() < 2 {
            eprintln!("experiment {}: fewer than two variants have runs to compare", saved.id);
            return Ok(Exit::Failed.code());
        }
        let s = study(store, &groups, plan)?;
        show(store, &groups, &s, args, (&saved.name, &saved.id), notes)?;
        gates_ok = gates_pass(&s, &args.fail_if, args.max_regression)?;
    }
    Ok(if refused.is_empty() && gates_ok { Exit::Success } else { Exit::Failed }.code())
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
