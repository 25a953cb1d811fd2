//! [`Sample`]: the windows of one operation (or the total) and one latency kind, laid out so
//! that a bootstrap resample costs microseconds instead of merging 60 HdrHistograms.
//!
//! The trick. A resample picks window i `w_i` times (Σ w_i = n). Merging those windows'
//! histograms gives, at every bucket b, a cumulative count `C(b) = Σ_i w_i · cum_i(b)`, where
//! `cum_i` is window i's own cumulative count. So instead of histograms we keep, once:
//! - the union of the buckets any window used (usually a few thousand, not HdrHistogram's
//!   31,744), each as the value HdrHistogram would report for it;
//! - every window's cumulative counts over that union, stored bucket-major
//!   (`cum[b · n + i]`), so evaluating `C(b)` reads n neighbouring numbers;
//! - per window: ok count, duration, histogram count and Σ value × count.
//!
//! A percentile q is then the first bucket with `C(b) ≥ ⌈q · N⌉` (HdrHistogram's own rule),
//! found by binary search — about 12 evaluations of `C` instead of a merge. The search is
//! narrowed further: a merged histogram's CDF is a weighted average of its windows' CDFs, so
//! its q-quantile lies between the lowest and highest q-quantile of any single window, which
//! are precomputed. Throughput is Σ w·ok / Σ w·duration and the mean Σ w·sum / Σ w·count.
//! Only the windows picked at least once (about 63 % of them) take part in each sum.
//!
//! With every weight 1, the figures equal those of the fully merged histogram exactly
//! (tested), so point estimates and intervals come from the same arithmetic.
//!
//! The typical p99 ([`Metric::P99Typical`]) is not a figure of the merged histogram: each
//! window's own p99 is computed once, and a resample's figure is the 20 %-trimmed mean of the
//! p99s of the windows it picked (each as often as picked).

use super::window::{Buckets, OpRef, WindowOp, Windows};
use super::{LatencyKind, Metric, METRICS};

/// The share trimmed from each end for the typical p99 (a 20 %-trimmed mean).
pub const TRIM: f64 = 0.2;

/// Percentile metrics, in the order of `Sample::bounds`.
const PERCENTILES: [Metric; 4] = [Metric::P50, Metric::P95, Metric::P99, Metric::P999];

/// One op's (or the total's) windows, compacted for resampling. See the module doc.
#[derive(Debug, Clone)]
pub struct Sample {
    n: usize,
    ok: Vec<u64>,
    duration_s: Vec<f64>,
    count: Vec<u64>,
    sum_ns: Vec<f64>,
    values_ns: Vec<u64>,
    cum: Vec<u64>,
    bounds: [(usize, usize); 4],
    /// Each window's own p99, ns (NaN for a window without latencies).
    window_p99_ns: Vec<f64>,
    /// Errors over all windows.
    pub errors: u64,
    /// Highest latency recorded in any window, ns.
    pub max_ns: u64,
}

/// A resample: the windows picked, each with how many times (only windows picked at all).
pub type Picks = [(usize, u64)];

impl Sample {
    /// `None` when the windows' runs never did `op`.
    pub fn of(windows: &Windows, op: &OpRef, kind: LatencyKind) -> Option<Sample> {
        if !windows.has_op(op) {
            return None;
        }
        let n = windows.len();
        let rows: Vec<_> = (0..n).filter_map(|i| windows.op(i, op)).collect();
        let values_ns = union_sorted(rows.iter().map(|r| &pick(kind, r).values_ns[..]).collect());
        let nb = values_ns.len();
        // Dense counts per window (bucket-major), then running sums down each window's column.
        let mut cum = vec![0u64; nb * n];
        for (i, r) in rows.iter().enumerate() {
            let b = pick(kind, r);
            let (values, counts) = (&b.values_ns[..], &b.counts[..]);
            let (mut at, mut k) = (0, 0);
            while k < values.len() {
                while values_ns[at] < values[k] {
                    at += 1;
                }
                cum[at * n + i] = counts[k];
                k += 1;
            }
        }
        let c = &mut cum[..];
        let mut j = n;
        while j < nb * n {
            c[j] += c[j - n];
            j += 1;
        }
        let count: Vec<u64> = rows.iter().map(|r| pick(kind, r).count()).collect();
        let mut s = Sample {
            n,
            ok: rows.iter().map(|r| r.ok).collect(),
            duration_s: windows.windows.iter().map(|w| w.duration_s).collect(),
            sum_ns: rows.iter().map(|r| pick(kind, r).sum_ns).collect(),
            errors: rows.iter().map(|r| r.errors).sum(),
            max_ns: rows.iter().map(|r| pick(kind, r).max_ns()).max().unwrap_or(0),
            count,
            values_ns,
            cum,
            bounds: [(0, 0); 4],
            window_p99_ns: Vec::new(),
        };
        s.window_p99_ns = (0..n)
            .map(|i| if s.count[i] > 0 { s.values_ns[s.first_at_least(&[(i, 1)], rank(0.99, s.count[i]), 0, nb).min(nb - 1)] as f64 } else { f64::NAN })
            .collect();
        for (k, m) in PERCENTILES.iter().enumerate() {
            let q = m.quantile().expect("a percentile");
            let per_window = (0..n).filter(|&i| s.count[i] > 0).map(|i| s.first_at_least(&[(i, 1)], rank(q, s.count[i]), 0, nb));
            s.bounds[k] = per_window.fold((usize::MAX, 0), |(lo, hi), b| (lo.min(b), hi.max(b)));
        }
        Some(s)
    }

