//! A cassandra-stress user profile (and optionally its command line) as a casslab workload
//! that writes what cassandra-stress writes.
//!
//! A partition is a seed: cassandra-stress draws seeds from `-pop` (`seq=1..N` for an
//! insert-only run, `gaussian(1..N)` for anything else, for reads and inserts alike) and makes
//! the partition's key and rows from the seed. The workload does the same with `rows:` (see
//! `gen::rows`): a seed generator (`seed`, a sequence, for the load; `pop` for the run), key
//! generators drawn from the seed with each column's `population`, clustering levels with
//! their `cluster` counts fixed per partition. One insert is one operation over `partitions`
//! partitions writing the rows `select` picks (drawn per visit), in batches of `batchtype`
//! that stay under Cassandra's batch size limit; a profile's `condition` is kept. Queries bind
//! one existing row of a partition drawn the same way. Columns are `stress_columns`'s, the
//! insert's shape `stress_rows`'s. Where the meaning differs, the line says so in a comment,
//! and the warnings list what was not carried over.

use super::markers::{markers, Marker};
use super::stress_command::StressCommand;
use super::stress_dist::{num, to_fields, StressDist, StressKind};
use super::stress_profile::{read_profile, replication_of, schema_statement, ColumnSpec, Profile};
use super::stress_rows::{gen_name, parse_select, Shape};
use super::workload_writer::{ident, one_line, quote, Yaml};
use super::{ImportError, Imported};
use crate::cql::{parse_schema, SchemaStmt, Table};
use crate::workload::MAX_BATCH_ROWS;

/// Partitions the load writes when neither the command line nor `-pop` says (cassandra-stress's
/// own default seed range, 1..1M).
pub const DEFAULT_PARTITIONS: u64 = 1_000_000;

/// The most a batch is made to carry, in bytes: under Cassandra's default
/// `batch_size_fail_threshold` of 50 KiB, with room for the estimate being low.
const BATCH_BYTES: u64 = 32 * 1024;

/// Imports the profile `src` (read from `file`); `command` adds what a command line says.
pub fn import_profile(src: &str, file: &str, command: Option<&StressCommand>) -> Result<Imported, ImportError> {
    let mut warnings = Vec::new();
    let p = read_profile(src, file, &mut warnings)?;
    let (ddl, ddl_line) = p.table_definition.clone().ok_or_else(|| {
        ImportError::new(file, None, format!("the profile has no table_definition, so the columns of {}.{} are unknown: add it, or import the live table with `casslab import cluster --keyspace {} --table {}`", p.keyspace, p.table, p.keyspace, p.table))
    })?;
    let Some(SchemaStmt::Table(table)) = parse_schema(&ddl) else {
        return Err(ImportError::new(file, Some(ddl_line), "table_definition is not a CREATE TABLE statement casslab can read"));
    };
    let mut b = Builder { p: &p, file, table, command, warnings, y: Yaml::default(), notes: vec![], pending: vec![], skipped: vec![], partitions_per_op: None };
    b.write(file)?;
    let Builder { y, warnings, notes, partitions_per_op, .. } = b;
    Ok(Imported { yaml: y.finish(), warnings, notes, partitions_per_op })
}

pub(super) struct Builder<'a> {
    pub(super) p: &'a Profile,
    file: &'a str,
    pub(super) table: Table,
    command: Option<&'a StressCommand>,
    warnings: Vec<String>,
    notes: Vec<String>,
    y: Yaml,
    /// Generators the queries need beyond the columns' (LIMIT, token starts).
    pending: Vec<String>,
    /// Queries left out.
    skipped: Vec<String>,
    partitions_per_op: Option<f64>,
}

/// The seeds the workload draws: `first..=last` (cassandra-stress's `-pop` range), and how the
/// file writes them (`${partitions}` when they start at 1).
struct Seeds {
    first: i64,
    last: i64,
}

impl Seeds {
    fn starts_at_one(&self) -> bool {
        self.first == 1
    }
    fn lo(&self) -> String {
        if self.starts_at_one() {
            "1".into()
        } else {
            "\"${first_seed}\"".into()
        }
    }
    fn hi_excl(&self) -> String {
        if self.starts_at_one() {
            "\"${partitions + 1}\"".into()
        } else {
            "\"${last_seed + 1}\"".into()
        }
    }
    fn count(&self) -> u64 {
        (self.last - self.first + 1).max(1) as u64
    }
}

