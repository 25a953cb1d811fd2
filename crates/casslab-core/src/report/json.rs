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
//!                  "late": 0, "max_lag_ns": 0, "empty_reads": 0, "rows_read": 0 } ] } ],
//!   "histograms": [
//!     { "phase": "run", "op": "read", "ok": 58000, "errors": {},
//!       "latency": <LatencySummary>, "service": <LatencySummary>,
//!       "latency_hdr": "HISTFAA...", "service_hdr": "HISTFAA..." } ],
//!   "server_samples": [ { "node": "127.0.0.1", "metric": "cpu_pct", "at_ms": 1000, "value": 93.5 } ],
//!   "events": [ { "record": <EventRecord>, "impact": <EventImpact> | null } ],
//!   "suspects": [ { "op", "start_ms", "end_ms", "p99_ms", "typical_p99_ms", "findings": ["..."], "text" } ],
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
//! `suspects` are the intervals whose p99 exceeds 3× the operation's median interval p99, with
//! what the servers did then (`server::suspects`); computed from the rest, so a reader ignores
//! them. `docs/run-export.schema.json` describes the whole format; a test checks real exports
//! against it.
//! `late` counts operations started more than 1 ms after their intended start (fixed rate),
//! `max_lag_ns` is the largest such delay, `empty_reads` the executions whose reads returned no
//! row, `rows_read` the rows the reads returned (a set read's: all its statements'); `validity` is the run's verdict (`crate::validity`).
//! `histograms` holds each operation's whole-phase histograms, serialized as HdrHistogram's
//! V2 compressed format (what the Java `HistogramLogWriter` writes) in standard base64; decode
//! them with any HdrHistogram implementation. [`read_run_json`] reads a file back.

use super::server_view::client_interval;
use crate::config::RunConfig;
use crate::events::EventRecord;
use crate::server::suspects::{self, ClientInterval};
use crate::server::traces::Trace;
use crate::server::ServerSample;
use crate::stats::{ErrorKind, LatencySummary, OpStats, Phase};
use crate::store::{serialize_histogram, EncodedInterval, EventImpact, PackedInterval, PackedStats, RunData, RunRecord, RunStatus, SavedViolation};
use crate::validity::Validity;
use base64::Engine as _;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub const FORMAT: &str = "casslab-run";
pub const FORMAT_VERSION: u32 = 2;
/// How `latency_hdr` / `service_hdr` are encoded.
pub const HISTOGRAM_ENCODING: &str = "hdrhistogram-v2-deflate-base64";

/// The whole run as one JSON value (see the module docs for its shape): for tests and small
/// runs; [`to_writer_streamed`] writes a long run without holding it.
pub fn run_json(run: &RunData, validity: Option<&Validity>) -> Value {
    let mut bytes = Vec::new();
    to_writer(&mut bytes, run, validity).expect("writing to memory");
    serde_json::from_slice(&bytes).expect("the export is JSON")
}

/// Writes [`run_json`] to `path`, pretty-printed.
pub fn write_run_json(path: &Path, run: &RunData, validity: Option<&Validity>) -> io::Result<()> {
    to_writer(&mut io::BufWriter::new(std::fs::File::create(path)?), run, validity)
}

/// Writes [`run_json`] to `w`, pretty-printed, with a final line break.
pub fn to_writer(w: &mut impl Write, run: &RunData, validity: Option<&Validity>) -> io::Result<()> {
    to_writer_streamed(w, run, validity, |row| run.intervals.iter().try_for_each(|r| row(&EncodedInterval::of(r))))
}

