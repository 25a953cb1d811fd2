//! The results database's schema and connection settings: the DDL, its version (kept in
//! `PRAGMA user_version`) and the upgrade path between versions. Nothing here reads or writes
//! runs; that is `store/mod.rs`.

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
    tx.execute_batch(super::events::RUN_EVENTS)?;
    tx.execute_batch(SERVER_SAMPLES)?;
    tx.commit()?;
    Ok(())
}
