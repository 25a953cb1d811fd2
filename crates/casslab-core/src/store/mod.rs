//! The embedded results store: one SQLite file holding every run casslab has made — its saved
//! config and environment, one row per (interval, operation) written while the run goes (so a
//! crash loses at most the interval in flight), the full per-phase histograms and the final
//! summary. It owns the schema and the binary form of histograms (V2 + deflate, as HdrHistogram
//! writes them). It does not compute summaries or decide a run's status (the engine and the
//! CLI do), and it never prints.

mod db;
mod event_rows;
mod experiment_rows;
mod interval_load;
mod manage;
mod migrations;
mod open;
mod profile_rows;
mod rows;
mod run_process;
mod server_samples;
mod verify_rows;

pub use db::Store;
pub use event_rows::{EventImpact, P99Change};
pub use manage::tag_key;
pub use migrations::SCHEMA_VERSION;
pub use run_process::RunProcess;
pub use verify_rows::SavedViolation;

use crate::config::{RunConfig, RunEnvironment};
use crate::stats::{OpStats, OpSummary, Phase};
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A run's number in the store; ids are never reused.
pub type RunId = i64;

/// Where a run stands. A run whose process died is saved as `Running`; readers on its host see
/// it as `Crashed` (see [`RunProcess`]), which no writer saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Completed,
    /// Stopped early by the user (Ctrl-C); what was measured is kept.
    Interrupted,
    /// Ended by a setup or fatal error.
    Failed,
    /// Saved as running, but its process is gone: killed or crashed before it finished. Its
    /// intervals up to then are kept.
    Crashed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Crashed => "crashed",
        }
    }
    pub fn parse(s: &str) -> Option<RunStatus> {
        match s {
            "running" => Some(RunStatus::Running),
            "completed" => Some(RunStatus::Completed),
            "interrupted" => Some(RunStatus::Interrupted),
            "failed" => Some(RunStatus::Failed),
            "crashed" => Some(RunStatus::Crashed),
            _ => None,
        }
    }
}

/// One phase's figures over its whole duration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PhaseSummary {
    pub phase: Phase,
    pub duration_s: f64,
    pub target_rate_per_s: Option<f64>,
    pub ops: Vec<OpSummary>,
    /// All operations of the phase together.
    pub total: OpSummary,
}

impl PhaseSummary {
    /// A phase's totals from its operations' records over `duration_s`; a fixed rate that was
    /// not kept is noted in `notes`. Figures recorded beside operations (`<op>.request`) are
    /// not operations of their own and stay out of the total.
    pub fn of(phase: Phase, duration_s: f64, ops: &[(String, OpStats)], target: Option<f64>, notes: &mut Vec<String>) -> PhaseSummary {
        let mut total = OpStats::default();
        for (_, s) in ops.iter().filter(|(n, _)| !crate::stats::is_sub_op(n)) {
            total.merge(s);
        }
        let total = OpSummary::of("total", &total, duration_s);
        if let Some(t) = target {
            if total.ops_per_s < t * 0.95 {
                notes.push(format!("target rate {t:.0}/s not kept: achieved {:.0}/s", total.ops_per_s));
            }
        }
        PhaseSummary { phase, duration_s, target_rate_per_s: target, ops: ops.iter().map(|(n, s)| OpSummary::of(n, s, duration_s)).collect(), total }
    }
}

/// One loader of a run spread over several (a merged run's breakdown).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoaderSummary {
    pub shard: u32,
    /// Where its run came from: `run 12` of a store, or an export file.
    pub source: String,
    pub host: Option<String>,
    /// Its run phase's throughput, p99 (from the intended start) and errors.
    pub ops_per_s: f64,
    pub p99_ns: u64,
    pub errors: u64,
    /// Its share of a fixed rate, when the run had one.
    pub target_per_s: Option<f64>,
    /// Its own CPU over the run phase, in percent of one core, and its cores.
    pub client_cpu_pct: Option<f64>,
    pub client_cores: usize,
    /// Most operations it had due but not started at an interval's end, and that many as time
    /// at its share of the rate.
    pub max_backlog: u64,
    pub max_lag_ms: Option<f64>,
    /// When its run phase started, against the earliest loader's.
    pub start_skew_ms: i64,
    /// Its clock minus the cluster's, measured at the barrier.
    pub clock_offset_ms: Option<f64>,
    /// Used nearly all of its cores: the load it offered may be lower than asked.
    pub saturated: bool,
    /// Did not keep its share of the rate.
    pub behind: bool,
}

