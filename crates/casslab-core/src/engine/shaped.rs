//! Loads that follow a curve. Open loop ([`run_rated`]): operation `k` of the run is intended
//! at the time the rate's running count goes past `k` (`load_shape::Curve::time_of`), whatever
//! the rate does — a fixed level, a ramp, steps, a sine, spikes, or a change made during the
//! run (`rate 800`, `ramp 800 over 10s`: [`follow_changes`] publishes the changed curve and
//! every worker wakes to it); latency counts from that intended time. The operations are dealt
//! in [`Lanes`]: one per worker (each follows its own slice of the schedule) or one that every
//! worker takes the next due operation from (`--shared-schedule`); the starts due but not made
//! are the backlog, which the phase reads from the lanes, also at the end (the operations
//! never started). Closed loop ([`run_closed`]): the requests in flight follow a schedule of
//! levels, a rise started at once. [`LoadMeter`] says what each interval asked for and what
//! was started.

use super::lanes::Lanes;
use super::plan::Plan;
use super::target::Target;
use super::worker::{record, start, Shared, EARLY, MAX_NAP};
use crate::load_shape::Curve;
use crate::stats::{IntervalLoad, NeverStarted, Phase, LATE_NS};
use futures::stream::{FuturesUnordered, StreamExt};
use rand::rngs::SmallRng;
use rand::Rng;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// A change of the rate asked for during a run (a `rate` or `ramp` event): from the level at
/// the time it arrives, a straight line to `to_per_s` over `over_s` (0: at once), then held.
#[derive(Debug, Clone, PartialEq)]
pub struct RateChange {
    pub to_per_s: f64,
    pub over_s: f64,
    /// The stage it starts, as the run's stages name it (`ramp 800 over 10s (event)`).
    pub label: String,
}

/// Seconds since `first` (0 before it).
fn since(first: Instant, at: Instant) -> f64 {
    at.saturating_duration_since(first).as_secs_f64()
}

/// Runs one worker's part of an open-loop schedule: the operations of its lane, each started
/// at `first` + its time on the curve, then waits for those in flight.
pub(super) async fn run_rated<T: Target>(
    sh: &Shared<T>,
    id: usize,
    cap: usize,
    mut curves: watch::Receiver<Arc<Curve>>,
    first: Instant,
    lanes: &Lanes,
    rng: &mut SmallRng,
) {
    let (target, plan): (&T, &Plan<T::Op>) = (&sh.target, &sh.plan);
    let (lane, shared) = (lanes.of(id), lanes.shared());
    let mut inflight = FuturesUnordered::new();
    let mut curve = curves.borrow_and_update().clone();
    // a time beyond what a clock holds (a level so low the operation is never due) is never
    let due = |c: &Curve, j: u64| c.time_of(lane.op(j)).and_then(|t| Duration::try_from_secs_f64(t).ok()).and_then(|d| first.checked_add(d));
    // the lane's next operation as last read, and when it is due
    let mut j = lane.next.load(Ordering::Relaxed);
    let mut next_t = due(&curve, j);
    let sleep = tokio::time::sleep_until(first);
    tokio::pin!(sleep);
    // Starts happen when the timer fires (a batch per tick, which the driver sends in few
    // writes); a wake-up for a completion starts only operations already due.
    let mut timer_fired = true;
    // the phase's count was started: only the operations in flight are left
    let mut exhausted = false;
    loop {
        if exhausted || sh.stop.load(Ordering::Relaxed) {
            match inflight.next().await {
                Some(d) => record(sh, id, d),
                None => break,
            }
            continue;
        }
        if curves.has_changed().unwrap_or(false) {
            curve = curves.borrow_and_update().clone();
            next_t = due(&curve, j);
        }
        if shared {
            let now_j = lane.next.load(Ordering::Relaxed);
            if now_j != j {
                (j, next_t) = (now_j, due(&curve, now_j));
            }
        }
        let now = Instant::now();
        let horizon = if timer_fired { now + EARLY } else { now };
        while let Some(t) = next_t.filter(|t| *t <= horizon && inflight.len() < cap) {
            // a shared lane's operation is this worker's only if no other took it first
            let taken = match shared {
                true => lane.next.compare_exchange(j, j + 1, Ordering::Relaxed, Ordering::Relaxed).map_err(|now_j| j = now_j).is_ok(),
                false => {
                    lane.next.store(j + 1, Ordering::Relaxed);
                    true
                }
            };
            if taken && !sh.may_start() {
                exhausted = true;
                break;
            }
            if taken {
                let op = plan.pick(rng.gen::<f64>());
                inflight.push(start(target, plan, &sh.slots[id], &sh.started[id], op, Some(t), rng));
                j += 1;
            }
            next_t = due(&curve, j);
        }
        timer_fired = false;
        if inflight.len() < cap {
            let wake = next_t.map_or(now + MAX_NAP, |t| t.checked_sub(EARLY).unwrap_or(t)).min(now + MAX_NAP);
            if wake != sleep.deadline() {
                sleep.as_mut().reset(wake);
            }
            tokio::select! {
                biased;
                _ = &mut sleep => timer_fired = true,
                // a change of rate may make operations due at once: start them now, not at the
                // next wake-up the old rate set
                Ok(()) = curves.changed() => {
                    curve = curves.borrow_and_update().clone();
                    next_t = due(&curve, j);
                    timer_fired = true;
                }
                Some(d) = inflight.next(), if !inflight.is_empty() => record(sh, id, d),
            }
        } else if let Some(d) = inflight.next().await {
            record(sh, id, d);
        }
    }
}

