//! Preparing the cluster for a workload: the keyspace (created only if missing, with a
//! replication that fits the cluster), the workload's tables, and casslab's bookkeeping table
//! `casslab_meta` in that keyspace, which records whether casslab created the keyspace, which
//! tables it created there and which data sets it loaded. casslab truncates only keyspaces it
//! created, never drops one, and in a keyspace it did not create alters or indexes only the
//! tables it created (the workload validation has already refused everything destructive).

use crate::cql::read_ddl;
use crate::engine::{Claim, EngineError, TargetInfo};
use crate::workload::{Statement, Workload};
use scylla::client::session::Session;
use scylla::statement::unprepared::Statement as CqlStatement;
use scylla::statement::unprepared::Statement as Query;
use scylla::statement::Consistency;

const CREATED_KEY: &str = "created_by_casslab";
/// `table:<name>` in `casslab_meta`: casslab created that table.
const TABLE_PREFIX: &str = "table:";

/// What `prepare_keyspace` found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyspaceState {
    /// The keyspace did not exist and casslab created it now.
    pub created_now: bool,
    /// casslab created the keyspace (now or in an earlier run).
    pub ours: bool,
}

/// NetworkTopologyStrategy with RF = min(3, nodes) in every data center.
pub fn default_replication(info: &TargetInfo) -> String {
    let parts: Vec<String> = if info.datacenters.is_empty() {
        vec!["'datacenter1': 1".into()]
    } else {
        info.datacenters.iter().map(|(dc, n)| format!("'{dc}': {}", (*n).clamp(1, 3))).collect()
    };
    format!("{{'class': 'NetworkTopologyStrategy', {}}}", parts.join(", "))
}

async fn exec(session: &Session, cql: &str) -> Result<(), EngineError> {
    session.query_unpaged(setup(cql), &[]).await.map(|_| ()).map_err(|e| EngineError::Schema { statement: cql.to_string(), message: e.to_string() })
}

async fn keyspace_exists(session: &Session, ks: &str) -> Result<bool, EngineError> {
    let cql = "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?";
    let rs = session.query_unpaged(setup(cql), (ks,)).await.map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
    Ok(rs.into_rows_result().map(|r| r.rows_num() > 0).unwrap_or(false))
}

