//! The write record: per key a loader writes, one 64-bit word that says which of its writes a
//! read may see. Writes to a key are numbered from 1 (the load writes number 1); the word holds
//! the number of the last write started (`issued`), the *floor* — the lowest write a read sent
//! now may still see — how many writes are in flight, and whether the writes a read may see
//! include a delete or an upsert. Keys are indexes from 0; words are allocated in chunks of
//! 65,536 as keys are first written, so an unbounded sequence of new keys costs only what it
//! touches (8 bytes a key, plus a pointer per chunk: 80 MB for 10 M keys).
//!
//! Where the floor goes depends on how the server orders a key's writes ([`Order`]):
//! - **Timestamps** (CQL): the last write wins by its timestamp, and every recorded write
//!   carries a client timestamp from one process-wide, strictly increasing clock, taken inside
//!   the atomic step that numbers it — so a key's timestamps rise with its write numbers, and
//!   once write n is acknowledged no lower-numbered write can ever win again, in flight, failed
//!   or retried. The floor is the highest acknowledged write, exactly. The word also keeps the
//!   kinds of the last [`RECENT`] writes, so the writes a read may see and those begun while
//!   it ran are known by kind.
//! - **Arrival** (Redis): the last write to arrive wins, and a write in flight may arrive after
//!   a later one. Writes sent while no other write to the key is in flight form a new *group*;
//!   once any write of the group is acknowledged, every write before the group is superseded
//!   (it finished before the group started, so it arrived before), and the floor rises to the
//!   group's first write. A write that failed may still arrive at any later time (a request
//!   queued behind a slow one, on another connection): its key's floor is unknown from then on.
//!
//! A key whose floor is unknown — a write that failed under arrival order, more writes in
//! flight than the word counts, more unacknowledged writes than its gap holds — is not
//! *exact*: its reads are counted as unchecked, never as ok. All updates are lock-free
//! compare-and-swap loops on the word.
//!
//! Not here: what a key is (the model), what a row should hold (values), classifying (classify).

use scylla::policies::timestamp_generator::{MonotonicTimestampGenerator, TimestampGenerator};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, OnceLock};

/// Keys per allocated chunk.
const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Highest number of keys a record holds (indexes beyond are not recorded).
pub const MAX_KEYS: u64 = 1 << 32;

const ISSUED_MASK: u64 = 0xFFFF_FFFF;
const FLOOR_SHIFT: u32 = 32;
/// Under arrival order, the gap to the group's first write; under timestamp order, the kinds of
/// the last writes (bit i: write `issued - i` deletes).
const GROUP_SHIFT: u32 = 42;
/// Writes whose kinds the word keeps under timestamp order.
pub const RECENT: u32 = 10;
const GAP_MASK: u64 = 0x3FF;
/// A gap that no longer fits: the floor (or the group's start) is not known.
const GAP_NONE: u64 = 0x3FF;
const PENDING_SHIFT: u32 = 52;
const PENDING_MASK: u64 = 0x7F;
/// Pending writes saturate here and stay there: the group then never ends.
const PENDING_MAX: u64 = 0x7F;
const WIN_PUT: u64 = 1 << 59;
const WIN_DEL: u64 = 1 << 60;
const GRP_PUT: u64 = 1 << 61;
const GRP_DEL: u64 = 1 << 62;
/// Arrival order: a write of the key failed and may still arrive; its floor is not known.
const STRAY: u64 = 1 << 63;

/// The clock every recorded write of this process is stamped with: microseconds since the
/// Unix epoch, strictly increasing across threads (the driver's monotonic generator: the wall
/// clock, or one more than the last value when the clock has not moved on).
static WRITE_CLOCK: LazyLock<MonotonicTimestampGenerator> = LazyLock::new(|| MonotonicTimestampGenerator::new().without_warnings());

/// The next timestamp of the process-wide write clock, in microseconds.
pub fn next_write_timestamp_us() -> i64 {
    WRITE_CLOCK.next_timestamp()
}

/// How the server decides which of a key's writes is its last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By the write's timestamp, which casslab sets (CQL).
    Timestamps,
    /// By arrival at the server (Redis).
    Arrival,
}

/// What a write does to its key's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Writes columns (INSERT, UPDATE, SET, HSET): the row exists afterwards.
    Put,
    /// Deletes the row.
    Delete,
}

impl WriteKind {
    fn bits(self) -> (u64, u64) {
        match self {
            WriteKind::Put => (WIN_PUT, GRP_PUT),
            WriteKind::Delete => (WIN_DEL, GRP_DEL),
        }
    }
}

