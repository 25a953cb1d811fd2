//! What a run's figures mean, in words, for the top of its report: where the client's p99 was
//! spent (outside Cassandra — the client, the driver, the network — or in Cassandra, from the
//! coordinators' own p99 of the best source the run has, `server::latency`, and never from a
//! figure below that source's resolution), saturation (the verdict of `analysis::saturation`, a node using nearly all of the
//! machine's cores, tasks pending in Cassandra's thread pools by pool, a client that did not
//! keep its rate as `validity` judged it) and throughput that drifted during the measured
//! phase. It reads a [`RunView`] and returns sentences; it does not render.

use super::run_view::{LoadShape, RunView};
use crate::analysis::saturation::{cpu_share, RunLoad};
use crate::server::latency::{self, LatencySource};
use crate::server::series::IntervalSeries;
use crate::server::{metric, ServerSample, CLIENT};
use crate::stats::{ms, Phase};
use crate::validity::Check;
use std::collections::BTreeMap;

/// The client's p99 is "mostly queueing" when Cassandra's coordinators account for less than
/// this share of it.
const QUEUEING_SHARE: f64 = 0.5;
/// A node counts as using nearly all of the machine's cores from this share of them.
const NODE_CPU_SHARE: f64 = 0.8;
/// Pending tasks of one pool worth naming.
const PENDING_WORTH_SAYING: f64 = 10.0;
/// Throughput drifted when its last third differs from its first by this share or more.
const DRIFT_SHARE: f64 = 0.25;

/// The sentences, most important first; empty when there is nothing to say.
pub fn findings(run: &RunView) -> Vec<String> {
    let Some(p) = run.phase(Phase::Run) else { return Vec::new() };
    let ivs: Vec<_> = run.chart_timeline(Phase::Run).into_iter().filter(|iv| iv.phase == Phase::Run).collect();
    let (from_ms, to_ms) = match (ivs.first(), ivs.last()) {
        (Some(a), Some(b)) => (a.start_ms, b.end_ms),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let cores = run.record.env.client_cores;
    let total = &p.total;

    // where the client's p99 went
    let bounds: Vec<(u64, u64)> = ivs.iter().map(|iv| (iv.start_ms, iv.end_ms)).collect();
    let source = LatencySource::of(&run.server, run.record.env.cassandra_version.as_deref());
    let coordinator_ms = [IntervalSeries::CoordinatorReadP99, IntervalSeries::CoordinatorWriteP99]
        .into_iter()
        .filter_map(|what| median(latency::per_interval_ms(&run.server, &bounds, what, source).into_iter().flatten().collect()))
        .reduce(f64::max);
    let client_p99_ms = total.latency.p99_ns as f64 / 1e6;
    let little = match run.load_shape() {
        LoadShape::MaxThroughput { concurrency } if concurrency > 1 && total.ops_per_s > 0.0 => {
            let predicted_ns = concurrency as f64 / total.ops_per_s * 1e9;
            let mean_ns = total.latency.mean_ns;
            // the mean is what Little's law predicts: the requests in flight are a queue
            ((mean_ns - predicted_ns).abs() <= 0.3 * predicted_ns).then(|| {
                format!(
                    " At maximum throughput with {concurrency} in flight, latency ≈ in flight / throughput ({concurrency} / {:.0} per s = {} ms; the mean measured is {} ms): lower --concurrency, or set --rate below the maximum, to measure Cassandra's latency rather than the queue.",
                    total.ops_per_s,
                    ms(predicted_ns),
                    ms(mean_ns)
                )
            })
        }
        _ => None,
    };
    out.extend(where_the_p99_went(client_p99_ms, coordinator_ms, source, little));
    // saturation as `compare` judges it
    let load = RunLoad {
        rate_per_s: run.record.config.fixed_rate_per_s(),
        concurrency: run.record.config.concurrency,
        achieved_per_s: total.ops_per_s,
        service_mean_ns: total.service.mean_ns,
        latency_mean_ns: total.latency.mean_ns,
        cpu_share: cpu_share(&run.server, from_ms, to_ms, cores),
        cores,
    };
    if let Some(why) = load.saturated() {
        out.push(format!("Saturated: {why}."));
    }
    out.extend(busy_nodes(&run.server, from_ms, to_ms, cores));
    out.extend(pending_pools(&run.server, from_ms, to_ms));
    if let Some(v) = &run.validity {
        for r in v.reasons.iter().filter(|r| matches!(r.check, Check::Rate | Check::LateStarts | Check::ClientCpu)) {
            out.push(format!("The client could not keep up: {}.", r.message));
        }
    }
    out.extend(drift(&ivs.iter().map(|iv| iv.total_ops_per_s()).collect::<Vec<_>>()));
    out
}

/// Where the client's p99 went: inside Cassandra (its coordinators' p99, the median interval) or
/// outside it (the client, the driver, the network between them), each part in ms and as a share,
/// with the source named. A coordinator p99 at or below its source's resolution is said to be so,
/// and no division is drawn from it.
fn where_the_p99_went(client_p99_ms: f64, coordinator_ms: Option<f64>, source: LatencySource, little: Option<String>) -> Option<String> {
    let client = ms(client_p99_ms * 1e6);
    let Some(c) = coordinator_ms.filter(|_| client_p99_ms > 0.0) else { return little.map(|l| l.trim_start().to_string()) };
    let little = little.unwrap_or_default();
    if !source.resolves(c) {
        return Some(format!(
            "Cassandra's coordinators' p99 was {} in the median interval ({}): too coarse to tell how much of the client's p99 ({client} ms) was spent in Cassandra and how much outside it; nodes casslab starts are read in µs through Jolokia.{little}",
            source.show(c),
            source.label()
        ));
    }
    let inside = (c / client_p99_ms).min(1.0);
    let outside_ms = (client_p99_ms - c).max(0.0);
    Some(if c < QUEUEING_SHARE * client_p99_ms {
        format!(
            "The client's p99 ({client} ms) is mostly time outside Cassandra: {} ms ({:.0}%) was spent in the client, the driver and the network between them, while Cassandra's coordinators answered in {} at p99 (the median interval; {}).{little}",
            ms(outside_ms * 1e6),
            (1.0 - inside) * 100.0,
            source.show(c),
            source.label()
        )
    } else {
        format!(
            "The client's p99 ({client} ms) is mostly time in Cassandra: its coordinators' p99 was {} (the median interval; {}), {:.0}% of it; {} ms was spent outside Cassandra (the client, the driver, the network).",
            source.show(c),
            source.label(),
            inside * 100.0,
            ms(outside_ms * 1e6)
        )
    })
}

/// Nodes whose median CPU over the phase used nearly all of the machine's cores (the CPU of
/// nodes casslab started, on the machine it runs on).
fn busy_nodes(samples: &[ServerSample], from_ms: u64, to_ms: u64, cores: usize) -> Vec<String> {
    if cores == 0 {
        return Vec::new();
    }
    let mut per_node: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.metric == metric::CPU_PCT && s.node != CLIENT && (from_ms..=to_ms).contains(&s.at_ms)) {
        per_node.entry(&s.node).or_default().push(s.value);
    }
    per_node
        .into_iter()
        .filter_map(|(node, v)| {
            let m = median(v)?;
            (m >= NODE_CPU_SHARE * cores as f64 * 100.0).then(|| {
                format!("{node} used {m:.0}% of a core in the median sample: nearly all of the machine's {cores} cores, so it (and casslab beside it) queued for CPU.")
            })
        })
        .collect()
}

