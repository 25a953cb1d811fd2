//! Cassandra's own latency as the reports use it: which source a run has (the nodes'
//! histograms read through Jolokia, in microseconds, or `system_views`, whose columns Cassandra
//! up to 5.0 rounds to whole milliseconds), the per-interval p99 series from it in ms, and how a
//! figure is shown: one at or below its source's resolution reads "< 1 ms" and is never used as
//! a measured value. The explain lines, the suspects and the charts all take their figures and
//! their wording from here, so they always name the same source.

use super::jolokia;
use super::series::IntervalSeries;
use super::ServerSample;
use std::collections::BTreeMap;

/// Where a run's figures of Cassandra's own latency come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LatencySource {
    /// The nodes' `Table` latency histograms through Jolokia: each interval's own requests, in µs.
    Histograms,
    /// `system_views` latency tables; their `_ms` columns times `to_ms` give ms.
    SystemViews { to_ms: f64 },
}

impl LatencySource {
    /// The best source among a run's samples: the histograms when any node gave them.
    pub fn of(samples: &[ServerSample], cassandra_version: Option<&str>) -> LatencySource {
        if samples.iter().any(|s| s.metric.starts_with(jolokia::PREFIX)) {
            LatencySource::Histograms
        } else {
            LatencySource::SystemViews { to_ms: super::vtables::latency_column_to_ms(cassandra_version) }
        }
    }

    /// The smallest figure the source tells apart from zero, in ms.
    pub fn resolution_ms(self) -> f64 {
        match self {
            LatencySource::Histograms => 0.001,
            // seconds rounded to three decimals
            LatencySource::SystemViews { to_ms } if to_ms >= 1000.0 => 1.0,
            LatencySource::SystemViews { .. } => 0.001,
        }
    }

    /// Whether `ms` is a measured value rather than "too small for this source to see".
    pub fn resolves(self, ms: f64) -> bool {
        ms > self.resolution_ms()
    }

    /// The source in words, with its resolution.
    pub fn label(self) -> &'static str {
        match self {
            LatencySource::Histograms => "Cassandra's histograms through Jolokia, in µs",
            LatencySource::SystemViews { to_ms } if to_ms >= 1000.0 => "system_views, rounded to 1 ms",
            LatencySource::SystemViews { .. } => "system_views",
        }
    }

    /// A short tag for chart legends.
    pub fn tag(self) -> &'static str {
        match self {
            LatencySource::Histograms => "JMX, µs",
            LatencySource::SystemViews { to_ms } if to_ms >= 1000.0 => "system_views, 1 ms steps",
            LatencySource::SystemViews { .. } => "system_views",
        }
    }

    /// `0.42 ms`, or `< 1 ms` for a figure at or below the resolution.
    pub fn show(self, ms: f64) -> String {
        let r = self.resolution_ms();
        match () {
            _ if !self.resolves(ms) && r >= 1.0 => format!("< {r:.0} ms"),
            _ if !self.resolves(ms) => format!("< {:.0} µs", r * 1000.0),
            _ if ms < 1.0 => format!("{ms:.3} ms"),
            _ => format!("{} ms", crate::stats::ms(ms * 1e6)),
        }
    }

    /// The metric prefix of a latency series in this source.
    fn prefix(self, what: IntervalSeries) -> Option<&'static str> {
        Some(match (self, what) {
            (LatencySource::Histograms, IntervalSeries::CoordinatorReadP99) => "jmx.coordinator_read_latency.p99_us:",
            (LatencySource::Histograms, IntervalSeries::CoordinatorWriteP99) => "jmx.coordinator_write_latency.p99_us:",
            (LatencySource::Histograms, IntervalSeries::LocalReadP99) => "jmx.local_read_latency.p99_us:",
            (LatencySource::Histograms, IntervalSeries::LocalWriteP99) => "jmx.local_write_latency.p99_us:",
            (LatencySource::SystemViews { .. }, IntervalSeries::CoordinatorReadP99) => "coordinator_read_latency.p99th_ms:",
            (LatencySource::SystemViews { .. }, IntervalSeries::CoordinatorWriteP99) => "coordinator_write_latency.p99th_ms:",
            (LatencySource::SystemViews { .. }, IntervalSeries::LocalReadP99) => "local_read_latency.p99th_ms:",
            (LatencySource::SystemViews { .. }, IntervalSeries::LocalWriteP99) => "local_write_latency.p99th_ms:",
            _ => return None,
        })
    }

    /// A sample's value in ms.
    fn to_ms_of(self, value: f64) -> f64 {
        match self {
            LatencySource::Histograms => value / 1000.0,
            LatencySource::SystemViews { to_ms } => value * to_ms,
        }
    }
}

