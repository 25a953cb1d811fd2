//! What a comparison of blocks concludes, on differences made to show one point each: a change
//! found at an earlier look stays found (the intersection of the looks' repeated intervals),
//! equivalence is judged at twice the error rate (two one-sided tests), the blocks a stated
//! change needs come from the look that would see it, and an order effect comes out of the
//! spread and is printed.

use super::block_fit::Sums;
use super::paired::{blocks_needed, compare_blocks, BlockDesign, Differences, SequentialDesign};
use super::sequential::{repeated_interval, Schedule, Spending};
use super::{normal_quantile, AnalysisOptions, Metric, Outcome};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

fn design(first: usize, last: usize) -> BlockDesign {
    BlockDesign { sequential: Some(SequentialDesign::new(Spending::OBrienFleming, first, last)), ..BlockDesign::default() }
}

/// Item 5 of the audit: 8 blocks that show b 10 % slower, then 8 noisy ones. The last look's
/// own interval includes 0; every look's holds with the others, so their intersection — and
/// the change found at look 8 — still stands.
#[test]
fn a_change_found_at_an_earlier_look_stays_found() {
    let mut diffs: Vec<f64> = (0..8).map(|k| 0.10 + if k % 2 == 0 { 0.01 } else { -0.01 }).collect();
    diffs.extend((0..8).map(|k| 0.08 + if k % 2 == 0 { 0.3 } else { -0.3 }));
    let d = Differences::of(&diffs);
    let design = design(4, 20);
    let seq = design.sequential.unwrap();
    let at_8 = repeated_interval(&diffs[..8], &[], &seq, 0.05).unwrap();
    let at_16 = repeated_interval(&diffs, &[], &seq, 0.05).unwrap();
    assert!(at_8.lo_ln > 0.0, "found at look 8: {at_8:?}");
    assert!(at_16.lo_ln < 0.0 && at_16.hi_ln > 0.0, "the last look alone sees nothing: {at_16:?}");
    let c = compare_blocks(&d, Metric::P50, &AnalysisOptions::default(), 1, &design);
    assert_eq!(c.outcome, Outcome::Higher, "{c:?}");
    let ch = c.change.unwrap();
    assert!((ch.lo + 1.0).ln() >= at_8.lo_ln - 1e-12 && (ch.hi + 1.0).ln() <= at_16.hi_ln + 1e-12, "{ch:?}");
    assert!(ch.lo <= ch.point && ch.point <= ch.hi, "the estimate lies inside here: {ch:?}");
}

/// Item 6: two one-sided tests at 5 % each need the 90 % interval within the margin, not the
/// 95 % one. Ten blocks spreading ±7.6 % around no change: the 95 % interval reaches ±5.4 %,
/// the 90 % one ±4.4 %, so the two are equivalent within ±5 %.
#[test]
fn equivalence_is_two_one_sided_tests_at_twice_the_error_rate() {
    let d = Differences::of(&[0.072, -0.072, 0.072, -0.072, 0.072, -0.072, 0.072, -0.072, 0.072, -0.072]);
    let o = AnalysisOptions::default();
    let margin = BlockDesign { margin: Some(0.05), ..BlockDesign::default() };
    let c = compare_blocks(&d, Metric::P50, &o, 1, &margin);
    let (ch, eq) = (c.change.unwrap(), c.equivalence.unwrap());
    assert!(ch.hi > 0.05 && ch.lo < -0.05, "the 95% interval is wider than the margin: {ch:?}");
    assert!(eq.hi < 0.05 && eq.lo > -0.05, "the 90% one is inside: {eq:?}");
    assert_eq!(c.outcome, Outcome::Equivalent);
    let text = c.sentence("a", "b", "read");
    assert!(text.starts_with("b vs a, read p50: equivalent within ±5% (+0%, 90% CI -4.3%, +4.5%; two one-sided tests, each at 95%)"), "{text}");
    // the same in a sequential design: its repeated interval at twice the error rate
    let seq = BlockDesign { margin: Some(0.05), ..design(4, 20) };
    let s = compare_blocks(&d, Metric::P50, &o, 1, &seq);
    let (sch, seq_eq) = (s.change.unwrap(), s.equivalence.unwrap());
    assert!(seq_eq.hi < sch.hi && seq_eq.lo > sch.lo, "{s:?}");
    // judged with three other figures: each one-sided test at 1.25%, so 97.5% intervals
    let four = compare_blocks(&d, Metric::P50, &o, 4, &margin);
    assert!(four.equivalence.unwrap().hi > eq.hi);
}

