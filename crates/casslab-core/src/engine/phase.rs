//! Running one phase: spawning the workers, sampling their records once per interval into
//! [`IntervalSample`]s (sent to the caller as events as soon as each interval closes), deciding
//! when the phase ends (a load's rows done, the run phase's duration reached or its count
//! started and completed — see `quota` —, or the caller asked to stop), and
//! draining in-flight requests so the last partial interval is kept too (with the recall of
//! the searches still being judged). Under a rate or a
//! schedule of requests in flight, each interval's [`IntervalLoad`] (what was asked, what
//! was started) goes out just before it — but the last partial one's, which is the wait for
//! the requests in flight, not a level of load. Under a rate, the backlog is read from the
//! schedule's lanes, and what was due by the phase's end and never started is counted.

use super::clock::RunClock;
use super::lanes::Lanes;
use super::paced::run_worker;
use super::plan::Plan;
use super::quota::StartQuota;
use super::shaped::LoadMeter;
use super::start::aligned_first_tick;
use super::target::Target;
use super::worker::{Pace, Shared};
use super::EngineEvent;
use crate::load_shape::Curve;
use crate::notice::Notice;
use crate::stats::{CountReached, IntervalLoad, IntervalSample, NeverStarted, OpStats, Phase};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc::UnboundedSender, watch};
use tokio::time::Instant;

/// Longest wait, at the end of a phase, for the recall of searches still being judged.
const RECALL_SETTLE: Duration = Duration::from_secs(20);

pub(crate) enum PhaseKind {
    Load {
        count: u64,
    },
    /// `rate`: the rate's curve (fixed or a schedule; changes during the run come through
    /// it); `levels`: a schedule of requests in flight, closed loop; `schedule`: a replay.
    Run {
        warmup_s: f64,
        length: RunLength,
        rate: Option<watch::Receiver<Arc<Curve>>>,
        levels: Option<Arc<Curve>>,
        schedule: Option<Arc<[(Duration, usize)]>>,
    },
}

/// How long the measured part of a run phase lasts (the warm-up before it is timed either way).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RunLength {
    /// A duration, in seconds.
    Time { duration_s: f64 },
    /// Until this many operations were started after the warm-up and completed.
    Count { ops: u64 },
}

pub(crate) struct PhaseParams {
    pub kind: PhaseKind,
    pub workers: usize,
    pub concurrency: usize,
    pub interval: Duration,
    pub seed: u64,
    /// Longest wait for in-flight requests after the phase stops.
    pub drain_timeout: Duration,
    /// The run's time origin; interval times are milliseconds since it.
    pub t0: Instant,
    /// Index of the phase's first interval; intervals are numbered across the whole run.
    pub first_index: u32,
    /// When the phase starts (a sharded run's common start, reached by the caller); now if
    /// `None`.
    pub start_at: Option<Instant>,
    /// Cut intervals on wall-clock multiples of `interval` (the run's clock says where they
    /// fall), so that loaders of one run can add theirs up.
    pub aligned: Option<RunClock>,
    /// `(index, count)` of this loader among the shards of the run; `(0, 1)` alone. Under a
    /// fixed rate, the shards share one schedule and this loader takes its own slots of it.
    pub shard: (u32, u32),
    /// Under a rate: the workers take the next due operation from one shared lane instead of
    /// each following its own slice of the schedule.
    pub shared_schedule: bool,
}

pub(crate) struct PhaseResult {
    /// Totals of the measured part (load, or run without warm-up), per operation.
    pub measured: Vec<OpStats>,
    pub measured_s: f64,
    pub interrupted: bool,
    /// Index the next phase's first interval gets.
    pub next_index: u32,
    /// The mean rate the schedule intended over the measured part (this loader's share).
    pub offered_per_s: Option<f64>,
    /// Under a rate: the operations due by the phase's end that were never started.
    pub never_started: Option<NeverStarted>,
    /// Under a count: the operations asked for and completed in the measured part.
    pub count: Option<CountReached>,
    /// What a worker that panicked said: the phase ended without it, so it did not run as
    /// asked (its intervals until then are sent all the same).
    pub worker_failed: Option<String>,
}

impl PhaseResult {
    /// The phase's failure when a worker panicked.
    pub fn failure(&self, phase: Phase) -> Result<(), super::EngineError> {
        match &self.worker_failed {
            Some(message) => Err(super::EngineError::WorkerFailed { phase: phase.as_str(), message: message.clone() }),
            None => Ok(()),
        }
    }
}

