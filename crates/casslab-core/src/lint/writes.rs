//! Rules about writes and deletes: batches spanning partitions (logged and unlogged), range
//! deletes on partitions that keep growing, and reads of what is being deleted.

use super::{Finding, Model, OpStmt, Rule, Severity};
use crate::cql::{BatchKind, Dml, DmlKind, RelOp, Term};
use crate::workload::BatchSpec;
use std::collections::BTreeSet;

/// What identifies the partition a statement writes: table plus, per key column, the generator
/// name or literal bound with `=`; `None` when it is not one partition (IN, unknown).
fn partition_of(m: &Model, s: &OpStmt, d: &Dml) -> Option<(String, Vec<String>)> {
    let t = m.table(&d.table)?;
    let mut key = Vec::new();
    for c in &t.partition_key {
        let term = d
            .writes
            .iter()
            .find(|w| w.column == *c)
            .map(|w| &w.term)
            .or_else(|| d.relations_on(c).find(|r| r.op == RelOp::Eq).and_then(|r| r.terms.first()))?;
        key.push(match term {
            Term::Marker(i) => format!("gen:{}", s.st.args.get(*i)?),
            Term::Literal(l) => format!("lit:{l}"),
            Term::Other(_) => return None,
        });
    }
    Some((d.table.clone(), key))
}

pub(crate) fn check(m: &Model, out: &mut Vec<Finding>) {
    for s in m.stmts.iter().filter(|s| s.active()) {
        if let Some(kind) = s.dml.batch {
            batch_rule(m, s, kind, out);
        }
    }
    for op in &m.w.operations {
        if let Some(b) = op.cql().and_then(|c| c.batch.as_ref()) {
            batch_setting_rule(m, b, op, out);
        }
    }
    delete_rules(m, out);
}

fn batch_rule(m: &Model, s: &OpStmt, kind: BatchKind, out: &mut Vec<Finding>) {
    if kind == BatchKind::Counter || s.dml.children.len() < 2 {
        return;
    }
    let parts: Vec<Option<(String, Vec<String>)>> = s.dml.children.iter().map(|d| partition_of(m, s, d)).collect();
    let known: BTreeSet<&(String, Vec<String>)> = parts.iter().flatten().collect();
    let unknown = parts.iter().any(|p| p.is_none());
    let tables: BTreeSet<&str> = s.dml.children.iter().map(|d| d.table.as_str()).collect();
    let same_table_many = tables.iter().any(|t| known.iter().filter(|(kt, _)| kt == t).count() > 1) || unknown;
    if known.len() + usize::from(unknown) < 2 {
        return;
    }
    match kind {
        BatchKind::Logged => {
            let sev = if same_table_many { Severity::Warning } else { Severity::Info };
            out.push(m.at_stmt(
                s,
                sev,
                Rule::LoggedBatchMultiPartition,
                if same_table_many {
                    format!("operation {} writes a logged batch to several partitions of the same table", s.op.name)
                } else {
                    format!("operation {} writes a logged batch across tables {}", s.op.name, tables.into_iter().collect::<Vec<_>>().join(", "))
                },
                "a logged batch is first written to the batchlog on other nodes, then applied, then the batchlog entry removed: about twice the writes plus coordination, for atomicity only; as a bulk-loading tool it is slower than separate writes and loads one coordinator",
                "keep logged batches for keeping denormalized tables in step (one partition per table); for bulk writes send single-partition statements concurrently",
            ));
        }
        BatchKind::Unlogged => out.push(m.at_stmt(
            s,
            Severity::Warning,
            Rule::UnloggedBatchMultiPartition,
            format!("operation {} sends an unlogged batch spanning {}several partitions", s.op.name, if unknown { "possibly " } else { "" }),
            "an unlogged batch across partitions is not faster: one coordinator must forward every statement to its replicas and wait for all of them, so it does the routing a token-aware driver would have done, and the batch is as slow as its slowest partition",
            "batch only statements for the same partition (one replica set, one mutation), and send other writes as separate concurrent statements",
        )),
        BatchKind::Counter => {}
    }
}

