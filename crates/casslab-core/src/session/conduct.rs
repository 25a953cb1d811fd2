//! Running an experiment so that its order does not decide its outcome: the data is loaded and
//! the cluster settled (flushed, compactions done) before anything is measured, every variant
//! runs once unmeasured (the JIT, caches and the first compactions after the load land there),
//! and the measured repetitions go in a counterbalanced or seeded-shuffled order
//! (`crate::experiment::order`). With fresh loads each measured run is its own load, settle,
//! and measurement. Every run is an ordinary saved run; the tags say what it was:
//! - measured: `experiment`, `experiment_id`, `variant`, `repetition`, `position` (its place in
//!   the order), `order` (and `order_seed`), `unmeasured_round` and `settle` (on/off);
//! - the unmeasured round: `unmeasured=<variant>`; a load before settling: `load_of=<variant>`
//!   — neither carries `variant=`, so nothing that collects a variant's runs picks them up.
//!
//! What to compare and how is the analysis' job; this only makes the runs.

use super::observer::SessionEvent;
use super::server_metrics::{wait_for_compactions, Compactions};
use super::{Lab, RunSpec, SessionError};
use crate::analysis::paired::SequentialDesign;
use crate::analysis::saved_experiment::saved_experiment;
use crate::analysis::sequential::Spending;
use crate::analysis::study::{Family, Group};
use crate::config::{LoadMode, RunConfig};
use crate::experiment::{schedule, Design, Experiment, Order, RunOrder, Variant};
use crate::judge::plan::{self, Plan, Target};
use crate::judge::sweep::sweep;
use crate::judge::verdict::ExperimentVerdict;
use crate::judge::{judge, JudgeOptions};
use crate::notice::Notice;
use crate::store::RunStatus;
use std::time::Duration;

pub use crate::judge::verdict::ExperimentRuns;

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

/// A run of variant `v`: the base config with the variant's workload, parameters and client
/// settings (the variant's own `rate` and `concurrency` win), tagged.
pub fn variant_spec(exp: &Experiment, v: &Variant, base: &RunConfig, tags: Vec<String>) -> RunSpec {
    let mut cfg = base.clone();
    cfg.workload = format!("{}#{}", exp.origin, v.name);
    cfg.workload_source = v.source.clone();
    cfg.params = v.workload.params.clone();
    if let Some(c) = v.concurrency {
        cfg.concurrency = c;
    }
    if let Some(rate) = &v.rate {
        cfg.rate = Some(rate.clone());
    }
    // a variant on a cluster of its own (`hosts:`), one casslab does not control
    if !v.hosts.is_empty() {
        (cfg.cluster.hosts, cfg.cluster.translate) = (v.hosts.clone(), v.translate.clone());
        (cfg.cluster.local, cfg.cluster.local_home) = (false, None);
    }
    if exp.fresh_load && cfg.load == LoadMode::Auto {
        cfg.load = LoadMode::Reload;
    }
    RunSpec { config: cfg, workload: v.workload.clone(), tags, together: None }
}

/// The variants that run at maximum throughput with many requests in flight because neither
/// the experiment, the command line nor the variant says where latency means something, in
/// words; `None` when every variant is declared. `declared_concurrency`: the experiment file or
/// the command line set the in-flight count.
pub fn undeclared_load_point(exp: &Experiment, base: &RunConfig, declared_concurrency: bool) -> Option<String> {
    let open: Vec<&str> = exp
        .variants
        .iter()
        .filter(|v| !declared_concurrency && v.concurrency.is_none())
        // the variant's rate, the base's, or its workload's own `run.rate` (a level or a
        // schedule, e.g. a daily curve) is its load point
        .filter(|v| super::changes::with_workload_load(variant_spec(exp, v, base, Vec::new()).config, &v.workload).rate.is_none())
        .map(|v| v.name.as_str())
        .collect();
    if open.is_empty() || base.concurrency <= 1 {
        return None;
    }
    let who = if open.len() == exp.variants.len() { "every variant".to_string() } else { open.join(", ") };
    Some(format!(
        "{} declares no load point: {who} runs at maximum throughput with {} requests in flight, where latency is in flight / throughput and measures the queue rather than the variants; declare `rate:` (a fixed rate below saturation) or `concurrency:` (the in-flight count the question implies) in the experiment file",
        exp.name, base.concurrency
    ))
}

