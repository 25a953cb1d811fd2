//! Turning `runs`, `intervals` and `phase_histograms` rows into values and back: the JSON
//! columns, the quick-query latency columns and the histogram blobs. No SQL statements live
//! here except the shared column list of a run.

use super::{IntervalFigures, PackedStats, RunId, RunProcess, RunRecord, RunStatus, StoreError};
use crate::stats::{ErrorKind, LatencySummary, OpStats, OpSummary, Phase};
use rusqlite::{Connection, Row};
use serde::Serialize;
use std::collections::BTreeMap;

pub(super) const SELECT_RUN: &str =
    "SELECT id, workload, status, started_at_ms, ended_at_ms, config_json, env_json, summary_json, pid, host, process_started FROM runs";

/// A `runs` row before its JSON columns are decoded.
pub(super) struct RawRun {
    id: RunId,
    workload: String,
    status: String,
    started_at_ms: i64,
    ended_at_ms: Option<i64>,
    config_json: String,
    env_json: String,
    summary_json: Option<String>,
    pid: Option<u32>,
    host: Option<String>,
    process_started: Option<String>,
}

impl RawRun {
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<RawRun> {
        Ok(RawRun {
            id: r.get(0)?,
            workload: r.get(1)?,
            status: r.get(2)?,
            started_at_ms: r.get(3)?,
            ended_at_ms: r.get(4)?,
            config_json: r.get(5)?,
            env_json: r.get(6)?,
            summary_json: r.get(7)?,
            pid: r.get(8)?,
            host: r.get(9)?,
            process_started: r.get(10)?,
        })
    }

