//! Checks a parsed workload before anything touches a cluster: its `schema:` only creates, in
//! its own keyspace (`schema_guard`), every bound generator exists,
//! every statement gets as many values as it has bind markers (counted by `crate::cql`, so
//! markers in comments and literals do not count and `:name` markers do), phases name real
//! operations, ratios and durations make sense, and the generators themselves build. Errors
//! point at the line of the key at fault, as reading the file noted it (`FileLines`). Type checks against
//! the cluster's prepared-statement metadata happen later, in the engine.

use super::model::{CqlOp, OpBody, Operation, RedisOp, Workload};
use super::workload_error::{OpProblem, Problem, WorkloadError};
use crate::cql::count_markers;
use crate::gen::GeneratorSet;
use crate::yaml::KeyLines;
use std::collections::BTreeMap;

/// Where the parts of a workload are in its file (after parameter substitution), for the checks
/// made once it is built.
pub(crate) struct FileLines {
    /// The line of every mapping key.
    pub keys: KeyLines,
    /// Each operation's `args:` items, with their lines.
    pub args: BTreeMap<String, OpArgs>,
}

/// The `args:` items written under an operation and under each item of its `steps:` (or
/// `pipeline:`), with their lines.
pub(crate) struct OpArgs {
    pub op: Vec<(String, usize)>,
    /// `None` without a `steps:` or `pipeline:` list.
    pub steps: Option<Vec<Vec<(String, usize)>>>,
}

/// Checks `w`, read from `file` with its parts at `lines`.
pub(crate) fn validate(w: &Workload, file: &str, lines: &FileLines) -> Result<(), WorkloadError> {
    let cx = Cx { w, file, lines };
    if !is_identifier(&w.keyspace) {
        return Err(cx.err(lines.keys.key_line("keyspace"), Problem::Keyspace(w.keyspace.clone())));
    }
    super::schema_guard::check(w).map_err(|(line, p)| cx.err(Some(line), p))?;
    let gens = build_generators(&cx)?;
    for op in &w.operations {
        match &op.body {
            OpBody::Cql(body) => {
                check_statements(&cx, op, body)?;
                check_rows(&cx, op, body, &gens)?;
            }
            OpBody::Redis(body) => check_commands(&cx, op, body, &gens)?,
        }
    }
    check_phases(&cx)
}

/// What the checks read: the workload, its file and where its parts are in it.
struct Cx<'a> {
    w: &'a Workload,
    file: &'a str,
    lines: &'a FileLines,
}

impl Cx<'_> {
    fn err(&self, line: Option<usize>, p: Problem) -> WorkloadError {
        WorkloadError::new(self.file, line, p)
    }
    fn op_err(&self, op: &Operation, line: usize, problem: OpProblem) -> WorkloadError {
        self.err(Some(line), Problem::Operation { op: op.name.clone(), problem })
    }
    fn unknown_generator(&self, op: &Operation, line: usize, name: &str) -> WorkloadError {
        let known = self.w.generators.keys().cloned().collect();
        self.op_err(op, line, OpProblem::UnknownGenerator { name: name.to_string(), known })
    }
}

/// The generators, built; a generator that does not build is pointed at by the deepest key of
/// the field at fault that is written (`size.max`, else `size`), else by its name, and one made
/// by a `{A..B}` range by the key that makes it.
fn build_generators(cx: &Cx) -> Result<GeneratorSet, WorkloadError> {
    GeneratorSet::build(&cx.w.generators).map_err(|e| {
        let doc = &cx.lines.keys;
        let keys: Vec<&str> = doc.get("generators").map(|g| g.keys().collect()).unwrap_or_default();
        let written = super::repeat::key_making(&e.generator, keys.iter().copied()).unwrap_or(e.generator.as_str());
        let mut path = vec!["generators", written];
        path.extend(e.field.as_deref().map(|f| f.split('.').collect::<Vec<_>>()).unwrap_or_default());
        let line = (2..=path.len()).rev().find_map(|n| doc.line_at(&path[..n]));
        cx.err(line, e.into())
    })
}

