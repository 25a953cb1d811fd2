//! The load engine: given a connected [`Target`], it prepares the server for the workload,
//! plans its operations, then runs the phases (load, then warm-up and run) and reports
//! everything through [`EngineEvent`]s on a channel — intervals as they close, warnings, phase
//! totals. It is generic over the target (CQL today), never prints and never stores: the run
//! session (`crate::session`) decides what to do with the events. Request failures are counted;
//! only setup failures return an error. Every time it reports is measured on the run's
//! [`RunClock`].

mod clock;
mod lanes;
mod load;
mod paced;
mod phase;
mod plan;
mod quota;
mod record_trust;
mod replay;
#[cfg(test)]
mod schedule_tests;
mod setup_error;
mod shaped;
pub mod start;
pub mod start_gate;
mod target;
mod worker;

pub use clock::{unix_now_ms, RunClock};
pub use load::load_fingerprint;
pub use plan::Plan;
pub(crate) use record_trust::data_set_source;
pub use setup_error::EngineError;
pub use shaped::RateChange;
pub use target::{Claim, Completion, Prepared, SetupRole, Target, TargetInfo};

use crate::config::{LoadMode, RunConfig, ShardConfig};
use crate::gen::GeneratorSet;
use crate::load_shape::Curve;
use crate::notice::Notice;
use crate::stats::{CountReached, IntervalLoad, IntervalSample, NeverStarted, OpStats, Phase};
use crate::workload::{RunPhase, Workload};
use load::LoadEnd;
use phase::{run_phase, PhaseKind, PhaseParams, RunLength};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, mpsc::UnboundedSender, watch};
use tokio::time::Instant;

/// What the engine tells its caller while it works.
#[derive(Debug)]
pub enum EngineEvent {
    /// Something to tell the user (a load skipped, a rate not kept, a first error of a kind).
    Notice(Notice),
    /// `at_ms`: when the phase started on the run's clock (the time axis of
    /// [`IntervalSample::start_ms`]); `count`: the operations of a load, or of a run phase
    /// that ends after a count (then without a `duration_s`).
    PhaseStarted {
        phase: Phase,
        count: Option<u64>,
        warmup_s: f64,
        duration_s: Option<f64>,
        rate_per_s: Option<f64>,
        at_ms: u64,
    },
    Interval(IntervalSample),
    /// What an interval of a run phase under a rate or a schedule of requests in flight asked
    /// for and started; sent just before its [`EngineEvent::Interval`].
    Load(IntervalLoad),
    /// The loaders of a sharded run agreed on when the run phase starts (Unix milliseconds);
    /// `clock_offset_ms` is this loader's clock minus the server's, when measured.
    CommonStart {
        at_unix_ms: i64,
        clock_offset_ms: Option<f64>,
    },
    /// Totals of the measured part of a phase (warm-up excluded); under a rate, what was due
    /// by its end and never started; under a count, the operations asked and completed.
    PhaseFinished {
        phase: Phase,
        duration_s: f64,
        ops: Vec<(String, OpStats)>,
        target_rate_per_s: Option<f64>,
        never_started: Option<NeverStarted>,
        count: Option<CountReached>,
    },
    /// Verification asks for records saved by an earlier run.
    Verify(crate::verify::VerifyRequest),
}

/// How a run ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    pub interrupted: bool,
}

/// What every step of one run shares: the target, the resolved config, the workload, the
/// clock and the channel its events go to.
struct Run<'a, T: Target> {
    target: Arc<T>,
    cfg: &'a RunConfig,
    w: &'a Workload,
    clock: RunClock,
    events: UnboundedSender<EngineEvent>,
    /// This loader's shard of a run spread over several; `None` alone.
    shard: Option<&'a ShardConfig>,
    /// Each shard draws its own random numbers, reproducibly.
    seed: u64,
    /// This run's name in the data set's bookkeeping of verification.
    verify: &'a crate::verify::RunVerify,
    /// Where it starts its run phase with the runs made at the same time, if any.
    together: Option<start_gate::StartSlot>,
}

