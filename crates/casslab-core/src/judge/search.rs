//! The data of a search for the highest fixed rate that meets a latency SLA (`p99 < 10ms`):
//! each step's rate, achieved throughput, the SLA's figure and whether it met it; and of an
//! experiment's searches, one per variant and repetition. `session::findmax` makes the steps
//! (each an ordinary saved run); `report::findmax` words them.

use crate::analysis::{Gate, GateMetric, Metric, SlaError};
use crate::stats::Phase;
use crate::store::{RunId, RunSummary};

/// One step of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The fixed rate tried; `None` for the probe at maximum throughput.
    pub target_per_s: Option<f64>,
    pub run: RunId,
    pub achieved_per_s: f64,
    /// The SLA's figure (NaN when the run had no successful operation).
    pub value: f64,
    pub p99_ns: f64,
    pub met: bool,
}

/// A finished (or interrupted) search.
#[derive(Debug, Clone)]
pub struct Search {
    pub sla: Gate,
    pub steps: Vec<Step>,
    pub interrupted: bool,
    /// The ramp that narrowed the search before its fixed rates, when it ran one.
    pub ramp: Option<RampProbe>,
}

/// One run whose rate ramped up through the neighbourhood of the answer: the levels it offered
/// were judged against the SLA, and the search's fixed rates then bisect between the highest
/// level that met it and the lowest above that did not.
#[derive(Debug, Clone, PartialEq)]
pub struct RampProbe {
    pub run: RunId,
    pub from_per_s: f64,
    pub to_per_s: f64,
    /// The rates the bisection starts between.
    pub lo_per_s: f64,
    pub hi_per_s: f64,
}

/// Between which offered levels of a ramp the SLA stopped being met: the highest level that
/// met it (0 when none did) and the first level above that did not (`ceiling` when none
/// failed). Each level is `(offered, met)`, by rising offered rate.
pub fn ramp_bracket(levels: &[(f64, bool)], ceiling: f64) -> (f64, f64) {
    let last_met = levels.iter().rposition(|(_, met)| *met);
    let lo = last_met.map_or(0.0, |i| levels[i].0);
    let hi = levels[last_met.map_or(0, |i| i + 1)..].iter().find(|(_, met)| !met).map_or(ceiling, |(o, _)| *o);
    (lo, hi.max(lo))
}

impl Search {
    /// The step with the highest throughput that met the SLA.
    pub fn best(&self) -> Option<&Step> {
        self.steps.iter().filter(|s| s.met).max_by(|a, b| a.achieved_per_s.total_cmp(&b.achieved_per_s))
    }
}

/// The SLA's figure, the achieved throughput and the total p99 of a run's measured phase.
pub(crate) fn observed(sla: &Gate, summary: &RunSummary) -> Result<(f64, f64, f64), SlaError> {
    let Some(p) = summary.phases.iter().find(|p| p.phase == Phase::Run) else {
        return Ok((f64::NAN, 0.0, f64::NAN));
    };
    let op = if sla.op == "total" { &p.total } else { p.ops.iter().find(|o| o.op == sla.op).ok_or_else(|| SlaError::UnknownOperation(sla.op.clone()))? };
    let l = &op.latency;
    let v = match sla.metric {
        GateMetric::Stat(Metric::Mean) => l.mean_ns,
        GateMetric::Stat(Metric::P50) => l.p50_ns as f64,
        GateMetric::Stat(Metric::P95) => l.p95_ns as f64,
        GateMetric::Stat(Metric::P99) => l.p99_ns as f64,
        GateMetric::Stat(Metric::P999) => l.p999_ns as f64,
        GateMetric::Max => l.max_ns as f64,
        GateMetric::Errors => op.error_count() as f64,
        // throughput is the search's own figure; a gate does not name the typical p99
        GateMetric::Stat(Metric::OpsPerS | Metric::P99Typical) => f64::NAN,
    };
    let v = if l.count == 0 && sla.metric != GateMetric::Errors { f64::NAN } else { v };
    Ok((v, p.total.ops_per_s, p.total.latency.p99_ns as f64))
}

/// The highest rate each variant sustained within an SLA, per repetition.
/// One search: the highest achieved rate that met the SLA (`None`: none did), and its runs.
pub type Searched = (Option<f64>, Vec<RunId>);

#[derive(Debug, Clone, PartialEq)]
pub struct FoundMax {
    /// Per variant in the file's order: for each repetition, the achieved throughput of the
    /// best step that met the SLA (`None`: no step met it) and the search's runs.
    pub variants: Vec<(String, Vec<Searched>)>,
    /// The searches in the order they ran: (variant, repetition).
    pub order: Vec<(String, u32)>,
    pub interrupted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_brackets_the_rate_where_the_sla_stopped_holding() {
        let levels = [(100.0, true), (200.0, true), (300.0, false), (400.0, true), (500.0, false), (600.0, false)];
        assert_eq!(ramp_bracket(&levels, 650.0), (400.0, 500.0), "the highest level met, and the next that failed");
        assert_eq!(ramp_bracket(&[(100.0, false), (200.0, false)], 650.0), (0.0, 100.0));
        assert_eq!(ramp_bracket(&[(100.0, true), (200.0, true)], 650.0), (200.0, 650.0));
    }
    use crate::analysis::parse_sla;
    use crate::stats::{OpStats, OpSummary};
    use crate::store::PhaseSummary;

    #[test]
    fn slas_default_to_all_operations() {
        let g = parse_sla("p99 < 10ms").unwrap();
        assert_eq!(g.op, "total");
        assert!(g.fails(9e6) && !g.fails(11e6), "met below 10 ms only");
        assert_eq!(parse_sla("read.p999 <= 2s").unwrap().op, "read");
        assert!(matches!(parse_sla("ops_s > 5"), Err(SlaError::Throughput(_))));
        assert!(parse_sla("p99 < 10").is_err(), "a latency needs a unit");
    }

    #[test]
    fn the_figure_comes_from_the_measured_phase() {
        let mut st = OpStats::default();
        for i in 1..=1000u64 {
            st.record_ok(i * 10_000, i * 10_000);
        }
        let read = OpSummary::of("read", &st, 2.0);
        let summary = RunSummary {
            phases: vec![PhaseSummary { phase: Phase::Run, duration_s: 2.0, target_rate_per_s: None, ops: vec![read.clone()], total: read.clone() }],
            ..RunSummary::default()
        };
        let (v, achieved, p99) = observed(&parse_sla("read.p99 < 1s").unwrap(), &summary).unwrap();
        assert_eq!((achieved, v), (500.0, p99));
        assert!((v - 9.9e6).abs() / 9.9e6 < 0.01, "{v}");
        assert!(matches!(observed(&parse_sla("write.p99 < 1s").unwrap(), &summary), Err(SlaError::UnknownOperation(_))));
        assert!(observed(&parse_sla("p99 < 1s").unwrap(), &RunSummary::default()).unwrap().0.is_nan());
    }
}
