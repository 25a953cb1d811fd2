//! A study: saved runs read from the [`Store`] in named groups (a run, or a variant's
//! repetitions), every figure of every operation estimated per group, and every group compared
//! with the first (the baseline). This is what `casslab compare` and `casslab experiment`
//! print; the text lives in `report::comparison`, the HTML page in `report::experiment_html`,
//! and gates are judged on it by [`super::checks`].
//!
//! How, in one place:
//! - Repetitions are the unit when a group has several runs (`repeated.rs`); two single runs
//!   are compared by the windowed bootstrap of their windows (`change.rs`), which cannot see
//!   run-to-run variation — the study says so ([`Method`]).
//! - Each pair of groups judges its figures as one family: each change's interval is at
//!   `1 − (1 − confidence) / family`, so that they hold together at the stated confidence *per
//!   comparison* of a group with the baseline. With [`Family::Experiment`] (`--family`) the
//!   family is every pair's judged figures together, so that the whole study holds at the
//!   stated confidence, however many groups it compares. `total`, which contains the
//!   operations, is shown but not judged (it would count their signal again).
//! - Figures that do not mean the same in both groups are left out, with the reason
//!   (`likeness.rs`); runs that were saturated are named (`saturation.rs`); a repetition that
//!   disagrees with the others of its group is named ([`Disagreement`]).
//!
//! It reads the store and does the arithmetic; it prints nothing and knows no command line.

use super::likeness::{likeness, Likeness};
use super::paired::{block_differences, compare_blocks, BlockDesign};
use super::saturation::RunLoad;
use super::{
    compare, compare_repeated, outlier, seed_for, side_estimate, AnalysisError, AnalysisOptions, Comparison, Estimate, LatencyKind, Metric, OpRef, Outlier,
    Resampled, RunFigure, Sample, WindowBuilder, Windows, METRICS, MIN_FIGURES, OUTLIER_METRICS,
};
use crate::stats::is_sub_op;
use crate::store::{RunId, RunRecord, Store, StoreError};
use crate::workload::{parse_workload, Workload};

/// How to analyse: the bootstrap's options, which latency, and the servers' cores.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyPlan {
    pub opts: AnalysisOptions,
    pub kind: LatencyKind,
    /// Cores of the servers, for throughput per server core (local nodes: the machine's).
    pub server_cores: Option<f64>,
    /// The method casslab used before repetitions were the unit: every group's windows pooled
    /// and resampled as if independent, each figure judged on its own, `total` too. Kept to
    /// show what it gets wrong (`bench/aa.sh`); never the default.
    pub pool_windows: bool,
    /// Blocks as the unit: an experiment's runs paired by their repetition (one run of each
    /// side per block), compared as `paired.rs` says; `None`: repetitions unpaired (Welch).
    pub blocks: Option<BlockDesign>,
    /// The figures judged; the others are shown as exploratory. `None`: every figure of
    /// every operation is judged (one family), except with blocks, where each operation's p50
    /// and p99 are (at a fixed rate; else total throughput and each operation's p99).
    pub judged: Option<Vec<FigureRef>>,
    /// Over what the stated confidence holds.
    pub family: Family,
}

impl StudyPlan {
    /// A plan with these analysis options and latency kind, and nothing else asked for.
    pub fn new(opts: AnalysisOptions, kind: LatencyKind) -> StudyPlan {
        StudyPlan { opts, kind, server_cores: None, pool_windows: false, blocks: None, judged: None, family: Family::Comparison }
    }
}

/// Over what the stated confidence holds: each comparison of a group with the baseline, or
/// all of them together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Each comparison's judged figures hold together (Bonferroni over them); with many
    /// groups, the chance of some false claim among all comparisons grows with their number.
    #[default]
    Comparison,
    /// Every comparison's judged figures hold together (Bonferroni over all of them): a
    /// study claims anything false at most `1 − confidence` of the time.
    Experiment,
}

