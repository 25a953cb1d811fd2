//! Tests of the statistics on synthetic data where the truth is known (compiled in tests
//! only). Every trial draws fresh windows from a known distribution, builds the intervals as
//! `casslab compare` does, and checks them against the truth:
//! - coverage: a 95 % interval must contain the true value in 95 % ± 3 % of trials;
//! - false positives: A and B drawn from the same distribution must be called different in
//!   at most 8 % of trials (5 % expected);
//! - power: a real 30 % change must be found nearly always.
//!
//! Latencies are lognormal with a per-window shift of the log-mean (window-to-window drift,
//! the autocorrelation that makes per-request intervals falsely narrow): in window w,
//! `ln X = μ + ε_w + σ Z` with `ε_w ~ N(0, τ²)`, so over many windows `ln X ~ N(μ, σ² + τ²)`
//! and the true q-quantile is `exp(μ + √(σ² + τ²) · z_q)`, the true mean `exp(μ + (σ² + τ²)/2)`.
//! Throughput per window is normal with a known mean.
//!
//! A known limit, measured with these generators (release build, 2,000–3,000 trials): when
//! the latency level itself drifts strongly between windows, intervals for the extreme
//! percentiles need many windows, because the tail is made by the few worst windows. With
//! τ = 0.05 (about ±5 % window to window) 20 windows give 94 % for p99 and 93 % for p99.9;
//! with τ = 0.15, 93 % and 90 %; with τ = 0.3, 87 % and 78 % (89 % and 83 % with 40
//! windows). Mean, p50 and throughput stay at 94–95 % throughout. p99.9 also needs enough
//! requests per window to have a tail: with 250 latencies per window (5 above p99.9 in 20
//! windows) it covers 88 %. Real windows hold tens of thousands of requests.
//!
//! The trials use 1,000 resamples rather than the default 10,000 so that the suite runs in
//! seconds in the unoptimized test build, and draw their normals with Box–Muller from the
//! raw generator for the same reason; the seeds are fixed, so the figures are reproducible.
//! Run with `--nocapture` to see them.

use super::window::{Buckets, Window, WindowOp, Windows};
use super::{compare, AnalysisOptions, LatencyKind, Metric, OpRef, Resampled, Sample};
use crate::stats::{new_histogram, Phase};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

const RESAMPLES: usize = 1000;
const MU: f64 = 14.508_657_738_524_219; // ln(2 ms in ns)
const SIGMA: f64 = 0.5;
/// Mild drift, for the coverage of every metric.
const TAU_MILD: f64 = 0.05;
/// Strong drift, for false positives and power.
const TAU_STRONG: f64 = 0.15;

/// Standard normal draws (Box–Muller), two at a time.
pub(super) struct Gauss {
    rng: SmallRng,
    spare: Option<f64>,
}

impl Gauss {
    pub(super) fn new(seed: u64) -> Gauss {
        Gauss { rng: SmallRng::seed_from_u64(seed), spare: None }
    }

    pub(super) fn next(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let u = |r: &mut SmallRng| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (u1, u2) = (u(&mut self.rng), u(&mut self.rng));
        let radius = (-2.0 * u1.ln()).sqrt();
        let angle = 2.0 * std::f64::consts::PI * u2;
        self.spare = Some(radius * angle.sin());
        radius * angle.cos()
    }
}

/// Windows of one operation, "read", from (ok count, duration, latencies) per window.
pub(super) fn windows(per_window: Vec<(u64, f64, Vec<u64>)>) -> Windows {
    let h = new_histogram();
    let windows = per_window
        .into_iter()
        .enumerate()
        .map(|(i, (ok, duration_s, latencies))| {
            let b = buckets(&h, latencies);
            let op = WindowOp { ok, errors: 0, intended: b.clone(), service: b };
            let start_ms = i as u64 * (duration_s * 1000.0) as u64;
            Window { start_ms, end_ms: start_ms + (duration_s * 1000.0) as u64, duration_s, ops: vec![op.clone()], total: op }
        })
        .collect();
    Windows { phase: Phase::Run, window_s: 60.0, ops: vec!["read".into()], windows, runs: 1, dropped_s: 0.0 }
}

/// What `Buckets::of` gives for a histogram of `values`, computed from the values with the
/// histogram's bucket arithmetic (`h` is only asked for it) — scanning a full 31,744-bucket
/// histogram per window would dominate the trials in the unoptimized test build.
fn buckets(h: &Histogram<u64>, mut values: Vec<u64>) -> Buckets {
    values.sort_unstable();
    let mut b = Buckets::default();
    for v in values {
        let (top, mid) = (h.highest_equivalent(v), h.median_equivalent(v) as f64);
        if b.values_ns.last() == Some(&top) {
            *b.counts.last_mut().unwrap() += 1;
        } else {
            b.values_ns.push(top);
            b.counts.push(1);
        }
        b.sum_ns += mid;
    }
    b
}

