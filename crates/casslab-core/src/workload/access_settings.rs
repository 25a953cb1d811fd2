//! The client-side access settings of an operation, as written under an operation in a
//! workload file: reading a set of partitions per execution (`partitions:` with a strategy),
//! writing rows in batches (`batch:`), and client-side timestamps (`timestamp: client`).
//! This module parses and checks them (errors are `file:line`); the engine's `access` module
//! executes them. TTLs and explicit timestamps need nothing here: they are CQL
//! (`USING TTL ?`, `USING TIMESTAMP ?`) bound to generators like any other value.

use super::model::{BatchKind, BatchSpec, PartitionSet, Statement, Strategy, MAX_BATCH_ROWS, MAX_PARTITIONS};
use super::workload_error::OpProblem;
use crate::cql;
use crate::gen::Scalar;
use crate::yaml::KeyLines;
use serde::Deserialize;

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
    pub rows: Option<crate::gen::rows::RowsSpec>,
}

/// The access settings as written under an operation.
pub(crate) struct RawAccess {
    pub partitions: Option<RawPartitions>,
    pub batch: Option<RawBatch>,
    pub timestamp: Option<String>,
    pub rows: Option<crate::gen::rows::RowsSpec>,
}

/// Checks `partitions:`, `batch:` and `timestamp:` of an operation declared at `op_line`,
/// whose keys are at `node`; a problem comes with its line.
pub(crate) fn build_access(node: &KeyLines, op_line: usize, statements: &[Statement], raw: RawAccess) -> Result<Access, (usize, OpProblem)> {
    let RawAccess { partitions, batch, timestamp, rows } = raw;
    let at = |key: &str| node.key_line(key).unwrap_or(op_line);
    if partitions.is_some() && batch.is_some() {
        return Err((at("batch"), OpProblem::PartitionsAndBatch));
    }
    if partitions.is_some() && rows.is_some() {
        return Err((at("rows"), OpProblem::PartitionsAndRows));
    }
    if let Some(r) = &rows {
        let reads = r.one_row || statements.iter().any(is_select);
        if reads && (r.partitions.is_some() || r.select.is_some()) {
            return Err((at("rows"), OpProblem::Rows("rows.partitions and rows.select say what a write writes; a read binds one row of one partition".into())));
        }
    }
    let partitions = partitions.map(|p| partition_set(node, at("partitions"), statements, p)).transpose()?;
    let batch = batch.map(|b| batch_spec(node, at("batch"), statements, b)).transpose()?;
    let client_timestamp = match timestamp.as_deref().map(str::trim) {
        None | Some("server") => false,
        Some("client") => {
            if statements.iter().any(is_select) {
                return Err((at("timestamp"), OpProblem::TimestampOnRead));
            }
            true
        }
        Some(other) => return Err((at("timestamp"), OpProblem::TimestampMode(other.to_string()))),
    };
    Ok(Access { partitions, batch, client_timestamp, rows })
}

fn is_select(st: &Statement) -> bool {
    cql::first_keyword(&st.cql).as_deref() == Some("SELECT")
}

/// `partitions:`, written at `line` (its fields under `node`), of an operation of `statements`.
fn partition_set(node: &KeyLines, line: usize, statements: &[Statement], p: RawPartitions) -> Result<PartitionSet, (usize, OpProblem)> {
    let field = |f: &str| node.line_at(&["partitions", f]).unwrap_or(line);
    let whole = |f: &'static str, v: &Scalar, min: u32, max: u32| -> Result<u32, (usize, OpProblem)> {
        let field_name = f.rsplit('.').next().unwrap_or(f);
        v.as_i64()
            .ok()
            .filter(|n| (min as i64..=max as i64).contains(n))
            .map(|n| n as u32)
            .ok_or((field(field_name), OpProblem::Whole { field: f, unit: "", min, max }))
    };
    let [st] = statements else {
        return Err((line, OpProblem::PartitionsNeedOneStatement));
    };
    if !is_select(st) {
        return Err((line, OpProblem::PartitionsNeedSelect));
    }
    let count = whole("partitions.count", &p.count, 1, MAX_PARTITIONS)?;
    let strategy = Strategy::parse(&p.strategy)
        .ok_or((field("strategy"), OpProblem::UnknownSetting { what: "strategy", name: p.strategy.clone(), known: Strategy::NAMES }))?;
    let key = match p.key {
        Some(k) => k,
        None => st.args.first().cloned().ok_or((line, OpProblem::NoPartitionKey))?,
    };
    let Some(key_marker) = st.args.iter().position(|a| *a == key) else {
        return Err((field("key"), OpProblem::KeyNotBound { key, args: st.args.clone() }));
    };
    if !cql::is_bound_by_eq(&st.cql, key_marker) {
        return Err((st.line, OpProblem::KeyNotEq(key)));
    }
    let limit = p.limit.as_ref().map(|v| whole("partitions.limit", v, 1, 1_000_000)).transpose()?;
    if limit.is_some() && cql::has_keyword(&st.cql, "LIMIT") {
        return Err((field("limit"), OpProblem::OwnLimit));
    }
    let chunk = match &p.chunk {
        None => count,
        Some(v) if strategy.uses_in() => whole("partitions.chunk", v, 1, MAX_PARTITIONS)?.min(count),
        Some(_) => return Err((field("chunk"), OpProblem::ChunkNeedsIn)),
    };
    let concurrency = match &p.concurrency {
        None => count,
        Some(v) if strategy != Strategy::Sync => whole("partitions.concurrency", v, 1, MAX_PARTITIONS)?,
        Some(_) => return Err((field("concurrency"), OpProblem::ConcurrencyWithSync)),
    };
    Ok(PartitionSet { count, strategy, key, key_marker, limit, chunk, concurrency, line })
}