/// Waits (up to `timeout_ms`) until the workload's keyspace holds casslab's bookkeeping table
/// and every table the workload creates: another loader creates them.
pub async fn wait_for_schema(session: &Session, w: &Workload, timeout_ms: u64) -> Result<(), EngineError> {
    let cql = "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?";
    let mut wanted: Vec<String> = w.tables().into_iter().map(|t| t.trim_matches('"').to_string()).collect();
    wanted.push("casslab_meta".into());
    let since = std::time::Instant::now();
    loop {
        let rs = session.query_unpaged(cql, (w.keyspace.as_str(),)).await.map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
        let have: Vec<String> =
            rs.into_rows_result().ok().and_then(|r| r.rows::<(String,)>().ok().map(|it| it.flatten().map(|(t,)| t).collect())).unwrap_or_default();
        if wanted.iter().all(|t| have.iter().any(|h| h.eq_ignore_ascii_case(t))) {
            let _ = session.await_schema_agreement().await;
            return Ok(());
        }
        if since.elapsed() > std::time::Duration::from_millis(timeout_ms) {
            let missing: Vec<&str> = wanted.iter().filter(|t| !have.iter().any(|h| h.eq_ignore_ascii_case(t))).map(String::as_str).collect();
            return Err(EngineError::Schema {
                statement: format!("(waiting for shard 0 to create {}.{})", w.keyspace, missing.join(", ")),
                message: format!("not there after {:.0} s: is shard 0 running?", since.elapsed().as_secs_f64()),
            });
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// Writes `value` under `key` in `casslab_meta` unless it holds one (a lightweight
/// transaction), expiring after `ttl_s`; returns what holds and when the server wrote it.
pub async fn claim(session: &Session, key: &str, value: &str, ttl_s: u32) -> Result<Claim, EngineError> {
    let cql = "INSERT INTO casslab_meta (key, value) VALUES (?, ?) IF NOT EXISTS USING TTL ?";
    let fail = |e: &dyn std::fmt::Display| EngineError::Schema { statement: cql.into(), message: e.to_string() };
    let mut st = CqlStatement::new(cql);
    st.set_consistency(Consistency::Quorum);
    let rs = session.query_unpaged(st, (key, value, ttl_s.min(i32::MAX as u32) as i32)).await.map_err(|e| fail(&e))?;
    let rows = rs.into_rows_result().map_err(|e| fail(&e))?;
    // [applied], then (when not applied) the row that holds: key, value
    let (applied, _, held) = rows
        .single_row::<(bool, Option<String>, Option<String>)>()
        .or_else(|_| rows.single_row::<(bool,)>().map(|(a,)| (a, None, None)))
        .map_err(|e| fail(&e))?;
    let read = "SELECT value, writetime(value) FROM casslab_meta WHERE key = ?";
    let mut st = CqlStatement::new(read);
    st.set_consistency(Consistency::Quorum);
    let written: Option<(Option<String>, Option<i64>)> = session
        .query_unpaged(st, (key,))
        .await
        .ok()
        .and_then(|r| r.into_rows_result().ok())
        .and_then(|r| r.maybe_first_row::<(Option<String>, Option<i64>)>().ok().flatten());
    let value = if applied { value.to_string() } else { held.or_else(|| written.as_ref().and_then(|w| w.0.clone())).unwrap_or_default() };
    Ok(Claim { value, ours: applied, written_at_unix_us: written.and_then(|w| w.1) })
}

/// The values of those of `keys` that `casslab_meta` holds.
pub async fn claims(session: &Session, keys: &[String]) -> Result<Vec<(String, String)>, EngineError> {
    let cql = "SELECT key, value FROM casslab_meta WHERE key = ?";
    let mut out = Vec::new();
    for k in keys {
        let mut st = CqlStatement::new(cql);
        st.set_consistency(Consistency::Quorum);
        let rs = session.query_unpaged(st, (k.as_str(),)).await.map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
        if let Some((key, Some(value))) = rs.into_rows_result().ok().and_then(|r| r.maybe_first_row::<(String, Option<String>)>().ok().flatten()) {
            out.push((key, value));
        }
    }
    Ok(out)
}

/// Creates the keyspace if missing, switches the session to it, creates the bookkeeping table
/// and the workload's schema.
pub async fn prepare_keyspace(session: &Session, w: &Workload, info: &TargetInfo) -> Result<KeyspaceState, EngineError> {
    let ks = &w.keyspace;
    let cl = meta_consistency(info);
    let created_now = if keyspace_exists(session, ks).await? {
        false
    } else {
        let repl = w.replication.clone().unwrap_or_else(|| default_replication(info));
        exec(session, &format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {repl}")).await?;
        true
    };
    session.use_keyspace(ks.as_str(), false).await.map_err(|e| EngineError::Schema { statement: format!("USE {ks}"), message: e.to_string() })?;
    exec(session, "CREATE TABLE IF NOT EXISTS casslab_meta (key text PRIMARY KEY, value text)").await?;
    if created_now {
        set_meta(session, CREATED_KEY, &now_text(), cl).await?;
    }
    let ours = created_now || get_meta(session, CREATED_KEY, cl).await?.is_some();
    let before = tables_of(session, ks).await?;
    if !ours {
        check_tables_are_ours(session, w, &before, cl).await?;
    }
    for st in &w.schema {
        exec(session, &st.cql).await?;
        if let Some(t) = crate::cql::created_table(&st.cql).filter(|t| !before.contains(t)) {
            set_meta(session, &format!("{TABLE_PREFIX}{t}"), &now_text(), cl).await?;
        }
    }
    let _ = session.await_schema_agreement().await;
    Ok(KeyspaceState { created_now, ours })
}

/// The tables of keyspace `ks` now.
async fn tables_of(session: &Session, ks: &str) -> Result<Vec<String>, EngineError> {
    let cql = "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?";
    let rs = session.query_unpaged(setup(cql), (ks,)).await.map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
    let rows = rs.into_rows_result().map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
    let names = rows.rows::<(String,)>().map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
    Ok(names.filter_map(Result::ok).map(|(t,)| t).collect())
}

/// In a keyspace casslab did not create: every statement that changes a table (ALTER TABLE,
/// an index, a materialized view) must be about a table this schema creates now or casslab
/// created before (recorded in `casslab_meta`). Checked before any statement runs.
async fn check_tables_are_ours(session: &Session, w: &Workload, before: &[String], cl: Consistency) -> Result<(), EngineError> {
    let mut new_tables: Vec<String> = Vec::new();
    for st in &w.schema {
        if let Some(t) = crate::cql::created_table(&st.cql).filter(|t| !before.contains(t)) {
            new_tables.push(t);
            continue;
        }
        let Some(d) = read_ddl(&st.cql) else { continue };
        if d.verb != "ALTER" && d.base.is_none() {
            continue;
        }
        let Some((_, table)) = d.table() else { continue };
        let ours = new_tables.iter().any(|t| t == table) || get_meta(session, &format!("{TABLE_PREFIX}{table}"), cl).await?.is_some();
        if !ours {
            return Err(not_our_table(w, st, table));
        }
    }
    Ok(())
}

fn not_our_table(w: &Workload, st: &Statement, table: &str) -> EngineError {
    EngineError::NotOurTable { file: w.origin.clone(), line: st.line, statement: st.cql.clone(), keyspace: w.keyspace.clone(), table: table.to_string() }
}

/// A setup statement: idempotent, so the driver may retry it on another node when the one it
/// was sent to dies (schema statements here are all `IF NOT EXISTS`, bookkeeping is upserts).
pub(crate) fn setup(cql: &str) -> Query {
    let mut q = Query::new(cql);
    q.set_is_idempotent(true);
    q
}

/// The consistency of casslab's own bookkeeping rows: LOCAL_QUORUM, or ONE on a cluster of one
/// node, where a keyspace that asks for more replicas than there are nodes (an imported profile's
/// replication factor of 3) could never reach a quorum. The workload's own operations keep their
/// levels: the bookkeeping alone never makes a run fail that the workload itself could do.
pub fn meta_consistency(info: &TargetInfo) -> Consistency {
    if info.node_count == 1 {
        Consistency::One
    } else {
        Consistency::LocalQuorum
    }
}

/// A bookkeeping statement: a setup statement at the bookkeeping's consistency `cl`.
fn meta(cql: &str, cl: Consistency) -> Query {
    let mut q = setup(cql);
    q.set_consistency(cl);
    q
}

async fn set_meta(session: &Session, key: &str, value: &str, cl: Consistency) -> Result<(), EngineError> {
    let cql = "INSERT INTO casslab_meta (key, value) VALUES (?, ?)";
    session.query_unpaged(meta(cql, cl), (key, value)).await.map(|_| ()).map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })
}

async fn get_meta(session: &Session, key: &str, cl: Consistency) -> Result<Option<String>, EngineError> {
    let cql = "SELECT value FROM casslab_meta WHERE key = ?";
    let rs = session.query_unpaged(meta(cql, cl), (key,)).await.map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
    let rows = rs.into_rows_result().map_err(|e| EngineError::Schema { statement: cql.into(), message: e.to_string() })?;
    Ok(rows.maybe_first_row::<(Option<String>,)>().ok().flatten().and_then(|(v,)| v))
}

/// Whether the data set identified by `fingerprint` was loaded completely before; returns the
/// recorded description.
pub async fn loaded(session: &Session, fingerprint: &str, cl: Consistency) -> Result<Option<String>, EngineError> {
    get_meta(session, &format!("load:{fingerprint}"), cl).await
}

pub async fn record_load(session: &Session, fingerprint: &str, description: &str, cl: Consistency) -> Result<(), EngineError> {
    set_meta(session, &format!("load:{fingerprint}"), description, cl).await
}

/// `note:<key>` in `casslab_meta`: what casslab keeps about a data set beside its load (which run
/// wrote to it last, and whether that run kept a record of its writes). Forgotten with the
/// loads on `--reload`.
const NOTE_PREFIX: &str = "load:note:";

pub async fn note(session: &Session, key: &str, value: &str, cl: Consistency) -> Result<(), EngineError> {
    set_meta(session, &format!("{NOTE_PREFIX}{key}"), value, cl).await
}

pub async fn noted(session: &Session, key: &str, cl: Consistency) -> Result<Option<String>, EngineError> {
    get_meta(session, &format!("{NOTE_PREFIX}{key}"), cl).await
}

/// Uses the workload's keyspace, which must exist (nothing is created).
pub async fn attach(session: &Session, w: &Workload) -> Result<(), EngineError> {
    if !keyspace_exists(session, &w.keyspace).await? {
        return Err(EngineError::Schema {
            statement: format!("USE {}", w.keyspace),
            message: "the keyspace does not exist: nothing was loaded there (run the workload first, or give the -P keyspace=… it was loaded with)".into(),
        });
    }
    session.use_keyspace(w.keyspace.as_str(), false).await.map_err(|e| EngineError::Schema { statement: format!("USE {}", w.keyspace), message: e.to_string() })
}

/// Empties the workload's tables and forgets earlier loads — only in a keyspace casslab created.
pub async fn truncate_for_reload(session: &Session, w: &Workload, state: KeyspaceState, cl: Consistency) -> Result<(), EngineError> {
    if !state.ours {
        return Err(EngineError::NotOurKeyspace(w.keyspace.clone()));
    }
    for t in w.tables() {
        exec(session, &format!("TRUNCATE {}.{t}", w.keyspace)).await?;
    }
    let rs = session
        .query_unpaged(meta("SELECT key FROM casslab_meta", cl), &[])
        .await
        .map_err(|e| EngineError::Schema { statement: "SELECT key FROM casslab_meta".into(), message: e.to_string() })?;
    if let Ok(rows) = rs.into_rows_result() {
        if let Ok(iter) = rows.rows::<(String,)>() {
            for (k,) in iter.flatten() {
                if k.starts_with("load:") {
                    session
                        .query_unpaged(meta("DELETE FROM casslab_meta WHERE key = ?", cl), (k.as_str(),))
                        .await
                        .map_err(|e| EngineError::Schema { statement: "DELETE FROM casslab_meta".into(), message: e.to_string() })?;
                }
            }
        }
    }
    Ok(())
}

fn now_text() -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("unix_ms={ms}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_statements_may_be_retried_elsewhere() {
        assert!(setup("SELECT value FROM casslab_meta WHERE key = ?").get_is_idempotent());
    }

    #[test]
    fn bookkeeping_on_one_node_asks_one_replica() {
        let one = TargetInfo { server_version: None, node_count: 1, datacenters: vec![("dc1".into(), 1)] };
        assert_eq!(meta_consistency(&one), Consistency::One);
        let three = TargetInfo { server_version: None, node_count: 3, datacenters: vec![("dc1".into(), 3)] };
        assert_eq!(meta_consistency(&three), Consistency::LocalQuorum);
        assert_eq!(meta("SELECT key FROM casslab_meta", Consistency::One).get_consistency(), Some(Consistency::One));
    }

    #[test]
    fn replication_fits_the_cluster() {
        let info = TargetInfo { server_version: None, node_count: 6, datacenters: vec![("dc1".into(), 5), ("dc2".into(), 1)] };
        assert_eq!(default_replication(&info), "{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 1}");
    }
}
