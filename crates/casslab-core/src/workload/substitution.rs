//! Parameters of a workload file: the defaults under `params:`, overridden with `-P name=value`,
//! and their substitution into the text wherever `${name}` (or simple integer arithmetic such
//! as `${rows / 4}`) appears, line by line so that line numbers stay those of the file. YAML
//! comments are left as written (a `${name}` in a comment is text). Reading the substituted
//! text into the model is `parse.rs`'s job.

use super::workload_error::{Problem, WorkloadError};
use crate::yaml::{self, Value};
use std::collections::BTreeMap;

/// The final parameters: the file's defaults with `overrides` applied. Fails on an override
/// the file does not declare.
pub(crate) fn resolve_params(src: &str, file: &str, overrides: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, WorkloadError> {
    // The params section itself must not use ${...}; other sections may, so blank them out
    // (keeping line numbers) to read the defaults first.
    let doc = yaml::parse(&blank_placeholders(src)).map_err(|e| WorkloadError::yaml_in(file, src, e))?;
    let section = doc.entry("params");
    let mut params = BTreeMap::new();
    for e in section.map(|s| s.node.entries()).unwrap_or_default() {
        let value = match &e.node.value {
            Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) => e.node.scalar_text().unwrap_or_default(),
            _ => return Err(WorkloadError::new(file, Some(e.key_line), Problem::ParamNotScalar { name: e.key.clone() })),
        };
        params.insert(e.key.clone(), value);
    }
    for (k, v) in overrides {
        if !params.contains_key(k) {
            let known = params.keys().cloned().collect();
            return Err(WorkloadError::new(file, section.map(|s| s.key_line), Problem::UnknownOverride { name: k.clone(), value: v.clone(), known }));
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

/// `src` with every `${name}` (or `${name op k}`) replaced by its value; comments are kept as
/// written.
pub(crate) fn substitute(src: &str, file: &str, params: &BTreeMap<String, String>) -> Result<String, WorkloadError> {
    substitute_noting(src, file, params, &mut |_, _| {})
}

pub(crate) use super::workload_error::UsedParams;

/// As [`substitute`], also saying which parameters each line took its values from.
pub(crate) fn substitute_used(src: &str, file: &str, params: &BTreeMap<String, String>) -> Result<(String, UsedParams), WorkloadError> {
    let mut used = UsedParams::new();
    let text = substitute_noting(src, file, params, &mut |line, name| {
        used.entry(line).or_default().insert(name.to_string());
    })?;
    Ok((text, used))
}

/// `substitute`, calling `noted(line, name)` for every parameter whose value goes into a line.
fn substitute_noting(src: &str, file: &str, params: &BTreeMap<String, String>, noted: &mut dyn FnMut(usize, &str)) -> Result<String, WorkloadError> {
    let mut out = String::with_capacity(src.len());
    for (n, full) in src.lines().enumerate() {
        let err = |p: Problem| WorkloadError::new(file, Some(n + 1), p);
        let (line, comment) = full.split_at(comment_start(full).unwrap_or(full.len()));
        let mut rest = line;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let Some(j) = rest[i..].find('}') else {
                return Err(err(Problem::UnclosedPlaceholder));
            };
            let expr = rest[i + 2..i + j].trim();
            let (key, arith) = split_arithmetic(expr);
            let unknown = |name: &str| err(Problem::UnknownParameter { name: name.to_string(), known: params.keys().cloned().collect() });
            // a whole number may stand on the left of arithmetic: `${100 - write_share}`
            let number = arith.and_then(|_| key.parse::<i64>().ok()).map(|n| n.to_string());
            let Some(v) = params.get(key).or(number.as_ref()) else {
                return Err(unknown(key));
            };
            for name in [key].into_iter().chain(arith.map(|(_, k)| k)).filter(|name| params.contains_key(*name)) {
                noted(n + 1, name);
            }
            match arith {
                None => out.push_str(v),
                Some((op, k)) => match apply_arithmetic(v, op, k, params) {
                    Ok(r) => out.push_str(&r),
                    Err(Arith::UnknownOperand) => return Err(unknown(k)),
                    Err(Arith::Value { name, value }) => {
                        let name = if name.is_empty() { key.to_string() } else { name };
                        return Err(err(Problem::Arithmetic { expr: expr.to_string(), name, value }));
                    }
                },
            }
            rest = &rest[i + j + 1..];
        }
        out.push_str(rest);
        out.push_str(comment);
        out.push('\n');
    }
    Ok(out)
}

/// Where a YAML comment starts on `line`: a `#` at the start or after a space or tab, outside
/// quotes.
fn comment_start(line: &str) -> Option<usize> {
    let (mut single, mut double, mut prev) = (false, false, ' ');
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '#' if !single && !double && (prev == ' ' || prev == '\t') => return Some(i),
            _ => {}
        }
        prev = c;
    }
    None
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

/// Why `${a op b}` has no value.
enum Arith {
    /// `b` is neither a whole number nor a declared parameter.
    UnknownOperand,
    /// A parameter (`name`) whose value is not a whole number, or a result out of range.
    Value { name: String, value: String },
}

/// Integer arithmetic of a parameter value with a whole number or another parameter
/// (`/` rounds down).
fn apply_arithmetic(v: &str, op: char, rhs: &str, params: &BTreeMap<String, String>) -> Result<String, Arith> {
    let is_name = rhs.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_');
    if is_name && !params.contains_key(rhs) {
        return Err(Arith::UnknownOperand);
    }
    let lhs_err = || Arith::Value { name: String::new(), value: v.to_string() };
    let x: i64 = v.trim().parse().map_err(|_| lhs_err())?;
    let k: i64 = match params.get(rhs) {
        Some(p) => p.trim().parse().map_err(|_| Arith::Value { name: rhs.to_string(), value: p.clone() })?,
        None => rhs.parse().map_err(|_| Arith::Value { name: rhs.to_string(), value: rhs.to_string() })?,
    };
    let r = match op {
        '*' => x.checked_mul(k),
        '/' => x.checked_div(k),
        '+' => x.checked_add(k),
        _ => x.checked_sub(k),
    };
    r.map(|r| r.to_string()).ok_or_else(lhs_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_take_simple_arithmetic() {
        let params: BTreeMap<String, String> = [("rows".to_string(), "86400".to_string()), ("n".to_string(), "x".to_string())].into();
        assert_eq!(
            substitute("a: ${rows / 4}\nb: ${rows*2}\nc: ${ rows + 1 }\nd: ${rows}\ne: ${rows / rows}\n", "f", &params).unwrap(),
            "a: 21600\nb: 172800\nc: 86401\nd: 86400\ne: 1\n"
        );
        let e = substitute("a: 1\nb: ${n / 4}\n", "f", &params).unwrap_err().to_string();
        assert!(e.starts_with("f:2:") && e.contains("whole numbers"), "{e}");
        assert!(substitute("a: ${rows / 0}\n", "f", &params).is_err());
        assert_eq!(substitute("a: ${100 - rows}\n", "f", &params).unwrap(), format!("a: {}\n", 100 - params["rows"].parse::<i64>().unwrap()));
        assert!(substitute("a: ${100}\n", "f", &params).is_err(), "a number alone is not a parameter");
        let e = substitute("a: ${rowz}\n", "f", &params).unwrap_err().to_string();
        assert_eq!(e, "f:1: unknown parameter \"${rowz}\"; did you mean \"rows\"?; declare it under `params:`");
        assert_eq!(substitute("a: ${rows\n", "f", &params).unwrap_err().to_string(), "f:1: unclosed `${` (write `${name}`)");
    }

    #[test]
    fn an_undeclared_operand_is_an_unknown_parameter() {
        let params: BTreeMap<String, String> = [("rows".to_string(), "100000".to_string())].into();
        let e = substitute("a: 1\nb: ${rows * partitions}\n", "f", &params).unwrap_err().to_string();
        assert_eq!(e, "f:2: unknown parameter \"${partitions}\"; declare it under `params:`");
        let e = substitute("b: ${rows * 2x}\n", "f", &params).unwrap_err().to_string();
        assert!(e.contains("whole numbers"), "{e}");
    }

    #[test]
    fn comments_are_not_substituted() {
        let params: BTreeMap<String, String> = [("rows".to_string(), "5".to_string())].into();
        let src = "# use as ${name} anywhere\nrows: ${rows}   # (${rows * partitions})\ntext: \"a # ${rows}\"\ncql: SELECT x#${rows}\n";
        assert_eq!(substitute(src, "f", &params).unwrap(), "# use as ${name} anywhere\nrows: 5   # (${rows * partitions})\ntext: \"a # 5\"\ncql: SELECT x#5\n");
    }

    #[test]
    fn the_parameters_each_line_took_are_noted() {
        let params: BTreeMap<String, String> = [("rows", "100"), ("parts", "4"), ("ks", "k")].map(|(k, v)| (k.to_string(), v.to_string())).into();
        let (text, used) = substitute_used("keyspace: ${ks}\nn: 1 # ${rows}\nm: ${rows / parts}\nx: ${100 - rows}\n", "f", &params).unwrap();
        assert_eq!(text, "keyspace: k\nn: 1 # ${rows}\nm: 25\nx: 0\n");
        let names = |line: usize| used.get(&line).map(|s| s.iter().map(String::as_str).collect::<Vec<_>>()).unwrap_or_default();
        assert_eq!((names(1), names(2), names(3), names(4)), (vec!["ks"], vec![], vec!["parts", "rows"], vec!["rows"]));
    }

    #[test]
    fn defaults_are_overridden_and_unknown_overrides_refused() {
        let src = "keyspace: ks_${suffix}\nparams:\n  rows: 100\n  suffix: a\n  fast: true\nrun: { mix: { r: ${rows} } }\n";
        let p = resolve_params(src, "f", &[("rows".to_string(), "5".to_string())].into()).unwrap();
        assert_eq!(p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(), ["fast=true", "rows=5", "suffix=a"]);
        let e = resolve_params(src, "f", &[("rowz".to_string(), "5".to_string())].into()).unwrap_err().to_string();
        assert_eq!(e, "f:2: -P rowz=5: the workload has no parameter \"rowz\"; did you mean \"rows\"? (it has: fast, rows, suffix)");
        let e = resolve_params("params:\n  a: 1\n  b: [1, 2]\n", "f", &BTreeMap::new()).unwrap_err().to_string();
        assert_eq!(e, "f:3: parameter \"b\" must be a string, number or boolean");
    }

    #[test]
    fn placeholders_are_blanked_keeping_lines() {
        assert_eq!(blank_placeholders("a: ${x}\nb: { m: ${y} }\n"), "a: 0\nb: { m: 0 }\n");
    }
}