impl Builder<'_> {
    fn warn(&mut self, line: Option<usize>, m: impl Into<String>) {
        let m = m.into();
        self.warnings.push(match line {
            Some(l) => format!("{}:{l}: {m}", self.file),
            None => m,
        });
    }

    pub(super) fn spec(&self, col: &str) -> Option<&ColumnSpec> {
        self.p.column(col)
    }

    pub(super) fn ty(&self, col: &str) -> String {
        self.table.column(col).map(|c| c.ty.clone()).unwrap_or_else(|| "text".into())
    }

    /// Whether the workload has a load phase (the insert-only run that populates; a profile
    /// imported without a command line has one too) and a run phase (a mix).
    fn phases(&self) -> (bool, bool) {
        match self.command {
            None => (true, true),
            Some(c) if c.insert_only() => (true, false),
            Some(_) => (false, true),
        }
    }

    fn seeds(&self) -> Seeds {
        match self.command {
            Some(c) => match (c.pop_seq, &c.pop_dist, c.n) {
                (Some((lo, hi)), _, _) => Seeds { first: lo, last: hi.max(lo) },
                (_, Some(d), _) => Seeds { first: d.lo.max(1), last: d.hi.max(1) },
                (_, _, Some(n)) => Seeds { first: 1, last: n.max(1) as i64 },
                _ => Seeds { first: 1, last: DEFAULT_PARTITIONS as i64 },
            },
            None => Seeds { first: 1, last: DEFAULT_PARTITIONS as i64 },
        }
    }

    fn write(&mut self, file: &str) -> Result<(), ImportError> {
        let p = self.p;
        for c in &p.columns {
            if self.table.column(&c.name).is_none() && self.table.column(&c.name.to_ascii_lowercase()).is_none() {
                self.warn(Some(c.line), format!("columnspec names `{}`, which {} does not have; ignored", c.name, p.table));
            }
        }
        let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("profile");
        let seeds = self.seeds();
        let shape = self.shape()?;
        self.y.line(0, &format!("name: {}", ident(stem)), None);
        self.y.line(
            0,
            &format!("description: {}", quote(&format!("imported from the cassandra-stress profile {stem} (table {}.{})", p.keyspace, p.table))),
            None,
        );
        self.y.line(0, "params:", None);
        if seeds.starts_at_one() {
            self.y.line(2, &format!("partitions: {}", seeds.last), Some("cassandra-stress's seeds 1..N (-pop seq=1..N, or n=): each seed names a partition"));
        } else {
            self.y.line(2, &format!("first_seed: {}", seeds.first), Some("-pop seq=A..B: the seeds A..B, each naming a partition"));
            self.y.line(2, &format!("last_seed: {}", seeds.last), None);
        }
        let replication = match &p.keyspace_definition {
            Some((ks_ddl, line)) => match replication_of(ks_ddl) {
                Some(r) => Some(r),
                None => {
                    self.warn(Some(*line), "keyspace_definition has no replication map; casslab chooses one that fits the cluster");
                    None
                }
            },
            None => None,
        };
        // SimpleStrategy's factor as a parameter: a profile written for 3 replicas runs its
        // conditional writes (a quorum of the factor) on a smaller cluster with -P replication_factor=1
        let factor = replication.as_deref().and_then(simple_factor);
        if let Some((rf, _)) = &factor {
            self.y.line(2, &format!("replication_factor: {rf}"), Some("the profile's; fewer nodes than this fail every quorum and conditional write"));
            if *rf > 1 && self.insert_setting("condition").is_some() {
                self.notes.push(format!("the insert is conditional (Paxos needs a quorum of the {rf} replicas): on a cluster of fewer than {} nodes run it with -P replication_factor=1, as cassandra-stress would fail there too", rf / 2 + 1));
            }
        }
        self.y.line(2, &format!("keyspace: {}", ident(&p.keyspace)), None);
        self.y.line(0, "keyspace: ${keyspace}", None);
        match (&replication, &factor) {
            (_, Some((_, templated))) => self.y.line(0, &format!("replication: {}", quote(templated)), None),
            (Some(r), None) => self.y.line(0, &format!("replication: {}", quote(r)), None),
            (None, None) => {}
        }
        self.schema(&shape);
        // the operations first, aside: their queries may need generators of their own
        let head = std::mem::take(&mut self.y);
        self.operations(&shape);
        let ops = std::mem::replace(&mut self.y, head).finish();
        self.generators(&shape, &seeds);
        self.y.raw(&ops);
        let (load, run) = self.phases();
        if load {
            self.load_phase(&shape, &seeds, run);
        }
        if run {
            self.run_phase(&shape)?;
        }
        self.differences();
        Ok(())
    }

    fn insert_setting(&self, key: &str) -> Option<(String, Option<usize>)> {
        if let Some((_, v)) = self.command.and_then(|c| c.insert.iter().find(|(k, _)| k == key)) {
            return Some((v.clone(), None));
        }
        self.p.insert_value(key).map(|(v, l)| (v.to_string(), Some(l)))
    }

    fn shape(&mut self) -> Result<Shape, ImportError> {
        let levels = self.table.clustering.iter().map(|ck| (ck.clone(), self.spec(ck).and_then(|s| s.cluster.clone()))).collect();
        let partitions = match self.insert_setting("partitions") {
            None => StressDist::parse("fixed(1)").expect("valid"),
            Some((v, line)) => StressDist::parse(&v)
                .and_then(|d| d.at_least(1, "partitions per insert"))
                .map_err(|m| ImportError::new(self.file, line, format!("insert partitions: {m}")))?,
        };
        let select = match self.insert_setting("select") {
            None => None,
            Some((v, line)) => {
                let (d, div) = parse_select(&v).map_err(|m| ImportError::new(self.file, line, format!("insert select: {m}")))?;
                (!(d.kind == StressKind::Fixed && d.lo >= div)).then_some((d, div))
            }
        };
        if let Some((_, line)) = self.insert_setting("row-population") {
            self.warn(line, "insert row-population is not carried over: every column of a written row is set");
        }
        Ok(Shape { levels, partitions, select })
    }

    fn schema(&mut self, shape: &Shape) {
        let p = self.p;
        self.y.line(0, "schema:", None);
        let mut notes = Vec::new();
        // types first: the table may use them
        let (types, others): (Vec<_>, Vec<_>) = p.extra_definitions.iter().partition(|(d, _)| one_line(d).to_ascii_uppercase().starts_with("CREATE TYPE"));
        for (d, line) in types {
            self.schema_entry(d, *line, &mut notes);
        }
        let (ddl, line) = p.table_definition.clone().expect("checked");
        self.schema_entry(&ddl, line, &mut notes);
        for (d, line) in others {
            self.schema_entry(d, *line, &mut notes);
        }
        for n in notes {
            self.notes.push(n);
        }
        if shape.rows_max() > 100_000.0 {
            self.warn(None, format!("partitions of up to {} rows: cassandra-stress warns above 100M, casslab lint above 100,000", shape.rows_max()));
        }
    }

    fn schema_entry(&mut self, ddl: &str, line: usize, notes: &mut Vec<String>) {
        let before = notes.len();
        match schema_statement(ddl, &self.p.keyspace, notes) {
            Some(s) => {
                let comment = (notes.len() > before).then(|| notes[before..].join("; "));
                self.y.line(2, &format!("- {}", quote(&s)), comment.as_deref());
            }
            None => self.warn(Some(line), format!("\"{}\" is not a CREATE statement; a casslab schema only creates, so it is left out", one_line(ddl))),
        }
    }

    /// The key generators' names, in the partition key's order.
    fn key_gens(&self) -> Vec<String> {
        self.table.partition_key.iter().map(|k| format!("pk_{}", ident(k))).collect()
    }

    fn generators(&mut self, shape: &Shape, seeds: &Seeds) {
        self.y.line(0, "generators:", None);
        let (load, run) = self.phases();
        self.y.comment(2, "seeds: each draw names a partition, whose key and rows are made from it");
        if load {
            self.y.line(
                2,
                &format!("seed: {{ type: bigint, dist: sequence, min: {}, max: {} }}", seeds.lo(), seeds.hi_excl()),
                Some("the load's seeds in order, as cassandra-stress's insert-only run (-pop seq) walks them"),
            );
        }
        if run {
            let (fields, note) = self.pop_fields(seeds);
            self.y.line(2, &format!("pop: {{ type: bigint, {fields} }}"), Some(&note));
        }
        self.y.comment(2, "partition key: drawn from the seed with each column's population");
        for k in self.table.partition_key.clone() {
            let (f, note) = self.value_fields(&k);
            self.y.line(2, &format!("pk_{}: {{ {f} }}", ident(&k)), note.as_deref());
        }
        if !shape.levels.is_empty() {
            self.y.comment(2, "clustering: each level's values drawn per partition with the column's population, `cluster` of them under each value above");
        }
        for (ck, _) in &shape.levels {
            let (f, note) = self.value_fields(ck);
            self.y.line(2, &format!("{}: {{ {f} }}", gen_name(ck)), note.as_deref());
        }
        let regular: Vec<String> = self.table.columns.iter().filter(|c| !self.table.is_key(&c.name)).map(|c| c.name.clone()).collect();
        if !regular.is_empty() {
            self.y.comment(2, "columns: population = distinct values, size = characters, bytes or elements");
        }
        for c in &regular {
            let (f, note) = self.value_fields(c);
            self.y.line(2, &format!("{}: {{ {f} }}", ident(c)), note.as_deref());
        }
        let mut seen = std::collections::BTreeSet::new();
        for g in std::mem::take(&mut self.pending) {
            if seen.insert(g.clone()) {
                self.y.line(2, &g, None);
            }
        }
    }

    /// The run's seeds: `-pop dist=`, `-pop seq=` (a sequence reads and inserts share), or
    /// cassandra-stress's default gaussian(1..N).
    fn pop_fields(&self, seeds: &Seeds) -> (String, String) {
        if let Some(d) = self.command.and_then(|c| c.pop_dist.clone()) {
            return (to_fields(&d, true).fields, format!("-pop dist={}: the run's reads and inserts draw their seeds from it", d.written));
        }
        if self.command.is_some_and(|c| c.pop_seq.is_some()) {
            return (
                format!("dist: sequence, min: {}, max: {}", seeds.lo(), seeds.hi_excl()),
                "-pop seq: reads and inserts take the next seeds in turn".into(),
            );
        }
        // casslab rounds a gaussian draw where cassandra-stress truncates: half a unit lower
        (
            "dist: gaussian, min: 1, max: \"${partitions + 1}\", mean: \"${partitions / 2}\", stddev: \"${partitions / 6}\"".into(),
            "cassandra-stress's default -pop dist=gaussian(1..N), for reads and inserts alike".into(),
        )
    }

    fn consistency(&self, own: Option<&str>) -> String {
        own.map(str::to_string).or_else(|| self.command.and_then(|c| c.cl.clone())).unwrap_or_else(|| "LOCAL_ONE".into())
    }

    fn operations(&mut self, shape: &Shape) {
        self.y.line(0, "operations:", None);
        let (load, run) = self.phases();
        match (load, run) {
            (true, true) => {
                self.insert_op("load", "seed", shape);
                self.insert_op("insert", "pop", shape);
            }
            (true, false) => self.insert_op("insert", "seed", shape),
            _ => self.insert_op("insert", "pop", shape),
        }
        let seed = if run { "pop" } else { "seed" };
        for qd in self.p.queries.clone() {
            self.query(&qd, shape, seed);
        }
        for tq in self.p.token_queries.clone() {
            let q = |c: &str| quoted_ident(c);
            let pk: Vec<String> = self.table.partition_key.iter().map(|k| q(k)).collect();
            self.y.line(2, &format!("{}:", ident(&tq.name)), None);
            let cql = format!("SELECT {} FROM {} WHERE token({}) >= ? LIMIT {}", tq.columns, q(&self.table.name), pk.join(", "), tq.page_size);
            self.y.line(
                4,
                &format!("cql: {}", quote(&cql)),
                Some("cassandra-stress walks every token range in pages; this reads one page from a random token"),
            );
            self.y.line(4, "args: [token_start]", None);
            self.y.line(4, &format!("consistency: {}", self.consistency(None)), None);
        }
        if !self.p.token_queries.is_empty() {
            self.pending.push("token_start: { type: bigint, min: -9223372036854775808, max: 9223372036854775807 }".into());
        }
    }

    /// cassandra-stress's insert: UPDATE … SET every regular column (sets, lists and counters
    /// added to), or INSERT of the key for a table of key columns only, with the profile's
    /// `condition`; its partitions from seeds of `seed`.
    fn insert_op(&mut self, name: &str, seed: &str, shape: &Shape) {
        let t = &self.table;
        let regular: Vec<&crate::cql::Column> = t.columns.iter().filter(|c| !t.is_key(&c.name)).collect();
        let keys: Vec<String> = t.partition_key.iter().chain(t.clustering.iter()).cloned().collect();
        let key_arg = |k: &String| if t.partition_key.contains(k) { format!("pk_{}", ident(k)) } else { gen_name(k) };
        let q = |c: &str| quoted_ident(c);
        let (mut cql, args): (String, Vec<String>) = if regular.is_empty() {
            let cols: Vec<String> = keys.iter().map(|k| q(k)).collect();
            (format!("INSERT INTO {} ({}) VALUES ({})", q(&t.name), cols.join(", "), vec!["?"; cols.len()].join(", ")), keys.iter().map(key_arg).collect())
        } else {
            let sets: Vec<String> = regular
                .iter()
                .map(|c| match c.ty.split('<').next() {
                    Some("set") | Some("list") | Some("counter") => format!("{} = {} + ?", q(&c.name), q(&c.name)),
                    _ => format!("{} = ?", q(&c.name)),
                })
                .collect();
            let wh: Vec<String> = keys.iter().map(|k| format!("{} = ?", q(k))).collect();
            let args = regular.iter().map(|c| ident(&c.name)).chain(keys.iter().map(key_arg)).collect();
            (format!("UPDATE {} SET {} WHERE {}", q(&t.name), sets.join(", "), wh.join(" AND ")), args)
        };
        let condition = self.insert_setting("condition").map(|(c, _)| one_line(&c));
        if let Some(c) = &condition {
            cql.push(' ');
            cql.push_str(c);
        }
        self.y.line(2, &format!("{name}:"), None);
        self.y.line(4, &format!("cql: {}", quote(&cql)), condition.as_ref().map(|_| "the profile's insert condition"));
        self.y.line(4, &format!("args: [{}]", args.join(", ")), None);
        self.y.line(4, &format!("consistency: {}", self.consistency(None)), None);
        if condition.is_some() {
            let serial = self.command.and_then(|c| c.serial_cl.clone()).unwrap_or_else(|| "SERIAL".into());
            self.y.line(4, &format!("serial_consistency: {serial}"), None);
        }
        let key = self.key_gens();
        self.y.line(
            4,
            &format!("rows: {}", shape.rows_yaml(seed, &key, true)),
            Some(&format!("one insert: {:.1} rows over {:.1} partitions on average", shape.rows_per_insert(), shape.partitions.mean())),
        );
        if let Some((kind, size, note)) = self.batch(shape) {
            self.y.line(4, &format!("batch: {{ kind: {kind}, size: {size} }}"), note.as_deref());
        }
    }

    /// The batch one insert's rows go in: (kind, rows per batch at most, comment), or none
    /// when they go one by one (a single row, or counters).
    fn batch(&self, shape: &Shape) -> Option<(&'static str, u64, Option<String>)> {
        let written = self.insert_setting("batchtype").map(|(v, _)| v.to_ascii_uppercase()).unwrap_or_else(|| "LOGGED".into());
        let counter = self.table.columns.iter().any(|c| c.ty == "counter");
        let most = shape.rows_max() * shape.partitions.hi.max(1) as f64;
        if most <= 1.0 || counter || written == "COUNTER" {
            return None;
        }
        let row_bytes = self.row_bytes().max(1.0);
        let size = (MAX_BATCH_ROWS as u64).min(((BATCH_BYTES as f64 / row_bytes) as u64).max(1));
        let mean = shape.rows_per_insert();
        let note = (mean > size as f64).then(|| {
            format!(
                "an insert writes {mean:.0} rows on average (about {:.0} KiB): sent as batches of at most {size}, one after the other, timed as one operation, under Cassandra's default batch_size_fail_threshold (50 KiB)",
                mean * row_bytes / 1024.0
            )
        });
        let kind = if written == "UNLOGGED" { "unlogged" } else { "logged" };
        Some((kind, size, note.or_else(|| (written != "UNLOGGED").then(|| "cassandra-stress's default batchtype LOGGED".into()))))
    }

    fn query(&mut self, qd: &super::stress_profile::Query, shape: &Shape, seed: &str) {
        let cql = one_line(&qd.cql).replace(&format!("{}.", self.p.keyspace), "");
        let mut args = Vec::new();
        let mut notes = Vec::new();
        let mut extra_gens = Vec::new();
        for m in markers(&cql) {
            let a = match &m {
                Marker::Column(c) if self.table.partition_key.iter().any(|k| k == c) => format!("pk_{}", ident(c)),
                Marker::Column(c) if shape.levels.iter().any(|(k, _)| k == c) => gen_name(c),
                Marker::Column(c) if self.table.column(c).is_some() => {
                    if qd.samerow {
                        notes.push(format!("`{c}` is drawn on its own, not from the same row"));
                    }
                    ident(c)
                }
                Marker::Limit => {
                    extra_gens.push("query_limit: { type: int, min: 100, max: 101 }".to_string());
                    "query_limit".into()
                }
                other => {
                    self.warn(Some(qd.line), format!("query `{}`: a `?` ({other:?}) that no column generator fits; the query is left out", qd.name));
                    self.skipped.push(qd.name.clone());
                    return;
                }
            };
            args.push(a);
        }
        notes.dedup();
        if crate::cql::is_conditional(&cql) && markers(&cql).iter().any(|m| matches!(m, Marker::Column(c) if !self.table.is_key(c))) {
            self.warn(
                Some(qd.line),
                format!("query `{}`: cassandra-stress binds an `IF col = ?` condition to the row's current value (read first), so nearly every update applies; casslab binds a drawn value, so most will not apply (counted under {}.not_applied)", qd.name, ident(&qd.name)),
            );
        }
        self.y.line(2, &format!("{}:", ident(&qd.name)), None);
        self.y.line(4, &format!("cql: {}", quote(&cql)), None);
        self.y.line(4, &format!("args: [{}]", args.join(", ")), Some(&notes.join("; ")));
        self.y.line(4, &format!("consistency: {}", self.consistency(qd.consistency.as_deref())), None);
        let serial = qd.serial_consistency.clone().or_else(|| self.command.and_then(|c| c.serial_cl.clone()).filter(|_| crate::cql::is_conditional(&cql)));
        if let Some(s) = serial {
            self.y.line(4, &format!("serial_consistency: {s}"), None);
        }
        let key = self.key_gens();
        self.y.line(4, &format!("rows: {}", shape.rows_yaml(seed, &key, false)), Some("a partition drawn as the inserts draw them, and one of its rows"));
        self.pending.extend(extra_gens);
    }

    /// The load: cassandra-stress's `ops(insert=1) n=N` over the seeds in order; `n` counts
    /// partitions there, so the load runs N / (partitions per insert) inserts.
    fn load_phase(&mut self, shape: &Shape, seeds: &Seeds, with_run: bool) {
        let op = if with_run { "load" } else { "insert" };
        let mean = shape.partitions.mean().max(1e-9);
        let count = match (&shape.partitions.kind, shape.partitions.lo) {
            (StressKind::Fixed, 1) if seeds.starts_at_one() => "\"${partitions}\"".to_string(),
            (StressKind::Fixed, k) if seeds.starts_at_one() => format!("\"${{partitions / {k}}}\""),
            _ => ((seeds.count() as f64 / mean).round().max(1.0) as u64).to_string(),
        };
        let note = if shape.partitions.kind == StressKind::Fixed {
            "every seed visited once".to_string()
        } else {
            format!("cassandra-stress stops after {} partitions; {} inserts of {:.1} partitions on average visit about as many", seeds.count(), count, mean)
        };
        self.y.line(0, &format!("load: {{ op: {op}, count: {count} }}"), Some(&note));
    }

    fn run_phase(&mut self, shape: &Shape) -> Result<(), ImportError> {
        let mix: Vec<(String, f64)> = match self.command {
            Some(c) => c.ops.clone(),
            None => std::iter::once("insert".to_string())
                .chain(self.p.queries.iter().map(|q| q.name.clone()))
                .chain(self.p.token_queries.iter().map(|q| q.name.clone()))
                .map(|n| (n, 1.0))
                .collect(),
        };
        let known: Vec<String> = std::iter::once("insert".to_string())
            .chain(self.p.queries.iter().map(|q| q.name.clone()))
            .chain(self.p.token_queries.iter().map(|q| q.name.clone()))
            .collect();
        let mut parts = Vec::new();
        let (mut weight, mut permits) = (0.0, 0.0);
        for (op, r) in mix {
            if !known.contains(&op) {
                // cassandra-stress refuses it too: a mix without it would be another mix
                return Err(ImportError::new(
                    self.file,
                    None,
                    format!(
                        "--command ops({op}=…): the profile has no operation \"{op}\"{}; its operations are {}",
                        crate::suggest::hint(&op, &known),
                        known.join(", ")
                    ),
                ));
            }
            if self.skipped.contains(&op) {
                self.warn(None, format!("ops({op}=…): the query could not be carried over (see above); left out of the mix"));
            } else if r > 0.0 {
                parts.push(format!("{}: {}", ident(&op), num(r)));
                weight += r;
                permits += r * if op == "insert" { shape.partitions.mean() } else { 1.0 };
            }
        }
        if parts.is_empty() {
            return Err(ImportError::new(self.file, None, "--command ops(…): none of its operations with a ratio above 0 could be carried over, so the run would have no mix; give ops(…) an operation the workload keeps (insert, or a query listed above)"));
        }
        if weight > 0.0 {
            self.partitions_per_op = Some(permits / weight);
        }
        let duration = self.command.and_then(|c| c.duration.clone()).unwrap_or_else(|| "60s".into());
        let warmup = if self.command.is_some_and(|c| c.no_warmup) { "0s" } else { "5s" };
        // n= of the command line: a count, given when running (the workload's run is timed)
        let counted = self.command.and_then(|c| Some((c.n?, c.run_count(self.partitions_per_op)?)));
        let note = counted.map(|(n, count)| format!("n={n}: run it with --count {count} to end after as many operations (--print-command)"));
        self.y.line(0, &format!("run: {{ mix: {{ {} }}, warmup: {warmup}, duration: {duration} }}", parts.join(", ")), note.as_deref());
        Ok(())
    }

    /// What cassandra-stress does that the workload does not, said once each.
    fn differences(&mut self) {
        let text_key = self.table.partition_key.iter().chain(self.table.clustering.iter()).any(|k| matches!(self.ty(k).as_str(), "text" | "varchar" | "ascii"));
        if text_key {
            self.warn(None, "text keys are made of 62 characters (letters and digits) where cassandra-stress uses 128 (any 7-bit code): keys of 1 to 3 characters collide more often here, so a profile with short text keys writes fewer distinct partitions");
        }
        if self.table.clustering.len() >= 3 {
            self.warn(None, format!("{} clustering columns: cassandra-stress 4.0–5.0's PartitionIterator ends a visit when it climbs back to a clustering level below the first (its last-row bound is 0 there), so it writes the rows under one value of `{}` per partition visit; casslab writes every row `select` picks", self.table.clustering.len(), self.table.clustering[self.table.clustering.len() - 2]));
        }
        if self.command.is_some_and(|c| !c.no_warmup) || self.command.is_none() {
            self.notes.push("cassandra-stress first runs a warm-up of 25% of n (at most 50,000) operations that writes too (the first seeds again); casslab's load has none (its run warms up for 5 s, unmeasured): add no-warmup to compare the two".into());
        }
        if self.phases() == (false, true) {
            self.notes.push("no load phase: a mixed cassandra-stress run writes only what its own inserts write (its reads meet unwritten partitions); import `ops(insert=1) n=N` too (or the profile alone) to populate first".into());
        }
    }
}

