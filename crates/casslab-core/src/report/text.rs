//! Plain-text tables for the terminal: a run's summary (one row per operation) and the list
//! of saved runs. Returns strings; the binary decides where they go.

use crate::stats::{LatencySummary, OpSummary, Phase};
use crate::store::{PhaseSummary, RunRecord, RunStatus, RunSummary};
use std::fmt::Write;

/// Nanoseconds as milliseconds with a precision that suits the size (it lives with the stats,
/// which gates and verdicts format too).
pub use crate::stats::ms;

/// The latency columns every summary table shows, in ms: mean, p50, p95, p99, p99.9, max.
pub fn latency_cells(l: &LatencySummary) -> [String; 6] {
    [
        ms(l.mean_ns),
        ms(l.p50_ns as f64),
        ms(l.p95_ns as f64),
        ms(l.p99_ns as f64),
        ms(l.p999_ns as f64),
        ms(l.max_ns as f64),
    ]
}

fn row(out: &mut String, s: &OpSummary, l: &LatencySummary) {
    let errors: u64 = s.errors.values().sum();
    let [mean, p50, p95, p99, p999, max] = latency_cells(l);
    let _ = writeln!(
        out,
        "  {:<14} {:>10} {:>10.0} {mean:>8} {p50:>8} {p95:>8} {p99:>8} {p999:>8} {max:>8} {errors:>8}",
        s.op, s.ok, s.ops_per_s,
    );
}

fn table(out: &mut String, p: &PhaseSummary, service: bool) {
    let _ = writeln!(
        out,
        "  {:<14} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "op", "count", "ops/s", "mean", "p50", "p95", "p99", "p99.9", "max", "errors"
    );
    for s in &p.ops {
        row(out, s, if service { &s.service } else { &s.latency });
    }
    if p.ops.len() > 1 {
        row(out, &p.total, if service { &p.total.service } else { &p.total.latency });
    }
}

