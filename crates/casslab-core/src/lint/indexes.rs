//! Rules about indexes and vector search (Cassandra 5's storage-attached indexes, legacy
//! secondary indexes, `ORDER BY v ANN OF ?`): a query that restricts a column no index covers
//! and does not allow filtering, or orders by a vector no SAI index holds (`unindexed-filter`:
//! the cluster refuses it); `ALLOW FILTERING` that reads a large table to find a few rows
//! (`filtering-large-table`, with the rows each query reads); a vector search without a `LIMIT`,
//! or with one above what Cassandra allows (`ann-without-limit`); a vector generator whose
//! dimension is not the column's (`vector-dimension-mismatch`); an index on a column with so
//! few values that each lookup returns a large share of the table (`index-low-cardinality`).
//! The high-cardinality case of legacy indexes is `queries.rs`'s `index-high-cardinality`.

use super::estimate::cardinality;
use super::queries::partition_restricted;
use super::{Finding, Model, OpStmt, Rule, Severity};
use crate::cql::{Dml, DmlKind, Index, RelOp, Table, Term};
use crate::gen::CqlType;
use crate::units::grouped;

/// Rows above which filtering a table is worth a warning.
pub(crate) const LARGE_TABLE_ROWS: f64 = 10_000.0;
/// The largest `LIMIT` of a vector search Cassandra 5 accepts.
pub(crate) const MAX_ANN_LIMIT: u64 = 1000;
/// Rows a lookup returns above which an index's values are too few for the table.
const ROWS_PER_VALUE: f64 = 10_000.0;

pub(crate) fn check(m: &Model, out: &mut Vec<Finding>) {
    for s in m.stmts.iter().filter(|s| s.active()) {
        for d in s.dml.leaves() {
            let Some(t) = m.table(&d.table) else { continue };
            dimension_rule(m, s, d, t, out);
            if d.kind == DmlKind::Select {
                filter_rules(m, s, d, t, out);
                ann_limit_rule(m, s, d, out);
            }
        }
    }
    low_cardinality_rule(m, out);
}

/// The indexes on `table.column`.
fn indexes_on<'m>(m: &'m Model, table: &str, column: &str) -> impl Iterator<Item = &'m Index> + 'm {
    let (table, column) = (table.to_string(), column.to_string());
    m.indexes.iter().map(|(i, _)| i).filter(move |i| i.table == table && i.column == column)
}

/// Rows the load writes to `table` (what a scan of it reads after the load).
pub(crate) fn table_rows(m: &Model, table: &str) -> Option<f64> {
    let load = m.w.load.as_ref()?;
    m.stmts
        .iter()
        .any(|s| s.in_load && s.dml.leaves().iter().any(|d| d.table == table && matches!(d.kind, DmlKind::Insert | DmlKind::Update)))
        .then_some(load.count as f64)
}

/// The non-key columns a SELECT restricts that no index answers, with why.
fn unindexed(m: &Model, d: &Dml, t: &Table) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for r in d.relations.iter().filter(|r| !r.token && r.columns.len() == 1) {
        let c = &r.columns[0];
        if t.is_key(c) || out.iter().any(|(x, _)| x == c) {
            continue;
        }
        let idx: Vec<&Index> = indexes_on(m, &t.name, c).collect();
        if idx.is_empty() {
            out.push((c.clone(), "no index covers it"));
        } else if !idx.iter().any(|i| i.is_sai()) && r.op.is_range() {
            out.push((c.clone(), "its legacy secondary index answers only =, not a range"));
        }
    }
    out
}