impl Family {
    /// Its key in tags and experiment files: `comparison`, `experiment`.
    pub fn key(self) -> &'static str {
        match self {
            Family::Comparison => "comparison",
            Family::Experiment => "experiment",
        }
    }

    pub fn from_key(key: &str) -> Option<Family> {
        match key {
            "comparison" => Some(Family::Comparison),
            "experiment" => Some(Family::Experiment),
            _ => None,
        }
    }

    /// The figures judged together with one of pair `pair`'s, given every pair's judged
    /// count.
    pub fn size(self, judged_per_pair: &[usize], pair: usize) -> usize {
        match self {
            Family::Comparison => judged_per_pair.get(pair).copied().unwrap_or(0).max(1),
            Family::Experiment => judged_per_pair.iter().sum::<usize>().max(1),
        }
    }
}

/// One figure of one operation: `read.p99`, `total.ops_s` (saved as that text).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct FigureRef {
    /// The operation, or `total`.
    pub op: String,
    pub metric: Metric,
}

impl FigureRef {
    fn is(&self, op: &OpRef, m: Metric) -> bool {
        self.metric == m && self.op == op.name()
    }
}

impl std::str::FromStr for FigureRef {
    type Err = String;

    /// `read.p99`, `total.ops_s`, `update.mean`; the metrics are `ops_s`, `mean`, `p50`, `p95`,
    /// `p99`, `p999`, `p99_typical`.
    fn from_str(text: &str) -> Result<FigureRef, String> {
        let (op, metric) = crate::units::split_figure(text).ok_or_else(|| format!("\"{text}\": write OP.METRIC, e.g. read.p99 or total.ops_s"))?;
        let metric = match metric {
            "ops_s" | "ops/s" => Metric::OpsPerS,
            "mean" => Metric::Mean,
            "p50" => Metric::P50,
            "p95" => Metric::P95,
            "p99" => Metric::P99,
            "p999" | "p99.9" => Metric::P999,
            "p99_typical" => Metric::P99Typical,
            "recall" => {
                return Err(format!(
                    "\"{text}\": recall is judged in every comparison of vector searches, as a family of its own (see `recall@k … judged`); `judge:` names latency and throughput figures"
                ))
            }
            m => return Err(format!("\"{text}\": unknown figure \"{m}\"; use one of ops_s, mean, p50, p95, p99, p999, p99_typical")),
        };
        if op.is_empty() {
            return Err(format!("\"{text}\": name the operation (or total) before the dot"));
        }
        Ok(FigureRef { op: op.to_string(), metric })
    }
}

impl From<FigureRef> for String {
    fn from(f: FigureRef) -> String {
        f.to_string()
    }
}

impl TryFrom<String> for FigureRef {
    type Error = String;
    fn try_from(text: String) -> Result<FigureRef, String> {
        text.parse()
    }
}

impl std::fmt::Display for FigureRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.op, self.metric.label())
    }
}

/// How the intervals of a study were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Every group is one run: the windowed bootstrap within each run.
    Windows,
    /// Repetitions as the unit (see `repeated.rs`).
    Repetitions,
    /// Blocks as the unit: each side's run of a block paired with the baseline's (see
    /// `paired.rs`).
    Blocks,
    /// Every group's windows pooled ([`StudyPlan::pool_windows`]).
    PooledWindows,
}

/// A named group of runs: one run (`run 12`), or the repetitions of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub label: String,
    pub runs: Vec<RunId>,
}

/// One operation of one side.
#[derive(Debug, Clone)]
pub struct Figures {
    /// Every metric with its interval at the plan's confidence, in [`Metric::ALL`] order.
    pub estimates: [Option<Estimate>; METRICS],
    /// Failed operations over the measured phase.
    pub errors: u64,
    /// Highest latency recorded, ns.
    pub max_ns: u64,
    /// Each run's own figures (empty with pooled windows).
    pub runs: Vec<RunFigure>,
    /// The windowed bootstrap of the side's windows, when the side is one run (or pooled).
    pooled: Option<Resampled>,
}

impl Figures {
    pub fn estimate(&self, m: Metric) -> Option<Estimate> {
        self.estimates[m.index()]
    }

    /// The point estimate (NaN when undefined).
    pub fn point(&self, m: Metric) -> f64 {
        self.estimate(m).map_or(f64::NAN, |e| e.point)
    }
}

