//! Lining the server samples up with client latency: per-interval server series on the same
//! time axis as the client's intervals (GC pause time, pending tasks, running compactions,
//! tombstones per read, CPU), and the "suspects": intervals whose p99 jumped well above the
//! run's typical interval p99, each with what the servers did at that time and just before.
//! Pure functions of saved data.

use super::latency::{coordinator_p99_in, LatencySource};
use super::{gc_pauses, metric, ServerSample, CLIENT};
use std::collections::BTreeMap;

/// One operation's p99 over one client interval.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientInterval {
    pub op: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub p99_ns: u64,
}

/// A latency spike and what happened on the servers around it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Suspect {
    pub op: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub p99_ms: f64,
    /// The median of the operation's interval p99s over the run.
    pub typical_p99_ms: f64,
    pub findings: Vec<String>,
}

/// An interval is a spike when its p99 exceeds this many times the run's median interval p99.
pub const SPIKE_FACTOR: f64 = 3.0;
/// ... and exceeds it by at least this much (so sub-millisecond jitter is not a spike).
const MIN_RISE_MS: f64 = 1.0;
/// Tombstones scanned by one read worth naming (Cassandra itself warns at 1,000).
const TOMBSTONES_WORTH_SAYING: f64 = 100.0;
/// At most this many suspects are listed (the largest rises).
pub const MAX_SUSPECTS: usize = 10;

/// `mm:ss` since the run started.
pub fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{:02}:{:02}", s / 60, s % 60)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The spikes of `points` (each operation judged against its own median), with their findings,
/// the largest rises first, at most [`MAX_SUSPECTS`], then put in time order.
pub fn find(points: &[ClientInterval], samples: &[ServerSample], factor: f64) -> Vec<Suspect> {
    let mut by_op: BTreeMap<&str, Vec<&ClientInterval>> = BTreeMap::new();
    for p in points {
        by_op.entry(p.op.as_str()).or_default().push(p);
    }
    let mut out = Vec::new();
    for (op, ps) in by_op {
        let typical = median(ps.iter().map(|p| p.p99_ns as f64 / 1e6).collect());
        for p in ps {
            let p99_ms = p.p99_ns as f64 / 1e6;
            if p99_ms > factor * typical && p99_ms - typical >= MIN_RISE_MS {
                out.push(Suspect { op: op.to_string(), start_ms: p.start_ms, end_ms: p.end_ms, p99_ms, typical_p99_ms: typical, findings: Vec::new() });
            }
        }
    }
    out.sort_by(|a, b| (b.p99_ms / b.typical_p99_ms.max(1e-9)).total_cmp(&(a.p99_ms / a.typical_p99_ms.max(1e-9))));
    out.truncate(MAX_SUSPECTS);
    out.sort_by_key(|s| (s.start_ms, s.op.clone()));
    // what the servers did, for the suspects kept only (a long run can have thousands of spikes)
    for s in &mut out {
        let span = s.end_ms.saturating_sub(s.start_ms).max(1);
        // the same interval and the one before it: causes precede or overlap effects
        s.findings = findings(samples, s.start_ms.saturating_sub(span), s.end_ms + span / 2);
        s.findings.extend(cassandras_own(samples, s.start_ms, s.end_ms));
    }
    out
}

/// Cassandra's own p99 in the suspect interval, from the nodes' histograms (each interval's own
/// requests, in µs): whether the spike was inside Cassandra. Nothing from `system_views`,
/// whose figures are a decaying window over minutes, not the interval's.
fn cassandras_own(samples: &[ServerSample], from_ms: u64, to_ms: u64) -> Option<String> {
    let source = LatencySource::Histograms;
    if !samples.iter().any(|s| s.metric.starts_with(super::jolokia::PREFIX)) {
        return None;
    }
    let c = coordinator_p99_in(samples, from_ms, to_ms, source)?;
    Some(format!("Cassandra's coordinators' own p99 in the interval {} ({})", source.show(c), source.label()))
}

/// A suspect as the JSON exports hold it: its fields and the line [`describe`] prints.
pub fn to_json(s: &Suspect) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap_or_default();
    v["text"] = describe(s).into();
    v
}

/// One line per suspect, e.g. `p99 of read rose to 84.0 ms at 02:31 (typical 3.1 ms): 127.0.0.1 paused 210 ms in GC (Full (System.gc())) at 02:31; ...`.
pub fn describe(s: &Suspect) -> String {
    let what = if s.findings.is_empty() { "nothing unusual seen on the servers".to_string() } else { s.findings.join("; ") };
    format!("p99 of {} rose to {:.1} ms at {} (typical {:.1} ms): {what}", s.op, s.p99_ms, clock(s.start_ms), s.typical_p99_ms)
}

fn in_window(s: &ServerSample, from_ms: u64, to_ms: u64) -> bool {
    s.at_ms >= from_ms && s.at_ms <= to_ms
}

