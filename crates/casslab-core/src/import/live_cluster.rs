//! `casslab import cluster`: a live keyspace as a workload. Its schema comes from
//! `system_schema` (tables with their key order and clustering order, user-defined types,
//! indexes, replication); the shape of its data from a bounded sample of each table — a plain
//! paged scan at LOCAL_ONE that reads no more than [`SampleLimits::rows`] rows and stops after
//! [`SampleLimits::time_s`], and never writes. What the sample says and the workload it makes
//! are `cluster_shape.rs`'s.

use super::cluster_shape::{measure, write_workload, ColumnKind, LiveColumn, LiveTable};
use super::{ImportError, Imported};
use crate::lint::live_schema::read_live_schema;
use scylla::client::session::Session;
use scylla::response::PagingState;
use scylla::statement::Consistency;
use scylla::value::{CqlValue, Row};
use std::time::{Duration, Instant};

/// How much a sample may read of each table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleLimits {
    pub rows: u64,
    pub time_s: f64,
}

fn err(m: impl Into<String>) -> ImportError {
    ImportError::new("", None, m)
}

fn quote(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Imports `keyspace` (only `tables` when some are named).
pub async fn import_keyspace(session: &Session, keyspace: &str, tables: &[String], limits: &SampleLimits) -> Result<Imported, ImportError> {
    let live = read_live_schema(session, keyspace).await.map_err(err)?.ok_or_else(|| err(format!("the cluster has no keyspace {keyspace}")))?;
    let mut found = read_tables(session, keyspace).await?;
    if !tables.is_empty() {
        for t in tables {
            if !found.iter().any(|f| f.name == *t) {
                let known: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
                return Err(err(format!("keyspace {keyspace} has no table {t} (it has: {})", known.join(", "))));
            }
        }
        found.retain(|f| tables.contains(&f.name));
    }
    if found.is_empty() {
        return Err(err(format!("keyspace {keyspace} has no tables")));
    }
    let types = read_types(session, keyspace).await?;
    let mut shaped = Vec::new();
    for t in found {
        let (rows, seconds, cut) = sample(session, keyspace, &t, limits).await?;
        let shape = measure(&t, &rows, seconds, cut);
        shaped.push((t, shape));
    }
    let indexes: Vec<String> = live
        .indexes
        .iter()
        .filter(|(t, _)| shaped.iter().any(|(s, _)| s.name == *t))
        .map(|(_, cql)| cql.replacen("INDEX ", "INDEX IF NOT EXISTS ", 1))
        .collect();
    let mut imported = write_workload(keyspace, live.replication.as_deref(), &types, &shaped, &indexes);
    imported
        .notes
        .insert(0, format!("read {keyspace} from system_schema: {} tables, {} user-defined types, {} indexes", shaped.len(), types.len(), indexes.len()));
    Ok(imported)
}

/// The column types of the tables of `keyspaces` (for typing captured values).
pub async fn read_schema(session: &Session, keyspaces: &[String]) -> Result<super::capture::Schema, ImportError> {
    let mut out = super::capture::Schema::new();
    for ks in keyspaces {
        for t in read_tables(session, ks).await? {
            out.insert(format!("{ks}.{}", t.name), t.columns.into_iter().map(|c| (c.name, c.ty)).collect());
        }
    }
    Ok(out)
}

type ColumnRow = (String, String, String, String, i32, String);

async fn read_tables(session: &Session, keyspace: &str) -> Result<Vec<LiveTable>, ImportError> {
    let rs = session
        .query_unpaged("SELECT table_name, column_name, kind, clustering_order, position, type FROM system_schema.columns WHERE keyspace_name = ?", (keyspace,))
        .await
        .map_err(|e| err(format!("reading the columns of {keyspace}: {e}")))?;
    let cols: Vec<ColumnRow> = rs
        .into_rows_result()
        .map_err(|e| err(e.to_string()))?
        .rows::<ColumnRow>()
        .map_err(|e| err(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| err(e.to_string()))?;
    // tables only: system_schema.columns also holds the columns of materialized views
    let rs = session
        .query_unpaged("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", (keyspace,))
        .await
        .map_err(|e| err(format!("reading the tables of {keyspace}: {e}")))?;
    let mut names: Vec<String> = rs
        .into_rows_result()
        .map_err(|e| err(e.to_string()))?
        .rows::<(String,)>()
        .map_err(|e| err(e.to_string()))?
        .map(|r| r.map(|(t,)| t))
        .collect::<Result<_, _>>()
        .map_err(|e| err(e.to_string()))?;
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let mut mine: Vec<&ColumnRow> = cols.iter().filter(|c| c.0 == name).collect();
        let rank = |k: &str| match k {
            "partition_key" => 0,
            "clustering" => 1,
            _ => 2,
        };
        mine.sort_by(|a, b| (rank(&a.2), a.4, &a.1).cmp(&(rank(&b.2), b.4, &b.1)));
        let columns: Vec<LiveColumn> = mine
            .iter()
            .map(|c| LiveColumn {
                name: c.1.clone(),
                ty: c.5.replace(' ', ""),
                kind: match c.2.as_str() {
                    "partition_key" => ColumnKind::PartitionKey,
                    "clustering" => ColumnKind::Clustering,
                    _ => ColumnKind::Regular,
                },
            })
            .collect();
        let defs: Vec<String> = mine.iter().map(|c| format!("{} {}{}", quote(&c.1), c.5, if c.2 == "static" { " static" } else { "" })).collect();
        let keys = |k: &str| mine.iter().filter(|c| c.2 == k).map(|c| quote(&c.1)).collect::<Vec<_>>();
        let ck = keys("clustering");
        let mut create = format!(
            "CREATE TABLE IF NOT EXISTS {} ({}, PRIMARY KEY (({}){}))",
            quote(&name),
            defs.join(", "),
            keys("partition_key").join(", "),
            ck.iter().map(|c| format!(", {c}")).collect::<String>()
        );
        let order: Vec<String> = mine.iter().filter(|c| c.2 == "clustering").map(|c| format!("{} {}", quote(&c.1), c.3.to_ascii_uppercase())).collect();
        if order.iter().any(|o| o.ends_with("DESC")) {
            create.push_str(&format!(" WITH CLUSTERING ORDER BY ({})", order.join(", ")));
        }
        out.push(LiveTable { name, columns, create });
    }
    Ok(out)
}

async fn read_types(session: &Session, keyspace: &str) -> Result<Vec<(String, Vec<(String, String)>)>, ImportError> {
    let rs = session
        .query_unpaged("SELECT type_name, field_names, field_types FROM system_schema.types WHERE keyspace_name = ?", (keyspace,))
        .await
        .map_err(|e| err(format!("reading the types of {keyspace}: {e}")))?;
    let rows: Vec<(String, Vec<String>, Vec<String>)> = rs
        .into_rows_result()
        .map_err(|e| err(e.to_string()))?
        .rows::<(String, Vec<String>, Vec<String>)>()
        .map_err(|e| err(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| err(e.to_string()))?;
    Ok(rows.into_iter().map(|(n, f, t)| (n, f.into_iter().zip(t).collect())).collect())
}

/// Reads at most `limits.rows` rows of `t` (for at most `limits.time_s`), page by page at
/// LOCAL_ONE; returns them, the seconds it took and whether it stopped before the table's end.
async fn sample(session: &Session, keyspace: &str, t: &LiveTable, limits: &SampleLimits) -> Result<(Vec<Vec<Option<CqlValue>>>, f64, bool), ImportError> {
    let cols: Vec<String> = t.columns.iter().map(|c| quote(&c.name)).collect();
    let cql = format!("SELECT {} FROM {}.{}", cols.join(", "), quote(keyspace), quote(&t.name));
    let mut ps = session.prepare(cql.as_str()).await.map_err(|e| err(format!("{cql}: {e}")))?;
    ps.set_consistency(Consistency::LocalOne);
    ps.set_page_size(limits.rows.clamp(1, 1000) as i32);
    ps.set_is_idempotent(true);
    let started = Instant::now();
    let budget = Duration::from_secs_f64(limits.time_s.max(0.1));
    let mut rows = Vec::new();
    let mut paging = PagingState::start();
    loop {
        let (res, next) =
            session.execute_single_page(&ps, &[] as &[CqlValue], paging).await.map_err(|e| err(format!("sampling {}.{}: {e}", keyspace, t.name)))?;
        let page = res.into_rows_result().map_err(|e| err(e.to_string()))?;
        for r in page.rows::<Row>().map_err(|e| err(e.to_string()))? {
            rows.push(r.map_err(|e| err(e.to_string()))?.columns);
            if rows.len() as u64 >= limits.rows {
                return Ok((rows, started.elapsed().as_secs_f64(), true));
            }
        }
        match next.into_paging_control_flow() {
            std::ops::ControlFlow::Continue(p) if started.elapsed() < budget => paging = p,
            std::ops::ControlFlow::Continue(_) => return Ok((rows, started.elapsed().as_secs_f64(), true)),
            std::ops::ControlFlow::Break(()) => return Ok((rows, started.elapsed().as_secs_f64(), false)),
        }
    }
}
