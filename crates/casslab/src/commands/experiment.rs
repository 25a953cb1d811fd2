//! `casslab experiment FILE`: resolves the file's settings against the flags (order, unmeasured
//! round, settling, where latency is measured, the load point), aims at the cluster, and has
//! the library conduct the experiment (`casslab_core::session::conduct::conduct`: blocks of
//! one run of every variant until each judged change is known or the budget is spent, or a
//! fixed number of blocks; each run saved as an ordinary run tagged with the experiment, judged
//! block by block). Prints the runs and the verdicts (`report::experiment_text`);
//! `-o FILE` also writes them as an HTML page. Invalid runs are left out unless
//! `--allow-invalid`; `--fail-if` and `--max-regression` are judged on the comparison (exit 1
//! when one fails).

use super::{compare, run, store_path};
use crate::cli::ExperimentArgs;
use crate::exit::{bail_usage, usage, Exit};
use crate::out;
use crate::terminal::Terminal;
use anyhow::{Context, Result};
use casslab_core::analysis::paired::BlockDesign;
use casslab_core::analysis::study::{Family, FigureRef};
use casslab_core::analysis::DEFAULT_POWER_EFFECT;
use casslab_core::cluster::ClusterControl;
use casslab_core::config::Credentials;
use casslab_core::config::RunConfig;
use casslab_core::experiment::{checks, load_experiment, Design, Experiment, Order, RunOrder};
use casslab_core::judge::verdict::ExperimentVerdict;
use casslab_core::judge::JudgeOptions;
use casslab_core::judge::Screening;
use casslab_core::report::experiment_html::ExperimentPage;
use casslab_core::report::{experiment_text, findmax_text, plan_text};
use casslab_core::session::conduct::{
    base_config, conduct, find_max_per_variant, new_experiment_id, plan_experiment, plan_from_design, plan_from_history, DesignFlags, ExperimentSetup,
    PlanFrom, SequentialPlan, DEFAULT_RUN_S, DEFAULT_WARMUP_S,
};
use casslab_core::session::{check_events, Lab};
use casslab_core::store::Store;
use casslab_core::workload::TargetKind;
use casslab_local::LocalControl;
use std::sync::Arc;

