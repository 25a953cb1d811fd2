//! The errors of workload files, and of the experiment files built on them: a [`WorkloadError`]
//! says where (file, and line when known) and holds a [`Problem`] that says what is wrong and
//! what to write instead. Problems with an operation are [`OpProblem`]s. Generator, event and
//! duration errors keep their own types inside. This module only describes errors; the code
//! that finds them lives beside the rules it checks.

use crate::events::EventError;
use crate::gen::GenError;
use crate::suggest::hint;
use crate::units::DurationError;
use crate::yaml::YamlError;
use std::collections::BTreeMap;

/// The lines (numbered from 1) that took a value from a parameter, and the parameters each took.
pub(crate) type UsedParams = BTreeMap<usize, std::collections::BTreeSet<String>>;

/// An error in a workload or experiment file: `file:line: problem`, after the parameters given
/// on the command line whose values the line holds (`-P rows=-1: file:line: problem`), since
/// the mistake may be theirs rather than the file's.
#[derive(thiserror::Error, Debug)]
#[error("{}{}{problem}", given_text(.given), location(.file, .line))]
pub struct WorkloadError {
    /// Parameters given as `-P NAME=VALUE` whose values went into the line (boxed: most errors
    /// have none, and an error stays small).
    pub given: Option<Box<Given>>,
    pub file: String,
    pub line: Option<usize>,
    pub problem: Box<Problem>,
}

/// Parameters given as `-P NAME=VALUE`, as (name, value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given(pub Vec<(String, String)>);

fn given_text(given: &Option<Box<Given>>) -> String {
    match given {
        Some(g) if !g.0.is_empty() => format!("{}: ", g.0.iter().map(|(k, v)| format!("-P {k}={v}")).collect::<Vec<_>>().join(", ")),
        _ => String::new(),
    }
}

fn location(file: &str, line: &Option<usize>) -> String {
    match line {
        Some(l) => format!("{file}:{l}: "),
        None => format!("{file}: "),
    }
}

impl WorkloadError {
    pub fn new(file: &str, line: Option<usize>, problem: impl Into<Problem>) -> Self {
        WorkloadError { given: None, file: file.to_string(), line, problem: Box::new(problem.into()) }
    }

    /// This error, naming the parameters of `overrides` (given on the command line) whose
    /// values went into its line of `file` (`used`, from the substitution).
    pub(crate) fn naming_given(mut self, file: &str, used: &UsedParams, overrides: &BTreeMap<String, String>) -> Self {
        if let Some(names) = self.line.filter(|_| self.file == file).and_then(|l| used.get(&l)) {
            let given: Vec<(String, String)> = names.iter().filter_map(|n| overrides.get(n).map(|v| (n.clone(), v.clone()))).collect();
            self.given = (!given.is_empty()).then(|| Box::new(Given(given)));
        }
        self
    }

    /// A YAML error in `text` at its line; a `{A..B}` range left unquoted inside `[...]`
    /// (where YAML reads `{` as the start of a mapping) gets a hint.
    pub fn yaml_in(file: &str, text: &str, e: YamlError) -> Self {
        let line = e.line.and_then(|l| text.lines().nth(l.saturating_sub(1)));
        if line.is_some_and(|l| l.contains('[') && super::repeat::has_range(l)) {
            return WorkloadError::new(file, e.line, Problem::RangeInFlowList(e));
        }
        WorkloadError::yaml(file, None, e)
    }

    /// A YAML error at its own line (or at `fallback` when it has none).
    pub fn yaml(file: &str, fallback: Option<usize>, e: YamlError) -> Self {
        WorkloadError::new(file, e.line.or(fallback), Problem::Yaml(e))
    }
}

