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
//! t-approximation), scaled by one factor per design that `calibration.rs` finds by
//! simulation, so that the looks together miss at α and not the few tenths of a point more the
//! approximation alone lets through.
//!
//! Information fraction: units (blocks) so far over the most the budget allows. Looks that are
//! skipped cost nothing (their α is spent at the next look). A design that ends on its data
//! leaves the α of the looks it did not take unspent (conservative); one that the clock ends
//! before its last planned look ([`SequentialDesign::final_look`]) spends all that is left at
//! that look — valid, because the reason to stop there was not the data.
//!
//! For any caller with per-unit differences of its own (blocks, or units of another design),
//! [`repeated_interval`] is the interval of a look from those differences alone; [`Schedule`]
//! gives every look's boundary and multiplier.

use super::block_fit::{model_for, Fit, Model, Sums};
use super::calibration;
use super::distributions::{normal_cdf, normal_pdf, normal_quantile, t_cdf, t_quantile};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// How the error rate is spent over the information fraction `t ∈ (0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
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

    /// What tells spendings apart (a cache's key): the kind and its parameter's bits.
    fn cache_key(self) -> (u8, u64) {
        match self {
            Spending::OBrienFleming => (0, 0),
            Spending::Pocock => (1, 0),
            Spending::Hsd(g) => (2, g.to_bits()),
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
    boundaries_spending(spending, alpha, fractions, false)
}

/// [`boundaries`], the last look spending all that the looks before it left when
/// `rest_at_last` (a design ended on the clock before its last planned look).
fn boundaries_spending(spending: Spending, alpha: f64, fractions: &[f64], rest_at_last: bool) -> Vec<f64> {
    let mut out = Vec::with_capacity(fractions.len());
    let mut prev: Option<Density> = None;
    let mut spent_before = 0.0;
    for (k, &t) in fractions.iter().enumerate() {
        let target = if rest_at_last && k + 1 == fractions.len() { alpha } else { spending.spent(alpha, t) };
        let spend = target - spent_before;
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
        if k + 1 < fractions.len() {
            prev = Some(Density::carried(prev.as_ref(), t, if c.is_finite() { c * t.sqrt() } else { f64::INFINITY }));
        }
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

/// A sequential experiment: blocks until every judged figure is settled at `precision`, or
/// `budget_s` of the experiment's time is spent. What an experiment asks for, what a plan sizes
/// and what a saved experiment's design record gives back.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SequentialPlan {
    /// Half the width of a judged figure's interval (relative) that settles it.
    pub precision: f64,
    /// The most the whole experiment may take (loads, settling and the unmeasured round
    /// included), in seconds.
    pub budget_s: f64,
    pub spending: Spending,
    /// Blocks before the first look.
    pub first_look: usize,
}

/// A sequential design: how α is spent, the first look, the most units (blocks), and the look
/// at which it ended on the clock, if it did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequentialDesign {
    pub spending: Spending,
    /// Units before the first look (at least 3: two differences say little of their spread).
    pub first_look: usize,
    /// The most units the budget allows: the information fraction's denominator.
    pub max_blocks: usize,
    /// The look at which the design ended for a reason that is not its data (the budget ran
    /// out): that look spends all the error rate left, instead of its share. `None`: every
    /// look spends its share (the design ended on its data, or has not ended).
    pub final_look: Option<usize>,
}

impl SequentialDesign {
    /// A design looking from `first_look` to `max_blocks` units, not ended on the clock.
    pub fn new(spending: Spending, first_look: usize, max_blocks: usize) -> SequentialDesign {
        SequentialDesign { spending, first_look, max_blocks, final_look: None }
    }
}

/// The looks of a sequential design, each with its multiplier of the standard error: one look
/// after every unit from `first` to `last`, spending `alpha` over `last` units, for units
/// fitted as `block_fit::model_for` says (`ordered`: the units carry their order, so that from
/// `block_fit::ORDER_FROM` units on an order effect is fitted: n − 2 degrees of freedom, not
/// n − 1).
///
/// The multipliers. A look's boundary `z` is what the spending function gives on the normal
/// scale; with the variance estimated from n units, its multiplier is Student's t at the
/// boundary's nominal level, times one factor — [`Schedule::calibration`] — that
/// `calibration.rs` finds by simulating experiments of normally distributed units, so that
/// the chance that any look's interval misses is `alpha` rather than the few tenths of a
/// point more the t approximation alone lets through. A design that ended on the clock spends
/// at its final look what the simulated looks before it left.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub spending: Spending,
    /// The error rate of all looks together (already divided among the judged figures).
    pub alpha: f64,
    /// The first unit count at which a look is taken.
    pub first: usize,
    /// The most units (the information fraction's denominator).
    pub last: usize,
    /// The look that spends all that is left ([`SequentialDesign::final_look`]).
    pub final_look: Option<usize>,
    /// The units carry their order (an order effect is fitted from `ORDER_FROM` units on).
    pub ordered: bool,
    /// The factor every look's t multiplier is scaled by (at least 1).
    pub calibration: f64,
    /// `z[k]`, `m[k]`: the boundary and the multiplier of the look after `first + k` units.
    z: Vec<f64>,
    m: Vec<f64>,
}

