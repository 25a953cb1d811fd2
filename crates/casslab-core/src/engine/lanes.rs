//! The operations of an open-loop schedule dealt to a loader's workers: shard `i` of `n` takes
//! the run's operations `i`, `i + n`, ...; each worker follows a lane of its own (every `W`-th
//! of those) or all share one lane (`--shared-schedule`). A lane counts the operations started,
//! so the operations due and not started — the backlog, and at the end the operations never
//! started — are read from the lanes against the rate's curve.

use crate::load_shape::Curve;
use std::sync::atomic::{AtomicU64, Ordering};

/// Operations of the run `offset`, `offset + stride`, ...: `next` counts the ones started (its
/// next is `offset + stride·next`).
pub(crate) struct Lane {
    pub(super) offset: u64,
    stride: u64,
    /// How many of its operations were started.
    pub(super) next: AtomicU64,
}

impl Lane {
    pub(super) fn op(&self, j: u64) -> u64 {
        self.offset + self.stride * j
    }

    /// Its operations due by `t_s` and not started: how many, and when the oldest was due.
    fn behind(&self, curve: &Curve, t_s: f64) -> (u64, Option<f64>) {
        let first = self.op(self.next.load(Ordering::Relaxed));
        let count = curve.count_at(t_s);
        if count <= first as f64 {
            return (0, None);
        }
        (((count - first as f64) / self.stride as f64).ceil() as u64, curve.time_of(first))
    }
}

/// This loader's operations of an open-loop schedule, dealt to its workers: shard `i` of `n`
/// takes the run's operations `i`, `i + n`, ...; per worker, worker `w` of `W` every `W`-th of
/// those (its own lane), or shared, whichever worker has room takes the next one due.
pub(crate) struct Lanes {
    lanes: Vec<Lane>,
    shared: bool,
}

impl Lanes {
    /// The lanes of shard `shard` of `shards` with `workers` workers.
    pub fn new((shard, shards): (u64, u64), workers: usize, shared: bool) -> Lanes {
        let shards = shards.max(1);
        let lane = |offset, stride| Lane { offset, stride, next: AtomicU64::new(0) };
        let lanes = match shared {
            true => vec![lane(shard, shards)],
            false => (0..workers as u64).map(|w| lane(shard + shards * w, shards * workers as u64)).collect(),
        };
        Lanes { lanes, shared }
    }

    pub(super) fn of(&self, worker: usize) -> &Lane {
        &self.lanes[if self.shared { 0 } else { worker }]
    }

    /// Whether every worker takes the next operation due from one lane.
    pub(super) fn shared(&self) -> bool {
        self.shared
    }

    /// Operations due by `t_s` and not started, in all lanes: how many, and when the oldest
    /// was due.
    pub fn behind(&self, curve: &Curve, t_s: f64) -> (u64, Option<f64>) {
        self.lanes.iter().map(|l| l.behind(curve, t_s)).fold((0, None), |(n, oldest), (m, o)| {
            let oldest = match (oldest, o) {
                (Some(a), Some(b)) => Some(f64::min(a, b)),
                (a, b) => a.or(b),
            };
            (n + m, oldest)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lanes_count_what_is_due_and_not_started() {
        // 1000/s: by 1 s, operations 0..999 are due
        let curve = Curve::fixed(1000.0);
        let per_worker = Lanes::new((0, 1), 4, false);
        assert_eq!(per_worker.behind(&curve, 1.0), (1000, Some(0.0)));
        // worker 1 started its first 100 (operations 1, 5, ..., 397): the oldest not started is 401
        per_worker.lanes[1].next.store(100, Ordering::Relaxed);
        let (n, oldest) = per_worker.behind(&curve, 1.0);
        assert_eq!(n, 900);
        assert_eq!(oldest, Some(0.0), "worker 0 started none");
        for (w, lane) in per_worker.lanes.iter().enumerate() {
            lane.next.store(250, Ordering::Relaxed);
            assert_eq!(lane.op(250), 1000 + w as u64);
        }
        assert_eq!(per_worker.behind(&curve, 1.0), (0, None), "every worker started its 250");
        // shard 1 of 2, shared: its operations are the odd ones, 500 of them due by 1 s
        let shared = Lanes::new((1, 2), 3, true);
        assert_eq!(shared.of(2).offset, 1);
        assert_eq!(shared.behind(&curve, 1.0), (500, Some(0.001)));
        shared.of(0).next.store(400, Ordering::Relaxed);
        let (n, oldest) = shared.behind(&curve, 1.0);
        assert_eq!(n, 100);
        assert!((oldest.unwrap() - 0.801).abs() < 1e-12, "operation 801 was due at 0.801 s");
    }
}
