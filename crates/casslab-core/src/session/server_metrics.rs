//! The server side of a run session: the collector (its own task and driver session; for
//! nodes of a controlled cluster also their processes and GC logs), saving what it gathered
//! each time an interval closes, and stopping it when the engine is done. Turned off by
//! `server_metrics: false`. With `trace_slowest` the controlled nodes trace a sample of
//! requests and the traces of the slowest are saved at the end. Last, with `settle` (which
//! first waits for compactions) or a load-only run, it reads what the data looks like on disk
//! on the controlled nodes. Everything it has to say goes into notes. What is polled depends
//! on the run's target ([`Polled`]): Cassandra's `system_views`, or a Redis server's `INFO`
//! (tracing and on-disk figures are Cassandra's only).

use crate::cluster::ClusterControl;
use crate::config::{ClusterConfig, Credentials, LoadMode, RedisConfig, RunConfig};
use crate::engine::{unix_now_ms, RunClock};
use crate::server::collect::{self, CollectSetup, Collected, LocalProcess};
use crate::server::jolokia::{Endpoint, JolokiaPoller};
use crate::server::redis_info::RedisInfoPoller;
use crate::server::vtables::VirtualTablePoller;
use crate::server::{disk, metric, ServerSample};
use crate::store::{RunId, Store};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A running collector.
pub(crate) struct ServerMetrics {
    sink: Arc<Mutex<Collected>>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    tracing: Option<Tracing>,
    disk: DiskCheck,
}

/// The end-of-run look at the data on disk (and `settle`'s wait before it).
struct DiskCheck {
    settle: bool,
    /// The controlled cluster, when the figures are wanted (nodetool is needed for them).
    control: Option<Arc<dyn ClusterControl>>,
    keyspace: String,
    cluster_cfg: ClusterConfig,
    creds: Credentials,
    clock: RunClock,
}

impl DiskCheck {
    async fn run(self, results: &Store, run: Option<RunId>) -> Vec<String> {
        let mut notes = Vec::new();
        // what the run wrote is on disk only once the memtables are flushed
        if let Some(control) = self.control.clone() {
            let ks = self.keyspace.clone();
            notes.extend(tokio::task::spawn_blocking(move || flush(&*control, &ks)).await.unwrap_or_default());
        }
        if self.settle {
            notes.extend(self.settle().await);
        }
        let (Some(control), Some(run)) = (self.control, run) else { return notes };
        let (ks, at_ms) = (self.keyspace.clone(), self.clock.now_ms());
        let read = tokio::task::spawn_blocking(move || disk_samples(&*control, &ks, at_ms)).await;
        match read {
            Ok((samples, n)) => {
                notes.extend(n);
                if let Err(e) = results.add_server_samples(run, &samples) {
                    notes.push(format!("the on-disk figures could not be saved: {e}"));
                }
            }
            Err(e) => notes.push(format!("reading the on-disk figures failed: {e}")),
        }
        notes
    }

    /// Waits (up to 10 minutes) until no node runs an SSTable task.
    async fn settle(&self) -> Vec<String> {
        vec![match wait_for_compactions(&self.cluster_cfg, &self.creds, &self.keyspace, Duration::from_secs(600)).await {
            Ok(s) => format!("--settle: compactions done after {s:.0} s"),
            Err(Compactions::Unknown(e)) => format!("--settle: cannot check compactions: {e}"),
            Err(Compactions::StillRunning(n)) => format!("--settle: {n:.0} compactions still running after 10 minutes; the on-disk figures are read anyway"),
        }]
    }
}

/// Why compactions were not seen to finish.
pub(crate) enum Compactions {
    /// The nodes' `system_views` could not be read.
    Unknown(String),
    /// Still this many running when the wait ended.
    StillRunning(f64),
}

