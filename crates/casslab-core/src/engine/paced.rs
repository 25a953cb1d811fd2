//! A worker's loop, by its pace: as many operations in flight as it may (at maximum throughput
//! or until a count is claimed: a load's rows, or a run phase's `--count`), or handed to the paced loops of `replay` (captured times) and
//! `shaped` (a rate or a schedule of requests in flight). The pieces every loop shares —
//! starting and recording an operation — are `worker`'s.

use super::target::Target;
use super::worker::{record, start, Pace, Shared};
use futures::stream::{FuturesUnordered, StreamExt};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Runs one worker until the phase's stop flag is set (or its count is exhausted, or the run
/// phase's quota: every loop asks [`Shared::may_start`] before a start), then waits
/// for its in-flight operations.
pub(crate) async fn run_worker<T: Target>(sh: Arc<Shared<T>>, id: usize, cap: usize, pace: Pace, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let target = &*sh.target;
    let plan = &*sh.plan;
    let mut inflight = FuturesUnordered::new();
    let stopped = |sh: &Shared<T>| sh.stop.load(Ordering::Relaxed);
    match pace {
        Pace::Max | Pace::Count { .. } => loop {
            while inflight.len() < cap && !stopped(&sh) {
                if let Pace::Count { claimed, total } = &pace {
                    if claimed.fetch_add(1, Ordering::Relaxed) >= *total {
                        break;
                    }
                }
                if !sh.may_start() {
                    break;
                }
                let op = plan.pick(rng.gen::<f64>());
                inflight.push(start(target, plan, &sh.slots[id], &sh.started[id], op, None, &mut rng));
            }
            match inflight.next().await {
                Some(d) => record(&sh, id, d),
                None => break,
            }
        },
        Pace::Schedule { starts, next, first } => super::replay::run_schedule(&sh, id, cap, &starts, &next, first, &mut rng).await,
        Pace::Rated { curve, first, lanes } => super::shaped::run_rated(&sh, id, cap, curve, first, &lanes, &mut rng).await,
        Pace::Closed { levels, first, workers } => super::shaped::run_closed(&sh, id, &levels, first, workers, &mut rng).await,
    }
}
