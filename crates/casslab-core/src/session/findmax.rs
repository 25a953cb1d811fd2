//! The highest fixed rate that still meets a latency SLA (`p99 < 10ms`): a probe at maximum
//! throughput gives the ceiling; then a binary search of fixed rates between the last rate
//! that met the SLA and the first that did not, each step an ordinary saved run (tagged
//! `find_max=…`, `step=N`). Latency is judged from the intended start, so a step whose rate
//! could not be kept fails on its queueing, as it should.
//!
//! With a ramp first ([`find_max_ramped`]), one run between the probe and the steps ramps its
//! rate from 5 % to 110 % of the ceiling over a step's length; its levels of offered load are
//! judged against the SLA (`analysis::load_curve`), and the steps bisect only between the
//! highest level that met it and the next that did not. The steps still decide the answer: a
//! bracket the steps contradict (none of them met, or all did) is widened to the rest of the
//! range.

use super::observer::SessionEvent;
use super::{Lab, RunSpec, SessionError};
use crate::analysis::Gate;
use crate::config::LoadMode;
use crate::load_shape::LoadShape;
use crate::store::{RunStatus, RunSummary};

pub use crate::analysis::{parse_sla, SlaError};
use crate::judge::search::{observed, ramp_bracket, RampProbe};
pub use crate::judge::search::{Search, Step};

