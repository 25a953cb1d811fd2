//! Running an experiment so that its order does not decide its outcome: the data is loaded and
//! the cluster settled (flushed, compactions done) before anything is measured, every variant
//! runs once unmeasured (the JIT, caches and the first compactions after the load land there),
//! and the measured repetitions go in a counterbalanced or seeded-shuffled order
//! (`crate::experiment::order`). With fresh loads each measured run is its own load, settle,
//! and measurement. Every run is an ordinary saved run; the tags say what it was:
//! - measured: `experiment`, `experiment_id`, `variant`, `repetition`, `position` (its place in
//!   the order), `order` (and `order_seed`), `unmeasured_round` and `settle` (on/off);
//! - the unmeasured round: `unmeasured=<variant>`; a load before settling: `load_of=<variant>`
//!   — neither carries `variant=`, so nothing that collects a variant's runs picks them up.
//!
//! What to compare and how is the analysis' job; this only makes the runs.

use super::observer::SessionEvent;
use crate::notice::Notice;
use super::server::{wait_for_compactions, Compactions};
use super::{Lab, RunSpec, SessionError};
use crate::config::{LoadMode, RunConfig};
use crate::experiment::{schedule, Experiment, Order, RunOrder, Variant};
use crate::store::{RunId, RunStatus};
use std::time::Duration;

/// The runs an experiment made.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRuns {
    /// Measured runs per variant in the file's order (the first is the baseline).
    pub variants: Vec<(String, Vec<RunId>)>,
    /// The unmeasured round, and the loads made before settling.
    pub unmeasured: Vec<RunId>,
    pub loads: Vec<RunId>,
    /// The measured runs in the order they ran: (variant, repetition).
    pub order: Vec<(String, u32)>,
    /// The order settings used (a shuffle's seed filled in).
    pub run_order: RunOrder,
    /// What settling found, for the record.
    pub notes: Vec<String>,
    /// The user stopped it; the runs so far are saved.
    pub interrupted: bool,
}

/// A variant whose run could not be made.
#[derive(Debug, thiserror::Error)]
#[error("variant {variant}: {source}")]
pub struct VariantError {
    pub variant: String,
    #[source]
    pub source: SessionError,
}

/// Checks every variant's server definition before the first run, so that a wrong one stops
/// the experiment before any node does.
async fn check_servers(lab: &Lab<'_>, exp: &Experiment) -> Result<(), VariantError> {
    let mut checked: Vec<&crate::cluster::ServerSpec> = Vec::new();
    for v in &exp.variants {
        let Some(spec) = &v.workload.cluster else { continue };
        if checked.contains(&spec) {
            continue;
        }
        super::check_server(lab, &v.workload.name, spec).await.map_err(|source| VariantError { variant: v.name.clone(), source })?;
        checked.push(spec);
    }
    Ok(())
}

/// A run of variant `v`: the base config with the variant's workload, parameters and client
/// settings (the variant's own `rate` and `concurrency` win), tagged.
pub fn variant_spec(exp: &Experiment, v: &Variant, base: &RunConfig, tags: Vec<String>) -> RunSpec {
    let mut cfg = base.clone();
    cfg.workload = format!("{}#{}", exp.origin, v.name);
    cfg.workload_source = v.source.clone();
    cfg.params = v.workload.params.clone();
    if let Some(c) = v.concurrency {
        cfg.concurrency = c;
    }
    if v.rate_per_s.is_some() {
        cfg.rate_per_s = v.rate_per_s;
    }
    if exp.fresh_load && cfg.load == LoadMode::Auto {
        cfg.load = LoadMode::Reload;
    }
    RunSpec { config: cfg, workload: v.workload.clone(), tags }
}

/// The variants that run at maximum throughput with many requests in flight because neither
/// the experiment, the command line nor the variant says where latency means something, in
/// words; `None` when every variant is declared. `declared_concurrency`: the experiment file or
/// the command line set the in-flight count.
pub fn undeclared_load_point(exp: &Experiment, base: &RunConfig, declared_concurrency: bool) -> Option<String> {
    let open: Vec<&str> = exp
        .variants
        .iter()
        .filter(|v| base.rate_per_s.is_none() && v.rate_per_s.is_none() && !declared_concurrency && v.concurrency.is_none())
        .map(|v| v.name.as_str())
        .collect();
    if open.is_empty() || base.concurrency <= 1 {
        return None;
    }
    let who = if open.len() == exp.variants.len() { "every variant".to_string() } else { open.join(", ") };
    Some(format!(
        "{} declares no load point: {who} runs at maximum throughput with {} requests in flight, where latency is in flight / throughput and measures the queue rather than the variants; declare `rate:` (a fixed rate below saturation) or `concurrency:` (the in-flight count the question implies) in the experiment file",
        exp.name, base.concurrency
    ))
}

