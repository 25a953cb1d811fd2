//! Engine errors: the setup failures that abort a run (cannot connect, schema rejected, a
//! statement that does not prepare, a generator that does not fit its column, ...), each saying
//! what to do. Request failures during a phase are not errors of this kind: targets classify
//! them into counted [`crate::stats::ErrorKind`]s and the run goes on.

use crate::gen::GenError;
use crate::workload::WorkloadError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot connect to {hosts}: {message}\n  hint: {hint}")]
    Connect { hosts: String, message: String, hint: String },
    /// A CQL cluster that cannot be reached or refuses the session: `problem` says what went
    /// wrong and what to do (first line), `driver` is the driver's own message.
    #[error("cannot connect to {hosts}: {problem}\n  the driver said: {driver}")]
    ConnectCql { hosts: String, problem: String, driver: String },
    #[error("--user {user} needs a password: set CASSLAB_PASSWORD or answer the prompt")]
    MissingPassword { user: String },
    #[error("--translate: cannot resolve \"{address}\" (write HOST:PORT)")]
    Translate { address: String },
    #[error("TLS setup failed: {0}")]
    Tls(String),
    #[error("the cluster rejected `{statement}`: {message}")]
    Schema { statement: String, message: String },
    #[error("{file}:{line}: operation \"{op}\": the cluster could not prepare `{cql}`: {message}")]
    Prepare { file: String, line: usize, op: String, cql: String, message: String },
    #[error("{file}:{line}: operation \"{op}\": bind marker {position} ({column}) is {column_type} but generator \"{generator}\" makes {generator_type}; change the generator's `type` to {column_type}")]
    TypeMismatch { file: String, line: usize, op: String, position: usize, column: String, column_type: String, generator: String, generator_type: String },
    #[error("keyspace \"{0}\" was not created by casslab, so casslab will not truncate it for --reload; use a keyspace casslab creates (e.g. -P keyspace=casslab_mine) or truncate it yourself")]
    NotOurKeyspace(String),
    #[error("this target cannot coordinate the loaders of a sharded run; give every loader the same --start-at TIME instead of a barrier")]
    NoCoordination,
    #[error(transparent)]
    Shards(#[from] StartError),
    #[error("the Redis URL holds a password, which would be saved with the run; drop it from the URL and set CASSLAB_REDIS_PASSWORD instead")]
    RedisPasswordInUrl,
    #[error("workload \"{0}\" is written in Redis commands, but the run has no Redis server: give --target redis://HOST:PORT, or leave --target out to use a local redis-server")]
    NoRedisTarget(String),
    #[error("casslab empties a Redis database for --reload only on the redis-server it started itself; empty it yourself (FLUSHDB) or drop --reload")]
    NotOurRedis,
    #[error("{file}:{line}: schema: `{statement}` would change table {keyspace}.{table}, which casslab did not create (it was there before, in a keyspace casslab did not create); casslab changes only tables it created: use a keyspace casslab creates (e.g. -P keyspace=casslab_mine)")]
    NotOurTable { file: String, line: usize, statement: String, keyspace: String, table: String },
    #[error("cannot start the thread that judges the recall of vector searches: {0}")]
    RecallJudge(String),
    /// A worker of the load failed (a fault of casslab's): the run is saved as failed with
    /// what it measured until then.
    #[error("a load worker failed in the {phase} phase ({message}): the intervals measured until then are saved, and the run is marked failed; this is a fault of casslab, please report it")]
    WorkerFailed { phase: &'static str, message: String },
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error(transparent)]
    Generators(#[from] GenError),
}

/// Why the loaders could not start together.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("--start-at: the start time passed {late_ms} ms ago; give a time in the future (every loader the same)")]
    Passed { late_ms: i64 },
    #[error("shards barrier of run \"{run_id}\": after {waited_s:.0} s, {missing} never arrived (arrived: {arrived}); start them with the same --run-id, or raise --barrier-timeout")]
    Missing { run_id: String, waited_s: f64, missing: String, arrived: String },
    #[error("shards barrier of run \"{run_id}\": shard {index} has arrived already (another loader with the same --shard, or an earlier run with this --run-id within {ttl_s} s: give a new --run-id)")]
    Duplicate { run_id: String, index: u32, ttl_s: u32 },
    #[error(transparent)]
    Together(#[from] GateError),
    #[error("shards barrier of run \"{run_id}\": its agreed start passed {late_ms} ms ago (an earlier run with this --run-id?): give a new --run-id")]
    Stale { run_id: String, late_ms: i64 },
}

/// Why a run could not start with the others.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateError {
    #[error("the run of {by} failed before the common start, so the runs measured at the same time could not start together")]
    Abandoned { by: String },
    #[error("the runs measured at the same time did not all reach their common start within {waited_s:.0} s ({arrived} of {participants} arrived)")]
    Timeout { waited_s: f64, arrived: usize, participants: usize },
}