/// An experiment to make: its file, the base config of its runs and how to order them.
#[derive(Debug, Clone)]
pub struct ExperimentSetup<'e> {
    pub exp: &'e Experiment,
    /// The command line's config with the file's load point where the command line set none
    /// ([`base_config`]).
    pub base: RunConfig,
    pub repetitions: u32,
    pub run_order: RunOrder,
    /// Tells this experiment's runs from another's (`experiment_id=` tag).
    pub experiment_id: String,
    /// More tags for every run (`--tag`).
    pub tags: Vec<String>,
    /// The experiment file or the command line set the in-flight count.
    pub concurrency_declared: bool,
    /// Blocks until the judged figures are settled (or the budget is spent); `None`: a fixed
    /// `repetitions` blocks.
    pub sequential: Option<SequentialPlan>,
    /// When the variants run: at the same time, or one after the other.
    pub design: Design,
}

/// What a sequential experiment aims at unless told otherwise: each judged change within ±5 %
/// (half its interval's width) or found; see `bench/README.md` for the figures behind these.
pub const DEFAULT_PRECISION: f64 = 0.05;
/// The most a sequential experiment takes unless told otherwise: 20 minutes.
pub const DEFAULT_BUDGET_S: f64 = 1200.0;
/// Blocks before a sequential experiment's first look.
pub const DEFAULT_FIRST_LOOK: usize = 4;
/// How a sequential experiment spends its error rate over its looks.
pub const DEFAULT_SPENDING: Spending = Spending::OBrienFleming;
/// The measured time and the warm-up of each run of a sequential experiment unless the
/// command line says otherwise: short runs, many blocks.
pub const DEFAULT_RUN_S: f64 = 10.0;
pub const DEFAULT_WARMUP_S: f64 = 5.0;

/// A sequential experiment: blocks until every judged figure is settled at `precision`, or
/// `budget_s` of the experiment's time is spent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequentialPlan {
    /// Half the width of a judged figure's interval (relative) that settles it.
    pub precision: f64,
    /// The most the whole experiment may take (loads, settling and the unmeasured round
    /// included), in seconds.
    pub budget_s: f64,
    pub spending: Spending,
    /// Blocks before the first look.
    pub first_look: usize,
}

pub use crate::judge::verdict::StopReason;

impl ExperimentSetup<'_> {
    /// The warning when some variants declare no load point ([`undeclared_load_point`]).
    pub fn load_point_warning(&self) -> Option<String> {
        undeclared_load_point(self.exp, &self.base, self.concurrency_declared)
    }
}

/// The judging of a sequential experiment's looks: blocks as the unit, with the design's
/// spending, first look and horizon; `final_look`: the look at which the budget ended it (it
/// spends all the error rate left).
pub fn interim(judging: &JudgeOptions, plan: &SequentialPlan, max_blocks: usize, final_look: Option<usize>) -> JudgeOptions {
    let mut o = judging.clone();
    let mut design = o.plan.blocks.unwrap_or_default();
    design.sequential = Some(SequentialDesign { spending: plan.spending, first_look: plan.first_look, max_blocks, final_look });
    o.plan.blocks = Some(design);
    o
}

/// What the command line says of an experiment's design (over the file's keys).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DesignFlags {
    /// `--repetitions N`: a fixed number of blocks.
    pub repetitions: Option<u32>,
    pub precision: Option<f64>,
    pub budget_s: Option<f64>,
}

/// The flags ask for both a fixed number of blocks and a precision.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--repetitions runs a fixed number of blocks; --precision and --budget are for running until the precision is reached: give one or the other")]
pub struct DesignConflict;

impl SequentialPlan {
    /// The design of the flags over the file's keys: `None` for a fixed number of blocks
    /// (`--repetitions N`, or the file's `repetitions:` unless a flag asks for a precision or a
    /// budget), else the precision and budget of the flags, the file, or the defaults.
    pub fn of(flags: &DesignFlags, keys: &crate::experiment::DesignKeys) -> Result<Option<SequentialPlan>, DesignConflict> {
        let flags_ask = flags.precision.is_some() || flags.budget_s.is_some();
        if flags.repetitions.is_some() {
            return if flags_ask { Err(DesignConflict) } else { Ok(None) };
        }
        if keys.repetitions.is_some() && !flags_ask {
            return Ok(None);
        }
        Ok(Some(SequentialPlan {
            precision: flags.precision.or(keys.precision).unwrap_or(DEFAULT_PRECISION),
            budget_s: flags.budget_s.or(keys.budget_s).unwrap_or(DEFAULT_BUDGET_S),
            spending: DEFAULT_SPENDING,
            first_look: DEFAULT_FIRST_LOOK,
        }))
    }
}

