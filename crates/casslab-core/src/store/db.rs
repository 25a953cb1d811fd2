//! The [`Store`] itself: one SQLite connection and the statements that write a run as it goes
//! and read runs back. Table layout lives in `migrations.rs`, row decoding in `rows.rs`.

use super::rows::{
    decode_figures, decode_packed_stats, decode_phase, decode_stats, encode, insert_stats_sql, stats_values, RawRun, FIGURES_COLUMNS, FIGURES_COLUMN_COUNT,
    SELECT_RUN, STATS_COLUMNS,
};
use super::{EncodedInterval, IntervalFigures, PackedInterval, RunId, RunProcess, RunRecord, RunStatus, RunSummary, StoreError, StoredInterval};
use crate::config::{RunConfig, RunEnvironment};
use crate::stats::{IntervalSample, OpStats, OpSummary, Phase};
use rusqlite::{params, Connection, OptionalExtension};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The results store. One connection, behind a mutex so the store can be shared
/// (`Arc<Store>`) between the engine's writer and the rest of the program.
pub struct Store {
    conn: Mutex<Connection>,
}

impl Store {
    /// Wraps a connection that `schema::configure` and `schema::migrate` made ready
    /// (the openers in `open.rs`).
    pub(super) fn from_connection(conn: Connection) -> Store {
        Store { conn: Mutex::new(conn) }
    }

    pub(super) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave the connection half-changed: an open
        // transaction is rolled back when it is dropped.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the start of a run (status `Running`, made by this process) and returns its id.
    pub fn begin_run(&self, workload: &str, config: &RunConfig, env: &RunEnvironment, tags: &[String], started_at_ms: i64) -> Result<RunId, StoreError> {
        let config_json = encode("the run config", config)?;
        let env_json = encode("the run environment", env)?;
        let process = RunProcess::current();
        let (pid, host, started) = match &process {
            Some(p) => (Some(p.pid), Some(p.host.as_str()), p.started.as_deref()),
            None => (None, None, None),
        };
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (workload, status, started_at_ms, config_version, config_json, env_json, pid, host, process_started)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![workload, RunStatus::Running.as_str(), started_at_ms, config.version, config_json, env_json, pid, host, started],
        )?;
        let id = tx.last_insert_rowid();
        for tag in tags {
            tx.execute("INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)", params![id, tag])?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Saves one sampling interval: one row per operation, committed at once.
    pub fn add_interval(&self, run: RunId, sample: &IntervalSample) -> Result<(), StoreError> {
        let duration_s = sample.duration_s();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let sql = insert_stats_sql("INSERT", "intervals", &["run_id", "idx", "phase", "start_ms", "end_ms", "backlog", "seq", "op", "ops_per_s"]);
            let mut insert = tx.prepare_cached(&sql)?;
            for (seq, (op, stats)) in sample.ops.iter().enumerate() {
                let ops_per_s = OpSummary::of(op, stats, duration_s).ops_per_s;
                let head: [&dyn rusqlite::ToSql; 9] =
                    [&run, &sample.index, &sample.phase.as_str(), &sample.start_ms, &sample.end_ms, &sample.backlog, &seq, op, &ops_per_s];
                let figures = stats_values(stats)?;
                let values = head.into_iter().chain(figures.iter().map(|b| b.as_ref() as &dyn rusqlite::ToSql));
                insert.execute(rusqlite::params_from_iter(values)).map_err(|e| missing_run(run, e))?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Saves an operation's histograms over a whole phase (replacing any saved before).
    pub fn add_histograms(&self, run: RunId, phase: Phase, op: &str, stats: &OpStats) -> Result<(), StoreError> {
        let sql = insert_stats_sql("INSERT OR REPLACE", "phase_histograms", &["run_id", "phase", "op"]);
        let head: [&dyn rusqlite::ToSql; 3] = [&run, &phase.as_str(), &op];
        let figures = stats_values(stats)?;
        let values = head.into_iter().chain(figures.iter().map(|b| b.as_ref() as &dyn rusqlite::ToSql));
        self.conn().execute(&sql, rusqlite::params_from_iter(values)).map_err(|e| missing_run(run, e))?;
        Ok(())
    }

    /// Records how a run ended, with its summary.
    pub fn finish_run(&self, run: RunId, status: RunStatus, summary: &RunSummary, ended_at_ms: i64) -> Result<(), StoreError> {
        let summary_json = encode("the run summary", summary)?;
        let changed = self.conn().execute(
            "UPDATE runs SET status = ?2, summary_json = ?3, ended_at_ms = ?4 WHERE id = ?1",
            params![run, status.as_str(), summary_json, ended_at_ms],
        )?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        Ok(())
    }

    /// Adds a tag to a saved run (no-op if it has it already).
    pub fn add_tag(&self, run: RunId, tag: &str) -> Result<(), StoreError> {
        self.conn().execute("INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)", params![run, tag]).map_err(|e| missing_run(run, e))?;
        Ok(())
    }

    /// The most recently begun runs, newest first.
    pub fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{SELECT_RUN} ORDER BY id DESC LIMIT ?1"))?;
        let rows = stmt.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], RawRun::from_row)?;
        let raws = rows.collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(|raw| raw.decode(&conn)).collect()
    }

