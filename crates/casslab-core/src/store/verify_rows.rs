//! Saving and reading what verified runs found and kept: the first violations of a run
//! (`verify_violations`: when, which operation, its class, the key, the write expected and what
//! came back) and the write records a verified run leaves for the next one on the same data
//! set (`verify_records`, by the token the data set's bookkeeping names the run with). Added
//! beside schema version 1; builds that do not know these tables ignore them.

use super::{RunId, Store, StoreError};
use crate::verify::{Class, Violation};
use rusqlite::{params, OptionalExtension};

pub(super) const VERIFY_TABLES: &str = "
CREATE TABLE IF NOT EXISTS verify_violations (
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    at_ms    INTEGER NOT NULL,
    op       TEXT    NOT NULL,
    class    TEXT    NOT NULL,
    key      TEXT    NOT NULL,
    expected TEXT    NOT NULL,
    got      TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS verify_violations_run ON verify_violations (run_id);
CREATE TABLE IF NOT EXISTS verify_records (
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    token      TEXT    NOT NULL,
    table_name TEXT    NOT NULL,
    record     BLOB    NOT NULL,
    PRIMARY KEY (token, table_name)
);
";

/// A violation as saved with its run: when it was found on the run's time axis.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedViolation {
    /// Milliseconds since the run started.
    pub at_ms: u64,
    pub op: String,
    pub class: Class,
    pub key: String,
    pub expected: String,
    pub got: String,
}

impl SavedViolation {
    /// `v` found at `at_ms` on the run's time axis.
    pub fn of(v: &Violation, at_ms: u64) -> SavedViolation {
        SavedViolation { at_ms, op: v.op.clone(), class: v.class, key: v.key.clone(), expected: v.expected.clone(), got: v.got.clone() }
    }
}

impl Store {
    /// Saves violations of `run`.
    pub fn add_violations(&self, run: RunId, found: &[SavedViolation]) -> Result<(), StoreError> {
        if found.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO verify_violations (run_id, at_ms, op, class, key, expected, got) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?;
            for v in found {
                insert.execute(params![run, v.at_ms as i64, v.op, v.class.as_str(), v.key, v.expected, v.got])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The saved violations of `run`, in the order found.
    pub fn violations(&self, run: RunId) -> Result<Vec<SavedViolation>, StoreError> {
        let conn = self.conn();
        let mut q = conn.prepare_cached("SELECT at_ms, op, class, key, expected, got FROM verify_violations WHERE run_id = ?1 ORDER BY rowid")?;
        let rows = q.query_map(params![run], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (at_ms, op, class, key, expected, got) = row?;
            let class =
                Class::parse(&class).ok_or_else(|| StoreError::Corrupt { what: format!("run {run} violation"), detail: format!("unknown class {class:?}") })?;
            out.push(SavedViolation { at_ms: at_ms.max(0) as u64, op, class, key, expected, got });
        }
        Ok(out)
    }

    /// Saves the write record of `table` that run `run` (named `token` in the data set's
    /// bookkeeping) leaves.
    pub fn save_record(&self, run: RunId, token: &str, table: &str, record: &[u8]) -> Result<(), StoreError> {
        self.conn()
            .execute("INSERT OR REPLACE INTO verify_records (run_id, token, table_name, record) VALUES (?1, ?2, ?3, ?4)", params![run, token, table, record])?;
        Ok(())
    }

    /// The write record of `table` the run named `token` left, if this store has it.
    pub fn record(&self, token: &str, table: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let conn = self.conn();
        Ok(conn.query_row("SELECT record FROM verify_records WHERE token = ?1 AND table_name = ?2", params![token, table], |r| r.get(0)).optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};

    #[test]
    fn violations_and_records_are_saved_with_their_run_and_go_with_it() {
        let store = Store::open_in_memory().unwrap();
        let run = store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 0).unwrap();
        let v =
            Violation { op: "read".into(), class: Class::Stale, key: "kv key=0x01".into(), expected: "write 3".into(), got: "write 2".into(), at_unix_ms: 0 };
        store.add_violations(run, &[SavedViolation::of(&v, 1_500)]).unwrap();
        let back = store.violations(run).unwrap();
        assert_eq!((back.len(), back[0].at_ms, back[0].class, back[0].key.as_str()), (1, 1_500, Class::Stale, "kv key=0x01"));
        store.save_record(run, "tok", "kv", &[1, 2, 3]).unwrap();
        assert_eq!(store.record("tok", "kv").unwrap(), Some(vec![1, 2, 3]));
        assert_eq!(store.record("tok", "other").unwrap(), None);
        store.finish_run(run, crate::store::RunStatus::Completed, &Default::default(), 1).unwrap();
        store.delete_run(run).unwrap();
        assert_eq!(store.record("tok", "kv").unwrap(), None, "deleted with its run");
    }
}