    pub(super) fn decode(self, conn: &Connection) -> Result<RunRecord, StoreError> {
        let id = self.id;
        let corrupt = |field: &str, detail: String| StoreError::Corrupt { what: format!("run {id} {field}"), detail };
        let json = |field: &str, e: serde_json::Error| corrupt(field, e.to_string());
        let mut stmt = conn.prepare_cached("SELECT tag FROM run_tags WHERE run_id = ?1 ORDER BY rowid")?;
        let tags = stmt.query_map([id], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
        let process = match (self.pid, self.host) {
            (Some(pid), Some(host)) => Some(RunProcess { pid, host, started: self.process_started }),
            _ => None,
        };
        let status = match RunStatus::parse(&self.status).ok_or_else(|| corrupt("status", format!("unknown status {:?}", self.status)))? {
            RunStatus::Running if process.as_ref().is_some_and(RunProcess::is_gone) => RunStatus::Crashed,
            s => s,
        };
        Ok(RunRecord {
            id,
            status,
            process,
            config: serde_json::from_str(&self.config_json).and_then(crate::config::RunConfig::from_saved).map_err(|e| json("config", e))?,
            env: serde_json::from_str(&self.env_json).map_err(|e| json("environment", e))?,
            summary: match &self.summary_json {
                Some(s) => Some(serde_json::from_str(s).map_err(|e| json("summary", e))?),
                None => None,
            },
            workload: self.workload,
            started_at_ms: self.started_at_ms,
            ended_at_ms: self.ended_at_ms,
            tags,
        })
    }
}

/// The quick-query columns of one latency summary: mean, p50, p95, p99, p99.9, max.
pub(super) struct Cols(pub f64, pub u64, pub u64, pub u64, pub u64, pub u64);

impl Cols {
    pub(super) fn of(s: &LatencySummary) -> Cols {
        Cols(s.mean_ns, s.p50_ns, s.p95_ns, s.p99_ns, s.p999_ns, s.max_ns)
    }
}

pub(super) fn encode<T: Serialize + ?Sized>(what: &'static str, value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|source| StoreError::Encode { what, error: source })
}

pub(super) fn decode_phase(s: &str, what: impl Fn() -> String) -> Result<Phase, StoreError> {
    Phase::parse(s).ok_or_else(|| StoreError::Corrupt { what: what(), detail: format!("unknown phase {s:?}") })
}

/// The columns an operation's figures over an interval or a phase are written to, in the
/// order [`stats_values`] gives their values: the counts, the quick-query latency columns
/// (intended and service), the histograms and the JSON columns.
pub(super) const STATS_WRITE_COLUMNS: [&str; 23] = [
    "ok",
    "error_count",
    "errors_json",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p95_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "svc_mean_ns",
    "svc_p50_ns",
    "svc_p95_ns",
    "svc_p99_ns",
    "svc_p999_ns",
    "svc_max_ns",
    "intended_hdr",
    "service_hdr",
    "late",
    "max_lag_ns",
    "empty_reads",
    "rows_read",
    "verify_json",
    "recall_json",
];

/// The values of [`STATS_WRITE_COLUMNS`] for one operation's `stats`.
pub(super) fn stats_values(stats: &OpStats) -> Result<Vec<Box<dyn rusqlite::ToSql>>, StoreError> {
    let (l, v) = (Cols::of(&LatencySummary::of(&stats.intended)), Cols::of(&LatencySummary::of(&stats.service)));
    Ok(vec![
        Box::new(stats.ok),
        Box::new(stats.error_count()),
        Box::new(encode("error counts", &stats.errors)?),
        Box::new(l.0),
        Box::new(l.1),
        Box::new(l.2),
        Box::new(l.3),
        Box::new(l.4),
        Box::new(l.5),
        Box::new(v.0),
        Box::new(v.1),
        Box::new(v.2),
        Box::new(v.3),
        Box::new(v.4),
        Box::new(v.5),
        Box::new(super::serialize_histogram(&stats.intended)),
        Box::new(super::serialize_histogram(&stats.service)),
        Box::new(stats.late),
        Box::new(stats.max_lag_ns),
        Box::new(stats.empty_reads),
        Box::new(stats.rows_read),
        Box::new(encode_verify(stats)?),
        Box::new(encode_recall(stats)?),
    ])
}

/// `INSERT [OR REPLACE] INTO table (head…, STATS_WRITE_COLUMNS…) VALUES (?1, …)`.
pub(super) fn insert_stats_sql(verb: &str, table: &str, head: &[&str]) -> String {
    let columns: Vec<&str> = head.iter().copied().chain(STATS_WRITE_COLUMNS).collect();
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    format!("{verb} INTO {table} ({}) VALUES ({})", columns.join(", "), marks.join(", "))
}

/// The columns [`decode_stats`] reads, in its order.
pub(super) const STATS_COLUMNS: &str = "ok, errors_json, intended_hdr, service_hdr, late, max_lag_ns, empty_reads, rows_read, verify_json, recall_json";

/// Reads [`STATS_COLUMNS`] starting at column `first`.
pub(super) fn decode_stats(r: &Row<'_>, first: usize, what: impl Fn() -> String) -> Result<OpStats, StoreError> {
    decode_packed_stats(r, first, &what)?.unpack().map_err(|e| match e {
        StoreError::Corrupt { detail, .. } => StoreError::Corrupt { what: what(), detail },
        e => e,
    })
}

/// Reads [`STATS_COLUMNS`] starting at column `first`, leaving the histograms encoded.
pub(super) fn decode_packed_stats(r: &Row<'_>, first: usize, what: impl Fn() -> String) -> Result<PackedStats, StoreError> {
    let errors: BTreeMap<ErrorKind, u64> =
        serde_json::from_str(&r.get::<_, String>(first + 1)?).map_err(|e| StoreError::Corrupt { what: what(), detail: e.to_string() })?;
    Ok(PackedStats {
        ok: r.get(first)?,
        errors,
        intended_hdr: r.get(first + 2)?,
        service_hdr: r.get(first + 3)?,
        late: r.get(first + 4)?,
        max_lag_ns: r.get(first + 5)?,
        empty_reads: r.get(first + 6)?,
        rows_read: r.get(first + 7)?,
        verify: decode_verify(r.get(first + 8)?, &what)?,
        recall: decode_recall(r.get(first + 9)?, &what)?,
    })
}

/// The columns [`decode_figures`] reads, in its order: an interval row without its histograms.
pub(super) const FIGURES_COLUMNS: &str = "idx, phase, start_ms, end_ms, backlog, op, ok, errors_json, late, max_lag_ns, empty_reads, rows_read, \
     lat_mean_ns, lat_p50_ns, lat_p95_ns, lat_p99_ns, lat_p999_ns, lat_max_ns, \
     svc_mean_ns, svc_p50_ns, svc_p95_ns, svc_p99_ns, svc_p999_ns, svc_max_ns, verify_json, recall_json";
/// How many columns [`FIGURES_COLUMNS`] names.
pub(super) const FIGURES_COLUMN_COUNT: usize = 26;

/// Reads [`FIGURES_COLUMNS`]. The latency columns were computed from the row's histograms when
/// it was saved, and each histogram counts exactly the row's `ok` operations.
pub(super) fn decode_figures(r: &Row<'_>, what: impl Fn(&str) -> String) -> Result<IntervalFigures, StoreError> {
    let errors: BTreeMap<ErrorKind, u64> =
        serde_json::from_str(&r.get::<_, String>(7)?).map_err(|e| StoreError::Corrupt { what: what("statistics"), detail: e.to_string() })?;
    let ok: u64 = r.get(6)?;
    let latency = |first: usize| -> rusqlite::Result<LatencySummary> {
        Ok(LatencySummary {
            count: ok,
            mean_ns: r.get(first)?,
            p50_ns: r.get(first + 1)?,
            p95_ns: r.get(first + 2)?,
            p99_ns: r.get(first + 3)?,
            p999_ns: r.get(first + 4)?,
            max_ns: r.get(first + 5)?,
        })
    };
    let (start_ms, end_ms): (u64, u64) = (r.get(2)?, r.get(3)?);
    let duration_s = end_ms.saturating_sub(start_ms) as f64 / 1000.0;
    Ok(IntervalFigures {
        index: r.get(0)?,
        phase: decode_phase(&r.get::<_, String>(1)?, || what("phase"))?,
        start_ms,
        end_ms,
        backlog: r.get(4)?,
        summary: OpSummary {
            op: r.get(5)?,
            ok,
            errors,
            ops_per_s: if duration_s > 0.0 { ok as f64 / duration_s } else { 0.0 },
            latency: latency(12)?,
            service: latency(18)?,
            empty_reads: r.get(10)?,
            rows_read: r.get(11)?,
            verify: decode_verify(r.get(24)?, || what("checked reads"))?,
            recall: decode_recall(r.get(25)?, || what("recall"))?,
        },
        late: r.get(8)?,
        max_lag_ns: r.get(9)?,
    })
}

/// The `verify_json` column: checked reads by class, `None` when the operation checked none.
pub(super) fn decode_verify(json: Option<String>, what: impl Fn() -> String) -> Result<Option<crate::verify::VerifyCounts>, StoreError> {
    json.map(|j| serde_json::from_str(&j).map_err(|e| StoreError::Corrupt { what: what(), detail: e.to_string() })).transpose()
}

/// The `recall_json` column: vector searches judged, `None` when the operation searched none.
pub(super) fn decode_recall(json: Option<String>, what: impl Fn() -> String) -> Result<Option<crate::recall::RecallCounts>, StoreError> {
    json.map(|j| serde_json::from_str(&j).map_err(|e| StoreError::Corrupt { what: what(), detail: e.to_string() })).transpose()
}

/// The `recall_json` of one operation's records.
pub(super) fn encode_recall(stats: &OpStats) -> Result<Option<String>, StoreError> {
    stats.recall.map(|c| encode("recall", &c)).transpose()
}

/// The `verify_json` of one operation's records.
pub(super) fn encode_verify(stats: &OpStats) -> Result<Option<String>, StoreError> {
    stats.verify_counts().map(|c| encode("checked reads", &c)).transpose()
}
