//! Reading a cassandra-stress user profile: `keyspace`, `keyspace_definition`, `table`,
//! `table_definition`, `extra_definitions`, `columnspec` (`name`, `size`, `population`,
//! `cluster`), `insert` (`partitions`, `select`, `batchtype`, `row-population`), `queries`
//! (`cql`, `fields`, `consistencyLevel`, `serialConsistencyLevel`) and `token_range_queries`
//! (`columns`, `page_size`), each with its line. The DDL text is rewritten the way a casslab
//! schema needs it (`IF NOT EXISTS`, no keyspace qualifier, no `COMPACT STORAGE`). Turning the
//! profile into a workload is `cassandra_stress.rs`'s job.

use super::stress_dist::StressDist;
use super::workload_writer::one_line;
use super::ImportError;
use crate::yaml::{Node, Value};

/// A `columnspec` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSpec {
    pub name: String,
    pub size: Option<StressDist>,
    pub population: Option<StressDist>,
    pub cluster: Option<StressDist>,
    pub line: usize,
}

/// A named query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub name: String,
    pub cql: String,
    /// `samerow` or `multirow` (the default).
    pub samerow: bool,
    pub consistency: Option<String>,
    pub serial_consistency: Option<String>,
    pub line: usize,
}

/// A `token_range_queries` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenQuery {
    pub name: String,
    pub columns: String,
    pub page_size: u64,
    pub line: usize,
}

/// A profile as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Profile {
    pub keyspace: String,
    pub keyspace_definition: Option<(String, usize)>,
    pub table: String,
    pub table_definition: Option<(String, usize)>,
    pub extra_definitions: Vec<(String, usize)>,
    pub columns: Vec<ColumnSpec>,
    /// `insert:` keys (lower case) and values, with lines.
    pub insert: Vec<(String, String, usize)>,
    pub queries: Vec<Query>,
    pub token_queries: Vec<TokenQuery>,
}

impl Profile {
    pub fn column(&self, name: &str) -> Option<&ColumnSpec> {
        self.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name))
    }
    pub fn insert_value(&self, key: &str) -> Option<(&str, usize)> {
        self.insert.iter().find(|(k, _, _)| k == key).map(|(_, v, l)| (v.as_str(), *l))
    }
}

/// Reads a profile; `warnings` gets the keys that are not part of the format.
pub fn read_profile(src: &str, file: &str, warnings: &mut Vec<String>) -> Result<Profile, ImportError> {
    let err = |line: Option<usize>, m: String| ImportError::new(file, line, m);
    let doc = crate::yaml::parse(src).map_err(|e| err(e.line, e.message))?;
    let Value::Map(entries) = &doc.value else {
        return Err(err(Some(doc.line), "a cassandra-stress profile is a mapping (keyspace:, table:, columnspec:, insert:, queries:)".into()));
    };
    let mut p = Profile::default();
    let text = |n: &Node, key: &str| -> Result<String, ImportError> { n.scalar_text().ok_or_else(|| err(Some(n.line), format!("`{key}` must be text"))) };
    for e in entries {
        let n = &e.node;
        match e.key.as_str() {
            "keyspace" => p.keyspace = text(n, "keyspace")?,
            "keyspace_definition" => p.keyspace_definition = Some((text(n, "keyspace_definition")?, n.line)),
            "table" => p.table = text(n, "table")?,
            "table_definition" => p.table_definition = Some((text(n, "table_definition")?, n.line)),
            "extra_definitions" => {
                list(n, file, "extra_definitions", "a list of CREATE statements")?;
                for item in n.items() {
                    p.extra_definitions.push((text(item, "extra_definitions")?, item.line));
                }
            }
            "columnspec" => {
                list(n, file, "columnspec", "a list of `- name: COLUMN` entries (with size, population, cluster)")?;
                for item in n.items() {
                    p.columns.push(column_spec(item, file)?);
                }
            }
            "insert" => {
                map(n, file, "insert", "a mapping of partitions, select, batchtype")?;
                for ie in n.entries() {
                    let v = ie.node.scalar_text().ok_or_else(|| err(Some(ie.key_line), format!("insert `{}` must be a value", ie.key)))?;
                    p.insert.push((ie.key.to_ascii_lowercase(), v, ie.key_line));
                }
            }
            "queries" => {
                map(n, file, "queries", "a mapping of query name → { cql: …, fields: samerow|multirow }")?;
                for q in n.entries() {
                    p.queries.push(query(&q.key, &q.node, q.key_line, file)?);
                }
            }
            "token_range_queries" => {
                map(n, file, "token_range_queries", "a mapping of query name → { columns: …, page_size: … }")?;
                for q in n.entries() {
                    let columns = q.node.get("columns").and_then(Node::scalar_text).unwrap_or_else(|| "*".into());
                    let page_size = q.node.get("page_size").and_then(Node::as_u64).unwrap_or(5000);
                    p.token_queries.push(TokenQuery { name: q.key.to_ascii_lowercase(), columns, page_size, line: q.key_line });
                }
            }
            other => warnings.push(format!("{file}:{}: `{other}` is not a key of cassandra-stress profiles; ignored", e.key_line)),
        }
    }
    if p.keyspace.is_empty() {
        return Err(err(None, "the profile has no `keyspace:`".into()));
    }
    if p.table.is_empty() {
        return Err(err(None, "the profile has no `table:`".into()));
    }
    Ok(p)
}

