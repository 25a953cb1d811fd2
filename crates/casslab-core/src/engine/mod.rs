//! The load engine: connects, prepares the keyspace and statements, then runs the workload's
//! phases (load, then warm-up and run) and reports everything through [`EngineEvent`]s on a
//! channel — intervals as they close, warnings, phase totals. It never prints and never
//! stores; the caller decides what to do with the events. Request failures are counted;
//! only setup failures return an error.

mod access;
mod connect;
mod error;
mod phase;
mod plan;
mod schema;
mod worker;

pub use connect::{cluster_info, connect, ClusterInfo};
pub use error::{classify, EngineError};
pub use schema::{default_replication, fingerprint};

use crate::config::{Credentials, LoadMode, RunConfig};
use crate::gen::GeneratorSet;
use crate::stats::{IntervalSample, OpStats, Phase};
use crate::workload::Workload;
use phase::{run_phase, PhaseKind, PhaseParams};
use plan::{plan_op, Plan};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc::UnboundedSender, watch};

/// What the engine tells its caller while it works.
#[derive(Debug)]
pub enum EngineEvent {
    Connected(ClusterInfo),
    /// Something the user should know that is not a problem.
    Info(String),
    /// Something that may make the results less useful; the run goes on.
    Warning(String),
    /// `at_ms`: when the phase started, in milliseconds since the engine started (the time
    /// axis of [`IntervalSample::start_ms`]).
    PhaseStarted { phase: Phase, count: Option<u64>, warmup_s: f64, duration_s: Option<f64>, rate_per_s: Option<f64>, at_ms: u64 },
    Interval(IntervalSample),
    /// Totals of the measured part of a phase (warm-up excluded).
    PhaseFinished { phase: Phase, duration_s: f64, ops: Vec<(String, OpStats)>, target_rate_per_s: Option<f64> },
}

/// How a run ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    pub interrupted: bool,
}

