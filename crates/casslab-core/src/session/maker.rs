//! The runs of an experiment, one step at a time ([`Maker`]): the unmeasured round or the loads,
//! settling the cluster, each measured run tagged with its place in the design, and the looks
//! of a sequential experiment after each block (its horizon fixed after the first). The block
//! design (`conduct.rs`) and the variants measured at the same time (`together.rs`) both make
//! their runs through it.

use super::experiment_setup::{interim, variant_spec, ExperimentError, ExperimentSetup, SequentialPlan, VariantError};
use super::observer::SessionEvent;
use super::server_metrics::{wait_for_compactions, Compactions};
use super::{Lab, RunSpec};
use crate::analysis::design_record::DesignRecord;
use crate::analysis::study::Group;
use crate::config::{LoadMode, RunConfig};
use crate::experiment::Variant;
use crate::judge::plan;
use crate::judge::verdict::{ExperimentRuns, StopReason};
use crate::judge::{judge, JudgeOptions};
use crate::notice::Notice;
use crate::store::RunStatus;
use std::time::Duration;

/// The most blocks a sequential experiment runs, whatever its budget.
pub(super) const MAX_BLOCKS: u32 = 500;

/// The design an experiment's runs are made and judged by, as saved with it.
fn design_of(setup: &ExperimentSetup, judging: &JudgeOptions) -> DesignRecord {
    DesignRecord {
        sequential: setup.sequential,
        judged: judging.plan.judged.clone(),
        margin: judging.plan.blocks.and_then(|b| b.margin),
        family: judging.plan.family,
        ..DesignRecord::default()
    }
}

/// Whether to go on after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Go,
    /// The user asked to stop.
    Stop,
}

/// Makes an experiment's runs, one step at a time, into `out`.
pub(super) struct Maker<'l, 's, 'e> {
    pub(super) lab: &'l Lab<'l>,
    pub(super) setup: &'s ExperimentSetup<'e>,
    pub(super) out: ExperimentRuns,
    /// Tags of every run of the experiment, and of its measured runs.
    common: Vec<String>,
    pub(super) measured_tags: Vec<String>,
    /// Every measured run loads its data afresh.
    pub(super) fresh: bool,
    /// `--skip-load` / `--load-only`: loads are the user's business.
    pub(super) plain: bool,
    /// The design, saved with the experiment as it grows.
    design: DesignRecord,
}

impl<'l, 's, 'e> Maker<'l, 's, 'e> {
    pub(super) fn new(lab: &'l Lab<'l>, setup: &'s ExperimentSetup<'e>, out: ExperimentRuns, judging: &JudgeOptions) -> Self {
        let (exp, ro) = (setup.exp, out.run_order);
        let on = |b: bool| if b { "on" } else { "off" };
        let mut common = vec![format!("experiment={}", exp.name), format!("experiment_id={}", setup.experiment_id)];
        common.extend(setup.tags.iter().cloned());
        let mut measured_tags = common.clone();
        measured_tags.push(format!("order={}", ro.order.as_str()));
        measured_tags.extend(ro.seed.map(|s| format!("order_seed={s}")));
        measured_tags.push(format!("unmeasured_round={}", on(ro.unmeasured_round)));
        measured_tags.push(format!("settle={}", on(ro.settle)));
        let design = design_of(setup, judging);
        measured_tags.extend(design.tags());
        let fresh = variant_spec(exp, &exp.variants[0], &setup.base, Vec::new()).config.load == LoadMode::Reload;
        let plain = matches!(setup.base.load, LoadMode::Skip | LoadMode::Only);
        let maker = Maker { lab, setup, out, common, measured_tags, fresh, plain, design };
        maker.save_design();
        maker
    }

    /// Saves the design as it stands (the experiment goes on without it if the store refuses:
    /// its runs' tags say it too).
    fn save_design(&self) {
        let _ = self.design.save(self.lab.results, &self.setup.experiment_id);
    }

    /// The variants run at the same time, `layout` saying where.
    pub(super) fn made_together(&mut self, layout: &str) {
        self.design.simultaneous = true;
        self.design.layout = Some(layout.to_string());
        self.save_design();
        self.measured_tags.extend(["timing=simultaneous".to_string(), format!("layout={layout}")]);
    }

    pub(super) fn stopped(mut self) -> ExperimentRuns {
        self.stop_by_user();
        self.out
    }

