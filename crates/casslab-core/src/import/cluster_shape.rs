//! What a sample of a table's rows says about its data, and the workload that makes data of
//! that shape. [`measure`] reads the sampled rows (in token order, as a full scan returns them)
//! into a [`TableShape`]: rows per partition, the spacing of the first clustering column, and
//! per column the null rate, the value sizes (characters, bytes, elements), the range of
//! numbers and times and the distinct values. [`write_workload`] turns the keyspace's tables
//! and their shapes into workload text: every table loaded with `rows` rows in partitions of
//! the measured size, and per table a point read, a partition read, a range slice (with
//! clustering columns) and an insert. Reading the cluster is `live_cluster.rs`'s.

use super::workload_writer::{ident, quote, Yaml};
use super::Imported;
use scylla::value::CqlValue;
use std::collections::{BTreeMap, BTreeSet};

/// A column of a live table.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveColumn {
    pub name: String,
    /// The CQL type as system_schema writes it (`text`, `frozen<list<int>>`, `frozen<address>`).
    pub ty: String,
    pub kind: ColumnKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    PartitionKey,
    Clustering,
    Regular,
}

/// A live table: its columns in key order then by name, and its `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTable {
    pub name: String,
    pub columns: Vec<LiveColumn>,
    pub create: String,
}

impl LiveTable {
    fn of_kind(&self, k: ColumnKind) -> impl Iterator<Item = &LiveColumn> {
        self.columns.iter().filter(move |c| c.kind == k)
    }
}

/// What the sample of one column says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnShape {
    pub nulls: u64,
    pub values: u64,
    /// Characters, bytes or elements: smallest and largest seen.
    pub size: Option<(u64, u64)>,
    /// Numbers (and times, in milliseconds): smallest and largest seen.
    pub range: Option<(i64, i64)>,
    /// Distinct values seen, counted up to 10,000.
    pub distinct: u64,
    /// Collections: sizes of their text elements (or map keys).
    pub element_size: Option<(u64, u64)>,
}

/// What the sample of one table says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableShape {
    pub rows: u64,
    /// Partitions seen whole (the sample's last one may be cut short and is left out, unless it
    /// is the only one).
    pub partitions: u64,
    pub rows_per_partition_mean: f64,
    pub rows_per_partition_max: u64,
    /// The first clustering column's median step between neighbouring rows (numbers; times
    /// in milliseconds).
    pub clustering_step: Option<i64>,
    pub columns: BTreeMap<String, ColumnShape>,
    pub seconds: f64,
    /// Whether the sample stopped at its row or time limit (the table holds more).
    pub cut: bool,
}

const DISTINCT_CAP: usize = 10_000;

fn number(v: &CqlValue) -> Option<i64> {
    Some(match v {
        CqlValue::Int(n) => *n as i64,
        CqlValue::BigInt(n) => *n,
        CqlValue::SmallInt(n) => *n as i64,
        CqlValue::TinyInt(n) => *n as i64,
        CqlValue::Counter(c) => c.0,
        CqlValue::Float(f) => *f as i64,
        CqlValue::Double(f) => *f as i64,
        CqlValue::Timestamp(t) => t.0,
        CqlValue::Date(d) => d.0 as i64,
        CqlValue::Time(t) => t.0 / 1_000_000,
        _ => return None,
    })
}

fn size_of(v: &CqlValue) -> Option<u64> {
    Some(match v {
        CqlValue::Text(s) | CqlValue::Ascii(s) => s.chars().count() as u64,
        CqlValue::Blob(b) => b.len() as u64,
        CqlValue::List(l) | CqlValue::Set(l) => l.len() as u64,
        CqlValue::Map(m) => m.len() as u64,
        _ => return None,
    })
}

fn widen(r: &mut Option<(u64, u64)>, x: u64) {
    *r = Some(r.map_or((x, x), |(a, b)| (a.min(x), b.max(x))));
}

