//! Saving and reading a run's profiles (`profile::Profile`: one node's stacks of one kind, with
//! their weights per second of the run), one row each, the profile as deflated JSON. Added
//! beside schema version 1; builds that do not know the table ignore it.

use super::{RunId, Store, StoreError};
use crate::profile::Profile;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use rusqlite::params;
use std::io::{Read, Write};

pub(super) const PROFILES: &str = "
CREATE TABLE IF NOT EXISTS profiles (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    node   TEXT    NOT NULL,
    kind   TEXT    NOT NULL,
    data   BLOB    NOT NULL
);
CREATE INDEX IF NOT EXISTS profiles_run ON profiles (run_id);
";

impl Store {
    /// Saves profiles of `run` (beside those it has).
    pub fn add_profiles(&self, run: RunId, profiles: &[Profile]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare_cached("INSERT INTO profiles (run_id, node, kind, data) VALUES (?1, ?2, ?3, ?4)")?;
            for p in profiles {
                let json = serde_json::to_vec(p).map_err(|source| StoreError::Encode { what: "a profile", error: source })?;
                let mut enc = DeflateEncoder::new(Vec::with_capacity(json.len() / 4), flate2::Compression::fast());
                enc.write_all(&json)?;
                insert.execute(params![run, p.node, p.kind.as_str(), enc.finish()?])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The profiles of `run`, in the order saved (none when it was not profiled).
    pub fn profiles(&self, run: RunId) -> Result<Vec<Profile>, StoreError> {
        let conn = self.conn();
        let mut q = conn.prepare_cached("SELECT data FROM profiles WHERE run_id = ?1 ORDER BY rowid")?;
        let rows = q.query_map(params![run], |r| r.get::<_, Vec<u8>>(0))?;
        let mut out = Vec::new();
        for row in rows {
            let mut json = Vec::new();
            DeflateDecoder::new(row?.as_slice()).read_to_end(&mut json)?;
            out.push(serde_json::from_slice(&json).map_err(|e| StoreError::Corrupt { what: format!("run {run} profile"), detail: e.to_string() })?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::profile::{ProfileBuilder, ProfileKind};

    #[test]
    fn profiles_are_saved_with_their_run_and_go_with_it() {
        let store = Store::open_in_memory().unwrap();
        let run = store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 0).unwrap();
        assert!(store.profiles(run).unwrap().is_empty());
        let mut b = ProfileBuilder::new("127.0.0.1", ProfileKind::Alloc, "test");
        b.add(&["main", "read"], Some(1500), 4096);
        b.add(&["main", "write"], None, 10);
        let p = b.finish();
        store.add_profiles(run, std::slice::from_ref(&p)).unwrap();
        assert_eq!(store.profiles(run).unwrap(), vec![p]);
        store.finish_run(run, crate::store::RunStatus::Completed, &Default::default(), 1).unwrap();
        store.delete_run(run).unwrap();
        assert!(store.profiles(run).unwrap().is_empty(), "deleted with its run");
    }
}
