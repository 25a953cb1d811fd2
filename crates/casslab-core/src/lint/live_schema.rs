//! The live schema for `casslab lint --hosts`: reads a keyspace's tables, indexes and
//! replication from a cluster's `system_schema`, rebuilds them as CQL, and puts them in place of
//! what the workload declares (the cluster's definition wins: a table altered since, an index
//! added by hand, the real replication), and lints a target with them. Connecting is the
//! engine's; judging is the rules'.

use crate::cql::{parse_schema, SchemaStmt};
use crate::workload::{Statement, Workload};
use scylla::client::session::Session;
use std::collections::{BTreeMap, HashMap};

/// A keyspace as the cluster has it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveSchema {
    /// Table name → `CREATE TABLE` rebuilt from system_schema.
    pub tables: BTreeMap<String, String>,
    /// (table, `CREATE INDEX`) pairs.
    pub indexes: Vec<(String, String)>,
    /// The replication map in CQL syntax.
    pub replication: Option<String>,
}

fn quote(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Reads `keyspace` from system_schema; `Ok(None)` when the cluster has no such keyspace.
pub async fn read_live_schema(session: &Session, keyspace: &str) -> Result<Option<LiveSchema>, String> {
    let e = |what: &str, err: String| format!("reading {what} of {keyspace}: {err}");
    let rs = session
        .query_unpaged("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", (keyspace,))
        .await
        .map_err(|x| e("replication", x.to_string()))?;
    let rows = rs.into_rows_result().map_err(|x| e("replication", x.to_string()))?;
    let Some((repl,)) = rows.maybe_first_row::<(HashMap<String, String>,)>().map_err(|x| e("replication", x.to_string()))? else {
        return Ok(None);
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(class) = repl.get("class") {
        parts.push(format!("'class': '{}'", class.rsplit('.').next().unwrap_or(class)));
    }
    let mut rest: Vec<(&String, &String)> = repl.iter().filter(|(k, _)| *k != "class").collect();
    rest.sort();
    parts.extend(rest.iter().map(|(k, v)| format!("'{k}': {v}")));
    let replication = Some(format!("{{{}}}", parts.join(", ")));

    let rs = session
        .query_unpaged("SELECT table_name, default_time_to_live FROM system_schema.tables WHERE keyspace_name = ?", (keyspace,))
        .await
        .map_err(|x| e("tables", x.to_string()))?;
    let table_rows: Vec<(String, Option<i32>)> = rs
        .into_rows_result()
        .map_err(|x| e("tables", x.to_string()))?
        .rows::<(String, Option<i32>)>()
        .map_err(|x| e("tables", x.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|x| e("tables", x.to_string()))?;
    let rs = session
        .query_unpaged("SELECT table_name, column_name, kind, position, type FROM system_schema.columns WHERE keyspace_name = ?", (keyspace,))
        .await
        .map_err(|x| e("columns", x.to_string()))?;
    let cols: Vec<(String, String, String, i32, String)> = rs
        .into_rows_result()
        .map_err(|x| e("columns", x.to_string()))?
        .rows::<(String, String, String, i32, String)>()
        .map_err(|x| e("columns", x.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|x| e("columns", x.to_string()))?;
    let mut tables = BTreeMap::new();
    for (table, ttl) in &table_rows {
        let mut mine: Vec<&(String, String, String, i32, String)> = cols.iter().filter(|c| c.0 == *table).collect();
        mine.sort_by_key(|c| (c.2.clone(), c.3));
        let key = |kind: &str| -> Vec<String> {
            let mut v: Vec<&&(String, String, String, i32, String)> = mine.iter().filter(|c| c.2 == kind).collect();
            v.sort_by_key(|c| c.3);
            v.iter().map(|c| quote(&c.1)).collect()
        };
        let defs: Vec<String> = mine.iter().map(|c| format!("{} {}{}", quote(&c.1), c.4, if c.2 == "static" { " static" } else { "" })).collect();
        let mut cql = format!(
            "CREATE TABLE {} ({}, PRIMARY KEY (({}){}))",
            quote(table),
            defs.join(", "),
            key("partition_key").join(", "),
            key("clustering").iter().map(|c| format!(", {c}")).collect::<String>()
        );
        if let Some(t) = ttl.filter(|t| *t > 0) {
            cql.push_str(&format!(" WITH default_time_to_live = {t}"));
        }
        tables.insert(table.clone(), cql);
    }

    let rs = session
        .query_unpaged("SELECT table_name, index_name, options FROM system_schema.indexes WHERE keyspace_name = ?", (keyspace,))
        .await
        .map_err(|x| e("indexes", x.to_string()))?;
    let idx: Vec<(String, String, HashMap<String, String>)> = rs
        .into_rows_result()
        .map_err(|x| e("indexes", x.to_string()))?
        .rows::<(String, String, HashMap<String, String>)>()
        .map_err(|x| e("indexes", x.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|x| e("indexes", x.to_string()))?;
    let indexes = idx
        .into_iter()
        .filter_map(|(table, name, opts)| {
            let target = opts.get("target")?;
            let using = opts.get("class_name").map(|c| format!(" USING '{c}'")).unwrap_or_default();
            let custom = if using.is_empty() { "" } else { "CUSTOM " };
            Some((table.clone(), format!("CREATE {custom}INDEX {} ON {} ({target}){using}", quote(&name), quote(&table))))
        })
        .collect();
    Ok(Some(LiveSchema { tables, indexes, replication }))
}

/// The workload with the cluster's definitions of its tables (at the lines of the workload's
/// own statements), the cluster's indexes on them, and the cluster's replication.
pub fn apply_live(w: &Workload, live: &LiveSchema) -> Workload {
    let mut out = w.clone();
    let mut schema = Vec::new();
    for st in &w.schema {
        match parse_schema(&st.cql) {
            Some(SchemaStmt::Table(t)) if live.tables.contains_key(&t.name) => {
                schema.push(Statement { cql: live.tables[&t.name].clone(), args: vec![], line: st.line });
                for (_, cql) in live.indexes.iter().filter(|(tb, _)| *tb == t.name) {
                    schema.push(Statement { cql: cql.clone(), args: vec![], line: st.line });
                }
            }
            // the cluster's indexes replace the declared ones of tables it has
            Some(SchemaStmt::Index(i)) if live.tables.contains_key(&i.table) => {}
            _ => schema.push(st.clone()),
        }
    }
    out.schema = schema;
    if live.replication.is_some() {
        out.replication = live.replication.clone();
    }
    out
}

/// Lints `target` (a workload or an experiment) with the live schema of each of its workloads'
/// keyspaces, read through `session` once per keyspace on `rt`; `said` gets a line for each
/// keyspace read or missing, and for each that could not be read (whose workload's own schema
/// is judged then).
pub fn lint_target_live(
    rt: &tokio::runtime::Runtime,
    session: &Session,
    target: &str,
    overrides: &BTreeMap<String, String>,
    opts: &super::LintOptions,
    said: &mut dyn FnMut(&str),
) -> Result<Vec<super::Finding>, crate::workload::WorkloadError> {
    let mut cache: BTreeMap<String, Option<LiveSchema>> = BTreeMap::new();
    let mut adjust = |w: Workload| -> Workload {
        let live = cache.entry(w.keyspace.clone()).or_insert_with(|| match rt.block_on(read_live_schema(session, &w.keyspace)) {
            Ok(Some(l)) => {
                let replication = l.replication.as_deref().unwrap_or("?");
                said(&format!("lint: keyspace {} read from the cluster ({} tables, replication {replication})", w.keyspace, l.tables.len()));
                Some(l)
            }
            Ok(None) => {
                said(&format!("lint: the cluster has no keyspace {}; judging the workload's own schema", w.keyspace));
                None
            }
            Err(e) => {
                said(&format!("warning: {e}; judging the workload's own schema"));
                None
            }
        });
        match live {
            Some(l) => apply_live(&w, l),
            None => w,
        }
    };
    super::lint_target_with(target, overrides, opts, &mut adjust)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_definitions_replace_declared_ones_at_their_lines() {
        let src = "keyspace: ks
schema:
  - CREATE TABLE IF NOT EXISTS s (id bigint PRIMARY KEY, tags frozen<set<text>>)
  - CREATE INDEX IF NOT EXISTS by_tags ON s (tags)
generators:
  id: { type: bigint, dist: uniform, min: 0, max: 1000 }
  tags: { type: \"frozen<set<text>>\", size: 3 }
operations:
  write:
    cql: INSERT INTO s (id, tags) VALUES (?, ?) USING TTL 60
    args: [id, tags]
run:
  mix: { write: 1 }
  duration: 10s
";
        let w = crate::workload::parse_workload(src, "t.yaml", &BTreeMap::new()).unwrap();
        let opts = super::super::LintOptions::default();
        assert!(super::super::lint(&w, &opts).is_empty());
        let live = LiveSchema {
            tables: [("s".to_string(), "CREATE TABLE s (id bigint, tags set<text>, PRIMARY KEY ((id)))".to_string())].into(),
            indexes: vec![],
            replication: Some("{'class': 'SimpleStrategy', 'replication_factor': 1}".into()),
        };
        let lw = apply_live(&w, &live);
        assert_eq!(lw.schema.len(), 1, "the declared index is not on the cluster");
        assert_eq!(lw.schema[0].line, 3);
        assert_eq!(lw.replication, live.replication);
        let f = super::super::lint(&lw, &opts);
        assert!(f.iter().any(|x| x.rule == super::super::Rule::TtlOnCollection && x.line == Some(10)), "{f:#?}");
    }
}
