//! A verification pass's findings: per table, the keys read back, the rows expected and found,
//! each class of what came back, the reads that failed, and a checksum of the data set — the
//! sum of a hash of every row found (its key and values), so that two passes over the same
//! data (before and after a restart, a node replacement, an upgrade, a migration) agree on it
//! exactly when they found the same rows. Reading is `session::verify_pass`'s; this adds up.

use super::classify::{classify, Class, Expiry, Judged};
use super::record::KeyState;
use super::write_values::{key_bits, table_seed};
use super::{Table, VerifyCounts, Violation};
use crate::gen::GeneratorSet;
use scylla::value::CqlValue;
use serde::Serialize;

/// Violations a pass keeps per table.
pub const PASS_SAMPLES: usize = 20;

/// One table's pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TablePass {
    pub table: String,
    /// Keys read back (every key the record knows).
    pub keys: u64,
    /// Keys where a row is expected (an upsert may be the last write).
    pub rows_expected: u64,
    pub rows_found: u64,
    /// Classes of what came back (`ok` included).
    pub counts: VerifyCounts,
    /// Reads that failed (timeouts, unavailable replicas, …).
    pub errors: u64,
    /// Sum of a hash of every row found, as hex.
    pub checksum: String,
    #[serde(skip)]
    sum: u64,
    pub violations: Vec<Violation>,
}

impl TablePass {
    pub fn new(table: &str) -> TablePass {
        TablePass { table: table.to_string(), checksum: format!("{:016x}", 0), ..TablePass::default() }
    }

    /// Rows found that are not what the writes left: stale, corrupt or resurrected.
    pub fn mismatched(&self) -> u64 {
        self.counts.stale + self.counts.corrupt + self.counts.resurrected + self.counts.expired
    }

    /// Counts one key's read: `state` what the record says of it, `row` what came back
    /// (`Err`: the read failed, in words), its key shown as `key`.
    pub fn add(
        &mut self,
        gens: &GeneratorSet,
        t: &Table,
        index: u64,
        state: &KeyState,
        row: Result<Option<Vec<Option<CqlValue>>>, String>,
        key: impl FnOnce() -> String,
    ) {
        self.keys += 1;
        if state.put {
            self.rows_expected += 1;
        }
        let row = match row {
            Ok(r) => r,
            Err(_) => {
                self.errors += 1;
                return;
            }
        };
        let ns = t.key_ns(index);
        let bits = t.key_bits(&ns);
        let (found, bad) = match &row {
            None => (super::Found::Absent, None),
            Some(cols) => {
                self.rows_found += 1;
                self.sum = self.sum.wrapping_add(row_hash(key_bits(table_seed(&t.name), &ns), cols));
                self.checksum = format!("{:016x}", self.sum);
                t.check_row(gens, bits, state, state.issued, cols.iter().enumerate().map(|(i, v)| (i, v.as_ref())))
            }
        };
        let every: Vec<usize> = (0..t.columns.len()).collect();
        let judged = Judged { stale_checkable: t.shows_every_write(&every), one_row: true, deletes: t.deletes };
        // a pass knows no write's time: rows that expire may be gone
        let expiry = if t.times.is_some() { Expiry::Unknown } else { Expiry::Live };
        let (class, _) = classify(state, state, found, expiry, judged);
        self.counts.add(class, false);
        if class.is_violation() && self.violations.len() < PASS_SAMPLES {
            let col = bad.or(if t.columns.is_empty() { None } else { Some(0) });
            let shown = |v: Option<&CqlValue>| super::write_values::show(v);
            let got = match (&row, col) {
                (None, _) => "no row".to_string(),
                (Some(cols), Some(c)) => format!("{}={}", t.columns[c].name, shown(cols.get(c).and_then(Option::as_ref))),
                (Some(_), None) => "a row".to_string(),
            };
            let expected = match (class, col) {
                (Class::Resurrected, _) => format!("write {}: no row (deleted)", state.floor),
                (_, Some(c)) => {
                    let w = if t.columns[c].load_only { 1 } else { state.floor.max(1) };
                    let v = t.columns[c].gens.first().map(|g| t.write_value(gens, *g, bits, w));
                    let v = match (t.bytes, v) {
                        (Some(encode), Some(v)) => Some(CqlValue::Blob(encode(&v))),
                        (_, v) => v,
                    };
                    format!("write {}: {}={}", state.floor, t.columns[c].name, shown(v.as_ref()))
                }
                _ => format!("write {}", state.floor),
            };
            self.violations.push(Violation {
                op: "verify".into(),
                class,
                key: format!("{} {}", t.name, key()),
                expected,
                got,
                at_unix_ms: crate::units::unix_now_ms(),
            });
        }
    }
}