/// Writes the export of `run` to `w` with the interval rows that `rows` hands over one at a
/// time, in the store's order (by interval, then operation), after those in `run.intervals`
/// (leave it empty): a long run's decoded histograms are never all in memory, and nothing of
/// the export is built in memory before it is written. Keys come in alphabetical order.
pub fn to_writer_streamed(
    w: &mut impl Write,
    run: &RunData,
    validity: Option<&Validity>,
    rows: impl FnOnce(&mut dyn FnMut(&EncodedInterval) -> io::Result<()>) -> io::Result<()>,
) -> io::Result<()> {
    use serde::ser::{SerializeMap, Serializer as _};
    let record = &run.record;
    let intervals = Intervals { rows: RefCell::new(Some(rows)), client: RefCell::new(Vec::new()) };
    let mut ser = serde_json::Serializer::pretty(&mut *w);
    let mut map = ser.serialize_map(None)?;
    map.serialize_entry("config", &serde_json::to_value(&record.config)?)?;
    map.serialize_entry("ended_at_ms", &record.ended_at_ms)?;
    map.serialize_entry("env", &serde_json::to_value(&record.env)?)?;
    map.serialize_entry("events", &run.events.iter().map(|(record, impact)| json!({ "record": record, "impact": impact })).collect::<Vec<_>>())?;
    map.serialize_entry("format", FORMAT)?;
    map.serialize_entry("format_version", &FORMAT_VERSION)?;
    map.serialize_entry("histogram_encoding", HISTOGRAM_ENCODING)?;
    map.serialize_entry("histograms", &run.histograms.iter().map(|(phase, op, stats)| histogram_json(*phase, op, stats)).collect::<Vec<_>>())?;
    map.serialize_entry("id", &record.id)?;
    map.serialize_entry("intervals", &intervals)?;
    map.serialize_entry("server_samples", &run.server_samples.iter().map(SampleJson::of).collect::<Vec<_>>())?;
    map.serialize_entry("started_at_ms", &record.started_at_ms)?;
    map.serialize_entry("status", &record.status)?;
    map.serialize_entry("summary", &serde_json::to_value(&record.summary)?)?;
    let suspects = suspects::find(&intervals.client.borrow(), &run.server_samples, suspects::SPIKE_FACTOR);
    map.serialize_entry("suspects", &suspects.iter().map(suspects::to_json).collect::<Vec<_>>())?;
    map.serialize_entry("tags", &serde_json::to_value(&record.tags)?)?;
    map.serialize_entry("traces", &serde_json::to_value(&run.traces)?)?;
    map.serialize_entry("validity", &serde_json::to_value(validity)?)?;
    map.serialize_entry("violations", &serde_json::to_value(&run.violations)?)?;
    map.serialize_entry("workload", &record.workload)?;
    map.end()?;
    w.write_all(b"\n")?;
    w.flush()
}

/// A server sample with its keys in alphabetical order, as the export's other objects have them.
#[derive(serde::Serialize)]
struct SampleJson<'a> {
    at_ms: u64,
    metric: &'a str,
    node: &'a str,
    value: f64,
}

impl SampleJson<'_> {
    fn of(s: &ServerSample) -> SampleJson<'_> {
        SampleJson { at_ms: s.at_ms, metric: &s.metric, node: &s.node, value: s.value }
    }
}

/// The `intervals` array, written as the rows come: each interval's rows are gathered (one per
/// operation) and written when the next interval starts. Keeps each row's client p99 for the
/// suspects, which are written after.
struct Intervals<F> {
    rows: RefCell<Option<F>>,
    client: RefCell<Vec<ClientInterval>>,
}

impl<F: FnOnce(&mut dyn FnMut(&EncodedInterval) -> io::Result<()>) -> io::Result<()>> serde::Serialize for Intervals<F> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq};
        let rows = self.rows.borrow_mut().take().ok_or_else(|| S::Error::custom("the intervals are written once"))?;
        let mut seq = serializer.serialize_seq(None)?;
        let mut current: Vec<Value> = Vec::new();
        let mut head: Option<(u32, Value)> = None;
        let mut failed: Option<S::Error> = None;
        let flush = |seq: &mut S::SerializeSeq, head: &mut Option<(u32, Value)>, ops: &mut Vec<Value>| -> Result<(), S::Error> {
            if let Some((_, mut iv)) = head.take() {
                iv["ops"] = Value::Array(std::mem::take(ops));
                seq.serialize_element(&iv)?;
            }
            Ok(())
        };
        let read = rows(&mut |row: &EncodedInterval| {
            let r = &row.figures;
            if head.as_ref().is_some_and(|(index, _)| *index != r.index) {
                if let Err(e) = flush(&mut seq, &mut head, &mut current) {
                    failed = Some(e);
                    return Err(io::Error::other("the export could not be written"));
                }
            }
            if head.is_none() {
                let duration_s = r.end_ms.saturating_sub(r.start_ms) as f64 / 1000.0;
                let iv = json!({ "index": r.index, "phase": r.phase, "start_ms": r.start_ms, "end_ms": r.end_ms, "duration_s": duration_s, "backlog": r.backlog, "ops": [] });
                head = Some((r.index, iv));
            }
            current.push(op_json(row));
            self.client.borrow_mut().extend(client_interval(r));
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        read.map_err(S::Error::custom)?;
        flush(&mut seq, &mut head, &mut current)?;
        seq.end()
    }
}

