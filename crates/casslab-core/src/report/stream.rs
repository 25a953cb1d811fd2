//! One line per closed interval while a run goes (`casslab run --stream FILE|-`), with
//! wall-clock timestamps, for a tail, a dashboard or a script: JSON lines (one object per
//! interval, its operations inside) or CSV (a header, then one line per interval and
//! operation, the columns of `report::csv`'s intervals with the run id in front). It formats;
//! the binary writes and flushes.

use super::csv::{field, INTERVALS_HEADER};
use crate::stats::{IntervalSample, OpSummary};
use serde_json::json;

/// The format of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    JsonLines,
    Csv,
}

/// `2026-11-18T11:06:40.123Z` of Unix milliseconds.
fn rfc3339(unix_ms: i64) -> String {
    jiff::Timestamp::from_millisecond(unix_ms).map(|t| format!("{t:.3}")).unwrap_or_default()
}

/// What starts the stream: the CSV header (nothing for JSON lines).
pub fn header(format: StreamFormat) -> String {
    match format {
        StreamFormat::JsonLines => String::new(),
        StreamFormat::Csv => format!("time,run,{INTERVALS_HEADER}\n"),
    }
}

/// The lines of one interval of run `run`, whose time axis starts at `t0_unix_ms`.
pub fn lines(format: StreamFormat, run: i64, t0_unix_ms: i64, s: &IntervalSample) -> String {
    let (start_unix_ms, end_unix_ms) = (t0_unix_ms + s.start_ms as i64, t0_unix_ms + s.end_ms as i64);
    let ops: Vec<OpSummary> = s.summaries();
    match format {
        StreamFormat::JsonLines => {
            let total: f64 = ops.iter().filter(|o| !crate::stats::is_sub_op(&o.op)).map(|o| o.ops_per_s).sum();
            let v = json!({
                "time": rfc3339(end_unix_ms),
                "run": run,
                "index": s.index,
                "phase": s.phase,
                "start_ms": s.start_ms,
                "end_ms": s.end_ms,
                "start_unix_ms": start_unix_ms,
                "end_unix_ms": end_unix_ms,
                "backlog": s.backlog,
                "total_ops_per_s": total,
                "ops": ops,
            });
            format!("{v}\n")
        }
        StreamFormat::Csv => {
            let mut out = String::new();
            for ((_, st), o) in s.ops.iter().zip(&ops) {
                let mut f = vec![rfc3339(end_unix_ms), run.to_string()];
                f.extend(super::csv::interval_cells(s.index, s.phase, (s.start_ms, s.end_ms), end_unix_ms, o, st.late, s.backlog));
                out.push_str(&f.iter().map(|x| field(x)).collect::<Vec<_>>().join(","));
                out.push('\n');
            }
            out
        }
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
        let j: serde_json::Value = serde_json::from_str(lines(StreamFormat::JsonLines, 5, 1_795_000_000_000, &s).trim_end()).unwrap();
        assert_eq!((j["time"].as_str(), j["run"].as_i64(), j["end_unix_ms"].as_i64()), (Some("2026-11-18T11:06:44.000Z"), Some(5), Some(1_795_000_004_000)));
        assert_eq!((j["ops"][1]["op"].as_str(), j["total_ops_per_s"].as_f64()), (Some("write"), Some(2.0)));
        let csv = lines(StreamFormat::Csv, 5, 1_795_000_000_000, &s);
        let cols = header(StreamFormat::Csv).trim_end().split(',').count();
        assert_eq!(csv.lines().count(), 2);
        assert!(csv.lines().all(|l| l.split(',').count() == cols), "{csv}");
        assert!(csv.starts_with("2026-11-18T11:06:44.000Z,5,3,run,3000,4000,1795000004000,read,1,0,1.000,"), "{csv}");
    }
}
