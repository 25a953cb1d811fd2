//! An experiment with `rates:` ran every variant at each fixed rate: its variants are compared
//! rate by rate (each rate's variants side by side, the first the baseline, as `compare`
//! does), and with an `sla:` each variant gets the highest rate that met it, judged on the
//! figure's interval: a rate "meets" the SLA when the whole interval does, "maybe" when only
//! the estimate does, and it must also have been kept (achieved throughput within 5 % of the
//! target). Data only; `report::sweep` words it.

use crate::analysis::study::{study, Group, Study, StudyError, StudyPlan};
use crate::analysis::{parse_sla, Estimate, GateMetric, Metric, OpRef, SlaError};
use crate::store::Store;

/// How a variant at one rate stands against the SLA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlaVerdict {
    /// The whole interval meets it, and the rate was kept.
    Meets,
    /// The estimate meets it but the interval reaches past it.
    Maybe,
    No,
}

/// One variant at one rate.
#[derive(Debug, Clone, PartialEq)]
pub struct SlaRow {
    /// The variant's base name (its label without `@rate`).
    pub variant: String,
    pub rate_per_s: f64,
    pub achieved_per_s: f64,
    /// The SLA's figure with its interval.
    pub figure: Option<Estimate>,
    pub verdict: SlaVerdict,
}

/// The SLA judged rate by rate.
#[derive(Debug, Clone, PartialEq)]
pub enum SlaTable {
    /// The SLA's figure has no interval to judge (an error share): said, not judged.
    NotJudgeable { sla: String },
    Judged {
        sla: String,
        metric: Metric,
        gate: crate::analysis::Gate,
        confidence: f64,
        rows: Vec<SlaRow>,
        /// Per variant, the highest rate that met it (or met it by the estimate only).
        best: Vec<(String, Option<(f64, SlaVerdict)>)>,
    },
}

/// The variants compared at each rate, and the SLA table.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// `(rate, study)` for every rate at which two variants or more have runs.
    pub per_rate: Vec<(f64, Study)>,
    pub sla: Option<SlaTable>,
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error(transparent)]
    Sla(#[from] SlaError),
}

/// Judges an estimate of the SLA's figure at `rate`, given the throughput achieved.
pub fn judge_rate(sla: &crate::analysis::Gate, e: &Estimate, achieved_per_s: f64, rate: f64) -> SlaVerdict {
    // `fails` is true when the condition (`p99 < 5ms`) holds
    let holds = |v: f64| sla.fails(v);
    if achieved_per_s < 0.95 * rate || !holds(e.point) {
        SlaVerdict::No
    } else if holds(e.lo) && holds(e.hi) {
        SlaVerdict::Meets
    } else {
        SlaVerdict::Maybe
    }
}

/// Compares the variants (`bases`, in the experiment's order) rate by rate; `groups` are the
/// runs per variant and rate, labelled `variant@rate`.
pub fn sweep(store: &Store, rates: &[f64], sla: Option<&str>, bases: &[String], groups: &[Group], plan: &StudyPlan) -> Result<Sweep, SweepError> {
    let mut per_rate = Vec::new();
    for &rate in rates {
        let of_rate: Vec<Group> =
            groups.iter().filter(|g| g.label.rsplit_once('@').is_some_and(|(_, r)| r.parse::<f64>().ok() == Some(rate))).cloned().collect();
        if of_rate.len() >= 2 {
            per_rate.push((rate, study(store, &of_rate, plan.clone())?));
        }
    }
    let sla = match sla {
        Some(text) => Some(sla_table(text, bases, &per_rate, plan.opts.confidence)?),
        None => None,
    };
    Ok(Sweep { per_rate, sla })
}

fn sla_table(text: &str, bases: &[String], per_rate: &[(f64, Study)], confidence: f64) -> Result<SlaTable, SlaError> {
    let gate = parse_sla(text)?;
    let GateMetric::Stat(metric) = gate.metric else { return Ok(SlaTable::NotJudgeable { sla: text.to_string() }) };
    let mut rows = Vec::new();
    let mut best: Vec<(String, Option<(f64, SlaVerdict)>)> = bases.iter().map(|b| (b.clone(), None)).collect();
    for (rate, a) in per_rate {
        let Some(oi) = a.ops.iter().position(|o| match (&gate.op[..], o) {
            ("total", OpRef::Total) => true,
            (name, OpRef::Op(n)) => n == name,
            _ => false,
        }) else {
            continue;
        };
        for side in &a.sides {
            let base = side.label.rsplit_once('@').map_or(side.label.as_str(), |(b, _)| b);
            let fig = side.figures[oi].as_ref();
            let figure = fig.and_then(|f| f.estimate(metric));
            let achieved_per_s = fig.and_then(|f| f.estimate(Metric::OpsPerS)).map_or(0.0, |e| e.point);
            let verdict = figure.as_ref().map_or(SlaVerdict::No, |e| judge_rate(&gate, e, achieved_per_s, *rate));
            rows.push(SlaRow { variant: base.to_string(), rate_per_s: *rate, achieved_per_s, figure, verdict });
            if let Some(b) = best.iter_mut().find(|(n, _)| n == base) {
                if verdict != SlaVerdict::No && b.1.is_none_or(|(r, _)| *rate > r) {
                    b.1 = Some((*rate, verdict));
                }
            }
        }
    }
    Ok(SlaTable::Judged { sla: text.to_string(), metric, gate, confidence, rows, best })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_meets_the_sla_only_with_its_whole_interval_and_when_kept() {
        let sla = parse_sla("p99 < 5ms").unwrap();
        let e = |point: f64, lo: f64, hi: f64| Estimate { point, lo, hi };
        assert_eq!(judge_rate(&sla, &e(3e6, 2e6, 4e6), 1000.0, 1000.0), SlaVerdict::Meets);
        assert_eq!(judge_rate(&sla, &e(4e6, 3e6, 6e6), 1000.0, 1000.0), SlaVerdict::Maybe);
        assert_eq!(judge_rate(&sla, &e(6e6, 4e6, 7e6), 1000.0, 1000.0), SlaVerdict::No);
        assert_eq!(judge_rate(&sla, &e(3e6, 2e6, 4e6), 800.0, 1000.0), SlaVerdict::No, "a rate not kept");
    }
}
