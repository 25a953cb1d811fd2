//! Latency and error accounting: one pair of HdrHistograms per operation (latency from the
//! intended start time, and service time from the actual send), error counts by kind, and the
//! per-interval samples the engine emits, what a run phase left unstarted ([`NeverStarted`]) or
//! reached of its count ([`CountReached`]); [`LatencyKind`] names which of the two latencies a
//! figure is about, and [`ms`] formats one for people. Pure data and arithmetic; no I/O, no
//! clocks.

pub mod checked_reads;
pub mod recall_counts;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Highest latency the histograms track: 10 minutes, in nanoseconds. Larger values are clamped.
pub const MAX_TRACKABLE_NS: u64 = 600_000_000_000;
/// Significant decimal digits of every histogram.
pub const SIGFIGS: u8 = 3;

/// A fresh latency histogram (nanoseconds, 3 significant digits).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIGFIGS).expect("valid histogram bounds")
}

/// How a failed request failed. Failures are data: they are counted, never fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Server-side read/write timeout or the client's request timeout.
    Timeout,
    /// Not enough replicas alive for the consistency level.
    Unavailable,
    /// The coordinator said it is overloaded, or rate limited the request.
    Overloaded,
    /// No connection to any node could be used.
    Connection,
    /// Anything else (invalid request, server error, ...).
    Other,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 5] = [ErrorKind::Timeout, ErrorKind::Unavailable, ErrorKind::Overloaded, ErrorKind::Connection, ErrorKind::Other];
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Connection => "connection",
            ErrorKind::Other => "other",
        }
    }
}

/// Figures recorded beside an operation, under `<op>.<sub>`: `request` — each statement a
/// set read (`partitions:`) sends, timed on its own; `not_applied` — conditional writes (LWT)
/// the cluster did not apply (they also count as completed operations of `<op>`).
pub const SUB_OPS: &[&str] = &["request", "not_applied"];

/// Whether `name` is a figure recorded beside an operation (`read_set.request`) rather than an
/// operation; totals and throughput leave such figures out.
pub fn is_sub_op(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, s)| SUB_OPS.contains(&s))
}

/// Everything recorded for one operation over some span of time.
#[derive(Debug, Clone)]
pub struct OpStats {
    /// Latency measured from the intended start time (open loop). Equals service time
    /// when the run is not rate limited.
    pub intended: Histogram<u64>,
    /// Latency measured from the moment the request was actually sent.
    pub service: Histogram<u64>,
    /// Successful operations (errors are not in the histograms).
    pub ok: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
    /// Operations (completed or failed) started more than [`LATE_NS`] after their intended
    /// start: a client behind its fixed-rate schedule.
    pub late: u64,
    /// The largest delay between an operation's intended and actual start.
    pub max_lag_ns: u64,
    /// Completed executions whose reads all returned no row.
    pub empty_reads: u64,
    /// Rows returned by the reads of completed executions (counted on the plain statement
    /// path; 0 for writes and set reads).
    pub rows_read: u64,
    /// Checked reads by class and the first violations (`None`: the operation checked none).
    pub verify: Option<Box<checked_reads::VerifyStats>>,
    /// Vector searches judged against the exact nearest neighbours (`None`: none searched).
    pub recall: Option<recall_counts::RecallCounts>,
}

/// How much later than intended an operation may start before it counts as started late:
/// more than the engine's timer granularity and a busy machine's wake-up jitter.
pub const LATE_NS: u64 = 1_000_000;

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            intended: new_histogram(),
            service: new_histogram(),
            ok: 0,
            errors: BTreeMap::new(),
            late: 0,
            max_lag_ns: 0,
            empty_reads: 0,
            rows_read: 0,
            verify: None,
            recall: None,
        }
    }
}

