//! What the Redis target tells verification about a workload, and how it runs a verified
//! operation. A key space is a "table": the keys one family of generators makes (generators
//! that make the same values). Its rows are strings (`SET key value`, read by `GET`) or hashes
//! (`HSET key field value …`, read by `HGETALL`, `HGET`, `HMGET`), deleted by `DEL`/`UNLINK`;
//! any other command that writes to the key space (INCR, APPEND, EXPIRE, a field bound to a
//! generator, …) keeps it from being verified. Values are compared as the bytes Redis keeps.

use super::planned::{value_bytes, PlannedOp};
use super::{RedisRequestError, RedisTarget};
use crate::gen::GeneratorSet;
use crate::stats::OpStats;
use crate::verify::op::{Ns, OpPlan, Reply, StepRole};
use crate::verify::record::Order;
use crate::verify::verify_build::{assemble, Built, OpInfo, StepInfo, StepKind, TableInfo};
use crate::verify::write_values::show;
use crate::verify::WriteKind;
use crate::workload::{RedisArg, RedisCommand, RedisMode, Workload};
use redis::Value;
use scylla::value::CqlValue;
use std::sync::Mutex;

/// Commands that read without writing: they take no part, and keep nothing from being verified.
const READ_ONLY: &[&str] = &[
    "GET",
    "MGET",
    "STRLEN",
    "EXISTS",
    "TTL",
    "PTTL",
    "HGET",
    "HGETALL",
    "HMGET",
    "HEXISTS",
    "HLEN",
    "LRANGE",
    "LLEN",
    "SISMEMBER",
    "SMEMBERS",
    "SCARD",
    "ZSCORE",
    "ZRANGE",
    "ZCARD",
    "PING",
];

/// The name of the key column of every key space.
const KEY: &str = "key";

