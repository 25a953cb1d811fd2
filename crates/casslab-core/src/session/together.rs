//! An experiment whose variants are measured at the same time (`design: simultaneous`):
//! every block is one stretch of time in which all variants run side by side, their run
//! phases started together at one gate (`engine::start_gate`) on one wall clock, the
//! scheduled operations shared among them in turn (a b a b …), so that whatever drifts —
//! the machine's other work, CPU steal, the page cache, a flush — drifts under all of them.
//! Each variant's run is an ordinary saved run tagged with its block, so the blocks are
//! judged as paired blocks are, each pair the same seconds seen by both.
//!
//! Where each variant runs is `experiment::design`'s [`Layout`]: on the one cluster (each in its
//! keyspace, the rate divided among them), on clusters casslab starts beside the first
//! ([`ClusterControl::beside`], each at the full rate; stopped again at the end, their data
//! kept), or on servers of their own. Before the blocks: the loads (all variants at once),
//! settling every cluster, and an unmeasured block; with `load: fresh`, every block loads all
//! variants afresh, together, and settles before it measures.

use super::experiment_setup::{variant_spec, ExperimentError, ExperimentSetup, VariantError};
use super::maker::{Flow, Maker, MAX_BLOCKS};
use super::observer::SessionEvent;
use super::{Lab, Observer, RunResult, RunSpec};
use crate::cluster::ClusterControl;
use crate::config::{LoadMode, RunConfig};
use crate::engine::start_gate::StartSlot;
use crate::experiment::design::{self, Layout};
use crate::experiment::Experiment;
use crate::judge::verdict::{ExperimentRuns, StopReason};
use crate::judge::JudgeOptions;
use crate::notice::Notice;
use crate::workload::TargetKind;
use std::sync::Arc;
use std::time::Duration;

/// Longest wait at a block's gate for the variants whose runs are slower to connect.
const GATE_TIMEOUT: Duration = Duration::from_secs(300);

/// Where each variant runs: its cluster control (if casslab controls it) and the connection
/// settings of its runs.
pub(super) struct Sides {
    pub layout: Layout,
    controls: Vec<Option<Arc<dyn ClusterControl>>>,
    bases: Vec<RunConfig>,
    /// The clusters casslab started beside the first, stopped again at the end.
    started: Vec<Arc<dyn ClusterControl>>,
}

impl Sides {
    /// The sides of `exp`'s variants: the run's cluster for every variant that shares it, a
    /// cluster beside it for each variant with a server of its own, or a variant's own hosts.
    async fn of(lab: &Lab<'_>, exp: &Experiment, base: &RunConfig) -> Result<Sides, VariantError> {
        let layout = design::layout_of(exp);
        let mut controls: Vec<Option<Arc<dyn ClusterControl>>> = Vec::new();
        let (mut bases, mut started): (Vec<RunConfig>, _) = (Vec::new(), Vec::new());
        for (i, v) in exp.variants.iter().enumerate() {
            // a variant on the server of one before it (another rate of it): that one's side
            if let Some(j) = (0..i).find(|j| design::same_server(&exp.variants[*j], v)) {
                controls.push(controls[j].clone());
                bases.push(bases[j].clone());
                continue;
            }
            let mut cfg = base.clone();
            // a variant's own hosts are set by `variant_spec`
            let control = if !v.hosts.is_empty() {
                None
            } else if layout == Layout::Beside && i > 0 && v.workload.target == TargetKind::Cql {
                let Some(main) = lab.control.clone() else {
                    return Err(VariantError { variant: v.name.clone(), error: super::SessionError::NeedsLocalCluster(v.workload.name.clone()) });
                };
                let beside =
                    tokio::task::spawn_blocking(move || main.beside(i)).await.map_err(|e| VariantError { variant: v.name.clone(), error: e.into() })?;
                let beside = beside.map_err(|source| VariantError {
                    variant: v.name.clone(),
                    error: super::SessionError::Server { workload: v.workload.name.clone(), error: source },
                })?;
                beside.aim(&mut cfg.cluster);
                started.push(beside.clone());
                Some(beside)
            } else {
                lab.control.clone()
            };
            controls.push(control);
            bases.push(cfg);
        }
        Ok(Sides { layout, controls, bases, started })
    }