/// What a finished run amounted to, saved as JSON with it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RunSummary {
    pub phases: Vec<PhaseSummary>,
    /// Remarks for the reader, e.g. "target rate 5000/s not kept: achieved 3100/s".
    pub notes: Vec<String>,
    /// A sharded run (or one with `--start-at`): when its run phase started on the wall clock
    /// (Unix milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_start_unix_ms: Option<i64>,
    /// This loader's clock minus the cluster's, as its shards' barrier measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
    /// A merged run: each loader's figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loaders: Vec<LoaderSummary>,
    /// Under a rate: the run phase's operations due by its end but never started (none
    /// recorded by builds before it was counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never_started: Option<crate::stats::NeverStarted>,
    /// A run phase that ended after a count of operations (`--count`): asked and completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<crate::stats::CountReached>,
}

/// A saved run as [`Store::run`] returns it (intervals and histograms are fetched separately).
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub id: RunId,
    /// The workload's short name.
    pub workload: String,
    /// Unix time, milliseconds.
    pub started_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    pub status: RunStatus,
    pub config: RunConfig,
    pub env: RunEnvironment,
    /// `None` until the run is finished.
    pub summary: Option<RunSummary>,
    pub tags: Vec<String>,
    /// The process that made the run (`None` for runs saved before casslab recorded it).
    pub process: Option<RunProcess>,
}

impl RunRecord {
    /// Whether the run's build recorded each operation's late starts and empty reads (they
    /// came with the process record, so runs without one read 0 there for lack of data).
    pub fn records_starts_and_reads(&self) -> bool {
        self.process.is_some()
    }
}

/// Everything saved about one run: what exports carry and what `merge` adds up.
#[derive(Debug, Clone)]
pub struct RunData {
    pub record: RunRecord,
    /// One row per (interval, operation), in interval order.
    pub intervals: Vec<StoredInterval>,
    /// Each (phase, operation)'s whole-phase histograms.
    pub histograms: Vec<(Phase, String, OpStats)>,
    pub server_samples: Vec<crate::server::ServerSample>,
    pub events: Vec<(crate::events::EventRecord, Option<EventImpact>)>,
    pub traces: Vec<crate::server::traces::Trace>,
    /// The first verified reads that were not ok.
    pub violations: Vec<SavedViolation>,
}

impl Store {
    /// Everything saved about `run`.
    pub fn run_data(&self, run: RunId) -> Result<RunData, StoreError> {
        Ok(RunData { intervals: self.intervals(run)?, ..self.run_data_but_intervals(run)? })
    }

    /// Everything saved about `run` but its intervals (empty), which a long run has too many
    /// of to hold decoded: read them with [`Store::for_each_interval`].
    pub fn run_data_but_intervals(&self, run: RunId) -> Result<RunData, StoreError> {
        Ok(RunData {
            record: self.run(run)?,
            intervals: Vec::new(),
            histograms: self.histograms(run)?,
            server_samples: self.server_samples(run)?,
            events: self.events(run)?,
            traces: self.traces(run)?,
            violations: self.violations(run)?,
        })
    }
}

/// One operation's records over one sampling interval, as saved.
#[derive(Debug, Clone)]
pub struct StoredInterval {
    pub index: u32,
    pub phase: Phase,
    /// Milliseconds since the run started.
    pub start_ms: u64,
    pub end_ms: u64,
    pub op: String,
    pub stats: OpStats,
    /// Operations due but not yet started at the interval's end (the sample's backlog; the
    /// same for every operation of an interval).
    pub backlog: u64,
}

impl StoredInterval {
    pub fn duration_s(&self) -> f64 {
        self.end_ms.saturating_sub(self.start_ms) as f64 / 1000.0
    }

    /// The row's figures, its histograms reduced to their percentiles.
    pub fn figures(&self) -> IntervalFigures {
        IntervalFigures {
            index: self.index,
            phase: self.phase,
            start_ms: self.start_ms,
            end_ms: self.end_ms,
            backlog: self.backlog,
            summary: OpSummary::of(&self.op, &self.stats, self.duration_s()),
            late: self.stats.late,
            max_lag_ns: self.stats.max_lag_ns,
        }
    }
}