fn b64(h: &hdrhistogram::Histogram<u64>) -> String {
    base64::engine::general_purpose::STANDARD.encode(serialize_histogram(h))
}

/// One (interval, operation) row of the `intervals` array's `ops`: its saved figures, and its
/// histograms copied as they were saved.
fn op_json(row: &EncodedInterval) -> Value {
    let r = &row.figures;
    let mut v = serde_json::to_value(&r.summary).unwrap_or(Value::Null);
    v["latency_hdr"] = base64::engine::general_purpose::STANDARD.encode(&row.intended_hdr).into();
    v["service_hdr"] = base64::engine::general_purpose::STANDARD.encode(&row.service_hdr).into();
    v["late"] = r.late.into();
    v["max_lag_ns"] = r.max_lag_ns.into();
    v["empty_reads"] = r.summary.empty_reads.into();
    v
}

fn histogram_json(phase: Phase, op: &str, stats: &OpStats) -> Value {
    let mut v = json!({
        "phase": phase,
        "op": op,
        "ok": stats.ok,
        "errors": stats.errors,
        "latency": LatencySummary::of(&stats.intended),
        "service": LatencySummary::of(&stats.service),
        "latency_hdr": b64(&stats.intended),
        "service_hdr": b64(&stats.service),
    });
    if let Some(c) = stats.verify_counts() {
        v["verify"] = serde_json::to_value(c).unwrap_or(Value::Null);
    }
    if let Some(c) = stats.recall {
        v["recall"] = serde_json::to_value(c).unwrap_or(Value::Null);
    }
    v
}

/// A file that is not a readable `casslab-run` export.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: io::Error },
    #[error("{path} is not JSON: {error}")]
    Json { path: PathBuf, error: serde_json::Error },
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
    let (mut data, rows) = read_run_json_packed(path)?;
    data.intervals = rows
        .iter()
        .map(|r| r.unpack().map_err(|_| ExportError::Malformed { path: path.into(), what: format!("a histogram of interval {} ({})", r.index, r.op) }))
        .collect::<Result<_, _>>()?;
    Ok(data)
}