/// This worker's share of `level` requests in flight among `workers`.
fn share(level: usize, id: usize, workers: usize) -> usize {
    level / workers + usize::from(id < level % workers)
}

/// Runs one worker closed loop, its requests in flight following its share of `levels`
/// (rounded; a level of 0 runs nothing), then waits for those in flight. A rise starts its
/// requests when the level changes, not at the next completion.
pub(super) async fn run_closed<T: Target>(sh: &Shared<T>, id: usize, levels: &Curve, first: Instant, workers: usize, rng: &mut SmallRng) {
    let (target, plan): (&T, &Plan<T::Op>) = (&sh.target, &sh.plan);
    let mut inflight = FuturesUnordered::new();
    let nap = tokio::time::sleep_until(first);
    tokio::pin!(nap);
    // the phase's count was started: only the operations in flight are left
    let mut exhausted = false;
    loop {
        let stopped = exhausted || sh.stop.load(Ordering::Relaxed);
        let now = Instant::now();
        let t_s = since(first, now);
        let cap = share(levels.level_at(t_s).round().max(0.0) as usize, id, workers.max(1));
        while !stopped && inflight.len() < cap {
            if !sh.may_start() {
                exhausted = true;
                break;
            }
            let op = plan.pick(rng.gen::<f64>());
            inflight.push(start(target, plan, &sh.slots[id], &sh.started[id], op, None, rng));
        }
        if (stopped || exhausted) && inflight.is_empty() {
            break;
        }
        // until a completion, the level's next change, or the next look at the stop flag
        let change = levels.next_change_after(t_s).map(|c| first + Duration::from_secs_f64(c));
        let wake = change.map_or(now + MAX_NAP, |c| c.min(now + MAX_NAP)).max(now);
        if wake != nap.deadline() {
            nap.as_mut().reset(wake);
        }
        tokio::select! {
            biased;
            Some(d) = inflight.next(), if !inflight.is_empty() => record(sh, id, d),
            _ = &mut nap => {}
        }
    }
}

/// Applies the rate changes that arrive during the phase: each one ends the curve where it
/// is (`first` is the curve's time 0) and publishes the changed curve to the workers and
/// the meter.
pub(super) async fn follow_changes(mut changes: mpsc::UnboundedReceiver<RateChange>, curves: watch::Sender<Arc<Curve>>, first: Instant) {
    while let Some(c) = changes.recv().await {
        let at_s = since(first, Instant::now());
        let next = curves.borrow().changed_at(at_s, c.to_per_s, c.over_s, c.label);
        if curves.send(Arc::new(next)).is_err() {
            break;
        }
    }
}

/// What each interval of a shaped phase asked for: reads the curve as it is now (a change
/// keeps the past as it was) and the workers' start counters; under a rate, what is behind
/// the schedule (from its lanes).
pub(super) struct LoadMeter {
    pub rate: Option<watch::Receiver<Arc<Curve>>>,
    pub levels: Option<Arc<Curve>>,
    /// When the curves' time 0 is: the start of the phase.
    pub first: Instant,
    /// Loaders sharing the rate (this one offers its share).
    pub shards: f64,
    /// Where the workers are in the rate's schedule.
    pub lanes: Option<Arc<Lanes>>,
}

impl LoadMeter {
    /// The rate intended at `at` (this loader's share), under a rate.
    pub fn rate_at(&self, at: Instant) -> Option<f64> {
        self.rate.as_ref().map(|c| c.borrow().level_at(since(self.first, at)) / self.shards)
    }