/// Largest value of `metric` per node in the window.
fn max_per_node(samples: &[ServerSample], from_ms: u64, to_ms: u64, wanted: impl Fn(&str) -> bool) -> BTreeMap<&str, (f64, &str)> {
    let mut out: BTreeMap<&str, (f64, &str)> = BTreeMap::new();
    for s in samples.iter().filter(|s| in_window(s, from_ms, to_ms) && wanted(&s.metric)) {
        let e = out.entry(s.node.as_str()).or_insert((f64::MIN, s.metric.as_str()));
        if s.value > e.0 {
            *e = (s.value, s.metric.as_str());
        }
    }
    out
}

/// What the servers did between `from_ms` and `to_ms` that can slow requests down.
pub fn findings(samples: &[ServerSample], from_ms: u64, to_ms: u64) -> Vec<String> {
    let all = samples;
    // samples in time order (as the store returns them): only the window's are looked at
    let samples =
        if all.is_sorted_by_key(|s| s.at_ms) { &all[all.partition_point(|s| s.at_ms < from_ms)..all.partition_point(|s| s.at_ms <= to_ms)] } else { all };
    let mut out = Vec::new();
    // GC pauses, per node: the longest, with the total when there were several
    let mut gc: BTreeMap<&str, (f64, f64, usize, &str, u64)> = BTreeMap::new();
    for (node, kind, at, ms) in gc_pauses(samples).filter(|(_, _, at, _)| *at >= from_ms && *at <= to_ms) {
        let e = gc.entry(node).or_insert((0.0, 0.0, 0, kind, at));
        e.0 += ms;
        e.2 += 1;
        if ms > e.1 {
            (e.1, e.3, e.4) = (ms, kind, at);
        }
    }
    for (node, (total, longest, n, kind, at)) in gc {
        if total >= 5.0 {
            let more = if n > 1 { format!(" ({n} pauses, {total:.0} ms in all)") } else { String::new() };
            out.push(format!("{node} paused {longest:.0} ms in GC ({kind}) at {}{more}", clock(at)));
        }
    }
    for (node, (v, _)) in max_per_node(samples, from_ms, to_ms, |m| m == metric::SSTABLE_TASKS) {
        if v >= 1.0 {
            out.push(format!("{v:.0} compaction{} running on {node}", if v == 1.0 { "" } else { "s" }));
        }
    }
    for (label, total) in [("pending", metric::PENDING_TASKS), ("blocked", metric::BLOCKED_TASKS)] {
        for (node, (v, _)) in max_per_node(samples, from_ms, to_ms, |m| m == total) {
            // a backlog the node always has (some pools report a steady count) is no cause
            let usual = median(all.iter().filter(|s| s.node == node && s.metric == total).map(|s| s.value).collect());
            if v >= 1.0 && v > 2.0 * usual {
                let prefix = format!("{total}:");
                let pools = max_per_node_pools(samples, from_ms, to_ms, node, &prefix);
                out.push(format!("{v:.0} tasks {label} on {node}{pools}"));
            }
        }
    }
    let workload_table = |m: &str| m.starts_with(metric::TOMBSTONES_MAX_PREFIX) && !m.ends_with(":casslab_meta");
    for (node, (v, m)) in max_per_node(samples, from_ms, to_ms, workload_table) {
        if v >= TOMBSTONES_WORTH_SAYING {
            out.push(format!("reads scanned up to {v:.0} tombstones on {node} ({})", &m[metric::TOMBSTONES_MAX_PREFIX.len()..]));
        }
    }
    for (node, (v, _)) in max_per_node(samples, from_ms, to_ms, |m| m == metric::CPU_PCT) {
        if v >= 90.0 {
            let who = if node == CLIENT { "casslab itself".to_string() } else { node.to_string() };
            out.push(format!("{who} used {v:.0}% CPU"));
        }
    }
    out
}

