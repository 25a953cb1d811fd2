//! Per-interval server series on the client's time axis: each `(start_ms, end_ms)` interval
//! of a run gets one value of a series (GC pause time, pending tasks, running compactions,
//! tombstones per read, CPU, Cassandra's own latency from `system_views`) from the polls made
//! in it. The suspects, the server view's charts and the explain lines read them from here.

use super::{metric, ServerSample, CLIENT};
use std::collections::BTreeMap;

/// What a per-interval server series shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalSeries {
    /// Stop-the-world time that started in the interval, summed over nodes (ms).
    GcPauseMs,
    /// Largest thread-pool backlog seen in the interval, summed over nodes.
    PendingTasks,
    /// Largest number of SSTable tasks (compactions) seen, summed over nodes.
    Compactions,
    /// Largest tombstones-per-read p99 over the workload's tables and nodes.
    TombstonesP99,
    /// Largest CPU use of one node (percent of a core).
    NodeCpuPct,
    /// CPU use of casslab itself (percent of a core).
    ClientCpuPct,
    /// Largest p99 over nodes and the workload's tables of Cassandra's own latency, in ms:
    /// coordinator reads and writes (the whole request inside Cassandra), local reads and
    /// writes (one replica's part of it).
    CoordinatorReadP99,
    CoordinatorWriteP99,
    LocalReadP99,
    LocalWriteP99,
}

impl IntervalSeries {
    /// The metric prefix of a server latency series (`coordinator_read_latency.p99th_ms:`).
    fn latency_prefix(self) -> Option<&'static str> {
        match self {
            IntervalSeries::CoordinatorReadP99 => Some("coordinator_read_latency.p99th_ms:"),
            IntervalSeries::CoordinatorWriteP99 => Some("coordinator_write_latency.p99th_ms:"),
            IntervalSeries::LocalReadP99 => Some("local_read_latency.p99th_ms:"),
            IntervalSeries::LocalWriteP99 => Some("local_write_latency.p99th_ms:"),
            _ => None,
        }
    }
}

/// One value per `(start_ms, end_ms)` interval. Polls are assigned to the interval that holds
/// their time; an interval without a poll gets `None`. The polls are sorted by time once and
/// each interval takes its slice by binary search: a long run's report asks this for thousands
/// of intervals and tens of thousands of polls.
pub fn per_interval(samples: &[ServerSample], intervals: &[(u64, u64)], what: IntervalSeries) -> Vec<Option<f64>> {
    let wanted = |s: &ServerSample| match what {
        IntervalSeries::GcPauseMs => s.metric.starts_with(metric::GC_PAUSE_PREFIX),
        IntervalSeries::PendingTasks => s.metric == metric::PENDING_TASKS,
        IntervalSeries::Compactions => s.metric == metric::SSTABLE_TASKS,
        IntervalSeries::TombstonesP99 => s.metric.starts_with(metric::TOMBSTONES_P99_PREFIX) && !s.metric.ends_with(":casslab_meta"),
        IntervalSeries::NodeCpuPct => s.metric == metric::CPU_PCT && s.node != CLIENT,
        IntervalSeries::ClientCpuPct => s.metric == metric::CPU_PCT && s.node == CLIENT,
        IntervalSeries::CoordinatorReadP99 | IntervalSeries::CoordinatorWriteP99 | IntervalSeries::LocalReadP99 | IntervalSeries::LocalWriteP99 => {
            s.metric.starts_with(what.latency_prefix().unwrap_or_default()) && !s.metric.ends_with(":casslab_meta")
        }
    };
    let mut sorted: Vec<&ServerSample> = samples.iter().filter(|s| wanted(s)).collect();
    sorted.sort_by_key(|s| s.at_ms);
    intervals
        .iter()
        .map(|&(start, end)| {
            let from = sorted.partition_point(|s| s.at_ms < start);
            let to = from + sorted[from..].partition_point(|s| s.at_ms < end);
            let inside = &sorted[from..to];
            match what {
                IntervalSeries::GcPauseMs => Some(inside.iter().map(|s| s.value).sum::<f64>() + 0.0),
                IntervalSeries::PendingTasks | IntervalSeries::Compactions => {
                    let mut per_node: BTreeMap<&str, f64> = BTreeMap::new();
                    for s in inside {
                        let e = per_node.entry(&s.node).or_insert(0.0);
                        *e = e.max(s.value);
                    }
                    (!per_node.is_empty()).then(|| per_node.values().sum())
                }
                _ => max_of(inside.iter().copied()),
            }
        })
        .collect()
}

fn max_of<'a>(it: impl Iterator<Item = &'a ServerSample>) -> Option<f64> {
    it.map(|s| s.value).reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(node: &str, metric: &str, at_ms: u64, value: f64) -> ServerSample {
        ServerSample { node: node.into(), metric: metric.into(), at_ms, value }
    }

    #[test]
    fn interval_series_bucket_polls_and_pauses_by_time() {
        let ivs = [(0, 1000), (1000, 2000), (2000, 3000)];
        let samples = vec![
            s("a", "gc_pause_ms:Remark", 1200, 5.0),
            s("b", "gc_pause_ms:Young", 1900, 7.0),
            s("a", "sstable_tasks", 1500, 1.0),
            s("b", "sstable_tasks", 1500, 2.0),
            s("a", "sstable_tasks", 1600, 0.0),
            s("a", "cpu_pct", 500, 80.0),
            s("client", "cpu_pct", 500, 150.0),
        ];
        assert_eq!(per_interval(&samples, &ivs, IntervalSeries::GcPauseMs), [Some(0.0), Some(12.0), Some(0.0)]);
        assert_eq!(per_interval(&samples, &ivs, IntervalSeries::Compactions), [None, Some(3.0), None]);
        assert_eq!(per_interval(&samples, &ivs, IntervalSeries::NodeCpuPct), [Some(80.0), None, None]);
        assert_eq!(per_interval(&samples, &ivs, IntervalSeries::ClientCpuPct), [Some(150.0), None, None]);
    }

    #[test]
    fn cassandras_own_latency_is_the_largest_p99_of_the_workload_tables() {
        let samples = vec![
            s("127.0.0.1", "coordinator_read_latency.p99th_ms:usertable", 500, 4.0),
            s("127.0.0.2", "coordinator_read_latency.p99th_ms:usertable", 600, 6.5),
            s("127.0.0.1", "coordinator_read_latency.p99th_ms:casslab_meta", 700, 90.0),
            s("127.0.0.1", "local_write_latency.p99th_ms:usertable", 1500, 0.2),
        ];
        let ivs = [(0, 1000), (1000, 2000)];
        assert_eq!(per_interval(&samples, &ivs, IntervalSeries::CoordinatorReadP99), [Some(6.5), None]);
        assert_eq!(per_interval(&samples, &ivs, IntervalSeries::LocalWriteP99), [None, Some(0.2)]);
        assert_eq!(per_interval(&samples, &ivs, IntervalSeries::CoordinatorWriteP99), [None, None]);
    }
}