impl Schedule {
    /// The looks from `first` to `last` units without their order, not ended on the clock.
    pub fn new(spending: Spending, alpha: f64, first: usize, last: usize) -> Schedule {
        Schedule::build(&SequentialDesign::new(spending, first, last), alpha, false)
    }

    /// The schedule of `design` at `alpha` for units with their order or without, computed
    /// (boundaries and calibration) once per process and shared.
    pub fn of(design: &SequentialDesign, alpha: f64, ordered: bool) -> Arc<Schedule> {
        type Key = (u64, usize, usize, Option<usize>, (u8, u64), bool);
        static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Schedule>>>> = OnceLock::new();
        let key = (alpha.to_bits(), design.first_look, design.max_blocks, design.final_look, design.spending.cache_key(), ordered);
        let cache = CACHE.get_or_init(Default::default);
        if let Some(s) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return s.clone();
        }
        // computed outside the lock: other schedules are not held up meanwhile
        let s = Arc::new(Schedule::build(design, alpha, ordered));
        cache.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(s).clone()
    }

    fn build(design: &SequentialDesign, alpha: f64, ordered: bool) -> Schedule {
        let first = design.first_look.max(2);
        let last = design.max_blocks.max(first);
        let final_look = design.final_look.filter(|f| (first..last).contains(f));
        let fractions: Vec<f64> = (first..=last).map(|n| n as f64 / last as f64).collect();
        let full_z = boundaries(design.spending, alpha, &fractions);
        let z = match final_look {
            Some(f) => boundaries_spending(design.spending, alpha, &fractions[..=f - first], true),
            None => full_z.clone(),
        };
        // the full design's looks are calibrated; then the final look, given the looks before it
        let df = |n: usize| (n - model_for(n, ordered).params()) as f64;
        let t_of = |k: usize, z: f64| t_multiplier(z, df(first + k));
        let base: Vec<f64> = full_z.iter().enumerate().map(|(k, &z)| t_of(k, z)).collect();
        let looks = calibration::Looks { first, t: &base, z: &full_z, final_look: final_look.map(|f| (f, z[f - first])) };
        let cal = calibration::calibrate(&looks, ordered, alpha);
        let mut m: Vec<f64> = base.iter().take(z.len()).map(|b| b * cal.factor).collect();
        if let Some(f) = final_look {
            let k = f - first;
            m[k] = cal.final_multiplier.unwrap_or_else(|| t_of(k, z[k]) * cal.factor);
        }
        Schedule { spending: design.spending, alpha, first, last, final_look, ordered, calibration: cal.factor, z, m }
    }

    /// The last look this schedule has: its final look, else its most units.
    pub fn end(&self) -> usize {
        self.final_look.unwrap_or(self.last)
    }

    fn index(&self, n: usize) -> Option<usize> {
        (n >= self.first).then(|| (n - self.first).min(self.z.len() - 1))
    }

    /// The z boundary of the look after `n` units (`None` before the first look; past the
    /// last, the last's).
    pub fn z(&self, n: usize) -> Option<f64> {
        self.index(n).map(|k| self.z[k])
    }

    /// The multiplier of the standard error at the look after `n` units (calibrated; infinite
    /// where the look spends nothing).
    pub fn multiplier(&self, n: usize) -> Option<f64> {
        self.index(n).map(|k| self.m[k])
    }

    /// The model fitted at the look after `n` units.
    pub fn model_at(&self, n: usize) -> Model {
        model_for(n, self.ordered)
    }

    /// The degrees of freedom of the look after `n` units.
    pub fn df(&self, n: usize) -> f64 {
        n as f64 - self.model_at(n).params() as f64
    }

    /// The interval's confidence at the look after `n` units taken alone (its nominal
    /// level): what a single t interval as wide would be.
    pub fn nominal_level(&self, n: usize) -> Option<f64> {
        let m = self.multiplier(n)?;
        Some(if m.is_finite() { 2.0 * t_cdf(m, self.df(n)) - 1.0 } else { 1.0 })
    }

    /// The repeated confidence interval (in logarithms) of the look after `fit.n` units:
    /// `(lo, hi)`, `None` before the first look. A fit of a model with fewer parameters than
    /// the schedule's (both orders not met yet) gets the schedule's wider multiplier.
    pub fn interval(&self, fit: &Fit) -> Option<(f64, f64)> {
        let half = self.multiplier(fit.n)? * fit.se_ln;
        Some((fit.mean_ln - half, fit.mean_ln + half))
    }
}

