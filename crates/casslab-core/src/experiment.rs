//! Experiment files: a base workload and named variants of it (schema, operations, generators,
//! parameters, phases, consistency, page size, table options, client settings), run several
//! times each, interleaved. This module reads the file and builds each variant's workload by
//! patching the base workload's resolved YAML; running and analysing live elsewhere.

use crate::units::parse_duration_s;
use crate::workload::{builtin, parse_workload, resolve_text, Workload, WorkloadError};
use serde_yaml::{Mapping, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// One variant, ready to run.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub workload: Workload,
    /// The variant's complete workload YAML (saved with each of its runs).
    pub source: String,
    pub concurrency: Option<usize>,
    pub rate_per_s: Option<f64>,
}

/// A parsed experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    pub origin: String,
    pub repetitions: u32,
    /// Each run loads its data afresh (true) or reuses what its variant loaded before.
    pub fresh_load: bool,
    /// Window length of the bootstrap analysis.
    pub window_s: f64,
    /// The first variant is the baseline.
    pub variants: Vec<Variant>,
}

const EXPERIMENT_KEYS: &[&str] = &["name", "description", "workload", "repetitions", "load", "window", "params", "run", "variants", "shared_keyspace"];
const VARIANT_KEYS: &[&str] =
    &["params", "schema", "operations", "generators", "load", "run", "consistency", "page_size", "table_options", "concurrency", "rate"];

fn err(file: &str, msg: impl Into<String>) -> WorkloadError {
    WorkloadError::new(file, None, msg)
}