pub(crate) async fn run_phase<T: Target>(
    target: Arc<T>,
    plan: Arc<Plan<T::Op>>,
    p: PhaseParams,
    events: &UnboundedSender<EngineEvent>,
    stop_rx: &mut watch::Receiver<bool>,
) -> PhaseResult {
    let workers = p.workers.clamp(1, p.concurrency.max(1));
    let quota = match p.kind {
        PhaseKind::Run { warmup_s, length: RunLength::Count { ops }, .. } => Some(StartQuota::new(ops, warmup_s > 0.0)),
        _ => None,
    };
    let shared = shared_state(target, plan, workers, events, quota);
    let start = p.start_at.unwrap_or_else(Instant::now);
    let lanes = matches!(p.kind, PhaseKind::Run { rate: Some(_), schedule: None, .. })
        .then(|| Arc::new(Lanes::new((p.shard.0 as u64, p.shard.1 as u64), workers, p.shared_schedule)));
    let mut handles = spawn_workers(&shared, &p, workers, start, lanes.clone());
    let mut sampler = Sampler::new(&shared, &p, workers);
    let meter = load_meter(&p, start, lanes);
    let (mut last, mut tick_no) = (start, 0u64);
    // when the phase was to end: the last tick's time as scheduled, once it ends on its tick
    let mut end_at = None;
    let mut interrupted = *stop_rx.borrow();
    // a stop signal whose sender is gone can no longer ask for a stop
    let mut stop_open = true;
    let mut warned_backlog = false;
    let mut ticker = interval_ticker(&p, start);
    let mut finished_workers = false;
    // a replay ends when its schedule does, a count when it was started and completed: not at
    // the next tick (the rate is counted over it)
    let ends_by_itself = matches!(p.kind, PhaseKind::Run { schedule: Some(_), .. }) || shared.quota.is_some();
    while !interrupted && !finished_workers {
        let tick_at = tokio::select! {
            at = ticker.tick() => at,
            _ = tokio::time::sleep(Duration::from_millis(20)), if ends_by_itself => {
                finished_workers = handles.iter().all(|h| h.is_finished());
                continue;
            }
            r = stop_rx.changed(), if stop_open => {
                match r {
                    Ok(()) => interrupted = *stop_rx.borrow(),
                    Err(_) => stop_open = false,
                }
                // not a tick: no interval closes
                continue;
            }
        };
        let now = Instant::now();
        let backlog = meter.as_ref().and_then(|m| m.backlog(now)).map(|b| shared.within_count(b));
        let sample = sampler.collect((last, now, shared.counted_until(now)), backlog, tick_no, p.first_index + tick_no as u32);
        send_load(meter.as_ref(), &shared, &sample, last, now, events);
        (last, tick_no) = (now, tick_no + 1);
        if !warned_backlog {
            warned_backlog = warn_if_behind(meter.as_ref().and_then(|m| m.rate_at(now)), &p, &sample, events);
        }
        let _ = events.send(EngineEvent::Interval(sample));
        finished_workers = tick_no >= sampler.end_tick || handles.iter().all(|h| h.is_finished());
        if tick_no >= sampler.end_tick {
            end_at = Some(tick_at);
        }
    }

    shared.stop.store(true, Ordering::Relaxed);
    let stopped_at = Instant::now();
    let worker_failed = drain(&mut handles, p.drain_timeout, events).await;
    // the searches still waiting for their recall are judged into the last interval
    if let Some(sink) = shared.target.recall_sink() {
        sink.settle(RECALL_SETTLE).await;
    }
    // what was due by the end and not started once the workers stopped: the last interval's
    // backlog
    let never_started =
        meter.as_ref().and_then(|m| m.never_started(end_at.unwrap_or(stopped_at).min(stopped_at))).map(|n| shared.never_started_within_count(n));
    let stopped_at = shared.counted_until(stopped_at);
    if let Some(sample) = last_interval(&mut sampler, &p, (last, stopped_at), never_started.map(|n| n.count), tick_no) {
        // the last partial interval is the wait for the requests in flight: no level of load,
        // so no IntervalLoad
        let _ = events.send(EngineEvent::Interval(sample));
        tick_no += 1;
    }
    let offered_per_s = match (&meter, &p.kind) {
        (Some(m), PhaseKind::Run { warmup_s, .. }) => m.mean_rate(*warmup_s, warmup_s + sampler.measured_s),
        _ => None,
    };
    let count = shared
        .quota
        .as_ref()
        .map(|q| CountReached { asked: q.count(), completed: CountReached::completed_in(shared.plan.slot_names.iter().zip(&sampler.measured)) });
    PhaseResult {
        count,
        measured: sampler.measured,
        measured_s: sampler.measured_s,
        interrupted,
        next_index: p.first_index + tick_no as u32,
        offered_per_s,
        never_started,
        worker_failed,
    }
}