#[test]
fn the_shortcut_buckets_equal_a_recorded_histogram() {
    let mut g = Gauss::new(3);
    let values: Vec<u64> = (0..5000).map(|_| (MU + SIGMA * g.next()).exp() as u64).collect();
    let mut h = new_histogram();
    values.iter().for_each(|v| h.record(*v).unwrap());
    let (want, got) = (Buckets::of(&h), buckets(&h, values));
    assert_eq!((&got.values_ns, &got.counts), (&want.values_ns, &want.counts));
    assert!((got.sum_ns - want.sum_ns).abs() < 1e-9 * want.sum_ns);
}

/// `n` one-minute windows of `per_window` lognormal latencies (drift `tau`, log-mean shifted
/// by `log_scale`) and a normal(5000, 400) ops/s throughput. (Throughput and latency are
/// drawn independently: the ok count is not the number of latencies recorded, which keeps
/// the trials cheap and does not matter to either statistic.)
fn lognormal_windows(g: &mut Gauss, n: usize, per_window: usize, tau: f64, log_scale: f64) -> Windows {
    windows(
        (0..n)
            .map(|_| {
                let shift = MU + log_scale + tau * g.next();
                let lat = (0..per_window).map(|_| (shift + SIGMA * g.next()).exp() as u64).collect();
                (((5000.0 + 400.0 * g.next()) * 60.0).round() as u64, 60.0, lat)
            })
            .collect(),
    )
}

fn true_lognormal(m: Metric, tau: f64) -> f64 {
    let s = (SIGMA * SIGMA + tau * tau).sqrt();
    match m.quantile() {
        Some(q) => (MU + s * super::normal_quantile(q)).exp(),
        None => (MU + s * s / 2.0).exp(),
    }
}

/// `n` windows of 60 s whose throughput is normal(5000, 400) ops/s (one latency each).
fn throughput_windows(g: &mut Gauss, n: usize) -> Windows {
    windows((0..n).map(|_| (((5000.0 + 400.0 * g.next()) * 60.0).round() as u64, 60.0, vec![1_000_000])).collect())
}

fn resampled(w: &Windows, seed: u64) -> Resampled {
    let s = Sample::of(w, &OpRef::Op("read".into()), LatencyKind::Intended).unwrap();
    Resampled::run(&s, RESAMPLES, seed)
}

/// For each trial, `hits(trial number)` says which of `K` checks hit; returns the fraction
/// of trials each check hit.
fn rates<const K: usize>(trials: u64, hits: impl Fn(u64) -> [bool; K]) -> [f64; K] {
    let mut n = [0u32; K];
    for t in 0..trials {
        for (c, hit) in n.iter_mut().zip(hits(t)) {
            *c += u32::from(hit);
        }
    }
    n.map(|c| f64::from(c) / trials as f64)
}

fn covers(r: &Resampled, m: Metric, truth: f64) -> bool {
    let e = r.estimate(m, 0.95).unwrap();
    e.lo <= truth && truth <= e.hi
}

#[test]
fn intervals_cover_the_truth_95_percent_of_the_time() {
    let (trials, tau) = (400, TAU_MILD);
    let metrics = [Metric::OpsPerS, Metric::Mean, Metric::P50, Metric::P99, Metric::P999];
    let coverage = rates(trials, |t| {
        let r = resampled(&lognormal_windows(&mut Gauss::new(1000 + t), 20, 500, tau, 0.0), t);
        metrics.map(|m| covers(&r, m, if m == Metric::OpsPerS { 5000.0 } else { true_lognormal(m, tau) }))
    });
    for (m, c) in metrics.iter().zip(coverage) {
        eprintln!("coverage of {} with 20 windows: {:.1}% over {trials} trials", m.label(), c * 100.0);
        assert!((0.92..=0.98).contains(&c), "{}: coverage {c}", m.label());
    }
}

#[test]
fn throughput_intervals_cover_the_truth_with_few_or_many_windows() {
    let trials = 500;
    for windows_n in [8, 40] {
        let [coverage] = rates(trials, |t| [covers(&resampled(&throughput_windows(&mut Gauss::new(5000 + t), windows_n), t), Metric::OpsPerS, 5000.0)]);
        eprintln!("coverage of ops/s with {windows_n} windows: {:.1}% over {trials} trials", coverage * 100.0);
        assert!((0.92..=0.98).contains(&coverage), "{windows_n} windows: coverage {coverage}");
    }
}

