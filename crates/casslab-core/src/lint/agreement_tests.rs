//! Tests that workload validation and the linter read bind markers alike, now that both go
//! through `crate::cql`: a `?` in a `--` or `/* */` comment or in a string literal is no marker
//! for either, and named markers (`:name`) are markers for both, numbered in order, so marker
//! `i` is bound to `args[i]` in validation's count and in the linter's rules.

use super::{LintOptions, Model};
use crate::cql::Term;
use crate::workload::parse_workload;
use std::collections::BTreeMap;

fn workload(cql: &str, args: &str) -> String {
    format!(
        "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS t (pk int, ck int, v text, PRIMARY KEY ((pk), ck))
generators:
  pk: {{ type: int, dist: uniform, min: 0, max: 100 }}
  ck: {{ type: int }}
  v: {{ type: text, size: 10 }}
operations:
  op:
    cql: \"{cql}\"
    args: [{args}]
run:
  mix: {{ op: 1 }}
  duration: 1s
"
    )
}

/// Validation's verdict, and for an accepted workload the generator the linter sees bound to
/// each relation (`column=generator`) and each written column.
fn both(cql: &str, args: &str) -> Result<Vec<String>, String> {
    let w = parse_workload(&workload(cql, args), "w.yaml", &BTreeMap::new()).map_err(|e| e.to_string())?;
    let opts = LintOptions::default();
    let m = Model::new(&w, &opts);
    let [s] = m.stmts.as_slice() else { panic!("the linter did not read {cql}") };
    let bound = |col: &str, t: &Term| format!("{col}={}", s.generator(&w, t).map(|(n, _)| n).unwrap_or("-"));
    let mut out: Vec<String> = s.dml.relations.iter().map(|r| bound(&r.columns.join(","), &r.terms[0])).collect();
    out.extend(s.dml.writes.iter().map(|a| bound(&a.column, &a.term)));
    Ok(out)
}

fn markers_error(r: Result<Vec<String>, String>, markers: usize) {
    let e = r.unwrap_err();
    assert!(e.starts_with("w.yaml:10:") && e.contains(&format!("has {markers} bind marker(s)")), "{e}");
}

#[test]
fn a_marker_in_a_line_comment_is_none() {
    let cql = "SELECT v FROM t WHERE pk = ? -- AND ck = ?";
    assert_eq!(both(cql, "pk").unwrap(), ["pk=pk"]);
    markers_error(both(cql, "pk, ck"), 1);
}

#[test]
fn a_marker_in_a_block_comment_is_none() {
    let cql = "SELECT v FROM t WHERE /* ck = ? AND */ pk = ? AND ck = ?";
    assert_eq!(both(cql, "pk, ck").unwrap(), ["pk=pk", "ck=ck"]);
    markers_error(both(cql, "v, pk, ck"), 2);
}

#[test]
fn a_marker_in_a_string_literal_is_none() {
    let cql = "INSERT INTO t (pk, v, ck) VALUES (?, '?', ?)";
    assert_eq!(both(cql, "pk, ck").unwrap(), ["pk=pk", "v=-", "ck=ck"]);
    markers_error(both(cql, "pk, v, ck"), 2);
}

#[test]
fn named_markers_are_markers_in_order() {
    let cql = "SELECT v FROM t WHERE pk = :key AND ck = :clustering";
    assert_eq!(both(cql, "pk, ck").unwrap(), ["pk=pk", "ck=ck"]);
    markers_error(both(cql, "pk"), 2);
}
