//! Blocks as the unit: an experiment runs its variants in blocks — one run of each per block,
//! in counterbalanced order (a b, b a, …) — so each variant is compared with the baseline by
//! the change *within* each block, `ln(B's figure) − ln(A's)`, which cancels whatever drifts
//! from block to block (the node warming up, compactions, the machine's other load). The
//! change's interval is Student's t on those differences (n − 1 degrees of freedom), or, with
//! a sequential design, the repeated confidence interval of the look (`sequential.rs`), valid
//! whenever the experiment stops.
//!
//! Each comparison also says the smallest change it would detect 80 % of the time at the
//! precision it reached, whether the two are equivalent within a margin (two one-sided tests:
//! the interval inside ± the margin), and how many blocks would detect a stated change. What
//! the windows inside the runs add: nothing to the interval (the differences already carry
//! the noise within runs, and treating windows as independent would understate the spread
//! between runs), only the share of the spread that lies between blocks.

use super::change::{Comparison, Look, Outcome};
use super::distributions::{normal_quantile, t_quantile};
use super::repeated::RunFigure;
use super::sequential::{Schedule, Spending};
use super::{AnalysisOptions, Estimate, Metric};
use std::collections::HashMap;
use std::sync::Mutex;

/// A sequential design: how α is spent, the first look, the most blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequentialDesign {
    pub spending: Spending,
    /// Blocks before the first look (at least 3: two differences say nothing of their spread).
    pub first_look: usize,
    /// The most blocks the budget allows: the information fraction's denominator.
    pub max_blocks: usize,
}

/// How blocks are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockDesign {
    /// `None`: a fixed number of blocks, one look at the end.
    pub sequential: Option<SequentialDesign>,
    /// An equivalence margin (relative), e.g. 0.05.
    pub margin: Option<f64>,
    /// The change (relative) a "would need" estimate is for.
    pub power_effect: f64,
    /// The variants ran at the same time, block after block without a pause: the interval
    /// also carries what correlated neighbours add (`serial.rs`).
    pub simultaneous: bool,
}

impl Default for BlockDesign {
    fn default() -> Self {
        BlockDesign { sequential: None, margin: None, power_effect: super::change::DEFAULT_POWER_EFFECT, simultaneous: false }
    }
}

/// The boundaries of sequential designs, computed once per design and error rate.
#[derive(Debug, Default)]
pub struct Schedules(Mutex<HashMap<(u64, usize, usize, u64), Schedule>>);

impl Schedules {
    fn get(&self, d: &SequentialDesign, alpha: f64) -> Schedule {
        let spending_key = match d.spending {
            Spending::OBrienFleming => 0,
            Spending::Pocock => 1,
            Spending::Hsd(g) => 2 + g.to_bits(),
        };
        let key = (alpha.to_bits(), d.first_look, d.max_blocks, spending_key);
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(key).or_insert_with(|| Schedule::new(d.spending, alpha, d.first_look, d.max_blocks)).clone()
    }
}

/// `ln(b) − ln(a)` of `m` in each block where both runs have the figure, and each block's
/// within-run variance of that difference (NaN where unknown).
pub fn block_differences(blocks: &[(RunFigure, RunFigure)], m: Metric) -> (Vec<f64>, Vec<f64>) {
    let i = m.index();
    blocks
        .iter()
        .filter(|(a, b)| a.points[i] > 0.0 && b.points[i] > 0.0 && a.points[i].is_finite() && b.points[i].is_finite())
        .map(|(a, b)| (b.points[i].ln() - a.points[i].ln(), a.within_var_ln[i] + b.within_var_ln[i]))
        .unzip()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn variance(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64
}

/// The block differences' mean, its standard error and degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    pub blocks: usize,
    pub mean_ln: f64,
    /// The spread of one block's difference (its standard deviation).
    pub sd_ln: f64,
    pub se_ln: f64,
    pub df: f64,
}

impl Paired {
    pub fn of(diffs: &[f64]) -> Option<Paired> {
        let n = diffs.len();
        if n < 2 {
            return None;
        }
        let sd_ln = variance(diffs).sqrt();
        Some(Paired { blocks: n, mean_ln: mean(diffs), sd_ln, se_ln: sd_ln / (n as f64).sqrt(), df: (n - 1) as f64 })
    }
}

/// Blocks that would detect a true change of `effect` (relative) 80 % of the time with one
/// block's spread `sd_ln` and the standard-error multiplier `multiplier`.
pub fn blocks_needed(sd_ln: f64, multiplier: f64, effect: f64) -> Option<usize> {
    let d = (1.0 + effect).ln();
    if !(d > 1e-9 && sd_ln.is_finite() && sd_ln > 0.0 && multiplier.is_finite()) {
        return None;
    }
    let n = ((multiplier + normal_quantile(0.8)) * sd_ln / d).powi(2);
    Some(n.ceil().max(2.0) as usize)
}