impl<T: Target> Run<'_, T> {
    fn send(&self, e: EngineEvent) {
        let _ = self.events.send(e);
    }

    fn notice(&self, n: Notice) {
        self.send(EngineEvent::Notice(n));
    }

    /// Milliseconds on the run's clock at `at`.
    fn at_ms(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.clock.t0).as_millis() as u64
    }

    /// The settings of one phase: the config's workers (resolved, see
    /// [`RunConfig::resolved`]), in-flight limit and interval.
    fn params(&self, kind: PhaseKind, seed: u64, first_index: u32, start_at: Instant) -> PhaseParams {
        let cfg = self.cfg;
        PhaseParams {
            kind,
            workers: cfg.threads.max(1),
            concurrency: cfg.concurrency.max(1),
            interval: Duration::from_millis(cfg.interval_ms.max(10)),
            seed,
            drain_timeout: Duration::from_millis(cfg.cluster.request_timeout_ms + 2_000),
            t0: self.clock.t0,
            first_index,
            start_at: Some(start_at),
            // shards cut their intervals on the same wall-clock boundaries
            aligned: (self.shard.is_some() || cfg.start_at_unix_ms.is_some()).then_some(self.clock),
            shard: self.shard.map_or((0, 1), |s| (s.index, s.count)),
            shared_schedule: cfg.shared_schedule,
        }
    }
}

/// What steers a run from outside while it goes: setting `stop` to true ends the current
/// phase cleanly (its partial interval is kept) and skips the rest; each [`RateChange`] sent on
/// `rate_changes` changes the run phase's rate from the time it arrives (ignored without a rate).
pub struct Controls {
    pub stop: watch::Receiver<bool>,
    pub rate_changes: mpsc::UnboundedReceiver<RateChange>,
    /// The run starts its run phase with others made at the same time (an experiment's
    /// variants measured side by side), at this gate.
    pub start: Option<start_gate::StartSlot>,
}

/// Runs `w` against `target` as `cfg` says (a config [`RunConfig::resolved`] by the caller),
/// steered by `controls`.
pub async fn run<T: Target>(
    target: Arc<T>,
    cfg: &RunConfig,
    w: &Workload,
    clock: RunClock,
    events: UnboundedSender<EngineEvent>,
    controls: Controls,
    verify: &crate::verify::RunVerify,
) -> Result<RunOutcome, EngineError> {
    let Controls { mut stop, rate_changes, start } = controls;
    let shard = cfg.shard.as_ref().filter(|s| s.count > 1);
    let seed = match shard {
        Some(s) => cfg.seed ^ (s.index as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407),
        None => cfg.seed,
    };
    let run = Run { target, cfg, w, clock, events, shard, seed, verify, together: start };
    let role = match shard {
        Some(s) if !s.controls() => SetupRole::WaitsFor { timeout_ms: s.barrier_timeout_ms },
        _ => SetupRole::Creates,
    };
    let created = run.target.prepare(w, role).await?.created_keyspace;
    if created {
        run.notice(Notice::KeyspaceCreated { keyspace: w.keyspace.clone() });
    }
    // Plan everything before loading, so a bad statement fails fast.
    let (load_plan, run_plan) = plan_phases(&*run.target, w).await?;
    let (mut next_index, mut loaded) = (0u32, None);
    if let Some((plan, total)) = load_plan {
        match load::load(&run, plan, total, &mut stop).await? {
            LoadEnd::Interrupted => return Ok(RunOutcome { interrupted: true }),
            LoadEnd::Next(index, how) => (next_index, loaded) = (index, Some(how)),
        }
    }
    // counters add up what every run adds: known only from an empty keyspace
    record_trust::establish(&run, loaded, created || cfg.load == LoadMode::Reload).await;
    if cfg.load == LoadMode::Only {
        return Ok(RunOutcome { interrupted: false });
    }
    record_trust::mark_run(&run).await;
    match (run_plan, &w.run) {
        (Some(plan), Some(r)) => measure(&run, plan, r, next_index, &mut stop, rate_changes).await,
        _ => Ok(RunOutcome { interrupted: false }),
    }
}

