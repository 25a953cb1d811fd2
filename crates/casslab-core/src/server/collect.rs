//! The collection loop of a run: once per interval it polls the server's own metrics through
//! a [`Poller`] (the virtual tables of every Cassandra node, or a Redis server's `INFO`),
//! reads the new pauses from the GC logs of the nodes casslab started, and samples CPU and
//! memory of those nodes and of casslab itself. Samples and notes go into a shared
//! [`Collected`] that the caller drains (and stores) as the run goes. It runs as its own
//! task on its own session, so it never waits on the workload nor the workload on it.

use super::gclog::GcLogTail;
use super::procstat::{self, ProcReading};
use super::{metric, ServerSample, CLIENT};
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// A server's own metrics, read once per interval on a connection of the poller's own.
pub trait Poller: Send {
    /// Reads every node once. Samples are stamped `at_ms`; the notes are things to tell the
    /// user (each said once per run).
    fn poll(&mut self, at_ms: u64) -> impl Future<Output = (Vec<ServerSample>, Vec<String>)> + Send;
}

/// A node process on this machine (one that casslab started).
#[derive(Debug, Clone)]
pub struct LocalProcess {
    /// The node's address, as the poller names it.
    pub node: String,
    pub pid: u32,
    pub gc_log: Option<PathBuf>,
}

/// What the loop needs besides the poller.
#[derive(Debug, Clone)]
pub struct CollectSetup {
    pub interval: Duration,
    /// The run's time origin (the engine's t0) and the same moment on the wall clock.
    pub t0: Instant,
    pub t0_unix_ms: i64,
    pub local: Vec<LocalProcess>,
    /// Cores of this machine, to judge whether the client is the bottleneck.
    pub client_cores: usize,
}

/// What the loop has gathered and the caller has not taken yet.
#[derive(Debug, Default)]
pub struct Collected {
    pub samples: Vec<ServerSample>,
    pub notes: Vec<String>,
}

impl Collected {
    pub fn take(&mut self) -> (Vec<ServerSample>, Vec<String>) {
        (std::mem::take(&mut self.samples), std::mem::take(&mut self.notes))
    }
}

/// Share of all cores above which the client is said to be the bottleneck.
const CLIENT_BUSY_SHARE: f64 = 0.9;

/// Runs until `stop` turns true (or its sender is dropped).
pub async fn run<P: Poller>(mut poller: Option<P>, setup: CollectSetup, sink: Arc<Mutex<Collected>>, mut stop: watch::Receiver<bool>) {
    let mut tails: Vec<(String, GcLogTail)> = setup.local.iter().filter_map(|p| p.gc_log.clone().map(|path| (p.node.clone(), GcLogTail::new(path)))).collect();
    let mut procs: Vec<(String, u32, Option<ProcReading>)> = setup.local.iter().map(|p| (p.node.clone(), p.pid, procstat::read(p.pid))).collect();
    procs.push((CLIENT.to_string(), std::process::id(), procstat::read(std::process::id())));
    let mut client_wait_s = procstat::run_wait_s(std::process::id());
    let mut ticker = tokio::time::interval_at(Instant::now() + setup.interval, setup.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_tick = Instant::now();
    let mut busy_streak = 0;
    let mut warned_busy = false;
    let mut warned_gc = false;
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            r = stop.changed() => { if r.is_err() || *stop.borrow() { break; } }
        }
        if *stop.borrow() {
            break;
        }
        let now = Instant::now();
        let at_ms = now.saturating_duration_since(setup.t0).as_millis() as u64;
        let mut samples = Vec::new();
        let mut notes = Vec::new();

        if let Some(p) = poller.as_mut() {
            let (s, n) = p.poll(at_ms).await;
            samples.extend(s);
            notes.extend(n);
            samples.push(ServerSample { node: CLIENT.into(), metric: metric::POLL_MS.into(), at_ms, value: now.elapsed().as_secs_f64() * 1000.0 });
        }

        let wall_ms = (now - last_tick).as_secs_f64() * 1000.0;
        for (node, tail) in &mut tails {
            match tail.read_new() {
                Ok(pauses) => {
                    let stopped_ms: f64 = pauses.iter().map(|p| p.duration_ms).sum();
                    for p in pauses {
                        let at = (p.start_unix_ms() - setup.t0_unix_ms).max(0) as u64;
                        samples.push(ServerSample {
                            node: node.clone(),
                            metric: format!("{}{}", metric::GC_PAUSE_PREFIX, p.kind),
                            at_ms: at,
                            value: p.duration_ms,
                        });
                    }
                    if wall_ms > 0.0 {
                        samples.push(ServerSample {
                            node: node.clone(),
                            metric: metric::GC_STW_PCT.into(),
                            at_ms,
                            value: (stopped_ms / wall_ms * 100.0).min(100.0),
                        });
                    }
                }
                Err(e) if !warned_gc => {
                    warned_gc = true;
                    notes.push(format!("cannot read the GC log {}: {e}; GC pauses are not collected", tail.path().display()));
                }
                Err(_) => {}
            }
        }
        last_tick = now;

        for (node, pid, before) in &mut procs {
            let Some(after) = procstat::read(*pid) else { continue };
            samples.push(ServerSample { node: node.clone(), metric: metric::RSS_MIB.into(), at_ms, value: after.rss_bytes as f64 / 1_048_576.0 });
            if let Some(pct) = before.as_ref().and_then(|b| procstat::cpu_pct(b, &after)) {
                samples.push(ServerSample { node: node.clone(), metric: metric::CPU_PCT.into(), at_ms, value: pct });
                if node == CLIENT {
                    let wait_s = procstat::run_wait_s(*pid);
                    let wall_s = before.as_ref().map_or(0.0, |b| after.at.duration_since(b.at).as_secs_f64());
                    if let (Some(w0), Some(w1)) = (client_wait_s, wait_s) {
                        if wall_s > 0.0 {
                            let demand = pct + (w1 - w0).max(0.0) / wall_s * 100.0;
                            samples.push(ServerSample { node: node.clone(), metric: metric::CPU_DEMAND_PCT.into(), at_ms, value: demand });
                        }
                    }
                    client_wait_s = wait_s;
                    let cores = setup.client_cores.max(1) as f64;
                    busy_streak = if pct >= CLIENT_BUSY_SHARE * cores * 100.0 { busy_streak + 1 } else { 0 };
                    if busy_streak >= 2 && !warned_busy {
                        warned_busy = true;
                        notes.push(format!(
                            "casslab itself used {pct:.0}% CPU ({:.0}% of its {cores:.0} cores) at {:.0}s: the client may be the bottleneck, and its queueing shows up as latency",
                            pct / cores,
                            at_ms as f64 / 1000.0
                        ));
                    }
                }
            }
            *before = Some(after);
        }

        let mut c = sink.lock().unwrap_or_else(|e| e.into_inner());
        c.samples.extend(samples);
        c.notes.extend(notes);
    }
}