/// One side of the study: a run, or a variant's runs.
#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    /// The runs, in the group's order.
    pub runs: Vec<RunId>,
    /// Where each run stood in its experiment ("repetition 1, 1st in the order"), if known.
    pub run_notes: Vec<Option<String>>,
    /// What the runs were ("kv, completed", or "run 3 (kv, completed), run 5 (…)").
    pub about: String,
    /// Every run's windows together.
    pub windows: Windows,
    pub client_cores: usize,
    pub server_cores: Option<f64>,
    /// One entry per [`Study::ops`]; `None` where the side never did the operation.
    pub figures: Vec<Option<Figures>>,
    /// The workload its (first) run saved, when it can be read back.
    pub workload: Option<Workload>,
    /// Each run's repetition (its block in an experiment), when its tags say.
    pub repetitions: Vec<Option<u32>>,
    /// Each run's place in the experiment's order (which ran first in a block), when its
    /// tags say.
    pub positions: Vec<Option<u32>>,
    /// Every run had a fixed rate (its throughput is the rate, not a result).
    pub fixed_rate: bool,
    per_run: Vec<Windows>,
}

/// What one compared side's family was.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pair {
    /// Figures judged together.
    pub judged: usize,
    /// Operations left out, with the reason.
    pub left_out: Vec<(String, String)>,
}

/// A repetition that disagrees with the others of its side.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// Index into [`Study::sides`].
    pub side: usize,
    pub run: RunId,
    /// The figures, with how they disagree, the most different first.
    pub figures: Vec<(String, Metric, Outlier)>,
}

/// A compared run that was saturated.
#[derive(Debug, Clone, PartialEq)]
pub struct Saturated {
    pub side: usize,
    pub run: RunId,
    pub why: String,
}

/// Everything compared.
#[derive(Debug, Clone)]
pub struct Study {
    pub plan: StudyPlan,
    pub method: Method,
    pub ops: Vec<OpRef>,
    /// `sides[0]` is the baseline.
    pub sides: Vec<Side>,
    /// `comparisons[s - 1][op][metric]`: side s against the baseline; `None` where a side
    /// lacks the figure or it was left out.
    pub comparisons: Vec<Vec<Vec<Option<Comparison>>>>,
    /// `pairs[s - 1]`: side s against the baseline.
    pub pairs: Vec<Pair>,
    pub disagreements: Vec<Disagreement>,
    pub saturated: Vec<Saturated>,
    /// The figures judged (with blocks: the plan's, or the default).
    pub judged: Vec<FigureRef>,
}

impl Study {
    /// Whether every judged comparison needs no more blocks (a difference found, the two
    /// equivalent, or the interval within `precision`): what stops a sequential experiment.
    pub fn settled(&self, precision: f64) -> bool {
        self.comparisons
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .filter(|c| !c.exploratory && c.outcome != super::Outcome::NotJudged)
            .all(|c| super::paired::settled(c, precision))
    }

    /// The judged comparisons not settled yet at `precision`, as `side: op figure` with the
    /// interval's half-width.
    pub fn unsettled(&self, precision: f64) -> Vec<String> {
        let mut out = Vec::new();
        for (si, per_op) in self.comparisons.iter().enumerate() {
            for (oi, per_m) in per_op.iter().enumerate() {
                for c in per_m.iter().flatten().filter(|c| !c.exploratory && c.outcome != super::Outcome::NotJudged) {
                    if !super::paired::settled(c, precision) {
                        let half = c.half_width_ln().map_or("no interval yet".to_string(), half_width_text);
                        out.push(format!("{}: {} {} {half}", self.sides[si + 1].label, self.ops[oi].name(), c.metric.label()));
                    }
                }
            }
        }
        out
    }
}

