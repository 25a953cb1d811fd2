//! The workload model: what a workload file declares (keyspace, schema, parameters, value
//! generators, operations and phases), after parameters are substituted and everything is
//! checked. Plain data, read by the engine, the linter and experiments; reading files into it
//! is `parse.rs`'s job (with `access_settings.rs` for the access settings), and nothing here talks to a
//! cluster.

use crate::cql;
use crate::events::EventSpec;
use crate::gen::GeneratorSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::cql::Consistency;

/// One CQL statement of an operation, with the generators bound to its `?` markers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub cql: String,
    pub args: Vec<String>,
    /// 1-based line in the workload file.
    pub line: usize,
}

/// The kind of server a workload is written for: its operations are all CQL statements or all
/// Redis commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    #[default]
    Cql,
    Redis,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Cql => "CQL",
            TargetKind::Redis => "Redis",
        }
    }
}

/// One argument of a Redis command: written as is, or a value drawn from a generator (`?`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedisArg {
    Literal(String),
    /// The generator bound to this `?` marker.
    Bound(String),
}

/// One Redis command of an operation (`HSET ? field0 ?` with `args: [key, f0]`): its name in
/// upper case and its arguments, checked against the command's arity (`workload::redis`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedisCommand {
    pub name: String,
    pub args: Vec<RedisArg>,
    /// 1-based line in the workload file.
    pub line: usize,
}

impl RedisCommand {
    /// The generators bound by this command, in marker order.
    pub fn bound(&self) -> impl Iterator<Item = &str> {
        self.args.iter().filter_map(|a| match a {
            RedisArg::Bound(g) => Some(g.as_str()),
            RedisArg::Literal(_) => None,
        })
    }
}

/// How the commands of a Redis operation are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RedisMode {
    /// One command, or `steps:` one after the other (a round trip each).
    #[default]
    Sequence,
    /// `pipeline:` every command written at once, the replies read together (one round trip).
    Pipeline,
}

/// A named operation, written for CQL or for Redis (`body`). A generator named twice within one
/// execution yields one value.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub name: String,
    /// 1-based line of its name in the workload file.
    pub line: usize,
    pub body: OpBody,
    /// `verify:` — check what its reads return against the writes (`None`: the workload's
    /// `verify:`, else off).
    pub verify: Option<bool>,
}

/// What an operation sends: CQL statements with their client settings, or Redis commands.
#[derive(Debug, Clone, PartialEq)]
pub enum OpBody {
    Cql(CqlOp),
    Redis(RedisOp),
}

/// A CQL operation: one statement, or several run in sequence as one timed operation (e.g.
/// read-modify-write), with the client settings they are prepared with.
#[derive(Debug, Clone, PartialEq)]
pub struct CqlOp {
    pub statements: Vec<Statement>,
    pub consistency: Consistency,
    pub serial_consistency: Option<Consistency>,
    pub page_size: i32,
    pub idempotent: bool,
    /// `partitions:` — read a set of partitions per execution with a client-side strategy.
    pub partitions: Option<PartitionSet>,
    /// `batch:` — write `size` rows per execution in one batch.
    pub batch: Option<BatchSpec>,
    /// `timestamp: client` — the client stamps each write with its own (monotonic) clock.
    pub client_timestamp: bool,
    /// `rows:` — its partitions are made from seeds, key and rows (see `gen::rows`): a write
    /// writes the rows `select` picks of `partitions` partitions (in batches of `batch`), a read
    /// binds one row of one partition.
    pub rows: Option<Box<crate::gen::rows::RowsSpec>>,
}

/// A Redis operation: one command, `steps:` sent one after the other, or a `pipeline:`.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisOp {
    pub commands: Vec<RedisCommand>,
    pub mode: RedisMode,
}

impl Operation {
    /// The CQL body; `None` for a Redis operation.
    pub fn cql(&self) -> Option<&CqlOp> {
        match &self.body {
            OpBody::Cql(c) => Some(c),
            OpBody::Redis(_) => None,
        }
    }
    /// The Redis body; `None` for a CQL operation.
    pub fn redis(&self) -> Option<&RedisOp> {
        match &self.body {
            OpBody::Redis(r) => Some(r),
            OpBody::Cql(_) => None,
        }
    }
}

/// The load phase: execute `op` `count` times as fast as the cluster allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadPhase {
    pub op: String,
    pub count: u64,
    pub line: usize,
    /// `concurrency:` — at most this many load requests in flight (below `--concurrency`).
    #[serde(default)]
    pub concurrency: Option<u32>,
}

/// The measured phase: a mix of operations in ratios, after an unmeasured warm-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPhase {
    pub mix: Vec<(String, f64)>,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub line: usize,
    /// `replay:` — start each operation at its own time instead of drawing from the mix.
    #[serde(default)]
    pub replay: Option<Replay>,
    /// `rate:` — the rate the run offers (a level, or a schedule), unless the command line
    /// gives one.
    #[serde(default)]
    pub rate: Option<crate::load_shape::LoadShape>,
    /// `concurrency:` — a schedule of requests in flight (closed loop), unless the command line
    /// gives a rate or a concurrency.
    #[serde(default)]
    pub concurrency: Option<crate::load_shape::LoadShape>,
}