/// The summary printed after a run and by `casslab show`.
pub fn run_summary(r: &RunRecord, s: &RunSummary) -> String {
    let mut out = String::new();
    let status = match r.status {
        RunStatus::Completed => "completed",
        RunStatus::Interrupted => "interrupted (partial results)",
        RunStatus::Failed => "failed",
        RunStatus::Running => "running or crashed",
    };
    let _ = writeln!(
        out,
        "run {} · {} · {} · Cassandra {} on {} node(s) · {}",
        r.id,
        r.workload,
        status,
        r.env.cassandra_version.as_deref().unwrap_or("?"),
        r.env.node_count,
        r.config.cluster.hosts.join(",")
    );
    for p in &s.phases {
        let mode = match (p.phase, p.target_rate_per_s) {
            (Phase::Load, _) => "load".to_string(),
            (_, Some(rate)) => format!("run at fixed rate {rate:.0}/s"),
            (_, None) => format!("run at max throughput, {} in flight", r.config.concurrency),
        };
        let _ = writeln!(out, "\n{mode}, {:.1} s measured — latency from intended start, ms:", p.duration_s);
        table(&mut out, p, false);
        if p.target_rate_per_s.is_some() {
            let _ = writeln!(out, "  service time (from actual send), ms:");
            table(&mut out, p, true);
        }
        let errs = &p.total.errors;
        if !errs.is_empty() {
            let parts: Vec<String> = errs.iter().map(|(k, v)| format!("{} {v}", k.as_str())).collect();
            let _ = writeln!(out, "  errors by kind: {}", parts.join(", "));
        }
    }
    for n in &s.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The events of a run and their impact (empty when the run had none). Times are seconds
/// since the run started, as on the report's charts; changes are against each event's
/// baseline (see `analysis::impact` for the windows and the recovery rule).
pub fn events_table(events: &[(crate::events::EventRecord, Option<crate::store::EventImpact>)]) -> String {
    if events.is_empty() {
        return String::new();
    }
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |p| format!("{p:+.0}%"));
    let s = crate::analysis::impact::ImpactSettings::default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nevents — impact against the {} s before each (undisturbed); recovered = {} intervals without errors, ops/s within {:.0}% and p99 within {:.0}% (or {} ms):",
        s.baseline_ms / 1000,
        s.stable_intervals,
        s.ops_tolerance_pct,
        s.p99_tolerance_pct,
        s.p99_floor_ns / 1_000_000
    );
    let mut rows = Vec::new();
    for (e, imp) in events {
        let (during, after, p99, errors, recovered) = match imp {
            Some(i) => (
                pct(i.during_ops_change_pct()),
                pct(i.after_ops_change_pct()),
                i.p99.iter().map(|c| format!("{} {} ({})", c.op, pct(c.during_change_pct()), pct(c.after_change_pct()))).collect::<Vec<_>>().join(", "),
                if i.errors.is_empty() { "0".to_string() } else { i.errors.iter().map(|(k, v)| format!("{} {v}", k.as_str())).collect::<Vec<_>>().join(", ") },
                match (i.recovery_ms, i.baseline_ops_per_s) {
                    (Some(ms), _) => format!("after {:.1} s", ms as f64 / 1000.0),
                    (None, None) => "no baseline".to_string(),
                    (None, Some(_)) => "not within the run".to_string(),
                },
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        rows.push([
            format!("{:.1}s", e.start_ms as f64 / 1000.0),
            e.label(),
            format!("{:.1}s", e.duration_ms() as f64 / 1000.0),
            match e.exit_code {
                Some(c) if c != 0 => format!("exit {c}"),
                _ => e.status.as_str().to_string(),
            },
            during,
            after,
            p99,
            errors,
            recovered,
        ]);
    }
    let header = ["at", "event", "took", "status", "ops/s during", "after", "p99 during (after)", "errors", "recovered"].map(String::from);
    let widths: Vec<usize> = (0..9).map(|c| rows.iter().chain([&header]).map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for r in [&header].into_iter().chain(&rows) {
        let mut line = String::from(" ");
        for (c, cell) in r.iter().enumerate() {
            // numbers right-aligned, words left-aligned; the last column unpadded
            let w = if c == 8 { 0 } else { widths[c] };
            let _ = if [0, 2, 4, 5].contains(&c) { write!(line, " {cell:>w$}") } else { write!(line, " {cell:<w$}") };
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

#[cfg(test)]
mod events_tests {
    use super::*;
    use crate::store::{EventImpact, P99Change};
    use crate::events::{EventRecord, EventStatus};
    use crate::stats::ErrorKind;

    #[test]
    fn the_events_table_shows_changes_errors_and_recovery() {
        let kill = EventRecord { seq: 0, spec: "10s kill node2".into(), action: "kill".into(), target: Some("node2".into()), start_ms: 17_400, end_ms: 17_420, status: EventStatus::Ok, exit_code: None, output_tail: String::new() };
        let impact = EventImpact {
            baseline_from_ms: Some(0),
            baseline_to_ms: Some(17_000),
            baseline_ops_per_s: Some(100.0),
            during_ops_per_s: Some(50.0),
            after_ops_per_s: Some(99.0),
            p99: vec![P99Change { op: "read".into(), baseline_ns: 2_000_000, during_ns: Some(5_000_000), after_ns: Some(2_000_000) }],
            errors: [(ErrorKind::Unavailable, 12)].into(),
            recovery_ms: Some(37_200),
        };
        let exec = EventRecord { seq: 1, spec: "20s exec false".into(), action: "exec".into(), target: Some("false".into()), start_ms: 27_400, end_ms: 27_500, status: EventStatus::Failed, exit_code: Some(1), output_tail: String::new() };
        let t = events_table(&[(kill, Some(impact)), (exec, None)]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].starts_with("events"), "{t}");
        let row = lines[3];
        for cell in ["17.4s", "kill node2", "0.0s", "ok", "-50%", "-1%", "read +150% (+0%)", "unavailable 12", "after 37.2 s"] {
            assert!(row.contains(cell), "{cell} missing in {row}");
        }
        assert!(lines[4].contains("exit 1") && lines[4].ends_with('-'), "{t}");
        // columns line up: "event" starts where "kill node2" does
        assert_eq!(lines[2].find("event"), row.find("kill node2"));
        assert_eq!(events_table(&[]), "");
    }
}

/// The `casslab runs` listing.
pub fn runs_table(runs: &[RunRecord]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:>5}  {:<19}  {:<14} {:<11} {:>10} {:>9} {:>7}", "id", "started (UTC)", "workload", "status", "ops/s", "p99 ms", "errors");
    for r in runs {
        let run = r.summary.as_ref().and_then(|s| s.phases.iter().rev().find(|p| p.phase == Phase::Run || p.phase == Phase::Load));
        let (ops, p99, errs) = match run {
            Some(p) => (format!("{:.0}", p.total.ops_per_s), ms(p.total.latency.p99_ns as f64), p.total.error_count().to_string()),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let _ = writeln!(
            out,
            "{:>5}  {:<19}  {:<14} {:<11} {:>10} {:>9} {:>7}",
            r.id,
            utc(r.started_at_ms),
            r.workload,
            format!("{:?}", r.status).to_lowercase(),
            ops,
            p99,
            errs
        );
    }
    out
}

/// `YYYY-MM-DD HH:MM:SS` in UTC from unix milliseconds.
pub fn utc(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // civil-from-days (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(1_795_000_000_000), "2026-11-18 11:06:40");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00");
    }
}
