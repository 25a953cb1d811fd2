//! Reading workload files into the model: from a built-in name or a path, through parameter
//! substitution (`substitution.rs`), typed YAML decoding (`crate::yaml`, whose errors carry their
//! line) that brings the line of every key with it (one read of the substituted text: keys'
//! lines from `yaml::Lined`, list items' from `Spanned`), and the building of operations and
//! phases, so that each later error can say `file:line`. Checks that need the whole workload
//! are `validate.rs`'s; an operation's access settings are `access_settings.rs`'s. Items written once
//! with a `{A..B}` range are repeated here (`repeat.rs`). Numbers may be written quoted
//! (`count: "${rows}"`).

use super::access_settings::{build_access, RawAccess, RawBatch, RawPartitions};
use super::model::{Consistency, CqlOp, LoadPhase, OpBody, Operation, RedisMode, RedisOp, RunPhase, Statement, TargetKind, Workload};
use super::repeat::{expand_cql, expand_keys, expand_list};
use super::substitution::{resolve_params, substitute, substitute_used};
use super::validate::OpArgs;
use super::workload_error::{OpProblem, Problem, WorkloadError};
use crate::gen::{GeneratorSpec, Scalar};
use crate::units::parse_duration_s;
use crate::yaml::{self, KeyLines, Lined};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::path::Path;

