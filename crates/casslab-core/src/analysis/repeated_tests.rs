//! Simulated experiments with a run-level random effect (compiled in tests only): does the
//! method of `repeated.rs` keep its promises where the windowed bootstrap of pooled windows —
//! casslab's method before — does not?
//!
//! A variant runs R times. Run r shifts every log-latency by `u_r ~ N(0, ρ²)` (a run that
//! started after a load, a JIT that settled differently, a compaction in progress) and its
//! throughput by `v_r ~ N(0, ρ_x²)`; within a run, window w adds an autocorrelated drift
//! `e_w = φ e_{w−1} + √(1 − φ²) τ z` (AR(1)), and each latency is lognormal around it:
//! `ln X = μ + δ + u_r + e_w + σ Z`. So the windows of one run are neither independent of each
//! other nor representative of another run.
//!
//! Truths. A change that shifts every log-latency by δ multiplies every latency figure by
//! e^δ, in every run: the true change is e^δ − 1 exactly, whatever the estimand. A variant's
//! own figure is that of a typical run, exp(E[ln F_run]); it has no closed form here
//! (quantiles of a run's mixture of windows), so it is taken as the mean over all the runs the
//! trials simulate (3,000 runs: its error is under 1 % of an interval's half-width).
//!
//! Checks (fixed seeds, so the figures are reproducible; `--nocapture` prints them):
//! - the new intervals cover the truth in 95 % ± 3 % of experiments, for a variant's figures
//!   and for changes;
//! - an A/A comparison of the six figures, judged as one family, marks anything in at most
//!   5 % of experiments;
//! - the old method, on the same simulated runs, covers far less and marks far more;
//! - a repetition is seldom named as disagreeing by chance, and a run twice as slow as the
//!   others of its variant nearly always is.
//!
//! Measured (1,000 experiments of 3 runs a side, 10 windows of 100 latencies per run, ρ = 0.15,
//! τ = 0.1, φ = 0.7): changes covered 95.7–96.3 % (Welch's interval is slightly conservative
//! with three runs a side), a variant's figures 94.1–95.4 %; A/A comparisons marked any of
//! their six figures in 2.3 % of experiments (each figure alone 4.0 %). Pooled windows on the
//! same runs: 42–59 % coverage, and 87 % of A/A comparisons marked something (45 % of figures).
//! A repetition was named as disagreeing by chance in 2.7 % of those experiments (1.3 % among
//! runs that agree within about 5 %), and a first run twice as slow as two such others in 94 %.

use super::bootstrap_tests::{windows, Gauss};
use super::{
    compare, compare_repeated, outlier, side_estimate, AnalysisOptions, LatencyKind, Metric, OpRef, Resampled, RunFigure, Sample, Windows, MIN_FIGURES,
    OUTLIER_METRICS,
};

const MU: f64 = 14.508_657_738_524_219; // ln(2 ms in ns)
const SIGMA: f64 = 0.5;
const RHO: f64 = 0.15;
const RHO_X: f64 = 0.05;
const TAU: f64 = 0.1;
const PHI: f64 = 0.7;
const REPS: usize = 3;
const WINDOWS: usize = 10;
const PER_WINDOW: usize = 100;
const TRIALS: u64 = 1000;
/// The figures of a merged histogram (the typical p99 has tests of its own).
const METRICS: [Metric; 6] = [Metric::OpsPerS, Metric::Mean, Metric::P50, Metric::P95, Metric::P99, Metric::P999];

/// One simulated run of a variant whose log-latencies are shifted by `delta`, runs spreading
/// by `rho`, windows drifting by `tau`.
fn run(g: &mut Gauss, delta: f64, (rho, tau): (f64, f64)) -> Windows {
    let (u, v) = (rho * g.next(), RHO_X * g.next());
    let mut e = tau * g.next();
    windows(
        (0..WINDOWS)
            .map(|_| {
                e = PHI * e + (1.0 - PHI * PHI).sqrt() * tau * g.next();
                let centre = MU + delta + u + e;
                let lat = (0..PER_WINDOW).map(|_| (centre + SIGMA * g.next()).exp() as u64).collect();
                let ops_s = 5000.0 * (v + 0.3 * e).exp();
                ((ops_s * 60.0).round() as u64, 60.0, lat)
            })
            .collect(),
    )
}