/// A write begun: its number and, under timestamp order, the timestamp it must be sent with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Begun {
    pub number: u32,
    pub kind: WriteKind,
    /// Microseconds since the Unix epoch (`None` under arrival order).
    pub timestamp_us: Option<i64>,
}

/// One key's word, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyState {
    /// Number of the last write started (0: none recorded).
    pub issued: u32,
    /// The lowest write a read sent now may see (0: no write acknowledged, or not known).
    pub floor: u32,
    /// Writes started and not finished.
    pub pending: u32,
    /// Whether writes from `floor` to `issued` include an upsert / a delete.
    pub put: bool,
    pub delete: bool,
    /// Whether the floor is known (see the module's doc): when not, reads of the key cannot
    /// be judged stale, missing or resurrected.
    pub exact: bool,
    /// Under timestamp order, the kinds of the last [`RECENT`] writes: bit i set when write
    /// `issued - i` deletes (`None` under arrival order).
    pub recent: Option<u16>,
}

impl KeyState {
    /// Whether anything is known of the key: a write was recorded.
    pub fn known(&self) -> bool {
        self.issued > 0
    }

    fn decode(word: u64, order: Order) -> KeyState {
        let issued = (word & ISSUED_MASK) as u32;
        let gap = (word >> FLOOR_SHIFT) & GAP_MASK;
        let pending = (word >> PENDING_SHIFT) & PENDING_MASK;
        let exact = issued > 0 && gap != GAP_NONE && word & STRAY == 0 && (order == Order::Timestamps || pending < PENDING_MAX);
        let floor = if exact { issued.saturating_sub(gap as u32) } else { 0 };
        let recent = (order == Order::Timestamps).then_some(((word >> GROUP_SHIFT) & GAP_MASK) as u16);
        KeyState { issued, floor, pending: pending as u32, put: word & WIN_PUT != 0, delete: word & WIN_DEL != 0, exact, recent }
    }

    /// Under timestamp order, whether the last `writes` writes (at most [`RECENT`]) include an
    /// upsert and a delete (`None`: not known).
    pub fn recent_kinds(&self, writes: u32) -> Option<(bool, bool)> {
        let bits = self.recent?;
        if writes == 0 || writes > RECENT || writes > self.issued {
            return (writes == 0).then_some((false, false));
        }
        let mask = (1u16 << writes) - 1;
        Some((bits & mask != mask, bits & mask != 0))
    }
}

/// The word of a key written once by a load whose write was acknowledged (its group, or its
/// recent kinds, a put).
const LOADED: u64 = 1 | WIN_PUT | GRP_PUT;

/// Begins a write on `word`: the new word (`None`: numbers exhausted).
fn begun(word: u64, kind: WriteKind, order: Order) -> Option<u64> {
    let issued = word & ISSUED_MASK;
    if issued == ISSUED_MASK {
        return None;
    }
    let pending = (word >> PENDING_SHIFT) & PENDING_MASK;
    let fgap = (word >> FLOOR_SHIFT) & GAP_MASK;
    let ggap = (word >> GROUP_SHIFT) & GAP_MASK;
    let (win, grp) = kind.bits();
    let fgap = if fgap == GAP_NONE { GAP_NONE } else { (fgap + 1).min(GAP_NONE) };
    // a write sent while none is in flight starts a group of its own
    let (ggap, grp_bits) =
        if pending == 0 { (0, grp) } else { (if ggap == GAP_NONE { GAP_NONE } else { (ggap + 1).min(GAP_NONE) }, (word & (GRP_PUT | GRP_DEL)) | grp) };
    let pending = (pending + 1).min(PENDING_MAX);
    let (ggap, grp_bits) = match order {
        Order::Arrival => (ggap, grp_bits),
        Order::Timestamps => ((((word >> GROUP_SHIFT) & GAP_MASK) << 1 | u64::from(kind == WriteKind::Delete)) & GAP_MASK, 0),
    };
    let flags = (word & (WIN_PUT | WIN_DEL | STRAY)) | win | grp_bits;
    Some((issued + 1) | fgap << FLOOR_SHIFT | ggap << GROUP_SHIFT | pending << PENDING_SHIFT | flags)
}

