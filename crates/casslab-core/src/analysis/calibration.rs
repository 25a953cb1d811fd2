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
//! is the quantile of each experiment's largest `|t| / multiplier` that makes as many of them
//! cross at some look as cross the known-variance boundaries on the same draws (a control
//! variate: that share is α in expectation, and the two statistics' crossings go together, so
//! the simulation's luck cancels). λ is never below 1: where the approximation is
//! conservative it stays so.
//!
//! A design that ended on the clock ([`super::sequential::SequentialDesign::final_look`])
//! spends at its final look what the looks before it left: among the simulated experiments
//! that did not cross before it, the final multiplier is the quantile that makes the crossings
//! as many as the known-variance boundaries' (the final one spending the rest) on the same draws. The statistic is scale-free, so neither the spread nor the change matters; the
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

/// The looks of a design as the simulation needs them: per look after `first + k` units, its
/// t multiplier and its boundary `z` (known variance); and, when the design ended on the clock,
/// its final look with that look's boundary spending what is left.
pub struct Looks<'a> {
    pub first: usize,
    pub t: &'a [f64],
    pub z: &'a [f64],
    pub final_look: Option<(usize, f64)>,
}

/// Calibrates `looks` at error rate `alpha` for units fitted as `block_fit::model_for` says
/// (`ordered`: the units carry their order).
///
/// A control variate sharpens the simulation: on the same paths, the known-variance
/// statistic `S_n / √n` against the boundaries `z` crosses with probability exactly `alpha`
/// (what the boundaries are computed for), and its crossings go with the t statistic's. So the
/// factor is chosen for the t statistic to cross on as many of the simulated paths as the
/// known-variance one does, rather than on `alpha` of them: the simulation's luck cancels
/// between the two, and the factor's error is that of their (rare) disagreements.
pub fn calibrate(looks: &Looks, ordered: bool, alpha: f64) -> Calibration {
    let (first, last) = (looks.first, looks.first + looks.t.len() - 1);
    let n_paths = paths(alpha, last);
    let mut rng = SmallRng::seed_from_u64(SEED);
    let final_at = looks.final_look.map(|(f, _)| f);
    // per path: the largest |t| / multiplier over all looks; over the looks before the final
    // one, with the final look's |t|; and whether the known-variance statistic crossed (all
    // looks; the looks to the final one)
    let mut largest = Vec::with_capacity(n_paths);
    let mut at_final: Vec<(f64, f64)> = Vec::new();
    let (mut z_crossed, mut z_crossed_final) = (0usize, 0usize);
    for _ in 0..n_paths {
        let mut sums = Sums::default();
        let (mut worst, mut sum) = (0.0_f64, 0.0_f64);
        let (mut z_any, mut z_final) = (false, false);
        for n in 1..=last {
            let order = if n % 2 == 1 { 1.0 } else { -1.0 };
            let x: f64 = rng.sample(StandardNormal);
            sums.push(x, Some(order));
            sum += x;
            if n < first {
                continue;
            }
            let k = n - first;
            let z = (sum / (n as f64).sqrt()).abs();
            z_any |= z > looks.z[k];
            match looks.final_look {
                Some((f, _)) if n < f => z_final |= z > looks.z[k],
                Some((f, z_rest)) if n == f => z_final |= z > z_rest,
                _ => {}
            }
            let Some(fit) = sums.fit_as(model_for(n, ordered)) else { continue };
            let t = (fit.mean_ln / fit.se_ln).abs();
            if final_at == Some(n) {
                at_final.push((worst, t));
            }
            if looks.t[k].is_finite() {
                worst = worst.max(t / looks.t[k]);
            }
        }
        largest.push(worst);
        z_crossed += usize::from(z_any);
        z_crossed_final += usize::from(z_final);
    }
    let factor = exceeded_by(&mut largest, z_crossed).max(1.0);
    let final_multiplier = final_at.and_then(|_| {
        let crossed = at_final.iter().filter(|(before, _)| *before > factor).count();
        let left = z_crossed_final.checked_sub(crossed).filter(|l| *l >= 1)?;
        let mut t: Vec<f64> = at_final.iter().filter(|(before, _)| *before <= factor).map(|(_, t)| *t).collect();
        (left < t.len()).then(|| exceeded_by(&mut t, left))
    });
    Calibration { factor, final_multiplier }
}

/// The value exceeded by `count` of `values` (halfway between the count-th largest and the
/// next; reorders them).
fn exceeded_by(values: &mut [f64], count: usize) -> f64 {
    let n = values.len();
    let count = count.clamp(1, n - 1);
    values.sort_unstable_by(|a, b| b.total_cmp(a));
    0.5 * (values[count - 1] + values[count])
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
        assert_eq!(exceeded_by(&mut v, 5), 94.5);
    }

    #[test]
    fn looks_that_cannot_cross_leave_the_t_approximation_alone() {
        // a single look of a t statistic at its exact quantile: nothing to correct (the
        // simulation's own noise aside)
        let m = super::super::distributions::t_quantile(0.975, 9.0);
        let c = calibrate(&Looks { first: 10, t: &[m], z: &[1.959964], final_look: None }, false, 0.05);
        assert!((c.factor - 1.0).abs() < 0.01, "{c:?}");
        assert_eq!(c.final_multiplier, None);
    }
}