/// Every generator a statement binds exists, and it gets a value per bind marker.
fn check_statements(cx: &Cx, op: &Operation, body: &CqlOp) -> Result<(), WorkloadError> {
    let op_args = cx.lines.args.get(&op.name);
    for (i, st) in body.statements.iter().enumerate() {
        // a lone statement's args are the operation's (a single step's are not looked at)
        let st_args = if body.statements.len() > 1 { op_args.and_then(|a| a.steps.as_ref()).and_then(|s| s.get(i)) } else { op_args.map(|a| &a.op) };
        if let Some(a) = st.args.iter().find(|a| !cx.w.generators.contains_key(*a)) {
            return Err(cx.unknown_generator(op, arg_line(st_args, a).unwrap_or(st.line), a));
        }
        // one statement each: what follows a `;` would be sent too (a batch's `;`s are its own)
        if crate::cql::read_ddl(&st.cql).is_some_and(|d| d.several && d.verb != "BEGIN") {
            return Err(cx.op_err(op, st.line, OpProblem::Several));
        }
        let markers = count_markers(&st.cql);
        if markers != st.args.len() {
            return Err(cx.op_err(op, st.line, OpProblem::Markers { markers, args: st.args.len() }));
        }
    }
    Ok(())
}

/// `rows:` names generators that exist, of the right kinds, with counts that build; the
/// statements bind at least the partition key it makes.
fn check_rows(cx: &Cx, op: &Operation, body: &CqlOp, gens: &GeneratorSet) -> Result<(), WorkloadError> {
    let Some(spec) = &body.rows else { return Ok(()) };
    let line = cx.lines.keys.line_at(&["operations", &op.name, "rows"]).unwrap_or(op.line);
    crate::gen::rows::RowsMaker::build(spec, gens).map_err(|m| cx.op_err(op, line, OpProblem::Rows(m)))?;
    let bound: Vec<&String> = body.statements.iter().flat_map(|s| &s.args).collect();
    if let Some(k) = spec.key.iter().find(|k| !bound.contains(k)) {
        return Err(cx.op_err(
            op,
            line,
            OpProblem::Rows(format!("rows.key: \"{k}\" is not bound by the operation's statements, so its partitions are not the ones its seeds name")),
        ));
    }
    Ok(())
}

/// Every generator a Redis command binds exists and makes a single value.
fn check_commands(cx: &Cx, op: &Operation, body: &RedisOp, gens: &GeneratorSet) -> Result<(), WorkloadError> {
    let op_args = cx.lines.args.get(&op.name);
    let op_node = cx.lines.keys.at(&["operations", &op.name]);
    let in_list = body.commands.len() > 1 || op_node.is_some_and(|n| n.get("redis").is_none());
    let list = op_args.and_then(|a| a.steps.as_ref()).filter(|_| in_list);
    for (i, c) in body.commands.iter().enumerate() {
        let c_args = match list {
            Some(l) => l.get(i),
            None => op_args.map(|a| &a.op),
        };
        for a in c.bound() {
            let line = arg_line(c_args, a).unwrap_or(c.line);
            let Some(idx) = gens.index_of(a) else {
                return Err(cx.unknown_generator(op, line, a));
            };
            if gens.cql_type(idx).is_composite() {
                return Err(cx.op_err(op, line, OpProblem::NotARedisValue { generator: a.to_string(), ty: gens.cql_type(idx).to_string() }));
            }
        }
    }
    Ok(())
}

/// There is a phase; phases name real operations; ratios and the duration make sense.
fn check_phases(cx: &Cx) -> Result<(), WorkloadError> {
    let (w, doc) = (cx.w, &cx.lines.keys);
    let op_names: Vec<String> = w.operations.iter().map(|o| o.name.clone()).collect();
    let unknown_op = |phase: &'static str, name: &str| Problem::UnknownOperation { phase, name: name.to_string(), known: op_names.clone() };
    if w.load.is_none() && w.run.is_none() {
        return Err(cx.err(None, Problem::NoPhase));
    }
    if let Some(l) = w.load.as_ref().filter(|l| w.operation(&l.op).is_none()) {
        return Err(cx.err(doc.line_at(&["load", "op"]).or(Some(l.line)), unknown_op("load", &l.op)));
    }
    let Some(r) = &w.run else { return Ok(()) };
    let mix_line = doc.line_at(&["run", "mix"]).or(Some(r.line));
    if r.mix.is_empty() {
        return Err(cx.err(mix_line, Problem::EmptyMix));
    }
    for (name, ratio) in &r.mix {
        let line = doc.line_at(&["run", "mix", name]).or(mix_line);
        if w.operation(name).is_none() {
            return Err(cx.err(line, unknown_op("run.mix", name)));
        }
        if !ratio.is_finite() || *ratio < 0.0 {
            return Err(cx.err(line, Problem::BadRatio { name: name.clone(), ratio: *ratio }));
        }
    }
    if r.mix.iter().all(|(_, x)| *x == 0.0) {
        return Err(cx.err(mix_line, Problem::AllRatiosZero));
    }
    if r.duration_s <= 0.0 {
        return Err(cx.err(doc.line_at(&["run", "duration"]).or(Some(r.line)), Problem::ZeroDuration));
    }
    Ok(())
}

