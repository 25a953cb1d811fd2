//! Simulated sequential experiments, to show what the repeated confidence intervals of
//! `sequential.rs`, as `paired.rs` uses them, promise and keep: experiments of blocks whose
//! per-block differences are drawn with a known change, stopped the way casslab stops them
//! (after every block from the first look: every judged figure settled — a difference, or an
//! interval narrower than the precision — or the most blocks reached). Under no change
//! (A/A), how often any judged figure claims one (at most α); under a change, how often the
//! interval at the stop covers it (at least 1 − α) and how often it is detected.
//!
//! The noise is normal (what the boundaries' calibration assumes; heavier tails claim a little
//! less), with an order effect (the variant run second in its block is a little slower) that
//! counterbalancing turns into an alternating term. The error rate itself is held to
//! 5.0 ± 0.3 points over 100,000 simulated experiments per design (the looks' intervals
//! computed as the comparisons compute them, without the rest of a comparison);
//! `examples/sequential_sim.rs` (`bench/sequential.sh`) runs the same with a million.

use super::block_fit::Sums;
use super::change::Outcome;
use super::paired::{compare_blocks, settled, BlockDesign, Differences, SequentialDesign};
use super::sequential::{repeated_interval, Schedule, Spending};
use super::study::Family;
use super::{AnalysisOptions, Metric};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

/// How a simulated experiment's blocks differ.
#[derive(Clone, Copy)]
struct World {
    /// The true change of each judged figure, in logarithms.
    changes: [f64; 2],
    /// One block's noise (standard deviation of its difference, logarithms).
    sd: f64,
    /// The order effect: the second run of a block is this much slower (logarithms).
    order: f64,
}

/// What one experiment ended with.
struct Ended {
    blocks: usize,
    /// Per judged figure: claimed a difference, the interval covered the truth, and whether
    /// the last look's own interval excluded 0.
    claimed: [bool; 2],
    covered: [bool; 2],
    last_look_found: [bool; 2],
}

fn normal(rng: &mut SmallRng) -> f64 {
    rng.sample(StandardNormal)
}

fn one(w: World, design: &BlockDesign, precision: f64, rng: &mut SmallRng) -> Ended {
    let o = AnalysisOptions::default();
    let max = design.sequential.map_or(12, |s| s.max_blocks);
    let mut d: [Differences; 2] = Default::default();
    loop {
        let k = d[0].diffs.len();
        // counterbalanced: a b in even blocks (b second), b a in odd ones
        let s = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
        for (f, x) in d.iter_mut().enumerate() {
            x.diffs.push(w.changes[f] + s * w.order + w.sd * normal(rng));
            x.orders.push(s);
            x.within.push(f64::NAN);
        }
        let n = k + 1;
        let looked = design.sequential.is_none_or(|s| n >= s.first_look);
        if n < 2 || !looked {
            continue;
        }
        let cs: Vec<_> = (0..2).map(|f| compare_blocks(&d[f], Metric::P50, &o, 2, design)).collect();
        let done = design.sequential.is_some() && cs.iter().all(|c| settled(c, precision));
        if done || n >= max {
            let claimed = [0, 1].map(|f| matches!(cs[f].outcome, Outcome::Higher | Outcome::Lower));
            let covered = [0, 1].map(|f| cs[f].change.is_some_and(|ch| (ch.lo + 1.0).ln() <= w.changes[f] && w.changes[f] <= (ch.hi + 1.0).ln()));
            let last_look_found = [0, 1].map(|f| {
                design.sequential.and_then(|s| repeated_interval(&d[f].diffs, &d[f].orders, &s, 0.025)).is_some_and(|r| r.lo_ln > 0.0 || r.hi_ln < 0.0)
            });
            return Ended { blocks: n, claimed, covered, last_look_found };
        }
    }
}

struct Tally {
    runs: usize,
    /// Experiments in which any figure claimed a difference / every interval covered.
    any_claim: usize,
    all_covered: usize,
    /// Per figure: detections, and detections by the last look alone.
    claims: [usize; 2],
    last_look_claims: [usize; 2],
    blocks: usize,
}

