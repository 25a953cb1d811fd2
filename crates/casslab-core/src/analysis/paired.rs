//! Blocks as the unit: an experiment runs its variants in blocks — one run of each per block,
//! in counterbalanced order (a b, b a, …) — so each variant is compared with the baseline by
//! the change *within* each block, `ln(B's figure) − ln(A's)`, which cancels whatever drifts
//! from block to block (the node warming up, compactions, the machine's other load). The
//! differences are fitted by `block_fit` (their mean, and from 8 blocks run in both orders an
//! order effect, which leaves the spread and is reported); the change's interval is Student's
//! t on them, or, with a sequential design, the intersection of every look's repeated
//! confidence interval so far (`sequential.rs`), valid whenever the experiment stops — so a
//! change found at one look stays found.
//!
//! Each comparison also says the smallest change it would detect 80 % of the time at the
//! precision it reached, whether the two are equivalent within a margin (two one-sided tests
//! at α each: the interval at 2α inside ± the margin), and how many blocks would detect a stated
//! change (from the look that would see it). What the windows inside the runs add: nothing to
//! the interval (the differences already carry the noise within runs, and treating windows as
//! independent would understate the spread between runs), only the share of the spread that
//! lies between blocks.

use super::block_fit::{Fit, Sums};
use super::change::{Comparison, Look, Outcome};
use super::distributions::{chi_squared_quantile, normal_quantile, t_quantile};
use super::repeated::RunFigure;
use super::sequential::Schedule;
use super::{AnalysisOptions, Estimate, Metric};

pub use super::sequential::SequentialDesign;

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

/// One comparison's blocks, in the order they ran: `ln(b) − ln(a)` of a figure in each block
/// where both runs have it, which side ran second (+1: b; −1: a; empty when unknown), and
/// each block's within-run variance of the difference (NaN where unknown).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Differences {
    pub diffs: Vec<f64>,
    pub orders: Vec<f64>,
    pub within: Vec<f64>,
}

impl Differences {
    /// Differences without their order or within-run variances (a simulation's, or a
    /// caller's own units).
    pub fn of(diffs: &[f64]) -> Differences {
        Differences { diffs: diffs.to_vec(), orders: Vec::new(), within: vec![f64::NAN; diffs.len()] }
    }
}

