//! The JSON export of one saved run: everything the store holds about it, histograms included,
//! so another tool (or a later casslab) can recompute any percentile. It only shapes data; it
//! does not read the store or choose file names.
//!
//! # Format (`"format": "casslab-run"`, `"format_version": 2`)
//!
//! ```text
//! {
//!   "format": "casslab-run", "format_version": 1,
//!   "id": 12, "workload": "kv", "status": "completed" | "running" | "interrupted" | "failed" | "crashed",
//!   "started_at_ms": <unix ms>, "ended_at_ms": <unix ms> | null, "tags": ["..."],
//!   "config": { ...RunConfig as saved with the run, with its own "version"... },
//!   "env": { ...RunEnvironment... },
//!   "summary": { "phases": [...], "notes": ["..."] } | null,
//!   "validity": { "verdict": "valid" | "suspect" | "invalid", "reasons": [{ "check", "verdict", "message" }],
//!                 "figures": { "late_share", "max_lag_ms", "target_ops_per_s", "achieved_ops_per_s",
//!                              "client_cpu_pct", "client_cores", "error_share", "empty_reads", ... },
//!                 "not_checked": ["..."] } | null,
//!   "histogram_encoding": "hdrhistogram-v2-deflate-base64",
//!   "intervals": [
//!     { "index": 0, "phase": "run", "start_ms": 0, "end_ms": 1000, "duration_s": 1.0, "backlog": 0,
//!       "ops": [ { "op": "read", "ok": 980, "errors": { "timeout": 2 }, "ops_per_s": 980.0,
//!                  "latency": <LatencySummary>, "service": <LatencySummary>,
//!                  "latency_hdr": "HISTFAA...", "service_hdr": "HISTFAA...",
//!                  "late": 0, "max_lag_ns": 0, "empty_reads": 0 } ] } ],
//!   "histograms": [
//!     { "phase": "run", "op": "read", "ok": 58000, "errors": {},
//!       "latency": <LatencySummary>, "service": <LatencySummary>,
//!       "latency_hdr": "HISTFAA...", "service_hdr": "HISTFAA..." } ],
//!   "server_samples": [ { "node": "127.0.0.1", "metric": "cpu_pct", "at_ms": 1000, "value": 93.5 } ],
//!   "events": [ { "record": <EventRecord>, "impact": <EventImpact> | null } ],
//!   "traces": [ <Trace> ]
//! }
//! ```
//!
//! `<LatencySummary>` is `{ "count", "mean_ns", "p50_ns", "p95_ns", "p99_ns", "p999_ns", "max_ns" }`.
//! Every latency is in nanoseconds. `latency` is measured from each request's intended start
//! time (so it includes queueing when the client falls behind a target rate); `service` from
//! the moment the request was sent. `start_ms`/`end_ms` are milliseconds since the run started.
//! `intervals` holds one entry per sampling interval with its operations in workload order,
//! each with its histograms (so that the intervals of several loaders can be added exactly:
//! `casslab merge`). Version 1 had no interval histograms, server samples, events or traces.
//! `late` counts operations started more than 1 ms after their intended start (fixed rate),
//! `max_lag_ns` is the largest such delay, `empty_reads` the executions whose reads returned no
//! row; `validity` is the run's verdict (`crate::validity`).
//! `histograms` holds each operation's whole-phase histograms, serialized as HdrHistogram's
//! V2 compressed format (what the Java `HistogramLogWriter` writes) in standard base64; decode
//! them with any HdrHistogram implementation. [`read_run_json`] reads a file back.

use crate::events::EventRecord;
use crate::server::traces::Trace;
use crate::server::ServerSample;
use crate::stats::{ErrorKind, LatencySummary, OpStats, OpSummary, Phase};
use crate::store::{deserialize_histogram, serialize_histogram, EventImpact, RunData, RunRecord, RunStatus, StoredInterval};
use crate::validity::Validity;
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub const FORMAT: &str = "casslab-run";
pub const FORMAT_VERSION: u32 = 2;
/// How `latency_hdr` / `service_hdr` are encoded.
pub const HISTOGRAM_ENCODING: &str = "hdrhistogram-v2-deflate-base64";

