//! The server view of a Redis target: its `INFO` read once per interval on a connection of
//! its own, turned into [`ServerSample`]s on the run's time axis. Counters are differenced
//! between polls (commands, CPU seconds, keyspace hits and misses, evictions and expirations,
//! calls and microseconds per command), gauges are kept as read (clients, memory, keys), and
//! where the server keeps latency percentiles per command (`latencystats`, Redis 7+) they are
//! kept too: since the last `CONFIG RESETSTAT`, which casslab sends only to a server it started.
//! Also the figures the reports print per node.

use super::collect::Poller;
use super::{metric, ServerSample};
use crate::config::{Credentials, RedisConfig};
use crate::engine::EngineError;
use crate::targets::redis::{connection_info, info_section};
use redis::aio::ConnectionManager;
use std::collections::BTreeMap;
use tokio::time::Instant;

/// Metric names of the Redis view; per-command ones append `:<command>` (lower case).
pub mod names {
    pub const OPS_PER_S: &str = "redis.ops_per_s";
    pub const CLIENTS: &str = "redis.clients";
    pub const USED_MEMORY_MIB: &str = "redis.used_memory_mib";
    pub const KEYS: &str = "redis.keys";
    /// Counts within the interval.
    pub const HITS: &str = "redis.keyspace_hits";
    pub const MISSES: &str = "redis.keyspace_misses";
    pub const EVICTED: &str = "redis.evicted_keys";
    pub const EXPIRED: &str = "redis.expired_keys";
    /// Server time per call within the interval, in µs.
    pub const USEC_PER_CALL_PREFIX: &str = "redis.usec_per_call:";
    /// Latency percentiles kept by the server, in µs: `redis.latency_p99_us:get`.
    pub const LATENCY_PREFIX: &str = "redis.latency_";
}

/// Polls one Redis server's `INFO`.
pub struct RedisInfoPoller {
    conn: ConnectionManager,
    /// `host:port`, as samples name the node.
    node: String,
    prev: Option<(Instant, Counters)>,
    failed: bool,
}

/// The counters of one `INFO`, kept to difference the next one against.
#[derive(Debug, Clone, Default, PartialEq)]
struct Counters {
    commands: f64,
    cpu_s: f64,
    hits: f64,
    misses: f64,
    evicted: f64,
    expired: f64,
    /// Per command (lower case): calls and microseconds.
    calls: BTreeMap<String, (f64, f64)>,
}

impl RedisInfoPoller {
    /// Opens the poller's own connection; on a server casslab started, resets its statistics
    /// first so the latency percentiles are the run's.
    pub async fn connect(cfg: &RedisConfig, creds: &Credentials) -> Result<RedisInfoPoller, EngineError> {
        let node = connection_info(cfg, creds)?.addr().to_string();
        let own = RedisConfig { connections: 1, request_timeout_ms: cfg.request_timeout_ms.min(5_000), ..cfg.clone() };
        let client = crate::targets::redis::client(&own, creds)?;
        let mut conn = crate::targets::redis::manager(client, &own).await.map_err(|e| EngineError::Connect {
            hosts: cfg.url.clone(),
            message: e.to_string(),
            hint: "the server view needs a connection of its own".into(),
        })?;
        if cfg.local {
            let _: Result<(), _> = redis::cmd("CONFIG").arg("RESETSTAT").query_async(&mut conn).await;
        }
        Ok(RedisInfoPoller { conn, node, prev: None, failed: false })
    }
}

impl Poller for RedisInfoPoller {
    async fn poll(&mut self, at_ms: u64) -> (Vec<ServerSample>, Vec<String>) {
        match info_section(&mut self.conn, "all").await {
            Ok(text) => {
                let now = Instant::now();
                let (counters, gauges) = read(&text);
                let dt_s = self.prev.as_ref().map(|(t, _)| (now - *t).as_secs_f64());
                let samples = to_samples(&self.node, at_ms, gauges, self.prev.as_ref().map(|(_, c)| c).zip(dt_s), &counters);
                self.prev = Some((now, counters));
                (samples, Vec::new())
            }
            Err(e) if !self.failed => {
                self.failed = true;
                (Vec::new(), vec![format!("server metrics: INFO on {} failed ({e}); the server view has gaps", self.node)])
            }
            Err(_) => (Vec::new(), Vec::new()),
        }
    }
}

fn num(fields: &BTreeMap<&str, &str>, name: &str) -> Option<f64> {
    fields.get(name)?.parse().ok()
}

