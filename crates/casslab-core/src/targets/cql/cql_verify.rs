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
use crate::verify::record::Order;
use crate::verify::verify_build::{assemble, Built, Increment, OpInfo, StepInfo, StepKind, TableInfo};
use crate::verify::WriteKind;
use crate::workload::{Consistency, CqlOp, Workload};
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
    let rf = replication_factor(session, &w.keyspace).await;
    let mut searches = Vec::new();
    let mut ops = Vec::new();
    let mut tables: Vec<TableInfo> = Vec::new();
    let mut default_ttls: Vec<(String, Option<u32>)> = Vec::new();
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
            let Some((table, key, counter, pk_len)) = table_of(session, &prepared, &mut refreshed).await else {
                steps.push(other());
                continue;
            };
            if !tables.iter().any(|t| t.name == table) {
                tables.push(TableInfo { name: table.clone(), key: key.clone(), problem: None, bytes: None, order: Order::Timestamps, counter });
                default_ttls.push((table.clone(), default_ttl(session, &prepared).await));
            }
            let default_ttl_s = default_ttls.iter().find(|(t, _)| *t == table).and_then(|(_, d)| *d);
            let mut info = describe(&st.cql, &prepared, slots, &key, pk_len, default_ttl_s);
            info.table = table;
            if let Some(p) = op_problem(op) {
                info.problem.get_or_insert(p);
                if matches!(info.kind, StepKind::Read { .. }) {
                    info.kind = StepKind::Read { one_row: false };
                }
            }
            steps.push(info);
        }
        let replicas = rf.and_then(|rf| replicas(op.consistency, rf));
        ops.push(OpInfo { name: name.clone(), generators, steps, verifies: w.verifies(o, None), replicas });
    }
    let on = reads_checked || !searches.is_empty();
    let mut built = assemble(gens, &tables, &ops, w.load.as_ref().map(|l| l.op.as_str()), &run, on, rf);
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