/// Page size used when an operation does not set one.
pub const DEFAULT_PAGE_SIZE: i32 = 5000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    name: Option<String>,
    description: Option<String>,
    /// Read in a first pass (`params::resolve_params`).
    #[serde(default, rename = "params")]
    _params: serde::de::IgnoredAny,
    /// Required for CQL; for Redis it only names casslab's bookkeeping.
    keyspace: Option<String>,
    replication: Option<String>,
    #[serde(default)]
    schema: Vec<Spanned<String>>,
    #[serde(default)]
    generators: BTreeMap<String, GeneratorSpec>,
    operations: BTreeMap<String, RawOp>,
    load: Option<RawLoad>,
    run: Option<RawRun>,
    #[serde(default)]
    events: Vec<Spanned<String>>,
    /// The server the workload is meant for (casslab's local cluster runs it so).
    cluster: Option<crate::cluster::ServerSpec>,
    /// Verify every read against the writes (each operation's `verify:` overrides it).
    verify: Option<bool>,
    /// `expect: consistent`: a verified read that is not ok fails the run.
    expect: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    cql: Option<String>,
    redis: Option<String>,
    pipeline: Option<Vec<Spanned<Lined<RawStep>>>>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
    steps: Option<Vec<Spanned<Lined<RawStep>>>>,
    consistency: Option<String>,
    serial_consistency: Option<String>,
    page_size: Option<Scalar>,
    idempotent: Option<bool>,
    partitions: Option<RawPartitions>,
    batch: Option<RawBatch>,
    timestamp: Option<String>,
    rows: Option<crate::gen::rows::RowsSpec>,
    verify: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    cql: Option<String>,
    redis: Option<String>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoad {
    op: String,
    count: Scalar,
    #[serde(default)]
    concurrency: Option<Scalar>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    mix: BTreeMap<String, Scalar>,
    warmup: Option<String>,
    /// Optional when a `rate` or `concurrency` schedule has a length of its own.
    duration: Option<String>,
    replay: Option<RawReplay>,
    rate: Option<serde_json::Value>,
    concurrency: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReplay {
    at_ms: Vec<f64>,
    ops: Vec<String>,
}

/// Reads a workload from a built-in name or a file path and resolves it with `overrides`.
pub fn load_workload(name_or_path: &str, overrides: &BTreeMap<String, String>) -> Result<(Workload, String), WorkloadError> {
    if let Some(src) = super::builtin(name_or_path).or_else(|| super::scenario(name_or_path)) {
        let w = parse_workload(src, &format!("builtin:{name_or_path}"), overrides)?;
        return Ok((w, src.to_string()));
    }
    let src = std::fs::read_to_string(Path::new(name_or_path)).map_err(|source| {
        let problem = if !name_or_path.contains('/') && !name_or_path.ends_with(".yaml") {
            Problem::NotFound { name: name_or_path.to_string(), known: super::builtin_names().map(String::from).collect() }
        } else {
            Problem::Read { what: "workload file".into(), error: source }
        };
        WorkloadError::new(name_or_path, None, problem)
    })?;
    let w = parse_workload(&src, name_or_path, overrides)?;
    Ok((w, src))
}

/// The workload text with every `${name}` replaced, and the final parameters: what
/// `parse_workload` reads after its first pass. Experiments patch this text per variant.
pub fn resolve_text(src: &str, file: &str, overrides: &BTreeMap<String, String>) -> Result<(String, BTreeMap<String, String>), WorkloadError> {
    let params = resolve_params(src, file, overrides)?;
    Ok((substitute(src, file, &params)?, params))
}

/// Files of vectors named relative to the workload file (`vector: { file: digits.npy }`) are
/// read from beside it; a built-in's, from the working directory.
fn relative_to_file(generators: &mut BTreeMap<String, crate::gen::GeneratorSpec>, file: &str) {
    let Some(dir) = Path::new(file).parent().filter(|d| !file.starts_with("builtin:") && !d.as_os_str().is_empty()) else { return };
    for spec in generators.values_mut() {
        if let Some(f) = spec.vector.as_mut().and_then(|v| v.file.as_mut()) {
            if Path::new(f.as_str()).is_relative() {
                *f = dir.join(&*f).display().to_string();
            }
        }
    }
}

/// Parses workload text. `file` is only used in error messages (and to find files it names).
/// A mistake on a line that took a value of `overrides` names them (`-P rows=-1: …`).
pub fn parse_workload(src: &str, file: &str, overrides: &BTreeMap<String, String>) -> Result<Workload, WorkloadError> {
    let params = resolve_params(src, file, overrides)?;
    let (text, used) = substitute_used(src, file, &params)?;
    parse_substituted(&text, file, params).map_err(|e| e.naming_given(file, &used, overrides))
}

/// Parses workload text whose parameters are substituted already (`params`: their values).
fn parse_substituted(text: &str, file: &str, params: BTreeMap<String, String>) -> Result<Workload, WorkloadError> {
    let Lined { value: raw, lines: doc } = yaml::from_str::<Lined<RawWorkload>>(text).map_err(|e| WorkloadError::yaml_in(file, text, e))?;
    let at = At { file, doc: &doc };
    let mut generators = expand_keys(raw.generators, "generator").map_err(|e| at.err(doc.key_line("generators"), e.into()))?;
    relative_to_file(&mut generators, file);
    let (operations, args) = build_operations(&at, raw.operations)?;
    let (target, keyspace) = target_and_keyspace(&at, &operations, raw.keyspace)?;
    let w = Workload {
        name: raw.name.unwrap_or_else(|| default_name(file)),
        description: raw.description.unwrap_or_default(),
        origin: file.to_string(),
        params,
        target,
        keyspace,
        replication: raw.replication,
        schema: build_schema(&at, raw.schema)?,
        generators,
        operations,
        load: raw.load.map(|l| build_load(&at, l)).transpose()?,
        run: raw.run.map(|r| build_run(&at, r)).transpose()?,
        events: build_events(&at, &raw.events)?,
        cluster: raw.cluster,
        verify: raw.verify,
        expect_consistent: build_expect(&at, raw.expect)?,
    };
    super::validate::validate(&w, file, &super::validate::FileLines { keys: doc, args })?;
    Ok(w)
}

/// The file being read and the lines of its keys.
struct At<'a> {
    file: &'a str,
    doc: &'a KeyLines,
}

impl At<'_> {
    fn err(&self, line: Option<usize>, p: Problem) -> WorkloadError {
        WorkloadError::new(self.file, line, p)
    }
}