/// The `key=value,…` pairs of a compound field (`calls=3,usec=12,…`).
fn pairs(v: &str) -> impl Iterator<Item = (&str, f64)> {
    v.split(',').filter_map(|kv| kv.split_once('=')).filter_map(|(k, v)| Some((k, v.parse().ok()?)))
}

/// Reads `INFO` text into counters and the gauges as (metric, value).
fn read(text: &str) -> (Counters, Vec<(String, f64)>) {
    let fields: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim(), v.trim())).collect();
    let n = |name| num(&fields, name).unwrap_or(0.0);
    let mut c = Counters {
        commands: n("total_commands_processed"),
        cpu_s: n("used_cpu_sys") + n("used_cpu_user"),
        hits: n("keyspace_hits"),
        misses: n("keyspace_misses"),
        evicted: n("evicted_keys"),
        expired: n("expired_keys"),
        calls: BTreeMap::new(),
    };
    let mut gauges = vec![(names::CLIENTS.to_string(), n("connected_clients")), (names::USED_MEMORY_MIB.to_string(), n("used_memory") / 1_048_576.0)];
    if let Some(rss) = num(&fields, "used_memory_rss") {
        gauges.push((metric::RSS_MIB.to_string(), rss / 1_048_576.0));
    }
    let keys: f64 = fields
        .iter()
        .filter(|(k, _)| k.starts_with("db") && k[2..].chars().all(|c| c.is_ascii_digit()))
        .flat_map(|(_, v)| pairs(v).filter(|(k, _)| *k == "keys").map(|(_, x)| x))
        .sum();
    gauges.push((names::KEYS.to_string(), keys));
    for (k, v) in &fields {
        if let Some(cmd) = k.strip_prefix("cmdstat_") {
            let p: BTreeMap<&str, f64> = pairs(v).collect();
            c.calls.insert(cmd.to_string(), (p.get("calls").copied().unwrap_or(0.0), p.get("usec").copied().unwrap_or(0.0)));
        } else if let Some(cmd) = k.strip_prefix("latency_percentiles_usec_") {
            for (p, us) in pairs(v) {
                // p50, p99, p99.9 → latency_p50_us, latency_p99_us, latency_p999_us
                gauges.push((format!("{}{}_us:{cmd}", names::LATENCY_PREFIX, p.replace('.', "")), us));
            }
        }
    }
    (c, gauges)
}

/// The samples of one poll: the gauges, and the counters against the previous poll
/// (`dt_s` seconds earlier) when there is one.
fn to_samples(node: &str, at_ms: u64, gauges: Vec<(String, f64)>, prev: Option<(&Counters, f64)>, now: &Counters) -> Vec<ServerSample> {
    let sample = |metric: String, value: f64| ServerSample { node: node.to_string(), metric, at_ms, value };
    let mut out: Vec<ServerSample> = gauges.into_iter().map(|(m, v)| sample(m, v)).collect();
    let Some((p, dt_s)) = prev.filter(|(_, dt)| *dt > 0.0) else { return out };
    // a restarted server starts its counters again: no difference across that
    let d = |a: f64, b: f64| (a - b).max(0.0);
    out.push(sample(names::OPS_PER_S.into(), d(now.commands, p.commands) / dt_s));
    out.push(sample(metric::CPU_PCT.into(), d(now.cpu_s, p.cpu_s) / dt_s * 100.0));
    for (m, a, b) in [
        (names::HITS, now.hits, p.hits),
        (names::MISSES, now.misses, p.misses),
        (names::EVICTED, now.evicted, p.evicted),
        (names::EXPIRED, now.expired, p.expired),
    ] {
        out.push(sample(m.into(), d(a, b)));
    }
    for (cmd, (calls, usec)) in &now.calls {
        let (pc, pu) = p.calls.get(cmd).copied().unwrap_or((0.0, 0.0));
        if calls > &pc && *cmd != "info" && *cmd != "config" {
            out.push(sample(format!("{}{cmd}", names::USEC_PER_CALL_PREFIX), d(*usec, pu) / (calls - pc)));
        }
    }
    out
}