/// Compares side B against the baseline A on `metric` over paired blocks (`diffs` and their
/// within-run variances from [`block_differences`]), one of `family` figures judged together
/// (`exploratory`: shown at the stated confidence on its own, not judged).
pub fn compare_blocks(
    diffs: &[f64],
    within: &[f64],
    metric: Metric,
    opts: &AnalysisOptions,
    family: usize,
    design: &BlockDesign,
    schedules: &Schedules,
) -> Comparison {
    let mut c = Comparison::new(metric, opts, family);
    c.power_effect = design.power_effect;
    c.margin = design.margin;
    c.blocks = Some(diffs.len());
    let Some(mut p) = Paired::of(diffs) else { return c };
    if design.simultaneous {
        // neighbours that move together: the spread a block effectively carries
        let widen = super::serial::variance_factor(diffs).sqrt();
        (p.sd_ln, p.se_ln) = (p.sd_ln * widen, p.se_ln * widen);
    }
    c.block_sd_ln = Some(p.sd_ln);
    let multiplier = match &design.sequential {
        Some(seq) => {
            let schedule = schedules.get(seq, 1.0 - c.level());
            let Some(m) = schedule.multiplier(p.blocks, p.df) else {
                // no look yet: an interval before the first look claims nothing
                c.outcome = Outcome::TooShort;
                c.min_windows = seq.first_look;
                return c;
            };
            c.look = Some(Look {
                blocks: p.blocks,
                max_blocks: seq.max_blocks,
                spending: seq.spending,
                nominal: schedule.nominal_level(p.blocks).unwrap_or(f64::NAN),
            });
            m
        }
        None => t_quantile(1.0 - (1.0 - c.level()) / 2.0, p.df),
    };
    let half = multiplier * p.se_ln;
    c.mde = Some(((multiplier + normal_quantile(0.8)) * p.se_ln).exp() - 1.0);
    let change = Estimate { point: p.mean_ln.exp() - 1.0, lo: (p.mean_ln - half).exp() - 1.0, hi: (p.mean_ln + half).exp() - 1.0 };
    c.decide(change, p.blocks);
    if let Outcome::NoDifference { needed } = &mut c.outcome {
        *needed = blocks_needed(p.sd_ln, multiplier, design.power_effect);
    }
    let within: Vec<f64> = within.iter().copied().filter(|v| v.is_finite()).collect();
    let var_d = p.sd_ln * p.sd_ln;
    if !within.is_empty() && var_d > 0.0 {
        c.between_share = Some((1.0 - mean(&within) / var_d).clamp(0.0, 1.0));
    }
    c
}

/// The fewest blocks at whose look a change with one block's spread `sd_ln` has an interval
/// within ± `precision` (relative), under `schedule` (error rate already divided among the
/// judged figures); `None` when even its last look does not get there.
pub fn blocks_for_precision(sd_ln: f64, precision: f64, schedule: &Schedule) -> Option<usize> {
    let target = (1.0 + precision).ln();
    (schedule.first..=schedule.last).find(|&n| schedule.multiplier(n, (n - 1) as f64).is_some_and(|m| m * sd_ln / (n as f64).sqrt() <= target))
}

/// The precision (relative half-width) a change with one block's spread `sd_ln` reaches at
/// the look after `n` blocks.
pub fn precision_at(sd_ln: f64, n: usize, schedule: &Schedule) -> Option<f64> {
    schedule.multiplier(n, (n.max(2) - 1) as f64).map(|m| (m * sd_ln / (n as f64).sqrt()).exp() - 1.0)
}