/// The operations in the order written, and the `args:` items of each with their lines.
fn build_operations(at: &At, raw: BTreeMap<String, RawOp>) -> Result<(Vec<Operation>, BTreeMap<String, OpArgs>), WorkloadError> {
    let no_node = KeyLines::default();
    let ops_node = at.doc.get("operations").unwrap_or(&no_node);
    let mut operations = Vec::new();
    let mut args = BTreeMap::new();
    for (name, op) in raw {
        let line = ops_node.key_line(&name).or(at.doc.key_line("operations")).unwrap_or(1);
        if let Some(sub) = crate::stats::SUB_OPS.iter().find(|s| name.ends_with(&format!(".{s}"))) {
            return Err(at.err(Some(line), Problem::Operation { op: name, problem: OpProblem::ReservedName(sub) }));
        }
        let node = ops_node.get(&name).unwrap_or(&no_node);
        args.insert(name.clone(), op_args(&op));
        operations.push(if op.is_redis() { build_redis_op(at.file, node, name, op, line)? } else { build_op(at.file, node, name, op, line)? });
    }
    operations.sort_by_key(|o| o.line);
    Ok((operations, args))
}

/// What the operations are written for, and the keyspace (required for CQL); a Redis workload
/// may not have CQL's `schema:` or `replication:`.
fn target_and_keyspace(at: &At, operations: &[Operation], keyspace: Option<String>) -> Result<(TargetKind, String), WorkloadError> {
    let target = target_of(operations).map_err(|p| at.err(operations.iter().find(|o| o.redis().is_some()).map(|o| o.line), p))?;
    let keyspace = match (keyspace, target) {
        (Some(k), _) => k.trim().to_string(),
        (None, TargetKind::Redis) => "redis".to_string(),
        (None, TargetKind::Cql) => return Err(at.err(None, Problem::MissingKey { key: "keyspace", what: "the CQL keyspace the workload's tables live in" })),
    };
    if target == TargetKind::Redis {
        if let Some(key) = ["schema", "replication"].into_iter().find(|k| at.doc.get(k).is_some()) {
            return Err(at.err(at.doc.key_line(key), Problem::CqlKeyInRedis { key }));
        }
    }
    Ok((target, keyspace))
}

fn build_schema(at: &At, raw: Vec<Spanned<String>>) -> Result<Vec<Statement>, WorkloadError> {
    raw.into_iter()
        .map(|Spanned { value: cql, referenced, .. }| {
            let line = referenced.line() as usize;
            let cql = expand_cql(cql.trim().trim_end_matches(';')).map_err(|e| at.err(Some(line), e.into()))?;
            Ok(Statement { cql, args: vec![], line })
        })
        .collect()
}

fn build_load(at: &At, l: RawLoad) -> Result<LoadPhase, WorkloadError> {
    let line = at.doc.key_line("load").unwrap_or(1);
    let count = l.count.as_i64().ok().and_then(|n| u64::try_from(n).ok());
    let expected = Problem::Expected { key: "load.count".into(), expected: "a whole number of executions (0 or more)" };
    let count = count.ok_or_else(|| at.err(at.doc.line_at(&["load", "count"]).or(Some(line)), expected))?;
    let concurrency = match &l.concurrency {
        None => None,
        Some(c) => {
            let n = c.as_i64().ok().and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0);
            let expected = Problem::Expected { key: "load.concurrency".into(), expected: "a whole number of requests in flight (1 or more)" };
            Some(n.ok_or_else(|| at.err(at.doc.line_at(&["load", "concurrency"]).or(Some(line)), expected))?)
        }
    };
    Ok(LoadPhase { op: l.op, count, line, concurrency })
}

