//! The data-model linter: reads a workload's schema and operations (no cluster needed) and
//! reports modelling mistakes a machine can spot before a request is sent, each a [`Finding`]
//! with a severity, the statement or table at fault (file:line), why it hurts and what to do
//! instead. `crate::cql` reads the statements; one file per group of rules (`bindings`,
//! `collections`, `queries`, `indexes`, `writes`, `partitions`, `consistency`) inspects them
//! through the shared [`Model`]. This
//! module does not print: the binary renders findings (`casslab lint`, and before `run`).

#[cfg(test)]
mod agreement_tests;
mod bindings;
mod collections;
mod consistency;
mod estimate;
mod indexes;
pub mod live_schema;
mod partitions;
mod queries;
#[cfg(test)]
mod shipped_tests;
mod writes;

use crate::cql::{self, Dml, SchemaStmt, Table, Term};
use crate::gen::GeneratorSpec;
use crate::workload::{load_workload, CqlOp, Operation, Statement, Workload, WorkloadError};
use crate::yaml::{self, Node, Value};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// How bad a finding is. `lint` exits 1 only for errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The rules, each with a stable kebab-case id (shown in output and JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    TtlOnCollection,
    CollectionWrittenWhole,
    ListAppend,
    PartitionInFanout,
    InProduct,
    LoggedBatchMultiPartition,
    UnloggedBatchMultiPartition,
    RangeDeleteGrowingPartition,
    ReadAfterDelete,
    UnboundedPartition,
    AllowFiltering,
    IndexHighCardinality,
    SelectStarWideRow,
    ScanWithoutLimit,
    ConsistencyUnmet,
    GeneratorTypeMismatch,
    ReadsNeverMatch,
    UnindexedFilter,
    FilteringLargeTable,
    AnnWithoutLimit,
    VectorDimensionMismatch,
    IndexLowCardinality,
}

impl Rule {
    pub const ALL: &'static [Rule] = &[
        Rule::TtlOnCollection,
        Rule::CollectionWrittenWhole,
        Rule::ListAppend,
        Rule::PartitionInFanout,
        Rule::InProduct,
        Rule::LoggedBatchMultiPartition,
        Rule::UnloggedBatchMultiPartition,
        Rule::RangeDeleteGrowingPartition,
        Rule::ReadAfterDelete,
        Rule::UnboundedPartition,
        Rule::AllowFiltering,
        Rule::IndexHighCardinality,
        Rule::SelectStarWideRow,
        Rule::ScanWithoutLimit,
        Rule::ConsistencyUnmet,
        Rule::GeneratorTypeMismatch,
        Rule::ReadsNeverMatch,
        Rule::UnindexedFilter,
        Rule::FilteringLargeTable,
        Rule::AnnWithoutLimit,
        Rule::VectorDimensionMismatch,
        Rule::IndexLowCardinality,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::TtlOnCollection => "ttl-on-collection",
            Rule::CollectionWrittenWhole => "collection-written-whole",
            Rule::ListAppend => "list-append",
            Rule::PartitionInFanout => "partition-in-fanout",
            Rule::InProduct => "in-product",
            Rule::LoggedBatchMultiPartition => "logged-batch-multi-partition",
            Rule::UnloggedBatchMultiPartition => "unlogged-batch-multi-partition",
            Rule::RangeDeleteGrowingPartition => "range-delete-growing-partition",
            Rule::ReadAfterDelete => "read-after-delete",
            Rule::UnboundedPartition => "unbounded-partition",
            Rule::AllowFiltering => "allow-filtering",
            Rule::IndexHighCardinality => "index-high-cardinality",
            Rule::SelectStarWideRow => "select-star-wide-row",
            Rule::ScanWithoutLimit => "scan-without-limit",
            Rule::ConsistencyUnmet => "consistency-unmet",
            Rule::GeneratorTypeMismatch => "generator-type-mismatch",
            Rule::ReadsNeverMatch => "reads-never-match",
            Rule::UnindexedFilter => "unindexed-filter",
            Rule::FilteringLargeTable => "filtering-large-table",
            Rule::AnnWithoutLimit => "ann-without-limit",
            Rule::VectorDimensionMismatch => "vector-dimension-mismatch",
            Rule::IndexLowCardinality => "index-low-cardinality",
        }
    }
}