/// One saved (interval, operation) row without its histograms: the percentiles its columns
/// hold, which are those of its histograms. What showing a finished run needs, read at a
/// fraction of the cost of decoding two histograms per row
/// ([`Store::for_each_interval_figures`]).
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalFigures {
    pub index: u32,
    pub phase: Phase,
    /// Milliseconds since the run started.
    pub start_ms: u64,
    pub end_ms: u64,
    /// As [`StoredInterval::backlog`].
    pub backlog: u64,
    /// The operation's name, counts and latency percentiles over the interval.
    pub summary: OpSummary,
    /// As [`OpStats::late`] and [`OpStats::max_lag_ns`].
    pub late: u64,
    pub max_lag_ns: u64,
}

/// An interval row's figures and its two histograms as saved (HdrHistogram V2 deflate, what
/// [`serialize_histogram`] writes): all an export needs of a row, without decoding anything.
#[derive(Debug, Clone)]
pub struct EncodedInterval {
    pub figures: IntervalFigures,
    pub intended_hdr: Vec<u8>,
    pub service_hdr: Vec<u8>,
}

impl EncodedInterval {
    pub fn of(r: &StoredInterval) -> EncodedInterval {
        EncodedInterval { figures: r.figures(), intended_hdr: serialize_histogram(&r.stats.intended), service_hdr: serialize_histogram(&r.stats.service) }
    }
}

impl IntervalFigures {
    pub fn op(&self) -> &str {
        &self.summary.op
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A command that only reads runs was pointed at a path where none was ever saved.
    #[error("there is no results database at {path}: no run was saved there yet (`casslab run` saves one; --store or CASSLAB_STORE name another)")]
    Missing { path: PathBuf },
    #[error("cannot create the directory {path} for the results database: {error}")]
    CreateDir { path: PathBuf, error: std::io::Error },
    #[error("cannot open the results database {path}: {error}")]
    Open { path: PathBuf, error: rusqlite::Error },
    #[error(
        "the results database has schema version {found} but this casslab reads version {supported}; \
         it was probably written by a newer casslab: upgrade casslab or use another database file"
    )]
    UnsupportedSchema { found: i64, supported: i64 },
    /// A database file of another program: casslab leaves it as it is.
    #[error(
        "{path} is a SQLite database of another program (it holds {tables}, and not casslab's runs); casslab never changes a file that is not its own results store: \
         give --store (or CASSLAB_STORE) a new file or a casslab results database"
    )]
    NotOurs { path: PathBuf, tables: String },
    #[error("no saved run with id {0}")]
    NoSuchRun(RunId),
    #[error("run {0} is still running (its process is alive); wait for it to end or stop it first")]
    StillRunning(RunId),
    #[error("results database error: {0}")]
    Sqlite(rusqlite::Error),
    #[error("cannot encode {what} for the results database: {error}")]
    Encode { what: &'static str, error: serde_json::Error },
    /// Saved data that this build cannot read back.
    #[error("unreadable {what} in the results database: {detail}")]
    Corrupt { what: String, detail: String },
    /// Writing out what was being read (an export written row by row) failed.
    #[error(transparent)]
    Write(#[from] std::io::Error),
}

// SQLite's error is shown in the message, so it is not a source too (`{:#}` would print it twice).
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Sqlite(e)
    }
}

/// An [`OpStats`] with its two histograms still encoded in HdrHistogram's V2 deflate format, as
/// the store and the exports hold them: a few hundred bytes where the decoded pair takes half a
/// megabyte (every histogram spans 1 ns to 10 minutes at 3 significant digits). What holds
/// many intervals at once (`merge`, of every loader's rows) holds them this way and decodes
/// one interval at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedStats {
    pub ok: u64,
    pub errors: std::collections::BTreeMap<crate::stats::ErrorKind, u64>,
    pub intended_hdr: Vec<u8>,
    pub service_hdr: Vec<u8>,
    pub late: u64,
    pub max_lag_ns: u64,
    pub empty_reads: u64,
    pub rows_read: u64,
    pub verify: Option<crate::verify::VerifyCounts>,
    pub recall: Option<crate::recall::RecallCounts>,
}

impl PackedStats {
    pub fn pack(s: &OpStats) -> PackedStats {
        PackedStats {
            ok: s.ok,
            errors: s.errors.clone(),
            intended_hdr: serialize_histogram(&s.intended),
            service_hdr: serialize_histogram(&s.service),
            late: s.late,
            max_lag_ns: s.max_lag_ns,
            empty_reads: s.empty_reads,
            rows_read: s.rows_read,
            verify: s.verify_counts(),
            recall: s.recall,
        }
    }

