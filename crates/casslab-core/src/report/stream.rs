//! One line per closed interval while a run goes (`casslab run --stream FILE|-`), with
//! wall-clock timestamps, for a tail, a dashboard or a script: JSON lines (one object per
//! interval, its operations inside) or CSV (a header, then one line per interval and
//! operation, the columns of `report::csv`'s intervals with the run id in front): the
//! [`Format`]s of a [`LiveInterval`]. It formats; the binary writes and flushes.

use super::csv::{field, INTERVALS_HEADER};
use super::format_trait::Format;
use crate::stats::{IntervalSample, OpSummary, Phase};
use serde_json::json;

/// One closed interval of run `run` as the stream writes it: its operations' figures and late
/// starts, on the time axis that starts at `t0_unix_ms`.
#[derive(Debug, Clone)]
pub struct LiveInterval {
    pub run: i64,
    pub t0_unix_ms: i64,
    pub index: u32,
    pub phase: Phase,
    pub start_ms: u64,
    pub end_ms: u64,
    pub backlog: u64,
    /// Per operation, in the workload's order: its figures and its operations started late.
    pub ops: Vec<(OpSummary, u64)>,
}

impl LiveInterval {
    /// The interval `s` of run `run`, whose time axis starts at `t0_unix_ms`.
    pub fn of(run: i64, t0_unix_ms: i64, s: &IntervalSample) -> LiveInterval {
        let late = s.ops.iter().map(|(_, st)| st.late);
        LiveInterval {
            run,
            t0_unix_ms,
            index: s.index,
            phase: s.phase,
            start_ms: s.start_ms,
            end_ms: s.end_ms,
            backlog: s.backlog,
            ops: s.summaries().into_iter().zip(late).collect(),
        }
    }

    fn end_unix_ms(&self) -> i64 {
        self.t0_unix_ms + self.end_ms as i64
    }
}

/// `2026-11-18T11:06:40.123Z` of Unix milliseconds.
fn rfc3339(unix_ms: i64) -> String {
    jiff::Timestamp::from_millisecond(unix_ms).map(|t| format!("{t:.3}")).unwrap_or_default()
}

/// JSON lines: one object per interval, its operations inside.
pub struct StreamJsonLines;

impl Format<LiveInterval> for StreamJsonLines {
    fn name(&self) -> &'static str {
        "jsonl"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["jsonl"]
    }
    fn render(&self, s: &LiveInterval) -> String {
        let ops: Vec<&OpSummary> = s.ops.iter().map(|(o, _)| o).collect();
        let total: f64 = ops.iter().filter(|o| !crate::stats::is_sub_op(&o.op)).map(|o| o.ops_per_s).sum();
        let v = json!({
            "time": rfc3339(s.end_unix_ms()),
            "run": s.run,
            "index": s.index,
            "phase": s.phase,
            "start_ms": s.start_ms,
            "end_ms": s.end_ms,
            "start_unix_ms": s.t0_unix_ms + s.start_ms as i64,
            "end_unix_ms": s.end_unix_ms(),
            "backlog": s.backlog,
            "total_ops_per_s": total,
            "ops": ops,
        });
        format!("{v}\n")
    }
}

/// CSV: a header, then one line per interval and operation.
pub struct StreamCsv;

impl Format<LiveInterval> for StreamCsv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["csv"]
    }
    fn preamble(&self) -> String {
        format!("time,run,{INTERVALS_HEADER}\n")
    }
    fn render(&self, s: &LiveInterval) -> String {
        let end_unix_ms = s.end_unix_ms();
        let mut out = String::new();
        for (o, late) in &s.ops {
            let mut f = vec![rfc3339(end_unix_ms), s.run.to_string()];
            f.extend(super::csv::interval_cells(s.index, s.phase, (s.start_ms, s.end_ms), end_unix_ms, o, *late, s.backlog));
            out.push_str(&f.iter().map(|x| field(x)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{OpStats, Phase};

    #[test]
    fn each_interval_is_a_line_with_its_wall_clock_time() {
        let mut st = OpStats::default();
        st.record_ok(2_000_000, 1_000_000);
        let s = IntervalSample {
            index: 3,
            phase: Phase::Run,
            start_ms: 3000,
            end_ms: 4000,
            ops: vec![("read".into(), st.clone()), ("write".into(), st)],
            backlog: 0,
        };
        let live = LiveInterval::of(5, 1_795_000_000_000, &s);
        let j: serde_json::Value = serde_json::from_str(StreamJsonLines.render(&live).trim_end()).unwrap();
        assert_eq!((j["time"].as_str(), j["run"].as_i64(), j["end_unix_ms"].as_i64()), (Some("2026-11-18T11:06:44.000Z"), Some(5), Some(1_795_000_004_000)));
        assert_eq!((j["ops"][1]["op"].as_str(), j["total_ops_per_s"].as_f64()), (Some("write"), Some(2.0)));
        let csv = StreamCsv.render(&live);
        let cols = StreamCsv.preamble().trim_end().split(',').count();
        assert_eq!(StreamJsonLines.preamble(), "");
        assert_eq!(csv.lines().count(), 2);
        assert!(csv.lines().all(|l| l.split(',').count() == cols), "{csv}");
        assert!(csv.starts_with("2026-11-18T11:06:44.000Z,5,3,run,3000,4000,1795000004000,read,1,0,1.000,"), "{csv}");
    }
}