/// One value per `(start_ms, end_ms)` interval of a latency series (`what`: one of the four
/// p99 series), in ms: the largest over nodes and the workload's tables of the polls inside
/// the interval (`casslab_meta` left out), `None` where no poll fell.
pub fn per_interval_ms(samples: &[ServerSample], intervals: &[(u64, u64)], what: IntervalSeries, source: LatencySource) -> Vec<Option<f64>> {
    let Some(prefix) = source.prefix(what) else { return vec![None; intervals.len()] };
    let mut sorted: Vec<(u64, f64)> =
        samples.iter().filter(|s| s.metric.starts_with(prefix) && !s.metric.ends_with(":casslab_meta")).map(|s| (s.at_ms, source.to_ms_of(s.value))).collect();
    sorted.sort_by_key(|p| p.0);
    intervals
        .iter()
        .map(|&(start, end)| {
            let from = sorted.partition_point(|p| p.0 < start);
            let to = from + sorted[from..].partition_point(|p| p.0 < end);
            sorted[from..to].iter().map(|p| p.1).reduce(f64::max)
        })
        .collect()
}

/// Cassandra's coordinator p99 (reads and writes, the larger) over one window, in ms, as the
/// suspects quote it: the largest of the polls inside it.
pub fn coordinator_p99_in(samples: &[ServerSample], from_ms: u64, to_ms: u64, source: LatencySource) -> Option<f64> {
    [IntervalSeries::CoordinatorReadP99, IntervalSeries::CoordinatorWriteP99]
        .into_iter()
        .filter_map(|what| per_interval_ms(samples, &[(from_ms, to_ms)], what, source)[0])
        .reduce(f64::max)
}

/// How many requests the histograms counted per node over the run (a check that they saw the
/// workload): node → requests.
pub fn histogram_counts(samples: &[ServerSample]) -> BTreeMap<&str, f64> {
    let mut out: BTreeMap<&str, f64> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.metric.starts_with("jmx.coordinator_") && s.metric.contains(".count:") && !s.metric.ends_with(":casslab_meta")) {
        *out.entry(s.node.as_str()).or_default() += s.value;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(metric: &str, at_ms: u64, value: f64) -> ServerSample {
        ServerSample { node: "n".into(), metric: metric.into(), at_ms, value }
    }

    #[test]
    fn the_histograms_win_over_system_views_and_figures_below_resolution_say_so() {
        let vt = vec![s("coordinator_read_latency.p99th_ms:kv", 500, 0.001), s("coordinator_read_latency.p99th_ms:kv", 1500, 0.0)];
        let src = LatencySource::of(&vt, Some("5.0.9"));
        assert_eq!(src, LatencySource::SystemViews { to_ms: 1000.0 });
        let v = per_interval_ms(&vt, &[(0, 1000), (1000, 2000)], IntervalSeries::CoordinatorReadP99, src);
        assert_eq!(v, [Some(1.0), Some(0.0)]);
        assert_eq!((src.show(1.0), src.show(0.0), src.show(4.0)), ("< 1 ms".to_string(), "< 1 ms".to_string(), "4.00 ms".to_string()));
        assert!(!src.resolves(1.0) && src.resolves(2.0));

        let mut both = vt.clone();
        both.push(s("jmx.coordinator_read_latency.p99_us:kv", 600, 412.0));
        both.push(s("jmx.coordinator_read_latency.p99_us:casslab_meta", 600, 9000.0));
        let src = LatencySource::of(&both, Some("5.0.9"));
        assert_eq!(src, LatencySource::Histograms);
        let v = per_interval_ms(&both, &[(0, 1000), (1000, 2000)], IntervalSeries::CoordinatorReadP99, src);
        assert_eq!(v, [Some(0.412), None]);
        assert_eq!((src.show(0.412), src.show(0.0)), ("0.412 ms".to_string(), "< 1 µs".to_string()));
        assert!(src.label().contains("µs"));
        assert_eq!(coordinator_p99_in(&both, 0, 1000, src), Some(0.412));
    }
}
