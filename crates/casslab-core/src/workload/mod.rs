//! The workload model: what a workload file declares (keyspace, schema, parameters, value
//! generators, operations and phases), resolved and validated. Parsing lives in `parse`,
//! checks in `validate`, the built-in files in `builtin`. Nothing here talks to a cluster.

mod access;
mod builtin;
mod error;
mod parse;
mod scenarios;
mod validate;

pub use access::{BatchKind, BatchSpec, PartitionSet, Strategy, MAX_BATCH_ROWS, MAX_PARTITIONS};
pub use builtin::{builtin, builtin_names, BUILTINS};
pub use error::WorkloadError;
pub use scenarios::{scenario, SCENARIOS};
pub use parse::{load_workload, parse_workload, resolve_text};
/// The engine reads it from here; `crate::cql::to_in_statement` is its home.
pub use crate::cql::to_in_statement;

use crate::gen::GeneratorSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A consistency level, as written in workload files (`LOCAL_QUORUM`, `ONE`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Consistency {
    Any,
    One,
    Two,
    Three,
    Quorum,
    All,
    LocalQuorum,
    EachQuorum,
    LocalOne,
    Serial,
    LocalSerial,
}

impl Consistency {
    pub const NAMES: &'static [&'static str] = &[
        "ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE", "SERIAL",
        "LOCAL_SERIAL",
    ];
    pub fn parse(s: &str) -> Option<Consistency> {
        use Consistency::*;
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "ANY" => Any,
            "ONE" => One,
            "TWO" => Two,
            "THREE" => Three,
            "QUORUM" => Quorum,
            "ALL" => All,
            "LOCAL_QUORUM" => LocalQuorum,
            "EACH_QUORUM" => EachQuorum,
            "LOCAL_ONE" => LocalOne,
            "SERIAL" => Serial,
            "LOCAL_SERIAL" => LocalSerial,
            _ => return None,
        })
    }
    pub fn is_serial(self) -> bool {
        matches!(self, Consistency::Serial | Consistency::LocalSerial)
    }
}

/// One CQL statement of an operation, with the generators bound to its `?` markers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub cql: String,
    pub args: Vec<String>,
    /// 1-based line in the workload file.
    pub line: usize,
}

/// A named operation: one statement, or several run in sequence as one timed operation
/// (e.g. read-modify-write). A generator named twice within one execution yields one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    pub name: String,
    pub statements: Vec<Statement>,
    pub consistency: Consistency,
    pub serial_consistency: Option<Consistency>,
    pub page_size: i32,
    pub idempotent: bool,
    pub line: usize,
    /// `partitions:` — read a set of partitions per execution with a client-side strategy.
    #[serde(default)]
    pub partitions: Option<PartitionSet>,
    /// `batch:` — write `size` rows per execution in one batch.
    #[serde(default)]
    pub batch: Option<BatchSpec>,
    /// `timestamp: client` — the client stamps each write with its own (monotonic) clock.
    #[serde(default)]
    pub client_timestamp: bool,
}

/// The load phase: execute `op` `count` times as fast as the cluster allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadPhase {
    pub op: String,
    pub count: u64,
    pub line: usize,
}

/// The measured phase: a mix of operations in ratios, after an unmeasured warm-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPhase {
    pub mix: Vec<(String, f64)>,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub line: usize,
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
    pub events: Vec<crate::events::EventSpec>,
}

impl Workload {
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.iter().find(|o| o.name == name)
    }

    /// Table names created by the schema (unqualified, lower case).
    pub fn tables(&self) -> Vec<String> {
        self.schema.iter().filter_map(|s| crate::cql::created_table(&s.cql)).collect()
    }
}