/// What the workers and the sampler of a phase share.
fn shared_state<T: Target>(
    target: Arc<T>,
    plan: Arc<Plan<T::Op>>,
    workers: usize,
    events: &UnboundedSender<EngineEvent>,
    quota: Option<StartQuota>,
) -> Arc<Shared<T>> {
    let n_ops = plan.slot_names.len();
    Arc::new(Shared {
        target,
        plan,
        stop: AtomicBool::new(false),
        slots: (0..workers).map(|_| Mutex::new(vec![OpStats::default(); n_ops])).collect(),
        backlog: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        started: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        reported: (0..n_ops).map(|_| AtomicU64::new(0)).collect(),
        events: events.clone(),
        quota,
    })
}

/// What a run phase under a rate or a schedule of requests in flight offers, interval by
/// interval; `None` for other phases (a replay counts its own).
fn load_meter(p: &PhaseParams, start: Instant, lanes: Option<Arc<Lanes>>) -> Option<LoadMeter> {
    match &p.kind {
        PhaseKind::Run { rate, levels, schedule: None, .. } if rate.is_some() || levels.is_some() => {
            Some(LoadMeter { rate: rate.clone(), levels: levels.clone(), first: start, shards: p.shard.1.max(1) as f64, lanes })
        }
        _ => None,
    }
}

/// The ticker that closes the intervals: every `p.interval` from `start`, or on the shared
/// wall-clock boundaries of a sharded run; a late tick delays the next ones.
fn interval_ticker(p: &PhaseParams, start: Instant) -> tokio::time::Interval {
    let first_tick = match &p.aligned {
        Some(clock) => aligned_first_tick(clock, start, p.interval),
        None => start + p.interval,
    };
    let mut ticker = tokio::time::interval_at(first_tick, p.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker
}

/// Sends what the interval `sample` (from `from` to `to`) asked for and started, under a rate
/// or a schedule of requests in flight.
fn send_load<T: Target>(
    meter: Option<&LoadMeter>,
    shared: &Shared<T>,
    sample: &IntervalSample,
    from: Instant,
    to: Instant,
    events: &UnboundedSender<EngineEvent>,
) {
    let started: u64 = shared.started.iter().map(|s| s.swap(0, Ordering::Relaxed)).sum();
    let load: Option<IntervalLoad> = meter.and_then(|m| m.interval(sample.index, sample.phase, (from, to), started));
    if let Some(l) = load {
        let _ = events.send(EngineEvent::Load(l));
    }
}

/// The partial interval after the last tick, from `last` to now, when anything happened in
/// it or something was left behind (`backlog`: under a rate, what was never started). A timed
/// phase's measured time ends when it stopped starting operations (`stopped_at`): the wait for
/// those still in flight adds their completions, not time (it would lower the rate). A load
/// phase lasts until its last operation is done.
fn last_interval<T: Target>(
    sampler: &mut Sampler<T>,
    p: &PhaseParams,
    (last, stopped_at): (Instant, Instant),
    backlog: Option<u64>,
    tick_no: u64,
) -> Option<IntervalSample> {
    let now = Instant::now();
    if now <= last {
        return None;
    }
    let counted_until = match p.kind {
        PhaseKind::Run { .. } => stopped_at,
        PhaseKind::Load { .. } => now,
    };
    let sample = sampler.collect((last, now, counted_until), backlog, tick_no.min(sampler.end_tick.saturating_sub(1)), p.first_index + tick_no as u32);
    (sample.backlog > 0 || sample.ops.iter().any(|(_, s)| s.ok + s.error_count() > 0)).then_some(sample)
}

/// Starts the phase's workers, each with its share of the in-flight limit and its pace.
fn spawn_workers<T: Target>(
    shared: &Arc<Shared<T>>,
    p: &PhaseParams,
    workers: usize,
    start: Instant,
    lanes: Option<Arc<Lanes>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let claimed = Arc::new(AtomicU64::new(0));
    (0..workers)
        .map(|id| {
            let cap = p.concurrency / workers + usize::from(id < p.concurrency % workers);
            let pace = match (&p.kind, &lanes) {
                (PhaseKind::Load { count }, _) => Pace::Count { claimed: claimed.clone(), total: *count },
                // a replay: every worker takes the next start of one shared schedule
                (PhaseKind::Run { schedule: Some(s), .. }, _) => Pace::Schedule { starts: s.clone(), next: claimed.clone(), first: start },
                // one global schedule of the run's operations, dealt in lanes (see `lanes::Lanes`)
                (PhaseKind::Run { rate: Some(curve), .. }, Some(lanes)) => Pace::Rated { curve: curve.clone(), first: start, lanes: lanes.clone() },
                (PhaseKind::Run { levels: Some(levels), .. }, _) => Pace::Closed { levels: levels.clone(), first: start, workers },
                (PhaseKind::Run { .. }, _) => Pace::Max,
            };
            let seed = p.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(id as u64 + 1);
            tokio::spawn(run_worker(shared.clone(), id, cap.max(1), pace, seed))
        })
        .collect()
}

/// Warns once that a rate (`rate_per_s` now) is not kept, when more than 5 % of a second's
/// operations (at least 10) are behind schedule; says whether it warned.
fn warn_if_behind(rate_per_s: Option<f64>, p: &PhaseParams, sample: &IntervalSample, events: &UnboundedSender<EngineEvent>) -> bool {
    let Some(r) = rate_per_s else { return false };
    if sample.backlog as f64 <= (r * 0.05).max(10.0) {
        return false;
    }
    let _ = events.send(EngineEvent::Notice(Notice::RateBehind { rate_per_s: r, behind: sample.backlog, concurrency: p.concurrency }));
    true
}

/// Waits up to `timeout` for the workers' in-flight requests; abandons them after it.
async fn drain(handles: &mut [tokio::task::JoinHandle<()>], timeout: Duration, events: &UnboundedSender<EngineEvent>) -> Option<String> {
    let mut panicked = None;
    let all = async {
        for h in handles.iter_mut() {
            if let Err(e) = h.await {
                if e.is_panic() {
                    panicked.get_or_insert_with(|| panic_words(e.into_panic()));
                }
            }
        }
    };
    if tokio::time::timeout(timeout, all).await.is_err() {
        for h in handles.iter() {
            h.abort();
        }
        let _ = events.send(EngineEvent::Notice(Notice::Abandoned));
    }
    panicked
}

/// What a worker's panic said.
fn panic_words(payload: Box<dyn std::any::Any + Send>) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "no message".to_string(),
    }
}