/// An interval's half-width (in logarithms) in words, both ways: `-5.8%/+6.2%`, or, while too
/// few blocks make it wider than any change worth naming, `wider than -91%/+1000%` (early looks
/// at 2–4 degrees of freedom give astronomical widths that say nothing more).
fn half_width_text(h_ln: f64) -> String {
    let up = h_ln.exp() - 1.0;
    if up.is_finite() && up <= 10.0 {
        format!("-{:.1}%/+{:.1}%", (1.0 - (-h_ln).exp()) * 100.0, up * 100.0)
    } else {
        "wider than -91%/+1000%".to_string()
    }
}

/// Why a study could not be made.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("reading the saved runs: {0}")]
    Store(StoreError),
    #[error("run {run}: {error}")]
    Run { run: RunId, error: AnalysisError },
    #[error(transparent)]
    Analysis(AnalysisError),
}

impl From<StoreError> for StudyError {
    fn from(e: StoreError) -> StudyError {
        StudyError::Store(e)
    }
}

/// Reads every group's runs and compares each group with the first.
pub fn study(store: &Store, groups: &[Group], plan: StudyPlan) -> Result<Study, StudyError> {
    plan.opts.validate().map_err(StudyError::Analysis)?;
    let mut sides = Vec::new();
    let mut saturated = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let (side, loads) = read_side(store, g, &plan)?;
        saturated.extend(loads.into_iter().map(|(run, why)| Saturated { side: i, run, why }));
        sides.push(side);
    }
    let paired = plan.blocks.is_some() && sides.len() > 1 && sides.iter().all(|s| s.repetitions.iter().all(Option::is_some));
    let method = if plan.pool_windows {
        Method::PooledWindows
    } else if paired {
        Method::Blocks
    } else if sides.iter().any(|s| s.runs.len() > 1) {
        Method::Repetitions
    } else {
        Method::Windows
    };
    let mut ops: Vec<OpRef> = Vec::new();
    for s in &sides {
        for name in &s.windows.ops {
            let op = OpRef::Op(name.clone());
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    if ops.iter().filter(|o| !is_sub_op(o.name())).count() > 1 {
        ops.push(OpRef::Total);
    }
    for s in &mut sides {
        s.figures = ops.iter().map(|op| figures(s, op, &plan, method)).collect();
    }
    let judged = match (&plan.judged, method) {
        (Some(j), _) => j.clone(),
        (None, Method::Blocks) => default_judged(&ops, sides.iter().all(|s| s.fixed_rate)),
        (None, _) => Vec::new(),
    };
    // every pair's family first: with `Family::Experiment` each comparison's level depends on
    // all of them
    let blocks = method == Method::Blocks;
    let pairs: Vec<Pair> = sides[1..].iter().map(|b| pair_of(&sides[0], b, &ops, &plan, &judged, blocks)).collect();
    let judged_per_pair: Vec<usize> = pairs.iter().map(|p| p.judged).collect();
    let comparisons = sides[1..]
        .iter()
        .zip(&pairs)
        .enumerate()
        .map(|(i, (b, pair))| {
            let family = if plan.pool_windows { 1 } else { plan.family.size(&judged_per_pair, i) };
            if blocks {
                compare_blocks_of(&sides[0], b, &ops, &plan, &judged, pair, family)
            } else {
                compare_sides(&sides[0], b, &ops, &plan, pair, family)
            }
        })
        .collect();
    let disagreements = if matches!(method, Method::Repetitions | Method::Blocks) { disagreements(&sides, &ops) } else { Vec::new() };
    Ok(Study { plan, method, ops, sides, comparisons, pairs, disagreements, saturated, judged })
}

/// One group's runs, windowed, with the runs that were saturated.
fn read_side(store: &Store, g: &Group, plan: &StudyPlan) -> Result<(Side, Vec<(RunId, String)>), StudyError> {
    let (mut per_run, mut about, mut notes, mut loads) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut client_cores, mut local, mut workload) = (0, true, None);
    let (mut repetitions, mut positions, mut fixed_rate) = (Vec::new(), Vec::new(), true);
    for &id in &g.runs {
        let record = store.run(id)?;
        // One interval at a time: decoded, it holds two full histograms until windowed.
        let mut builder = WindowBuilder::new(plan.opts.window_s).map_err(StudyError::Analysis)?;
        store.for_each_interval(id, |iv| {
            builder.push(&iv);
            Ok(())
        })?;
        let windows = builder.finish().map_err(|source| StudyError::Run { run: id, error: source })?;
        let samples = store.server_samples(id)?;
        let load = RunLoad::of(&windows, &samples, record.config.fixed_rate_per_s(), record.config.concurrency, record.env.client_cores);
        if let Some(why) = load.saturated() {
            loads.push((id, why));
        }
        per_run.push(windows);
        about.push((id, format!("{}, {}", record.workload, record.status.as_str())));
        notes.push(run_note(&record));
        repetitions.push(tag(&record, "repetition").and_then(|r| r.parse::<u32>().ok()));
        positions.push(tag(&record, "position").and_then(|r| r.parse::<u32>().ok()));
        fixed_rate &= record.config.fixed_rate_per_s().is_some();
        client_cores = record.env.client_cores;
        local &= record.config.cluster.local;
        if workload.is_none() {
            workload = parse_workload(&record.config.workload_source, &record.config.workload, &record.config.params).ok();
        }
    }
    let windows = Windows::pool(per_run.clone()).map_err(StudyError::Analysis)?;
    let about = match &about[..] {
        [(id, what)] if g.label == format!("run {id}") => what.clone(),
        _ => about.iter().map(|(id, what)| format!("run {id} ({what})")).collect::<Vec<_>>().join(", "),
    };
    // Local nodes share the client's machine: its cores serve both.
    let server_cores = plan.server_cores.or((local && client_cores > 0).then_some(client_cores as f64));
    let side = Side {
        label: g.label.clone(),
        runs: g.runs.clone(),
        run_notes: notes,
        about,
        windows,
        client_cores,
        server_cores,
        figures: Vec::new(),
        workload,
        repetitions,
        positions,
        fixed_rate,
        per_run,
    };
    Ok((side, loads))
}

