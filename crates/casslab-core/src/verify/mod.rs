//! Verifying what was read against what was written. A verified write's values are a function
//! of its key and its write number (`write_values`); the loader keeps, per key, the numbers of its
//! writes (`record`: 8 bytes a key); a read's rows are matched to the writes that made them
//! (`table_model`) and classified (`classify`) as ok, stale, missing, corrupt, resurrected, expired —
//! or unchecked, when nothing is known of the key — and counted per operation and interval
//! (`verify_counts`). A [`Verifier`] holds a workload's verified tables for one run; the targets build
//! it from their statements or commands and consult it on every verified operation. The record
//! is saved after the run (`saved`) so a later run or `casslab verify` can go on from it, and
//! `pass_report` adds up a pass that `session::verify_pass` reads back every key a data set should hold.
//!
//! Not here: executing anything (the targets), when the record can be trusted — a load
//! skipped, a data set written since by a run that kept no record — (`engine::record_trust`), the
//! reports (`report`).

pub mod classify;
pub mod counters;
pub mod expiry;
pub mod marks;
#[cfg(test)]
mod model_tests;
pub mod op;
pub mod partition;
pub mod pass_report;
pub mod record;
pub mod saved;
pub mod table_model;
pub mod verify_build;
pub mod verify_counts;
pub mod write_values;

pub use classify::{Class, Found};
pub use marks::written_key;
pub use record::{KeyState, WriteKind, WriteRecord};
pub use table_model::{Column, KeyPart, Table};
pub use verify_counts::{Overlap, VerifyCounts, VerifyStats, Violation};

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Violations a run keeps (with key, expected write, what came back and when).
pub const RUN_SAMPLES: usize = 100;

/// A workload's verified tables for one run, and whether each is checked.
pub struct Verifier {
    pub tables: Vec<Arc<Table>>,
    /// Per table: whether its reads are judged (off when what it held before the run cannot be
    /// known).
    checking: Vec<AtomicBool>,
    /// Per table: whether its record can be trusted, so it may be saved for a later run.
    proven: Vec<AtomicBool>,
    /// Per table: the keys this loader owns, `(first n, count)` of its first key column, when it
    /// is one shard of several (its verified operations draw only those).
    owned: Vec<OnceLock<(i64, u64)>>,
    /// Whether reads are checked at all in this run (`verify:`, `--verify`); when not, the
    /// tables only make the load's values.
    pub on: bool,
    /// The tables the load writes, each with the `n` of its first key (when the load's keys
    /// can be known: one key column drawn from a sequence, the load's row i being n + i).
    pub loads: Vec<(usize, i64)>,
    /// Whether the run phase writes to a table of the verifier.
    pub run_writes: bool,
    /// What building it found worth telling (tables and operations not verified, and why).
    pub notices: Vec<VerifyNotice>,
}

impl Verifier {
    pub fn new(tables: Vec<Arc<Table>>, on: bool) -> Verifier {
        let n = tables.len();
        Verifier {
            tables,
            checking: (0..n).map(|_| AtomicBool::new(on)).collect(),
            proven: (0..n).map(|_| AtomicBool::new(false)).collect(),
            owned: (0..n).map(|_| OnceLock::new()).collect(),
            on,
            loads: Vec::new(),
            run_writes: false,
            notices: Vec::new(),
        }
    }

    /// Restricts the keys of table `t` that verified operations draw to `count` from `first`.
    pub fn set_owned(&self, t: usize, first: i64, count: u64) {
        if count > 0 {
            let _ = self.owned[t].set((first, count));
        }
    }

    #[inline]
    pub fn owned(&self, t: usize) -> Option<(i64, u64)> {
        self.owned[t].get().copied()
    }

    pub fn table(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| t.name == name)
    }

    /// Whether reads of table `t` are judged now.
    #[inline]
    pub fn checking(&self, t: usize) -> bool {
        self.checking[t].load(Ordering::Relaxed)
    }

    pub fn stop_checking(&self, t: usize) {
        self.checking[t].store(false, Ordering::Relaxed);
    }

    pub fn set_proven(&self, t: usize) {
        self.proven[t].store(true, Ordering::Relaxed);
    }

    pub fn is_proven(&self, t: usize) -> bool {
        self.proven[t].load(Ordering::Relaxed)
    }

    /// The records that can be trusted, encoded to be saved: (table, bytes). A shard saves
    /// only the keys it owns, so that the records of every shard add up to the data set's.
    pub fn saved_records(&self) -> Vec<(String, Vec<u8>)> {
        if !self.on {
            return Vec::new();
        }
        let saved = |i: usize, t: &Table| match self.owned(i) {
            None => saved::encode(&t.record, t.model),
            Some((first, count)) => saved::encode_keys(&t.record, t.model, |k| t.key_ns(k).first().is_some_and(|n| (n.wrapping_sub(first) as u64) < count)),
        };
        // a counter's record is of this run's increments only (see `counters`): not saved
        self.tables.iter().enumerate().filter(|(i, t)| self.is_proven(*i) && t.counters.is_none()).map(|(i, t)| (t.name.clone(), saved(i, t))).collect()
    }

    /// Bytes the records hold now.
    pub fn record_bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.record.bytes()).sum()
    }
}

/// What a run's verification needs from outside the engine: the token that names this run in
/// the data set's bookkeeping and its saved record in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunVerify {
    pub token: String,
}

impl RunVerify {
    /// A token no other run has: this process, its start and a random part.
    pub fn fresh() -> RunVerify {
        let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
        RunVerify { token: format!("{ms:x}-{:x}-{:08x}", std::process::id(), rand::random::<u32>()) }
    }
}

/// What the engine asks of whoever keeps saved records (the run session, from its store).
#[derive(Debug)]
pub enum VerifyRequest {
    /// The records run `token` saved for `tables`: (table, bytes) for those it has.
    Records { token: String, tables: Vec<String>, reply: tokio::sync::oneshot::Sender<Vec<(String, Vec<u8>)>> },
}

/// What verification tells the people running it.
#[derive(Debug, Clone, PartialEq)]
pub enum VerifyNotice {
    /// Reads of `table` are checked against the run's writes.
    Checking { table: String, keys_known: u64, record_bytes: u64 },
    /// A table's reads are not checked, and why.
    NotChecked { table: String, why: String },
    /// An operation asked for verification that casslab cannot give it, and why.
    OpNotVerified { op: String, why: String },
}

impl VerifyNotice {
    /// Whether it says that something asked for is not verified.
    pub fn is_warning(&self) -> bool {
        !matches!(self, VerifyNotice::Checking { .. })
    }
}

impl fmt::Display for VerifyNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyNotice::Checking { table, keys_known, record_bytes } => write!(
                f,
                "verifying reads of {table} against every write ({} keys known at the start; the write record takes {:.1} MB)",
                crate::units::grouped(*keys_known),
                *record_bytes as f64 / 1e6
            ),
            VerifyNotice::NotChecked { table, why } => write!(f, "reads of {table} are not verified: {why}"),
            VerifyNotice::OpNotVerified { op, why } => write!(f, "{op}: not verified: {why}"),
        }
    }
}