/// A key whose value must be a list (empty is one): a scalar or a mapping would be ignored.
fn list(n: &Node, file: &str, key: &str, what: &str) -> Result<(), ImportError> {
    match &n.value {
        Value::Seq(_) | Value::Null => Ok(()),
        _ => Err(ImportError::new(file, Some(n.line), format!("`{key}` must be {what}"))),
    }
}

/// A key whose value must be a mapping (empty is one).
fn map(n: &Node, file: &str, key: &str, what: &str) -> Result<(), ImportError> {
    match &n.value {
        Value::Map(_) | Value::Null => Ok(()),
        _ => Err(ImportError::new(file, Some(n.line), format!("`{key}` must be {what}"))),
    }
}

fn column_spec(item: &Node, file: &str) -> Result<ColumnSpec, ImportError> {
    let mut c = ColumnSpec { name: String::new(), size: None, population: None, cluster: None, line: item.line };
    for e in item.entries() {
        let v = e.node.scalar_text().unwrap_or_default();
        // a size and a count of rows below 1 make empty values (an empty key) or no rows
        let dist = |min: i64, what: &str| {
            StressDist::parse(&v)
                .and_then(|d| d.at_least(min, what))
                .map_err(|m| ImportError::new(file, Some(e.key_line), format!("columnspec `{}`: {m}", e.key)))
        };
        match e.key.to_ascii_lowercase().as_str() {
            "name" => c.name = v.trim_matches('"').to_string(),
            "size" => c.size = Some(dist(1, "sizes")?),
            "population" => c.population = Some(dist(i64::MIN, "seeds")?),
            "cluster" => c.cluster = Some(dist(1, "rows per clustering value")?),
            other => {
                return Err(ImportError::new(file, Some(e.key_line), format!("columnspec: unknown option `{other}` (known: name, size, population, cluster)")))
            }
        }
    }
    if c.name.is_empty() {
        return Err(ImportError::new(file, Some(item.line), "columnspec entry without `name:`"));
    }
    Ok(c)
}

fn query(name: &str, n: &Node, line: usize, file: &str) -> Result<Query, ImportError> {
    let one = |cql: &str, at: Option<usize>| match crate::cql::read_ddl(cql) {
        Some(d) if d.several && d.verb != "BEGIN" => {
            Err(ImportError::new(file, at, format!("query `{name}` holds more than one statement (something follows a `;`); a query is one statement")))
        }
        _ => Ok(()),
    };
    // the old form: `name: CQL`
    if let Some(cql) = n.as_str() {
        one(cql, Some(line))?;
        return Ok(Query { name: name.to_ascii_lowercase(), cql: cql.to_string(), samerow: false, consistency: None, serial_consistency: None, line });
    }
    let cql = n.get("cql").and_then(Node::scalar_text).ok_or_else(|| ImportError::new(file, Some(line), format!("query `{name}` has no `cql:`")))?;
    one(&cql, n.line_at(&["cql"]).or(Some(line)))?;
    let fields = match n.get("fields") {
        None => "multirow".to_string(),
        Some(f) => f.scalar_text().ok_or_else(|| {
            ImportError::new(file, n.line_at(&["fields"]), format!("query `{name}`: fields must be samerow or multirow, one word (not a list)"))
        })?,
    };
    let samerow = match fields.to_ascii_lowercase().as_str() {
        "samerow" => true,
        "multirow" => false,
        other => return Err(ImportError::new(file, n.line_at(&["fields"]), format!("query `{name}`: fields must be samerow or multirow, not \"{other}\""))),
    };
    let get = |k: &str| n.get(k).and_then(Node::scalar_text).map(|s| s.to_ascii_uppercase());
    Ok(Query { name: name.to_ascii_lowercase(), cql, samerow, consistency: get("consistencyLevel"), serial_consistency: get("serialConsistencyLevel"), line })
}

