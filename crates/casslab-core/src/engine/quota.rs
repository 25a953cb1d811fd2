//! The count that ends a run phase (`--count`): the workers share one [`StartQuota`] and take
//! a start from it before every operation, so no more than the count is started after the
//! warm-up, whichever worker starts them and at whatever pace. The warm-up stays timed: until
//! it ends the quota allows any number, and when it ends it allows the completions the warm-up
//! recorded plus the count, so the operations that complete in the measured part (those still
//! in flight at its start included) are the count. The phase ends when the workers, refused,
//! have drained what they started; its measured time ends at the last start.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::time::Instant;

/// Starts shared by the workers of a run phase that ends after a count of operations.
pub(crate) struct StartQuota {
    /// Operations the measured part is to complete.
    count: u64,
    /// Operations started in the phase, warm-up included (only starts the quota allowed).
    started: AtomicU64,
    /// Starts allowed in the phase: unlimited until the warm-up ends, then the warm-up's
    /// completions plus `count`.
    limit: AtomicU64,
    /// When the last allowed start was taken.
    last_start: Mutex<Option<Instant>>,
}

impl StartQuota {
    /// A quota of `count` operations; `warming`: the phase starts with a warm-up, and the
    /// count applies once [`StartQuota::open`] says where it ended.
    pub fn new(count: u64, warming: bool) -> StartQuota {
        let limit = if warming { u64::MAX } else { count };
        StartQuota { count, started: AtomicU64::new(0), limit: AtomicU64::new(limit), last_start: Mutex::new(None) }
    }

    /// The warm-up ended with `warmup_completed` operations completed in it: from now on the
    /// phase may start `count` more than that, in all.
    pub fn open(&self, warmup_completed: u64) {
        let limit = warmup_completed.saturating_add(self.count);
        self.limit.store(limit, Ordering::Relaxed);
        if self.started.load(Ordering::Relaxed) >= limit {
            // more were in flight when the warm-up ended than the count: none is started now
            self.last_start.lock().unwrap().get_or_insert_with(Instant::now);
        }
    }

    /// Takes one start; false once the count was started.
    pub fn claim(&self) -> bool {
        let limit = self.limit.load(Ordering::Relaxed);
        match self.started.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| (s < limit).then_some(s + 1)) {
            Ok(before) => {
                if before + 1 == limit {
                    *self.last_start.lock().unwrap() = Some(Instant::now());
                }
                true
            }
            Err(_) => false,
        }
    }

    /// Starts still allowed (as many as there may be during the warm-up).
    pub fn remaining(&self) -> u64 {
        self.limit.load(Ordering::Relaxed).saturating_sub(self.started.load(Ordering::Relaxed))
    }

    /// When the last allowed start was taken; `None` while starts remain.
    pub fn exhausted_at(&self) -> Option<Instant> {
        *self.last_start.lock().unwrap()
    }

    /// The operations the measured part is to complete.
    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_allows_the_count_after_the_warm_up_and_no_more() {
        let q = StartQuota::new(3, false);
        assert_eq!((0..5).filter(|_| q.claim()).count(), 3);
        assert_eq!(q.remaining(), 0);
        assert!(q.exhausted_at().is_some());
        // under a warm-up, unlimited until it ends; then what it completed plus the count
        let q = StartQuota::new(10, true);
        assert_eq!((0..100).filter(|_| q.claim()).count(), 100);
        assert!(q.exhausted_at().is_none());
        q.open(96);
        assert_eq!(q.remaining(), 6, "4 in flight at the warm-up's end complete in the measured part: 6 more make 10");
        assert_eq!((0..20).filter(|_| q.claim()).count(), 6);
        // a count below what is in flight at the warm-up's end starts nothing more
        let q = StartQuota::new(2, true);
        assert!((0..10).all(|_| q.claim()));
        q.open(5);
        assert!(!q.claim() && q.exhausted_at().is_some());
    }

    #[test]
    fn workers_racing_for_the_last_starts_take_exactly_the_count() {
        let q = std::sync::Arc::new(StartQuota::new(10_000, false));
        let taken: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4).map(|_| s.spawn(|| (0..5_000).filter(|_| q.claim()).count())).collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(taken, 10_000);
    }
}