    /// One saved run; [`StoreError::NoSuchRun`] if there is none with that id.
    pub fn run(&self, id: RunId) -> Result<RunRecord, StoreError> {
        let conn = self.conn();
        let raw = conn.query_row(&format!("{SELECT_RUN} WHERE id = ?1"), [id], RawRun::from_row).optional()?.ok_or(StoreError::NoSuchRun(id))?;
        raw.decode(&conn)
    }

    /// The runs that carry exactly `tag`, by id.
    pub fn runs_tagged(&self, tag: &str) -> Result<Vec<RunId>, StoreError> {
        let conn = self.conn();
        let mut q = conn.prepare_cached("SELECT run_id FROM run_tags WHERE tag = ?1 ORDER BY run_id")?;
        let ids = q.query_map([tag], |r| r.get(0))?.collect::<Result<Vec<RunId>, _>>()?;
        Ok(ids)
    }

    /// The runs saved as shards of the sharded run `run_id`, by id.
    pub fn shards_of(&self, run_id: &str) -> Result<Vec<RunId>, StoreError> {
        let conn = self.conn();
        let mut q = conn.prepare_cached("SELECT id FROM runs WHERE json_extract(config_json, '$.shard.run_id') = ?1 ORDER BY id")?;
        let ids = q.query_map([run_id], |r| r.get(0))?.collect::<Result<Vec<RunId>, _>>()?;
        Ok(ids)
    }

    /// The id of the most recently begun run, if any.
    pub fn latest_run(&self) -> Result<Option<RunId>, StoreError> {
        Ok(self.conn().query_row("SELECT MAX(id) FROM runs", [], |r| r.get(0))?)
    }

