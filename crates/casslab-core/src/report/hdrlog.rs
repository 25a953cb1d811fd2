//! A run's intervals as an HdrHistogram interval log (the format of Java's `HistogramLogWriter`,
//! read by `HistogramLogProcessor`, HdrHistogram's plotters and the `hdrhistogram` crate's
//! `IntervalLogIterator`). It writes one kind of latency per log; it does not read the store
//! or choose file names.
//!
//! The log holds one tagged histogram line per (interval, operation), tag `<phase>.<op>` (e.g.
//! `run.read`), timestamped in seconds since the run started. The header carries the
//! standard `#[Histogram log format version 1.3]`, `#[StartTime: ...]` and legend lines, plus
//! a `#[BaseTime: ...]` equal to the start time so readers need not guess (as Java's reader
//! otherwise does) whether the timestamps are relative.
//!
//! Histogram values are nanoseconds, as recorded. `HistogramLogProcessor`'s default
//! `-outputValueUnitRatio` of 1e6 therefore prints milliseconds. The `Interval_Max` column is
//! in milliseconds, as Java's writer writes it (its `maxValueUnitRatio` of 1e6) and as
//! HistogramLogAnalyzer and the plotters show it: each line is written here exactly as Java's
//! `HistogramLogWriter.outputIntervalHistogram` formats it, `%.3f,%.3f,%.3f,<base64>`.

use crate::stats::{LatencyKind, Phase};
use crate::store::{EncodedInterval, StoredInterval};
use base64::Engine as _;
use std::io::{self, Write};

/// What `Interval_Max` is divided by: nanoseconds to milliseconds (Java's `maxValueUnitRatio`).
pub const MAX_VALUE_UNIT_RATIO: f64 = 1e6;

/// Writes `intervals` (as [`crate::store::Store::intervals`] returns them) as an interval log.
/// `run_started_at_ms` (unix ms) is the instant the intervals' `start_ms` count from.
pub fn write_hdr_log(w: &mut impl Write, run_started_at_ms: i64, intervals: &[StoredInterval], which: LatencyKind) -> io::Result<()> {
    let mut log = HdrLog::start(w, run_started_at_ms, which)?;
    intervals.iter().try_for_each(|iv| log.add(&EncodedInterval::of(iv)))
}

/// An interval log written one row at a time (for a long run, whose decoded histograms would
/// not all fit in memory): [`HdrLog::start`] writes the header, [`HdrLog::add`] a row, its
/// histogram copied as saved (the store saves the V2 deflate encoding the log holds).
pub struct HdrLog<'w, W: Write> {
    w: &'w mut W,
    which: LatencyKind,
}

