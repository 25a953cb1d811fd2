//! Rules about the values generators bind: a generator whose type is not the declared type of
//! the column it feeds (`generator-type-mismatch`: the cluster would refuse the statement when
//! it is prepared), and reads whose keys can never be among the keys the load wrote
//! (`reads-never-match`: every read would find nothing). A generator's value is a function of
//! its name (or the one `values_of` names) and of the drawn `n`; for a uuid, a timeuuid, a sized
//! text or blob and anything holding several values that name decides the content, so two
//! generators of different names never make the same value. Numbers, timestamps and unsized
//! text (`prefix` + n) are the same for the same `n`, so only their ranges must meet.

use super::{Finding, Model, OpStmt, Rule, Severity};
use crate::cql::{AssignKind, DmlKind, RelOp, Term};
use crate::gen::{CqlType, GeneratorSpec};

pub(crate) fn check(m: &Model, out: &mut Vec<Finding>) {
    for s in m.stmts.iter().filter(|s| s.active()) {
        type_rule(m, s, out);
    }
    reads_rule(m, out);
}

/// The type a generator spec makes, when it builds (the workload was validated, so it does).
fn type_of(spec: &GeneratorSpec) -> Option<CqlType> {
    match CqlType::parse(&spec.cql_type) {
        Ok(t) => Some(t),
        Err(_) => CqlType::udt_name(&spec.cql_type).map(|(name, frozen)| CqlType::Udt { name, fields: Vec::new(), frozen }),
    }
}

fn type_rule(m: &Model, s: &OpStmt, out: &mut Vec<Finding>) {
    for d in s.dml.leaves() {
        let Some(t) = m.table(&d.table) else { continue };
        let mut bound: Vec<(&str, &Term)> = Vec::new();
        for w in &d.writes {
            if matches!(w.kind, AssignKind::Set | AssignKind::Append | AssignKind::Prepend) {
                bound.push((&w.column, &w.term));
            }
        }
        for r in d.relations.iter().filter(|r| !r.token && r.columns.len() == 1 && matches!(r.op, RelOp::Eq | RelOp::Lt | RelOp::Le | RelOp::Gt | RelOp::Ge)) {
            if let Some(term) = r.terms.first() {
                bound.push((&r.columns[0], term));
            }
        }
        for (column, term) in bound {
            let (Some(col), Some((name, spec))) = (t.column(column), s.generator(m.w, term)) else { continue };
            let Some(ty) = type_of(spec) else { continue };
            // vectors of another dimension are `vector-dimension-mismatch`'s
            let other_dims = matches!(ty, CqlType::Vector { .. }) && super::indexes::declared_dims(&col.ty).is_some();
            if ty.matches_declared(&col.ty) == Some(false) && !other_dims {
                out.push(m.at_stmt(
                    s,
                    Severity::Error,
                    Rule::GeneratorTypeMismatch,
                    format!("generator \"{name}\" makes {ty} values for column {}.{column}, declared {}", d.table, col.ty),
                    "the cluster refuses to bind a value of another type: the statement fails when casslab prepares it, after the schema is created",
                    &format!("give \"{name}\" `type: {}` (or bind a generator of that type)", col.ty),
                ));
            }
        }
    }
}

/// A partition-key column of a table and the generator bound to it by `=`.
fn key_bindings<'w>(m: &'w Model, s: &OpStmt) -> Vec<(String, String, &'w str, &'w GeneratorSpec)> {
    let mut out = Vec::new();
    for d in s.dml.leaves() {
        let Some(t) = m.table(&d.table) else { continue };
        for c in &t.partition_key {
            let term = match d.kind {
                DmlKind::Insert => d.writes.iter().find(|w| w.column == *c).map(|w| &w.term),
                _ => d.relations_on(c).find(|r| r.op == RelOp::Eq && r.columns.len() == 1).and_then(|r| r.terms.first()),
            };
            if let Some((name, spec)) = term.and_then(|term| s.generator(m.w, term)) {
                out.push((d.table.clone(), c.clone(), name, spec));
            }
        }
    }
    out
}

