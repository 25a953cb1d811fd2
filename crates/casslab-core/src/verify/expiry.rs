//! Rows that expire: a verified table whose writes carry a time-to-live (`USING TTL n` in every
//! upsert, or the table's own `default_time_to_live`) keeps, beside its write record, when its
//! floor write began and when it was acknowledged (8 bytes each a key, in chunks of 65,536 as
//! keys are written). The server counts a row's TTL from when it applies the write — after
//! the write began, before it was acknowledged — to the second, so a row must be there until
//! its TTL has run from the write's beginning, less a tolerance, and must be gone once it has
//! run from the acknowledgement, plus the tolerance: [`WriteTimes::expiry`] says which holds
//! for a read. Keys whose times are not known (restored from a saved record, loaded by an
//! earlier run) cannot be judged when no row comes back. Client and server clocks must agree
//! within the tolerance.
//!
//! Not here: the record (record), classifying (classify).

use super::classify::{Expiry, Found};
use super::record::KeyState;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;

/// How far from its TTL a row may be there or gone either way: the server's whole seconds, and
/// clocks that differ a little.
pub const TOLERANCE_MS: i64 = 2_000;

/// Unix milliseconds of the times' base (2025-01-01): times are kept in tenths of a second
/// from there, which a 32-bit number holds for 13 years.
const BASE_MS: i64 = 1_735_689_600_000;

fn tenths(unix_ms: i64) -> u64 {
    ((unix_ms - BASE_MS).max(0) / 100).min(u32::MAX as i64) as u64
}

fn unix_ms(tenths: u64) -> i64 {
    BASE_MS + tenths as i64 * 100
}

/// Per key, when its highest acknowledged write began and was acknowledged: each a word of
/// the write's number (high half) and the time (low half), so a word always names its write.
pub struct WriteTimes {
    chunks: Vec<OnceLock<Box<[AtomicU64]>>>,
    keys: u64,
    /// The rows' time-to-live, in seconds.
    pub ttl_s: u32,
}

impl WriteTimes {
    pub fn new(keys: u64, ttl_s: u32) -> WriteTimes {
        WriteTimes { chunks: (0..keys.div_ceil(CHUNK as u64)).map(|_| OnceLock::new()).collect(), keys, ttl_s }
    }

    fn slots(&self, key: u64, create: bool) -> Option<(&AtomicU64, &AtomicU64)> {
        if key >= self.keys {
            return None;
        }
        let cell = &self.chunks[(key >> CHUNK_BITS) as usize];
        let chunk = if create { Some(cell.get_or_init(|| (0..2 * CHUNK).map(|_| AtomicU64::new(0)).collect())) } else { cell.get() }?;
        let i = 2 * ((key as usize) & (CHUNK - 1));
        Some((&chunk[i], &chunk[i + 1]))
    }

    /// Notes that write `number` of `key`, begun at `begun_ms`, was acknowledged at `acked_ms`
    /// (Unix milliseconds). A lower number never replaces a higher one.
    pub fn acked(&self, key: u64, number: u32, begun_ms: i64, acked_ms: i64) {
        if let Some((b, e)) = self.slots(key, true) {
            b.fetch_max((number as u64) << 32 | tenths(begun_ms), Ordering::AcqRel);
            e.fetch_max((number as u64) << 32 | tenths(acked_ms), Ordering::AcqRel);
        }
    }

    /// When write `number` of `key` began and was acknowledged, if it is the one noted.
    pub fn of(&self, key: u64, number: u32) -> Option<(i64, i64)> {
        let (b, e) = self.slots(key, false)?;
        let (b, e) = (b.load(Ordering::Acquire), e.load(Ordering::Acquire));
        (number > 0 && b >> 32 == number as u64 && e >> 32 == number as u64).then(|| (unix_ms(b & 0xFFFF_FFFF), unix_ms(e & 0xFFFF_FFFF)))
    }

    /// How the TTL bears on a read of `key` sent at `sent_ms` and back at `back_ms`, that found
    /// `found` when the record said `at_send`: a row of the floor write whose TTL has certainly
    /// run is expired; no row is missing only while the floor write's TTL has certainly not.
    pub fn expiry(&self, key: u64, at_send: &KeyState, found: Found, sent_ms: i64, back_ms: i64) -> Expiry {
        let ttl_ms = self.ttl_s as i64 * 1000;
        let times = self.of(key, at_send.floor);
        match (found, times) {
            (Found::Row { newest: Some(w), .. }, Some((_, acked))) if w == at_send.floor && sent_ms > acked + ttl_ms + TOLERANCE_MS => Expiry::Expired,
            (Found::Row { .. }, _) => Expiry::Live,
            (Found::Absent, Some((begun, _))) if back_ms < begun + ttl_ms - TOLERANCE_MS => Expiry::Live,
            (Found::Absent, Some(_)) => Expiry::Either,
            (Found::Absent, None) => Expiry::Unknown,
            (Found::Undecided, _) => Expiry::Live,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor(n: u32) -> KeyState {
        KeyState { issued: n, floor: n, pending: 0, put: true, delete: false, exact: true, recent: None }
    }

    #[test]
    fn a_row_lives_its_ttl_from_its_write_and_is_gone_after() {
        let t = WriteTimes::new(10, 60);
        let begun = 1_800_000_000_000;
        t.acked(3, 2, begun, begun + 500);
        let row = |w| Found::Row { newest: Some(w), corrupt: false };
        let at = |s: i64| begun + s * 1000;
        assert_eq!(t.expiry(3, &floor(2), Found::Absent, at(10), at(10)), Expiry::Live, "no row 10 s after: missing");
        assert_eq!(t.expiry(3, &floor(2), Found::Absent, at(59), at(59)), Expiry::Either, "within the tolerance of its TTL");
        assert_eq!(t.expiry(3, &floor(2), row(2), at(61), at(61)), Expiry::Live, "a row just after: the tolerance");
        assert_eq!(t.expiry(3, &floor(2), row(2), at(63), at(63)), Expiry::Expired, "a row 63 s after a 60 s TTL");
        assert_eq!(t.expiry(3, &floor(2), Found::Absent, at(63), at(63)), Expiry::Either);
        assert_eq!(t.expiry(3, &floor(3), Found::Absent, at(10), at(10)), Expiry::Unknown, "times of another write: not known");
        assert_eq!(t.expiry(4, &floor(1), Found::Absent, at(10), at(10)), Expiry::Unknown, "a key never noted");
        t.acked(3, 1, begun + 9_000, begun + 9_000);
        assert_eq!(t.of(3, 2), Some((begun, begun + 500)), "an older write's acknowledgement does not replace it");
        t.acked(3, 4, begun + 9_000, begun + 9_100);
        assert_eq!(t.of(3, 4), Some((begun + 9_000, begun + 9_100)));
        assert_eq!(t.of(3, 2), None);
    }
}
