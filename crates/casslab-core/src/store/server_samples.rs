//! Saving and reading a run's server-side samples (`server_samples`: node, metric, time on the
//! run's axis, value), written in batches as the run goes.

use super::{RunId, Store, StoreError};
use crate::server::traces::Trace;
use crate::server::ServerSample;
use rusqlite::params;

impl Store {
    /// Saves a batch of server samples of `run`, committed at once. A sample whose value is not
    /// a finite number says nothing and is left out (SQLite would store NaN as NULL).
    pub fn add_server_samples(&self, run: RunId, samples: &[ServerSample]) -> Result<(), StoreError> {
        if samples.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare_cached("INSERT INTO server_samples (run_id, node, metric, at_ms, value) VALUES (?1, ?2, ?3, ?4, ?5)")?;
            for s in samples.iter().filter(|s| s.value.is_finite()) {
                insert.execute(params![run, s.node, s.metric, s.at_ms as i64, s.value])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Every server sample of `run`, by time.
    pub fn server_samples(&self, run: RunId) -> Result<Vec<ServerSample>, StoreError> {
        let conn = self.conn();
        let mut q = conn.prepare_cached("SELECT node, metric, at_ms, value FROM server_samples WHERE run_id = ?1 ORDER BY at_ms, node, metric")?;
        let rows =
            q.query_map(params![run], |r| Ok(ServerSample { node: r.get(0)?, metric: r.get(1)?, at_ms: r.get::<_, i64>(2)?.max(0) as u64, value: r.get(3)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl Store {
    /// Saves the traces of a run's slowest requests.
    pub fn add_traces(&self, run: RunId, traces: &[Trace]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for t in traces {
            let json = super::rows::encode("a query trace", t)?;
            tx.execute(
                "INSERT INTO server_traces (run_id, at_ms, duration_us, trace_json) VALUES (?1, ?2, ?3, ?4)",
                params![run, t.at_ms as i64, t.duration_us, json],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The saved traces of `run`, slowest first.
    pub fn traces(&self, run: RunId) -> Result<Vec<Trace>, StoreError> {
        let conn = self.conn();
        let mut q = conn.prepare_cached("SELECT trace_json FROM server_traces WHERE run_id = ?1 ORDER BY duration_us DESC")?;
        let rows = q.query_map(params![run], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for json in rows {
            let json = json?;
            out.push(serde_json::from_str(&json).map_err(|e| StoreError::Corrupt { what: "query trace".into(), detail: e.to_string() })?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};

    #[test]
    fn samples_round_trip_per_run_in_time_order() {
        let store = Store::open_in_memory().unwrap();
        let a = store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 0).unwrap();
        let b = store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 0).unwrap();
        let s = |node: &str, at_ms, value| ServerSample { node: node.into(), metric: "cpu_pct".into(), at_ms, value };
        store.add_server_samples(a, &[s("n2", 2000, 3.0), s("n1", 1000, 1.5)]).unwrap();
        store.add_server_samples(b, &[s("n1", 500, 9.0)]).unwrap();
        store.add_server_samples(a, &[]).unwrap();
        // a value that is no number is left out, not a failure of the batch
        store.add_server_samples(b, &[s("n1", 600, f64::NAN), s("n1", 700, f64::INFINITY)]).unwrap();
        assert_eq!(store.server_samples(a).unwrap(), vec![s("n1", 1000, 1.5), s("n2", 2000, 3.0)]);
        assert_eq!(store.server_samples(b).unwrap().len(), 1);
        let t = |us| Trace { session_id: "s".into(), at_ms: 5, duration_us: us, coordinator: "n1".into(), query: "SELECT".into(), events: vec![] };
        store.add_traces(a, &[t(10), t(30)]).unwrap();
        assert_eq!(store.traces(a).unwrap(), vec![t(30), t(10)]);
        assert!(store.traces(b).unwrap().is_empty());
    }
}
