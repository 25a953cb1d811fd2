//! The servers' side of a comparison: for each run, what its nodes did during the measured
//! phase — the share of the time the JVMs were stopped by the garbage collector, the longest
//! pause, the CPU the nodes used — and for each group of runs (a variant's repetitions) the
//! mean of each figure over its runs with a Student t interval, so that a collector or a
//! setting is judged on the servers as well as on the client's latency. Also which server
//! definitions the groups ran against differ, and how.

use super::distributions::t_quantile;
use super::study::Group;
use crate::server::{gc_pauses, metric, ServerSample, CLIENT};
use crate::stats::Phase;
use crate::store::{RunId, Store, StoreError};
use std::collections::BTreeMap;

/// What the nodes of one run did during its measured phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunServer {
    /// Share of the measured time a node's JVM was stopped, averaged over the nodes, in percent.
    pub gc_stw_pct: f64,
    /// The longest stop-the-world pause of any node, in milliseconds.
    pub max_pause_ms: f64,
    /// CPU used by all the nodes together, in percent of one core (mean over the polls).
    pub cpu_pct: f64,
}

/// The figures a comparison shows, in order: (label, unit).
pub const FIGURES: [(&str, &str); 3] = [("GC stopped", "%"), ("longest GC pause", "ms"), ("server CPU", "% of a core")];

impl RunServer {
    pub fn get(&self, i: usize) -> f64 {
        [self.gc_stw_pct, self.max_pause_ms, self.cpu_pct][i]
    }
}

/// A figure over a group's runs: the mean and, with two runs or more, its t interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub runs: usize,
}

/// The mean of `values` with its `confidence` t interval (lo = hi = mean for one value).
pub fn spread(values: &[f64], confidence: f64) -> Option<Spread> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(Spread { mean, lo: mean, hi: mean, runs: 1 });
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t_quantile(0.5 + confidence / 2.0, (n - 1) as f64) * (var / n as f64).sqrt();
    Some(Spread { mean, lo: mean - half, hi: mean + half, runs: n })
}

/// The measured-phase figures of one run from its samples, `None` when no node was polled or
/// followed (a remote cluster without the virtual tables, a Redis run).
pub fn of_run(samples: &[ServerSample], measured_ms: (u64, u64)) -> Option<RunServer> {
    let (from, to) = measured_ms;
    let within = |s: &&ServerSample| s.node != CLIENT && s.at_ms >= from && s.at_ms <= to;
    let mut nodes: Vec<&str> = samples.iter().filter(within).map(|s| s.node.as_str()).collect();
    nodes.sort();
    nodes.dedup();
    if nodes.is_empty() || to <= from {
        return None;
    }
    let pauses: Vec<(&str, f64)> = gc_pauses(samples).filter(|p| p.0 != CLIENT && p.2 >= from && p.2 <= to).map(|p| (p.0, p.3)).collect();
    let stopped_ms: f64 = pauses.iter().map(|p| p.1).sum();
    let max_pause_ms = pauses.iter().map(|p| p.1).fold(0.0, f64::max);
    // CPU: each poll's values summed over the nodes, averaged over the polls
    let mut per_poll: BTreeMap<u64, f64> = BTreeMap::new();
    for s in samples.iter().filter(within).filter(|s| s.metric == metric::CPU_PCT) {
        *per_poll.entry(s.at_ms).or_default() += s.value;
    }
    let cpu_pct = if per_poll.is_empty() { f64::NAN } else { per_poll.values().sum::<f64>() / per_poll.len() as f64 };
    // no GC log followed (nodes casslab did not start): the pauses are unknown, not none
    let gc_followed = samples.iter().any(|s| s.node != CLIENT && (s.metric == metric::GC_STW_PCT || s.metric.starts_with(metric::GC_PAUSE_PREFIX)));
    if !gc_followed {
        return Some(RunServer { gc_stw_pct: f64::NAN, max_pause_ms: f64::NAN, cpu_pct });
    }
    Some(RunServer { gc_stw_pct: stopped_ms / ((to - from) as f64 * nodes.len() as f64) * 100.0, max_pause_ms, cpu_pct })
}

/// A group's runs' figures.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupServer {
    pub label: String,
    pub runs: Vec<(RunId, RunServer)>,
}

impl GroupServer {
    /// Figure `i` of [`FIGURES`] over the runs.
    pub fn spread(&self, i: usize, confidence: f64) -> Option<Spread> {
        let v: Vec<f64> = self.runs.iter().map(|(_, r)| r.get(i)).filter(|v| v.is_finite()).collect();
        spread(&v, confidence)
    }
}

/// The server figures of every group's runs (runs without any are left out); empty when no
/// run of any group has them.
pub fn of_groups(store: &Store, groups: &[Group]) -> Result<Vec<GroupServer>, StoreError> {
    let mut out = Vec::new();
    let mut any = false;
    for g in groups {
        let mut runs = Vec::new();
        for &id in &g.runs {
            // the measured span, from the rows' figures (their histograms are not needed)
            let mut span: Option<(u64, u64)> = None;
            store.for_each_interval_figures(id, |iv| {
                if iv.phase == Phase::Run {
                    span = Some(span.map_or((iv.start_ms, iv.end_ms), |(from, to)| (from.min(iv.start_ms), to.max(iv.end_ms))));
                }
                Ok(())
            })?;
            let Some((from, to)) = span else { continue };
            if let Some(r) = of_run(&store.server_samples(id)?, (from, to)) {
                runs.push((id, r));
            }
        }
        any |= !runs.is_empty();
        out.push(GroupServer { label: g.label.clone(), runs });
    }
    Ok(if any { out } else { Vec::new() })
}