/// The whole run as one JSON value (see the module docs for its shape).
pub fn run_json(run: &RunData, validity: Option<&Validity>) -> Value {
    let record = &run.record;
    json!({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "id": record.id,
        "workload": record.workload,
        "status": record.status,
        "started_at_ms": record.started_at_ms,
        "ended_at_ms": record.ended_at_ms,
        "tags": record.tags,
        "config": record.config,
        "env": record.env,
        "summary": record.summary,
        "validity": validity,
        "histogram_encoding": HISTOGRAM_ENCODING,
        "intervals": intervals_json(&run.intervals),
        "histograms": run.histograms.iter().map(|(phase, op, stats)| histogram_json(*phase, op, stats)).collect::<Vec<_>>(),
        "server_samples": run.server_samples,
        "events": run.events.iter().map(|(record, impact)| json!({ "record": record, "impact": impact })).collect::<Vec<_>>(),
        "traces": run.traces,
    })
}

/// Writes [`run_json`] to `path`, pretty-printed.
pub fn write_run_json(path: &Path, run: &RunData, validity: Option<&Validity>) -> io::Result<()> {
    let mut w = io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer_pretty(&mut w, &run_json(run, validity))?;
    w.write_all(b"\n")?;
    w.flush()
}

fn b64(h: &hdrhistogram::Histogram<u64>) -> String {
    base64::engine::general_purpose::STANDARD.encode(serialize_histogram(h))
}

/// Groups the store's (interval, op) rows, which come ordered by interval, into one entry per
/// interval.
fn intervals_json(intervals: &[StoredInterval]) -> Vec<Value> {
    intervals
        .chunk_by(|a, b| a.index == b.index)
        .map(|rows| {
            let first = &rows[0];
            let duration_s = first.duration_s();
            let ops: Vec<Value> = rows
                .iter()
                .map(|r| {
                    let mut v = serde_json::to_value(OpSummary::of(&r.op, &r.stats, duration_s)).unwrap_or(Value::Null);
                    v["latency_hdr"] = b64(&r.stats.intended).into();
                    v["service_hdr"] = b64(&r.stats.service).into();
                    v["late"] = r.stats.late.into();
                    v["max_lag_ns"] = r.stats.max_lag_ns.into();
                    v["empty_reads"] = r.stats.empty_reads.into();
                    v
                })
                .collect();
            json!({
                "index": first.index,
                "phase": first.phase,
                "start_ms": first.start_ms,
                "end_ms": first.end_ms,
                "duration_s": duration_s,
                "backlog": first.backlog,
                "ops": ops,
            })
        })
        .collect()
}

fn histogram_json(phase: Phase, op: &str, stats: &OpStats) -> Value {
    json!({
        "phase": phase,
        "op": op,
        "ok": stats.ok,
        "errors": stats.errors,
        "latency": LatencySummary::of(&stats.intended),
        "service": LatencySummary::of(&stats.service),
        "latency_hdr": b64(&stats.intended),
        "service_hdr": b64(&stats.service),
    })
}

/// A file that is not a readable `casslab-run` export.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path} is not JSON: {source}")]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{path} is not a casslab run export (its \"format\" is not \"casslab-run\")")]
    NotAnExport { path: PathBuf },
    #[error("{path} is a casslab-run export of format version {found}, which has no interval histograms; export the run again with this casslab (`casslab show RUN --json FILE`)")]
    OldVersion { path: PathBuf, found: u64 },
    #[error("{path}: {what} is missing or malformed")]
    Malformed { path: PathBuf, what: String },
}

