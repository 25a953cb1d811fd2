//! Operations that are more than "run each statement once": reading a set of partitions with
//! a client-side strategy (`sync`, `async`, `in`, `in_by_replica`, optionally with a LIMIT that
//! lets the coordinator answer in one page), writing rows in batches (unlogged, logged, single
//! partition), conditional writes whose `[applied] = false` is counted as its own outcome, and
//! client-side timestamps. Planning prepares every statement variant once (the IN form, the
//! per-replica copies pinned to one node, the batch); executing draws only values. Each
//! statement a set read sends is timed into the operation's `<op>.request` figures; the plain
//! one-statement path stays in `worker.rs`.

use super::classify;
use super::planned::{driver_consistency, driver_serial, prepare_for, AccessPlan, BatchPlan, Outcome, PlannedOp, PlannedStatement, RowsPlan, SetPlan};
use crate::cql::to_in_statement;
use crate::engine::EngineError;
use crate::gen::GeneratorSet;
use crate::stats::OpStats;
use crate::workload::{BatchKind, CqlOp, Strategy, Workload};
use futures::stream::{FuturesUnordered, StreamExt};
use rand::rngs::SmallRng;
use scylla::client::session::Session;
use scylla::deserialize::row::ColumnIterator;
use scylla::deserialize::value::DeserializeValue;
use scylla::errors::ExecutionError;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::policies::timestamp_generator::{MonotonicTimestampGenerator, TimestampGenerator};
use scylla::response::query_result::QueryResult;
use scylla::response::PagingState;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Mutex;
use std::time::Instant;
use uuid::Uuid;

/// Plans the access settings of operation `name` into `planned` (after its statements were
/// prepared).
pub(crate) async fn plan_access(session: &Session, w: &Workload, name: &str, op: &CqlOp, planned: &mut PlannedOp) -> Result<(), EngineError> {
    if op.client_timestamp {
        planned.client_ts = Some(MonotonicTimestampGenerator::new().without_warnings());
    }
    if let Some(spec) = &op.rows {
        let fail = |message: String| EngineError::Prepare {
            file: w.origin.clone(),
            line: op.statements[0].line,
            op: name.to_string(),
            cql: op.statements[0].cql.clone(),
            message,
        };
        let maker = crate::gen::rows::RowsMaker::build(spec, &planned.gens).map_err(fail)?;
        let from = planned.generators.iter().map(|g| maker.place(*g)).collect();
        let read = spec.one_row || planned.statements.iter().any(|s| s.read);
        let (batch_rows, batch_type) = match &op.batch {
            Some(b) => (b.size as usize, if b.kind == BatchKind::Logged { BatchType::Logged } else { BatchType::Unlogged }),
            None => (1, BatchType::Unlogged),
        };
        planned.access = Some(AccessPlan::Rows(Box::new(RowsPlan { maker, from, read, batch_rows, batch_type })));
        return Ok(());
    }
    if let Some(spec) = &op.partitions {
        let st = &op.statements[0];
        let base = &planned.statements[0];
        let fail = |message: String| EngineError::Prepare { file: w.origin.clone(), line: spec.line, op: name.to_string(), cql: st.cql.clone(), message };
        let pk = base.prepared.get_variable_pk_indexes();
        if pk.len() != 1 || pk[0].index as usize != spec.key_marker {
            return Err(fail(format!("`partitions` needs a table whose partition key is one column, bound by the marker of \"{}\" (`pk = ?`)", spec.key)));
        }
        let key_value = base.slots[spec.key_marker];
        let (keyspace, table) = match base.prepared.get_table_spec() {
            Some(t) => (t.ks_name().to_string(), t.table_name().to_string()),
            None => (String::new(), String::new()),
        };
        let with_limit = |cql: &str| if spec.limit.is_some() { format!("{cql} LIMIT ?") } else { cql.to_string() };
        // a limited statement must fit in one page for the coordinator to run it in one go
        let page_rows = spec.limit.map(|l| (l as i64 * spec.count as i64).min(i32::MAX as i64) as i32);
        let prep = |cql: String| async move {
            let mut p = prepare_for(session, w, name, op, &cql, st.line).await?;
            if let Some(rows) = page_rows {
                p.set_page_size(rows.max(op.page_size));
            }
            Ok::<_, EngineError>(p)
        };
        let single = if spec.limit.is_some() {
            PlannedStatement { prepared: prep(with_limit(&st.cql)).await?, slots: base.slots.clone(), conditional: false, read: true, unpaged: false }
        } else {
            PlannedStatement { prepared: base.prepared.clone(), slots: base.slots.clone(), conditional: false, read: true, unpaged: false }
        };
        let mut in_stmt = None;
        let mut per_node = HashMap::new();
        if spec.strategy.uses_in() {
            let cql = to_in_statement(&st.cql, spec.key_marker).ok_or_else(|| fail("the key must be bound as `pk = ?`".into()))?;
            let prepared = prep(with_limit(&cql)).await?;
            if spec.strategy == Strategy::InByReplica {
                for node in session.get_cluster_state().get_nodes_info() {
                    let mut p = prepared.clone();
                    p.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(NodeIdentifier::HostId(node.host_id), None)));
                    per_node.insert(node.host_id, p);
                }
            }
            in_stmt = Some(PlannedStatement { prepared, slots: base.slots.clone(), conditional: false, read: true, unpaged: false });
        }
        planned.access = Some(AccessPlan::Set(Box::new(SetPlan { spec: spec.clone(), key_value, single, in_stmt, per_node, keyspace, table })));
    } else if let Some(b) = &op.batch {
        let mut batch = Batch::new(if b.kind == BatchKind::Logged { BatchType::Logged } else { BatchType::Unlogged });
        for _ in 0..b.size {
            for st in &planned.statements {
                batch.append_statement(st.prepared.clone());
            }
        }
        batch.set_consistency(driver_consistency(op.consistency));
        if let Some(sc) = op.serial_consistency {
            batch.set_serial_consistency(Some(driver_serial(sc)));
        }
        batch.set_is_idempotent(op.idempotent);
        let mut keep = vec![false; planned.generators.len()];
        if b.kind == BatchKind::SinglePartition {
            for st in &planned.statements {
                for pk in st.prepared.get_variable_pk_indexes() {
                    if let Some(slot) = st.slots.get(pk.index as usize) {
                        keep[*slot] = true;
                    }
                }
            }
        }
        planned.access = Some(AccessPlan::Batch(BatchPlan { batch, size: b.size as usize, keep }));
    }
    Ok(())
}

