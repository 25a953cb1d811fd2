//! Was a compared run saturated? Then its latencies measure a queue — in flight / throughput,
//! by Little's law — and not the alternative it was meant to test. A run counts as saturated
//! when:
//! - at a fixed rate, the rate was not kept (achieved under 95 % of the target), or the
//!   requests in flight (throughput × mean service time) reached 90 % of the in-flight limit,
//!   so requests waited in the client for a slot;
//! - at maximum throughput with more than one request in flight, the machine's CPU (the local
//!   nodes and casslab together, from the server view) was at 90 % of its cores or more in
//!   the median sample: the queue is the server's.
//!
//! A run at maximum throughput on a cluster casslab cannot see the CPU of gives no verdict.

use super::window::Windows;
use crate::server::{metric, ServerSample};
use std::collections::BTreeMap;

/// What saturation is judged from, for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLoad {
    pub rate_per_s: Option<f64>,
    pub concurrency: usize,
    /// Successful operations per second over the measured windows.
    pub achieved_per_s: f64,
    /// Mean service time (from the actual send), ns.
    pub service_mean_ns: f64,
    /// Mean latency from the intended start, ns.
    pub latency_mean_ns: f64,
    /// The machine's CPU in the median sample of the measured phase, as a share of all its
    /// cores (1.0 = every core busy); `None` when unknown.
    pub cpu_share: Option<f64>,
    pub cores: usize,
}

impl RunLoad {
    /// The load of a run from its windows (the total) and its server samples.
    pub fn of(windows: &Windows, samples: &[ServerSample], rate_per_s: Option<f64>, concurrency: usize, cores: usize) -> RunLoad {
        let (mut ok, mut duration_s, mut service, mut latency) = (0u64, 0.0, (0.0, 0u64), (0.0, 0u64));
        for w in &windows.windows {
            ok += w.total.ok;
            duration_s += w.duration_s;
            service = (service.0 + w.total.service.sum_ns, service.1 + w.total.service.count());
            latency = (latency.0 + w.total.intended.sum_ns, latency.1 + w.total.intended.count());
        }
        let span = windows.windows.first().map(|w| w.start_ms).zip(windows.windows.last().map(|w| w.end_ms));
        RunLoad {
            rate_per_s,
            concurrency,
            achieved_per_s: if duration_s > 0.0 { ok as f64 / duration_s } else { 0.0 },
            service_mean_ns: service.0 / service.1.max(1) as f64,
            latency_mean_ns: latency.0 / latency.1.max(1) as f64,
            cpu_share: span.and_then(|(from, to)| cpu_share(samples, from, to, cores)),
            cores,
        }
    }

    /// Why the run was saturated, in words ("its fixed rate of 500/s was not kept …"), or
    /// `None`.
    pub fn saturated(&self) -> Option<String> {
        let (x, c) = (self.achieved_per_s, self.concurrency as f64);
        let in_flight = x * self.service_mean_ns / 1e9;
        match self.rate_per_s {
            Some(rate) if x < 0.95 * rate => Some(format!("its fixed rate of {rate:.0}/s was not kept (achieved {x:.0}/s)")),
            Some(_) if in_flight >= 0.9 * c => {
                Some(format!("{in_flight:.0} of its {c:.0} allowed requests were in flight on average (throughput × service time): requests waited for a slot"))
            }
            Some(_) => None,
            None if c > 1.0 => {
                let cpu = self.cpu_share.filter(|s| *s >= 0.9)?;
                Some(format!(
                    "it ran at maximum throughput with {c:.0} in flight and the machine's CPU at {:.0}% of its {} cores: its latency ≈ in flight / throughput ({c:.0} / {x:.0} per s = {})",
                    cpu * 100.0,
                    self.cores,
                    seconds(c / x.max(1e-9))
                ))
            }
            None => None,
        }
    }
}

fn seconds(s: f64) -> String {
    if s >= 0.1 {
        format!("{s:.2} s")
    } else {
        format!("{} ms", crate::stats::ms(s * 1e9))
    }
}

/// The median, over the sampling times within `[from_ms, to_ms]`, of the CPU of every process
/// sampled at that time (nodes and casslab), as a share of `cores`.
pub fn cpu_share(samples: &[ServerSample], from_ms: u64, to_ms: u64, cores: usize) -> Option<f64> {
    if cores == 0 {
        return None;
    }
    let mut at: BTreeMap<u64, f64> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.metric == metric::CPU_PCT && (from_ms..=to_ms).contains(&s.at_ms)) {
        *at.entry(s.at_ms).or_default() += s.value;
    }
    let mut v: Vec<f64> = at.into_values().collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2] / (cores as f64 * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rate: Option<f64>, concurrency: usize, achieved: f64, service_ms: f64, cpu: Option<f64>) -> RunLoad {
        RunLoad {
            rate_per_s: rate,
            concurrency,
            achieved_per_s: achieved,
            service_mean_ns: service_ms * 1e6,
            latency_mean_ns: service_ms * 1e6,
            cpu_share: cpu,
            cores: 2,
        }
    }

    #[test]
    fn saturation_is_told_by_the_rate_the_slots_or_the_cpu() {
        assert_eq!(load(Some(500.0), 128, 499.0, 2.0, Some(0.99)).saturated(), None, "at a fixed rate the CPU alone says nothing");
        assert!(load(Some(500.0), 128, 420.0, 2.0, None).saturated().unwrap().contains("fixed rate of 500/s was not kept (achieved 420/s)"));
        assert!(load(Some(500.0), 8, 499.0, 15.0, None).saturated().unwrap().starts_with("7 of its 8 allowed requests were in flight"));
        // the partition-set: 128 sets in flight, 150 sets/s, the node's CPU at its limit
        let why = load(None, 128, 150.0, 853.0, Some(0.97)).saturated().unwrap();
        assert_eq!(why, "it ran at maximum throughput with 128 in flight and the machine's CPU at 97% of its 2 cores: its latency ≈ in flight / throughput (128 / 150 per s = 0.85 s)");
        assert_eq!(load(None, 128, 150.0, 853.0, Some(0.5)).saturated(), None);
        assert_eq!(load(None, 1, 150.0, 6.0, Some(0.99)).saturated(), None, "one in flight is the question, not a queue");
        assert_eq!(load(None, 128, 150.0, 853.0, None).saturated(), None);
    }

    #[test]
    fn the_cpu_is_the_median_of_all_processes_together() {
        let s = |node: &str, at_ms, value| ServerSample { node: node.into(), metric: metric::CPU_PCT.into(), at_ms, value };
        let samples = vec![
            s("127.0.0.1", 1000, 120.0),
            s("client", 1000, 70.0),
            s("127.0.0.1", 2000, 150.0),
            s("client", 2000, 40.0),
            s("127.0.0.1", 3000, 20.0),
            s("127.0.0.1", 9000, 200.0),
        ];
        assert_eq!(cpu_share(&samples, 0, 5000, 2), Some(0.95));
        assert_eq!(cpu_share(&samples, 0, 500, 2), None);
    }
}
