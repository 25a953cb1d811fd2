//! Experiment files: a base workload and named variants of it (schema, operations, generators,
//! parameters, phases, consistency, page size, table options, client settings), run several
//! times each in a recorded order (`order`: settling, an unmeasured round, counterbalanced or
//! shuffled repetitions), and where latency means something: a fixed `rate` or an in-flight
//! `concurrency` for every variant. A variant may name a base workload of its own
//! (`workload:`, e.g. the Redis version of a CQL workload), and `rates:` runs every variant at
//! each of several fixed rates (variants `name@rate`), judged against an `sla:`. This module
//! reads the file and builds each variant's workload by patching its base workload's resolved
//! YAML; running and analysing live elsewhere.

mod builtin;
pub mod checks;
pub mod design;
mod order;

pub use builtin::{builtin_experiment, experiment_source, experiment_summary, BUILTIN_EXPERIMENTS};
pub use design::{Design, Layout};
pub use order::{schedule, Order, RunOrder};

use crate::cluster::ServerSpec;
use crate::load_shape::LoadShape;
use crate::workload::{builtin, parse_workload, resolve_text, Problem, Workload, WorkloadError};
use crate::yaml::{self, Entry, Node, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// One variant, ready to run.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    /// The variant as the file names it (`name` without its `@rate`).
    pub base: String,
    pub workload: Workload,
    /// The variant's complete workload YAML (saved with each of its runs).
    pub source: String,
    pub concurrency: Option<usize>,
    /// The variant's own rate (a level or a schedule), over the experiment's and the command
    /// line's.
    pub rate: Option<LoadShape>,
    /// `hosts:` the variant's own cluster (contact points), where it is not the run's: one set
    /// of hosts per variant on clusters casslab does not start.
    pub hosts: Vec<String>,
    /// `translate:` rewrites of the addresses the variant's own cluster advertises (`from` →
    /// `to`), as `--translate` does for the run's.
    pub translate: Vec<(String, String)>,
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
    /// What runs before the measured repetitions, and their order.
    pub run_order: RunOrder,
    /// The rate (a level or a schedule) of every variant that sets none.
    pub rate: Option<LoadShape>,
    /// Requests in flight for every variant that sets none.
    pub concurrency: Option<usize>,
    /// The first variant is the baseline.
    pub variants: Vec<Variant>,
    /// `rates:` every variant ran at each of these fixed rates (ops/s), in this order.
    pub rates: Vec<f64>,
    /// `sla:` what a rate must meet (`p99 < 5ms`), as written.
    pub sla: Option<String>,
    /// How many blocks it runs, and what it judges (`repetitions:`, `precision:`, `budget:`,
    /// `judge:`, `equivalence:`).
    pub design: DesignKeys,
}

/// The keys of an experiment file that decide how long it runs and what it judges; `None`
/// where the file leaves them to the command line and the defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DesignKeys {
    /// `repetitions: N`: a fixed number of blocks (otherwise blocks run until the precision).
    pub repetitions: Option<u32>,
    /// `precision: 5%`: half the width of a judged change's interval that settles it.
    pub precision: Option<f64>,
    /// `budget: 20m`: the most the experiment may take, in seconds.
    pub budget_s: Option<f64>,
    /// `judge: [read.p99, …]`: the figures judged, as written (OP.METRIC).
    pub judge: Vec<String>,
    /// `equivalence: 5%`: the margin within which two variants are equivalent.
    pub equivalence: Option<f64>,
    /// `family: experiment` (true) holds the confidence over every comparison with the
    /// baseline together; `family: comparison` (false, the default) over each one's figures.
    pub family_wide: Option<bool>,
    /// The file's `run:` sets the warm-up / the measured time of every run.
    pub sets_warmup: bool,
    pub sets_duration: bool,
    /// `design: simultaneous|blocks`: when the variants run; `None`: the default.
    pub design: Option<Design>,
}

/// The figures `judge:` may name after the operation's dot.
pub const JUDGED_METRICS: &[&str] = &["ops_s", "mean", "p50", "p95", "p99", "p999", "p99_typical"];

