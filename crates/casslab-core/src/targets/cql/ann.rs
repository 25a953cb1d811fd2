//! Vector searches (`SELECT … ORDER BY v ANN OF ? LIMIT k`) and their recall on the CQL target.
//! While the workload's statements are read for verification, each search is described
//! ([`describe`]): its table and vector column, the drawn value it searches for, its k (a
//! literal LIMIT or a bound one), and where its rows carry the table's key; then
//! [`measurable`] says whether its recall can be measured (the table's writes recorded, its
//! vector column written by one generator of the same dimension, the key returned) and
//! with which similarity (the SAI index's `similarity_function`, cosine when unset). At run
//! time [`run`] executes the search, decodes the keys of the rows it returned and offers them,
//! with the vector searched for, to the table's recall judge (`crate::recall`); a search the
//! judge has no room for is counted as not judged. Nothing here computes recall.

pub(crate) use super::ann_plan::{AnnPlan, KFrom, Measured, Search};
use super::planned::{Outcome, PlannedOp};
use crate::cql::{parse_dml, parse_schema, SchemaStmt, Term};
use crate::gen::{floats_of, GeneratorSet};
use crate::recall::{Query, RecallCounts, Similarity};
use crate::stats::OpStats;
use crate::verify::Verifier;
use crate::workload::Workload;
use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};
use std::sync::Mutex;

/// The search statement `cql` (statement `statement` of operation `op`, whose markers bind the
/// drawn values `slots`), when it is one.
pub(crate) fn describe(
    w: &Workload,
    op: &str,
    statement: usize,
    cql: &str,
    slots: &[usize],
    generators: &[usize],
    prepared: &PreparedStatement,
) -> Option<Search> {
    let d = parse_dml(cql)?;
    let (column, term) = d.ann.clone()?;
    let Term::Marker(m) = term else { return None };
    let query_value = *slots.get(m)?;
    let k = match &d.limit {
        Some(Term::Literal(l)) => l.parse().ok().map(KFrom::Literal),
        Some(Term::Marker(i)) => slots.get(*i).map(|v| KFrom::Value(*v)),
        _ => None,
    };
    let table = prepared.get_table_spec().map(|t| t.table_name().to_string()).unwrap_or_else(|| d.table.clone());
    let similarity = w
        .schema
        .iter()
        .filter_map(|s| match parse_schema(&s.cql) {
            Some(SchemaStmt::Index(i)) if i.table == table && i.column == column && i.is_sai() => Some(i),
            _ => None,
        })
        .find_map(|i| i.option("similarity_function").and_then(Similarity::parse))
        .unwrap_or(Similarity::Cosine);
    let returns = prepared.get_current_result_set_col_specs().get().iter().map(|c| c.name().to_string()).collect();
    Some(Search { op: op.to_string(), statement, table, column, query_value, query_generator: generators[query_value], k, returns, similarity })
}

/// Whether `s`'s recall can be measured against `verifier`'s record, and if not, why.
pub(crate) fn measurable(s: &Search, verifier: &Verifier, gens: &GeneratorSet) -> Result<Measured, String> {
    let k = match s.k {
        None => return Err("its LIMIT is neither a number nor a bound value".into()),
        Some(k) => k,
    };
    if let KFrom::Literal(0) = k {
        return Err("it asks for no rows (LIMIT 0)".into());
    }
    let Some(t) = verifier.table(&s.table) else {
        return Err(format!(
            "casslab cannot know what {} holds (see the notes on verification): it needs every write to the table bound to generators, by its whole key",
            s.table
        ));
    };
    let table = &verifier.tables[t];
    let Some(c) = table.column(&s.column) else { return Err(format!("no operation writes {}.{} from a generator", s.table, s.column)) };
    let col = &table.columns[c];
    let generator = col.gens[0];
    if col.gens.iter().any(|g| !gens.same_values(*g, generator)) {
        return Err(format!("{}.{} is written from generators that make different vectors; write it from one", s.table, s.column));
    }
    let Some(dims) = gens.vector_dims(generator) else { return Err(format!("{}.{} is not written from a vector generator", s.table, s.column)) };
    if gens.vector_dims(s.query_generator) != Some(dims) {
        return Err(format!("the vector searched for is not a vector of {dims} dimensions"));
    }
    let mut key_columns = Vec::new();
    for part in &table.key {
        match s.returns.iter().position(|r| *r == part.column) {
            Some(p) => key_columns.push(p),
            None => return Err(format!("its rows do not carry the key column {}: select it (SELECT {}, … FROM {})", part.column, part.column, s.table)),
        }
    }
    Ok(Measured { search: s.clone(), table_index: t, generator, dims, key_columns })
}

/// One execution of search operation `op`: every statement in turn, the search decoded and
/// offered to the judge.
pub(crate) async fn run(
    session: &Session,
    op: &PlannedOp,
    plan: &AnnPlan,
    values: Vec<CqlValue>,
    stats: &Mutex<Vec<OpStats>>,
) -> Result<Outcome, ExecutionError> {
    let (mut reads, mut rows) = (false, 0usize);
    for (i, st) in op.statements.iter().enumerate() {
        let row: Vec<&CqlValue> = st.slots.iter().map(|s| &values[*s]).collect();
        if i != plan.measured.search.statement {
            let n = super::checked::run_statement(session, op, st, &values).await?;
            if st.read {
                reads = true;
                rows += n;
            }
            continue;
        }
        let result = session.execute_unpaged(&st.prepared, &row).await?;
        reads = true;
        let Ok(found) = result.into_rows_result() else { continue };
        rows += found.rows_num();
        let keys = &plan.measured.key_columns;
        let returned: Vec<Vec<CqlValue>> = match found.rows::<Row>() {
            Ok(it) => it.flatten().map(|r| keys.iter().map(|p| r.columns.get(*p).cloned().flatten().unwrap_or(CqlValue::Empty)).collect()).collect(),
            Err(_) => Vec::new(),
        };
        let k = match plan.measured.search.k {
            Some(KFrom::Literal(k)) => Some(k),
            Some(KFrom::Value(v)) => match values.get(v) {
                Some(CqlValue::Int(n)) => u32::try_from(*n).ok(),
                Some(CqlValue::BigInt(n)) => u32::try_from(*n).ok(),
                _ => None,
            },
            None => None,
        };
        let vector = values.get(plan.measured.search.query_value).and_then(floats_of);
        let offered = match (k, vector) {
            (Some(k), Some(vector)) if k > 0 => plan.judge.offer(Query { slot: plan.slot, k, vector, returned }),
            _ => false,
        };
        if !offered {
            let mut g = stats.lock().unwrap_or_else(|e| e.into_inner());
            g[plan.slot].recall.get_or_insert_with(RecallCounts::default).merge(&RecallCounts { k: k.unwrap_or(0), skipped: 1, ..RecallCounts::default() });
        }
    }
    Ok(Outcome::of_reads(reads, rows))
}