    /// A lab for variant `i`'s runs: the experiment's, with the variant's cluster and an
    /// observer that shows the progress of the first variant's runs only.
    fn lab<'a>(&self, lab: &Lab<'a>, i: usize) -> Lab<'a> {
        Lab {
            credentials: lab.credentials.clone(),
            control: self.controls[i].clone(),
            results: lab.results,
            observer: Arc::new(Side { inner: lab.observer.clone(), first: i == 0 }),
            stop: lab.stop.clone(),
        }
    }

    /// Stops the clusters started beside the first (their data stays for the next time).
    async fn stop_started(&self, observer: &Arc<dyn Observer>) {
        for c in &self.started {
            let (c, o) = (c.clone(), observer.clone());
            let _ = tokio::task::spawn_blocking(move || c.down(&mut |line| o.on(&SessionEvent::Notice(&Notice::Cluster(line.to_string()))))).await;
        }
    }

    /// Whether variant `i` shares its cluster with a variant before it (its runs then poll no
    /// server: the first's runs hold the shared cluster's figures).
    fn shares_with_earlier(&self, exp: &Experiment, i: usize) -> bool {
        exp.variants[..i].iter().any(|v| design::same_server(v, &exp.variants[i]))
    }

    /// Whether variant `i` shares its cluster with a variant before it in `group` (the runs
    /// made at the same time): its runs then poll no server.
    fn shares_in_group(exp: &Experiment, group: &[usize], i: usize) -> bool {
        group.iter().any(|j| *j < i && design::same_server(&exp.variants[*j], &exp.variants[i]))
    }

    /// Whether variant `i`'s data is loaded by a variant before it: the same server and
    /// keyspace (the rates of one server in a `rates:` experiment).
    fn loaded_by_earlier(exp: &Experiment, i: usize) -> bool {
        let v = &exp.variants[i];
        exp.variants[..i].iter().any(|e| design::same_server(e, v) && e.workload.keyspace == v.workload.keyspace)
    }
}

/// The observer of one side: everything of the first variant's runs, and of the others' what
/// is not progress (their notices, events, finished runs).
struct Side {
    inner: Arc<dyn Observer>,
    first: bool,
}

impl Observer for Side {
    fn on(&self, event: &SessionEvent<'_>) {
        let progress = matches!(
            event,
            SessionEvent::Connected { .. }
                | SessionEvent::PhaseStarted { .. }
                | SessionEvent::Interval(_)
                | SessionEvent::PhaseFinished { .. }
                | SessionEvent::RunStarted { .. }
                // the common start is one for all: said once
                | SessionEvent::Notice(Notice::CommonStart { .. })
        );
        if self.first || !progress {
            self.inner.on(event);
        }
    }
}

/// The experiment's runs with its variants at the same time: loads, settling, an unmeasured
/// block, then `repetitions` blocks, or with a sequential plan block after block until every
/// judged figure is settled or the budget is spent. The clusters started for it are stopped
/// at the end, whatever happened.
pub(super) async fn run_together(
    lab: &Lab<'_>,
    setup: &ExperimentSetup<'_>,
    judging: &JudgeOptions,
    out: ExperimentRuns,
) -> Result<ExperimentRuns, ExperimentError> {
    let started = std::time::Instant::now();
    let sides = Sides::of(lab, setup.exp, &setup.base).await?;
    let cores = crate::config::machine_cores();
    let together = design::groups(setup.exp).first().map_or(0, Vec::len);
    let words = design::shared_words(&sides.layout, together, cores);
    lab.observer.on(&SessionEvent::Notice(&Notice::Together { words: words.clone() }));
    let mut maker = Maker::new(lab, setup, out, judging);
    maker.out.together = Some(words);
    maker.made_together(sides.layout.as_str());
    let result = blocks(&mut maker, &sides, judging, started).await;
    sides.stop_started(&lab.observer).await;
    result?;
    Ok(maker.out)
}

