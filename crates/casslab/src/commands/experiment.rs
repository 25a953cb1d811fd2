//! `casslab experiment FILE`: resolves the file's settings against the flags (order, unmeasured
//! round, settling, where latency is measured), has the library run every variant R times
//! (`casslab_core::session::experiment`), each run saved as an ordinary run tagged with the
//! experiment, then has it compare every variant with the first one (the baseline,
//! `casslab_core::analysis::study`) and prints the comparison as `casslab compare` does; with
//! `-o FILE` it also writes it as an HTML page (`casslab_core::report::experiment_html`). With
//! `rates:` the comparison is made rate by rate, with the SLA's verdicts (`sweep`). Invalid runs
//! are left out of the comparison unless `--allow-invalid`. `--fail-if` and `--max-regression`
//! are judged on the comparison as `compare` judges them (exit 1 when one fails).

use super::{compare, run, store_path};
use crate::cli::ExperimentArgs;
use crate::exit::{usage, Exit};
use crate::out;
use crate::terminal::Terminal;
use anyhow::{Context, Result};
use casslab_core::analysis::study::{study, Group};
use casslab_core::cluster::ClusterControl;
use casslab_local::LocalControl;
use casslab_core::config::Credentials;
use casslab_core::experiment::{load_experiment, Experiment, Order, RunOrder};
use casslab_core::report::comparison;
use casslab_core::report::experiment_html::ExperimentPage;
use casslab_core::report::table::TextTable;
use casslab_core::analysis::server_figures::spread;
use casslab_core::session::experiment::{find_max_per_variant, run_experiment, undeclared_load_point, FoundMax};
use casslab_core::session::{check_events, Lab};
use casslab_core::store::{RunId, Store};
use casslab_core::validity;
use casslab_core::workload::TargetKind;
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
    let run_order = run_order(&args, &exp)?;
    let mut base_cfg = args.run.to_config(&args.file.display().to_string())?;
    // the experiment's load point, unless the command line gives one
    if let (None, Some(c)) = (args.run.concurrency, exp.concurrency) {
        base_cfg.concurrency = c;
    }
    if let (None, Some(r)) = (&args.run.rate, exp.rate_per_s) {
        base_cfg.rate_per_s = Some(r);
    }
    let load_point = undeclared_load_point(&exp, &base_cfg, args.run.concurrency.is_some() || exp.concurrency.is_some());
    if let Some(w) = &load_point {
        eprintln!("warning: {w}");
    }
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
    let before = match (run_order.unmeasured_round, run_order.settle) {
        (true, true) => "after settling and an unmeasured round",
        (true, false) => "after an unmeasured round",
        (false, true) => "after settling",
        (false, false) => "with nothing before",
    };
    eprintln!(
        "experiment {} ({experiment_id}): {} variants × {repetitions} repetitions, {} order, {before}; baseline: {}",
        exp.name,
        exp.variants.len(),
        run_order.order.as_str(),
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
    if let Some(sla_text) = &args.run.find_max {
        let sla = casslab_core::session::findmax::parse_sla(sla_text)?;
        let found = rt.block_on(find_max_per_variant(&lab, &exp, &base_cfg, repetitions, run_order, &sla, args.run.max_steps, &experiment_id, &args.run.tags))?;
        out::print(&found_max_table(&found, sla_text, args.analysis.confidence.trim().trim_end_matches('%').parse::<f64>().map_or(0.95, |p| p / 100.0)))?;
        return Ok(if found.interrupted { Exit::Interrupted } else { Exit::Success }.code());
    }
    let made = rt.block_on(run_experiment(&lab, &exp, &base_cfg, repetitions, run_order, &experiment_id, &args.run.tags))?;
    if made.interrupted {
        eprintln!("interrupted: stopping the experiment; the runs so far are saved and compared");
    }

    let mut list = TextTable::headless().indent(2);
    for (name, ids) in &made.variants {
        list.row([name.clone(), ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")]);
    }
    let ids = |v: &[i64]| v.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
    if !made.unmeasured.is_empty() {
        list.row(["(unmeasured round)".to_string(), ids(&made.unmeasured)]);
    }
    if !made.loads.is_empty() {
        list.row(["(loads before settling)".to_string(), ids(&made.loads)]);
    }
    let seed = made.run_order.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
    let order = format!("order ({}{seed}): {}", made.run_order.order.as_str(), made.order.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>().join(" "));
    out::print(&format!("\nexperiment {} — runs per variant:\n{list}  {order}\n", exp.name))?;
    let mut notes = vec![format!("measured {order}; {before}")];
    for n in &made.notes {
        let times = made.notes.iter().filter(|m| *m == n).count();
        let line = if times > 1 { format!("{n} ({times} times)") } else { n.clone() };
        if !notes.contains(&line) {
            notes.push(line);
        }
    }
    notes.extend(load_point.iter().map(|w| format!("warning: {w}")));
    // invalid runs are left out of their variant's figures unless --allow-invalid
    let all: Vec<RunId> = made.variants.iter().flat_map(|(_, ids)| ids.iter().copied()).collect();
    let screened = validity::screen(&store, &all, args.analysis.allow_invalid)?;
    screened.warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    screened.refused.iter().for_each(|r| eprintln!("left out of the comparison: {r}"));
    let refused: Vec<RunId> = screened.refused.iter().map(|r| r.run).collect();
    notes.extend(screened.refused.iter().map(|r| format!("left out of the comparison: {r}")));
    let groups: Vec<Group> = made
        .variants
        .into_iter()
        .map(|(label, ids)| Group { label, runs: ids.into_iter().filter(|id| !refused.contains(id)).collect() })
        .filter(|g| !g.runs.is_empty())
        .collect();
    let gated = !args.fail_if.is_empty() || args.max_regression.is_some();
    let mut gates_ok = true;
    if groups.len() >= 2 {
        if !exp.rates.is_empty() {
            super::sweep::print(&store, &exp, &groups, window_s, &args.analysis)?;
        }
        let s = study(&store, &groups, compare::plan(&args.analysis, window_s)?)?;
        if exp.rates.is_empty() {
            out::print(&comparison::text(&s))?;
        }
        let (server_text, server_lines) = compare::server_side(&store, &groups, s.plan.opts.confidence)?;
        out::print(&server_text)?;
        if let Some(path) = &args.output {
            compare::write_page(path, ExperimentPage::of_study(&exp.name, &exp.description, &experiment_id, &s), notes, server_lines)?;
        }
        gates_ok = compare::gates_pass(&s, &args.fail_if, args.max_regression)?;
    } else {
        if let Some(path) = &args.output {
            eprintln!("no page written to {}: fewer than two variants have runs to compare", path.display());
        }
        if gated {
            eprintln!("gate failed: fewer than two variants have runs to compare, so the gates cannot be judged");
            gates_ok = false;
        }
    }
    if let Some(w) = &load_point {
        eprintln!("warning: {w}");
    }
    Ok(if made.interrupted {
        Exit::Interrupted
    } else if !refused.is_empty() || !gates_ok {
        Exit::Failed
    } else {
        Exit::Success
    }
    .code())
}

/// The highest rate meeting the SLA per variant: each repetition's, and their mean with a t
/// interval (a repetition that met it at no rate counts as 0 ops/s).
fn found_max_table(found: &FoundMax, sla: &str, confidence: f64) -> String {
    let mut t = TextTable::new(["variant", "per repetition (ops/s)", &format!("mean [{:.0}% t interval]", confidence * 100.0), "vs baseline", "runs"]).indent(2);
    let means: Vec<Option<f64>> = found
        .variants
        .iter()
        .map(|(_, reps)| spread(&reps.iter().map(|(b, _)| b.unwrap_or(0.0)).collect::<Vec<_>>(), confidence).map(|s| s.mean))
        .collect();
    for (i, (name, reps)) in found.variants.iter().enumerate() {
        let values: Vec<f64> = reps.iter().map(|(b, _)| b.unwrap_or(0.0)).collect();
        let each = reps.iter().map(|(b, _)| b.map_or("none".to_string(), |v| format!("{v:.0}"))).collect::<Vec<_>>().join(" ");
        let cell = match spread(&values, confidence) {
            Some(s) if s.runs > 1 => format!("{:.0} [{:.0}, {:.0}]", s.mean, s.lo.max(0.0), s.hi),
            Some(s) => format!("{:.0}", s.mean),
            None => "—".into(),
        };
        let vs = match (means[0], means[i]) {
            (Some(b), Some(m)) if i > 0 && b > 0.0 => format!("{:+.1}%", (m / b - 1.0) * 100.0),
            _ => String::new(),
        };
        let runs = reps.iter().flat_map(|(_, r)| r.iter().map(|id| id.to_string())).collect::<Vec<_>>().join(" ");
        t.row([name.clone(), each, cell, vs, runs]);
    }
    format!("\nhighest throughput meeting {sla}, per variant (each repetition a search: a probe at maximum throughput, then fixed rates):\n{t}")
}

/// The file's order settings with the flags' overrides.
fn run_order(args: &ExperimentArgs, exp: &Experiment) -> Result<RunOrder> {
    let mut r = exp.run_order;
    if let Some(o) = &args.order {
        r.order = Order::parse(o).ok_or_else(|| usage(format!("--order {o}: write {}", Order::NAMES)))?;
    }
    if args.order_seed.is_some() {
        r.seed = args.order_seed;
    }
    r.unmeasured_round &= !args.no_unmeasured_round;
    r.settle &= !args.no_settle;
    Ok(r)
}

/// `YYYYMMDD-HHMMSS` in UTC, to tell experiments apart.
fn chrono_free_stamp() -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    casslab_core::report::text::utc(ms).replace(['-', ':'], "").replace(' ', "-")
}
