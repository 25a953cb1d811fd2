//! What a saved run says on the terminal: its summary (a table per phase, one row per
//! operation), its events with their impact, and the list of saved runs. Returns strings; the
//! binary decides where they go, and `report::table` how columns line up.

use super::table::TextTable;
use crate::stats::{LatencySummary, Phase};
use crate::store::{LoaderSummary, PhaseSummary, RunRecord, RunStatus, RunSummary};
use std::fmt::Write;

/// Nanoseconds as milliseconds with a precision that suits the size (it lives with the stats,
/// which gates and verdicts format too).
pub use crate::stats::ms;

/// The latency columns every summary table shows, in ms: mean, p50, p95, p99, p99.9, max.
pub fn latency_cells(l: &LatencySummary) -> [String; 6] {
    [ms(l.mean_ns), ms(l.p50_ns as f64), ms(l.p95_ns as f64), ms(l.p99_ns as f64), ms(l.p999_ns as f64), ms(l.max_ns as f64)]
}

/// One phase's table: a row per operation (and the total when there are several).
fn table(out: &mut String, p: &PhaseSummary, service: bool) {
    let mut t = TextTable::new(["op", "count", "ops/s", "mean", "p50", "p95", "p99", "p99.9", "max", "errors"]).indent(2).right(1..10);
    let total = (p.ops.len() > 1).then_some(&p.total);
    for s in p.ops.iter().chain(total) {
        let [mean, p50, p95, p99, p999, max] = latency_cells(if service { &s.service } else { &s.latency });
        t.row([s.op.clone(), s.ok.to_string(), format!("{:.0}", s.ops_per_s), mean, p50, p95, p99, p999, max, s.error_count().to_string()]);
    }
    let _ = write!(out, "{t}");
}

/// What the reads of a phase returned, one operation after the other: rows per execution
/// and the executions that found nothing (`None` when no operation read on the plain path).
pub fn reads_line(p: &PhaseSummary) -> Option<String> {
    let parts: Vec<String> = p
        .ops
        .iter()
        .filter(|o| o.reads())
        .map(|o| {
            let rows = o.rows_per_op();
            let rows = if rows >= 10.0 { format!("{rows:.0}") } else { format!("{rows:.2}") };
            let empty = match o.empty_reads {
                0 => "none found nothing".to_string(),
                n => format!(
                    "{} of {} ({:.0}%) found nothing",
                    super::run_view::grouped(n),
                    super::run_view::grouped(o.ok),
                    100.0 * n as f64 / o.ok.max(1) as f64
                ),
            };
            format!("{} {rows} rows per execution, {empty}", o.op)
        })
        .collect();
    (!parts.is_empty()).then(|| format!("rows read: {}", parts.join("; ")))
}