fn line_of(src: &str, key: &str) -> Option<usize> {
    let pat = format!("{key}:");
    src.lines()
        .position(|l| l.trim_start().starts_with(&pat) || l.contains(&format!(" {pat}")) || l.contains(&format!("{{{pat}")))
        .map(|i| i + 1)
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn params_of(v: Option<&Value>, file: &str) -> Result<BTreeMap<String, String>, WorkloadError> {
    let mut out = BTreeMap::new();
    if let Some(Value::Mapping(m)) = v {
        for (k, v) in m {
            let k = scalar_text(k).unwrap_or_default();
            let v = scalar_text(v).ok_or_else(|| err(file, format!("params.{k}: give a string, number or boolean")))?;
            out.insert(k, v);
        }
    }
    Ok(out)
}

/// Reads an experiment file; `overrides` (-P) apply to every variant.
pub fn load_experiment(path: &Path, overrides: &BTreeMap<String, String>) -> Result<Experiment, WorkloadError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| err(&file, format!("cannot read experiment file: {e}")))?;
    let doc: Value = serde_yaml::from_str(&src).map_err(|e| WorkloadError::new(&file, e.location().map(|l| l.line()), e.to_string()))?;
    let Value::Mapping(top) = &doc else { return Err(err(&file, "an experiment file is a YAML mapping")) };
    for k in top.keys() {
        let k = scalar_text(k).unwrap_or_default();
        if !EXPERIMENT_KEYS.contains(&k.as_str()) {
            return Err(WorkloadError::new(&file, line_of(&src, &k), format!("unknown key `{k}` (known: {})", EXPERIMENT_KEYS.join(", "))));
        }
    }
    let get = |k: &str| top.get(Value::String(k.into()));
    let workload_ref = get("workload").and_then(scalar_text).ok_or_else(|| err(&file, "`workload:` is missing: a built-in name or a file path"))?;
    let (base_src, base_origin) = match builtin(&workload_ref) {
        Some(s) => (s.to_string(), format!("builtin:{workload_ref}")),
        None => {
            let p = path.parent().unwrap_or(Path::new(".")).join(&workload_ref);
            let s = std::fs::read_to_string(&p).map_err(|e| WorkloadError::new(&file, line_of(&src, "workload"), format!("cannot read workload {}: {e}", p.display())))?;
            (s, p.display().to_string())
        }
    };
    let repetitions = match get("repetitions") {
        None => 3,
        Some(v) => v.as_u64().filter(|n| (1..=1000).contains(n)).ok_or_else(|| WorkloadError::new(&file, line_of(&src, "repetitions"), "repetitions: give a whole number from 1 to 1000"))? as u32,
    };
    let fresh_load = match get("load").and_then(scalar_text).as_deref() {
        None | Some("shared") => false,
        Some("fresh") => true,
        Some(o) => return Err(WorkloadError::new(&file, line_of(&src, "load"), format!("load: \"{o}\" is neither `shared` nor `fresh`"))),
    };
    let window_s = match get("window").and_then(scalar_text) {
        None => 60.0,
        Some(w) => parse_duration_s(&w).map_err(|m| WorkloadError::new(&file, line_of(&src, "window"), m.to_string()))?,
    };
    let shared_keyspace = get("shared_keyspace").and_then(|v| v.as_bool()).unwrap_or(false);
    let common_params = params_of(get("params"), &file)?;
    let common_run = get("run").cloned();
    let Some(Value::Mapping(variants_map)) = get("variants") else {
        return Err(err(&file, "`variants:` is missing: a mapping of variant name → changes (the first is the baseline)"));
    };
    if variants_map.len() < 2 {
        return Err(WorkloadError::new(&file, line_of(&src, "variants"), "an experiment needs at least two variants to compare"));
    }

    let mut variants = Vec::new();
    for (name, patch) in variants_map {
        let name = scalar_text(name).unwrap_or_default();
        let vfile = format!("{file} (variant {name})");
        let empty = Mapping::new();
        let patch = match patch {
            Value::Mapping(m) => m,
            Value::Null => &empty,
            _ => return Err(err(&vfile, "a variant is a mapping of changes (or empty for the base as it is)")),
        };
        for k in patch.keys() {
            let k = scalar_text(k).unwrap_or_default();
            if !VARIANT_KEYS.contains(&k.as_str()) {
                return Err(WorkloadError::new(&file, line_of(&src, &k), format!("variant {name}: unknown key `{k}` (known: {})", VARIANT_KEYS.join(", "))));
            }
        }
        let pget = |k: &str| patch.get(Value::String(k.into()));
        let mut params = common_params.clone();
        params.extend(params_of(pget("params"), &vfile)?);
        params.extend(overrides.clone());
        // variants get keyspaces of their own unless told to share, so their schemas never meet
        let base_params = resolve_text(&base_src, &base_origin, &BTreeMap::new())?.1;
        if !shared_keyspace && base_params.contains_key("keyspace") && !overrides.contains_key("keyspace") {
            let ks = params.get("keyspace").cloned().unwrap_or_else(|| base_params["keyspace"].clone());
            params.insert("keyspace".into(), format!("{ks}_{}", sanitize(&name)));
        }
        let (text, final_params) = resolve_text(&base_src, &base_origin, &params)?;
        let mut wl: Value = serde_yaml::from_str(&text).map_err(|e| err(&vfile, e.to_string()))?;
        let Value::Mapping(w) = &mut wl else { return Err(err(&vfile, "the base workload is not a mapping")) };
        let substitute = |v: &Value| -> Result<Value, WorkloadError> {
            let t = serde_yaml::to_string(v).map_err(|e| err(&vfile, e.to_string()))?;
            let mut out = t.clone();
            for (k, val) in &final_params {
                out = out.replace(&format!("${{{k}}}"), val);
            }
            serde_yaml::from_str(&out).map_err(|e| err(&vfile, e.to_string()))
        };
        w.insert("params".into(), Value::Mapping(final_params.iter().map(|(k, v)| (Value::String(k.clone()), Value::String(v.clone()))).collect()));
        if let Some(run) = &common_run {
            merge_into(w, "run", &substitute(run)?);
        }
        if let Some(s) = pget("schema") {
            w.insert("schema".into(), substitute(s)?);
        }
        for section in ["generators", "operations", "run"] {
            if let Some(v) = pget(section) {
                merge_into(w, section, &substitute(v)?);
            }
        }
        if let Some(l) = pget("load") {
            w.insert("load".into(), substitute(l)?);
        }
        for key in ["consistency", "page_size"] {
            if let Some(v) = pget(key) {
                if let Some(Value::Mapping(ops)) = w.get_mut("operations") {
                    for (_, op) in ops.iter_mut() {
                        if let Value::Mapping(op) = op {
                            op.insert(key.into(), v.clone());
                        }
                    }
                }
            }
        }
        if let Some(opts) = pget("table_options").and_then(scalar_text) {
            if let Some(Value::Sequence(stmts)) = w.get_mut("schema") {
                for st in stmts.iter_mut() {
                    if let Value::String(cql) = st {
                        *cql = with_table_options(cql, &opts);
                    }
                }
            }
        }
        w.insert("name".into(), Value::String(name.to_string()));
        let source = serde_yaml::to_string(&wl).map_err(|e| err(&vfile, e.to_string()))?;
        let workload = parse_workload(&source, &vfile, &BTreeMap::new())?;
        let concurrency = pget("concurrency").and_then(|v| v.as_u64()).map(|n| n.max(1) as usize);
        let rate_per_s = pget("rate").and_then(|v| v.as_f64());
        variants.push(Variant { name, workload, source, concurrency, rate_per_s });
    }

    Ok(Experiment {
        name: get("name").and_then(scalar_text).unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()),
        description: get("description").and_then(scalar_text).unwrap_or_default(),
        origin: file,
        repetitions,
        fresh_load,
        window_s,
        variants,
    })
}