/// Where a plan's figures came from.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanFrom {
    /// An earlier execution of the experiment, saved in the store.
    Saved { id: String, blocks: usize },
    /// A pilot of this many blocks, run now.
    Pilot { blocks: usize },
}

/// Blocks of a pilot for a plan: as many as before the first look, so that a spread is
/// estimated on 2 degrees of freedom or more (its range is still wide: the plan says how wide).
pub const PILOT_BLOCKS: usize = DEFAULT_FIRST_LOOK;

/// The plan of an experiment (`judge::plan`): from its last execution saved in the store when
/// that has [`PILOT_BLOCKS`] blocks or more, else from a pilot of that many blocks run now
/// (tagged `pilot=on`).
pub async fn plan_experiment(lab: &Lab<'_>, setup: &ExperimentSetup<'_>, judging: &JudgeOptions, target: Target) -> Result<(Plan, PlanFrom), ExperimentError> {
    if let Ok(saved) = saved_experiment(lab.results, &setup.exp.name) {
        let blocks = saved.groups.iter().map(|g| g.runs.len()).min().unwrap_or(0);
        if saved.groups.len() >= 2 && blocks >= PILOT_BLOCKS {
            let before: Vec<_> = saved.unmeasured.iter().chain(&saved.loads).copied().collect();
            let p = plan::plan(lab.results, &saved.groups, &before, judging, target)?;
            return Ok((p, PlanFrom::Saved { id: saved.id, blocks }));
        }
    }
    let mut pilot = setup.clone();
    pilot.sequential = None;
    pilot.repetitions = PILOT_BLOCKS as u32;
    pilot.tags.push("pilot=on".into());
    let runs = run_experiment(lab, &pilot, judging).await?;
    let groups: Vec<Group> = runs.variants.iter().map(|(label, ids)| Group { label: label.clone(), runs: ids.clone() }).collect();
    let before: Vec<_> = runs.unmeasured.iter().chain(&runs.loads).copied().collect();
    Ok((plan::plan(lab.results, &groups, &before, judging, target)?, PlanFrom::Pilot { blocks: PILOT_BLOCKS }))
}