/// Measures a table's sampled rows (each row's values in `table.columns` order).
pub fn measure(table: &LiveTable, rows: &[Vec<Option<CqlValue>>], seconds: f64, cut: bool) -> TableShape {
    let mut shape = TableShape { rows: rows.len() as u64, seconds, cut, ..Default::default() };
    let pk: Vec<usize> = table.columns.iter().enumerate().filter(|(_, c)| c.kind == ColumnKind::PartitionKey).map(|(i, _)| i).collect();
    let first_ck = table.columns.iter().position(|c| c.kind == ColumnKind::Clustering);
    let mut sizes: Vec<u64> = Vec::new();
    let mut steps: Vec<i64> = Vec::new();
    let mut prev: Option<(Vec<&Option<CqlValue>>, Option<i64>)> = None;
    for row in rows {
        let key: Vec<&Option<CqlValue>> = pk.iter().map(|i| &row[*i]).collect();
        let ck = first_ck.and_then(|i| row[i].as_ref()).and_then(number);
        match &prev {
            Some((k, last)) if *k == key => {
                *sizes.last_mut().expect("a partition") += 1;
                if let (Some(a), Some(b)) = (last, ck) {
                    steps.push((b - a).abs());
                }
            }
            _ => sizes.push(1),
        }
        prev = Some((key, ck));
    }
    if cut && sizes.len() > 1 {
        sizes.pop();
    }
    shape.partitions = sizes.len() as u64;
    shape.rows_per_partition_max = sizes.iter().copied().max().unwrap_or(0);
    shape.rows_per_partition_mean = if sizes.is_empty() { 0.0 } else { sizes.iter().sum::<u64>() as f64 / sizes.len() as f64 };
    steps.sort_unstable();
    shape.clustering_step = steps.get(steps.len() / 2).copied().filter(|s| *s > 0);
    for (i, c) in table.columns.iter().enumerate() {
        let mut s = ColumnShape::default();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for row in rows {
            match &row[i] {
                None => s.nulls += 1,
                Some(v) => {
                    s.values += 1;
                    if let Some(n) = size_of(v) {
                        widen(&mut s.size, n);
                    }
                    if let Some(n) = number(v) {
                        s.range = Some(s.range.map_or((n, n), |(a, b)| (a.min(n), b.max(n))));
                    }
                    let elems: Vec<&CqlValue> = match v {
                        CqlValue::List(l) | CqlValue::Set(l) => l.iter().collect(),
                        CqlValue::Map(m) => m.iter().map(|(k, _)| k).collect(),
                        _ => vec![],
                    };
                    for e in elems {
                        if let Some(n) = size_of(e).filter(|_| matches!(e, CqlValue::Text(_) | CqlValue::Ascii(_) | CqlValue::Blob(_))) {
                            widen(&mut s.element_size, n);
                        }
                    }
                    if seen.len() < DISTINCT_CAP {
                        seen.insert(format!("{v:?}"));
                    }
                }
            }
        }
        s.distinct = seen.len() as u64;
        shape.columns.insert(c.name.clone(), s);
    }
    shape
}

fn base_type(ty: &str) -> &str {
    let t = ty.strip_prefix("frozen<").unwrap_or(ty);
    t.split('<').next().unwrap_or(t).trim_end_matches('>')
}

fn size_field(r: (u64, u64)) -> String {
    if r.0 == r.1 {
        r.0.to_string()
    } else {
        format!("{{ dist: uniform, min: {}, max: {} }}", r.0, r.1 + 1)
    }
}

/// Rows a table of this shape is loaded with when nothing says: the sample's rows, at least 1000.
pub const DEFAULT_ROWS: u64 = 10_000;

