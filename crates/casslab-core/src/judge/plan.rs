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
use crate::analysis::sequential::Schedule;
use crate::analysis::study::{study, Group};
use crate::analysis::{Metric, Outcome};
use crate::store::{RunId, Store};

pub use crate::analysis::sequential::SequentialPlan;

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
    pub target: SequentialPlan,
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
pub fn plan(store: &Store, groups: &[Group], before: &[RunId], judging: &JudgeOptions, target: SequentialPlan) -> Result<Plan, JudgeError> {
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

/// The spread per block a plan assumes when there is no history to read it from: one block's
/// change of a judged figure between identical variants (the standard deviation of its
/// logarithm), as measured with a local node on an idle 2-core machine (`bench/power.sh`,
/// `bench/aa.sh` and the shipped experiments; bench/README.md). Variants measured at the same
/// time share what the machine does, which takes most of it out of the medians and means, and
/// little out of the tails, whose spread is the stall episodes each block happens to catch.
pub fn prior_sd_ln(metric: Metric, simultaneous: bool) -> f64 {
    match (metric, simultaneous) {
        (Metric::OpsPerS, _) => 0.02,
        (Metric::Mean, false) => 0.20,
        (Metric::Mean, true) => 0.02,
        (Metric::P50, false) => 0.08,
        (Metric::P50, true) => 0.015,
        (Metric::P95, false) => 0.15,
        (Metric::P95, true) => 0.05,
        (Metric::P99 | Metric::P99Typical, false) => 0.37,
        (Metric::P99 | Metric::P99Typical, true) => 0.30,
        (Metric::P999, false) => 0.50,
        (Metric::P999, true) => 0.40,
    }
}

/// How far an assumed spread may be from the experiment's own: within this factor either way.
pub const PRIOR_FACTOR: f64 = 3.0;

/// What a plan with no history knows of one block: its time and the time before the first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorBlocks {
    /// One block's time, in seconds (each variant's warm-up, measured time and start, one after
    /// the other or at the same time).
    pub block_s: f64,
    /// The time before the first block (an unmeasured round; loads are not counted).
    pub setup_s: f64,
    pub simultaneous: bool,
}

/// A plan from assumed spreads ([`prior_sd_ln`]) for `figures` (each variant's judged figure
/// against the baseline: its label and metric), when there is no execution to read them from:
/// nothing runs and nothing connects. Each figure's range is the blocks it would need were its
/// spread [`PRIOR_FACTOR`] times smaller or larger. `family`: the comparisons the error rate is
/// divided over.
pub fn plan_from_prior(figures: &[(String, Metric)], blocks: PriorBlocks, family: usize, confidence: f64, target: SequentialPlan) -> Plan {
    let max_blocks = blocks_within(target.budget_s, blocks.setup_s, blocks.block_s).max(target.first_look);
    let alpha = (1.0 - confidence) / family.max(1) as f64;
    let design = SequentialDesign::new(target.spending, target.first_look, max_blocks);
    // in blocks, the variants take turns at going first, and the experiment fits that order
    let schedule = Schedule::of(&design, alpha, !blocks.simultaneous);
    let need = |sd: f64| blocks_for_precision(sd, target.precision, &schedule);
    let rows = figures
        .iter()
        .map(|(figure, metric)| {
            let sd_ln = prior_sd_ln(*metric, blocks.simultaneous);
            let (lo, hi) = (sd_ln / PRIOR_FACTOR, sd_ln * PRIOR_FACTOR);
            PlanRow {
                figure: figure.clone(),
                sd_ln,
                df: f64::INFINITY,
                sd_range: Some((lo, hi)),
                blocks: need(sd_ln),
                blocks_range: (need(lo), need(hi)),
                at_budget: precision_at(sd_ln, max_blocks, &schedule),
            }
        })
        .collect();
    Plan { target, pilot_blocks: 0, block_s: blocks.block_s, setup_s: blocks.setup_s, max_blocks, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sequential::Spending;

    #[test]
    fn a_plan_with_no_history_assumes_spreads_and_says_how_far_they_may_be_off() {
        let target = SequentialPlan { precision: 0.10, budget_s: 1200.0, spending: Spending::OBrienFleming, first_look: 4 };
        let figures = [("b: read p50".to_string(), Metric::P50), ("b: read p99".to_string(), Metric::P99)];
        let at_once = plan_from_prior(&figures, PriorBlocks { block_s: 15.0, setup_s: 30.0, simultaneous: true }, 2, 0.95, target);
        assert_eq!(at_once.max_blocks, 78, "(1200 - 30) / 15 blocks");
        assert_eq!((at_once.pilot_blocks, at_once.rows.len()), (0, 2));
        let (p50, p99) = (&at_once.rows[0], &at_once.rows[1]);
        assert!(p50.blocks.unwrap() < at_once.max_blocks / 4, "a median measured at the same time settles early in the budget: {p50:?}");
        assert!(p99.blocks.is_none_or(|b| b > p50.blocks.unwrap()), "the tail needs more: {p99:?}");
        let (lo, hi) = p99.sd_range.unwrap();
        assert!((hi / lo - PRIOR_FACTOR * PRIOR_FACTOR).abs() < 1e-9);
        assert!(p99.blocks_range.0.unwrap() <= p99.blocks.unwrap_or(usize::MAX), "a smaller spread needs fewer blocks");
        // in turn, the machine's drift between runs stays in the medians
        let in_turn = plan_from_prior(&figures, PriorBlocks { block_s: 30.0, setup_s: 30.0, simultaneous: false }, 2, 0.95, target);
        assert!(in_turn.rows[0].blocks.is_none_or(|b| b > p50.blocks.unwrap()), "{:?}", in_turn.rows[0]);
    }

    #[test]
    fn the_horizon_counts_the_blocks_after_the_setup() {
        // gc: a 40-minute budget, 104 s a block; 23 blocks planned without the setup, 21 run
        assert_eq!(blocks_within(2400.0, 0.0, 104.0), 23);
        assert_eq!(blocks_within(2400.0, 220.0, 104.0), 20);
        assert_eq!(blocks_within(100.0, 300.0, 10.0), 0);
    }
}
