//! Server-side metrics during `casslab run`: starts the collector (its own session and task;
//! for local nodes also their pids and GC logs), saves what it gathered each time an interval
//! closes, and stops it when the engine is done. Turned off by `--no-server-metrics`. With
//! `--trace-slowest N` it also has the local nodes trace a sample of requests and saves the
//! traces of the N slowest at the end. Last, with `--settle` (which first waits for compactions)
//! or `--load-only`, it reads what the data looks like on disk on the nodes casslab started.

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
        (Ok(intervals), Ok(samples)) => {
            let traces = store.traces(run).unwrap_or_default();
            casslab_core::report::server_view::text_section(&intervals, &samples) + &casslab_core::report::server_view::traces_text(&traces)
        }
        (Err(e), _) | (_, Err(e)) => format!("\nserver side: cannot read the saved samples: {e}\n"),
    }
}

/// A running collector.
pub struct ServerMetrics {
    sink: Arc<Mutex<Collected>>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    tracing: Option<Tracing>,
    disk: DiskCheck,
}

/// The end-of-run look at the data on disk (and `--settle`'s wait before it).
struct DiskCheck {
    settle: bool,
    /// The cluster casslab started, if it did (nodetool is needed for the figures).
    local: Option<casslab_local::LocalCluster>,
    keyspace: String,
    cluster_cfg: casslab_core::config::ClusterConfig,
    creds: Credentials,
    t0: std::time::Instant,
}

impl DiskCheck {
    async fn run(self, store: &Store, run: Option<RunId>) -> Vec<String> {
        let mut notes = Vec::new();
        if self.settle {
            notes.extend(self.settle().await);
        }
        let (Some(cluster), Some(run)) = (self.local, run) else { return notes };
        let (ks, at_ms) = (self.keyspace.clone(), self.t0.elapsed().as_millis() as u64);
        let read = tokio::task::spawn_blocking(move || disk_samples(&cluster, &ks, at_ms)).await;
        match read {
            Ok((samples, n)) => {
                notes.extend(n);
                if let Err(e) = store.add_server_samples(run, &samples) {
                    notes.push(format!("the on-disk figures could not be saved: {e}"));
                }
            }
            Err(e) => notes.push(format!("reading the on-disk figures failed: {e}")),
        }
        notes
    }

