//! The write record: per key a loader writes, one 64-bit word that says which of its writes a
//! read may see. Writes to a key are numbered from 1 (the load writes number 1); the word holds
//! the number of the last write started (`issued`), the *floor* — the lowest write a read sent
//! now may still see, because a write at or above it was acknowledged — the first write of the
//! current group of overlapping writes, how many writes are in flight, and whether the writes
//! a read may see include a delete or an upsert. Keys are indexes from 0; words are allocated
//! in chunks of 65,536 as keys are first written, so an unbounded sequence of new keys costs
//! only what it touches (8 bytes a key, plus a pointer per chunk: 80 MB for 10 M keys).
//!
//! Why a floor and not the last acknowledged number: two writes to one key that overlap in
//! time (the second sent before the first is acknowledged) reach the server in either order,
//! and with server-side timestamps either may win. Writes sent while no other write to the key
//! is in flight form a new *group*; once any write of the group is acknowledged, every write
//! before the group is superseded (it finished before the group started, so its timestamp is
//! older), and the floor rises to the group's first write. A failed write is never
//! acknowledged: it may or may not have landed, and stays a possible answer until a later group
//! is acknowledged. All updates are lock-free compare-and-swap loops on the word.
//!
//! Not here: what a key is (the model), what a row should hold (values), classifying (classify).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Keys per allocated chunk.
const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Highest number of keys a record holds (indexes beyond are not recorded).
pub const MAX_KEYS: u64 = 1 << 32;

const ISSUED_MASK: u64 = 0xFFFF_FFFF;
const FLOOR_SHIFT: u32 = 32;
const GROUP_SHIFT: u32 = 42;
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
}

impl KeyState {
    /// Whether anything is known of the key: a write was recorded.
    pub fn known(&self) -> bool {
        self.issued > 0
    }

    fn decode(word: u64) -> KeyState {
        let issued = (word & ISSUED_MASK) as u32;
        let gap = (word >> FLOOR_SHIFT) & GAP_MASK;
        let floor = if gap == GAP_NONE { 0 } else { issued.saturating_sub(gap as u32) };
        KeyState { issued, floor, pending: ((word >> PENDING_SHIFT) & PENDING_MASK) as u32, put: word & WIN_PUT != 0, delete: word & WIN_DEL != 0 }
    }
}

/// The word of a key written once by a load whose write was acknowledged.
const LOADED: u64 = 1 | WIN_PUT | GRP_PUT;

/// Begins a write on `word`: the new word and the write's number (`None`: numbers exhausted).
fn begun(word: u64, kind: WriteKind) -> Option<u64> {
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
    let flags = (word & (WIN_PUT | WIN_DEL)) | win | grp_bits;
    Some((issued + 1) | fgap << FLOOR_SHIFT | ggap << GROUP_SHIFT | pending << PENDING_SHIFT | flags)
}

/// Finishes a write on `word`: acknowledged or failed.
fn finished(word: u64, acked: bool) -> u64 {
    let pending = (word >> PENDING_SHIFT) & PENDING_MASK;
    let pending = if pending == PENDING_MAX { PENDING_MAX } else { pending.saturating_sub(1) };
    let mut w = (word & !(PENDING_MASK << PENDING_SHIFT)) | pending << PENDING_SHIFT;
    let ggap = (word >> GROUP_SHIFT) & GAP_MASK;
    let fgap = (word >> FLOOR_SHIFT) & GAP_MASK;
    // the floor rises to the group's first write, with the group's kinds as the window's
    let floor_lower = fgap == GAP_NONE || ggap < fgap;
    if acked && ggap != GAP_NONE && floor_lower {
        let grp = word & (GRP_PUT | GRP_DEL);
        w = (w & !(GAP_MASK << FLOOR_SHIFT) & !(WIN_PUT | WIN_DEL)) | ggap << FLOOR_SHIFT | grp >> 2;
    }
    w
}

/// Per key, its writes' numbers and what a read may see (see the module's doc).
pub struct WriteRecord {
    chunks: Vec<OnceLock<Box<[AtomicU64]>>>,
    /// Keys recorded, 0..keys.
    keys: u64,
}