/// Reads the design keys (see [`DesignKeys`]).
fn design_keys(file: &str, doc: &Node) -> Result<DesignKeys, WorkloadError> {
    let err = |key: &str, p: Problem| WorkloadError::new(file, doc.key_line(key), p);
    let expected = |key: &str, expected: &'static str| err(key, Problem::Expected { key: key.into(), expected });
    let invalid = |key: &str, problem: String| err(key, Problem::Invalid { key: key.into(), problem });
    let get = |k: &str| doc.get(k);
    // each value checked as its flag is (`checks`)
    let checked = |key: &'static str, check: fn(&str) -> Result<f64, String>| -> Result<Option<f64>, WorkloadError> {
        get(key).and_then(Node::scalar_text).map(|t| check(&t).map_err(|p| invalid(key, p))).transpose()
    };
    let repetitions = match get("repetitions") {
        None => None,
        Some(v) => Some(repetitions_of(v).map_err(|p| invalid("repetitions", p))?),
    };
    let budget_s = checked("budget", checks::budget_s)?;
    let judge = match get("judge") {
        None => Vec::new(),
        Some(n) => {
            let items: Option<Vec<String>> = n.items().iter().map(Node::scalar_text).collect();
            let items = items.filter(|i| !i.is_empty()).ok_or_else(|| expected("judge", "a list of figures OP.METRIC, e.g. [read.p99, read.p50]"))?;
            for i in &items {
                checks::figure(i).map_err(|p| invalid("judge", p))?;
            }
            items
        }
    };
    let run = get("run");
    let sets = |k: &str| run.is_some_and(|r| r.get(k).is_some());
    let design = match get("design").and_then(Node::scalar_text) {
        None => None,
        Some(d) => Some(Design::parse(&d).ok_or_else(|| expected("design", "simultaneous (the variants at the same time) or blocks (one after the other)"))?),
    };
    let keys = DesignKeys {
        repetitions,
        precision: checked("precision", checks::precision)?,
        budget_s,
        judge,
        equivalence: checked("equivalence", checks::equivalence)?,
        family_wide: match get("family").and_then(Node::scalar_text).as_deref() {
            None => None,
            Some("experiment") => Some(true),
            Some("comparison") => Some(false),
            Some(_) => return Err(expected("family", "experiment (every comparison with the baseline together) or comparison (each on its own)")),
        },
        sets_warmup: sets("warmup"),
        sets_duration: sets("duration"),
        design,
    };
    if keys.repetitions.is_some() && (keys.precision.is_some() || keys.budget_s.is_some()) {
        return Err(expected(
            "repetitions",
            "either `repetitions:` (a fixed number of blocks) or `precision:`/`budget:` (blocks until the precision), not both",
        ));
    }
    Ok(keys)
}

const EXPERIMENT_KEYS: &[&str] = &[
    "name",
    "description",
    "workload",
    "repetitions",
    "load",
    "window",
    "params",
    "run",
    "variants",
    "shared_keyspace",
    "rate",
    "concurrency",
    "order",
    "order_seed",
    "unmeasured_round",
    "settle",
    "rates",
    "sla",
    "cluster",
    "precision",
    "budget",
    "judge",
    "equivalence",
    "design",
    "family",
];
const VARIANT_KEYS: &[&str] = &[
    "workload",
    "params",
    "schema",
    "operations",
    "generators",
    "load",
    "run",
    "events",
    "consistency",
    "page_size",
    "table_options",
    "concurrency",
    "rate",
    "cluster",
    "hosts",
    "translate",
];

/// A `rate:` of the experiment or a variant: a level above 0 (`300`, `300/s`) or a schedule,
/// read as a workload's `run.rate` is.
fn rate_of(node: Option<&Node>, file: &str, line: Option<usize>) -> Result<Option<LoadShape>, WorkloadError> {
    let Some(node) = node else { return Ok(None) };
    let text = yaml::to_string(node).map_err(|e| WorkloadError::yaml(file, line, e))?;
    let value: serde_json::Value = yaml::from_str(&text).map_err(|e| WorkloadError::yaml(file, line, e))?;
    let shape = crate::load_shape::from_value(&value).map_err(|source| WorkloadError::new(file, line, Problem::Shape { key: "rate", error: source }))?;
    if shape.peak() <= 0.0 {
        return Err(WorkloadError::new(
            file,
            line,
            Problem::Expected { key: "rate".into(), expected: "operations per second above 0 (e.g. 300), or a schedule" },
        ));
    }
    Ok(Some(shape))
}

/// A `concurrency:` of the experiment or a variant: requests in flight, checked as
/// `--concurrency` is (`limits::concurrency`).
fn concurrency_of(node: Option<&Node>, file: &str, line: Option<usize>) -> Result<Option<usize>, WorkloadError> {
    let Some(node) = node else { return Ok(None) };
    let problem = |problem: String| WorkloadError::new(file, line, Problem::Invalid { key: "concurrency".into(), problem });
    let n = node.as_f64().ok_or_else(|| problem("give a whole number of requests in flight, at least 1".into()))?;
    crate::limits::concurrency(n).map(Some).map_err(|e| problem(e.to_string()))
}

/// A `cluster:` (a server definition) of the experiment or a variant, read like a workload's.
fn cluster_of(node: Option<&Node>, file: &str, line: Option<usize>) -> Result<Option<ServerSpec>, WorkloadError> {
    let Some(node) = node else { return Ok(None) };
    let text = yaml::to_string(node).map_err(|e| WorkloadError::yaml(file, line, e))?;
    // lines of the snippet are not the file's: the error points at the `cluster:` key
    let spec: ServerSpec = yaml::from_str(&text).map_err(|e| {
        WorkloadError::new(
            file,
            line,
            Problem::Expected { key: format!("cluster ({e})"), expected: "a server definition, with the keys of a workload's `cluster:`" },
        )
    })?;
    Ok(Some(spec))
}

/// A base workload named in an experiment file (built-in, or a path relative to it): its text
/// and origin.
fn base_workload(path: &Path, name: &str, err: impl Fn(Problem) -> WorkloadError) -> Result<(String, String), WorkloadError> {
    match builtin(name) {
        Some(s) => Ok((s.to_string(), format!("builtin:{name}"))),
        None => {
            let p = path.parent().unwrap_or(Path::new(".")).join(name);
            if std::fs::canonicalize(&p).ok().is_some_and(|c| std::fs::canonicalize(path).ok() == Some(c)) {
                return Err(err(Problem::Invalid {
                    key: "workload".into(),
                    problem: format!("\"{name}\" is this experiment file itself; name the workload its variants change (a built-in name or a workload file)"),
                }));
            }
            let s = std::fs::read_to_string(&p).map_err(|source| err(Problem::Read { what: format!("workload {}", p.display()), error: source }))?;
            Ok((s, p.display().to_string()))
        }
    }
}

