//! Running an experiment: every variant `repetitions` times, interleaved (A B A B …, so drift
//! of the machine does not favour one side), each run an ordinary saved run tagged with the
//! experiment, its id, the variant and the repetition. What to compare and how is the
//! analysis' job; this only makes the runs.

use super::observer::SessionEvent;
use super::{Lab, RunSpec, SessionError};
use crate::config::{LoadMode, RunConfig};
use crate::experiment::{Experiment, Variant};
use crate::store::{RunId, RunStatus};

/// The runs an experiment made, per variant in the file's order (the first is the baseline).
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRuns {
    pub variants: Vec<(String, Vec<RunId>)>,
    /// The user stopped it; the runs so far are saved.
    pub interrupted: bool,
}

/// A variant whose run could not be made.
#[derive(Debug, thiserror::Error)]
#[error("variant {variant}: {source}")]
pub struct VariantError {
    pub variant: String,
    #[source]
    pub source: SessionError,
}

/// Checks every variant's server definition before the first run, so that a wrong one stops
/// the experiment before any node does.
async fn check_servers(lab: &Lab<'_>, exp: &Experiment) -> Result<(), VariantError> {
    let mut checked: Vec<&crate::cluster::ServerSpec> = Vec::new();
    for v in &exp.variants {
        let Some(spec) = &v.workload.cluster else { continue };
        if checked.contains(&spec) {
            continue;
        }
        super::check_server(lab, &v.workload.name, spec).await.map_err(|source| VariantError { variant: v.name.clone(), source })?;
        checked.push(spec);
    }
    Ok(())
}

/// The run of variant `v` in repetition `rep`: the base config with the variant's workload,
/// parameters and client settings, tagged.
pub fn variant_spec(exp: &Experiment, v: &Variant, base: &RunConfig, rep: u32, experiment_id: &str, extra_tags: &[String]) -> RunSpec {
    let mut cfg = base.clone();
    cfg.workload = format!("{}#{}", exp.origin, v.name);
    cfg.workload_source = v.source.clone();
    cfg.params = v.workload.params.clone();
    if let Some(c) = v.concurrency {
        cfg.concurrency = c;
    }
    if v.rate_per_s.is_some() {
        cfg.rate_per_s = v.rate_per_s;
    }
    if exp.fresh_load && cfg.load == LoadMode::Auto {
        cfg.load = LoadMode::Reload;
    }
    let mut tags = vec![
        format!("experiment={}", exp.name),
        format!("experiment_id={experiment_id}"),
        format!("variant={}", v.name),
        format!("repetition={rep}"),
    ];
    tags.extend(extra_tags.iter().cloned());
    RunSpec { config: cfg, workload: v.workload.clone(), tags }
}

/// Runs every variant of `exp` `repetitions` times, interleaved. Stops after the run in which
/// the user asked to stop.
pub async fn run_experiment(
    lab: &Lab<'_>,
    exp: &Experiment,
    base: &RunConfig,
    repetitions: u32,
    experiment_id: &str,
    extra_tags: &[String],
) -> Result<ExperimentRuns, VariantError> {
    let mut out = ExperimentRuns { variants: exp.variants.iter().map(|v| (v.name.clone(), Vec::new())).collect(), interrupted: false };
    check_servers(lab, exp).await?;
    for rep in 1..=repetitions {
        for (i, v) in exp.variants.iter().enumerate() {
            lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, repetition: rep, repetitions });
            let spec = variant_spec(exp, v, base, rep, experiment_id, extra_tags);
            let r = super::run(lab, &spec).await.map_err(|source| VariantError { variant: v.name.clone(), source })?;
            out.variants[i].1.push(r.run);
            if r.status == RunStatus::Interrupted || lab.stopping() {
                out.interrupted = true;
                return Ok(out);
            }
        }
    }
    Ok(out)
}