fn simulate(w: World, design: &BlockDesign, precision: f64, runs: usize, seed: u64) -> Tally {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut t = Tally { runs, any_claim: 0, all_covered: 0, claims: [0, 0], last_look_claims: [0, 0], blocks: 0 };
    for _ in 0..runs {
        let e = one(w, design, precision, &mut rng);
        t.any_claim += usize::from(e.claimed.iter().any(|c| *c));
        t.all_covered += usize::from(e.covered.iter().all(|c| *c));
        for f in 0..2 {
            t.claims[f] += usize::from(e.claimed[f]);
            t.last_look_claims[f] += usize::from(e.last_look_found[f]);
        }
        t.blocks += e.blocks;
    }
    t
}

fn sequential(spending: Spending) -> BlockDesign {
    BlockDesign { sequential: Some(SequentialDesign::new(spending, 4, 40)), ..BlockDesign::default() }
}

const RUNS: usize = 2000;
/// Three binomial standard errors of a 5 % rate over [`RUNS`] experiments.
const SLACK: f64 = 3.0 * 0.0049;

#[test]
fn a_a_experiments_stopped_on_their_data_claim_at_most_alpha() {
    for spending in [Spending::OBrienFleming, Spending::Pocock] {
        let w = World { changes: [0.0, 0.0], sd: 0.10, order: 0.03 };
        let t = simulate(w, &sequential(spending), 0.05, RUNS, 7);
        let false_claims = t.any_claim as f64 / t.runs as f64;
        assert!(false_claims <= 0.05 + SLACK, "{spending:?}: {false_claims}");
        // they stop early, on their precision
        assert!((t.blocks as f64 / t.runs as f64) < 40.0, "{spending:?}");
    }
}

#[test]
fn intervals_at_the_stop_cover_the_change_as_promised() {
    for spending in [Spending::OBrienFleming, Spending::Pocock] {
        let w = World { changes: [0.08, -0.03], sd: 0.10, order: 0.02 };
        let t = simulate(w, &sequential(spending), 0.05, RUNS, 11);
        let coverage = t.all_covered as f64 / t.runs as f64;
        assert!(coverage >= 0.95 - SLACK, "{spending:?}: {coverage}");
    }
}

#[test]
fn a_fixed_design_of_paired_blocks_holds_its_level_too() {
    let w = World { changes: [0.0, 0.0], sd: 0.15, order: 0.05 };
    let t = simulate(w, &BlockDesign::default(), 0.05, RUNS, 13);
    assert!((t.any_claim as f64 / t.runs as f64) <= 0.05 + SLACK);
}

/// A real change is found, sooner when large; and judging on every look's interval (their
/// intersection) finds it more often than the last look's alone — the change found at an
/// earlier look is not forgotten while the other figure keeps the experiment going.
#[test]
fn a_real_change_is_found_and_sooner_when_it_is_large() {
    let design = sequential(Spending::OBrienFleming);
    let small = simulate(World { changes: [0.10, 0.0], sd: 0.10, order: 0.0 }, &design, 0.05, 500, 17);
    let large = simulate(World { changes: [0.40, 0.0], sd: 0.10, order: 0.0 }, &design, 0.05, 500, 19);
    // a 10% change with 10% noise per block: well within 40 blocks
    assert!(small.claims[0] as f64 / small.runs as f64 >= 0.8, "power {}", small.claims[0]);
    assert!(large.claims[0] as f64 / large.runs as f64 >= 0.99);
    assert!(large.blocks < small.blocks, "{} {}", large.blocks, small.blocks);
    // a noisier figure, found at some look, then lost by the last one now and then
    let noisy = simulate(World { changes: [0.10, 0.0], sd: 0.22, order: 0.0 }, &design, 0.05, 1000, 23);
    assert!(noisy.claims[0] >= noisy.last_look_claims[0] + 10, "{} against {} by the last look alone", noisy.claims[0], noisy.last_look_claims[0]);
}

