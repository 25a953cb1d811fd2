//! Partition size: estimates rows and bytes per partition from the generators bound to the key
//! columns and the load count, flags partitions over the limit (`LintOptions`) or that keep
//! growing as the run writes rows with ever new clustering keys, and lends its estimates to the
//! query rules (wide partitions read without a LIMIT).

use super::estimate::{cardinality, grows_without_bound, hottest_share, value_bytes};
use super::{Finding, Model, OpStmt, Rule, Severity};
use crate::cql::{Dml, DmlKind, RelOp, Table, Term};
use crate::gen::rows::RowsSpec;
use crate::gen::SizeSpec;

/// What is known about one write's effect on partition size.
pub(crate) struct WriteEstimate {
    /// Rows of the largest partition after the load phase (0 when the write is not the load's).
    pub rows_after_load: f64,
    /// Rows of a partition of average size after the load.
    pub rows_typical: f64,
    /// The most rows a partition can reach if the run keeps writing (infinite: no bound).
    pub rows_bound: f64,
    pub bytes_per_row: f64,
    pub partitions: f64,
    /// The generator of the clustering key that never repeats, if one does not.
    pub growing_generator: Option<String>,
}

/// The term bound to a column by a write: its INSERT value, or its `=` relation.
fn bound_term<'d>(d: &'d Dml, column: &'d str) -> Option<&'d Term> {
    if let Some(w) = d.writes.iter().find(|w| w.column == column) {
        return Some(&w.term);
    }
    d.relations_on(column).find(|r| r.op == RelOp::Eq && r.columns.len() == 1).and_then(|r| r.terms.first())
}

/// Distinct values of the columns' bound terms, multiplied, and the share of writes the most
/// frequent combination gets; `None` when one is unknown.
fn product(m: &Model, s: &OpStmt, d: &Dml, cols: &[String]) -> Option<(f64, f64)> {
    let (mut p, mut hot) = (1.0, 1.0);
    for c in cols {
        match bound_term(d, c)? {
            Term::Literal(_) => {}
            t @ Term::Marker(_) => {
                let (_, spec) = s.generator(m.w, t)?;
                p *= cardinality(spec, &m.w.generators)?;
                hot *= hottest_share(spec, &m.w.generators)?;
            }
            Term::Other(_) => return None,
        }
    }
    Some((p, hot))
}

/// The most a count of `rows:` can be: a fixed one, or its distribution's `max`.
fn count_max(c: &SizeSpec) -> Option<f64> {
    match c {
        SizeSpec::Fixed(x) => x.as_f64().ok(),
        SizeSpec::Dist(d) => d.max.as_ref()?.as_f64().ok(),
    }
}

/// The most rows one partition can hold when `rows:` makes them: the product of its levels'
/// counts (1 where a level has none); `None` when a count is not a number.
pub(crate) fn rows_spec_bound(r: &RowsSpec) -> Option<f64> {
    r.levels.iter().try_fold(1.0, |acc, l| Some(acc * r.counts.get(l).map_or(Some(1.0), count_max)?))
}

/// Whether one execution of an operation with `rows:` writes rows of one partition only.
pub(crate) fn rows_spec_one_partition(r: &RowsSpec) -> bool {
    match &r.partitions {
        None => true,
        Some(p) => count_max(p).is_some_and(|n| n <= 1.0),
    }
}

