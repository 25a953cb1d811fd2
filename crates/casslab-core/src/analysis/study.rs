//! A study: saved runs read from the [`Store`] in named groups (a run, or a variant's
//! repetitions), every figure of every operation estimated per group, and every group compared
//! with the first (the baseline). This is what `casslab compare` and `casslab experiment`
//! print; the text lives in `report::comparison`, the HTML page in `report::experiment_html`,
//! and gates are judged on it by [`super::checks`].
//!
//! It reads the store and does the arithmetic; it prints nothing and knows no command line.

use super::{
    compare as compare_metric, seed_for, AnalysisError, AnalysisOptions, Comparison, Estimate, LatencyKind, Metric, OpRef, Resampled, Sample,
    WindowBuilder, Windows,
};
use crate::store::{RunId, Store, StoreError};

/// How to analyse: the bootstrap's options, which latency, and the servers' cores.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyPlan {
    pub opts: AnalysisOptions,
    pub kind: LatencyKind,
    /// Cores of the servers, for throughput per server core (local nodes: the machine's).
    pub server_cores: Option<f64>,
}

/// A named group of runs: one run (`run 12`), or the repetitions of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub label: String,
    pub runs: Vec<RunId>,
}

/// One operation of one side: its bootstrap distribution and its plain counts.
#[derive(Debug, Clone)]
pub struct Figures {
    pub resampled: Resampled,
    /// Failed operations over the measured phase.
    pub errors: u64,
    /// Highest latency recorded, ns.
    pub max_ns: u64,
}

impl Figures {
    /// The figure with its interval at `confidence`; `None` when undefined.
    pub fn estimate(&self, m: Metric, confidence: f64) -> Option<Estimate> {
        self.resampled.estimate(m, confidence)
    }

    /// The point estimate (NaN when undefined).
    pub fn point(&self, m: Metric) -> f64 {
        self.resampled.point(m)
    }
}

/// One side of the study: a run, or a variant's runs.
#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    /// The runs, in the group's order.
    pub runs: Vec<RunId>,
    /// What the runs were ("kv, completed", or "run 3 (kv, completed), run 5 (…)").
    pub about: String,
    pub windows: Windows,
    pub client_cores: usize,
    pub server_cores: Option<f64>,
    /// One entry per [`Study::ops`]; `None` where the side never did the operation.
    pub figures: Vec<Option<Figures>>,
}

/// Everything compared.
#[derive(Debug, Clone)]
pub struct Study {
    pub plan: StudyPlan,
    pub ops: Vec<OpRef>,
    /// `sides[0]` is the baseline.
    pub sides: Vec<Side>,
    /// `comparisons[s - 1][op][metric]`: side s against the baseline.
    pub comparisons: Vec<Vec<Vec<Option<Comparison>>>>,
}

/// Why a study could not be made.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("reading the saved runs: {0}")]
    Store(#[source] StoreError),
    #[error("run {run}: {source}")]
    Run {
        run: RunId,
        #[source]
        source: AnalysisError,
    },
    #[error("{0}")]
    Analysis(#[source] AnalysisError),
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
    for g in groups {
        sides.push(read_side(store, g, &plan)?);
    }
    let mut ops: Vec<OpRef> = Vec::new();
    for s in &sides {
        for name in &s.windows.ops {
            let op = OpRef::Op(name.clone());
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    if ops.len() > 1 {
        ops.push(OpRef::Total);
    }
    for s in &mut sides {
        for op in &ops {
            let fig = Sample::of(&s.windows, op, plan.kind).map(|sample| {
                let seed = seed_for(plan.opts.seed, &[&s.label, op.name(), plan.kind.as_str()]);
                Figures { resampled: Resampled::run(&sample, plan.opts.resamples, seed), errors: sample.errors, max_ns: sample.max_ns }
            });
            s.figures.push(fig);
        }
    }
    let comparisons = sides[1..]
        .iter()
        .map(|b| {
            (0..ops.len())
                .map(|o| {
                    let pair = sides[0].figures[o].as_ref().zip(b.figures[o].as_ref());
                    Metric::ALL.iter().map(|m| pair.map(|(fa, fb)| compare_metric(&fa.resampled, &fb.resampled, *m, &plan.opts))).collect()
                })
                .collect()
        })
        .collect();
    Ok(Study { plan, ops, sides, comparisons })
}

/// One group's runs, windowed and pooled.
fn read_side(store: &Store, g: &Group, plan: &StudyPlan) -> Result<Side, StudyError> {
    let mut parts = Vec::new();
    let (mut about, mut client_cores, mut local) = (Vec::new(), 0, true);
    for &id in &g.runs {
        let record = store.run(id)?;
        // One interval at a time: decoded, it holds two full histograms until windowed.
        let mut builder = WindowBuilder::new(plan.opts.window_s).map_err(StudyError::Analysis)?;
        store.for_each_interval(id, |iv| {
            builder.push(&iv);
            Ok(())
        })?;
        parts.push(builder.finish().map_err(|source| StudyError::Run { run: id, source })?);
        about.push((id, format!("{}, {}", record.workload, record.status.as_str())));
        client_cores = record.env.client_cores;
        local &= record.config.cluster.local;
    }
    let windows = Windows::pool(parts).map_err(StudyError::Analysis)?;
    let about = match &about[..] {
        [(id, what)] if g.label == format!("run {id}") => what.clone(),
        _ => about.iter().map(|(id, what)| format!("run {id} ({what})")).collect::<Vec<_>>().join(", "),
    };
    // Local nodes share the client's machine: its cores serve both.
    let server_cores = plan.server_cores.or((local && client_cores > 0).then_some(client_cores as f64));
    Ok(Side { label: g.label.clone(), runs: g.runs.clone(), about, windows, client_cores, server_cores, figures: Vec::new() })
}