    /// The user asked to stop: the runs so far are what the experiment has.
    pub(super) fn stop_by_user(&mut self) {
        self.out.interrupted = true;
        self.out.stop = Some(StopReason::Interrupted);
    }

    /// After the first block: the most blocks the budget allows (the information fraction's
    /// denominator, fixed from here on), recorded on every measured run so far.
    pub(super) fn fix_horizon(&mut self, plan: &SequentialPlan, elapsed_s: f64, block_s: f64) {
        // what came before the first block (loads, settling, the unmeasured round) is spent
        let most = plan::blocks_within(plan.budget_s, elapsed_s - block_s, block_s);
        let max_blocks = most.clamp(plan.first_look, MAX_BLOCKS as usize);
        self.out.max_blocks = Some(max_blocks);
        self.design.max_blocks = Some(max_blocks);
        self.save_design();
        self.tag_measured(&format!("max_blocks={max_blocks}"));
        self.lab.observer.on(&SessionEvent::Notice(&Notice::Horizon { block_s, max_blocks, budget_s: plan.budget_s, short: most < plan.first_look }));
    }

    /// The look after `blocks` blocks: the interim judgement of the blocks so far, and whether
    /// to stop (every judged figure settled, or no time for another block).
    pub(super) fn look(
        &mut self,
        plan: &SequentialPlan,
        judging: &JudgeOptions,
        blocks: usize,
        elapsed_s: f64,
        block_s: f64,
    ) -> Result<Option<StopReason>, ExperimentError> {
        let max_blocks = self.out.max_blocks.unwrap_or(MAX_BLOCKS as usize);
        let out_of_time = blocks >= max_blocks || elapsed_s + block_s > plan.budget_s;
        if blocks < plan.first_look && !out_of_time {
            return Ok(None);
        }
        let groups: Vec<Group> = self.out.variants.iter().map(|(label, ids)| Group { label: label.clone(), runs: ids.clone() }).collect();
        // the budget, not the data, ends the experiment here: this look spends what is left
        let final_look = out_of_time.then_some(blocks);
        if final_look.is_some() {
            self.out.final_look = final_look;
            self.design.final_look = final_look;
            self.save_design();
            self.tag_measured(&format!("final_look={blocks}"));
        }
        let o = interim(judging, plan, max_blocks, final_look);
        let j = judge(self.lab.results, &groups, &o)?;
        let unsettled = j.study.as_ref().map(|s| s.unsettled(plan.precision)).unwrap_or_else(|| vec!["fewer than two variants have valid runs".into()]);
        self.lab.observer.on(&SessionEvent::Notice(&Notice::Look { blocks, max_blocks, precision: plan.precision, unsettled: unsettled.clone() }));
        if j.study.as_ref().is_some_and(|s| s.settled(plan.precision)) && blocks >= plan.first_look {
            return Ok(Some(StopReason::Settled));
        }
        Ok(out_of_time.then_some(StopReason::Budget { unsettled }))
    }

    /// Tags every measured run so far, and the ones to come.
    fn tag_measured(&mut self, tag: &str) {
        for (_, runs) in &self.out.variants {
            for run in runs {
                let _ = self.lab.results.set_tag(*run, tag);
            }
        }
        self.measured_tags.push(tag.to_string());
    }

    pub(super) fn tagged(&self, key: &str, v: &Variant) -> Vec<String> {
        let mut t = self.common.clone();
        t.push(format!("{key}={}", v.name));
        t
    }

    pub(super) fn flow(&self, r: &super::RunResult) -> Flow {
        if r.status == RunStatus::Interrupted || self.lab.stopping() {
            Flow::Stop
        } else {
            Flow::Go
        }
    }

