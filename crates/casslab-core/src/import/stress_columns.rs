//! The columns of an imported cassandra-stress profile as casslab generators: each column's
//! CQL type, its `population` (how many distinct values, from which distribution), its `size`
//! (characters, bytes or elements), the look of keys of text or time types, user-defined types
//! filled from `extra_definitions`, and the bytes a row takes (to size batches).

use super::cassandra_stress::Builder;
use super::stress_dist::{to_fields, StressDist, StressKind};
use super::workload_writer::{one_line, quote};

impl Builder<'_> {
    /// The generator type of a column: the column's CQL type (counters bind their increment).
    pub(super) fn type_for(&self, col: &str) -> String {
        let t = self.ty(col);
        if t.contains('<') || t.contains(',') {
            quote(&t)
        } else {
            t
        }
    }

    /// `size:` of a text, blob or collection column: the columnspec's, or cassandra-stress's
    /// default uniform(4..8).
    pub(super) fn size_of(&self, col: &str) -> (String, Option<String>) {
        let d = self.spec(col).and_then(|s| s.size.clone()).unwrap_or_else(|| StressDist::parse("uniform(4..8)").expect("valid"));
        if d.kind == StressKind::Fixed {
            return (d.lo.max(0).to_string(), None);
        }
        let f = to_fields(&d, false);
        (format!("{{ {} }}", f.fields), f.note)
    }

    /// The generator fields of column `col`: its type, its `population` (distinct values) or,
    /// without one, cassandra-stress's default uniform(1..100B), its size and look. A `seq`
    /// population is re-seeded with every row in cassandra-stress (a value is the row's seed
    /// within the range, not a count), so it is drawn over its range like a uniform one.
    pub(super) fn value_fields(&self, col: &str) -> (String, Option<String>) {
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
            (_, "boolean") => {
                f.push_str(", values: [true]");
                notes.push("cassandra-stress's boolean generator makes true only (its identity % 1 == 0)".into());
            }
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
                if d.kind == StressKind::Seq {
                    notes.push(format!(
                        "population {}: cassandra-stress re-seeds it with every row, so a value is drawn within the range, not counted up",
                        d.written
                    ));
                    d.kind = StressKind::Uniform;
                }
                let df = to_fields(&d, false);
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

    /// The simple fields of a user-defined type created by the profile's `extra_definitions`.
    pub(super) fn udt_fields(&self, name: &str) -> Option<Vec<(String, String)>> {
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
    pub(super) fn row_bytes(&self) -> f64 {
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