/// The generators every command of `w`'s phases draws from, in the order `planned::plan_op`
/// gives them, for one operation.
fn generators_of(gens: &GeneratorSet, commands: &[RedisCommand]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for g in commands.iter().flat_map(|c| c.bound()).map(|a| gens.index_of(a).unwrap_or(usize::MAX)) {
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// The key spaces: one per family of key generators that make the same values, named after
/// the first one met.
fn key_spaces(gens: &GeneratorSet, ops: &[(&str, &[RedisCommand])]) -> Vec<(String, Vec<usize>)> {
    let mut spaces: Vec<(String, Vec<usize>)> = Vec::new();
    for c in ops.iter().flat_map(|(_, cs)| cs.iter()) {
        let Some(RedisArg::Bound(k)) = c.args.first() else { continue };
        let Some(g) = gens.index_of(k) else { continue };
        match spaces.iter_mut().find(|(_, family)| gens.same_values(family[0], g)) {
            Some((_, family)) if !family.contains(&g) => family.push(g),
            Some(_) => {}
            None => spaces.push((format!("keys of {k}"), vec![g])),
        }
    }
    spaces
}

/// Builds the verification of `w`'s phases.
pub(super) fn build(w: &Workload, gens: &GeneratorSet) -> Built {
    let mut names: Vec<String> = w.load.iter().map(|l| l.op.clone()).collect();
    let run: Vec<String> = w.run.iter().flat_map(|r| r.mix.iter().filter(|(_, x)| *x > 0.0).map(|(n, _)| n.clone())).collect();
    for n in &run {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    let on = names.iter().filter_map(|n| w.operation(n)).any(|o| w.verifies(o, None));
    let redis_ops: Vec<(&str, &[RedisCommand], RedisMode)> =
        names.iter().filter_map(|n| w.operation(n).and_then(|o| o.redis()).map(|r| (n.as_str(), r.commands.as_slice(), r.mode))).collect();
    let pairs: Vec<(&str, &[RedisCommand])> = redis_ops.iter().map(|(n, c, _)| (*n, *c)).collect();
    let spaces = key_spaces(gens, &pairs);
    // every field a hash write names, for HGETALL to return in one order
    let fields: Vec<String> =
        pairs.iter().flat_map(|(_, cs)| cs.iter()).filter(|c| c.name == "HSET").flat_map(|c| c.args[1..].chunks(2).filter_map(|p| literal(&p[0]))).fold(
            Vec::new(),
            |mut acc, f| {
                if !acc.contains(&f) {
                    acc.push(f);
                }
                acc
            },
        );
    let mut tables: Vec<TableInfo> = spaces
        .iter()
        .map(|(name, _)| TableInfo {
            name: name.clone(),
            key: vec![KEY.into()],
            problem: None,
            bytes: Some(value_bytes),
            order: Order::Arrival,
            counter: false,
        })
        .collect();
    let mut ops = Vec::new();
    for (name, commands, mode) in &redis_ops {
        let generators = generators_of(gens, commands);
        let mut steps: Vec<StepInfo> = commands.iter().map(|c| describe(gens, c, &generators, &spaces, &fields)).collect();
        if *mode == RedisMode::Pipeline {
            for s in steps.iter_mut().filter(|s| matches!(s.kind, StepKind::Write(_))) {
                s.problem.get_or_insert_with(|| "a pipeline".into());
            }
        }
        // strings and hashes do not mix in one key space
        for s in &steps {
            if let Some(t) = tables.iter_mut().find(|t| t.name == s.table) {
                let hash = s.values.iter().any(|(c, _)| c != "value") || s.returns.iter().any(|c| c != "value");
                let string = s.values.iter().any(|(c, _)| c == "value") || s.returns.iter().any(|c| c == "value");
                if hash && string {
                    t.problem.get_or_insert_with(|| "it holds both strings and hashes".into());
                }
            }
        }
        let verifies = w.operation(name).is_some_and(|o| w.verifies(o, None));
        ops.push(OpInfo { name: name.to_string(), generators, steps, verifies, replicas: None });
    }
    assemble(gens, &tables, &ops, w.load.as_ref().map(|l| l.op.as_str()), &run, on, None)
}

fn literal(a: &RedisArg) -> Option<String> {
    match a {
        RedisArg::Literal(l) => Some(l.clone()),
        RedisArg::Bound(_) => None,
    }
}

/// One command as a step.
fn describe(gens: &GeneratorSet, c: &RedisCommand, generators: &[usize], spaces: &[(String, Vec<usize>)], fields: &[String]) -> StepInfo {
    let mut s = StepInfo {
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
    };
    let value_of = |a: &RedisArg| match a {
        RedisArg::Bound(g) => gens.index_of(g).and_then(|g| generators.iter().position(|x| *x == g)),
        RedisArg::Literal(_) => None,
    };
    let Some(key) = c.args.first().and_then(value_of) else { return s };
    let Some((table, _)) = spaces.iter().find(|(_, family)| family.contains(&generators[key])) else { return s };
    s.table = table.clone();
    s.key = vec![(KEY.into(), key)];
    let rest = &c.args[1..];
    match c.name.as_str() {
        "SET" => {
            s.kind = StepKind::Write(WriteKind::Put);
            match value_of(&rest[0]) {
                Some(v) => s.values.push(("value".into(), v)),
                None => s.literal.push("value".into()),
            }
            if rest.len() > 1 {
                s.problem = Some("SET with options (EX, PX, NX, XX, …): expiry and conditions are not recorded".into());
            }
        }
        "HSET" => {
            s.kind = StepKind::Write(WriteKind::Put);
            for pair in rest.chunks(2) {
                match (literal(&pair[0]), value_of(&pair[1])) {
                    (Some(f), Some(v)) => s.values.push((f, v)),
                    (Some(f), None) => s.literal.push(f),
                    (None, _) => s.problem = Some("a hash field bound to a generator".into()),
                }
            }
        }
        "DEL" | "UNLINK" if rest.is_empty() => s.kind = StepKind::Write(WriteKind::Delete),
        "GET" => {
            s.kind = StepKind::Read { one_row: true };
            s.returns = vec!["value".into()];
        }
        "HGETALL" => {
            s.kind = StepKind::Read { one_row: true };
            s.returns = fields.to_vec();
        }
        "HGET" | "HMGET" => match rest.iter().map(literal).collect::<Option<Vec<String>>>() {
            Some(f) => {
                s.kind = StepKind::Read { one_row: true };
                s.returns = f;
            }
            None => s.kind = StepKind::Read { one_row: false },
        },
        name if READ_ONLY.contains(&name) => {}
        name => {
            s.kind = StepKind::Write(WriteKind::Put);
            s.problem = Some(format!("{name}, which casslab does not record"));
        }
    }
    s
}

/// A verified read's reply as a row in the order the step returns its columns (`None`: no
/// key, or for `HGET`/`HMGET`, no value in any field asked for). `fields`: the columns asked for.
fn row_of(command: &str, reply: Value, fields: &[String]) -> Option<Vec<Option<CqlValue>>> {
    let bytes = |v: Value| match v {
        Value::BulkString(b) => Some(CqlValue::Blob(b)),
        Value::SimpleString(s) => Some(CqlValue::Blob(s.into_bytes())),
        Value::Int(n) => Some(CqlValue::Blob(n.to_string().into_bytes())),
        _ => None,
    };
    match command {
        "GET" => bytes(reply).map(|v| vec![Some(v)]),
        "HGET" | "HMGET" => {
            let items = match reply {
                Value::Array(items) => items,
                other => vec![other],
            };
            let row: Vec<Option<CqlValue>> = items.into_iter().map(bytes).collect();
            row.iter().any(Option::is_some).then_some(row)
        }
        _ => {
            let pairs: Vec<(Value, Value)> = match reply {
                Value::Map(m) => m,
                Value::Array(items) => {
                    let mut it = items.into_iter();
                    std::iter::from_fn(|| Some((it.next()?, it.next()?))).collect()
                }
                _ => Vec::new(),
            };
            if pairs.is_empty() {
                return None;
            }
            let mut row = vec![None; fields.len()];
            for (k, v) in pairs {
                let Some(CqlValue::Blob(k)) = bytes(k) else { continue };
                if let Some(i) = fields.iter().position(|f| f.as_bytes() == k.as_slice()) {
                    row[i] = bytes(v);
                }
            }
            Some(row)
        }
    }
}

/// What a verified read of a key space's `columns` (`None`: a field no write writes) brought
/// back. No value in any field of an `HGET`/`HMGET` is no key, unless every field asked for is
/// one that some upsert leaves out: a hash may then lack them all, and the answer says nothing.
fn reply_of(command: &str, reply: Value, table: &crate::verify::Table, columns: &[Option<usize>]) -> Reply {
    let fields: Vec<String> = columns.iter().map(|c| c.map(|c| table.columns[c].name.clone()).unwrap_or_default()).collect();
    match row_of(command, reply, &fields) {
        Some(row) => Reply::Row(row),
        None if matches!(command, "HGET" | "HMGET") && !columns.iter().any(|c| c.is_some_and(|c| table.always_written(c))) => Reply::Undecided,
        None => Reply::Absent,
    }
}

/// One execution of a verified operation: its commands one after the other, each write
/// numbered and acknowledged in the record, each read's reply checked.
pub(super) async fn run(
    target: &RedisTarget,
    op: &PlannedOp,
    plan: &OpPlan,
    mut values: Vec<CqlValue>,
    ns: Ns,
    stats: &Mutex<Vec<OpStats>>,
) -> Result<(), RedisRequestError> {
    let gens = &*op.gens;
    for i in 0..op.command_count() {
        match plan.steps[i].as_ref().map(|s| &s.role) {
            Some(StepRole::Write(_)) => {
                let ticket = plan.begin_write(gens, i, &mut values, &ns);
                let r = target.send_one(&op.command(i, &values)).await;
                ticket.finish(r.is_ok());
                r?;
            }
            Some(StepRole::Read(r)) => {
                let ticket = plan.before_read(i, &ns);
                let reply = target.send_one(&op.command(i, &values)).await?;
                if ticket.is_none() {
                    plan.count_unchecked(1, stats);
                }
                if let Some(t) = ticket {
                    let table = &plan.verifier.tables[plan.steps[i].as_ref().map_or(0, |s| s.table)];
                    let reply = reply_of(op.command_name(i), reply, table, &r.columns);
                    let key = || format!("key={}", show(values.get(plan.steps[i].as_ref().map_or(0, |s| s.key_values[0]))));
                    plan.check(gens, i, &t, &reply, key, stats);
                }
            }
            // no Redis command is planned as a counter's increment (INCR keeps its key space
            // from being verified): sent as it is
            Some(StepRole::Increment(_)) | None => {
                target.send_one(&op.command(i, &values)).await?;
                if plan.unchecked[i] {
                    plan.count_unchecked(1, stats);
                }
            }
        }
    }
    Ok(())
}

/// A key space's row by key: a string's value (`GET`) or a hash's fields (`HGETALL`), in the
/// table's column order.
pub(super) async fn read_row(target: &RedisTarget, table: &crate::verify::Table, key: &[CqlValue]) -> Result<Option<Vec<Option<CqlValue>>>, String> {
    let string = table.columns.len() == 1 && table.columns[0].name == "value";
    let name = if string { "GET" } else { "HGETALL" };
    let key = key.first().map(value_bytes).unwrap_or_default();
    let reply = target.send_one(redis::cmd(name).arg(key)).await.map_err(|e| e.to_string())?;
    let fields: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
    Ok(row_of(name, reply, &fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::classify::{classify, Class, Expiry, Found, Judged};
    use crate::verify::KeyState;
    use crate::workload::parse_workload;
    use std::collections::BTreeMap;

    const YCSB: &str = "generators:
  insert_key: { type: text, prefix: user, dist: sequence, min: 0, max: 100 }
  key: { type: text, prefix: user, max: 100 }
  f{0..1}: { type: text, size: 10 }
  n: { type: int }
operations:
  insert: { redis: 'HSET ? field0 ? field1 ?', args: [insert_key, f0, f1] }
  read: { redis: HGETALL ?, args: [key], verify: true }
  update: { redis: HSET ? field0 ?, args: [key, f0] }
  count: { redis: INCR ?, args: [n] }
load: { op: insert, count: 100 }
run: { mix: { read: 1, update: 1, count: 1 }, duration: 1s }
";

    #[test]
    fn hashes_are_modeled_by_their_fields_and_other_key_spaces_apart() {
        let w = parse_workload(YCSB, "r.yaml", &BTreeMap::new()).unwrap();
        let gens = GeneratorSet::build(&w.generators).unwrap();
        let b = build(&w, &gens);
        assert!(b.verifier.notices.is_empty(), "{:?}", b.verifier.notices);
        let names: Vec<&str> = b.verifier.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["keys of insert_key"], "INCR's keys are another space, which no upsert writes");
        let t = &b.verifier.tables[0];
        assert_eq!(t.columns.iter().map(|c| (c.name.as_str(), c.load_only)).collect::<Vec<_>>(), [("field0", false), ("field1", true)]);
        assert!(matches!(&b.ops["read"].steps[0].as_ref().unwrap().role, StepRole::Read(r) if r.columns == [Some(0), Some(1)]));
    }

    #[test]
    fn commands_that_change_values_keep_a_key_space_from_being_verified() {
        let src = YCSB.replace("count: { redis: INCR ?, args: [n] }", "count: { redis: APPEND ? x, args: [key] }");
        let w = parse_workload(&src, "r.yaml", &BTreeMap::new()).unwrap();
        let b = build(&w, &GeneratorSet::build(&w.generators).unwrap());
        assert!(b.verifier.tables.is_empty());
        assert!(b.verifier.notices.iter().any(|n| n.to_string().contains("APPEND, which casslab does not record")), "{:?}", b.verifier.notices);
    }

    #[test]
    fn replies_become_rows() {
        let f = vec!["field0".to_string(), "field1".to_string()];
        let map = Value::Array(vec![Value::BulkString(b"field1".to_vec()), Value::BulkString(b"b".to_vec())]);
        assert_eq!(row_of("HGETALL", map, &f), Some(vec![None, Some(CqlValue::Blob(b"b".to_vec()))]));
        assert_eq!(row_of("HGETALL", Value::Array(vec![]), &f), None, "no such key");
        assert_eq!(row_of("GET", Value::Nil, &["value".into()]), None);
        assert_eq!(row_of("GET", Value::BulkString(b"v".to_vec()), &["value".into()]), Some(vec![Some(CqlValue::Blob(b"v".to_vec()))]));
        assert_eq!(row_of("HMGET", Value::Array(vec![Value::Nil, Value::Nil]), &f), None);
    }

    #[test]
    fn a_field_nil_where_a_hash_may_lack_it_says_nothing_of_the_key() {
        // DEL k, then HSET k field0 v (the update), then HGET k field1: the hash has no field1,
        // which is not a missing key
        let w = parse_workload(YCSB, "r.yaml", &BTreeMap::new()).unwrap();
        let gens = GeneratorSet::build(&w.generators).unwrap();
        let b = build(&w, &gens);
        let t = &b.verifier.tables[0];
        let (field0, field1) = (t.column("field0"), t.column("field1"));
        assert_eq!(reply_of("HGET", Value::Nil, t, &[field1]), Reply::Undecided);
        assert_eq!(reply_of("HMGET", Value::Array(vec![Value::Nil, Value::Nil]), t, &[field1, None]), Reply::Undecided);
        assert_eq!(reply_of("HGET", Value::Nil, t, &[field0]), Reply::Absent, "every upsert writes field0: no key");
        assert_eq!(reply_of("HMGET", Value::Array(vec![Value::Nil, Value::Nil]), t, &[field0, field1]), Reply::Absent);
        assert_eq!(reply_of("HGETALL", Value::Array(vec![]), t, &[field0, field1]), Reply::Absent);
        let s = KeyState { issued: 3, floor: 3, pending: 0, put: true, delete: false, exact: true, recent: None };
        let judged = Judged { stale_checkable: true, one_row: true, deletes: true };
        assert_eq!(classify(&s, &s, Found::Undecided, Expiry::Live, judged).0, Class::Unchecked, "not missing");
    }
}
