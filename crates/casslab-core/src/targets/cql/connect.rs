//! Opening a driver session from a [`ClusterConfig`]: contact points, local data center,
//! authentication, TLS, address translation, pool size and request timeout. Also reads what
//! the run record needs to know about the cluster (Cassandra version, node count).

use crate::config::{ClusterConfig, Credentials};
use crate::engine::{EngineError, TargetInfo};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

fn contact_points(cfg: &ClusterConfig) -> Vec<String> {
    cfg.hosts
        .iter()
        .map(|h| if h.contains(':') && !h.starts_with('[') && h.matches(':').count() == 1 { h.clone() } else { format!("{h}:{}", cfg.port) })
        .collect()
}

fn resolve(addr: &str) -> Result<SocketAddr, EngineError> {
    addr.to_socket_addrs().ok().and_then(|mut a| a.next()).ok_or_else(|| EngineError::Translate { address: addr.to_string() })
}

/// Connects, failing with a message that says what to check.
pub async fn connect(cfg: &ClusterConfig, creds: &Credentials) -> Result<Session, EngineError> {
    open(cfg, creds, true).await
}

/// Connects a session that reads only node-local tables (the server view): without the
/// schema metadata, which the driver would otherwise read at the start and re-read every
/// minute from `system_schema`, on the client's and the server's CPU.
pub async fn connect_without_schema(cfg: &ClusterConfig, creds: &Credentials) -> Result<Session, EngineError> {
    open(cfg, creds, false).await
}

async fn open(cfg: &ClusterConfig, creds: &Credentials, schema_metadata: bool) -> Result<Session, EngineError> {
    let nodes = contact_points(cfg);
    let profile = ExecutionProfile::builder().request_timeout(Some(Duration::from_millis(cfg.request_timeout_ms))).build();
    let pool = NonZeroUsize::new(cfg.connections_per_host.max(1)).unwrap();
    let mut b = SessionBuilder::new()
        .known_nodes(&nodes)
        .pool_size(PoolSize::PerHost(pool))
        .default_execution_profile_handle(profile.into_handle())
        .connection_timeout(Duration::from_secs(5))
        .fetch_schema_metadata(schema_metadata);
    if let Some(dc) = &cfg.dc {
        b = b.prefer_datacenter(dc.clone());
    }
    if let Some(user) = &cfg.user {
        let pw = creds.password.clone().ok_or_else(|| EngineError::MissingPassword { user: user.clone() })?;
        b = b.user(user.clone(), pw);
    }
    if cfg.tls {
        b = b.tls_context(Some(tls_context(cfg)?));
    }
    if !cfg.translate.is_empty() {
        let mut map = HashMap::new();
        for (from, to) in &cfg.translate {
            map.insert(resolve(from)?, resolve(to)?);
        }
        b = b.address_translator(Arc::new(map));
    }
    b.build().await.map_err(|e| {
        let driver = e.to_string();
        EngineError::ConnectCql { hosts: nodes.join(","), problem: connect_problem(&driver, cfg), driver }
    })
}

/// What went wrong, told apart by the driver's message, and what to do about it.
fn connect_problem(message: &str, cfg: &ClusterConfig) -> String {
    let m = message.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if any(&["authentication is required", "requires authentication", "no authenticator provided"]) {
        "the cluster requires a login and none was given: pass --user NAME and set CASSLAB_PASSWORD (or answer the prompt)".into()
    } else if any(&["bad credentials", "are incorrect", "authentication failed"]) {
        let user = cfg.user.as_deref().map(|u| format!(" as {u}")).unwrap_or_default();
        format!("the login{user} was refused: check --user and the password in CASSLAB_PASSWORD")
    } else if any(&["certificate verify failed", "certificate"]) {
        "the node's TLS certificate is not trusted: pass the CA that signed it with --tls-ca FILE".into()
    } else if any(&["wrong version number", "packet length too long", "ssl routines"]) && cfg.tls {
        "the TLS handshake failed: does the node serve CQL over TLS on this port? Drop --tls for a plain-text node".into()
    } else if !cfg.tls && any(&["connection reset", "unexpected eof", "broken pipe", "failed to read the frame header"]) {
        "the node closed the connection at once, as a node that serves only TLS does to plain text: add --tls --tls-ca FILE (the CA that signed its certificate)".into()
    } else if any(&[
        "connection refused",
        "timed out",
        "timeout",
        "no route to host",
        "network is unreachable",
        "host is down",
        "failed to lookup",
        "name or service not known",
    ]) {
        format!(
            "nothing answers there: check the address and port (--hosts, --port {}) and that the node is up (`casslab local up` starts a local one)",
            cfg.port
        )
    } else {
        "check the address and port (--hosts, --port), that the node is up, and whether it needs --tls or --user".into()
    }
}

