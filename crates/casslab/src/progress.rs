//! Progress on stderr while a run goes: one line rewritten in place on a terminal, or a plain
//! line every few seconds otherwise (logs, CI). It only reads interval samples.

use casslab_core::stats::{IntervalSample, Phase};
use std::io::{IsTerminal, Write};

pub struct Progress {
    tty: bool,
    phase: Option<Phase>,
    count: Option<u64>,
    done: u64,
    planned_s: f64,
    phase_start_ms: u64,
    last_plain_ms: u64,
    line_open: bool,
}

/// Milliseconds between plain progress lines when stderr is not a terminal.
const PLAIN_EVERY_MS: u64 = 5_000;

impl Progress {
    pub fn new() -> Self {
        Progress {
            tty: std::io::stderr().is_terminal(),
            phase: None,
            count: None,
            done: 0,
            planned_s: 0.0,
            phase_start_ms: u64::MAX,
            last_plain_ms: 0,
            line_open: false,
        }
    }

    pub fn phase(&mut self, phase: Phase, count: Option<u64>, planned_s: f64) {
        self.clear();
        self.phase = Some(phase);
        self.count = count;
        self.done = 0;
        self.planned_s = planned_s;
        self.phase_start_ms = u64::MAX;
    }

    pub fn interval(&mut self, s: &IntervalSample) {
        if self.phase_start_ms == u64::MAX {
            self.phase_start_ms = s.start_ms;
        }
        let t = s.total();
        // a run phase's count comes after its warm-up
        if s.phase != Phase::Warmup {
            self.done += t.ok + t.error_count();
        }
        let elapsed_s = (s.end_ms - self.phase_start_ms) as f64 / 1000.0;
        let ops_s = t.ok as f64 / s.duration_s().max(1e-3);
        let p99_ms = if t.intended.is_empty() { 0.0 } else { t.intended.value_at_quantile(0.99) as f64 / 1e6 };
        let where_ = match self.count {
            Some(n) => format!("{}/{} ({:.0}%)", self.done, n, 100.0 * self.done as f64 / n.max(1) as f64),
            None => format!("{:.0}s/{:.0}s", elapsed_s, self.planned_s),
        };
        let errs = t.error_count();
        // the recall the judge found in this interval, when the run searches vectors
        let mut recall = casslab_core::recall::RecallCounts::default();
        for (_, o) in &s.ops {
            if let Some(r) = &o.recall {
                recall.merge(r);
            }
        }
        let recall = recall.recall().map(|r| format!("  recall@{} {r:.3}", recall.k)).unwrap_or_default();
        let line = format!(
            "{:<6} {where_}  {:>9.0} ops/s  p99 {:>8.2} ms  errors {errs}{recall}{}",
            s.phase.as_str(),
            ops_s,
            p99_ms,
            if s.backlog > 0 { format!("  behind schedule {}", s.backlog) } else { String::new() }
        );
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
            self.line_open = true;
        } else if s.end_ms >= self.last_plain_ms + PLAIN_EVERY_MS {
            self.last_plain_ms = s.end_ms;
            let _ = writeln!(err, "{line}");
        }
    }

    /// Ends an in-place line so that other messages start on a fresh one.
    pub fn clear(&mut self) {
        if self.line_open {
            eprintln!();
            self.line_open = false;
        }
    }
}