/// Merges mapping `patch` into `w[section]` key by key (whole entries replaced).
fn merge_into(w: &mut Mapping, section: &str, patch: &Value) {
    match (w.get_mut(section), patch) {
        (Some(Value::Mapping(base)), Value::Mapping(p)) => {
            for (k, v) in p {
                base.insert(k.clone(), v.clone());
            }
        }
        _ => {
            w.insert(section.into(), patch.clone());
        }
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// Adds table options to a CREATE TABLE statement (`WITH …`, or `AND …` after an existing WITH).
pub fn with_table_options(cql: &str, opts: &str) -> String {
    let upper = cql.to_ascii_uppercase();
    if !upper.trim_start().starts_with("CREATE TABLE") {
        return cql.to_string();
    }
    // the column list ends at the parenthesis matching the first one
    let mut depth = 0;
    let mut close = cql.len();
    for (i, c) in cql.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = i;
                    break;
                }
            }
            _ => {}
        }
    }
    if upper[close..].contains(" WITH ") {
        format!("{} AND {opts}", cql.trim_end().trim_end_matches(';'))
    } else {
        format!("{} WITH {opts}", cql.trim_end().trim_end_matches(';'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn table_options_are_added_once() {
        assert_eq!(with_table_options("CREATE TABLE t (k int PRIMARY KEY)", "compaction = {'class': 'LeveledCompactionStrategy'}"), "CREATE TABLE t (k int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy'}");
        assert_eq!(with_table_options("CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)", "gc_grace_seconds = 0"), "CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC) AND gc_grace_seconds = 0");
        assert_eq!(with_table_options("CREATE INDEX i ON t (v)", "x = 1"), "CREATE INDEX i ON t (v)");
    }

    #[test]
    fn variants_patch_the_base_workload() {
        let f = file(
            "name: consistency
workload: kv
repetitions: 2
load: fresh
window: 10s
params: { rows: 100 }
run: { duration: 20s, warmup: 2s }
variants:
  one:
    consistency: LOCAL_ONE
  quorum:
    consistency: QUORUM
    params: { valuesize: 200 }
    concurrency: 16
    rate: 500
    table_options: \"compaction = {'class': 'LeveledCompactionStrategy'}\"
    operations:
      read:
        cql: SELECT key, value FROM kv WHERE key = ?
        args: [key]
",
        );
        let e = load_experiment(f.path(), &BTreeMap::new()).unwrap();
        assert_eq!((e.repetitions, e.fresh_load, e.window_s), (2, true, 10.0));
        assert_eq!(e.variants.len(), 2);
        let (one, q) = (&e.variants[0], &e.variants[1]);
        assert_eq!(one.name, "one");
        assert_eq!(one.workload.keyspace, "casslab_kv_one");
        assert_eq!(q.workload.keyspace, "casslab_kv_quorum");
        assert_eq!(one.workload.params["rows"], "100");
        assert_eq!(q.workload.params["valuesize"], "200");
        assert!(one.workload.operations.iter().all(|o| o.consistency == crate::workload::Consistency::LocalOne));
        assert!(q.workload.operations.iter().all(|o| o.consistency == crate::workload::Consistency::Quorum), "set on replaced ops too");
        assert_eq!(q.workload.operation("read").unwrap().statements[0].cql, "SELECT key, value FROM kv WHERE key = ?");
        assert!(q.workload.schema[0].cql.contains("LeveledCompactionStrategy"));
        assert!(!one.workload.schema[0].cql.contains("Leveled"));
        assert_eq!((q.concurrency, q.rate_per_s), (Some(16), Some(500.0)));
        assert_eq!(one.workload.run.as_ref().unwrap().duration_s, 20.0);
        assert_eq!(one.workload.load.as_ref().unwrap().count, 100);
    }

    #[test]
    fn the_shipped_experiments_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let tiny: BTreeMap<String, String> = [("rows".to_string(), "100".to_string())].into();
        let e = load_experiment(&dir.join("bins-list-vs-columns.yaml"), &tiny).unwrap();
        assert_eq!(e.variants[1].workload.operation("update").unwrap().statements[0].args.len(), 101);
        let e = load_experiment(&dir.join("compaction-strategies.yaml"), &tiny).unwrap();
        assert_eq!(e.variants.len(), 3);
        assert!(e.variants[2].workload.schema[0].cql.contains("UnifiedCompactionStrategy"));
        let small: BTreeMap<String, String> = [("rows_per_partition".to_string(), "864".to_string())].into();
        let e = load_experiment(&dir.join("partition-read-chunks.yaml"), &small).unwrap();
        let pages: Vec<i32> = e.variants.iter().map(|v| v.workload.operation("read_day").unwrap().page_size).collect();
        assert_eq!(pages, vec![864, 432, 216, 108]);
        assert!(e.variants.iter().all(|v| v.workload.keyspace == "casslab_wide"), "shared keyspace");
        assert_eq!(e.variants[0].workload.load.as_ref().unwrap().count, 864 * 7);
    }

    #[test]
    fn mistakes_are_reported() {
        let e = load_experiment(file("workload: kv\nvariants:\n  a: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("at least two variants"), "{e}");
        let e = load_experiment(file("workload: kv\nvariants:\n  a: {}\n  b: { colour: red }\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("unknown key `colour`") && e.line == Some(4), "{e}");
        let e = load_experiment(file("workload: kv\nvariants:\n  a: {}\n  b:\n    run: { mix: { nope: 1 } }\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("variant b") && e.to_string().contains("unknown operation \"nope\""), "{e}");
        let e = load_experiment(file("variants: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("`workload:` is missing"), "{e}");
    }
}
