//! Gates judged on a [`Study`]: each `--fail-if` threshold on the compared sides' figures (or
//! on a lone run's), and the largest regression allowed against the baseline. Returns what
//! failed and what could not be checked, as data; the caller words and prints it.

use super::gate::{Gate, GateError, GateMetric, MaxRegression};
use super::study::Study;
use super::{Estimate, Metric, Outcome};

/// The largest regression an interval allows: its upper end for a latency, minus its lower
/// end for throughput.
fn worst_case(m: Metric, ch: &Estimate) -> f64 {
    if m.is_latency() {
        ch.hi
    } else {
        -ch.lo
    }
}

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
    /// Gates that neither failed nor passed: the interval reaches past the threshold (a
    /// figure's interval straddles a `--fail-if` value; a possible regression beyond the
    /// `--max-regression` limit is not ruled out), in words.
    pub undecided: Vec<String>,
}

impl GateReport {
    /// Whether every gate was judged: none failed to be checked, none undecided.
    pub fn decided(&self) -> bool {
        self.unchecked.is_empty() && self.undecided.is_empty()
    }
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
            } else if let GateMetric::Stat(m) = g.metric {
                // the point passes; the interval may not
                if let Some(e) = f.estimate(m).filter(|e| e.has_interval() && (g.fails(e.lo) || g.fails(e.hi))) {
                    report.undecided.push(format!(
                        "--fail-if '{g}': {} {} = {} [{}, {}]: its interval reaches past the threshold",
                        s.label,
                        g.metric.noun(),
                        g.format_value(observed),
                        g.format_value(e.lo),
                        g.format_value(e.hi)
                    ));
                }
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
            // exploratory figures are not judged, by gates either
            for c in per_metric.iter().flatten().filter(|c| !c.exploratory && c.outcome != Outcome::NotJudged) {
                if c.outcome == Outcome::TooShort {
                    short.get_or_insert_with(|| c.sentence(base, side, study.ops[oi].name()));
                }
                let Some(ch) = c.change else { continue };
                if c.is_regression() && ch.point.abs() > limit {
                    worse.push((study.ops[oi].name().to_string(), c.metric.noun(), ch));
                } else if ch.has_interval() && worst_case(c.metric, &ch) > limit {
                    report.undecided.push(format!(
                        "--max-regression {}%: {side} {} {} could be worse than {base} by more than that ({:+.1}%, interval {:+.1}% to {:+.1}%)",
                        limit * 100.0,
                        study.ops[oi].name(),
                        c.metric.noun(),
                        ch.point * 100.0,
                        ch.lo * 100.0,
                        ch.hi * 100.0
                    ));
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