/// Finds `pat` in `hay`, ignoring ASCII case, from byte `from`.
pub(crate) fn find_ci(hay: &str, pat: &str, from: usize) -> Option<usize> {
    let (h, p) = (hay.as_bytes(), pat.as_bytes());
    (from..=h.len().checked_sub(p.len())?).find(|&i| h[i..i + p.len()].eq_ignore_ascii_case(p))
}

/// A `CREATE …` statement as a casslab schema entry: one line, `IF NOT EXISTS` after the object
/// words (`TABLE`, `INDEX`, `TYPE`, `MATERIALIZED VIEW`, …), the object's name without the
/// keyspace `ks`, and no `COMPACT STORAGE` (gone from Cassandra 4.0; `notes` says so).
pub(crate) fn schema_statement(ddl: &str, ks: &str, notes: &mut Vec<String>) -> Option<String> {
    let mut s = one_line(ddl);
    let upper = s.to_ascii_uppercase();
    if !upper.starts_with("CREATE ") {
        return None;
    }
    let words: Vec<&str> = upper.split(' ').collect();
    // CREATE [CUSTOM] INDEX | TABLE | TYPE | MATERIALIZED VIEW | FUNCTION …
    let mut k = 1;
    while k < words.len() && matches!(words[k], "CUSTOM" | "MATERIALIZED" | "OR" | "REPLACE") {
        k += 1;
    }
    let head_end: usize = words[..=k.min(words.len() - 1)].iter().map(|w| w.len() + 1).sum::<usize>() - 1;
    if !upper[head_end..].trim_start().starts_with("IF NOT EXISTS") {
        s.insert_str(head_end, " IF NOT EXISTS");
    }
    // the keyspace qualifier, wherever the profile's keyspace names an object
    for q in [format!("{ks}."), format!("\"{ks}\".")] {
        while let Some(i) = find_ci(&s, &q, 0) {
            let before = s[..i].chars().last();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                break;
            }
            s.replace_range(i..i + q.len(), "");
        }
    }
    if let Some(i) = find_ci(&s, "COMPACT STORAGE", 0) {
        let after = s[i + "COMPACT STORAGE".len()..].trim_start().to_string();
        let before = s[..i].trim_end().to_string();
        s = match (before.to_ascii_uppercase().ends_with(" WITH"), after.to_ascii_uppercase().starts_with("AND ")) {
            (true, true) => format!("{before} {}", &after[4..]),
            (true, false) => format!("{} {after}", &before[..before.len() - 5]),
            (false, _) if before.to_ascii_uppercase().ends_with(" AND") => format!("{} {after}", &before[..before.len() - 4]),
            _ => format!("{before} {after}"),
        };
        s = s.trim().to_string();
        notes.push("WITH COMPACT STORAGE was dropped: Cassandra 4.0 and later refuse it".into());
    }
    Some(s)
}

