//! Saving and reading a run's server-side samples (`server_samples`: node, metric, time on the
//! run's axis, value), written in batches as the run goes.

use super::{RunId, Store, StoreError};
use crate::server::ServerSample;
use rusqlite::params;

impl Store {
    /// Saves a batch of server samples of `run`, committed at once.
    pub fn add_server_samples(&self, run: RunId, samples: &[ServerSample]) -> Result<(), StoreError> {
        if samples.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare_cached("INSERT INTO server_samples (run_id, node, metric, at_ms, value) VALUES (?1, ?2, ?3, ?4, ?5)")?;
            for s in samples {
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
        let rows = q.query_map(params![run], |r| {
            Ok(ServerSample { node: r.get(0)?, metric: r.get(1)?, at_ms: r.get::<_, i64>(2)?.max(0) as u64, value: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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
        assert_eq!(store.server_samples(a).unwrap(), vec![s("n1", 1000, 1.5), s("n2", 2000, 3.0)]);
        assert_eq!(store.server_samples(b).unwrap().len(), 1);
    }
}