fn build_run(at: &At, r: RawRun) -> Result<RunPhase, WorkloadError> {
    let doc = at.doc;
    let run_line = doc.key_line("run");
    let dur = |key: &str, v: &str| parse_duration_s(v).map_err(|e| at.err(doc.line_at(&["run", key]).or(run_line), e.into()));
    let warmup_s = match &r.warmup {
        Some(w) => dur("warmup", w)?,
        None => 0.0,
    };
    let shape = |key: &'static str, v: &Option<serde_json::Value>| {
        v.as_ref()
            .map(|v| crate::load_shape::from_value(v).map_err(|source| at.err(doc.line_at(&["run", key]).or(run_line), Problem::Shape { key, error: source })))
            .transpose()
    };
    let (rate, concurrency) = (shape("rate", &r.rate)?, shape("concurrency", &r.concurrency)?);
    if let Some(c) = &concurrency {
        // the same answer as --concurrency: at least 1 in flight, at most the limit
        c.check_in_flight()
            .map_err(|source| at.err(doc.line_at(&["run", "concurrency"]).or(run_line), Problem::Shape { key: "concurrency", error: source }))?;
    }
    // without a duration, a schedule's length is the run's (warm-up included)
    let length_s = rate.as_ref().or(concurrency.as_ref()).and_then(|s| s.length_s());
    let duration_s = match (&r.duration, length_s) {
        (Some(d), _) => dur("duration", d)?,
        (None, Some(len)) => (len - warmup_s).max(0.0),
        (None, None) => {
            return Err(at.err(
                run_line,
                Problem::MissingKey { key: "run.duration", what: "how long the run phase is measured, e.g. 60s (a rate schedule with an end gives its own)" },
            ))
        }
    };
    let mut mix = Vec::with_capacity(r.mix.len());
    for (name, ratio) in r.mix {
        let line = doc.line_at(&["run", "mix", &name]).or(run_line);
        let ratio = ratio.as_f64().map_err(|_| at.err(line, Problem::Expected { key: format!("run.mix.{name}"), expected: "a ratio: a number ≥ 0" }))?;
        mix.push((name, ratio));
    }
    mix.sort_by_key(|(n, _)| doc.line_at(&["run", "mix", n]).unwrap_or(usize::MAX));
    let replay = match r.replay {
        None => None,
        Some(rp) => Some(build_replay(at, rp, &mix)?),
    };
    Ok(RunPhase { mix, warmup_s, duration_s, line: run_line.unwrap_or(1), replay, rate, concurrency })
}

/// `run.replay`: captured times (ms from the start, in order) and the operation of each.
fn build_replay(at: &At, rp: RawReplay, mix: &[(String, f64)]) -> Result<super::model::Replay, WorkloadError> {
    let line = at.doc.line_at(&["run", "replay"]).or(at.doc.key_line("run"));
    let within = |t: &f64| t.is_finite() && *t >= 0.0 && *t <= crate::limits::MAX_DURATION_S * 1000.0;
    let ordered = rp.at_ms.windows(2).all(|w| w[0] <= w[1]) && rp.at_ms.iter().all(within);
    if rp.at_ms.len() != rp.ops.len() || !ordered {
        return Err(at.err(
            line,
            Problem::Expected {
                key: "run.replay".into(),
                expected: "as many times (at_ms, in ms from the start, in order, within a year) as operations (ops)",
            },
        ));
    }
    if let Some(unknown) = rp.ops.iter().find(|o| !mix.iter().any(|(m, x)| m == *o && *x > 0.0)) {
        return Err(at.err(line, Problem::Expected { key: format!("run.replay.ops: {unknown}"), expected: "an operation of run.mix (with a ratio above 0)" }));
    }
    Ok(super::model::Replay { at_ms: rp.at_ms, ops: rp.ops })
}

/// `expect:` — only `consistent` is known.
fn build_expect(at: &At, raw: Option<Spanned<String>>) -> Result<bool, WorkloadError> {
    match raw {
        None => Ok(false),
        Some(s) if s.value.trim() == "consistent" => Ok(true),
        Some(s) => {
            Err(at
                .err(Some(s.referenced.line() as usize), Problem::Expected { key: "expect".into(), expected: "`consistent` (every verified read must be ok)" }))
        }
    }
}