/// One finding: what, where, why it hurts, what to do instead.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub rule: Rule,
    /// The workload (or experiment) file, or `builtin:NAME`.
    pub file: String,
    pub line: Option<usize>,
    /// The table, or the operation, at fault.
    pub subject: String,
    /// The statement at fault, on one line (empty for table-level findings).
    pub statement: String,
    pub message: String,
    pub why: String,
    pub fix: String,
}

impl Finding {
    /// `file:line` (or just the file).
    pub fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        }
    }
}

/// Settings of a lint: the client's concurrency (fan-out rules) and the partition size limits.
#[derive(Debug, Clone, PartialEq)]
pub struct LintOptions {
    pub concurrency: usize,
    pub max_partition_rows: u64,
    pub max_partition_bytes: u64,
    /// The client's local data center, for LOCAL_* consistency levels.
    pub local_dc: Option<String>,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions { concurrency: 128, max_partition_rows: 100_000, max_partition_bytes: 100 * 1024 * 1024, local_dc: None }
    }
}

/// A statement of an operation, parsed, with how often it runs.
pub(crate) struct OpStmt<'a> {
    pub op: &'a Operation,
    /// The operation's CQL body (its client settings).
    pub body: &'a CqlOp,
    pub st: &'a Statement,
    pub dml: Dml,
    /// Share of the run phase's mix (0..=1).
    pub run_share: f64,
    /// Whether the load phase executes it.
    pub in_load: bool,
}

impl OpStmt<'_> {
    /// Executed at all (load, or a run ratio above 0).
    pub fn active(&self) -> bool {
        self.in_load || self.run_share > 0.0
    }
    /// The generator bound to a marker.
    pub fn generator<'w>(&self, w: &'w Workload, term: &Term) -> Option<(&'w str, &'w GeneratorSpec)> {
        let Term::Marker(i) = term else { return None };
        let name = self.st.args.get(*i)?;
        w.generators.get_key_value(name).map(|(k, v)| (k.as_str(), v))
    }
}

/// What the rules read: the workload, its tables and indexes, and every parsed statement.
pub(crate) struct Model<'a> {
    pub w: &'a Workload,
    pub opts: &'a LintOptions,
    /// Table name → (table, line of its CREATE statement).
    pub tables: BTreeMap<String, (Table, usize)>,
    pub indexes: Vec<(cql::Index, usize)>,
    pub stmts: Vec<OpStmt<'a>>,
}