/// The differences of `m` over `blocks` (A's and B's run figures, and which ran second: +1 for
/// B, −1 for A; `None` when unknown, which makes every order unknown).
pub fn block_differences(blocks: &[(RunFigure, RunFigure, Option<f64>)], m: Metric) -> Differences {
    let i = m.index();
    let mut out = Differences::default();
    let mut ordered = true;
    for (a, b, order) in blocks {
        if a.points[i] > 0.0 && b.points[i] > 0.0 && a.points[i].is_finite() && b.points[i].is_finite() {
            out.diffs.push(b.points[i].ln() - a.points[i].ln());
            out.within.push(a.within_var_ln[i] + b.within_var_ln[i]);
            ordered &= order.is_some();
            out.orders.push(order.unwrap_or(0.0));
        }
    }
    if !ordered {
        out.orders.clear();
    }
    out
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Blocks that would detect a true change of `effect` (relative) 80 % of the time with one
/// block's spread `sd_ln`, the figure's error rate `alpha` and the design: with a sequential
/// one, the first look whose multiplier gets there, and beyond its last look, the blocks a
/// longer design would need at its last boundary (on the normal scale: so many blocks leave
/// Student's t no room); with a fixed one, the blocks whose t interval does.
pub fn blocks_needed(sd_ln: f64, effect: f64, alpha: f64, sequential: Option<&SequentialDesign>, ordered: bool) -> Option<usize> {
    let d = (1.0 + effect).ln();
    if !(d > 1e-9 && sd_ln.is_finite() && sd_ln > 0.0) {
        return None;
    }
    let z80 = normal_quantile(0.8);
    let enough = |n: usize, m: f64| (m + z80) * sd_ln / (n as f64).sqrt() <= d;
    let normal_blocks = |z: f64| ((z + z80) * sd_ln / d).powi(2).ceil() as usize;
    match sequential {
        Some(seq) => {
            let planned = SequentialDesign { final_look: None, ..*seq };
            let s = Schedule::of(&planned, alpha, ordered);
            if let Some(n) = (s.first..=s.last).find(|&n| s.multiplier(n).is_some_and(|m| enough(n, m))) {
                return Some(n);
            }
            Some(normal_blocks(s.z(s.last)?).max(s.last + 1))
        }
        None => {
            let start = normal_blocks(normal_quantile(1.0 - alpha / 2.0)).max(3);
            (start..start.saturating_mul(4).max(start + 100)).find(|&n| enough(n, t_quantile(1.0 - alpha / 2.0, fixed_df(n, ordered))))
        }
    }
}

/// The degrees of freedom of a fixed design's `n` blocks.
fn fixed_df(n: usize, ordered: bool) -> f64 {
    (n - super::block_fit::model_for(n, ordered).params()) as f64
}

/// The repeated interval (or, in a fixed design, the t interval) at every look so far, and
/// their intersection: each look's interval holds with all the others, so their
/// intersection does too, and a change found at an earlier look stays found.
struct Looks {
    /// The intersection, in logarithms (the current look's own interval if the looks
    /// disagree, which the design allows at its error rate).
    lo: f64,
    hi: f64,
    /// The current look's multiplier and its nominal level.
    multiplier: f64,
    nominal: f64,
}

/// How much wider a block's spread is than its neighbours' independence would make it: with
/// variants run at the same time neighbouring blocks' changes can move together (`serial.rs`);
/// 1 otherwise.
fn widening(d: &Differences, design: &BlockDesign) -> f64 {
    if design.simultaneous {
        super::serial::variance_factor(&d.diffs).sqrt()
    } else {
        1.0
    }
}

/// `fit` with its spread and standard error `widen` times wider.
fn widened(fit: Fit, widen: f64) -> Fit {
    Fit { sd_ln: fit.sd_ln * widen, se_ln: fit.se_ln * widen, ..fit }
}

/// The intervals at error rate `alpha` of every look up to `d`'s last block (each fit's
/// spread `widen` times wider).
fn looks(d: &Differences, fit: &Fit, design: &BlockDesign, alpha: f64, widen: f64) -> Looks {
    let Some(seq) = &design.sequential else {
        let m = t_quantile(1.0 - alpha / 2.0, fit.df);
        return Looks { lo: fit.mean_ln - m * fit.se_ln, hi: fit.mean_ln + m * fit.se_ln, multiplier: m, nominal: 1.0 - alpha };
    };
    let n = d.diffs.len();
    // a look that ends the design on the clock spends what is left; the looks before it are
    // the planned ones either way
    let design = if seq.final_look == Some(n) { *seq } else { SequentialDesign { final_look: None, ..*seq } };
    let schedule = Schedule::of(&design, alpha, Sums::of(&d.diffs, &d.orders).ordered());
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut sums = Sums::default();
    let mut current = (f64::NEG_INFINITY, f64::INFINITY);
    for (k, &x) in d.diffs.iter().enumerate() {
        sums.push(x, d.orders.get(k).copied());
        if k + 1 < schedule.first {
            continue;
        }
        let Some(f) = sums.fit().map(|f| widened(f, widen)) else { continue };
        let Some(i) = schedule.interval(&f) else { continue };
        (lo, hi) = (lo.max(i.0), hi.min(i.1));
        current = i;
    }
    if lo > hi {
        (lo, hi) = current;
    }
    Looks { lo, hi, multiplier: schedule.multiplier(n).unwrap_or(f64::INFINITY), nominal: schedule.nominal_level(n).unwrap_or(f64::NAN) }
}

/// Compares side B against the baseline A on `metric` over paired blocks (`d`), one of
/// `family` figures judged together (`exploratory`: shown at the stated confidence on its own,
/// not judged). The change is the fitted `δ` of `block_fit` (with the order effect taken out
/// from `ORDER_FROM` blocks on); with a sequential design, its interval is the intersection of
/// every look's repeated interval so far. Equivalence is judged as two one-sided tests: the
/// interval at twice the error rate (90 % for 95 %) within ± the margin.
pub fn compare_blocks(d: &Differences, metric: Metric, opts: &AnalysisOptions, family: usize, design: &BlockDesign) -> Comparison {
    let mut c = Comparison::new(metric, opts, family);
    c.power_effect = design.power_effect;
    c.margin = design.margin;
    c.blocks = Some(d.diffs.len());
    let sums = Sums::of(&d.diffs, &d.orders);
    let widen = widening(d, design);
    let Some(fit) = sums.fit().map(|f| widened(f, widen)) else {
        // one block measured on both sides: too short for an interval, not incomparable
        if d.diffs.len() == 1 {
            c.outcome = Outcome::TooShort;
            c.min_windows = design.sequential.as_ref().map_or(2, |s| s.first_look.max(2));
        }
        return c;
    };
    c.block_sd_ln = Some(fit.sd_ln);
    c.block_df = Some(fit.df);
    c.blocks_ordered = sums.ordered();
    if let Some(seq) = &design.sequential {
        if fit.n < seq.first_look {
            // no look yet: an interval before the first look claims nothing
            c.outcome = Outcome::TooShort;
            c.min_windows = seq.first_look;
            return c;
        }
    }
    let alpha = 1.0 - c.level();
    let l = looks(d, &fit, design, alpha, widen);
    if let Some(seq) = &design.sequential {
        c.look =
            Some(Look { blocks: fit.n, max_blocks: seq.max_blocks, spending: seq.spending, nominal: l.nominal, spent_the_rest: seq.final_look == Some(fit.n) });
    }
    let rel = |x: f64| x.exp() - 1.0;
    c.mde = Some(rel((l.multiplier + normal_quantile(0.8)) * fit.se_ln));
    if design.margin.is_some() {
        let e = looks(d, &fit, design, (2.0 * alpha).min(0.5), widen);
        c.equivalence = Some(Estimate { point: rel(fit.mean_ln), lo: rel(e.lo), hi: rel(e.hi) });
    }
    if let Some((o, se)) = fit.order_ln {
        let t = t_quantile(1.0 - (1.0 - opts.confidence) / 2.0, fit.df);
        c.order_effect = Some(Estimate { point: rel(o), lo: rel(o - t * se), hi: rel(o + t * se) });
    }
    c.decide(Estimate { point: rel(fit.mean_ln), lo: rel(l.lo), hi: rel(l.hi) }, fit.n);
    if let Outcome::NoDifference { needed } = &mut c.outcome {
        *needed = blocks_needed(fit.sd_ln, design.power_effect, alpha, design.sequential.as_ref(), sums.ordered());
    }
    let within: Vec<f64> = d.within.iter().copied().filter(|v| v.is_finite()).collect();
    let var_d = fit.sd_ln * fit.sd_ln;
    if !within.is_empty() && var_d > 0.0 {
        c.between_share = Some((1.0 - mean(&within) / var_d).clamp(0.0, 1.0));
    }
    c
}

/// The fewest blocks at whose look a change with one block's spread `sd_ln` has an interval
/// within ± `precision` (relative: its upper half within `1 + precision`), under `schedule`
/// (error rate already divided among the judged figures); `None` when even its last look does
/// not get there.
pub fn blocks_for_precision(sd_ln: f64, precision: f64, schedule: &Schedule) -> Option<usize> {
    let target = (1.0 + precision).ln();
    (schedule.first..=schedule.last).find(|&n| schedule.multiplier(n).is_some_and(|m| m * sd_ln / (n as f64).sqrt() <= target))
}

/// The precision (the interval's half-width in logarithms) a change with one block's spread
/// `sd_ln` reaches at the look after `n` blocks.
pub fn precision_at(sd_ln: f64, n: usize, schedule: &Schedule) -> Option<f64> {
    schedule.multiplier(n).map(|m| m * sd_ln / (n as f64).sqrt())
}

/// The range in which one block's true spread lies, 95 % of the time, when estimated as
/// `sd_ln` on `df` degrees of freedom (the chi-squared interval of a variance): with a
/// pilot's 2 degrees of freedom, from 0.52 to 6.3 times the estimate.
pub fn spread_range(sd_ln: f64, df: f64) -> Option<(f64, f64)> {
    if !(df >= 1.0 && sd_ln.is_finite()) {
        return None;
    }
    let (lo, hi) = (chi_squared_quantile(0.975, df), chi_squared_quantile(0.025, df));
    Some((sd_ln * (df / lo).sqrt(), sd_ln * (df / hi).sqrt()))
}

/// Whether a judged comparison needs no more blocks: it found a difference, found the two
/// equivalent, or its interval is within `precision` (its half-width in logarithms within
/// `ln(1 + precision)`: `+precision` upwards, a little less downwards).
pub fn settled(c: &Comparison, precision: f64) -> bool {
    match c.outcome {
        Outcome::Higher | Outcome::Lower | Outcome::Equivalent => true,
        Outcome::NoDifference { .. } => c.half_width_ln().is_some_and(|h| h <= (1.0 + precision).ln() + 1e-12),
        Outcome::NotJudged | Outcome::Undefined => true,
        Outcome::TooShort => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sequential::Spending;
    use crate::analysis::METRICS;

    fn fig(v: f64) -> RunFigure {
        RunFigure { points: [v; METRICS], within_var_ln: [0.0001; METRICS] }
    }

    #[test]
    fn blocks_cancel_their_drift() {
        // every block 10% slower than the last, B always 5% above A within it
        let blocks: Vec<(RunFigure, RunFigure, Option<f64>)> =
            (0..8).map(|k| (fig(1.1f64.powi(k)), fig(1.05 * 1.1f64.powi(k) * if k % 2 == 0 { 1.01 } else { 0.99 }), None)).collect();
        let d = block_differences(&blocks, Metric::P50);
        assert!(d.orders.is_empty() && d.within.len() == 8);
        let c = compare_blocks(&d, Metric::P50, &AnalysisOptions::default(), 1, &BlockDesign::default());
        assert_eq!(c.outcome, Outcome::Higher, "{c:?}");
        let ch = c.change.unwrap();
        assert!((ch.point - 0.05).abs() < 0.002 && ch.lo > 0.03 && ch.hi < 0.07, "{ch:?}");
        assert_eq!(c.blocks, Some(8));
        // the t interval: mean ± t(0.975, 7) · sd / √8
        let fit = Sums::of(&d.diffs, &[]).fit().unwrap();
        let half = 2.364624252 * fit.se_ln;
        assert!(((ch.hi + 1.0).ln() - fit.mean_ln - half).abs() < 1e-9);
        assert!(c.mde.unwrap() > 0.0 && c.mde.unwrap() < 0.05);
        assert_eq!(c.order_effect, None);
    }

    #[test]
    fn one_block_is_too_short_for_an_interval_and_no_block_is_not_comparable() {
        let o = AnalysisOptions::default();
        let one = compare_blocks(&Differences::of(&[0.02]), Metric::P99, &o, 1, &BlockDesign::default());
        assert_eq!(one.outcome, Outcome::TooShort);
        assert!(one.sentence("a", "b", "read").ends_with("too short: 1 block; an interval needs 2 blocks or more"), "{}", one.sentence("a", "b", "read"));
        let seq = BlockDesign { sequential: Some(SequentialDesign::new(Spending::OBrienFleming, 4, 20)), ..BlockDesign::default() };
        let early = compare_blocks(&Differences::of(&[0.02]), Metric::P99, &o, 1, &seq);
        assert!(early.sentence("a", "b", "read").ends_with("too short: 1 block; the first look is after 4"), "{}", early.sentence("a", "b", "read"));
        let none = compare_blocks(&Differences::of(&[]), Metric::P99, &o, 1, &BlockDesign::default());
        assert!(none.sentence("a", "b", "read").contains("not comparable"), "{}", none.sentence("a", "b", "read"));
    }

    #[test]
    fn a_sequential_look_is_wider_than_a_fixed_one_and_none_before_the_first() {
        let d = Differences::of(&[0.02, -0.01, 0.03, 0.0, 0.01, 0.02, -0.02, 0.01, 0.015, 0.005]);
        let o = AnalysisOptions::default();
        let fixed = compare_blocks(&d, Metric::P99, &o, 1, &BlockDesign::default());
        let seq = BlockDesign { sequential: Some(SequentialDesign::new(Spending::OBrienFleming, 3, 20)), ..BlockDesign::default() };
        let s = compare_blocks(&d, Metric::P99, &o, 1, &seq);
        assert!(s.half_width().unwrap() > fixed.half_width().unwrap());
        let look = s.look.unwrap();
        assert_eq!((look.blocks, look.max_blocks, look.spent_the_rest), (10, 20, false));
        assert!(s.level_words().starts_with("95% repeated CI; look after 10 of at most 20 blocks, O'Brien–Fleming spending"), "{}", s.level_words());
        let early = compare_blocks(&Differences::of(&d.diffs[..2]), Metric::P99, &o, 1, &seq);
        assert_eq!(early.outcome, Outcome::TooShort, "the first look is after 3 blocks");
        assert!(early.sentence("a", "b", "read").ends_with("too short: 2 blocks; the first look is after 3"), "{}", early.sentence("a", "b", "read"));
        let seq4 = BlockDesign { sequential: Some(SequentialDesign::new(Spending::OBrienFleming, 4, 20)), ..BlockDesign::default() };
        assert_eq!(compare_blocks(&Differences::of(&d.diffs[..3]), Metric::P99, &o, 1, &seq4).outcome, Outcome::TooShort);
        // a look that the budget made the last one spends what is left: narrower
        let ended = BlockDesign { sequential: Some(SequentialDesign { final_look: Some(10), ..SequentialDesign::new(Spending::OBrienFleming, 3, 20) }), ..seq };
        let e = compare_blocks(&d, Metric::P99, &o, 1, &ended);
        assert!(e.half_width().unwrap() < s.half_width().unwrap() && e.look.unwrap().spent_the_rest);
        assert!(e.level_words().contains("final look after 10 of at most 20 blocks (the budget ended it"), "{}", e.level_words());
    }

    #[test]
    fn a_plan_finds_the_blocks_a_precision_needs() {
        let s = Schedule::new(Spending::OBrienFleming, 0.05, 4, 40);
        // a spread of 10% per block: ±5% takes a few dozen blocks, ±1% is out of reach
        let n = blocks_for_precision(0.10, 0.05, &s).unwrap();
        assert!((15..=40).contains(&n), "{n}");
        assert!(precision_at(0.10, n, &s).unwrap() <= 1.05f64.ln() + 1e-12);
        assert!(precision_at(0.10, n - 1, &s).unwrap() > 1.05f64.ln());
        assert_eq!(blocks_for_precision(0.10, 0.01, &s), None);
        // a quieter figure settles sooner (the first looks of O'Brien–Fleming spending are wide)
        assert!(blocks_for_precision(0.02, 0.05, &s).unwrap() < n);
    }

    #[test]
    fn settling_needs_a_difference_equivalence_or_the_precision() {
        let o = AnalysisOptions::default();
        let margin = BlockDesign { margin: Some(0.05), ..BlockDesign::default() };
        let c = compare_blocks(&Differences::of(&[0.004, -0.003, 0.002, 0.001, -0.002, 0.003]), Metric::P50, &o, 1, &margin);
        assert_eq!(c.outcome, Outcome::Equivalent);
        assert!(settled(&c, 0.001));
        let c = compare_blocks(&Differences::of(&[0.2, -0.25, 0.1, -0.05]), Metric::P50, &o, 1, &BlockDesign::default());
        assert!(matches!(c.outcome, Outcome::NoDifference { needed: Some(_) }));
        assert!(!settled(&c, 0.10) && settled(&c, 10.0));
        // sd ≈ 0.2: about ((t + 0.84) · 0.2 / ln 1.1)² blocks
        let Outcome::NoDifference { needed: Some(n) } = c.outcome else { unreachable!() };
        assert!(n > 20 && n < 200, "{n}");
        // settled at a precision means the interval's upper half within it (in logarithms)
        let h = c.half_width_ln().unwrap();
        assert!(settled(&c, h.exp() - 1.0) && !settled(&c, h.exp() - 1.0 - 1e-6));
    }
}
