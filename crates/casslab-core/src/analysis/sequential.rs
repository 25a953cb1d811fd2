//! Looking at an experiment after every block and stopping when it knows enough, without
//! claiming more than it should. Each look's interval is a *repeated confidence interval*
//! (Jennison & Turnbull, 1989): the boundaries of a two-sided group-sequential test whose
//! error rate α is spent over the looks by a Lan–DeMets spending function, so that the
//! intervals of all looks hold together with probability 1 − α — whatever rule decides when to
//! stop (a precision reached, zero excluded, the budget spent, the user's Ctrl-C).
//!
//! The boundaries are computed as Armitage, McPherson & Rowe (1969) did: the z-statistic of
//! the k-th look is a Brownian motion `S(t)` at information fraction `t_k` divided by √t_k;
//! the density of `S` on the paths that have not crossed yet is carried from look to look on
//! a grid (Simpson's rule), and each look's boundary `c_k` is found by bisection so that the
//! probability of crossing first there is what the spending function spends between
//! `t_{k−1}` and `t_k`. With the variance estimated from the data, a look with `df` degrees of
//! freedom uses Student's t quantile at the boundary's nominal level (the usual
//! t-approximation); the simulation tests check what that gives.
//!
//! Information fraction: blocks so far over the most blocks the budget allows. Looks that are
//! skipped cost nothing (their α is spent at the next look); a run that ends before the last
//! planned block leaves some α unspent (conservative).

use super::distributions::{normal_cdf, normal_pdf, normal_quantile, t_quantile};

/// How the error rate is spent over the information fraction `t ∈ (0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spending {
    /// Lan–DeMets' approximation of O'Brien–Fleming, each side spending its half of α:
    /// `2 · (2 − 2Φ(z_{1−α/4} / √t))` (as R's `ldbounds` and `gsDesign` do for a symmetric
    /// two-sided design); spends almost nothing early, nearly the fixed-sample level at the end.
    OBrienFleming,
    /// Lan–DeMets' approximation of Pocock: `α ln(1 + (e − 1) t)`; about the same boundary
    /// at every look.
    Pocock,
    /// Hwang, Shih & DeCani (1990): `α (1 − e^{−γt}) / (1 − e^{−γ})`; γ = −4 is close to
    /// O'Brien–Fleming, γ = 1 to Pocock.
    Hsd(f64),
}

impl Spending {
    /// The error rate spent by information fraction `t`.
    pub fn spent(self, alpha: f64, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        if t <= 0.0 {
            return 0.0;
        }
        match self {
            Spending::OBrienFleming => 2.0 * (2.0 - 2.0 * normal_cdf(normal_quantile(1.0 - alpha / 4.0) / t.sqrt())),
            Spending::Pocock => alpha * (1.0 + (std::f64::consts::E - 1.0) * t).ln(),
            Spending::Hsd(g) if g.abs() < 1e-9 => alpha * t,
            Spending::Hsd(g) => alpha * (1.0 - (-g * t).exp()) / (1.0 - (-g).exp()),
        }
    }

    /// Its key in a run's tags: `obrien-fleming`, `pocock`, `hsd:-2`.
    pub fn key(self) -> String {
        match self {
            Spending::OBrienFleming => "obrien-fleming".into(),
            Spending::Pocock => "pocock".into(),
            Spending::Hsd(g) => format!("hsd:{g}"),
        }
    }

    /// The spending a tag names ([`Spending::key`]).
    pub fn from_key(key: &str) -> Option<Spending> {
        match key {
            "obrien-fleming" => Some(Spending::OBrienFleming),
            "pocock" => Some(Spending::Pocock),
            k => k.strip_prefix("hsd:").and_then(|g| g.parse::<f64>().ok()).map(Spending::Hsd),
        }
    }

    /// Its name in the output.
    pub fn name(self) -> String {
        match self {
            Spending::OBrienFleming => "O'Brien–Fleming".into(),
            Spending::Pocock => "Pocock".into(),
            Spending::Hsd(g) => format!("Hwang–Shih–DeCani γ = {g}"),
        }
    }
}

/// Points of the grid that carries the density from look to look.
const GRID: usize = 400;
/// The density is carried only this many standard deviations out: beyond, it is nothing.
const REACH_SD: f64 = 9.0;

/// The density of the not-yet-crossed paths at one look, on a grid of `S` values.
struct Density {
    s: Vec<f64>,
    /// Density times Simpson's weight times the spacing: a sum over it integrates.
    mass: Vec<f64>,
    t: f64,
}