fn filter_rules(m: &Model, s: &OpStmt, d: &Dml, t: &Table, out: &mut Vec<Finding>) {
    let missing = unindexed(m, d, t);
    if !d.allow_filtering && !missing.is_empty() {
        let cols: Vec<String> = missing.iter().map(|(c, why)| format!("{c} ({why})")).collect();
        out.push(m.at_stmt(
            s,
            Severity::Error,
            Rule::UnindexedFilter,
            format!("operation {} restricts {} of {} without ALLOW FILTERING", s.op.name, cols.join(", "), t.name),
            "Cassandra answers a restriction on a column outside the primary key only through an index that covers it (SAI answers = and ranges, a legacy index only =), or by filtering when told to: as written the cluster refuses the query, and every execution of the operation fails",
            "create an index on the column (`CREATE INDEX IF NOT EXISTS … USING 'sai'`), or add ALLOW FILTERING (costly on a large table), or keep a table keyed by the column",
        ));
    }
    if let Some((column, _)) = &d.ann {
        if !indexes_on(m, &t.name, column).any(|i| i.is_sai()) {
            out.push(m.at_stmt(
                s,
                Severity::Error,
                Rule::UnindexedFilter,
                format!("operation {} orders by ANN OF {column}, which no SAI index holds", s.op.name),
                "an approximate nearest-neighbour search reads the vector index of a storage-attached index: without one the cluster refuses the query",
                &format!("create one: `CREATE INDEX IF NOT EXISTS ON {} ({column}) USING 'sai'` (with `WITH OPTIONS = {{'similarity_function': 'cosine'}}` or another similarity)", t.name),
            ));
        }
    }
    if d.allow_filtering && !partition_restricted(d, t) && !missing.is_empty() {
        if let Some(rows) = table_rows(m, &t.name).filter(|r| *r >= LARGE_TABLE_ROWS) {
            out.push(m.at_stmt(
                s,
                Severity::Warning,
                Rule::FilteringLargeTable,
                format!("operation {} filters {} (about {} rows after the load) on {}: each execution reads every row", s.op.name, t.name, grouped(rows as u64), missing[0].0),
                "ALLOW FILTERING without the partition key scans the whole table on every node and throws away what does not match: its cost grows with the table, however few rows it returns",
                "index the column (SAI answers = and ranges without filtering), or keep a lookup table keyed by it, or restrict the partition key",
            ));
        }
    }
}

fn ann_limit_rule(m: &Model, s: &OpStmt, d: &Dml, out: &mut Vec<Finding>) {
    let Some((column, _)) = &d.ann else { return };
    let too_big = match &d.limit {
        None => None,
        Some(Term::Literal(l)) => l.parse::<u64>().ok().filter(|n| *n > MAX_ANN_LIMIT),
        Some(_) => return,
    };
    if d.limit.is_some() && too_big.is_none() {
        return;
    }
    let message = match too_big {
        Some(n) => format!("operation {} searches {column} for its {n} nearest neighbours; Cassandra allows at most {MAX_ANN_LIMIT}", s.op.name),
        None => format!("operation {} orders by ANN OF {column} without a LIMIT", s.op.name),
    };
    out.push(m.at_stmt(
        s,
        Severity::Error,
        Rule::AnnWithoutLimit,
        message,
        "a vector search returns the k nearest rows, and k is its LIMIT: Cassandra refuses an ANN query without one, or with one above 1,000",
        "add `LIMIT k` (e.g. LIMIT 10) after the ORDER BY … ANN OF ?",
    ));
}

/// The dimension a generator spec's vectors have.
fn dims_of(type_text: &str) -> Option<u16> {
    match CqlType::parse(type_text) {
        Ok(CqlType::Vector { dims }) => Some(dims),
        _ => None,
    }
}

/// The dimension of a column declared `vector<float, N>` (its type text as written).
pub(crate) fn declared_dims(declared: &str) -> Option<u16> {
    dims_of(declared)
}

fn dimension_rule(m: &Model, s: &OpStmt, d: &Dml, t: &Table, out: &mut Vec<Finding>) {
    let mut bound: Vec<(&str, &Term)> = d.writes.iter().map(|w| (w.column.as_str(), &w.term)).collect();
    if let Some((c, term)) = &d.ann {
        bound.push((c.as_str(), term));
    }
    for r in d.relations.iter().filter(|r| r.columns.len() == 1 && r.op == RelOp::Eq) {
        if let Some(term) = r.terms.first() {
            bound.push((r.columns[0].as_str(), term));
        }
    }
    for (column, term) in bound {
        let (Some(col), Some((name, spec))) = (t.column(column), s.generator(m.w, term)) else { continue };
        let (Some(declared), Some(made)) = (declared_dims(&col.ty), dims_of(&spec.cql_type)) else { continue };
        if declared != made {
            out.push(m.at_stmt(
                s,
                Severity::Error,
                Rule::VectorDimensionMismatch,
                format!("generator \"{name}\" makes vectors of {made} dimensions for {}.{column}, declared {}", t.name, col.ty),
                "a vector's dimension is part of its type: the cluster refuses a vector of another length, and an index searches only vectors of the column's dimension",
                &format!("give \"{name}\" `type: \"vector<float, {declared}>\"` (and a file of {declared}-dimension vectors), or change the column"),
            ));
        }
    }
}