/// Finishes write `w` on `word`: acknowledged or failed.
fn finished(word: u64, w: &Begun, acked: bool, order: Order) -> u64 {
    let pending = (word >> PENDING_SHIFT) & PENDING_MASK;
    let pending = if pending == PENDING_MAX { PENDING_MAX } else { pending.saturating_sub(1) };
    let mut out = (word & !(PENDING_MASK << PENDING_SHIFT)) | pending << PENDING_SHIFT;
    let issued = word & ISSUED_MASK;
    let fgap = (word >> FLOOR_SHIFT) & GAP_MASK;
    match order {
        Order::Timestamps => {
            // the floor rises to the highest acknowledged write; the window's kinds are then
            // those of this write and every later one (from the recent kinds, when they reach)
            let gap = issued.saturating_sub(w.number as u64);
            if acked && gap < GAP_NONE && (fgap == GAP_NONE || gap < fgap) {
                let kinds = match KeyState::decode(word, order).recent_kinds(gap as u32 + 1) {
                    Some((put, del)) => (if put { WIN_PUT } else { 0 }) | (if del { WIN_DEL } else { 0 }),
                    None => (word & (WIN_PUT | WIN_DEL)) | w.kind.bits().0,
                };
                out = (out & !(GAP_MASK << FLOOR_SHIFT) & !(WIN_PUT | WIN_DEL)) | gap << FLOOR_SHIFT | kinds;
            }
        }
        Order::Arrival => {
            if !acked {
                return out | STRAY;
            }
            // the floor rises to the group's first write, with the group's kinds as the window's
            let ggap = (word >> GROUP_SHIFT) & GAP_MASK;
            if ggap != GAP_NONE && (fgap == GAP_NONE || ggap < fgap) {
                let grp = word & (GRP_PUT | GRP_DEL);
                out = (out & !(GAP_MASK << FLOOR_SHIFT) & !(WIN_PUT | WIN_DEL)) | ggap << FLOOR_SHIFT | grp >> 2;
            }
        }
    }
    out
}

/// Per key, its writes' numbers and what a read may see (see the module's doc).
pub struct WriteRecord {
    chunks: Vec<OnceLock<Box<[AtomicU64]>>>,
    /// Keys recorded, 0..keys.
    keys: u64,
    pub order: Order,
}

impl WriteRecord {
    /// A record of `keys` keys (at most [`MAX_KEYS`]) whose writes the server orders by
    /// `order`, none written.
    pub fn new(keys: u64, order: Order) -> WriteRecord {
        let keys = keys.min(MAX_KEYS);
        let n = keys.div_ceil(CHUNK as u64) as usize;
        WriteRecord { chunks: (0..n).map(|_| OnceLock::new()).collect(), keys, order }
    }

    /// Keys the record can hold.
    pub fn capacity(&self) -> u64 {
        self.keys
    }

    fn slot(&self, key: u64) -> Option<&AtomicU64> {
        if key >= self.keys {
            return None;
        }
        let chunk = self.chunks[(key >> CHUNK_BITS) as usize].get_or_init(|| (0..CHUNK).map(|_| AtomicU64::new(0)).collect());
        Some(&chunk[(key as usize) & (CHUNK - 1)])
    }

    fn peek(&self, key: u64) -> Option<&AtomicU64> {
        if key >= self.keys {
            return None;
        }
        self.chunks[(key >> CHUNK_BITS) as usize].get().map(|c| &c[(key as usize) & (CHUNK - 1)])
    }

    /// Starts a write of `key` (`None`: the key is beyond the record, or its numbers are
    /// exhausted; the write then goes unrecorded). Under timestamp order, the write's
    /// timestamp is taken from the process-wide clock inside the step that numbers it, so a
    /// key's timestamps rise with its numbers.
    pub fn begin(&self, key: u64, kind: WriteKind) -> Option<Begun> {
        self.begin_stamped(key, kind, next_write_timestamp_us)
    }

