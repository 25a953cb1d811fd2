//! A run's event timeline in the store: one row per event (what it was, when it started and
//! ended on the intervals' time axis, its exit status and the tail of its output) with its
//! measured impact as JSON. The table sits beside the version-1 tables, created when missing
//! (builds that do not know it ignore it). The impact's plain data ([`EventImpact`]) lives
//! here; `analysis::impact` computes it from the intervals.

use super::rows::encode;
use super::{RunId, StoreError};
use crate::events::{EventRecord, EventStatus};
use crate::stats::ErrorKind;
use crate::store::Store;
use rusqlite::params;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The table of events, created when missing by every build that knows it.
pub(super) const RUN_EVENTS: &str = "
CREATE TABLE IF NOT EXISTS run_events (
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    spec        TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    target      TEXT,
    start_ms    INTEGER NOT NULL,
    end_ms      INTEGER NOT NULL,
    status      TEXT    NOT NULL,
    exit_code   INTEGER,
    output_tail TEXT    NOT NULL,
    impact_json TEXT,
    PRIMARY KEY (run_id, seq)
);
";

/// One operation's p99 around an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct P99Change {
    pub op: String,
    pub baseline_ns: u64,
    /// Worst interval overlapping the event.
    pub during_ns: Option<u64>,
    /// Median interval after it.
    pub after_ns: Option<u64>,
}

impl P99Change {
    pub fn during_change_pct(&self) -> Option<f64> {
        change_pct(self.baseline_ns as f64, self.during_ns? as f64)
    }
    pub fn after_change_pct(&self) -> Option<f64> {
        change_pct(self.baseline_ns as f64, self.after_ns? as f64)
    }
}

/// What one event cost (see `analysis::impact` for the windows and the recovery rule).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventImpact {
    /// The baseline window used, on the intervals' time axis; `None` when there was none.
    pub baseline_from_ms: Option<u64>,
    pub baseline_to_ms: Option<u64>,
    pub baseline_ops_per_s: Option<f64>,
    pub during_ops_per_s: Option<f64>,
    pub after_ops_per_s: Option<f64>,
    pub p99: Vec<P99Change>,
    pub errors: BTreeMap<ErrorKind, u64>,
    /// Milliseconds from the event's start until throughput and p99 stayed within the
    /// tolerances; `None` when the run ended first (or there was no baseline to judge by).
    pub recovery_ms: Option<u64>,
}

impl EventImpact {
    pub fn during_ops_change_pct(&self) -> Option<f64> {
        change_pct(self.baseline_ops_per_s?, self.during_ops_per_s?)
    }
    pub fn after_ops_change_pct(&self) -> Option<f64> {
        change_pct(self.baseline_ops_per_s?, self.after_ops_per_s?)
    }
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

fn change_pct(base: f64, value: f64) -> Option<f64> {
    (base > 0.0).then(|| (value - base) / base * 100.0)
}

impl Store {
    /// Saves (or replaces) one event of a run, with its impact when it was measured.
    pub fn add_event(&self, run: RunId, ev: &EventRecord, impact: Option<&EventImpact>) -> Result<(), StoreError> {
        let impact_json = impact.map(|i| encode("an event's impact", i)).transpose()?;
        self.conn().execute(
            "INSERT OR REPLACE INTO run_events (run_id, seq, spec, action, target, start_ms, end_ms, status, exit_code, output_tail, impact_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![run, ev.seq, ev.spec, ev.action, ev.target, ev.start_ms, ev.end_ms, ev.status.as_str(), ev.exit_code, ev.output_tail, impact_json],
        )?;
        Ok(())
    }

    /// A run's events in firing order, each with its impact (if measured).
    pub fn events(&self, run: RunId) -> Result<Vec<(EventRecord, Option<EventImpact>)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, spec, action, target, start_ms, end_ms, status, exit_code, output_tail, impact_json
             FROM run_events WHERE run_id = ?1 ORDER BY seq",
        )?;
        let mut rows = stmt.query([run])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let seq: u32 = r.get(0)?;
            let corrupt = |what: &str, detail: String| StoreError::Corrupt { what: format!("run {run} event {seq} {what}"), detail };
            let status: String = r.get(6)?;
            let impact: Option<String> = r.get(9)?;
            out.push((
                EventRecord {
                    seq,
                    spec: r.get(1)?,
                    action: r.get(2)?,
                    target: r.get(3)?,
                    start_ms: r.get(4)?,
                    end_ms: r.get(5)?,
                    status: EventStatus::parse(&status).ok_or_else(|| corrupt("status", status.clone()))?,
                    exit_code: r.get(7)?,
                    output_tail: r.get(8)?,
                },
                impact.map(|j| serde_json::from_str(&j).map_err(|e| corrupt("impact", e.to_string()))).transpose()?,
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};

    #[test]
    fn events_round_trip_with_their_impact() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 1).unwrap();
        let kill = EventRecord {
            seq: 0,
            spec: "10s kill node2".into(),
            action: "kill".into(),
            target: Some("node2".into()),
            start_ms: 12_010,
            end_ms: 12_030,
            status: EventStatus::Ok,
            exit_code: None,
            output_tail: "node2 (pid 7) killed".into(),
        };
        let skipped = EventRecord {
            seq: 1,
            spec: "90s compact".into(),
            action: "compact".into(),
            target: None,
            start_ms: 92_000,
            end_ms: 92_000,
            status: EventStatus::Skipped,
            exit_code: None,
            output_tail: String::new(),
        };
        let impact = EventImpact {
            baseline_from_ms: Some(2_000),
            baseline_to_ms: Some(12_000),
            baseline_ops_per_s: Some(200.0),
            during_ops_per_s: Some(150.0),
            after_ops_per_s: Some(199.0),
            p99: vec![],
            errors: [(ErrorKind::Unavailable, 4)].into(),
            recovery_ms: Some(3_000),
        };
        store.add_event(id, &kill, Some(&impact)).unwrap();
        store.add_event(id, &skipped, None).unwrap();
        let back = store.events(id).unwrap();
        assert_eq!(back, vec![(kill, Some(impact)), (skipped, None)]);
        assert!(store.events(id + 1).unwrap().is_empty());
    }
}