    /// Waits (up to 10 minutes) until no node runs an SSTable task.
    async fn settle(&self) -> Vec<String> {
        let mut poller = match VirtualTablePoller::connect(&self.cluster_cfg, &self.creds, &self.keyspace).await {
            Ok(p) => p,
            Err(e) => return vec![format!("--settle: cannot check compactions: {e}")],
        };
        let started = std::time::Instant::now();
        loop {
            let (samples, _) = poller.poll(0).await;
            let running: f64 = samples.iter().filter(|s| s.metric == casslab_core::server::metric::SSTABLE_TASKS).map(|s| s.value).sum();
            if running == 0.0 {
                return vec![format!("--settle: compactions done after {:.0} s", started.elapsed().as_secs_f64())];
            }
            if started.elapsed() > Duration::from_secs(600) {
                return vec![format!("--settle: {running:.0} compactions still running after 10 minutes; the on-disk figures are read anyway")];
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// `nodetool tablestats` and `tablehistograms` of the keyspace's tables on every local node.
fn disk_samples(cluster: &casslab_local::LocalCluster, keyspace: &str, at_ms: u64) -> (Vec<casslab_core::server::ServerSample>, Vec<String>) {
    use casslab_core::server::disk;
    let (mut samples, mut notes) = (Vec::new(), Vec::new());
    let Ok(nodes) = cluster.status() else { return (samples, notes) };
    for (i, node) in nodes.iter().enumerate().filter(|(_, n)| n.running) {
        let addr = node.address.to_string();
        let stats = match cluster.nodetool(i, &["tablestats", keyspace]) {
            Ok(o) if o.status.success() => disk::parse_tablestats(&String::from_utf8_lossy(&o.stdout)),
            Ok(o) => {
                notes.push(format!("nodetool tablestats on {}: {}", node.name, String::from_utf8_lossy(&o.stderr).trim()));
                continue;
            }
            Err(e) => {
                notes.push(format!("nodetool tablestats on {}: {e}", node.name));
                continue;
            }
        };
        for (table, values) in stats.into_iter().filter(|(t, _)| t != "casslab_meta") {
            samples.extend(disk::to_samples(&addr, at_ms, &table, values.into_iter().map(|(m, v)| (m.to_string(), v))));
            if let Ok(o) = cluster.nodetool(i, &["tablehistograms", &format!("{keyspace}.{table}")]) {
                samples.extend(disk::to_samples(&addr, at_ms, &table, disk::parse_tablehistograms(&String::from_utf8_lossy(&o.stdout))));
            }
        }
    }
    (samples, notes)
}

/// `--trace-slowest`: the nodes trace a sample of requests; the slowest are kept at the end.
struct Tracing {
    cluster: casslab_local::LocalCluster,
    nodes: usize,
    slowest: usize,
    creds: Credentials,
    cluster_cfg: casslab_core::config::ClusterConfig,
    t0_unix_ms: i64,
    /// Setting the probability on the nodes (nodetool), done in the background.
    started: JoinHandle<Vec<String>>,
}

/// Sets the trace probability of every local node; the notes say what failed.
fn set_trace_probability(cluster: &casslab_local::LocalCluster, nodes: usize, p: f64) -> Vec<String> {
    let mut notes = Vec::new();
    for i in 0..nodes {
        match cluster.nodetool(i, &["settraceprobability", &p.to_string()]) {
            Ok(o) if o.status.success() => {}
            Ok(o) => notes.push(format!("nodetool settraceprobability on node {}: {}", i + 1, String::from_utf8_lossy(&o.stderr).trim())),
            Err(e) => notes.push(format!("nodetool settraceprobability on node {}: {e}", i + 1)),
        }
    }
    notes
}

fn start_tracing(cfg: &RunConfig, creds: &Credentials, t0_unix_ms: i64, notes: &mut Vec<String>) -> Option<Tracing> {
    if cfg.trace_slowest == 0 {
        return None;
    }
    let local = cfg.cluster.local_home.as_deref().filter(|_| cfg.cluster.local).and_then(|h| casslab_local::LocalCluster::open(h).ok());
    let Some(cluster) = local else {
        notes.push("--trace-slowest: only nodes casslab started can be told to trace a sample of requests; nothing was traced".into());
        return None;
    };
    let nodes = cluster.options().nodes;
    let (c2, p) = (cluster.clone(), cfg.trace_probability);
    let started = tokio::task::spawn_blocking(move || set_trace_probability(&c2, nodes, p));
    Some(Tracing { cluster, nodes, slowest: cfg.trace_slowest, creds: creds.clone(), cluster_cfg: cfg.cluster.clone(), t0_unix_ms, started })
}

impl Tracing {
    /// Turns tracing off again and saves the slowest traces of the run.
    async fn finish(self, store: &Store, run: Option<RunId>) -> Vec<String> {
        let mut notes = self.started.await.unwrap_or_default();
        let (c2, nodes) = (self.cluster.clone(), self.nodes);
        notes.extend(tokio::task::spawn_blocking(move || set_trace_probability(&c2, nodes, 0.0)).await.unwrap_or_default());
        let Some(run) = run else { return notes };
        // the nodes write traces in the background
        tokio::time::sleep(Duration::from_secs(2)).await;
        let end = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
        let session = match casslab_core::engine::connect(&self.cluster_cfg, &self.creds).await {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("--trace-slowest: cannot read system_traces: {e}"));
                return notes;
            }
        };
        match casslab_core::server::traces::slowest(&session, self.t0_unix_ms, end, self.t0_unix_ms, self.slowest).await {
            Ok(traces) if traces.is_empty() => notes.push("--trace-slowest: no request of the workload was traced (raise --trace-probability)".into()),
            Ok(traces) => {
                if let Err(e) = store.add_traces(run, &traces) {
                    notes.push(format!("the query traces could not be saved: {e}"));
                }
            }
            Err(e) => notes.push(format!("--trace-slowest: cannot read system_traces: {e}")),
        }
        notes
    }
}

/// Starts collecting, unless the run said not to. `t0` is the engine's time origin (taken
/// just before the engine starts), `t0_unix_ms` the same moment on the wall clock.
pub fn start(cfg: &RunConfig, keyspace: &str, creds: &Credentials, t0: std::time::Instant, t0_unix_ms: i64) -> Option<ServerMetrics> {
    let mut early_notes = Vec::new();
    let tracing = start_tracing(cfg, creds, t0_unix_ms, &mut early_notes);
    if !cfg.server_metrics && tracing.is_none() && !cfg.settle {
        return None;
    }
    let sink = Arc::new(Mutex::new(Collected { notes: early_notes, ..Collected::default() }));
    let (stop, stop_rx) = watch::channel(false);
    let setup = CollectSetup {
        interval: Duration::from_millis(cfg.interval_ms.max(10)),
        t0: tokio::time::Instant::from_std(t0),
        t0_unix_ms,
        local: local_processes(cfg),
        client_cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
    };
    let disk = DiskCheck {
        settle: cfg.settle,
        // nodetool costs a JVM start per call: only when asked (--settle) or right after a load
        local: cfg
            .cluster
            .local_home
            .as_deref()
            .filter(|_| cfg.cluster.local && (cfg.settle || cfg.load == casslab_core::config::LoadMode::Only))
            .and_then(|h| casslab_local::LocalCluster::open(h).ok()),
        keyspace: keyspace.to_string(),
        cluster_cfg: cfg.cluster.clone(),
        creds: creds.clone(),
        t0,
    };
    let (cluster, creds, keyspace, sink2) = (cfg.cluster.clone(), creds.clone(), keyspace.to_string(), sink.clone());
    let collecting = cfg.server_metrics;
    let task = tokio::spawn(async move {
        if !collecting {
            return;
        }
        let poller = match VirtualTablePoller::connect(&cluster, &creds, &keyspace).await {
            Ok(p) => Some(p),
            Err(e) => {
                sink2.lock().unwrap_or_else(|e| e.into_inner()).notes.push(format!("server metrics: cannot open a session for the system_views tables: {e}"));
                None
            }
        };
        collect::run(poller, setup, sink2, stop_rx).await;
    });
    Some(ServerMetrics { sink, stop, task, tracing, disk })
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
        let mut notes = Vec::new();
        if tokio::time::timeout(Duration::from_secs(10), &mut self.task).await.is_err() {
            notes.push("the server metrics collector did not stop in time; its last samples are lost".into());
        } else {
            notes.extend(self.flush(store, run));
        }
        if let Some(t) = self.tracing.take() {
            notes.extend(t.finish(store, run).await);
        }
        notes.extend(self.disk.run(store, run).await);
        Ok(notes)
    }
}