/// The values one execution of `op` binds: one per generator it draws from, then (set reads)
/// the other keys of the set, or (batches) the values of rows 2, 3, ….
#[inline]
pub(crate) fn draw_values(op: &PlannedOp, gens: &GeneratorSet, rng: &mut SmallRng) -> Vec<CqlValue> {
    let _joint = op.joint_sequences.then(|| gens.joint_draw());
    let g = op.generators.len();
    match &op.access {
        None => op.generators.iter().map(|i| gens.value(*i, rng)).collect(),
        Some(AccessPlan::Set(sp)) => {
            let k = sp.spec.count as usize;
            let mut v = Vec::with_capacity(g + k - 1);
            v.extend(op.generators.iter().map(|i| gens.value(*i, rng)));
            let key_gen = op.generators[sp.key_value];
            // distinct keys: a repeated draw is drawn again (a few times at most)
            for _ in 1..k {
                let mut key = gens.value(key_gen, rng);
                for _ in 0..10 {
                    if key != v[sp.key_value] && !v[g..].contains(&key) {
                        break;
                    }
                    key = gens.value(key_gen, rng);
                }
                v.push(key);
            }
            v
        }
        Some(AccessPlan::Rows(rp)) => rows_values(op, rp, gens, rng),
        Some(AccessPlan::Batch(bp)) => {
            let mut v = Vec::with_capacity(g * bp.size);
            v.extend(op.generators.iter().map(|i| gens.value(*i, rng)));
            for _ in 1..bp.size {
                for (j, gi) in op.generators.iter().enumerate() {
                    let x = if bp.keep[j] { v[j].clone() } else { gens.value(*gi, rng) };
                    v.push(x);
                }
            }
            v
        }
    }
}

/// The values of one execution of a `rows:` operation: one row of the operation's drawn values
/// per row its visits take (a read: one), key and clustering values from the visit, the others
/// drawn per row.
fn rows_values(op: &PlannedOp, rp: &RowsPlan, gens: &GeneratorSet, rng: &mut SmallRng) -> Vec<CqlValue> {
    let visits = if rp.read { vec![rp.maker.read(gens, rng)] } else { rp.maker.write(gens, rng) };
    let rows: usize = visits.iter().map(|v| v.rows.len()).sum();
    let mut out = Vec::with_capacity(rows * op.generators.len());
    for visit in &visits {
        for row in &visit.rows {
            for (j, g) in op.generators.iter().enumerate() {
                out.push(match rp.from[j] {
                    Some(Ok(i)) => visit.key[i].clone(),
                    Some(Err(l)) => row[l].clone(),
                    None => gens.value(*g, rng),
                });
            }
        }
    }
    out
}

