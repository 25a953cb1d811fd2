//! The results database's schema and connection settings: the DDL, its version (kept in
//! `PRAGMA user_version`), the upgrade path between versions, and the additions made beside a
//! version (tables and columns every build that knows them adds when missing, and builds that
//! do not know them ignore). Nothing here reads or writes runs; that is `store/mod.rs`.

use super::StoreError;
use rusqlite::{Connection, TransactionBehavior};
use std::time::Duration;

/// The schema this build writes. Bump it and add a step to [`migrate`] when the tables change.
pub const SCHEMA_VERSION: i64 = 1;

/// How long a statement waits for another process's lock (e.g. `casslab runs` reading while a
/// run is being written) before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA_V1: &str = "
CREATE TABLE runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    workload       TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    started_at_ms  INTEGER NOT NULL,
    ended_at_ms    INTEGER,
    config_version INTEGER NOT NULL,
    config_json    TEXT    NOT NULL,
    env_json       TEXT    NOT NULL,
    summary_json   TEXT
);

CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag    TEXT    NOT NULL,
    PRIMARY KEY (run_id, tag)
);

-- One row per (sampling interval, operation). The lat_* (from the intended start) and svc_*
-- (service time) columns repeat what the histograms hold, for quick SQL queries.
CREATE TABLE intervals (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx          INTEGER NOT NULL,
    phase        TEXT    NOT NULL,
    start_ms     INTEGER NOT NULL,
    end_ms       INTEGER NOT NULL,
    backlog      INTEGER NOT NULL,
    seq          INTEGER NOT NULL,
    op           TEXT    NOT NULL,
    ok           INTEGER NOT NULL,
    error_count  INTEGER NOT NULL,
    errors_json  TEXT    NOT NULL,
    ops_per_s    REAL    NOT NULL,
    lat_mean_ns  REAL    NOT NULL,
    lat_p50_ns   INTEGER NOT NULL,
    lat_p95_ns   INTEGER NOT NULL,
    lat_p99_ns   INTEGER NOT NULL,
    lat_p999_ns  INTEGER NOT NULL,
    lat_max_ns   INTEGER NOT NULL,
    svc_mean_ns  REAL    NOT NULL,
    svc_p50_ns   INTEGER NOT NULL,
    svc_p95_ns   INTEGER NOT NULL,
    svc_p99_ns   INTEGER NOT NULL,
    svc_p999_ns  INTEGER NOT NULL,
    svc_max_ns   INTEGER NOT NULL,
    intended_hdr BLOB    NOT NULL,
    service_hdr  BLOB    NOT NULL,
    PRIMARY KEY (run_id, idx, seq)
);

-- Whole-phase histograms, one row per (phase, operation).
CREATE TABLE phase_histograms (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    phase        TEXT    NOT NULL,
    op           TEXT    NOT NULL,
    ok           INTEGER NOT NULL,
    error_count  INTEGER NOT NULL,
    errors_json  TEXT    NOT NULL,
    lat_mean_ns  REAL    NOT NULL,
    lat_p50_ns   INTEGER NOT NULL,
    lat_p95_ns   INTEGER NOT NULL,
    lat_p99_ns   INTEGER NOT NULL,
    lat_p999_ns  INTEGER NOT NULL,
    lat_max_ns   INTEGER NOT NULL,
    svc_mean_ns  REAL    NOT NULL,
    svc_p50_ns   INTEGER NOT NULL,
    svc_p95_ns   INTEGER NOT NULL,
    svc_p99_ns   INTEGER NOT NULL,
    svc_p999_ns  INTEGER NOT NULL,
    svc_max_ns   INTEGER NOT NULL,
    intended_hdr BLOB    NOT NULL,
    service_hdr  BLOB    NOT NULL,
    UNIQUE (run_id, phase, op)
);
";

/// Server-side time series of runs (see `server`), added beside the version-1 tables: created
/// when missing by every build that knows it, ignored by builds that do not.
const SERVER_SAMPLES: &str = "
CREATE TABLE IF NOT EXISTS server_samples (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    node   TEXT    NOT NULL,
    metric TEXT    NOT NULL,
    at_ms  INTEGER NOT NULL,
    value  REAL    NOT NULL
);
CREATE INDEX IF NOT EXISTS server_samples_run ON server_samples (run_id, at_ms);
-- Query traces of a run's slowest requests (`server::traces::Trace` as JSON).
CREATE TABLE IF NOT EXISTS server_traces (
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    at_ms       INTEGER NOT NULL,
    duration_us INTEGER NOT NULL,
    trace_json  TEXT    NOT NULL
);
";