/// Turns the workers' records into interval samples: swaps each worker's stats out (the
/// spare set in), labels the interval's phase, and adds what is measured to the phase's
/// totals.
struct Sampler<'a, T: Target> {
    shared: &'a Shared<T>,
    spare: Vec<Vec<OpStats>>,
    /// Totals of the measured part (load, or run without warm-up), per operation.
    measured: Vec<OpStats>,
    measured_s: f64,
    t0: Instant,
    load: bool,
    /// Ticks of warm-up, and the tick at which a timed phase ends.
    warm_ticks: u64,
    end_tick: u64,
    /// Operations completed in the warm-up (what a count comes after).
    warmup_completed: u64,
}

impl<'a, T: Target> Sampler<'a, T> {
    fn new(shared: &'a Shared<T>, p: &PhaseParams, workers: usize) -> Sampler<'a, T> {
        let n_ops = shared.plan.slot_names.len();
        // what an earlier phase's searches left is not this phase's
        if let Some(sink) = shared.target.recall_sink() {
            sink.take();
        }
        let (warm_ticks, end_tick, load) = match &p.kind {
            PhaseKind::Load { .. } => (0, u64::MAX, true),
            PhaseKind::Run { warmup_s, length, .. } => {
                let iv = p.interval.as_secs_f64();
                let w = (warmup_s / iv).ceil() as u64;
                match length {
                    RunLength::Time { duration_s } => (w, w + ((duration_s / iv).ceil() as u64).max(1), false),
                    // the count ends it: the workers finish
                    RunLength::Count { .. } => (w, u64::MAX, false),
                }
            }
        };
        Sampler {
            shared,
            spare: (0..workers).map(|_| vec![OpStats::default(); n_ops]).collect(),
            measured: vec![OpStats::default(); n_ops],
            measured_s: 0.0,
            t0: p.t0,
            load,
            warm_ticks,
            end_tick,
            warmup_completed: 0,
        }
    }

    fn phase(&self, tick: u64) -> Phase {
        if self.load {
            Phase::Load
        } else if tick < self.warm_ticks {
            Phase::Warmup
        } else {
            Phase::Run
        }
    }

    /// The interval from `since` to `now` (its measured time counted until `counted_until`),
    /// `backlog` behind a rate's schedule at its end (else the workers' own count, a replay's).
    fn collect(&mut self, (since, now, counted_until): (Instant, Instant, Instant), backlog: Option<u64>, tick: u64, index: u32) -> IntervalSample {
        let names = &self.shared.plan.slot_names;
        let mut ops: Vec<OpStats> = vec![OpStats::default(); names.len()];
        for (w, slot) in self.shared.slots.iter().enumerate() {
            {
                let mut g = slot.lock().unwrap();
                std::mem::swap(&mut *g, &mut self.spare[w]);
            }
            for (i, s) in self.spare[w].iter_mut().enumerate() {
                ops[i].merge(s);
                s.reset();
            }
        }
        // the recall judged since the last interval, off the workers' path
        if let Some(sink) = self.shared.target.recall_sink() {
            for (op, c) in ops.iter_mut().zip(sink.take()).filter(|(_, c)| !c.is_empty()) {
                op.recall.get_or_insert_default().merge(&c);
            }
        }
        let backlog = backlog.unwrap_or_else(|| self.shared.backlog.iter().map(|b| b.load(Ordering::Relaxed)).sum());
        let phase = self.phase(tick);
        let sample = IntervalSample {
            index,
            phase,
            start_ms: (since - self.t0).as_millis() as u64,
            end_ms: (now - self.t0).as_millis() as u64,
            ops: names.iter().cloned().zip(ops).collect(),
            backlog,
        };
        if phase != Phase::Warmup {
            for (i, (_, s)) in sample.ops.iter().enumerate() {
                self.measured[i].merge(s);
            }
            self.measured_s += counted_until.saturating_duration_since(since).as_secs_f64();
        } else if let Some(q) = &self.shared.quota {
            self.warmup_completed += CountReached::completed_in(sample.ops.iter().map(|(n, s)| (n, s)));
            // the warm-up's last interval: the count starts from what it completed
            if tick + 1 == self.warm_ticks {
                q.open(self.warmup_completed);
            }
        }
        sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::target::{Completion, Prepared, SetupRole, TargetInfo};
    use crate::engine::EngineError;
    use crate::gen::GeneratorSet;
    use crate::stats::ErrorKind;
    use crate::workload::Workload;
    use rand::rngs::SmallRng;

    /// A target whose every operation panics: a fault of casslab's own, as a worker meets it.
    struct Panics(TargetInfo);

    impl Target for Panics {
        type Op = ();
        type Error = String;
        fn info(&self) -> &TargetInfo {
            &self.0
        }
        async fn prepare(&self, _: &Workload, _: SetupRole) -> Result<Prepared, EngineError> {
            Ok(Prepared::default())
        }
        async fn plan(&self, _: &Workload, _: &[(String, f64)], _: Arc<GeneratorSet>) -> Result<Plan<()>, EngineError> {
            Err(EngineError::NoCoordination)
        }
        async fn loaded(&self, _: &str) -> Result<Option<String>, EngineError> {
            Ok(None)
        }
        async fn record_load(&self, _: &str, _: &str) -> Result<(), EngineError> {
            Ok(())
        }
        async fn truncate_for_reload(&self, _: &Workload) -> Result<(), EngineError> {
            Ok(())
        }
        fn start<'a>(
            &'a self,
            _: &'a (),
            _: &GeneratorSet,
            _: &mut SmallRng,
            _: &'a Mutex<Vec<OpStats>>,
        ) -> impl std::future::Future<Output = Result<Completion, String>> + Send + use<'a> {
            async { panic!("index out of bounds") }
        }
        fn classify(_: &String) -> ErrorKind {
            ErrorKind::Other
        }
    }

    #[tokio::test]
    async fn a_phase_whose_workers_panic_is_a_failure_not_a_completion() {
        let gens = Arc::new(GeneratorSet::build(&Default::default()).unwrap());
        let plan = Arc::new(Plan::new(vec![()], vec!["insert".into()], &[1.0], gens));
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let (_stop_tx, mut stop) = watch::channel(false);
        let p = PhaseParams {
            kind: PhaseKind::Load { count: 100 },
            workers: 2,
            concurrency: 4,
            interval: Duration::from_millis(100),
            seed: 1,
            drain_timeout: Duration::from_secs(5),
            t0: Instant::now(),
            first_index: 0,
            start_at: None,
            aligned: None,
            shard: (0, 1),
            shared_schedule: false,
        };
        let r = run_phase(Arc::new(Panics(TargetInfo::default())), plan, p, &tx, &mut stop).await;
        assert_eq!(r.worker_failed.as_deref(), Some("index out of bounds"));
        let e = r.failure(Phase::Load).unwrap_err().to_string();
        assert!(e.contains("a load worker failed in the load phase (index out of bounds)") && e.contains("marked failed"), "{e}");
    }
}