/// What a node's Redis samples say, for the reports (empty for a node without them).
pub fn describe_node(samples: &[ServerSample], node: &str) -> Vec<String> {
    let of = |m: &str| -> Vec<f64> { samples.iter().filter(|s| s.node == node && s.metric == m).map(|s| s.value).collect() };
    let mut parts = Vec::new();
    let ops = of(names::OPS_PER_S);
    if ops.is_empty() {
        return parts;
    }
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    parts.push(format!("ops/s avg {:.0} max {:.0}", ops.iter().sum::<f64>() / ops.len() as f64, max(&ops)));
    parts.push(format!("clients max {:.0}", max(&of(names::CLIENTS))));
    parts.push(format!("used memory max {:.0} MiB", max(&of(names::USED_MEMORY_MIB))));
    parts.push(format!("keys max {:.0}", max(&of(names::KEYS))));
    let (hits, misses): (f64, f64) = (of(names::HITS).iter().sum(), of(names::MISSES).iter().sum());
    if hits + misses > 0.0 {
        parts.push(format!("keyspace hits {hits:.0}, misses {misses:.0} ({:.1}% hits)", hits / (hits + misses) * 100.0));
    }
    let (evicted, expired): (f64, f64) = (of(names::EVICTED).iter().sum(), of(names::EXPIRED).iter().sum());
    parts.push(format!("evicted {evicted:.0}, expired {expired:.0}"));
    let mut cmds: BTreeMap<&str, (f64, f64, Option<f64>)> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.node == node) {
        if let Some(cmd) = s.metric.strip_prefix(names::USEC_PER_CALL_PREFIX) {
            let e = cmds.entry(cmd).or_insert((0.0, 0.0, None));
            e.0 += s.value;
            e.1 += 1.0;
        } else if let Some(cmd) = s.metric.strip_prefix(names::LATENCY_PREFIX).and_then(|m| m.strip_prefix("p99_us:")) {
            cmds.entry(cmd).or_insert((0.0, 0.0, None)).2 = Some(s.value);
        }
    }
    for (cmd, (sum, n, p99)) in cmds.into_iter().filter(|(c, v)| v.1 > 0.0 && *c != "ping") {
        let p = p99.map(|v| format!(", p99 {v:.0} µs")).unwrap_or_default();
        parts.push(format!("{cmd} {:.1} µs/call{p}", sum / n));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# Stats\r\ntotal_commands_processed:1000\r\nkeyspace_hits:90\r\nkeyspace_misses:10\r\nevicted_keys:0\r\nexpired_keys:2\r\n# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.5\r\n# Clients\r\nconnected_clients:3\r\n# Memory\r\nused_memory:2097152\r\nused_memory_rss:4194304\r\n# Commandstats\r\ncmdstat_hgetall:calls=100,usec=300,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n# Latencystats\r\nlatency_percentiles_usec_hgetall:p50=2.003,p99=10.015,p99.9=20.031\r\n# Keyspace\r\ndb0:keys=500,expires=0,avg_ttl=0\r\n";

    #[test]
    fn counters_are_differenced_and_gauges_kept() {
        let (before, _) = read(INFO);
        let later = INFO
            .replace("total_commands_processed:1000", "total_commands_processed:3000")
            .replace("used_cpu_user:2.5", "used_cpu_user:3.0")
            .replace("calls=100,usec=300", "calls=300,usec=1100")
            .replace("keyspace_hits:90", "keyspace_hits:190");
        let (after, gauges) = read(&later);
        let s = to_samples("h:1", 2000, gauges, Some((&before, 2.0)), &after);
        let get = |m: &str| s.iter().find(|x| x.metric == m).map(|x| x.value);
        assert_eq!(get(names::OPS_PER_S), Some(1000.0));
        assert_eq!(get(metric::CPU_PCT), Some(25.0));
        assert_eq!(get(names::HITS), Some(100.0));
        assert_eq!(get(names::MISSES), Some(0.0));
        assert_eq!(get("redis.usec_per_call:hgetall"), Some(4.0));
        assert_eq!(get("redis.latency_p999_us:hgetall"), Some(20.031));
        assert_eq!((get(names::CLIENTS), get(names::USED_MEMORY_MIB), get(metric::RSS_MIB), get(names::KEYS)), (Some(3.0), Some(2.0), Some(4.0), Some(500.0)));
        let first = to_samples("h:1", 1000, read(INFO).1, None, &before);
        assert!(first.iter().all(|x| x.metric != names::OPS_PER_S), "no rate without an earlier poll");
        let lines = describe_node(&s, "h:1").join(" · ");
        assert!(lines.contains("ops/s avg 1000") && lines.contains("100.0% hits") && lines.contains("hgetall 4.0 µs/call, p99 10 µs"), "{lines}");
    }
}