/// The line of the first `args:` item naming `name`.
fn arg_line(args: Option<&Vec<(String, usize)>>, name: &str) -> Option<usize> {
    args?.iter().find(|(a, _)| a == name).map(|(_, line)| *line)
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic()) && s.len() <= 48 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use crate::workload::parse_workload;
    use std::collections::BTreeMap;

    const BASE: &str = "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS users_by_id (id int PRIMARY KEY, name text)
  - CREATE TABLE IF NOT EXISTS users_by_name (name text PRIMARY KEY, id int)
generators:
  id: { type: int }
  name:
    type: text
    size:
      dist: uniform
      min: 1
      max: 20
operations:
  write:
    steps:
      - cql: INSERT INTO users_by_id (id, name) VALUES (?, ?)
        args: [id, name]
      - cql: INSERT INTO users_by_name (name, id) VALUES (?, ?)
        args:
          - name
          - id
run:
  mix: { write: 1 }
  duration: 10s
events:
  - 5s flush
  - 5s flush
";

    fn error(src: &str) -> String {
        parse_workload(src, "w.yaml", &BTreeMap::new()).unwrap_err().to_string()
    }

    #[test]
    fn statements_and_events_that_start_alike_keep_their_own_lines() {
        let w = parse_workload(BASE, "w.yaml", &BTreeMap::new()).unwrap();
        assert_eq!(w.schema.iter().map(|s| s.line).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(w.operations[0].cql().unwrap().statements.iter().map(|s| s.line).collect::<Vec<_>>(), [16, 18]);
        let e = error(&BASE.replace("  - 5s flush\n  - 5s flush", "  - 5s flush\n  - 5s flush ks.a.b"));
        assert!(e.starts_with("w.yaml:27: event \"5s flush ks.a.b\""), "{e}");
    }

    #[test]
    fn a_nested_generator_field_is_pointed_at() {
        let e = error(&BASE.replace("max: 20", "max: 0"));
        assert!(e.starts_with("w.yaml:12: generator \"name\""), "the line of size.max: {e}");
        let e = error(&BASE.replace("dist: uniform", "dist: unifrom"));
        assert!(e.starts_with("w.yaml:10: generator \"name\"") && e.contains("uniform"), "{e}");
    }

    #[test]
    fn an_unknown_generator_is_pointed_at_in_its_own_step() {
        let e = error(&BASE.replace("          - id\n", "          - idd\n"));
        assert!(e.starts_with("w.yaml:21: operation \"write\": binds unknown generator \"idd\"; did you mean \"id\"?"), "{e}");
        let e = error(&BASE.replace("args: [id, name]", "args: [id, nmae]"));
        assert!(e.starts_with("w.yaml:17:") && e.contains("\"nmae\""), "{e}");
    }

    #[test]
    fn yaml_mistakes_keep_their_lines() {
        let e = error(&BASE.replace("  duration: 10s", "  duration: 10s\n  colour: red"));
        assert!(e.starts_with("w.yaml:25: unknown field `colour`"), "{e}");
        let e = error(&BASE.replace("  id: { type: int }", "  id: { type: int }\n  id: { type: bigint }"));
        assert!(e.starts_with("w.yaml:7:") && e.contains("duplicate"), "{e}");
        let e = error(&BASE.replace("  mix: { write: 1 }", "  mix: { write: 1 "));
        assert!(e.starts_with("w.yaml:2") && !e.contains(" at line "), "{e}");
    }
}