fn reads_rule(m: &Model, out: &mut Vec<Finding>) {
    let Some(load) = &m.w.load else { return };
    let writers: Vec<(String, String, &str, &GeneratorSpec)> = m
        .stmts
        .iter()
        .filter(|s| s.in_load && matches!(s.dml.kind, DmlKind::Insert | DmlKind::Update | DmlKind::Batch))
        .flat_map(|s| key_bindings(m, s))
        .collect();
    for s in m.stmts.iter().filter(|s| s.run_share > 0.0 && s.dml.kind == DmlKind::Select) {
        for (table, column, name, spec) in key_bindings(m, s) {
            let loaded: Vec<&(String, String, &str, &GeneratorSpec)> = writers.iter().filter(|(t, c, _, _)| *t == table && *c == column).collect();
            if loaded.is_empty() || loaded.iter().any(|(_, _, wn, ws)| may_meet(name, spec, wn, ws, load.count)) {
                continue;
            }
            let (wname, wspec) = (loaded[0].2, loaded[0].3);
            let ty = type_of(spec).map(|t| t.to_string()).unwrap_or_else(|| spec.cql_type.clone());
            let (why, fix) = if depends_on_name(spec) {
                (
                    format!("a {ty} generator's values are a function of its name and the drawn number, so \"{name}\" and \"{wname}\" never make the same key: every read finds nothing, and the run measures misses"),
                    format!("add `values_of: {wname}` to \"{name}\" (it then makes \"{wname}\"'s values for the same number, over its own distribution), or bind \"{wname}\" itself"),
                )
            } else {
                (
                    format!("\"{name}\" and \"{wname}\" make the same value only for the same number, and their ranges (or prefixes) do not meet: every read finds nothing, and the run measures misses"),
                    format!("give \"{name}\" the `min`, `max` and `prefix` of what \"{wname}\" loads ({})", range_text(wspec, load.count)),
                )
            };
            out.push(m.at_stmt(
                s,
                Severity::Error,
                Rule::ReadsNeverMatch,
                format!("reads {table}.{column} with generator \"{name}\", but the load writes it with \"{wname}\": no key read was loaded"),
                &why,
                &fix,
            ));
        }
    }
}

/// Whether a value of this spec depends on the generator's name (not only on `n`).
fn depends_on_name(spec: &GeneratorSpec) -> bool {
    match type_of(spec) {
        Some(CqlType::Uuid | CqlType::TimeUuid | CqlType::Boolean) => true,
        Some(CqlType::Text | CqlType::Blob) => spec.size.is_some(),
        Some(t) => t.is_composite(),
        None => false,
    }
}

/// The name whose content a spec makes.
fn content_name<'a>(name: &'a str, spec: &'a GeneratorSpec) -> &'a str {
    spec.values_of.as_deref().map(str::trim).unwrap_or(name)
}

/// Whether reader `r` may draw a value writer `w` loaded (`count` executions of the load).
fn may_meet(rn: &str, r: &GeneratorSpec, wn: &str, w: &GeneratorSpec, count: u64) -> bool {
    if rn == wn || content_name(rn, r) == content_name(wn, w) && r.cql_type == w.cql_type && r.size == w.size && r.prefix == w.prefix {
        return ranges_meet(r, w, count);
    }
    if depends_on_name(r) || depends_on_name(w) || type_of(r) != type_of(w) {
        // a chain of `values_of` may still join them: leave those alone
        return r.values_of.is_some() || w.values_of.is_some() || type_of(r).is_none();
    }
    let (rp, wp) = (r.prefix.as_deref().unwrap_or(""), w.prefix.as_deref().unwrap_or(""));
    if !(rp.starts_with(wp) || wp.starts_with(rp)) {
        return false;
    }
    if rp != wp || r.start != w.start || r.step_ms != w.step_ms {
        return true;
    }
    ranges_meet(r, w, count)
}

/// [min, max) of the numbers a spec draws; a sequence writer draws `count` from its min.
fn range_of(spec: &GeneratorSpec, count: Option<u64>) -> Option<(i128, i128)> {
    let dist = spec.dist.as_deref().map(|d| d.trim().to_ascii_lowercase()).unwrap_or_else(|| "uniform".into());
    if dist == "latest" || dist == "gaussian" {
        return None;
    }
    let min = spec.min.as_ref().map_or(Ok(0), |v| v.as_i64()).ok()? as i128;
    let max = spec.max.as_ref().map_or(Ok(i64::MAX), |v| v.as_i64()).ok()? as i128;
    Some(match (dist.as_str(), count) {
        ("sequence", Some(n)) => (min, max.min(min + n as i128)),
        _ => (min, max),
    })
}

fn ranges_meet(r: &GeneratorSpec, w: &GeneratorSpec, count: u64) -> bool {
    match (range_of(r, None), range_of(w, Some(count))) {
        (Some((r0, r1)), Some((w0, w1))) => r0 < w1 && w0 < r1,
        _ => true,
    }
}

