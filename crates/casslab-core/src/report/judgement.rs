//! The parts of a [`Judgement`] that `compare` and `experiment` show beside the study itself:
//! the window length chosen from the runs' length, the servers' side, and the gates (what
//! failed, one line each, named by its flag; what could not be judged).

use super::comparison::{self, signed};
use crate::analysis::{approx_duration, GateFailure, GateReport};
use crate::judge::{ChosenWindow, ServerSide};

/// "window: 6 s (from the runs' length: the shortest measured 60 s, so 10 windows); --window
/// sets it".
pub fn window_line(w: &ChosenWindow) -> Option<String> {
    let shortest = w.shortest_s?;
    let enough = if w.windows < w.min_windows { format!(", fewer than the {} a verdict needs: run longer", w.min_windows) } else { String::new() };
    Some(format!(
        "window: {} (from the runs' length: the shortest measured {shortest:.0} s, so {} windows{enough}); --window sets it",
        approx_duration(w.window_s),
        w.windows
    ))
}

/// The servers' side as text, and the same as lines for a page.
pub fn server_side(s: &ServerSide, confidence: f64) -> (String, Vec<String>) {
    let text = comparison::server_text(&s.figures, &s.differences, confidence);
    let lines = text.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect();
    (text, lines)
}

/// A failed gate in one line, named by its flag.
pub fn gate_failure(f: &GateFailure, confidence: f64) -> String {
    match f {
        GateFailure::Threshold { gate, side, observed } => {
            format!("--fail-if '{gate}': {side} {} {} = {}", gate.op, gate.metric.noun(), gate.format_value(*observed))
        }
        GateFailure::Regression { limit, side, baseline, worse } => {
            let worse: Vec<String> = worse
                .iter()
                .map(|(op, noun, ch)| format!("{op} {noun} {} ({}% CI {}, {})", signed(ch.point), confidence * 100.0, signed(ch.lo), signed(ch.hi)))
                .collect();
            format!("--max-regression {}%: {side} is worse than {baseline} by more than that: {}", limit * 100.0, worse.join(", "))
        }
    }
}

/// Every failed gate, one line each.
pub fn gate_failures(r: &GateReport, confidence: f64) -> Vec<String> {
    r.failures.iter().map(|f| gate_failure(f, confidence)).collect()
}
