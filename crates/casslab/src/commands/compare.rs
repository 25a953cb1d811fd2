//! `casslab compare RUN… [--baseline RUN]`: parses the flags, has the library judge the saved
//! runs (`casslab_core::judge`: screening, the study, the servers' side, the gates), prints
//! the comparison in the format `--format` names in `report::format::comparison_formats`
//! (text, json, csv) and makes the exit code 1 when a gate
//! failed or a run was refused. `compare --experiment ID|NAME` takes its groups from a saved
//! experiment (`casslab_core::analysis::saved_experiment`) instead of run ids; `-o` writes
//! the study's page. `casslab experiment` shares [`judge_options`], [`print_gates`] and
//! [`write_page`].
//!
//! Without `--window` the window length is chosen from the runs' length (and said on stderr).
//! Tables and verdicts go to stdout; gate failures (one line each) and warnings to stderr.
//! Flags are checked before the store is opened, and the store is never created here.

use super::report::resolve;
use super::store_to_read;
use crate::cli::{format_named, AnalysisArgs, CompareArgs};
use crate::exit::{bail_usage, usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::analysis::saved_experiment::{saved_experiment, SavedExperimentError};
use casslab_core::analysis::study::{Family, Group, StudyPlan};
use casslab_core::analysis::verified::VerifiedComparison;
use casslab_core::analysis::{AnalysisOptions, Gate, LatencyKind, MaxRegression};
use casslab_core::judge::{judge, Gates, JudgeOptions, Judgement, Screening};
use casslab_core::report::experiment_html::ExperimentPage;
use casslab_core::report::format::{comparison_formats, ComparisonReport};
use casslab_core::report::judgement;
use casslab_core::store::{RunId, Store};

pub fn compare(args: &CompareArgs) -> Result<i32> {
    let window_s = args.window.as_deref().map(|w| crate::cli::parse_duration_s("window", w)).transpose()?;
    let mut o = judge_options(&args.analysis, window_s.unwrap_or(AnalysisOptions::default().window_s), &args.fail_if, args.max_regression)?;
    o.auto_window = window_s.is_none();
    let store = store_to_read(&args.store)?;
    if let Some(key) = &args.experiment {
        o.screening = Screening::LeaveOut;
        return compare_experiment(&store, key, args, &o);
    }
    let ids = run_ids(&store, args)?;
    let groups: Vec<Group> = ids.iter().map(|id| Group { label: format!("run {id}"), runs: vec![*id] }).collect();
    // an invalid run is neither compared nor judged by a gate unless --allow-invalid
    let j = judge(&store, &groups, &o)?;
    say_screening(&j, "refused");
    if !j.refused.is_empty() {
        return Ok(Exit::Failed.code());
    }
    let name = format!("runs {}", ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    show(&store, &j, args, (&name, ""), Vec::new(), j.verified(&store)?)?;
    Ok(print_gates(&j, &o.gates, o.plan.opts.confidence, args.allow_undecided).code())
}

/// The runs named, the baseline first; a run named twice is compared once (said on stderr).
fn run_ids(store: &Store, args: &CompareArgs) -> Result<Vec<RunId>> {
    let mut ids = Vec::new();
    let mut named_twice = Vec::new();
    if let Some(b) = &args.baseline {
        ids.push(resolve(store, b)?);
    }
    let mut listed = Vec::new();
    for r in &args.runs {
        let id = resolve(store, r)?;
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
        out::warn(&format!(
            "run {id} is named more than once; a run is never compared with itself{alone}; name two different runs, e.g. `casslab compare {id} latest`"
        ));
    }
    Ok(ids)
}

/// The chosen window, the screening's warnings and its refused runs (`refused` says what
/// became of them), on stderr.
fn say_screening(j: &Judgement, refused: &str) {
    if let Some(line) = j.window.as_ref().and_then(judgement::window_line) {
        eprintln!("{line}");
    }
    j.warnings.iter().for_each(|w| out::warn(w));
    j.refused.iter().for_each(|r| eprintln!("{refused}: {r}"));
}

/// Prints a study in the chosen format (with the servers' side in text) and writes its page
/// for `-o`; `page` is the page's (name, experiment id), `notes` go on it first.
fn show(store: &Store, j: &Judgement, args: &CompareArgs, page: (&str, &str), notes: Vec<String>, verified: Option<VerifiedComparison>) -> Result<()> {
    let Some(s) = &j.study else { return Ok(()) };
    let format = format_named(comparison_formats(), "format", &args.format)?;
    let recall = j.recall(store)?;
    let mut notes = notes;
    notes.extend(recall.as_ref().map(casslab_core::report::recall_text::verdict_lines).unwrap_or_default());
    let shown = ComparisonReport { study: s, verified: verified.as_ref(), recall: recall.as_ref(), server: j.server.as_ref() };
    out::print(&format.render(&shown))?;
    let server_lines = j.server.as_ref().map(|x| judgement::server_side(x, s.plan.opts.confidence).1).unwrap_or_default();
    if let Some(path) = &args.output {
        write_page(path, ExperimentPage::of_study(page.0, "", page.1, s).with_profiles(store, s)?.with_timelines(store, s)?, notes, server_lines)?;
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
fn compare_experiment(store: &Store, key: &str, args: &CompareArgs, o: &JudgeOptions) -> Result<i32> {
    let saved = saved_experiment(store, key).map_err(|e| match e {
        SavedExperimentError::NotFound(_) | SavedExperimentError::FindMax(_) => usage(format!("--experiment {key}: {e}")),
        e => anyhow::Error::new(e),
    })?;
    out::note(&saved.headline());
    let mut notes = saved.design_notes();
    // screened (and the window chosen) over every run of the experiment, once
    let all = casslab_core::judge::screen(store, &saved.groups, o)?;
    say_screening(&all, "left out of the comparison");
    notes.extend(all.refused.iter().map(|r| format!("left out of the comparison: {r}")));
    let plan = saved.study_plan(&o.plan, all.window.map(|w| w.window_s), args.analysis.family);
    let mut gates = Exit::Success;
    let mut worst = |e: Exit| {
        if e == Exit::Failed || (e == Exit::Undecided && gates == Exit::Success) {
            gates = e;
        }
    };
    if saved.rates.len() > 1 {
        let default_format = comparison_formats().default_format().name();
        if format_named(comparison_formats(), "format", &args.format)?.name() != default_format || args.output.is_some() {
            bail_usage!(
                "experiment {} ran every variant at {} fixed rates, so it is {} comparisons: --format json, csv and -o take one; compare one rate's runs by their ids (`casslab runs --tag experiment_id={}`)",
                saved.id,
                saved.rates.len(),
                saved.rates.len(),
                saved.id
            );
        }
        for &rate in &saved.rates {
            let j = all.of_groups(store, &saved.groups_at(Some(rate)), &plan, &o.gates)?;
            if j.study.is_none() {
                eprintln!("at {rate:.0} ops/s: fewer than two variants have runs to compare");
                continue;
            }
            out::print(&format!("\nat {rate:.0} ops/s:\n"))?;
            show(store, &j, args, (&saved.name, &saved.id), Vec::new(), j.verified(store)?)?;
            worst(print_gates(&j, &o.gates, o.plan.opts.confidence, args.allow_undecided));
        }
    } else {
        let j = all.of_groups(store, &saved.groups_at(None), &plan, &o.gates)?;
        if j.study.is_none() {
            eprintln!("experiment {}: fewer than two variants have runs to compare", saved.id);
            return Ok(Exit::Failed.code());
        }
        show(store, &j, args, (&saved.name, &saved.id), notes, j.verified(store)?)?;
        worst(print_gates(&j, &o.gates, o.plan.opts.confidence, args.allow_undecided));
    }
    Ok(if !all.refused.is_empty() { Exit::Failed } else { gates }.code())
}

/// The gates' report on stderr (for `compare` and `experiment`): what could not be judged,
/// a failed gate one line each, "gates passed"; the exit code: 1 when a gate failed, 4 when
/// one could not be judged (unless `allow_undecided`), else 0.
pub(crate) fn print_gates(j: &Judgement, gates: &Gates, confidence: f64, allow_undecided: bool) -> Exit {
    let Some(report) = &j.gates else { return if gates.any() { Exit::Failed } else { Exit::Success } };
    report.unchecked.iter().for_each(|w| out::warn(w));
    for line in judgement::gate_failures(report, confidence) {
        eprintln!("gate failed: {line}");
    }
    for line in &report.undecided {
        eprintln!("gate undecided: {line}");
    }
    if !report.failures.is_empty() {
        return Exit::Failed;
    }
    if !report.decided() && !allow_undecided {
        eprintln!("gates undecided: run longer or more repetitions, or pass --allow-undecided to accept");
        return Exit::Undecided;
    }
    out::note(if report.decided() { "gates passed" } else { "gates passed or undecided (--allow-undecided)" });
    Exit::Success
}

/// The analysis options and gates of the command line, checked.
pub(crate) fn judge_options(args: &AnalysisArgs, window_s: f64, fail_if: &[Gate], max_regression: Option<MaxRegression>) -> Result<JudgeOptions> {
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
    Ok(JudgeOptions {
        plan: StudyPlan {
            server_cores: args.server_cores,
            pool_windows: args.pool_windows,
            family: if args.family { Family::Experiment } else { Family::Comparison },
            ..StudyPlan::new(opts, kind)
        },
        auto_window: false,
        allow_invalid: args.allow_invalid,
        screening: Screening::RefuseAll,
        gates: Gates { fail_if: fail_if.to_vec(), max_regression },
    })
}
