//! The server-side view of a run: what the nodes did while the client measured. Owns the
//! sample model ([`ServerSample`]: node, metric, time on the run's axis, value), the metric
//! names, and the parts that make samples — the pollers of a server's own metrics behind
//! `collect::Poller` (Cassandra's `system_views` in `vtables`, Redis's `INFO` in
//! `redis_info`), the JVM GC log follower (`gclog`), `/proc` readings (`procstat`), the loop
//! that drives them once per interval (`collect`) — and the analysis that lines them up with
//! client latency (`suspects`). Storing is `store::server`; printing and charts are in `report`.

pub mod collect;
pub mod disk;
pub mod gclog;
pub mod jolokia;
pub mod latency;
pub mod procstat;
pub mod redis_info;
pub mod series;
pub mod suspects;
pub mod traces;
pub mod vtables;

use serde::{Deserialize, Serialize};

/// One value of one metric of one node at one time. `at_ms` is on the run's time axis
/// (milliseconds since the engine started, like `IntervalSample::start_ms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSample {
    /// A node's address, or [`CLIENT`] for the casslab process.
    pub node: String,
    pub metric: String,
    pub at_ms: u64,
    pub value: f64,
}

/// The node name of samples about the casslab process itself.
pub const CLIENT: &str = "client";

/// Metric names that the collector and the reports share. Per-pool and per-table metrics
/// append `:<pool or table>`; see `vtables::to_samples`.
pub mod metric {
    /// One stop-the-world pause, stamped at its start: `gc_pause_ms:<kind>`, value = duration.
    pub const GC_PAUSE_PREFIX: &str = "gc_pause_ms:";
    /// Share of the poll interval the JVM was stopped, in percent.
    pub const GC_STW_PCT: &str = "gc_stw_pct";
    /// CPU used since the last poll, in percent of one core.
    pub const CPU_PCT: &str = "cpu_pct";
    /// casslab only: CPU used plus time its threads waited to run since the last poll, in
    /// percent of one core — its demand for CPU, which a busy machine does not hide.
    pub const CPU_DEMAND_PCT: &str = "cpu_demand_pct";
    pub const RSS_MIB: &str = "rss_mib";
    /// Thread-pool tasks waiting, summed over pools.
    pub const PENDING_TASKS: &str = "thread_pools.pending_tasks";
    pub const BLOCKED_TASKS: &str = "thread_pools.blocked_tasks";
    /// SSTable tasks (compactions, cleanups, ...) running.
    pub const SSTABLE_TASKS: &str = "sstable_tasks";
    /// How long one poll of every node took (on the client), in ms.
    pub const POLL_MS: &str = "poll_ms";
    /// Streams a node takes part in now (`system_views.streaming`), the MiB they sent and
    /// received so far, and their mean progress in percent.
    pub const STREAMS: &str = "streaming.active";
    pub const STREAM_SENT_MIB: &str = "streaming.sent_mib";
    pub const STREAM_RECEIVED_MIB: &str = "streaming.received_mib";
    pub const STREAM_PROGRESS_PCT: &str = "streaming.progress_pct";
    pub const TOMBSTONES_P99_PREFIX: &str = "tombstones_per_read.p99th:";
    pub const TOMBSTONES_MAX_PREFIX: &str = "tombstones_per_read.max:";
}

/// The pauses among `samples`: (node, kind, start ms, duration ms).
pub fn gc_pauses(samples: &[ServerSample]) -> impl Iterator<Item = (&str, &str, u64, f64)> {
    samples.iter().filter_map(|s| s.metric.strip_prefix(metric::GC_PAUSE_PREFIX).map(|kind| (s.node.as_str(), kind, s.at_ms, s.value)))
}