/// The replication map of a `CREATE KEYSPACE … WITH replication = {…}`.
pub(crate) fn replication_of(ddl: &str) -> Option<String> {
    let s = one_line(ddl);
    let at = find_ci(&s, "replication", 0)?;
    let open = s[at..].find('{')? + at;
    let close = s[open..].find('}')? + open;
    Some(s[open..=close].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_becomes_a_casslab_schema_entry() {
        let mut notes = vec![];
        let t = "CREATE TABLE stresscql.typestest (\n name text,\n v blob,\n PRIMARY KEY (name)\n) WITH COMPACT STORAGE\n AND compaction = { 'class':'LeveledCompactionStrategy' };";
        assert_eq!(
            schema_statement(t, "stresscql", &mut notes).unwrap(),
            "CREATE TABLE IF NOT EXISTS typestest ( name text, v blob, PRIMARY KEY (name) ) WITH compaction = { 'class':'LeveledCompactionStrategy' }"
        );
        assert_eq!(notes.len(), 1);
        let t = "create table if not exists t (k int primary key) with comment = 'x' and compact storage";
        assert_eq!(schema_statement(t, "ks", &mut notes).unwrap(), "create table if not exists t (k int primary key) with comment = 'x'");
        assert_eq!(schema_statement("CREATE INDEX ON ks.t (v)", "ks", &mut notes).unwrap(), "CREATE INDEX IF NOT EXISTS ON t (v)");
        assert_eq!(
            schema_statement("CREATE MATERIALIZED VIEW mv AS SELECT * FROM t", "ks", &mut notes).unwrap(),
            "CREATE MATERIALIZED VIEW IF NOT EXISTS mv AS SELECT * FROM t"
        );
        assert_eq!(schema_statement("ALTER TABLE t ADD x int", "ks", &mut notes), None);
        assert_eq!(
            replication_of("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = true;").as_deref(),
            Some("{'class': 'SimpleStrategy', 'replication_factor': 1}")
        );
    }

    #[test]
    fn a_profile_reads_with_lines_and_mistakes_are_placed() {
        let src = "keyspace: ks\ntable: t\ncolumnspec:\n  - name: v\n    size: uniform(1..10)\n    population: gaussian(1..100)\ninsert:\n  partitions: fixed(1)\n  batchtype: UNLOGGED\nqueries:\n  q1:\n    cql: select * from t where k = ?\n    fields: samerow\n    consistencyLevel: quorum\n  old: select v from t where k = ?\ntoken_range_queries:\n  all:\n    columns: k, v\n    page_size: 100\nextra: 1\n";
        let mut w = vec![];
        let p = read_profile(src, "p.yaml", &mut w).unwrap();
        assert_eq!((p.keyspace.as_str(), p.table.as_str()), ("ks", "t"));
        assert_eq!(p.columns[0].line, 4);
        assert_eq!(p.insert_value("batchtype"), Some(("UNLOGGED", 9)));
        assert!(p.queries[0].samerow && p.queries[0].consistency.as_deref() == Some("QUORUM"));
        assert_eq!((p.queries[1].name.as_str(), p.queries[1].samerow), ("old", false));
        assert_eq!(p.token_queries[0], TokenQuery { name: "all".into(), columns: "k, v".into(), page_size: 100, line: 17 });
        assert_eq!(w, ["p.yaml:20: `extra` is not a key of cassandra-stress profiles; ignored"]);
        let bad = read_profile("keyspace: ks\ntable: t\ncolumnspec:\n  - name: v\n    size: zipf(1..3)\n", "p.yaml", &mut w).unwrap_err();
        assert_eq!((bad.line, bad.message.contains("unknown distribution")), (Some(5), true));
        let bad = read_profile("keyspace: ks\ntable: t\ncolumnspec:\n  - name: v\n    sizes: fixed(1)\n", "p.yaml", &mut w).unwrap_err();
        assert!(bad.to_string().starts_with("p.yaml:5: columnspec: unknown option `sizes`"), "{bad}");
        assert!(read_profile("table: t\n", "p.yaml", &mut w).unwrap_err().message.contains("no `keyspace:`"));
        // what would be ignored or make empty keys is refused where it is written
        for (bad, line, says) in [
            ("keyspace: ks\ntable: t\ncolumnspec:\n  - name: v\n    size: fixed(-3)\n", 5, "columnspec `size`: \"fixed(-3)\" reaches -3: sizes are at least 1"),
            ("keyspace: ks\ntable: t\ncolumnspec:\n  - name: v\n    cluster: uniform(0..4)\n", 5, "rows per clustering value are at least 1"),
            ("keyspace: ks\ntable: t\ncolumnspec: 5\n", 3, "`columnspec` must be a list"),
            ("keyspace: ks\ntable: t\ninsert: fixed(1)\n", 3, "`insert` must be a mapping"),
            (
                "keyspace: ks\ntable: t\nqueries:\n  q:\n    cql: select * from t where k = ?\n    fields: [samerow]\n",
                6,
                "fields must be samerow or multirow, one word",
            ),
            ("keyspace: ks\ntable: t\nqueries:\n  q:\n    cql: select * from t where k = ?; DROP KEYSPACE system_auth\n", 5, "holds more than one statement"),
        ] {
            let e = read_profile(bad, "p.yaml", &mut w).unwrap_err();
            assert_eq!(e.line, Some(line), "{bad}: {e}");
            assert!(e.message.contains(says), "{bad}: {e}");
        }
    }
}
