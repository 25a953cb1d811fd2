//! What an experiment to make is: its file, the base config of its runs, how to order them and
//! whether to run until its judged figures are settled ([`ExperimentSetup`],
//! [`SequentialPlan`] and their defaults), a run of one variant ([`variant_spec`]), and why an
//! experiment stops before its verdicts. Shared by the block design (`conduct.rs`, `maker.rs`)
//! and the variants measured at the same time (`together.rs`).

use super::{RunSpec, SessionError};
use crate::analysis::paired::SequentialDesign;
use crate::analysis::sequential::Spending;
use crate::config::{LoadMode, RunConfig};
use crate::experiment::{Design, Experiment, RunOrder, Variant};
use crate::judge::JudgeOptions;

/// A variant whose run could not be made: `variant NAME: ` and the session's error (shown
/// here, so not a source of its own: `{:#}` prints it once).
#[derive(Debug, thiserror::Error)]
#[error("variant {variant}: {error}")]
pub struct VariantError {
    pub variant: String,
    pub error: SessionError,
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

pub use crate::judge::plan::SequentialPlan;

impl ExperimentSetup<'_> {
    /// The warning when some variants declare no load point ([`undeclared_load_point`]).
    pub fn load_point_warning(&self) -> Option<String> {
        undeclared_load_point(self.exp, &self.base, self.concurrency_declared)
    }

    /// Whether the variants run at the same time: asked for, and possible (else the experiment
    /// says why, and runs them one after the other).
    pub fn together(&self) -> bool {
        self.design == Design::Simultaneous && crate::experiment::design::why_not_simultaneous(self.exp, false).is_none()
    }

    /// "3 repetitions", or "blocks until each judged change is within ±5% or found (budget 20 min)".
    pub fn design_words(&self) -> String {
        match &self.sequential {
            None => format!("{} repetitions", self.repetitions),
            Some(p) => format!(
                "blocks until each judged change is within ±{}% or found (budget {})",
                p.precision * 100.0,
                crate::analysis::approx_duration(p.budget_s)
            ),
        }
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