    /// Number of windows.
    pub fn windows(&self) -> usize {
        self.n
    }

    /// Successful operations over all windows.
    pub fn ok(&self) -> u64 {
        self.ok.iter().sum()
    }

    /// The metric over all windows once each: the point estimate. NaN when undefined (no
    /// latencies recorded, or no measured time).
    pub fn point(&self, metric: Metric) -> f64 {
        self.points()[metric.index()]
    }

    /// Each window's own p99 (ns), for the windows that have latencies.
    pub fn window_p99s(&self) -> Vec<f64> {
        self.window_p99_ns.iter().copied().filter(|v| v.is_finite()).collect()
    }

    /// Every metric's point estimate, in [`Metric::ALL`] order.
    pub fn points(&self) -> [f64; METRICS] {
        let all: Vec<(usize, u64)> = (0..self.n).map(|i| (i, 1)).collect();
        self.statistics(&all)
    }

    /// The metric over a resample. NaN when undefined.
    pub fn statistic(&self, metric: Metric, picks: &Picks) -> f64 {
        self.statistics(picks)[metric.index()]
    }

    /// Every metric over a resample, in [`Metric::ALL`] order; NaN where undefined.
    ///
    /// The hot loop of the bootstrap. Written with plain indexed loops over slices rather
    /// than iterator chains so that the unoptimized test build (where the coverage trials
    /// run) is not dozens of times slower than a release build.
    pub fn statistics(&self, picks: &Picks) -> [f64; METRICS] {
        let (ok, duration_s, count, sum_ns) = (&self.ok[..], &self.duration_s[..], &self.count[..], &self.sum_ns[..]);
        let (mut ok_sum, mut d_sum, mut c_sum, mut s_sum) = (0u64, 0.0f64, 0u64, 0.0f64);
        let mut k = 0;
        while k < picks.len() {
            let (i, w) = picks[k];
            ok_sum += w * ok[i];
            d_sum += w as f64 * duration_s[i];
            c_sum += w * count[i];
            s_sum += w as f64 * sum_ns[i];
            k += 1;
        }
        let mut out = [f64::NAN; METRICS];
        if d_sum > 0.0 {
            out[Metric::OpsPerS.index()] = ok_sum as f64 / d_sum;
        }
        if c_sum == 0 {
            return out;
        }
        out[Metric::Mean.index()] = s_sum / c_sum as f64;
        let last = self.values_ns.len() - 1;
        for (j, m) in PERCENTILES.iter().enumerate() {
            let (lo, hi) = self.bounds[j];
            let r = rank(m.quantile().expect("a percentile"), c_sum);
            // The bounds hold in exact arithmetic; the widening guards against the last
            // bit of floating-point rounding in `rank`.
            let mut b = self.first_at_least(picks, r, lo, hi + 1);
            if b > hi {
                b = self.first_at_least(picks, r, hi + 1, last + 1);
            } else if b == lo && lo > 0 && self.cumulative(picks, lo - 1) >= r {
                b = self.first_at_least(picks, r, 0, lo);
            }
            out[m.index()] = self.values_ns[b.min(last)] as f64;
        }
        out[Metric::P99Typical.index()] = self.typical_p99(picks);
        out
    }