/// How the server definitions the groups ran against differ: one line per field that is not
/// the same in every group (`gc: g1 | zgc`), from each group's first run. Empty when they ran
/// against the same server, or none recorded one.
pub fn differences(store: &Store, groups: &[Group]) -> Result<Vec<String>, StoreError> {
    let mut defs: Vec<BTreeMap<String, String>> = Vec::new();
    for g in groups {
        let Some(&id) = g.runs.first() else { continue };
        let server = store.run(id)?.config.server;
        let mut fields = BTreeMap::new();
        if let Some(s) = server {
            if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&s) {
                flatten("", &serde_json::Value::Object(m), &mut fields);
            }
        }
        defs.push(fields);
    }
    if defs.len() < 2 || defs.iter().all(|d| d.is_empty()) {
        return Ok(Vec::new());
    }
    let mut keys: Vec<&String> = defs.iter().flat_map(|d| d.keys()).collect();
    keys.sort();
    keys.dedup();
    Ok(keys
        .into_iter()
        .filter(|k| defs.iter().any(|d| d.get(*k) != defs[0].get(*k)))
        .map(|k| format!("{k}: {}", defs.iter().map(|d| d.get(k).map_or("-", |v| v.as_str())).collect::<Vec<_>>().join(" | ")))
        .collect())
}

/// `a.b.c = value` for every leaf of a JSON object.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                flatten(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, v, out);
            }
        }
        serde_json::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(node: &str, metric: &str, at_ms: u64, value: f64) -> ServerSample {
        ServerSample { node: node.into(), metric: metric.into(), at_ms, value }
    }

    #[test]
    fn a_run_counts_only_its_measured_phase_and_its_nodes() {
        let samples = vec![
            s("n1", "gc_pause_ms:young", 500, 400.0), // warm-up: left out
            s("n1", "gc_pause_ms:young", 2_000, 20.0),
            s("n2", "gc_pause_ms:young", 3_000, 60.0),
            s("n1", metric::CPU_PCT, 2_000, 50.0),
            s("n2", metric::CPU_PCT, 2_000, 30.0),
            s("n1", metric::CPU_PCT, 3_000, 70.0),
            s("n2", metric::CPU_PCT, 3_000, 50.0),
            s(CLIENT, metric::CPU_PCT, 3_000, 999.0),
        ];
        let r = of_run(&samples, (1_000, 11_000)).unwrap();
        // 80 ms stopped over 2 nodes × 10 s
        assert!((r.gc_stw_pct - 0.4).abs() < 1e-9, "{r:?}");
        assert_eq!(r.max_pause_ms, 60.0);
        assert_eq!(r.cpu_pct, 100.0);
        assert!(of_run(&[s(CLIENT, metric::CPU_PCT, 2_000, 5.0)], (1_000, 11_000)).is_none());
        // nodes whose GC log nobody followed: their pauses are unknown, not zero
        let r = of_run(&[s("n1", metric::CPU_PCT, 2_000, 50.0)], (1_000, 11_000)).unwrap();
        assert!(r.gc_stw_pct.is_nan() && r.max_pause_ms.is_nan() && r.cpu_pct == 50.0, "{r:?}");
    }

    #[test]
    fn a_saved_runs_figures_cover_its_measured_intervals_only() {
        use crate::config::{RunConfig, RunEnvironment};
        use crate::stats::{IntervalSample, OpStats};
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 1_000).unwrap();
        for (index, phase, start_ms) in [(0, Phase::Warmup, 0), (1, Phase::Run, 1_000), (2, Phase::Run, 6_000)] {
            let sample = IntervalSample { index, phase, start_ms, end_ms: start_ms + 5_000, ops: vec![("read".into(), OpStats::default())], backlog: 0 };
            store.add_interval(id, &sample).unwrap();
        }
        // the warm-up's pause is left out: 20 ms stopped over the measured 1-11 s
        store.add_server_samples(id, &[s("n1", "gc_pause_ms:young", 500, 400.0), s("n1", "gc_pause_ms:young", 2_000, 20.0)]).unwrap();
        let without = store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 2_000).unwrap();
        let groups = [Group { label: "a".into(), runs: vec![id, without] }];
        let got = of_groups(&store, &groups).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].runs.len(), 1, "the run without intervals is left out");
        let (run, r) = &got[0].runs[0];
        assert_eq!(*run, id);
        assert!((r.gc_stw_pct - 0.2).abs() < 1e-9 && r.max_pause_ms == 20.0, "{r:?}");
    }

    #[test]
    fn the_interval_of_a_mean_widens_with_fewer_runs_and_more_spread() {
        let one = spread(&[2.0], 0.95).unwrap();
        assert_eq!((one.lo, one.hi), (2.0, 2.0));
        let three = spread(&[1.0, 2.0, 3.0], 0.95).unwrap();
        // mean 2, sd 1, t(0.975, 2) = 4.303: 2 ± 2.484
        assert!((three.hi - 4.484).abs() < 0.01 && (three.lo + 0.484).abs() < 0.01, "{three:?}");
        assert!(spread(&[], 0.95).is_none());
    }

    #[test]
    fn definitions_flatten_to_the_fields_that_differ() {
        let mut a = BTreeMap::new();
        flatten("", &serde_json::json!({"gc": "g1", "heap_mb": 1024, "settings": {"sstable": {"selected_format": "bti"}}}), &mut a);
        assert_eq!(a.get("settings.sstable.selected_format").map(String::as_str), Some("bti"));
        assert_eq!(a.get("heap_mb").map(String::as_str), Some("1024"));
    }
}