/// Runs `w` as `cfg` says. Setting `stop` to true ends the current phase cleanly (its partial
/// interval is kept) and skips the rest.
pub async fn run(
    cfg: &RunConfig,
    w: &Workload,
    creds: &Credentials,
    events: UnboundedSender<EngineEvent>,
    mut stop: watch::Receiver<bool>,
) -> Result<RunOutcome, EngineError> {
    let t0 = tokio::time::Instant::now();
    let session = Arc::new(connect(&cfg.cluster, creds).await?);
    let info = cluster_info(&session).await;
    let _ = events.send(EngineEvent::Connected(info.clone()));
    let ks = schema::prepare_keyspace(&session, w, &info).await?;
    if ks.created_now {
        let _ = events.send(EngineEvent::Info(format!("created keyspace {}", w.keyspace)));
    }
    let workers = if cfg.threads > 0 { cfg.threads } else { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2) };
    let params = |kind, interval_ms: u64, seed: u64, first_index: u32| PhaseParams {
        kind,
        workers,
        concurrency: cfg.concurrency.max(1),
        interval: Duration::from_millis(interval_ms.max(10)),
        seed,
        drain_timeout: Duration::from_millis(cfg.cluster.request_timeout_ms + 2_000),
        t0,
        first_index,
    };

    // Prepare everything before loading, so a bad statement fails fast.
    let load_gens = Arc::new(GeneratorSet::build(&w.generators).map_err(|e| EngineError::Other(e.to_string()))?);
    let load_plan = match &w.load {
        Some(l) => {
            let op = w.operation(&l.op).expect("validated");
            Some((Plan::new(vec![plan_op(&session, w, &load_gens, op).await?], &[1.0], load_gens.clone()), l.count))
        }
        None => None,
    };
    let run_gens = Arc::new(GeneratorSet::build(&w.generators).map_err(|e| EngineError::Other(e.to_string()))?);
    let run_plan = match &w.run {
        Some(r) => {
            let mut ops = Vec::new();
            let mut weights = Vec::new();
            for (name, ratio) in r.mix.iter().filter(|(_, x)| *x > 0.0) {
                ops.push(plan_op(&session, w, &run_gens, w.operation(name).expect("validated")).await?);
                weights.push(*ratio);
            }
            Some(Plan::new(ops, &weights, run_gens))
        }
        None => None,
    };

    let mut next_index = 0u32;
    if let Some((plan, count)) = load_plan {
        if cfg.load == LoadMode::Reload {
            schema::truncate_for_reload(&session, w, ks).await?;
            let _ = events.send(EngineEvent::Info(format!("truncated the tables of {} for --reload", w.keyspace)));
        }
        let fp = load_fingerprint(w, cfg.seed);
        let previous = if cfg.load == LoadMode::Skip { None } else { schema::loaded(&session, &fp).await? };
        match (cfg.load, previous) {
            (LoadMode::Skip, _) => {
                let _ = events.send(EngineEvent::Info("load phase skipped (--skip-load)".into()));
            }
            (_, Some(desc)) => {
                let _ = events.send(EngineEvent::Info(format!(
                    "load phase skipped: the same data is already in {} ({desc}); --reload loads it again",
                    w.keyspace
                )));
            }
            _ => {
                let _ = events.send(EngineEvent::PhaseStarted { phase: Phase::Load, count: Some(count), warmup_s: 0.0, duration_s: None, rate_per_s: None, at_ms: t0.elapsed().as_millis() as u64 });
                let names = plan.slot_names.clone();
                let r = run_phase(session.clone(), Arc::new(plan), params(PhaseKind::Load { count }, cfg.interval_ms, cfg.seed, 0), &events, &mut stop).await;
                let errors: u64 = r.measured.iter().map(|s| s.error_count()).sum();
                let _ = events.send(EngineEvent::PhaseFinished {
                    phase: Phase::Load,
                    duration_s: r.measured_s,
                    ops: names.into_iter().zip(r.measured.iter().cloned()).collect(),
                    target_rate_per_s: None,
                });
                next_index = r.next_index;
                if r.interrupted {
                    return Ok(RunOutcome { interrupted: true });
                }
                if errors == 0 {
                    schema::record_load(&session, &fp, &format!("{count} rows, workload {}, seed {}", w.name, cfg.seed)).await?;
                } else {
                    let _ = events.send(EngineEvent::Warning(format!(
                        "{errors} load operations failed; the data set is incomplete and will be loaded again next time"
                    )));
                }
            }
        }
    }

    if cfg.load == LoadMode::Only {
        return Ok(RunOutcome { interrupted: false });
    }
    let (Some(plan), Some(r)) = (run_plan, &w.run) else {
        return Ok(RunOutcome { interrupted: false });
    };
    let warmup_s = cfg.warmup_s.unwrap_or(r.warmup_s);
    let duration_s = cfg.duration_s.unwrap_or(r.duration_s);
    let _ = events.send(EngineEvent::PhaseStarted {
        phase: Phase::Run,
        count: None,
        warmup_s,
        duration_s: Some(duration_s),
        rate_per_s: cfg.rate_per_s,
        at_ms: t0.elapsed().as_millis() as u64,
    });
    let names: Vec<String> = plan.slot_names.clone();
    let kind = PhaseKind::Run { warmup_s, duration_s, rate_per_s: cfg.rate_per_s };
    let res = run_phase(session.clone(), Arc::new(plan), params(kind, cfg.interval_ms, cfg.seed ^ 0x5eed, next_index), &events, &mut stop).await;
    let _ = events.send(EngineEvent::PhaseFinished {
        phase: Phase::Run,
        duration_s: res.measured_s,
        ops: names.into_iter().zip(res.measured).collect(),
        target_rate_per_s: cfg.rate_per_s,
    });
    Ok(RunOutcome { interrupted: res.interrupted })
}

/// Identifies the data a load phase writes: schema, load statement, the generators it binds,
/// row count and seed.
fn load_fingerprint(w: &Workload, seed: u64) -> String {
    let Some(l) = &w.load else { return String::new() };
    let op = w.operation(&l.op).expect("validated");
    let mut parts: Vec<String> = w.schema.iter().map(|s| s.cql.clone()).collect();
    for st in &op.statements {
        parts.push(st.cql.clone());
        for a in &st.args {
            parts.push(format!("{a}={}", serde_json::to_string(&w.generators[a]).unwrap_or_default()));
        }
    }
    parts.push(l.count.to_string());
    parts.push(seed.to_string());
    let refs: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
    fingerprint(&refs)
}