/// Why an experiment stopped before its verdicts.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error(transparent)]
    Variant(#[from] VariantError),
    #[error(transparent)]
    Judge(#[from] crate::judge::JudgeError),
    #[error(transparent)]
    Sweep(#[from] crate::judge::sweep::SweepError),
}

/// An experiment from its first run to its verdicts: the runs ([`run_experiment`]), then the
/// variants judged as `compare` judges them, the first the baseline, each variant's
/// repetitions the unit and invalid runs left out unless allowed (`judging`); with `rates:`,
/// rate by rate too.
pub async fn conduct(lab: &Lab<'_>, setup: &ExperimentSetup<'_>, judging: &JudgeOptions) -> Result<ExperimentVerdict, ExperimentError> {
    let exp = setup.exp;
    let started = std::time::Instant::now();
    let runs = run_experiment(lab, setup, judging).await?;
    let elapsed_s = started.elapsed().as_secs_f64();
    let groups: Vec<Group> = runs.variants.iter().map(|(label, ids)| Group { label: label.clone(), runs: ids.clone() }).collect();
    let judging = match (&setup.sequential, runs.max_blocks) {
        (Some(plan), Some(max_blocks)) => interim(judging, plan, max_blocks, runs.final_look),
        _ => judging.clone(),
    };
    let judgement = judge(lab.results, &groups, &judging)?;
    let sweep = if !exp.rates.is_empty() && judgement.groups.len() >= 2 {
        let mut bases: Vec<String> = Vec::new();
        for v in &exp.variants {
            if !bases.contains(&v.base) {
                bases.push(v.base.clone());
            }
        }
        Some(sweep(lab.results, &exp.rates, exp.sla.as_deref(), &bases, &judgement.groups, &judging.plan)?)
    } else {
        None
    };
    Ok(ExperimentVerdict {
        name: exp.name.clone(),
        description: exp.description.clone(),
        experiment_id: setup.experiment_id.clone(),
        runs,
        load_point: setup.load_point_warning(),
        judgement,
        sweep,
        elapsed_s,
        precision: setup.sequential.map(|p| p.precision),
    })
}

/// The base config of an experiment's runs: `cli` (the command line's) with the file's
/// `concurrency:` and `rate:` where the command line gave none (`cli_sets`: whether it gave
/// the in-flight count, and the rate). Derived settings (the engine's workers) are decided
/// later, per run, once a variant's own rate is applied too.
pub fn base_config(exp: &Experiment, mut cli: RunConfig, cli_sets: (bool, bool)) -> RunConfig {
    if let (false, Some(c)) = (cli_sets.0, exp.concurrency) {
        cli.concurrency = c;
    }
    if let (false, Some(r)) = (cli_sets.1, &exp.rate) {
        cli.rate = Some(r.clone());
    }
    cli
}

/// `NAME-YYYYMMDD-HHMMSS` (UTC, now): tells experiments apart.
pub fn new_experiment_id(exp: &Experiment) -> String {
    let stamp = crate::units::utc(crate::engine::unix_now_ms()).replace(['-', ':'], "").replace(' ', "-");
    format!("{}-{stamp}", exp.name)
}

/// Runs every variant of the experiment in blocks (one run of each per block, in the order
/// `run_order` says), after loading, settling and an unmeasured round: `repetitions` blocks,
/// or with a sequential plan, block after block until the interim judgement (`judging`, with
/// the design's looks) finds every judged figure settled or the budget is spent. Stops after
/// the run in which the user asked to stop.
pub async fn run_experiment(lab: &Lab<'_>, setup: &ExperimentSetup<'_>, judging: &JudgeOptions) -> Result<ExperimentRuns, ExperimentError> {
    let exp = setup.exp;
    let started = std::time::Instant::now();
    check_servers(lab, exp).await?;
    let mut run_order = setup.run_order;
    if run_order.order == Order::Shuffled && run_order.seed.is_none() {
        run_order.seed = Some(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1));
    }
    // a sequential experiment's blocks are numbered as they come; its order repeats the
    // same pattern block after block
    let blocks = if setup.sequential.is_some() { MAX_BLOCKS } else { setup.repetitions };
    let sched = schedule(exp.variants.len(), blocks, run_order.order, run_order.seed.unwrap_or(0));
    let planned = if setup.sequential.is_some() { Vec::new() } else { sched.iter().map(|(v, rep)| (exp.variants[*v].name.clone(), *rep)).collect() };
    let out = ExperimentRuns {
        variants: exp.variants.iter().map(|v| (v.name.clone(), Vec::new())).collect(),
        unmeasured: Vec::new(),
        loads: Vec::new(),
        order: planned,
        run_order,
        notes: Vec::new(),
        interrupted: false,
        stop: None,
        max_blocks: None,
        together: None,
        not_together: None,
        final_look: None,
    };
    if setup.design == Design::Simultaneous {
        match crate::experiment::design::why_not_simultaneous(exp, false) {
            None => {
                let mut out = out;
                out.order.clear();
                return super::together::run_together(lab, setup, judging, out).await;
            }
            Some(why) => {
                lab.observer.on(&SessionEvent::Notice(&Notice::NotTogether { why: why.clone() }));
                return run_in_turn(lab, setup, judging, ExperimentRuns { not_together: Some(why), ..out }, sched, started).await;
            }
        }
    }
    run_in_turn(lab, setup, judging, out, sched, started).await
}

/// The runs of an experiment's variants one after the other, in blocks.
async fn run_in_turn(
    lab: &Lab<'_>,
    setup: &ExperimentSetup<'_>,
    judging: &JudgeOptions,
    out: ExperimentRuns,
    sched: Vec<(usize, u32)>,
    started: std::time::Instant,
) -> Result<ExperimentRuns, ExperimentError> {
    let (exp, run_order) = (setup.exp, out.run_order);
    if setup.sequential.is_none() {
        let variants = out.order.iter().map(|(v, _)| v.clone()).collect();
        lab.observer.on(&SessionEvent::Notice(&Notice::MeasuredOrder { order: run_order.order.as_str(), seed: run_order.seed, variants }));
    }
    let mut maker = Maker::new(lab, setup, out, judging);
    if maker.before_measuring().await? == Flow::Stop {
        return Ok(maker.stopped());
    }
    let per_block = exp.variants.len();
    let mut block_started = std::time::Instant::now();
    for (k, &(vi, rep)) in sched.iter().enumerate() {
        let step = match &setup.sequential {
            Some(_) => format!("block {rep}, {} of {per_block}", k % per_block + 1),
            None => format!("repetition {rep}/{}, {} of {} measured", setup.repetitions, k + 1, sched.len()),
        };
        if maker.measured(vi, rep, k + 1, &step).await? == Flow::Stop {
            return Ok(maker.stopped());
        }
        let Some(plan) = &setup.sequential else { continue };
        if (k + 1) % per_block != 0 {
            continue;
        }
        // a block is done: fix the horizon after the first, then look
        let block_s = block_started.elapsed().as_secs_f64();
        block_started = std::time::Instant::now();
        if maker.out.max_blocks.is_none() {
            maker.fix_horizon(plan, started.elapsed().as_secs_f64(), block_s);
        }
        if let Some(reason) = maker.look(plan, judging, rep as usize, started.elapsed().as_secs_f64(), block_s)? {
            maker.out.stop = Some(reason);
            return Ok(maker.out);
        }
    }
    maker.out.stop = Some(StopReason::Done);
    Ok(maker.out)
}

/// The most blocks a sequential experiment runs, whatever its budget.
pub(super) const MAX_BLOCKS: u32 = 500;

/// The tags that let a saved experiment be judged again as it was: its design (a sequential
/// experiment's precision, first look, spending and budget; the horizon is added after the
/// first block as `max_blocks`).
fn design_tags(setup: &ExperimentSetup, judging: &JudgeOptions) -> Vec<String> {
    let mut tags = judging_tags(judging);
    tags.extend(match &setup.sequential {
        None => vec!["design=blocks".into()],
        Some(p) => vec![
            "design=sequential".into(),
            format!("precision={}", p.precision),
            format!("first_look={}", p.first_look),
            format!("spending={}", p.spending.key()),
            format!("budget_s={}", p.budget_s),
        ],
    });
    tags
}

/// The judged figures when chosen, and the equivalence margin when asked for.
fn judging_tags(judging: &JudgeOptions) -> Vec<String> {
    let mut tags = Vec::new();
    if let Some(j) = &judging.plan.judged {
        tags.push(format!("judge={}", j.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(",")));
    }
    if judging.plan.family != Family::Comparison {
        tags.push(format!("family={}", judging.plan.family.key()));
    }
    if let Some(m) = judging.plan.blocks.and_then(|b| b.margin) {
        tags.push(format!("equivalence={m}"));
    }
    tags
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
        measured_tags.extend(design_tags(setup, judging));
        let fresh = variant_spec(exp, &exp.variants[0], &setup.base, Vec::new()).config.load == LoadMode::Reload;
        let plain = matches!(setup.base.load, LoadMode::Skip | LoadMode::Only);
        Maker { lab, setup, out, common, measured_tags, fresh, plain }
    }

    fn stopped(mut self) -> ExperimentRuns {
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
    async fn before_measuring(&mut self) -> Result<Flow, VariantError> {
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
    async fn measured(&mut self, vi: usize, rep: u32, position: usize, step: &str) -> Result<Flow, VariantError> {
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
            super::apply_server(self.lab, &v.workload.name, server, true).await.map_err(|source| VariantError { variant: v.name.clone(), source })?;
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
    super::run(lab, spec).await.map_err(|source| VariantError { variant: v.name.clone(), source })
}

/// The same run, stopping after its load phase.
fn load_only(mut spec: RunSpec) -> RunSpec {
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

pub use crate::judge::search::FoundMax;

/// `experiment --find-max SLA`: for every variant, `repetitions` searches of the highest fixed
/// rate meeting `sla` (each a probe at maximum throughput, then a binary search of rates:
/// [`super::findmax::find_max`]), in the experiment's order; a server variant's search starts
/// on freshly started nodes. The searches' runs are tagged `experiment`, `variant`,
/// `repetition` and `find_max=…` like any other.
pub async fn find_max_per_variant(lab: &Lab<'_>, setup: &ExperimentSetup<'_>, sla: &crate::analysis::Gate, max_steps: usize) -> Result<FoundMax, VariantError> {
    let (exp, repetitions, run_order, base) = (setup.exp, setup.repetitions, setup.run_order, &setup.base);
    check_servers(lab, exp).await?;
    let sched = schedule(exp.variants.len(), repetitions, run_order.order, run_order.seed.unwrap_or(0));
    let mut out = FoundMax {
        variants: exp.variants.iter().map(|v| (v.name.clone(), Vec::new())).collect(),
        order: sched.iter().map(|(v, rep)| (exp.variants[*v].name.clone(), *rep)).collect(),
        interrupted: false,
    };
    for (k, (vi, rep)) in sched.iter().enumerate() {
        let v = &exp.variants[*vi];
        let step = format!("search {rep}/{repetitions} of the highest rate meeting the SLA, {} of {}", k + 1, sched.len());
        lab.observer.on(&SessionEvent::VariantRun { variant: &v.name, step: &step });
        let mut tags = vec![format!("experiment={}", exp.name), format!("experiment_id={}", setup.experiment_id)];
        tags.extend(setup.tags.iter().cloned());
        tags.extend([format!("variant={}", v.name), format!("variant_index={vi}"), format!("repetition={rep}"), format!("position={}", k + 1)]);
        if let Some(server) = &v.workload.cluster {
            super::apply_server(lab, &v.workload.name, server, true).await.map_err(|source| VariantError { variant: v.name.clone(), source })?;
        }
        let spec = variant_spec(exp, v, base, tags);
        let search = super::findmax::find_max(lab, &spec, sla, max_steps).await.map_err(|e| VariantError {
            variant: v.name.clone(),
            source: match e {
                super::findmax::FindMaxError::Session(s) => s,
                super::findmax::FindMaxError::Sla(s) => SessionError::Sla(s),
                super::findmax::FindMaxError::Results(s) => SessionError::Results(s),
            },
        })?;
        let best = search.best().map(|s| s.achieved_per_s);
        out.variants[*vi].1.push((best, search.steps.iter().map(|s| s.run).collect()));
        if search.interrupted || lab.stopping() {
            out.interrupted = true;
            return Ok(out);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_shape::LoadShape;
    use std::collections::BTreeMap;

    fn experiment(text: &str) -> Experiment {
        let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        crate::experiment::load_experiment(f.path(), &BTreeMap::new()).unwrap()
    }

    #[test]
    fn a_variant_run_takes_its_own_client_settings_and_fresh_loads_reload() {
        let e = experiment("workload: kv\nload: fresh\nvariants:\n  a: {}\n  b: { concurrency: 4, rate: 300 }\n");
        let base = RunConfig { concurrency: 16, ..RunConfig::default() };
        let a = variant_spec(&e, &e.variants[0], &base, vec!["x=1".into()]);
        let b = variant_spec(&e, &e.variants[1], &base, Vec::new());
        assert_eq!((a.config.concurrency, a.config.rate.is_none(), a.config.load), (16, true, LoadMode::Reload));
        assert_eq!((b.config.concurrency, b.config.fixed_rate_per_s()), (4, Some(300.0)));
        assert_eq!(a.tags, ["x=1"]);
        assert!(a.config.workload.ends_with("#a") && a.config.params["keyspace"] == "casslab_kv_a");
        assert!(load_only(a).workload.run.is_none());
    }

    #[test]
    fn a_variants_rate_wins_over_a_schedule_of_the_command_line() {
        // experiment --rate 'ramp …' with a variant's `rate: 300`: the variant runs at 300/s
        let e = experiment("workload: kv\nvariants:\n  a: {}\n  b: { rate: 300 }\n");
        let cli = RunConfig { rate: Some(LoadShape::parse("ramp 100..5000 over 60s").unwrap()), ..RunConfig::default() };
        let base = base_config(&e, cli, (false, true));
        let b = variant_spec(&e, &e.variants[1], &base, Vec::new()).config;
        assert_eq!(b.fixed_rate_per_s(), Some(300.0), "{:?}", b.rate_text());
        let a = variant_spec(&e, &e.variants[0], &base, Vec::new()).config;
        assert_eq!(a.rate_text(), "ramp 100..5000 over 1m");
    }

    #[test]
    fn an_experiments_rate_gets_the_workers_the_flag_gets() {
        let e = experiment("workload: kv\nrate: 5000\nvariants:\n  a: {}\n  b: { rate: 120000 }\n");
        // the command line's config, as the binary makes it without --rate or --threads
        let cli = RunConfig::default();
        let base = base_config(&e, cli.clone(), (false, false));
        let from_file = variant_spec(&e, &e.variants[0], &base, Vec::new()).config.resolved_on(8);
        let from_flag = RunConfig { rate: Some(LoadShape::fixed(5_000.0)), ..cli.clone() }.resolved_on(8);
        assert_eq!((from_file.fixed_rate_per_s(), from_file.threads), (Some(5_000.0), from_flag.threads));
        assert_eq!(from_flag.threads, 1);
        // a variant's own rate decides its own
        let b = variant_spec(&e, &e.variants[1], &base, Vec::new()).config.resolved_on(8);
        assert_eq!(b.threads, RunConfig { rate: Some(LoadShape::fixed(120_000.0)), ..cli.clone() }.resolved_on(8).threads);
        // the command line wins over the file
        let flagged = base_config(&e, RunConfig { rate: Some(LoadShape::fixed(700.0)), concurrency: 3, ..cli }, (true, true));
        assert_eq!((flagged.fixed_rate_per_s(), flagged.concurrency), (Some(700.0), 3));
    }

    #[test]
    fn the_design_comes_from_the_flags_over_the_file() {
        use crate::experiment::DesignKeys;
        let none = DesignKeys::default();
        let seq = SequentialPlan::of(&DesignFlags::default(), &none).unwrap().unwrap();
        assert_eq!((seq.precision, seq.budget_s, seq.first_look), (DEFAULT_PRECISION, DEFAULT_BUDGET_S, DEFAULT_FIRST_LOOK));
        let file = DesignKeys { precision: Some(0.1), budget_s: Some(600.0), ..DesignKeys::default() };
        let seq = SequentialPlan::of(&DesignFlags { precision: Some(0.02), ..DesignFlags::default() }, &file).unwrap().unwrap();
        assert_eq!((seq.precision, seq.budget_s), (0.02, 600.0));
        // a fixed number of blocks, from the flags or the file
        assert_eq!(SequentialPlan::of(&DesignFlags { repetitions: Some(3), ..DesignFlags::default() }, &file), Ok(None));
        let fixed = DesignKeys { repetitions: Some(4), ..DesignKeys::default() };
        assert_eq!(SequentialPlan::of(&DesignFlags::default(), &fixed), Ok(None));
        // …unless a flag asks for a precision
        assert!(SequentialPlan::of(&DesignFlags { budget_s: Some(60.0), ..DesignFlags::default() }, &fixed).unwrap().is_some());
        assert_eq!(SequentialPlan::of(&DesignFlags { repetitions: Some(3), precision: Some(0.1), ..DesignFlags::default() }, &none), Err(DesignConflict));
    }

    #[test]
    fn an_experiment_without_a_load_point_is_told_so() {
        let e = experiment("name: x\nworkload: kv\nvariants:\n  a: {}\n  b: { rate: 300 }\n");
        let base = RunConfig { concurrency: 128, ..RunConfig::default() };
        let w = undeclared_load_point(&e, &base, false).unwrap();
        assert!(w.starts_with("x declares no load point: a runs at maximum throughput with 128 requests in flight"), "{w}");
        assert_eq!(undeclared_load_point(&e, &base, true), None);
        assert_eq!(undeclared_load_point(&e, &RunConfig { rate: Some(LoadShape::fixed(100.0)), ..base.clone() }, false), None);
        let e = experiment("name: x\nworkload: kv\nvariants:\n  a: {}\n  b: {}\n");
        assert!(undeclared_load_point(&e, &base, false).unwrap().contains(": every variant runs at maximum throughput"));
        // a workload whose own rate is a daily curve declares its load point
        let daily = experiment("name: x\nworkload: daily-shape\nvariants:\n  a: {}\n  b: {}\n");
        assert_eq!(undeclared_load_point(&daily, &base, false), None);
    }
}