/// `to` += `from`; values beyond `to`'s bounds are clamped to them.
fn add_histogram(to: &mut Histogram<u64>, from: &Histogram<u64>) {
    if to.add(from).is_err() {
        for v in from.iter_recorded() {
            to.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

impl OpStats {
    #[inline]
    pub fn record_ok(&mut self, intended_ns: u64, service_ns: u64) {
        self.ok += 1;
        self.intended.saturating_record(intended_ns.max(1));
        self.service.saturating_record(service_ns.max(1));
    }

    #[inline]
    pub fn record_error(&mut self, kind: ErrorKind) {
        *self.errors.entry(kind).or_default() += 1;
    }

    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Records how long after its intended start an operation was sent.
    #[inline]
    pub fn record_start_lag(&mut self, lag_ns: u64) {
        if lag_ns > LATE_NS {
            self.late += 1;
        }
        self.max_lag_ns = self.max_lag_ns.max(lag_ns);
    }

    /// Adds another span's records into this one. Counts saturate, and a histogram of other
    /// bounds (one read from an export that was edited) is added value by value, clamped to
    /// these bounds: what comes from outside never ends the process.
    pub fn merge(&mut self, other: &OpStats) {
        add_histogram(&mut self.intended, &other.intended);
        add_histogram(&mut self.service, &other.service);
        self.ok = self.ok.saturating_add(other.ok);
        for (k, v) in &other.errors {
            let n = self.errors.entry(*k).or_default();
            *n = n.saturating_add(*v);
        }
        self.late = self.late.saturating_add(other.late);
        self.max_lag_ns = self.max_lag_ns.max(other.max_lag_ns);
        self.empty_reads = self.empty_reads.saturating_add(other.empty_reads);
        self.rows_read = self.rows_read.saturating_add(other.rows_read);
        if let Some(v) = &other.verify {
            self.verify.get_or_insert_default().merge(v);
        }
        if let Some(r) = &other.recall {
            self.recall.get_or_insert_default().merge(r);
        }
    }

    /// The checked reads' counts (`None` when the operation checked none).
    pub fn verify_counts(&self) -> Option<checked_reads::VerifyCounts> {
        self.verify.as_ref().map(|v| v.counts)
    }

    pub fn reset(&mut self) {
        self.intended.reset();
        self.service.reset();
        self.ok = 0;
        self.errors.clear();
        self.late = 0;
        self.max_lag_ns = 0;
        self.empty_reads = 0;
        self.rows_read = 0;
        self.verify = None;
        self.recall = None;
    }
}

/// Formats nanoseconds as milliseconds with a precision that suits the size: `123`, `12.3`,
/// `1.23`.
pub fn ms(ns: f64) -> String {
    let m = ns / 1e6;
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}

/// Which of an operation's two latencies a figure, a comparison or an export is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyKind {
    /// From each request's intended start time (includes time spent queued behind a rate).
    Intended,
    /// From the moment each request was sent.
    Service,
}

impl LatencyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LatencyKind::Intended => "intended",
            LatencyKind::Service => "service",
        }
    }

    pub fn histogram(self, stats: &OpStats) -> &Histogram<u64> {
        match self {
            LatencyKind::Intended => &stats.intended,
            LatencyKind::Service => &stats.service,
        }
    }
}

/// Percentiles of one histogram, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p95_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl LatencySummary {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: h.len(),
            mean_ns: h.mean(),
            p50_ns: h.value_at_quantile(0.50),
            p95_ns: h.value_at_quantile(0.95),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
        }
    }
}

/// One operation's figures over a span (an interval or a whole phase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    pub op: String,
    pub ok: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
    pub ops_per_s: f64,
    /// Latency from the intended start time.
    pub latency: LatencySummary,
    /// Service time (from the actual send).
    pub service: LatencySummary,
    /// Executions whose reads all returned no row (0 in runs saved before it was kept).
    #[serde(default)]
    pub empty_reads: u64,
    /// Rows the reads returned, over all executions.
    #[serde(default)]
    pub rows_read: u64,
    /// Checked reads by class, for an operation whose reads were verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<checked_reads::VerifyCounts>,
    /// Vector searches judged against the exact nearest neighbours, for a searching operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<recall_counts::RecallCounts>,
}

impl OpSummary {
    pub fn of(op: &str, stats: &OpStats, duration_s: f64) -> Self {
        OpSummary {
            op: op.to_string(),
            ok: stats.ok,
            errors: stats.errors.clone(),
            ops_per_s: if duration_s > 0.0 { stats.ok as f64 / duration_s } else { 0.0 },
            latency: LatencySummary::of(&stats.intended),
            service: LatencySummary::of(&stats.service),
            empty_reads: stats.empty_reads,
            rows_read: stats.rows_read,
            verify: stats.verify_counts(),
            recall: stats.recall,
        }
    }