impl<'a> Model<'a> {
    fn new(w: &'a Workload, opts: &'a LintOptions) -> Model<'a> {
        let mut tables = BTreeMap::new();
        let mut indexes = Vec::new();
        for s in &w.schema {
            match cql::parse_schema(&s.cql) {
                Some(SchemaStmt::Table(t)) => {
                    tables.insert(t.name.clone(), (t, s.line));
                }
                Some(SchemaStmt::Index(i)) => indexes.push((i, s.line)),
                None => {}
            }
        }
        let total: f64 = w.run.as_ref().map(|r| r.mix.iter().map(|(_, x)| *x).sum()).unwrap_or(0.0);
        let mut stmts = Vec::new();
        for op in &w.operations {
            let ratio = w.run.as_ref().and_then(|r| r.mix.iter().find(|(n, _)| *n == op.name)).map(|(_, x)| *x).unwrap_or(0.0);
            let run_share = if total > 0.0 { ratio / total } else { 0.0 };
            let in_load = w.load.as_ref().is_some_and(|l| l.op == op.name);
            let Some(body) = op.cql() else { continue };
            for st in &body.statements {
                if let Some(dml) = cql::parse_dml(&st.cql) {
                    stmts.push(OpStmt { op, body, st, dml, run_share, in_load });
                }
            }
        }
        Model { w, opts, tables, indexes, stmts }
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.get(name).map(|(t, _)| t)
    }

    /// A finding about a statement.
    pub fn at_stmt(&self, s: &OpStmt, severity: Severity, rule: Rule, message: String, why: &str, fix: &str) -> Finding {
        Finding {
            severity,
            rule,
            file: self.w.origin.clone(),
            line: Some(s.st.line),
            subject: s.op.name.clone(),
            statement: one_line(&s.st.cql),
            message,
            why: why.to_string(),
            fix: fix.to_string(),
        }
    }

    /// A finding about a table (at its CREATE statement).
    pub fn at_table(&self, table: &str, severity: Severity, rule: Rule, message: String, why: &str, fix: &str) -> Finding {
        let line = self.tables.get(table).map(|(_, l)| *l);
        let statement = self.w.schema.iter().find(|s| Some(s.line) == line).map(|s| one_line(&s.cql)).unwrap_or_default();
        Finding {
            severity,
            rule,
            file: self.w.origin.clone(),
            line,
            subject: table.to_string(),
            statement,
            message,
            why: why.to_string(),
            fix: fix.to_string(),
        }
    }
}

/// A statement on one line, shortened to about 120 characters.
fn one_line(cql: &str) -> String {
    let s = cql.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(119).collect::<String>())
    } else {
        s
    }
}

/// Lints a parsed workload; findings sorted by severity (worst first), then by line.
pub fn lint(w: &Workload, opts: &LintOptions) -> Vec<Finding> {
    let m = Model::new(w, opts);
    let mut out = Vec::new();
    bindings::check(&m, &mut out);
    collections::check(&m, &mut out);
    queries::check(&m, &mut out);
    indexes::check(&m, &mut out);
    writes::check(&m, &mut out);
    partitions::check(&m, &mut out);
    consistency::check(&m, &mut out);
    // filtering a large table is said once, with the rows it reads
    let large: Vec<(Option<usize>, String)> = out.iter().filter(|f| f.rule == Rule::FilteringLargeTable).map(|f| (f.line, f.subject.clone())).collect();
    out.retain(|f| f.rule != Rule::AllowFiltering || !large.contains(&(f.line, f.subject.clone())));
    sort(&mut out);
    out
}

fn sort(v: &mut [Finding]) {
    v.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.file.cmp(&b.file)).then(a.line.cmp(&b.line)).then(a.rule.cmp(&b.rule)));
}

/// Lints a workload (built-in name or file) or an experiment file (its base workload and every
/// variant; a variant's findings that the base already has are not repeated, the others point
/// at the experiment file where the variant's statement is written there).
pub fn lint_target(target: &str, overrides: &BTreeMap<String, String>, opts: &LintOptions) -> Result<Vec<Finding>, WorkloadError> {
    lint_target_with(target, overrides, opts, &mut |w| w)
}

/// [`lint_target`], passing every workload through `adjust` first (e.g. [`live_schema::apply_live`]).
pub fn lint_target_with(
    target: &str,
    overrides: &BTreeMap<String, String>,
    opts: &LintOptions,
    adjust: &mut dyn FnMut(Workload) -> Workload,
) -> Result<Vec<Finding>, WorkloadError> {
    let path = Path::new(target);
    if is_experiment(path) {
        return lint_experiment(path, overrides, opts, adjust);
    }
    let (w, _) = load_workload(target, overrides)?;
    Ok(lint(&adjust(w), opts))
}