fn sample(w: &Windows) -> Sample {
    Sample::of(w, &OpRef::Op("read".into()), LatencyKind::Intended).unwrap()
}

/// A variant as the new method sees it (each run's figures) and as the old one did (the
/// windowed bootstrap of all its windows pooled).
struct Variant {
    runs: Vec<RunFigure>,
    pooled: Resampled,
}

fn variant(g: &mut Gauss, delta: f64, spread: (f64, f64), seed: u64) -> Variant {
    let runs: Vec<Windows> = (0..REPS).map(|_| run(g, delta, spread)).collect();
    let figures = runs.iter().enumerate().map(|(i, w)| RunFigure::of(&Resampled::run(&sample(w), 100, seed ^ (i as u64 + 1)))).collect();
    let pooled = Resampled::run(&sample(&Windows::pool(runs).unwrap()), 500, seed);
    Variant { runs: figures, pooled }
}

fn opts() -> AnalysisOptions {
    AnalysisOptions { resamples: 1000, ..AnalysisOptions::default() }
}

/// `n` experiments of two variants: A, and B with log-latencies shifted by `delta`.
fn trials_of(n: u64, delta: f64, rho: f64, tau: f64, base_seed: u64) -> Vec<(Variant, Variant)> {
    (0..n)
        .map(|t| {
            let mut g = Gauss::new(base_seed + t);
            (variant(&mut g, 0.0, (rho, tau), 2 * t), variant(&mut g, delta, (rho, tau), 2 * t + 1))
        })
        .collect()
}

fn trials(delta: f64, base_seed: u64) -> Vec<(Variant, Variant)> {
    trials_of(TRIALS, delta, RHO, TAU, base_seed)
}

fn covers(lo: f64, hi: f64, truth: f64) -> bool {
    lo <= truth && truth <= hi
}

fn rate(hits: impl Iterator<Item = bool>) -> f64 {
    let (n, k) = hits.fold((0u32, 0u32), |(n, k), h| (n + 1, k + u32::from(h)));
    f64::from(k) / f64::from(n)
}

#[test]
fn intervals_of_repetitions_cover_the_truth_and_pooled_windows_do_not() {
    let delta = 1.2f64.ln();
    let all = trials(delta, 70_000);
    let truth_change = |m: Metric| if m.is_latency() { delta.exp() - 1.0 } else { 0.0 };
    for m in [Metric::OpsPerS, Metric::Mean, Metric::P50, Metric::P95, Metric::P99] {
        let new = rate(all.iter().map(|(a, b)| {
            let ch = compare_repeated(&a.runs, &b.runs, m, &opts(), 1).change.unwrap();
            covers(ch.lo, ch.hi, truth_change(m))
        }));
        let old = rate(all.iter().map(|(a, b)| {
            let ch = compare(&a.pooled, &b.pooled, m, &opts(), 1).change.unwrap();
            covers(ch.lo, ch.hi, truth_change(m))
        }));
        // a variant's own figure: the typical run's, estimated from every simulated run
        let logs: Vec<f64> = all.iter().flat_map(|(a, _)| a.runs.iter().map(|r| r.points[m.index()].ln())).collect();
        let truth = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        let side = rate(all.iter().map(|(a, _)| {
            let e = side_estimate(&a.runs, m, 0.95).unwrap();
            covers(e.lo, e.hi, truth)
        }));
        eprintln!(
            "{}: coverage of the change {:.1}% (pooled windows: {:.1}%), of a variant's figure {:.1}%, over {TRIALS} experiments of {REPS} runs a side",
            m.label(),
            new * 100.0,
            old * 100.0,
            side * 100.0
        );
        assert!((0.92..=0.98).contains(&new), "{}: change coverage {new}", m.label());
        assert!((0.92..=0.98).contains(&side), "{}: side coverage {side}", m.label());
        assert!(old < 0.80, "{}: the pooled method should fail here, covered {old}", m.label());
    }
}