    /// The 20 %-trimmed mean of the picked windows' p99s, each window as often as picked.
    fn typical_p99(&self, picks: &Picks) -> f64 {
        let mut v: Vec<(f64, u64)> = Vec::with_capacity(picks.len());
        let mut k = 0;
        while k < picks.len() {
            let (i, w) = picks[k];
            if self.window_p99_ns[i].is_finite() {
                v.push((self.window_p99_ns[i], w));
            }
            k += 1;
        }
        v.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        trimmed_mean_weighted(&v, TRIM)
    }

    /// `C(b)`: the merged cumulative count at bucket `b`.
    #[inline]
    fn cumulative(&self, picks: &Picks, b: usize) -> u64 {
        let row = &self.cum[b * self.n..(b + 1) * self.n];
        let (mut c, mut k) = (0, 0);
        while k < picks.len() {
            let (i, w) = picks[k];
            c += w * row[i];
            k += 1;
        }
        c
    }

    /// The first bucket in `[from, to)` where `C(b) ≥ r`; `to` if none.
    fn first_at_least(&self, picks: &Picks, r: u64, from: usize, to: usize) -> usize {
        let (mut lo, mut hi) = (from, to);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.cumulative(picks, mid) >= r {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }
}

/// The sorted union of sorted lists, by pairwise merges (plain loops: see `statistics`).
fn union_sorted(mut lists: Vec<&[u64]>) -> Vec<u64> {
    let mut merged: Vec<Vec<u64>> = Vec::new();
    while let Some(a) = lists.pop() {
        merged.push(merge(a, lists.pop().unwrap_or(&[])));
    }
    while merged.len() > 1 {
        let (a, b) = (merged.remove(0), merged.remove(0));
        merged.push(merge(&a, &b));
    }
    merged.pop().unwrap_or_default()
}

/// Merges two sorted lists, keeping one of equal values.
fn merge(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let v = if j == b.len() || (i < a.len() && a[i] <= b[j]) { a[i] } else { b[j] };
        if out.last() != Some(&v) {
            out.push(v);
        }
        if i < a.len() && a[i] == v {
            i += 1;
        }
        if j < b.len() && b[j] == v {
            j += 1;
        }
    }
    out
}

fn pick(kind: LatencyKind, r: &WindowOp) -> &Buckets {
    match kind {
        LatencyKind::Intended => &r.intended,
        LatencyKind::Service => &r.service,
    }
}

/// The `trim`-trimmed mean of values given with their counts (sorted by value): the lowest
/// and the highest ⌊trim · N⌋ of the N values left out; NaN for none.
pub fn trimmed_mean_weighted(sorted: &[(f64, u64)], trim: f64) -> f64 {
    let total: u64 = sorted.iter().map(|(_, w)| w).sum();
    if total == 0 {
        return f64::NAN;
    }
    let g = (trim * total as f64).floor() as u64;
    let (from, to) = (g, total - g);
    let (mut at, mut sum) = (0u64, 0.0);
    for &(v, w) in sorted {
        // the part of this value's copies that lies in [from, to)
        let kept = (at + w).min(to).saturating_sub(at.max(from));
        sum += v * kept as f64;
        at += w;
    }
    sum / (to - from) as f64
}

