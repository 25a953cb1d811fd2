//! The load engine: given a connected [`Target`], it prepares the server for the workload,
//! plans its operations, then runs the phases (load, then warm-up and run) and reports
//! everything through [`EngineEvent`]s on a channel — intervals as they close, warnings, phase
//! totals. It is generic over the target (CQL today), never prints and never stores: the run
//! session (`crate::session`) decides what to do with the events. Request failures are counted;
//! only setup failures return an error. Every time it reports is measured on the run's
//! [`RunClock`].

mod clock;
mod error;
mod phase;
mod plan;
mod replay;
pub mod start;
mod target;
mod worker;

pub use clock::{unix_now_ms, RunClock};
pub use error::EngineError;
pub use plan::Plan;
pub use target::{Claim, Completion, Prepared, SetupRole, Target, TargetInfo};

use crate::config::{LoadMode, RunConfig};
use crate::gen::GeneratorSet;
use crate::stats::{IntervalSample, OpStats, Phase};
use crate::workload::Workload;
use phase::{run_phase, PhaseKind, PhaseParams};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc::UnboundedSender, watch};

/// What the engine tells its caller while it works.
#[derive(Debug)]
pub enum EngineEvent {
    /// Something the user should know that is not a problem.
    Info(String),
    /// Something that may make the results less useful; the run goes on.
    Warning(String),
    /// `at_ms`: when the phase started on the run's clock (the time axis of
    /// [`IntervalSample::start_ms`]).
    PhaseStarted { phase: Phase, count: Option<u64>, warmup_s: f64, duration_s: Option<f64>, rate_per_s: Option<f64>, at_ms: u64 },
    Interval(IntervalSample),
    /// The loaders of a sharded run agreed on when the run phase starts (Unix milliseconds);
    /// `clock_offset_ms` is this loader's clock minus the server's, when measured.
    CommonStart { at_unix_ms: i64, clock_offset_ms: Option<f64> },
    /// Totals of the measured part of a phase (warm-up excluded).
    PhaseFinished { phase: Phase, duration_s: f64, ops: Vec<(String, OpStats)>, target_rate_per_s: Option<f64> },
}

/// How a run ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    pub interrupted: bool,
}

