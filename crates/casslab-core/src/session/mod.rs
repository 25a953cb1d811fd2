//! A run as a library object. A [`RunSession`] owns one run from connecting to saving: the
//! run's one clock (intervals, server samples, events and traces are all placed on it), the
//! target connection and the engine task, the writes to the results sink as intervals close,
//! the server collector, the event timeline, tracing and the on-disk figures. It reports what
//! happens through an [`Observer`] and never prints. What every run of a command shares —
//! credentials, the cluster control seam, the results sink, the observer, the stop signal —
//! is a [`Lab`]. `find_max` and `experiment` are built on it.
//!
//! Seams: the engine's [`crate::engine::Target`] (CQL or Redis, chosen by the workload's kind;
//! Redis needs the run config's `redis`), [`ClusterControl`] (the local cluster casslab
//! started; none for `--hosts`) and the results [`Store`].

mod changes;
pub use changes::with_workload_load;
pub mod conduct;
mod event_check_error;
mod experiment_setup;
pub mod findmax;
mod index_events;
mod maker;
mod narration;
mod network_events;
mod observer;
mod profiling;
mod run_checks;
mod server_metrics;
mod timeline;
mod together;
pub mod verify_pass;

pub use changes::check_rate_events;
pub use event_check_error::EventCheckError;
pub use narration::{narration, ProgressLine};
pub use observer::{Observer, Quiet, SessionEvent};
pub use run_checks::workload_for_run;
pub use timeline::check_events;

use crate::analysis::impact::{self, IntervalPoint};
use crate::cluster::ClusterControl;
use crate::config::{Credentials, RunConfig, RunEnvironment};
use crate::engine::{self, unix_now_ms, EngineError, EngineEvent, RunClock, Target};
use crate::events::EventRecord;
use crate::notice::Notice;
use crate::stats::Phase;
use crate::store::{PhaseSummary, RunId, RunStatus, RunSummary, Store, StoreError};
use crate::targets;
use crate::targets::cql::CqlTarget;
use crate::targets::redis::RedisTarget;
use crate::workload::{TargetKind, Workload};
use std::sync::Arc;
use timeline::Timeline;
use tokio::sync::watch;

/// What every run of a command shares.
pub struct Lab<'a> {
    pub credentials: Credentials,
    /// The cluster casslab controls, when the runs are aimed at one it started.
    pub control: Option<Arc<dyn ClusterControl>>,
    /// Where every run is saved as it goes (and read back from, to judge an experiment).
    pub results: &'a Store,
    pub observer: Arc<dyn Observer>,
    /// Turns true when the user asks to stop: the current phase ends cleanly, the run is saved
    /// as interrupted, and no further run starts.
    pub stop: watch::Receiver<bool>,
}

impl Lab<'_> {
    /// Whether a stop was asked for.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }
}

/// One run to make: its resolved config, its workload and the tags to save it with.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub config: RunConfig,
    pub workload: Workload,
    pub tags: Vec<String>,
    /// The gate at which it starts its run phase together with runs made at the same time
    /// (an experiment's variants measured side by side); `None`: on its own.
    pub together: Option<engine::start_gate::StartSlot>,
}

/// A saved run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    pub run: RunId,
    pub status: RunStatus,
    /// What was saved as the run's summary.
    pub summary: RunSummary,
}

/// Why a run could not be made (a setup failure) or saved.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("cannot save the run: {0}")]
    Results(StoreError),
    #[error("some results of run {run} could not be saved: {error}")]
    Unsaved { run: RunId, error: StoreError },
    #[error("the engine task failed: {0}")]
    Task(tokio::task::JoinError),
    #[error("workload \"{0}\" defines its server (`cluster:`), which casslab can set only on its local cluster: leave out --hosts, or remove `cluster:` to run against your own cluster as it is")]
    NeedsLocalCluster(String),
    /// An SLA names what the run does not have (an operation it lacks).
    #[error(transparent)]
    Sla(#[from] findmax::SlaError),
    #[error("the server definition of workload \"{workload}\": {error}")]
    Server { workload: String, error: crate::cluster::ControlError },
}

// The errors a session's message shows are not its sources too (`{:#}` would print them twice).
impl From<StoreError> for SessionError {
    fn from(e: StoreError) -> SessionError {
        SessionError::Results(e)
    }
}

impl From<tokio::task::JoinError> for SessionError {
    fn from(e: tokio::task::JoinError) -> SessionError {
        SessionError::Task(e)
    }
}

