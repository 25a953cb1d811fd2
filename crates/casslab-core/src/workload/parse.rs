//! Reading workload files: parameter substitution (`${name}`, overridable with `-P`), YAML
//! decoding into the model, and locating keys by line so every error can say `file:line`.

use super::error::WorkloadError;
use super::{Consistency, LoadPhase, Operation, RunPhase, Statement, Workload};
use crate::gen::GeneratorSpec;
use crate::suggest::did_you_mean;
use serde::Deserialize;
use std::collections::BTreeMap;
use crate::units::parse_duration_s;
use std::path::Path;

/// Page size used when an operation does not set one.
pub const DEFAULT_PAGE_SIZE: i32 = 5000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // `params` is read in a first pass (see `resolve_params`)
struct RawWorkload {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, serde_yaml::Value>,
    keyspace: String,
    replication: Option<String>,
    #[serde(default)]
    schema: Vec<String>,
    #[serde(default)]
    generators: BTreeMap<String, GeneratorSpec>,
    operations: BTreeMap<String, RawOp>,
    load: Option<RawLoad>,
    run: Option<RawRun>,
    #[serde(default)]
    events: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    cql: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    steps: Option<Vec<RawStep>>,
    consistency: Option<String>,
    serial_consistency: Option<String>,
    page_size: Option<i32>,
    idempotent: Option<bool>,
    partitions: Option<super::access::RawPartitions>,
    batch: Option<super::access::RawBatch>,
    timestamp: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    cql: String,
    #[serde(default)]
    args: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoad {
    op: String,
    count: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    mix: BTreeMap<String, f64>,
    warmup: Option<String>,
    duration: String,
}

#[derive(Deserialize)]
struct ParamsOnly {
    #[serde(default)]
    params: BTreeMap<String, serde_yaml::Value>,
}

/// Reads a workload from a built-in name or a file path and resolves it with `overrides`.
pub fn load_workload(name_or_path: &str, overrides: &BTreeMap<String, String>) -> Result<(Workload, String), WorkloadError> {
    if let Some(src) = super::builtin(name_or_path).or_else(|| super::scenario(name_or_path)) {
        let w = parse_workload(src, &format!("builtin:{name_or_path}"), overrides)?;
        return Ok((w, src.to_string()));
    }
    let path = Path::new(name_or_path);
    let src = std::fs::read_to_string(path).map_err(|e| {
        let hint = if !name_or_path.contains('/') && !name_or_path.ends_with(".yaml") {
            let names: Vec<&str> = super::builtin_names().collect();
            match did_you_mean(name_or_path, &names) {
                Some(s) => format!("no built-in workload or file named \"{name_or_path}\"; did you mean \"{s}\"? (`casslab workloads` lists them)"),
                None => format!("no built-in workload or file named \"{name_or_path}\" (`casslab workloads` lists the built-in ones)"),
            }
        } else {
            format!("cannot read workload file: {e}")
        };
        WorkloadError::new(name_or_path, None, hint)
    })?;
    let w = parse_workload(&src, name_or_path, overrides)?;
    Ok((w, src))
}

/// The workload text with every `${name}` replaced, and the final parameters: what
/// `parse_workload` reads after its first pass. Experiments patch this text per variant.
pub fn resolve_text(src: &str, file: &str, overrides: &BTreeMap<String, String>) -> Result<(String, BTreeMap<String, String>), WorkloadError> {
    let lines = LineIndex::new(src);
    let params = resolve_params(src, file, overrides, &lines)?;
    Ok((substitute(src, file, &params)?, params))
}

/// Parses workload text. `file` is only used in error messages.
pub fn parse_workload(src: &str, file: &str, overrides: &BTreeMap<String, String>) -> Result<Workload, WorkloadError> {
    let lines = LineIndex::new(src);
    let params = resolve_params(src, file, overrides, &lines)?;
    let text = substitute(src, file, &params)?;
    let raw: RawWorkload = serde_yaml::from_str(&text).map_err(|e| yaml_error(file, &e))?;

    let ops_line = lines.section("operations");
    let mut operations = Vec::new();
    for (name, op) in raw.operations {
        let line = lines.key_in(ops_line, &name).or(ops_line).unwrap_or(1);
        if let Some(sub) = crate::stats::SUB_OPS.iter().find(|s| name.ends_with(&format!(".{s}"))) {
            return Err(WorkloadError::new(file, Some(line), format!("operation \"{name}\": names ending in \".{sub}\" are reserved for the figures casslab records beside an operation; rename it")));
        }
        operations.push(build_op(file, &lines, name, op, line)?);
    }
    operations.sort_by_key(|o| o.line);

    let schema_line = lines.section("schema");
    let schema = raw
        .schema
        .into_iter()
        .map(|cql| {
            let line = lines.text_after(schema_line, first_words(&cql)).or(schema_line).unwrap_or(1);
            Statement { cql: cql.trim().trim_end_matches(';').to_string(), args: vec![], line }
        })
        .collect();

    let load = raw.load.map(|l| LoadPhase { op: l.op, count: l.count, line: lines.section("load").unwrap_or(1) });
    let run = match raw.run {
        None => None,
        Some(r) => {
            let run_line = lines.section("run");
            let dur = |key: &str, v: &str| -> Result<f64, WorkloadError> {
                parse_duration_s(v).map_err(|m| WorkloadError::new(file, lines.key_in(run_line, key).or(run_line), m.to_string()))
            };
            let duration_s = dur("duration", &r.duration)?;
            let warmup_s = match &r.warmup {
                Some(w) => dur("warmup", w)?,
                None => 0.0,
            };
            let mut mix: Vec<(String, f64)> = r.mix.into_iter().collect();
            mix.sort_by_key(|(n, _)| lines.key_in(lines.key_in(run_line, "mix"), n).unwrap_or(usize::MAX));
            Some(RunPhase { mix, warmup_s, duration_s, line: run_line.unwrap_or(1) })
        }
    };

    let events_line = lines.section("events");
    let events = raw
        .events
        .iter()
        .map(|spec| {
            let line = lines.text_after(events_line, spec.trim()).or(events_line);
            crate::events::parse_event(spec).map_err(|m| WorkloadError::new(file, line, m.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;

    let w = Workload {
        name: raw.name.unwrap_or_else(|| default_name(file)),
        description: raw.description.unwrap_or_default(),
        origin: file.to_string(),
        params,
        keyspace: raw.keyspace.trim().to_string(),
        replication: raw.replication,
        schema,
        generators: raw.generators,
        operations,
        load,
        run,
        events,
    };
    super::validate::validate(&w, file, &lines)?;
    Ok(w)
}

fn build_op(file: &str, lines: &LineIndex, name: String, op: RawOp, line: usize) -> Result<Operation, WorkloadError> {
    let err = |key: &str, msg: String| WorkloadError::new(file, lines.key_in(Some(line), key).or(Some(line)), msg);
    let statements = match (op.cql, op.steps) {
        (Some(cql), None) => {
            let l = lines.key_in(Some(line), "cql").unwrap_or(line);
            vec![Statement { cql: cql.trim().to_string(), args: op.args, line: l }]
        }
        (None, Some(steps)) if !steps.is_empty() => {
            if !op.args.is_empty() {
                return Err(err("args", format!("operation \"{name}\" has `steps`; put `args` inside each step")));
            }
            let mut from = Some(line);
            let mut v = Vec::new();
            for s in steps {
                let l = lines.key_in(from, "cql").unwrap_or(line);
                from = Some(l);
                v.push(Statement { cql: s.cql.trim().to_string(), args: s.args, line: l });
            }
            v
        }
        (Some(_), Some(_)) => return Err(err("steps", format!("operation \"{name}\" has both `cql` and `steps`; keep one"))),
        _ => return Err(err("cql", format!("operation \"{name}\" needs `cql: <statement>` (or a non-empty `steps:` list)"))),
    };
    let cl = |key: &str, v: Option<String>, default: Option<Consistency>| -> Result<Option<Consistency>, WorkloadError> {
        match v {
            None => Ok(default),
            Some(s) => Consistency::parse(&s).map(Some).ok_or_else(|| {
                let sugg = did_you_mean(&s.to_ascii_uppercase(), Consistency::NAMES)
                    .map(|x| format!("; did you mean \"{x}\"?"))
                    .unwrap_or_default();
                err(key, format!("unknown consistency level \"{s}\"{sugg} (one of {})", Consistency::NAMES.join(", ")))
            }),
        }
    };
    let consistency = cl("consistency", op.consistency, Some(Consistency::LocalQuorum))?.unwrap();
    let serial_consistency = cl("serial_consistency", op.serial_consistency, None)?;
    if consistency.is_serial() {
        return Err(err("consistency", "SERIAL/LOCAL_SERIAL belong in `serial_consistency`, not `consistency`".into()));
    }
    if let Some(sc) = serial_consistency {
        if !sc.is_serial() {
            return Err(err("serial_consistency", "`serial_consistency` must be SERIAL or LOCAL_SERIAL".into()));
        }
    }
    let page_size = op.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if page_size <= 0 {
        return Err(err("page_size", format!("page_size must be a positive number of rows, not {page_size}")));
    }
    let idempotent = op.idempotent.unwrap_or_else(|| statements.iter().all(|s| crate::cql::is_idempotent(&s.cql)));
    let raw = super::access::RawAccess { partitions: op.partitions, batch: op.batch, timestamp: op.timestamp };
    let access = super::access::build_access(file, lines, &name, line, &statements, raw)?;
    Ok(Operation {
        name,
        statements,
        consistency,
        serial_consistency,
        page_size,
        idempotent,
        line,
        partitions: access.partitions,
        batch: access.batch,
        client_timestamp: access.client_timestamp,
    })
}

fn resolve_params(
    src: &str,
    file: &str,
    overrides: &BTreeMap<String, String>,
    lines: &LineIndex,
) -> Result<BTreeMap<String, String>, WorkloadError> {
    // The params section itself must not use ${...}; other sections may, so blank them out
    // (keeping line numbers) to read the defaults first.
    let blanked = blank_placeholders(src);
    let p: ParamsOnly = serde_yaml::from_str(&blanked).map_err(|e| yaml_error(file, &e))?;
    let mut params = BTreeMap::new();
    for (k, v) in p.params {
        let s = match v {
            serde_yaml::Value::String(s) => s,
            serde_yaml::Value::Number(n) => n.to_string(),
            serde_yaml::Value::Bool(b) => b.to_string(),
            _ => {
                return Err(WorkloadError::new(
                    file,
                    lines.key_in(lines.section("params"), &k),
                    format!("parameter \"{k}\" must be a string, number or boolean"),
                ))
            }
        };
        params.insert(k, s);
    }
    for (k, v) in overrides {
        if !params.contains_key(k) {
            let known: Vec<&str> = params.keys().map(|s| s.as_str()).collect();
            let sugg = did_you_mean(k, &known).map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default();
            return Err(WorkloadError::new(
                file,
                lines.section("params"),
                format!("-P {k}={v}: the workload has no parameter \"{k}\"{sugg} (it has: {})", known.join(", ")),
            ));
        }
        params.insert(k.clone(), v.clone());
    }
    Ok(params)
}

fn blank_placeholders(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        match rest[i..].find('}') {
            Some(j) => {
                out.push('0');
                rest = &rest[i + j + 1..];
            }
            None => {
                rest = &rest[i..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

fn substitute(src: &str, file: &str, params: &BTreeMap<String, String>) -> Result<String, WorkloadError> {
    let mut out = String::with_capacity(src.len());
    for (n, line) in src.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let Some(j) = rest[i..].find('}') else {
                return Err(WorkloadError::new(file, Some(n + 1), "unclosed `${` (write `${name}`)"));
            };
            let expr = rest[i + 2..i + j].trim();
            let (key, arith) = split_arithmetic(expr);
            match params.get(key) {
                Some(v) => match arith {
                    None => out.push_str(v),
                    Some((op, k)) => out.push_str(&apply_arithmetic(v, op, k, params).ok_or_else(|| {
                        WorkloadError::new(file, Some(n + 1), format!("`${{{expr}}}`: arithmetic needs whole numbers, and \"{key}\" is \"{v}\" (division by 0 is not allowed either)"))
                    })?),
                },
                None => {
                    let known: Vec<&str> = params.keys().map(|s| s.as_str()).collect();
                    let sugg = did_you_mean(key, &known).map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default();
                    return Err(WorkloadError::new(
                        file,
                        Some(n + 1),
                        format!("unknown parameter \"${{{key}}}\"{sugg}; declare it under `params:`"),
                    ));
                }
            }
            rest = &rest[i + j + 1..];
        }
        out.push_str(rest);
        out.push('\n');
    }
    Ok(out)
}

/// Splits `name * 4` into ("name", Some(('*', "4"))); a plain `name` has no arithmetic.
fn split_arithmetic(expr: &str) -> (&str, Option<(char, &str)>) {
    for op in ['*', '/', '+', '-'] {
        if let Some(i) = expr.find(op) {
            return (expr[..i].trim(), Some((op, expr[i + 1..].trim())));
        }
    }
    (expr, None)
}

/// Integer arithmetic of a parameter value with a whole number or another parameter
/// (`/` rounds down).
fn apply_arithmetic(v: &str, op: char, rhs: &str, params: &BTreeMap<String, String>) -> Option<String> {
    let x: i64 = v.trim().parse().ok()?;
    let k: i64 = rhs.parse().ok().or_else(|| params.get(rhs)?.trim().parse().ok())?;
    let r = match op {
        '*' => x.checked_mul(k)?,
        '/' => x.checked_div(k)?,
        '+' => x.checked_add(k)?,
        _ => x.checked_sub(k)?,
    };
    Some(r.to_string())
}

fn yaml_error(file: &str, e: &serde_yaml::Error) -> WorkloadError {
    let line = e.location().map(|l| l.line());
    let mut msg = e.to_string();
    // serde_yaml appends " at line L column C"; the prefix already says where.
    if let Some(i) = msg.find(" at line ") {
        msg.truncate(i);
    }
    WorkloadError::new(file, line, msg)
}

fn first_words(cql: &str) -> &str {
    let t = cql.trim();
    let end = t.char_indices().nth(30).map(|(i, _)| i).unwrap_or(t.len());
    &t[..end]
}

fn default_name(file: &str) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.trim_end_matches(".yaml").trim_end_matches(".yml").to_string()
}

/// Finds the lines of keys in the source text, for error messages. Heuristic but cheap:
/// YAML keys are looked up by indentation and text, not by a second parser.
pub(crate) struct LineIndex {
    lines: Vec<String>,
}

impl LineIndex {
    pub fn new(src: &str) -> Self {
        LineIndex { lines: src.lines().map(|l| l.to_string()).collect() }
    }

    /// The line of a top-level `name:` key.
    pub fn section(&self, name: &str) -> Option<usize> {
        self.lines.iter().position(|l| key_of(l) == Some(name) && !l.starts_with([' ', '\t'])).map(|i| i + 1)
    }

    /// The first line after `from` (inside its block) where `key` appears as a key,
    /// in block (`key:`) or flow (`{ key: ... }`) style.
    pub fn key_in(&self, from: Option<usize>, key: &str) -> Option<usize> {
        let start = from?;
        let indent = indent_of(self.lines.get(start - 1)?);
        let pat = [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")];
        for (i, l) in self.lines.iter().enumerate().skip(start - 1) {
            if i + 1 > start && !l.trim().is_empty() && !l.trim_start().starts_with('#') && indent_of(l) <= indent && !l.trim_start().starts_with('-') {
                break;
            }
            let body = strip_comment(l);
            for p in &pat {
                if let Some(pos) = body.find(p.as_str()) {
                    let before = body[..pos].chars().last();
                    if before.is_none_or(|c| c == ' ' || c == '{' || c == ',' || c == '-' || c == '\t') {
                        return Some(i + 1);
                    }
                }
            }
        }
        None
    }

    /// The first line at or after `from` that contains `text`.
    pub fn text_after(&self, from: Option<usize>, text: &str) -> Option<usize> {
        let start = from.unwrap_or(1);
        self.lines.iter().enumerate().skip(start - 1).find(|(_, l)| l.contains(text)).map(|(i, _)| i + 1)
    }

    /// The first line at or after `from` (inside its block) where `word` appears as a whole word.
    pub fn word_after(&self, from: usize, word: &str) -> Option<usize> {
        let indent = indent_of(self.lines.get(from - 1)?);
        for (i, l) in self.lines.iter().enumerate().skip(from - 1) {
            if i + 1 > from && !l.trim().is_empty() && indent_of(l) <= indent && !l.trim_start().starts_with('-') {
                break;
            }
            if has_word(strip_comment(l), word) {
                return Some(i + 1);
            }
        }
        None
    }
}

fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let t = t.strip_prefix("- ").unwrap_or(t);
    let i = t.find(':')?;
    Some(t[..i].trim().trim_matches('"').trim_matches('\''))
}

fn indent_of(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

fn strip_comment(l: &str) -> &str {
    match l.find(" #") {
        Some(i) => &l[..i],
        None if l.trim_start().starts_with('#') => "",
        None => l,
    }
}

fn has_word(hay: &str, word: &str) -> bool {
    let is_w = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(word).any(|(i, _)| {
        let before = hay[..i].chars().last();
        let after = hay[i + word.len()..].chars().next();
        !before.is_some_and(is_w) && !after.is_some_and(is_w)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_finds_nested_and_flow_keys() {
        let src = "name: x\nrun:\n  mix: { read: 1, update: 2 }\n  duration: 10s\noperations:\n  read:\n    cql: SELECT\n";
        let li = LineIndex::new(src);
        assert_eq!(li.section("run"), Some(2));
        assert_eq!(li.key_in(li.section("run"), "duration"), Some(4));
        assert_eq!(li.key_in(li.section("run"), "update"), Some(3));
        assert_eq!(li.key_in(li.section("operations"), "read"), Some(6));
        assert_eq!(li.key_in(li.section("run"), "cql"), None, "must not leave the block");
    }

    #[test]
    fn parameters_take_simple_arithmetic() {
        let params: BTreeMap<String, String> = [("rows".to_string(), "86400".to_string()), ("n".to_string(), "x".to_string())].into();
        assert_eq!(substitute("a: ${rows / 4}\nb: ${rows*2}\nc: ${ rows + 1 }\nd: ${rows}\ne: ${rows / rows}\n", "f", &params).unwrap(), "a: 21600\nb: 172800\nc: 86401\nd: 86400\ne: 1\n");
        let e = substitute("a: ${n / 4}\n", "f", &params).unwrap_err();
        assert!(e.to_string().contains("whole numbers"), "{e}");
        assert!(substitute("a: ${rows / 0}\n", "f", &params).is_err());
    }

    #[test]
    fn events_are_parsed_with_their_lines() {
        let src = "keyspace: ks\nparams:\n  at: 5s\noperations:\n  r:\n    cql: SELECT now() FROM system.local\nrun:\n  mix: { r: 1 }\n  duration: 10s\nevents:\n  - ${at} kill node2\n  - 8s start node2\n";
        let w = parse_workload(src, "f.yaml", &BTreeMap::new()).unwrap();
        let labels: Vec<(u64, String)> = w.events.iter().map(|e| (e.at_ms, e.label())).collect();
        assert_eq!(labels, [(5_000, "kill node2".to_string()), (8_000, "start node2".to_string())]);
        let bad = src.replace("8s start", "8s strat");
        let e = parse_workload(&bad, "f.yaml", &BTreeMap::new()).unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:12:") && e.contains("did you mean \"start\""), "{e}");
    }

    #[test]
    fn placeholders_are_blanked_keeping_lines() {
        assert_eq!(blank_placeholders("a: ${x}\nb: { m: ${y} }\n"), "a: 0\nb: { m: 0 }\n");
    }
}
