//! Turning a validated workload into something the CQL target can execute: each operation's
//! statements prepared on the cluster with its consistency, page size and idempotence; bound
//! generators resolved to indexes; generator types checked against the prepared metadata; the
//! stats slots of the figures recorded beside operations (`<op>.request`, `<op>.not_applied`).

use super::access::plan_access;
use super::planned::{prepare_for, AccessPlan, PlannedOp, PlannedStatement};
use crate::engine::{EngineError, Plan};
use crate::gen::{GenError, GeneratorSet};
use crate::workload::{Operation, Workload};
use scylla::client::session::Session;
use std::sync::Arc;

/// Prepares `op` and checks every bound generator's type against the column it feeds.
pub(crate) async fn plan_op(session: &Session, w: &Workload, gens: &GeneratorSet, op: &Operation) -> Result<PlannedOp, EngineError> {
    let mut generators: Vec<usize> = Vec::new();
    let mut statements = Vec::new();
    for st in &op.statements {
        let prepared = prepare_for(session, w, op, &st.cql, st.line).await?;

        let specs = prepared.get_variable_col_specs();
        let mut slots = Vec::with_capacity(st.args.len());
        for (pos, arg) in st.args.iter().enumerate() {
            let g = gens
                .index_of(arg)
                .ok_or_else(|| GenError { generator: arg.clone(), field: None, message: format!("operation \"{}\" binds a generator that does not exist", op.name) })?;
            if let Some(spec) = specs.get_by_index(pos) {
                let t = gens.cql_type(g);
                if !t.matches(spec.typ()) {
                    return Err(EngineError::TypeMismatch {
                        file: w.origin.clone(),
                        line: st.line,
                        op: op.name.clone(),
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
        statements.push(PlannedStatement { prepared, slots, conditional, read });
    }
    let joint_sequences = generators.iter().filter(|g| gens.is_sequence(**g)).count() >= 2;
    let mut planned = PlannedOp {
        name: op.name.clone(),
        generators,
        statements,
        access: None,
        client_ts: None,
        request_slot: None,
        not_applied_slot: None,
        joint_sequences,
    };
    plan_access(session, w, op, &mut planned).await?;
    Ok(planned)
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