/// `batch:`, written at `line` (its fields under `node`), of an operation of `statements`.
fn batch_spec(node: &KeyLines, line: usize, statements: &[Statement], b: RawBatch) -> Result<BatchSpec, (usize, OpProblem)> {
    let field = |f: &str| node.line_at(&["batch", f]).unwrap_or(line);
    let kind =
        BatchKind::parse(&b.kind).ok_or((field("kind"), OpProblem::UnknownSetting { what: "batch kind", name: b.kind.clone(), known: BatchKind::NAMES }))?;
    let size = b
        .size
        .as_i64()
        .ok()
        .filter(|n| (1..=MAX_BATCH_ROWS as i64).contains(n))
        .ok_or((field("size"), OpProblem::Whole { field: "batch.size", unit: "of rows ", min: 1, max: MAX_BATCH_ROWS }))? as u32;
    if let Some(st) = statements.iter().find(|s| is_select(s)) {
        return Err((st.line, OpProblem::BatchOfSelect));
    }
    Ok(BatchSpec { kind, size, line })
}

#[cfg(test)]
mod tests {
    use crate::workload::{parse_workload, BatchKind, Strategy};
    use std::collections::BTreeMap;

    fn wl(ops: &str) -> String {
        format!(
            "keyspace: ks\nschema:\n  - CREATE TABLE IF NOT EXISTS t (pk int, ck int, v text, PRIMARY KEY ((pk), ck))\ngenerators:\n  pk: {{ type: int, dist: uniform, min: 0, max: 100 }}\n  ck: {{ type: int }}\n  v: {{ type: text, size: 10 }}\noperations:\n{ops}run:\n  mix: {{ op: 1 }}\n  duration: 1s\n"
        )
    }

    fn parse(ops: &str) -> Result<crate::workload::Workload, crate::workload::WorkloadError> {
        parse_workload(&wl(ops), "w.yaml", &BTreeMap::new())
    }

    #[test]
    fn partitions_parse_with_defaults() {
        let w = parse("  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 100, strategy: in_by_replica, limit: 50 }\n")
            .unwrap();
        let p = w.operations[0].cql().unwrap().partitions.as_ref().unwrap();
        assert_eq!(
            (p.count, p.strategy, p.key.as_str(), p.key_marker, p.limit, p.chunk, p.concurrency),
            (100, Strategy::InByReplica, "pk", 0, Some(50), 100, 100)
        );
        let w = parse("  op:\n    cql: SELECT v FROM t WHERE ck = ? AND pk = ?\n    args: [ck, pk]\n    partitions:\n      count: \"10\"\n      strategy: in\n      key: pk\n      chunk: 3\n      concurrency: 2\n").unwrap();
        let p = w.operations[0].cql().unwrap().partitions.as_ref().unwrap();
        assert_eq!((p.count, p.key_marker, p.chunk, p.concurrency), (10, 1, 3, 2));
    }

    #[test]
    fn partitions_errors_name_the_line() {
        let cases = [
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 10, strategy: asnyc }\n",
                "w.yaml:12:",
                "did you mean \"async\"",
            ),
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions:\n      count: 0\n      strategy: sync\n",
                "w.yaml:13:",
                "partitions.count must be a whole number from 1 to 1000",
            ),
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions:\n      count: 5\n      strategy: sync\n      concurrency: 4\n",
                "w.yaml:15:",
                "no effect with `sync`",
            ),
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions:\n      count: 5\n      strategy: async\n      chunk: 2\n",
                "w.yaml:15:",
                "`in` and `in_by_replica` strategies only",
            ),
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk IN (?)\n    args: [pk]\n    partitions: { count: 5, strategy: in }\n",
                "w.yaml:10:",
                "must be bound as `pk = ?`",
            ),
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 5, strategy: in, key: v }\n",
                "w.yaml:12:",
                "partitions.key \"v\" is not bound",
            ),
            (
                "  op:\n    cql: INSERT INTO t (pk, ck) VALUES (?, ?)\n    args: [pk, ck]\n    partitions: { count: 5, strategy: in }\n",
                "w.yaml:12:",
                "must be a SELECT",
            ),
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk = ? LIMIT 3\n    args: [pk]\n    partitions: { count: 5, strategy: in, limit: 2 }\n",
                "w.yaml:12:",
                "has its own LIMIT",
            ),
            (
                "  op:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n    partitions: { count: 5, strategy: in, colour: red }\n",
                "w.yaml:",
                "unknown field `colour`",
            ),
        ];
        for (ops, at, what) in cases {
            let e = parse(ops).unwrap_err().to_string();
            assert!(e.starts_with(at) && e.contains(what), "want {at} … {what}, got: {e}");
        }
    }

    #[test]
    fn batches_and_timestamps_parse_and_check() {
        let w = parse("  op:\n    cql: INSERT INTO t (pk, ck, v) VALUES (?, ?, ?)\n    args: [pk, ck, v]\n    batch: { kind: single_partition, size: \"20\" }\n    timestamp: client\n").unwrap();
        let op = w.operations[0].cql().unwrap();
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
            let e = parse(ops).unwrap_err().to_string();
            assert!(e.starts_with(at) && e.contains(what), "want {at} … {what}, got: {e}");
        }
    }

    #[test]
    fn sub_operation_names_are_reserved() {
        let e = parse("  op.request:\n    cql: SELECT v FROM t WHERE pk = ?\n    args: [pk]\n").unwrap_err().to_string();
        assert!(e.starts_with("w.yaml:9:") && e.contains("reserved"), "{e}");
    }
}