    /// The unmeasured round (its runs also load a shared data set), or just the loads, then
    /// settling what they left behind.
    pub(super) async fn before_measuring(&mut self) -> Result<Flow, VariantError> {
        let (exp, base, ro) = (self.setup.exp, &self.setup.base, self.out.run_order);
        let loads = ro.settle && !self.fresh && !self.plain;
        if ro.unmeasured_round || loads {
            for v in &exp.variants {
                let step = if ro.unmeasured_round { "unmeasured round" } else { "load" };
                self.lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, step });
                let r = if ro.unmeasured_round {
                    run_one(self.lab, &variant_spec(exp, v, base, self.tagged("unmeasured", v)), v).await?
                } else {
                    run_one(self.lab, &load_only(variant_spec(exp, v, base, self.tagged("load_of", v))), v).await?
                };
                if ro.unmeasured_round { &mut self.out.unmeasured } else { &mut self.out.loads }.push(r.run);
                if self.flow(&r) == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
        }
        if loads {
            let notes = settle(self.lab, base, &exp.variants[0].workload.keyspace).await;
            self.out.notes.extend(notes);
        }
        Ok(Flow::Go)
    }

    /// Repetition `rep` of variant `vi`, `position` in the measured order; a fresh load is
    /// loaded and settled before it, and a server variant's runs start on fresh nodes.
    pub(super) async fn measured(&mut self, vi: usize, rep: u32, position: usize, step: &str) -> Result<Flow, VariantError> {
        let (exp, base) = (self.setup.exp, &self.setup.base);
        let v = &exp.variants[vi];
        self.lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, step });
        let mut tags = self.measured_tags.clone();
        tags.extend([format!("variant={}", v.name), format!("variant_index={vi}"), format!("repetition={rep}"), format!("position={position}")]);
        let mut spec = variant_spec(exp, v, base, tags);
        if self.fresh && self.out.run_order.settle {
            let r = run_one(self.lab, &load_only(variant_spec(exp, v, base, self.tagged("load_of", v))), v).await?;
            self.out.loads.push(r.run);
            if self.flow(&r) == Flow::Stop {
                return Ok(Flow::Stop);
            }
            let notes = settle(self.lab, base, &exp.variants[0].workload.keyspace).await;
            self.out.notes.extend(notes);
            spec.config.load = LoadMode::Skip;
        }
        // a measured run of a server variant starts on freshly started nodes, whichever
        // variant ran before it: no run inherits a JVM (JIT, heap, caches) warmed by another
        if let Some(server) = &v.workload.cluster {
            super::apply_server(self.lab, &v.workload.name, server, true).await.map_err(|source| VariantError { variant: v.name.clone(), error: source })?;
        }
        let r = run_one(self.lab, &spec, v).await?;
        self.out.variants[vi].1.push(r.run);
        if self.setup.sequential.is_some() {
            self.out.order.push((v.name.clone(), rep));
        }
        Ok(self.flow(&r))
    }
}

async fn run_one(lab: &Lab<'_>, spec: &RunSpec, v: &Variant) -> Result<super::RunResult, VariantError> {
    super::run(lab, spec).await.map_err(|source| VariantError { variant: v.name.clone(), error: source })
}

/// The same run, stopping after its load phase.
pub(super) fn load_only(mut spec: RunSpec) -> RunSpec {
    spec.workload.run = None;
    spec
}

/// Flushes every node casslab controls (`nodetool flush`) and waits, up to 10 minutes, until
/// no node runs a compaction (on `base`'s cluster, looking at `keyspace`); returns what
/// happened, in words (also told to the observer).
pub(super) async fn settle(lab: &Lab<'_>, base: &RunConfig, keyspace: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(control) = lab.control.clone() {
        let flushed = tokio::task::spawn_blocking(move || {
            let nodes = control.nodes().map_err(|e| e.to_string())?;
            let mut done = 0;
            for (i, n) in nodes.iter().enumerate().filter(|(_, n)| n.running) {
                match control.nodetool(i, &["flush"]) {
                    Ok(o) if o.status.success() => done += 1,
                    Ok(o) => return Err(format!("nodetool flush on {}: {}", n.name, String::from_utf8_lossy(&o.stderr).trim())),
                    Err(e) => return Err(format!("nodetool flush on {}: {e}", n.name)),
                }
            }
            Ok(done)
        })
        .await;
        notes.push(match flushed {
            Ok(Ok(n)) => format!("settling: flushed {n} node(s)"),
            Ok(Err(e)) => format!("settling: {e}"),
            Err(e) => format!("settling: the flush failed: {e}"),
        });
    }
    notes.push(match wait_for_compactions(&base.cluster, &lab.credentials, keyspace, Duration::from_secs(600)).await {
        Ok(s) => format!("settling: compactions done after {s:.0} s"),
        Err(Compactions::Unknown(e)) => format!("settling: cannot check compactions: {e}"),
        Err(Compactions::StillRunning(n)) => format!("settling: {n:.0} compactions still running after 10 minutes; measuring anyway"),
    });
    for n in &notes {
        lab.observer.on(&SessionEvent::Notice(&Notice::Settled(n.clone())));
    }
    notes
}
