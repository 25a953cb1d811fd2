//! A cassandra-stress user profile (and optionally its command line) as a casslab workload.
//!
//! How the data is laid out: every partition is a seed `s` in `1..=partitions`; its key columns
//! are `sequence` generators over the seeds, and its rows are the product of its clustering
//! levels' `cluster` counts, each clustering column a `sequence` that wraps at its level's
//! count and repeats once per row below it. One insert writes `select` × rows of each of
//! `partitions` partitions in one batch of `batchtype`; all its sequences are drawn under one
//! lock, so a batch writes whole runs of rows of its partitions, exactly as many as declared.
//! Regular columns draw their `population` (distinct values) and `size` (characters, bytes or
//! elements) from the distributions written (`stress_dist`). Queries bind each `?` to the
//! generator of the column it stands for (`markers`). Where the meaning differs, the line says
//! so in a comment, and the warnings list what was not carried over.

use super::markers::{markers, Marker};
use super::stress_command::StressCommand;
use super::stress_dist::{num, parse_ratio, to_fields, StressDist, StressKind};
use super::stress_profile::{read_profile, replication_of, schema_statement, ColumnSpec, Profile};
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
    let mut b = Builder { p: &p, file, table, command, warnings, y: Yaml::default(), notes: vec![], pending: vec![], skipped: vec![] };
    b.write(file)?;
    let Builder { y, warnings, notes, .. } = b;
    Ok(Imported { yaml: y.finish(), warnings, notes })
}

struct Builder<'a> {
    p: &'a Profile,
    file: &'a str,
    table: Table,
    command: Option<&'a StressCommand>,
    warnings: Vec<String>,
    notes: Vec<String>,
    y: Yaml,
    /// Generators the queries need beyond the columns' (lockstep keys, LIMIT, token starts).
    pending: Vec<String>,
    /// Queries left out.
    skipped: Vec<String>,
}

/// The rows each insert writes per partition and how the clustering levels lay them out.
struct Layout {
    /// (column, rows at this level, rows of the levels below one insert writes per value here)
    levels: Vec<(String, u64, u64)>,
    rows_per_partition: u64,
    /// rows of a partition one insert writes (`select` × rows)
    rows_per_visit: u64,
    partitions_per_insert: u64,
}

