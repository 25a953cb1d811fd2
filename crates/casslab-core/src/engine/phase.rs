//! Running one phase: spawning the workers, sampling their records once per interval into
//! [`IntervalSample`]s (sent to the caller as events as soon as each interval closes), deciding
//! when the phase ends (count done, duration reached, or the caller asked to stop), and
//! draining in-flight requests so the last partial interval is kept too.

use super::clock::RunClock;
use super::plan::Plan;
use super::start::aligned_first_tick;
use super::target::Target;
use super::worker::{run_worker, Pace, Shared};
use super::EngineEvent;
use crate::notice::Notice;
use crate::stats::{IntervalSample, OpStats, Phase};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc::UnboundedSender, watch};
use tokio::time::Instant;

pub(crate) enum PhaseKind {
    Load { count: u64 },
    Run { warmup_s: f64, duration_s: f64, rate_per_s: Option<f64>, schedule: Option<Arc<[(Duration, usize)]>> },
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
}

pub(crate) struct PhaseResult {
    /// Totals of the measured part (load, or run without warm-up), per operation.
    pub measured: Vec<OpStats>,
    pub measured_s: f64,
    pub interrupted: bool,
    /// Index the next phase's first interval gets.
    pub next_index: u32,
}

pub(crate) async fn run_phase<T: Target>(
    target: Arc<T>,
    plan: Arc<Plan<T::Op>>,
    p: PhaseParams,
    events: &UnboundedSender<EngineEvent>,
    stop_rx: &mut watch::Receiver<bool>,
) -> PhaseResult {
    let n_ops = plan.slot_names.len();
    let workers = p.workers.clamp(1, p.concurrency.max(1));
    let shared = Arc::new(Shared {
        target,
        plan: plan.clone(),
        stop: AtomicBool::new(false),
        slots: (0..workers).map(|_| Mutex::new(vec![OpStats::default(); n_ops])).collect(),
        backlog: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        reported: (0..n_ops).map(|_| AtomicU64::new(0)).collect(),
        events: events.clone(),
    });
    let start = p.start_at.unwrap_or_else(Instant::now);
    let mut handles = spawn_workers(&shared, &p, workers, start);
    let mut sampler = Sampler::new(&shared, &p, workers);
    let (mut last, mut tick_no) = (start, 0u64);
    let mut interrupted = *stop_rx.borrow();
    // a stop signal whose sender is gone can no longer ask for a stop
    let mut stop_open = true;
    let mut warned_backlog = false;
    let first_tick = match &p.aligned {
        Some(clock) => aligned_first_tick(clock, start, p.interval),
        None => start + p.interval,
    };
    let mut ticker = tokio::time::interval_at(first_tick, p.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut finished_workers = false;
    // a replay ends when its schedule does, not at the next tick (its rate is counted over it)
    let replaying = matches!(p.kind, PhaseKind::Run { schedule: Some(_), .. });
    while !interrupted && !finished_workers {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = tokio::time::sleep(Duration::from_millis(20)), if replaying => {
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
        }
        let now = Instant::now();
        let sample = sampler.collect(last, now, now, tick_no, p.first_index + tick_no as u32);
        (last, tick_no) = (now, tick_no + 1);
        if !warned_backlog {
            warned_backlog = warn_if_behind(&p, &sample, events);
        }
        let _ = events.send(EngineEvent::Interval(sample));
        finished_workers = tick_no >= sampler.end_tick || handles.iter().all(|h| h.is_finished());
    }

    shared.stop.store(true, Ordering::Relaxed);
    let stopped_at = Instant::now();
    drain(&mut handles, p.drain_timeout, events).await;
    tick_no += last_interval(&mut sampler, &p, (last, stopped_at), tick_no, events);
    PhaseResult { measured: sampler.measured, measured_s: sampler.measured_s, interrupted, next_index: p.first_index + tick_no as u32 }
}

/// The partial interval after the last tick, from `last` to now, sent when anything happened
/// in it; how many intervals that adds (0 or 1). A timed phase's measured time ends when it
/// stopped starting operations (`stopped_at`): the wait for those still in flight adds their
/// completions, not time (it would lower the rate). A load phase lasts until its last
/// operation is done.
fn last_interval<T: Target>(
    sampler: &mut Sampler<T>,
    p: &PhaseParams,
    (last, stopped_at): (Instant, Instant),
    tick_no: u64,
    events: &UnboundedSender<EngineEvent>,
) -> u64 {
    let now = Instant::now();
    if now <= last {
        return 0;
    }
    let counted_until = match p.kind {
        PhaseKind::Run { .. } => stopped_at,
        PhaseKind::Load { .. } => now,
    };
    let sample = sampler.collect(last, now, counted_until, tick_no.min(sampler.end_tick.saturating_sub(1)), p.first_index + tick_no as u32);
    if !sample.ops.iter().any(|(_, s)| s.ok + s.error_count() > 0) {
        return 0;
    }
    let _ = events.send(EngineEvent::Interval(sample));
    1
}

/// Starts the phase's workers, each with its share of the in-flight limit and its pace.
fn spawn_workers<T: Target>(shared: &Arc<Shared<T>>, p: &PhaseParams, workers: usize, start: Instant) -> Vec<tokio::task::JoinHandle<()>> {
    let claimed = Arc::new(AtomicU64::new(0));
    (0..workers)
        .map(|id| {
            let cap = p.concurrency / workers + usize::from(id < p.concurrency % workers);
            let pace = match &p.kind {
                PhaseKind::Load { count } => Pace::Count { claimed: claimed.clone(), total: *count },
                // a replay: every worker takes the next start of one shared schedule
                PhaseKind::Run { schedule: Some(s), .. } => Pace::Schedule { starts: s.clone(), next: claimed.clone(), first: start },
                PhaseKind::Run { rate_per_s: Some(r), .. } => {
                    // One global schedule, a start every 1/r: shard i of n takes the slots
                    // i, i + n, i + 2n, ...; its worker w of W takes every W-th of those.
                    let (shard, shards) = (p.shard.0 as f64, p.shard.1.max(1) as f64);
                    let slot = Duration::from_secs_f64(1.0 / r.max(1e-9));
                    let period = slot.mul_f64(workers as f64 * shards);
                    Pace::Rate { period, first: start + slot.mul_f64(shard + shards * id as f64) }
                }
                PhaseKind::Run { .. } => Pace::Max,
            };
            let seed = p.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(id as u64 + 1);
            tokio::spawn(run_worker(shared.clone(), id, cap.max(1), pace, seed))
        })
        .collect()
}

/// Warns once that a fixed rate is not kept, when more than 5 % of a second's operations (at
/// least 10) are behind schedule; says whether it warned.
fn warn_if_behind(p: &PhaseParams, sample: &IntervalSample, events: &UnboundedSender<EngineEvent>) -> bool {
    let PhaseKind::Run { rate_per_s: Some(r), .. } = p.kind else { return false };
    if sample.backlog as f64 <= (r * 0.05).max(10.0) {
        return false;
    }
    let _ = events.send(EngineEvent::Notice(Notice::RateBehind { rate_per_s: r, behind: sample.backlog, concurrency: p.concurrency }));
    true
}

/// Waits up to `timeout` for the workers' in-flight requests; abandons them after it.
async fn drain(handles: &mut [tokio::task::JoinHandle<()>], timeout: Duration, events: &UnboundedSender<EngineEvent>) {
    let all = async {
        for h in handles.iter_mut() {
            let _ = h.await;
        }
    };
    if tokio::time::timeout(timeout, all).await.is_err() {
        for h in handles.iter() {
            h.abort();
        }
        let _ = events.send(EngineEvent::Notice(Notice::Abandoned));
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
}

impl<'a, T: Target> Sampler<'a, T> {
    fn new(shared: &'a Shared<T>, p: &PhaseParams, workers: usize) -> Sampler<'a, T> {
        let n_ops = shared.plan.slot_names.len();
        let (warm_ticks, end_tick, load) = match &p.kind {
            PhaseKind::Load { .. } => (0, u64::MAX, true),
            PhaseKind::Run { warmup_s, duration_s, .. } => {
                let iv = p.interval.as_secs_f64();
                let w = (warmup_s / iv).ceil() as u64;
                (w, w + ((duration_s / iv).ceil() as u64).max(1), false)
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

    /// The interval from `since` to `now` (its measured time counted until `counted_until`).
    fn collect(&mut self, since: Instant, now: Instant, counted_until: Instant, tick: u64, index: u32) -> IntervalSample {
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
        let backlog: u64 = self.shared.backlog.iter().map(|b| b.load(Ordering::Relaxed)).sum();
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
        }
        sample
    }
}
