//! Before an experiment runs: from a pilot (or an earlier execution of the same experiment
//! saved in the store), how many blocks and minutes each judged figure needs to reach the
//! precision asked for, and which are out of reach within the budget. Each judged figure's
//! spread per block is read from the pilot's blocks (paired, as the experiment will judge
//! them); the blocks it needs are the first look whose repeated confidence interval would be
//! that narrow, under the same spending of the error rate over the budget's blocks.

use super::{screen, JudgeError, JudgeOptions};
use crate::analysis::paired::{blocks_for_precision, precision_at, BlockDesign};
use crate::analysis::sequential::{Schedule, Spending};
use crate::analysis::study::{study, Group};
use crate::analysis::Outcome;
use crate::store::Store;

/// What an experiment asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    pub precision: f64,
    pub budget_s: f64,
    pub spending: Spending,
    pub first_look: usize,
}

/// One judged figure of one variant against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRow {
    /// "b: read p99".
    pub figure: String,
    /// One block's spread of the change (standard deviation of its logarithm), from the pilot.
    pub sd_ln: f64,
    /// The blocks it needs to be within the precision; `None`: not within the budget.
    pub blocks: Option<usize>,
    /// The precision it reaches by the budget's last block.
    pub at_budget: Option<f64>,
}

/// The plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub target: Target,
    /// The pilot's blocks, and one block's time in seconds.
    pub pilot_blocks: usize,
    pub block_s: f64,
    /// The most blocks the budget allows.
    pub max_blocks: usize,
    pub rows: Vec<PlanRow>,
}

impl Plan {
    /// The blocks the whole experiment needs (its slowest judged figure), when all fit.
    pub fn blocks(&self) -> Option<usize> {
        self.rows.iter().map(|r| r.blocks).collect::<Option<Vec<usize>>>().and_then(|b| b.into_iter().max())
    }
}

/// Plans from the pilot's `groups` (its measured runs in the store, tagged with their
/// repetitions); one block's time is the span of those runs over their blocks.
pub fn plan(store: &Store, groups: &[Group], judging: &JudgeOptions, target: Target) -> Result<Plan, JudgeError> {
    let pilot_blocks = groups.iter().map(|g| g.runs.len()).min().unwrap_or(0);
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for id in groups.iter().flat_map(|g| &g.runs) {
        let r = store.run(*id)?;
        first = first.min(r.started_at_ms);
        last = last.max(r.ended_at_ms.unwrap_or(r.started_at_ms));
    }
    let block_s = if last > first { (last - first) as f64 / 1000.0 / pilot_blocks.max(1) as f64 } else { 1.0 };
    let max_blocks = ((target.budget_s / block_s.max(1e-3)).floor() as usize).max(target.first_look);
    let j = screen(store, groups, judging)?;
    let mut p = judging.plan.clone();
    p.blocks = Some(BlockDesign { sequential: None, ..p.blocks.unwrap_or_default() });
    let s = study(store, &j.groups, p)?;
    let mut rows = Vec::new();
    let family = s.pairs.iter().map(|p| p.judged).max().unwrap_or(1).max(1);
    let alpha = (1.0 - judging.plan.opts.confidence) / family as f64;
    let schedule = Schedule::new(target.spending, alpha, target.first_look, max_blocks);
    for (si, per_op) in s.comparisons.iter().enumerate() {
        for (oi, per_m) in per_op.iter().enumerate() {
            for c in per_m.iter().flatten().filter(|c| !c.exploratory && c.outcome != Outcome::NotJudged) {
                let Some(sd_ln) = c.block_sd_ln else { continue };
                rows.push(PlanRow {
                    figure: format!("{}: {} {}", s.sides[si + 1].label, s.ops[oi].name(), c.metric.label()),
                    sd_ln,
                    blocks: blocks_for_precision(sd_ln, target.precision, &schedule),
                    at_budget: precision_at(sd_ln, max_blocks, &schedule),
                });
            }
        }
    }
    Ok(Plan { target, pilot_blocks, block_s, max_blocks, rows })
}