    /// A run's saved intervals, ordered by interval index, then in the order of the
    /// operations within the interval.
    pub fn intervals(&self, run: RunId) -> Result<Vec<StoredInterval>, StoreError> {
        let mut out = Vec::new();
        self.for_each_interval(run, |iv| {
            out.push(iv);
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `f` with each of a run's intervals in order, decoding one at a time: for long
    /// runs, whose decoded histograms would not fit in memory all at once.
    pub fn for_each_interval(&self, run: RunId, mut f: impl FnMut(StoredInterval) -> Result<(), StoreError>) -> Result<(), StoreError> {
        self.for_each_packed_interval(run, |p| {
            let row = p.unpack().map_err(|e| match e {
                StoreError::Corrupt { detail, .. } => StoreError::Corrupt { what: format!("run {run} interval {} statistics", p.index), detail },
                e => e,
            })?;
            f(row)
        })
    }

    /// Calls `f` with each of a run's interval rows in order, its histograms left encoded
    /// ([`PackedInterval`]): for holding every row of a long run at once.
    pub fn for_each_packed_interval(&self, run: RunId, mut f: impl FnMut(PackedInterval) -> Result<(), StoreError>) -> Result<(), StoreError> {
        let conn = self.conn();
        ensure_run(&conn, run)?;
        let mut stmt = conn
            .prepare_cached(&format!("SELECT idx, phase, start_ms, end_ms, backlog, op, {STATS_COLUMNS} FROM intervals WHERE run_id = ?1 ORDER BY idx, seq"))?;
        let mut rows = stmt.query([run])?;
        while let Some(r) = rows.next()? {
            let index: u32 = r.get(0)?;
            let what = |field: &str| format!("run {run} interval {index} {field}");
            f(PackedInterval {
                index,
                phase: decode_phase(&r.get::<_, String>(1)?, || what("phase"))?,
                start_ms: r.get(2)?,
                end_ms: r.get(3)?,
                backlog: r.get(4)?,
                op: r.get(5)?,
                stats: decode_packed_stats(r, 6, || what("statistics"))?,
            })?;
        }
        Ok(())
    }

    /// Calls `f` with each of a run's interval rows in order, as its figures: the percentiles
    /// saved beside the histograms, which are not read. Showing a long finished run this way
    /// is several times faster than decoding its histograms ([`Store::for_each_interval`]).
    pub fn for_each_interval_figures(&self, run: RunId, mut f: impl FnMut(IntervalFigures) -> Result<(), StoreError>) -> Result<(), StoreError> {
        self.figures_rows(run, "", |_, figures| f(figures))
    }

    /// Calls `f` with each of a run's interval rows in order, as its figures and its
    /// histograms as saved, encoded ([`EncodedInterval`]): what an export copies without
    /// decoding a histogram.
    pub fn for_each_encoded_interval(&self, run: RunId, mut f: impl FnMut(EncodedInterval) -> Result<(), StoreError>) -> Result<(), StoreError> {
        self.figures_rows(run, ", intended_hdr, service_hdr", |r, figures| {
            let n = FIGURES_COLUMN_COUNT;
            f(EncodedInterval { figures, intended_hdr: r.get(n)?, service_hdr: r.get(n + 1)? })
        })
    }

    /// Runs `f` on each interval row of `run` in order with its decoded figures; the row also
    /// holds the columns `more` names after the figures' ones.
    fn figures_rows(&self, run: RunId, more: &str, mut f: impl FnMut(&rusqlite::Row<'_>, IntervalFigures) -> Result<(), StoreError>) -> Result<(), StoreError> {
        let conn = self.conn();
        ensure_run(&conn, run)?;
        let mut stmt = conn.prepare_cached(&format!("SELECT {FIGURES_COLUMNS}{more} FROM intervals WHERE run_id = ?1 ORDER BY idx, seq"))?;
        let mut rows = stmt.query([run])?;
        while let Some(r) = rows.next()? {
            let index: u32 = r.get(0)?;
            let figures = decode_figures(r, |field| format!("run {run} interval {index} {field}"))?;
            f(r, figures)?;
        }
        Ok(())
    }

    /// A run's whole-phase histograms, in the order they were saved.
    pub fn histograms(&self, run: RunId) -> Result<Vec<(Phase, String, OpStats)>, StoreError> {
        let conn = self.conn();
        ensure_run(&conn, run)?;
        let mut stmt = conn.prepare_cached(&format!("SELECT phase, op, {STATS_COLUMNS} FROM phase_histograms WHERE run_id = ?1 ORDER BY rowid"))?;
        let mut rows = stmt.query([run])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let op: String = r.get(1)?;
            let what = |field: &str| format!("run {run} {op} {field}");
            let phase = decode_phase(&r.get::<_, String>(0)?, || what("phase"))?;
            let stats = decode_stats(r, 2, || what("histograms"))?;
            out.push((phase, op, stats));
        }
        Ok(out)
    }
}

/// Turns a foreign-key failure (the run row is missing) into [`StoreError::NoSuchRun`].
fn missing_run(run: RunId, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error() {
        Some(f) if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => StoreError::NoSuchRun(run),
        _ => StoreError::Sqlite(e),
    }
}

fn ensure_run(conn: &Connection, run: RunId) -> Result<(), StoreError> {
    let found = conn.query_row("SELECT 1 FROM runs WHERE id = ?1", [run], |_| Ok(())).optional()?;
    found.ok_or(StoreError::NoSuchRun(run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ErrorKind;
    use crate::store::PhaseSummary;
    use hdrhistogram::Histogram;

    fn stats(seed: u64) -> OpStats {
        let mut s = OpStats::default();
        for i in 1..=1000u64 {
            s.record_ok(i * 1_000 * seed, i * 900 * seed);
        }
        s.record_error(ErrorKind::Timeout);
        s.record_start_lag(2_500_000 * seed);
        s.empty_reads = seed;
        s.rows_read = 10 * seed;
        s
    }

    fn sample(index: u32) -> IntervalSample {
        let start_ms = u64::from(index) * 1000;
        IntervalSample {
            index,
            phase: Phase::Run,
            start_ms,
            end_ms: start_ms + 1000,
            ops: vec![("read".into(), stats(u64::from(index) + 1)), ("write".into(), stats(u64::from(index) + 7))],
            backlog: u64::from(index),
        }
    }

    fn begin(store: &Store, started_at_ms: i64) -> RunId {
        let config = RunConfig { workload: "kv".into(), rate: Some(crate::load_shape::LoadShape::fixed(500.0)), ..RunConfig::default() };
        let env = RunEnvironment { casslab_version: "0.1.0".into(), node_count: 3, ..Default::default() };
        store.begin_run("kv", &config, &env, &["baseline".to_string()], started_at_ms).unwrap()
    }

    fn summary() -> RunSummary {
        let total = OpSummary::of("total", &stats(1), 3.0);
        RunSummary {
            phases: vec![PhaseSummary { phase: Phase::Run, duration_s: 3.0, target_rate_per_s: Some(500.0), ops: vec![total.clone()], total }],
            notes: vec!["target rate 500/s not kept: achieved 333/s".into()],
            ..RunSummary::default()
        }
    }

    fn assert_same_histogram(a: &Histogram<u64>, b: &Histogram<u64>) {
        assert_eq!(a.len(), b.len());
        assert_eq!(a.value_at_quantile(0.99), b.value_at_quantile(0.99));
        assert_eq!(a.max(), b.max());
        assert!(a == b, "histograms differ");
    }

    /// A run with 3 intervals of 2 ops comes back as it went in.
    fn round_trip(store: &Store) {
        let id = begin(store, 1_700_000_000_000);
        let samples: Vec<_> = (0..3).map(sample).collect();
        for s in &samples {
            store.add_interval(id, s).unwrap();
        }
        store.add_histograms(id, Phase::Run, "read", &samples[0].ops[0].1).unwrap();
        store.finish_run(id, RunStatus::Completed, &summary(), 1_700_000_003_000).unwrap();

        let got = store.intervals(id).unwrap();
        assert_eq!(got.len(), 6);
        for (g, (s, (op, st))) in got.iter().zip(samples.iter().flat_map(|s| s.ops.iter().map(move |o| (s, o)))) {
            assert_eq!((g.index, g.phase, g.start_ms, g.end_ms, g.backlog), (s.index, s.phase, s.start_ms, s.end_ms, s.backlog));
            assert_eq!(&g.op, op);
            assert_eq!(g.stats.ok, st.ok);
            assert_eq!(g.stats.errors, st.errors);
            assert_eq!((g.stats.late, g.stats.max_lag_ns, g.stats.empty_reads, g.stats.rows_read), (st.late, st.max_lag_ns, st.empty_reads, st.rows_read));
            assert_same_histogram(&g.stats.intended, &st.intended);
            assert_same_histogram(&g.stats.service, &st.service);
        }
        // the rows' saved figures are their histograms' percentiles, read without them
        let mut figures = Vec::new();
        store
            .for_each_interval_figures(id, |f| {
                figures.push(f);
                Ok(())
            })
            .unwrap();
        assert_eq!(figures, got.iter().map(StoredInterval::figures).collect::<Vec<_>>());
        assert!(figures.iter().all(|f| f.summary.latency.count == 1000 && f.late == 1 && f.summary.errors.len() == 1));
        let hists = store.histograms(id).unwrap();
        assert_eq!(hists.len(), 1);
        assert_eq!((hists[0].0, hists[0].1.as_str()), (Phase::Run, "read"));
        assert_same_histogram(&hists[0].2.intended, &samples[0].ops[0].1.intended);

        let rec = store.run(id).unwrap();
        assert_eq!(rec.workload, "kv");
        assert_eq!(rec.status, RunStatus::Completed);
        assert_eq!((rec.started_at_ms, rec.ended_at_ms), (1_700_000_000_000, Some(1_700_000_003_000)));
        assert_eq!(rec.config.fixed_rate_per_s(), Some(500.0));
        assert_eq!(rec.env.node_count, 3);
        assert_eq!(rec.summary, Some(summary()));
        assert_eq!(rec.tags, vec!["baseline".to_string()]);
    }

    #[test]
    fn the_store_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Store>();
    }

    #[test]
    fn round_trip_in_memory() {
        round_trip(&Store::open_in_memory().unwrap());
    }

    #[test]
    fn round_trip_in_a_file_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/dir/results.db");
        let id = {
            let store = Store::open(&path).unwrap();
            round_trip(&store);
            store.latest_run().unwrap().unwrap()
        };
        let store = Store::open(&path).unwrap();
        assert_eq!(store.latest_run().unwrap(), Some(id));
        assert_eq!(store.run(id).unwrap().status, RunStatus::Completed);
        assert_eq!(store.intervals(id).unwrap().len(), 6);
        let mode: String = store.conn().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn status_moves_from_running_to_its_end() {
        let store = Store::open_in_memory().unwrap();
        let id = begin(&store, 1);
        let rec = store.run(id).unwrap();
        assert_eq!((rec.status, rec.ended_at_ms, rec.summary), (RunStatus::Running, None, None));
        store.finish_run(id, RunStatus::Interrupted, &RunSummary::default(), 5).unwrap();
        let rec = store.run(id).unwrap();
        assert_eq!((rec.status, rec.ended_at_ms), (RunStatus::Interrupted, Some(5)));
        assert_eq!(rec.summary, Some(RunSummary::default()));
    }

    #[test]
    fn runs_are_listed_newest_first_up_to_the_limit() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.latest_run().unwrap(), None);
        assert!(store.runs(10).unwrap().is_empty());
        let ids: Vec<RunId> = (0..4).map(|i| begin(&store, 1000 + i)).collect();
        let listed: Vec<RunId> = store.runs(10).unwrap().iter().map(|r| r.id).collect();
        assert_eq!(listed, ids.iter().rev().copied().collect::<Vec<_>>());
        let two: Vec<RunId> = store.runs(2).unwrap().iter().map(|r| r.id).collect();
        assert_eq!(two, vec![ids[3], ids[2]]);
        assert_eq!(store.latest_run().unwrap(), Some(ids[3]));
    }

    #[test]
    fn missing_runs_are_reported_by_id() {
        let store = Store::open_in_memory().unwrap();
        let missing = 42;
        assert!(matches!(store.run(missing), Err(StoreError::NoSuchRun(42))));
        assert!(matches!(store.intervals(missing), Err(StoreError::NoSuchRun(42))));
        assert!(matches!(store.for_each_interval_figures(missing, |_| Ok(())), Err(StoreError::NoSuchRun(42))));
        assert!(matches!(store.histograms(missing), Err(StoreError::NoSuchRun(42))));
        assert!(matches!(store.add_interval(missing, &sample(0)), Err(StoreError::NoSuchRun(42))));
        assert!(matches!(store.add_tag(missing, "x"), Err(StoreError::NoSuchRun(42))));
        let e = store.finish_run(missing, RunStatus::Failed, &RunSummary::default(), 0).unwrap_err();
        assert_eq!(e.to_string(), "no saved run with id 42");
    }

    #[test]
    fn a_crashed_run_still_lists_with_its_intervals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let id = {
            let store = Store::open(&path).unwrap();
            let id = begin(&store, 7);
            store.add_interval(id, &sample(0)).unwrap();
            store.add_interval(id, &sample(1)).unwrap();
            id // dropped without finish_run, as if the process died
        };
        let store = Store::open(&path).unwrap();
        let runs = store.runs(10).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].id, runs[0].status), (id, RunStatus::Running), "its process (this one) still runs");
        assert_eq!(runs[0].process, RunProcess::current());
        assert_eq!(store.intervals(id).unwrap().len(), 4);
        // the process that began it is gone: the run reads as crashed, its intervals kept
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = gone.id();
        gone.wait().unwrap();
        store.conn().execute("UPDATE runs SET pid = ?1 WHERE id = ?2", params![dead_pid, id]).unwrap();
        let rec = store.run(id).unwrap();
        assert_eq!((rec.status, rec.summary.is_none()), (RunStatus::Crashed, true));
        assert_eq!(store.runs(1).unwrap()[0].status, RunStatus::Crashed);
        assert_eq!(store.intervals(id).unwrap().len(), 4);
    }

    #[test]
    fn tags_added_later_are_kept_once() {
        let store = Store::open_in_memory().unwrap();
        let id = begin(&store, 1);
        store.add_tag(id, "exp-1").unwrap();
        store.add_tag(id, "exp-1").unwrap();
        assert_eq!(store.run(id).unwrap().tags, vec!["baseline".to_string(), "exp-1".to_string()]);
    }
}