/// What is wrong, and what to do about it.
#[derive(thiserror::Error, Debug)]
pub enum Problem {
    #[error("no built-in workload or file named \"{name}\"{} ({})", hint(.name, .known), if crate::suggest::did_you_mean(.name, .known).is_some() { "`casslab workloads` lists them" } else { "`casslab workloads` lists the built-in ones" })]
    NotFound { name: String, known: Vec<String> },
    #[error("cannot read {what}: {error}")]
    Read { what: String, error: std::io::Error },
    #[error("{0}")]
    Yaml(YamlError),
    #[error("{0} (a `{{A..B}}` range inside `[...]` is written quoted: `args: [id, \"v{{0..99}}\"]`)")]
    RangeInFlowList(YamlError),
    #[error(transparent)]
    Repeat(#[from] crate::workload::repeat::RepeatError),
    #[error("{what} is a YAML mapping")]
    NotAMapping { what: &'static str },
    #[error("`{key}:` is missing: {what}")]
    MissingKey { key: &'static str, what: &'static str },
    #[error("{context}unknown key `{key}` (known: {})", .known.join(", "))]
    UnknownKey { context: String, key: String, known: &'static [&'static str] },
    #[error("{key}: give {expected}")]
    Expected { key: String, expected: &'static str },
    /// A value a shared check refused (`limits`, the design keys): what is wrong and what to
    /// write, worded as for the flag of the same name.
    #[error("{key}: {problem}")]
    Invalid { key: String, problem: String },
    #[error("{key}: \"{value}\" is neither `{one}` nor `{other}`")]
    NeitherOf { key: &'static str, value: String, one: &'static str, other: &'static str },
    #[error("an experiment needs at least two variants to compare")]
    TooFewVariants,

    #[error("unclosed `${{` (write `${{name}}`)")]
    UnclosedPlaceholder,
    #[error("unknown parameter \"${{{name}}}\"{}; declare it under `params:`", hint(.name, .known))]
    UnknownParameter { name: String, known: Vec<String> },
    #[error("-P {name}={value}: the workload has no parameter \"{name}\"{} (it has: {})", hint(.name, .known), .known.join(", "))]
    UnknownOverride { name: String, value: String, known: Vec<String> },
    #[error("parameter \"{name}\" must be a string, number or boolean")]
    ParamNotScalar { name: String },
    #[error("`${{{expr}}}`: arithmetic needs whole numbers, and \"{name}\" is \"{value}\" (division by 0 is not allowed either)")]
    Arithmetic { expr: String, name: String, value: String },

    #[error("keyspace \"{0}\" is not a valid CQL name (letters, digits and _, at most 48, starting with a letter)")]
    Keyspace(String),
    #[error("generator \"{}\": {}", .0.generator, .0.message)]
    Generator(GenError),
    #[error(transparent)]
    Event(#[from] EventError),
    #[error(transparent)]
    Duration(#[from] DurationError),
    #[error("run.{key}: {error}")]
    Shape { key: &'static str, error: crate::load_shape::ShapeError },
    #[error("operation \"{op}\": {problem}")]
    Operation { op: String, problem: OpProblem },
    #[error("schema: `{}` {problem}", short(.cql))]
    Schema { cql: String, problem: SchemaProblem },

    #[error("the workload has neither a `load:` nor a `run:` phase; add at least one")]
    NoPhase,
    #[error("operation \"{cql}\" is CQL and \"{redis}\" is Redis; a workload targets one or the other")]
    MixedTargets { cql: String, redis: String },
    #[error("`{key}:` is about CQL tables; a Redis workload has none (drop it)")]
    CqlKeyInRedis { key: &'static str },
    #[error("{phase}: unknown operation \"{name}\"{} (declared: {})", hint(.name, .known), .known.join(", "))]
    UnknownOperation { phase: &'static str, name: String, known: Vec<String> },
    #[error("run: `mix` is empty; give each operation a ratio, e.g. `mix: {{ read: 1, update: 1 }}`")]
    EmptyMix,
    #[error("run.mix: ratio of \"{name}\" must be a number ≥ 0, not {ratio}")]
    BadRatio { name: String, ratio: f64 },
    #[error("run.mix: every ratio is 0, so nothing would run; give at least one operation a ratio > 0")]
    AllRatiosZero,
    #[error("run.duration must be longer than 0s")]
    ZeroDuration,
}

/// What is wrong with one operation (its statements, settings and access settings).
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum OpProblem {
    #[error("names ending in \".{0}\" are reserved for the figures casslab records beside an operation; rename it")]
    ReservedName(&'static str),
    #[error("it has `steps`; put `args` inside each step")]
    ArgsWithSteps,
    #[error("it has both `cql` and `steps`; keep one")]
    CqlAndSteps,
    #[error("it needs `cql: <statement>` (or a non-empty `steps:` list)")]
    NoCql,
    #[error("its statement holds more than one (something follows a `;`); an operation runs one statement: give each its own operation or `steps:` entry")]
    Several,
    #[error("SERIAL/LOCAL_SERIAL belong in `serial_consistency`, not `consistency`")]
    SerialConsistency,
    #[error("`serial_consistency` must be SERIAL or LOCAL_SERIAL")]
    NotSerial,
    #[error("`idempotent: true` on a statement that is not (a counter or collection update relative to its value, or a conditional write): the driver would retry it on another node and apply it twice; remove `idempotent`")]
    NotIdempotent,
    #[error("page_size must be a positive number of rows, not {0}")]
    PageSize(String),
    #[error("{0}")]
    Repeat(crate::workload::repeat::RepeatError),
    #[error("binds unknown generator \"{name}\"{} (declare it under `generators:`)", hint(.name, .known))]
    UnknownGenerator { name: String, known: Vec<String> },
    #[error("the statement has {markers} bind marker(s) `?` but {args} value(s) in `args`; give one generator per `?`")]
    Markers { markers: usize, args: usize },

    #[error("`partitions` reads and `batch` writes; an operation has one or the other")]
    PartitionsAndBatch,
    #[error("`partitions` needs a single `cql` statement (not `steps`)")]
    PartitionsNeedOneStatement,
    #[error("`partitions` reads: its statement must be a SELECT of one partition (`… WHERE pk = ?`)")]
    PartitionsNeedSelect,
    #[error("{field} must be a whole number {unit}from {min} to {max}")]
    Whole { field: &'static str, unit: &'static str, min: u32, max: u32 },
    #[error("unknown {what} \"{name}\"{} (one of {})", hint(.name, *.known), .known.join(", "))]
    UnknownSetting { what: &'static str, name: String, known: &'static [&'static str] },
    #[error("`partitions` needs the statement to bind the partition key (`WHERE pk = ?`)")]
    NoPartitionKey,
    #[error("partitions.key \"{key}\" is not bound by the statement (its args: {})", .args.join(", "))]
    KeyNotBound { key: String, args: Vec<String> },
    #[error("the partition key \"{0}\" must be bound as `pk = ?` (so it can become `pk IN ?`)")]
    KeyNotEq(String),
    #[error("the statement has its own LIMIT; drop it or drop partitions.limit")]
    OwnLimit,
    #[error("partitions.chunk applies to the `in` and `in_by_replica` strategies only")]
    ChunkNeedsIn,
    #[error("partitions.concurrency has no effect with `sync` (one statement at a time)")]
    ConcurrencyWithSync,
    #[error("a batch holds writes (INSERT, UPDATE, DELETE), not SELECT")]
    BatchOfSelect,
    #[error("`partitions` reads a set of drawn keys and `rows` makes its partitions from seeds; an operation has one or the other")]
    PartitionsAndRows,
    #[error("{0}")]
    Rows(String),
    #[error("`timestamp: client` stamps writes; this operation reads")]
    TimestampOnRead,
    #[error("timestamp: \"{0}\" is neither `client` nor `server`")]
    TimestampMode(String),

    #[error("unknown Redis command \"{name}\"{} (casslab runs: {})", hint(.name, .known), .known.join(", "))]
    UnknownRedisCommand { name: String, known: Vec<String> },
    #[error("`{command}` takes {expected}, not {got}")]
    RedisArity { command: String, expected: String, got: usize },
    #[error("`{command}` has {markers} marker(s) `?` but {args} value(s) in `args`; give one generator per `?`")]
    RedisMarkers { command: String, markers: usize, args: usize },
    #[error("the Redis command is empty; write e.g. `redis: GET ?`")]
    EmptyRedisCommand,
    #[error("a command starts with its name, not a `?` marker")]
    MarkerAsCommand,
    #[error("a quote is not closed")]
    UnclosedQuote,
    #[error("it has both CQL (`cql`) and Redis (`redis`, `pipeline`) commands; an operation is one or the other")]
    CqlAndRedis,
    #[error("`{0}` is a CQL setting; a Redis operation has `redis: COMMAND` (or `pipeline:` / `steps:`) and `args`")]
    CqlSettingOnRedis(&'static str),
    #[error("`pipeline` needs a non-empty list of `{{ redis: COMMAND, args: [...] }}`")]
    EmptyPipeline,
    #[error("binds generator \"{generator}\" of type {ty}; a Redis argument is one string: use text, blob or a number type")]
    NotARedisValue { generator: String, ty: String },
}

/// Why casslab refuses to run a statement of `schema:` (it checks them all before connecting).
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum SchemaProblem {
    #[error("would destroy or overwrite what exists ({what}); casslab never runs DROP, TRUNCATE, DELETE, INSERT, UPDATE or ALTER … DROP/RENAME from `schema:`, so that it never touches data it did not create: remove it")]
    Destructive { what: String },
    #[error("is not a creating statement; `schema:` takes CREATE TABLE/TYPE/INDEX/MATERIALIZED VIEW/FUNCTION … IF NOT EXISTS, and ALTER TABLE … ADD/WITH on a table the schema creates")]
    NotSchema,
    #[error("creates a keyspace; casslab creates the workload's keyspace itself from `keyspace:` (and `replication:`): remove it")]
    CreatesKeyspace,
    #[error("is outside the workload's keyspace: it names keyspace \"{named}\", and a workload creates and changes only its own (\"{own}\"); drop the `{named}.` prefix or change `keyspace:`")]
    OtherKeyspace { named: String, own: String },
    #[error("needs IF NOT EXISTS (`CREATE {object} IF NOT EXISTS …`), so that a second run keeps what the first created")]
    NeedsIfNotExists { object: String },
    #[error("would replace a function that may exist already; write CREATE FUNCTION IF NOT EXISTS")]
    OrReplace,
    #[error("creates a {object}; `schema:` creates only tables, types, indexes, materialized views and functions")]
    UnsupportedObject { object: String },
    #[error("changes table \"{table}\", which the workload's schema does not create before this statement; casslab alters, indexes and builds views only on tables it creates")]
    NotOwnTable { table: String },
    #[error("alters a {object}; the only ALTER a workload may run is ALTER TABLE … ADD or … WITH on a table its schema creates")]
    AlterNotTable { object: String },
    #[error("holds more than one statement; give each its own `- ` entry")]
    Several,
}

/// A statement cut to its first 60 characters, on one line.
fn short(cql: &str) -> String {
    let one_line = cql.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(60) {
        Some((i, _)) => format!("{} …", &one_line[..i]),
        None => one_line,
    }
}

impl From<GenError> for Problem {
    fn from(e: GenError) -> Self {
        Problem::Generator(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_file_line_problem() {
        let e = WorkloadError::new("w.yaml", Some(12), Problem::Operation { op: "read".into(), problem: OpProblem::Markers { markers: 2, args: 1 } });
        assert_eq!(e.to_string(), "w.yaml:12: operation \"read\": the statement has 2 bind marker(s) `?` but 1 value(s) in `args`; give one generator per `?`");
        let e = WorkloadError::new("w.yaml", None, Problem::NoPhase);
        assert_eq!(e.to_string(), "w.yaml: the workload has neither a `load:` nor a `run:` phase; add at least one");
        let known = vec!["key".to_string(), "value".to_string()];
        let e =
            WorkloadError::new("w.yaml", Some(3), Problem::Operation { op: "r".into(), problem: OpProblem::UnknownGenerator { name: "kee".into(), known } });
        assert_eq!(e.to_string(), "w.yaml:3: operation \"r\": binds unknown generator \"kee\"; did you mean \"key\"? (declare it under `generators:`)");
        let e = OpProblem::UnknownSetting { what: "strategy", name: "asnyc".into(), known: &["sync", "async"] };
        assert_eq!(e.to_string(), "unknown strategy \"asnyc\"; did you mean \"async\"? (one of sync, async)");
        let e = Problem::NotFound { name: "ycsb-z".into(), known: vec!["ycsb-a".into()] };
        assert_eq!(e.to_string(), "no built-in workload or file named \"ycsb-z\"; did you mean \"ycsb-a\"? (`casslab workloads` lists them)");
    }

    #[test]
    fn a_workload_error_stays_small() {
        assert!(std::mem::size_of::<WorkloadError>() <= 56);
    }
}