/// Thread pools with tasks pending, per node, largest first.
fn pending_pools(samples: &[ServerSample], from_ms: u64, to_ms: u64) -> Vec<String> {
    let prefix = format!("{}:", metric::PENDING_TASKS);
    let mut pools: BTreeMap<&str, Vec<(&str, f64)>> = BTreeMap::new();
    for s in samples.iter().filter(|s| (from_ms..=to_ms).contains(&s.at_ms)) {
        if let Some(pool) = s.metric.strip_prefix(&prefix) {
            let list = pools.entry(&s.node).or_default();
            match list.iter_mut().find(|(p, _)| *p == pool) {
                Some(e) => e.1 = e.1.max(s.value),
                None => list.push((pool, s.value)),
            }
        }
    }
    let mut out = Vec::new();
    for (node, mut list) in pools {
        list.retain(|(_, v)| *v >= PENDING_WORTH_SAYING);
        if list.is_empty() {
            continue;
        }
        list.sort_by(|a, b| b.1.total_cmp(&a.1));
        let named: Vec<String> = list.iter().take(3).map(|(p, v)| format!("{p} up to {v:.0} ({})", pool_meaning(p))).collect();
        out.push(format!("Tasks waited in Cassandra's thread pools on {node}: {}.", named.join("; ")));
    }
    out
}

fn pool_meaning(pool: &str) -> &'static str {
    match pool {
        "Native-Transport-Requests" => "requests waiting for a thread: the node was handed requests faster than it served them",
        "MutationStage" => "writes waiting to be applied",
        "ReadStage" => "reads waiting for a thread",
        "CompactionExecutor" => "compactions waiting to run",
        "MemtableFlushWriter" | "MemtablePostFlush" => "memtable flushes waiting: writes may be throttled",
        "RequestResponseStage" => "responses from replicas waiting",
        _ => "tasks waiting for a thread",
    }
}

