//! Connecting to Redis from a [`RedisConfig`]: the URL (a password in it is refused: it would
//! be saved with the run), the password from [`Credentials`], TLS (`rediss://`, with a CA
//! file or the system's trust store), timeouts, and whether the server is a node of a Redis
//! Cluster (read from its `INFO`), in which case every request goes through a cluster
//! connection that routes it by key slot. Also reads what the run record needs to know (the
//! server's version and how many nodes answer) and turns connection failures into errors that
//! say what to check.

// setup failures are the engine's `EngineError`, large as it is, as in `targets::cql`
#![allow(clippy::result_large_err)]

use crate::config::{Credentials, RedisConfig};
use crate::engine::{EngineError, TargetInfo};
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{Client, ConnectionInfo, IntoConnectionInfo, TlsCertificates};
use std::time::Duration;

/// A connection that every request can use: a few multiplexed connections to one server
/// (each reconnects by itself after the server went away), or a Redis Cluster connection.
#[derive(Clone)]
pub enum Conn {
    Single(Vec<ConnectionManager>),
    Cluster(ClusterConnection),
}

/// What [`connect`] opened.
pub struct Connected {
    pub conn: Conn,
    pub info: TargetInfo,
}

fn connect_error(cfg: &RedisConfig, message: String) -> EngineError {
    let m = message.to_ascii_lowercase();
    let hint = if m.contains("auth") || m.contains("noauth") || m.contains("wrongpass") || m.contains("password") {
        "check the password (CASSLAB_REDIS_PASSWORD) and the URL's user name"
    } else if m.contains("certificate") || m.contains("tls") || m.contains("ssl") {
        "the server's TLS certificate is not trusted: pass the CA that signed it with --tls-ca FILE"
    } else if !cfg.url.starts_with("rediss") && (m.contains("reset") || m.contains("eof") || m.contains("broken pipe")) {
        "the server closed the connection: if it requires TLS, write rediss:// in --target"
    } else {
        "is redis-server running there? Without --target casslab starts a local one (`casslab local redis up`)"
    };
    EngineError::Connect { hosts: cfg.url.clone(), message, hint: hint.into() }
}

/// The connection info of `cfg` with the password of `creds`.
pub fn connection_info(cfg: &RedisConfig, creds: &Credentials) -> Result<ConnectionInfo, EngineError> {
    let info = cfg.url.as_str().into_connection_info().map_err(|e| EngineError::Connect {
        hosts: cfg.url.clone(),
        message: e.to_string(),
        hint: "write the target as redis://HOST:PORT (rediss:// for TLS)".into(),
    })?;
    if info.redis_settings().password().is_some() {
        return Err(EngineError::RedisPasswordInUrl);
    }
    Ok(match &creds.redis_password {
        Some(p) => {
            let settings = info.redis_settings().clone().set_password(p);
            info.set_redis_settings(settings)
        }
        None => info,
    })
}

fn tls_certificates(cfg: &RedisConfig) -> Result<Option<TlsCertificates>, EngineError> {
    let Some(ca) = &cfg.tls_ca_file else { return Ok(None) };
    let pem = std::fs::read(ca).map_err(|e| EngineError::Tls(format!("cannot read CA file {}: {e}", ca.display())))?;
    Ok(Some(TlsCertificates { client_tls: None, root_cert: Some(pem) }))
}

/// A client for `cfg` (not connected yet).
pub fn client(cfg: &RedisConfig, creds: &Credentials) -> Result<Client, EngineError> {
    let info = connection_info(cfg, creds)?;
    let built = match tls_certificates(cfg)? {
        Some(certs) => Client::build_with_tls(info, certs),
        None => Client::open(info),
    };
    built.map_err(|e| connect_error(cfg, e.to_string()))
}

/// A connection manager: reconnects in the background after the server went away; requests
/// made meanwhile fail (they are counted) instead of waiting for it.
pub async fn manager(client: Client, cfg: &RedisConfig) -> Result<ConnectionManager, redis::RedisError> {
    let timeout = Duration::from_millis(cfg.request_timeout_ms.max(1));
    let config = ConnectionManagerConfig::new()
        .set_response_timeout(Some(timeout))
        .set_connection_timeout(Some(timeout.min(Duration::from_secs(5))))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(500));
    client.get_connection_manager_with_config(config).await
}