/// One run, from connecting to saving.
pub struct RunSession<'a> {
    lab: &'a Lab<'a>,
    /// The run to make, its config [`RunConfig::resolved`] (what it records is what it ran).
    spec: RunSpec,
    clock: RunClock,
}

/// A session about to drive a target inside casslab (no server, so none to connect to).
struct InProcessRun<'a> {
    session: RunSession<'a>,
    server: Option<server_metrics::ServerMetrics>,
}

impl<'a> targets::Driver<'a> for InProcessRun<'a> {
    type Output = Result<RunResult, SessionError>;
    fn drive<T: Target>(self, target: T) -> targets::Driven<'a, Self::Output> {
        Box::pin(self.session.connected(Ok(target), self.server, vec!["in-process".into()]))
    }
}

impl<'a> RunSession<'a> {
    pub fn new(lab: &'a Lab<'a>, spec: &RunSpec) -> RunSession<'a> {
        let workload =
            run_checks::with_consistency(workload_for_run(spec.workload.clone(), spec.config.verify), spec.config.consistency, spec.config.serial_consistency);
        let config = changes::with_workload_load(spec.config.clone(), &spec.workload).resolved();
        let spec = RunSpec { config, workload, ..spec.clone() };
        RunSession { lab, spec, clock: RunClock::start() }
    }

    /// Connects to the workload's kind of server (CQL, or the Redis of the run's config; none
    /// for `--target instant`), runs the workload's phases and saves everything; a setup
    /// failure is an error (a run record already begun is saved as failed first).
    pub async fn run(self) -> Result<RunResult, SessionError> {
        let (cfg, w, lab) = (&self.spec.config, &self.spec.workload, self.lab);
        if let Some(name) = &cfg.in_process {
            let Some(known) = targets::in_process(name) else {
                let names: Vec<&str> = targets::IN_PROCESS.iter().map(|t| t.name).collect();
                let hint = format!("one of: {}", names.join(", "));
                return Err(EngineError::Connect { hosts: name.clone(), message: "no target inside casslab has this name".into(), hint }.into());
            };
            // no server (and no `cluster:` applied): the client's own CPU and memory are still polled
            let server = server_metrics::start(cfg, &w.keyspace, &lab.credentials, self.clock, None, server_metrics::Polled::ClientOnly);
            let driven = targets::drive_in_process(known.name, InProcessRun { session: self, server });
            return driven.expect("every target of targets::IN_PROCESS has its arm in drive_in_process").await;
        }
        if let Some(spec) = &w.cluster {
            apply_server(lab, &w.name, spec, false).await?;
        }
        match w.target {
            TargetKind::Cql => {
                // a shard other than 0 polls no server and carries out no event
                let control = lab.control.as_ref().filter(|_| controls(cfg));
                let polled = if controls(cfg) { server_metrics::Polled::Cql } else { server_metrics::Polled::ClientOnly };
                let server = server_metrics::start(cfg, &w.keyspace, &lab.credentials, self.clock, control, polled);
                let target = CqlTarget::connect(&cfg.cluster, &lab.credentials).await;
                let hosts = cfg.cluster.hosts.clone();
                self.connected(target, server, hosts).await
            }
            TargetKind::Redis => {
                let Some(rc) = &cfg.redis else { return Err(EngineError::NoRedisTarget(w.name.clone()).into()) };
                let polled = if controls(cfg) { server_metrics::Polled::Redis(rc.clone()) } else { server_metrics::Polled::ClientOnly };
                let server = server_metrics::start(cfg, &w.keyspace, &lab.credentials, self.clock, None, polled);
                let target = RedisTarget::connect(rc, &lab.credentials).await;
                let hosts = vec![rc.url.clone()];
                self.connected(target, server, hosts).await
            }
        }
    }

    /// Drives a target that connected; one that did not stops the collector and is the error.
    async fn connected<T: Target>(
        self,
        target: Result<T, EngineError>,
        server: Option<server_metrics::ServerMetrics>,
        hosts: Vec<String>,
    ) -> Result<RunResult, SessionError> {
        match target {
            Ok(t) => self.drive(Arc::new(t), server, &hosts).await,
            Err(e) => {
                if let Some(sm) = server {
                    sm.finish(self.lab.results, None).await;
                }
                Err(e.into())
            }
        }
    }

    /// Runs the engine against a connected target and consumes its events.
    async fn drive<T: Target>(self, target: Arc<T>, server: Option<server_metrics::ServerMetrics>, hosts: &[String]) -> Result<RunResult, SessionError> {
        let lab = self.lab;
        lab.observer.on(&SessionEvent::Connected { hosts, info: target.info() });
        let id = match self.begin(target.info()).await {
            Ok(id) => id,
            Err(e) => {
                if let Some(sm) = server {
                    sm.finish(lab.results, None).await;
                }
                return Err(e.into());
            }
        };
        lab.observer.on(&SessionEvent::RunStarted { run: id, workload: &self.spec.workload.name, t0_unix_ms: self.clock.t0_unix_ms });
        // setup events (`setup ACTION`) set the cluster up before anything is loaded or measured
        let setup = if controls(&self.spec.config) && self.spec.workload.events.iter().any(|e| e.setup) {
            timeline::run_setup(&self.spec.workload.events, self.clock, lab.control.clone(), lab.observer.clone()).await
        } else {
            Vec::new()
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (rates, rate_changes) = tokio::sync::mpsc::unbounded_channel();
        let (spec, clock, stop, engine_target) = (self.spec.clone(), self.clock, lab.stop.clone(), target.clone());
        let start = spec.together.clone();
        let verify = crate::verify::RunVerify::fresh();
        let token = verify.clone();
        let engine = tokio::spawn(async move {
            engine::run(engine_target, &spec.config, &spec.workload, clock, tx, engine::Controls { stop, rate_changes, start }, &token).await
        });
        let mut run = Consumer {
            session: &self,
            id,
            server: server.as_ref(),
            summary: RunSummary::default(),
            store_error: None,
            timeline: None,
            points: Vec::new(),
            violations: Default::default(),
            rates: self.spec.config.peak_rate_per_s().map(|_| rates),
            profiling: profiling::Profiling::new(&self.spec.config, lab.control.clone().filter(|_| controls(&self.spec.config)), self.clock),
        };
        while let Some(ev) = rx.recv().await {
            run.on(ev);
        }
        let result = engine.await?;
        let Consumer { mut summary, mut store_error, timeline, points, profiling, .. } = run;
        let status = match &result {
            Ok(o) if o.interrupted => RunStatus::Interrupted,
            Ok(_) => RunStatus::Completed,
            Err(e) => {
                summary.notes.push(format!("failed: {e}"));
                RunStatus::Failed
            }
        };
        // the run as measured is saved before anything optional is read (profiles, the
        // servers' last figures): whatever happens to those, the run is not lost
        let ended_ms = unix_now_ms();
        lab.results.finish_run(id, status, &summary, ended_ms)?;
        if let Some(p) = profiling {
            for m in p.finish(lab.results, id).await {
                self.tell(&Notice::Server(m), &mut summary);
            }
        }
        if let Err(e) = run_checks::save_records(lab.results, id, &verify, target.verifier().as_deref()) {
            store_error.get_or_insert(e);
        }
        if let Err(e) = self.save_events(id, setup, timeline, &points).await {
            store_error.get_or_insert(e);
        }
        if let Some(sm) = server {
            for m in sm.finish(lab.results, Some(id)).await {
                self.tell(&Notice::Server(m), &mut summary);
            }
        }
        lab.results.finish_run(id, status, &summary, ended_ms)?;
        lab.observer.on(&SessionEvent::RunFinished { run: id, status });
        result?;
        if let Some(e) = store_error {
            return Err(SessionError::Unsaved { run: id, error: e });
        }
        Ok(RunResult { run: id, status, summary })
    }

    /// Begins the run in the results sink, with where it runs and the server it runs against
    /// (as casslab's local cluster is defined).
    async fn begin(&self, info: &crate::engine::TargetInfo) -> Result<RunId, StoreError> {
        let (lab, cfg) = (self.lab, &self.spec.config);
        let env = RunEnvironment {
            casslab_version: env!("CARGO_PKG_VERSION").to_string(),
            cassandra_version: info.server_version.clone(),
            node_count: info.node_count,
            client_cores: crate::config::machine_cores(),
            hostname: std::fs::read_to_string("/etc/hostname").ok().map(|s| s.trim().to_string()),
            clock_t0_unix_ms: Some(self.clock.t0_unix_ms),
        };
        let started_at = unix_now_ms();
        let mut recorded = cfg.clone();
        if let Some(c) = &lab.control {
            let c = c.clone();
            recorded.server = tokio::task::spawn_blocking(move || c.definition()).await.ok();
        }
        lab.results.begin_run(&self.spec.workload.name, &recorded, &env, &self.spec.tags, started_at)
    }

    /// Tells the observer, and keeps what is worth keeping in the run's notes.
    fn tell(&self, n: &Notice, summary: &mut RunSummary) {
        self.lab.observer.on(&SessionEvent::Notice(n));
        if n.is_saved() {
            summary.notes.push(n.to_string());
        }
    }

    /// Saves the run's events (the setup ones carried out before the run, then those carried out
    /// by `timeline`, or all skipped) with the impact each had on its intervals.
    async fn save_events(&self, id: RunId, mut records: Vec<EventRecord>, timeline: Option<Timeline>, points: &[IntervalPoint]) -> Result<(), StoreError> {
        let (cfg, w) = (&self.spec.config, &self.spec.workload);
        let timed = match timeline {
            Some(t) => t.finish().await,
            None if controls(cfg) => timeline::all_skipped(&w.events),
            // another shard carries them out
            None => Vec::new(),
        };
        records.extend(timed);
        records.sort_by_key(|r| r.seq);
        save_events(self.lab.results, id, points, &records)
    }
}