    /// Whether the operation reads (its reads returned rows, or came back empty).
    pub fn reads(&self) -> bool {
        self.rows_read > 0 || self.empty_reads > 0
    }

    /// Rows returned per execution.
    pub fn rows_per_op(&self) -> f64 {
        self.rows_read as f64 / self.ok.max(1) as f64
    }
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// Which phase of a workload a sample belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Load,
    Warmup,
    Run,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Warmup => "warmup",
            Phase::Run => "run",
        }
    }
    pub fn parse(s: &str) -> Option<Phase> {
        match s {
            "load" => Some(Phase::Load),
            "warmup" => Some(Phase::Warmup),
            "run" => Some(Phase::Run),
            _ => None,
        }
    }
}

/// The load asked of one interval of the run phase when it follows a rate (a fixed one or a
/// schedule) or a schedule of requests in flight, sent beside its [`IntervalSample`]: what
/// the schedule intended, what the engine started, and the stage it was in.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntervalLoad {
    /// The [`IntervalSample::index`] it belongs to.
    pub index: u32,
    /// Operations per second the schedule intended over the interval (this loader's share);
    /// `None` in a closed-loop run.
    pub offered_per_s: Option<f64>,
    /// Operations the engine started in the interval.
    pub started: u64,
    /// Requests in flight allowed in the middle of the interval, under a schedule of them.
    pub concurrency: Option<u32>,
    /// The schedule's stage in the middle of the interval (from 0, in the order the run went
    /// through them) and what it was (`ramp 100..5000 over 60s`).
    pub stage: u32,
    pub stage_label: String,
    /// The interval's phase: warm-up or run.
    #[serde(default = "run_phase")]
    pub phase: Phase,
    /// How the schedule's level went over the interval: held at one level, moving (a ramp, a
    /// sine) or between two held levels; `None` for runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub course: Option<crate::load_shape::Course>,
}

fn run_phase() -> Phase {
    Phase::Run
}

/// The operations of an open-loop run phase that were due by its end but never started: the
/// client was that far behind its schedule when the run stopped. They have no latency (they
/// were never sent) and no operation (one is drawn when an operation starts), so they are not
/// in the histograms; the run says how many there were and how late the oldest was.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct NeverStarted {
    /// Due by the end and never started.
    pub count: u64,
    /// Of those, the ones due more than [`LATE_NS`] before the end (the others were about to
    /// start: the wake-up jitter at the stop).
    pub late: u64,
    /// How long before the end the oldest of them was due, in ms (0 without any).
    pub oldest_lag_ms: f64,
}

/// A run phase that ends after a count of operations (`--count`): the operations asked of this
/// loader (its slice of a sharded run's count; a merged run's, every loader's) and the ones
/// that completed after the warm-up, successes and errors alike. They are equal unless the
/// run was stopped first, or the count was below the requests still in flight when the
/// warm-up ended (those complete in the measured part too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CountReached {
    pub asked: u64,
    pub completed: u64,
}

impl CountReached {
    /// The operations that completed in `ops` (name and record), successes and errors: not
    /// the figures recorded beside them (`<op>.request`).
    pub fn completed_in<'a>(ops: impl IntoIterator<Item = (&'a String, &'a OpStats)>) -> u64 {
        ops.into_iter().filter(|(n, _)| !is_sub_op(n)).map(|(_, s)| s.ok + s.error_count()).sum()
    }
}

/// What the engine emits once per sampling interval: the records of every operation
/// that completed inside `[start_ms, end_ms)` (milliseconds since the run started).
#[derive(Debug, Clone)]
pub struct IntervalSample {
    pub index: u32,
    pub phase: Phase,
    pub start_ms: u64,
    pub end_ms: u64,
    /// One entry per operation of the phase, in the workload's order.
    pub ops: Vec<(String, OpStats)>,
    /// Operations that were due (rate mode) but not yet started at the end of the interval.
    pub backlog: u64,
}

