//! What the CQL target tells verification about a workload: every statement of every operation
//! the load and run phases run, prepared and read — its table (and that table's key columns from
//! the driver's schema metadata), whether it upserts, deletes or reads one row, which bind
//! markers hold the key and which the columns written, what a read returns — as
//! `verify::verify_build`'s step descriptions, from which the workload's verifier is built once per run.
//! Vector searches are described on the way (`ann`): a run that has them records its writes,
//! so that their recall can be judged against the vectors written.

use super::planned::prepare_for;
use crate::cql::{parse_dml, AssignKind, Dml, DmlKind, RelOp, Term};
use crate::engine::EngineError;
use crate::gen::GeneratorSet;
use crate::verify::verify_build::{assemble, Built, OpInfo, StepInfo, StepKind, TableInfo};
use crate::verify::WriteKind;
use crate::workload::{CqlOp, Workload};
use scylla::client::session::Session;
use scylla::cluster::metadata::{ColumnType, NativeType};
use scylla::statement::prepared::PreparedStatement;

/// The generators an operation draws from (each once) and, per statement, the drawn value each
/// marker binds: the same order `prepare::plan_op` gives them.
pub(crate) fn slots_of(gens: &GeneratorSet, op: &CqlOp) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut generators: Vec<usize> = Vec::new();
    let slots = op
        .statements
        .iter()
        .map(|st| {
            st.args
                .iter()
                .map(|a| {
                    let g = gens.index_of(a).unwrap_or(usize::MAX);
                    generators.iter().position(|x| *x == g).unwrap_or_else(|| {
                        generators.push(g);
                        generators.len() - 1
                    })
                })
                .collect()
        })
        .collect();
    (generators, slots)
}

/// A workload's verification, and the vector searches of its run phase with whether their
/// recall can be measured (and why not).
pub(crate) struct Verification {
    pub built: Built,
    pub searches: Vec<(String, Result<super::ann::Measured, String>)>,
}

/// Builds the verification of `w`'s phases (reads checked when an operation asks for it;
/// writes recorded also when the run phase searches vectors).
pub(crate) async fn build(session: &Session, w: &Workload, gens: &GeneratorSet) -> Result<Verification, EngineError> {
    let mut names: Vec<String> = w.load.iter().map(|l| l.op.clone()).collect();
    let run: Vec<String> = w.run.iter().flat_map(|r| r.mix.iter().filter(|(_, x)| *x > 0.0).map(|(n, _)| n.clone())).collect();
    for n in &run {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    let reads_checked = names.iter().filter_map(|n| w.operation(n)).any(|o| w.verifies(o, None));
    let mut searches = Vec::new();
    let mut ops = Vec::new();
    let mut tables: Vec<TableInfo> = Vec::new();
    let mut refreshed = false;
    for name in &names {
        let Some(o) = w.operation(name) else { continue };
        let Some(op) = o.cql() else { continue };
        let (generators, slots) = slots_of(gens, op);
        let mut steps = Vec::new();
        for (st, slots) in op.statements.iter().zip(&slots) {
            let prepared = prepare_for(session, w, name, op, &st.cql, st.line).await?;
            if run.contains(name) {
                let at = steps.len();
                searches.extend(super::ann::describe(w, name, at, &st.cql, slots, &generators, &prepared));
            }
            let Some((table, key, counter)) = table_of(session, &prepared, &mut refreshed).await else {
                steps.push(other());
                continue;
            };
            if !tables.iter().any(|t| t.name == table) {
                let problem = counter.then(|| "it is a counter table (increments are not recorded)".to_string());
                tables.push(TableInfo { name: table.clone(), key: key.clone(), problem, bytes: None });
            }
            let mut info = describe(&st.cql, &prepared, slots, &key);
            info.table = table;
            if let Some(p) = op_problem(op) {
                info.problem.get_or_insert(p);
                if matches!(info.kind, StepKind::Read { .. }) {
                    info.kind = StepKind::Read { one_row: false };
                }
            }
            steps.push(info);
        }
        ops.push(OpInfo { name: name.clone(), generators, steps, verifies: w.verifies(o, None) });
    }
    let on = reads_checked || !searches.is_empty();
    let mut built = assemble(gens, &tables, &ops, w.load.as_ref().map(|l| l.op.as_str()), &run, on);
    let judged: Vec<(String, Result<super::ann::Measured, String>)> =
        searches.iter().map(|s| (s.op.clone(), super::ann::measurable(s, &built.verifier, gens))).collect();
    if let Some(v) = std::sync::Arc::get_mut(&mut built.verifier) {
        v.reads_checked = reads_checked;
        for (op, m) in &judged {
            let k = searches.iter().find(|s| s.op == *op).and_then(|s| match s.k {
                Some(super::ann::KFrom::Literal(k)) => Some(k),
                _ => None,
            });
            v.notices.push(crate::verify::VerifyNotice::Recall { op: op.clone(), k, why: m.as_ref().err().cloned() });
        }
    }
    Ok(Verification { built, searches: judged })
}

/// A step that takes no part.
fn other() -> StepInfo {
    StepInfo { table: String::new(), kind: StepKind::Other, key: vec![], values: vec![], literal: vec![], returns: vec![], problem: None }
}

/// What keeps an operation's writes from being recorded, whatever its statements.
fn op_problem(op: &CqlOp) -> Option<String> {
    if op.batch.is_some() {
        Some("it writes in batches (`batch:`)".into())
    } else if op.partitions.is_some() {
        Some("it reads a set of partitions (`partitions:`)".into())
    } else {
        None
    }
}

/// The table a prepared statement is about, its key columns (partition, then clustering) and
/// whether it holds counters; `None` when the driver's metadata does not know it.
async fn table_of(session: &Session, prepared: &PreparedStatement, refreshed: &mut bool) -> Option<(String, Vec<String>, bool)> {
    let spec = prepared.get_table_spec()?;
    let (ks, name) = (spec.ks_name().to_string(), spec.table_name().to_string());
    for attempt in 0..2 {
        {
            let state = session.get_cluster_state();
            if let Some(t) = state.get_keyspace(&ks).and_then(|k| k.tables.get(&name)) {
                let counter = t.columns.values().any(|c| matches!(c.typ, ColumnType::Native(NativeType::Counter)));
                return Some((name, t.partition_key.iter().chain(&t.clustering_key).cloned().collect(), counter));
            }
        }
        if attempt == 0 && !*refreshed {
            *refreshed = true;
            session.refresh_metadata().await.ok()?;
        }
    }
    None
}

/// A column as the server names it: quoted names as written, others in lower case.
fn column_name(c: &str) -> String {
    match c.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => c.to_ascii_lowercase(),
    }
}