pub(crate) fn estimate_write(m: &Model, s: &OpStmt, d: &Dml, t: &Table) -> Option<WriteEstimate> {
    let (partitions, hottest) = product(m, s, d, &t.partition_key)?;
    let partitions = partitions.max(1.0);
    // `rows:` makes each partition's clustering values from its seed: at most its counts' product
    let rows_spec = s.op.cql().and_then(|c| c.rows.as_deref());
    let by_rows = rows_spec.and_then(rows_spec_bound);
    let clustering = match by_rows {
        Some(bound) => bound,
        None => product(m, s, d, &t.clustering)?.0,
    };
    let load_n = if s.in_load { m.w.load.as_ref().map(|l| l.count as f64).unwrap_or(0.0) } else { 0.0 };
    // the largest partition: the hottest key's share of the load (1/partitions when uniform)
    let rows_typical = if load_n > 0.0 { clustering.min(load_n / partitions.min(load_n)) } else { 0.0 };
    let rows_after_load = if load_n > 0.0 { clustering.min((load_n * hottest).max(rows_typical)) } else { 0.0 };
    let rows_bound = if s.run_share > 0.0 { clustering } else { rows_after_load };
    let mut bytes_per_row = 0.0;
    let mut growing_generator = None;
    for w in &d.writes {
        if t.partition_key.contains(&w.column) {
            continue;
        }
        if let Some((name, spec)) = s.generator(m.w, &w.term) {
            bytes_per_row += value_bytes(spec);
            if t.clustering.contains(&w.column) && grows_without_bound(spec) {
                growing_generator = Some(name.to_string());
            }
        }
    }
    for c in &t.clustering {
        if d.kind == DmlKind::Update {
            if let Some((name, spec)) = bound_term(d, c).and_then(|term| s.generator(m.w, term)) {
                bytes_per_row += value_bytes(spec);
                if grows_without_bound(spec) {
                    growing_generator = Some(name.to_string());
                }
            }
        }
    }
    if by_rows.is_some() {
        growing_generator = None;
    }
    Some(WriteEstimate { rows_after_load, rows_typical, rows_bound, bytes_per_row: bytes_per_row + 8.0, partitions, growing_generator })
}

/// The largest estimate over the active writes to `table`: (rows after load, bytes after load).
pub(crate) fn loaded_size(m: &Model, table: &str) -> Option<(f64, f64)> {
    let t = m.table(table)?;
    let mut best: Option<(f64, f64)> = None;
    for s in m.stmts.iter().filter(|s| s.active()) {
        for d in s.dml.leaves() {
            if d.table != table || !matches!(d.kind, DmlKind::Insert | DmlKind::Update) {
                continue;
            }
            if let Some(e) = estimate_write(m, s, d, t) {
                let cand = (e.rows_after_load, e.rows_after_load * e.bytes_per_row);
                if best.is_none_or(|b| cand.0 > b.0) {
                    best = Some(cand);
                }
            }
        }
    }
    best
}

fn mb(bytes: f64) -> String {
    format!("{:.1} MB", bytes / 1_048_576.0)
}