/// Whether a judged comparison needs no more blocks: it found a difference, found the two
/// equivalent, or its interval is within `precision` (half its width, relative).
pub fn settled(c: &Comparison, precision: f64) -> bool {
    match c.outcome {
        Outcome::Higher | Outcome::Lower | Outcome::Equivalent => true,
        Outcome::NoDifference { .. } => c.half_width().is_some_and(|h| h <= precision),
        Outcome::NotJudged | Outcome::Undefined => true,
        Outcome::TooShort => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(v: f64) -> RunFigure {
        RunFigure { points: [v; 6], within_var_ln: [0.0001; 6] }
    }

    #[test]
    fn blocks_cancel_their_drift() {
        // every block 10% slower than the last, B always 5% above A within it
        let blocks: Vec<(RunFigure, RunFigure)> =
            (0..8).map(|k| (fig(1.1f64.powi(k)), fig(1.05 * 1.1f64.powi(k) * if k % 2 == 0 { 1.01 } else { 0.99 }))).collect();
        let (d, w) = block_differences(&blocks, Metric::P50);
        let c = compare_blocks(&d, &w, Metric::P50, &AnalysisOptions::default(), 1, &BlockDesign::default(), &Schedules::default());
        assert_eq!(c.outcome, Outcome::Higher, "{c:?}");
        let ch = c.change.unwrap();
        assert!((ch.point - 0.05).abs() < 0.002 && ch.lo > 0.03 && ch.hi < 0.07, "{ch:?}");
        assert_eq!(c.blocks, Some(8));
        // the t interval: mean ± t(0.975, 7) · sd / √8
        let p = Paired::of(&d).unwrap();
        let half = 2.364624252 * p.se_ln;
        assert!(((ch.hi + 1.0).ln() - p.mean_ln - half).abs() < 1e-9);
        assert!(c.mde.unwrap() > 0.0 && c.mde.unwrap() < 0.05);
    }

    #[test]
    fn a_sequential_look_is_wider_than_a_fixed_one_and_none_before_the_first() {
        let d = [0.02, -0.01, 0.03, 0.0, 0.01, 0.02, -0.02, 0.01, 0.015, 0.005];
        let w = [f64::NAN; 10];
        let o = AnalysisOptions::default();
        let schedules = Schedules::default();
        let fixed = compare_blocks(&d, &w, Metric::P99, &o, 1, &BlockDesign::default(), &schedules);
        let seq =
            BlockDesign { sequential: Some(SequentialDesign { spending: Spending::OBrienFleming, first_look: 3, max_blocks: 20 }), ..BlockDesign::default() };
        let s = compare_blocks(&d, &w, Metric::P99, &o, 1, &seq, &schedules);
        assert!(s.half_width().unwrap() > fixed.half_width().unwrap());
        let look = s.look.unwrap();
        assert_eq!((look.blocks, look.max_blocks), (10, 20));
        assert!(s.level_words().starts_with("95% repeated CI; look after 10 of at most 20 blocks, O'Brien–Fleming spending"), "{}", s.level_words());
        let early = compare_blocks(&d[..2], &w[..2], Metric::P99, &o, 1, &seq, &schedules);
        assert_eq!(early.outcome, Outcome::TooShort, "the first look is after 3 blocks");
        assert!(early.sentence("a", "b", "read").ends_with("too short: 2 blocks; the first look is after 3"), "{}", early.sentence("a", "b", "read"));
        let seq4 =
            BlockDesign { sequential: Some(SequentialDesign { spending: Spending::OBrienFleming, first_look: 4, max_blocks: 20 }), ..BlockDesign::default() };
        assert_eq!(compare_blocks(&d[..3], &w[..3], Metric::P99, &o, 1, &seq4, &schedules).outcome, Outcome::TooShort);
    }

    #[test]
    fn a_plan_finds_the_blocks_a_precision_needs() {
        let s = Schedule::new(Spending::OBrienFleming, 0.05, 4, 40);
        // a spread of 10% per block: ±5% takes a few dozen blocks, ±1% is out of reach
        let n = blocks_for_precision(0.10, 0.05, &s).unwrap();
        assert!((15..=40).contains(&n), "{n}");
        assert!(precision_at(0.10, n, &s).unwrap() <= 0.05 + 1e-9);
        assert!(precision_at(0.10, n - 1, &s).unwrap() > 0.05);
        assert_eq!(blocks_for_precision(0.10, 0.01, &s), None);
        // a quieter figure settles sooner (the first looks of O'Brien–Fleming spending are wide)
        assert!(blocks_for_precision(0.02, 0.05, &s).unwrap() < n);
    }

    #[test]
    fn settling_needs_a_difference_equivalence_or_the_precision() {
        let o = AnalysisOptions::default();
        let margin = BlockDesign { margin: Some(0.05), ..BlockDesign::default() };
        let d = [0.004, -0.003, 0.002, 0.001, -0.002, 0.003];
        let c = compare_blocks(&d, &[f64::NAN; 6], Metric::P50, &o, 1, &margin, &Schedules::default());
        assert_eq!(c.outcome, Outcome::Equivalent);
        assert!(settled(&c, 0.001));
        let noisy = [0.2, -0.25, 0.1, -0.05];
        let c = compare_blocks(&noisy, &[f64::NAN; 4], Metric::P50, &o, 1, &BlockDesign::default(), &Schedules::default());
        assert!(matches!(c.outcome, Outcome::NoDifference { needed: Some(_) }));
        assert!(!settled(&c, 0.10) && settled(&c, 10.0));
        // sd ≈ 0.2: ((t + 0.84) · 0.2 / ln 1.1)² blocks
        let Outcome::NoDifference { needed: Some(n) } = c.outcome else { unreachable!() };
        assert!(n > 20 && n < 200, "{n}");
    }
}
