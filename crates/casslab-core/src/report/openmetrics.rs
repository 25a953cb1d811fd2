//! A running run's figures for Prometheus (`casslab run --metrics-listen ADDR`): [`LiveMetrics`]
//! adds up the intervals as they close, and [`LiveMetrics::render`] writes them in the
//! Prometheus text exposition format (0.0.4) or in OpenMetrics 1.0, so a test shows up next to
//! the cluster's own metrics in Grafana; [`serve`] answers `GET /metrics` with them (the
//! binary binds the address and keeps the figures fed).
//!
//! Series (labels `run`, `workload`, `phase`, `op`):
//! - `casslab_operations_total` (counter): operations that completed;
//! - `casslab_errors_total` (counter, also `kind`): failed operations by kind;
//! - `casslab_throughput_ops_per_second` (gauge): over the last interval;
//! - `casslab_latency_seconds` (summary: latency from the intended start): quantiles 0.5, 0.95,
//!   0.99, 0.999 and 1 over the last interval, `_sum` and `_count` since the run started;
//!   `casslab_service_time_seconds` the same for service time (from the actual send);
//! - `casslab_verified_reads_total` (counter, also `class`): checked reads by class (ok, stale,
//!   missing, corrupt, resurrected, expired), for operations whose reads are verified;
//! - `casslab_run_info` (gauge 1) with the run's `run`, `workload` and current `phase`;
//!   `casslab_interval_end_timestamp_seconds` (gauge): the last interval's end, Unix time.

use crate::stats::{ErrorKind, IntervalSample, LatencySummary, OpStats, Phase};
use std::collections::BTreeMap;
use std::fmt::Write;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the exposition format is.
pub const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The quantiles of the summaries.
const QUANTILES: [(&str, f64); 5] = [("0.5", 0.5), ("0.95", 0.95), ("0.99", 0.99), ("0.999", 0.999), ("1", 1.0)];

#[derive(Debug, Default, Clone)]
struct Totals {
    ok: u64,
    errors: BTreeMap<ErrorKind, u64>,
    latency_sum_ns: f64,
    service_sum_ns: f64,
    /// The last interval's figures.
    ops_per_s: f64,
    latency: Option<LatencySummary>,
    service: Option<LatencySummary>,
    latency_max_ns: u64,
    service_max_ns: u64,
    /// Checked reads since the run started (`None`: the operation checks none).
    verify: Option<crate::verify::VerifyCounts>,
}

/// The figures of the run in progress.
#[derive(Debug, Default, Clone)]
pub struct LiveMetrics {
    run: Option<i64>,
    workload: String,
    t0_unix_ms: i64,
    phase: Option<Phase>,
    last_end_unix_ms: Option<i64>,
    /// In the order the operations first appeared.
    ops: Vec<((Phase, String), Totals)>,
}

impl LiveMetrics {
    /// A run began: what follows belongs to it (the totals of an earlier run are dropped).
    pub fn started(&mut self, run: i64, workload: &str, t0_unix_ms: i64) {
        *self = LiveMetrics { run: Some(run), workload: workload.to_string(), t0_unix_ms, ..LiveMetrics::default() };
    }

    /// An interval closed.
    pub fn interval(&mut self, s: &IntervalSample) {
        self.phase = Some(s.phase);
        self.last_end_unix_ms = Some(self.t0_unix_ms + s.end_ms as i64);
        let d = s.duration_s();
        for (op, st) in &s.ops {
            let i = match self.ops.iter().position(|(k, _)| k.0 == s.phase && k.1 == *op) {
                Some(i) => i,
                None => {
                    self.ops.push(((s.phase, op.clone()), Totals::default()));
                    self.ops.len() - 1
                }
            };
            add(&mut self.ops[i].1, st, d);
        }
    }

    /// The exposition: Prometheus' text format, or OpenMetrics (which ends with `# EOF`).
    pub fn render(&self, openmetrics: bool) -> String {
        let mut out = String::new();
        let base = match self.run {
            Some(run) => format!("run=\"{run}\",workload=\"{}\"", label(&self.workload)),
            None => String::new(),
        };
        let with = |extra: &str| {
            if base.is_empty() {
                extra.to_string()
            } else if extra.is_empty() {
                base.clone()
            } else {
                format!("{base},{extra}")
            }
        };
        let counter = |out: &mut String, name: &str, help: &str| {
            let family = if openmetrics { name.trim_end_matches("_total") } else { name };
            let _ = writeln!(out, "# HELP {family} {help}\n# TYPE {family} counter");
        };
        let head = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };

        head(&mut out, "casslab_run_info", "gauge", "The run in progress (1), with its phase.");
        if let Some(phase) = self.phase.or(self.run.map(|_| Phase::Load)) {
            let _ = writeln!(out, "casslab_run_info{{{}}} 1", with(&format!("phase=\"{}\"", phase.as_str())));
        }
        if let Some(end) = self.last_end_unix_ms {
            head(&mut out, "casslab_interval_end_timestamp_seconds", "gauge", "The end of the last closed interval, Unix time.");
            let _ = writeln!(out, "casslab_interval_end_timestamp_seconds{{{}}} {}", with(""), end as f64 / 1000.0);
        }
        counter(&mut out, "casslab_operations_total", "Operations that completed.");
        for ((phase, op), t) in &self.ops {
            let _ = writeln!(out, "casslab_operations_total{{{}}} {}", with(&op_labels(*phase, op)), t.ok);
        }
        counter(&mut out, "casslab_errors_total", "Operations that failed, by kind.");
        for ((phase, op), t) in &self.ops {
            for (kind, n) in &t.errors {
                let _ = writeln!(out, "casslab_errors_total{{{}}} {n}", with(&format!("{},kind=\"{}\"", op_labels(*phase, op), kind.as_str())));
            }
        }
        head(&mut out, "casslab_throughput_ops_per_second", "gauge", "Operations completed per second over the last interval.");
        for ((phase, op), t) in &self.ops {
            let _ = writeln!(out, "casslab_throughput_ops_per_second{{{}}} {}", with(&op_labels(*phase, op)), t.ops_per_s);
        }
        for (name, help, service) in [
            ("casslab_latency_seconds", "Latency from the intended start: quantiles over the last interval, sum and count since the run started.", false),
            (
                "casslab_service_time_seconds",
                "Service time (from the actual send): quantiles over the last interval, sum and count since the run started.",
                true,
            ),
        ] {
            head(&mut out, name, "summary", help);
            for ((phase, op), t) in &self.ops {
                let labels = with(&op_labels(*phase, op));
                let (last, max_ns, sum_ns) =
                    if service { (&t.service, t.service_max_ns, t.service_sum_ns) } else { (&t.latency, t.latency_max_ns, t.latency_sum_ns) };
                if let Some(l) = last {
                    for (q, _) in QUANTILES {
                        let ns = match q {
                            "0.5" => l.p50_ns,
                            "0.95" => l.p95_ns,
                            "0.99" => l.p99_ns,
                            "0.999" => l.p999_ns,
                            _ => max_ns,
                        };
                        let _ = writeln!(out, "{name}{{{labels},quantile=\"{q}\"}} {}", ns as f64 / 1e9);
                    }
                }
                let _ = writeln!(out, "{name}_sum{{{labels}}} {}", sum_ns / 1e9);
                let _ = writeln!(out, "{name}_count{{{labels}}} {}", t.ok);
            }
        }
        if self.ops.iter().any(|(_, t)| t.verify.is_some()) {
            counter(
                &mut out,
                "casslab_verified_reads_total",
                "Verified reads by class: ok, or not what was written (stale, missing, corrupt, resurrected, expired).",
            );
            for ((phase, op), t) in &self.ops {
                let Some(c) = &t.verify else { continue };
                for class in std::iter::once(crate::verify::Class::Ok).chain(crate::verify::Class::VIOLATIONS) {
                    let _ = writeln!(
                        out,
                        "casslab_verified_reads_total{{{}}} {}",
                        with(&format!("{},class=\"{}\"", op_labels(*phase, op), class.as_str())),
                        c.of(class)
                    );
                }
            }
        }
        if openmetrics {
            out.push_str("# EOF\n");
        }
        out
    }
}

fn add(t: &mut Totals, st: &OpStats, duration_s: f64) {
    t.ok += st.ok;
    for (k, v) in &st.errors {
        *t.errors.entry(*k).or_default() += v;
    }
    t.latency_sum_ns += st.intended.mean() * st.intended.len() as f64;
    t.service_sum_ns += st.service.mean() * st.service.len() as f64;
    t.ops_per_s = if duration_s > 0.0 { st.ok as f64 / duration_s } else { 0.0 };
    let (l, s) = (LatencySummary::of(&st.intended), LatencySummary::of(&st.service));
    (t.latency_max_ns, t.service_max_ns) = (l.max_ns, s.max_ns);
    (t.latency, t.service) = (Some(l), Some(s));
    if let Some(c) = st.verify_counts() {
        t.verify.get_or_insert_default().merge(&c);
    }
}

fn op_labels(phase: Phase, op: &str) -> String {
    format!("phase=\"{}\",op=\"{}\"", phase.as_str(), label(op))
}