/// Runs the rows of one execution of a `rows:` operation: a read's statements with its row, a
/// write's rows in batches of at most `batch_rows` (each row's statements on their own when
/// that is 1, or when the execution writes a single row), one after the other.
async fn write_rows(session: &Session, op: &PlannedOp, rp: &RowsPlan, values: &[CqlValue]) -> Result<Outcome, ExecutionError> {
    let g = op.generators.len().max(1);
    let rows = values.len() / g;
    let (mut applied, mut reads, mut read_rows) = (true, false, 0);
    if rp.read || rows <= 1 || rp.batch_rows <= 1 {
        for r in 0..rows {
            let base = &values[r * g..(r + 1) * g];
            for st in &op.statements {
                let row: Vec<&CqlValue> = st.slots.iter().map(|i| &base[*i]).collect();
                let (done, n) = run_statement(session, &stamped(&st.prepared, op), &row, st.conditional).await?;
                applied &= done;
                if st.read {
                    reads = true;
                    read_rows += n;
                }
            }
        }
        return Ok(if applied { Outcome::of_reads(reads, read_rows) } else { Outcome::NotApplied });
    }
    let conditional = op.statements.iter().any(|s| s.conditional);
    for first in (0..rows).step_by(rp.batch_rows) {
        let last = (first + rp.batch_rows).min(rows);
        let mut batch = Batch::new(rp.batch_type);
        let mut bound: Vec<Vec<&CqlValue>> = Vec::with_capacity((last - first) * op.statements.len());
        for r in first..last {
            let base = &values[r * g..(r + 1) * g];
            for st in &op.statements {
                batch.append_statement(st.prepared.clone());
                bound.push(st.slots.iter().map(|i| &base[*i]).collect());
            }
        }
        if let Some(first_st) = op.statements.first() {
            batch.set_consistency(first_st.prepared.get_consistency().unwrap_or(driver_consistency(crate::workload::Consistency::LocalQuorum)));
            if let Some(sc) = first_st.prepared.get_serial_consistency() {
                batch.set_serial_consistency(Some(sc));
            }
            batch.set_is_idempotent(first_st.prepared.get_is_idempotent());
        }
        if let Some(ts) = &op.client_ts {
            batch.set_timestamp(Some(ts.next_timestamp()));
        }
        let res = session.batch(&batch, bound).await?;
        if conditional && !was_applied(res) {
            applied = false;
        }
    }
    Ok(if applied { Outcome::Done } else { Outcome::NotApplied })
}

/// Runs one execution of an operation that is not a plain statement sequence.
pub(crate) async fn execute(session: &Session, op: &PlannedOp, values: Vec<CqlValue>, stats: &Mutex<Vec<OpStats>>) -> Result<Outcome, ExecutionError> {
    match &op.access {
        Some(AccessPlan::Rows(rp)) => write_rows(session, op, rp, &values).await,
        Some(AccessPlan::Set(sp)) => read_set(session, op, sp, &values, stats).await.map(|rows| Outcome::of_reads(true, rows)),
        Some(AccessPlan::Batch(bp)) => write_batch(session, op, bp, &values).await,
        None => {
            let (mut applied, mut reads, mut rows) = (true, false, 0);
            for st in &op.statements {
                let row: Vec<&CqlValue> = st.slots.iter().map(|i| &values[*i]).collect();
                let ps = stamped(&st.prepared, op);
                let (done, n) = run_statement(session, &ps, &row, st.conditional).await?;
                applied &= done;
                if st.read {
                    reads = true;
                    rows += n;
                }
            }
            Ok(if applied { Outcome::of_reads(reads, rows) } else { Outcome::NotApplied })
        }
    }
}

/// The statement, with a client timestamp when the operation asks for one.
pub(crate) fn stamped<'a>(ps: &'a PreparedStatement, op: &PlannedOp) -> Cow<'a, PreparedStatement> {
    match &op.client_ts {
        None => Cow::Borrowed(ps),
        Some(ts) => {
            let mut p = ps.clone();
            p.set_timestamp(Some(ts.next_timestamp()));
            Cow::Owned(p)
        }
    }
}