/// A SimpleStrategy replication map's factor, and the map with `${replication_factor}` in its place.
fn simple_factor(map: &str) -> Option<(u64, String)> {
    if !map.contains("SimpleStrategy") {
        return None;
    }
    let at = map.find("replication_factor")?;
    let rest = &map[at + "replication_factor".len()..];
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    let digits: String = rest[start..].chars().take_while(|c| c.is_ascii_digit()).collect();
    let rf = digits.parse().ok()?;
    let cut = at + "replication_factor".len() + start;
    Some((rf, format!("{}${{replication_factor}}{}", &map[..cut], &map[cut + digits.len()..])))
}

/// A column name as CQL needs it: as is when lower case, else quoted.
fn quoted_ident(c: &str) -> String {
    if c.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_') {
        c.to_string()
    } else {
        format!("\"{c}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{parse_workload, BatchKind};

    fn data(name: &str) -> String {
        std::fs::read_to_string(format!("{}/../casslab/tests/data/stress/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn imported(name: &str, command: Option<&str>) -> (Imported, crate::workload::Workload) {
        let c = command.map(|l| super::super::stress_command::parse_command(l).unwrap());
        let i = import_profile(&data(name), name, c.as_ref()).unwrap();
        let w = parse_workload(&i.yaml, "imported.yaml", &Default::default()).unwrap_or_else(|e| panic!("{e}\n{}", i.yaml));
        (i, w)
    }

    #[test]
    fn every_test_profile_becomes_a_valid_workload() {
        for name in [
            "timeline.yaml",
            "accounts.yaml",
            "follows.yaml",
            "visits.yaml",
            "apache-example.yaml",
            "apache-insanity.yaml",
            "apache-counter.yaml",
            "apache-lwt.yaml",
        ] {
            let (i, w) = imported(name, None);
            assert!(w.operation("insert").is_some() && w.operation("load").is_some(), "{name}");
            assert!(crate::lint::lint(&w, &Default::default()).iter().all(|f| f.severity != crate::lint::Severity::Error), "{name}:\n{}", i.yaml);
        }
    }

    #[test]
    fn an_insert_is_one_operation_over_its_partitions_with_drawn_rows() {
        let (i, w) = imported("apache-example.yaml", None);
        let insert = w.operation("insert").unwrap().cql().unwrap();
        let rows = insert.rows.as_ref().unwrap();
        assert_eq!((rows.seed.as_str(), rows.key.clone()), ("pop", vec!["pk_name".to_string(), "pk_choice".to_string()]));
        assert_eq!(rows.levels, ["ck_date", "ck_address", "ck_dbl", "ck_lval", "ck_ival", "ck_uid"]);
        assert!(rows.partitions.is_some() && rows.select.is_some());
        assert_eq!(insert.batch.as_ref().unwrap().kind, BatchKind::Logged);
        assert_eq!(w.operation("load").unwrap().cql().unwrap().rows.as_ref().unwrap().seed, "seed");
        let simple = *w.operation("simple1").unwrap().cql().unwrap().rows.clone().unwrap();
        assert!(simple.one_row && simple.seed == "pop");
        assert!(i.yaml.contains("pk_choice: { type: boolean, values: [true] }"), "{}", i.yaml);
        assert!(i.warnings.iter().any(|m| m.contains("62 characters")));
        assert!(i.warnings.iter().any(|m| m.contains("6 clustering columns")));
        // 1M seeds by default, about 25.5 partitions an insert
        assert_eq!(w.load.as_ref().unwrap().count, (1_000_000f64 / 25.5).round() as u64);
        assert!((i.partitions_per_op.unwrap() - (25.5 + 2.0) / 3.0).abs() < 0.01, "{:?}", i.partitions_per_op);
    }

    #[test]
    fn a_command_line_sets_the_seeds_the_mix_and_the_consistency() {
        let (i, w) = imported(
            "timeline.yaml",
            Some("user ops(insert=1,by_day=3) n=500 cl=QUORUM -pop dist=uniform(1..500) -insert partitions=fixed(2) select-ratio=fixed(1)/1"),
        );
        let mut mix = w.run.as_ref().unwrap().mix.clone();
        mix.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(mix, vec![("by_day".to_string(), 3.0), ("insert".to_string(), 1.0)]);
        assert!(w.load.is_none(), "a mixed run does not populate first");
        // n=500 partitions: an insert visits 2, a read 1, 1.25 an operation on average
        assert!(i.yaml.contains("# n=500: run it with --count 400 to end after as many operations"), "{}", i.yaml);
        assert_eq!(w.operation("latest").unwrap().cql().unwrap().consistency, crate::workload::Consistency::Quorum);
        // an operation the profile lacks is refused, as cassandra-stress refuses it
        let c = super::super::stress_command::parse_command("user ops(insert=1,by_dya=1) n=500").unwrap();
        let e = import_profile(&data("timeline.yaml"), "timeline.yaml", Some(&c)).map(|_| ()).expect_err("an unknown operation").to_string();
        assert!(e.contains("timeline.yaml: --command ops(by_dya=…): the profile has no operation \"by_dya\"; did you mean \"by_day\"?"), "{e}");
        assert!(i.yaml.contains("pop: { type: bigint, dist: uniform, min: 1, max: 501 }"), "{}", i.yaml);
        // -pop seq=A..B keeps both bounds
        let (i, w) = imported("timeline.yaml", Some("user ops(insert=1) n=100000 -pop seq=100001..200000"));
        assert!(i.yaml.contains("first_seed: 100001") && i.yaml.contains("last_seed: 200000"), "{}", i.yaml);
        assert_eq!(w.generators["seed"].min.as_ref().unwrap().as_i64(), Ok(100_001));
        assert_eq!(w.load.as_ref().unwrap().count, 100_000);
        assert!(w.run.is_none());
    }

    #[test]
    fn a_condition_is_kept() {
        let (i, w) = imported("apache-lwt.yaml", None);
        let insert = w.operation("load").unwrap().cql().unwrap();
        assert!(insert.statements[0].cql.ends_with("IF body = NULL"), "{}", insert.statements[0].cql);
        assert!(insert.serial_consistency.is_some());
        assert!(i.yaml.contains("replication_factor: 3") && i.yaml.contains("'replication_factor': ${replication_factor}}"), "{}", i.yaml);
        assert!(i.notes.iter().any(|n| n.contains("-P replication_factor=1")));
    }

    #[test]
    fn types_cassandra_stress_cannot_generate_are_filled_in() {
        let src = "keyspace: ks\ntable: people\nextra_definitions:\n  - CREATE TYPE ks.address (street text, zip int)\ntable_definition: CREATE TABLE people (id bigint PRIMARY KEY, home frozen<address>, pair tuple<int, text>, m map<text, int>)\nqueries: {}\n";
        let i = import_profile(src, "p.yaml", None).unwrap();
        assert!(i.yaml.contains("fields: { street: { type: text }, zip: { type: int } }"), "{}", i.yaml);
        assert!(i.yaml.find("CREATE TYPE").unwrap() < i.yaml.find("CREATE TABLE").unwrap(), "types before the table");
        crate::workload::parse_workload(&i.yaml, "p.yaml", &Default::default()).unwrap_or_else(|e| panic!("{e}\n{}", i.yaml));
    }

    #[test]
    fn a_profile_without_a_table_definition_says_what_to_do() {
        let e = import_profile("keyspace: ks\ntable: t\nqueries: {}\n", "p.yaml", None).unwrap_err();
        assert!(e.message.contains("casslab import cluster --keyspace ks --table t"), "{e}");
    }
}