#[test]
fn plain_percentile_intervals_from_few_windows_are_too_narrow() {
    // Why the intervals are expanded (bootstrap.rs): with 6 windows the plain 2.5%–97.5%
    // interval misses the truth far more often than 5% of the time.
    let trials = 1000;
    let [plain, expanded] = rates(trials, |t| {
        let r = resampled(&throughput_windows(&mut Gauss::new(9000 + t), 6), t);
        let mut v: Vec<f64> = (0..r.resamples()).map(|k| r.draw(k, Metric::OpsPerS)).collect();
        v.sort_by(f64::total_cmp);
        let (lo, hi) = (v[(0.025 * v.len() as f64) as usize], v[(0.975 * v.len() as f64) as usize]);
        [lo <= 5000.0 && 5000.0 <= hi, covers(&r, Metric::OpsPerS, 5000.0)]
    });
    eprintln!("coverage with 6 windows: plain percentile {:.1}%, expanded {:.1}% over {trials} trials", plain * 100.0, expanded * 100.0);
    assert!(plain < 0.90, "plain {plain}");
    assert!((0.92..=0.98).contains(&expanded), "expanded {expanded}");
}

const COMPARED: [Metric; 4] = [Metric::OpsPerS, Metric::Mean, Metric::P50, Metric::P99];

fn significant(a: &Windows, b: &Windows, seed: u64) -> [bool; 4] {
    let opts = AnalysisOptions { resamples: RESAMPLES, ..AnalysisOptions::default() };
    let (ra, rb) = (resampled(a, 2 * seed), resampled(b, 2 * seed + 1));
    COMPARED.map(|m| compare(&ra, &rb, m, &opts, 1).is_significant())
}

#[test]
fn identical_inputs_are_rarely_called_different() {
    let trials = 400;
    let fp = rates(trials, |t| {
        let mut g = Gauss::new(20_000 + t);
        significant(&lognormal_windows(&mut g, 20, 200, TAU_STRONG, 0.0), &lognormal_windows(&mut g, 20, 200, TAU_STRONG, 0.0), t)
    });
    for (m, f) in COMPARED.iter().zip(fp) {
        eprintln!("false positives on {} with 20 windows a side: {:.1}% over {trials} trials", m.label(), f * 100.0);
        assert!(f <= 0.08, "{}: false-positive rate {f}", m.label());
        assert!(f > 0.0, "{}: never a false positive in {trials} trials: the intervals are too wide", m.label());
    }
}

#[test]
fn a_real_change_is_found() {
    // B's latencies are 30% higher (log-mean + ln 1.3): every latency figure up by 30%,
    // throughput unchanged.
    let trials = 60;
    let found = rates(trials, |t| {
        let mut g = Gauss::new(40_000 + t);
        significant(&lognormal_windows(&mut g, 20, 200, TAU_STRONG, 0.0), &lognormal_windows(&mut g, 20, 200, TAU_STRONG, 1.3f64.ln()), t)
    });
    eprintln!("a 30% latency change found in: mean {:.0}%, p50 {:.0}%, p99 {:.0}% of {trials} trials", found[1] * 100.0, found[2] * 100.0, found[3] * 100.0);
    assert!(found[1..].iter().all(|f| *f >= 0.95), "power {found:?}");
    assert!(found[0] <= 0.1, "throughput did not change: {}", found[0]);
}

#[test]
fn resampling_a_long_multi_op_run_gives_every_interval() {
    // Prints how long it took (a figure, not a threshold: the suite runs on noisy machines;
    // in a release build 10,000 resamples of this took ~120 ms on 2 cores).
    // 60 one-minute windows of 3 operations (2,000 latencies each) and their total.
    let mut g = Gauss::new(1);
    let ops: Vec<Windows> = (0..3).map(|i| lognormal_windows(&mut g, 60, 2000, TAU_STRONG, f64::from(i) * 0.7)).collect();
    let mut all = ops[0].clone();
    all.ops = vec!["a".into(), "b".into(), "c".into()];
    for (i, w) in all.windows.iter_mut().enumerate() {
        w.ops = ops.iter().map(|o| o.windows[i].ops[0].clone()).collect();
    }
    let refs = [OpRef::Op("a".into()), OpRef::Op("b".into()), OpRef::Op("c".into()), OpRef::Total];
    let start = std::time::Instant::now();
    let samples: Vec<Sample> = refs.iter().map(|r| Sample::of(&all, r, LatencyKind::Intended).unwrap()).collect();
    let prepared = start.elapsed();
    let resampled: Vec<Resampled> = samples.iter().map(|s| Resampled::run(s, 2_000, 7)).collect();
    let elapsed = start.elapsed();
    assert!(resampled.iter().all(|r| r.estimate(Metric::P99, 0.95).unwrap().has_interval()));
    eprintln!(
        "2,000 resamples × all 6 metrics of 60 windows, 3 ops (samples built in {:.1} ms): {:.0} ms for 4 samples",
        prepared.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e3
    );
    for r in &resampled {
        for m in [Metric::OpsPerS, Metric::Mean, Metric::P50, Metric::P999] {
            let e = r.estimate(m, 0.95).unwrap();
            assert!(e.lo <= e.point && e.point <= e.hi, "{m:?}: {e:?}");
        }
    }
}