/// The summary printed after a run and by `casslab show`.
pub fn run_summary(r: &RunRecord, s: &RunSummary) -> String {
    let mut out = String::new();
    let status = match r.status {
        RunStatus::Completed => "completed",
        RunStatus::Interrupted => "interrupted (partial results)",
        RunStatus::Failed => "failed",
        RunStatus::Crashed => "crashed (its figures are those of the intervals saved before)",
        RunStatus::Running if r.process.is_some() => "running",
        RunStatus::Running => "running or crashed",
    };
    let _ = writeln!(
        out,
        "run {} · {} · {} · {} on {} node(s) · {}",
        r.id,
        r.workload,
        status,
        crate::config::server_label(r.env.cassandra_version.as_deref()),
        r.env.node_count,
        r.config.server_address(&r.env)
    );
    let levels = if s.phases.iter().any(|p| p.ops.iter().any(|o| o.verify.is_some())) { super::data::levels_of(r) } else { Default::default() };
    for p in &s.phases {
        let mode = match (p.phase, p.target_rate_per_s, r.config.rate_schedule(), &r.config.concurrency_shape) {
            (Phase::Load, ..) => "load".to_string(),
            (_, Some(rate), Some(shape), _) => format!("run on the rate schedule '{shape}' (mean {rate:.0}/s)"),
            (_, Some(rate), None, _) => format!("run at fixed rate {rate:.0}/s"),
            (_, None, _, Some(shape)) => format!("run at max throughput, in flight '{shape}'"),
            (_, None, ..) => format!("run at max throughput, {} in flight", r.config.concurrency),
        };
        let counted = match (p.phase, s.count) {
            (Phase::Run, Some(c)) if c.completed >= c.asked => format!(", count {} reached", c.asked),
            (Phase::Run, Some(c)) => format!(", {} of the count {} completed", c.completed, c.asked),
            _ => String::new(),
        };
        let _ = writeln!(out, "\n{mode}{counted}, {:.1} s measured — latency from intended start, ms:", p.duration_s);
        table(&mut out, p, false);
        if p.target_rate_per_s.is_some() {
            let _ = writeln!(out, "  service time (from actual send), ms:");
            table(&mut out, p, true);
        }
        if let Some(reads) = reads_line(p) {
            let _ = writeln!(out, "  {reads}");
        }
        if let Some(data) = super::data::data_line(p, &levels) {
            let _ = writeln!(out, "  {data}");
        }
        if let Some(recall) = super::recall_text::phase_line(p) {
            let _ = writeln!(out, "  {recall}");
        }
        let errs = &p.total.errors;
        if !errs.is_empty() {
            let parts: Vec<String> = errs.iter().map(|(k, v)| format!("{} {v}", k.as_str())).collect();
            let _ = writeln!(out, "  errors by kind: {}", parts.join(", "));
        }
    }
    if !s.loaders.is_empty() {
        let _ = write!(out, "\n{}", loaders_table(&s.loaders));
    }
    for n in &s.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// A merged run's loaders, one row each: throughput, p99, errors, CPU, lag and start skew.
pub fn loaders_table(loaders: &[LoaderSummary]) -> String {
    let mut t = TextTable::new(["shard", "host", "ops/s", "of target", "p99", "errors", "client cpu", "max late", "start", "clock", "from"])
        .indent(2)
        .right([0, 2, 3, 4, 5, 6, 7, 8, 9]);
    for l in loaders {
        let flags = match (l.saturated, l.behind) {
            (true, true) => " saturated, behind",
            (true, false) => " saturated",
            (false, true) => " behind",
            (false, false) => "",
        };
        t.row([
            l.shard.to_string(),
            format!("{}{flags}", l.host.as_deref().unwrap_or("?")),
            format!("{:.0}", l.ops_per_s),
            l.target_per_s.map_or("-".into(), |t| format!("{:.0}%", 100.0 * l.ops_per_s / t.max(1e-9))),
            ms(l.p99_ns as f64),
            l.errors.to_string(),
            l.client_cpu_pct.map_or("-".into(), |c| format!("{c:.0}%/{}", l.client_cores)),
            match l.max_lag_ms {
                Some(lag) => format!("{} ({lag:.0} ms)", l.max_backlog),
                None => l.max_backlog.to_string(),
            },
            format!("{:+} ms", l.start_skew_ms),
            l.clock_offset_ms.map_or("-".into(), |o| format!("{o:+.1} ms")),
            l.source.clone(),
        ]);
    }
    format!("loaders (p99 from intended start, ms; client cpu in % of one core/cores; max late = most operations behind schedule at an interval's end):\n{t}")
}

/// The events of a run and their impact (empty when the run had none). `at` is seconds since
/// the run started, as on the report's charts; each event is shown as given, its own time
/// counted from the start of the run phase (the two differ by the load phase); changes are
/// against each event's baseline (see `analysis::impact` for the windows and the recovery rule).
pub fn events_table(events: &[(crate::events::EventRecord, Option<crate::store::EventImpact>)]) -> String {
    if events.is_empty() {
        return String::new();
    }
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |p| format!("{p:+.0}%"));
    let s = crate::analysis::impact::ImpactSettings::default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nevents — impact against the last {} s before each that no earlier event disturbed; recovered = {} intervals without errors, ops/s within {:.0}% and p99 within {:.0}% (or {} ms); at = since the run started, as on the charts; each event as given, its time since the run phase started:",
        s.baseline_ms / 1000,
        s.stable_intervals,
        s.ops_tolerance_pct,
        s.p99_tolerance_pct,
        s.p99_floor_ns / 1_000_000
    );
    let mut t =
        TextTable::new(["at", "event", "took", "status", "ops/s during", "after", "p99 during (after)", "errors", "recovered"]).indent(2).right([0, 2, 4, 5]);
    for (e, imp) in events {
        let given = if e.spec.is_empty() { e.label() } else { e.spec.clone() };
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
            None if e.is_setup() => ("-".into(), "-".into(), "-".into(), "-".into(), "before the run".into()),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        t.row([
            if e.is_setup() { "setup".to_string() } else { format!("{:.1}s", e.start_ms as f64 / 1000.0) },
            given,
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
    let _ = write!(out, "{t}");
    out
}

#[cfg(test)]
mod events_tests {
    use super::*;
    use crate::events::{EventRecord, EventStatus};
    use crate::stats::ErrorKind;
    use crate::store::{EventImpact, P99Change};

    #[test]
    fn the_events_table_shows_changes_errors_and_recovery() {
        let kill = EventRecord {
            seq: 0,
            spec: "10s kill node2".into(),
            action: "kill".into(),
            target: Some("node2".into()),
            start_ms: 17_400,
            end_ms: 17_420,
            status: EventStatus::Ok,
            exit_code: None,
            output_tail: String::new(),
        };
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
        let exec = EventRecord {
            seq: 1,
            spec: "20s exec false".into(),
            action: "exec".into(),
            target: Some("false".into()),
            start_ms: 27_400,
            end_ms: 27_500,
            status: EventStatus::Failed,
            exit_code: Some(1),
            output_tail: String::new(),
        };
        let setup =
            EventRecord { seq: 2, spec: "setup setstreamthroughput 8".into(), action: "setstreamthroughput".into(), target: Some("8".into()), ..exec.clone() };
        let t = events_table(&[(kill, Some(impact)), (exec, None), (setup, None)]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[5].trim_start().starts_with("setup") && lines[5].ends_with("before the run"), "{t}");
        assert!(lines[1].starts_with("events"), "{t}");
        let row = lines[3];
        for cell in ["17.4s", "kill node2", "0.0s", "ok", "-50%", "-1%", "read +150% (+0%)", "unavailable 12", "after 37.2 s"] {
            assert!(row.contains(cell), "{cell} missing in {row}");
        }
        assert!(lines[4].contains("exit 1") && lines[4].ends_with('-'), "{t}");
        // the event as given, with its time since the run phase, beside `at`, since the run
        assert!(row.contains("10s kill node2"), "{row}");
        // columns line up: "event" starts where the event does
        assert_eq!(lines[2].find("event"), row.find("10s kill node2"));
        assert_eq!(events_table(&[]), "");
    }
}

/// The `casslab runs` listing as a table: nothing for no runs (the binary says so on stderr).
pub struct RunsTable;

impl super::format_trait::Format<[RunRecord]> for RunsTable {
    fn name(&self) -> &'static str {
        "text"
    }
    fn render(&self, runs: &[RunRecord]) -> String {
        if runs.is_empty() {
            return String::new();
        }
        runs_table(runs)
    }
}

/// The `casslab runs` listing.
pub fn runs_table(runs: &[RunRecord]) -> String {
    let mut t = TextTable::new(["id", "started (UTC)", "workload", "status", "ops/s", "p99 ms", "errors"]).right([0, 4, 5, 6]);
    for r in runs {
        let run = r.summary.as_ref().and_then(|s| s.phases.iter().rev().find(|p| p.phase == Phase::Run || p.phase == Phase::Load));
        let (ops, p99, errs) = match run {
            Some(p) => (format!("{:.0}", p.total.ops_per_s), ms(p.total.latency.p99_ns as f64), p.total.error_count().to_string()),
            None => ("-".into(), "-".into(), "-".into()),
        };
        t.row([r.id.to_string(), utc(r.started_at_ms), r.workload.clone(), r.status.as_str().to_string(), ops, p99, errs]);
    }
    t.to_string()
}

pub use crate::units::utc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_say_rows_per_execution_and_how_many_found_nothing() {
        use crate::stats::{OpStats, OpSummary};
        let mut read = OpStats::default();
        (1..=100u64).for_each(|i| read.record_ok(i * 1_000, i * 1_000));
        read.rows_read = 150;
        read.empty_reads = 25;
        let mut miss = OpStats::default();
        (1..=40u64).for_each(|i| miss.record_ok(i * 1_000, i * 1_000));
        miss.empty_reads = 40;
        let mut write = OpStats::default();
        write.record_ok(1_000, 1_000);
        let ops = vec![OpSummary::of("read", &read, 10.0), OpSummary::of("lookup", &miss, 10.0), OpSummary::of("insert", &write, 10.0)];
        let p = PhaseSummary { phase: Phase::Run, duration_s: 10.0, target_rate_per_s: None, total: OpSummary::of("total", &read, 10.0), ops };
        assert_eq!(
            reads_line(&p).unwrap(),
            "rows read: read 1.50 rows per execution, 25 of 100 (25%) found nothing; lookup 0.00 rows per execution, 40 of 40 (100%) found nothing"
        );
        let writes_only = PhaseSummary { ops: vec![OpSummary::of("insert", &write, 10.0)], ..p };
        assert_eq!(reads_line(&writes_only), None);
    }

    #[test]
    fn summary_columns_line_up_with_long_operation_names() {
        use crate::config::{RunConfig, RunEnvironment};
        use crate::stats::{OpStats, OpSummary};
        let mut st = OpStats::default();
        (1..=100u64).for_each(|i| st.record_ok(i * 1_000_000, i * 1_000_000));
        let ops = vec![OpSummary::of("read", &st, 10.0), OpSummary::of("read_by_partition_set.request", &st, 10.0)];
        let phase = PhaseSummary { phase: Phase::Run, duration_s: 10.0, target_rate_per_s: None, ops, total: OpSummary::of("total", &st, 10.0) };
        let record = RunRecord {
            id: 7,
            workload: "kv".into(),
            started_at_ms: 0,
            ended_at_ms: Some(1),
            status: RunStatus::Completed,
            config: RunConfig::default(),
            env: RunEnvironment::default(),
            summary: None,
            tags: vec![],
            process: None,
        };
        let text = run_summary(&record, &RunSummary { phases: vec![phase], notes: vec![], ..RunSummary::default() });
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert_eq!(rows[2].split_whitespace().take(2).collect::<Vec<_>>(), ["read_by_partition_set.request", "100"], "{text}");
        // numbers are right-aligned to the last column, so every row is as long as the heading
        assert!(rows.iter().all(|r| r.chars().count() == rows[0].chars().count()), "{text}");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(1_795_000_000_000), "2026-11-18 11:06:40");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(utc(-1), "1969-12-31 23:59:59");
        assert_eq!(utc(i64::MAX), format!("{} ms", i64::MAX));
    }
}
