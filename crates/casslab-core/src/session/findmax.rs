//! The highest fixed rate that still meets a latency SLA (`p99 < 10ms`): a probe at maximum
//! throughput gives the ceiling; then a binary search of fixed rates between the last rate
//! that met the SLA and the first that did not, each step an ordinary saved run (tagged
//! `find_max=…`, `step=N`). Latency is judged from the intended start, so a step whose rate
//! could not be kept fails on its queueing, as it should.

use super::observer::SessionEvent;
use super::{Lab, RunSpec, SessionError};
use crate::analysis::{Gate, GateError, GateMetric, Metric};
use crate::config::LoadMode;
use crate::stats::Phase;
use crate::store::{RunId, RunStatus, RunSummary};

/// An SLA that cannot be searched for.
#[derive(Debug, thiserror::Error)]
pub enum SlaError {
    #[error("--find-max {text}: {source}")]
    Syntax { text: String, source: GateError },
    #[error("--find-max {0}: the SLA must be about latency or errors (throughput is what is searched)")]
    Throughput(String),
    #[error("--find-max: the run has no operation \"{0}\"")]
    UnknownOperation(String),
}

/// Parses an SLA: `p99 < 10ms` (all operations together) or `read.p99 < 10ms`.
pub fn parse_sla(text: &str) -> Result<Gate, SlaError> {
    let lhs_end = text.find(['<', '>']).unwrap_or(text.len());
    let full = if text[..lhs_end].contains('.') { text.to_string() } else { format!("total.{}", text.trim()) };
    let gate: Gate = full.parse().map_err(|source| SlaError::Syntax { text: text.to_string(), source })?;
    if matches!(gate.metric, GateMetric::Stat(Metric::OpsPerS)) {
        return Err(SlaError::Throughput(text.to_string()));
    }
    Ok(gate)
}

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
}

impl Search {
    /// The step with the highest throughput that met the SLA.
    pub fn best(&self) -> Option<&Step> {
        self.steps.iter().filter(|s| s.met).max_by(|a, b| a.achieved_per_s.total_cmp(&b.achieved_per_s))
    }
}

/// The SLA's figure, the achieved throughput and the total p99 of a run's measured phase.
fn observed(sla: &Gate, summary: &RunSummary) -> Result<(f64, f64, f64), SlaError> {
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
        GateMetric::Stat(Metric::OpsPerS) => f64::NAN,
    };
    let v = if l.count == 0 && sla.metric != GateMetric::Errors { f64::NAN } else { v };
    Ok((v, p.total.ops_per_s, p.total.latency.p99_ns as f64))
}

/// Why a search stopped early.
#[derive(Debug, thiserror::Error)]
pub enum FindMaxError {
    #[error(transparent)]
    Sla(#[from] SlaError),
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// Searches the highest fixed rate of `base` (its config's rate is ignored) that meets `sla`,
/// in at most `max_steps` steps after the probe.
pub async fn find_max(lab: &Lab<'_>, base: &RunSpec, sla: &Gate, max_steps: usize) -> Result<Search, FindMaxError> {
    let search_id = crate::engine::unix_now_ms() / 1000;
    let mut search = Search { sla: sla.clone(), steps: Vec::new(), interrupted: false };
    let step = |target: Option<f64>, n: usize, load: LoadMode| {
        let mut spec = base.clone();
        spec.config.rate_per_s = target;
        spec.config.load = load;
        spec.tags.push(format!("find_max={search_id}"));
        spec.tags.push(format!("step={n}"));
        async move {
            lab.observer.on(&SessionEvent::SearchStep { step: n, rate_per_s: target });
            let r = super::run(lab, &spec).await?;
            if r.status == RunStatus::Interrupted {
                return Ok(None);
            }
            let (value, achieved, p99_ns) = observed(sla, &r.summary)?;
            // a rate that was not kept does not count as met, whatever its latency
            let kept = target.is_none_or(|t| achieved >= 0.95 * t);
            let met = !value.is_nan() && sla.fails(value) && kept;
            let figure = format!("{} = {}", sla.metric.noun(), sla.format_value(value));
            lab.observer.on(&SessionEvent::SearchJudged { step: n, achieved_per_s: achieved, figure: &figure, met });
            Ok::<_, FindMaxError>(Some(Step { target_per_s: target, run: r.run, achieved_per_s: achieved, value, p99_ns, met }))
        }
    };

    let Some(probe) = step(None, 0, base.config.load).await? else {
        search.interrupted = true;
        return Ok(search);
    };
    let (ceiling, probe_met) = (probe.achieved_per_s, probe.met);
    search.steps.push(probe);
    if !probe_met && ceiling > 0.0 {
        let (mut lo, mut hi) = (0.0_f64, ceiling);
        for n in 1..=max_steps {
            let r = ((lo + hi) / 2.0).max(1.0);
            let Some(s) = step(Some(r), n, LoadMode::Skip).await? else {
                search.interrupted = true;
                return Ok(search);
            };
            if s.met {
                lo = r;
            } else {
                hi = r;
            }
            search.steps.push(s);
            if (hi - lo) / ceiling < 0.05 {
                break;
            }
        }
    }
    Ok(search)
}

#[cfg(test)]
mod tests {
    use super::*;
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