/// Runs a statement to its last page; returns whether it was applied (always true unless
/// `conditional` and the cluster answered `[applied] = false`) and the rows it returned (from
/// the row count each page carries; none for a conditional statement's `[applied]` row).
async fn run_statement(session: &Session, ps: &PreparedStatement, row: &[&CqlValue], conditional: bool) -> Result<(bool, usize), ExecutionError> {
    let mut paging = PagingState::start();
    let mut applied = true;
    let mut rows = 0;
    let mut first = true;
    loop {
        let (res, next) = session.execute_single_page(ps, row, paging).await?;
        if conditional && first {
            applied = was_applied(res);
        } else {
            rows += res.into_rows_result().map_or(0, |r| r.rows_num());
        }
        first = false;
        match next.into_paging_control_flow() {
            ControlFlow::Break(()) => return Ok((applied, rows)),
            ControlFlow::Continue(p) => paging = p,
        }
    }
}

/// Reads the `[applied]` column a conditional statement returns.
fn was_applied(res: QueryResult) -> bool {
    let Ok(rows) = res.into_rows_result() else { return true };
    let Ok(Some(mut cols)) = rows.maybe_first_row::<ColumnIterator>() else { return true };
    match cols.next() {
        Some(Ok(c)) if c.spec.name() == "[applied]" => <bool as DeserializeValue>::deserialize(c.spec.typ(), c.slice).unwrap_or(true),
        _ => true,
    }
}

/// Sends one statement of a set read and records it under `<op>.request`; returns the rows
/// it read.
async fn request(
    session: &Session,
    ps: &PreparedStatement,
    row: Vec<&CqlValue>,
    stats: &Mutex<Vec<OpStats>>,
    slot: Option<usize>,
) -> Result<usize, ExecutionError> {
    let t = Instant::now();
    let r = run_statement(session, ps, &row, false).await;
    if let Some(slot) = slot {
        let ns = t.elapsed().as_nanos() as u64;
        let mut g = stats.lock().unwrap();
        match &r {
            Ok(_) => g[slot].record_ok(ns, ns),
            Err(e) => g[slot].record_error(classify(e)),
        }
    }
    r.map(|(_, rows)| rows)
}

/// Reads the set of partitions of one execution; returns the rows read in all.
async fn read_set(session: &Session, op: &PlannedOp, sp: &SetPlan, values: &[CqlValue], stats: &Mutex<Vec<OpStats>>) -> Result<usize, ExecutionError> {
    let g = op.generators.len();
    let keys: Vec<&CqlValue> = std::iter::once(&values[sp.key_value]).chain(values[g..].iter()).collect();
    let limit_per = sp.spec.limit.map(|l| l as i64);
    let limit_for = |n: usize| limit_per.map(|l| CqlValue::Int((l * n as i64).min(i32::MAX as i64) as i32));
    let marker = sp.spec.key_marker;
    let slot = op.request_slot;
    let one = limit_for(1);
    let conc = sp.spec.concurrency as usize;
    match sp.spec.strategy {
        Strategy::Sync => {
            let mut rows = 0;
            for k in &keys {
                rows += request(session, &sp.single.prepared, bind(&sp.single, values, marker, k, one.as_ref()), stats, slot).await?;
            }
            Ok(rows)
        }
        Strategy::Async => {
            let reqs = keys.iter().map(|k| (&sp.single.prepared, bind(&sp.single, values, marker, k, one.as_ref()))).collect();
            send_all(session, reqs, conc, stats, slot).await
        }
        Strategy::In => {
            let st = sp.in_stmt.as_ref().expect("planned for in");
            let lists: Vec<(CqlValue, Option<CqlValue>)> =
                keys.chunks(sp.spec.chunk as usize).map(|c| (CqlValue::List(c.iter().map(|k| (*k).clone()).collect()), limit_for(c.len()))).collect();
            let reqs = lists.iter().map(|(list, limit)| (&st.prepared, bind(st, values, marker, list, limit.as_ref()))).collect();
            send_all(session, reqs, conc, stats, slot).await
        }
        Strategy::InByReplica => {
            let st = sp.in_stmt.as_ref().expect("planned for in_by_replica");
            let cs = session.get_cluster_state();
            let owned = keys.iter().map(|k| {
                let token = sp.single.prepared.calculate_token(&bind(&sp.single, values, marker, k, one.as_ref())).ok().flatten();
                let replicas: Vec<Uuid> = match token {
                    Some(t) => cs.get_token_endpoints(&sp.keyspace, &sp.table, t).iter().map(|(n, _)| n.host_id).collect(),
                    None => Vec::new(),
                };
                (replicas, (*k).clone())
            });
            let groups = group_by_replicas(owned);
            let mut queries: Vec<(&PreparedStatement, CqlValue, Option<CqlValue>)> = Vec::new();
            for (target, ks) in &groups {
                let ps = target.and_then(|t| sp.per_node.get(&t)).unwrap_or(&st.prepared);
                for c in ks.chunks(sp.spec.chunk as usize) {
                    queries.push((ps, CqlValue::List(c.to_vec()), limit_for(c.len())));
                }
            }
            let reqs = queries.iter().map(|(ps, list, limit)| (*ps, bind(st, values, marker, list, limit.as_ref()))).collect();
            send_all(session, reqs, conc, stats, slot).await
        }
    }
}