impl Density {
    /// The density of `S(t)` on `(-b, b)` given the previous look's (none: `S(0) = 0`).
    fn carried(prev: Option<&Density>, t: f64, b: f64) -> Density {
        let half = b.min(REACH_SD * t.sqrt());
        let h = 2.0 * half / GRID as f64;
        let s: Vec<f64> = (0..=GRID).map(|i| -half + i as f64 * h).collect();
        let mass = s
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let w = if i == 0 || i == GRID {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                let density = match prev {
                    None => normal_pdf(x / t.sqrt()) / t.sqrt(),
                    Some(p) => {
                        let sd = (t - p.t).sqrt();
                        p.s.iter().zip(&p.mass).map(|(&u, &m)| m * normal_pdf((x - u) / sd) / sd).sum()
                    }
                };
                density * w * h / 3.0
            })
            .collect();
        Density { s, mass, t }
    }

    /// The probability that a path still inside at this look is beyond `±b` at `t`.
    fn crossing(&self, t: f64, b: f64) -> f64 {
        let sd = (t - self.t).sqrt();
        self.s.iter().zip(&self.mass).map(|(&u, &m)| m * (normal_cdf((-b - u) / sd) + normal_cdf((u - b) / sd))).sum()
    }
}

/// The probability of crossing `±c` (z scale) at the look at `t` for the first time.
fn first_crossing(prev: Option<&Density>, t: f64, c: f64) -> f64 {
    match prev {
        None => 2.0 * normal_cdf(-c),
        Some(p) => p.crossing(t, c * t.sqrt()),
    }
}