/// The value of a run's `key=value` tag.
fn tag(r: &RunRecord, key: &str) -> Option<String> {
    r.tags.iter().find_map(|t| t.strip_prefix(key).and_then(|v| v.strip_prefix('='))).map(str::to_string)
}

/// "repetition 2, 3rd in the order" from an experiment run's tags.
fn run_note(r: &RunRecord) -> Option<String> {
    let rep = tag(r, "repetition")?;
    Some(match tag(r, "position").and_then(|p| p.parse::<u32>().ok()) {
        Some(p) => format!("repetition {rep}, {} in the order", ordinal(p)),
        None => format!("repetition {rep}"),
    })
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// One side's figures of `op`: the windowed bootstrap of its one run (or of its pooled
/// windows), else each run's own figures and their t intervals.
fn figures(s: &Side, op: &OpRef, plan: &StudyPlan, method: Method) -> Option<Figures> {
    let (o, kind) = (&plan.opts, plan.kind);
    if plan.pool_windows || s.per_run.len() == 1 {
        let sample = Sample::of(&s.windows, op, kind)?;
        let pooled = Resampled::run(&sample, o.resamples, seed_for(o.seed, &[&s.label, op.name(), kind.as_str()]));
        let runs = if plan.pool_windows { Vec::new() } else { vec![RunFigure::of(&pooled)] };
        let estimates = Metric::ALL.map(|m| pooled.estimate(m, o.confidence));
        return Some(Figures { estimates, errors: sample.errors, max_ns: sample.max_ns, runs, pooled: Some(pooled) });
    }
    let (mut runs, mut errors, mut max_ns, mut any) = (Vec::new(), 0, 0, false);
    for (id, w) in s.runs.iter().zip(&s.per_run) {
        match Sample::of(w, op, kind) {
            Some(sample) => {
                any = true;
                errors += sample.errors;
                max_ns = max_ns.max(sample.max_ns);
                // with blocks, a run's own resamples only split the spread into within and
                // between blocks: a few hundred do
                let resamples = if method == Method::Blocks { o.resamples.min(400) } else { o.resamples };
                let r = Resampled::run(&sample, resamples, seed_for(o.seed, &[&format!("run {id}"), op.name(), kind.as_str()]));
                runs.push(RunFigure::of(&r));
            }
            None => runs.push(RunFigure { points: [f64::NAN; METRICS], within_var_ln: [f64::NAN; METRICS] }),
        }
    }
    let estimates = Metric::ALL.map(|m| side_estimate(&runs, m, o.confidence));
    any.then_some(Figures { estimates, errors, max_ns, runs, pooled: None })
}

/// What side `b` against the baseline `a` compares: the operations left out (their figures
/// do not mean the same on both sides), and how many figures it judges — every figure of every
/// operation but `total` (all of them with pooled windows), or with blocks the `judged` ones.
fn pair_of(a: &Side, b: &Side, ops: &[OpRef], plan: &StudyPlan, judged: &[FigureRef], blocks: bool) -> Pair {
    let mut pair = Pair::default();
    for (op, (fa, fb)) in ops.iter().zip(a.figures.iter().zip(&b.figures)) {
        let (Some(fa), Some(fb)) = (fa, fb) else { continue };
        if let Likeness::Different(why) = likeness(op, a.windows.phase, (&a.label, a.workload.as_ref()), (&b.label, b.workload.as_ref())) {
            pair.left_out.push((op.name().to_string(), why));
            continue;
        }
        pair.judged += if blocks {
            Metric::ALL.iter().filter(|m| judged.iter().any(|f| f.is(op, **m))).count()
        } else if plan.pool_windows || *op != OpRef::Total {
            // `total` contains the operations: judging it too would count their signal twice
            Metric::ALL.iter().filter(|m| fa.estimate(**m).is_some() && fb.estimate(**m).is_some()).count()
        } else {
            0
        };
    }
    pair
}

/// Whether `op` is compared in `pair` (not left out).
fn compared(pair: &Pair, op: &OpRef) -> bool {
    !pair.left_out.iter().any(|(name, _)| name == op.name())
}

/// Side `b` against the baseline `a`, every operation and metric, each judged figure one of
/// `family`.
fn compare_sides(a: &Side, b: &Side, ops: &[OpRef], plan: &StudyPlan, pair: &Pair, family: usize) -> Vec<Vec<Option<Comparison>>> {
    let judged = |op: &OpRef| plan.pool_windows || *op != OpRef::Total;
    ops.iter()
        .zip(a.figures.iter().zip(&b.figures))
        .map(|(op, (fa, fb))| {
            Metric::ALL
                .iter()
                .map(|&m| {
                    let (fa, fb) = (fa.as_ref()?, fb.as_ref()?);
                    if !compared(pair, op) {
                        return None;
                    }
                    let c = match (&fa.pooled, &fb.pooled) {
                        (Some(pa), Some(pb)) if plan.pool_windows || (a.runs.len() == 1 && b.runs.len() == 1) => compare(pa, pb, m, &plan.opts, family),
                        _ => compare_repeated(&fa.runs, &fb.runs, m, &plan.opts, family),
                    };
                    Some(if judged(op) { c } else { c.not_judged() })
                })
                .collect()
        })
        .collect()
}

/// The figures judged by default with blocks: each operation's p50 and p99 at a fixed rate;
/// else total throughput and each operation's p99.
pub(crate) fn default_judged(ops: &[OpRef], fixed_rate: bool) -> Vec<FigureRef> {
    let mut out = Vec::new();
    if !fixed_rate {
        out.push(FigureRef { op: "total".into(), metric: Metric::OpsPerS });
    }
    for op in ops.iter().filter(|o| **o != OpRef::Total && !is_sub_op(o.name())) {
        if fixed_rate {
            out.push(FigureRef { op: op.name().into(), metric: Metric::P50 });
        }
        out.push(FigureRef { op: op.name().into(), metric: Metric::P99 });
    }
    out
}

/// Side `b` against the baseline `a` block by block: the judged figures each one of `family`,
/// the others exploratory (each at the stated confidence on its own); at a fixed rate
/// throughput is shown, not judged. Each block's order (which side ran second) comes from the
/// runs' positions.
fn compare_blocks_of(a: &Side, b: &Side, ops: &[OpRef], plan: &StudyPlan, judged: &[FigureRef], pair: &Pair, family: usize) -> Vec<Vec<Option<Comparison>>> {
    let design = plan.blocks.unwrap_or_default();
    let fixed_rate = a.fixed_rate && b.fixed_rate;
    let is_judged = |op: &OpRef, m: Metric| judged.iter().any(|f| f.is(op, m));
    // the runs of a block, paired by repetition, with which ran second
    let mut blocks_of = Vec::new();
    for (ia, rep) in a.repetitions.iter().enumerate() {
        if let Some(ib) = b.repetitions.iter().position(|r| r.is_some() && r == rep) {
            let order = match (a.positions[ia], b.positions[ib]) {
                (Some(pa), Some(pb)) => Some(if pb > pa { 1.0 } else { -1.0 }),
                _ => None,
            };
            blocks_of.push((ia, ib, order));
        }
    }
    ops.iter()
        .enumerate()
        .map(|(oi, op)| {
            Metric::ALL
                .iter()
                .map(|&m| {
                    if !compared(pair, op) {
                        return None;
                    }
                    let (fa, fb) = (a.figures[oi].as_ref()?, b.figures[oi].as_ref()?);
                    let blocks: Vec<_> = blocks_of.iter().map(|&(ia, ib, order)| (fa.runs[ia], fb.runs[ib], order)).collect();
                    let d = block_differences(&blocks, m);
                    let judged_here = is_judged(op, m);
                    let mut c = compare_blocks(&d, m, &plan.opts, if judged_here { family } else { 1 }, &design);
                    if !judged_here {
                        c.exploratory = true;
                    }
                    // a fixed rate's throughput is the rate: shown, not judged
                    if (fixed_rate && m == Metric::OpsPerS) || (*op == OpRef::Total && !judged_here) {
                        c = c.not_judged();
                        c.exploratory = false;
                    }
                    Some(c)
                })
                .collect()
        })
        .collect()
}

/// The repetitions that disagree with the others of their side (three runs or more): singled
/// out in at least [`MIN_FIGURES`] figures of an operation.
fn disagreements(sides: &[Side], ops: &[OpRef]) -> Vec<Disagreement> {
    let mut out: Vec<Disagreement> = Vec::new();
    for (si, s) in sides.iter().enumerate() {
        for (oi, (op, f)) in ops.iter().zip(&s.figures).enumerate() {
            let Some(f) = f.as_ref().filter(|_| *op != OpRef::Total) else { continue };
            let reference: Vec<&[RunFigure]> =
                sides.iter().enumerate().filter(|(j, _)| *j != si).filter_map(|(_, t)| t.figures[oi].as_ref().map(|g| &g.runs[..])).collect();
            let found: Vec<(Metric, Outlier)> = OUTLIER_METRICS.iter().filter_map(|&m| outlier(&f.runs, m, &reference).map(|o| (m, o))).collect();
            for (r, &run) in s.runs.iter().enumerate() {
                let mine: Vec<(String, Metric, Outlier)> = found.iter().filter(|(_, o)| o.run == r).map(|(m, o)| (op.name().to_string(), *m, *o)).collect();
                if mine.len() < MIN_FIGURES {
                    continue;
                }
                match out.iter_mut().find(|d| d.side == si && d.run == run) {
                    Some(d) => d.figures.extend(mine),
                    None => out.push(Disagreement { side: si, run, figures: mine }),
                }
            }
        }
    }
    for d in &mut out {
        d.figures.sort_by(|x, y| y.2.factor.total_cmp(&x.2.factor));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::half_width_text;

    #[test]
    fn half_widths_too_wide_to_mean_anything_are_said_so() {
        // a half-width of ln 1.062 is +6.2% up and -5.8% down
        assert_eq!(half_width_text(1.062f64.ln()), "-5.8%/+6.2%");
        assert_eq!(half_width_text(10.9f64.ln()), "-90.8%/+990.0%");
        assert_eq!(half_width_text(1.7e66), "wider than -91%/+1000%");
        assert_eq!(half_width_text(f64::INFINITY), "wider than -91%/+1000%");
    }
}