/// The `params:` of an experiment or a variant, as text.
fn params_of(v: Option<&Node>, file: &str) -> Result<BTreeMap<String, String>, WorkloadError> {
    let mut out = BTreeMap::new();
    for e in v.map(Node::entries).unwrap_or_default() {
        let value = e.node.scalar_text().ok_or_else(|| WorkloadError::new(file, Some(e.key_line), Problem::ParamNotScalar { name: e.key.clone() }))?;
        out.insert(e.key.clone(), value);
    }
    Ok(out)
}

/// Reads an experiment file; `overrides` (-P) apply to every variant.
pub fn load_experiment(path: &Path, overrides: &BTreeMap<String, String>) -> Result<Experiment, WorkloadError> {
    let (file, src) = experiment_source(path)
        .map_err(|source| WorkloadError::new(&path.display().to_string(), None, Problem::Read { what: "experiment file".into(), error: source }))?;
    let doc = read_experiment(&file, &src)?;
    let s = Settings::read(&file, path, &doc)?;
    let mut variants = Vec::new();
    for entry in s.variants.entries() {
        variants.push(build_variant(&s, entry, overrides)?);
    }
    let variants = complete_variants(variants, s.cluster.as_ref(), &s.rates);
    let design = design_keys(&file, &doc)?;
    judged_operations_exist(&file, &doc, &design.judge, &variants)?;
    let get = |k: &str| doc.get(k);
    Ok(Experiment {
        name: get("name").and_then(Node::scalar_text).unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()),
        description: get("description").and_then(Node::scalar_text).unwrap_or_default(),
        origin: file.clone(),
        repetitions: s.repetitions,
        fresh_load: s.fresh_load,
        window_s: s.window_s,
        run_order: s.run_order,
        rate: s.rate,
        concurrency: s.concurrency,
        variants,
        rates: s.rates,
        sla: s.sla,
        design,
    })
}

/// Every figure `judge:` names belongs to an operation that every variant runs (or is
/// `total`), checked as `--judge` is (`checks::judged`).
fn judged_operations_exist(file: &str, doc: &Node, judge: &[String], variants: &[Variant]) -> Result<(), WorkloadError> {
    checks::judged(judge, variants).map_err(|problem| WorkloadError::new(file, doc.key_line("judge"), Problem::Invalid { key: "judge".into(), problem }))
}

/// A `repetitions:` value: a whole number, checked as `--repetitions` is.
fn repetitions_of(v: &Node) -> Result<u32, String> {
    match v.as_f64() {
        Some(n) if n.fract() == 0.0 && n.abs() < 1e18 => checks::repetitions(n as i128),
        _ => Err(format!("\"{}\": give a whole number of blocks from 1 to {}", v.scalar_text().unwrap_or_default(), crate::limits::MAX_REPETITIONS)),
    }
}

/// The experiment file's YAML: a mapping of known keys.
fn read_experiment(file: &str, src: &str) -> Result<Node, WorkloadError> {
    let doc = yaml::parse(src).map_err(|e| WorkloadError::yaml(file, None, e))?;
    if !matches!(doc.value, Value::Map(_)) {
        return Err(WorkloadError::new(file, None, Problem::NotAMapping { what: "an experiment file" }));
    }
    if let Some(e) = doc.entries().iter().find(|e| !EXPERIMENT_KEYS.contains(&e.key.as_str())) {
        return Err(WorkloadError::new(file, Some(e.key_line), Problem::UnknownKey { context: String::new(), key: e.key.clone(), known: EXPERIMENT_KEYS }));
    }
    Ok(doc)
}

/// What an experiment file sets for all its variants, checked (in the order of its errors).
struct Settings<'a> {
    file: &'a str,
    path: &'a Path,
    /// The base workload's text and origin.
    base: (String, String),
    repetitions: u32,
    fresh_load: bool,
    window_s: f64,
    shared_keyspace: bool,
    run_order: RunOrder,
    rate: Option<LoadShape>,
    concurrency: Option<usize>,
    params: BTreeMap<String, String>,
    /// The experiment's `run:`, patched into every variant.
    run: Option<&'a Node>,
    /// The `variants:` mapping (two entries at least).
    variants: &'a Node,
    rates: Vec<f64>,
    sla: Option<String>,
    cluster: Option<ServerSpec>,
}

