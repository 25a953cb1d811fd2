//! Rules about reads: partition-key `IN` fan-out at the coordinator, `IN` restrictions whose
//! product explodes, `ALLOW FILTERING`, secondary indexes on high-cardinality columns,
//! `SELECT *` of wide rows read often, and scans (of a table, or of a wide partition) without a
//! `LIMIT`.

use super::estimate::{cardinality, mean_size, value_bytes};
use super::partitions::loaded_size;
use super::{Finding, Model, OpStmt, Rule, Severity};
use crate::cql::{Dml, DmlKind, RelOp, Relation, Table, Term};
use crate::workload::{PartitionSet, Strategy};

/// How many values an `IN` restriction carries: its items, or the size of the collection
/// generator bound to `IN ?`.
fn in_size(m: &Model, s: &OpStmt, r: &Relation) -> Option<f64> {
    match r.in_marker {
        Some(i) => {
            let (_, spec) = s.generator(m.w, &Term::Marker(i))?;
            if !spec.cql_type.contains('<') {
                return None;
            }
            mean_size(&spec.size).map(|n| n.max(1.0))
        }
        None => Some(r.terms.len() as f64),
    }
}

/// Whether every partition-key column is restricted by `=` or `IN`.
pub(crate) fn partition_restricted(d: &Dml, t: &Table) -> bool {
    t.partition_key.iter().all(|c| d.relations_on(c).any(|r| matches!(r.op, RelOp::Eq | RelOp::In)))
}

pub(crate) fn check(m: &Model, out: &mut Vec<Finding>) {
    for s in m.stmts.iter().filter(|s| s.active()) {
        if let Some(set) = &s.body.partitions {
            partition_set_rule(m, s, set, out);
        }
        for d in s.dml.leaves() {
            let Some(t) = m.table(&d.table) else { continue };
            in_rules(m, s, d, t, out);
            if d.kind == DmlKind::Select {
                select_rules(m, s, d, t, out);
            }
        }
    }
    index_rule(m, out);
}

/// An operation's `partitions:` setting with an IN strategy turns its `pk = ?` into `pk IN ?`
/// with `chunk` keys per statement.
fn partition_set_rule(m: &Model, s: &OpStmt, set: &PartitionSet, out: &mut Vec<Finding>) {
    if !set.strategy.uses_in() || set.chunk < 2 {
        return;
    }
    let keys = set.chunk as f64;
    let by_replica = set.strategy == Strategy::InByReplica;
    let sev = if !by_replica && keys >= 10.0 && keys * m.opts.concurrency as f64 >= 1000.0 { Severity::Warning } else { Severity::Info };
    out.push(m.at_stmt(
        s,
        sev,
        Rule::PartitionInFanout,
        format!(
            "operation {} reads {} partitions per execution as IN statements of up to {keys:.0} keys ({}), at concurrency {}",
            s.op.name,
            set.count,
            set.strategy.as_str(),
            m.opts.concurrency
        ),
        if by_replica {
            "grouped by replica, each IN is answered by a replica from its own data, but one statement still waits for its slowest partition and the replica holds every row of the group at once"
        } else {
            "the coordinator splits a partition-key IN into one read per partition, mostly on other nodes, holds them all and answers when the slowest replica does: one request costs as much as N, ties up the coordinator's memory, and the latency is the worst of N"
        },
        "send single-partition SELECTs concurrently from the client (strategy: async, token-aware), or group keys by replica (in_by_replica); keep IN lists to a handful of keys",
    ));
}

