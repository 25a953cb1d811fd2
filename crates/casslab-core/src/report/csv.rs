//! CSV for spreadsheets and scripts (RFC 4180: a header line, fields quoted when they hold a
//! comma, a quote or a line break): the list of saved runs (`casslab runs --format csv`:
//! [`RunsCsv`]), a run's intervals per operation (`casslab show --format csv`, from the rows
//! the store hands over) and a comparison's figures (`casslab compare --format csv`:
//! [`ComparisonCsv`]). Latencies are in nanoseconds, times in milliseconds, as
//! in the JSON exports. It only formats what it is given.

use super::comparison_json::rows;
use super::format_trait::{ComparisonReport, Format};
use crate::analysis::study::Study;
use crate::stats::{OpSummary, Phase};
use crate::store::{IntervalFigures, RunRecord};
use std::fmt::Write;

/// One CSV field.
pub fn field(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

fn line(out: &mut String, fields: &[String]) {
    let _ = writeln!(out, "{}", fields.iter().map(|f| field(f)).collect::<Vec<_>>().join(","));
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The list of runs as CSV ([`runs_csv`]).
pub struct RunsCsv;

impl Format<[RunRecord]> for RunsCsv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["csv"]
    }
    fn render(&self, runs: &[RunRecord]) -> String {
        runs_csv(runs)
    }
}

/// A comparison's figures as CSV ([`comparison_csv`]).
pub struct ComparisonCsv;

impl Format<ComparisonReport<'_>> for ComparisonCsv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["csv"]
    }
    fn render(&self, c: &ComparisonReport<'_>) -> String {
        comparison_csv(c.study)
    }
}

/// The columns of [`runs_csv`].
pub const RUNS_HEADER: &str = "id,started_at_ms,ended_at_ms,workload,status,tags,rate_per_s,concurrency,phase,ops_per_s,mean_ns,p50_ns,p99_ns,p999_ns,errors";

/// Saved runs, one line each, with the figures of the measured phase (the run, else the load).
pub fn runs_csv(runs: &[RunRecord]) -> String {
    let mut out = format!("{RUNS_HEADER}\n");
    for r in runs {
        let p = main_phase(r);
        let mut f = vec![
            r.id.to_string(),
            r.started_at_ms.to_string(),
            opt(r.ended_at_ms),
            r.workload.clone(),
            r.status.as_str().to_string(),
            r.tags.join(";"),
            opt(r.config.fixed_rate_per_s()),
            r.config.concurrency.to_string(),
        ];
        match p {
            Some((phase, t)) => f.extend([
                phase.as_str().to_string(),
                format!("{:.3}", t.ops_per_s),
                format!("{:.0}", t.latency.mean_ns),
                t.latency.p50_ns.to_string(),
                t.latency.p99_ns.to_string(),
                t.latency.p999_ns.to_string(),
                t.error_count().to_string(),
            ]),
            None => f.extend(std::iter::repeat_n(String::new(), 7)),
        }
        line(&mut out, &f);
    }
    out
}

/// The measured phase of a saved run and its total, when it has a summary.
pub fn main_phase(r: &RunRecord) -> Option<(Phase, &OpSummary)> {
    let phases = &r.summary.as_ref()?.phases;
    let p = phases.iter().find(|p| p.phase == Phase::Run).or_else(|| phases.iter().find(|p| p.phase == Phase::Load))?;
    Some((p.phase, &p.total))
}

/// The columns of [`intervals_csv`].
/// Then five of the operation's checked reads (empty when its reads were not verified):
/// those judged, then the stale, missing, corrupt and resurrected ones; the last four are its
/// vector searches (empty when it searched none): judged, hits, possible hits, recall.
pub const INTERVALS_HEADER: &str = "index,phase,start_ms,end_ms,end_unix_ms,op,ok,errors,ops_per_s,mean_ns,p50_ns,p95_ns,p99_ns,p999_ns,max_ns,service_p99_ns,late,backlog,verified,stale,missing,corrupt,resurrected,recall_judged,recall_hits,recall_possible,recall";

