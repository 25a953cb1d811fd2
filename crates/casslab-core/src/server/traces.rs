//! Query traces of the slowest requests of a run: Cassandra traces a sample of requests itself
//! (its trace probability, set on the nodes casslab started), and after the run this reads
//! `system_traces.sessions` for the run's time window, keeps the N longest (by the
//! coordinator's own duration) of the workload's statements, and their steps from
//! `system_traces.events` (parsing, replicas contacted, memtables and SSTables merged,
//! tombstones read), as a per-step timeline.

use scylla::client::session::Session;
use scylla::value::{CqlValue, Row};
use serde::{Deserialize, Serialize};

/// One traced request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub session_id: String,
    /// Start on the run's time axis (ms since the engine started).
    pub at_ms: u64,
    /// The coordinator's duration of the request, in microseconds.
    pub duration_us: i64,
    pub coordinator: String,
    /// The statement (from the trace's parameters), or the request kind.
    pub query: String,
    pub events: Vec<TraceEvent>,
}

/// One step of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Microseconds since the request reached this node (`source_elapsed`).
    pub elapsed_us: i64,
    pub source: String,
    pub thread: String,
    pub activity: String,
}

/// A session row as read: (id, started at unix ms, duration µs, coordinator, query).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: uuid::Uuid,
    pub started_unix_ms: i64,
    pub duration_us: i64,
    pub coordinator: String,
    pub query: String,
}

fn col<'a>(names: &[String], row: &'a Row, name: &str) -> Option<&'a CqlValue> {
    names.iter().position(|n| n == name).and_then(|i| row.columns.get(i)).and_then(|v| v.as_ref())
}

fn to_text(v: Option<&CqlValue>) -> String {
    match v {
        Some(CqlValue::Text(s)) | Some(CqlValue::Ascii(s)) => s.clone(),
        Some(CqlValue::Inet(a)) => a.to_string(),
        _ => String::new(),
    }
}

fn to_int(v: Option<&CqlValue>) -> i64 {
    match v {
        Some(CqlValue::Int(x)) => *x as i64,
        Some(CqlValue::BigInt(x)) => *x,
        _ => 0,
    }
}

async fn select(session: &Session, cql: &str, values: impl scylla::serialize::row::SerializeRow) -> Result<(Vec<String>, Vec<Row>), String> {
    // system_traces is replicated (RF 2) but written by one node: read at ONE
    let mut st = scylla::statement::unprepared::Statement::new(cql);
    st.set_consistency(scylla::statement::Consistency::One);
    let rs = session.query_unpaged(st, values).await.map_err(|e| e.to_string())?;
    let rows = rs.into_rows_result().map_err(|e| e.to_string())?;
    let names: Vec<String> = rows.column_specs().iter().map(|c| c.name().to_string()).collect();
    let list = rows.rows::<Row>().map_err(|e| e.to_string())?.collect::<Result<Vec<Row>, _>>().map_err(|e| e.to_string())?;
    Ok((names, list))
}

/// Is this traced statement one of the workload's (not casslab's own bookkeeping or polling)?
pub fn is_workload_query(query: &str) -> bool {
    let q = query.to_ascii_lowercase();
    !q.is_empty()
        && !q.contains("system_views.")
        && !q.contains("system.")
        && !q.contains("system_schema.")
        && !q.contains("system_traces.")
        && !q.contains("casslab_meta")
}

/// The `n` longest of `rows` started within `[from_unix_ms, to_unix_ms]`, longest first.
pub fn pick_slowest(mut rows: Vec<SessionRow>, from_unix_ms: i64, to_unix_ms: i64, n: usize) -> Vec<SessionRow> {
    rows.retain(|r| r.started_unix_ms >= from_unix_ms && r.started_unix_ms <= to_unix_ms && is_workload_query(&r.query));
    rows.sort_by_key(|r| std::cmp::Reverse(r.duration_us));
    rows.truncate(n);
    rows
}