/// Runs `w` against `target` as `cfg` says. Setting `stop` to true ends the current phase
/// cleanly (its partial interval is kept) and skips the rest.
pub async fn run<T: Target>(
    target: Arc<T>,
    cfg: &RunConfig,
    w: &Workload,
    clock: RunClock,
    events: UnboundedSender<EngineEvent>,
    mut stop: watch::Receiver<bool>,
) -> Result<RunOutcome, EngineError> {
    let t0 = clock.t0;
    let shard = cfg.shard.as_ref().filter(|s| s.count > 1);
    let role = match shard {
        Some(s) if !s.controls() => SetupRole::WaitsFor { timeout_ms: s.barrier_timeout_ms },
        _ => SetupRole::Creates,
    };
    for note in target.prepare(w, role).await?.notes {
        let _ = events.send(EngineEvent::Info(note));
    }
    let workers = if cfg.threads > 0 { cfg.threads } else { default_workers(cfg.rate_per_s) };
    // each shard draws its own random numbers, reproducibly
    let seed = match shard {
        Some(s) => cfg.seed ^ (s.index as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407),
        None => cfg.seed,
    };
    let params = |kind, interval_ms: u64, seed: u64, first_index: u32, start_at: Option<tokio::time::Instant>| PhaseParams {
        kind,
        workers,
        concurrency: cfg.concurrency.max(1),
        interval: Duration::from_millis(interval_ms.max(10)),
        seed,
        drain_timeout: Duration::from_millis(cfg.cluster.request_timeout_ms + 2_000),
        t0,
        first_index,
        start_at,
        // shards cut their intervals on the same wall-clock boundaries
        aligned: (shard.is_some() || cfg.start_at_unix_ms.is_some()).then_some(clock),
        shard: shard.map_or((0, 1), |s| (s.index, s.count)),
    };

    // Plan everything before loading, so a bad statement fails fast.
    let load_plan = match &w.load {
        Some(l) => {
            let gens = Arc::new(GeneratorSet::build(&w.generators)?.in_keyspace(&w.keyspace));
            Some((target.plan(w, &[(l.op.clone(), 1.0)], gens).await?, l.count))
        }
        None => None,
    };
    let run_plan = match &w.run {
        Some(r) => {
            let gens = Arc::new(GeneratorSet::build(&w.generators)?.in_keyspace(&w.keyspace));
            let mix: Vec<(String, f64)> = r.mix.iter().filter(|(_, x)| *x > 0.0).map(|(n, x)| (n.clone(), *x)).collect();
            Some(target.plan(w, &mix, gens).await?)
        }
        None => None,
    };

    let mut next_index = 0u32;
    if let Some((plan, total)) = load_plan {
        // a shard loads its slice of the rows: its part of every sequence
        let (first, count) = shard.map_or((0, total), |s| s.slice(total));
        if first > 0 {
            let op = w.operation(&w.load.as_ref().expect("a load plan").op).expect("validated");
            for (name, draws) in sequence_draws(w, op) {
                if let Some(g) = plan.gens.index_of(&name) {
                    plan.gens.advance_sequence(g, first.saturating_mul(draws));
                }
            }
        }
        if cfg.load == LoadMode::Reload {
            target.truncate_for_reload(w).await?;
            let _ = events.send(EngineEvent::Info(format!("truncated the tables of {} for --reload", w.keyspace)));
        }
        let whole_fp = load_fingerprint(w, cfg.seed);
        // a shard records its own slice
        let fp = match shard {
            Some(s) => format!("{whole_fp}:{}/{}", s.index, s.count),
            None => whole_fp.clone(),
        };
        let previous = match cfg.load {
            LoadMode::Skip => None,
            _ if shard.is_some() => match target.loaded(&whole_fp).await? {
                Some(d) => Some(d),
                None => target.loaded(&fp).await?,
            },
            _ => target.loaded(&fp).await?,
        };
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
                let load_start = tokio::time::Instant::now();
                let _ = events.send(EngineEvent::PhaseStarted { phase: Phase::Load, count: Some(count), warmup_s: 0.0, duration_s: None, rate_per_s: None, at_ms: load_start.saturating_duration_since(clock.t0).as_millis() as u64 });
                let names = plan.slot_names.clone();
                let r = run_phase(target.clone(), Arc::new(plan), params(PhaseKind::Load { count }, cfg.interval_ms, seed, 0, Some(load_start)), &events, &mut stop).await;
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
                    let what = match shard {
                        Some(s) => format!("rows {first}..{} of {total} (shard {} of {}), workload {}, seed {}", first + count, s.index, s.count, w.name, cfg.seed),
                        None => format!("{count} rows, workload {}, seed {}", w.name, cfg.seed),
                    };
                    target.record_load(&fp, &what).await?;
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
    let schedule = r.replay.as_ref().map(|rp| replay::schedule(rp, &plan.slot_names));
    if schedule.is_some() && cfg.rate_per_s.is_some() {
        let _ = events.send(EngineEvent::Warning("--rate is ignored: the workload replays its own schedule".into()));
    }
    // a replay's target rate is its schedule's mean: what it asks of the cluster, open loop
    let rate_per_s = match &schedule {
        Some(s) => replay::mean_rate(s),
        None => cfg.rate_per_s,
    };
    let warmup_s = cfg.warmup_s.unwrap_or(r.warmup_s);
    let duration_s = cfg.duration_s.unwrap_or(r.duration_s);
    let common = match (cfg.start_at_unix_ms, shard) {
        (Some(at), _) => Some(start::at(at, cfg.interval_ms as i64)?),
        (None, Some(s)) => {
            let _ = events.send(EngineEvent::Info(format!("shard {} of {}: waiting at the barrier of run \"{}\" for the other shards", s.index, s.count, s.run_id)));
            Some(start::barrier(&*target, s, cfg.interval_ms).await?)
        }
        (None, None) => None,
    };
    let start_at = common.map(|c| {
        let _ = events.send(EngineEvent::CommonStart { at_unix_ms: c.at_unix_ms, clock_offset_ms: c.clock_offset_ms });
        c.instant(&clock)
    });
    if let Some(at) = start_at {
        tokio::select! {
            _ = tokio::time::sleep_until(at) => {}
            _ = stop.wait_for(|s| *s) => return Ok(RunOutcome { interrupted: true }),
        }
    }
    // the phase's start: its intervals, its schedule and its events' times count from here
    let run_start = start_at.unwrap_or_else(tokio::time::Instant::now);
    let _ = events.send(EngineEvent::PhaseStarted {
        phase: Phase::Run,
        count: None,
        warmup_s,
        duration_s: Some(duration_s),
        rate_per_s,
        at_ms: run_start.saturating_duration_since(clock.t0).as_millis() as u64,
    });
    let names: Vec<String> = plan.slot_names.clone();
    let kind = PhaseKind::Run { warmup_s, duration_s, rate_per_s, schedule };
    let res = run_phase(target, Arc::new(plan), params(kind, cfg.interval_ms, seed ^ 0x5eed, next_index, Some(run_start)), &events, &mut stop).await;
    let _ = events.send(EngineEvent::PhaseFinished {
        phase: Phase::Run,
        duration_s: res.measured_s,
        ops: names.into_iter().zip(res.measured).collect(),
        // a shard's own share of the rate
        target_rate_per_s: rate_per_s.map(|r| r / shard.map_or(1.0, |s| s.count as f64)),
    });
    Ok(RunOutcome { interrupted: res.interrupted })
}

/// Operations per second one engine thread keeps up under a fixed rate with room to spare
/// (one thread spends well under 10 µs of CPU per operation).
const RATE_PER_THREAD: f64 = 50_000.0;

/// Engine threads when `--threads` is not given: half the cores (at least one). The cluster
/// under test, or other loaders, need the rest more than the client: on a 2-core machine one
/// thread delivered more operations per second than two, for less CPU per operation, and
/// threads that hand completions to each other cost a wake-up (a system call) each time.
pub fn default_threads() -> usize {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    (cores / 2).max(1)
}

/// Engine workers when `--threads` is not given: [`default_threads`], and under a fixed rate
/// only as many as the rate needs (at a few thousand operations per second, one worker starts
/// them in batches on its timer ticks, where several would each wake for a share).
pub fn default_workers(rate_per_s: Option<f64>) -> usize {
    let threads = default_threads();
    match rate_per_s {
        Some(r) => ((r / RATE_PER_THREAD).ceil() as usize).clamp(1, threads),
        None => threads,
    }
}

/// The sequence generators `op` draws from, with how many values of each one execution takes
/// (a batch draws once per row, a set read once per key).
fn sequence_draws(w: &Workload, op: &crate::workload::Operation) -> Vec<(String, u64)> {
    let per_execution = op.batch.as_ref().map_or(1, |b| b.size as u64);
    let mut out: Vec<(String, u64)> = Vec::new();
    for (pos, st) in op.statements.iter().enumerate() {
        for (marker, a) in st.args.iter().enumerate() {
            let is_sequence = w.generators.get(a).is_some_and(|g| g.is_sequence());
            if !is_sequence || out.iter().any(|(n, _)| n == a) {
                continue;
            }
            let set_key = op.partitions.as_ref().filter(|p| pos == 0 && p.key_marker == marker).map_or(1, |p| p.count as u64);
            out.push((a.clone(), per_execution * set_key));
        }
    }
    out
}

/// Identifies the data a load phase writes: schema, load statement, the generators it binds,
/// row count and seed.
fn load_fingerprint(w: &Workload, seed: u64) -> String {
    let Some(l) = &w.load else { return String::new() };
    let op = w.operation(&l.op).expect("validated");
    let mut parts: Vec<String> = w.schema.iter().map(|s| s.cql.clone()).collect();
    let gen = |a: &str| format!("{a}={}", serde_json::to_string(&w.generators[a]).unwrap_or_default());
    for st in &op.statements {
        parts.push(st.cql.clone());
        parts.extend(st.args.iter().map(|a| gen(a)));
    }
    for c in &op.redis {
        parts.push(format!("{} {:?}", c.name, c.args));
        parts.extend(c.bound().map(gen));
    }
    parts.push(l.count.to_string());
    parts.push(seed.to_string());
    let refs: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
    fingerprint(&refs)
}

/// A stable 64-bit FNV-1a hash, hex encoded: identifies a data set across runs and versions.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0u8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_stable_and_separate_parts() {
        assert_eq!(fingerprint(&["a", "b"]), fingerprint(&["a", "b"]));
        assert_ne!(fingerprint(&["ab", ""]), fingerprint(&["a", "b"]));
        assert_eq!(fingerprint(&[]), "cbf29ce484222325");
    }

    #[test]
    fn a_fixed_rate_gets_the_workers_it_needs() {
        assert!(default_threads() >= 1);
        assert_eq!(default_workers(Some(5_000.0)), 1);
        assert_eq!(default_workers(None), default_threads());
        assert!(default_workers(Some(1e9)) <= default_threads());
    }
}