fn in_rules(m: &Model, s: &OpStmt, d: &Dml, t: &Table, out: &mut Vec<Finding>) {
    let ins: Vec<(&Relation, Option<f64>)> = d.relations.iter().filter(|r| r.op == RelOp::In && !r.token).map(|r| (r, in_size(m, s, r))).collect();
    let pk_keys: Option<f64> =
        ins.iter().filter(|(r, _)| r.columns.iter().any(|c| t.partition_key.contains(c))).map(|(_, n)| *n).try_fold(1.0, |acc, n| n.map(|n| acc * n));
    let pk_in = ins.iter().any(|(r, _)| r.columns.iter().any(|c| t.partition_key.contains(c)));
    if pk_in {
        let conc = m.opts.concurrency as f64;
        let (sev, size) = match pk_keys {
            Some(n) if n >= 10.0 && n * conc >= 1000.0 => (Severity::Warning, format!("{n:.0} partitions per request")),
            Some(n) if n < 2.0 => (Severity::Info, format!("{n:.0} partition per request")),
            Some(n) => (Severity::Info, format!("{n:.0} partitions per request")),
            None => (Severity::Info, "a list of partitions per request".to_string()),
        };
        if pk_keys.is_none_or(|n| n >= 2.0) {
            out.push(m.at_stmt(
                s,
                sev,
                Rule::PartitionInFanout,
                format!("operation {} reads {size} with a partition-key IN, at concurrency {}", s.op.name, m.opts.concurrency),
                "the coordinator splits a partition-key IN into one read per partition, holds them all and answers when the slowest replica does: one request costs as much as N, ties up the coordinator's memory, and the latency is the worst of N",
                "send single-partition SELECTs concurrently from the client (token-aware, so each goes straight to a replica), or group keys by replica; keep IN lists to a handful of keys",
            ));
        }
    }
    if ins.len() >= 2 {
        let product: Option<f64> = ins.iter().map(|(_, n)| *n).try_fold(1.0, |acc, n| n.map(|n| acc * n));
        if let Some(p) = product {
            let sev = if p >= 100.0 { Severity::Warning } else { Severity::Info };
            out.push(m.at_stmt(
                s,
                sev,
                Rule::InProduct,
                format!("operation {} has {} IN restrictions whose product is {p:.0} key combinations per request", s.op.name, ins.len()),
                "several IN restrictions multiply: the coordinator (for partition keys) and the replica (for clustering keys) must look up every combination, so the work per request grows with the product, not the sum",
                "restrict all but one column with `=`, or split the request into several with smaller lists",
            ));
        }
    }
}

fn select_rules(m: &Model, s: &OpStmt, d: &Dml, t: &Table, out: &mut Vec<Finding>) {
    let restricted = partition_restricted(d, t);
    if d.allow_filtering {
        out.push(m.at_stmt(
            s,
            if restricted { Severity::Info } else { Severity::Warning },
            Rule::AllowFiltering,
            if restricted {
                format!("operation {} filters within one partition (ALLOW FILTERING)", s.op.name)
            } else {
                format!("operation {} uses ALLOW FILTERING without restricting the partition key", s.op.name)
            },
            "ALLOW FILTERING reads rows and throws away those that do not match: without a partition key it reads every partition on every node, so its cost grows with the table, not with the result",
            "model a table whose primary key answers this query (denormalize), or restrict the partition key so the filtering stays inside one partition",
        ));
    }
    let has_limit = d.limit.is_some() || d.per_partition_limit;
    // an index lookup by `=` finds its rows without reading the ring (what it returns is
    // `index-low-cardinality`'s)
    let index_lookup = d.relations.iter().any(|r| {
        !r.token
            && r.op == RelOp::Eq
            && r.columns.len() == 1
            && !t.is_key(&r.columns[0])
            && m.indexes.iter().any(|(i, _)| i.table == t.name && i.column == r.columns[0])
    });
    if !restricted && !has_limit && !index_lookup {
        out.push(m.at_stmt(
            s,
            Severity::Warning,
            Rule::ScanWithoutLimit,
            format!("operation {} scans {} across partitions without a LIMIT", s.op.name, t.name),
            "a query without a full partition key is a range scan over the token ring: without LIMIT it reads the whole table, page after page, from every node",
            "restrict the partition key, or add a LIMIT (and page through token ranges explicitly)",
        ));
    } else if restricted && !has_limit && !t.clustering.is_empty() && !t.clustering.iter().any(|c| d.relations_on(c).next().is_some()) {
        if let Some((rows, bytes)) = loaded_size(m, &t.name) {
            if rows >= m.opts.max_partition_rows as f64 / 10.0 || bytes >= m.opts.max_partition_bytes as f64 / 10.0 {
                out.push(m.at_stmt(
                    s,
                    Severity::Info,
                    Rule::ScanWithoutLimit,
                    format!("operation {} reads whole partitions of {} (about {rows:.0} rows each) without a LIMIT", s.op.name, t.name),
                    "a whole wide partition is read page by page on the replicas and travels in full to the client; its latency grows with the partition",
                    "add a LIMIT or a clustering range when only part of the partition is needed",
                ));
            }
        }
    }
    if d.select_star {
        let non_key = t.columns.iter().filter(|c| !t.is_key(&c.name)).count();
        let bytes = row_bytes(m, t);
        let wide = non_key >= 20 || bytes >= 4096.0;
        if wide {
            let often = s.run_share >= 0.10;
            out.push(m.at_stmt(
                s,
                if often { Severity::Warning } else { Severity::Info },
                Rule::SelectStarWideRow,
                format!(
                    "operation {} reads SELECT * of {} ({non_key} value columns, about {bytes:.0} bytes a row){}",
                    s.op.name,
                    t.name,
                    if often { format!(", {:.0}% of the run", s.run_share * 100.0) } else { String::new() }
                ),
                "SELECT * reads, merges and ships every column of every row it returns, including those the caller ignores; on wide rows that is most of the cost",
                "name the columns the operation needs",
            ));
        }
    }
}

