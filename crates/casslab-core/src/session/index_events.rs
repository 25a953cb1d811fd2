//! The `create index …` event: a `CREATE [CUSTOM] INDEX` statement sent through CQL while the
//! load goes on, on a table of the workload in its keyspace (casslab indexes only tables its
//! schema creates), the event lasting until the index is built — an SAI index when
//! `system_views.sai_column_indexes` says it is queryable and no longer building, a legacy
//! one when `system."IndexInfo"` lists it — so that the timeline measures the build's time
//! and `analysis::impact` its cost to the clients, as for the topology events. It opens a
//! driver session of its own on the blocking thread the timeline gives it.

use crate::config::{ClusterConfig, Credentials};
use crate::cql::{parse_schema, SchemaStmt};
use crate::events::EventStatus;
use std::time::{Duration, Instant};

/// What the CQL events of a run need: where the cluster is, how to log in, and the workload's
/// keyspace and tables.
#[derive(Clone)]
pub struct CqlEvents {
    pub cluster: ClusterConfig,
    pub credentials: Credentials,
    pub keyspace: String,
    pub tables: Vec<String>,
}

/// The longest an index build is waited for.
const BUILD_LIMIT: Duration = Duration::from_secs(3600);
const POLL: Duration = Duration::from_millis(250);

/// Creates the index of `cql` and waits until it is built (blocking; called on a blocking
/// thread of the runtime).
pub(crate) fn create_index(cql: &str, ctx: Option<&CqlEvents>) -> (EventStatus, Option<i32>, String) {
    let failed = |m: String| (EventStatus::Failed, None, m);
    let Some(ctx) = ctx else { return failed("no CQL cluster to create an index on (a Redis workload?)".into()) };
    let Some(SchemaStmt::Index(idx)) = parse_schema(cql) else { return failed(format!("not a CREATE INDEX statement: {cql}")) };
    if let Some(ks) = table_keyspace(cql).filter(|k| !k.eq_ignore_ascii_case(&ctx.keyspace)) {
        return failed(format!("the index is in keyspace {ks}; casslab creates indexes only in the workload's own, {}: name the table alone", ctx.keyspace));
    }
    if !ctx.tables.contains(&idx.table) {
        return failed(format!(
            "table {} is not one the workload's schema creates ({}): casslab indexes only tables it created",
            idx.table,
            ctx.tables.join(", ")
        ));
    }
    let Ok(handle) = tokio::runtime::Handle::try_current() else { return failed("no runtime to reach the cluster from".into()) };
    match handle.block_on(build(cql, &idx, ctx)) {
        Ok(lines) => (EventStatus::Ok, None, lines),
        Err(e) => failed(e),
    }
}

async fn build(cql: &str, idx: &crate::cql::Index, ctx: &CqlEvents) -> Result<String, String> {
    let session = crate::targets::cql::connect(&ctx.cluster, &ctx.credentials).await.map_err(|e| e.to_string())?;
    session.use_keyspace(&ctx.keyspace, false).await.map_err(|e| format!("cannot use keyspace {}: {e}", ctx.keyspace))?;
    let started = Instant::now();
    session.query_unpaged(cql, &[]).await.map_err(|e| format!("the cluster refused `{cql}`: {e}"))?;
    let created = started.elapsed();
    let ks = ctx.keyspace.to_ascii_lowercase();
    loop {
        if started.elapsed() > BUILD_LIMIT {
            return Err(format!("the index on {}.{} was not built after {} s", idx.table, idx.column, BUILD_LIMIT.as_secs()));
        }
        if let Some(name) = built(&session, &ks, idx).await {
            return Ok(format!(
                "created {name} on {}.{} in {:.1} s; built after {:.1} s",
                idx.table,
                idx.column,
                created.as_secs_f64(),
                started.elapsed().as_secs_f64()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The index's name once it is built (`None`: not yet).
async fn built(session: &scylla::client::session::Session, ks: &str, idx: &crate::cql::Index) -> Option<String> {
    let found = session
        .query_unpaged("SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name = ? AND table_name = ?", (ks, idx.table.as_str()))
        .await
        .ok()?
        .into_rows_result()
        .ok()?;
    let name = found
        .rows::<(String, std::collections::HashMap<String, String>)>()
        .ok()?
        .flatten()
        .find(|(_, options)| options.get("target").is_some_and(|t| target_column(t) == idx.column))
        .map(|(n, _)| n)?;
    if idx.is_sai() {
        let rows = session
            .query_unpaged("SELECT index_name, is_queryable, is_building FROM system_views.sai_column_indexes WHERE keyspace_name = ?", (ks,))
            .await
            .ok()?
            .into_rows_result()
            .ok()?;
        let done = rows.rows::<(String, bool, bool)>().ok()?.flatten().any(|(n, queryable, building)| n == name && queryable && !building);
        done.then_some(name)
    } else {
        let rows = session.query_unpaged("SELECT index_name FROM system.\"IndexInfo\" WHERE table_name = ?", (ks,)).await.ok()?.into_rows_result().ok()?;
        let done = rows.rows::<(String,)>().ok()?.flatten().any(|(n,)| n == name);
        done.then_some(name)
    }
}

/// The keyspace the statement's `ON ks.table` names, if it names one.
fn table_keyspace(cql: &str) -> Option<String> {
    let lower = cql.to_ascii_lowercase();
    let at = lower.find(" on ")? + 4;
    let target = cql[at..].trim_start().split(['(', ' ']).next()?;
    target.split_once('.').map(|(ks, _)| ks.trim_matches('"').to_string())
}

/// The column of an index's `target` option (`v`, `values(tags)`, `"Quoted"`).
fn target_column(target: &str) -> String {
    let inner = target.rsplit_once('(').map_or(target, |(_, c)| c.trim_end_matches(')'));
    match inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(q) => q.to_string(),
        None => inner.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_targets_name_their_column() {
        assert_eq!(target_column("v"), "v");
        assert_eq!(target_column("values(tags)"), "tags");
        assert_eq!(target_column("\"Quoted\""), "Quoted");
    }

    #[test]
    fn only_tables_of_the_workload_in_its_keyspace_are_indexed() {
        let ctx = CqlEvents { cluster: ClusterConfig::default(), credentials: Credentials::default(), keyspace: "ks".into(), tables: vec!["t".into()] };
        let (status, _, why) = create_index("CREATE INDEX ON other (v)", Some(&ctx));
        assert_eq!(status, EventStatus::Failed);
        assert!(why.contains("table other is not one the workload's schema creates"), "{why}");
        let (_, _, why) = create_index("CREATE INDEX ON elsewhere.t (v)", Some(&ctx));
        assert!(why.contains("keyspace elsewhere"), "{why}");
        let (_, _, why) = create_index("CREATE INDEX ON t (v)", None);
        assert!(why.contains("no CQL cluster"), "{why}");
    }
}
