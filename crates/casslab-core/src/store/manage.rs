//! Looking after saved runs: deleting them (never one that is still running: its process is
//! alive and writing) and changing their tags. Tags are free text; a tag of the form
//! `key=value` has a key, and setting `key=other` replaces it. What to delete or tag is the
//! caller's choice; this file only keeps the store consistent.

use super::{RunId, RunStatus, Store, StoreError};
use rusqlite::params;

/// The key of a tag: `experiment` for `experiment=cache`, the whole tag when it has no `=`.
pub fn tag_key(tag: &str) -> &str {
    tag.split_once('=').map_or(tag, |(k, _)| k)
}

impl Store {
    /// Deletes a run and everything saved with it (intervals, histograms, server samples,
    /// events, traces, tags). A run whose process is still running is refused
    /// ([`StoreError::StillRunning`]); a crashed one may be deleted.
    pub fn delete_run(&self, run: RunId) -> Result<(), StoreError> {
        if self.run(run)?.status == RunStatus::Running {
            return Err(StoreError::StillRunning(run));
        }
        self.conn().execute("DELETE FROM runs WHERE id = ?1", params![run])?;
        Ok(())
    }

    /// Sets `tag` on a run: a `key=value` tag replaces the run's tags with the same key; a
    /// plain word is added (once).
    pub fn set_tag(&self, run: RunId, tag: &str) -> Result<(), StoreError> {
        if tag.contains('=') {
            self.remove_tag(run, tag_key(tag))?;
        }
        self.add_tag(run, tag)
    }

    /// Removes the run's tags whose key is `key` (`key` itself, or `key=…`); the number removed.
    pub fn remove_tag(&self, run: RunId, key: &str) -> Result<usize, StoreError> {
        self.run(run)?;
        let pattern = format!("{}=%", key.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
        Ok(self.conn().execute("DELETE FROM run_tags WHERE run_id = ?1 AND (tag = ?2 OR tag LIKE ?3 ESCAPE '\\')", params![run, key, pattern])?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::stats::{IntervalSample, OpStats, Phase};
    use crate::store::RunSummary;

    fn begin(store: &Store, tags: &[&str]) -> RunId {
        let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
        store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &tags, 1_000).unwrap()
    }

    #[test]
    fn a_finished_run_is_deleted_with_everything_a_running_one_is_refused() {
        let store = Store::open_in_memory().unwrap();
        let done = begin(&store, &["a"]);
        let mut st = OpStats::default();
        st.record_ok(1_000, 900);
        store
            .add_interval(done, &IntervalSample { index: 0, phase: Phase::Run, start_ms: 0, end_ms: 1000, ops: vec![("read".into(), st)], backlog: 0 })
            .unwrap();
        store.finish_run(done, RunStatus::Completed, &RunSummary::default(), 2_000).unwrap();
        let running = begin(&store, &[]);

        assert!(matches!(store.delete_run(running), Err(StoreError::StillRunning(id)) if id == running));
        store.delete_run(done).unwrap();
        assert!(matches!(store.run(done), Err(StoreError::NoSuchRun(_))));
        assert!(matches!(store.intervals(done), Err(StoreError::NoSuchRun(_))));
        assert_eq!(store.runs(10).unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), [running]);
        assert!(matches!(store.delete_run(done), Err(StoreError::NoSuchRun(_))));
    }

    #[test]
    fn a_keyed_tag_replaces_its_key_and_plain_tags_add() {
        let store = Store::open_in_memory().unwrap();
        let id = begin(&store, &["variant=a", "baseline", "variant_x=1"]);
        store.set_tag(id, "variant=b").unwrap();
        store.set_tag(id, "nightly").unwrap();
        store.set_tag(id, "nightly").unwrap();
        let mut tags = store.run(id).unwrap().tags;
        tags.sort();
        assert_eq!(tags, ["baseline", "nightly", "variant=b", "variant_x=1"], "variant_x is another key");
        assert_eq!(store.remove_tag(id, "baseline").unwrap(), 1);
        assert_eq!(store.remove_tag(id, "variant").unwrap(), 1);
        assert_eq!(store.remove_tag(id, "absent").unwrap(), 0);
        let mut tags = store.run(id).unwrap().tags;
        tags.sort();
        assert_eq!(tags, ["nightly", "variant_x=1"]);
        assert!(matches!(store.set_tag(99, "x"), Err(StoreError::NoSuchRun(99))));
        assert_eq!((tag_key("a=b=c"), tag_key("plain")), ("a", "plain"));
    }
}