pub fn experiment(args: ExperimentArgs) -> Result<i32> {
    let overrides = crate::cli::parse_params(&args.run.params)?;
    let mut exp = load_experiment(&args.file, &overrides)?;
    let judging = judging_of(&args, &exp)?;
    let sequential = sequential_plan(&args, &exp)?;
    let store = Arc::new(Store::open(&store_path(&args.run.store)).context("cannot open the results store")?);
    let base = base_of(&args, &exp, sequential.is_some())?;
    if !args.run.no_lint {
        super::lint::print_before_experiment(&args.file.display().to_string(), &overrides, base.concurrency, base.cluster.dc.as_deref());
    }
    // a plan from the store or from assumed spreads touches no cluster
    if args.plan && !args.pilot {
        return plan_without_running(&setup_of(&args, &exp, base, sequential)?, &store, &judging);
    }
    // --event applies to every variant's run; all are checked before the cluster is touched
    let mut extra_events = Vec::new();
    for spec in &args.run.events {
        extra_events.push(casslab_core::events::parse_event(spec).map_err(|m| usage(format!("--event: {m}")))?);
    }
    // Cassandra and Redis are aimed at (and started locally) only if a variant needs them
    // (none does with a target inside casslab, `--target instant`)
    let any_cql = base.in_process.is_none() && exp.variants.iter().any(|v| v.workload.target == TargetKind::Cql);
    let any_redis = base.in_process.is_none() && exp.variants.iter().any(|v| v.workload.target == TargetKind::Redis);
    let local = if any_cql { run::local_target(&base, &args.run.local)?.map(|c| Arc::new(LocalControl::new(c))) } else { None };
    for v in exp.variants.iter_mut() {
        v.workload.events.extend(extra_events.iter().cloned());
        check_events(&v.workload.events, local.as_deref().map(|c| c as &dyn ClusterControl)).with_context(|| format!("variant {}", v.name))?;
    }
    let mut setup = setup_of(&args, &exp, base, sequential)?;
    let mut judging = judging;
    if let Some(b) = judging.plan.blocks.as_mut() {
        b.simultaneous = setup.together();
    }
    if let Some(w) = setup.load_point_warning() {
        out::warn(&w);
    }
    let creds = if any_cql { run::connect_target(&mut setup.base, local.as_ref().map(|c| c.cluster()).as_ref())? } else { Credentials::redis_from_env() };
    if any_redis {
        run::aim_redis(&mut setup.base, &args.run.local)?;
    }
    let baseline = &exp.variants[0].name;
    eprintln!(
        "{}",
        experiment_text::header(&exp.name, &setup.experiment_id, exp.variants.len(), &setup.design_words(), &setup.run_order, setup.together(), baseline)
    );
    let rt = run::runtime(setup.base.threads)?;
    let lab = Lab {
        credentials: creds,
        control: local.map(|c| c as Arc<dyn ClusterControl>),
        results: &store,
        observer: Arc::new(Terminal::with_summaries(store.clone())),
        stop: run::stop_on_ctrl_c(&rt),
    };
    if let Some(sla_text) = &args.run.find_max {
        if args.run.ramp_first {
            return Err(crate::exit::usage("--ramp-first narrows one search (`casslab run --find-max`); an experiment's searches run without it"));
        }
        let sla = casslab_core::analysis::parse_sla(sla_text)?;
        let found = rt.block_on(find_max_per_variant(&lab, &setup, &sla, args.run.max_steps))?;
        out::print(&findmax_text::found_max_text(&found, sla_text, judging.plan.opts.confidence))?;
        return Ok(if found.interrupted { Exit::Interrupted } else { Exit::Success }.code());
    }
    if args.plan {
        return plan(&rt, &lab, &setup, &judging);
    }
    let verdict = rt.block_on(conduct(&lab, &setup, &judging))?;
    Ok(show(&verdict, &args, &judging.gates, &store)?.code())
}

/// How the variants are judged: the analysis flags, blocks as the unit, the judged figures
/// and the equivalence margin of the flags over the file's.
fn judging_of(args: &ExperimentArgs, exp: &Experiment) -> Result<JudgeOptions> {
    let window_s = match &args.window {
        Some(w) => checks::window_s(w).map_err(|e| usage(format!("--window {w}: {e}")))?,
        None => exp.window_s,
    };
    let mut judging = compare::judge_options(&args.analysis, window_s, &args.fail_if, args.max_regression)?;
    judging.screening = Screening::LeaveOut;
    let margin = checked("equivalence", args.equivalence.as_deref(), checks::equivalence)?.or(exp.design.equivalence);
    judging.plan.blocks = Some(BlockDesign { sequential: None, margin, power_effect: DEFAULT_POWER_EFFECT, simultaneous: false });
    if !args.analysis.family && exp.design.family_wide == Some(true) {
        judging.plan.family = Family::Experiment;
    }
    let judge = if args.judge.is_empty() { &exp.design.judge } else { &args.judge };
    if !args.judge.is_empty() {
        // the same check as the file's `judge:` (its operations run by every variant)
        checks::judged(&args.judge, &exp.variants).map_err(|e| usage(format!("--judge {e}")))?;
    }
    if !judge.is_empty() {
        let judged: Result<Vec<FigureRef>, String> = judge.iter().map(|j| j.parse()).collect();
        judging.plan.judged = Some(judged.map_err(|e| usage(format!("--judge {e}")))?);
    }
    Ok(judging)
}