/// Groups keys by the set of replicas that own them (each key given with its replicas in ring
/// order, primary first): per group, the node to send it to (the first key's primary) and
/// its keys, groups in order of first appearance. Keys without known replicas form one group
/// with no target (sent wherever the driver chooses).
fn group_by_replicas<K>(keys: impl Iterator<Item = (Vec<Uuid>, K)>) -> Vec<(Option<Uuid>, Vec<K>)> {
    let mut groups: Vec<(Vec<Uuid>, Option<Uuid>, Vec<K>)> = Vec::new();
    for (replicas, key) in keys {
        let target = replicas.first().copied();
        let mut set = replicas;
        set.sort_unstable();
        match groups.iter_mut().find(|(s, _, _)| *s == set) {
            Some(g) => g.2.push(key),
            None => groups.push((set, target, vec![key])),
        }
    }
    groups.into_iter().map(|(_, t, k)| (t, k)).collect()
}

/// Sends `reqs` with at most `conc` in flight; the first failure fails the set. Returns the
/// rows they read in all.
async fn send_all(
    session: &Session,
    reqs: Vec<(&PreparedStatement, Vec<&CqlValue>)>,
    conc: usize,
    stats: &Mutex<Vec<OpStats>>,
    slot: Option<usize>,
) -> Result<usize, ExecutionError> {
    let mut pending = reqs.into_iter();
    let mut inflight = FuturesUnordered::new();
    let mut rows = 0;
    loop {
        while inflight.len() < conc.max(1) {
            match pending.next() {
                Some((ps, row)) => inflight.push(request(session, ps, row, stats, slot)),
                None => break,
            }
        }
        match inflight.next().await {
            Some(r) => rows += r?,
            None => return Ok(rows),
        }
    }
}

/// A row of statement `st`: the drawn values at their markers, `key` at the key's marker, and
/// the LIMIT last (when the set is limited).
fn bind<'a>(st: &PlannedStatement, values: &'a [CqlValue], marker: usize, key: &'a CqlValue, limit: Option<&'a CqlValue>) -> Vec<&'a CqlValue> {
    let mut r: Vec<&CqlValue> = Vec::with_capacity(st.slots.len() + 1);
    for (pos, i) in st.slots.iter().enumerate() {
        r.push(if pos == marker { key } else { &values[*i] });
    }
    r.extend(limit);
    r
}

async fn write_batch(session: &Session, op: &PlannedOp, bp: &BatchPlan, values: &[CqlValue]) -> Result<Outcome, ExecutionError> {
    let g = op.generators.len();
    let mut rows: Vec<Vec<&CqlValue>> = Vec::with_capacity(bp.size * op.statements.len());
    for r in 0..bp.size {
        let base = &values[r * g..(r + 1) * g];
        for st in &op.statements {
            rows.push(st.slots.iter().map(|i| &base[*i]).collect());
        }
    }
    let batch = match &op.client_ts {
        None => Cow::Borrowed(&bp.batch),
        Some(ts) => {
            let mut b = bp.batch.clone();
            b.set_timestamp(Some(ts.next_timestamp()));
            Cow::Owned(b)
        }
    };
    let res = session.batch(&batch, rows).await?;
    if op.statements.iter().any(|s| s.conditional) && !was_applied(res) {
        return Ok(Outcome::NotApplied);
    }
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_grouped_by_their_replica_set() {
        let n = |i: u128| Uuid::from_u128(i);
        // replica sets {1,2,3} (in two ring orders), {2,3,4}, unknown
        let keys =
            vec![(vec![n(1), n(2), n(3)], "a"), (vec![n(2), n(3), n(4)], "b"), (vec![n(3), n(1), n(2)], "c"), (vec![], "d"), (vec![n(2), n(3), n(4)], "e")];
        let groups = group_by_replicas(keys.into_iter());
        assert_eq!(groups, vec![(Some(n(1)), vec!["a", "c"]), (Some(n(2)), vec!["b", "e"]), (None, vec!["d"])]);
    }
}