/// An experiment file (or a shipped experiment's name) has `workload:` and `variants:` at the
/// top level.
pub fn is_experiment(path: &Path) -> bool {
    let Ok((_, src)) = crate::experiment::experiment_source(path) else { return false };
    let Ok(doc) = yaml::parse(&src) else { return false };
    doc.get("workload").is_some() && doc.get("variants").is_some()
}

fn lint_experiment(
    path: &Path,
    overrides: &BTreeMap<String, String>,
    opts: &LintOptions,
    adjust: &mut dyn FnMut(Workload) -> Workload,
) -> Result<Vec<Finding>, WorkloadError> {
    let exp = crate::experiment::load_experiment(path, overrides)?;
    let (exp_file, exp_src) = crate::experiment::experiment_source(path).unwrap_or_default();
    // the base workload, read as the experiment reads it, so its findings carry true lines
    let doc = yaml::parse(&exp_src).map_err(|e| WorkloadError::yaml(&exp_file, None, e))?;
    let base_ref = doc.get("workload").and_then(Node::scalar_text).unwrap_or_default();
    let base_target = if crate::workload::builtin(&base_ref).is_some() {
        base_ref.clone()
    } else {
        path.parent().unwrap_or(Path::new(".")).join(&base_ref).display().to_string()
    };
    let (base, _) = load_workload(&base_target, overrides)?;
    let mut out = lint(&adjust(base), opts);
    let base_keys: Vec<(Rule, String)> = out.iter().map(|f| (f.rule, f.statement.clone())).collect();
    for v in &exp.variants {
        let block = doc.at(&["variants"]).and_then(|vs| vs.entry(&v.name));
        for mut f in lint(&adjust(v.workload.clone()), opts) {
            if base_keys.contains(&(f.rule, f.statement.clone())) {
                continue;
            }
            // the variant's patch caused it: point at the statement in the variant's block of
            // the experiment file, else at the variant itself
            let words: Vec<&str> = f.statement.split_whitespace().take(4).collect();
            let in_block = block.and_then(|b| line_of_text(&b.node, &words.join(" ")));
            f.file = exp_file.clone();
            f.line = in_block.or(block.map(|b| b.key_line));
            f.subject = format!("{} (variant {})", f.subject, v.name);
            if !out.iter().any(|o| o.rule == f.rule && o.file == f.file && o.line == f.line && o.message == f.message) {
                out.push(f);
            }
        }
    }
    sort(&mut out);
    Ok(out)
}

/// The line of the first string under `node` whose words contain `needle`'s.
fn line_of_text(node: &Node, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    match &node.value {
        Value::Str(s) => s.split_whitespace().collect::<Vec<_>>().join(" ").contains(needle).then_some(node.line),
        Value::Seq(items) => items.iter().find_map(|n| line_of_text(n, needle)),
        Value::Map(entries) => entries.iter().find_map(|e| line_of_text(&e.node, needle)),
        _ => None,
    }
}

/// The findings at `min` severity or worse.
pub fn at_least(findings: &[Finding], min: Severity) -> Vec<&Finding> {
    findings.iter().filter(|f| f.severity >= min).collect()
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// Parses inline workload YAML through the normal loader and lints it.
    pub fn lint_yaml(src: &str) -> Vec<Finding> {
        lint_yaml_with(src, &LintOptions::default())
    }

    pub fn lint_yaml_with(src: &str, opts: &LintOptions) -> Vec<Finding> {
        let w = crate::workload::parse_workload(src, "t.yaml", &BTreeMap::new()).unwrap_or_else(|e| panic!("test workload: {e}"));
        lint(&w, opts)
    }

    /// The findings of one rule.
    pub fn of(f: &[Finding], rule: Rule) -> Vec<&Finding> {
        f.iter().filter(|x| x.rule == rule).collect()
    }

    /// The line of the first line of `src` that contains `text`.
    pub fn line_of(src: &str, text: &str) -> usize {
        src.lines().position(|l| l.contains(text)).map(|i| i + 1).unwrap_or_else(|| panic!("no line with {text}"))
    }
}
