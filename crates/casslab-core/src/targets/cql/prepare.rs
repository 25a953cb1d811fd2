//! Turning a validated workload into something the CQL target can execute: each operation's
//! statements prepared on the cluster with its consistency, page size and idempotence; bound
//! generators resolved to indexes; generator types checked against the prepared metadata; the
//! stats slots of the figures recorded beside operations (`<op>.request`, `<op>.not_applied`);
//! which statements go out as one unpaged request (writes, and reads of at most one row).

use super::access::plan_access;
use super::planned::{prepare_for, AccessPlan, PlannedOp, PlannedStatement};
use crate::cql::{DmlKind, RelOp, Relation};
use crate::engine::{EngineError, Plan};
use crate::gen::{GenError, GeneratorSet};
use crate::workload::{CqlOp, Workload};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use std::sync::Arc;

/// Prepares operation `name` and checks every bound generator's type against the column it feeds.
pub(crate) async fn plan_op(session: &Session, w: &Workload, gens: &Arc<GeneratorSet>, name: &str, op: &CqlOp) -> Result<PlannedOp, EngineError> {
    let mut generators: Vec<usize> = Vec::new();
    let mut statements = Vec::new();
    for st in &op.statements {
        let prepared = prepare_for(session, w, name, op, &st.cql, st.line).await?;

        let specs = prepared.get_variable_col_specs();
        let mut slots = Vec::with_capacity(st.args.len());
        for (pos, arg) in st.args.iter().enumerate() {
            let g = gens.index_of(arg).ok_or_else(|| GenError {
                generator: arg.clone(),
                field: None,
                message: format!("operation \"{name}\" binds a generator that does not exist"),
            })?;
            if let Some(spec) = specs.get_by_index(pos) {
                let t = gens.cql_type(g);
                if !t.matches(spec.typ()) {
                    return Err(EngineError::TypeMismatch {
                        file: w.origin.clone(),
                        line: st.line,
                        op: name.to_string(),
                        position: pos + 1,
                        column: spec.name().to_string(),
                        column_type: format!("{:?}", spec.typ()).to_lowercase(),
                        generator: arg.clone(),
                        generator_type: t.to_string(),
                    });
                }
            }
            let slot = match generators.iter().position(|x| *x == g) {
                Some(i) => i,
                None => {
                    generators.push(g);
                    generators.len() - 1
                }
            };
            slots.push(slot);
        }
        let conditional = crate::cql::is_conditional(&st.cql);
        let read = crate::cql::first_keyword(&st.cql).as_deref() == Some("SELECT");
        let unpaged = sends_unpaged(session, &prepared, &st.cql);
        statements.push(PlannedStatement { prepared, slots, conditional, read, unpaged });
    }
    let joint_sequences = generators.iter().filter(|g| gens.is_sequence(**g)).count() >= 2;
    let mut planned = PlannedOp {
        name: name.to_string(),
        generators,
        statements,
        access: None,
        client_ts: None,
        request_slot: None,
        not_applied_slot: None,
        joint_sequences,
        verify: None,
        unchecked_slot: None,
        ann: None,
        gens: gens.clone(),
    };
    plan_access(session, w, name, op, &mut planned).await?;
    Ok(planned)
}

/// Whether `cql` can go out as one unpaged request with the same answer as a paged one: a
/// write (no rows, or the one `[applied]` row of a conditional), or a SELECT that binds every
/// partition and clustering column of its table by `=` (the table's keys as the driver's
/// schema metadata knows them). Anything else, or a table the metadata does not know, is paged.
fn sends_unpaged(session: &Session, prepared: &PreparedStatement, cql: &str) -> bool {
    let Some(dml) = crate::cql::parse_dml(cql) else { return false };
    match dml.kind {
        DmlKind::Insert | DmlKind::Update | DmlKind::Delete => true,
        DmlKind::Batch => false,
        DmlKind::Select => {
            let Some(spec) = prepared.get_table_spec() else { return false };
            let state = session.get_cluster_state();
            let Some(table) = state.get_keyspace(spec.ks_name()).and_then(|k| k.tables.get(spec.table_name())) else { return false };
            fixes_every_key(&dml.relations, &table.partition_key, &table.clustering_key)
        }
    }
}

/// Whether `relations` bind every column of the partition and clustering keys by `=` (alone or
/// in a multi-column `(a, b) = (?, ?)`): the statement then reads at most one row.
fn fixes_every_key(relations: &[Relation], partition_key: &[String], clustering_key: &[String]) -> bool {
    let fixed = |col: &String| relations.iter().any(|r| r.op == RelOp::Eq && !r.token && r.columns.iter().any(|c| c == col));
    !partition_key.is_empty() && partition_key.iter().chain(clustering_key).all(fixed)
}

/// The phase plan of `ops` (planned in the order of `weights`): the operations' stats slots,
/// then a `<op>.request` slot for each set read and a `<op>.not_applied` slot for each
/// operation with a conditional statement.
pub(crate) fn phase_plan(mut ops: Vec<PlannedOp>, weights: &[f64], gens: Arc<GeneratorSet>) -> Plan<PlannedOp> {
    let mut slot_names: Vec<String> = ops.iter().map(|o| o.name.clone()).collect();
    for op in ops.iter_mut() {
        if matches!(op.access, Some(AccessPlan::Set(_))) {
            op.request_slot = Some(slot_names.len());
            slot_names.push(format!("{}.request", op.name));
        }
        if op.statements.iter().any(|s| s.conditional) {
            op.not_applied_slot = Some(slot_names.len());
            slot_names.push(format!("{}.not_applied", op.name));
        }
    }
    Plan::new(ops, slot_names, weights, gens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixes(cql: &str, pk: &[&str], ck: &[&str]) -> bool {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        fixes_every_key(&crate::cql::parse_dml(cql).expect("parses").relations, &own(pk), &own(ck))
    }

    #[test]
    fn only_reads_of_one_row_are_sent_unpaged() {
        assert!(fixes("SELECT value FROM kv WHERE key = ?", &["key"], &[]));
        assert!(fixes("SELECT * FROM t WHERE a = ? AND b = :b AND c = 3", &["a", "b"], &["c"]));
        assert!(fixes("SELECT * FROM t WHERE a = ? AND (c, d) = (?, ?)", &["a"], &["c", "d"]));
        assert!(fixes("SELECT * FROM t WHERE \"Key\" = ?", &["Key"], &[]));
        // a partition of many rows, a range, a set of keys, a token range
        assert!(!fixes("SELECT * FROM t WHERE a = ?", &["a"], &["c"]));
        assert!(!fixes("SELECT * FROM t WHERE a = ? AND c > ?", &["a"], &["c"]));
        assert!(!fixes("SELECT * FROM t WHERE a IN ?", &["a"], &[]));
        assert!(!fixes("SELECT * FROM t WHERE a = ? AND b IN (1, 2)", &["a", "b"], &[]));
        assert!(!fixes("SELECT * FROM t WHERE token(a) = ?", &["a"], &[]));
        assert!(!fixes("SELECT * FROM t WHERE key = ?", &[], &[]));
    }
}