/// Reads one statement: its kind, key, columns written and returned (`slots`: the drawn value
/// each marker binds; `key`: the table's key columns).
fn describe(cql: &str, prepared: &PreparedStatement, slots: &[usize], key: &[String]) -> StepInfo {
    let mut info = other();
    let Some(dml) = parse_dml(cql) else {
        info.problem = Some("a statement casslab does not read".into());
        return info;
    };
    let slot = |m: usize| slots.get(m).copied();
    // key columns bound by `= ?` (a WHERE relation, or an INSERT column)
    let bound_key = |d: &Dml| -> Option<Vec<(String, usize)>> {
        key.iter()
            .map(|k| {
                let from_where = d.relations.iter().find(|r| !r.token && r.op == RelOp::Eq && r.columns.len() == 1 && column_name(&r.columns[0]) == *k);
                let term = match from_where {
                    Some(r) => r.terms.first(),
                    None => d.writes.iter().find(|a| column_name(&a.column) == *k).map(|a| &a.term),
                };
                match term {
                    Some(Term::Marker(m)) => slot(*m).map(|s| (k.clone(), s)),
                    _ => None,
                }
            })
            .collect()
    };
    match dml.kind {
        DmlKind::Select => {
            info.returns = prepared.get_current_result_set_col_specs().get().iter().map(|c| c.name().to_string()).collect();
            match bound_key(&dml) {
                Some(k) => {
                    info.kind = StepKind::Read { one_row: true };
                    info.key = k;
                }
                None => {
                    info.kind = StepKind::Read { one_row: false };
                }
            }
        }
        DmlKind::Insert | DmlKind::Update | DmlKind::Delete => {
            let kind = if dml.kind == DmlKind::Delete { WriteKind::Delete } else { WriteKind::Put };
            info.kind = StepKind::Write(kind);
            info.problem = write_problem(cql, &dml, prepared);
            match bound_key(&dml) {
                Some(k) => info.key = k,
                None => {
                    info.problem.get_or_insert_with(|| format!("it does not name one row by every key column ({}) bound to a generator", key.join(", ")));
                }
            }
            for a in dml.writes.iter().filter(|a| !key.contains(&column_name(&a.column))) {
                match (&a.term, a.kind) {
                    (Term::Marker(m), AssignKind::Set) => info.values.extend(slot(*m).map(|s| (column_name(&a.column), s))),
                    (Term::Literal(_), AssignKind::Set) => info.literal.push(column_name(&a.column)),
                    _ => {
                        info.problem.get_or_insert_with(|| format!("it changes {} relative to its value or with a CQL expression", a.column));
                    }
                }
            }
        }
        DmlKind::Batch => info.problem = Some("a BATCH statement".into()),
    }
    info
}

/// Why a write cannot be recorded, if it cannot.
fn write_problem(cql: &str, dml: &Dml, prepared: &PreparedStatement) -> Option<String> {
    if dml.conditional {
        Some("a conditional write (IF …), which the server may not apply".into())
    } else if prepared.get_variable_col_specs().iter().any(|c| c.name() == "[timestamp]") || crate::cql::has_keyword(cql, "TIMESTAMP") {
        Some("a write with its own timestamp (USING TIMESTAMP)".into())
    } else if prepared.get_variable_col_specs().iter().any(|c| c.name() == "[ttl]") || crate::cql::has_keyword(cql, "TTL") {
        Some("a write with a TTL (USING TTL), whose row may expire before it is read".into())
    } else if dml.kind == DmlKind::Delete && !dml.delete_columns.is_empty() {
        Some("it deletes columns, not the row".into())
    } else {
        None
    }
}

/// `SELECT` of a verified table's value columns by its whole key, at `consistency`.
pub(crate) async fn row_read(session: &Session, table: &crate::verify::Table, consistency: crate::workload::Consistency) -> Result<PreparedStatement, String> {
    let quote = |c: &str| format!("\"{}\"", c.replace('"', "\"\""));
    let columns: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
    let selected = if columns.is_empty() { table.key.iter().map(|k| quote(&k.column)).collect::<Vec<_>>().join(", ") } else { columns.join(", ") };
    let filter: Vec<String> = table.key.iter().map(|k| format!("{} = ?", quote(&k.column))).collect();
    let cql = format!("SELECT {selected} FROM {} WHERE {}", quote(&table.name), filter.join(" AND "));
    let mut ps = session.prepare(cql.as_str()).await.map_err(|e| format!("cannot prepare `{cql}`: {e}"))?;
    ps.set_consistency(super::planned::driver_consistency(consistency));
    ps.set_is_idempotent(true);
    Ok(ps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_as_the_server_has_them() {
        assert_eq!(column_name("Field0"), "field0");
        assert_eq!(column_name("\"Field0\""), "Field0");
    }
}