/// Why a search stopped early.
#[derive(Debug, thiserror::Error)]
pub enum FindMaxError {
    #[error(transparent)]
    Sla(#[from] SlaError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("cannot read the ramp's intervals back: {0}")]
    Results(crate::store::StoreError),
}

impl From<crate::store::StoreError> for FindMaxError {
    fn from(e: crate::store::StoreError) -> FindMaxError {
        FindMaxError::Results(e)
    }
}

/// Searches the highest fixed rate of `base` (its config's rate is ignored) that meets `sla`,
/// in at most `max_steps` steps after the probe.
pub async fn find_max(lab: &Lab<'_>, base: &RunSpec, sla: &Gate, max_steps: usize) -> Result<Search, FindMaxError> {
    search(lab, base, sla, max_steps, false).await
}

/// As [`find_max`], with a ramp between the probe and the steps to narrow where they bisect.
pub async fn find_max_ramped(lab: &Lab<'_>, base: &RunSpec, sla: &Gate, max_steps: usize) -> Result<Search, FindMaxError> {
    search(lab, base, sla, max_steps, true).await
}

/// Steps closer than this share of the ceiling end the search.
const RESOLUTION: f64 = 0.05;
/// The ramp's range, as shares of the ceiling.
const RAMP_FROM: f64 = 0.05;
const RAMP_TO: f64 = 1.1;

async fn search(lab: &Lab<'_>, base: &RunSpec, sla: &Gate, max_steps: usize, ramp_first: bool) -> Result<Search, FindMaxError> {
    let search_id = crate::engine::unix_now_ms() / 1000;
    let mut search = Search { sla: sla.clone(), steps: Vec::new(), interrupted: false, ramp: None };
    let base = &without_schedule(base);
    let spec_of = |target: Option<f64>, n: usize, load: LoadMode| {
        let mut spec = base.clone();
        spec.config.rate = target.map(LoadShape::fixed);
        spec.config.load = load;
        spec.tags.push(format!("find_max={search_id}"));
        spec.tags.push(format!("step={n}"));
        spec
    };
    let step = |target: Option<f64>, n: usize, load: LoadMode| {
        let spec = spec_of(target, n, load);
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
    if probe_met || ceiling <= 0.0 {
        return Ok(search);
    }
    let (mut lo, mut hi) = (0.0_f64, ceiling);
    if ramp_first {
        let mut spec = spec_of(None, 0, LoadMode::Skip);
        spec.tags.retain(|t| !t.starts_with("step="));
        spec.tags.push("step=ramp".into());
        match ramp(lab, spec, sla, ceiling).await? {
            Some(r) => {
                (lo, hi) = (r.lo_per_s, r.hi_per_s);
                search.ramp = Some(r);
            }
            None => {
                search.interrupted = true;
                return Ok(search);
            }
        }
    }
    let mut bracket = Bracket::new(lo, hi, ceiling);
    let mut n = 1;
    while n <= max_steps {
        let Some(r) = bracket.next_rate() else { break };
        let Some(s) = step(Some(r), n, LoadMode::Skip).await? else {
            search.interrupted = true;
            return Ok(search);
        };
        bracket.record(r, s.met);
        search.steps.push(s);
        n += 1;
    }
    Ok(search)
}

/// `base` without the workload's own rate schedule: the search sets every rate itself.
fn without_schedule(base: &RunSpec) -> RunSpec {
    let mut base = base.clone();
    if let Some(r) = base.workload.run.as_mut() {
        (r.rate, r.concurrency) = (None, None);
    }
    base.config.rate = None;
    base
}

/// The bisection's bracket: the highest rate known to meet the SLA (`lo`) and the lowest known
/// to miss it (`hi`), within `outer`, the range it may widen to when its bracket misled it (a
/// ramp's bracket that the steps never confirmed from inside).
struct Bracket {
    lo: f64,
    hi: f64,
    ceiling: f64,
    outer: (f64, f64),
    met_any: bool,
    failed_any: bool,
}

impl Bracket {
    fn new(lo: f64, hi: f64, ceiling: f64) -> Bracket {
        Bracket { lo, hi, ceiling, outer: (0.0, ceiling), met_any: false, failed_any: false }
    }

    /// The next rate to try, `None` when the bracket is narrower than [`RESOLUTION`] and
    /// confirmed on both sides.
    fn next_rate(&mut self) -> Option<f64> {
        while (self.hi - self.lo) / self.ceiling < RESOLUTION {
            // a bracket the steps never tested from inside: widen it where it was not confirmed
            if !self.met_any && self.lo > self.outer.0 {
                (self.lo, self.hi) = (self.outer.0, self.lo);
                self.outer.1 = self.hi;
            } else if !self.failed_any && self.hi < self.outer.1 {
                (self.lo, self.hi) = (self.hi, self.outer.1);
                self.outer.0 = self.lo;
            } else {
                return None;
            }
            (self.met_any, self.failed_any) = (false, false);
        }
        Some(((self.lo + self.hi) / 2.0).max(1.0))
    }

    /// What a step at `rate` found.
    fn record(&mut self, rate: f64, met: bool) {
        if met {
            (self.lo, self.met_any) = (rate, true);
        } else {
            (self.hi, self.failed_any) = (rate, true);
        }
    }
}

/// The ramp run: from 5 % to 110 % of `ceiling` over the measured time (the warm-up at its
/// first level); returns the bracket its levels give, `None` when it was interrupted.
async fn ramp(lab: &Lab<'_>, mut spec: RunSpec, sla: &Gate, ceiling: f64) -> Result<Option<RampProbe>, FindMaxError> {
    let run = spec.workload.run.as_ref();
    let warmup_s = spec.config.warmup_s.or(run.map(|r| r.warmup_s)).unwrap_or(0.0);
    let duration_s = spec.config.duration_s.or(run.map(|r| r.duration_s)).unwrap_or(60.0);
    let (from, to) = ((ceiling * RAMP_FROM).max(1.0).round(), (ceiling * RAMP_TO).round());
    let ramp = format!("ramp {from}..{to} over {}", crate::load_shape::dur(duration_s));
    let text = if warmup_s > 0.0 { format!("{from} for {}, {ramp}", crate::load_shape::dur(warmup_s)) } else { ramp };
    let shape = LoadShape::parse(&text).expect("a ramp casslab writes reads back");
    spec.config.rate = Some(shape);
    (spec.config.warmup_s, spec.config.duration_s) = (Some(warmup_s), Some(duration_s));
    lab.observer.on(&SessionEvent::SearchRamp { from_per_s: from, to_per_s: to, bracket: None });
    let r = super::run(lab, &spec).await?;
    if r.status == RunStatus::Interrupted {
        return Ok(None);
    }
    let levels: Vec<(f64, bool)> = match crate::analysis::load_curve::of_run(lab.results, r.run)? {
        Some(a) => a
            .curve
            .iter()
            .map(|g| {
                let summary = RunSummary { phases: vec![g.summary.clone()], ..RunSummary::default() };
                let value = observed(sla, &summary).map_or(f64::NAN, |v| v.0);
                (g.offered_per_s.unwrap_or(0.0), !value.is_nan() && sla.fails(value) && g.kept())
            })
            .collect(),
        None => Vec::new(),
    };
    let (lo, hi) = ramp_bracket(&levels, ceiling);
    lab.observer.on(&SessionEvent::SearchRamp { from_per_s: from, to_per_s: to, bracket: Some((lo, hi)) });
    Ok(Some(RampProbe { run: r.run, from_per_s: from, to_per_s: to, lo_per_s: lo, hi_per_s: hi.min(ceiling) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bisects a bracket against a true maximum: every step below it meets the SLA.
    fn bisect(mut b: Bracket, max_ok: f64, steps: usize) -> (Vec<f64>, f64) {
        let mut tried = Vec::new();
        while tried.len() < steps {
            let Some(r) = b.next_rate() else { break };
            b.record(r, r <= max_ok);
            tried.push(r);
        }
        (tried, b.lo)
    }

    #[test]
    fn the_bracket_halves_towards_the_highest_rate_that_met() {
        let (tried, lo) = bisect(Bracket::new(0.0, 10_000.0, 10_000.0), 3_000.0, 20);
        assert_eq!(&tried[..3], [5_000.0, 2_500.0, 3_750.0]);
        assert!(lo <= 3_000.0 && lo > 3_000.0 - RESOLUTION * 10_000.0, "{lo} after {tried:?}");
        assert!(tried.len() < 20, "it stops once the bracket is narrower than the resolution: {tried:?}");
    }

    #[test]
    fn a_narrow_bracket_never_confirmed_from_inside_widens() {
        // a ramp said 6,000-6,200 (narrower than the resolution, so no step lies inside it), but
        // the SLA holds only up to 3,000: the bracket widens below what it was told, to 0-6,000,
        // and the steps find the real one
        let (tried, lo) = bisect(Bracket::new(6_000.0, 6_200.0, 10_000.0), 3_000.0, 30);
        assert_eq!(tried[0], 3_000.0);
        assert!(lo <= 3_000.0 && lo > 3_000.0 - RESOLUTION * 10_000.0, "{lo} after {tried:?}");
    }
}
