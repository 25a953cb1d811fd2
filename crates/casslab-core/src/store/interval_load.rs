//! Saving and reading what each interval of a run asked for under a rate or a schedule
//! (`interval_load`: the rate the schedule intended, the operations started, the requests in
//! flight allowed, the stage, how the level went over it), one row per interval, written as the
//! run goes. A table added beside the version-1 ones: builds that do not know it ignore it. An
//! interval's phase is its row's in `intervals`.

use super::{RunId, Store, StoreError};
use crate::load_shape::Course;
use crate::stats::{IntervalLoad, Phase};
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

/// Columns added to `interval_load` after it: how the level went over the interval (`held`,
/// `moving`, `between`; NULL in rows of builds that did not record it) and the level held.
pub(super) const COURSE_COLUMNS: [(&str, &str); 2] = [("course", "TEXT"), ("held_level", "REAL")];

fn course_cells(c: Option<Course>) -> (Option<&'static str>, Option<f64>) {
    match c {
        Some(Course::Held(level)) => (Some("held"), Some(level)),
        Some(Course::Moving) => (Some("moving"), None),
        Some(Course::Between) => (Some("between"), None),
        None => (None, None),
    }
}

fn course_of(kind: Option<String>, level: Option<f64>) -> Option<Course> {
    match (kind.as_deref(), level) {
        (Some("held"), Some(l)) => Some(Course::Held(l)),
        (Some("moving"), _) => Some(Course::Moving),
        (Some("between"), _) => Some(Course::Between),
        _ => None,
    }
}

impl Store {
    /// Saves what one interval of `run` asked for.
    pub fn add_interval_load(&self, run: RunId, load: &IntervalLoad) -> Result<(), StoreError> {
        let offered = load.offered_per_s.filter(|x| x.is_finite());
        let (course, held) = course_cells(load.course);
        self.conn().execute(
            "INSERT OR REPLACE INTO interval_load (run_id, idx, offered_per_s, started, concurrency, stage, stage_label, course, held_level)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![run, load.index, offered, load.started as i64, load.concurrency, load.stage, load.stage_label, course, held],
        )?;
        Ok(())
    }

    /// What every interval of `run` asked for, by interval (none for a run without a rate or a
    /// schedule, or saved by a build that did not record it).
    pub fn interval_loads(&self, run: RunId) -> Result<Vec<IntervalLoad>, StoreError> {
        let conn = self.conn();
        let mut q = conn.prepare_cached(
            "SELECT l.idx, l.offered_per_s, l.started, l.concurrency, l.stage, l.stage_label, l.course, l.held_level,
                    (SELECT i.phase FROM intervals i WHERE i.run_id = l.run_id AND i.idx = l.idx LIMIT 1)
             FROM interval_load l WHERE l.run_id = ?1 ORDER BY l.idx",
        )?;
        let rows = q.query_map(params![run], |r| {
            Ok(IntervalLoad {
                index: r.get(0)?,
                offered_per_s: r.get(1)?,
                started: r.get::<_, i64>(2)?.max(0) as u64,
                concurrency: r.get(3)?,
                stage: r.get(4)?,
                stage_label: r.get(5)?,
                course: course_of(r.get(6)?, r.get(7)?),
                phase: r.get::<_, Option<String>>(8)?.as_deref().and_then(Phase::parse).unwrap_or(Phase::Run),
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
        let a = IntervalLoad {
            index: 3,
            offered_per_s: Some(250.5),
            started: 251,
            concurrency: None,
            stage: 1,
            stage_label: "hold 10s".into(),
            phase: Phase::Run,
            course: Some(Course::Held(250.5)),
        };
        let b = IntervalLoad {
            index: 4,
            offered_per_s: None,
            started: 90,
            concurrency: Some(16),
            stage: 2,
            stage_label: "16 for 5s".into(),
            phase: Phase::Run,
            course: Some(Course::Moving),
        };
        store.add_interval_load(id, &b).unwrap();
        store.add_interval_load(id, &a).unwrap();
        assert_eq!(store.interval_loads(id).unwrap(), [a.clone(), b.clone()]);
        // the phase is the interval's
        let ops = vec![("read".to_string(), crate::stats::OpStats::default())];
        store.add_interval(id, &crate::stats::IntervalSample { index: 3, phase: Phase::Warmup, start_ms: 0, end_ms: 1000, ops, backlog: 0 }).unwrap();
        assert_eq!(store.interval_loads(id).unwrap(), [IntervalLoad { phase: Phase::Warmup, ..a }, b]);
        store.finish_run(id, crate::store::RunStatus::Completed, &Default::default(), 1).unwrap();
        store.delete_run(id).unwrap();
        assert!(store.interval_loads(id).unwrap().is_empty());
    }
}