/// Reads a `casslab-run` export back with its interval rows apart and their histograms left
/// encoded (the returned [`RunData`]'s `intervals` are empty): a long run's rows fit in memory
/// this way, where decoded they take half a megabyte each.
pub fn read_run_json_packed(path: &Path) -> Result<(RunData, Vec<PackedInterval>), ExportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ExportError::Read { path: path.into(), error: source })?;
    let mut v: Value = serde_json::from_str(&text).map_err(|source| ExportError::Json { path: path.into(), error: source })?;
    drop(text);
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
        config: RunConfig::from_saved(v.get("config").cloned().unwrap_or(Value::Null)).map_err(|_| bad("config"))?,
        env: parse_field(&v, "env", path)?,
        summary: parse_field(&v, "summary", path)?,
        tags: parse_field(&v, "tags", path)?,
        process: None,
    };
    let packed = |o: &Value, what: &str| -> Result<PackedStats, ExportError> {
        let hdr = |k: &str| -> Result<Vec<u8>, ExportError> {
            base64::engine::general_purpose::STANDARD.decode(o[k].as_str().ok_or_else(|| bad(&format!("{what}.{k}")))?).map_err(|_| bad(&format!("{what}.{k}")))
        };
        let errors: BTreeMap<ErrorKind, u64> = serde_json::from_value(o["errors"].clone()).map_err(|_| bad(&format!("{what}.errors")))?;
        Ok(PackedStats {
            ok: o["ok"].as_u64().ok_or_else(|| bad(&format!("{what}.ok")))?,
            errors,
            intended_hdr: hdr("latency_hdr")?,
            service_hdr: hdr("service_hdr")?,
            late: o["late"].as_u64().unwrap_or(0),
            max_lag_ns: o["max_lag_ns"].as_u64().unwrap_or(0),
            empty_reads: o["empty_reads"].as_u64().unwrap_or(0),
            rows_read: o["rows_read"].as_u64().unwrap_or(0),
            verify: serde_json::from_value(o["verify"].clone()).map_err(|_| bad(&format!("{what}.verify")))?,
            recall: serde_json::from_value(o["recall"].clone()).map_err(|_| bad(&format!("{what}.recall")))?,
        })
    };
    let mut intervals = Vec::new();
    let ivs = match v.get_mut("intervals").map(Value::take) {
        Some(Value::Array(ivs)) => ivs,
        _ => return Err(bad("intervals")),
    };
    for (i, iv) in ivs.into_iter().enumerate() {
        let what = format!("intervals[{i}]");
        let num = |k: &str| iv[k].as_u64().ok_or_else(|| bad(&format!("{what}.{k}")));
        let phase = serde_json::from_value(iv["phase"].clone()).map_err(|_| bad(&format!("{what}.phase")))?;
        for (j, o) in iv["ops"].as_array().ok_or_else(|| bad(&format!("{what}.ops")))?.iter().enumerate() {
            intervals.push(PackedInterval {
                index: num("index")? as u32,
                phase,
                start_ms: num("start_ms")?,
                end_ms: num("end_ms")?,
                op: o["op"].as_str().ok_or_else(|| bad(&format!("{what}.ops[{j}].op")))?.to_string(),
                stats: packed(o, &format!("{what}.ops[{j}]"))?,
                backlog: num("backlog")?,
            });
        }
    }
    let mut histograms = Vec::new();
    for (i, h) in v["histograms"].as_array().ok_or_else(|| bad("histograms"))?.iter().enumerate() {
        let what = format!("histograms[{i}]");
        let phase: Phase = serde_json::from_value(h["phase"].clone()).map_err(|_| bad(&format!("{what}.phase")))?;
        let stats = packed(h, &what)?.unpack().map_err(|_| bad(&format!("{what}'s histograms")))?;
        histograms.push((phase, h["op"].as_str().ok_or_else(|| bad(&format!("{what}.op")))?.to_string(), stats));
    }
    let server_samples: Vec<ServerSample> = parse_field(&v, "server_samples", path)?;
    let mut events: Vec<(EventRecord, Option<EventImpact>)> = Vec::new();
    for e in v["events"].as_array().ok_or_else(|| bad("events"))? {
        let record = serde_json::from_value(e["record"].clone()).map_err(|_| bad("events[].record"))?;
        let impact = serde_json::from_value(e["impact"].clone()).map_err(|_| bad("events[].impact"))?;
        events.push((record, impact));
    }
    let traces: Vec<Trace> = parse_field(&v, "traces", path)?;
    let violations: Vec<SavedViolation> = match v.get("violations") {
        Some(list) => serde_json::from_value(list.clone()).map_err(|_| bad("violations"))?,
        None => Vec::new(),
    };
    Ok((RunData { record, intervals: Vec::new(), histograms, server_samples, events, traces, violations }, intervals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::stats::ErrorKind;
    use crate::store::{RunSummary, Store, StoredInterval};

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
        StoredInterval { index, phase: Phase::Run, start_ms, end_ms: start_ms + 500, op: op.into(), stats: stats(1), backlog: 3 }
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
        RunData { record: record(), intervals, histograms, server_samples: Vec::new(), events: Vec::new(), traces: Vec::new(), violations: Vec::new() }
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
            let back = crate::store::deserialize_histogram(&bytes).unwrap();
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
        assert_eq!(v["suspects"], json!([]), "no interval stands out");
    }

    #[test]
    fn a_latency_spike_is_exported_as_a_suspect_with_what_the_servers_did() {
        let mut intervals: Vec<StoredInterval> = (0..6).map(|i| interval(i, "read")).collect();
        let mut slow = OpStats::default();
        for i in 1..=200u64 {
            slow.record_ok(50_000_000 + i * 1_000, 40_000_000);
        }
        intervals[4].stats = slow;
        let mut run = data(intervals, Vec::new());
        run.server_samples.push(ServerSample {
            node: "127.0.0.1".into(),
            metric: format!("{}G1 Young", crate::server::metric::GC_PAUSE_PREFIX),
            at_ms: 2_100,
            value: 180.0,
        });
        let v = run_json(&run, None);
        let s = &v["suspects"];
        assert_eq!(s.as_array().unwrap().len(), 1, "{s}");
        assert_eq!((s[0]["op"].as_str(), s[0]["start_ms"].as_u64(), s[0]["end_ms"].as_u64()), (Some("read"), Some(2_000), Some(2_500)));
        assert!(s[0]["p99_ms"].as_f64().unwrap() > 50.0 && s[0]["typical_p99_ms"].as_f64().unwrap() < 1.0, "{s}");
        assert!(s[0]["text"].as_str().unwrap().starts_with("p99 of read rose to"), "{s}");
        assert!(s[0]["findings"][0].as_str().unwrap().contains("paused 180 ms in GC"), "{s}");
    }

    #[test]
    fn an_export_written_row_by_row_is_the_same_and_stops_at_a_failed_row() {
        let intervals = vec![interval(0, "read"), interval(0, "write"), interval(1, "read"), interval(2, "read"), interval(2, "write")];
        let mut run = data(intervals.clone(), vec![(Phase::Run, "read".to_string(), stats(5))]);
        run.server_samples.push(ServerSample { node: "127.0.0.1".into(), metric: "cpu_pct".into(), at_ms: 500, value: 42.5 });
        let mut whole = Vec::new();
        to_writer(&mut whole, &run, None).unwrap();
        let head = RunData { intervals: Vec::new(), ..run.clone() };
        let mut streamed = Vec::new();
        to_writer_streamed(&mut streamed, &head, None, |row| intervals.iter().try_for_each(|r| row(&EncodedInterval::of(r)))).unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), String::from_utf8(whole.clone()).unwrap());
        // the same bytes as one JSON value pretty-printed: keys in alphabetical order
        let v: Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(serde_json::to_string_pretty(&v).unwrap() + "\n", String::from_utf8(whole).unwrap());
        assert_eq!(v["intervals"].as_array().unwrap().iter().map(|iv| iv["ops"].as_array().unwrap().len()).collect::<Vec<_>>(), [2, 1, 2]);

        let failed = to_writer_streamed(&mut Vec::new(), &head, None, |row| {
            row(&EncodedInterval::of(&intervals[0]))?;
            Err(io::Error::other("the store went away"))
        });
        assert!(failed.unwrap_err().to_string().contains("the store went away"));

        // from a store, its rows' saved figures and encoded histograms make the same export as
        // the decoded rows
        let store = Store::open_in_memory().unwrap();
        let id = crate::store::save_run_data(&store, &run);
        let mut decoded = Vec::new();
        to_writer(&mut decoded, &store.run_data(id).unwrap(), None).unwrap();
        let mut copied = Vec::new();
        to_writer_streamed(&mut copied, &store.run_data_but_intervals(id).unwrap(), None, |row| {
            store.for_each_encoded_interval(id, |iv| Ok(row(&iv)?)).map_err(io::Error::other)
        })
        .unwrap();
        assert_eq!(String::from_utf8(copied).unwrap(), String::from_utf8(decoded).unwrap());
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