/// What a run session keeps while it consumes the engine's events: the summary it will save,
/// the first results it could not save, the event timeline and the points the events'
/// impact is judged on.
struct Consumer<'s, 'a> {
    session: &'s RunSession<'a>,
    id: RunId,
    server: Option<&'s server_metrics::ServerMetrics>,
    summary: RunSummary,
    store_error: Option<StoreError>,
    timeline: Option<Timeline>,
    points: Vec<IntervalPoint>,
    violations: run_checks::Violations,
    /// Where the timeline sends changes of rate, under a rate.
    rates: Option<tokio::sync::mpsc::UnboundedSender<engine::RateChange>>,
    /// The run's profiles, recorded from the start of the run phase.
    profiling: Option<profiling::Profiling>,
}

impl Consumer<'_, '_> {
    fn on(&mut self, ev: EngineEvent) {
        let (s, id) = (self.session, self.id);
        let (lab, cfg, w) = (s.lab, &s.spec.config, &s.spec.workload);
        match ev {
            EngineEvent::Notice(n) => s.tell(&n, &mut self.summary),
            EngineEvent::CommonStart { at_unix_ms, clock_offset_ms } => {
                s.tell(&Notice::CommonStart { at_unix_ms, clock_offset_ms }, &mut self.summary);
                self.summary.common_start_unix_ms = Some(at_unix_ms);
                self.summary.clock_offset_ms = clock_offset_ms;
            }
            EngineEvent::PhaseStarted { phase, count, warmup_s, duration_s, rate_per_s, at_ms } => {
                if let Some(p) = self.profiling.as_mut().filter(|_| phase == Phase::Run) {
                    p.start(id);
                }
                if phase == Phase::Run && !w.events.is_empty() && controls(cfg) {
                    let cql = (w.target == TargetKind::Cql).then(|| {
                        Arc::new(index_events::CqlEvents {
                            cluster: cfg.cluster.clone(),
                            credentials: lab.credentials.clone(),
                            keyspace: w.keyspace.clone(),
                            tables: w.tables(),
                        })
                    });
                    self.timeline = Some(Timeline::start(w.events.clone(), s.clock, at_ms, lab.control.clone(), lab.observer.clone(), self.rates.clone(), cql));
                }
                let schedule = cfg.rate_schedule().or(cfg.concurrency_shape.as_ref()).filter(|_| phase == Phase::Run).map(|s| s.to_string());
                lab.observer.on(&SessionEvent::PhaseStarted { phase, count, warmup_s, duration_s, rate_per_s, concurrency: cfg.concurrency, schedule });
            }
            EngineEvent::Load(load) => {
                if let Err(e) = lab.results.add_interval_load(id, &load) {
                    self.store_error.get_or_insert(e);
                }
            }
            EngineEvent::Interval(sample) => {
                for m in self.server.map(|sm| sm.flush(lab.results, Some(id))).unwrap_or_default() {
                    s.tell(&Notice::Server(m), &mut self.summary);
                }
                if sample.phase != Phase::Load {
                    self.points.push(impact::point_of(&sample));
                }
                if let Err(e) = lab.results.add_interval(id, &sample).and_then(|_| self.violations.add(lab.results, id, &s.clock, &sample)) {
                    self.store_error.get_or_insert(e);
                }
                lab.observer.on(&SessionEvent::Interval(&sample));
            }
            EngineEvent::PhaseFinished { phase, duration_s, ops, target_rate_per_s, never_started, count } => {
                if never_started.is_some() {
                    self.summary.never_started = never_started;
                }
                if count.is_some() {
                    self.summary.count = count;
                }
                lab.observer.on(&SessionEvent::PhaseFinished { phase });
                for (name, st) in &ops {
                    if let Err(e) = lab.results.add_histograms(id, phase, name, st) {
                        self.store_error.get_or_insert(e);
                    }
                }
                self.summary.phases.push(PhaseSummary::of(phase, duration_s, &ops, target_rate_per_s, &mut self.summary.notes));
            }
            EngineEvent::Verify(request) => run_checks::answer(lab.results, request),
        }
    }
}