fn tls_context(cfg: &ClusterConfig) -> Result<openssl::ssl::SslContext, EngineError> {
    use openssl::ssl::{SslContextBuilder, SslMethod, SslVerifyMode};
    let tls = |e: openssl::error::ErrorStack| EngineError::Tls(e.to_string());
    let mut ctx = SslContextBuilder::new(SslMethod::tls()).map_err(tls)?;
    match &cfg.tls_ca_file {
        Some(ca) => {
            ctx.set_ca_file(ca).map_err(|e| EngineError::Tls(format!("cannot use CA file {}: {e}", ca.display())))?;
        }
        None => ctx.set_default_verify_paths().map_err(tls)?,
    }
    ctx.set_verify(SslVerifyMode::PEER);
    Ok(ctx.build())
}

/// Reads the server version and the ring's shape.
pub async fn cluster_info(session: &Session) -> TargetInfo {
    let version = async {
        let rs = session.query_unpaged(super::keyspace::setup("SELECT release_version FROM system.local"), &[]).await.ok()?;
        let rows = rs.into_rows_result().ok()?;
        let (v,): (String,) = rows.single_row::<(String,)>().ok()?;
        Some(v)
    }
    .await;
    let state = session.get_cluster_state();
    let mut dcs: std::collections::BTreeMap<String, usize> = Default::default();
    for n in state.get_nodes_info() {
        *dcs.entry(n.datacenter.clone().unwrap_or_else(|| "datacenter1".into())).or_default() += 1;
    }
    TargetInfo { server_version: version, node_count: state.get_nodes_info().len(), datacenters: dcs.into_iter().collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The driver's messages as Cassandra 5.0 and the driver give them.
    const POOL: &str = "Failed to perform initial cluster metadata fetch: Control connection pool error: The pool is broken; Last connection failed with: ";

    #[test]
    fn problems_are_told_apart_by_the_drivers_message() {
        let plain = ClusterConfig::default();
        let user = ClusterConfig { user: Some("bench".into()), ..ClusterConfig::default() };
        let tls = ClusterConfig { tls: true, ..ClusterConfig::default() };
        let missing = format!("{POOL}Failed to perform a connection setup request. Request: AUTH_RESPONSE, reason: Authentication is required. You can use SessionBuilder::user(\"user\", \"pass\") to provide credentials");
        assert!(connect_problem(&missing, &plain).starts_with("the cluster requires a login and none was given: pass --user NAME and set CASSLAB_PASSWORD"));
        let wrong = format!("{POOL}Failed to perform a connection setup request. Request: AUTH_RESPONSE, reason: Database returned an error: Authentication failed - bad credentials, Error message: Provided username bench and/or password are incorrect");
        assert_eq!(connect_problem(&wrong, &user), "the login as bench was refused: check --user and the password in CASSLAB_PASSWORD");
        let reset = format!("{POOL}Failed to perform a connection setup request. Request: OPTIONS, reason: Connection broken, reason: Failed to deserialize frame: Failed to read the frame header: Connection reset by peer (os error 104)");
        assert!(connect_problem(&reset, &plain).contains("serves only TLS does to plain text: add --tls --tls-ca FILE"));
        let untrusted =
            format!("{POOL}error:0A000086:SSL routines:tls_post_process_server_certificate:certificate verify failed:../ssl/statem/statem_clnt.c:1889:");
        assert!(connect_problem(&untrusted, &tls).contains("not trusted: pass the CA that signed it with --tls-ca FILE"));
        let refused = format!("{POOL}Connection refused (os error 111)");
        assert!(
            connect_problem(&refused, &plain).starts_with("nothing answers there: check the address and port (--hosts, --port 9042) and that the node is up")
        );
        // four failures, four first lines
        let firsts: std::collections::BTreeSet<String> = [&missing, &wrong, &reset, &refused].iter().map(|m| connect_problem(m, &user)).collect();
        assert_eq!(firsts.len(), 4);
    }

    #[test]
    fn contact_points_get_the_default_port() {
        let cfg = ClusterConfig { hosts: vec!["10.0.0.1".into(), "db2:9142".into()], port: 9043, ..Default::default() };
        assert_eq!(contact_points(&cfg), vec!["10.0.0.1:9043".to_string(), "db2:9142".to_string()]);
    }
}