    pub fn unpack(&self) -> Result<OpStats, StoreError> {
        Ok(OpStats {
            ok: self.ok,
            errors: self.errors.clone(),
            intended: deserialize_histogram(&self.intended_hdr)?,
            service: deserialize_histogram(&self.service_hdr)?,
            late: self.late,
            max_lag_ns: self.max_lag_ns,
            empty_reads: self.empty_reads,
            rows_read: self.rows_read,
            verify: self.verify.map(|counts| Box::new(crate::verify::VerifyStats { counts, samples: Vec::new() })),
            recall: self.recall,
        })
    }
}

/// A [`StoredInterval`] with its histograms still encoded ([`PackedStats`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PackedInterval {
    pub index: u32,
    pub phase: Phase,
    pub start_ms: u64,
    pub end_ms: u64,
    pub op: String,
    pub stats: PackedStats,
    pub backlog: u64,
}

impl PackedInterval {
    pub fn pack(r: &StoredInterval) -> PackedInterval {
        PackedInterval {
            index: r.index,
            phase: r.phase,
            start_ms: r.start_ms,
            end_ms: r.end_ms,
            op: r.op.clone(),
            stats: PackedStats::pack(&r.stats),
            backlog: r.backlog,
        }
    }

    pub fn unpack(&self) -> Result<StoredInterval, StoreError> {
        Ok(StoredInterval {
            index: self.index,
            phase: self.phase,
            start_ms: self.start_ms,
            end_ms: self.end_ms,
            op: self.op.clone(),
            stats: self.stats.unpack()?,
            backlog: self.backlog,
        })
    }
}

/// Serializes a histogram in HdrHistogram's V2 format, deflate-compressed (what the Java
/// implementation calls "compressed"; its base64 form starts with `HISTFAA`).
pub fn serialize_histogram(h: &Histogram<u64>) -> Vec<u8> {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        // Fails only for counts above i64::MAX or an encoding longer than 4 GiB, neither of
        // which a latency histogram can reach; writes to a Vec cannot fail.
        .expect("histogram fits the V2 format");
    buf
}

/// Reads back what [`serialize_histogram`] wrote (any V2 or V2-deflate histogram).
pub fn deserialize_histogram(bytes: &[u8]) -> Result<Histogram<u64>, StoreError> {
    Deserializer::new().deserialize(&mut &bytes[..]).map_err(|e| StoreError::Corrupt { what: "histogram".into(), detail: e.to_string() })
}

/// Saves a whole run as a run would have (its intervals, whole-phase histograms and summary)
/// and returns its id: for tests that need a run in a store.
#[cfg(test)]
pub(crate) fn save_run_data(store: &Store, data: &RunData) -> RunId {
    let r = &data.record;
    let id = store.begin_run(&r.workload, &r.config, &r.env, &r.tags, r.started_at_ms).unwrap();
    for rows in data.intervals.chunk_by(|a, b| a.index == b.index) {
        let i = &rows[0];
        let ops = rows.iter().map(|r| (r.op.clone(), r.stats.clone())).collect();
        store
            .add_interval(id, &crate::stats::IntervalSample { index: i.index, phase: i.phase, start_ms: i.start_ms, end_ms: i.end_ms, ops, backlog: i.backlog })
            .unwrap();
    }
    for (phase, op, st) in &data.histograms {
        store.add_histograms(id, *phase, op, st).unwrap();
    }
    store.add_violations(id, &data.violations).unwrap();
    store.finish_run(id, r.status, r.summary.as_ref().unwrap_or(&RunSummary::default()), r.ended_at_ms.unwrap_or(r.started_at_ms)).unwrap();
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_column_count_matches_the_column_list() {
        assert_eq!(rows::FIGURES_COLUMNS.split(',').count(), rows::FIGURES_COLUMN_COUNT);
    }

    #[test]
    fn histogram_bytes_round_trip_and_garbage_is_an_error() {
        let mut h = crate::stats::new_histogram();
        for v in 1..=5000u64 {
            h.record(v * 1_337).unwrap();
        }
        let back = deserialize_histogram(&serialize_histogram(&h)).unwrap();
        assert_eq!((back.len(), back.max(), back.value_at_quantile(0.99)), (h.len(), h.max(), h.value_at_quantile(0.99)));
        assert!(back == h);
        assert!(matches!(deserialize_histogram(b"not a histogram"), Err(StoreError::Corrupt { .. })));
    }

    #[test]
    fn statuses_round_trip_through_their_names() {
        for s in [RunStatus::Running, RunStatus::Completed, RunStatus::Interrupted, RunStatus::Failed, RunStatus::Crashed] {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{}\"", s.as_str()));
        }
        assert_eq!(RunStatus::parse("done"), None);
    }
}