/// Runs every variant of `exp` `repetitions` times in the order `run_order` says, after
/// loading, settling and an unmeasured round. Stops after the run in which the user asked to
/// stop.
pub async fn run_experiment(
    lab: &Lab<'_>,
    exp: &Experiment,
    base: &RunConfig,
    repetitions: u32,
    run_order: RunOrder,
    experiment_id: &str,
    extra_tags: &[String],
) -> Result<ExperimentRuns, VariantError> {
    check_servers(lab, exp).await?;
    let mut run_order = run_order;
    if run_order.order == Order::Shuffled && run_order.seed.is_none() {
        run_order.seed = Some(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1));
    }
    let sched = schedule(exp.variants.len(), repetitions, run_order.order, run_order.seed.unwrap_or(0));
    let mut out = ExperimentRuns {
        variants: exp.variants.iter().map(|v| (v.name.clone(), Vec::new())).collect(),
        unmeasured: Vec::new(),
        loads: Vec::new(),
        order: sched.iter().map(|(v, rep)| (exp.variants[*v].name.clone(), *rep)).collect(),
        run_order,
        notes: Vec::new(),
        interrupted: false,
    };
    let variants = out.order.iter().map(|(v, _)| v.clone()).collect();
    lab.observer.on(&SessionEvent::Notice(&Notice::MeasuredOrder { order: run_order.order.as_str(), seed: run_order.seed, variants }));
    let on = |b: bool| if b { "on" } else { "off" };
    let mut common = vec![format!("experiment={}", exp.name), format!("experiment_id={experiment_id}")];
    common.extend(extra_tags.iter().cloned());
    let mut measured_tags = common.clone();
    measured_tags.push(format!("order={}", run_order.order.as_str()));
    measured_tags.extend(run_order.seed.map(|s| format!("order_seed={s}")));
    measured_tags.push(format!("unmeasured_round={}", on(run_order.unmeasured_round)));
    measured_tags.push(format!("settle={}", on(run_order.settle)));

    // Loads happen in the runs themselves unless told otherwise; `--skip-load` / `--load-only`
    // are the user's business.
    let fresh = variant_spec(exp, &exp.variants[0], base, Vec::new()).config.load == LoadMode::Reload;
    let plain = matches!(base.load, LoadMode::Skip | LoadMode::Only);
    let tagged = |key: &str, v: &Variant| {
        let mut t = common.clone();
        t.push(format!("{key}={}", v.name));
        t
    };
    let stop = |r: &super::RunResult| r.status == RunStatus::Interrupted || lab.stopping();

    // 1. the unmeasured round (its runs also load a shared data set), or just the loads
    if run_order.unmeasured_round {
        for v in &exp.variants {
            lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, step: "unmeasured round" });
            let r = run_one(lab, &variant_spec(exp, v, base, tagged("unmeasured", v)), v).await?;
            out.unmeasured.push(r.run);
            if stop(&r) {
                out.interrupted = true;
                return Ok(out);
            }
        }
    } else if run_order.settle && !fresh && !plain {
        for v in &exp.variants {
            lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, step: "load" });
            let r = run_one(lab, &load_only(variant_spec(exp, v, base, tagged("load_of", v))), v).await?;
            out.loads.push(r.run);
            if stop(&r) {
                out.interrupted = true;
                return Ok(out);
            }
        }
    }
    // 2. settle what the loads (and the round) left behind
    if run_order.settle && !fresh && !plain {
        out.notes.extend(settle(lab, base, exp).await);
    }
    // 3. the measured repetitions; a fresh load is loaded and settled before each
    for (k, (vi, rep)) in sched.iter().enumerate() {
        let v = &exp.variants[*vi];
        let step = format!("repetition {rep}/{repetitions}, {} of {} measured", k + 1, sched.len());
        lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, step: &step });
        let mut tags = measured_tags.clone();
        tags.extend([format!("variant={}", v.name), format!("variant_index={vi}"), format!("repetition={rep}"), format!("position={}", k + 1)]);
        let mut spec = variant_spec(exp, v, base, tags);
        if fresh && run_order.settle {
            let r = run_one(lab, &load_only(variant_spec(exp, v, base, tagged("load_of", v))), v).await?;
            out.loads.push(r.run);
            if stop(&r) {
                out.interrupted = true;
                return Ok(out);
            }
            out.notes.extend(settle(lab, base, exp).await);
            spec.config.load = LoadMode::Skip;
        }
        // a measured run of a server variant starts on freshly started nodes, whichever
        // variant ran before it: no run inherits a JVM (JIT, heap, caches) warmed by another
        if let Some(server) = &v.workload.cluster {
            super::apply_server(lab, &v.workload.name, server, true).await.map_err(|source| VariantError { variant: v.name.clone(), source })?;
        }
        let r = run_one(lab, &spec, v).await?;
        out.variants[*vi].1.push(r.run);
        if stop(&r) {
            out.interrupted = true;
            return Ok(out);
        }
    }
    Ok(out)
}

