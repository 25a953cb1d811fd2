//! Where a session's results go, as they are produced: the run record when the session has
//! connected, each interval as it closes, the full histograms of each phase, server samples,
//! events with their impact, query traces, and the final status and summary. The SQLite
//! [`Store`] is the destination today; the session knows only this trait.

use crate::analysis::impact::EventImpact;
use crate::config::{RunConfig, RunEnvironment};
use crate::events::EventRecord;
use crate::server::traces::Trace;
use crate::server::ServerSample;
use crate::stats::{IntervalSample, OpStats, Phase};
use crate::store::{RunId, RunStatus, RunSummary, Store, StoreError};

/// A destination that failed to take a result.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SinkError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

impl From<StoreError> for SinkError {
    fn from(e: StoreError) -> SinkError {
        SinkError(Box::new(e))
    }
}

/// Receives a run's results while it goes.
pub trait ResultsSink: Sync {
    /// A new run; its id names it in every later call.
    fn begin_run(&self, workload: &str, cfg: &RunConfig, env: &RunEnvironment, tags: &[String], started_at_ms: i64) -> Result<RunId, SinkError>;
    fn add_interval(&self, run: RunId, sample: &IntervalSample) -> Result<(), SinkError>;
    /// The full histograms of one operation over a phase's measured part.
    fn add_histograms(&self, run: RunId, phase: Phase, op: &str, stats: &OpStats) -> Result<(), SinkError>;
    fn add_server_samples(&self, run: RunId, samples: &[ServerSample]) -> Result<(), SinkError>;
    fn add_event(&self, run: RunId, record: &EventRecord, impact: Option<&EventImpact>) -> Result<(), SinkError>;
    fn add_traces(&self, run: RunId, traces: &[Trace]) -> Result<(), SinkError>;
    fn finish_run(&self, run: RunId, status: RunStatus, summary: &RunSummary, ended_at_ms: i64) -> Result<(), SinkError>;
}

impl ResultsSink for Store {
    fn begin_run(&self, workload: &str, cfg: &RunConfig, env: &RunEnvironment, tags: &[String], started_at_ms: i64) -> Result<RunId, SinkError> {
        Ok(Store::begin_run(self, workload, cfg, env, tags, started_at_ms)?)
    }
    fn add_interval(&self, run: RunId, sample: &IntervalSample) -> Result<(), SinkError> {
        Ok(Store::add_interval(self, run, sample)?)
    }
    fn add_histograms(&self, run: RunId, phase: Phase, op: &str, stats: &OpStats) -> Result<(), SinkError> {
        Ok(Store::add_histograms(self, run, phase, op, stats)?)
    }
    fn add_server_samples(&self, run: RunId, samples: &[ServerSample]) -> Result<(), SinkError> {
        Ok(Store::add_server_samples(self, run, samples)?)
    }
    fn add_event(&self, run: RunId, record: &EventRecord, impact: Option<&EventImpact>) -> Result<(), SinkError> {
        Ok(Store::add_event(self, run, record, impact)?)
    }
    fn add_traces(&self, run: RunId, traces: &[Trace]) -> Result<(), SinkError> {
        Ok(Store::add_traces(self, run, traces)?)
    }
    fn finish_run(&self, run: RunId, status: RunStatus, summary: &RunSummary, ended_at_ms: i64) -> Result<(), SinkError> {
        Ok(Store::finish_run(self, run, status, summary, ended_at_ms)?)
    }
}
