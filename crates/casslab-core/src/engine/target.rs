//! The seam between the engine and what it loads: a [`Target`] knows how to get a server ready
//! for a workload (keyspace, tables, the record of earlier loads), how to turn the workload's
//! operations into planned operations, and how to run one of them with freshly drawn values.
//! The engine owns everything else — scheduling, the in-flight limit, intended start times,
//! recording and interval sampling — and is generic over the target, so a second kind of server
//! is a second implementation of this trait, not a fork of the engine. CQL through the scylla
//! driver is the implementation today (`crate::targets::cql`).

use super::plan::Plan;
use super::setup_error::EngineError;
use crate::gen::GeneratorSet;
use crate::stats::{ErrorKind, OpStats};
use crate::workload::Workload;
use rand::rngs::SmallRng;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// Facts about the server read right after connecting; saved with the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetInfo {
    /// The server's own version string (`5.0.6`).
    pub server_version: Option<String>,
    pub node_count: usize,
    /// Nodes per data center, sorted by name (empty when the server has no such notion).
    pub datacenters: Vec<(String, usize)>,
}

/// How one execution of an operation ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Completion {
    /// A figure recorded beside the operation that this execution also counts in (e.g. a
    /// conditional write the server did not apply, under `<op>.not_applied`): a stats slot of
    /// the plan.
    pub also: Option<usize>,
    /// A read that returned no row (counted as the operation's `empty_reads`).
    pub empty: bool,
    /// The rows the operation's reads returned (counted as its `rows_read`).
    pub rows: u64,
}

/// What a loader does about the workload's schema: one loader creates it (the only one of an
/// unsharded run, shard 0 of a sharded one); the others wait until it exists, so that several
/// clients never create the same table at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SetupRole {
    Creates,
    WaitsFor { timeout_ms: u64 },
}

/// A key claimed through the server (see [`Target::claim`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The value that holds: ours if we claimed it first, else the first claimer's.
    pub value: String,
    /// Whether it is ours.
    pub ours: bool,
    /// When the server wrote the value that holds, on the server's clock (Unix microseconds),
    /// when it says.
    pub written_at_unix_us: Option<i64>,
}

/// What preparing the server for a workload did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    /// The workload's keyspace was created now (it did not exist).
    pub created_keyspace: bool,
}

/// A server the engine can put a workload's load on.
///
/// The setup methods run once per run; [`Target::start`] runs once per operation and must not
/// allocate what could have been prepared by [`Target::plan`].
pub trait Target: Send + Sync + 'static {
    /// One planned operation (prepared statements, bound generators, access settings).
    type Op: Send + Sync + 'static;
    /// A failed request; counted by its [`ErrorKind`], never fatal.
    type Error: std::fmt::Display + Send + 'static;

    fn info(&self) -> &TargetInfo;

    /// Creates what the workload needs on the server (keyspace, schema, bookkeeping) if missing,
    /// or waits until another loader has (`role`).
    fn prepare(&self, w: &Workload, role: SetupRole) -> impl Future<Output = Result<Prepared, EngineError>> + Send;

    /// Plans the operations `mix` names (with their weights) for one phase, drawing values from
    /// `gens`. The plan's stats slots are the operations, then the figures recorded beside them.
    fn plan(&self, w: &Workload, mix: &[(String, f64)], gens: Arc<GeneratorSet>) -> impl Future<Output = Result<Plan<Self::Op>, EngineError>> + Send;

    /// The description recorded when the data set `fingerprint` was loaded completely, if it was.
    fn loaded(&self, fingerprint: &str) -> impl Future<Output = Result<Option<String>, EngineError>> + Send;

    /// Records that the data set `fingerprint` is loaded completely.
    fn record_load(&self, fingerprint: &str, description: &str) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Empties the workload's data and forgets earlier loads — only where casslab created it.
    fn truncate_for_reload(&self, w: &Workload) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Writes `value` under `key` unless the key holds a value already (atomically, as a
    /// lightweight transaction), to expire after `ttl_s`; returns what holds. The loaders of a
    /// sharded run agree on a common start through this. A target that cannot returns
    /// [`EngineError::NoCoordination`].
    fn claim(&self, key: &str, value: &str, ttl_s: u32) -> impl Future<Output = Result<Claim, EngineError>> + Send {
        let _ = (key, value, ttl_s);
        async { Err(EngineError::NoCoordination) }
    }

    /// The claimed values of those of `keys` that hold one.
    fn claims(&self, keys: &[String]) -> impl Future<Output = Result<Vec<(String, String)>, EngineError>> + Send {
        let _ = keys;
        async { Err(EngineError::NoCoordination) }
    }

    /// Starts one execution of `op`: draws its values from `gens` with `rng` now, and returns
    /// the request as a future. Figures recorded beside the operation (each statement of a set
    /// read) go into `stats`, the worker's own slots.
    fn start<'a>(
        &'a self,
        op: &'a Self::Op,
        gens: &GeneratorSet,
        rng: &mut SmallRng,
        stats: &'a Mutex<Vec<OpStats>>,
    ) -> impl Future<Output = Result<Completion, Self::Error>> + Send + use<'a, Self>;

    /// Which counted kind a failed request is.
    fn classify(e: &Self::Error) -> ErrorKind;

    /// The workload's verification (its tables and their write records), once a phase was
    /// planned; `None` for a target that verifies nothing.
    fn verifier(&self) -> Option<Arc<crate::verify::Verifier>> {
        None
    }

    /// Where the recall of its vector searches is left, judged off the hot path, until the
    /// sampler takes it each interval; `None` when nothing is judged.
    fn recall_sink(&self) -> Option<Arc<crate::recall::RecallSink>> {
        None
    }

    /// Keeps `value` under `key` in the target's bookkeeping of the workload's data (which run
    /// wrote to a data set last); forgotten with the loads by `truncate_for_reload`.
    fn note(&self, key: &str, value: &str) -> impl Future<Output = Result<(), EngineError>> + Send {
        let _ = (key, value);
        async { Ok(()) }
    }

    /// Makes ready to read back a workload's data without creating anything: an error when
    /// its keyspace (or server) is not there.
    fn attach(&self, w: &Workload) -> impl Future<Output = Result<(), EngineError>> + Send {
        let _ = w;
        async { Ok(()) }
    }

    /// The row of a verified `table` whose key is `key`: its value columns in the table's order
    /// (`None`: no row), read at `consistency` where the server has such a thing; a failure
    /// in words.
    fn read_row<'a>(
        &'a self,
        table: &'a crate::verify::Table,
        key: Vec<scylla::value::CqlValue>,
        consistency: crate::workload::Consistency,
    ) -> impl Future<Output = Result<Option<Vec<Option<scylla::value::CqlValue>>>, String>> + Send + 'a {
        let _ = (table, key, consistency);
        async { Err("this server cannot be read back by key".to_string()) }
    }

    /// What [`Target::note`] kept under `key`.
    fn noted(&self, key: &str) -> impl Future<Output = Result<Option<String>, EngineError>> + Send {
        let _ = key;
        async { Ok(None) }
    }
}