async fn run_one(lab: &Lab<'_>, spec: &RunSpec, v: &Variant) -> Result<super::RunResult, VariantError> {
    super::run(lab, spec).await.map_err(|source| VariantError { variant: v.name.clone(), source })
}

/// The same run, stopping after its load phase.
fn load_only(mut spec: RunSpec) -> RunSpec {
    spec.workload.run = None;
    spec
}

/// Flushes every node casslab controls (`nodetool flush`) and waits, up to 10 minutes, until
/// no node runs a compaction; returns what happened, in words (also told to the observer).
async fn settle(lab: &Lab<'_>, base: &RunConfig, exp: &Experiment) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(control) = lab.control.clone() {
        let flushed = tokio::task::spawn_blocking(move || {
            let nodes = control.nodes().map_err(|e| e.to_string())?;
            let mut done = 0;
            for (i, n) in nodes.iter().enumerate().filter(|(_, n)| n.running) {
                match control.nodetool(i, &["flush"]) {
                    Ok(o) if o.status.success() => done += 1,
                    Ok(o) => return Err(format!("nodetool flush on {}: {}", n.name, String::from_utf8_lossy(&o.stderr).trim())),
                    Err(e) => return Err(format!("nodetool flush on {}: {e}", n.name)),
                }
            }
            Ok(done)
        })
        .await;
        notes.push(match flushed {
            Ok(Ok(n)) => format!("settling: flushed {n} node(s)"),
            Ok(Err(e)) => format!("settling: {e}"),
            Err(e) => format!("settling: the flush failed: {e}"),
        });
    }
    let keyspace = &exp.variants[0].workload.keyspace;
    notes.push(match wait_for_compactions(&base.cluster, &lab.credentials, keyspace, Duration::from_secs(600)).await {
        Ok(s) => format!("settling: compactions done after {s:.0} s"),
        Err(Compactions::Unknown(e)) => format!("settling: cannot check compactions: {e}"),
        Err(Compactions::StillRunning(n)) => format!("settling: {n:.0} compactions still running after 10 minutes; measuring anyway"),
    });
    for n in &notes {
        lab.observer.on(&SessionEvent::Notice(&Notice::Settled(n.clone())));
    }
    notes
}

/// The highest rate each variant sustained within an SLA, per repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundMax {
    /// Per variant in the file's order: for each repetition, the achieved throughput of the
    /// best step that met the SLA (`None`: no step met it) and the search's runs.
    pub variants: Vec<(String, Vec<(Option<f64>, Vec<RunId>)>)>,
    /// The searches in the order they ran: (variant, repetition).
    pub order: Vec<(String, u32)>,
    pub interrupted: bool,
}

