//! Cassandra's own latency histograms at full resolution, read over HTTP from a Jolokia JVM
//! agent on each node (the nodes casslab starts run one). Cassandra's `Table` metrics
//! (`CoordinatorReadLatency`, `CoordinatorWriteLatency`, `ReadLatency`, `WriteLatency`) keep
//! their timers in microseconds, in buckets 20 % apart; their `RecentValues` attribute gives the
//! bucket counts since the previous read, so each poll yields the interval's own distribution
//! (not the decaying window `system_views` shows, rounded to 1 ms up to Cassandra 5.0). Each
//! poll turns them into samples (stamped at the middle of the span they count) named `jmx.<table of system_views>.<figure>:<table>` (`p50_us`,
//! `p99_us`, `count`). It owns the HTTP exchange (one bulk request per node, HTTP/1.0 on a
//! plain socket) and the bucket arithmetic; the polling loop is `collect`'s.

use super::ServerSample;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The metrics read, as (Cassandra's metric name, the `system_views` table of the same figure).
const METRICS: &[(&str, &str)] = &[
    ("CoordinatorReadLatency", "coordinator_read_latency"),
    ("CoordinatorWriteLatency", "coordinator_write_latency"),
    ("ReadLatency", "local_read_latency"),
    ("WriteLatency", "local_write_latency"),
];

/// The prefix of every sample made here.
pub const PREFIX: &str = "jmx.";

/// The relative width of Cassandra's histogram buckets (each bound is 1.2 times the last).
pub const BUCKET_GROWTH: f64 = 1.2;

/// How long one node's answer may take.
const TIMEOUT: Duration = Duration::from_secs(2);

/// One node's Jolokia agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The node's name in the series (its client address, as `vtables` names it).
    pub node: String,
    /// `http://HOST:PORT/jolokia/`.
    pub url: String,
}

/// Reads the latency histograms of every node with an agent.
pub struct JolokiaPoller {
    endpoints: Vec<Endpoint>,
    keyspace: String,
    /// Nodes whose failure was already said.
    reported: BTreeSet<String>,
    /// When the previous poll was made: a poll's counts span the time since then, and its
    /// samples are stamped at the middle of that span, inside the interval they describe.
    last_at_ms: Option<u64>,
}

impl JolokiaPoller {
    /// A poller of `endpoints` for the tables of `keyspace`. The first read of each histogram
    /// returns what was counted since whoever read it last: it is read once here and dropped,
    /// so that every poll holds one interval.
    pub async fn connect(endpoints: Vec<Endpoint>, keyspace: &str) -> JolokiaPoller {
        let mut p = JolokiaPoller { endpoints, keyspace: keyspace.to_string(), reported: BTreeSet::new(), last_at_ms: None };
        let _ = p.poll(0).await;
        p.reported.clear();
        p.last_at_ms = None;
        p
    }

    /// The nodes it reads.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.endpoints.iter().map(|e| e.node.as_str())
    }

    /// Reads every node once: samples stamped `at_ms`, and notes (each failure said once per node).
    pub async fn poll(&mut self, at_ms: u64) -> (Vec<ServerSample>, Vec<String>) {
        let stamp = self.last_at_ms.map_or(at_ms, |last| last + at_ms.saturating_sub(last) / 2);
        self.last_at_ms = Some(at_ms);
        let body = request_body(&self.keyspace);
        let answers = futures::future::join_all(self.endpoints.iter().map(|e| post(&e.url, &body))).await;
        let (mut samples, mut notes) = (Vec::new(), Vec::new());
        for (e, answer) in self.endpoints.iter().zip(answers) {
            match answer.and_then(|text| serde_json::from_str::<Value>(&text).map_err(|err| format!("not JSON: {err}"))) {
                Ok(v) => samples.extend(to_samples(&v, &e.node, stamp)),
                Err(why) => {
                    if self.reported.insert(e.node.clone()) {
                        notes.push(format!(
                            "reading Cassandra's histograms through Jolokia on {} failed: {why} (said once per node; system_views still polled)",
                            e.node
                        ));
                    }
                }
            }
        }
        (samples, notes)
    }
}

/// One bulk request: each metric of every table of the keyspace, its bucket counts and unit.
fn request_body(keyspace: &str) -> String {
    let reads: Vec<Value> = METRICS
        .iter()
        .map(|(name, _)| {
            serde_json::json!({
                "type": "read",
                "mbean": format!("org.apache.cassandra.metrics:type=Table,keyspace={keyspace},scope=*,name={name}"),
                "attribute": ["RecentValues", "DurationUnit"],
            })
        })
        .collect();
    Value::Array(reads).to_string()
}

/// POSTs `body` to `url` (HTTP/1.0: the agent answers and closes, no chunks) and returns the
/// response body.
async fn post(url: &str, body: &str) -> Result<String, String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| format!("{url}: only http:// is read"))?;
    let (host_port, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect(host_port).await.map_err(|e| format!("{host_port}: {e}"))?;
        let head = format!("POST {path} HTTP/1.0\r\nHost: {host_port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
        s.write_all(head.as_bytes()).await.map_err(|e| e.to_string())?;
        s.write_all(body.as_bytes()).await.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.map_err(|e| e.to_string())?;
        Ok::<Vec<u8>, String>(out)
    };
    let raw = tokio::time::timeout(TIMEOUT, exchange).await.map_err(|_| format!("no answer within {} s", TIMEOUT.as_secs()))??;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("an answer without a body")?;
    let status = head.lines().next().unwrap_or_default();
    if !status.contains(" 200") {
        return Err(format!("the agent answered {status}"));
    }
    Ok(body.to_string())
}

