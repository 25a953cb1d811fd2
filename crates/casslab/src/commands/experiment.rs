//! `casslab experiment FILE`: has the library run every variant of an experiment R times,
//! interleaved (`casslab_core::session::experiment`), each run saved as an ordinary run tagged
//! with the experiment, then compares every variant with the first one
//! (the baseline) using the windowed bootstrap of `casslab compare`; with `-o FILE` it also
//! writes the comparison as an HTML page (`casslab_core::report::experiment_html`). With
//! `rates:` the comparison is made rate by rate, with the SLA's verdicts (`sweep`).

use super::{compare, run, store_path};
use crate::cli::ExperimentArgs;
use crate::exit::{usage, Exit};
use crate::out;
use crate::terminal::Terminal;
use casslab_core::report::table::TextTable;
use anyhow::{Context, Result};
use casslab_core::analysis::{LatencyKind, Metric};
use casslab_core::cluster::ClusterControl;
use casslab_local::LocalControl;
use casslab_core::config::Credentials;
use casslab_core::workload::TargetKind;
use casslab_core::experiment::{load_experiment, Experiment};
use casslab_core::report::experiment_html::{ExperimentPage, OpFigures, VariantRuns};
use casslab_core::session::experiment::run_experiment;
use casslab_core::session::{check_events, Lab};
use casslab_core::store::{RunId, Store};
use casslab_core::validity;
use std::sync::Arc;

