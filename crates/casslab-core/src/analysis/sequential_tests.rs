//! Simulated sequential experiments, to show what the repeated confidence intervals of
//! `sequential.rs`, as `paired.rs` uses them, promise and keep: experiments of blocks whose
//! per-block differences are drawn with a known change, stopped the way casslab stops them
//! (after every block from the first look: every judged figure settled — a difference, or an
//! interval narrower than the precision — or the most blocks reached). Under no change
//! (A/A), how often any judged figure claims one (at most α); under a change, how often the
//! interval at the stop covers it (at least 1 − α) and how often it is detected.
//!
//! The noise includes what real blocks have: heavy tails (Student's t with 4 degrees of
//! freedom) and an order effect (the variant run second in its block is a little slower)
//! that counterbalancing turns into an alternating term.

use super::change::Outcome;
use super::paired::{compare_blocks, settled, BlockDesign, Schedules, SequentialDesign};
use super::sequential::Spending;
use super::{AnalysisOptions, Metric};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StudentT};

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
    /// Per judged figure: claimed a difference, the interval covered the truth, settled.
    claimed: [bool; 2],
    covered: [bool; 2],
}

fn one(w: World, design: &BlockDesign, precision: f64, rng: &mut SmallRng, schedules: &Schedules) -> Ended {
    let noise = StudentT::new(4.0).unwrap();
    // a t(4) draw has variance 2
    let scale = w.sd / 2f64.sqrt();
    let o = AnalysisOptions::default();
    let max = design.sequential.map_or(12, |s| s.max_blocks);
    let mut diffs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    loop {
        let k = diffs[0].len();
        // counterbalanced: a b in even blocks, b a in odd ones
        let order = if k.is_multiple_of(2) { w.order } else { -w.order };
        for (f, d) in diffs.iter_mut().enumerate() {
            d.push(w.changes[f] + order + scale * noise.sample(rng));
        }
        let n = k + 1;
        let looked = design.sequential.is_none_or(|s| n >= s.first_look);
        if n < 2 || !looked {
            continue;
        }
        let cs: Vec<_> = (0..2).map(|f| compare_blocks(&diffs[f], &[], Metric::P50, &o, 2, design, schedules)).collect();
        let done = design.sequential.is_some() && cs.iter().all(|c| settled(c, precision));
        if done || n >= max {
            let claimed = [0, 1].map(|f| matches!(cs[f].outcome, Outcome::Higher | Outcome::Lower));
            let covered = [0, 1].map(|f| cs[f].change.is_some_and(|ch| (ch.lo + 1.0).ln() <= w.changes[f] && w.changes[f] <= (ch.hi + 1.0).ln()));
            return Ended { blocks: n, claimed, covered };
        }
    }
}

struct Tally {
    runs: usize,
    /// Experiments in which any figure claimed a difference / every interval covered.
    any_claim: usize,
    all_covered: usize,
    /// Per figure: detections.
    claims: [usize; 2],
    blocks: usize,
}

fn simulate(w: World, design: &BlockDesign, precision: f64, runs: usize, seed: u64) -> Tally {
    let mut rng = SmallRng::seed_from_u64(seed);
    let schedules = Schedules::default();
    let mut t = Tally { runs, any_claim: 0, all_covered: 0, claims: [0, 0], blocks: 0 };
    for _ in 0..runs {
        let e = one(w, design, precision, &mut rng, &schedules);
        t.any_claim += usize::from(e.claimed.iter().any(|c| *c));
        t.all_covered += usize::from(e.covered.iter().all(|c| *c));
        for f in 0..2 {
            t.claims[f] += usize::from(e.claimed[f]);
        }
        t.blocks += e.blocks;
    }
    t
}

fn sequential(spending: Spending) -> BlockDesign {
    BlockDesign { sequential: Some(SequentialDesign { spending, first_look: 4, max_blocks: 40 }), ..BlockDesign::default() }
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

#[test]
fn a_real_change_is_found_and_sooner_when_it_is_large() {
    let design = sequential(Spending::OBrienFleming);
    let small = simulate(World { changes: [0.10, 0.0], sd: 0.10, order: 0.0 }, &design, 0.05, 500, 17);
    let large = simulate(World { changes: [0.40, 0.0], sd: 0.10, order: 0.0 }, &design, 0.05, 500, 19);
    // a 10% change with 10% noise per block: well within 40 blocks
    assert!(small.claims[0] as f64 / small.runs as f64 >= 0.8, "power {}", small.claims[0]);
    assert!(large.claims[0] as f64 / large.runs as f64 >= 0.99);
    assert!(large.blocks < small.blocks, "{} {}", large.blocks, small.blocks);
}