async fn blocks(maker: &mut Maker<'_, '_, '_>, sides: &Sides, judging: &JudgeOptions, started: std::time::Instant) -> Result<(), ExperimentError> {
    let setup = maker.setup;
    if prepare(maker, sides).await? == Flow::Stop {
        maker.stop_by_user();
        return Ok(());
    }
    let groups = design::groups(setup.exp);
    let last = if setup.sequential.is_some() { MAX_BLOCKS } else { setup.repetitions };
    for rep in 1..=last {
        let block_started = std::time::Instant::now();
        if maker.fresh && !maker.plain && load_all(maker, sides, true).await? == Flow::Stop {
            maker.stop_by_user();
            return Ok(());
        }
        for group in &groups {
            let names: Vec<&str> = group.iter().map(|i| setup.exp.variants[*i].name.as_str()).collect();
            let step = format!("block {rep}: {} at the same time", names.join(", "));
            maker.lab.observer.on(&SessionEvent::VariantRun { variant: &names.join(" + "), step: &step });
            let tags = |vi: usize| {
                let mut t = maker.measured_tags.clone();
                t.extend([format!("variant={}", setup.exp.variants[vi].name), format!("variant_index={vi}"), format!("repetition={rep}")]);
                t
            };
            let (runs, flow) = run_group(maker.lab, sides, setup, group, tags).await?;
            for (vi, r) in runs {
                maker.out.variants[vi].1.push(r.run);
                maker.out.order.push((setup.exp.variants[vi].name.clone(), rep));
            }
            if flow == Flow::Stop {
                maker.stop_by_user();
                return Ok(());
            }
        }
        let Some(plan) = &setup.sequential else { continue };
        let block_s = block_started.elapsed().as_secs_f64();
        if maker.out.max_blocks.is_none() {
            maker.fix_horizon(plan, started.elapsed().as_secs_f64(), block_s);
        }
        if let Some(reason) = maker.look(plan, judging, rep as usize, started.elapsed().as_secs_f64(), block_s)? {
            maker.out.stop = Some(reason);
            return Ok(());
        }
    }
    maker.out.stop = Some(StopReason::Done);
    Ok(())
}

