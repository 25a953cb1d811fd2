//! Saving and reading what each interval of a run asked for under a rate or a schedule
//! (`interval_load`: the rate the schedule intended, the operations started, the requests in
//! flight allowed, the stage), one row per interval, written as the run goes. A table added
//! beside the version-1 ones: builds that do not know it ignore it.

use super::{RunId, Store, StoreError};
use crate::stats::IntervalLoad;
use rusqlite::params;

/// The table, created when missing by every build that knows it.
pub(super) const INTERVAL_LOAD: &str = "
CREATE TABLE IF NOT EXISTS interval_load (
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx           INTEGER NOT NULL,
    offered_per_s REAL,
    started       INTEGER NOT NULL,
    concurrency   INTEGER,
    stage         INTEGER NOT NULL,
    stage_label   TEXT    NOT NULL,
    PRIMARY KEY (run_id, idx)
);
";

impl Store {
    /// Saves what one interval of `run` asked for.
    pub fn add_interval_load(&self, run: RunId, load: &IntervalLoad) -> Result<(), StoreError> {
        let offered = load.offered_per_s.filter(|x| x.is_finite());
        self.conn().execute(
            "INSERT OR REPLACE INTO interval_load (run_id, idx, offered_per_s, started, concurrency, stage, stage_label) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![run, load.index, offered, load.started as i64, load.concurrency, load.stage, load.stage_label],
        )?;
        Ok(())
    }

    /// What every interval of `run` asked for, by interval (none for a run without a rate or a
    /// schedule, or saved by a build that did not record it).
    pub fn interval_loads(&self, run: RunId) -> Result<Vec<IntervalLoad>, StoreError> {
        let conn = self.conn();
        let mut q =
            conn.prepare_cached("SELECT idx, offered_per_s, started, concurrency, stage, stage_label FROM interval_load WHERE run_id = ?1 ORDER BY idx")?;
        let rows = q.query_map(params![run], |r| {
            Ok(IntervalLoad {
                index: r.get(0)?,
                offered_per_s: r.get(1)?,
                started: r.get::<_, i64>(2)?.max(0) as u64,
                concurrency: r.get(3)?,
                stage: r.get(4)?,
                stage_label: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_round_trip_and_leave_with_their_run() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run("kv", &Default::default(), &Default::default(), &[], 0).unwrap();
        let a = IntervalLoad { index: 3, offered_per_s: Some(250.5), started: 251, concurrency: None, stage: 1, stage_label: "hold 10s".into() };
        let b = IntervalLoad { index: 4, offered_per_s: None, started: 90, concurrency: Some(16), stage: 2, stage_label: "16 for 5s".into() };
        store.add_interval_load(id, &b).unwrap();
        store.add_interval_load(id, &a).unwrap();
        assert_eq!(store.interval_loads(id).unwrap(), [a, b]);
        store.finish_run(id, crate::store::RunStatus::Completed, &Default::default(), 1).unwrap();
        store.delete_run(id).unwrap();
        assert!(store.interval_loads(id).unwrap().is_empty());
    }
}