pub fn experiment(args: ExperimentArgs) -> Result<i32> {
    let overrides = crate::cli::parse_params(&args.run.params)?;
    let mut exp = load_experiment(&args.file, &overrides)?;
    let repetitions = args.repetitions.unwrap_or(exp.repetitions);
    let window_s = match &args.window {
        Some(w) => crate::cli::parse_duration_s("window", w)?,
        None => exp.window_s,
    };
    let store = Arc::new(Store::open(&store_path(&args.run.store)).context("cannot open the results store")?);
    let mut base_cfg = args.run.to_config(&args.file.display().to_string())?;
    if !args.run.no_lint {
        super::lint::print_before_experiment(&args.file.display().to_string(), &overrides, base_cfg.concurrency, base_cfg.cluster.dc.as_deref());
    }
    // --event applies to every variant's run; all are checked before the cluster is touched
    let mut extra_events = Vec::new();
    for spec in &args.run.events {
        extra_events.push(casslab_core::events::parse_event(spec).map_err(|m| usage(format!("--event: {m}")))?);
    }
    // Cassandra and Redis are aimed at (and started locally) only if a variant needs them
    let any_cql = exp.variants.iter().any(|v| v.workload.target == TargetKind::Cql);
    let any_redis = exp.variants.iter().any(|v| v.workload.target == TargetKind::Redis);
    let local = if any_cql { run::local_target(&base_cfg, &args.run.local)?.map(|c| Arc::new(LocalControl::new(c))) } else { None };
    for v in exp.variants.iter_mut() {
        v.workload.events.extend(extra_events.iter().cloned());
        check_events(&v.workload.events, local.as_deref().map(|c| c as &dyn ClusterControl)).with_context(|| format!("variant {}", v.name))?;
    }
    let creds = if any_cql { run::connect_target(&mut base_cfg, local.as_ref().map(|c| c.cluster()).as_ref())? } else { Credentials { password: None, redis_password: run::redis_password() } };
    if any_redis {
        run::aim_redis(&mut base_cfg, &args.run.local)?;
    }
    let experiment_id = format!("{}-{}", exp.name, chrono_free_stamp());
    eprintln!(
        "experiment {} ({experiment_id}): {} variants × {repetitions} repetitions, interleaved; baseline: {}",
        exp.name,
        exp.variants.len(),
        exp.variants[0].name
    );
    let rt = run::runtime(base_cfg.threads)?;
    let lab = Lab {
        credentials: creds,
        control: local.map(|c| c as Arc<dyn ClusterControl>),
        results: &*store,
        observer: Arc::new(Terminal::with_summaries(store.clone())),
        stop: run::stop_on_ctrl_c(&rt),
    };
    let made = rt.block_on(run_experiment(&lab, &exp, &base_cfg, repetitions, &experiment_id, &args.run.tags))?;
    if made.interrupted {
        eprintln!("interrupted: stopping the experiment; the runs so far are saved and compared");
    }

    let mut list = TextTable::headless().indent(2);
    for (name, ids) in &made.variants {
        list.row([name.clone(), ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")]);
    }
    out::print(&format!("\nexperiment {} — runs per variant:\n{list}", exp.name))?;
    // invalid runs are left out of their variant's figures unless --allow-invalid
    let all: Vec<RunId> = made.variants.iter().flat_map(|(_, ids)| ids.iter().copied()).collect();
    let screened = validity::screen(&store, &all, args.analysis.allow_invalid)?;
    screened.warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    screened.refused.iter().for_each(|r| eprintln!("left out of the comparison: {r}"));
    let refused: Vec<RunId> = screened.refused.iter().map(|r| r.run).collect();
    let groups: Vec<(String, Vec<RunId>)> = made
        .variants
        .into_iter()
        .map(|(name, ids)| (name, ids.into_iter().filter(|id| !refused.contains(id)).collect::<Vec<_>>()))
        .filter(|(_, ids)| !ids.is_empty())
        .collect();
    if groups.len() >= 2 {
        let analysis = if exp.rates.is_empty() {
            compare::print_groups(&store, &groups, window_s, &args.analysis)?
        } else {
            super::sweep::print(&store, &exp, &groups, window_s, &args.analysis)?;
            compare::analyse_groups(&store, &groups, window_s, &args.analysis)?
        };
        if let Some(path) = &args.output {
            let page = page(&exp, &experiment_id, &groups, &analysis);
            std::fs::write(path, page.render()).with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    } else if let Some(path) = &args.output {
        eprintln!("no page written to {}: fewer than two variants have runs to compare", path.display());
    }
    Ok(if made.interrupted {
        Exit::Interrupted
    } else if !refused.is_empty() {
        Exit::Failed
    } else {
        Exit::Success
    }
    .code())
}

/// The experiment's HTML page from the comparison's figures.
fn page(exp: &Experiment, experiment_id: &str, groups: &[(String, Vec<RunId>)], a: &compare::Analysis) -> ExperimentPage {
    let o = &a.plan.opts;
    let what = match a.plan.kind {
        LatencyKind::Intended => "latency from intended start",
        LatencyKind::Service => "service time",
    };
    let method = format!("windows of {} s, {} resamples, {}% intervals; {what}; baseline: {}", o.window_s, o.resamples, o.confidence * 100.0, groups[0].0);
    let variants = groups.iter().map(|(name, ids)| VariantRuns { name: name.clone(), runs: ids.iter().map(|i| format!("run {i}")).collect() }).collect();
    let ops = a
        .ops
        .iter()
        .enumerate()
        .map(|(oi, op)| OpFigures {
            name: op.name().to_string(),
            metrics: Metric::ALL
                .iter()
                .map(|&m| (m, a.sides.iter().map(|s| s.figures[oi].as_ref().and_then(|f| f.resampled.estimate(m, o.confidence))).collect()))
                .collect(),
        })
        .collect();
    ExperimentPage {
        name: exp.name.clone(),
        description: exp.description.clone(),
        experiment_id: experiment_id.to_string(),
        method,
        variants,
        ops,
        verdicts: compare::verdict_lines(a),
    }
}

/// `YYYYMMDD-HHMMSS` in UTC, to tell experiments apart.
fn chrono_free_stamp() -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    casslab_core::report::text::utc(ms).replace(['-', ':'], "").replace(' ', "-")
}