/// Connection settings. For a file: WAL, so readers never block the writer and a crashed
/// process leaves every committed interval intact; `synchronous = NORMAL` is durable against
/// a process crash (only a power loss can drop the last commits).
pub fn configure(conn: &Connection, file: bool) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    if file {
        let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
        debug_assert_eq!(mode.to_ascii_lowercase(), "wal");
        conn.pragma_update(None, "synchronous", "NORMAL")?;
    }
    Ok(())
}

/// Creates the tables in an empty database, or checks that an existing one is readable by
/// this build. Runs inside an immediate transaction so two processes opening a new file at
/// once do not both create the schema.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    match found {
        0 => {
            tx.execute_batch(SCHEMA_V1)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        SCHEMA_VERSION => {}
        _ => return Err(StoreError::UnsupportedSchema { found, supported: SCHEMA_VERSION }),
    }
    tx.execute_batch(super::event_rows::RUN_EVENTS)?;
    tx.execute_batch(SERVER_SAMPLES)?;
    tx.execute_batch(super::verify_rows::VERIFY_TABLES)?;
    tx.execute_batch(super::interval_load::INTERVAL_LOAD)?;
    tx.execute_batch(super::profile_rows::PROFILES)?;
    tx.execute_batch(super::experiment_rows::EXPERIMENT_DOCUMENTS)?;
    for table in ["intervals", "phase_histograms"] {
        for (column, decl) in OP_COLUMNS {
            add_column(&tx, table, column, decl)?;
        }
    }
    for (column, decl) in RUN_COLUMNS {
        add_column(&tx, "runs", column, decl)?;
    }
    for (column, decl) in super::interval_load::COURSE_COLUMNS {
        add_column(&tx, "interval_load", column, decl)?;
    }
    tx.commit()?;
    Ok(())
}

/// Columns added to `intervals` and `phase_histograms` beside version 1: an operation's
/// starts later than intended and its largest start lag (`stats::OpStats::late`,
/// `max_lag_ns`), its reads that returned no row, the rows its reads returned, and its checked
/// reads by class, and its vector searches' recall. Rows
/// written by builds that did not record them read as 0 (the run's environment says what its
/// build recorded).
pub(super) const OP_COLUMNS: [(&str, &str); 6] = [
    ("late", "INTEGER NOT NULL DEFAULT 0"),
    ("max_lag_ns", "INTEGER NOT NULL DEFAULT 0"),
    ("empty_reads", "INTEGER NOT NULL DEFAULT 0"),
    ("rows_read", "INTEGER NOT NULL DEFAULT 0"),
    // checked reads by class (`verify::VerifyCounts` as JSON); NULL: the operation checked none
    ("verify_json", "TEXT"),
    // vector searches judged against the exact nearest (`recall::RecallCounts` as JSON); NULL: none
    ("recall_json", "TEXT"),
];

/// Columns added to `runs` beside version 1: the process that makes the run
/// (`store::RunProcess`), so a run whose process is gone reads as crashed.
const RUN_COLUMNS: [(&str, &str); 3] = [("pid", "INTEGER"), ("host", "TEXT"), ("process_started", "TEXT")];

/// `ALTER TABLE table ADD COLUMN column decl`, unless the table has that column.
fn add_column(conn: &Connection, table: &str, column: &str, decl: &str) -> rusqlite::Result<()> {
    let has: bool = conn.query_row(&format!("SELECT count(*) FROM pragma_table_info('{table}') WHERE name = ?1"), [column], |r| r.get::<_, i64>(0))? > 0;
    if !has {
        conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_database_gets_the_new_columns_and_its_rows_read_as_zero() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA_V1).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (workload, status, started_at_ms, config_version, config_json, env_json) VALUES ('kv', 'completed', 1, 1, '{}', '{}');
             INSERT INTO intervals VALUES (1, 0, 'run', 0, 1000, 0, 0, 'read', 5, 0, '{}', 5.0, 1.0, 1, 1, 1, 1, 1, 1.0, 1, 1, 1, 1, 1, x'', x'');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        let (late, lag, empty): (i64, i64, i64) =
            conn.query_row("SELECT late, max_lag_ns, empty_reads FROM intervals", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
        assert_eq!((late, lag, empty), (0, 0, 0));
        let cols: i64 = conn
            .query_row("SELECT count(*) FROM pragma_table_info('phase_histograms') WHERE name IN ('late', 'max_lag_ns', 'empty_reads', 'rows_read')", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(cols, 4);
        let rows: i64 = conn.query_row("SELECT rows_read FROM intervals", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 0);
    }
}