/// A label value with `\`, `"` and line breaks escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Answers `GET /metrics` on `listener` with the figures of `metrics` until the process ends
/// (a small HTTP/1.x server for `--metrics-listen`; a listener that cannot be handed to tokio
/// serves nothing).
pub async fn serve(listener: std::net::TcpListener, metrics: std::sync::Arc<std::sync::Mutex<LiveMetrics>>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
    while let Ok((conn, _)) = listener.accept().await {
        tokio::spawn(answer(conn, metrics.clone()));
    }
}

/// One HTTP/1.x exchange: `GET /metrics` (or `/`) gets the figures, anything else a 404.
async fn answer(mut conn: tokio::net::TcpStream, metrics: std::sync::Arc<std::sync::Mutex<LiveMetrics>>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match conn.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let openmetrics = head.lines().any(|l| l.to_ascii_lowercase().starts_with("accept:") && l.contains("application/openmetrics-text"));
    let (status, content_type, body) = match (method, path.split('?').next().unwrap_or("")) {
        ("GET", "/metrics" | "/") => {
            let body = metrics.lock().unwrap_or_else(|e| e.into_inner()).render(openmetrics);
            ("200 OK", if openmetrics { OPENMETRICS_CONTENT_TYPE } else { PROMETHEUS_CONTENT_TYPE }, body)
        }
        _ => ("404 Not Found", "text/plain; charset=utf-8", "casslab serves GET /metrics\n".to_string()),
    };
    let reply = format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    let _ = conn.write_all(reply.as_bytes()).await;
    let _ = conn.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(index: u32, ok_ns: &[u64], errors: u64) -> IntervalSample {
        let mut st = OpStats::default();
        for ns in ok_ns {
            st.record_ok(*ns, ns / 2);
        }
        for _ in 0..errors {
            st.record_error(ErrorKind::Timeout);
        }
        IntervalSample {
            index,
            phase: Phase::Run,
            start_ms: u64::from(index) * 1000,
            end_ms: u64::from(index + 1) * 1000,
            ops: vec![("read \"x\"".into(), st)],
            backlog: 0,
        }
    }

    #[test]
    fn counters_add_up_and_quantiles_are_the_last_intervals() {
        let mut m = LiveMetrics::default();
        m.started(12, "kv", 1_700_000_000_000);
        m.interval(&sample(0, &[1_000_000; 10], 1));
        m.interval(&sample(1, &[3_000_000; 4], 2));
        let text = m.render(false);
        let l = "run=\"12\",workload=\"kv\",phase=\"run\",op=\"read \\\"x\\\"\"";
        assert!(text.contains(&format!("casslab_operations_total{{{l}}} 14\n")), "{text}");
        assert!(text.contains(&format!("casslab_errors_total{{{l},kind=\"timeout\"}} 3\n")), "{text}");
        assert!(text.contains(&format!("casslab_throughput_ops_per_second{{{l}}} 4\n")), "{text}");
        assert!(text.contains(&format!("casslab_latency_seconds_count{{{l}}} 14\n")), "{text}");
        let p99: f64 = text
            .lines()
            .find(|x| x.starts_with("casslab_latency_seconds{") && x.contains("quantile=\"0.99\""))
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((p99 - 0.003).abs() < 0.00001, "the last interval's p99: {p99}");
        assert!(text.contains("# TYPE casslab_operations_total counter"));
        assert!(text.contains("casslab_interval_end_timestamp_seconds{run=\"12\",workload=\"kv\"} 1700000002\n"), "{text}");
        assert!(!text.contains("# EOF"));
        let om = m.render(true);
        assert!(om.contains("# TYPE casslab_operations counter") && om.ends_with("# EOF\n"), "{om}");
        assert!(!text.contains("casslab_verified_reads_total"), "no series for reads not verified");
    }

    #[test]
    fn verified_reads_are_counted_by_class() {
        let mut m = LiveMetrics::default();
        m.started(3, "kv", 0);
        for (ok, stale) in [(90, 1), (99, 2)] {
            let mut s = sample(0, &[1_000_000], 0);
            s.ops[0].1.verify =
                Some(Box::new(crate::verify::VerifyStats { counts: crate::verify::VerifyCounts { ok, stale, ..Default::default() }, samples: vec![] }));
            m.interval(&s);
        }
        let text = m.render(false);
        let l = "run=\"3\",workload=\"kv\",phase=\"run\",op=\"read \\\"x\\\"\"";
        assert!(text.contains(&format!("casslab_verified_reads_total{{{l},class=\"stale\"}} 3\n")), "{text}");
        assert!(text.contains(&format!("casslab_verified_reads_total{{{l},class=\"ok\"}} 189\n")), "{text}");
        assert!(text.contains(&format!("casslab_verified_reads_total{{{l},class=\"missing\"}} 0\n")), "{text}");
    }
}