/// ` (MutationStage 30, ReadStage 2)`: the pools behind a pending/blocked total.
fn max_per_node_pools(samples: &[ServerSample], from_ms: u64, to_ms: u64, node: &str, prefix: &str) -> String {
    let mut pools: BTreeMap<&str, f64> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.node == node && in_window(s, from_ms, to_ms)) {
        if let Some(pool) = s.metric.strip_prefix(prefix) {
            let e = pools.entry(pool).or_insert(0.0);
            *e = e.max(s.value);
        }
    }
    let mut v: Vec<(&str, f64)> = pools.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    if v.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = v.iter().take(3).map(|(p, x)| format!("{p} {x:.0}")).collect();
    format!(" ({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(node: &str, metric: &str, at_ms: u64, value: f64) -> ServerSample {
        ServerSample { node: node.into(), metric: metric.into(), at_ms, value }
    }

    fn client(p99s_ms: &[f64]) -> Vec<ClientInterval> {
        p99s_ms
            .iter()
            .enumerate()
            .map(|(i, ms)| ClientInterval { op: "read".into(), start_ms: i as u64 * 1000, end_ms: (i as u64 + 1) * 1000, p99_ns: (ms * 1e6) as u64 })
            .collect()
    }

    #[test]
    fn a_spike_is_named_with_the_gc_pause_and_compactions_around_it() {
        let points = client(&[2.0, 2.1, 1.9, 2.0, 84.0, 2.2, 2.0]);
        let samples = vec![
            s("127.0.0.1", "gc_pause_ms:Full (System.gc())", 3_900, 210.0),
            s("127.0.0.1", "gc_pause_ms:Young (Normal) (G1 Evacuation Pause)", 4_200, 12.0),
            s("127.0.0.1", "sstable_tasks", 4_990, 3.0),
            s("127.0.0.1", "thread_pools.pending_tasks", 4_990, 40.0),
            s("127.0.0.1", "thread_pools.pending_tasks", 1_000, 0.0),
            s("127.0.0.1", "thread_pools.pending_tasks", 2_000, 1.0),
            s("127.0.0.1", "thread_pools.blocked_tasks", 1_000, 2.0),
            s("127.0.0.1", "thread_pools.blocked_tasks", 4_990, 2.0),
            s("127.0.0.1", "thread_pools.pending_tasks:MutationStage", 4_990, 40.0),
            s("127.0.0.1", "tombstones_per_read.max:kv", 4_990, 20.0),
            s("127.0.0.1", "tombstones_per_read.max:casslab_meta", 4_990, 500.0),
            // far from the spike: not mentioned
            s("127.0.0.2", "gc_pause_ms:Full (System.gc())", 500, 300.0),
        ];
        let got = find(&points, &samples, SPIKE_FACTOR);
        assert_eq!(got.len(), 1, "{got:?}");
        let sp = &got[0];
        assert_eq!((sp.start_ms, sp.end_ms), (4000, 5000));
        assert!((sp.typical_p99_ms - 2.0).abs() < 1e-9);
        assert_eq!(
            sp.findings,
            [
                "127.0.0.1 paused 210 ms in GC (Full (System.gc())) at 00:03 (2 pauses, 222 ms in all)",
                "3 compactions running on 127.0.0.1",
                "40 tasks pending on 127.0.0.1 (MutationStage 40)",
            ]
        );
        let line = describe(sp);
        assert!(line.starts_with("p99 of read rose to 84.0 ms at 00:04 (typical 2.0 ms): 127.0.0.1 paused 210 ms"), "{line}");
        // in time order (as the store returns samples) only the window is looked at: the same findings
        let mut sorted = samples.clone();
        sorted.sort_by_key(|s| s.at_ms);
        assert_eq!(find(&points, &sorted, SPIKE_FACTOR)[0].findings, sp.findings);
        let tomb = vec![s("n", "tombstones_per_read.max:events", 4_500, 1_500.0)];
        assert_eq!(findings(&tomb, 4_000, 5_000), ["reads scanned up to 1500 tombstones on n (events)"]);
    }

    #[test]
    fn steady_or_sub_millisecond_jitter_is_no_spike() {
        assert!(find(&client(&[2.0, 2.5, 3.0, 2.2]), &[], SPIKE_FACTOR).is_empty());
        // 4x the median but only 0.6 ms above it
        assert!(find(&client(&[0.2, 0.2, 0.8, 0.2]), &[], SPIKE_FACTOR).is_empty());
        let quiet = find(&client(&[1.0, 1.0, 9.0, 1.0]), &[], SPIKE_FACTOR);
        assert_eq!(describe(&quiet[0]), "p99 of read rose to 9.0 ms at 00:02 (typical 1.0 ms): nothing unusual seen on the servers");
    }

    #[test]
    fn a_spike_quotes_cassandras_own_p99_from_the_histograms_only() {
        let points = client(&[1.0, 1.0, 9.0, 1.0]);
        let vt = vec![s("n", "coordinator_read_latency.p99th_ms:kv", 2_500, 0.0)];
        assert!(find(&points, &vt, SPIKE_FACTOR)[0].findings.is_empty(), "system_views' decaying window is not the interval's");
        let mut jmx = vt.clone();
        jmx.push(s("n", "jmx.coordinator_read_latency.p99_us:kv", 1_500, 300.0));
        jmx.push(s("n", "jmx.coordinator_read_latency.p99_us:kv", 2_500, 640.0));
        let got = find(&points, &jmx, SPIKE_FACTOR);
        assert_eq!(got[0].findings, ["Cassandra's coordinators' own p99 in the interval 0.640 ms (Cassandra's histograms through Jolokia, in µs)"]);
    }

    #[test]
    fn only_the_largest_rises_are_kept_in_time_order() {
        let mut p99 = vec![1.0; 40];
        for (i, v) in p99.iter_mut().enumerate().step_by(3) {
            *v = 5.0 + i as f64;
        }
        let got = find(&client(&p99), &[], SPIKE_FACTOR);
        assert_eq!(got.len(), MAX_SUSPECTS);
        assert!(got.windows(2).all(|w| w[0].start_ms < w[1].start_ms));
        assert!(got.iter().all(|s| s.p99_ms >= 5.0 + 12.0), "the smallest rises are dropped: {got:?}");
    }

    #[test]
    fn a_clock_reads_minutes_and_seconds() {
        assert_eq!(clock(151_000), "02:31");
    }
}