/// The error rate of every look of a design together, as the comparisons compute each look's
/// interval (`Sums` and `Schedule::interval`), with normally distributed differences and no
/// change: the share of `runs` experiments in which some look's interval excludes 0.
fn simultaneous_error(design: &SequentialDesign, ordered: bool, runs: usize, seed: u64) -> f64 {
    let schedule = Schedule::of(design, 0.05, ordered);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut missed = 0;
    for _ in 0..runs {
        let mut sums = Sums::default();
        for n in 1..=design.max_blocks {
            let order = ordered.then_some(if n % 2 == 1 { 1.0 } else { -1.0 });
            // an order effect of 3 %: the fit takes it out, and the statistic does not see it
            sums.push(normal(&mut rng) + 0.3 * order.unwrap_or(0.0), order);
            if n < design.first_look {
                continue;
            }
            let fit = sums.fit().expect("a fit from two blocks on");
            let (lo, hi) = schedule.interval(&fit).expect("a look");
            if lo > 0.0 || hi < 0.0 {
                missed += 1;
                break;
            }
        }
    }
    missed as f64 / runs as f64
}

/// Item 2 of the audit: with the t approximation alone, 21 looks from block 4 miss in 5.4 %
/// of experiments with normal differences (5.25 % with 40 looks); calibrated, every design
/// misses in 5.0 ± 0.3 % — resolved by 100,000 experiments each (a standard error of 0.07
/// points, and as much again from the calibration's own simulation).
#[test]
fn calibrated_looks_miss_at_exactly_the_stated_rate() {
    let cases = [
        (SequentialDesign::new(Spending::OBrienFleming, 4, 24), false),
        (SequentialDesign::new(Spending::OBrienFleming, 4, 43), false),
        (SequentialDesign::new(Spending::OBrienFleming, 4, 24), true),
        (SequentialDesign::new(Spending::Pocock, 4, 24), false),
    ];
    for (k, (design, ordered)) in cases.iter().enumerate() {
        let rate = simultaneous_error(design, *ordered, 100_000, 101 + k as u64);
        assert!((0.047..=0.053).contains(&rate), "{design:?} ordered {ordered}: {:.2}%", rate * 100.0);
    }
}

/// Item 1: an A/A experiment of 10 variants (9 comparisons with the baseline, 2 judged figures
/// each), sequential, stopped when every comparison settles. Per comparison, some comparison
/// claims a difference in about a third of them; with the family of the whole experiment
/// (`--family`), in at most 5 %.
#[test]
fn an_experiment_of_ten_variants_holds_its_family_wide_rate() {
    let design = BlockDesign { sequential: Some(SequentialDesign::new(Spending::OBrienFleming, 4, 12)), ..BlockDesign::default() };
    let o = AnalysisOptions::default();
    let (variants, figures, runs) = (10, 2, 800);
    let pairs = variants - 1;
    let judged = vec![figures; pairs];
    let mut rng = SmallRng::seed_from_u64(29);
    let rate = |family: Family, rng: &mut SmallRng| {
        let size = family.size(&judged, 0);
        let mut any = 0;
        for _ in 0..runs {
            // each block: every variant's figure, the baseline's shared by all its comparisons
            let mut d: Vec<Vec<Differences>> = vec![vec![Differences::default(); figures]; pairs];
            loop {
                let base: Vec<f64> = (0..figures).map(|_| 0.07 * normal(rng)).collect();
                for p in d.iter_mut() {
                    for (f, x) in p.iter_mut().enumerate() {
                        x.diffs.push(0.07 * normal(rng) - base[f]);
                    }
                }
                let n = d[0][0].diffs.len();
                if n < 4 {
                    continue;
                }
                let cs: Vec<_> = d.iter().flatten().map(|x| compare_blocks(x, Metric::P50, &o, size, &design)).collect();
                if cs.iter().all(|c| settled(c, 0.05)) || n >= 12 {
                    any += usize::from(cs.iter().any(|c| c.is_significant()));
                    break;
                }
            }
        }
        any as f64 / runs as f64
    };
    let per_comparison = rate(Family::Comparison, &mut rng);
    let family_wide = rate(Family::Experiment, &mut rng);
    assert!(per_comparison > 0.15, "per comparison, some claim: {per_comparison}");
    assert!(family_wide <= 0.05, "family-wide: {family_wide}");
}