/// Connects as `cfg` says; a node of a Redis Cluster gets a cluster connection.
pub async fn connect(cfg: &RedisConfig, creds: &Credentials) -> Result<Connected, EngineError> {
    let fail = |e: redis::RedisError| connect_error(cfg, e.to_string());
    let first = manager(client(cfg, creds)?, cfg).await.map_err(fail)?;
    let server = info_section(&mut first.clone(), "server").await.map_err(fail)?;
    let version = field(&server, "redis_version").map(|v| format!("Redis {v}"));
    let cluster = info_section(&mut first.clone(), "cluster").await.map_err(fail)?;
    if field(&cluster, "cluster_enabled") == Some("1") {
        // each attempt may wait twice the request timeout, so casslab's own timeout (one request
        // timeout) gives up first: the client then never sends a request again after it timed
        // out, which could land after a later write and read as stale (a retry after a dropped
        // connection cannot: that request was answered or lost)
        let b = ClusterClientBuilder::new(vec![connection_info(cfg, creds)?])
            .connection_timeout(Duration::from_secs(5))
            .response_timeout(Duration::from_millis(cfg.request_timeout_ms.max(1).saturating_mul(2)))
            .retries(1);
        if cfg.tls_ca_file.is_some() {
            // the cluster client takes a CA file only with rustls; casslab's TLS is OpenSSL's
            return Err(EngineError::Tls(
                "--tls-ca is not supported for a Redis Cluster; add the CA to the system's trust store (update-ca-certificates)".into(),
            ));
        }
        let mut conn = b.build().map_err(fail)?.get_async_connection().await.map_err(fail)?;
        let nodes: String = redis::cmd("CLUSTER").arg("NODES").query_async(&mut conn).await.map_err(fail)?;
        let masters = nodes.lines().filter(|l| l.contains("master") && !l.contains("fail")).count();
        return Ok(Connected { conn: Conn::Cluster(conn), info: TargetInfo { server_version: version, node_count: masters, datacenters: Vec::new() } });
    }
    let mut managers = vec![first];
    for _ in 1..cfg.connections.max(1) {
        managers.push(manager(client(cfg, creds)?, cfg).await.map_err(fail)?);
    }
    Ok(Connected { conn: Conn::Single(managers), info: TargetInfo { server_version: version, node_count: 1, datacenters: Vec::new() } })
}

/// One section of `INFO` as text.
pub async fn info_section(conn: &mut impl ConnectionLike, section: &str) -> Result<String, redis::RedisError> {
    redis::cmd("INFO").arg(section).query_async(conn).await
}

/// The value of `name` in `INFO` text (`name:value` lines).
pub fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')).map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_refused_and_the_environment_one_is_used() {
        let cfg = RedisConfig { url: "redis://:secret@127.0.0.1:6379".into(), ..RedisConfig::default() };
        assert!(matches!(connection_info(&cfg, &Credentials::default()), Err(EngineError::RedisPasswordInUrl)));
        let cfg = RedisConfig { url: "redis://bench@127.0.0.1:6379/2".into(), ..RedisConfig::default() };
        let creds = Credentials { redis_password: Some("pw".into()), ..Credentials::default() };
        let info = connection_info(&cfg, &creds).unwrap();
        assert_eq!((info.redis_settings().username(), info.redis_settings().password(), info.redis_settings().db()), (Some("bench"), Some("pw"), 2));
    }

    #[test]
    fn info_fields_and_hints() {
        let text = "# Server\r\nredis_version:7.0.15\r\nprocess_id:42\r\n";
        assert_eq!(field(text, "redis_version"), Some("7.0.15"));
        assert_eq!(field(text, "process_id"), Some("42"));
        assert_eq!(field(text, "redis"), None);
        let cfg = RedisConfig::default();
        assert!(connect_error(&cfg, "Connection refused (os error 111)".into()).to_string().contains("casslab local redis up"));
        assert!(connect_error(&cfg, "WRONGPASS invalid username-password pair".into()).to_string().contains("CASSLAB_REDIS_PASSWORD"));
    }
}