/// The load phase's plan with its row count, and the run phase's plan, as the workload has
/// them.
async fn plan_phases<T: Target>(target: &T, w: &Workload) -> Result<(Option<(Plan<T::Op>, u64)>, Option<Plan<T::Op>>), EngineError> {
    let gens = || -> Result<Arc<GeneratorSet>, EngineError> { Ok(Arc::new(GeneratorSet::build(&w.generators)?.in_keyspace(&w.keyspace))) };
    let load = match &w.load {
        Some(l) => Some((target.plan(w, &[(l.op.clone(), 1.0)], gens()?).await?, l.count)),
        None => None,
    };
    let run = match &w.run {
        Some(r) => {
            let mix: Vec<(String, f64)> = r.mix.iter().filter(|(_, x)| *x > 0.0).map(|(n, x)| (n.clone(), *x)).collect();
            Some(target.plan(w, &mix, gens()?).await?)
        }
        None => None,
    };
    Ok((load, run))
}

/// The run phase: waits for the common start of a sharded run (or `--start-at`), then runs
/// the warm-up and the measured time (a duration, or until the config's count of operations
/// was started and completed) at the config's rate (fixed or a schedule) or its schedule of
/// requests in flight.
async fn measure<T: Target>(
    run: &Run<'_, T>,
    plan: Plan<T::Op>,
    r: &RunPhase,
    first_index: u32,
    stop: &mut watch::Receiver<bool>,
    rate_changes: mpsc::UnboundedReceiver<RateChange>,
) -> Result<RunOutcome, EngineError> {
    let cfg = run.cfg;
    let schedule = r.replay.as_ref().map(|rp| replay::schedule(rp, &plan.slot_names));
    if schedule.is_some() && cfg.peak_rate_per_s().is_some() {
        run.notice(Notice::RateIgnoredForReplay);
    }
    let warmup_s = cfg.warmup_s.unwrap_or(r.warmup_s);
    let shape = cfg.rate.clone().filter(|_| schedule.is_none());
    let length = match cfg.shard_count() {
        Some(ops) => RunLength::Count { ops },
        None => RunLength::Time { duration_s: cfg.duration_s.unwrap_or(r.duration_s) },
    };
    let horizon_s = horizon_s(warmup_s, length, shape.as_ref(), run.shard.map_or(1, |s| s.count));
    // a replay's target rate is its schedule's mean: what it asks of the cluster, open loop;
    // a rate schedule's, its mean over the measured part
    let rate_per_s = match (&schedule, &shape) {
        (Some(s), _) => replay::mean_rate(s),
        // (a count the schedule never reaches: its level when the warm-up ends)
        (None, Some(sh)) => Some(Curve::compile(sh, horizon_s).mean_level(warmup_s, if horizon_s.is_finite() { horizon_s } else { warmup_s })),
        (None, None) => None,
    };
    let levels = cfg.concurrency_shape.as_ref().filter(|_| shape.is_none() && schedule.is_none()).map(|s| Arc::new(Curve::compile(s, horizon_s)));
    let curves = shape.map(|sh| watch::channel(Arc::new(Curve::compile(&sh, horizon_s))));
    let common = tokio::select! {
        c = common_start(run) => c?,
        _ = stop.wait_for(|s| *s) => return Ok(RunOutcome { interrupted: true }),
    };
    let start_at = match common {
        Some(at) => {
            record_trust::mark_sharded(run).await;
            tokio::select! {
                _ = tokio::time::sleep_until(at) => {}
                _ = stop.wait_for(|s| *s) => return Ok(RunOutcome { interrupted: true }),
            }
            at
        }
        None => Instant::now(),
    };
    // the phase's start: its intervals, its schedule and its events' times count from here
    let (count, duration_s) = match length {
        RunLength::Count { ops } => (Some(ops), None),
        RunLength::Time { duration_s } => (None, Some(duration_s)),
    };
    run.send(EngineEvent::PhaseStarted { phase: Phase::Run, count, warmup_s, duration_s, rate_per_s, at_ms: run.at_ms(start_at) });
    let names: Vec<String> = plan.slot_names.clone();
    let (rate, following) = match curves {
        Some((tx, rx)) => (Some(rx), Some(tokio::spawn(shaped::follow_changes(rate_changes, tx, start_at)))),
        None => (None, None),
    };
    let kind = PhaseKind::Run { warmup_s, length, rate, levels, schedule };
    let res = run_phase(run.target.clone(), Arc::new(plan), run.params(kind, run.seed ^ 0x5eed, first_index, start_at), &run.events, stop).await;
    if let Some(f) = following {
        f.abort();
    }
    let share = run.shard.map_or(1.0, |s| s.count.max(1) as f64);
    let failure = res.failure(Phase::Run);
    run.send(EngineEvent::PhaseFinished {
        phase: Phase::Run,
        duration_s: res.measured_s,
        ops: names.into_iter().zip(res.measured).collect(),
        // this loader's share of the rate (a replay's: its schedule's mean; a rate schedule's:
        // what it intended over the measured part, changes included)
        target_rate_per_s: res.offered_per_s.or(rate_per_s.map(|r| r / share)),
        never_started: res.never_started,
        count: res.count,
    });
    failure?;
    Ok(RunOutcome { interrupted: res.interrupted })
}