/// Waits until no node runs an SSTable task (compactions, cleanups …), at most `limit`;
/// returns the seconds waited.
pub(crate) async fn wait_for_compactions(cluster: &ClusterConfig, creds: &Credentials, keyspace: &str, limit: Duration) -> Result<f64, Compactions> {
    let mut poller = VirtualTablePoller::connect(cluster, creds, keyspace).await.map_err(|e| Compactions::Unknown(e.to_string()))?;
    let started = std::time::Instant::now();
    loop {
        let (samples, _) = poller.poll(0).await;
        let running: f64 = samples.iter().filter(|s| s.metric == metric::SSTABLE_TASKS).map(|s| s.value).sum();
        if running == 0.0 {
            return Ok(started.elapsed().as_secs_f64());
        }
        if started.elapsed() > limit {
            return Err(Compactions::StillRunning(running));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// `nodetool flush KEYSPACE` on every running node; the notes say what failed.
fn flush(control: &dyn ClusterControl, keyspace: &str) -> Vec<String> {
    let Ok(nodes) = control.nodes() else { return Vec::new() };
    let mut notes = Vec::new();
    for (i, node) in nodes.iter().enumerate().filter(|(_, n)| n.running) {
        match control.nodetool(i, &["flush", keyspace]) {
            Ok(o) if o.status.success() => {}
            Ok(o) => notes.push(format!("nodetool flush on {}: {}", node.name, String::from_utf8_lossy(&o.stderr).trim())),
            Err(e) => notes.push(format!("nodetool flush on {}: {e}", node.name)),
        }
    }
    notes
}

/// `nodetool tablestats` and `tablehistograms` of the keyspace's tables on every running node.
fn disk_samples(control: &dyn ClusterControl, keyspace: &str, at_ms: u64) -> (Vec<ServerSample>, Vec<String>) {
    let (mut samples, mut notes) = (Vec::new(), Vec::new());
    let Ok(nodes) = control.nodes() else { return (samples, notes) };
    for (i, node) in nodes.iter().enumerate().filter(|(_, n)| n.running) {
        let stats = match control.nodetool(i, &["tablestats", keyspace]) {
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
            samples.extend(disk::to_samples(&node.address, at_ms, &table, values.into_iter().map(|(m, v)| (m.to_string(), v))));
            if let Ok(o) = control.nodetool(i, &["tablehistograms", &format!("{keyspace}.{table}")]) {
                samples.extend(disk::to_samples(&node.address, at_ms, &table, disk::parse_tablehistograms(&String::from_utf8_lossy(&o.stdout))));
            }
        }
    }
    (samples, notes)
}

/// `trace_slowest`: the nodes trace a sample of requests; the slowest are kept at the end.
struct Tracing {
    control: Arc<dyn ClusterControl>,
    slowest: usize,
    creds: Credentials,
    cluster_cfg: ClusterConfig,
    t0_unix_ms: i64,
    /// Setting the probability on the nodes (nodetool), done in the background.
    started: JoinHandle<Vec<String>>,
}

/// Sets the trace probability of every node; the notes say what failed.
fn set_trace_probability(control: &dyn ClusterControl, p: f64) -> Vec<String> {
    let mut notes = Vec::new();
    let count = control.nodes().map(|n| n.len()).unwrap_or(0);
    for i in 0..count {
        match control.nodetool(i, &["settraceprobability", &p.to_string()]) {
            Ok(o) if o.status.success() => {}
            Ok(o) => notes.push(format!("nodetool settraceprobability on node {}: {}", i + 1, String::from_utf8_lossy(&o.stderr).trim())),
            Err(e) => notes.push(format!("nodetool settraceprobability on node {}: {e}", i + 1)),
        }
    }
    notes
}

fn start_tracing(cfg: &RunConfig, creds: &Credentials, clock: RunClock, control: Option<&Arc<dyn ClusterControl>>, notes: &mut Vec<String>) -> Option<Tracing> {
    if cfg.trace_slowest == 0 {
        return None;
    }
    let Some(control) = control.cloned() else {
        notes.push("--trace-slowest: only nodes casslab started can be told to trace a sample of requests; nothing was traced".into());
        return None;
    };
    let (c2, p) = (control.clone(), cfg.trace_probability);
    let started = tokio::task::spawn_blocking(move || set_trace_probability(&*c2, p));
    Some(Tracing { control, slowest: cfg.trace_slowest, creds: creds.clone(), cluster_cfg: cfg.cluster.clone(), t0_unix_ms: clock.t0_unix_ms, started })
}

impl Tracing {
    /// Turns tracing off again and saves the slowest traces of the run.
    async fn finish(self, results: &Store, run: Option<RunId>) -> Vec<String> {
        let mut notes = self.started.await.unwrap_or_default();
        let c2 = self.control.clone();
        notes.extend(tokio::task::spawn_blocking(move || set_trace_probability(&*c2, 0.0)).await.unwrap_or_default());
        let Some(run) = run else { return notes };
        // the nodes write traces in the background: a busy node may take a while
        tokio::time::sleep(Duration::from_secs(2)).await;
        let end = unix_now_ms();
        let session = match crate::targets::cql::connect(&self.cluster_cfg, &self.creds).await {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("--trace-slowest: cannot read system_traces: {e}"));
                return notes;
            }
        };
        let mut found = crate::server::traces::slowest(&session, self.t0_unix_ms, end, self.t0_unix_ms, self.slowest).await;
        for _ in 0..4 {
            if !matches!(&found, Ok(t) if t.is_empty()) {
                break;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
            found = crate::server::traces::slowest(&session, self.t0_unix_ms, end, self.t0_unix_ms, self.slowest).await;
        }
        match found {
            Ok(traces) if traces.is_empty() => notes.push("--trace-slowest: no request of the workload was traced (raise --trace-probability)".into()),
            Ok(traces) => {
                if let Err(e) = results.add_traces(run, &traces) {
                    notes.push(format!("the query traces could not be saved: {e}"));
                }
            }
            Err(e) => notes.push(format!("--trace-slowest: cannot read system_traces: {e}")),
        }
        notes
    }
}

/// Whose metrics the collector polls.
pub(crate) enum Polled {
    /// The CQL cluster's `system_views`.
    Cql,
    /// A Redis server's `INFO`.
    Redis(RedisConfig),
    /// No server: a shard other than 0 samples only its own process.
    ClientOnly,
}

/// Starts collecting, unless the run said not to.
pub(crate) fn start(
    cfg: &RunConfig,
    keyspace: &str,
    creds: &Credentials,
    clock: RunClock,
    control: Option<&Arc<dyn ClusterControl>>,
    polled: Polled,
) -> Option<ServerMetrics> {
    let mut early_notes = Vec::new();
    let is_redis = matches!(polled, Polled::Redis(_));
    let control = if is_redis { None } else { control };
    if is_redis && (cfg.trace_slowest > 0 || cfg.settle) {
        early_notes.push("--trace-slowest and --settle are about Cassandra nodes; a Redis run has neither".into());
    }
    let tracing = if is_redis { None } else { start_tracing(cfg, creds, clock, control, &mut early_notes) };
    if !cfg.server_metrics && tracing.is_none() && !cfg.settle {
        return None;
    }
    let sink = Arc::new(Mutex::new(Collected { notes: early_notes, ..Collected::default() }));
    let (stop, stop_rx) = watch::channel(false);
    let setup = CollectSetup {
        interval: Duration::from_millis(cfg.interval_ms.max(10)),
        t0: clock.t0,
        t0_unix_ms: clock.t0_unix_ms,
        local: control.map(|c| local_processes(&**c)).unwrap_or_default(),
        client_cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
    };
    let disk = DiskCheck {
        settle: cfg.settle && !is_redis,
        // nodetool costs a JVM start per call: only when asked (settle) or right after a load
        control: control.filter(|_| cfg.settle || cfg.load == LoadMode::Only).cloned(),
        keyspace: keyspace.to_string(),
        cluster_cfg: cfg.cluster.clone(),
        creds: creds.clone(),
        clock,
    };
    let jolokia = match control {
        Some(c) => jolokia_endpoints(&**c),
        None => cfg.cluster.jolokia.iter().map(|url| Endpoint { node: url_host(url), url: url.clone() }).collect(),
    };
    let (cluster, creds, keyspace, sink2) = (cfg.cluster.clone(), creds.clone(), keyspace.to_string(), sink.clone());
    let collecting = cfg.server_metrics;
    let task = tokio::spawn(async move {
        if !collecting {
            return;
        }
        let note = |what: &str, e: crate::engine::EngineError| {
            sink2.lock().unwrap_or_else(|e| e.into_inner()).notes.push(format!("server metrics: cannot open {what}: {e}"))
        };
        match polled {
            Polled::Cql => {
                let poller = VirtualTablePoller::connect(&cluster, &creds, &keyspace).await.map_err(|e| note("a session for the system_views tables", e)).ok();
                let poller = match poller {
                    Some(p) if !jolokia.is_empty() => Some(p.with_jolokia(JolokiaPoller::connect(jolokia, &keyspace).await)),
                    p => p,
                };
                collect::run(poller, setup, sink2, stop_rx).await;
            }
            Polled::Redis(rc) => {
                let poller = RedisInfoPoller::connect(&rc, &creds).await.map_err(|e| note("a connection for INFO", e)).ok();
                collect::run(poller, setup, sink2, stop_rx).await;
            }
            Polled::ClientOnly => collect::run(None::<VirtualTablePoller>, setup, sink2, stop_rx).await,
        }
    });
    Some(ServerMetrics { sink, stop, task, tracing, disk })
}

/// The Jolokia agents of the controlled nodes that run one.
fn jolokia_endpoints(control: &dyn ClusterControl) -> Vec<Endpoint> {
    let Ok(nodes) = control.nodes() else { return Vec::new() };
    nodes.into_iter().filter(|n| n.running).filter_map(|n| Some(Endpoint { url: n.jolokia_url?, node: n.address })).collect()
}

/// The host of an agent's URL, naming its node in the series.
fn url_host(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    let host_port = rest.split('/').next().unwrap_or(rest);
    host_port.rsplit_once(':').map_or(host_port, |(h, _)| h).to_string()
}

/// The processes of the controlled nodes, with their GC logs.
fn local_processes(control: &dyn ClusterControl) -> Vec<LocalProcess> {
    let Ok(nodes) = control.nodes() else { return Vec::new() };
    nodes.into_iter().filter_map(|n| Some(LocalProcess { node: n.address, pid: n.pid?, gc_log: n.gc_log })).collect()
}

impl ServerMetrics {
    /// Saves what was gathered since the last call (once the run has an id) and returns the
    /// notes for the user.
    pub fn flush(&self, results: &Store, run: Option<RunId>) -> Vec<String> {
        let Some(run) = run else { return Vec::new() };
        let (samples, mut notes) = self.sink.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Err(e) = results.add_server_samples(run, &samples) {
            notes.push(format!("{} server samples could not be saved: {e}", samples.len()));
        }
        notes
    }

    /// Stops the collector and saves the rest.
    pub async fn finish(mut self, results: &Store, run: Option<RunId>) -> Vec<String> {
        let _ = self.stop.send(true);
        let mut notes = Vec::new();
        if tokio::time::timeout(Duration::from_secs(10), &mut self.task).await.is_err() {
            notes.push("the server metrics collector did not stop in time; its last samples are lost".into());
        } else {
            notes.extend(self.flush(results, run));
        }
        if let Some(t) = self.tracing.take() {
            notes.extend(t.finish(results, run).await);
        }
        notes.extend(self.disk.run(results, run).await);
        notes
    }
}