fn rows(n: f64) -> String {
    let n = n.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn check(m: &Model, out: &mut Vec<Finding>) {
    for (name, (t, _)) in &m.tables {
        if t.clustering.is_empty() {
            continue;
        }
        let Some((sev, msg)) = worst_partitions(m, name, t) else { continue };
        let time_key = t.clustering.iter().any(|c| t.column(c).is_some_and(|c| matches!(c.ty.as_str(), "timestamp" | "timeuuid" | "date")));
        let fix = if time_key {
            "add a time bucket to the partition key (e.g. PRIMARY KEY ((id, day), ts)) so a partition holds a bounded window; read recent data from the current bucket"
        } else {
            "add a bucket column to the partition key so each partition holds a bounded number of rows, or cap what is written per partition"
        };
        let why = if sev == Severity::Info {
            "wide partitions are fine when read in slices; whole-partition reads and compaction grow with them"
        } else {
            "a partition lives on one replica set and is read, compacted and repaired as a unit: past ~100 MB or ~100k rows reads slow down, compaction and repair need more memory, and one hot partition cannot be spread over more nodes"
        };
        out.push(m.at_table(name, sev, Rule::UnboundedPartition, msg, why, fix));
    }
}

/// The most severe thing the active writes into table `name` do to its partitions (the first
/// found of the most severe kind).
fn worst_partitions(m: &Model, name: &str, t: &Table) -> Option<(Severity, String)> {
    let mut worst: Option<(Severity, String)> = None;
    for s in m.stmts.iter().filter(|s| s.active()) {
        for d in s.dml.leaves() {
            if d.table != *name || !matches!(d.kind, DmlKind::Insert | DmlKind::Update) {
                continue;
            }
            let Some(e) = estimate_write(m, s, d, t) else { continue };
            let Some((sev, msg)) = judge_write(m, name, t, s, d, &e) else { continue };
            if worst.as_ref().is_none_or(|(w, _)| sev > *w) {
                worst = Some((sev, msg));
            }
        }
    }
    worst
}

/// What one write `d` of statement `s` does to the partitions of table `name`, if anything
/// worth saying: skewed or too large after the load, growing without bound, or wide.
fn judge_write(m: &Model, name: &str, t: &Table, s: &OpStmt, d: &Dml, e: &WriteEstimate) -> Option<(Severity, String)> {
    let max_rows = m.opts.max_partition_rows as f64;
    let max_bytes = m.opts.max_partition_bytes as f64;
    let bytes = e.rows_after_load * e.bytes_per_row;
    let over = |rows: f64| rows > max_rows || rows * e.bytes_per_row > max_bytes;
    let limit = format!("the limit is {} rows / {}", rows(max_rows), mb(max_bytes));
    Some(if over(e.rows_after_load) && !over(e.rows_typical) {
        let (hot, typical) = (rows(e.rows_after_load), rows(e.rows_typical));
        let msg = format!("the hottest partitions of {name} hold about {hot} rows ({}) after the load, against about {typical} rows for a typical one: the partition key is skewed; {limit}", mb(bytes));
        (Severity::Warning, msg)
    } else if over(e.rows_after_load) {
        let msg = format!(
            "the largest partitions of {name} hold about {} rows ({}) after the load ({} partitions); {limit}",
            rows(e.rows_after_load),
            mb(bytes),
            rows(e.partitions)
        );
        (Severity::Error, msg)
    } else if e.rows_bound.is_infinite() && e.partitions.is_finite() && (t.default_ttl_s.is_some() || d.ttl.is_some()) {
        let msg = format!(
            "partitions of {name} keep growing in rows written by operation {}, but rows expire (TTL), so their live size is about the TTL times the writes per partition",
            s.op.name
        );
        (Severity::Info, msg)
    } else if e.rows_bound.is_infinite() && e.partitions.is_finite() {
        let by = e.growing_generator.as_deref().map(|g| format!(" (clustering values from \"{g}\" never repeat)")).unwrap_or_default();
        let msg = format!(
            "partitions of {name} grow without bound: operation {} keeps adding rows{by} to the same {} partitions, about {} bytes each",
            s.op.name,
            rows(e.partitions),
            e.bytes_per_row.round()
        );
        (Severity::Warning, msg)
    } else if e.rows_bound > max_rows || e.rows_bound * e.bytes_per_row > max_bytes {
        let msg = format!(
            "partitions of {name} can grow to about {} rows ({}) as operation {} keeps writing; {limit}",
            rows(e.rows_bound),
            mb(e.rows_bound * e.bytes_per_row),
            s.op.name
        );
        (Severity::Warning, msg)
    } else if e.rows_after_load >= max_rows / 10.0 || bytes >= max_bytes / 10.0 {
        (Severity::Info, format!("wide partitions in {name}: the largest hold about {} rows ({}) after the load", rows(e.rows_after_load), mb(bytes)))
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{line_of, lint_yaml, lint_yaml_with, of};
    use super::super::LintOptions;
    use super::*;

    fn series(pk: &str, key_cols: &str, ts_gen: &str, load: u64, with_run_insert: bool) -> String {
        let bucket_gen = "  day: { type: int, dist: uniform, min: 0, max: 30 }\n";
        format!(
            "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS events (user_id bigint, day int, ts timestamp, payload blob, PRIMARY KEY ({pk}))
generators:
  user: {{ type: bigint, dist: sequence, min: 0, max: 10 }}
  ts: {ts_gen}
  payload: {{ type: blob, size: 500 }}
{bucket_gen}operations:
  insert:
    cql: INSERT INTO events ({key_cols}, payload) VALUES (?, ?, {}?)
    args: [user, {}ts, payload]
  read:
    cql: SELECT ts FROM events WHERE user_id = ? LIMIT 10
    args: [user{}]
load: {{ op: insert, count: {load} }}
run:
  mix: {{ insert: {}, read: 1 }}
  duration: 10s
",
            if key_cols.contains("day") { "?, " } else { "" },
            if key_cols.contains("day") { "day, " } else { "" },
            "",
            if with_run_insert { 1 } else { 0 },
        )
    }

    #[test]
    fn a_time_series_without_bucket_over_the_limit_is_an_error() {
        // 10 users, 2 million events after the load: 200k rows of ~516 bytes per partition
        let src = series("(user_id), ts", "user_id, ts", "{ type: timestamp, dist: sequence }", 2_000_000, false);
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::UnboundedPartition);
        assert_eq!(hits.len(), 1, "{f:#?}");
        assert_eq!(hits[0].severity, Severity::Error);
        assert_eq!(hits[0].line, Some(line_of(&src, "CREATE TABLE")));
        assert!(hits[0].message.contains("200,000 rows"), "{}", hits[0].message);
        assert!(hits[0].fix.contains("time bucket"));
        // a higher limit, configurable, passes the load; the run keeps growing it: a warning
        let opts = LintOptions { max_partition_rows: 1_000_000, max_partition_bytes: 1 << 40, ..LintOptions::default() };
        let src = series("(user_id), ts", "user_id, ts", "{ type: timestamp, dist: sequence }", 2_000_000, true);
        let hits: Vec<Finding> = lint_yaml_with(&src, &opts).into_iter().filter(|f| f.rule == Rule::UnboundedPartition).collect();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].severity, Severity::Warning, "{hits:#?}");
        assert!(hits[0].message.contains("grow without bound"), "{}", hits[0].message);
    }

    #[test]
    fn a_zipfian_partition_key_makes_the_hottest_partition_wide() {
        // 10,000 users and 2 million events: 200 rows each if uniform, ~10% of them for the
        // hottest user if zipfian
        let uniform = series("(user_id), ts", "user_id, ts", "{ type: timestamp, dist: sequence }", 2_000_000, false)
            .replace("user: { type: bigint, dist: sequence, min: 0, max: 10 }", "user: { type: bigint, dist: uniform, min: 0, max: 10000 }");
        assert!(of(&lint_yaml(&uniform), Rule::UnboundedPartition).is_empty(), "{:#?}", lint_yaml(&uniform));
        let zipf = uniform.replace("dist: uniform, min: 0, max: 10000", "dist: zipfian, min: 0, max: 10000");
        let f = lint_yaml(&zipf);
        let hits = of(&f, Rule::UnboundedPartition);
        assert_eq!((hits.len(), hits[0].severity), (1, Severity::Warning), "skewed, not every partition: {f:#?}");
        assert!(hits[0].message.contains("hottest partitions") && hits[0].message.contains("about 200 rows for a typical one"), "{}", hits[0].message);
    }

    #[test]
    fn bounded_partitions_pass() {
        // small load, clustering keys repeat within a day of seconds: bounded and small
        let src = series("(user_id), ts", "user_id, ts", "{ type: timestamp, dist: uniform, min: 0, max: 1000 }", 5_000, true);
        assert!(of(&lint_yaml(&src), Rule::UnboundedPartition).is_empty());
        // bucketed by day: user × 30 days, partitions stay under the limit
        let src = series("(user_id, day), ts", "user_id, day, ts", "{ type: timestamp, dist: uniform, min: 0, max: 86400000 }", 2_000_000, false);
        let f = lint_yaml(&src);
        assert!(of(&f, Rule::UnboundedPartition).iter().all(|x| x.severity < Severity::Warning), "{f:#?}");
    }
}