fn parse_field<T: serde::de::DeserializeOwned>(v: &Value, name: &str, path: &Path) -> Result<T, ExportError> {
    serde_json::from_value(v.get(name).cloned().unwrap_or(Value::Null)).map_err(|_| ExportError::Malformed { path: path.into(), what: name.to_string() })
}

/// Reads a `casslab-run` export (format version 2) back.
pub fn read_run_json(path: &Path) -> Result<RunData, ExportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ExportError::Read { path: path.into(), source })?;
    let v: Value = serde_json::from_str(&text).map_err(|source| ExportError::Json { path: path.into(), source })?;
    if v["format"] != FORMAT {
        return Err(ExportError::NotAnExport { path: path.into() });
    }
    let version = v["format_version"].as_u64().unwrap_or(0);
    if version < 2 {
        return Err(ExportError::OldVersion { path: path.into(), found: version });
    }
    let bad = |what: &str| ExportError::Malformed { path: path.into(), what: what.to_string() };
    let record = RunRecord {
        id: v["id"].as_i64().ok_or_else(|| bad("id"))?,
        workload: v["workload"].as_str().ok_or_else(|| bad("workload"))?.to_string(),
        started_at_ms: v["started_at_ms"].as_i64().ok_or_else(|| bad("started_at_ms"))?,
        ended_at_ms: v["ended_at_ms"].as_i64(),
        status: parse_field::<RunStatus>(&v, "status", path)?,
        config: parse_field(&v, "config", path)?,
        env: parse_field(&v, "env", path)?,
        summary: parse_field(&v, "summary", path)?,
        tags: parse_field(&v, "tags", path)?,
        process: None,
    };
    let stats = |o: &Value, what: &str| -> Result<OpStats, ExportError> {
        let hist = |k: &str| -> Result<_, ExportError> {
            let bytes = base64::engine::general_purpose::STANDARD.decode(o[k].as_str().ok_or_else(|| bad(&format!("{what}.{k}")))?).map_err(|_| bad(&format!("{what}.{k}")))?;
            deserialize_histogram(&bytes).map_err(|_| bad(&format!("{what}.{k}")))
        };
        let errors: BTreeMap<ErrorKind, u64> = serde_json::from_value(o["errors"].clone()).map_err(|_| bad(&format!("{what}.errors")))?;
        Ok(OpStats {
            ok: o["ok"].as_u64().ok_or_else(|| bad(&format!("{what}.ok")))?,
            errors,
            intended: hist("latency_hdr")?,
            service: hist("service_hdr")?,
            late: o["late"].as_u64().unwrap_or(0),
            max_lag_ns: o["max_lag_ns"].as_u64().unwrap_or(0),
            empty_reads: o["empty_reads"].as_u64().unwrap_or(0),
        })
    };
    let mut intervals = Vec::new();
    for (i, iv) in v["intervals"].as_array().ok_or_else(|| bad("intervals"))?.iter().enumerate() {
        let what = format!("intervals[{i}]");
        let num = |k: &str| iv[k].as_u64().ok_or_else(|| bad(&format!("{what}.{k}")));
        let phase = serde_json::from_value(iv["phase"].clone()).map_err(|_| bad(&format!("{what}.phase")))?;
        for (j, o) in iv["ops"].as_array().ok_or_else(|| bad(&format!("{what}.ops")))?.iter().enumerate() {
            intervals.push(StoredInterval {
                index: num("index")? as u32,
                phase,
                start_ms: num("start_ms")?,
                end_ms: num("end_ms")?,
                op: o["op"].as_str().ok_or_else(|| bad(&format!("{what}.ops[{j}].op")))?.to_string(),
                stats: stats(o, &format!("{what}.ops[{j}]"))?,
                backlog: num("backlog")?,
            });
        }
    }
    let mut histograms = Vec::new();
    for (i, h) in v["histograms"].as_array().ok_or_else(|| bad("histograms"))?.iter().enumerate() {
        let what = format!("histograms[{i}]");
        let phase: Phase = serde_json::from_value(h["phase"].clone()).map_err(|_| bad(&format!("{what}.phase")))?;
        histograms.push((phase, h["op"].as_str().ok_or_else(|| bad(&format!("{what}.op")))?.to_string(), stats(h, &what)?));
    }
    let server_samples: Vec<ServerSample> = parse_field(&v, "server_samples", path)?;
    let mut events: Vec<(EventRecord, Option<EventImpact>)> = Vec::new();
    for e in v["events"].as_array().ok_or_else(|| bad("events"))? {
        let record = serde_json::from_value(e["record"].clone()).map_err(|_| bad("events[].record"))?;
        let impact = serde_json::from_value(e["impact"].clone()).map_err(|_| bad("events[].impact"))?;
        events.push((record, impact));
    }
    let traces: Vec<Trace> = parse_field(&v, "traces", path)?;
    Ok(RunData { record, intervals, histograms, server_samples, events, traces })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::stats::ErrorKind;
    use crate::store::RunSummary;

    fn stats(scale: u64) -> OpStats {
        let mut s = OpStats::default();
        for i in 1..=200u64 {
            s.record_ok(i * scale * 1_000, i * scale * 800);
        }
        s.record_error(ErrorKind::Overloaded);
        s
    }

    fn interval(index: u32, op: &str) -> StoredInterval {
        let start_ms = u64::from(index) * 500;
        StoredInterval {
            index,
            phase: Phase::Run,
            start_ms,
            end_ms: start_ms + 500,
            op: op.into(),
            stats: stats(1),
            backlog: 3,
        }
    }

    fn record() -> RunRecord {
        RunRecord {
            id: 9,
            workload: "kv".into(),
            started_at_ms: 1_700_000_000_000,
            ended_at_ms: Some(1_700_000_001_000),
            status: RunStatus::Completed,
            config: RunConfig { workload: "kv".into(), seed: 7, ..RunConfig::default() },
            env: RunEnvironment { casslab_version: "0.1.0".into(), ..Default::default() },
            summary: Some(RunSummary { phases: vec![], notes: vec!["a note".into()], ..RunSummary::default() }),
            tags: vec!["t1".into()],
            process: None,
        }
    }

    fn data(intervals: Vec<StoredInterval>, histograms: Vec<(Phase, String, OpStats)>) -> RunData {
        RunData { record: record(), intervals, histograms, server_samples: Vec::new(), events: Vec::new(), traces: Vec::new() }
    }

    #[test]
    fn export_has_every_part_and_reads_back_losslessly() {
        let intervals = vec![interval(0, "read"), interval(0, "write"), interval(1, "read"), interval(1, "write")];
        let hists = vec![(Phase::Run, "read".to_string(), stats(5))];
        let mut run = data(intervals, hists.clone());
        run.server_samples.push(ServerSample { node: "127.0.0.1".into(), metric: "cpu_pct".into(), at_ms: 500, value: 42.5 });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let validity = crate::validity::assess(&record(), &crate::validity::Tally::of(&run.intervals), &[], false);
        write_run_json(&path, &run, Some(&validity)).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();

        assert_eq!(v["format"], "casslab-run");
        assert_eq!(v["format_version"], 2);
        assert_eq!((v["id"].as_i64(), v["workload"].as_str(), v["status"].as_str()), (Some(9), Some("kv"), Some("completed")));
        assert_eq!(v["started_at_ms"], 1_700_000_000_000i64);
        assert_eq!(v["tags"][0], "t1");
        let config: RunConfig = serde_json::from_value(v["config"].clone()).unwrap();
        assert_eq!(config, record().config);
        assert_eq!(v["env"]["casslab_version"], "0.1.0");
        assert_eq!(v["summary"]["notes"][0], "a note");
        assert_eq!(v["server_samples"][0]["value"], 42.5);
        assert_eq!(v["validity"]["verdict"], "suspect", "an error in 201 operations: {}", v["validity"]);
        assert_eq!(v["validity"]["reasons"][0]["check"], "errors");

        let ivs = v["intervals"].as_array().unwrap();
        assert_eq!(ivs.len(), 2);
        assert_eq!((ivs[1]["index"].as_u64(), ivs[1]["start_ms"].as_u64(), ivs[1]["backlog"].as_u64()), (Some(1), Some(500), Some(3)));
        let ops = ivs[1]["ops"].as_array().unwrap();
        assert_eq!((ops[0]["op"].as_str(), ops[1]["op"].as_str()), (Some("read"), Some("write")));
        assert_eq!(ops[0]["ok"], 200);
        assert_eq!(ops[0]["ops_per_s"], 400.0);
        assert_eq!(ops[0]["errors"]["overloaded"], 1);
        assert_eq!((ops[0]["late"].as_u64(), ops[0]["empty_reads"].as_u64()), (Some(0), Some(0)));
        let s = stats(1);
        assert_eq!(ops[0]["latency"]["p99_ns"], LatencySummary::of(&s.intended).p99_ns);
        assert_eq!(ops[0]["service"]["max_ns"], LatencySummary::of(&s.service).max_ns);

        let h = &v["histograms"][0];
        assert_eq!((h["phase"].as_str(), h["op"].as_str()), (Some("run"), Some("read")));
        for (field, want) in [("latency_hdr", &hists[0].2.intended), ("service_hdr", &hists[0].2.service)] {
            let bytes = base64::engine::general_purpose::STANDARD.decode(h[field].as_str().unwrap()).unwrap();
            let back = deserialize_histogram(&bytes).unwrap();
            assert!(back == *want, "{field} differs");
            assert_eq!(back.len(), 200);
        }
        assert_eq!(h["latency"]["count"], 200);

        // and back: every interval's histograms, every phase histogram, the record
        let back = read_run_json(&path).unwrap();
        assert_eq!(back.intervals.len(), 4);
        for (a, b) in back.intervals.iter().zip(&run.intervals) {
            assert_eq!((a.index, a.phase, a.start_ms, a.end_ms, &a.op, a.backlog), (b.index, b.phase, b.start_ms, b.end_ms, &b.op, b.backlog));
            assert!(a.stats.intended == b.stats.intended && a.stats.service == b.stats.service && a.stats.ok == b.stats.ok && a.stats.errors == b.stats.errors);
        }
        assert!(back.histograms[0].2.intended == hists[0].2.intended);
        assert_eq!(back.record.config, run.record.config);
        assert_eq!(back.record.summary, run.record.summary);
        assert_eq!(back.server_samples, run.server_samples);
    }

    #[test]
    fn files_that_are_no_export_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        std::fs::write(&old, r#"{"format": "casslab-run", "format_version": 1}"#).unwrap();
        assert!(matches!(read_run_json(&old), Err(ExportError::OldVersion { found: 1, .. })));
        let other = dir.path().join("other.json");
        std::fs::write(&other, r#"{"format": "something"}"#).unwrap();
        assert!(matches!(read_run_json(&other), Err(ExportError::NotAnExport { .. })));
        std::fs::write(&other, "not json").unwrap();
        assert!(matches!(read_run_json(&other), Err(ExportError::Json { .. })));
    }

    #[test]
    fn an_unfinished_run_exports_nulls_not_errors() {
        let mut run = data(Vec::new(), Vec::new());
        run.record = RunRecord { ended_at_ms: None, summary: None, status: RunStatus::Running, ..record() };
        let v = run_json(&run, None);
        assert!(v["ended_at_ms"].is_null() && v["summary"].is_null());
        assert_eq!(v["status"], "running");
        assert_eq!(v["intervals"], json!([]));
        assert_eq!(v["histograms"], json!([]));
    }
}