fn build_events(at: &At, raw: &[Spanned<String>]) -> Result<Vec<crate::events::EventSpec>, WorkloadError> {
    raw.iter().map(|spec| crate::events::parse_event(&spec.value).map_err(|e| at.err(Some(spec.referenced.line() as usize), e.into()))).collect()
}

/// Builds operation `name` from its raw form; `node` holds the lines of its keys, `line` is the
/// line of its name.
fn build_op(file: &str, node: &KeyLines, name: String, op: RawOp, line: usize) -> Result<Operation, WorkloadError> {
    let at = |key: &str| node.key_line(key).unwrap_or(line);
    let err = |key: &str, problem: OpProblem| WorkloadError::new(file, Some(at(key)), Problem::Operation { op: name.clone(), problem });
    let repeat = |line: usize, cql: &str, args: Vec<Spanned<String>>| -> Result<Statement, WorkloadError> {
        let args = args.into_iter().map(|a| a.value).collect();
        let problem =
            |e: super::repeat::RepeatError| WorkloadError::new(file, Some(line), Problem::Operation { op: name.clone(), problem: OpProblem::Repeat(e) });
        Ok(Statement { cql: expand_cql(cql.trim()).map_err(problem)?, args: expand_list(args).map_err(problem)?, line })
    };
    let statements = match (op.cql, op.steps) {
        (Some(cql), None) => vec![repeat(at("cql"), &cql, op.args)?],
        (None, Some(steps)) if !steps.is_empty() => {
            if !op.args.is_empty() {
                return Err(err("args", OpProblem::ArgsWithSteps));
            }
            let mut statements = Vec::with_capacity(steps.len());
            for s in steps {
                let step_line = s.value.lines.key_line("cql").unwrap_or(s.referenced.line() as usize);
                let s = s.value.value;
                let cql = s.cql.ok_or_else(|| WorkloadError::new(file, Some(step_line), Problem::Operation { op: name.clone(), problem: OpProblem::NoCql }))?;
                statements.push(repeat(step_line, &cql, s.args)?);
            }
            statements
        }
        (Some(_), Some(_)) => return Err(err("steps", OpProblem::CqlAndSteps)),
        _ => return Err(err("cql", OpProblem::NoCql)),
    };
    let cl = |key: &str, v: Option<String>, default: Option<Consistency>| -> Result<Option<Consistency>, WorkloadError> {
        match v {
            None => Ok(default),
            Some(s) => Consistency::parse(&s)
                .map(Some)
                .ok_or_else(|| err(key, OpProblem::UnknownSetting { what: "consistency level", name: s, known: Consistency::NAMES })),
        }
    };
    let consistency = cl("consistency", op.consistency, Some(Consistency::LocalQuorum))?.unwrap_or(Consistency::LocalQuorum);
    let serial_consistency = cl("serial_consistency", op.serial_consistency, None)?;
    if consistency.is_serial() {
        return Err(err("consistency", OpProblem::SerialConsistency));
    }
    if serial_consistency.is_some_and(|sc| !sc.is_serial()) {
        return Err(err("serial_consistency", OpProblem::NotSerial));
    }
    let page_size = match &op.page_size {
        None => DEFAULT_PAGE_SIZE,
        Some(v) => match v.as_i64() {
            Ok(n) if n > 0 && n <= i32::MAX as i64 => n as i32,
            _ => return Err(err("page_size", OpProblem::PageSize(v.as_f64().map_or_else(|_| format!("{v:?}"), |f| f.to_string())))),
        },
    };
    let retry_safe = statements.iter().all(|s| crate::cql::is_idempotent(&s.cql));
    if op.idempotent == Some(true) && !retry_safe {
        return Err(err("idempotent", OpProblem::NotIdempotent));
    }
    let idempotent = op.idempotent.unwrap_or(retry_safe);
    let raw = RawAccess { partitions: op.partitions, batch: op.batch, timestamp: op.timestamp, rows: op.rows };
    let access = build_access(node, line, &statements, raw)
        .map_err(|(l, problem)| WorkloadError::new(file, Some(l), Problem::Operation { op: name.clone(), problem }))?;
    let body = CqlOp {
        statements,
        consistency,
        serial_consistency,
        page_size,
        idempotent,
        partitions: access.partitions,
        batch: access.batch,
        client_timestamp: access.client_timestamp,
        rows: access.rows.map(Box::new),
    };
    Ok(Operation { name, line, body: OpBody::Cql(body), verify: op.verify })
}