#[test]
fn a_a_comparisons_mark_anything_at_most_as_often_as_promised() {
    let all = trials(0.0, 90_000);
    // the new method: six figures judged as one family
    let any_new = rate(all.iter().map(|(a, b)| METRICS.iter().any(|&m| compare_repeated(&a.runs, &b.runs, m, &opts(), METRICS.len()).is_significant())));
    let each_new = rate(all.iter().flat_map(|(a, b)| METRICS.map(|m| compare_repeated(&a.runs, &b.runs, m, &opts(), 1).is_significant())));
    // the old: pooled windows, each figure at 95 % on its own
    let any_old = rate(all.iter().map(|(a, b)| METRICS.iter().any(|&m| compare(&a.pooled, &b.pooled, m, &opts(), 1).is_significant())));
    let each_old = rate(all.iter().flat_map(|(a, b)| METRICS.map(|m| compare(&a.pooled, &b.pooled, m, &opts(), 1).is_significant())));
    eprintln!(
        "A/A, {TRIALS} experiments of {REPS} runs a side: any of 6 figures marked in {:.1}% (each figure alone: {:.1}%); pooled windows: {:.1}% ({:.1}% of figures)",
        any_new * 100.0,
        each_new * 100.0,
        any_old * 100.0,
        each_old * 100.0
    );
    assert!(any_new <= 0.05, "family-wise false marks {any_new}");
    assert!(each_new <= 0.06, "per-figure false marks {each_new}");
    assert!(any_old > 0.3 && each_old > 0.15, "the pooled method should fail here: {any_old} {each_old}");
}

/// The runs of `a` named as disagreeing (against `b`'s variation): those singled out in at
/// least [`MIN_FIGURES`] figures, as the study names them.
fn named(a: &[RunFigure], b: &[RunFigure]) -> Vec<usize> {
    let mut count = vec![0; a.len()];
    for m in OUTLIER_METRICS {
        if let Some(o) = outlier(a, m, &[b]) {
            count[o.run] += 1;
        }
    }
    (0..a.len()).filter(|&r| count[r] >= MIN_FIGURES).collect()
}

#[test]
fn a_repetition_is_named_when_it_disagrees_and_seldom_otherwise() {
    let any = |all: &[(Variant, Variant)]| rate(all.iter().map(|(a, b)| !named(&a.runs, &b.runs).is_empty() || !named(&b.runs, &a.runs).is_empty()));
    let noisy = trials(0.0, 110_000);
    // runs that agree within about 5% (run-to-run 3%, drift within runs 5%)
    let calm = trials_of(300, 0.0, 0.03, 0.05, 130_000);
    // … and a's first run twice as slow in every latency figure (a run right after the load)
    let found = rate(calm.iter().map(|(a, b)| {
        let mut runs = a.runs.clone();
        (1..6).for_each(|i| runs[0].points[i] *= 2.0);
        named(&runs, &b.runs) == [0]
    }));
    let (by_chance, by_chance_calm) = (any(&noisy), any(&calm));
    eprintln!(
        "repetitions named as disagreeing by chance: in {:.1}% of experiments (runs spreading by {RHO}), {:.1}% (calm runs); a first run twice as slow among calm runs: named in {:.1}%",
        by_chance * 100.0,
        by_chance_calm * 100.0,
        found * 100.0
    );
    assert!(by_chance <= 0.05 && by_chance_calm <= 0.05, "by chance {by_chance} {by_chance_calm}");
    assert!(found >= 0.9, "found {found}");
}