/// Runs casslab's local cluster as `spec` says (nothing when it runs so already, unless
/// `restart`), on a blocking thread, telling the observer what it does.
pub async fn apply_server(lab: &Lab<'_>, workload: &str, spec: &crate::cluster::ServerSpec, restart: bool) -> Result<crate::cluster::Applied, SessionError> {
    let Some(control) = lab.control.clone() else { return Err(SessionError::NeedsLocalCluster(workload.to_string())) };
    let (spec2, observer) = (spec.clone(), lab.observer.clone());
    let applied =
        tokio::task::spawn_blocking(move || control.apply(&spec2, restart, &mut |line| observer.on(&SessionEvent::Notice(&Notice::Cluster(line.to_string())))))
            .await?
            .map_err(|source| SessionError::Server { workload: workload.to_string(), error: source })?;
    if applied.restarted {
        lab.observer.on(&SessionEvent::ServerApplied { workload, applied });
    }
    Ok(applied)
}

/// Checks a server definition as far as can be done without stopping anything.
pub async fn check_server(lab: &Lab<'_>, workload: &str, spec: &crate::cluster::ServerSpec) -> Result<(), SessionError> {
    let Some(control) = lab.control.clone() else { return Err(SessionError::NeedsLocalCluster(workload.to_string())) };
    let (spec2, observer) = (spec.clone(), lab.observer.clone());
    tokio::task::spawn_blocking(move || control.check(&spec2, &mut |line| observer.on(&SessionEvent::Notice(&Notice::Cluster(line.to_string())))))
        .await?
        .map_err(|source| SessionError::Server { workload: workload.to_string(), error: source })
}