/// An operation's `batch:` setting: `size` rows per batch, values drawn per row, so an
/// unlogged or logged batch spans up to `size` partitions (`single_partition` does not).
fn batch_setting_rule(m: &Model, b: &BatchSpec, op: &crate::workload::Operation, out: &mut Vec<Finding>) {
    let Some(s) = m.stmts.iter().find(|s| std::ptr::eq(s.op, op) && s.active()) else { return };
    // `rows:` batches the rows of the partitions one execution writes: one partition, one batch
    if b.size < 2 || op.cql().and_then(|c| c.rows.as_deref()).is_some_and(super::partitions::rows_spec_one_partition) {
        return;
    }
    match b.kind {
        crate::workload::BatchKind::Logged => out.push(m.at_stmt(
            s,
            Severity::Warning,
            Rule::LoggedBatchMultiPartition,
            format!("operation {} sends logged batches of {} rows, each row drawing its own partition", op.name, b.size),
            "a logged batch is first written to the batchlog on other nodes, then applied, then the batchlog entry removed: about twice the writes plus coordination, for atomicity only; as a bulk-loading tool it is slower than separate writes and loads one coordinator",
            "keep logged batches for keeping denormalized tables in step (one partition per table); for bulk writes send single-partition statements concurrently",
        )),
        crate::workload::BatchKind::Unlogged => out.push(m.at_stmt(
            s,
            Severity::Warning,
            Rule::UnloggedBatchMultiPartition,
            format!("operation {} sends unlogged batches of {} rows, each row drawing its own partition", op.name, b.size),
            "an unlogged batch across partitions is not faster: one coordinator must forward every statement to its replicas and wait for all of them, so it does the routing a token-aware driver would have done, and the batch is as slow as its slowest partition",
            "batch only rows of the same partition (kind: single_partition), and send other writes as separate concurrent statements",
        )),
        crate::workload::BatchKind::SinglePartition => {}
    }
}