    /// [`WriteRecord::begin`] with the clock given (the property tests' simulated one).
    pub fn begin_stamped(&self, key: u64, kind: WriteKind, clock: impl Fn() -> i64) -> Option<Begun> {
        let slot = self.slot(key)?;
        let mut ts = None;
        let old = slot
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                let next = begun(w, kind, self.order)?;
                if self.order == Order::Timestamps {
                    ts = Some(clock());
                }
                Some(next)
            })
            .ok()?;
        Some(Begun { number: (old & ISSUED_MASK) as u32 + 1, kind, timestamp_us: ts })
    }

    /// Ends write `w` of `key` begun with [`WriteRecord::begin`]: acknowledged by the server or not.
    pub fn finish(&self, key: u64, w: &Begun, acked: bool) {
        if let Some(slot) = self.peek(key) {
            let _ = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| Some(finished(word, w, acked, self.order)));
        }
    }

    /// What is known of `key` now.
    pub fn state(&self, key: u64) -> KeyState {
        self.peek(key).map(|s| KeyState::decode(s.load(Ordering::Acquire), self.order)).unwrap_or_default()
    }

    /// Records `key` as written once by a load, acknowledged (a load this run did not make, but
    /// that is known to be complete and untouched since).
    pub fn mark_loaded(&self, key: u64) {
        if let Some(slot) = self.slot(key) {
            slot.store(LOADED, Ordering::Release);
        }
    }

    /// Every key with a recorded write, with its state now (writes in flight included), in key
    /// order.
    pub fn known(&self) -> impl Iterator<Item = (u64, KeyState)> + '_ {
        let order = self.order;
        self.chunks.iter().enumerate().filter_map(|(c, chunk)| chunk.get().map(|words| (c, words))).flat_map(move |(c, words)| {
            words.iter().enumerate().filter_map(move |(i, w)| {
                let s = KeyState::decode(w.load(Ordering::Acquire), order);
                s.known().then_some((((c as u64) << CHUNK_BITS) + i as u64, s))
            })
        })
    }

    /// Every key with a recorded write, with its state, in key order; writes still in flight
    /// count as finished without an acknowledgement (what a record saved after its run knows).
    pub fn settled(&self) -> impl Iterator<Item = (u64, KeyState)> + '_ {
        let order = self.order;
        self.chunks.iter().enumerate().filter_map(|(c, chunk)| chunk.get().map(|words| (c, words))).flat_map(move |(c, words)| {
            words.iter().enumerate().filter_map(move |(i, w)| {
                let s = KeyState::decode(w.load(Ordering::Acquire), order);
                let exact = s.exact && (order == Order::Timestamps || s.pending == 0);
                s.known().then(|| (((c as u64) << CHUNK_BITS) + i as u64, KeyState { pending: 0, exact, ..s }))
            })
        })
    }

    /// Sets `key` to a state saved by [`WriteRecord::settled`] (no write in flight).
    pub fn restore(&self, key: u64, s: &KeyState) {
        if let Some(slot) = self.slot(key) {
            let gap = (s.issued - s.floor.min(s.issued)) as u64;
            let fgap = if !s.exact || gap >= GAP_NONE { GAP_NONE } else { gap };
            let stray = if !s.exact && self.order == Order::Arrival { STRAY } else { 0 };
            let flags = if s.put { WIN_PUT | GRP_PUT } else { 0 } | if s.delete { WIN_DEL | GRP_DEL } else { 0 };
            // no group under arrival; under timestamps, the recent kinds of writes before the
            // save are not known, and only those of later writes are ever asked for
            let group = if self.order == Order::Arrival { GAP_NONE } else { 0 };
            slot.store(s.issued as u64 | fgap << FLOOR_SHIFT | group << GROUP_SHIFT | flags | stray, Ordering::Release);
        }
    }

    /// Bytes the record holds now.
    pub fn bytes(&self) -> u64 {
        let chunks = self.chunks.iter().filter(|c| c.get().is_some()).count() as u64;
        chunks * CHUNK as u64 * 8 + self.chunks.len() as u64 * std::mem::size_of::<OnceLock<Box<[AtomicU64]>>>() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use WriteKind::{Delete, Put};

    fn st(r: &WriteRecord, k: u64) -> (u32, u32, u32, bool, bool, bool) {
        let s = r.state(k);
        (s.issued, s.floor, s.pending, s.put, s.delete, s.exact)
    }

    fn write(r: &WriteRecord, k: u64, kind: WriteKind, acked: bool) -> Begun {
        let b = r.begin(k, kind).unwrap();
        r.finish(k, &b, acked);
        b
    }

    #[test]
    fn one_write_at_a_time_raises_the_floor_to_each() {
        for order in [Order::Timestamps, Order::Arrival] {
            let r = WriteRecord::new(10, order);
            assert!(!r.state(3).known());
            let b = r.begin(3, Put).unwrap();
            assert_eq!(b.number, 1);
            assert_eq!(st(&r, 3), (1, 0, 1, true, false, true), "in flight: nothing acknowledged yet");
            r.finish(3, &b, true);
            assert_eq!(st(&r, 3), (1, 1, 0, true, false, true));
            let b = r.begin(3, Put).unwrap();
            assert_eq!((b.number, st(&r, 3)), (2, (2, 1, 1, true, false, true)), "write 1 or 2 may be read");
            r.finish(3, &b, true);
            assert_eq!(st(&r, 3), (2, 2, 0, true, false, true));
            assert!(!r.state(4).known(), "keys are separate");
        }
    }

    #[test]
    fn timestamps_rise_with_numbers_and_across_the_process() {
        let r = WriteRecord::new(4, Order::Timestamps);
        let other = WriteRecord::new(4, Order::Timestamps);
        let a = r.begin(0, Put).unwrap();
        let b = other.begin(1, Put).unwrap();
        let c = r.begin(0, Delete).unwrap();
        let ts: Vec<i64> = [a, b, c].iter().map(|x| x.timestamp_us.unwrap()).collect();
        assert!(ts.windows(2).all(|w| w[0] < w[1]), "one clock for every record: {ts:?}");
        let now_us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as i64;
        assert!((now_us - ts[2]).abs() < 60_000_000, "microseconds of the wall clock: {ts:?}");
        assert_eq!(WriteRecord::new(1, Order::Arrival).begin(0, Put).unwrap().timestamp_us, None, "arrival order sends none");
        // many threads, one key: the timestamp order is the number order
        let r = std::sync::Arc::new(WriteRecord::new(1, Order::Timestamps));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || (0..2000).map(|_| r.begin(0, Put).unwrap()).map(|b| (b.number, b.timestamp_us.unwrap())).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<(u32, i64)> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        all.sort();
        assert!(all.windows(2).all(|w| w[0].1 < w[1].1), "numbers and timestamps in the same order");
    }

    #[test]
    fn under_timestamps_the_highest_acknowledged_write_is_the_floor() {
        let r = WriteRecord::new(1, Order::Timestamps);
        write(&r, 0, Put, true);
        let two = r.begin(0, Put).unwrap();
        let three = r.begin(0, Put).unwrap();
        r.finish(0, &three, true); // 3 acknowledged first: 2 can never win over its later timestamp
        assert_eq!(st(&r, 0), (3, 3, 1, true, false, true));
        r.finish(0, &two, true);
        assert_eq!(st(&r, 0), (3, 3, 0, true, false, true), "an older acknowledgement leaves the floor");
        let four = r.begin(0, Delete).unwrap();
        let five = r.begin(0, Put).unwrap();
        r.finish(0, &four, true);
        assert_eq!(st(&r, 0), (5, 4, 1, true, true, true), "4 or the later 5");
        r.finish(0, &five, false);
        assert_eq!(st(&r, 0), (5, 4, 0, true, true, true), "5 failed: it may have landed");
        write(&r, 0, Put, true);
        assert_eq!(st(&r, 0), (6, 6, 0, true, false, true));
    }

    #[test]
    fn under_arrival_overlapping_writes_keep_both_possible_until_a_later_group() {
        let r = WriteRecord::new(1, Order::Arrival);
        write(&r, 0, Put, true);
        let two = r.begin(0, Put).unwrap();
        let three = r.begin(0, Put).unwrap();
        r.finish(0, &three, true); // 3 arrived first: 2 may still arrive after it
        assert_eq!(st(&r, 0), (3, 2, 1, true, false, true));
        r.finish(0, &two, true);
        assert_eq!(st(&r, 0), (3, 2, 0, true, false, true), "2 and 3 overlapped: either may be last");
        write(&r, 0, Put, true);
        assert_eq!(st(&r, 0), (4, 4, 0, true, false, true), "a write sent after both supersedes them");
    }

    #[test]
    fn a_failed_write_stays_possible_and_under_arrival_makes_the_floor_unknown() {
        let r = WriteRecord::new(1, Order::Timestamps);
        write(&r, 0, Put, true);
        write(&r, 0, Put, false);
        assert_eq!(st(&r, 0), (2, 1, 0, true, false, true), "1 acknowledged, 2 may or may not have landed");
        write(&r, 0, Put, true);
        assert_eq!(st(&r, 0), (3, 3, 0, true, false, true), "3's later timestamp wins over 2 wherever it lands");
        let r = WriteRecord::new(1, Order::Arrival);
        write(&r, 0, Put, true);
        write(&r, 0, Put, false);
        write(&r, 0, Put, true);
        assert!(!r.state(0).exact, "2 may arrive after 3: nothing is known from then on");
        write(&r, 0, Put, true);
        assert!(!r.state(0).exact);
    }

    #[test]
    fn deletes_are_kinds_of_the_window() {
        let r = WriteRecord::new(1, Order::Arrival);
        write(&r, 0, Put, true);
        let d = r.begin(0, Delete).unwrap();
        assert_eq!(st(&r, 0), (2, 1, 1, true, true, true), "the row or no row");
        r.finish(0, &d, true);
        assert_eq!(st(&r, 0), (2, 2, 0, false, true, true), "only the delete may be seen");
        let r = WriteRecord::new(1, Order::Timestamps);
        write(&r, 0, Delete, true);
        write(&r, 0, Put, false);
        assert_eq!(st(&r, 0), (2, 1, 0, true, true, true), "a failed upsert after the delete: either");
    }

    #[test]
    fn a_load_known_complete_and_a_saved_state_restore() {
        for order in [Order::Timestamps, Order::Arrival] {
            let r = WriteRecord::new(100_000, order);
            r.mark_loaded(70_000);
            assert_eq!(st(&r, 70_000), (1, 1, 0, true, false, true));
            write(&r, 70_000, Put, true);
            r.begin(5, Put);
            let saved: Vec<(u64, KeyState)> = r.settled().collect();
            assert_eq!(saved.iter().map(|(k, s)| (*k, s.issued, s.floor, s.pending)).collect::<Vec<_>>(), [(5, 1, 0, 0), (70_000, 2, 2, 0)]);
            assert_eq!(saved[0].1.exact, order == Order::Timestamps, "in flight at the end: under arrival it may still arrive");
            let back = WriteRecord::new(100_000, order);
            for (k, s) in &saved {
                back.restore(*k, s);
            }
            assert_eq!(back.state(70_000), saved[1].1);
            assert_eq!(back.state(5), saved[0].1);
            assert_eq!(write(&back, 70_000, Put, true).number, 3);
            assert_eq!(st(&back, 70_000), (3, 3, 0, true, false, true), "a restored key goes on as if never saved");
            write(&back, 5, Put, true);
            assert_eq!(back.state(5).exact, order == Order::Timestamps);
        }
    }

    #[test]
    fn keys_beyond_the_record_are_not_recorded_and_chunks_are_allocated_as_touched() {
        let r = WriteRecord::new(3 * CHUNK as u64, Order::Timestamps);
        assert_eq!(r.begin(3 * CHUNK as u64, Put), None);
        let empty = r.bytes();
        r.begin(2 * CHUNK as u64 + 1, Put);
        assert_eq!(r.bytes() - empty, CHUNK as u64 * 8, "one chunk of 8-byte words");
        assert_eq!(WriteRecord::new(u64::MAX, Order::Arrival).capacity(), MAX_KEYS);
    }

    #[test]
    fn long_gaps_and_saturated_counts_make_the_floor_unknown_rather_than_invent_one() {
        let r = WriteRecord::new(1, Order::Timestamps);
        write(&r, 0, Put, true);
        for _ in 0..1100 {
            write(&r, 0, Put, false);
        }
        let s = r.state(0);
        assert_eq!((s.issued, s.floor, s.exact), (1101, 0, false), "more failed writes than the gap holds: floor unknown");
        write(&r, 0, Put, true);
        assert_eq!((r.state(0).floor, r.state(0).exact), (1102, true));
        let r = WriteRecord::new(1, Order::Arrival);
        write(&r, 0, Put, true);
        let flight: Vec<Begun> = (0..130).map(|_| r.begin(0, Put).unwrap()).collect();
        for b in &flight {
            r.finish(0, b, true);
        }
        assert!(!r.state(0).exact, "under arrival, more in flight than the count holds: the group never ends");
    }

    #[test]
    fn concurrent_writers_leave_a_consistent_word() {
        for order in [Order::Timestamps, Order::Arrival] {
            let r = std::sync::Arc::new(WriteRecord::new(4, order));
            let threads: Vec<_> = (0..4)
                .map(|t| {
                    let r = r.clone();
                    std::thread::spawn(move || {
                        for i in 0..5000u64 {
                            let k = (i + t) % 4;
                            let b = r.begin(k, if i % 7 == 0 { Delete } else { Put }).unwrap();
                            r.finish(k, &b, i % 3 != 0);
                        }
                    })
                })
                .collect();
            threads.into_iter().for_each(|t| t.join().unwrap());
            let total: u32 = (0..4).map(|k| r.state(k).issued).sum();
            assert_eq!(total, 20_000, "every write numbered once");
            assert!((0..4).all(|k| r.state(k).pending == 0 && r.state(k).floor <= r.state(k).issued));
        }
    }
}