impl IntervalSample {
    pub fn duration_s(&self) -> f64 {
        (self.end_ms.saturating_sub(self.start_ms)) as f64 / 1000.0
    }
    pub fn summaries(&self) -> Vec<OpSummary> {
        let d = self.duration_s();
        self.ops.iter().map(|(name, s)| OpSummary::of(name, s, d)).collect()
    }
    /// All operations of the interval merged into one.
    pub fn total(&self) -> OpStats {
        let mut t = OpStats::default();
        for (_, s) in self.ops.iter().filter(|(n, _)| !is_sub_op(n)) {
            t.merge(s);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_errors_and_histograms() {
        let mut a = OpStats::default();
        a.record_ok(1_000_000, 900_000);
        a.record_error(ErrorKind::Timeout);
        let mut b = OpStats::default();
        b.record_ok(3_000_000, 2_000_000);
        b.record_error(ErrorKind::Timeout);
        b.record_error(ErrorKind::Overloaded);
        a.record_start_lag(LATE_NS / 2);
        b.record_start_lag(3 * LATE_NS);
        b.empty_reads = 2;
        a.merge(&b);
        assert_eq!((a.late, a.max_lag_ns, a.empty_reads), (1, 3 * LATE_NS, 2), "a start within LATE_NS is on time");
        assert_eq!(a.ok, 2);
        assert_eq!(a.errors[&ErrorKind::Timeout], 2);
        assert_eq!(a.errors[&ErrorKind::Overloaded], 1);
        assert_eq!(a.error_count(), 3);
        let mut r = a.clone();
        r.reset();
        assert_eq!((r.late, r.max_lag_ns, r.empty_reads, r.ok), (0, 0, 0, 0));
        assert_eq!(a.intended.len(), 2);
        let s = LatencySummary::of(&a.intended);
        assert!((s.max_ns as f64 - 3_000_000.0).abs() / 3e6 < 0.001, "max {}", s.max_ns);
        assert!((s.mean_ns - 2_000_000.0).abs() / 2e6 < 0.001, "mean {}", s.mean_ns);
    }

    #[test]
    fn percentiles_are_within_three_significant_digits() {
        let mut s = OpStats::default();
        for i in 1..=10_000u64 {
            s.record_ok(i * 1_000, i * 1_000);
        }
        let l = LatencySummary::of(&s.intended);
        for (got, want) in [(l.p50_ns, 5_000_000.0), (l.p99_ns, 9_900_000.0), (l.p999_ns, 9_990_000.0)] {
            assert!((got as f64 - want).abs() / want < 0.001, "got {got}, want {want}");
        }
        assert_eq!(l.count, 10_000);
    }

    #[test]
    fn huge_latencies_are_clamped_not_lost() {
        let mut s = OpStats::default();
        s.record_ok(u64::MAX, 5);
        assert_eq!(s.intended.len(), 1);
        assert!(s.intended.max() >= MAX_TRACKABLE_NS / 2);
    }

    #[test]
    fn interval_rates_use_its_duration() {
        let mut st = OpStats::default();
        for _ in 0..500 {
            st.record_ok(10, 10);
        }
        let iv = IntervalSample { index: 0, phase: Phase::Run, start_ms: 1000, end_ms: 1500, ops: vec![("read".into(), st)], backlog: 0 };
        let s = iv.summaries();
        assert_eq!(s[0].ops_per_s, 1000.0);
        assert_eq!(iv.total().ok, 500);
    }

    #[test]
    fn ms_precision() {
        assert_eq!(ms(1_234_567.0), "1.23");
        assert_eq!(ms(12_345_678.0), "12.3");
        assert_eq!(ms(123_456_789.0), "123");
    }

    #[test]
    fn latency_kinds_pick_their_histogram() {
        let mut s = OpStats::default();
        s.record_ok(5_000_000, 1_000_000);
        assert!(LatencyKind::Intended.histogram(&s).max() > LatencyKind::Service.histogram(&s).max());
        assert_eq!((LatencyKind::Intended.as_str(), LatencyKind::Service.as_str()), ("intended", "service"));
    }
}
