//! Opening a driver session from a [`ClusterConfig`]: contact points, local data center,
//! authentication, TLS, address translation, pool size and request timeout. Also reads what
//! the run record needs to know about the cluster (Cassandra version, node count).

use crate::engine::{EngineError, TargetInfo};
use crate::config::{ClusterConfig, Credentials};
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
    addr.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| EngineError::Translate { address: addr.to_string() })
}

/// Connects, failing with a message that says what to check.
pub async fn connect(cfg: &ClusterConfig, creds: &Credentials) -> Result<Session, EngineError> {
    let nodes = contact_points(cfg);
    let profile = ExecutionProfile::builder().request_timeout(Some(Duration::from_millis(cfg.request_timeout_ms))).build();
    let pool = NonZeroUsize::new(cfg.connections_per_host.max(1)).unwrap();
    let mut b = SessionBuilder::new()
        .known_nodes(&nodes)
        .pool_size(PoolSize::PerHost(pool))
        .default_execution_profile_handle(profile.into_handle())
        .connection_timeout(Duration::from_secs(5));
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
        let message = e.to_string();
        EngineError::Connect { hosts: nodes.join(","), hint: connect_hint(&message, cfg).to_string(), message }
    })
}

/// What to check, judging by the driver's message.
fn connect_hint(message: &str, cfg: &ClusterConfig) -> &'static str {
    let m = message.to_ascii_lowercase();
    if m.contains("authentication") || m.contains("bad credentials") || m.contains("authenticator") {
        "check --user and the password (CASSLAB_PASSWORD or the prompt)"
    } else if m.contains("certificate verify failed") || m.contains("certificate") {
        "the node's TLS certificate is not trusted: pass the CA that signed it with --tls-ca FILE"
    } else if !cfg.tls && (m.contains("connection reset") || m.contains("unexpected eof") || m.contains("broken pipe")) {
        "the node closed the connection: if it requires TLS, add --tls (and --tls-ca FILE)"
    } else {
        "is Cassandra running there? Start a local node with `casslab local up`, or point --hosts at your cluster"
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
        let rs = session.query_unpaged(super::schema::setup("SELECT release_version FROM system.local"), &[]).await.ok()?;
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

    #[test]
    fn hints_follow_the_failure() {
        let plain = ClusterConfig::default();
        assert!(connect_hint("Authentication failed - bad credentials", &plain).contains("--user"));
        assert!(connect_hint("error:0A000086:SSL routines::certificate verify failed", &plain).contains("--tls-ca"));
        assert!(connect_hint("Connection reset by peer (os error 104)", &plain).contains("requires TLS"));
        assert!(connect_hint("Connection refused (os error 111)", &plain).contains("casslab local up"));
    }

    #[test]
    fn contact_points_get_the_default_port() {
        let cfg = ClusterConfig { hosts: vec!["10.0.0.1".into(), "db2:9142".into()], port: 9043, ..Default::default() };
        assert_eq!(contact_points(&cfg), vec!["10.0.0.1:9043".to_string(), "db2:9142".to_string()]);
    }
}
