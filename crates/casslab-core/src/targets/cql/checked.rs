//! Running a verified operation: each statement in turn, as on the plain path, with its part in
//! verification around it — a recorded write numbered in the write record and its values made
//! from its key and number before it is sent, then acknowledged (or not) when the answer comes;
//! a checked read's row decoded and matched to the writes of its key. Statements that take no
//! part run as usual.

use super::access::stamped;
use super::planned::{Outcome, PlannedOp, PlannedStatement};
use crate::stats::OpStats;
use crate::verify::op::{Ns, OpPlan, Reply, StepRole};
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
                // a recorded write carries the timestamp its number was given with, so the
                // server's last write is the client's (retries send the same)
                let ps = match ticket.timestamp_us() {
                    Some(ts) => {
                        let mut p = st.prepared.clone();
                        p.set_timestamp(Some(ts));
                        std::borrow::Cow::Owned(p)
                    }
                    None => stamped(&st.prepared, op),
                };
                let r = session.execute_unpaged(&ps, &row).await;
                ticket.finish(r.is_ok());
                r?;
            }
            Some(StepRole::Increment(_)) => {
                // a counter takes no client timestamp
                let ticket = plan.begin_increment(i, &values, &ns);
                let row: Vec<&CqlValue> = st.slots.iter().map(|s| &values[*s]).collect();
                let r = session.execute_unpaged(&st.prepared, &row).await;
                ticket.finish(r.is_ok());
                r?;
            }
            Some(StepRole::Read(r)) if r.rows.is_some() => {
                // several rows of one partition: each judged by its key, every page read
                let ticket = plan.before_partition_read(i, &ns);
                let (got, complete, undecoded) = read_rows(session, st, &values).await?;
                reads = true;
                rows += got.len() + undecoded;
                match ticket {
                    Some(t) => plan.check_partition(gens, i, &t, &got, complete, undecoded, &key_text(plan, i, &values), stats),
                    None => plan.count_unchecked(got.len() + undecoded, stats),
                }
            }
            Some(StepRole::Read(_)) => {
                let ticket = plan.before_read(i, &ns);
                let row: Vec<&CqlValue> = st.slots.iter().map(|s| &values[*s]).collect();
                let result = session.execute_unpaged(&st.prepared, &row).await?;
                reads = true;
                // a row that cannot be decoded says nothing of whether there is one
                let reply = match result.into_rows_result() {
                    Ok(r) => {
                        rows += r.rows_num();
                        match r.maybe_first_row::<Row>() {
                            Ok(Some(row)) => Reply::Row(row.columns),
                            Ok(None) => Reply::Absent,
                            Err(_) => Reply::Undecided,
                        }
                    }
                    Err(_) => Reply::Undecided,
                };
                match ticket {
                    Some(t) => {
                        let key = || key_text(plan, i, &values);
                        plan.check(gens, i, &t, &reply, key, stats);
                    }
                    // its table is not checked in this run
                    None => plan.count_unchecked(1, stats),
                }
            }
            None => {
                let n = run_statement(session, op, st, &values).await?;
                if st.read {
                    reads = true;
                    rows += n;
                }
                if plan.unchecked[i] {
                    plan.count_unchecked(n, stats);
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

/// Every row a read returns, page by page: the rows decoded, whether the last page was
/// reached, and how many rows could not be decoded.
async fn read_rows(session: &Session, st: &PlannedStatement, values: &[CqlValue]) -> Result<(Vec<Vec<Option<CqlValue>>>, bool, usize), ExecutionError> {
    let row: Vec<&CqlValue> = st.slots.iter().map(|i| &values[*i]).collect();
    let (mut paging, mut got, mut undecoded) = (PagingState::start(), Vec::new(), 0usize);
    loop {
        let (result, next) = session.execute_single_page(&st.prepared, &row, paging).await?;
        match result.into_rows_result() {
            Ok(r) => match r.rows::<Row>() {
                Ok(it) => {
                    for decoded in it {
                        match decoded {
                            Ok(row) => got.push(row.columns),
                            Err(_) => undecoded += 1,
                        }
                    }
                }
                Err(_) => undecoded += r.rows_num(),
            },
            Err(_) => return Ok((got, false, undecoded.max(1))),
        }
        match next.into_paging_control_flow() {
            ControlFlow::Break(()) => return Ok((got, true, undecoded)),
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
