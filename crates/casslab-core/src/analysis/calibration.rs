//! Calibrating a sequential design's multipliers for a variance estimated from its units.
//!
//! The boundaries of `sequential.rs` hold for a known variance. With the variance estimated
//! from n units, each look uses Student's t quantile at its boundary's nominal level — the
//! usual t approximation — and that lets slightly too much through: with normally distributed
//! block differences, 21 looks from block 4 miss in 5.4 % of experiments at a nominal 5 %
//! (5.25 % with 40 looks), because the looks' t statistics are not as correlated as their
//! known-variance counterparts. So every look's multiplier is scaled by one factor λ, found by
//! simulation: `PATHS` experiments of independent standard normal units are drawn (a fixed
//! seed: the same design always gets the same factor), each is fitted at every look as the
//! real one will be (`block_fit`, the order alternating as counterbalanced blocks do), and λ
//! is the (1 − α) quantile of each experiment's largest `|t| / multiplier` — so that in the
//! simulation exactly α of the experiments cross at some look. λ is never below 1: where the
//! approximation is conservative it stays so.
//!
//! A design that ended on the clock ([`super::sequential::SequentialDesign::final_look`])
//! spends at its final look what the looks before it left: among the simulated experiments
//! that did not cross before it, the final multiplier is the quantile that makes the crossings
//! α in all. The statistic is scale-free, so neither the spread nor the change matters; the
//! units' normality does (heavier tails cross a little less often).

use super::block_fit::{model_for, Sums};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

/// What the simulation found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// The factor of every look's multiplier (≥ 1).
    pub factor: f64,
    /// The final look's own multiplier, when the design ended on the clock and the
    /// simulation could place it.
    pub final_multiplier: Option<f64>,
}

/// The seed of every calibration.
const SEED: u64 = 0x5e9_ca11_b4a7;
/// Expected crossings the simulation aims at (paths ≈ this / α) …
const CROSSINGS: f64 = 5000.0;
/// … within these bounds on the paths and on the units drawn in all.
const MIN_PATHS: usize = 20_000;
const MAX_PATHS: usize = 200_000;
const MAX_DRAWS: usize = 4_000_000;

/// The simulated experiments for `looks` looks at error rate `alpha`.
pub fn paths(alpha: f64, last: usize) -> usize {
    let wanted = (CROSSINGS / alpha.max(1e-9)).ceil() as usize;
    wanted.min(MAX_PATHS).min(MAX_DRAWS / last.max(1)).max(MIN_PATHS)
}

/// Calibrates `base` — the t multipliers of the looks after `first`, `first + 1`, … units —
/// at error rate `alpha` for units fitted as `block_fit::model_for` says (`ordered`: the
/// units carry their order); `final_look`: the look that spends what is left.
pub fn calibrate(base: &[f64], first: usize, final_look: Option<usize>, ordered: bool, alpha: f64) -> Calibration {
    let last = first + base.len() - 1;
    let n_paths = paths(alpha, last);
    let mut rng = SmallRng::seed_from_u64(SEED);
    // per path: the largest |t| / multiplier over all looks, and over the looks before the
    // final one with the final look's |t|
    let mut largest = Vec::with_capacity(n_paths);
    let mut at_final: Vec<(f64, f64)> = Vec::new();
    for _ in 0..n_paths {
        let mut sums = Sums::default();
        let mut worst = 0.0_f64;
        for n in 1..=last {
            let order = if n % 2 == 1 { 1.0 } else { -1.0 };
            sums.push(rng.sample::<f64, _>(StandardNormal), Some(order));
            if n < first {
                continue;
            }
            let Some(fit) = sums.fit_as(model_for(n, ordered)) else { continue };
            let t = (fit.mean_ln / fit.se_ln).abs();
            if final_look == Some(n) {
                at_final.push((worst, t));
            }
            let m = base[n - first];
            if m.is_finite() {
                worst = worst.max(t / m);
            }
        }
        largest.push(worst);
    }
    let factor = upper_quantile(&mut largest, alpha).max(1.0);
    let final_multiplier = final_look.and_then(|_| {
        let crossed = at_final.iter().filter(|(before, _)| *before > factor).count();
        let left = (alpha * n_paths as f64).round() as usize;
        let left = left.checked_sub(crossed).filter(|l| *l >= 1)?;
        let mut t: Vec<f64> = at_final.iter().filter(|(before, _)| *before <= factor).map(|(_, t)| *t).collect();
        (left < t.len()).then(|| {
            t.sort_unstable_by(|a, b| b.total_cmp(a));
            // `left` paths beyond it: halfway between the left-th and the next
            0.5 * (t[left - 1] + t[left])
        })
    });
    Calibration { factor, final_multiplier }
}

/// The value exceeded by a share `alpha` of `values` (reorders them).
fn upper_quantile(values: &mut [f64], alpha: f64) -> f64 {
    let k = (((1.0 - alpha) * values.len() as f64).floor() as usize).min(values.len() - 1);
    *values.select_nth_unstable_by(k, f64::total_cmp).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulation_is_sized_by_the_error_rate_and_the_looks() {
        assert_eq!(paths(0.05, 24), 100_000);
        assert_eq!(paths(0.025, 40), 100_000);
        assert_eq!(paths(0.01, 500), MIN_PATHS);
        let mut v: Vec<f64> = (0..100).map(f64::from).collect();
        assert_eq!(upper_quantile(&mut v, 0.05), 95.0);
    }

    #[test]
    fn looks_that_cannot_cross_leave_the_t_approximation_alone() {
        // a single look of a t statistic at its exact quantile: nothing to correct (the
        // simulation's own noise aside)
        let m = super::super::distributions::t_quantile(0.975, 9.0);
        let c = calibrate(&[m], 10, None, false, 0.05);
        assert!((c.factor - 1.0).abs() < 0.01, "{c:?}");
        assert_eq!(c.final_multiplier, None);
    }
}
