//! Before an experiment runs: from a pilot (or an earlier execution of the same experiment
//! saved in the store), how many blocks and minutes each judged figure needs to reach the
//! precision asked for, and which are out of reach within the budget. Each judged figure's
//! spread per block is read from the pilot's blocks (paired, as the experiment will judge
//! them); the blocks it needs are the first look whose repeated confidence interval would be
//! that narrow, under the same spending of the error rate over the budget's blocks — the
//! blocks that fit in the budget once what comes before the first block (loads, settling, the
//! unmeasured round) is spent, as the experiment itself will count them. A spread estimated
//! from a few blocks is itself uncertain (from a pilot's 4 blocks, 3 degrees of freedom, its
//! 95 % range is 0.57 to 3.7 times the estimate, and the blocks it implies 0.32 to 14 times),
//! so each figure also gets the range of blocks its spread's range implies.

use super::{screen, JudgeError, JudgeOptions};
use crate::analysis::paired::{blocks_for_precision, precision_at, spread_range, BlockDesign, SequentialDesign};
use crate::analysis::sequential::{Schedule, Spending};
use crate::analysis::study::{study, Group};
use crate::analysis::Outcome;
use crate::store::{RunId, Store};

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
    /// One block's spread of the change (standard deviation of its logarithm), from the pilot,
    /// the degrees of freedom it is estimated on, and the range the true spread lies in 95 %
    /// of the time.
    pub sd_ln: f64,
    pub df: f64,
    pub sd_range: Option<(f64, f64)>,
    /// The blocks it needs to be within the precision; `None`: not within the budget.
    pub blocks: Option<usize>,
    /// The blocks needed at the low and the high end of the spread's range.
    pub blocks_range: (Option<usize>, Option<usize>),
    /// The precision it reaches by the budget's last block (the half-width of its interval,
    /// in logarithms).
    pub at_budget: Option<f64>,
}

/// The plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub target: Target,
    /// The pilot's blocks, and one block's time in seconds.
    pub pilot_blocks: usize,
    pub block_s: f64,
    /// The time before the first block (loads, settling, the unmeasured round), in seconds.
    pub setup_s: f64,
    /// The most blocks the budget allows after that.
    pub max_blocks: usize,
    pub rows: Vec<PlanRow>,
}

impl Plan {
    /// The blocks the whole experiment needs (its slowest judged figure), when all fit.
    pub fn blocks(&self) -> Option<usize> {
        self.rows.iter().map(|r| r.blocks).collect::<Option<Vec<usize>>>().and_then(|b| b.into_iter().max())
    }
}

/// The blocks of `block_s` seconds that fit in `budget_s` once `setup_s` is spent: the
/// horizon of a sequential experiment, the same count for its plan and for the experiment
/// itself (which measures both times after its first block).
pub fn blocks_within(budget_s: f64, setup_s: f64, block_s: f64) -> usize {
    ((budget_s - setup_s.max(0.0)).max(0.0) / block_s.max(1e-3)).floor() as usize
}

/// Plans from the pilot's `groups` (its measured runs in the store, tagged with their
/// repetitions) and the runs it made before them (`before`: loads and the unmeasured round).
/// One block's time is the span of the measured runs over their blocks; the time before the
/// first block is from the first run of `before` to the first measured run.
pub fn plan(store: &Store, groups: &[Group], before: &[RunId], judging: &JudgeOptions, target: Target) -> Result<Plan, JudgeError> {
    let pilot_blocks = groups.iter().map(|g| g.runs.len()).min().unwrap_or(0);
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for id in groups.iter().flat_map(|g| &g.runs) {
        let r = store.run(*id)?;
        first = first.min(r.started_at_ms);
        last = last.max(r.ended_at_ms.unwrap_or(r.started_at_ms));
    }
    let block_s = if last > first { (last - first) as f64 / 1000.0 / pilot_blocks.max(1) as f64 } else { 1.0 };
    let mut setup_from = first;
    for id in before {
        setup_from = setup_from.min(store.run(*id)?.started_at_ms);
    }
    let setup_s = if first > setup_from && first < i64::MAX { (first - setup_from) as f64 / 1000.0 } else { 0.0 };
    let max_blocks = blocks_within(target.budget_s, setup_s, block_s).max(target.first_look);
    let j = screen(store, groups, judging)?;
    let mut p = judging.plan.clone();
    p.blocks = Some(BlockDesign { sequential: None, ..p.blocks.unwrap_or_default() });
    let s = study(store, &j.groups, p)?;
    let mut rows = Vec::new();
    let judged: Vec<usize> = s.pairs.iter().map(|p| p.judged).collect();
    let family = (0..judged.len()).map(|i| judging.plan.family.size(&judged, i)).max().unwrap_or(1);
    let alpha = (1.0 - judging.plan.opts.confidence) / family as f64;
    let design = SequentialDesign::new(target.spending, target.first_look, max_blocks);
    for (si, per_op) in s.comparisons.iter().enumerate() {
        for (oi, per_m) in per_op.iter().enumerate() {
            for c in per_m.iter().flatten().filter(|c| !c.exploratory && c.outcome != Outcome::NotJudged) {
                let (Some(sd_ln), Some(df)) = (c.block_sd_ln, c.block_df) else { continue };
                // blocks run in both orders: the experiment fits the order effect too
                let schedule = Schedule::of(&design, alpha, c.blocks_ordered);
                let sd_range = spread_range(sd_ln, df);
                let need = |sd: f64| blocks_for_precision(sd, target.precision, &schedule);
                rows.push(PlanRow {
                    figure: format!("{}: {} {}", s.sides[si + 1].label, s.ops[oi].name(), c.metric.label()),
                    sd_ln,
                    df,
                    sd_range,
                    blocks: need(sd_ln),
                    blocks_range: sd_range.map_or((None, None), |(lo, hi)| (need(lo), need(hi))),
                    at_budget: precision_at(sd_ln, max_blocks, &schedule),
                });
            }
        }
    }
    Ok(Plan { target, pilot_blocks, block_s, setup_s, max_blocks, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_horizon_counts_the_blocks_after_the_setup() {
        // gc: a 40-minute budget, 104 s a block; 23 blocks planned without the setup, 21 run
        assert_eq!(blocks_within(2400.0, 0.0, 104.0), 23);
        assert_eq!(blocks_within(2400.0, 220.0, 104.0), 20);
        assert_eq!(blocks_within(100.0, 300.0, 10.0), 0);
    }
}