impl Builder<'_> {
    fn warn(&mut self, line: Option<usize>, m: impl Into<String>) {
        let m = m.into();
        self.warnings.push(match line {
            Some(l) => format!("{}:{l}: {m}", self.file),
            None => m,
        });
    }

    fn spec(&self, col: &str) -> Option<&ColumnSpec> {
        self.p.column(col)
    }

    fn write(&mut self, file: &str) -> Result<(), ImportError> {
        let p = self.p;
        for c in &p.columns {
            if self.table.column(&c.name).is_none() && self.table.column(&c.name.to_ascii_lowercase()).is_none() {
                self.warn(Some(c.line), format!("columnspec names `{}`, which {} does not have; ignored", c.name, p.table));
            }
        }
        let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("profile");
        let partitions = self.partitions_default();
        let layout = self.layout()?;
        self.y.line(0, &format!("name: {}", ident(stem)), None);
        self.y.line(
            0,
            &format!("description: {}", quote(&format!("imported from the cassandra-stress profile {stem} (table {}.{})", p.keyspace, p.table))),
            None,
        );
        self.y.line(0, "params:", None);
        self.y.line(
            2,
            &format!("partitions: {partitions}"),
            Some("partitions the load writes: cassandra-stress's seeds 1..N (-pop seq=1..N, or n=); at least 6"),
        );
        self.y.line(2, &format!("keyspace: {}", ident(&p.keyspace)), None);
        self.y.line(0, "keyspace: ${keyspace}", None);
        if let Some((ks_ddl, line)) = &p.keyspace_definition {
            match replication_of(ks_ddl) {
                Some(r) => self.y.line(0, &format!("replication: {}", quote(&r)), None),
                None => self.warn(Some(*line), "keyspace_definition has no replication map; casslab chooses one that fits the cluster"),
            }
        }
        self.schema(&layout);
        // the operations first, aside: their queries may need generators of their own
        let head = std::mem::take(&mut self.y);
        self.operations(&layout);
        let ops = std::mem::replace(&mut self.y, head).finish();
        self.generators(&layout);
        self.y.raw(&ops);
        let (_, size, _) = self.batch_kind(&layout);
        let rows = layout.rows_per_visit * layout.partitions_per_insert;
        let count = match (size, layout.partitions_per_insert) {
            (s, p) if s == rows && p > 1 => format!("${{partitions / {p}}}"),
            (s, _) if s == layout.rows_per_visit || s == rows => "${partitions}".to_string(),
            (1, _) => format!("${{partitions * {}}}", layout.rows_per_visit),
            (s, _) => format!("${{partitions * {}}}", layout.rows_per_visit / s),
        };
        self.y.line(0, &format!("load: {{ op: insert, count: \"{count}\" }}"), Some("every partition written once"));
        self.run_phase();
        Ok(())
    }

    fn partitions_default(&self) -> u64 {
        match self.command {
            Some(c) => match (c.pop_seq, &c.pop_dist, c.n) {
                (Some((_, hi)), _, _) => hi.max(1) as u64,
                (_, Some(d), _) => d.hi.max(1) as u64,
                (_, _, Some(n)) => n,
                _ => DEFAULT_PARTITIONS,
            },
            None => DEFAULT_PARTITIONS,
        }
    }

    fn insert_setting(&self, key: &str) -> Option<(String, Option<usize>)> {
        if let Some((_, v)) = self.command.and_then(|c| c.insert.iter().find(|(k, _)| k == key)) {
            return Some((v.clone(), None));
        }
        self.p.insert_value(key).map(|(v, l)| (v.to_string(), Some(l)))
    }

    fn layout(&mut self) -> Result<Layout, ImportError> {
        let mut counts = Vec::new();
        for ck in self.table.clustering.clone() {
            let (count, line) = match self.spec(&ck).and_then(|s| s.cluster.clone().map(|d| (d, s.line))) {
                None => (1, None),
                Some((d, line)) => {
                    let n = d.mean().round().max(1.0) as u64;
                    if d.kind != StressKind::Fixed {
                        self.notes.push(format!("cluster {} of `{ck}` → {n} rows at that level (the mean)", d.written));
                    }
                    (n, Some(line))
                }
            };
            let _ = line;
            counts.push((ck, count));
        }
        let rows_per_partition: u64 = counts.iter().map(|(_, c)| *c).product::<u64>().max(1);
        let select = match self.insert_setting("select") {
            None => 1.0,
            Some((v, line)) => {
                let (d, mean) = parse_ratio(&v).map_err(|m| ImportError::new(self.file, line, format!("insert select: {m}")))?;
                if d.kind != StressKind::Fixed {
                    self.notes.push(format!("insert select {v} → {:.0}% of each partition's rows per insert (the mean)", mean * 100.0));
                }
                mean
            }
        };
        // `select` of a partition's rows per insert: from the deepest level up, each level
        // writes its share of its rows, so every parent gets some (a random subset's shape)
        let mut written = vec![0u64; counts.len()];
        let mut left = select;
        for (l, (_, c)) in counts.iter().enumerate().rev() {
            let w = ((*c as f64 * left).round() as u64).clamp(1, *c);
            left = (left * *c as f64 / w as f64).min(1.0);
            written[l] = w;
        }
        let rows_per_visit: u64 = written.iter().product::<u64>().max(1);
        let mut below = rows_per_visit;
        let levels = counts
            .into_iter()
            .zip(written)
            .map(|((ck, c), w)| {
                below /= w;
                (ck, c, below)
            })
            .collect();
        let partitions_per_insert = match self.insert_setting("partitions") {
            None => 1,
            Some((v, line)) => {
                let d = StressDist::parse(&v).map_err(|m| ImportError::new(self.file, line, format!("insert partitions: {m}")))?;
                let n = d.mean().round().max(1.0) as u64;
                if d.kind != StressKind::Fixed {
                    self.notes.push(format!("insert partitions {} → {n} partitions per insert (the mean)", d.written));
                }
                n
            }
        };
        if let Some((_, line)) = self.insert_setting("row-population") {
            self.warn(line, "insert row-population is not carried over: every column of a written row is set");
        }
        Ok(Layout { levels, rows_per_partition, rows_per_visit, partitions_per_insert })
    }

    fn schema(&mut self, layout: &Layout) {
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
        if layout.rows_per_partition > 100_000 {
            self.warn(None, format!("partitions of {} rows: cassandra-stress warns above 100M, casslab lint above 100,000", layout.rows_per_partition));
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

    fn ty(&self, col: &str) -> String {
        self.table.column(col).map(|c| c.ty.clone()).unwrap_or_else(|| "text".into())
    }

    fn generators(&mut self, layout: &Layout) {
        self.y.line(0, "generators:", None);
        let pk: Vec<String> = self.table.partition_key.clone();
        let single_partition_batch = self.batch_kind(layout).0 == Some("single_partition");
        // a partition key drawn once per batch (kept for every row) or once per row
        let repeat = if single_partition_batch { 1 } else { layout.rows_per_visit };
        self.y.comment(2, "partition key: one value per seed, the seeds in order");
        for k in &pk {
            let (range, note) = self.seed_range(k);
            let mut f = format!("type: {}, dist: sequence, {range}", self.type_for(k));
            if repeat > 1 {
                f.push_str(&format!(", repeat: {repeat}"));
            }
            f.push_str(&self.look(k));
            self.y.line(2, &format!("pk_{}: {{ {f} }}", ident(k)), note.as_deref());
        }
        if !layout.levels.is_empty() {
            self.y.comment(2, "clustering: each level's rows in order; a row's values are its position in the partition");
        }
        for (ck, count, below) in &layout.levels {
            let mut f = format!("type: {}, dist: sequence, max: {count}", self.type_for(ck));
            if *below > 1 {
                f.push_str(&format!(", repeat: {below}"));
            }
            f.push_str(&self.look(ck));
            let mut notes = vec![];
            if let Some(d) = self.spec(ck).and_then(|s| s.cluster.clone()).filter(|d| d.kind != StressKind::Fixed) {
                notes.push(format!("cluster {}: {count} rows at this level in every partition (its mean)", d.written));
            }
            if let Some(d) = self.spec(ck).and_then(|s| s.population.clone()) {
                notes.push(format!("population {} is not used: the values are positions 0..{}", d.written, count - 1));
            }
            self.y.line(2, &format!("ck_{}: {{ {f} }}", ident(ck)), Some(&notes.join("; ")));
        }
        let regular: Vec<String> = self.table.columns.iter().filter(|c| !self.table.is_key(&c.name)).map(|c| c.name.clone()).collect();
        if !regular.is_empty() {
            self.y.comment(2, "columns: population = distinct values, size = characters, bytes or elements");
        }
        for c in &regular {
            let (f, note) = self.value_fields(c);
            self.y.line(2, &format!("{}: {{ {f} }}", ident(c)), note.as_deref());
        }
        self.y.comment(2, "reads: seeds drawn as cassandra-stress draws them for reads and mixed runs");
        let (read_dist, read_note) = self.read_seed_fields();
        if pk.len() == 1 {
            let k = &pk[0];
            let dist = match self.key_population(k) {
                Some(d) => to_fields(&d, true).fields,
                None => read_dist.clone(),
            };
            self.y.line(
                2,
                &format!("read_{}: {{ type: {}, {dist}, values_of: pk_{}{} }}", ident(k), self.type_for(k), ident(k), self.look(k)),
                read_note.as_deref(),
            );
        }
        for (ck, count, _) in &layout.levels {
            let f = format!("type: {}, dist: uniform, max: {count}, values_of: ck_{}{}", self.type_for(ck), ident(ck), self.look(ck));
            self.y.line(2, &format!("row_{}: {{ {f} }}", ident(ck)), Some("a row of the partition, uniformly"));
        }
        let mut seen = std::collections::BTreeSet::new();
        for g in std::mem::take(&mut self.pending) {
            if seen.insert(g.clone()) {
                self.y.line(2, &g, None);
            }
        }
    }

    fn run_phase(&mut self) {
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
        for (op, r) in mix {
            if known.contains(&op) && self.y_has_op(&op) {
                parts.push(format!("{}: {}", ident(&op), num(r)));
            } else {
                self.warn(None, format!("ops({op}=…): the profile has no such operation (or it could not be carried over); left out of the mix"));
            }
        }
        if parts.is_empty() {
            parts.push("insert: 1".into());
        }
        let duration = self.command.and_then(|c| c.duration.clone()).unwrap_or_else(|| "60s".into());
        let warmup = if self.command.is_some_and(|c| c.no_warmup) { "0s" } else { "5s" };
        self.y.line(0, &format!("run: {{ mix: {{ {} }}, warmup: {warmup}, duration: {duration} }}", parts.join(", ")), None);
    }

    fn y_has_op(&self, op: &str) -> bool {
        op == "insert" || !self.skipped.iter().any(|s| s == op)
    }

    /// The generator type of a column: the column's CQL type (counters bind their increment).
    fn type_for(&self, col: &str) -> String {
        let t = self.ty(col);
        if t.contains('<') || t.contains(',') {
            quote(&t)
        } else {
            t
        }
    }

    /// `, size: …` / `, start: 0` … for a key column of text, blob or time type.
    fn look(&self, col: &str) -> String {
        let t = self.ty(col);
        let base = t.trim_start_matches("frozen<");
        match base {
            "text" | "varchar" | "ascii" | "blob" => format!(", size: {}", self.size_of(col).0),
            "timestamp" => ", start: 0".into(),
            _ => String::new(),
        }
    }

    /// The seeds' range of a key column: its population when given, else 1..=partitions.
    /// A key column's population when it holds fewer values than the seeds (it then limits the
    /// distinct keys); a wider one changes nothing, each seed still being its own key.
    fn key_population(&self, k: &str) -> Option<StressDist> {
        self.spec(k).and_then(|s| s.population.clone()).filter(|d| ((d.hi - d.lo + 1) as u64) < self.partitions_default())
    }

    /// The seeds' range of a key column: its limiting population, else 1..=partitions.
    fn seed_range(&self, k: &str) -> (String, Option<String>) {
        match self.key_population(k) {
            None => {
                let note = self.spec(k).and_then(|s| s.population.clone()).map(|d| format!("population {}: one value per seed", d.written));
                ("min: 1, max: \"${partitions + 1}\"".into(), note)
            }
            Some(d) => {
                let mut note = format!("population {}: the load walks its {} values in order", d.written, d.hi - d.lo + 1);
                if !matches!(d.kind, StressKind::Uniform | StressKind::Seq | StressKind::Fixed) {
                    note.push_str("; reads draw from it");
                }
                (format!("min: {}, max: {}", d.lo, d.hi + 1), Some(note))
            }
        }
    }

    fn read_seed_fields(&self) -> (String, Option<String>) {
        if let Some(d) = self.command.and_then(|c| c.pop_dist.clone()) {
            return (to_fields(&d, true).fields, Some(format!("-pop dist={}", d.written)));
        }
        if self.command.is_some_and(|c| c.insert_only()) || self.command.is_some_and(|c| c.pop_seq.is_some()) {
            return ("dist: uniform, min: 1, max: \"${partitions + 1}\"".into(), Some("-pop seq: reads draw the written seeds uniformly".into()));
        }
        // cassandra-stress's default for reads and mixed runs: gaussian(1..N); casslab rounds
        // where it truncates, hence the mean half a unit lower
        (
            "dist: gaussian, min: 1, max: \"${partitions + 1}\", mean: \"${partitions / 2}\", stddev: \"${partitions / 6}\"".into(),
            Some("cassandra-stress's default -pop dist=gaussian(1..N)".into()),
        )
    }

    /// `size:` of a text, blob or collection column: the columnspec's, or cassandra-stress's
    /// default uniform(4..8).
    fn size_of(&self, col: &str) -> (String, Option<String>) {
        let d = self.spec(col).and_then(|s| s.size.clone()).unwrap_or_else(|| StressDist::parse("uniform(4..8)").expect("valid"));
        if d.kind == StressKind::Fixed {
            return (d.lo.max(0).to_string(), None);
        }
        let f = to_fields(&d, false);
        (format!("{{ {} }}", f.fields), f.note)
    }

    fn value_fields(&self, col: &str) -> (String, Option<String>) {
        let t = self.ty(col);
        let mut notes: Vec<String> = Vec::new();
        let mut f = format!("type: {}", self.type_for(col));
        let base = t.trim_start_matches("frozen<").split('<').next().unwrap_or("").to_string();
        let pop = self.spec(col).and_then(|s| s.population.clone());
        let bounded = match base.as_str() {
            "int" => Some((i32::MIN as i64, i32::MAX as i64)),
            "smallint" => Some((i16::MIN as i64, i16::MAX as i64)),
            "tinyint" => Some((i8::MIN as i64, i8::MAX as i64)),
            "inet" => Some((0, u32::MAX as i64)),
            _ => None,
        };
        let collection = matches!(base.as_str(), "list" | "set" | "map");
        match (&pop, base.as_str()) {
            (_, "boolean") => {}
            (Some(_), _) if collection => notes.push("population is not used for a collection: its elements are hashed".into()),
            (Some(d), _) => {
                let mut d = d.clone();
                if let Some((lo, hi)) = bounded {
                    if d.lo < lo || d.hi > hi {
                        notes.push(format!("population {} clamped to what {base} holds", d.written));
                        d.lo = d.lo.clamp(lo, hi);
                        d.hi = d.hi.clamp(d.lo, hi);
                    }
                }
                let df = to_fields(&d, true);
                f.push_str(", ");
                f.push_str(&df.fields);
                notes.extend(df.note);
            }
            (None, _) if bounded.is_some() || collection || base == "counter" => {}
            (None, _) => f.push_str(", min: 1, max: 100000000001"),
        }
        if base == "timestamp" {
            f.push_str(", start: 0");
        }
        if base == "counter" {
            notes.push("a counter column binds its increment".into());
        }
        if matches!(base.as_str(), "text" | "varchar" | "ascii" | "blob") || collection {
            let (s, n) = self.size_of(col);
            f.push_str(&format!(", size: {s}"));
            notes.extend(n);
            if collection {
                let elem = t.split('<').nth(1).unwrap_or("");
                if elem.starts_with("text") || elem.starts_with("varchar") || elem.starts_with("ascii") || elem.starts_with("blob") {
                    f.push_str(if base == "map" {
                        ", key: { size: { dist: uniform, min: 4, max: 9 } }"
                    } else {
                        ", element: { size: { dist: uniform, min: 4, max: 9 } }"
                    });
                }
            }
        }
        if base.starts_with("tuple") || is_udt(&base) {
            notes.push("a tuple or user-defined type: cassandra-stress cannot generate it; casslab hashes its fields from the row".into());
        }
        if is_udt(&base) && !base.starts_with("tuple") {
            let name = base.trim_end_matches('>');
            match self.udt_fields(name) {
                Some(fields) => {
                    f.push_str(&format!(", fields: {{ {} }}", fields.iter().map(|(n, t)| format!("{n}: {{ type: {t} }}")).collect::<Vec<_>>().join(", ")))
                }
                None => notes.push(format!("the type {name} is not among extra_definitions: add its fields here (fields: {{ name: {{ type: text }} }})")),
            }
        }
        (f, (!notes.is_empty()).then(|| notes.join("; ")))
    }

    /// The batch the insert sends: (casslab kind or none, rows, comment).
    fn batch_kind(&self, layout: &Layout) -> (Option<&'static str>, u64, Option<String>) {
        let rows = layout.rows_per_visit * layout.partitions_per_insert;
        let written = self.insert_setting("batchtype").map(|(v, _)| v.to_ascii_uppercase()).unwrap_or_else(|| "LOGGED".into());
        let counter = self.table.columns.iter().any(|c| c.ty == "counter");
        if rows <= 1 {
            return (None, 1, Some("one row: cassandra-stress sends it alone, not in a batch".into()));
        }
        if counter || written == "COUNTER" {
            return (None, 1, Some("a counter batch is sent as single updates (casslab has no counter batches)".into()));
        }
        // a batch Cassandra accepts: at most casslab's row limit, and well under Cassandra's
        // default batch_size_fail_threshold (50 KiB)
        let row_bytes = self.row_bytes().max(1.0);
        let max = (MAX_BATCH_ROWS as u64).min(((BATCH_BYTES as f64 / row_bytes) as u64).max(1));
        // too many rows: one partition's rows per batch, or a share of them that divides them
        let size = if rows <= max {
            rows
        } else if layout.rows_per_visit <= max {
            layout.rows_per_visit
        } else {
            (1..=max).rev().find(|d| layout.rows_per_visit.is_multiple_of(*d)).unwrap_or(1)
        };
        let note = (size < rows).then(|| {
            format!(
                "cassandra-stress would batch {rows} rows (about {} KiB); batches of {size} stay under Cassandra's default batch_size_fail_threshold (50 KiB)",
                (rows as f64 * row_bytes / 1024.0).round()
            )
        });
        match (written.as_str(), layout.partitions_per_insert) {
            ("UNLOGGED", 1) if size == rows => (Some("single_partition"), size, note),
            ("UNLOGGED", _) => (Some("unlogged"), size, note),
            _ => (Some("logged"), size, note.or(Some("cassandra-stress's default batchtype LOGGED".into()))),
        }
    }

    /// The simple fields of a user-defined type created by the profile's `extra_definitions`.
    fn udt_fields(&self, name: &str) -> Option<Vec<(String, String)>> {
        self.p.extra_definitions.iter().find_map(|(d, _)| {
            let d = one_line(d);
            let head = d.to_ascii_lowercase();
            let rest = head.strip_prefix("create type ")?.trim_start_matches("if not exists ");
            let declared = rest.split(['(', ' ']).next()?.rsplit('.').next()?.trim_matches('"').to_string();
            if declared != name {
                return None;
            }
            let body = &rest[rest.find('(')? + 1..rest.rfind(')')?];
            let fields: Vec<(String, String)> = body
                .split(',')
                .filter_map(|f| f.trim().split_once(char::is_whitespace).map(|(n, t)| (n.trim().to_string(), t.trim().to_string())))
                .filter(|(_, t)| !t.contains('<'))
                .collect();
            (!fields.is_empty()).then_some(fields)
        })
    }

    /// Bytes a written row takes in a batch, roughly: its values and a little per cell.
    fn row_bytes(&self) -> f64 {
        let value = |c: &crate::cql::Column| -> f64 {
            let base = c.ty.trim_start_matches("frozen<").split('<').next().unwrap_or("").to_string();
            let size = || self.spec(&c.name).and_then(|s| s.size.clone()).map_or(6.0, |d| d.mean());
            match base.as_str() {
                "text" | "varchar" | "ascii" | "blob" => size(),
                "list" | "set" | "map" => size() * 10.0,
                "boolean" | "tinyint" => 1.0,
                "smallint" => 2.0,
                "int" | "float" | "date" | "inet" => 4.0,
                "uuid" | "timeuuid" => 16.0,
                _ => 8.0,
            }
        };
        self.table.columns.iter().map(|c| value(c) + 6.0).sum()
    }

    fn consistency(&self, own: Option<&str>) -> String {
        own.map(str::to_string).or_else(|| self.command.and_then(|c| c.cl.clone())).unwrap_or_else(|| "LOCAL_ONE".into())
    }

    fn operations(&mut self, layout: &Layout) {
        self.y.line(0, "operations:", None);
        // cassandra-stress's insert: UPDATE … SET every regular column (sets, lists and counters
        // added to), or INSERT of the key for a table of key columns only
        let t = &self.table;
        let regular: Vec<&crate::cql::Column> = t.columns.iter().filter(|c| !t.is_key(&c.name)).collect();
        let keys: Vec<String> = t.partition_key.iter().chain(t.clustering.iter()).cloned().collect();
        let key_arg = |k: &String| if t.partition_key.contains(k) { format!("pk_{}", ident(k)) } else { format!("ck_{}", ident(k)) };
        let q = |c: &str| if c.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_') { c.to_string() } else { format!("\"{c}\"") };
        let (cql, args): (String, Vec<String>) = if regular.is_empty() {
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
        self.y.line(2, "insert:", None);
        self.y.line(4, &format!("cql: {}", quote(&cql)), None);
        self.y.line(4, &format!("args: [{}]", args.join(", ")), None);
        self.y.line(4, &format!("consistency: {}", self.consistency(None)), None);
        let (kind, size, note) = self.batch_kind(layout);
        match kind {
            Some(k) => self.y.line(4, &format!("batch: {{ kind: {k}, size: {size} }}"), note.as_deref()),
            None => {
                if let Some(n) = note {
                    self.y.comment(4, &n);
                }
            }
        }
        if layout.rows_per_visit < layout.rows_per_partition {
            self.y.comment(
                4,
                &format!(
                    "select: {} of the {} rows of a partition per insert, runs of consecutive rows at the last level (cassandra-stress picks them at random)",
                    layout.rows_per_visit, layout.rows_per_partition
                ),
            );
        }
        for qd in self.p.queries.clone() {
            self.query(&qd, layout);
        }
        for tq in self.p.token_queries.clone() {
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

    fn query(&mut self, qd: &super::stress_profile::Query, layout: &Layout) {
        let cql = one_line(&qd.cql).replace(&format!("{}.", self.p.keyspace), "");
        let multi_pk = self.table.partition_key.len() > 1;
        let mut args = Vec::new();
        let mut notes = Vec::new();
        let mut extra_gens = Vec::new();
        for m in markers(&cql) {
            let a = match &m {
                Marker::Column(c) if self.table.partition_key.iter().any(|k| k == c) => {
                    if multi_pk {
                        // several key columns: walk the seeds in lockstep so they meet a written partition
                        let g = format!("{}_{}", ident(&qd.name), ident(c));
                        let (range, _) = self.seed_range(c);
                        extra_gens.push(format!("{g}: {{ type: {}, dist: sequence, {range}, values_of: pk_{}{} }}", self.type_for(c), ident(c), self.look(c)));
                        g
                    } else {
                        format!("read_{}", ident(c))
                    }
                }
                Marker::Column(c) if layout.levels.iter().any(|(k, _, _)| k == c) => format!("row_{}", ident(c)),
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
        if multi_pk {
            notes.push("the key's columns walk the seeds in order (cassandra-stress draws them from -pop)".into());
            for k in self.table.partition_key.clone() {
                if let Some(d) = self.key_population(&k) {
                    notes.push(format!("they meet the written keys while partitions is a multiple of {}", d.hi - d.lo + 1));
                }
            }
        }
        notes.dedup();
        self.y.line(2, &format!("{}:", ident(&qd.name)), None);
        self.y.line(4, &format!("cql: {}", quote(&cql)), None);
        self.y.line(4, &format!("args: [{}]", args.join(", ")), Some(&notes.join("; ")));
        self.y.line(4, &format!("consistency: {}", self.consistency(qd.consistency.as_deref())), None);
        let serial = qd.serial_consistency.clone().or_else(|| self.command.and_then(|c| c.serial_cl.clone()).filter(|_| crate::cql::is_conditional(&cql)));
        if let Some(s) = serial {
            self.y.line(4, &format!("serial_consistency: {s}"), None);
        }
        self.pending.extend(extra_gens);
    }
}

fn is_udt(base: &str) -> bool {
    !matches!(
        base,
        "text"
            | "varchar"
            | "ascii"
            | "blob"
            | "int"
            | "bigint"
            | "smallint"
            | "tinyint"
            | "varint"
            | "double"
            | "float"
            | "decimal"
            | "boolean"
            | "uuid"
            | "timeuuid"
            | "timestamp"
            | "date"
            | "time"
            | "duration"
            | "inet"
            | "counter"
    )
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
        for name in ["timeline.yaml", "accounts.yaml", "follows.yaml", "visits.yaml"] {
            let (i, w) = imported(name, None);
            assert!(w.operation("insert").is_some(), "{name}");
            assert!(crate::lint::lint(&w, &Default::default()).iter().all(|f| f.severity != crate::lint::Severity::Error), "{name}:\n{}", i.yaml);
        }
    }

    #[test]
    fn clustering_levels_select_and_batches_follow_the_profile() {
        let (i, w) = imported("timeline.yaml", None);
        // 4 days × 10 readings, half per insert: 5 readings of each day, one partition per batch
        let g = |n: &str| w.generators[n].clone();
        assert_eq!((g("ck_day").max, g("ck_day").repeat), (Some(crate::gen::Scalar::Int(4)), Some(crate::gen::Scalar::Int(5))));
        assert_eq!(g("ck_ts").repeat, None);
        let b = w.operation("insert").unwrap().cql().unwrap().batch.clone().unwrap();
        assert_eq!((b.kind, b.size), (BatchKind::SinglePartition, 20));
        assert_eq!(w.load.as_ref().unwrap().count, 1_000_000);
        assert_eq!(w.operation("by_day").unwrap().cql().unwrap().consistency, crate::workload::Consistency::One);
        assert_eq!(w.operation("latest").unwrap().cql().unwrap().consistency, crate::workload::Consistency::LocalOne);
        assert!(i.yaml.contains("CREATE INDEX IF NOT EXISTS readings_note ON readings (note)"));
        assert!(i.notes.iter().any(|n| n.contains("uniform(5..15)")));

        let (_, w) = imported("accounts.yaml", None);
        let b = w.operation("insert").unwrap().cql().unwrap().batch.clone().unwrap();
        assert_eq!((b.kind, b.size), (BatchKind::Logged, 3));
        assert_eq!(w.operation("debit").unwrap().cql().unwrap().serial_consistency, Some(crate::workload::Consistency::LocalSerial));
        let (_, w) = imported("visits.yaml", None);
        assert!(w.operation("insert").unwrap().cql().unwrap().batch.is_none(), "counter updates go one by one");
        assert_eq!(w.load.as_ref().unwrap().count, 7_000_000);
    }

    #[test]
    fn a_command_line_sets_the_mix_the_seeds_and_the_consistency() {
        let (i, w) = imported(
            "timeline.yaml",
            Some("user ops(insert=1,by_day=3,nope=1) n=500 cl=QUORUM -pop dist=uniform(1..500) -insert partitions=fixed(2) select-ratio=fixed(1)/1"),
        );
        let mut mix = w.run.as_ref().unwrap().mix.clone();
        mix.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(mix, vec![("by_day".to_string(), 3.0), ("insert".to_string(), 1.0)]);
        assert_eq!(w.load.as_ref().unwrap().count, 250, "500 partitions, 2 per insert");
        assert_eq!(w.operation("insert").unwrap().cql().unwrap().batch.as_ref().unwrap().size, 80, "2 whole partitions of 40 rows");
        assert_eq!(w.operation("latest").unwrap().cql().unwrap().consistency, crate::workload::Consistency::Quorum);
        assert!(i.warnings.iter().any(|m| m.contains("ops(nope=…)")), "{:?}", i.warnings);
        assert!(i.yaml.contains("read_sensor: { type: text, dist: uniform, min: 1, max: 501"), "{}", i.yaml);
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