/// The largest cardinality of the generators the active writes bind to `table.column`.
fn column_cardinality(m: &Model, table: &str, column: &str) -> Option<f64> {
    let mut card: Option<f64> = None;
    for s in m.stmts.iter().filter(|s| s.active()) {
        for d in s.dml.leaves().into_iter().filter(|d| d.table == table) {
            let Some(w) = d.writes.iter().find(|w| w.column == column) else { continue };
            let Some((_, spec)) = s.generator(m.w, &w.term) else { continue };
            if let Some(c) = cardinality(spec, &m.w.generators) {
                card = Some(card.map_or(c, |x: f64| x.max(c)));
            }
        }
    }
    card
}

fn low_cardinality_rule(m: &Model, out: &mut Vec<Finding>) {
    for (idx, line) in &m.indexes {
        let Some(t) = m.table(&idx.table) else { continue };
        if t.column(&idx.column).is_some_and(|c| c.ty.contains('<')) {
            continue;
        }
        let (Some(card), Some(rows)) = (column_cardinality(m, &t.name, &idx.column), table_rows(m, &t.name)) else { continue };
        if card.is_infinite() || rows / card.max(1.0) < ROWS_PER_VALUE {
            continue;
        }
        let per = rows / card.max(1.0);
        out.push(Finding {
            severity: Severity::Warning,
            rule: Rule::IndexLowCardinality,
            file: m.w.origin.clone(),
            line: Some(*line),
            subject: t.name.clone(),
            statement: m.w.schema.iter().find(|s| s.line == *line).map(|s| super::one_line(&s.cql)).unwrap_or_default(),
            message: format!(
                "{} index on {}.{}, a column with about {card:.0} distinct values: a lookup of one value matches about {} of {} rows",
                if idx.is_sai() { "SAI" } else { "secondary" },
                t.name,
                idx.column,
                grouped(per as u64),
                grouped(rows as u64)
            ),
            why: "an index finds rows by value; when a value is held by a large share of the table, one lookup reads and returns that share from every node — as costly as a scan, and it grows with the table".to_string(),
            fix: "restrict the partition key as well (the index then searches one partition), add a more selective column to the query, or keep a table partitioned by this column (with a bucket, so no partition grows without bound)".to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{line_of, lint_yaml, of};
    use super::*;

    /// A table of `rows` rows with a vector, a category and a number, an index or none, and
    /// one read.
    fn w(rows: u64, index: &str, read: &str, args: &str) -> String {
        format!(
            "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY, v vector<float, 8>, cat int, num bigint)
{index}generators:
  id:  {{ type: bigint, dist: sequence, min: 0, max: {rows} }}
  vec: {{ type: \"vector<float, 8>\", vector: {{ kind: clustered, centroids: 4 }} }}
  q:   {{ type: \"vector<float, 8>\", values_of: vec }}
  cat: {{ type: int, min: 0, max: 3 }}
  num: {{ type: bigint, min: 0, max: 1000000 }}
operations:
  insert:
    cql: INSERT INTO t (id, v, cat, num) VALUES (?, ?, ?, ?)
    args: [id, vec, cat, num]
  read:
    cql: {read}
    args: [{args}]
load: {{ op: insert, count: {rows} }}
run:
  mix: {{ read: 1 }}
  duration: 10s
"
        )
    }
    const SAI_V: &str = "  - CREATE INDEX IF NOT EXISTS ann ON t (v) USING 'sai'\n";

    #[test]
    fn a_restriction_no_index_covers_fails() {
        let src = w(1000, "", "SELECT id FROM t WHERE num = ?", "num");
        let hits = of(&lint_yaml(&src), Rule::UnindexedFilter).into_iter().cloned().collect::<Vec<_>>();
        assert_eq!(hits.len(), 1, "{hits:#?}");
        assert_eq!((hits[0].severity, hits[0].line), (Severity::Error, Some(line_of(&src, "WHERE num = ?"))));
        assert!(hits[0].message.contains("num (no index covers it)"), "{}", hits[0].message);
        // an SAI index answers = and ranges; a legacy one only =; ALLOW FILTERING is allowed
        let sai = "  - CREATE INDEX IF NOT EXISTS by_num ON t (num) USING 'sai'\n";
        assert!(of(&lint_yaml(&w(1000, sai, "SELECT id FROM t WHERE num > ? LIMIT 10", "num")), Rule::UnindexedFilter).is_empty());
        let legacy = "  - CREATE INDEX IF NOT EXISTS by_num ON t (num)\n";
        assert!(of(&lint_yaml(&w(1000, legacy, "SELECT id FROM t WHERE num = ?", "num")), Rule::UnindexedFilter).is_empty());
        let range = lint_yaml(&w(1000, legacy, "SELECT id FROM t WHERE num > ? LIMIT 10", "num"));
        assert!(of(&range, Rule::UnindexedFilter)[0].message.contains("answers only ="), "{range:#?}");
        assert!(of(&lint_yaml(&w(1000, "", "SELECT id FROM t WHERE num = ? ALLOW FILTERING", "num")), Rule::UnindexedFilter).is_empty());
        // a vector search needs an SAI index on its column
        let ann = lint_yaml(&w(1000, "", "SELECT id FROM t ORDER BY v ANN OF ? LIMIT 10", "q"));
        assert!(of(&ann, Rule::UnindexedFilter)[0].message.contains("no SAI index holds"), "{ann:#?}");
        assert!(lint_yaml(&w(1000, SAI_V, "SELECT id FROM t ORDER BY v ANN OF ? LIMIT 10", "q")).is_empty());
    }

    #[test]
    fn filtering_a_large_table_says_how_many_rows_it_reads() {
        let src = w(200_000, "", "SELECT id FROM t WHERE num = ? LIMIT 10 ALLOW FILTERING", "num");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::FilteringLargeTable);
        assert_eq!((hits.len(), hits[0].severity), (1, Severity::Warning), "{f:#?}");
        assert!(hits[0].message.contains("about 200,000 rows"), "{}", hits[0].message);
        assert!(
            of(&lint_yaml(&w(1000, "", "SELECT id FROM t WHERE num = ? LIMIT 10 ALLOW FILTERING", "num")), Rule::FilteringLargeTable).is_empty(),
            "a small table"
        );
        let indexed =
            w(200_000, "  - CREATE INDEX IF NOT EXISTS by_num ON t (num) USING 'sai'\n", "SELECT id FROM t WHERE num = ? LIMIT 10 ALLOW FILTERING", "num");
        assert!(of(&lint_yaml(&indexed), Rule::FilteringLargeTable).is_empty(), "the index finds the rows");
    }

    #[test]
    fn a_vector_search_needs_a_limit_of_at_most_a_thousand() {
        let src = w(1000, SAI_V, "SELECT id FROM t ORDER BY v ANN OF ?", "q");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::AnnWithoutLimit);
        assert_eq!((hits.len(), hits[0].severity, hits[0].line), (1, Severity::Error, Some(line_of(&src, "ANN OF"))), "{f:#?}");
        let big = lint_yaml(&w(1000, SAI_V, "SELECT id FROM t ORDER BY v ANN OF ? LIMIT 5000", "q"));
        assert!(of(&big, Rule::AnnWithoutLimit)[0].message.contains("at most 1000"), "{big:#?}");
        assert!(of(&lint_yaml(&w(1000, SAI_V, "SELECT id FROM t ORDER BY v ANN OF ? LIMIT 100", "q")), Rule::AnnWithoutLimit).is_empty());
    }

    #[test]
    fn a_vector_of_another_dimension_is_an_error() {
        let src = w(1000, SAI_V, "SELECT id FROM t ORDER BY v ANN OF ? LIMIT 10", "q")
            .replace("q:   { type: \"vector<float, 8>\", values_of: vec }", "q:   { type: \"vector<float, 16>\" }");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::VectorDimensionMismatch);
        assert_eq!(hits.len(), 1, "{f:#?}");
        assert_eq!((hits[0].severity, hits[0].line), (Severity::Error, Some(line_of(&src, "ANN OF"))));
        assert!(hits[0].message.contains("16 dimensions") && hits[0].fix.contains("vector<float, 8>"), "{:?}", hits[0]);
        assert!(of(&f, Rule::GeneratorTypeMismatch).is_empty(), "said once, by the vector rule");
    }

    #[test]
    fn an_index_on_a_few_values_of_a_large_table_is_a_poor_fit() {
        let src = w(200_000, "  - CREATE INDEX IF NOT EXISTS by_cat ON t (cat) USING 'sai'\n", "SELECT id FROM t WHERE cat = ? LIMIT 10", "cat");
        let f = lint_yaml(&src);
        let hits = of(&f, Rule::IndexLowCardinality);
        assert_eq!(hits.len(), 1, "{f:#?}");
        assert_eq!((hits[0].severity, hits[0].line), (Severity::Warning, Some(line_of(&src, "by_cat"))));
        assert!(hits[0].message.contains("about 3 distinct values") && hits[0].message.contains("66,666 of 200,000"), "{}", hits[0].message);
        let small = w(1000, "  - CREATE INDEX IF NOT EXISTS by_cat ON t (cat) USING 'sai'\n", "SELECT id FROM t WHERE cat = ? LIMIT 10", "cat");
        assert!(of(&lint_yaml(&small), Rule::IndexLowCardinality).is_empty());
    }
}
