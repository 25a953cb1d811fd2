//! Polling Cassandra's virtual tables (`system_views`, Cassandra 4.0+) over plain CQL, on a
//! session of its own (one connection per node, apart from the workload's, and no schema
//! metadata). Virtual tables are
//! node-local, so every query is pinned to one node with a single-target load-balancing
//! policy. Each poll turns the rows into [`ServerSample`]s; a table a node does not have
//! (older Cassandra, ScyllaDB) is skipped from then on and reported once.

use super::collect::Poller;
use super::{metric, ServerSample};
use crate::config::{ClusterConfig, Credentials};
use crate::engine::EngineError;
use crate::targets::cql::connect_without_schema;
use futures::future::join_all;
use scylla::client::session::Session;
use scylla::cluster::Node;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;
use scylla::value::{CqlValue, Row};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// Whole-node tables: thread pools, running compactions, hints, client connections, streams
/// (a node joining, leaving or being replaced).
const NODE_TABLES: &[&str] = &["thread_pools", "sstable_tasks", "pending_hints", "clients", "streaming"];
/// Per-table tables, read for the workload's keyspace only.
pub const TABLE_TABLES: &[&str] = &[
    "coordinator_read_latency",
    "coordinator_write_latency",
    "local_read_latency",
    "local_write_latency",
    "tombstones_per_read",
    "rows_per_read",
    "max_partition_size",
    "disk_usage",
];
/// Thread-pool columns kept (per pool when not zero, and summed over pools).
const POOL_COLUMNS: &[&str] = &["active_tasks", "pending_tasks", "blocked_tasks"];

/// One row: column names with their values.
pub type Columns = Vec<(String, Option<CqlValue>)>;

/// Polls every node's `system_views` tables.
pub struct VirtualTablePoller {
    session: Session,
    keyspace: String,
    /// Tables found missing, by (node, table): not asked again.
    missing: BTreeSet<(String, &'static str)>,
    /// Tables already reported missing (on any node), and other failures already reported.
    reported: BTreeSet<String>,
    timeout: Duration,
    /// The nodes' latency histograms in microseconds, where the nodes run a Jolokia agent.
    jolokia: Option<super::jolokia::JolokiaPoller>,
}

impl VirtualTablePoller {
    /// Opens the poller's own session to the cluster.
    pub async fn connect(cluster: &ClusterConfig, creds: &Credentials, keyspace: &str) -> Result<VirtualTablePoller, EngineError> {
        let mut own = cluster.clone();
        own.connections_per_host = 1;
        let session = connect_without_schema(&own, creds).await?;
        Ok(VirtualTablePoller {
            session,
            keyspace: keyspace.to_string(),
            missing: BTreeSet::new(),
            reported: BTreeSet::new(),
            timeout: Duration::from_millis(cluster.request_timeout_ms.min(5_000)),
            jolokia: None,
        })
    }

    /// Also reads Cassandra's latency histograms through the nodes' Jolokia agents, each poll.
    pub fn with_jolokia(mut self, jolokia: super::jolokia::JolokiaPoller) -> VirtualTablePoller {
        self.jolokia = Some(jolokia);
        self
    }

    /// Addresses of the nodes the poller knows.
    pub fn nodes(&self) -> Vec<String> {
        self.session.get_cluster_state().get_nodes_info().iter().map(|n| node_name(n)).collect()
    }

