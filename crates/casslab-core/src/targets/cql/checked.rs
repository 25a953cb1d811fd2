//! Running a verified operation: each statement in turn, as on the plain path, with its part in
//! verification around it — a recorded write numbered in the write record and its values made
//! from its key and number before it is sent, then acknowledged (or not) when the answer comes;
//! a checked read's row decoded and matched to the writes of its key. Statements that take no
//! part run as usual.

use super::access::stamped;
use super::planned::{Outcome, PlannedOp, PlannedStatement};
use crate::stats::OpStats;
use crate::verify::op::{Ns, OpPlan, StepRole};
use crate::verify::write_values::show;
use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::PagingState;
use scylla::value::{CqlValue, Row};
use std::ops::ControlFlow;
use std::sync::Mutex;

/// One execution of verified operation `op` with its drawn `values` and their `ns`.
pub(crate) async fn run(
    session: &Session,
    op: &PlannedOp,
    plan: &OpPlan,
    mut values: Vec<CqlValue>,
    ns: Ns,
    stats: &Mutex<Vec<OpStats>>,
) -> Result<Outcome, ExecutionError> {
    let gens = &*op.gens;
    let (mut reads, mut rows) = (false, 0usize);
    for (i, st) in op.statements.iter().enumerate() {
        match plan.steps[i].as_ref().map(|s| &s.role) {
            Some(StepRole::Write(_)) => {
                let ticket = plan.begin_write(gens, i, &mut values, &ns);
                let row: Vec<&CqlValue> = st.slots.iter().map(|s| &values[*s]).collect();
                let r = session.execute_unpaged(&stamped(&st.prepared, op), &row).await;
                ticket.finish(r.is_ok());
                r?;
            }
            Some(StepRole::Read(_)) => {
                let ticket = plan.before_read(i, &ns);
                let row: Vec<&CqlValue> = st.slots.iter().map(|s| &values[*s]).collect();
                let result = session.execute_unpaged(&st.prepared, &row).await?;
                reads = true;
                let first: Option<Row> = match result.into_rows_result() {
                    Ok(r) => {
                        rows += r.rows_num();
                        r.maybe_first_row::<Row>().ok().flatten()
                    }
                    Err(_) => None,
                };
                if let Some(t) = ticket {
                    let key = || key_text(plan, i, &values);
                    plan.check(gens, i, &t, first.as_ref().map(|r| r.columns.as_slice()), key, stats);
                }
            }
            None => {
                let n = run_statement(session, op, st, &values).await?;
                if st.read {
                    reads = true;
                    rows += n;
                }
            }
        }
    }
    Ok(Outcome::of_reads(reads, rows))
}

/// A statement that takes no part, to its last page; the rows it returned.
pub(crate) async fn run_statement(session: &Session, op: &PlannedOp, st: &PlannedStatement, values: &[CqlValue]) -> Result<usize, ExecutionError> {
    let row: Vec<&CqlValue> = st.slots.iter().map(|i| &values[*i]).collect();
    let ps = stamped(&st.prepared, op);
    if st.unpaged {
        let r = session.execute_unpaged(&ps, &row).await?;
        return Ok(if st.read { r.into_rows_result().map_or(0, |r| r.rows_num()) } else { 0 });
    }
    let (mut paging, mut rows) = (PagingState::start(), 0);
    loop {
        let (result, next) = session.execute_single_page(&ps, &row, paging).await?;
        rows += result.into_rows_result().map_or(0, |r| r.rows_num());
        match next.into_paging_control_flow() {
            ControlFlow::Break(()) => return Ok(rows),
            ControlFlow::Continue(p) => paging = p,
        }
    }
}

/// The key of step `step` as it was bound: `col=value` for each key column.
fn key_text(plan: &OpPlan, step: usize, values: &[CqlValue]) -> String {
    let Some(s) = plan.steps[step].as_ref() else { return String::new() };
    let table = &plan.verifier.tables[s.table];
    s.key_values.iter().zip(&table.key).map(|(v, part)| format!("{}={}", part.column, show(values.get(*v)))).collect::<Vec<_>>().join(" ")
}