    /// The interval from `from` to `to` of phase `phase`, in which `started` operations were
    /// started.
    pub fn interval(&self, index: u32, phase: Phase, (from, to): (Instant, Instant), started: u64) -> Option<IntervalLoad> {
        let (a, b) = (since(self.first, from), since(self.first, to));
        let mid = (a + b) / 2.0;
        let rate = self.rate.as_ref().map(|c| c.borrow().clone());
        let stages_of = rate.as_deref().or(self.levels.as_deref())?;
        let stage = stages_of.stage_at(mid);
        let course = match stages_of.course(a, b) {
            crate::load_shape::Course::Held(level) if rate.is_some() => crate::load_shape::Course::Held(level / self.shards),
            c => c,
        };
        Some(IntervalLoad {
            index,
            offered_per_s: rate.as_ref().map(|c| c.mean_level(a, b) / self.shards),
            started,
            concurrency: self.levels.as_ref().map(|l| l.level_at(mid).round().max(0.0) as u32),
            stage: stage as u32,
            stage_label: stages_of.stages().get(stage).map(|s| s.label.clone()).unwrap_or_default(),
            phase,
            course: Some(course),
        })
    }

    /// The mean rate intended from `a_s` to `b_s` seconds into the phase (this loader's share).
    pub fn mean_rate(&self, a_s: f64, b_s: f64) -> Option<f64> {
        self.rate.as_ref().map(|c| c.borrow().mean_level(a_s, b_s) / self.shards)
    }

    /// Operations due by `at` and not started, under a rate.
    pub fn backlog(&self, at: Instant) -> Option<u64> {
        let (rate, lanes) = (self.rate.as_ref()?, self.lanes.as_ref()?);
        Some(lanes.behind(&rate.borrow(), since(self.first, at)).0)
    }

    /// The operations due by `end` (the phase's intended end) and never started, once the
    /// workers stopped, under a rate.
    pub fn never_started(&self, end: Instant) -> Option<NeverStarted> {
        let (rate, lanes) = (self.rate.as_ref()?, self.lanes.as_ref()?);
        let curve = rate.borrow().clone();
        let end_s = since(self.first, end);
        let (count, oldest_s) = lanes.behind(&curve, end_s);
        let (late, _) = lanes.behind(&curve, end_s - LATE_NS as f64 / 1e9);
        let oldest_lag_ms = oldest_s.map_or(0.0, |o| ((end_s - o) * 1000.0).max(0.0));
        Some(NeverStarted { count, late, oldest_lag_ms })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_a_level_add_up_to_it() {
        for level in [1, 7, 64, 129] {
            assert_eq!((0..4).map(|id| share(level, id, 4)).sum::<usize>(), level);
        }
        assert_eq!(share(1, 1, 2), 0, "a level below the workers leaves some without a request");
    }

    #[tokio::test]
    async fn a_change_reaches_the_curve_at_its_time() {
        let first = Instant::now() - Duration::from_secs(10);
        let (tx, rx) = watch::channel(Arc::new(Curve::fixed(100.0)));
        let (changes, inbox) = mpsc::unbounded_channel();
        let task = tokio::spawn(follow_changes(inbox, tx, first));
        changes.send(RateChange { to_per_s: 400.0, over_s: 0.0, label: "rate 400 (event)".into() }).unwrap();
        drop(changes);
        task.await.unwrap();
        let c = rx.borrow().clone();
        assert_eq!(c.level_at(5.0), 100.0, "the past is kept");
        assert_eq!(c.level_at(11.0), 400.0);
        assert_eq!(c.stages().last().map(|s| s.label.as_str()), Some("rate 400 (event)"));
        let meter = LoadMeter { rate: Some(rx), levels: None, first, shards: 2.0, lanes: None };
        let iv = meter.interval(3, Phase::Run, (first + Duration::from_secs(1), first + Duration::from_secs(2)), 90).unwrap();
        assert_eq!((iv.offered_per_s, iv.started, iv.stage, iv.concurrency), (Some(50.0), 90, 0, None));
        assert_eq!(iv.course, Some(crate::load_shape::Course::Held(50.0)), "this loader's share of the level held");
        let across = meter.interval(4, Phase::Run, (first + Duration::from_millis(9_500), first + Duration::from_millis(10_500)), 0).unwrap();
        assert_eq!(across.course, Some(crate::load_shape::Course::Between), "half at 100/s, half at 400/s");
    }
}