/// A schedule to replay (captured traffic): operation `ops[i]` starts `at_ms[i]` after the run
/// phase does; latency is measured from that intended start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    pub at_ms: Vec<f64>,
    pub ops: Vec<String>,
}

/// A parsed, substituted and validated workload.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub description: String,
    /// Where it came from: a file path or `builtin:NAME`.
    pub origin: String,
    /// Every parameter with its final value.
    pub params: BTreeMap<String, String>,
    /// What the operations are written for (CQL unless they are Redis commands).
    pub target: TargetKind,
    /// The CQL keyspace; for Redis only a name for the data in messages (default `redis`).
    pub keyspace: String,
    /// CQL replication map, e.g. `{'class': 'SimpleStrategy', 'replication_factor': 1}`;
    /// `None` lets the engine choose one that fits the cluster.
    pub replication: Option<String>,
    /// `CREATE TABLE` / `CREATE TYPE` / `CREATE INDEX` statements, run inside the keyspace.
    pub schema: Vec<Statement>,
    pub generators: BTreeMap<String, GeneratorSpec>,
    pub operations: Vec<Operation>,
    pub load: Option<LoadPhase>,
    pub run: Option<RunPhase>,
    /// `events:` — disturbances during the run phase (`60s kill node2`), times since its start.
    pub events: Vec<EventSpec>,
    /// `cluster:` — the server the workload is meant for (version, Java, GC, settings, ...),
    /// which casslab's local cluster is restarted to match; `None`: whatever runs.
    pub cluster: Option<crate::cluster::ServerSpec>,
    /// `verify:` — check every read against the writes, unless an operation says otherwise.
    pub verify: Option<bool>,
    /// `expect: consistent` — a verified read that is not ok (stale, missing, …) fails the run.
    pub expect_consistent: bool,
}

impl Workload {
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.iter().find(|o| o.name == name)
    }

    /// Whether operation `op`'s reads are verified: `on` (`--verify`, `--no-verify`) when the
    /// run says, else its own `verify:`, else the workload's.
    pub fn verifies(&self, op: &Operation, on: Option<bool>) -> bool {
        on.or(op.verify).or(self.verify).unwrap_or(false)
    }

    /// Table names created by the schema (unqualified, lower case).
    pub fn tables(&self) -> Vec<String> {
        self.schema.iter().filter_map(|s| cql::created_table(&s.cql)).collect()
    }
}

/// Largest set of partitions one execution may read.
pub const MAX_PARTITIONS: u32 = 1000;
/// Largest number of rows in one batch.
pub const MAX_BATCH_ROWS: u32 = 10_000;

/// How a set of partitions is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One single-partition SELECT at a time.
    Sync,
    /// Every single-partition SELECT in flight at once (up to `concurrency`).
    Async,
    /// `WHERE pk IN (…)`: one statement for the set (or one per `chunk` keys, in parallel).
    In,
    /// Keys grouped by the replicas that own them (the driver's token map); one IN statement
    /// per group, sent to a replica of the group, the groups in parallel.
    InByReplica,
}

impl Strategy {
    pub const NAMES: &'static [&'static str] = &["sync", "async", "in", "in_by_replica"];
    pub fn parse(s: &str) -> Option<Strategy> {
        Some(match s.trim() {
            "sync" => Strategy::Sync,
            "async" => Strategy::Async,
            "in" => Strategy::In,
            "in_by_replica" => Strategy::InByReplica,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        Strategy::NAMES[self as usize]
    }
    /// Whether the strategy sends `IN` statements.
    pub fn uses_in(self) -> bool {
        matches!(self, Strategy::In | Strategy::InByReplica)
    }
}

/// `partitions:` — each execution reads `count` distinct partitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionSet {
    pub count: u32,
    pub strategy: Strategy,
    /// The generator whose values are the partition keys (bound to `pk = ?` in the statement).
    pub key: String,
    /// Position (0-based) of the key's bind marker in the statement.
    pub key_marker: usize,
    /// Rows per partition at most: each statement gets `LIMIT ?` = limit × its partitions, and
    /// a page size at least that large, so the coordinator answers it in a single page.
    pub limit: Option<u32>,
    /// `in`/`in_by_replica`: partitions per IN statement at most (default: all).
    pub chunk: u32,
    /// Statements of one execution in flight at once, at most (default: all).
    pub concurrency: u32,
    pub line: usize,
}

/// Which kind of batch a write operation sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    Unlogged,
    Logged,
    /// An unlogged batch whose rows all share the first row's partition key.
    SinglePartition,
}

impl BatchKind {
    pub const NAMES: &'static [&'static str] = &["unlogged", "logged", "single_partition"];
    pub fn parse(s: &str) -> Option<BatchKind> {
        Some(match s.trim() {
            "unlogged" => BatchKind::Unlogged,
            "logged" => BatchKind::Logged,
            "single_partition" => BatchKind::SinglePartition,
            _ => return None,
        })
    }
}

/// `batch:` — each execution sends one batch of `size` rows (every statement of the operation
/// once per row, with values drawn per row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchSpec {
    pub kind: BatchKind,
    pub size: u32,
    pub line: usize,
}