/// The `args:` items of `op` and of its steps (or pipeline commands), with their lines.
fn op_args(op: &RawOp) -> OpArgs {
    let lined = |args: &[Spanned<String>]| args.iter().map(|a| (a.value.clone(), a.referenced.line() as usize)).collect();
    let steps = op.steps.as_ref().or(op.pipeline.as_ref());
    OpArgs { op: lined(&op.args), steps: steps.map(|s| s.iter().map(|s| lined(&s.value.value.args)).collect()) }
}

impl RawOp {
    /// Written as Redis commands (`redis:`, `pipeline:`, or `steps:` of `redis:`).
    fn is_redis(&self) -> bool {
        self.redis.is_some() || self.pipeline.is_some() || self.steps.as_ref().is_some_and(|s| s.iter().any(|s| s.value.value.redis.is_some()))
    }
}

/// Builds Redis operation `name`: one command, `steps:` sent one after the other, or a
/// `pipeline:` sent at once. CQL settings are refused.
fn build_redis_op(file: &str, node: &KeyLines, name: String, op: RawOp, line: usize) -> Result<Operation, WorkloadError> {
    let at = |key: &str| node.key_line(key).unwrap_or(line);
    let err = |l: usize, problem: OpProblem| WorkloadError::new(file, Some(l), Problem::Operation { op: name.clone(), problem });
    let settings = [
        ("consistency", op.consistency.is_some()),
        ("serial_consistency", op.serial_consistency.is_some()),
        ("page_size", op.page_size.is_some()),
        ("idempotent", op.idempotent.is_some()),
        ("partitions", op.partitions.is_some()),
        ("batch", op.batch.is_some()),
        ("timestamp", op.timestamp.is_some()),
        ("rows", op.rows.is_some()),
    ];
    if let Some((key, _)) = settings.iter().find(|(_, set)| *set) {
        return Err(err(at(key), OpProblem::CqlSettingOnRedis(key)));
    }
    if op.cql.is_some() {
        return Err(err(at("cql"), OpProblem::CqlAndRedis));
    }
    let (list_key, steps, mode) = match (op.redis, op.steps, op.pipeline) {
        (Some(text), None, None) => {
            let args: Vec<String> = op.args.into_iter().map(|a| a.value).collect();
            let c = super::redis_commands::parse_command(&text, &args, at("redis")).map_err(|p| err(at("redis"), p))?;
            return Ok(redis_op(name, vec![c], RedisMode::Sequence, line, op.verify));
        }
        (None, Some(steps), None) => ("steps", steps, RedisMode::Sequence),
        (None, None, Some(steps)) => ("pipeline", steps, RedisMode::Pipeline),
        (Some(_), _, _) => return Err(err(at("redis"), OpProblem::CqlAndSteps)),
        _ => return Err(err(at("pipeline"), OpProblem::CqlAndSteps)),
    };
    if steps.is_empty() {
        return Err(err(at(list_key), OpProblem::EmptyPipeline));
    }
    if !op.args.is_empty() {
        return Err(err(at("args"), OpProblem::ArgsWithSteps));
    }
    let mut commands = Vec::with_capacity(steps.len());
    for item in &steps {
        let (keys, s) = (&item.value.lines, &item.value.value);
        let l = keys.key_line("redis").unwrap_or(item.referenced.line() as usize);
        if s.cql.is_some() {
            return Err(err(keys.key_line("cql").unwrap_or(l), OpProblem::CqlAndRedis));
        }
        let text = s.redis.as_deref().ok_or_else(|| err(l, OpProblem::EmptyRedisCommand))?;
        let args: Vec<String> = s.args.iter().map(|a| a.value.clone()).collect();
        commands.push(super::redis_commands::parse_command(text, &args, l).map_err(|p| err(l, p))?);
    }
    Ok(redis_op(name, commands, mode, line, op.verify))
}