impl<'w, W: Write> HdrLog<'w, W> {
    /// Writes the header; `run_started_at_ms` (unix ms) is the instant the rows' `start_ms`
    /// count from.
    pub fn start(w: &'w mut W, run_started_at_ms: i64, which: LatencyKind) -> io::Result<HdrLog<'w, W>> {
        let start_s = run_started_at_ms as f64 / 1000.0;
        writeln!(w, "#[Logged with casslab {}]", env!("CARGO_PKG_VERSION"))?;
        writeln!(w, "#[Latency: {}; values in nanoseconds; tags are <phase>.<operation>]", which.as_str())?;
        writeln!(w, "#[Histogram log format version 1.3]")?;
        match jiff::Timestamp::from_millisecond(run_started_at_ms) {
            // RFC 3339 in UTC with milliseconds, as Java's writer prints it: 2023-11-14T22:13:20.123Z
            Ok(date) if run_started_at_ms >= 0 => writeln!(w, "#[StartTime: {start_s:.3} (seconds since epoch), {date:.3}]")?,
            _ => writeln!(w, "#[StartTime: {start_s:.3} (seconds since epoch)]")?,
        }
        writeln!(w, "#[BaseTime: {start_s:.3} (seconds since epoch)]")?;
        writeln!(w, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"")?;
        Ok(HdrLog { w, which })
    }

    /// One (interval, operation) row's histogram line.
    pub fn add(&mut self, row: &EncodedInterval) -> io::Result<()> {
        let iv = &row.figures;
        let (bytes, max_ns) = match self.which {
            LatencyKind::Intended => (&row.intended_hdr, iv.summary.latency.max_ns),
            LatencyKind::Service => (&row.service_hdr, iv.summary.service.max_ns),
        };
        writeln!(
            self.w,
            "Tag={},{:.3},{:.3},{:.3},{}",
            tag(iv.phase, iv.op()),
            iv.start_ms as f64 / 1000.0,
            iv.end_ms.saturating_sub(iv.start_ms) as f64 / 1000.0,
            max_ns as f64 / MAX_VALUE_UNIT_RATIO,
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    }
}

/// `<phase>.<op>`, with the characters a tag may not hold (`,`, space, CR, LF) replaced by `_`.
fn tag(phase: Phase, op: &str) -> String {
    let op: String = op.chars().map(|c| if matches!(c, ',' | ' ' | '\r' | '\n') { '_' } else { c }).collect();
    format!("{}.{op}", phase.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;
    use crate::store::deserialize_histogram;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry, Tag};
    use std::time::Duration;

    fn interval(index: u32, phase: Phase, op: &str, n: u64) -> StoredInterval {
        let mut stats = OpStats::default();
        for i in 1..=n {
            stats.record_ok(i * 10_000, i * 5_000);
        }
        let start_ms = 250 + u64::from(index) * 1000;
        StoredInterval { index, phase, start_ms, end_ms: start_ms + 1000, op: op.into(), stats, backlog: 0 }
    }

    #[test]
    fn log_reads_back_with_the_crates_iterator() {
        let intervals = vec![
            interval(0, Phase::Warmup, "read", 10),
            interval(0, Phase::Warmup, "write", 20),
            interval(1, Phase::Run, "read", 30),
            interval(1, Phase::Run, "write", 40),
            interval(2, Phase::Run, "read", 50),
            interval(2, Phase::Run, "write", 60),
        ];
        let started_at_ms = 1_700_000_000_123;
        for which in [LatencyKind::Intended, LatencyKind::Service] {
            let mut buf = Vec::new();
            write_hdr_log(&mut buf, started_at_ms, &intervals, which).unwrap();
            let text = String::from_utf8(buf.clone()).unwrap();
            assert!(text.contains("#[Histogram log format version 1.3]\n"), "{text}");
            if which == LatencyKind::Intended {
                // Java's line: start and length in seconds, the max in milliseconds, 3 decimals
                assert!(text.contains("\nTag=run.read,2.250,1.000,0.500,HIST"), "{text}");
            }
            assert!(text.contains("#[StartTime: 1700000000.123 (seconds since epoch), 2023-11-14T22:13:20.123Z]\n"));
            assert!(text.contains("\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"));

            let mut got = Vec::new();
            let mut times = Vec::new();
            for entry in IntervalLogIterator::new(&buf) {
                match entry.unwrap() {
                    LogEntry::StartTime(t) | LogEntry::BaseTime(t) => times.push(t),
                    LogEntry::Interval(h) => {
                        got.push((h.tag().unwrap().as_str().to_string(), h.start_timestamp(), h.duration(), h.max(), h.encoded_histogram().to_string()))
                    }
                }
            }
            assert_eq!(times, vec![Duration::from_millis(1_700_000_000_123); 2]);
            assert_eq!(got.len(), intervals.len());
            for ((tag, start, duration, max, encoded), iv) in got.iter().zip(&intervals) {
                assert_eq!(tag, &format!("{}.{}", iv.phase.as_str(), iv.op));
                assert_eq!(*start, Duration::from_millis(iv.start_ms));
                assert_eq!(*duration, Duration::from_secs(1));
                let want = which.histogram(&iv.stats);
                let h = deserialize_histogram(&base64::engine::general_purpose::STANDARD.decode(encoded).unwrap()).unwrap();
                assert_eq!(h.len(), want.len());
                assert!(h == *want);
                // milliseconds with three decimals, as Java's writer prints `max / 1e6`
                let want_ms: f64 = format!("{:.3}", want.max() as f64 / 1e6).parse().unwrap();
                assert_eq!(*max, want_ms, "Interval_Max is in milliseconds");
                assert!(*max < 1000.0, "at most {} ns is under a second", want.max());
            }
        }
    }

    #[test]
    fn tags_never_hold_separators() {
        assert_eq!(tag(Phase::Run, "read one,two"), "run.read_one_two");
        assert!(Tag::new(&tag(Phase::Load, "a\r\nb")).is_some());
    }
}
