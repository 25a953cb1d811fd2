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

pub use super::experiment_setup::{
    interim, undeclared_load_point, variant_spec, DesignConflict, DesignFlags, ExperimentError, ExperimentSetup, SequentialPlan, VariantError,
    DEFAULT_BUDGET_S, DEFAULT_FIRST_LOOK, DEFAULT_PRECISION, DEFAULT_RUN_S, DEFAULT_SPENDING, DEFAULT_WARMUP_S,
};
use super::maker::{Flow, Maker, MAX_BLOCKS};
use super::observer::SessionEvent;
use super::{Lab, SessionError};
use crate::analysis::saved_experiment::saved_experiment;
use crate::analysis::study::Group;
use crate::config::RunConfig;
use crate::experiment::{schedule, Design, Experiment, Order};
use crate::judge::plan::{self, Plan};
use crate::judge::sweep::sweep;
use crate::judge::verdict::ExperimentVerdict;
use crate::judge::{judge, JudgeOptions};
use crate::notice::Notice;

pub use crate::judge::verdict::{ExperimentRuns, StopReason};

/// Checks every variant's server definition before the first run, so that a wrong one stops
/// the experiment before any node does.
async fn check_servers(lab: &Lab<'_>, exp: &Experiment) -> Result<(), VariantError> {
    let mut checked: Vec<&crate::cluster::ServerSpec> = Vec::new();
    for v in &exp.variants {
        let Some(spec) = &v.workload.cluster else { continue };
        if checked.contains(&spec) {
            continue;
        }
        super::check_server(lab, &v.workload.name, spec).await.map_err(|source| VariantError { variant: v.name.clone(), error: source })?;
        checked.push(spec);
    }
    Ok(())
}

/// Where a plan's figures came from.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanFrom {
    /// An earlier execution of the experiment, saved in the store.
    Saved { id: String, blocks: usize },
    /// A pilot of this many blocks, run now.
    Pilot { blocks: usize },
    /// Nothing: spreads assumed ([`plan::prior_sd_ln`]); nothing ran or connected.
    Assumed,
}

/// Blocks of a pilot for a plan: as many as before the first look, so that a spread is
/// estimated on 2 degrees of freedom or more (its range is still wide: the plan says how wide).
pub const PILOT_BLOCKS: usize = DEFAULT_FIRST_LOOK;

/// The plan from the experiment's last execution saved in `results`, when that has
/// [`PILOT_BLOCKS`] blocks or more; `None` when there is none. Reads the store only.
pub fn plan_from_history(
    results: &crate::store::Store,
    setup: &ExperimentSetup<'_>,
    judging: &JudgeOptions,
    target: SequentialPlan,
) -> Result<Option<(Plan, PlanFrom)>, ExperimentError> {
    let Ok(saved) = saved_experiment(results, &setup.exp.name) else { return Ok(None) };
    let blocks = saved.groups.iter().map(|g| g.runs.len()).min().unwrap_or(0);
    if saved.groups.len() < 2 || blocks < PILOT_BLOCKS {
        return Ok(None);
    }
    let before: Vec<_> = saved.unmeasured.iter().chain(&saved.loads).copied().collect();
    let p = plan::plan(results, &saved.groups, &before, judging, target)?;
    Ok(Some((p, PlanFrom::Saved { id: saved.id, blocks })))
}

/// The plan from the design alone, with assumed spreads per block (`judge::plan`'s
/// [`plan::plan_from_prior`]): nothing runs or connects. The judged figures are the
/// judging's, else each operation's p50 and p99 at a fixed rate (throughput and each p99
/// otherwise), for every variant against the first; a block's time is each variant's warm-up
/// and measured time (and a few seconds to start), in turn or at the same time.
pub fn plan_from_design(setup: &ExperimentSetup<'_>, judging: &JudgeOptions, target: SequentialPlan) -> (Plan, PlanFrom) {
    use crate::analysis::OpRef;
    let exp = setup.exp;
    let base = &exp.variants[0].workload;
    let ops: Vec<OpRef> = base.run.as_ref().map(|r| r.mix.iter().map(|(op, _)| OpRef::Op(op.clone())).collect()).unwrap_or_default();
    let fixed_rate = setup.base.rate.as_ref().is_some_and(|r| r.as_fixed().is_some());
    let judged = judging.plan.judged.clone().unwrap_or_else(|| crate::analysis::study::default_judged(&ops, fixed_rate));
    let figures: Vec<(String, crate::analysis::Metric)> =
        exp.variants.iter().skip(1).flat_map(|v| judged.iter().map(move |f| (format!("{}: {} {}", v.name, f.op, f.metric.label()), f.metric))).collect();
    let per_pair = vec![judged.len(); exp.variants.len().saturating_sub(1)];
    let family = (0..per_pair.len()).map(|i| judging.plan.family.size(&per_pair, i)).max().unwrap_or(1);
    let simultaneous = setup.together();
    let run = base.run.as_ref();
    let run_s = setup.base.warmup_s.or(run.map(|r| r.warmup_s)).unwrap_or(DEFAULT_WARMUP_S)
        + setup.base.duration_s.or(run.map(|r| r.duration_s)).unwrap_or(DEFAULT_RUN_S)
        + RUN_START_S;
    let block_s = if simultaneous { run_s } else { run_s * exp.variants.len() as f64 };
    let setup_s = if setup.run_order.unmeasured_round { block_s } else { 0.0 };
    let blocks = plan::PriorBlocks { block_s, setup_s, simultaneous };
    (plan::plan_from_prior(&figures, blocks, family, judging.plan.opts.confidence, target), PlanFrom::Assumed)
}

/// What a run takes beyond its warm-up and measured time, for a plan: connecting, preparing,
/// the common start.
const RUN_START_S: f64 = 3.0;

/// The plan of an experiment (`judge::plan`): from its last execution saved in the store
/// ([`plan_from_history`]), else from a pilot of [`PILOT_BLOCKS`] blocks run now (tagged
/// `pilot=on`).
pub async fn plan_experiment(
    lab: &Lab<'_>,
    setup: &ExperimentSetup<'_>,
    judging: &JudgeOptions,
    target: SequentialPlan,
) -> Result<(Plan, PlanFrom), ExperimentError> {
    if let Some(found) = plan_from_history(lab.results, setup, judging, target)? {
        return Ok(found);
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
            super::apply_server(lab, &v.workload.name, server, true).await.map_err(|source| VariantError { variant: v.name.clone(), error: source })?;
        }
        let spec = variant_spec(exp, v, base, tags);
        let search = super::findmax::find_max(lab, &spec, sla, max_steps).await.map_err(|e| VariantError {
            variant: v.name.clone(),
            error: match e {
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
    use super::super::maker::load_only;
    use super::*;
    use crate::config::LoadMode;
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