fn range_text(w: &GeneratorSpec, count: u64) -> String {
    let prefix = w.prefix.as_deref().map(|p| format!("prefix \"{p}\", ")).unwrap_or_default();
    match range_of(w, Some(count)) {
        Some((a, b)) => format!("{prefix}numbers {a} to {}", b - 1),
        None => prefix.trim_end_matches(", ").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{line_of, lint_yaml, of};
    use super::*;

    const KV: &str = "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS kv (key uuid PRIMARY KEY, value text, score double)
generators:
  insert_key: { type: uuid, dist: sequence, min: 0, max: 1000 }
  key:        { type: uuid, dist: uniform, min: 0, max: 1000 }
  value:      { type: text, size: 10 }
  score:      { type: double }
operations:
  insert:
    cql: INSERT INTO kv (key, value, score) VALUES (?, ?, ?)
    args: [insert_key, value, score]
  read:
    cql: SELECT value FROM kv WHERE key = ?
    args: [key]
load:
  op: insert
  count: 1000
run:
  mix: { read: 1 }
  duration: 10s
";

    #[test]
    fn uuid_keys_of_another_name_never_match() {
        let f = lint_yaml(KV);
        let found = of(&f, Rule::ReadsNeverMatch);
        assert_eq!(found.len(), 1, "{f:#?}");
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(found[0].line, Some(line_of(KV, "SELECT value FROM kv")));
        assert!(found[0].fix.contains("values_of: insert_key"), "{}", found[0].fix);
        // the fix clears it, as does binding the same generator
        let fixed = KV.replace(
            "key:        { type: uuid, dist: uniform, min: 0, max: 1000 }",
            "key:        { type: uuid, dist: uniform, min: 0, max: 1000, values_of: insert_key }",
        );
        assert!(of(&lint_yaml(&fixed), Rule::ReadsNeverMatch).is_empty());
        assert!(of(&lint_yaml(&KV.replace("args: [key]", "args: [insert_key]")), Rule::ReadsNeverMatch).is_empty());
    }

    #[test]
    fn numeric_keys_match_by_range() {
        let ints = KV.replace("key uuid", "key bigint").replace("type: uuid", "type: bigint");
        assert!(of(&lint_yaml(&ints), Rule::ReadsNeverMatch).is_empty(), "same numbers, other names: they meet");
        let apart =
            ints.replace("key:        { type: bigint, dist: uniform, min: 0, max: 1000 }", "key:        { type: bigint, dist: uniform, min: 5000, max: 6000 }");
        let f = lint_yaml(&apart);
        let found = of(&f, Rule::ReadsNeverMatch);
        assert_eq!(found.len(), 1, "{f:#?}");
        assert!(found[0].fix.contains("numbers 0 to 999"), "{}", found[0].fix);
        let texts = KV
            .replace("key uuid", "key text")
            .replace("{ type: uuid, dist: sequence", "{ type: text, prefix: user, dist: sequence")
            .replace("{ type: uuid, dist: uniform", "{ type: text, prefix: usr, dist: uniform");
        assert_eq!(of(&lint_yaml(&texts), Rule::ReadsNeverMatch).len(), 1, "other prefixes never meet");
    }

    #[test]
    fn a_generator_of_another_type_than_its_column_is_an_error() {
        let src = KV.replace("args: [insert_key, value, score]", "args: [insert_key, score, score]");
        let f = lint_yaml(&src);
        let found = of(&f, Rule::GeneratorTypeMismatch);
        assert_eq!(found.len(), 1, "{f:#?}");
        assert_eq!(found[0].severity, Severity::Error);
        assert!(found[0].message.contains("generator \"score\" makes double values for column kv.value, declared text"), "{}", found[0].message);
        assert!(of(&lint_yaml(KV), Rule::GeneratorTypeMismatch).is_empty());
        let counter = "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS c (k int PRIMARY KEY, n counter)
generators:
  k: { type: int }
  one: { type: bigint, min: 1, max: 2 }
operations:
  bump:
    cql: UPDATE c SET n = n + ? WHERE k = ?
    args: [one, k]
run:
  mix: { bump: 1 }
  duration: 1s
";
        assert_eq!(of(&lint_yaml(counter), Rule::GeneratorTypeMismatch).len(), 1, "a counter takes a counter generator");
        assert!(of(&lint_yaml(&counter.replace("one: { type: bigint", "one: { type: counter")), Rule::GeneratorTypeMismatch).is_empty());
    }
}
