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
pub mod write_values;

pub use crate::stats::checked_reads::{Overlap, VerifyCounts, VerifyStats, Violation};
pub use classify::{Class, Found};
pub use marks::written_key;
pub use record::{KeyState, WriteKind, WriteRecord};
pub use table_model::{Column, KeyPart, Table};

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
    /// Whether writes are recorded in this run: reads are checked (`verify:`, `--verify`), or
    /// vector searches are judged for recall; when not, the tables only make the load's values.
    pub on: bool,
    /// Whether some operation checks its reads (else the record serves recall alone).
    pub reads_checked: bool,
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
            reads_checked: on,
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
    /// Reads of `table` are checked against the run's writes (`reads`), or its writes are
    /// recorded for the recall of vector searches.
    Checking { table: String, keys_known: u64, record_bytes: u64, reads: bool },
    /// A table's reads are not checked (or, when no read is, its vector searches not judged),
    /// and why.
    NotChecked { table: String, why: String, reads: bool },
    /// An operation asked for verification that casslab cannot give it, and why.
    OpNotVerified { op: String, why: String },
    /// A vector search's recall@k is measured (`why` none), or not, and why.
    Recall { op: String, k: Option<u32>, why: Option<String> },
}

impl VerifyNotice {
    /// Whether it says that something asked for is not verified.
    pub fn is_warning(&self) -> bool {
        !matches!(self, VerifyNotice::Checking { .. } | VerifyNotice::Recall { why: None, .. })
    }
}

impl fmt::Display for VerifyNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyNotice::Checking { table, keys_known, record_bytes, reads } => write!(
                f,
                "{} ({} keys known at the start; the write record takes {:.1} MB)",
                if *reads {
                    format!("verifying reads of {table} against every write")
                } else {
                    format!("recording every write to {table}, for the recall of vector searches")
                },
                crate::units::grouped(*keys_known),
                *record_bytes as f64 / 1e6
            ),
            VerifyNotice::NotChecked { table, why, reads: true } => write!(f, "reads of {table} are not verified: {why}"),
            VerifyNotice::NotChecked { table, why, reads: false } => write!(f, "the vector searches of table {table} are not judged for recall: {why}"),
            VerifyNotice::OpNotVerified { op, why } => write!(f, "{op}: not verified: {why}"),
            VerifyNotice::Recall { op, k, why: None } => {
                let k = k.map_or("k".to_string(), |k| k.to_string());
                write!(
                    f,
                    "{op}: recall@{k} against the exact {k} nearest of the vectors written, found by brute force on a thread of its own (at most half a core; searches it has no time for are not judged)"
                )
            }
            VerifyNotice::Recall { op, why: Some(why), .. } => write!(f, "{op}: recall not measured: {why}"),
        }
    }
}
