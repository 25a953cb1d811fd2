//! The JSON export of one saved run: everything the store holds about it, histograms included,
//! so another tool (or a later casslab) can recompute any percentile. It only shapes data; it
//! does not read the store or choose file names.
//!
//! # Format (`"format": "casslab-run"`, `"format_version": 1`)
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
//!                  "late": 0, "max_lag_ns": 0, "empty_reads": 0 } ] } ],
//!   "histograms": [
//!     { "phase": "run", "op": "read", "ok": 58000, "errors": {},
//!       "latency": <LatencySummary>, "service": <LatencySummary>,
//!       "latency_hdr": "HISTFAA...", "service_hdr": "HISTFAA..." } ]
//! }
//! ```
//!
//! `<LatencySummary>` is `{ "count", "mean_ns", "p50_ns", "p95_ns", "p99_ns", "p999_ns", "max_ns" }`.
//! Every latency is in nanoseconds. `latency` is measured from each request's intended start
//! time (so it includes queueing when the client falls behind a target rate); `service` from
//! the moment the request was sent. `start_ms`/`end_ms` are milliseconds since the run started.
//! `late` counts operations started more than 1 ms after their intended start (fixed rate),
//! `max_lag_ns` is the largest such delay, `empty_reads` the executions whose reads returned no
//! row; `validity` is the run's verdict (`crate::validity`).
//! `intervals` holds one entry per sampling interval with its operations in workload order.
//! `histograms` holds each operation's whole-phase histograms, serialized as HdrHistogram's
//! V2 compressed format (what the Java `HistogramLogWriter` writes) in standard base64; decode
//! them with any HdrHistogram implementation.

use crate::stats::{LatencySummary, OpStats, OpSummary, Phase};
use crate::store::{serialize_histogram, RunRecord, StoredInterval};
use crate::validity::Validity;
use base64::Engine as _;
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::Path;

pub const FORMAT: &str = "casslab-run";
pub const FORMAT_VERSION: u32 = 1;
/// How `latency_hdr` / `service_hdr` are encoded.
pub const HISTOGRAM_ENCODING: &str = "hdrhistogram-v2-deflate-base64";

/// The whole run as one JSON value (see the module docs for its shape).
pub fn run_json(record: &RunRecord, intervals: &[StoredInterval], histograms: &[(Phase, String, OpStats)], validity: Option<&Validity>) -> Value {
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
        "intervals": intervals_json(intervals),
        "histograms": histograms.iter().map(|(phase, op, stats)| histogram_json(*phase, op, stats)).collect::<Vec<_>>(),
    })
}

/// Writes [`run_json`] to `path`, pretty-printed.
pub fn write_run_json(
    path: &Path,
    record: &RunRecord,
    intervals: &[StoredInterval],
    histograms: &[(Phase, String, OpStats)],
    validity: Option<&Validity>,
) -> io::Result<()> {
    let mut w = io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer_pretty(&mut w, &run_json(record, intervals, histograms, validity))?;
    w.write_all(b"\n")?;
    w.flush()
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
                    let mut op = serde_json::to_value(OpSummary::of(&r.op, &r.stats, duration_s)).unwrap_or_default();
                    op["late"] = r.stats.late.into();
                    op["max_lag_ns"] = r.stats.max_lag_ns.into();
                    op["empty_reads"] = r.stats.empty_reads.into();
                    op
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
    let b64 = |h| base64::engine::general_purpose::STANDARD.encode(serialize_histogram(h));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::stats::ErrorKind;
    use crate::store::{deserialize_histogram, RunStatus, RunSummary};

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
            summary: Some(RunSummary { phases: vec![], notes: vec!["a note".into()] }),
            tags: vec!["t1".into()],
            process: None,
        }
    }

    #[test]
    fn export_has_every_part_and_parses_back() {
        let intervals = [interval(0, "read"), interval(0, "write"), interval(1, "read"), interval(1, "write")];
        let hists = vec![(Phase::Run, "read".to_string(), stats(5))];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let validity = crate::validity::assess(&record(), &crate::validity::Tally::of(&intervals), &[], false);
        write_run_json(&path, &record(), &intervals, &hists, Some(&validity)).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();

        assert_eq!(v["format"], "casslab-run");
        assert_eq!(v["format_version"], 1);
        assert_eq!(
            (v["id"].as_i64(), v["workload"].as_str(), v["status"].as_str()),
            (Some(9), Some("kv"), Some("completed"))
        );
        assert_eq!(v["started_at_ms"], 1_700_000_000_000i64);
        assert_eq!(v["tags"][0], "t1");
        let config: RunConfig = serde_json::from_value(v["config"].clone()).unwrap();
        assert_eq!(config, record().config);
        assert_eq!(v["env"]["casslab_version"], "0.1.0");
        assert_eq!(v["summary"]["notes"][0], "a note");
        assert_eq!(v["validity"]["verdict"], "suspect", "an error in 201 operations: {}", v["validity"]);
        assert_eq!(v["validity"]["reasons"][0]["check"], "errors");

        let ivs = v["intervals"].as_array().unwrap();
        assert_eq!(ivs.len(), 2);
        assert_eq!(
            (ivs[1]["index"].as_u64(), ivs[1]["start_ms"].as_u64(), ivs[1]["backlog"].as_u64()),
            (Some(1), Some(500), Some(3))
        );
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
    }

    #[test]
    fn an_unfinished_run_exports_nulls_not_errors() {
        let rec = RunRecord { ended_at_ms: None, summary: None, status: RunStatus::Running, ..record() };
        let v = run_json(&rec, &[], &[], None);
        assert!(v["ended_at_ms"].is_null() && v["summary"].is_null());
        assert_eq!(v["status"], "running");
        assert_eq!(v["intervals"], json!([]));
        assert_eq!(v["histograms"], json!([]));
    }
}