/// The generator of a regular column, with its comment (what was measured, what guessed).
fn value_generator(c: &LiveColumn, s: &ColumnShape, udts: &BTreeMap<String, Vec<(String, String)>>, sampled: u64) -> (String, String) {
    let base = base_type(&c.ty);
    let ty = if c.ty.contains('<') || c.ty.contains(',') { quote(&c.ty) } else { c.ty.clone() };
    let mut f = format!("type: {ty}");
    let mut note: Vec<String> = Vec::new();
    if s.values == 0 {
        note.push("no value in the sample: guessed".into());
    }
    if s.nulls > 0 {
        note.push(format!("null in {:.0}% of the sample (casslab writes every column)", 100.0 * s.nulls as f64 / (s.nulls + s.values) as f64));
    }
    let low_card = s.values >= 20 && s.distinct <= 100 && s.distinct * 4 <= s.values;
    match base {
        "text" | "varchar" | "ascii" | "blob" => {
            if low_card {
                f.push_str(&format!(", max: {}", s.distinct));
                note.push(format!("{} distinct values", s.distinct));
            }
            if let Some(r) = s.size {
                f.push_str(&format!(", size: {}", size_field(r)));
                note.push(format!("sizes {}..{}", r.0, r.1));
            }
        }
        "list" | "set" | "map" => {
            if let Some(r) = s.size {
                f.push_str(&format!(", size: {}", size_field(r)));
                note.push(format!("{}..{} elements", r.0, r.1));
            }
            if let Some(r) = s.element_size {
                f.push_str(&format!(", {}: {{ size: {} }}", if base == "map" { "key" } else { "element" }, size_field(r)));
            }
        }
        "timestamp" => {
            if let Some((lo, hi)) = s.range {
                f.push_str(&format!(", start: {lo}, max: {}", (hi - lo).max(0) + 1));
                note.push("times within the sample's first and last".into());
            }
        }
        "int" | "bigint" | "smallint" | "tinyint" | "varint" | "double" | "float" | "decimal" | "counter" => {
            if let Some((lo, hi)) = s.range {
                f.push_str(&format!(", min: {lo}, max: {}", hi.saturating_add(1)));
                note.push(if low_card { format!("{lo}..{hi}, {} distinct values", s.distinct) } else { format!("{lo}..{hi}") });
            }
        }
        _ if udts.contains_key(base.trim_end_matches('>')) => {
            let fields: Vec<String> =
                udts[base.trim_end_matches('>')].iter().filter(|(_, t)| !t.contains('<')).map(|(n, t)| format!("{}: {{ type: {t} }}", quote(n))).collect();
            f.push_str(&format!(", fields: {{ {} }}", fields.join(", ")));
            note.push("a user-defined type: its simple fields filled, sizes guessed".into());
        }
        _ => {}
    }
    if sampled == 0 {
        note.push("table empty: guessed".into());
    }
    (f, note.join("; "))
}