/// `experiment --find-max SLA`: for every variant, `repetitions` searches of the highest fixed
/// rate meeting `sla` (each a probe at maximum throughput, then a binary search of rates:
/// [`super::findmax::find_max`]), in the experiment's order; a server variant's search starts
/// on freshly started nodes. The searches' runs are tagged `experiment`, `variant`,
/// `repetition` and `find_max=…` like any other.
#[allow(clippy::too_many_arguments)]
pub async fn find_max_per_variant(
    lab: &Lab<'_>,
    exp: &Experiment,
    base: &RunConfig,
    repetitions: u32,
    run_order: RunOrder,
    sla: &crate::analysis::Gate,
    max_steps: usize,
    experiment_id: &str,
    extra_tags: &[String],
) -> Result<FoundMax, VariantError> {
    check_servers(lab, exp).await?;
    let sched = schedule(exp.variants.len(), repetitions, run_order.order, run_order.seed.unwrap_or(0));
    let mut out = FoundMax {
        variants: exp.variants.iter().map(|v| (v.name.clone(), Vec::new())).collect(),
        order: sched.iter().map(|(v, rep)| (exp.variants[*v].name.clone(), *rep)).collect(),
        interrupted: false,
    };
    for (k, (vi, rep)) in sched.iter().enumerate() {
        let v = &exp.variants[*vi];
        let step = format!("search {rep}/{repetitions} of the highest rate meeting the SLA, {} of {}", k + 1, sched.len());
        lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, step: &step });
        let mut tags = vec![format!("experiment={}", exp.name), format!("experiment_id={experiment_id}")];
        tags.extend(extra_tags.iter().cloned());
        tags.extend([format!("variant={}", v.name), format!("variant_index={vi}"), format!("repetition={rep}"), format!("position={}", k + 1)]);
        if let Some(server) = &v.workload.cluster {
            super::apply_server(lab, &v.workload.name, server, true).await.map_err(|source| VariantError { variant: v.name.clone(), source })?;
        }
        let spec = variant_spec(exp, v, base, tags);
        let search = super::findmax::find_max(lab, &spec, sla, max_steps).await.map_err(|e| VariantError {
            variant: v.name.clone(),
            source: match e {
                super::findmax::FindMaxError::Session(s) => s,
                super::findmax::FindMaxError::Sla(s) => SessionError::Sla(s),
            },
        })?;
        let best = search.best().map(|s| s.achieved_per_s);
        out.variants[*vi].1.push((best, search.steps.iter().map(|s| s.run).collect()));
        if search.interrupted || lab.stopping() {
            out.interrupted = true;
            return Ok(out);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn experiment(text: &str) -> Experiment {
        let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        crate::experiment::load_experiment(f.path(), &BTreeMap::new()).unwrap()
    }

    #[test]
    fn a_variant_run_takes_its_own_client_settings_and_fresh_loads_reload() {
        let e = experiment("workload: kv\nload: fresh\nvariants:\n  a: {}\n  b: { concurrency: 4, rate: 300 }\n");
        let base = RunConfig { concurrency: 16, ..RunConfig::default() };
        let a = variant_spec(&e, &e.variants[0], &base, vec!["x=1".into()]);
        let b = variant_spec(&e, &e.variants[1], &base, Vec::new());
        assert_eq!((a.config.concurrency, a.config.rate_per_s, a.config.load), (16, None, LoadMode::Reload));
        assert_eq!((b.config.concurrency, b.config.rate_per_s), (4, Some(300.0)));
        assert_eq!(a.tags, ["x=1"]);
        assert!(a.config.workload.ends_with("#a") && a.config.params["keyspace"] == "casslab_kv_a");
        assert!(load_only(a).workload.run.is_none());
    }

    #[test]
    fn an_experiment_without_a_load_point_is_told_so() {
        let e = experiment("name: x\nworkload: kv\nvariants:\n  a: {}\n  b: { rate: 300 }\n");
        let base = RunConfig { concurrency: 128, ..RunConfig::default() };
        let w = undeclared_load_point(&e, &base, false).unwrap();
        assert!(w.starts_with("x declares no load point: a runs at maximum throughput with 128 requests in flight"), "{w}");
        assert_eq!(undeclared_load_point(&e, &base, true), None);
        assert_eq!(undeclared_load_point(&e, &RunConfig { rate_per_s: Some(100.0), ..base.clone() }, false), None);
        let e = experiment("name: x\nworkload: kv\nvariants:\n  a: {}\n  b: {}\n");
        assert!(undeclared_load_point(&e, &base, false).unwrap().contains(": every variant runs at maximum throughput"));
    }
}