/// The columns of [`INTERVALS_HEADER`] for one operation of one interval, saved or live.
pub(crate) fn interval_cells(
    index: u32,
    phase: Phase,
    (start_ms, end_ms): (u64, u64),
    end_unix_ms: i64,
    o: &OpSummary,
    late: u64,
    backlog: u64,
) -> Vec<String> {
    let l = &o.latency;
    vec![
        index.to_string(),
        phase.as_str().to_string(),
        start_ms.to_string(),
        end_ms.to_string(),
        end_unix_ms.to_string(),
        o.op.clone(),
        o.ok.to_string(),
        o.error_count().to_string(),
        format!("{:.3}", o.ops_per_s),
        format!("{:.0}", l.mean_ns),
        l.p50_ns.to_string(),
        l.p95_ns.to_string(),
        l.p99_ns.to_string(),
        l.p999_ns.to_string(),
        l.max_ns.to_string(),
        o.service.p99_ns.to_string(),
        late.to_string(),
        backlog.to_string(),
        opt(o.verify.map(|c| c.checked())),
        opt(o.verify.map(|c| c.stale)),
        opt(o.verify.map(|c| c.missing)),
        opt(o.verify.map(|c| c.corrupt)),
        opt(o.verify.map(|c| c.resurrected)),
        opt(o.recall.map(|c| c.judged)),
        opt(o.recall.map(|c| c.hits)),
        opt(o.recall.map(|c| c.possible)),
        o.recall.and_then(|c| c.recall()).map_or(String::new(), |r| format!("{r:.4}")),
    ]
}

/// A run's intervals, one line per (interval, operation); `end_unix_ms` is the interval's end
/// on the wall clock (`t0_unix_ms` is the instant `start_ms` counts from).
pub fn intervals_csv(intervals: &[IntervalFigures], t0_unix_ms: i64) -> String {
    let mut out = format!("{INTERVALS_HEADER}\n");
    for iv in intervals {
        let cells = interval_cells(iv.index, iv.phase, (iv.start_ms, iv.end_ms), t0_unix_ms + iv.end_ms as i64, &iv.summary, iv.late, iv.backlog);
        line(&mut out, &cells);
    }
    out
}

/// The columns of [`comparison_csv`].
pub const COMPARISON_HEADER: &str = "side,op,metric,value,lo,hi,change,change_lo,change_hi,outcome";

/// A comparison's figures (see `comparison_json::rows`).
pub fn comparison_csv(s: &Study) -> String {
    let mut out = format!("{COMPARISON_HEADER}\n");
    for r in rows(s) {
        line(
            &mut out,
            &[r.side, r.op, r.metric.to_string(), opt(r.value), opt(r.lo), opt(r.hi), opt(r.change), opt(r.change_lo), opt(r.change_hi), opt(r.outcome)],
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::run_view::fixtures::view;

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn runs_and_intervals_have_one_line_each_under_their_header() {
        let mut r = view(7, Some(600.0)).record;
        r.tags = vec!["variant=a".into(), "nightly".into()];
        let csv = runs_csv(&[r.clone()]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], RUNS_HEADER);
        let f: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(f.len(), RUNS_HEADER.split(',').count());
        assert_eq!((f[0], f[3], f[4], f[5], f[6], f[8], f[9]), ("7", "kv", "completed", "variant=a;nightly", "600", "run", "500.000"));
        let iv = crate::store::StoredInterval {
            index: 2,
            phase: Phase::Run,
            start_ms: 1000,
            end_ms: 2000,
            op: "read, all".into(),
            stats: crate::stats::OpStats::default(),
            backlog: 0,
        };
        let csv = intervals_csv(&[iv.figures()], 1_700_000_000_000);
        let second = csv.lines().nth(1).unwrap();
        assert!(second.starts_with("2,run,1000,2000,1700000002000,\"read, all\",0,0,"), "{second}");
    }
}