fn redis_op(name: String, commands: Vec<super::model::RedisCommand>, mode: RedisMode, line: usize, verify: Option<bool>) -> Operation {
    Operation { name, line, body: OpBody::Redis(RedisOp { commands, mode }), verify }
}

/// The kind of server the operations are written for; mixing both is an error.
fn target_of(ops: &[Operation]) -> Result<TargetKind, Problem> {
    let redis = ops.iter().find(|o| o.redis().is_some());
    match (ops.iter().find(|o| o.cql().is_some()), redis) {
        (Some(c), Some(r)) => Err(Problem::MixedTargets { cql: c.name.clone(), redis: r.name.clone() }),
        (_, Some(_)) => Ok(TargetKind::Redis),
        _ => Ok(TargetKind::Cql),
    }
}

fn default_name(file: &str) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.trim_end_matches(".yaml").trim_end_matches(".yml").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_appends_and_conditional_writes_cannot_be_declared_idempotent() {
        let src = |cql: &str, extra: &str| {
            format!("keyspace: ks\noperations:\n  w:\n    cql: {cql}\n    args: [k]\n{extra}generators:\n  k: {{ type: int }}\nrun:\n  mix: {{ w: 1 }}\n  duration: 1s\n")
        };
        let parse = |cql: &str, extra: &str| parse_workload(&src(cql, extra), "f.yaml", &BTreeMap::new());
        let e = parse("UPDATE c SET n = n + 1 WHERE k = ?", "    idempotent: true\n").unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:6: operation \"w\": `idempotent: true`"), "{e}");
        assert!(parse("INSERT INTO t (k) VALUES (?) IF NOT EXISTS", "    idempotent: true\n").is_err());
        assert!(!parse("UPDATE c SET n = n + 1 WHERE k = ?", "").unwrap().operations[0].cql().unwrap().idempotent);
        assert!(!parse("INSERT INTO t (k) VALUES (?) IF NOT EXISTS", "").unwrap().operations[0].cql().unwrap().idempotent);
        assert!(parse("SELECT v FROM t WHERE k = ?", "").unwrap().operations[0].cql().unwrap().idempotent, "reads may be retried");
        assert!(parse("INSERT INTO t (k, v) VALUES (?, 1)", "").unwrap().operations[0].cql().unwrap().idempotent, "plain writes may be retried");
        assert!(!parse("INSERT INTO t (k, v) VALUES (?, 1)", "    idempotent: false\n").unwrap().operations[0].cql().unwrap().idempotent);
    }

    #[test]
    fn numbers_may_be_quoted_and_items_repeated() {
        let src = "keyspace: ks\nparams:\n  rows: 10\nschema:\n  - CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY, c{0..2} int)\ngenerators:\n  id: { type: bigint }\n  v{0..2}: { type: int, max: \"${rows}\" }\noperations:\n  w:\n    cql: INSERT INTO t (id, c{0..2}) VALUES (:id, :v{0..2})\n    args: [id, \"v{0..2}\"]\n    page_size: \"100\"\n  r:\n    cql: SELECT c{0..2} FROM t WHERE id = ?\n    args: [id]\nload:\n  op: w\n  count: \"${rows}\"\nrun:\n  mix: { r: \"3\", w: 1 }\n  duration: 1s\n";
        let w = parse_workload(src, "f.yaml", &BTreeMap::new()).unwrap();
        assert_eq!(w.load.as_ref().unwrap().count, 10);
        assert_eq!(w.run.as_ref().unwrap().mix, [("r".to_string(), 3.0), ("w".to_string(), 1.0)]);
        assert_eq!(w.schema[0].cql, "CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY, c0 int, c1 int, c2 int)");
        assert_eq!(w.generators.keys().collect::<Vec<_>>(), ["id", "v0", "v1", "v2"]);
        let op = w.operation("w").unwrap().cql().unwrap();
        assert_eq!(op.statements[0].cql, "INSERT INTO t (id, c0, c1, c2) VALUES (:id, :v0, :v1, :v2)");
        assert_eq!(op.statements[0].args, ["id", "v0", "v1", "v2"]);
        assert_eq!(op.page_size, 100);
        assert_eq!(w.operation("r").unwrap().cql().unwrap().statements[0].cql, "SELECT c0, c1, c2 FROM t WHERE id = ?");
        let e = parse_workload(&src.replace("\"v{0..2}\"]", "v{0..2}]"), "f.yaml", &BTreeMap::new()).unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:12:") && e.contains("is written quoted"), "{e}");
        let e = parse_workload(&src.replace("count: \"${rows}\"", "count: lots"), "f.yaml", &BTreeMap::new()).unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:19: load.count: give a whole number"), "{e}");
        let e = parse_workload(&src.replace("v{0..2}: {", "v{2..0}: {"), "f.yaml", &BTreeMap::new()).unwrap_err().to_string();
        assert!(e.contains("counts down"), "{e}");
        let e = parse_workload(&src.replace("max: \"${rows}\"", "max: \"${rows}\", theta: 0.5"), "f.yaml", &BTreeMap::new()).unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:8: generator \"v0\""), "a repeated generator's error is at its line: {e}");
    }

    #[test]
    fn a_mistake_on_a_line_of_a_given_parameter_names_it() {
        let src = "keyspace: ks\nparams:\n  rows: 10\n  ratio: 1\noperations:\n  r:\n    cql: SELECT now() FROM system.local\nload:\n  op: r\n  count: ${rows}\nrun:\n  mix: { r: \"${ratio}\" }\n  duration: 1s\n";
        let given = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>();
        let e = parse_workload(src, "f.yaml", &given(&[("rows", "-1")])).unwrap_err();
        assert_eq!(e.given.as_deref(), Some(&crate::workload::Given(vec![("rows".to_string(), "-1".to_string())])));
        assert!(e.to_string().starts_with("-P rows=-1: f.yaml:10: load.count: give a whole number"), "{e}");
        // a default of the file's own is the file's mistake; a parameter given for another line is not named
        let e = parse_workload(&src.replace("rows: 10", "rows: -1"), "f.yaml", &BTreeMap::new()).unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:10: load.count"), "{e}");
        let e = parse_workload(src, "f.yaml", &given(&[("rows", "-1"), ("ratio", "1")])).unwrap_err().to_string();
        assert!(e.starts_with("-P rows=-1: f.yaml:10:"), "{e}");
        let e = parse_workload(src, "f.yaml", &given(&[("ratio", "-2")])).unwrap_err().to_string();
        assert!(e.starts_with("-P ratio=-2: f.yaml:12: run.mix"), "{e}");
        let e = parse_workload(&src.replace("op: r", "op: q"), "f.yaml", &given(&[("ratio", "2")])).unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:9:"), "{e}");
    }

    #[test]
    fn steps_keep_their_lines_however_written() {
        let src = "keyspace: ks\noperations:\n  w:\n    steps:\n      - cql: |\n          SELECT now() FROM system.local\n      -\n        cql: SELECT now() FROM system.local\n      - {}\nrun:\n  mix: { w: 1 }\n  duration: 1s\n";
        let e = parse_workload(src, "f.yaml", &BTreeMap::new()).unwrap_err().to_string();
        assert!(e.starts_with("f.yaml:9: operation \"w\": it needs `cql:"), "a step with no key is at its own line: {e}");
        let w = parse_workload(&src.replace("      - {}\n", ""), "f.yaml", &BTreeMap::new()).unwrap();
        let lines: Vec<usize> = w.operations[0].cql().unwrap().statements.iter().map(|s| s.line).collect();
        assert_eq!(lines, [5, 8], "a statement is at its `cql:` key, not at its text");
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
}