/// Makes one run (a [`RunSession`]) and saves it.
pub async fn run(lab: &Lab<'_>, spec: &RunSpec) -> Result<RunResult, SessionError> {
    RunSession::new(lab, spec).run().await
}

/// Whether this loader carries out the run's events and polls the servers: every run but the
/// shards of a sharded run other than shard 0.
fn controls(cfg: &RunConfig) -> bool {
    cfg.shard.as_ref().is_none_or(|s| s.controls())
}

/// Saves a run's events with the impact each had on its intervals.
fn save_events(results: &Store, id: RunId, points: &[IntervalPoint], records: &[EventRecord]) -> Result<(), StoreError> {
    if records.is_empty() {
        return Ok(());
    }
    let impacts = impact::impacts(points, records, &impact::ImpactSettings::default());
    for (r, i) in records.iter().zip(&impacts) {
        results.add_event(id, r, i.as_ref())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;

    #[test]
    fn a_rate_not_kept_is_noted_and_sub_figures_stay_out_of_the_total() {
        let mut read = OpStats::default();
        let mut request = OpStats::default();
        for _ in 0..900 {
            read.record_ok(1_000, 1_000);
            request.record_ok(500, 500);
        }
        let mut notes = Vec::new();
        let p = PhaseSummary::of(Phase::Run, 1.0, &[("read".into(), read), ("read.request".into(), request)], Some(1_000.0), &mut notes);
        assert_eq!(p.total.ops_per_s, 900.0);
        assert_eq!(p.ops.len(), 2);
        assert_eq!(notes, ["target rate 1000/s not kept: achieved 900/s"]);
        let mut notes = Vec::new();
        PhaseSummary::of(Phase::Run, 1.0, &[], None, &mut notes);
        assert!(notes.is_empty());
    }
}