impl WriteRecord {
    /// A record of `keys` keys (at most [`MAX_KEYS`]), none written.
    pub fn new(keys: u64) -> WriteRecord {
        let keys = keys.min(MAX_KEYS);
        let n = keys.div_ceil(CHUNK as u64) as usize;
        WriteRecord { chunks: (0..n).map(|_| OnceLock::new()).collect(), keys }
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

    /// Starts a write of `key`: its number (`None`: the key is beyond the record, or its
    /// numbers are exhausted; the write then goes unrecorded).
    pub fn begin(&self, key: u64, kind: WriteKind) -> Option<u32> {
        let slot = self.slot(key)?;
        let old = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| begun(w, kind)).ok()?;
        Some((old & ISSUED_MASK) as u32 + 1)
    }

    /// Ends a write begun with [`WriteRecord::begin`]: acknowledged by the server or not.
    pub fn finish(&self, key: u64, acked: bool) {
        if let Some(slot) = self.peek(key) {
            let _ = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| Some(finished(w, acked)));
        }
    }

    /// What is known of `key` now.
    pub fn state(&self, key: u64) -> KeyState {
        self.peek(key).map(|s| KeyState::decode(s.load(Ordering::Acquire))).unwrap_or_default()
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
        self.chunks.iter().enumerate().filter_map(|(c, chunk)| chunk.get().map(|words| (c, words))).flat_map(|(c, words)| {
            words.iter().enumerate().filter_map(move |(i, w)| {
                let s = KeyState::decode(w.load(Ordering::Acquire));
                s.known().then_some((((c as u64) << CHUNK_BITS) + i as u64, s))
            })
        })
    }

    /// Every key with a recorded write, with its state, in key order; writes still in flight
    /// count as finished without an acknowledgement (what a record saved after its run knows).
    pub fn settled(&self) -> impl Iterator<Item = (u64, KeyState)> + '_ {
        self.chunks.iter().enumerate().filter_map(|(c, chunk)| chunk.get().map(|words| (c, words))).flat_map(|(c, words)| {
            words.iter().enumerate().filter_map(move |(i, w)| {
                let s = KeyState::decode(w.load(Ordering::Acquire));
                s.known().then(|| (((c as u64) << CHUNK_BITS) + i as u64, KeyState { pending: 0, ..s }))
            })
        })
    }

    /// Sets `key` to a state saved by [`WriteRecord::settled`] (no write in flight).
    pub fn restore(&self, key: u64, s: &KeyState) {
        if let Some(slot) = self.slot(key) {
            let gap = (s.issued - s.floor.min(s.issued)) as u64;
            let fgap = if s.floor == 0 || gap >= GAP_NONE { GAP_NONE } else { gap };
            let flags = if s.put { WIN_PUT | GRP_PUT } else { 0 } | if s.delete { WIN_DEL | GRP_DEL } else { 0 };
            slot.store(s.issued as u64 | fgap << FLOOR_SHIFT | GAP_NONE << GROUP_SHIFT | flags, Ordering::Release);
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

    fn st(r: &WriteRecord, k: u64) -> (u32, u32, u32, bool, bool) {
        let s = r.state(k);
        (s.issued, s.floor, s.pending, s.put, s.delete)
    }

    #[test]
    fn one_write_at_a_time_raises_the_floor_to_each() {
        let r = WriteRecord::new(10);
        assert_eq!(r.state(3), KeyState::default());
        assert_eq!(r.begin(3, Put), Some(1));
        assert_eq!(st(&r, 3), (1, 0, 1, true, false), "in flight: nothing acknowledged yet");
        r.finish(3, true);
        assert_eq!(st(&r, 3), (1, 1, 0, true, false));
        assert_eq!(r.begin(3, Put), Some(2));
        assert_eq!(st(&r, 3), (2, 1, 1, true, false), "write 1 or 2 may be read");
        r.finish(3, true);
        assert_eq!(st(&r, 3), (2, 2, 0, true, false));
        assert_eq!(r.state(4), KeyState::default(), "keys are separate");
    }

    #[test]
    fn overlapping_writes_keep_both_possible_until_a_later_group() {
        let r = WriteRecord::new(1);
        r.begin(0, Put);
        r.finish(0, true);
        assert_eq!(r.begin(0, Put), Some(2));
        assert_eq!(r.begin(0, Put), Some(3));
        r.finish(0, true); // 3 acknowledged first: 2 may still land after it
        assert_eq!(st(&r, 0), (3, 2, 1, true, false));
        r.finish(0, true);
        assert_eq!(st(&r, 0), (3, 2, 0, true, false), "2 and 3 overlapped: either may win");
        r.begin(0, Put);
        r.finish(0, true);
        assert_eq!(st(&r, 0), (4, 4, 0, true, false), "a write sent after both supersedes them");
    }

    #[test]
    fn a_failed_write_stays_possible_until_a_later_write_is_acknowledged() {
        let r = WriteRecord::new(1);
        r.begin(0, Put);
        r.finish(0, true);
        r.begin(0, Put);
        r.finish(0, false);
        assert_eq!(st(&r, 0), (2, 1, 0, true, false), "1 acknowledged, 2 may or may not have landed");
        r.begin(0, Put);
        r.finish(0, true);
        assert_eq!(st(&r, 0), (3, 3, 0, true, false));
    }

    #[test]
    fn deletes_are_kinds_of_the_window() {
        let r = WriteRecord::new(1);
        r.begin(0, Put);
        r.finish(0, true);
        r.begin(0, Delete);
        assert_eq!(st(&r, 0), (2, 1, 1, true, true), "the row or no row");
        r.finish(0, true);
        assert_eq!(st(&r, 0), (2, 2, 0, false, true), "only the delete may be seen");
        r.begin(0, Put);
        r.finish(0, false);
        assert_eq!(st(&r, 0), (3, 2, 0, true, true), "a failed upsert after the delete: either");
    }

    #[test]
    fn a_load_known_complete_and_a_saved_state_restore() {
        let r = WriteRecord::new(100_000);
        r.mark_loaded(70_000);
        assert_eq!(st(&r, 70_000), (1, 1, 0, true, false));
        assert_eq!(r.begin(70_000, Put), Some(2));
        r.finish(70_000, true);
        r.begin(5, Put);
        let saved: Vec<(u64, KeyState)> = r.settled().collect();
        assert_eq!(saved.iter().map(|(k, s)| (*k, s.issued, s.floor, s.pending)).collect::<Vec<_>>(), [(5, 1, 0, 0), (70_000, 2, 2, 0)]);
        let back = WriteRecord::new(100_000);
        for (k, s) in &saved {
            back.restore(*k, s);
        }
        assert_eq!(back.state(70_000), saved[1].1);
        assert_eq!(back.state(5), saved[0].1);
        assert_eq!(back.begin(70_000, Put), Some(3));
        back.finish(70_000, true);
        assert_eq!(st(&back, 70_000), (3, 3, 0, true, false), "a restored key goes on as if never saved");
    }

    #[test]
    fn keys_beyond_the_record_are_not_recorded_and_chunks_are_allocated_as_touched() {
        let r = WriteRecord::new(3 * CHUNK as u64);
        assert_eq!(r.begin(3 * CHUNK as u64, Put), None);
        let empty = r.bytes();
        r.begin(2 * CHUNK as u64 + 1, Put);
        assert_eq!(r.bytes() - empty, CHUNK as u64 * 8, "one chunk of 8-byte words");
        assert_eq!(WriteRecord::new(u64::MAX).capacity(), MAX_KEYS);
    }

    #[test]
    fn long_gaps_forget_the_floor_rather_than_invent_one() {
        let r = WriteRecord::new(1);
        r.begin(0, Put);
        r.finish(0, true);
        for _ in 0..1100 {
            r.begin(0, Put);
            r.finish(0, false);
        }
        let s = r.state(0);
        assert_eq!((s.issued, s.floor), (1101, 0), "more failed writes than the gap holds: floor unknown");
        r.begin(0, Put);
        r.finish(0, true);
        assert_eq!(r.state(0).floor, 1102);
    }

    #[test]
    fn concurrent_writers_leave_a_consistent_word() {
        let r = std::sync::Arc::new(WriteRecord::new(4));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for i in 0..5000u64 {
                        let k = (i + t) % 4;
                        r.begin(k, if i % 7 == 0 { Delete } else { Put });
                        r.finish(k, i % 3 != 0);
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
