//! Counters: a verified counter table (one counter column, changed only by `SET n = n + ?` or
//! `- ?`) keeps, per key, four running sums (32 bytes a key, in chunks of 65,536 as keys are
//! touched): of the increments begun and of those acknowledged, positive and negative apart.
//! An increment that failed may or may not have been applied, and a counter cannot be
//! overwritten, so it stays possible for ever. A read sent when `acked` had been acknowledged and
//! back when `begun` had begun must see the acknowledged increments plus any of the others:
//! at least the acknowledged positive ones and every negative one begun, at most every positive
//! one begun and the acknowledged negative ones. Less is **stale** (an acknowledged increment
//! lost; no row at all is **missing**), more is **corrupt** (more than was ever added).
//!
//! Not here: which tables are counters (`verify_build`), the reads (op).

use super::classify::Class;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;

const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Sums per key: begun positive, begun negative, acknowledged positive, acknowledged negative.
const SUMS: usize = 4;

/// A key's sums at one moment: of the increments begun and acknowledged, positive and negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sums {
    pub begun_pos: i64,
    pub begun_neg: i64,
    pub acked_pos: i64,
    pub acked_neg: i64,
}

impl Sums {
    /// Whether an increment was begun and not acknowledged (in flight, or failed).
    pub fn unsettled(&self) -> bool {
        self.begun_pos != self.acked_pos || self.begun_neg != self.acked_neg
    }

    /// Whether any increment was recorded.
    pub fn known(&self) -> bool {
        self.begun_pos != 0 || self.begun_neg != 0
    }
}

/// Per key, the running sums of its increments.
pub struct CounterRecord {
    chunks: Vec<OnceLock<Box<[AtomicI64]>>>,
    keys: u64,
}

impl CounterRecord {
    pub fn new(keys: u64) -> CounterRecord {
        CounterRecord { chunks: (0..keys.div_ceil(CHUNK as u64)).map(|_| OnceLock::new()).collect(), keys }
    }

    fn sums(&self, key: u64, create: bool) -> Option<&[AtomicI64]> {
        if key >= self.keys {
            return None;
        }
        let cell = &self.chunks[(key >> CHUNK_BITS) as usize];
        let chunk = if create { Some(cell.get_or_init(|| (0..SUMS * CHUNK).map(|_| AtomicI64::new(0)).collect())) } else { cell.get() }?;
        let i = SUMS * ((key as usize) & (CHUNK - 1));
        Some(&chunk[i..i + SUMS])
    }

    /// An increment of `key` by `delta` begins.
    pub fn begin(&self, key: u64, delta: i64) {
        if let Some(s) = self.sums(key, true) {
            s[if delta >= 0 { 0 } else { 1 }].fetch_add(delta, Ordering::AcqRel);
        }
    }

    /// The increment of `key` by `delta` begun with [`CounterRecord::begin`] ended.
    pub fn finish(&self, key: u64, delta: i64, acked: bool) {
        if let (true, Some(s)) = (acked, self.sums(key, true)) {
            s[if delta >= 0 { 2 } else { 3 }].fetch_add(delta, Ordering::AcqRel);
        }
    }

    /// The sums of `key` now (acknowledged ones read first, so they never exceed the begun).
    pub fn state(&self, key: u64) -> Sums {
        let Some(s) = self.sums(key, false) else { return Sums::default() };
        let (acked_pos, acked_neg) = (s[2].load(Ordering::Acquire), s[3].load(Ordering::Acquire));
        Sums { begun_pos: s[0].load(Ordering::Acquire), begun_neg: s[1].load(Ordering::Acquire), acked_pos, acked_neg }
    }
}

/// The values a read of a counter may return, sent at `at_send`, back at `at_end`.
pub fn bounds(at_send: &Sums, at_end: &Sums) -> (i64, i64) {
    (at_send.acked_pos + at_end.begun_neg, at_end.begun_pos + at_send.acked_neg)
}

/// The class of a counter read that returned `got` (`None`: no row).
pub fn judge(at_send: &Sums, at_end: &Sums, got: Option<i64>) -> Class {
    let (lo, hi) = bounds(at_send, at_end);
    match got {
        None if lo > 0 => Class::Missing,
        None => Class::Ok,
        Some(v) if v < lo => Class::Stale,
        Some(v) if v > hi => Class::Corrupt,
        Some(_) => Class::Ok,
    }
}

/// What a counter update adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Increment {
    /// A drawn value (index into the operation's values), subtracted when `negate`.
    Bound {
        value: usize,
        negate: bool,
    },
    Literal(i64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_is_its_acknowledged_increments_within_the_ambiguous_ones() {
        let c = CounterRecord::new(10);
        for d in [5, 3] {
            c.begin(2, d);
            c.finish(2, d, true);
        }
        let settled = c.state(2);
        assert_eq!(bounds(&settled, &settled), (8, 8));
        assert_eq!(judge(&settled, &settled, Some(8)), Class::Ok);
        assert_eq!(judge(&settled, &settled, Some(5)), Class::Stale, "an acknowledged increment lost");
        assert_eq!(judge(&settled, &settled, Some(9)), Class::Corrupt, "more than was ever added");
        assert_eq!(judge(&settled, &settled, None), Class::Missing);
        // a failed +4 and a -2 in flight: 8 - 2 … 8 + 4, for ever for the failed one
        c.begin(2, 4);
        c.finish(2, 4, false);
        c.begin(2, -2);
        let now = c.state(2);
        assert!(now.unsettled());
        assert_eq!(bounds(&settled, &now), (6, 12));
        c.finish(2, -2, true);
        let later = c.state(2);
        assert_eq!(bounds(&later, &later), (6, 10), "the failed +4 may have landed");
        assert_eq!(judge(&later, &later, Some(5)), Class::Stale);
        assert_eq!(judge(&later, &later, Some(11)), Class::Corrupt);
        assert_eq!((judge(&later, &later, Some(6)), judge(&later, &later, Some(10))), (Class::Ok, Class::Ok));
        assert!(!c.state(3).known() && judge(&c.state(3), &c.state(3), None) == Class::Ok);
    }
}