/// Whether two partition bindings can name the same partition: the same generator, or
/// generators whose integer ranges overlap; unknown bindings are assumed to overlap.
fn may_share_partitions(m: &Model, a: &Option<(String, Vec<String>)>, b: &Option<(String, Vec<String>)>) -> bool {
    let (Some((_, ka)), Some((_, kb))) = (a, b) else { return true };
    ka.iter().zip(kb).all(|(x, y)| {
        if x == y {
            return true;
        }
        let range = |k: &str| -> Option<(i64, i64)> {
            let spec = m.w.generators.get(k.strip_prefix("gen:")?)?;
            let min = spec.min.as_ref().and_then(|v| v.as_i64().ok()).unwrap_or(0);
            let max = spec.max.as_ref().and_then(|v| v.as_i64().ok()).unwrap_or(i64::MAX);
            Some((min, max))
        };
        match (range(x), range(y)) {
            (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
            _ => !(x.starts_with("lit:") && y.starts_with("lit:")),
        }
    })
}

fn delete_rules(m: &Model, out: &mut Vec<Finding>) {
    for s in m.stmts.iter().filter(|s| s.active()) {
        for d in s.dml.leaves() {
            if d.kind != DmlKind::Delete || !d.delete_columns.is_empty() {
                continue;
            }
            let Some(t) = m.table(&d.table) else { continue };
            let range = t.clustering.iter().any(|c| d.relations_on(c).any(|r| r.op.is_range()));
            let growing: Vec<&str> = m
                .stmts
                .iter()
                .filter(|w| w.run_share > 0.0 && w.dml.leaves().iter().any(|x| x.table == d.table && matches!(x.kind, DmlKind::Insert | DmlKind::Update)))
                .map(|w| w.op.name.as_str())
                .collect();
            if range && !growing.is_empty() {
                out.push(m.at_stmt(
                    s,
                    Severity::Warning,
                    Rule::RangeDeleteGrowingPartition,
                    format!("operation {} range-deletes rows of {} while {} keeps adding rows to the same partitions", s.op.name, t.name, growing.join(", ")),
                    "each range delete leaves a range tombstone in the partition; as the partition keeps growing and deletes keep coming (with bounds that rarely line up when several clients delete), the tombstones pile up and every read of the partition must merge them until compaction purges them after gc_grace_seconds",
                    "bucket the partition by time and drop whole old buckets (one partition tombstone), or let rows expire with a table TTL and TimeWindowCompactionStrategy",
                ));
            }
            let me = partition_of(m, s, d);
            for r in m.stmts.iter().filter(|r| r.run_share > 0.0 && r.dml.kind == DmlKind::Select && r.dml.table == d.table) {
                if !may_share_partitions(m, &me, &partition_of(m, r, &r.dml)) {
                    continue;
                }
                out.push(m.at_stmt(
                    r,
                    Severity::Warning,
                    Rule::ReadAfterDelete,
                    format!("operation {} reads partitions of {} that operation {} deletes {}", r.op.name, t.name, s.op.name, if range { "ranges of" } else { "rows of" }),
                    "reads of deleted data still scan the tombstones that shadow it: the more is deleted in what a read covers, the more tombstones it merges (warnings at 1,000, failures at 100,000 per read by default), until compaction purges them after gc_grace_seconds",
                    "do not read what you delete: read only the live window (a clustering range past the deleted part, or the current time bucket), or expire data with TTL and TimeWindowCompactionStrategy so whole SSTables drop",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{line_of, lint_yaml, of};
    use super::*;

    const SCHEMA: &str = "  - CREATE TABLE IF NOT EXISTS a (k bigint PRIMARY KEY, v text)\n  - CREATE TABLE IF NOT EXISTS b (k bigint PRIMARY KEY, v text)\n";

    fn batch(cql: &str, args: &str) -> String {
        format!(
            "keyspace: ks
schema:
{SCHEMA}generators:
  k1: {{ type: bigint, dist: uniform, min: 0, max: 1000 }}
  k2: {{ type: bigint, dist: uniform, min: 0, max: 1000 }}
  v: {{ type: text, size: 10 }}
operations:
  write:
    cql: {cql}
    args: [{args}]
run:
  mix: {{ write: 1 }}
  duration: 10s
"
        )
    }

    #[test]
    fn logged_batches_across_partitions() {
        let src = batch("BEGIN BATCH INSERT INTO a (k, v) VALUES (?, ?); INSERT INTO a (k, v) VALUES (?, ?); APPLY BATCH", "k1, v, k2, v");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::LoggedBatchMultiPartition);
        assert_eq!((hits.len(), hits[0].severity), (1, Severity::Warning), "{f:#?}");
        assert_eq!(hits[0].line, Some(line_of(&src, "BEGIN BATCH")));
        // one partition per table: what logged batches are for (a note only)
        let denorm = batch("BEGIN BATCH INSERT INTO a (k, v) VALUES (?, ?); INSERT INTO b (k, v) VALUES (?, ?); APPLY BATCH", "k1, v, k1, v");
        assert!(of(&lint_yaml(&denorm), Rule::LoggedBatchMultiPartition).iter().all(|x| x.severity == Severity::Info));
        // the same generator twice is one value, so one partition
        let single = batch("BEGIN BATCH INSERT INTO a (k, v) VALUES (?, ?); UPDATE a SET v = ? WHERE k = ?; APPLY BATCH", "k1, v, v, k1");
        assert!(lint_yaml(&single).is_empty());
    }

    #[test]
    fn unlogged_batches_across_partitions() {
        let src = batch("BEGIN UNLOGGED BATCH INSERT INTO a (k, v) VALUES (?, ?); INSERT INTO a (k, v) VALUES (?, ?); APPLY BATCH", "k1, v, k2, v");
        let f = lint_yaml(&src);
        assert_eq!(of(&f, Rule::UnloggedBatchMultiPartition).len(), 1, "{f:#?}");
        let single = batch("BEGIN UNLOGGED BATCH INSERT INTO a (k, v) VALUES (?, ?); INSERT INTO a (k, v) VALUES (?, 'x'); APPLY BATCH", "k1, v, k1");
        assert!(of(&lint_yaml(&single), Rule::UnloggedBatchMultiPartition).is_empty());
    }

    #[test]
    fn batch_settings_spanning_partitions() {
        let src =
            batch("INSERT INTO a (k, v) VALUES (?, ?)", "k1, v").replace("    args: [k1, v]\n", "    args: [k1, v]\n    batch: { kind: logged, size: 20 }\n");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::LoggedBatchMultiPartition);
        assert_eq!((hits.len(), hits[0].line), (1, Some(line_of(&src, "INSERT INTO a"))), "{f:#?}");
        let f = lint_yaml(&src.replace("kind: logged", "kind: unlogged"));
        assert_eq!(of(&f, Rule::UnloggedBatchMultiPartition).len(), 1, "{f:#?}");
        assert!(lint_yaml(&src.replace("kind: logged", "kind: single_partition")).is_empty());
    }

    #[test]
    fn rows_made_per_partition_are_one_partition_and_bounded() {
        // an imported cassandra-stress profile: each insert a batch of the rows of one partition,
        // 20 rows a partition at most
        let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/examples/stress.yaml")).unwrap();
        let yaml = crate::import::cassandra_stress::import_profile(&src, "stress.yaml", None).unwrap().yaml;
        assert!(yaml.contains("counts: { ck_at: 20 }") && yaml.contains("batch: { kind: unlogged"), "{yaml}");
        let f = lint_yaml(&yaml);
        assert!(of(&f, Rule::UnloggedBatchMultiPartition).is_empty() && of(&f, Rule::UnboundedPartition).is_empty(), "{f:#?}");
        // three partitions an insert: the batch spans them
        let three = yaml.replace(
            "rows: { seed: pop, key: [pk_sensor, pk_day], levels: [ck_at], counts: { ck_at: 20 }, select:",
            "rows: { seed: pop, key: [pk_sensor, pk_day], levels: [ck_at], counts: { ck_at: 20 }, partitions: 3, select:",
        );
        assert_ne!(three, yaml);
        assert_eq!(of(&lint_yaml(&three), Rule::UnloggedBatchMultiPartition).len(), 1);
    }

    fn series(delete: &str, read_gen: &str, mix: &str) -> String {
        format!(
            "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS s (id int, ts bigint, v text, PRIMARY KEY ((id), ts))
generators:
  id: {{ type: int, dist: uniform, min: 0, max: 100 }}
  other: {{ type: int, dist: uniform, min: 1000, max: 2000 }}
  ts: {{ type: bigint, dist: uniform, min: 0, max: 1000 }}
  lo: {{ type: bigint, dist: uniform, min: 0, max: 10 }}
  hi: {{ type: bigint, dist: uniform, min: 10, max: 20 }}
  v: {{ type: text, size: 10 }}
operations:
  append:
    cql: INSERT INTO s (id, ts, v) VALUES (?, ?, ?)
    args: [id, ts, v]
  trim:
    cql: {delete}
    args: [id, lo, hi]
  read:
    cql: SELECT ts, v FROM s WHERE id = ? LIMIT 10
    args: [{read_gen}]
run:
  mix: {mix}
  duration: 10s
"
        )
    }

    #[test]
    fn range_deletes_on_growing_partitions_and_reads_of_them() {
        let src = series("DELETE FROM s WHERE id = ? AND ts > ? AND ts < ?", "id", "{ append: 5, trim: 1, read: 5 }");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::RangeDeleteGrowingPartition);
        assert_eq!(hits.len(), 1, "{f:#?}");
        assert_eq!(hits[0].line, Some(line_of(&src, "DELETE FROM")));
        let reads = of(&f, Rule::ReadAfterDelete);
        assert_eq!(reads.len(), 1, "{f:#?}");
        assert_eq!(reads[0].line, Some(line_of(&src, "SELECT ts, v")));
        // no appends in the run: the partitions do not grow
        let f = lint_yaml(&series("DELETE FROM s WHERE id = ? AND ts > ? AND ts < ?", "id", "{ append: 0, trim: 1, read: 5 }"));
        assert!(of(&f, Rule::RangeDeleteGrowingPartition).is_empty(), "{f:#?}");
        // reads of partitions the deletes never touch
        let f = lint_yaml(&series("DELETE FROM s WHERE id = ? AND ts > ? AND ts < ?", "other", "{ append: 5, trim: 1, read: 5 }"));
        assert!(of(&f, Rule::ReadAfterDelete).is_empty(), "{f:#?}");
    }
}