/// The base config of the runs: the flags', the file's load point, and for a sequential
/// experiment short runs unless the flags or the file's `run:` say otherwise.
fn base_of(args: &ExperimentArgs, exp: &Experiment, sequential: bool) -> Result<RunConfig> {
    let mut cli = args.run.to_config(&args.file.display().to_string())?;
    if let Some(n) = cli.count {
        bail_usage!(
            "--count {n}: an experiment's runs last a duration, so that every variant is measured over the same time and its windows line up; give --duration (or `casslab run WORKLOAD --count {n}` for one run)"
        );
    }
    if sequential && !exp.design.sets_duration {
        cli.duration_s.get_or_insert(DEFAULT_RUN_S);
    }
    if sequential && !exp.design.sets_warmup {
        cli.warmup_s.get_or_insert(DEFAULT_WARMUP_S);
    }
    Ok(base_config(exp, cli, (args.run.concurrency.is_some(), args.run.rate.is_some())))
}

/// The experiment to make: the file's, with the flags' base config, order and design.
fn setup_of<'e>(args: &ExperimentArgs, exp: &'e Experiment, base: RunConfig, sequential: Option<SequentialPlan>) -> Result<ExperimentSetup<'e>> {
    Ok(ExperimentSetup {
        exp,
        base,
        repetitions: repetitions_flag(args)?.or(exp.design.repetitions).unwrap_or(exp.repetitions),
        run_order: run_order(args, exp)?,
        experiment_id: new_experiment_id(exp),
        tags: args.run.tags.clone(),
        concurrency_declared: args.run.concurrency.is_some() || exp.concurrency.is_some(),
        sequential,
        design: design_of(args, exp),
    })
}

/// `--plan` without `--pilot`: from the store's last execution, else from the design with
/// assumed spreads; nothing is started or connected.
fn plan_without_running(setup: &ExperimentSetup, store: &Store, judging: &JudgeOptions) -> Result<i32> {
    let target = sequential_target(setup.sequential)?;
    let found = match plan_from_history(store, setup, judging, target)? {
        Some(found) => found,
        None => plan_from_design(setup, judging, target),
    };
    show_plan(found)?;
    Ok(Exit::Success.code())
}

/// The sequential design a plan sizes; a fixed number of blocks has none.
fn sequential_target(sequential: Option<SequentialPlan>) -> Result<SequentialPlan> {
    sequential.ok_or_else(|| usage("--plan sizes a sequential experiment: leave out --repetitions (and the file's `repetitions:`)".to_string()))
}

/// `--plan --pilot`: the plan, from a pilot run now when the store has no execution.
fn plan(rt: &tokio::runtime::Runtime, lab: &Lab, setup: &ExperimentSetup, judging: &JudgeOptions) -> Result<i32> {
    let target = sequential_target(setup.sequential)?;
    show_plan(rt.block_on(plan_experiment(lab, setup, judging, target))?)?;
    Ok(Exit::Success.code())
}

/// Where a plan came from, and the plan.
fn show_plan((plan, from): (casslab_core::judge::plan::Plan, PlanFrom)) -> Result<()> {
    out::note(&match from {
        PlanFrom::Saved { id, blocks } => format!("planned from experiment {id} in the store ({blocks} blocks)"),
        PlanFrom::Pilot { blocks } => format!("planned from a pilot of {blocks} blocks"),
        PlanFrom::Assumed => "planned from the design and assumed spreads: nothing was run".to_string(),
    });
    out::print(&plan_text::text(&plan))?;
    Ok(())
}