/// A row's hash: its key's and each value's (as the driver prints it), combined in column order.
fn row_hash(key: u64, cols: &[Option<CqlValue>]) -> u64 {
    cols.iter().fold(key, |h, v| table_seed(&format!("{h:x}{v:?}")))
}

/// A whole pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PassReport {
    pub workload: String,
    pub keyspace: String,
    /// The consistency level read at (CQL).
    pub consistency: Option<String>,
    /// Where the expected state came from: the load, or the record a run left.
    pub expected_from: String,
    pub tables: Vec<TablePass>,
    pub duration_s: f64,
}

impl PassReport {
    /// Whether every key came back as expected and every read succeeded.
    pub fn clean(&self) -> bool {
        self.tables.iter().all(|t| t.counts.violations() == 0 && t.errors == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::table_model::{Column, KeyPart};
    use crate::verify::WriteKind;

    #[test]
    fn a_pass_counts_rows_and_classes_and_sums_what_it_found() {
        let gens = GeneratorSet::build(&crate::yaml::from_str("k: { type: bigint, dist: sequence, max: 10 }\nv: { type: blob, size: 8 }").unwrap()).unwrap();
        let key = KeyPart { column: "k".into(), gens: vec![0], base: 0, span: Some(10) };
        let t = Table::new("kv", vec![key], vec![Column { name: "v".into(), gens: vec![1], load_only: false, nullable: false }], vec![vec![0]]);
        for k in 0..4 {
            t.record.mark_loaded(k);
        }
        let b = t.record.begin(3, WriteKind::Delete).unwrap();
        t.record.finish(3, &b, true);
        let good = |k: u64| Some(vec![Some(t.write_value(&gens, 1, t.key_bits(&t.key_ns(k)), 1))]);
        let mut p = TablePass::new("kv");
        let mut q = TablePass::new("kv");
        for (k, row) in [(0, good(0)), (1, None), (2, Some(vec![Some(CqlValue::Blob(vec![9]))])), (3, good(3))] {
            p.add(&gens, &t, k, &t.record.state(k), Ok(row.clone()), || format!("k={k}"));
            if k != 3 {
                q.add(&gens, &t, k, &t.record.state(k), Ok(row), || format!("k={k}"));
            }
        }
        p.add(&gens, &t, 0, &t.record.state(0), Err("timeout".into()), || "k=0".into());
        assert_eq!((p.keys, p.rows_expected, p.rows_found, p.errors), (5, 4, 3, 1));
        assert_eq!((p.counts.ok, p.counts.missing, p.counts.corrupt, p.counts.resurrected, p.mismatched()), (1, 1, 1, 1, 2));
        assert_eq!(p.violations.iter().map(|v| v.class).collect::<Vec<_>>(), [Class::Missing, Class::Corrupt, Class::Resurrected]);
        assert!(p.violations[1].key == "kv k=2" && p.violations[1].got == "v=0x09", "{:?}", p.violations[1]);
        assert_ne!(p.checksum, q.checksum, "a row more or less changes the checksum");
        let mut again = TablePass::new("kv");
        for (k, row) in [(2, Some(vec![Some(CqlValue::Blob(vec![9]))])), (0, good(0)), (1, None)] {
            again.add(&gens, &t, k, &t.record.state(k), Ok(row), String::new);
        }
        assert_eq!(again.checksum, q.checksum, "in any order");
    }
}
