//! Progress on stderr while a run goes: one line rewritten in place on a terminal, or a plain
//! line every few seconds otherwise (logs, CI). The line is the library's
//! (`session::ProgressLine`); this only decides where and when it is written.

use casslab_core::session::ProgressLine;
use casslab_core::stats::IntervalSample;
use std::io::{IsTerminal, Write};

pub struct Progress {
    tty: bool,
    line: ProgressLine,
    last_plain_ms: u64,
    line_open: bool,
}

/// Milliseconds between plain progress lines when stderr is not a terminal.
const PLAIN_EVERY_MS: u64 = 5_000;

impl Progress {
    pub fn new() -> Self {
        Progress { tty: std::io::stderr().is_terminal(), line: ProgressLine::default(), last_plain_ms: 0, line_open: false }
    }

    /// A new phase: `count` operations, or `planned_s` seconds.
    pub fn phase(&mut self, count: Option<u64>, planned_s: f64) {
        self.clear();
        self.line = ProgressLine::new(count, planned_s);
    }

    pub fn interval(&mut self, s: &IntervalSample) {
        let line = self.line.line(s);
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