/// How far the run phase's curves are laid (their spikes), in seconds from its start: the
/// warm-up and the duration; under a count, until the rate's schedule intends the count's
/// last operation after the warm-up (this loader takes every `shards`-th of the schedule's
/// operations), or for ever when it never does or without a rate (at most `MAX_SPIKES`
/// spikes are laid).
fn horizon_s(warmup_s: f64, length: RunLength, rate: Option<&crate::load_shape::LoadShape>, shards: u32) -> f64 {
    let (ops, shape) = match (length, rate) {
        (RunLength::Time { duration_s }, _) => return warmup_s + duration_s,
        (RunLength::Count { ops }, Some(shape)) => (ops, shape),
        (RunLength::Count { .. }, None) => return f64::INFINITY,
    };
    // spikes laid further move the end (sooner, or later for a factor below 1): lay them up
    // to the end found until it no longer moves past where they were laid
    let mut horizon = warmup_s;
    for _ in 0..8 {
        let curve = Curve::compile(shape, horizon);
        // the schedule's operations from 0: the last of the count is one below what it adds up to
        let last = (curve.count_at(warmup_s) + ops as f64 * shards.max(1) as f64).ceil() as u64;
        match curve.time_of(last.saturating_sub(1)) {
            Some(end) if end <= horizon => return horizon,
            Some(end) => horizon = end,
            None => break,
        }
    }
    f64::INFINITY
}