impl<'a> Settings<'a> {
    fn read(file: &'a str, path: &'a Path, doc: &'a Node) -> Result<Settings<'a>, WorkloadError> {
        let err = |key: &str, p: Problem| WorkloadError::new(file, doc.key_line(key), p);
        let expected = |key: &str, expected: &'static str| err(key, Problem::Expected { key: key.into(), expected });
        let get = |k: &str| doc.get(k);
        let workload_ref = get("workload")
            .and_then(Node::scalar_text)
            .ok_or_else(|| err("workload", Problem::MissingKey { key: "workload", what: "a built-in name or a file path" }))?;
        let base = base_workload(path, &workload_ref, |p| err("workload", p))?;
        let repetitions = match get("repetitions") {
            None => 3,
            Some(v) => repetitions_of(v).map_err(|problem| err("repetitions", Problem::Invalid { key: "repetitions".into(), problem }))?,
        };
        let fresh_load = match get("load").and_then(Node::scalar_text).as_deref() {
            None | Some("shared") => false,
            Some("fresh") => true,
            Some(o) => return Err(err("load", Problem::NeitherOf { key: "load", value: o.to_string(), one: "shared", other: "fresh" })),
        };
        let window_s = match get("window").and_then(Node::scalar_text) {
            None => 60.0,
            Some(w) => checks::window_s(&w).map_err(|problem| err("window", Problem::Invalid { key: "window".into(), problem }))?,
        };
        let shared_keyspace = get("shared_keyspace").and_then(Node::as_bool).unwrap_or(false);
        let run_order = order::run_order(get).map_err(|(key, p)| err(key, p))?;
        let rate = rate_of(get("rate"), file, doc.key_line("rate"))?;
        let concurrency = concurrency_of(get("concurrency"), file, doc.key_line("concurrency"))?;
        let params = params_of(get("params"), file)?;
        let variants = get("variants")
            .filter(|v| matches!(v.value, Value::Map(_)))
            .ok_or_else(|| err("variants", Problem::MissingKey { key: "variants", what: "a mapping of variant name → changes (the first is the baseline)" }))?;
        if variants.entries().len() < 2 {
            return Err(err("variants", Problem::TooFewVariants));
        }
        let rates = match get("rates") {
            None => Vec::new(),
            Some(n) => {
                let rates: Option<Vec<f64>> = n.items().iter().map(|r| r.as_f64().filter(|x| *x > 0.0 && x.is_finite())).collect();
                rates.filter(|r| !r.is_empty()).ok_or_else(|| expected("rates", "a list of fixed rates in operations per second, e.g. [1000, 2000, 4000]"))?
            }
        };
        let sla = get("sla").and_then(Node::scalar_text);
        let cluster = cluster_of(get("cluster"), file, doc.key_line("cluster"))?;
        let run = get("run");
        Ok(Settings {
            file,
            path,
            base,
            repetitions,
            fresh_load,
            window_s,
            shared_keyspace,
            run_order,
            rate,
            concurrency,
            params,
            run,
            variants,
            rates,
            sla,
            cluster,
        })
    }
}

/// Variant `entry` of the file: its base workload patched with its changes, read as a
/// workload, with its server and load point.
fn build_variant(s: &Settings, entry: &Entry, overrides: &BTreeMap<String, String>) -> Result<Variant, WorkloadError> {
    let (file, name, patch) = (s.file, entry.key.clone(), &entry.node);
    let vfile = format!("{file} (variant {name})");
    // a variant may start from a base workload of its own
    let (base_src, base_origin) = match patch.get("workload").and_then(Node::scalar_text) {
        Some(w) => base_workload(s.path, &w, |p| WorkloadError::new(file, patch.key_line("workload"), p))?,
        None => s.base.clone(),
    };
    // variants get keyspaces of their own unless told to share, so their schemas never meet
    let base_params = resolve_text(&base_src, &base_origin, &BTreeMap::new())?.1;
    let own_keyspace = !s.shared_keyspace && base_params.contains_key("keyspace") && !overrides.contains_key("keyspace");
    if !matches!(patch.value, Value::Map(_) | Value::Null) {
        return Err(WorkloadError::new(file, Some(entry.key_line), Problem::NotAMapping { what: "a variant (its changes; empty for the base as it is)" }));
    }
    if let Some(e) = patch.entries().iter().find(|e| !VARIANT_KEYS.contains(&e.key.as_str())) {
        let problem = Problem::UnknownKey { context: format!("variant {name}: "), key: e.key.clone(), known: VARIANT_KEYS };
        return Err(WorkloadError::new(file, Some(e.key_line), problem));
    }
    let mut params = s.params.clone();
    params.extend(params_of(patch.get("params"), file)?);
    params.extend(overrides.clone());
    if own_keyspace {
        let ks = params.get("keyspace").cloned().unwrap_or_else(|| base_params["keyspace"].clone());
        params.insert("keyspace".into(), format!("{ks}_{}", sanitize(&name)));
    }
    let (text, final_params) = resolve_text(&base_src, &base_origin, &params)?;
    let source = variant_source(&text, &vfile, &name, &final_params, s.run, patch)?;
    let mut workload = parse_workload(&source, &vfile, &BTreeMap::new()).map_err(|e| schema_error_at_source(e, file, patch, &base_origin, &text))?;
    // the server: the base workload's definition, then the experiment's, then the variant's
    let variant_cluster = cluster_of(patch.get("cluster"), file, patch.key_line("cluster"))?;
    if s.cluster.is_some() || variant_cluster.is_some() || workload.cluster.is_some() {
        let base = workload.cluster.clone().unwrap_or_default();
        let spec = base.overlaid(s.cluster.as_ref().unwrap_or(&ServerSpec::default())).overlaid(variant_cluster.as_ref().unwrap_or(&ServerSpec::default()));
        workload.cluster = Some(spec);
    }
    let concurrency = concurrency_of(patch.get("concurrency"), file, patch.key_line("concurrency"))?;
    let rate = rate_of(patch.get("rate"), file, patch.key_line("rate"))?;
    let hosts = match patch.get("hosts") {
        None => Vec::new(),
        Some(h) => {
            let items: Option<Vec<String>> = if h.items().is_empty() {
                h.scalar_text().map(|t| t.split(',').map(|s| s.trim().to_string()).collect())
            } else {
                h.items().iter().map(Node::scalar_text).collect()
            };
            items.filter(|i| !i.is_empty() && i.iter().all(|h| !h.is_empty())).ok_or_else(|| {
                WorkloadError::new(
                    file,
                    patch.key_line("hosts"),
                    Problem::Expected { key: "hosts".into(), expected: "the variant's contact points, e.g. [10.0.0.5, 10.0.0.6]" },
                )
            })?
        }
    };
    let translate = match patch.get("translate") {
        None => Vec::new(),
        Some(t) => {
            let pairs: Option<Vec<(String, String)>> = t.entries().iter().map(|e| e.node.scalar_text().map(|to| (e.key.clone(), to))).collect();
            pairs.filter(|p| !p.is_empty()).ok_or_else(|| {
                WorkloadError::new(
                    file,
                    patch.key_line("translate"),
                    Problem::Expected {
                        key: "translate".into(),
                        expected: "a map of advertised address to the one to use, e.g. { \"10.0.0.5:9042\": \"127.0.0.2:9042\" }",
                    },
                )
            })?
        }
    };
    if !translate.is_empty() && hosts.is_empty() {
        return Err(WorkloadError::new(
            file,
            patch.key_line("translate"),
            Problem::Expected { key: "translate".into(), expected: "a variant's own `hosts:` beside it (translate rewrites that cluster's addresses)" },
        ));
    }
    Ok(Variant { base: name.clone(), name, workload, source, concurrency, rate, hosts, translate })
}

/// The variants as they run: when one defines its server every one does (the others get the
/// experiment's, so that a run never inherits the server the variant before it left), and with
/// `rates` every variant at every rate, the variants of one rate side by side.
fn complete_variants(mut variants: Vec<Variant>, cluster: Option<&ServerSpec>, rates: &[f64]) -> Vec<Variant> {
    if variants.iter().any(|v| v.workload.cluster.is_some()) {
        for v in variants.iter_mut() {
            v.workload.cluster.get_or_insert_with(|| cluster.cloned().unwrap_or_default());
        }
    }
    if rates.is_empty() {
        return variants;
    }
    rates
        .iter()
        .flat_map(|r| variants.iter().map(move |v| Variant { name: format!("{}@{r}", v.base), rate: Some(LoadShape::fixed(*r)), ..v.clone() }))
        .collect()
}

/// The complete YAML of variant `name`: the base workload's resolved `text`, patched with the
/// experiment's `run:` and the variant's changes (`${param}`s in them replaced by `params`).
fn variant_source(
    text: &str,
    vfile: &str,
    name: &str,
    params: &BTreeMap<String, String>,
    common_run: Option<&Node>,
    patch: &Node,
) -> Result<String, WorkloadError> {
    let yaml_err = |e| WorkloadError::yaml(vfile, None, e);
    let mut w = yaml::parse(text).map_err(yaml_err)?;
    if !matches!(w.value, Value::Map(_)) {
        return Err(WorkloadError::new(vfile, None, Problem::NotAMapping { what: "the base workload" }));
    }
    // written out and read back, so that a replaced `${param}` is typed like any YAML scalar
    let substitute = |v: &Node| -> Result<Node, WorkloadError> {
        let mut out = yaml::to_string(v).map_err(yaml_err)?;
        for (k, val) in params {
            out = out.replace(&format!("${{{k}}}"), val);
        }
        yaml::parse(&out).map_err(yaml_err)
    };
    w.insert("params", Node::string_map(params));
    if let Some(run) = common_run {
        merge_into(&mut w, "run", substitute(run)?);
    }
    if let Some(s) = patch.get("schema") {
        w.insert("schema", substitute(s)?);
    }
    for section in ["generators", "operations", "run"] {
        if let Some(v) = patch.get(section) {
            merge_into(&mut w, section, substitute(v)?);
        }
    }
    if let Some(l) = patch.get("load") {
        w.insert("load", substitute(l)?);
    }
    // a variant's events replace the base workload's: what happens to the cluster during it
    if let Some(e) = patch.get("events") {
        w.insert("events", substitute(e)?);
    }
    for key in ["consistency", "page_size"] {
        if let (Some(v), Some(Node { value: Value::Map(ops), .. })) = (patch.get(key), w.get_mut("operations")) {
            for op in ops.iter_mut().filter(|op| matches!(op.node.value, Value::Map(_))) {
                op.node.insert(key, v.clone());
            }
        }
    }
    if let Some(opts) = patch.get("table_options").and_then(Node::scalar_text) {
        if let Some(Node { value: Value::Seq(stmts), .. }) = w.get_mut("schema") {
            for st in stmts.iter_mut() {
                if let Value::Str(cql) = &mut st.value {
                    *cql = with_table_options(cql, &opts);
                }
            }
        }
    }
    w.insert("name", Node::str(name));
    yaml::to_string(&w).map_err(yaml_err)
}

/// A refused `schema:` statement of a variant, pointed at where it is written: in the
/// variant's own `schema:` of the experiment file, else in the base workload (whose resolved
/// `base_text` keeps the lines of its file). Other errors are returned as they are.
fn schema_error_at_source(e: WorkloadError, file: &str, patch: &Node, base_origin: &str, base_text: &str) -> WorkloadError {
    let Problem::Schema { cql, .. } = &*e.problem else { return e };
    let words = |s: &str| s.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
    let wanted = words(cql);
    let line_in = |list: &Node| list.items().iter().find(|i| i.as_str().is_some_and(|s| words(s) == wanted)).map(|i| i.line).or(Some(list.line));
    let (file, line) = match patch.get("schema") {
        Some(list) => (file.to_string(), line_in(list)),
        None => match yaml::parse(base_text).ok().and_then(|doc| doc.get("schema").and_then(line_in)) {
            Some(line) => (base_origin.to_string(), Some(line)),
            None => return e,
        },
    };
    WorkloadError { given: e.given, file, line, problem: e.problem }
}

/// Merges mapping `patch` into `w[section]` key by key (whole entries replaced).
fn merge_into(w: &mut Node, section: &str, patch: Node) {
    match (w.get_mut(section), patch.value) {
        (Some(base @ Node { value: Value::Map(_), .. }), Value::Map(entries)) => {
            for e in entries {
                base.insert(&e.key, e.node);
            }
        }
        (_, value) => w.insert(section, Node { line: patch.line, value }),
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// Adds table options to a CREATE TABLE statement (`WITH …`, or `AND …` after an existing
/// WITH), after its last token (as `crate::cql` reads it); a closing `;` is dropped, a comment
/// after the statement kept. Any other statement is returned as it is.
pub fn with_table_options(cql: &str, opts: &str) -> String {
    let Some(at) = crate::cql::table_options_at(cql) else { return cql.to_string() };
    let (head, tail) = cql.split_at(at.end);
    let tail = if tail.trim_start_matches(|c: char| c.is_whitespace() || c == ';').is_empty() { "" } else { tail };
    format!("{head} {} {opts}{tail}", if at.has_with { "AND" } else { "WITH" })
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
        assert_eq!(
            with_table_options("CREATE TABLE t (k int PRIMARY KEY)", "compaction = {'class': 'LeveledCompactionStrategy'}"),
            "CREATE TABLE t (k int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy'}"
        );
        assert_eq!(
            with_table_options("CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)", "gc_grace_seconds = 0"),
            "CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC) AND gc_grace_seconds = 0"
        );
        assert_eq!(with_table_options("CREATE INDEX i ON t (v)", "x = 1"), "CREATE INDEX i ON t (v)");
    }

    #[test]
    fn table_options_follow_the_statements_tokens() {
        let add = |cql: &str| with_table_options(cql, "gc_grace_seconds = 0");
        assert_eq!(
            add("CREATE TABLE t (k int, c int, PRIMARY KEY (k, c))\nWITH CLUSTERING ORDER BY (c DESC)"),
            "CREATE TABLE t (k int, c int, PRIMARY KEY (k, c))\nWITH CLUSTERING ORDER BY (c DESC) AND gc_grace_seconds = 0"
        );
        assert_eq!(
            add("create table t (k int PRIMARY KEY)\n  with\ncomment = 'x';\n"),
            "create table t (k int PRIMARY KEY)\n  with\ncomment = 'x' AND gc_grace_seconds = 0"
        );
        assert_eq!(
            add("CREATE TABLE t (k int PRIMARY KEY /* ) WITH x */, v text) -- WITH nothing yet"),
            "CREATE TABLE t (k int PRIMARY KEY /* ) WITH x */, v text) WITH gc_grace_seconds = 0 -- WITH nothing yet"
        );
        assert_eq!(
            add("CREATE TABLE t (k int PRIMARY KEY, v text) WITH comment = 'made WITH care, (not'"),
            "CREATE TABLE t (k int PRIMARY KEY, v text) WITH comment = 'made WITH care, (not' AND gc_grace_seconds = 0"
        );
        assert_eq!(
            add("CREATE TABLE t (k int PRIMARY KEY, \"with\" text);"),
            "CREATE TABLE t (k int PRIMARY KEY, \"with\" text) WITH gc_grace_seconds = 0",
            "a quoted column named with is no WITH"
        );
        assert_eq!(
            add("-- the table\nCREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY)"),
            "-- the table\nCREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY) WITH gc_grace_seconds = 0"
        );
        assert_eq!(add("CREATE TYPE a (x int)"), "CREATE TYPE a (x int)");
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
    events: [\"10s flush\"]
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
        assert!(one.workload.events.is_empty());
        assert_eq!(e.variants[1].workload.events.iter().map(|e| e.label()).collect::<Vec<_>>(), ["flush"]);
        assert_eq!(q.workload.keyspace, "casslab_kv_quorum");
        assert_eq!(one.workload.params["rows"], "100");
        assert_eq!(q.workload.params["valuesize"], "200");
        assert!(one.workload.operations.iter().all(|o| o.cql().unwrap().consistency == crate::workload::Consistency::LocalOne));
        assert!(q.workload.operations.iter().all(|o| o.cql().unwrap().consistency == crate::workload::Consistency::Quorum), "set on replaced ops too");
        assert_eq!(q.workload.operation("read").unwrap().cql().unwrap().statements[0].cql, "SELECT key, value FROM kv WHERE key = ?");
        assert!(q.workload.schema[0].cql.contains("LeveledCompactionStrategy"));
        assert!(!one.workload.schema[0].cql.contains("Leveled"));
        assert_eq!((q.concurrency, q.rate.as_ref().and_then(LoadShape::as_fixed)), (Some(16), Some(500.0)));
        assert_eq!(one.workload.run.as_ref().unwrap().duration_s, 20.0);
        assert_eq!(e.run_order, RunOrder::default());
        assert_eq!((e.rate.is_none(), e.concurrency), (true, None));
        assert_eq!(one.workload.load.as_ref().unwrap().count, 100);
    }

    #[test]
    fn order_and_load_point_keys_are_read() {
        let f = file(
            "workload: kv\norder: shuffled\norder_seed: 9\nunmeasured_round: false\nsettle: false\nrate: 300\nconcurrency: 1\nvariants:\n  a: {}\n  b: {}\n",
        );
        let e = load_experiment(f.path(), &BTreeMap::new()).unwrap();
        assert_eq!(e.run_order, RunOrder { order: Order::Shuffled, seed: Some(9), unmeasured_round: false, settle: false });
        assert_eq!((e.rate.as_ref().and_then(LoadShape::as_fixed), e.concurrency), (Some(300.0), Some(1)));
    }

    #[test]
    fn the_shipped_experiments_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let tiny: BTreeMap<String, String> = [("rows".to_string(), "100".to_string())].into();
        let e = load_experiment(&dir.join("bins-list-vs-columns.yaml"), &tiny).unwrap();
        assert_eq!(e.variants[1].workload.operation("update").unwrap().cql().unwrap().statements[0].args.len(), 101);
        let e = load_experiment(&dir.join("compaction-strategies.yaml"), &tiny).unwrap();
        assert_eq!(e.variants.len(), 3);
        assert!(e.variants[2].workload.schema[0].cql.contains("UnifiedCompactionStrategy"));
        let small: BTreeMap<String, String> = [("rows_per_partition".to_string(), "864".to_string())].into();
        let e = load_experiment(&dir.join("partition-read-chunks.yaml"), &small).unwrap();
        let pages: Vec<i32> = e.variants.iter().map(|v| v.workload.operation("read_day").unwrap().cql().unwrap().page_size).collect();
        assert_eq!(pages, vec![864, 432, 216, 108]);
        assert!(e.variants.iter().all(|v| v.workload.keyspace == "casslab_wide"), "shared keyspace");
        assert_eq!(e.variants[0].workload.load.as_ref().unwrap().count, 864 * 7);
        let e = load_experiment(&dir.join("redis-vs-cassandra.yaml"), &tiny).unwrap();
        assert_eq!(e.variants.len(), 8);
        assert_eq!((e.variants[1].name.as_str(), e.variants[1].workload.name.as_str()), ("redis@500", "redis"));
        // two data centers 8 ms apart, the same for every variant
        let e = load_experiment(&dir.join("consistency-across-dcs.yaml"), &tiny).unwrap();
        let eight_ms: BTreeMap<_, _> = [(crate::network::DcPair::new("dc1", "dc2").unwrap(), crate::network::Rtt::from_ms(8))].into();
        for v in &e.variants {
            let cluster = v.workload.cluster.as_ref().unwrap();
            assert_eq!((&cluster.rtt, cluster.relayed()), (&eight_ms, true), "{}", v.name);
        }
    }

    #[test]
    fn variants_may_start_from_their_own_workload_and_run_at_several_rates() {
        let f = file("name: rvc\nworkload: ycsb-a\nparams: { rows: 100 }\nrates: [100, 200]\nsla: p99 < 5ms\nvariants:\n  cassandra: {}\n  redis:\n    workload: ycsb-a-redis\n");
        let e = load_experiment(f.path(), &BTreeMap::new()).unwrap();
        let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["cassandra@100", "redis@100", "cassandra@200", "redis@200"]);
        assert_eq!((e.rates.clone(), e.sla.as_deref()), (vec![100.0, 200.0], Some("p99 < 5ms")));
        let (c, r) = (&e.variants[2], &e.variants[3]);
        assert_eq!((c.base.as_str(), c.rate.as_ref().and_then(LoadShape::as_fixed)), ("cassandra", Some(200.0)));
        assert_eq!(c.workload.target, crate::workload::TargetKind::Cql);
        assert_eq!(c.workload.keyspace, "casslab_ycsb_cassandra", "one keyspace per variant, whatever the rate");
        assert_eq!(r.workload.target, crate::workload::TargetKind::Redis);
        assert_eq!(r.workload.load.as_ref().unwrap().count, 100, "the experiment's params apply to every base");
        let e = load_experiment(file("workload: kv\nrates: [fast]\nvariants:\n  a: {}\n  b: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.line == Some(2) && e.to_string().contains("a list of fixed rates"), "{e}");
    }

    #[test]
    fn mistakes_are_reported() {
        let e = load_experiment(file("workload: kv\nvariants:\n  a: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("at least two variants"), "{e}");
        let e = load_experiment(file("workload: kv\nvariants:\n  a: {}\n  b: { colour: red }\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("unknown key `colour`") && e.line == Some(4), "{e}");
        // the line of the key in its own variant, not the first line that mentions it
        let e = load_experiment(
            file("workload: kv\ndescription: \"b loda: x\"\nvariants:\n  a: {}\n  b:\n    load: { op: insert, count: 10 }\n    loda: x\n").path(),
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), format!("{}:7: variant b: unknown key `loda` (known: {})", e.file, VARIANT_KEYS.join(", ")));
        let e = load_experiment(file("workload: kv\nrepetitions: 2\nwindow: ten seconds\nvariants:\n  a: {}\n  b: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.line == Some(3) && e.to_string().contains("bad duration \"ten seconds\""), "{e}");
        let e = load_experiment(file("workload: kv\nparams:\n  rows: [1]\nvariants:\n  a: {}\n  b: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.line == Some(3) && e.to_string().contains("parameter \"rows\" must be"), "{e}");
        let e = load_experiment(file("workload: kv\nvariants:\n  a: {}\n  b:\n    run: { mix: { nope: 1 } }\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("variant b") && e.to_string().contains("unknown operation \"nope\""), "{e}");
        let e = load_experiment(file("workload: kv\norder: random\nvariants:\n  a: {}\n  b: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.line == Some(2) && e.to_string().contains("order: give counterbalanced, shuffled or interleaved"), "{e}");
        let e = load_experiment(file("workload: kv\nsettle: maybe\nvariants:\n  a: {}\n  b: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.line == Some(2) && e.to_string().contains("settle: give true or false"), "{e}");
        let e = load_experiment(file("workload: kv\nrate: 0\nvariants:\n  a: {}\n  b: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.line == Some(2) && e.to_string().contains("rate: give operations per second"), "{e}");
        let e = load_experiment(file("variants: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("`workload:` is missing"), "{e}");
    }

    #[test]
    fn a_variant_schema_that_destroys_is_refused_where_it_is_written() {
        let f = file("workload: kv\nvariants:\n  a: {}\n  b:\n    schema:\n      - CREATE TABLE IF NOT EXISTS kv (key blob PRIMARY KEY, value blob)\n      - DROP KEYSPACE IF EXISTS other_ks\n");
        let e = load_experiment(f.path(), &BTreeMap::new()).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), (f.path().to_str().unwrap(), Some(7)), "{e}");
        assert!(e.to_string().contains("schema: `DROP KEYSPACE IF EXISTS other_ks` would destroy"), "{e}");
        // a base workload's statement is pointed at in the base workload's file
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("base.yaml"),
            crate::workload::builtin("kv").unwrap().replace("  - CREATE TABLE IF NOT EXISTS kv", "  - TRUNCATE kv\n  - CREATE TABLE IF NOT EXISTS kv"),
        )
        .unwrap();
        let exp = dir.path().join("exp.yaml");
        std::fs::write(&exp, "workload: base.yaml\nvariants:\n  a: {}\n  b: { consistency: ONE }\n").unwrap();
        let e = load_experiment(&exp, &BTreeMap::new()).unwrap_err();
        let base_line = crate::workload::builtin("kv").unwrap().lines().position(|l| l.contains("CREATE TABLE IF NOT EXISTS kv")).unwrap() + 1;
        assert!(e.file.ends_with("base.yaml") && e.line == Some(base_line), "{e}");
    }

    #[test]
    fn a_judged_figure_names_an_operation_every_variant_runs() {
        let ok = "workload: kv\njudge: [read.p99, total.ops_s, read.p99_typical]\nvariants:\n  a: {}\n  b: { consistency: ONE }\n";
        assert_eq!(load_experiment(file(ok).path(), &BTreeMap::new()).unwrap().design.judge, ["read.p99", "total.ops_s", "read.p99_typical"]);
        let f = file("workload: kv\njudge: [read_all.p99]\nvariants:\n  a: {}\n  b: { consistency: ONE }\n");
        let e = load_experiment(f.path(), &BTreeMap::new()).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.to_string().contains("judge: \"read_all.p99\": variant a runs no operation \"read_all\"") && e.to_string().contains("read, update"), "{e}");
        let bad = load_experiment(file("workload: kv\njudge: [read.p99_tipical]\nvariants:\n  a: {}\n  b: {}\n").path(), &BTreeMap::new()).unwrap_err();
        assert!(bad.to_string().contains("p999, p99_typical"), "{bad}");
    }

    #[test]
    fn the_family_is_each_comparison_or_the_whole_experiment() {
        let read = |f: &str| load_experiment(file(&format!("workload: kv\n{f}variants:\n  a: {{}}\n  b: {{}}\n")).path(), &BTreeMap::new());
        assert_eq!(read("").unwrap().design.family_wide, None);
        assert_eq!(read("family: experiment\n").unwrap().design.family_wide, Some(true));
        assert_eq!(read("family: comparison\n").unwrap().design.family_wide, Some(false));
        let e = read("family: all\n").unwrap_err();
        assert!(e.line == Some(2) && e.to_string().contains("experiment (every comparison with the baseline together) or comparison"), "{e}");
    }
}
