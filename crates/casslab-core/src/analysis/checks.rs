//! Gates judged on a [`Study`]: each `--fail-if` threshold on the compared sides' figures (or
//! on a lone run's), and the largest regression allowed against the baseline. Returns what
//! failed and what could not be checked, as data; the caller words and prints it.

use super::gate::{Gate, GateError, GateMetric, MaxRegression};
use super::study::Study;
use super::{Estimate, Outcome};

/// A gate that failed.
#[derive(Debug, Clone, PartialEq)]
pub enum GateFailure {
    /// `gate` holds for `side`'s figure.
    Threshold { gate: Gate, side: String, observed: f64 },
    /// `side` is significantly worse than `baseline` by more than the limit; each entry names
    /// the operation, the figure and its change with the interval.
    Regression { limit: f64, side: String, baseline: String, worse: Vec<(String, &'static str, Estimate)> },
}

/// What the gates found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateReport {
    pub failures: Vec<GateFailure>,
    /// Gates that could not be judged (a lone run, a comparison too short), in words.
    pub unchecked: Vec<String>,
}

/// Judges `gates` and `max_regression` on `study`. A gate naming an operation a checked side
/// never did is an error.
pub fn check_gates(study: &Study, gates: &[Gate], max_regression: Option<MaxRegression>) -> Result<GateReport, GateError> {
    let mut report = GateReport::default();
    // Gates judge the compared runs; a lone run is judged itself.
    let checked = if study.sides.len() > 1 { 1 } else { 0 };
    for g in gates {
        let op = g.op_ref();
        for s in &study.sides[checked..] {
            let oi = study.ops.iter().position(|o| *o == op);
            let Some(f) = oi.and_then(|oi| s.figures[oi].as_ref()) else {
                let known: Vec<&str> = s.windows.ops.iter().map(String::as_str).chain(["total"]).collect();
                return Err(GateError::UnknownOp { gate: g.text.clone(), side: s.label.clone(), op: g.op.clone(), known: known.join(", ") });
            };
            let observed = match g.metric {
                GateMetric::Stat(m) => f.point(m),
                GateMetric::Max => f.max_ns as f64,
                GateMetric::Errors => f.errors as f64,
            };
            if g.fails(observed) {
                report.failures.push(GateFailure::Threshold { gate: g.clone(), side: s.label.clone(), observed });
            }
        }
    }
    let Some(MaxRegression(limit)) = max_regression else { return Ok(report) };
    if study.sides.len() < 2 {
        report.unchecked.push("--max-regression: only one run, nothing to compare against".into());
    }
    for (si, per_op) in study.comparisons.iter().enumerate() {
        let (base, side) = (&study.sides[0].label, &study.sides[si + 1].label);
        let mut worse = Vec::new();
        let mut short = None;
        for (oi, per_metric) in per_op.iter().enumerate() {
            for c in per_metric.iter().flatten() {
                if c.outcome == Outcome::TooShort {
                    short.get_or_insert_with(|| c.sentence(base, side, study.ops[oi].name()));
                }
                if let Some(ch) = c.change.filter(|ch| c.is_regression() && ch.point.abs() > limit) {
                    worse.push((study.ops[oi].name().to_string(), c.metric.noun(), ch));
                }
            }
        }
        if let Some(s) = short {
            report.unchecked.push(format!("--max-regression not checked: {s}"));
        }
        if !worse.is_empty() {
            report.failures.push(GateFailure::Regression { limit, side: side.clone(), baseline: base.clone(), worse });
        }
    }
    Ok(report)
}