/// When the run phase starts, for runs that start together: the gate of the runs made at the
/// same time in this process, `--start-at`, or the barrier of a sharded run; `None`: at once.
async fn common_start<T: Target>(run: &Run<'_, T>) -> Result<Option<Instant>, EngineError> {
    let cfg = run.cfg;
    let common = match (&run.together, cfg.start_at_unix_ms, run.shard) {
        (Some(slot), ..) => slot.start().await.map_err(setup_error::StartError::from)?,
        (None, Some(at), _) => start::at(at, cfg.interval_ms as i64)?,
        (None, None, Some(s)) => {
            run.notice(Notice::WaitingAtBarrier { shard: s.index, shards: s.count, run_id: s.run_id.clone() });
            start::barrier(&*run.target, s, cfg.interval_ms).await?
        }
        (None, None, None) => return Ok(None),
    };
    run.send(EngineEvent::CommonStart { at_unix_ms: common.at_unix_ms, clock_offset_ms: common.clock_offset_ms });
    Ok(Some(common.instant(&run.clock)))
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

/// The name a sharded run gets when no run id is given: the same on every loader started with
/// the same workload, parameters, seed, shard count, rate and timing (or count).
pub fn default_shard_run_id(cfg: &RunConfig) -> String {
    let params = serde_json::to_string(&cfg.params).unwrap_or_default();
    let count = cfg.shard.as_ref().map_or(1, |s| s.count).to_string();
    let mut timing = format!("{} {:?} {:?} {}", cfg.rate_text(), cfg.duration_s, cfg.warmup_s, cfg.interval_ms);
    if let Some(n) = cfg.count {
        timing.push_str(&format!(" count {n}"));
    }
    let fp = fingerprint(&[&cfg.workload_source, &params, &cfg.seed.to_string(), &count, &timing]);
    format!("{}-{}", cfg.workload.rsplit('/').next().unwrap_or("run").trim_end_matches(".yaml"), &fp[..10])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_shape::LoadShape;

    #[test]
    fn shards_of_different_schedules_get_different_run_ids() {
        let shard = ShardConfig { index: 0, count: 2, run_id: String::new(), barrier_timeout_ms: 0 };
        let a =
            RunConfig { workload: "kv".into(), shard: Some(shard), rate: Some(LoadShape::parse("ramp 100..5000 over 60s").unwrap()), ..RunConfig::default() };
        let b = RunConfig { rate: Some(LoadShape::parse("steps 100 200 each 30s").unwrap()), ..a.clone() };
        assert_ne!(default_shard_run_id(&a), default_shard_run_id(&b));
        assert_eq!(default_shard_run_id(&a), default_shard_run_id(&a.clone()));
    }

    #[test]
    fn a_count_lays_the_rate_until_its_last_operation() {
        let count = |ops| RunLength::Count { ops };
        let shape = |t: &str| LoadShape::parse(t).unwrap();
        assert_eq!(horizon_s(5.0, RunLength::Time { duration_s: 30.0 }, None, 1), 35.0);
        // 1000/s: 5000 in the warm-up, then 2000 more by 7 s
        assert!((horizon_s(5.0, count(2_000), Some(&shape("1000")), 1) - 6.999).abs() < 1e-9);
        // two shards take every other operation: 4000 of the schedule's
        assert!((horizon_s(0.0, count(2_000), Some(&shape("1000")), 2) - 3.999).abs() < 1e-9);
        // a dip to a tenth for 1 s every 2 s: the end lies further than without it
        let dips = horizon_s(0.0, count(2_000), Some(&shape("1000, spike x0.1 for 1s every 2s from 0s")), 1);
        assert!(dips > 3.0, "{dips}");
        let curve = Curve::compile(&shape("1000, spike x0.1 for 1s every 2s from 0s"), dips);
        assert!(curve.count_at(dips) >= 1_999.0, "the dips up to the end are laid: {}", curve.count_at(dips));
        assert_eq!(horizon_s(0.0, count(10), Some(&shape("0")), 1), f64::INFINITY, "a rate of 0 never gets there");
        assert_eq!(horizon_s(0.0, count(10), None, 1), f64::INFINITY);
    }

    #[test]
    fn fingerprints_are_stable_and_separate_parts() {
        assert_eq!(fingerprint(&["a", "b"]), fingerprint(&["a", "b"]));
        assert_ne!(fingerprint(&["ab", ""]), fingerprint(&["a", "b"]));
        assert_eq!(fingerprint(&[]), "cbf29ce484222325");
    }
}