/// A repeated confidence interval of the mean of per-unit differences (logarithms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeatedInterval {
    pub fit: Fit,
    pub lo_ln: f64,
    pub hi_ln: f64,
    /// The multiplier of the standard error used, and the interval's nominal level alone.
    pub multiplier: f64,
    pub nominal: f64,
}

/// The repeated confidence interval at the look after `diffs.len()` units of `design`,
/// spending `alpha` (two-sided): the per-unit differences (`ln B − ln A`), with each unit's
/// order (±1, +1 where B ran second; empty when unknown, or when the units have none). `None`
/// before the design's first look or with too few units for a spread.
pub fn repeated_interval(diffs: &[f64], orders: &[f64], design: &SequentialDesign, alpha: f64) -> Option<RepeatedInterval> {
    let sums = Sums::of(diffs, orders);
    let fit = sums.fit()?;
    if fit.n < design.first_look {
        return None;
    }
    let schedule = Schedule::of(design, alpha, sums.ordered());
    let (lo_ln, hi_ln) = schedule.interval(&fit)?;
    Some(RepeatedInterval { fit, lo_ln, hi_ln, multiplier: schedule.multiplier(fit.n)?, nominal: schedule.nominal_level(fit.n)? })
}

/// Student's t quantile with `df` degrees of freedom at the nominal level of boundary `z`.
fn t_multiplier(z: f64, df: f64) -> f64 {
    if !z.is_finite() || df < 1.0 {
        return f64::INFINITY;
    }
    t_quantile(normal_cdf(z), df)
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
    fn a_schedule_looks_from_its_first_block_and_uses_calibrated_t_quantiles() {
        let s = Schedule::new(Spending::OBrienFleming, 0.05, 4, 20);
        assert_eq!(s.z(3), None);
        let (z4, z20) = (s.z(4).unwrap(), s.z(20).unwrap());
        assert!(z4 > z20 && z20 > 1.96 && z20 < 2.2, "{z4} {z20}");
        assert_eq!(s.z(25), s.z(20));
        // the t quantile at the boundary's level, scaled by a factor a little above 1
        assert!(s.calibration > 1.0 && s.calibration < 1.1, "{}", s.calibration);
        let t20 = t_quantile(normal_cdf(z20), 19.0);
        assert!((s.multiplier(20).unwrap() - s.calibration * t20).abs() < 1e-9);
        assert!(s.nominal_level(20).unwrap() > 1.0 - 2.0 * normal_cdf(-z20));
        // the same design and error rate: the same schedule, once; another spending, another
        let d = SequentialDesign::new(Spending::OBrienFleming, 4, 20);
        let hsd = |g: f64| Schedule::of(&SequentialDesign { spending: Spending::Hsd(g), ..d }, 0.05, false);
        assert_eq!((hsd(-2.0).spending, hsd(1.0).spending), (Spending::Hsd(-2.0), Spending::Hsd(1.0)));
        assert_eq!(Schedule::of(&SequentialDesign { spending: Spending::Pocock, ..d }, 0.05, false).spending, Spending::Pocock);
        assert!(Arc::ptr_eq(&Schedule::of(&d, 0.05, false), &Schedule::of(&d, 0.05, false)));
        assert_eq!(*Schedule::of(&d, 0.05, false), s);
        // an order effect costs a degree of freedom, from 8 blocks on
        let o = Schedule::of(&d, 0.05, true);
        assert_eq!((o.df(20), s.df(20), o.df(7)), (18.0, 19.0, 6.0));
        assert!(o.multiplier(20).unwrap() > s.multiplier(20).unwrap());
    }

    /// Item 4 of the audit: a design that ends on the clock at look 18 of 21 spends there all
    /// the error rate left — a boundary of about 2.27 instead of the 2.58 its share gives
    /// (2.5 % of error rate, looks from block 4) — and its interval is that much narrower.
    #[test]
    fn a_design_ended_by_the_budget_spends_what_is_left_at_its_final_look() {
        let planned = SequentialDesign::new(Spending::OBrienFleming, 4, 21);
        let ended = SequentialDesign { final_look: Some(18), ..planned };
        let (p, e) = (Schedule::of(&planned, 0.025, false), Schedule::of(&ended, 0.025, false));
        assert!((p.z(18).unwrap() - 2.578).abs() < 0.01, "{}", p.z(18).unwrap());
        assert!((e.z(18).unwrap() - 2.265).abs() < 0.01, "{}", e.z(18).unwrap());
        // the looks before are the planned ones; the final one is 6–14 % narrower
        assert_eq!(e.multiplier(17), p.multiplier(17));
        let ratio = e.multiplier(18).unwrap() / p.multiplier(18).unwrap();
        assert!((0.82..0.94).contains(&ratio), "{ratio}");
        assert_eq!(e.end(), 18);
        // ending at the last planned look changes nothing
        let at_last = SequentialDesign { final_look: Some(21), ..planned };
        assert_eq!(Schedule::of(&at_last, 0.025, false).multiplier(21), p.multiplier(21));
    }

    #[test]
    fn a_repeated_interval_comes_from_the_differences_alone() {
        let d = [0.02, -0.01, 0.03, 0.0, 0.01, 0.02, -0.02, 0.01, 0.015, 0.005];
        let design = SequentialDesign::new(Spending::OBrienFleming, 4, 20);
        let r = repeated_interval(&d, &[], &design, 0.05).unwrap();
        let fit = Sums::of(&d, &[]).fit().unwrap();
        let m = Schedule::of(&design, 0.05, false).multiplier(10).unwrap();
        assert!((r.lo_ln - (fit.mean_ln - m * fit.se_ln)).abs() < 1e-12 && (r.hi_ln - (fit.mean_ln + m * fit.se_ln)).abs() < 1e-12);
        assert!(r.nominal > 0.95 && r.multiplier == m);
        assert_eq!(repeated_interval(&d[..3], &[], &design, 0.05), None, "before the first look");
    }
}
