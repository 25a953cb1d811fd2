//! Replaying a schedule (a workload's `run.replay`, made from captured traffic): each operation
//! starts at its own intended time, open loop, and its latency is measured from that time, so a
//! cluster (or a client) that falls behind shows up as latency, as under a fixed rate. The
//! workers of the phase share the schedule: each takes the next start when it is due. The
//! phase ends when the schedule is done (or its duration is over).

use super::plan::Plan;
use super::target::Target;
use super::worker::{record, start, Shared, EARLY, MAX_NAP};
use crate::workload::Replay;
use futures::stream::{FuturesUnordered, StreamExt};
use rand::rngs::SmallRng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// The schedule as (offset from the start, index of the operation in the plan).
pub(super) fn schedule(rp: &Replay, slot_names: &[String]) -> std::sync::Arc<[(Duration, usize)]> {
    rp.at_ms
        .iter()
        .zip(&rp.ops)
        .filter_map(|(t, op)| slot_names.iter().position(|n| n == op).map(|i| (Duration::from_secs_f64(t.max(0.0) / 1000.0), i)))
        .collect()
}

/// The schedule's mean rate (starts per second over its span); `None` when it has no span.
pub(super) fn mean_rate(starts: &[(Duration, usize)]) -> Option<f64> {
    let span_s = starts.last()?.0.saturating_sub(starts.first()?.0).as_secs_f64();
    (span_s > 0.0).then(|| (starts.len() - 1).max(1) as f64 / span_s)
}

/// Runs one worker's share of the schedule, then waits for its operations in flight.
pub(super) async fn run_schedule<T: Target>(
    sh: &Shared<T>,
    id: usize,
    cap: usize,
    starts: &[(Duration, usize)],
    next: &AtomicU64,
    first: Instant,
    rng: &mut SmallRng,
) {
    let target = &*sh.target;
    let plan: &Plan<T::Op> = &sh.plan;
    let mut inflight = FuturesUnordered::new();
    let sleep = tokio::time::sleep_until(first);
    tokio::pin!(sleep);
    let mut timer_fired = true;
    // the phase's count was started: only the operations in flight are left
    let mut exhausted = false;
    loop {
        let stopped = exhausted || sh.stop.load(Ordering::Relaxed);
        let i = next.load(Ordering::Relaxed) as usize;
        if stopped || i >= starts.len() {
            match inflight.next().await {
                Some(d) => record(sh, id, d),
                None => break,
            }
            continue;
        }
        let now = Instant::now();
        let horizon = if timer_fired { now + EARLY } else { now };
        timer_fired = false;
        // take every start that is due, as long as there is room
        while inflight.len() < cap {
            let i = next.load(Ordering::Relaxed) as usize;
            let Some((at, op)) = starts.get(i) else { break };
            let due = first + *at;
            if due > horizon {
                break;
            }
            if next.compare_exchange(i as u64, i as u64 + 1, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                if !sh.may_start() {
                    exhausted = true;
                    sh.backlog[id].store(0, Ordering::Relaxed);
                    break;
                }
                inflight.push(start(target, plan, &sh.slots[id], &sh.started[id], *op, Some(due), rng));
            }
        }
        // the starts that are due and not taken yet
        let i = next.load(Ordering::Relaxed) as usize;
        let behind = starts.get(i..).map_or(0, |rest| rest.partition_point(|(at, _)| first + *at <= now)) as u64;
        sh.backlog[id].store(behind, Ordering::Relaxed);
        if inflight.len() < cap {
            let due = starts.get(i).map_or(now + MAX_NAP, |(at, _)| first + *at);
            let wake = due.checked_sub(EARLY).unwrap_or(due).max(now).min(now + MAX_NAP);
            if wake != sleep.deadline() {
                sleep.as_mut().reset(wake);
            }
            tokio::select! {
                biased;
                _ = &mut sleep => timer_fired = true,
                Some(d) = inflight.next(), if !inflight.is_empty() => record(sh, id, d),
            }
        } else if let Some(d) = inflight.next().await {
            record(sh, id, d);
        }
    }
    sh.backlog[id].store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_maps_operations_to_the_plan() {
        let rp = Replay { at_ms: vec![0.0, 1.5, 1000.0], ops: vec!["b".into(), "a".into(), "b".into()] };
        let s = schedule(&rp, &["a".to_string(), "b".to_string(), "a.request".to_string()]);
        assert_eq!(&*s, &[(Duration::ZERO, 1), (Duration::from_micros(1500), 0), (Duration::from_secs(1), 1)]);
        assert_eq!(mean_rate(&s), Some(2.0), "two starts after the first, in one second");
        assert_eq!(mean_rate(&s[..1]), None);
    }
}