    /// Reads every table of every node once. Samples are stamped `at_ms`; the notes are
    /// things to tell the user (each said once per run).
    pub async fn poll(&mut self, at_ms: u64) -> (Vec<ServerSample>, Vec<String>) {
        let nodes: Vec<Arc<Node>> = self.session.get_cluster_state().get_nodes_info().to_vec();
        let mut asks = Vec::new();
        for node in &nodes {
            let name = node_name(node);
            for &table in NODE_TABLES.iter().chain(TABLE_TABLES) {
                if !self.missing.contains(&(name.clone(), table)) {
                    asks.push((node.clone(), name.clone(), table));
                }
            }
        }
        let mut jolokia = self.jolokia.take();
        let histograms = async {
            match jolokia.as_mut() {
                Some(j) => j.poll(at_ms).await,
                None => Default::default(),
            }
        };
        let (answers, (mut samples, mut notes)) = futures::join!(join_all(asks.iter().map(|(node, _, table)| self.read(node, table))), histograms);
        self.jolokia = jolokia;
        for ((_, name, table), answer) in asks.into_iter().zip(answers) {
            match answer {
                Ok(rows) => samples.extend(to_samples(table, &name, at_ms, &rows)),
                Err(message) if is_missing_table(&message) => {
                    self.missing.insert((name.clone(), table));
                    if self.reported.insert(format!("missing {table}")) {
                        notes.push(format!("system_views.{table} does not exist on {name} (older Cassandra or ScyllaDB?): not collected"));
                    }
                }
                Err(message) => {
                    // once per node: a node that goes down fails every table at once
                    if self.reported.insert(format!("failed {name}")) {
                        notes.push(format!("reading system_views on {name} failed (first: {table}): {message} (said once per node; polling goes on)"));
                    }
                }
            }
        }
        (samples, notes)
    }

    async fn read(&self, node: &Arc<Node>, table: &str) -> Result<Vec<Columns>, String> {
        let per_table = TABLE_TABLES.contains(&table);
        let cql = if per_table {
            // Cassandra 4.1 filters these tables only when told it may (5.0 does not mind)
            format!("SELECT * FROM system_views.{table} WHERE keyspace_name = ? ALLOW FILTERING")
        } else {
            format!("SELECT * FROM system_views.{table}")
        };
        let mut st = Statement::new(cql);
        st.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(NodeIdentifier::Node(node.clone()), None)));
        st.set_request_timeout(Some(self.timeout));
        let result = if per_table { self.session.query_unpaged(st, (self.keyspace.as_str(),)).await } else { self.session.query_unpaged(st, ()).await };
        let rows = result.map_err(|e| e.to_string())?.into_rows_result().map_err(|e| e.to_string())?;
        let names: Vec<String> = rows.column_specs().iter().map(|c| c.name().to_string()).collect();
        let mut out = Vec::new();
        for row in rows.rows::<Row>().map_err(|e| e.to_string())? {
            let row = row.map_err(|e| e.to_string())?;
            out.push(names.iter().cloned().zip(row.columns).collect());
        }
        Ok(out)
    }
}

/// A node's name in the series: its address.
fn node_name(node: &Node) -> String {
    node.address.ip().to_string()
}

fn is_missing_table(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("does not exist") || m.contains("unconfigured table") || m.contains("keyspace system_views") || m.contains("unknown keyspace")
}

/// A numeric column's value as f64 (`None` for text, nulls and other types).
pub fn number(v: &Option<CqlValue>) -> Option<f64> {
    match v.as_ref()? {
        CqlValue::Int(x) => Some(*x as f64),
        CqlValue::BigInt(x) => Some(*x as f64),
        CqlValue::SmallInt(x) => Some(*x as f64),
        CqlValue::TinyInt(x) => Some(*x as f64),
        CqlValue::Double(x) => Some(*x),
        CqlValue::Float(x) => Some(*x as f64),
        CqlValue::Counter(c) => Some(c.0 as f64),
        _ => None,
    }
}

fn text<'a>(row: &'a Columns, column: &str) -> Option<&'a str> {
    row.iter().find(|(n, _)| n == column).and_then(|(_, v)| match v {
        Some(CqlValue::Text(s)) | Some(CqlValue::Ascii(s)) => Some(s.as_str()),
        _ => None,
    })
}

/// What the `_ms` columns of the latency tables (`coordinator_read_latency.p99th_ms`, …) must
/// be multiplied by to give milliseconds. Cassandra up to 5.0 converts its timers' values,
/// which are microseconds, as if they were nanoseconds: the columns hold seconds, rounded to
/// three decimals (so 1 ms resolution, and under half a millisecond reads as 0). Later
/// versions report milliseconds. An unknown version is taken as the 5.0 it most likely is.
pub fn latency_column_to_ms(cassandra_version: Option<&str>) -> f64 {
    let mut parts = cassandra_version.unwrap_or("5.0").split(['.', '-']).map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) if (major, minor) > (5, 0) => 1.0,
        _ => 1000.0,
    }
}