/// HdrHistogram's rank of quantile q among `total` values: ⌈q·total⌉, at least 1.
fn rank(q: f64, total: u64) -> u64 {
    ((q * total as f64).ceil() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::window::tests::interval;
    use crate::stats::{new_histogram, OpStats, Phase};
    use crate::store::StoredInterval;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// 40 one-second intervals with skewed latencies that drift from interval to interval.
    fn skewed_run() -> Vec<StoredInterval> {
        let mut rng = SmallRng::seed_from_u64(7);
        (0..40u32)
            .map(|index| {
                let mut s = OpStats::default();
                for _ in 0..rng.gen_range(0..400) {
                    let v = (rng.gen::<f64>().powi(4) * 50e6) as u64 + 200_000 + u64::from(index) * 10_000;
                    s.record_ok(v, v / 2);
                }
                let start_ms = u64::from(index) * 1000;
                StoredInterval { index, phase: Phase::Run, start_ms, end_ms: start_ms + 1000, op: "read".into(), stats: s, backlog: 0 }
            })
            .collect()
    }

    #[test]
    fn point_estimates_equal_the_merged_histogram() {
        let ivs = skewed_run();
        let mut merged = new_histogram();
        ivs.iter().for_each(|iv| merged.add(&iv.stats.intended).unwrap());
        let w = Windows::of_run(&ivs, 4.0).unwrap();
        let s = Sample::of(&w, &OpRef::Op("read".into()), LatencyKind::Intended).unwrap();
        assert_eq!(s.windows(), 10);
        for m in [Metric::P50, Metric::P95, Metric::P99, Metric::P999] {
            assert_eq!(s.point(m), merged.value_at_quantile(m.quantile().unwrap()) as f64, "{m:?}");
        }
        assert!((s.point(Metric::Mean) - merged.mean()).abs() < 1e-6 * merged.mean());
        assert_eq!(s.max_ns, merged.max());
        assert_eq!(s.point(Metric::OpsPerS), merged.len() as f64 / 40.0);
    }

    #[test]
    fn any_resample_equals_merging_those_windows() {
        let ivs = skewed_run();
        let w = Windows::of_run(&ivs, 2.0).unwrap();
        let s = Sample::of(&w, &OpRef::Total, LatencyKind::Service).unwrap();
        let mut rng = SmallRng::seed_from_u64(11);
        for _ in 0..50 {
            let mut weights = vec![0u64; s.windows()];
            (0..s.windows()).for_each(|_| weights[rng.gen_range(0..s.windows())] += 1);
            let picks: Vec<(usize, u64)> = weights.iter().enumerate().filter(|(_, w)| **w > 0).map(|(i, w)| (i, *w)).collect();
            let mut merged = new_histogram();
            for &(i, k) in &picks {
                for iv in &ivs[i * 2..i * 2 + 2] {
                    (0..k).for_each(|_| merged.add(&iv.stats.service).unwrap());
                }
            }
            for m in [Metric::P50, Metric::P95, Metric::P99, Metric::P999] {
                assert_eq!(s.statistic(m, &picks), merged.value_at_quantile(m.quantile().unwrap()) as f64, "{m:?}");
            }
        }
    }

    #[test]
    fn the_typical_p99_is_the_trimmed_mean_of_the_windows_p99s() {
        let ivs = skewed_run();
        let w = Windows::of_run(&ivs, 4.0).unwrap();
        let s = Sample::of(&w, &OpRef::Op("read".into()), LatencyKind::Intended).unwrap();
        let mut p99s: Vec<f64> = (0..10)
            .map(|i| {
                let mut h = new_histogram();
                ivs[i * 4..i * 4 + 4].iter().for_each(|iv| h.add(&iv.stats.intended).unwrap());
                h.value_at_quantile(0.99) as f64
            })
            .collect();
        assert_eq!(s.window_p99s(), p99s);
        p99s.sort_by(f64::total_cmp);
        // 10 windows: the 2 lowest and the 2 highest left out
        let want = p99s[2..8].iter().sum::<f64>() / 6.0;
        assert!((s.point(Metric::P99Typical) - want).abs() < 1e-6, "{} {want}", s.point(Metric::P99Typical));
        // a window picked twice counts twice
        assert_eq!(trimmed_mean_weighted(&[(1.0, 1), (2.0, 3), (10.0, 1)], 0.2), 2.0);
        assert_eq!(trimmed_mean_weighted(&[(1.0, 2), (5.0, 2), (9.0, 1)], 0.2), (1.0 + 5.0 + 5.0) / 3.0);
        assert!(trimmed_mean_weighted(&[], 0.2).is_nan());
    }

    #[test]
    fn bucket_lists_merge_into_their_sorted_union() {
        assert_eq!(union_sorted(vec![&[1, 5, 9], &[2, 5], &[], &[9, 10], &[0]]), [0, 1, 2, 5, 9, 10]);
        assert_eq!(union_sorted(vec![]), Vec::<u64>::new());
        assert_eq!(merge(&[3, 3, 4], &[3]), [3, 4]);
    }

    #[test]
    fn empty_samples_are_undefined_and_unknown_ops_absent() {
        let ivs: Vec<_> = (0..10).flat_map(|i| interval(i, Phase::Run, 0, 1000, 0)).collect();
        let w = Windows::of_run(&ivs, 5.0).unwrap();
        let s = Sample::of(&w, &OpRef::Op("read".into()), LatencyKind::Intended).unwrap();
        assert!(s.point(Metric::P99).is_nan() && s.point(Metric::Mean).is_nan());
        assert_eq!(s.point(Metric::OpsPerS), 0.0);
        assert!(Sample::of(&w, &OpRef::Op("scan".into()), LatencyKind::Intended).is_none());
    }
}