/// Two-sided boundaries (z scale) of looks at information fractions `fractions` (increasing,
/// in (0, 1]), spending `alpha` with `spending`. A look that is to spend nothing gets an
/// infinite boundary.
pub fn boundaries(spending: Spending, alpha: f64, fractions: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(fractions.len());
    let mut prev: Option<Density> = None;
    let mut spent_before = 0.0;
    for &t in fractions {
        let spend = spending.spent(alpha, t) - spent_before;
        let c = if spend <= 1e-15 {
            f64::INFINITY
        } else {
            // the crossing probability falls as c grows
            let (mut lo, mut hi) = (0.0_f64, 40.0_f64);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if first_crossing(prev.as_ref(), t, mid) > spend {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            0.5 * (lo + hi)
        };
        spent_before += if c.is_finite() { first_crossing(prev.as_ref(), t, c) } else { 0.0 };
        prev = Some(Density::carried(prev.as_ref(), t, if c.is_finite() { c * t.sqrt() } else { f64::INFINITY }));
        out.push(c);
    }
    out
}

/// The one boundary `c` used at every look that spends exactly `alpha` in all (Pocock's own
/// design, as opposed to the spending function that approximates it).
pub fn constant_boundary(alpha: f64, fractions: &[f64]) -> f64 {
    let total = |c: f64| {
        let mut prev: Option<Density> = None;
        let mut p = 0.0;
        for &t in fractions {
            p += first_crossing(prev.as_ref(), t, c);
            prev = Some(Density::carried(prev.as_ref(), t, c * t.sqrt()));
        }
        p
    };
    let (mut lo, mut hi) = (0.0_f64, 10.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if total(mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The looks of a sequential experiment: one after every block from `first` to `last`
/// blocks, each with its boundary, spending `alpha` over `last` blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub spending: Spending,
    /// The error rate of all looks together (already divided among the judged figures).
    pub alpha: f64,
    /// The first block count at which a look is taken.
    pub first: usize,
    /// The most blocks (the information fraction's denominator).
    pub last: usize,
    /// `z[k]`: the boundary of the look after `first + k` blocks.
    z: Vec<f64>,
}

impl Schedule {
    pub fn new(spending: Spending, alpha: f64, first: usize, last: usize) -> Schedule {
        let (first, last) = (first.max(2), last.max(first.max(2)));
        let fractions: Vec<f64> = (first..=last).map(|n| n as f64 / last as f64).collect();
        let z = boundaries(spending, alpha, &fractions);
        Schedule { spending, alpha, first, last, z }
    }

    /// The z boundary of the look after `n` blocks (`None` before the first look; past the
    /// last, the last's).
    pub fn z(&self, n: usize) -> Option<f64> {
        if n < self.first {
            return None;
        }
        Some(self.z[(n - self.first).min(self.z.len() - 1)])
    }

    /// The multiplier of the standard error at the look after `n` blocks, with the variance
    /// estimated on `df` degrees of freedom: Student's t at the boundary's nominal level.
    pub fn multiplier(&self, n: usize, df: f64) -> Option<f64> {
        let z = self.z(n)?;
        if !z.is_finite() {
            return Some(f64::INFINITY);
        }
        Some(t_quantile(normal_cdf(z), df))
    }

    /// The interval's confidence at the look after `n` blocks taken alone (its nominal
    /// level): what a single interval that wide would be.
    pub fn nominal_level(&self, n: usize) -> Option<f64> {
        self.z(n).map(|z| 1.0 - 2.0 * normal_cdf(-z))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spending_functions_spend_alpha_by_the_end() {
        for s in [Spending::OBrienFleming, Spending::Pocock, Spending::Hsd(-4.0), Spending::Hsd(1.0), Spending::Hsd(0.0)] {
            assert!((s.spent(0.05, 1.0) - 0.05).abs() < 1e-9, "{s:?}");
            assert_eq!(s.spent(0.05, 0.0), 0.0);
            assert!(s.spent(0.05, 0.3) < s.spent(0.05, 0.6));
        }
        // O'Brien–Fleming spends next to nothing early
        assert!(Spending::OBrienFleming.spent(0.05, 0.2) < 1e-4);
    }

    /// Published boundaries: two-sided α = 0.05, five equally spaced looks, the Lan–DeMets
    /// O'Brien–Fleming spending function (the example of R's `ldbounds`: 4.877, 3.357, 2.680,
    /// 2.290, 2.031).
    #[test]
    fn obrien_fleming_boundaries_match_published_values() {
        let c = boundaries(Spending::OBrienFleming, 0.05, &[0.2, 0.4, 0.6, 0.8, 1.0]);
        for (got, want) in c.iter().zip([4.8769, 3.3569, 2.6803, 2.2898, 2.0310]) {
            assert!((got - want).abs() < 2e-3, "{c:?}");
        }
        // one-sided α = 0.05 at t = 0.25, 0.5, 0.75, 1 (SeqBounds.jl): 3.750, 2.540, 2.016,
        // 1.720; a two-sided α of 0.10 has the same upper boundary up to the far side's
        // negligible crossings
        let c = boundaries(Spending::OBrienFleming, 0.10, &[0.25, 0.5, 0.75, 1.0]);
        for (got, want) in c.iter().zip([3.7496, 2.5399, 2.0160, 1.7201]) {
            assert!((got - want).abs() < 3e-3, "{c:?}");
        }
    }

    /// Pocock's (1977) constants for equally spaced looks at two-sided α = 0.05: 2.178 (2
    /// looks), 2.289 (3), 2.361 (4), 2.413 (5).
    #[test]
    fn pocock_constants_match_published_values() {
        for (k, want) in [(2, 2.178), (3, 2.289), (4, 2.361), (5, 2.413)] {
            let fr: Vec<f64> = (1..=k).map(|i| i as f64 / k as f64).collect();
            let c = constant_boundary(0.05, &fr);
            assert!((c - want).abs() < 2e-3, "{k} looks: {c}");
        }
        // one look is the fixed-sample test
        assert!((constant_boundary(0.05, &[1.0]) - 1.959964).abs() < 1e-4);
        assert!((boundaries(Spending::Pocock, 0.05, &[1.0])[0] - 1.959964).abs() < 1e-4);
    }

    #[test]
    fn spendings_are_named_in_tags_and_read_back() {
        for s in [Spending::OBrienFleming, Spending::Pocock, Spending::Hsd(-2.5)] {
            assert_eq!(Spending::from_key(&s.key()), Some(s));
        }
        assert_eq!(Spending::from_key("linear"), None);
    }

    #[test]
    fn a_schedule_looks_from_its_first_block_and_uses_t_quantiles() {
        let s = Schedule::new(Spending::OBrienFleming, 0.05, 4, 20);
        assert_eq!(s.z(3), None);
        let (z4, z20) = (s.z(4).unwrap(), s.z(20).unwrap());
        assert!(z4 > z20 && z20 > 1.96 && z20 < 2.2, "{z4} {z20}");
        assert_eq!(s.z(25), s.z(20));
        // few degrees of freedom widen the multiplier
        assert!(s.multiplier(20, 3.0).unwrap() > s.multiplier(20, 300.0).unwrap());
        assert!((s.multiplier(20, 1e6).unwrap() - z20).abs() < 1e-3);
        assert!(s.nominal_level(20).unwrap() > 0.95);
    }
}
