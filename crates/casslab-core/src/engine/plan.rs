//! Turning a validated workload into something executable: each operation's statements
//! prepared on the cluster with its consistency, page size and idempotence; bound generators
//! resolved to indexes; generator types checked against the prepared metadata; the run mix as
//! a cumulative table.

use super::error::EngineError;
use crate::gen::GeneratorSet;
use crate::workload::{Consistency, Operation, Workload};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency as DriverConsistency, SerialConsistency};
use std::sync::Arc;

/// One prepared statement and where its values come from.
pub(crate) struct PlannedStatement {
    pub prepared: PreparedStatement,
    /// For each bind marker, an index into the operation's `generators`.
    pub slots: Vec<usize>,
}

/// One operation ready to run.
pub(crate) struct PlannedOp {
    pub name: String,
    /// The distinct generators the operation draws from, once per execution.
    pub generators: Vec<usize>,
    pub statements: Vec<PlannedStatement>,
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

/// Prepares `op` and checks every bound generator's type against the column it feeds.
pub(crate) async fn plan_op(session: &Session, w: &Workload, gens: &GeneratorSet, op: &Operation) -> Result<PlannedOp, EngineError> {
    let mut generators: Vec<usize> = Vec::new();
    let mut statements = Vec::new();
    for st in &op.statements {
        let mut prepared = session.prepare(st.cql.as_str()).await.map_err(|e| EngineError::Prepare {
            file: w.origin.clone(),
            line: st.line,
            op: op.name.clone(),
            cql: st.cql.clone(),
            message: e.to_string(),
        })?;
        prepared.set_consistency(driver_consistency(op.consistency));
        if let Some(sc) = op.serial_consistency {
            prepared.set_serial_consistency(Some(match sc {
                Consistency::LocalSerial => SerialConsistency::LocalSerial,
                _ => SerialConsistency::Serial,
            }));
        }
        prepared.set_page_size(op.page_size);
        prepared.set_is_idempotent(op.idempotent);

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
        statements.push(PlannedStatement { prepared, slots });
    }
    Ok(PlannedOp { name: op.name.clone(), generators, statements })
}

/// Everything a phase's workers share.
pub(crate) struct Plan {
    pub ops: Vec<PlannedOp>,
    pub gens: Arc<GeneratorSet>,
    /// Cumulative weights of `ops`, normalized to end at 1.0.
    pub cumulative: Vec<f64>,
}

impl Plan {
    pub fn new(ops: Vec<PlannedOp>, weights: &[f64], gens: Arc<GeneratorSet>) -> Plan {
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Plan { ops, gens, cumulative }
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
    fn pick_follows_ratios() {
        let p = plan(&[1.0, 3.0, 0.0]);
        assert_eq!(p.pick(0.0), 0);
        assert_eq!(p.pick(0.2499), 0);
        assert_eq!(p.pick(0.25), 1);
        assert_eq!(p.pick(0.9999999), 1);
        assert!(p.cumulative[1] > 0.999999);
    }
}