/// A warning when throughput in the last third of the measured phase differs strongly from
/// the first third's (at least six intervals).
fn drift(ops_per_s: &[f64]) -> Option<String> {
    if ops_per_s.len() < 6 {
        return None;
    }
    let third = ops_per_s.len() / 3;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (first, last) = (mean(&ops_per_s[..third]), mean(&ops_per_s[ops_per_s.len() - third..]));
    if first <= 0.0 {
        return None;
    }
    let change = last / first - 1.0;
    (change.abs() >= DRIFT_SHARE).then(|| {
        format!(
            "Throughput drifted during the measured phase: {first:.0} ops/s in its first third, {last:.0} in its last ({:+.0}%): the cluster was not in a steady state (compaction, caches, GC, the data growing); a longer warm-up or run shows whether it settles, and figures over the whole phase mix both.",
            change * 100.0
        )
    })
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::run_view::fixtures::view;

    fn sample(node: &str, metric: &str, at_ms: u64, value: f64) -> ServerSample {
        ServerSample { node: node.into(), metric: metric.into(), at_ms, value }
    }

    #[test]
    fn time_outside_cassandra_is_told_from_time_in_it_and_from_too_coarse_a_figure() {
        // the fixture's reads take about 1.5–7 ms at the client
        let mut run = view(3, None);
        let client = findings(&run).first().cloned().unwrap_or_default();
        assert!(!client.contains("Cassandra"), "nothing to say without server samples: {client}");
        // Cassandra 5.0's `_ms` columns hold seconds, rounded to 1 ms: 0.0004 s reads as 0
        run.server = (5..13).map(|s| sample("127.0.0.1", "coordinator_read_latency.p99th_ms:kv", s * 1000 + 500, 0.0)).collect();
        let f = findings(&run);
        assert!(
            f[0].starts_with("Cassandra's coordinators' p99 was < 1 ms in the median interval (system_views, rounded to 1 ms): too coarse to tell"),
            "{f:?}"
        );
        assert!(!f[0].contains('%'), "no division drawn from a figure below the resolution: {f:?}");
        run.server.iter_mut().for_each(|s| s.value = 0.005);
        let f = findings(&run);
        assert!(f[0].contains("is mostly time in Cassandra: its coordinators' p99 was 5.00 ms (the median interval; system_views, rounded to 1 ms)"), "{f:?}");
        // the histograms through Jolokia, in µs, win over system_views
        run.server.extend((5..13).map(|s| sample("127.0.0.1", "jmx.coordinator_read_latency.p99_us:kv", s * 1000 + 500, 412.0)));
        let f = findings(&run);
        assert!(
            f[0].contains("is mostly time outside Cassandra: ")
                && f[0].contains("spent in the client, the driver and the network between them, while Cassandra's coordinators answered in 0.412 ms at p99 (the median interval; Cassandra's histograms through Jolokia, in µs)"),
            "{f:?}"
        );
    }

    #[test]
    fn busy_nodes_pending_pools_and_drift_are_named() {
        let samples = vec![
            sample("127.0.0.1", metric::CPU_PCT, 1000, 190.0),
            sample("127.0.0.1", metric::CPU_PCT, 2000, 185.0),
            sample("127.0.0.2", metric::CPU_PCT, 2000, 40.0),
            sample("127.0.0.1", "thread_pools.pending_tasks:Native-Transport-Requests", 1500, 125.0),
            sample("127.0.0.1", "thread_pools.pending_tasks:MutationStage", 1500, 3.0),
        ];
        let busy = busy_nodes(&samples, 0, 5000, 2);
        assert_eq!(busy.len(), 1);
        assert!(busy[0].starts_with("127.0.0.1 used 190% of a core"), "{busy:?}");
        let pools = pending_pools(&samples, 0, 5000);
        assert_eq!(pools, ["Tasks waited in Cassandra's thread pools on 127.0.0.1: Native-Transport-Requests up to 125 (requests waiting for a thread: the node was handed requests faster than it served them)."]);
        assert!(drift(&[100.0, 100.0, 98.0, 102.0, 99.0, 101.0]).is_none());
        let d = drift(&[1000.0, 1000.0, 800.0, 700.0, 600.0, 600.0]).unwrap();
        assert!(d.starts_with("Throughput drifted during the measured phase: 1000 ops/s in its first third, 600 in its last (-40%)"), "{d}");
    }
}
