//! The highest fixed rate that still meets a latency SLA (`p99 < 10ms`): a probe at maximum
//! throughput gives the ceiling; then a binary search of fixed rates between the last rate
//! that met the SLA and the first that did not, each step an ordinary saved run (tagged
//! `find_max=…`, `step=N`). Latency is judged from the intended start, so a step whose rate
//! could not be kept fails on its queueing, as it should.

use super::observer::SessionEvent;
use super::{Lab, RunSpec, SessionError};
use crate::analysis::Gate;
use crate::config::LoadMode;
use crate::store::RunStatus;

pub use crate::analysis::{parse_sla, SlaError};
use crate::judge::search::observed;
pub use crate::judge::search::{Search, Step};

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
