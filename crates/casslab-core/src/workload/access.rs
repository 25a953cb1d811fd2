//! The client-side access settings of an operation, as written under an operation in a
//! workload file: reading a set of partitions per execution (`partitions:` with a strategy),
//! writing rows in batches (`batch:`), and client-side timestamps (`timestamp: client`).
//! This module parses and checks them (errors are `file:line`); the engine's `access` module
//! executes them. TTLs and explicit timestamps need nothing here: they are CQL
//! (`USING TTL ?`, `USING TIMESTAMP ?`) bound to generators like any other value.

use super::error::WorkloadError;
use super::parse::LineIndex;
use super::Statement;
use crate::cql;
use crate::gen::Scalar;
use crate::suggest::did_you_mean;
use serde::{Deserialize, Serialize};

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPartitions {
    count: Scalar,
    strategy: String,
    key: Option<String>,
    limit: Option<Scalar>,
    chunk: Option<Scalar>,
    concurrency: Option<Scalar>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBatch {
    kind: String,
    size: Scalar,
}

/// The access settings of one operation, checked.
pub(crate) struct Access {
    pub partitions: Option<PartitionSet>,
    pub batch: Option<BatchSpec>,
    pub client_timestamp: bool,
}

/// The access settings as written under an operation.
pub(crate) struct RawAccess {
    pub partitions: Option<RawPartitions>,
    pub batch: Option<RawBatch>,
    pub timestamp: Option<String>,
}

/// Checks `partitions:`, `batch:` and `timestamp:` of operation `name` (declared at `op_line`).
pub(crate) fn build_access(
    file: &str,
    lines: &LineIndex,
    name: &str,
    op_line: usize,
    statements: &[Statement],
    raw: RawAccess,
) -> Result<Access, WorkloadError> {
    let RawAccess { partitions, batch, timestamp } = raw;
    let at = |key: &str| lines.key_in(Some(op_line), key).unwrap_or(op_line);
    let err = |line: usize, msg: String| WorkloadError::new(file, Some(line), format!("operation \"{name}\": {msg}"));
    let is_select = |st: &Statement| cql::first_keyword(&st.cql).as_deref() == Some("SELECT");

    if partitions.is_some() && batch.is_some() {
        return Err(err(at("batch"), "`partitions` reads and `batch` writes; an operation has one or the other".into()));
    }

    let partitions = match partitions {
        None => None,
        Some(p) => {
            let line = at("partitions");
            let field = |f: &str| lines.key_in(Some(line), f).unwrap_or(line);
            let whole = |f: &str, v: &Scalar, min: u32, max: u32| -> Result<u32, WorkloadError> {
                v.as_i64()
                    .ok()
                    .filter(|n| (min as i64..=max as i64).contains(n))
                    .map(|n| n as u32)
                    .ok_or_else(|| err(field(f), format!("partitions.{f} must be a whole number from {min} to {max}")))
            };
            let [st] = statements else {
                return Err(err(line, "`partitions` needs a single `cql` statement (not `steps`)".into()));
            };
            if !is_select(st) {
                return Err(err(line, "`partitions` reads: its statement must be a SELECT of one partition (`… WHERE pk = ?`)".into()));
            }
            let count = whole("count", &p.count, 1, MAX_PARTITIONS)?;
            let strategy = Strategy::parse(&p.strategy).ok_or_else(|| {
                let sugg = did_you_mean(&p.strategy, Strategy::NAMES).map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default();
                err(field("strategy"), format!("unknown strategy \"{}\"{sugg} (one of {})", p.strategy, Strategy::NAMES.join(", ")))
            })?;
            let key = match p.key {
                Some(k) => k,
                None => st.args.first().cloned().ok_or_else(|| err(line, "`partitions` needs the statement to bind the partition key (`WHERE pk = ?`)".into()))?,
            };
            let Some(key_marker) = st.args.iter().position(|a| *a == key) else {
                return Err(err(field("key"), format!("partitions.key \"{key}\" is not bound by the statement (its args: {})", st.args.join(", "))));
            };
            if !cql::is_bound_by_eq(&st.cql, key_marker) {
                return Err(err(
                    st.line,
                    format!("the partition key \"{key}\" must be bound as `pk = ?` (so it can become `pk IN ?`)"),
                ));
            }
            let limit = p.limit.as_ref().map(|v| whole("limit", v, 1, 1_000_000)).transpose()?;
            if limit.is_some() && cql::has_keyword(&st.cql, "LIMIT") {
                return Err(err(field("limit"), "the statement has its own LIMIT; drop it or drop partitions.limit".into()));
            }
            let chunk = match &p.chunk {
                None => count,
                Some(v) if strategy.uses_in() => whole("chunk", v, 1, MAX_PARTITIONS)?.min(count),
                Some(_) => return Err(err(field("chunk"), "partitions.chunk applies to the `in` and `in_by_replica` strategies only".into())),
            };
            let concurrency = match &p.concurrency {
                None => count,
                Some(v) if strategy != Strategy::Sync => whole("concurrency", v, 1, MAX_PARTITIONS)?,
                Some(_) => return Err(err(field("concurrency"), "partitions.concurrency has no effect with `sync` (one statement at a time)".into())),
            };
            Some(PartitionSet { count, strategy, key, key_marker, limit, chunk, concurrency, line })
        }
    };

    let batch = match batch {
        None => None,
        Some(b) => {
            let line = at("batch");
            let field = |f: &str| lines.key_in(Some(line), f).unwrap_or(line);
            let kind = BatchKind::parse(&b.kind).ok_or_else(|| {
                let sugg = did_you_mean(&b.kind, BatchKind::NAMES).map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default();
                err(field("kind"), format!("unknown batch kind \"{}\"{sugg} (one of {})", b.kind, BatchKind::NAMES.join(", ")))
            })?;
            let size = b
                .size
                .as_i64()
                .ok()
                .filter(|n| (1..=MAX_BATCH_ROWS as i64).contains(n))
                .ok_or_else(|| err(field("size"), format!("batch.size must be a whole number of rows from 1 to {MAX_BATCH_ROWS}")))?
                as u32;
            if let Some(st) = statements.iter().find(|s| is_select(s)) {
                return Err(err(st.line, "a batch holds writes (INSERT, UPDATE, DELETE), not SELECT".into()));
            }
            Some(BatchSpec { kind, size, line })
        }
    };

    let client_timestamp = match timestamp.as_deref().map(str::trim) {
        None | Some("server") => false,
        Some("client") => {
            if statements.iter().any(is_select) {
                return Err(err(at("timestamp"), "`timestamp: client` stamps writes; this operation reads".into()));
            }
            true
        }
        Some(other) => return Err(err(at("timestamp"), format!("timestamp: \"{other}\" is neither `client` nor `server`"))),
    };
    Ok(Access { partitions, batch, client_timestamp })
}

#[cfg(test)]
mod tests {
    use crate::workload::{parse_workload, BatchKind, Strategy};
    use std::collections::BTreeMap;

    fn wl(ops: &str) -> String {
        format!(
            "keyspace: ks\nschema:\n  - CREATE TABLE t (pk int, ck int, v text, PRIMARY KEY ((pk), ck))\ngenerators:\n  pk: {{ type: int, dist: uniform, min: 0, max: 100 }}\n  ck: {{ type: int }}\n  v: {{ type: text, size: 10 }}\noperations:\n{ops}run:\n  mix: {{ op: 1 }}\n  duration: 1s\n"
        )
    }

    fn parse(ops: &str) -> Result<crate::workload::Workload, String> {
        parse_workload(&wl(ops), "w.yaml", &BTreeMap::new()).map_err(|e| e.to_string())
    }

    #[test]
    fn partitions_parse_with_defaults() {
        let w = parse("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 100, strategy: in_by_replica, limit: 50 }\n").unwrap();
        let p = w.operations[0].partitions.as_ref().unwrap();
        assert_eq!((p.count, p.strategy, p.key.as_str(), p.key_marker, p.limit, p.chunk, p.concurrency), (100, Strategy::InByReplica, "pk", 0, Some(50), 100, 100));
        let w = parse("  op:\n    cql: SELECT v FROM t WHERE ck = ? AND pk = ?\n    args: [ck, pk]\n    partitions:\n      count: \"10\"\n      strategy: in\n      key: pk\n      chunk: 3\n      concurrency: 2\n").unwrap();
        let p = w.operations[0].partitions.as_ref().unwrap();
        assert_eq!((p.count, p.key_marker, p.chunk, p.concurrency), (10, 1, 3, 2));
    }

    #[test]
    fn partitions_errors_name_the_line() {
        let cases = [
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 10, strategy: asnyc }\n", "w.yaml:12:", "did you mean \"async\""),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions:\n      count: 0\n      strategy: sync\n", "w.yaml:13:", "partitions.count must be a whole number from 1 to 1000"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions:\n      count: 5\n      strategy: sync\n      concurrency: 4\n", "w.yaml:15:", "no effect with `sync`"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions:\n      count: 5\n      strategy: async\n      chunk: 2\n", "w.yaml:15:", "`in` and `in_by_replica` strategies only"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk IN (?)\n    args: [pk]\n    partitions: { count: 5, strategy: in }\n", "w.yaml:10:", "must be bound as `pk = ?`"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 5, strategy: in, key: v }\n", "w.yaml:12:", "partitions.key \"v\" is not bound"),
            ("  op:\n    cql: INSERT INTO t (pk, ck) VALUES (?, ?)\n    args: [pk, ck]\n    partitions: { count: 5, strategy: in }\n", "w.yaml:12:", "must be a SELECT"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ? LIMIT 3\n    args: [pk]\n    partitions: { count: 5, strategy: in, limit: 2 }\n", "w.yaml:12:", "has its own LIMIT"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 5, strategy: in, colour: red }\n", "w.yaml:", "unknown field `colour`"),
        ];
        for (ops, at, what) in cases {
            let e = parse(ops).unwrap_err();
            assert!(e.starts_with(at) && e.contains(what), "want {at} … {what}, got: {e}");
        }
    }

    #[test]
    fn batches_and_timestamps_parse_and_check() {
        let w = parse("  op:\n    cql: INSERT INTO t (pk, ck, v) VALUES (?, ?, ?)\n    args: [pk, ck, v]\n    batch: { kind: single_partition, size: \"20\" }\n    timestamp: client\n").unwrap();
        let op = &w.operations[0];
        let b = op.batch.as_ref().unwrap();
        assert_eq!((b.kind, b.size, b.line), (BatchKind::SinglePartition, 20, 12));
        assert!(op.client_timestamp);
        let cases = [
            ("  op:\n    cql: INSERT INTO t (pk, ck) VALUES (?, ?)\n    args: [pk, ck]\n    batch: { kind: loged, size: 5 }\n", "w.yaml:12:", "did you mean \"logged\""),
            ("  op:\n    cql: INSERT INTO t (pk, ck) VALUES (?, ?)\n    args: [pk, ck]\n    batch:\n      kind: logged\n      size: 0\n", "w.yaml:14:", "batch.size must be a whole number of rows"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    batch: { kind: logged, size: 5 }\n", "w.yaml:10:", "not SELECT"),
            ("  op:\n    cql: INSERT INTO t (pk, ck) VALUES (?, ?)\n    args: [pk, ck]\n    timestamp: sometimes\n", "w.yaml:12:", "neither `client` nor `server`"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    timestamp: client\n", "w.yaml:12:", "this operation reads"),
            ("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 5, strategy: in }\n    batch: { kind: logged, size: 5 }\n", "w.yaml:13:", "one or the other"),
        ];
        for (ops, at, what) in cases {
            let e = parse(ops).unwrap_err();
            assert!(e.starts_with(at) && e.contains(what), "want {at} … {what}, got: {e}");
        }
    }

    #[test]
    fn sub_operation_names_are_reserved() {
        let e = parse("  op.request:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n").unwrap_err();
        assert!(e.starts_with("w.yaml:9:") && e.contains("reserved"), "{e}");
    }
}
