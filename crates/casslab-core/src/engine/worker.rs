//! The hot loop's pieces (the loops themselves are `paced`, `shaped` and `replay`'s). A few
//! workers (one per runtime thread) each keep up to their share of the
//! in-flight limit going with `FuturesUnordered`, draw values from the generators, and record
//! every completion into their own per-operation stats (a lock nobody else takes except the
//! sampler once per interval). Under a rate (fixed or a schedule, see `shaped`), each worker
//! follows its own schedule of intended start times and latency is measured from them, so a
//! stalled cluster or a saturated client shows up as latency instead of silently lowering the
//! request rate.

use super::plan::Plan;
use super::target::{Completion, Target};
use super::EngineEvent;
use crate::stats::{NeverStarted, OpStats};
use rand::rngs::SmallRng;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

/// How long before its intended time an operation may be started. The tokio timer fires on
/// millisecond ticks, at or after the deadline asked for, and a parked thread takes a while to
/// wake; waking two ticks early means operations are started in the two milliseconds before
/// they are due rather than up to a millisecond or more late (measured: with 1.1 ms, latency
/// from the intended start read ~0.15 ms above service time at p50 on an idle local node; with
/// 2 ms, the two agree). An operation started early is measured from its actual start (so its
/// latency equals its service time); only a start later than intended — a client that falls
/// behind — adds to the latency measured from the intended start.
pub(super) const EARLY: Duration = Duration::from_micros(2_000);
/// Longest sleep between checks of the stop flag.
pub(super) const MAX_NAP: Duration = Duration::from_millis(50);

/// How a worker decides when to start the next operation.
#[derive(Clone)]
pub(crate) enum Pace {
    /// Keep the in-flight limit full.
    Max,
    /// Open loop: operation `k` of the run at `first` + the curve's time of `k` (the curve
    /// may change during the run); this worker takes the operations of its lane of `lanes`.
    Rated { curve: tokio::sync::watch::Receiver<Arc<crate::load_shape::Curve>>, first: Instant, lanes: Arc<super::lanes::Lanes> },
    /// Closed loop, the requests in flight following the levels of a curve (its share of
    /// them among `workers`).
    Closed { levels: Arc<crate::load_shape::Curve>, first: Instant, workers: usize },
    /// Keep the in-flight limit full until `total` operations were claimed from `claimed`.
    Count { claimed: Arc<AtomicU64>, total: u64 },
    /// A replay: start `starts[i].1` at `first + starts[i].0`, the next `i` taken from `next`.
    Schedule { starts: Arc<[(Duration, usize)]>, next: Arc<AtomicU64>, first: Instant },
}

/// What the workers of a phase share.
pub(crate) struct Shared<T: Target> {
    pub target: Arc<T>,
    pub plan: Arc<Plan<T::Op>>,
    pub stop: AtomicBool,
    /// Per worker, per operation: what completed since the sampler last looked.
    pub slots: Vec<Mutex<Vec<OpStats>>>,
    /// Per worker: operations due under a replay's schedule but not started yet (a rate's
    /// backlog is read from its lanes).
    pub backlog: Vec<AtomicU64>,
    /// Per worker: operations started since the sampler last looked.
    pub started: Vec<AtomicU64>,
    /// Per operation: error kinds already reported (bit per kind).
    pub reported: Vec<AtomicU64>,
    pub events: UnboundedSender<EngineEvent>,
    /// A run phase that ends after a count of operations: the starts left.
    pub quota: Option<super::quota::StartQuota>,
}

impl<T: Target> Shared<T> {
    /// Takes a start from the phase's count, if it has one: false once the count was started
    /// (the worker then only waits for what it has in flight).
    pub fn may_start(&self) -> bool {
        self.quota.as_ref().is_none_or(|q| q.claim())
    }

    /// Until when a phase's time up to `now` counts as measured: under a count, no later than
    /// its last start (the wait for the operations in flight adds their completions, not time).
    pub fn counted_until(&self, now: Instant) -> Instant {
        self.quota.as_ref().and_then(|q| q.exhausted_at()).map_or(now, |last| last.min(now))
    }

    /// A backlog of `behind` operations due and not started, under a count: no more than the
    /// starts it has left (after the count, nothing is due).
    pub fn within_count(&self, behind: u64) -> u64 {
        self.quota.as_ref().map_or(behind, |q| behind.min(q.remaining()))
    }

    /// The operations due by the end and never started, under a count: no more than the starts
    /// it had left.
    pub fn never_started_within_count(&self, n: NeverStarted) -> NeverStarted {
        let count = self.within_count(n.count);
        match count {
            0 => NeverStarted::default(),
            _ => NeverStarted { count, late: n.late.min(count), oldest_lag_ms: n.oldest_lag_ms },
        }
    }
}

type Done<E> = (usize, Instant, Instant, Result<Completion, E>);

pub(super) fn start<'a, T: Target>(
    target: &'a T,
    plan: &'a Plan<T::Op>,
    stats: &'a Mutex<Vec<OpStats>>,
    started: &AtomicU64,
    op_idx: usize,
    intended: Option<Instant>,
    rng: &mut SmallRng,
) -> impl std::future::Future<Output = Done<T::Error>> + 'a {
    let request = target.start(&plan.ops[op_idx], &plan.gens, rng, stats);
    started.fetch_add(1, Ordering::Relaxed);
    let sent = Instant::now();
    let intended = intended.map_or(sent, |t| t.min(sent));
    async move {
        let r = request.await;
        // A request that ends without ever waiting (a target that answers at once, or a driver
        // whose connections to a dead node fail on the spot) must still let the worker yield
        // now and then: without it the worker never gave the timers that end the phase a turn,
        // and a run whose node died went on spinning past its duration.
        tokio::task::coop::consume_budget().await;
        (op_idx, intended, sent, r)
    }
}

pub(super) fn record<T: Target>(sh: &Shared<T>, id: usize, done: Done<T::Error>) {
    let (op_idx, intended, sent, res) = done;
    let now = Instant::now();
    let lag_ns = (sent - intended).as_nanos() as u64;
    match res {
        Ok(completion) => {
            let mut g = sh.slots[id].lock().unwrap();
            let (intended_ns, service_ns) = ((now - intended).as_nanos() as u64, (now - sent).as_nanos() as u64);
            g[op_idx].record_ok(intended_ns, service_ns);
            g[op_idx].record_start_lag(lag_ns);
            if completion.empty {
                g[op_idx].empty_reads += 1;
            }
            g[op_idx].rows_read += completion.rows;
            if let Some(slot) = completion.also {
                g[slot].record_ok(intended_ns, service_ns);
            }
        }
        Err(e) => {
            let kind = T::classify(&e);
            {
                let mut g = sh.slots[id].lock().unwrap();
                g[op_idx].record_error(kind);
                g[op_idx].record_start_lag(lag_ns);
            }
            let bit = 1u64 << (kind as u32);
            if sh.reported[op_idx].fetch_or(bit, Ordering::Relaxed) & bit == 0 {
                let (op, kind, message) = (sh.plan.slot_names[op_idx].clone(), kind.as_str(), e.to_string());
                let _ = sh.events.send(EngineEvent::Notice(crate::notice::Notice::FirstError { op, kind, message }));
            }
        }
    }
}