/// Item 7: the blocks that would see a 10 % change come from the look that would see it (its
/// own boundary), and beyond the design's last look from the last boundary on the normal
/// scale — not from the current look's wider t multiplier.
#[test]
fn the_blocks_a_change_needs_come_from_the_look_that_sees_it() {
    let d = (1.1f64).ln();
    let z80 = normal_quantile(0.8);
    let seq = SequentialDesign::new(Spending::OBrienFleming, 4, 40);
    let s = Schedule::of(&seq, 0.025, false);
    // within the horizon: the first look whose interval is narrow enough
    let n = blocks_needed(0.10, 0.10, 0.025, Some(&seq), false).unwrap();
    assert!((s.multiplier(n).unwrap() + z80) * 0.10 / (n as f64).sqrt() <= d);
    assert!((s.multiplier(n - 1).unwrap() + z80) * 0.10 / ((n - 1) as f64).sqrt() > d, "{n}");
    // beyond it: the last boundary, normal
    let far = blocks_needed(0.20, 0.10, 0.025, Some(&seq), false).unwrap();
    let want = ((s.z(40).unwrap() + z80) * 0.20 / d).powi(2).ceil() as usize;
    assert_eq!(far, want.max(41));
    // what the multiplier of the look after 10 blocks said before: far more
    let old = ((s.multiplier(10).unwrap() + z80) * 0.20 / d).powi(2).ceil() as usize;
    assert!((far as f64) < 0.6 * old as f64, "{far} against {old}");
    // a fixed design: the t interval of n blocks
    let fixed = blocks_needed(0.10, 0.10, 0.05, None, false).unwrap();
    let t = |n: usize| super::t_quantile(0.975, (n - 1) as f64);
    assert!((t(fixed) + z80) * 0.10 / (fixed as f64).sqrt() <= d && (t(fixed - 1) + z80) * 0.10 / ((fixed - 1) as f64).sqrt() > d);
}

/// Item 8: counterbalanced blocks where whoever runs second is 5 % slower, in a spread of 13 %
/// per block: the order effect is 13 % of the variance. Fitted, it comes out of the spread (the
/// interval narrows) and is printed — it is a finding of its own.
#[test]
fn an_order_effect_is_taken_out_of_the_spread_and_printed() {
    let mut rng = SmallRng::seed_from_u64(8);
    let n = 200;
    let orders: Vec<f64> = (0..n).map(|k| if k % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let diffs: Vec<f64> = orders.iter().map(|s| 0.02 + 0.05 * s + 0.129 * rng.sample::<f64, _>(StandardNormal)).collect();
    let with = Differences { diffs: diffs.clone(), orders: orders.clone(), within: vec![f64::NAN; n] };
    let without = Differences::of(&diffs);
    let (fo, fm) = (Sums::of(&diffs, &orders).fit().unwrap(), Sums::of(&diffs, &[]).fit().unwrap());
    let share = 1.0 - fo.sd_ln.powi(2) / fm.sd_ln.powi(2);
    assert!((0.07..0.20).contains(&share), "the order effect's share of the variance: {share}");
    let o = AnalysisOptions::default();
    let (c, plain) = (compare_blocks(&with, Metric::P50, &o, 1, &design(4, 300)), compare_blocks(&without, Metric::P50, &o, 1, &design(4, 300)));
    assert!(c.half_width_ln().unwrap() < plain.half_width_ln().unwrap(), "{c:?}");
    let oe = c.order_effect.unwrap();
    assert!(oe.lo > 0.0 && oe.lo < 0.0513 && oe.hi > 0.0513, "running second costs 5.1%: {oe:?}");
    assert!(c.blocks_ordered && plain.order_effect.is_none());
    let text = c.sentence("a", "b", "read");
    assert!(text.contains("; running second: +"), "{text}");
}