/// Prints the runs and the verdicts, writes the page, judges the gates; the exit code.
fn show(v: &ExperimentVerdict, args: &ExperimentArgs, gates: &casslab_core::judge::Gates, store: &casslab_core::store::Store) -> Result<Exit> {
    if v.runs.interrupted {
        eprintln!("interrupted: stopping the experiment; the runs so far are saved and compared");
    }
    out::print(&experiment_text::runs(v))?;
    let j = &v.judgement;
    j.warnings.iter().for_each(|w| out::warn(w));
    j.refused.iter().for_each(|r| eprintln!("left out of the comparison: {r}"));
    out::print(&experiment_text::verdicts(v))?;
    if let Some(c) = j.verified(store)? {
        out::print(&casslab_core::report::data::verified_comparison_text(&c))?;
    }
    let recall = j.recall(store)?;
    if let Some(c) = &recall {
        out::print(&casslab_core::report::recall_text::comparison_text(c))?;
    }
    let gates = match &j.study {
        Some(s) => {
            if let Some(path) = &args.output {
                let server = j.server.as_ref().map(|x| casslab_core::report::judgement::server_side(x, s.plan.opts.confidence).1).unwrap_or_default();
                let mut notes = v.notes();
                notes.extend(recall.as_ref().map(casslab_core::report::recall_text::verdict_lines).unwrap_or_default());
                compare::write_page(
                    path,
                    ExperimentPage::of_study(&v.name, &v.description, &v.experiment_id, s).with_profiles(store, s)?.with_timelines(store, s)?,
                    notes,
                    server,
                )?;
            }
            compare::print_gates(j, gates, s.plan.opts.confidence, args.allow_undecided)
        }
        None => {
            if let Some(path) = &args.output {
                eprintln!("no page written to {}: fewer than two variants have runs to compare", path.display());
            }
            if gates.any() {
                eprintln!("gate failed: fewer than two variants have runs to compare, so the gates cannot be judged");
                Exit::Failed
            } else {
                Exit::Success
            }
        }
    };
    if let Some(w) = &v.load_point {
        out::warn(w);
    }
    Ok(if v.runs.interrupted {
        Exit::Interrupted
    } else if !j.refused.is_empty() {
        Exit::Failed
    } else {
        gates
    })
}

/// The sequential plan of the flags over the file's keys (`None`: a fixed number of blocks).
fn sequential_plan(args: &ExperimentArgs, exp: &Experiment) -> Result<Option<SequentialPlan>> {
    let budget_s = checked("budget", args.budget.as_deref(), checks::budget_s)?;
    let flags = DesignFlags { repetitions: repetitions_flag(args)?, precision: checked("precision", args.precision.as_deref(), checks::precision)?, budget_s };
    SequentialPlan::of(&flags, &exp.design).map_err(|e| usage(e.to_string()))
}

/// `--repetitions`, checked as the file's `repetitions:` is.
fn repetitions_flag(args: &ExperimentArgs) -> Result<Option<u32>> {
    args.repetitions.map(|n| checks::repetitions(n.into()).map_err(|e| usage(format!("--repetitions {n}: {e}")))).transpose()
}

/// A design flag's value through the check of the file's key of the same name.
fn checked(flag: &str, v: Option<&str>, check: fn(&str) -> Result<f64, String>) -> Result<Option<f64>> {
    v.map(|t| check(t).map_err(|e| usage(format!("--{flag} {t}: {e}")))).transpose()
}

/// When the variants run: the flags', else the file's `design:`, else one after the other.
fn design_of(args: &ExperimentArgs, exp: &Experiment) -> Design {
    match (args.simultaneous, args.blocks) {
        (true, _) => Design::Simultaneous,
        (_, true) => Design::Blocks,
        _ => exp.design.design.unwrap_or(Design::Blocks),
    }
}

/// The file's order settings with the flags' overrides.
fn run_order(args: &ExperimentArgs, exp: &Experiment) -> Result<RunOrder> {
    let mut r = exp.run_order;
    if let Some(o) = &args.order {
        r.order = Order::parse(o).ok_or_else(|| usage(format!("--order {o}: write {}", Order::NAMES)))?;
    }
    if args.order_seed.is_some() {
        r.seed = args.order_seed;
    }
    r.unmeasured_round &= !args.no_unmeasured_round;
    r.settle &= !args.no_settle;
    Ok(r)
}