/// The replication factor of keyspace `ks` when it has one data center (`None`: several, or
/// not known): the replicas of each row.
async fn replication_factor(session: &Session, ks: &str) -> Option<u32> {
    let cql = "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?";
    let r = session.query_unpaged(cql, (ks,)).await.ok()?;
    let (map,): (std::collections::HashMap<String, String>,) = r.into_rows_result().ok()?.maybe_first_row().ok()??;
    let factors: Vec<u32> = map.iter().filter(|(k, _)| k.as_str() != "class").filter_map(|(_, v)| v.parse().ok()).collect();
    match factors.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// The replicas a statement at `c` reaches before the server answers, of `rf`.
fn replicas(c: Consistency, rf: u32) -> Option<u32> {
    Some(match c {
        Consistency::Any => 0,
        Consistency::One | Consistency::LocalOne => 1,
        Consistency::Two => 2,
        Consistency::Three => 3,
        Consistency::Quorum | Consistency::LocalQuorum | Consistency::EachQuorum | Consistency::Serial | Consistency::LocalSerial => rf / 2 + 1,
        Consistency::All => rf,
    })
}

/// A step that takes no part.
fn other() -> StepInfo {
    StepInfo {
        table: String::new(),
        kind: StepKind::Other,
        key: vec![],
        values: vec![],
        literal: vec![],
        returns: vec![],
        problem: None,
        ttl_s: None,
        whole: false,
        increment: None,
    }
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

/// The table a prepared statement is about, its key columns (partition, then clustering),
/// whether it holds counters and how many key columns make its partition key; `None` when the
/// driver's metadata does not know it.
async fn table_of(session: &Session, prepared: &PreparedStatement, refreshed: &mut bool) -> Option<(String, Vec<String>, bool, usize)> {
    let spec = prepared.get_table_spec()?;
    let (ks, name) = (spec.ks_name().to_string(), spec.table_name().to_string());
    for attempt in 0..2 {
        {
            let state = session.get_cluster_state();
            if let Some(t) = state.get_keyspace(&ks).and_then(|k| k.tables.get(&name)) {
                let counter = t.columns.values().any(|c| matches!(c.typ, ColumnType::Native(NativeType::Counter)));
                return Some((name, t.partition_key.iter().chain(&t.clustering_key).cloned().collect(), counter, t.partition_key.len()));
            }
        }
        if attempt == 0 && !*refreshed {
            *refreshed = true;
            session.refresh_metadata().await.ok()?;
        }
    }
    None
}

/// The `default_time_to_live` of the table a prepared statement is about, in seconds (`None`:
/// none, or not known).
async fn default_ttl(session: &Session, prepared: &PreparedStatement) -> Option<u32> {
    let spec = prepared.get_table_spec()?;
    let cql = "SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?";
    let r = session.query_unpaged(cql, (spec.ks_name(), spec.table_name())).await.ok()?;
    let (ttl,): (Option<i32>,) = r.into_rows_result().ok()?.maybe_first_row().ok()??;
    ttl.and_then(|t| u32::try_from(t).ok()).filter(|t| *t > 0)
}

/// A column as the server names it: quoted names as written, others in lower case.
fn column_name(c: &str) -> String {
    match c.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => c.to_ascii_lowercase(),
    }
}

/// Reads one statement: its kind, key, columns written and returned (`slots`: the drawn value
/// each marker binds; `key`: the table's key columns, the first `pk_len` its partition key;
/// `default_ttl_s`: the table's own TTL).
fn describe(cql: &str, prepared: &PreparedStatement, slots: &[usize], key: &[String], pk_len: usize, default_ttl_s: Option<u32>) -> StepInfo {
    let mut info = other();
    let Some(dml) = parse_dml(cql) else {
        return unread(cql);
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
                    // one partition, named by its leading key columns bound by `= ?`
                    let bound = |k: &String| {
                        let r = dml.relations.iter().find(|r| !r.token && r.op == RelOp::Eq && r.columns.len() == 1 && column_name(&r.columns[0]) == *k)?;
                        match r.terms.first() {
                            Some(Term::Marker(m)) => slot(*m).map(|s| (k.clone(), s)),
                            _ => None,
                        }
                    };
                    let prefix: Vec<(String, usize)> = key.iter().map_while(bound).collect();
                    if prefix.len() >= pk_len && pk_len > 0 {
                        let on_prefix = |r: &crate::cql::Relation| r.columns.len() == 1 && prefix.iter().any(|(k, _)| *k == column_name(&r.columns[0]));
                        info.whole = dml.relations.iter().all(|r| !r.token && on_prefix(r)) && dml.limit.is_none() && !dml.per_partition_limit;
                        info.key = prefix;
                    }
                }
            }
        }
        DmlKind::Insert | DmlKind::Update | DmlKind::Delete => {
            let kind = if dml.kind == DmlKind::Delete { WriteKind::Delete } else { WriteKind::Put };
            info.kind = StepKind::Write(kind);
            info.problem = write_problem(cql, &dml, prepared);
            if kind == WriteKind::Put {
                match ttl_of(&dml, prepared) {
                    Ok(own) => info.ttl_s = own.or(default_ttl_s).filter(|t| *t > 0),
                    Err(p) => {
                        info.problem.get_or_insert(p);
                    }
                }
            }
            match bound_key(&dml) {
                Some(k) => info.key = k,
                None => {
                    info.problem.get_or_insert_with(|| format!("it does not name one row by every key column ({}) bound to a generator", key.join(", ")));
                }
            }
            for a in dml.writes.iter().filter(|a| !key.contains(&column_name(&a.column))) {
                let negate = a.kind == AssignKind::Remove;
                match (&a.term, a.kind) {
                    (Term::Marker(m), AssignKind::Set) => info.values.extend(slot(*m).map(|s| (column_name(&a.column), s))),
                    (Term::Literal(_), AssignKind::Set) => info.literal.push(column_name(&a.column)),
                    // `n = n + ?`: an increment, if the column is a counter (the model decides)
                    (Term::Marker(m), AssignKind::Append | AssignKind::Remove) if info.increment.is_none() && slot(*m).is_some() => {
                        info.increment = slot(*m).map(|value| (column_name(&a.column), Increment::Bound { value, negate }));
                    }
                    (Term::Literal(l), AssignKind::Append | AssignKind::Remove) if info.increment.is_none() && l.trim().parse::<i64>().is_ok() => {
                        let n: i64 = l.trim().parse().unwrap_or(0);
                        info.increment = Some((column_name(&a.column), Increment::Literal(if negate { -n } else { n })));
                    }
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

/// A statement the parser cannot read (`INSERT … JSON`, …), about a table: a write that cannot
/// be recorded (so the table is not verified, rather than its keys read as corrupt), or a read
/// that is not checked.
fn unread(cql: &str) -> StepInfo {
    let mut info = other();
    info.kind = if crate::cql::first_keyword(cql).as_deref() == Some("SELECT") { StepKind::Read { one_row: false } } else { StepKind::Write(WriteKind::Put) };
    let shown: String = cql.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(60).collect();
    info.problem = Some(format!("a statement casslab does not read (`{shown}`)"));
    info
}

/// A write's own TTL in seconds (`Ok(None)`: it sets none; `Err`: one casslab cannot know).
fn ttl_of(dml: &Dml, prepared: &PreparedStatement) -> Result<Option<u32>, String> {
    if prepared.get_variable_col_specs().iter().any(|c| c.name() == "[ttl]") {
        return Err("its TTL is bound to a generator (USING TTL ?), so when its row expires is not known".into());
    }
    match &dml.ttl {
        None => Ok(None),
        Some(Term::Literal(l)) => l.trim().parse::<u32>().map(Some).map_err(|_| format!("its TTL {l} is not a number of seconds")),
        Some(_) => Err("its TTL is an expression casslab does not read".into()),
    }
}

/// Why a write cannot be recorded, if it cannot.
fn write_problem(cql: &str, dml: &Dml, prepared: &PreparedStatement) -> Option<String> {
    if dml.conditional {
        Some("a conditional write (IF …), which the server may not apply".into())
    } else if prepared.get_variable_col_specs().iter().any(|c| c.name() == "[timestamp]") || crate::cql::has_keyword(cql, "TIMESTAMP") {
        Some("a write with its own timestamp (USING TIMESTAMP)".into())
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
    fn a_write_casslab_cannot_read_keeps_its_table_from_being_verified() {
        // INSERT … JSON: its values cannot be made from keys, so its writes go unrecorded;
        // were it taken for "other", later reads of its keys would read as corrupt
        let json = "INSERT INTO kv JSON ?";
        assert!(parse_dml(json).is_none());
        let step = unread(json);
        assert_eq!(step.kind, StepKind::Write(WriteKind::Put));
        assert!(step.problem.as_deref().is_some_and(|p| p.contains("does not read") && p.contains("JSON")), "{:?}", step.problem);
        let gens = GeneratorSet::build(&crate::yaml::from_str("k: { type: bigint, dist: sequence, max: 10 }\nv: { type: blob, size: 8 }").unwrap()).unwrap();
        let put = StepInfo {
            table: "kv".into(),
            kind: StepKind::Write(WriteKind::Put),
            key: vec![("k".into(), 0)],
            values: vec![("v".into(), 1)],
            literal: vec![],
            returns: vec![],
            problem: None,
            ttl_s: None,
            whole: false,
            increment: None,
        };
        let read = StepInfo { kind: StepKind::Read { one_row: true }, values: vec![], returns: vec!["v".into()], ..put.clone() };
        let ops = vec![
            OpInfo { name: "load".into(), generators: vec![0, 1], steps: vec![put], verifies: true, replicas: None },
            OpInfo { name: "json".into(), generators: vec![1], steps: vec![StepInfo { table: "kv".into(), ..step }], verifies: true, replicas: None },
            OpInfo { name: "read".into(), generators: vec![0], steps: vec![read], verifies: true, replicas: None },
        ];
        let tables = [TableInfo { name: "kv".into(), key: vec!["k".into()], problem: None, bytes: None, order: Order::Timestamps, counter: false }];
        let b = assemble(&gens, &tables, &ops, Some("load"), &["json".into(), "read".into()], true, None);
        assert!(b.verifier.tables.is_empty());
        assert!(b.verifier.notices.iter().any(|n| n.to_string().contains("\"json\" writes it in a way casslab does not record")), "{:?}", b.verifier.notices);
        assert_eq!(unread("SELECT JSON * FROM kv").kind, StepKind::Read { one_row: false });
    }

    #[test]
    fn column_names_as_the_server_has_them() {
        assert_eq!(column_name("Field0"), "field0");
        assert_eq!(column_name("\"Field0\""), "Field0");
    }
}