/// Rows of one virtual table → samples. Metric names: `<table>.<column>` for node totals,
/// `<table>.<column>:<pool or table>` for one thread pool or one of the workload's tables;
/// `sstable_tasks` (running compactions and other SSTable tasks), `clients` (connections).
pub fn to_samples(table: &str, node: &str, at_ms: u64, rows: &[Columns]) -> Vec<ServerSample> {
    let sample = |metric: String, value: f64| ServerSample { node: node.to_string(), metric, at_ms, value };
    let mut out = Vec::new();
    match table {
        "thread_pools" => {
            for col in POOL_COLUMNS {
                let mut total = 0.0;
                for row in rows {
                    let v = row.iter().find(|(n, _)| n == col).and_then(|(_, v)| number(v)).unwrap_or(0.0);
                    total += v;
                    if v != 0.0 {
                        out.push(sample(format!("thread_pools.{col}:{}", text(row, "name").unwrap_or("?")), v));
                    }
                }
                out.push(sample(format!("thread_pools.{col}"), total));
            }
        }
        "sstable_tasks" => {
            out.push(sample("sstable_tasks".into(), rows.len() as f64));
            for row in rows {
                if let Some(kind) = text(row, "kind") {
                    out.push(sample(format!("sstable_tasks:{}", kind.to_ascii_lowercase()), 1.0));
                }
            }
        }
        "pending_hints" => {
            let files: f64 = rows.iter().filter_map(|r| r.iter().find(|(n, _)| n == "files").and_then(|(_, v)| number(v))).sum();
            out.push(sample("pending_hints.files".into(), files));
        }
        "clients" => out.push(sample("clients".into(), rows.len() as f64)),
        "streaming" => out.extend(streaming_samples(rows).into_iter().map(|(m, v)| sample(m.into(), v))),
        _ => {
            for row in rows {
                let Some(t) = text(row, "table_name") else { continue };
                for (col, v) in row {
                    if let Some(x) = number(v) {
                        out.push(sample(format!("{table}.{col}:{t}"), x));
                    }
                }
            }
        }
    }
    out
}

/// The streams a node takes part in now (`system_views.streaming` keeps finished ones a while:
/// those are left out): how many, the MiB they sent and received so far, and their mean
/// progress in percent. Nothing while no stream runs, so a run without streaming has no series.
fn streaming_samples(rows: &[Columns]) -> Vec<(&'static str, f64)> {
    let running: Vec<&Columns> =
        rows.iter().filter(|r| text(r, "status").is_some_and(|s| !matches!(s.to_ascii_lowercase().as_str(), "success" | "failure"))).collect();
    if running.is_empty() {
        return Vec::new();
    }
    let sum = |col: &str| running.iter().filter_map(|r| r.iter().find(|(n, _)| n == col).and_then(|(_, v)| number(v))).sum::<f64>();
    let progress = sum("progress_percentage") / running.len() as f64;
    vec![
        (metric::STREAMS, running.len() as f64),
        (metric::STREAM_SENT_MIB, sum("bytes_sent") / 1_048_576.0),
        (metric::STREAM_RECEIVED_MIB, sum("bytes_received") / 1_048_576.0),
        (metric::STREAM_PROGRESS_PCT, progress),
    ]
}

impl Poller for VirtualTablePoller {
    async fn poll(&mut self, at_ms: u64) -> (Vec<ServerSample>, Vec<String>) {
        VirtualTablePoller::poll(self, at_ms).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cols: &[(&str, CqlValue)]) -> Columns {
        cols.iter().map(|(n, v)| (n.to_string(), Some(v.clone()))).collect()
    }

