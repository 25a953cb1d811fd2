//! Server-side metrics during `casslab run`: starts the collector (its own session and task;
//! for local nodes also their pids and GC logs), saves what it gathered each time an interval
//! closes, and stops it when the engine is done. Turned off by `--no-server-metrics`.

use anyhow::Result;
use casslab_core::config::{Credentials, RunConfig};
use casslab_core::server::collect::{self, CollectSetup, Collected, LocalProcess};
use casslab_core::server::vtables::VirtualTablePoller;
use casslab_core::store::{RunId, Store};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The server section of a saved run's terminal summary (empty when nothing was collected).
pub fn text_section(store: &Store, run: RunId) -> String {
    match (store.intervals(run), store.server_samples(run)) {
        (Ok(intervals), Ok(samples)) => casslab_core::report::server_view::text_section(&intervals, &samples),
        (Err(e), _) | (_, Err(e)) => format!("\nserver side: cannot read the saved samples: {e}\n"),
    }
}

/// A running collector.
pub struct ServerMetrics {
    sink: Arc<Mutex<Collected>>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Starts collecting, unless the run said not to. `t0` is the engine's time origin (taken
/// just before the engine starts), `t0_unix_ms` the same moment on the wall clock.
pub fn start(cfg: &RunConfig, keyspace: &str, creds: &Credentials, t0: std::time::Instant, t0_unix_ms: i64) -> Option<ServerMetrics> {
    if !cfg.server_metrics {
        return None;
    }
    let sink = Arc::new(Mutex::new(Collected::default()));
    let (stop, stop_rx) = watch::channel(false);
    let setup = CollectSetup {
        interval: Duration::from_millis(cfg.interval_ms.max(10)),
        t0: tokio::time::Instant::from_std(t0),
        t0_unix_ms,
        local: local_processes(cfg),
        client_cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
    };
    let (cluster, creds, keyspace, sink2) = (cfg.cluster.clone(), creds.clone(), keyspace.to_string(), sink.clone());
    let task = tokio::spawn(async move {
        let poller = match VirtualTablePoller::connect(&cluster, &creds, &keyspace).await {
            Ok(p) => Some(p),
            Err(e) => {
                sink2.lock().unwrap_or_else(|e| e.into_inner()).notes.push(format!("server metrics: cannot open a session for the system_views tables: {e}"));
                None
            }
        };
        collect::run(poller, setup, sink2, stop_rx).await;
    });
    Some(ServerMetrics { sink, stop, task })
}

/// The processes of the nodes casslab started, with their GC logs.
fn local_processes(cfg: &RunConfig) -> Vec<LocalProcess> {
    let Some(home) = cfg.cluster.local_home.as_deref().filter(|_| cfg.cluster.local) else { return Vec::new() };
    let Ok(cluster) = casslab_local::LocalCluster::open(home) else { return Vec::new() };
    let Ok(nodes) = cluster.status() else { return Vec::new() };
    nodes
        .into_iter()
        .filter_map(|n| {
            Some(LocalProcess { node: n.address.to_string(), pid: n.pid?, gc_log: Some(n.log_file.with_file_name("gc.log")) })
        })
        .collect()
}

impl ServerMetrics {
    /// Saves what was gathered since the last call (once the run has an id) and returns the
    /// notes for the user.
    pub fn flush(&self, store: &Store, run: Option<RunId>) -> Vec<String> {
        let Some(run) = run else { return Vec::new() };
        let (samples, mut notes) = self.sink.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Err(e) = store.add_server_samples(run, &samples) {
            notes.push(format!("{} server samples could not be saved: {e}", samples.len()));
        }
        notes
    }

    /// Stops the collector and saves the rest.
    pub async fn finish(mut self, store: &Store, run: Option<RunId>) -> Result<Vec<String>> {
        let _ = self.stop.send(true);
        if tokio::time::timeout(Duration::from_secs(10), &mut self.task).await.is_err() {
            return Ok(vec!["the server metrics collector did not stop in time; its last samples are lost".into()]);
        }
        Ok(self.flush(store, run))
    }
}