/// Reads the traces of the `n` slowest workload requests started in the window.
pub async fn slowest(session: &Session, from_unix_ms: i64, to_unix_ms: i64, t0_unix_ms: i64, n: usize) -> Result<Vec<Trace>, String> {
    let (names, rows) = select(session, "SELECT session_id, started_at, duration, coordinator, parameters, request FROM system_traces.sessions", ()).await?;
    let mut sessions = Vec::new();
    for row in &rows {
        let Some(CqlValue::Uuid(id)) = col(&names, row, "session_id") else { continue };
        let started = match col(&names, row, "started_at") {
            Some(CqlValue::Timestamp(t)) => t.0,
            _ => continue,
        };
        let query = match col(&names, row, "parameters") {
            Some(CqlValue::Map(kv)) => kv.iter().find(|(k, _)| to_text(Some(k)) == "query").map(|(_, v)| to_text(Some(v))).unwrap_or_default(),
            _ => String::new(),
        };
        let query = if query.is_empty() { to_text(col(&names, row, "request")) } else { query };
        sessions.push(SessionRow {
            id: *id,
            started_unix_ms: started,
            duration_us: to_int(col(&names, row, "duration")),
            coordinator: to_text(col(&names, row, "coordinator")),
            query,
        });
    }
    let mut out = Vec::new();
    for s in pick_slowest(sessions, from_unix_ms, to_unix_ms, n) {
        let (en, events) = select(session, "SELECT activity, source, source_elapsed, thread FROM system_traces.events WHERE session_id = ?", (s.id,)).await?;
        let mut steps: Vec<TraceEvent> = events
            .iter()
            .map(|e| TraceEvent {
                elapsed_us: to_int(col(&en, e, "source_elapsed")),
                source: to_text(col(&en, e, "source")),
                thread: to_text(col(&en, e, "thread")),
                activity: to_text(col(&en, e, "activity")),
            })
            .collect();
        steps.sort_by_key(|e| e.elapsed_us);
        out.push(Trace {
            session_id: s.id.to_string(),
            at_ms: (s.started_unix_ms - t0_unix_ms).max(0) as u64,
            duration_us: s.duration_us,
            coordinator: s.coordinator,
            query: s.query,
            events: steps,
        });
    }
    Ok(out)
}

/// A trace as text: the request, then one line per step with its time and the gap before it.
pub fn describe(t: &Trace) -> String {
    let mut out = format!("{:.2} ms at {} on {}: {}\n", t.duration_us as f64 / 1000.0, super::suspects::clock(t.at_ms), t.coordinator, t.query);
    let mut prev = 0;
    for e in &t.events {
        out.push_str(&format!(
            "    {:>9.3} ms (+{:.3}) {:<15} {}\n",
            e.elapsed_us as f64 / 1000.0,
            (e.elapsed_us - prev).max(0) as f64 / 1000.0,
            e.source,
            e.activity
        ));
        prev = e.elapsed_us;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ms: i64, us: i64, q: &str) -> SessionRow {
        SessionRow { id: uuid::Uuid::from_u128(us as u128), started_unix_ms: ms, duration_us: us, coordinator: "127.0.0.1".into(), query: q.into() }
    }

    #[test]
    fn the_slowest_workload_requests_in_the_window_are_kept() {
        let rows = vec![
            row(1_000, 900, "SELECT value FROM kv WHERE key = ?"),
            row(1_500, 5_000, "SELECT * FROM system_views.thread_pools"),
            row(2_000, 3_000, "UPDATE kv SET value = ? WHERE key = ?"),
            row(9_000, 9_000, "SELECT value FROM kv WHERE key = ?"),
            row(2_500, 2_000, "SELECT value FROM kv WHERE key = ?"),
        ];
        let got: Vec<i64> = pick_slowest(rows, 500, 5_000, 2).iter().map(|r| r.duration_us).collect();
        assert_eq!(got, [3_000, 2_000], "outside the window and casslab's own polling are left out");
    }

    #[test]
    fn a_trace_reads_as_a_timeline() {
        let t = Trace {
            session_id: "x".into(),
            at_ms: 61_000,
            duration_us: 2_500,
            coordinator: "127.0.0.1".into(),
            query: "SELECT value FROM kv WHERE key = ?".into(),
            events: vec![
                TraceEvent { elapsed_us: 100, source: "127.0.0.1".into(), thread: "t".into(), activity: "Parsing".into() },
                TraceEvent { elapsed_us: 2_100, source: "127.0.0.1".into(), thread: "t".into(), activity: "Merged data from memtables and 3 sstables".into() },
            ],
        };
        let text = describe(&t);
        assert!(text.starts_with("2.50 ms at 01:01 on 127.0.0.1: SELECT value FROM kv"), "{text}");
        assert!(text.contains("2.100 ms (+2.000) 127.0.0.1       Merged data from memtables and 3 sstables"), "{text}");
    }
}