/// The largest sum of value bytes any active write puts in one row of `t`.
fn row_bytes(m: &Model, t: &Table) -> f64 {
    let mut best = 0.0f64;
    for s in m.stmts.iter().filter(|s| s.active()) {
        for d in s.dml.leaves() {
            if d.table != t.name {
                continue;
            }
            let b: f64 = d.writes.iter().filter_map(|w| s.generator(m.w, &w.term)).map(|(_, spec)| value_bytes(spec)).sum();
            best = best.max(b);
        }
    }
    best
}

fn index_rule(m: &Model, out: &mut Vec<Finding>) {
    for (idx, line) in &m.indexes {
        let Some(t) = m.table(&idx.table) else { continue };
        if t.column(&idx.column).is_some_and(|c| c.ty.contains('<')) {
            continue;
        }
        let mut card: Option<f64> = None;
        for s in m.stmts.iter().filter(|s| s.active()) {
            for d in s.dml.leaves() {
                if d.table != t.name {
                    continue;
                }
                if let Some(w) = d.writes.iter().find(|w| w.column == idx.column) {
                    if let Some((_, spec)) = s.generator(m.w, &w.term) {
                        if let Some(c) = cardinality(spec, &m.w.generators) {
                            card = Some(card.map_or(c, |x: f64| x.max(c)));
                        }
                    }
                }
            }
        }
        let rows = loaded_size(m, &t.name).map(|_| m.w.load.as_ref().map(|l| l.count as f64).unwrap_or(0.0)).unwrap_or(0.0);
        let Some(c) = card else { continue };
        let high = c >= 10_000.0 || (rows > 0.0 && c >= 1000.0 && c >= rows / 10.0);
        if !high {
            continue;
        }
        let sai = idx.using.as_deref().is_some_and(|u| u.eq_ignore_ascii_case("StorageAttachedIndex") || u.eq_ignore_ascii_case("sai"));
        let distinct = if c.is_infinite() { "unbounded".to_string() } else { format!("about {c:.0}") };
        out.push(Finding {
            severity: if sai { Severity::Info } else { Severity::Warning },
            rule: Rule::IndexHighCardinality,
            file: m.w.origin.clone(),
            line: Some(*line),
            subject: t.name.clone(),
            statement: m.w.schema.iter().find(|s| s.line == *line).map(|s| super::one_line(&s.cql)).unwrap_or_default(),
            message: format!("secondary index on {}.{}, a column with {distinct} distinct values", t.name, idx.column),
            why: "a secondary index is local to each node: a lookup asks every node (or a range of them) and finds at most a row or two on each, so a high-cardinality lookup costs a cluster-wide scatter-gather for a single row".to_string(),
            fix: "keep a lookup table keyed by this column (written alongside the base table), or a materialized view; indexes suit low-cardinality columns queried within a partition"
                .to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{line_of, lint_yaml, of};
    use super::*;

    fn w(schema: &str, gens: &str, read: &str, args: &str) -> String {
        format!(
            "keyspace: ks
schema:
  - {schema}
generators:
  id: {{ type: bigint, dist: uniform, min: 0, max: 100000 }}
  ids: {{ type: \"list<bigint>\", size: 50 }}
  few: {{ type: \"list<bigint>\", size: 3 }}
  v: {{ type: text, size: 100 }}
{gens}operations:
  insert:
    cql: INSERT INTO t (id, v) VALUES (?, ?)
    args: [id, v]
  read:
    cql: {read}
    args: [{args}]
load: {{ op: insert, count: 1000 }}
run:
  mix: {{ read: 9, insert: 1 }}
  duration: 10s
"
        )
    }
    const T: &str = "CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY, v text)";

    #[test]
    fn partition_in_fans_out() {
        let src = w(T, "", "SELECT v FROM t WHERE id IN ?", "ids");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::PartitionInFanout);
        assert_eq!(hits.len(), 1, "{f:#?}");
        assert_eq!((hits[0].severity, hits[0].line), (Severity::Warning, Some(line_of(&src, "WHERE id IN"))));
        assert!(hits[0].message.contains("50 partitions"), "{}", hits[0].message);
        // three keys: a note, not a warning; a single-partition read: nothing
        let f = lint_yaml(&w(T, "", "SELECT v FROM t WHERE id IN ?", "few"));
        assert!(of(&f, Rule::PartitionInFanout).iter().all(|x| x.severity == Severity::Info));
        assert!(of(&lint_yaml(&w(T, "", "SELECT v FROM t WHERE id = ?", "id")), Rule::PartitionInFanout).is_empty());
    }

    #[test]
    fn partition_sets_read_with_in_fan_out() {
        let src = w(T, "", "SELECT v FROM t WHERE id = ?", "id").replace("    args: [id]\n", "    args: [id]\n    partitions: { count: 100, strategy: in }\n");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::PartitionInFanout);
        assert_eq!((hits.len(), hits[0].severity), (1, Severity::Warning), "{f:#?}");
        assert_eq!(hits[0].line, Some(line_of(&src, "SELECT v FROM t")));
        for strategy in ["async", "sync"] {
            let ok = src.replace("strategy: in", &format!("strategy: {strategy}"));
            assert!(of(&lint_yaml(&ok), Rule::PartitionInFanout).is_empty(), "{strategy}");
        }
        let grouped = lint_yaml(&src.replace("strategy: in", "strategy: in_by_replica"));
        assert!(of(&grouped, Rule::PartitionInFanout).iter().all(|x| x.severity == Severity::Info));
    }

    #[test]
    fn in_products_multiply() {
        let wide = "CREATE TABLE IF NOT EXISTS t (id bigint, a bigint, b bigint, v text, PRIMARY KEY ((id), a, b))";
        let src = w(wide, "", "SELECT v FROM t WHERE id = ? AND a IN ? AND b IN ?", "id, ids, ids");
        let src = src
            .replace("INSERT INTO t (id, v) VALUES (?, ?)", "INSERT INTO t (id, a, b, v) VALUES (?, ?, ?, ?)")
            .replace("args: [id, v]", "args: [id, id, id, v]");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::InProduct);
        assert_eq!(hits.len(), 1, "{f:#?}");
        assert_eq!(hits[0].severity, Severity::Warning);
        assert!(hits[0].message.contains("2500"), "{}", hits[0].message);
        let one = src.replace("AND b IN ?", "AND b = ?").replace("args: [id, ids, ids]", "args: [id, ids, id]");
        assert!(of(&lint_yaml(&one), Rule::InProduct).is_empty());
    }

    #[test]
    fn allow_filtering_and_scans_without_limit() {
        let src = w(T, "", "SELECT id FROM t WHERE v = ? ALLOW FILTERING", "v");
        let f = lint_yaml(&src);
        assert_eq!(of(&f, Rule::AllowFiltering)[0].severity, Severity::Warning);
        assert_eq!(of(&f, Rule::AllowFiltering)[0].line, Some(line_of(&src, "ALLOW FILTERING")));
        assert_eq!(of(&f, Rule::ScanWithoutLimit).len(), 1, "a filtering scan without LIMIT: {f:#?}");
        let limited = lint_yaml(&w(T, "", "SELECT id FROM t WHERE token(id) > token(?) LIMIT 100", "id"));
        assert!(of(&limited, Rule::ScanWithoutLimit).is_empty() && of(&limited, Rule::AllowFiltering).is_empty(), "{limited:#?}");
        assert!(lint_yaml(&w(T, "", "SELECT v FROM t WHERE id = ?", "id")).is_empty());
    }

    #[test]
    fn secondary_indexes_on_high_cardinality_columns() {
        let src =
            w(T, "", "SELECT id FROM t WHERE v = ?", "v").replace(&format!("  - {T}\n"), &format!("  - {T}\n  - CREATE INDEX IF NOT EXISTS by_v ON t (v)\n"));
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::IndexHighCardinality);
        assert_eq!(hits.len(), 1, "{f:#?}");
        assert_eq!((hits[0].severity, hits[0].line), (Severity::Warning, Some(line_of(&src, "CREATE INDEX"))));
        // a column with 5 distinct values
        let low = src.replace("  v: { type: text, size: 100 }", "  v: { type: text, prefix: c, dist: uniform, min: 0, max: 5 }");
        assert!(of(&lint_yaml(&low), Rule::IndexHighCardinality).is_empty());
    }

    #[test]
    fn select_star_on_wide_rows_read_often() {
        let src = w(T, "", "SELECT * FROM t WHERE id = ?", "id").replace("size: 100 }", "size: 8000 }");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::SelectStarWideRow);
        assert_eq!((hits.len(), hits[0].severity), (1, Severity::Warning), "{f:#?}");
        assert!(of(&lint_yaml(&w(T, "", "SELECT * FROM t WHERE id = ?", "id")), Rule::SelectStarWideRow).is_empty(), "100-byte rows are not wide");
    }
}