    #[test]
    fn thread_pools_give_totals_and_busy_pools() {
        let rows = vec![
            row(&[
                ("name", CqlValue::Text("MutationStage".into())),
                ("active_tasks", CqlValue::Int(2)),
                ("pending_tasks", CqlValue::Int(30)),
                ("blocked_tasks", CqlValue::BigInt(0)),
            ]),
            row(&[
                ("name", CqlValue::Text("ReadStage".into())),
                ("active_tasks", CqlValue::Int(1)),
                ("pending_tasks", CqlValue::Int(0)),
                ("blocked_tasks", CqlValue::BigInt(0)),
            ]),
        ];
        let s = to_samples("thread_pools", "127.0.0.1", 5000, &rows);
        let get = |m: &str| s.iter().find(|x| x.metric == m).map(|x| x.value);
        assert_eq!(get("thread_pools.pending_tasks"), Some(30.0));
        assert_eq!(get("thread_pools.active_tasks"), Some(3.0));
        assert_eq!(get("thread_pools.blocked_tasks"), Some(0.0));
        assert_eq!(get("thread_pools.pending_tasks:MutationStage"), Some(30.0));
        assert_eq!(get("thread_pools.pending_tasks:ReadStage"), None, "idle pools are left out");
        assert!(s.iter().all(|x| x.at_ms == 5000 && x.node == "127.0.0.1"));
    }

    #[test]
    fn per_table_rows_keep_every_numeric_column_under_the_table() {
        let rows = vec![row(&[
            ("keyspace_name", CqlValue::Text("ks".into())),
            ("table_name", CqlValue::Text("kv".into())),
            ("count", CqlValue::BigInt(10)),
            ("p99th_ms", CqlValue::Double(4.5)),
        ])];
        let s = to_samples("local_read_latency", "n", 0, &rows);
        let names: Vec<&str> = s.iter().map(|x| x.metric.as_str()).collect();
        assert_eq!(names, ["local_read_latency.count:kv", "local_read_latency.p99th_ms:kv"]);
        assert_eq!(s[1].value, 4.5);
    }

    #[test]
    fn compactions_hints_and_clients_are_counted() {
        let task = row(&[("kind", CqlValue::Text("Compaction".into()))]);
        let s = to_samples("sstable_tasks", "n", 0, &[task.clone(), task]);
        assert_eq!(s[0].metric, "sstable_tasks");
        assert_eq!(s[0].value, 2.0);
        assert_eq!(s.iter().filter(|x| x.metric == "sstable_tasks:compaction").count(), 2);
        let h = to_samples("pending_hints", "n", 0, &[row(&[("files", CqlValue::Int(3))]), row(&[("files", CqlValue::Int(4))])]);
        assert_eq!(h[0].value, 7.0);
        assert_eq!(to_samples("clients", "n", 0, &[vec![], vec![]])[0].value, 2.0);
    }

    #[test]
    fn running_streams_are_counted_and_finished_ones_left_out() {
        let stream = |status: &str, sent: i64, pct: f32| {
            row(&[
                ("status", CqlValue::Text(status.into())),
                ("bytes_sent", CqlValue::BigInt(sent)),
                ("bytes_received", CqlValue::BigInt(0)),
                ("progress_percentage", CqlValue::Float(pct)),
            ])
        };
        let s = to_samples("streaming", "n", 7, &[stream("start", 2 * 1_048_576, 40.0), stream("start", 1_048_576, 20.0), stream("success", 9 << 20, 100.0)]);
        let get = |m: &str| s.iter().find(|x| x.metric == m).map(|x| x.value);
        assert_eq!((get(metric::STREAMS), get(metric::STREAM_SENT_MIB), get(metric::STREAM_PROGRESS_PCT)), (Some(2.0), Some(3.0), Some(30.0)));
        assert!(to_samples("streaming", "n", 7, &[stream("success", 1, 100.0)]).is_empty(), "no stream runs: no sample");
    }

    #[test]
    fn missing_tables_are_recognised_by_the_servers_message() {
        assert!(is_missing_table(
            "Database returned an error: The query is syntactically correct but invalid, Error message: table sstable_tasks does not exist"
        ));
        assert!(is_missing_table("unconfigured table thread_pools"));
        assert!(!is_missing_table("Request timeout"));
    }

    #[test]
    fn latency_columns_are_seconds_up_to_cassandra_5_0() {
        assert_eq!(latency_column_to_ms(Some("5.0.6")), 1000.0);
        assert_eq!(latency_column_to_ms(Some("4.1.3")), 1000.0);
        assert_eq!(latency_column_to_ms(None), 1000.0);
        assert_eq!(latency_column_to_ms(Some("5.1.0")), 1.0);
        assert_eq!(latency_column_to_ms(Some("6.0-alpha1")), 1.0);
    }
}
