//! Turning a validated workload into something executable: each operation's statements
//! prepared on the cluster with its consistency, page size and idempotence; bound generators
//! resolved to indexes; generator types checked against the prepared metadata; the run mix as
//! a cumulative table.

use super::access::{plan_access, AccessPlan};
use super::error::EngineError;
use crate::gen::GeneratorSet;
use crate::workload::{Consistency, Operation, Workload};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::policies::timestamp_generator::MonotonicTimestampGenerator;
use scylla::statement::{Consistency as DriverConsistency, SerialConsistency};
use std::sync::Arc;

/// One prepared statement and where its values come from.
pub(crate) struct PlannedStatement {
    pub prepared: PreparedStatement,
    /// For each bind marker, an index into the operation's `generators`.
    pub slots: Vec<usize>,
    /// A conditional statement (`IF …`): its `[applied]` column is read.
    pub conditional: bool,
}

/// One operation ready to run.
pub(crate) struct PlannedOp {
    pub name: String,
    /// The distinct generators the operation draws from, once per execution.
    pub generators: Vec<usize>,
    pub statements: Vec<PlannedStatement>,
    /// Set reads and batches (see `access`); `None` for plain statements.
    pub access: Option<AccessPlan>,
    /// `timestamp: client`: the clock that stamps each write.
    pub client_ts: Option<MonotonicTimestampGenerator>,
    /// Stats slot of `<op>.request` (set reads) and `<op>.not_applied` (conditional writes);
    /// assigned by [`Plan::new`].
    pub request_slot: Option<usize>,
    pub not_applied_slot: Option<usize>,
    /// Draws from two or more sequences: one execution's draws are taken together
    /// ([`GeneratorSet::joint_draw`]).
    pub joint_sequences: bool,
}

impl PlannedOp {
    /// Whether the operation needs more than the plain statement path of the worker.
    #[inline]
    pub fn is_special(&self) -> bool {
        self.access.is_some() || self.client_ts.is_some() || self.not_applied_slot.is_some()
    }
}

pub(crate) fn driver_consistency(c: Consistency) -> DriverConsistency {
    match c {
        Consistency::Any => DriverConsistency::Any,
        Consistency::One => DriverConsistency::One,
        Consistency::Two => DriverConsistency::Two,
        Consistency::Three => DriverConsistency::Three,
        Consistency::Quorum => DriverConsistency::Quorum,
        Consistency::All => DriverConsistency::All,
        Consistency::LocalQuorum => DriverConsistency::LocalQuorum,
        Consistency::EachQuorum => DriverConsistency::EachQuorum,
        Consistency::LocalOne => DriverConsistency::LocalOne,
        Consistency::Serial => DriverConsistency::Serial,
        Consistency::LocalSerial => DriverConsistency::LocalSerial,
    }
}

pub(crate) fn driver_serial(c: Consistency) -> SerialConsistency {
    match c {
        Consistency::LocalSerial => SerialConsistency::LocalSerial,
        _ => SerialConsistency::Serial,
    }
}

/// Prepares `cql` with the client settings of `op` (consistency, serial consistency, page
/// size, idempotence).
pub(crate) async fn prepare_for(session: &Session, w: &Workload, op: &Operation, cql: &str, line: usize) -> Result<PreparedStatement, EngineError> {
    let mut prepared = session.prepare(cql).await.map_err(|e| EngineError::Prepare {
        file: w.origin.clone(),
        line,
        op: op.name.clone(),
        cql: cql.to_string(),
        message: e.to_string(),
    })?;
    prepared.set_consistency(driver_consistency(op.consistency));
    if let Some(sc) = op.serial_consistency {
        prepared.set_serial_consistency(Some(driver_serial(sc)));
    }
    prepared.set_page_size(op.page_size);
    prepared.set_is_idempotent(op.idempotent);
    Ok(prepared)
}

/// Whether a statement is conditional (a lightweight transaction: `IF NOT EXISTS`, `IF c = ?`).
fn is_conditional(cql: &str) -> bool {
    // words outside string literals
    let mut in_str = false;
    let bare: String = cql
        .chars()
        .map(|c| {
            if c == '\'' {
                in_str = !in_str;
            }
            if in_str { ' ' } else { c }
        })
        .collect();
    bare.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w.eq_ignore_ascii_case("IF"))
}

/// Prepares `op` and checks every bound generator's type against the column it feeds.
pub(crate) async fn plan_op(session: &Session, w: &Workload, gens: &GeneratorSet, op: &Operation) -> Result<PlannedOp, EngineError> {
    let mut generators: Vec<usize> = Vec::new();
    let mut statements = Vec::new();
    for st in &op.statements {
        let prepared = prepare_for(session, w, op, &st.cql, st.line).await?;

        let specs = prepared.get_variable_col_specs();
        let mut slots = Vec::with_capacity(st.args.len());
        for (pos, arg) in st.args.iter().enumerate() {
            let g = gens.index_of(arg).ok_or_else(|| EngineError::Other(format!("unknown generator \"{arg}\"")))?;
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
        let conditional = is_conditional(&st.cql);
        statements.push(PlannedStatement { prepared, slots, conditional });
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

/// Everything a phase's workers share.
pub(crate) struct Plan {
    pub ops: Vec<PlannedOp>,
    /// Names of the stats slots: the operations (same indexes as `ops`), then the figures
    /// recorded beside them (`<op>.request`, `<op>.not_applied`).
    pub slot_names: Vec<String>,
    pub gens: Arc<GeneratorSet>,
    /// Cumulative weights of `ops`, normalized to end at 1.0.
    pub cumulative: Vec<f64>,
}

impl Plan {
    pub fn new(mut ops: Vec<PlannedOp>, weights: &[f64], gens: Arc<GeneratorSet>) -> Plan {
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
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Plan { ops, slot_names, gens, cumulative }
    }

    /// Picks an operation for a uniform draw `u` in [0, 1).
    #[inline]
    pub fn pick(&self, u: f64) -> usize {
        match self.cumulative.iter().position(|c| u < *c) {
            Some(i) => i,
            None => self.cumulative.len() - 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(weights: &[f64]) -> Plan {
        Plan::new(Vec::new(), weights, Arc::new(GeneratorSet::build(&Default::default()).unwrap()))
    }

    #[test]
    fn conditional_statements_are_recognised() {
        assert!(is_conditional("INSERT INTO t (k) VALUES (?) IF NOT EXISTS"));
        assert!(is_conditional("UPDATE t SET v = ? WHERE k = ? if v = ?"));
        assert!(!is_conditional("INSERT INTO t (k, v) VALUES (?, 'IF')"));
        assert!(!is_conditional("SELECT diff FROM t WHERE k = ?"));
    }

    #[test]
    fn pick_follows_ratios() {
        let p = plan(&[1.0, 3.0, 0.0]);
        assert_eq!(p.pick(0.0), 0);
        assert_eq!(p.pick(0.2499), 0);
        assert_eq!(p.pick(0.25), 1);
        assert_eq!(p.pick(0.9999999), 1);
        assert!(p.cumulative[1] > 0.999999);
    }
}