/// Cassandra's bucket bounds (`EstimatedHistogram.newOffsets`, zeros not counted): 1, 2, …,
/// each 1.2 times the last, rounded, at least one more.
pub fn bucket_bounds(count: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(count);
    let mut last = 1u64;
    for i in 0..count {
        if i > 0 {
            let next = (last as f64 * BUCKET_GROWTH).round() as u64;
            last = if next == last { next + 1 } else { next };
        }
        out.push(last);
    }
    out
}

/// The bound of the bucket that holds quantile `q` of `counts` (as Cassandra reports its
/// percentiles); `None` when nothing was counted.
pub fn quantile(counts: &[u64], q: f64) -> Option<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let bounds = bucket_bounds(counts.len());
    let wanted = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (c, b) in counts.iter().zip(&bounds) {
        seen += c;
        if seen >= wanted {
            return Some(*b);
        }
    }
    bounds.last().copied()
}

/// Microseconds per unit of a timer's `DurationUnit`.
fn us_per(unit: &str) -> f64 {
    match unit {
        "nanoseconds" => 0.001,
        "milliseconds" => 1000.0,
        "seconds" => 1e6,
        _ => 1.0,
    }
}

/// The bulk answer of one node → samples: per metric and table, the interval's count, p50 and
/// p99 in µs (nothing for a table that served no request in the interval).
fn to_samples(answer: &Value, node: &str, at_ms: u64) -> Vec<ServerSample> {
    let mut out = Vec::new();
    let Some(replies) = answer.as_array() else { return out };
    for reply in replies {
        let Some(mbeans) = reply.get("value").and_then(Value::as_object) else { continue };
        for (mbean, attrs) in mbeans {
            let part = |key: &str| mbean.split([':', ',']).find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')).map(str::to_string);
            let (Some(name), Some(table)) = (part("name"), part("scope")) else { continue };
            let Some((_, figure)) = METRICS.iter().find(|(n, _)| *n == name) else { continue };
            let counts: Vec<u64> =
                attrs.get("RecentValues").and_then(Value::as_array).map(|a| a.iter().map(|v| v.as_u64().unwrap_or(0)).collect()).unwrap_or_default();
            let scale = us_per(attrs.get("DurationUnit").and_then(Value::as_str).unwrap_or("microseconds"));
            let total: u64 = counts.iter().sum();
            if total == 0 {
                continue;
            }
            let sample = |what: &str, value: f64| ServerSample { node: node.to_string(), metric: format!("{PREFIX}{figure}.{what}:{table}"), at_ms, value };
            out.push(sample("count", total as f64));
            for (what, q) in [("p50_us", 0.5), ("p99_us", 0.99)] {
                if let Some(b) = quantile(&counts, q) {
                    out.push(sample(what, b as f64 * scale));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_bounds_are_cassandras() {
        let b = bucket_bounds(30);
        assert_eq!(&b[..14], [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24]);
        // the percentiles Cassandra itself reported for a run here: 215, 446 and 14237 µs
        assert!(b.contains(&215) && b.contains(&446));
        assert!(bucket_bounds(60).contains(&14237));
    }

    #[test]
    fn quantiles_are_the_bound_of_the_bucket_that_holds_them() {
        let mut counts = vec![0u64; 40];
        counts[25] = 98; // (179, 215] µs
        counts[30] = 2; // (446, 535] µs
        assert_eq!(quantile(&counts, 0.5), Some(215));
        assert_eq!(quantile(&counts, 0.98), Some(215));
        assert_eq!(quantile(&counts, 0.99), Some(535));
        assert_eq!(quantile(&[0, 0], 0.99), None);
    }

    #[test]
    fn an_answer_becomes_per_table_samples_in_microseconds() {
        let mut recent = vec![0u64; 50];
        recent[25] = 99;
        recent[40] = 1;
        let answer = serde_json::json!([
            {"value": {
                "org.apache.cassandra.metrics:keyspace=ks,name=CoordinatorReadLatency,scope=kv,type=Table": {"DurationUnit": "microseconds", "RecentValues": recent},
                "org.apache.cassandra.metrics:keyspace=ks,name=CoordinatorReadLatency,scope=idle,type=Table": {"DurationUnit": "microseconds", "RecentValues": [0, 0, 0]}
            }, "status": 200},
            {"error_type": "javax.management.InstanceNotFoundException", "status": 404}
        ]);
        let s = to_samples(&answer, "127.0.14.51", 3000);
        let get = |m: &str| s.iter().find(|x| x.metric == m).map(|x| x.value);
        assert_eq!(get("jmx.coordinator_read_latency.count:kv"), Some(100.0));
        assert_eq!(get("jmx.coordinator_read_latency.p50_us:kv"), Some(215.0));
        assert_eq!(get("jmx.coordinator_read_latency.p99_us:kv"), Some(215.0));
        assert!(s.iter().all(|x| !x.metric.ends_with(":idle")), "a table without requests gives nothing: {s:?}");
        assert!(s.iter().all(|x| x.at_ms == 3000 && x.node == "127.0.14.51"));
        assert!(request_body("ks").contains("keyspace=ks,scope=*,name=WriteLatency"));
    }
}