/// The workload of `tables` (with their shapes) in `keyspace`.
pub fn write_workload(
    keyspace: &str,
    replication: Option<&str>,
    types: &[(String, Vec<(String, String)>)],
    tables: &[(LiveTable, TableShape)],
    indexes: &[String],
) -> Imported {
    let mut y = Yaml::default();
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let udts: BTreeMap<String, Vec<(String, String)>> = types.iter().cloned().collect();
    y.line(0, &format!("name: {}", ident(&format!("{keyspace}-live"))), None);
    y.line(0, &format!("description: {}", quote(&format!("keyspace {keyspace} as a live cluster has it, with data shaped like a sample of its rows"))), None);
    y.line(0, "params:", None);
    y.line(2, &format!("rows: {DEFAULT_ROWS}"), Some("rows the load writes into each table"));
    y.line(2, &format!("keyspace: {}", ident(keyspace)), None);
    y.line(0, "keyspace: ${keyspace}", None);
    if let Some(r) = replication {
        y.line(0, &format!("replication: {}", quote(r)), None);
    }
    y.line(0, "schema:", None);
    for (name, fields) in types {
        let defs: Vec<String> = fields.iter().map(|(n, t)| format!("{n} {t}")).collect();
        y.line(2, &format!("- {}", quote(&format!("CREATE TYPE IF NOT EXISTS {name} ({})", defs.join(", ")))), None);
    }
    for (t, _) in tables {
        y.line(2, &format!("- {}", quote(&t.create)), None);
    }
    for i in indexes {
        y.line(2, &format!("- {}", quote(i)), None);
    }
    let mut gens = Yaml::default();
    let mut ops = Yaml::default();
    let mut load_steps = Vec::new();
    let mut mix = Vec::new();
    for (t, s) in tables {
        let tn = ident(&t.name);
        let per_partition = (s.rows_per_partition_mean.round() as u64).max(1);
        let has_ck = t.of_kind(ColumnKind::Clustering).next().is_some();
        notes.push(format!(
            "{}: sampled {} rows in {:.1} s{}: {} partitions seen, {:.1} rows per partition (max {}){}",
            t.name,
            s.rows,
            s.seconds,
            if s.cut { " (stopped at the limit)" } else { " (the whole table)" },
            s.partitions,
            s.rows_per_partition_mean,
            s.rows_per_partition_max,
            s.clustering_step.map(|st| format!(", clustering step {st}")).unwrap_or_default()
        ));
        gens.comment(2, &format!("{}: {} rows per partition", t.name, per_partition));
        let pk: Vec<&LiveColumn> = t.of_kind(ColumnKind::PartitionKey).collect();
        for k in &pk {
            let extra = look(k, s);
            let repeat = if per_partition > 1 { format!(", repeat: {per_partition}") } else { String::new() };
            gens.line(
                2,
                &format!("{tn}_{}: {{ type: {}, dist: sequence, max: \"${{rows}}\"{repeat}{extra} }}", ident(&k.name), ty(k)),
                Some("one key per partition, in order"),
            );
        }
        for (pos, c) in t.of_kind(ColumnKind::Clustering).enumerate() {
            let (mut f, mut note) = if pos == 0 {
                (format!("type: {}, dist: sequence, max: {per_partition}", ty(c)), "rows in order within their partition".to_string())
            } else {
                (format!("type: {}, max: 1", ty(c)), "one value: the rows differ by the first clustering column".to_string())
            };
            if pos == 0 {
                if let (Some(step), true) = (s.clustering_step, base_type(&c.ty) == "timestamp") {
                    let start = s.columns.get(&c.name).and_then(|cs| cs.range).map_or(0, |r| r.0);
                    f.push_str(&format!(", start: {start}, step_ms: {step}"));
                    note = format!("rows {step} ms apart, as in the sample");
                } else if let Some(step) = s.clustering_step.filter(|_| matches!(base_type(&c.ty), "int" | "bigint")) {
                    note.push_str(&format!(" (the sample's rows are {step} apart; these 1)"));
                }
            }
            f.push_str(&look(c, s));
            gens.line(2, &format!("{tn}_{}: {{ {f} }}", ident(&c.name)), Some(&note));
        }
        for c in t.of_kind(ColumnKind::Regular) {
            let (f, note) = value_generator(c, s.columns.get(&c.name).unwrap_or(&ColumnShape::default()), &udts, s.rows);
            gens.line(2, &format!("{tn}_{}: {{ {f} }}", ident(&c.name)), Some(&note));
        }
        // reads: a written partition, uniformly; several key columns walk the keys in step
        let partitions_expr = if per_partition > 1 { format!("${{rows / {per_partition}}}") } else { "${rows}".into() };
        for k in &pk {
            let dist = if pk.len() == 1 { "uniform" } else { "sequence" };
            gens.line(
                2,
                &format!(
                    "{tn}_read_{}: {{ type: {}, dist: {dist}, max: \"{partitions_expr}\", values_of: {tn}_{}{} }}",
                    ident(&k.name),
                    ty(k),
                    ident(&k.name),
                    look(k, s)
                ),
                None,
            );
        }
        let cks: Vec<&LiveColumn> = t.of_kind(ColumnKind::Clustering).collect();
        for (pos, c) in cks.iter().enumerate() {
            let max = if pos == 0 { per_partition } else { 1 };
            gens.line(
                2,
                &format!(
                    "{tn}_read_{}: {{ type: {}, dist: uniform, max: {max}, values_of: {tn}_{}{} }}",
                    ident(&c.name),
                    ty(c),
                    ident(&c.name),
                    read_look(c, s)
                ),
                None,
            );
        }
        let q = |n: &str| if n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') { n.to_string() } else { format!("\"{n}\"") };
        let pk_where: Vec<String> = pk.iter().map(|k| format!("{} = ?", q(&k.name))).collect();
        let pk_args: Vec<String> = pk.iter().map(|k| format!("{tn}_read_{}", ident(&k.name))).collect();
        let counter = t.columns.iter().any(|c| c.ty == "counter");
        let (insert_cql, insert_args) = if counter {
            let sets: Vec<String> = t.of_kind(ColumnKind::Regular).map(|c| format!("{0} = {0} + ?", q(&c.name))).collect();
            let keys: Vec<&LiveColumn> = t.columns.iter().filter(|c| c.kind != ColumnKind::Regular).collect();
            let wh: Vec<String> = keys.iter().map(|c| format!("{} = ?", q(&c.name))).collect();
            let args: Vec<String> = t.of_kind(ColumnKind::Regular).chain(keys.iter().copied()).map(|c| format!("{tn}_{}", ident(&c.name))).collect();
            (format!("UPDATE {} SET {} WHERE {}", q(&t.name), sets.join(", "), wh.join(" AND ")), args)
        } else {
            let cols: Vec<String> = t.columns.iter().map(|c| q(&c.name)).collect();
            (
                format!("INSERT INTO {} ({}) VALUES ({})", q(&t.name), cols.join(", "), vec!["?"; cols.len()].join(", ")),
                t.columns.iter().map(|c| format!("{tn}_{}", ident(&c.name))).collect(),
            )
        };
        load_steps.push(format!("{{ cql: {}, args: [{}] }}", quote(&insert_cql), insert_args.join(", ")));
        ops.line(2, &format!("{tn}_insert: {{ cql: {}, args: [{}] }}", quote(&insert_cql), insert_args.join(", ")), None);
        let mut point_where = pk_where.clone();
        let mut point_args = pk_args.clone();
        for c in &cks {
            point_where.push(format!("{} = ?", q(&c.name)));
            point_args.push(format!("{tn}_read_{}", ident(&c.name)));
        }
        if has_ck {
            ops.line(
                2,
                &format!(
                    "{tn}_point: {{ cql: {}, args: [{}] }}",
                    quote(&format!("SELECT * FROM {} WHERE {}", q(&t.name), point_where.join(" AND "))),
                    point_args.join(", ")
                ),
                Some("one row"),
            );
            ops.line(
                2,
                &format!(
                    "{tn}_partition: {{ cql: {}, args: [{}] }}",
                    quote(&format!("SELECT * FROM {} WHERE {} LIMIT 1000", q(&t.name), pk_where.join(" AND "))),
                    pk_args.join(", ")
                ),
                Some("a whole partition"),
            );
            let first = cks[0];
            ops.line(
                2,
                &format!(
                    "{tn}_slice: {{ cql: {}, args: [{}, {tn}_read_{}] }}",
                    quote(&format!("SELECT * FROM {} WHERE {} AND {} >= ? LIMIT 10", q(&t.name), pk_where.join(" AND "), q(&first.name))),
                    pk_args.join(", "),
                    ident(&first.name)
                ),
                Some("ten rows from a drawn clustering value"),
            );
            mix.extend([format!("{tn}_point: 4"), format!("{tn}_partition: 1"), format!("{tn}_slice: 2"), format!("{tn}_insert: 2")]);
        } else {
            ops.line(
                2,
                &format!(
                    "{tn}_point: {{ cql: {}, args: [{}] }}",
                    quote(&format!("SELECT * FROM {} WHERE {}", q(&t.name), pk_where.join(" AND "))),
                    pk_args.join(", ")
                ),
                Some("one row"),
            );
            mix.extend([format!("{tn}_point: 4"), format!("{tn}_insert: 2")]);
        }
        if s.rows == 0 {
            warnings.push(format!("{}: the table is empty; its shapes are guessed", t.name));
        }
    }
    y.line(0, "generators:", None);
    y.raw(&gens.finish());
    y.line(0, "operations:", None);
    y.line(2, "load:", None);
    y.line(4, "steps:", Some("one row into every table per execution"));
    for s in &load_steps {
        y.line(6, &format!("- {s}"), None);
    }
    y.raw(&ops.finish());
    y.line(0, "load: { op: load, count: \"${rows}\" }", None);
    y.line(0, &format!("run: {{ mix: {{ {} }}, warmup: 5s, duration: 60s }}", mix.join(", ")), Some("the ratios are a guess: reads 2:1 over writes"));
    notes.push("guessed: the table sizes (-P rows), value distributions (uniform within what was seen) and the operation mix".into());
    Imported { yaml: y.finish(), warnings, notes, partitions_per_op: None }
}

