//! Workload files: the model of a workload (`model`), reading one from a file or a built-in
//! name with its parameters (`parse`, `params`), the client access settings of operations
//! (`access`), the checks made before anything touches a cluster (`validate`), the errors they
//! report with file:line (`error`), items written once with a `{A..B}` range (`repeat`), what a `schema:` list may do (`schema_guard`: only create,
//! inside the workload's own keyspace), and the workloads and scenarios shipped in the binary
//! (`builtin`, `scenarios`). YAML is read through `crate::yaml`, CQL through `crate::cql`.
//! Nothing here talks to a cluster.

mod access_settings;
mod builtin;
mod model;
mod parse;
pub mod redis_commands;
pub mod repeat;
mod scenarios;
mod schema_guard;
mod substitution;
mod validate;
mod workload_error;

pub use builtin::{builtin, builtin_names, BUILTINS};
pub use model::{
    BatchKind, BatchSpec, Consistency, CqlOp, LoadPhase, OpBody, Operation, PartitionSet, RedisArg, RedisCommand, RedisMode, RedisOp, Replay, RunPhase,
    Statement, Strategy, TargetKind, Workload, MAX_BATCH_ROWS, MAX_PARTITIONS,
};
pub use parse::{load_workload, parse_workload, resolve_text};
pub use scenarios::{scenario, SCENARIOS};
pub use workload_error::{Given, OpProblem, Problem, SchemaProblem, WorkloadError};