/// The loads of every variant at once (unless the user loads), settling what they left on every
/// cluster, then one unmeasured block.
async fn prepare(maker: &mut Maker<'_, '_, '_>, sides: &Sides) -> Result<Flow, VariantError> {
    let (setup, lab) = (maker.setup, maker.lab);
    let exp = setup.exp;
    if !maker.plain && load_all(maker, sides, false).await? == Flow::Stop {
        return Ok(Flow::Stop);
    }
    if setup.run_order.unmeasured_round {
        for group in design::groups(exp) {
            lab.observer.on(&SessionEvent::VariantRun { variant: "every variant", step: "unmeasured block, at the same time" });
            let (runs, flow) = run_group(lab, sides, setup, &group, |vi| maker.tagged("unmeasured", &exp.variants[vi])).await?;
            maker.out.unmeasured.extend(runs.iter().map(|(_, r)| r.run));
            if flow == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
    }
    Ok(Flow::Go)
}

/// Loads every variant at the same time (each on its side; afresh with `fresh`, as
/// `load: fresh` says, else unless the same data is there), then settles every cluster: the
/// shared one once.
async fn load_all(maker: &mut Maker<'_, '_, '_>, sides: &Sides, fresh: bool) -> Result<Flow, VariantError> {
    let (setup, lab) = (maker.setup, maker.lab);
    let exp = setup.exp;
    let all: Vec<usize> = (0..exp.variants.len()).filter(|i| !Sides::loaded_by_earlier(exp, *i)).collect();
    let step = if fresh { "load afresh, at the same time" } else { "load, at the same time" };
    lab.observer.on(&SessionEvent::VariantRun { variant: "every variant", step });
    let labs: Vec<Lab> = (0..exp.variants.len()).map(|i| sides.lab(lab, i)).collect();
    let loads = all.iter().map(|&i| {
        let v = &exp.variants[i];
        // variant_spec reloads a fresh experiment's data; a shared one loads unless it is there
        let mut spec = variant_spec(exp, v, &sides.bases[i], maker.tagged("load_of", v));
        spec.workload.run = None;
        let lab = &labs[i];
        async move { (i, super::run(lab, &spec).await) }
    });
    for (i, r) in futures::future::join_all(loads).await {
        let r = r.map_err(|source| VariantError { variant: exp.variants[i].name.clone(), error: source })?;
        maker.out.loads.push(r.run);
        if maker.flow(&r) == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    for i in all.iter().copied() {
        if !setup.run_order.settle || sides.shares_with_earlier(exp, i) || exp.variants[i].workload.target != TargetKind::Cql {
            continue;
        }
        let notes = super::maker::settle(&labs[i], &sides.bases[i], &exp.variants[i].workload.keyspace).await;
        maker.out.notes.extend(notes);
    }
    Ok(Flow::Go)
}

/// The runs of the variants of `group`, made at the same time: one gate, each run its share
/// of the rate, its operations interleaved with the others'. A run that fails lets the others
/// go at once; the first failure is the error.
async fn run_group(
    lab: &Lab<'_>,
    sides: &Sides,
    setup: &ExperimentSetup<'_>,
    group: &[usize],
    tags: impl Fn(usize) -> Vec<String>,
) -> Result<(Vec<(usize, RunResult)>, Flow), VariantError> {
    let exp = setup.exp;
    let specs: Vec<RunSpec> = group
        .iter()
        .map(|&vi| {
            let v = &exp.variants[vi];
            let mut spec = variant_spec(exp, v, &sides.bases[vi], tags(vi));
            spec.config.rate = design::rate_together(exp, group, vi, spec.config.rate.as_ref());
            spec.config.server_metrics &= !Sides::shares_in_group(exp, group, vi);
            // a fresh experiment's data was just loaded, together ([`load_all`])
            if spec.config.load == LoadMode::Reload {
                spec.config.load = LoadMode::Skip;
            }
            spec
        })
        .collect();
    // the stream the client offers: every run's rate at its start, interleaved
    let offered: Option<f64> = specs.iter().map(|s| s.config.rate.as_ref().map(|r| r.peak())).sum();
    let slots = StartSlot::interleaved(group.len(), offered, GATE_TIMEOUT);
    let labs: Vec<Lab> = group.iter().map(|&vi| sides.lab(lab, vi)).collect();
    let runs = group.iter().zip(specs).zip(slots).zip(&labs).map(|(((&vi, mut spec), slot), lab)| {
        spec.together = Some(slot.clone());
        let name = exp.variants[vi].name.clone();
        async move {
            let r = super::run(lab, &spec).await;
            if r.is_err() {
                slot.gate.abandon(&name);
            }
            (vi, r)
        }
    });
    let mut made = Vec::new();
    let mut first_error: Option<VariantError> = None;
    for (vi, r) in futures::future::join_all(runs).await {
        match r {
            Ok(r) => made.push((vi, r)),
            // a run that failed because another did is not the story
            Err(source) if first_error.is_none() || !source.to_string().contains("before the common start") => {
                first_error = Some(VariantError { variant: exp.variants[vi].name.clone(), error: source });
            }
            Err(_) => {}
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let stop = lab.stopping() || made.iter().any(|(_, r)| r.status == crate::store::RunStatus::Interrupted);
    Ok((made, if stop { Flow::Stop } else { Flow::Go }))
}