fn ty(c: &LiveColumn) -> String {
    if c.ty.contains('<') || c.ty.contains(',') {
        quote(&c.ty)
    } else {
        c.ty.clone()
    }
}

/// A key column's look: the size of its text or blob values, as sampled.
fn look(c: &LiveColumn, s: &TableShape) -> String {
    match base_type(&c.ty) {
        "text" | "varchar" | "ascii" | "blob" => {
            s.columns.get(&c.name).and_then(|cs| cs.size).map(|r| format!(", size: {}", size_field(r))).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// A clustering read generator's look: as its writer's (times from the same start and step).
fn read_look(c: &LiveColumn, s: &TableShape) -> String {
    let mut l = look(c, s);
    if base_type(&c.ty) == "timestamp" {
        if let Some(step) = s.clustering_step {
            let start = s.columns.get(&c.name).and_then(|cs| cs.range).map_or(0, |r| r.0);
            l.push_str(&format!(", start: {start}, step_ms: {step}"));
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::value::CqlTimestamp;

    fn table() -> LiveTable {
        let col = |n: &str, ty: &str, kind| LiveColumn { name: n.into(), ty: ty.into(), kind };
        LiveTable {
            name: "events".into(),
            columns: vec![
                col("user", "text", ColumnKind::PartitionKey),
                col("at", "timestamp", ColumnKind::Clustering),
                col("kind", "text", ColumnKind::Regular),
                col("n", "int", ColumnKind::Regular),
                col("tags", "set<text>", ColumnKind::Regular),
            ],
            create: "CREATE TABLE IF NOT EXISTS events (user text, at timestamp, kind text, n int, tags set<text>, PRIMARY KEY ((user), at))".into(),
        }
    }

    fn rows(partitions: usize, per: usize) -> Vec<Vec<Option<CqlValue>>> {
        let mut out = Vec::new();
        for p in 0..partitions {
            for r in 0..per {
                out.push(vec![
                    Some(CqlValue::Text(format!("user{p:03}"))),
                    Some(CqlValue::Timestamp(CqlTimestamp(1_000_000 + r as i64 * 500))),
                    Some(CqlValue::Text(["click", "view"][r % 2].into())),
                    if r % 4 == 0 { None } else { Some(CqlValue::Int(r as i32)) },
                    Some(CqlValue::Set(vec![CqlValue::Text("abc".into()), CqlValue::Text("defg".into())])),
                ]);
            }
        }
        out
    }

    #[test]
    fn a_sample_says_partition_sizes_steps_sizes_ranges_nulls_and_cardinality() {
        let s = measure(&table(), &rows(10, 6), 0.5, false);
        assert_eq!((s.rows, s.partitions, s.rows_per_partition_max, s.clustering_step), (60, 10, 6, Some(500)));
        assert_eq!(s.rows_per_partition_mean, 6.0);
        let kind = &s.columns["kind"];
        assert_eq!((kind.distinct, kind.size), (2, Some((4, 5))));
        let n = &s.columns["n"];
        assert_eq!((n.nulls, n.values, n.range), (20, 40, Some((1, 5))));
        assert_eq!((s.columns["tags"].size, s.columns["tags"].element_size), (Some((2, 2)), Some((3, 4))));
        // a sample cut at its limit leaves out its last, perhaps partial, partition
        let cut = measure(&table(), &rows(10, 6)[..57], 0.5, true);
        assert_eq!((cut.partitions, cut.rows_per_partition_mean), (9, 6.0));
    }

    #[test]
    fn the_workload_makes_data_of_the_measured_shape() {
        let t = table();
        let s = measure(&t, &rows(10, 6), 0.5, false);
        let i = write_workload("app", Some("{'class': 'SimpleStrategy', 'replication_factor': 1}"), &[], &[(t, s)], &[]);
        for expected in [
            "events_user: { type: text, dist: sequence, max: \"${rows}\", repeat: 6, size: 7 }",
            "events_at: { type: timestamp, dist: sequence, max: 6, start: 1000000, step_ms: 500 }",
            "events_kind: { type: text, max: 2, size: { dist: uniform, min: 4, max: 6 } }",
            "null in 33% of the sample",
            "events_read_user: { type: text, dist: uniform, max: \"${rows / 6}\"",
        ] {
            assert!(i.yaml.contains(expected), "{expected:?} in:\n{}", i.yaml);
        }
        let w = crate::workload::parse_workload(&i.yaml, "app.yaml", &Default::default()).unwrap_or_else(|e| panic!("{e}\n{}", i.yaml));
        assert_eq!(w.load.as_ref().unwrap().count, 10_000);
        assert!(["events_point", "events_partition", "events_slice", "events_insert"].iter().all(|o| w.operation(o).is_some()));
        assert!(i.notes.iter().any(|n| n.contains("60 rows") && n.contains("6.0 rows per partition")));
    }
}
