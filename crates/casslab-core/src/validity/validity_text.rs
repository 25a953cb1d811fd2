//! A validity verdict in words: the terminal section printed after a run and by `show`, and
//! the one-line figures every report format shows beside the reasons. HTML and Markdown wrap
//! these lines themselves; the JSON formats serialize [`Validity`] as it is.

use super::{Figures, Validity, Verdict};
use std::fmt::Write;

/// A share as a percentage: `91.3%`, `0.12%`, `<0.01%`.
pub(crate) fn pct(share: f64) -> String {
    let p = share * 100.0;
    if p > 0.0 && p < 0.01 {
        "<0.01%".to_string()
    } else if p < 1.0 && p > 0.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Milliseconds for people: `0.4 ms`, `84 ms`, `2.41 s`.
pub(crate) fn duration_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

impl Figures {
    /// The figures in one line: late starts, operations never started, rate, client CPU,
    /// errors, empty reads.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if let (Some(share), Some(lag)) = (self.late_share, self.max_lag_ms) {
            parts.push(format!("started late {} (largest lag {})", pct(share), duration_ms(lag)));
        }
        if let (Some(n), Some(lag)) = (self.never_started.filter(|n| *n > 0), self.never_started_lag_ms) {
            parts.push(format!("never started {n} (the oldest due {} before the end)", duration_ms(lag)));
        }
        parts.push(match self.target_ops_per_s {
            Some(t) => format!("{:.0} of {t:.0} ops/s", self.achieved_ops_per_s),
            None => format!("{:.0} ops/s", self.achieved_ops_per_s),
        });
        if let Some(cpu) = self.client_cpu_pct {
            let demand = self.client_demand_pct.map(|d| format!(" (used or waited for: {d:.0}%)")).unwrap_or_default();
            let busy = self.client_saturated_share.map(|s| format!(", saturated in {}", pct(s))).unwrap_or_default();
            parts.push(format!("client CPU {cpu:.0}%{demand} of one core, {} core(s) usable{busy}", self.client_cores));
        }
        parts.push(format!("errors {}", pct(self.error_share)));
        if self.empty_reads.is_empty() {
            parts.push("no read came back empty".to_string());
        } else {
            let ops: Vec<String> = self.empty_reads.iter().map(|e| format!("{} {}", e.op, pct(e.empty as f64 / e.executions.max(1) as f64))).collect();
            parts.push(format!("empty reads {}", ops.join(", ")));
        }
        parts.join(" · ")
    }
}

impl Validity {
    /// The validity section of the terminal summary.
    pub fn text(&self) -> String {
        let mut out = format!("\nvalidity: {}", self.verdict.as_str());
        if self.verdict == Verdict::Valid {
            let _ = writeln!(out, " — {}", self.figures.line());
        } else {
            out.push('\n');
            for r in &self.reasons {
                let _ = writeln!(out, "  {:<8} {}", r.verdict.as_str(), r.message);
            }
            if self.figures.phase.is_some() {
                let _ = writeln!(out, "  figures  {}", self.figures.line());
            }
        }
        if !self.not_checked.is_empty() {
            let _ = writeln!(out, "  not checked: {}", self.not_checked.join("; "));
        }
        out
    }
}
