//! Verified reads compared between sides (`compare`, `experiment`): per side and per operation
//! that verified its reads, the share of them that were not what was written (stale, missing,
//! corrupt, resurrected, expired) with an interval, and each side's change against the
//! baseline with its own — so ONE against QUORUM compares the stale-read rate as it compares
//! p99. Reads of one window (or, for a side of several runs, of one run) are not independent
//! — violations come in bursts, while a node is away — so the interval is the ratio
//! estimator's over those clusters (Student's t on their count); it is never narrower than the
//! Wilson interval of the counts, which keeps a side with no violation from an interval of
//! zero width.

use super::distributions::{normal_quantile, t_quantile};
use super::study::Group;
use crate::stats::{is_sub_op, Phase};
use crate::store::{IntervalFigures, RunId, Store, StoreError};
use crate::verify::VerifyCounts;
use serde::Serialize;

/// One side's verified reads of one operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideRate {
    pub side: String,
    pub op: String,
    pub counts: VerifyCounts,
    /// Violations per verified read, and the interval.
    pub rate: f64,
    pub low: f64,
    pub high: f64,
    /// The clusters the interval stands on: windows of one run, or runs.
    pub clusters: usize,
}

/// A side's rate minus the baseline's, with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RateChange {
    pub diff: f64,
    pub low: f64,
    pub high: f64,
    /// The interval excludes 0.
    pub significant: bool,
}

/// Every side's verified reads, and their changes against the first side's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifiedComparison {
    pub confidence: f64,
    pub rows: Vec<(SideRate, Option<RateChange>)>,
}

/// Per cluster: (violations, verified reads).
type Clusters = Vec<(u64, u64)>;

/// The rate of one side from its clusters, at `confidence`.
pub fn side_rate(side: &str, op: &str, counts: VerifyCounts, clusters: &Clusters, confidence: f64) -> SideRate {
    let (v, c) = (counts.violations() as f64, counts.checked() as f64);
    let rate = if c > 0.0 { v / c } else { 0.0 };
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let (wl, wh) = wilson(v, c, z);
    let kept: Vec<&(u64, u64)> = clusters.iter().filter(|(_, n)| *n > 0).collect();
    let n = kept.len();
    let (mut low, mut high) = (wl, wh);
    if n >= 2 && c > 0.0 {
        let ss: f64 = kept.iter().map(|(vi, ci)| (*vi as f64 - rate * *ci as f64).powi(2)).sum();
        let se = (n as f64 / (n as f64 - 1.0) * ss).sqrt() / c;
        let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, n as f64 - 1.0);
        low = low.min((rate - t * se).max(0.0));
        high = high.max((rate + t * se).min(1.0));
    }
    SideRate { side: side.to_string(), op: op.to_string(), counts, rate, low, high, clusters: n }
}

/// Wilson's score interval of `v` successes in `n`.
fn wilson(v: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let p = v / n;
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z * ((p * (1.0 - p) / n) + z * z / (4.0 * n * n)).sqrt() / d;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// `b` against `a`: the difference of the rates, its standard error from each side's interval.
pub fn change(a: &SideRate, b: &SideRate, confidence: f64) -> RateChange {
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let se = |s: &SideRate| (s.high - s.low) / (2.0 * z);
    let diff = b.rate - a.rate;
    let half = z * (se(a).powi(2) + se(b).powi(2)).sqrt();
    RateChange { diff, low: diff - half, high: diff + half, significant: diff - half > 0.0 || diff + half < 0.0 }
}

/// Every interval of each of `runs`' measured phase (its run phase, else its load) that is
/// not a sub-operation, with its cluster: the run's index when there are several runs, else
/// the window of `window_s` the interval starts in.
pub(super) fn for_each_measured(store: &Store, runs: &[RunId], window_s: f64, mut f: impl FnMut(&IntervalFigures, usize)) -> Result<(), StoreError> {
    for (run_index, run) in runs.iter().enumerate() {
        let mut rows: Vec<IntervalFigures> = Vec::new();
        store.for_each_interval_figures(*run, |iv| {
            rows.push(iv);
            Ok(())
        })?;
        let phase = if rows.iter().any(|r| r.phase == Phase::Run) { Phase::Run } else { Phase::Load };
        let t0 = rows.iter().filter(|r| r.phase == phase).map(|r| r.start_ms).min().unwrap_or(0);
        for r in rows.iter().filter(|r| r.phase == phase && !is_sub_op(r.op())) {
            let key = if runs.len() > 1 { run_index } else { (r.start_ms.saturating_sub(t0) as f64 / (window_s * 1000.0)) as usize };
            f(r, key);
        }
    }
    Ok(())
}

/// The verified reads of `groups` (the first the baseline), in windows of `window_s` of each
/// run's measured phase; `None` when no side verified a read.
pub fn compare_verified(store: &Store, groups: &[Group], window_s: f64, confidence: f64) -> Result<Option<VerifiedComparison>, StoreError> {
    let mut sides: Vec<Vec<SideRate>> = Vec::new();
    for g in groups {
        // per operation: counts, and clusters (windows of a lone run, or runs)
        let mut ops: Vec<(String, VerifyCounts, Clusters)> = Vec::new();
        for_each_measured(store, &g.runs, window_s, |r, key| {
            let Some(c) = r.summary.verify else { return };
            let i = match ops.iter().position(|(o, ..)| o == r.op()) {
                Some(i) => i,
                None => {
                    ops.push((r.op().to_string(), VerifyCounts::default(), Vec::new()));
                    ops.len() - 1
                }
            };
            let (_, total, clusters) = &mut ops[i];
            total.merge(&c);
            add_to(clusters, key, c.violations(), c.checked());
        })?;
        sides.push(ops.into_iter().map(|(op, counts, clusters)| side_rate(&g.label, &op, counts, &clusters, confidence)).collect());
    }
    if sides.iter().all(Vec::is_empty) {
        return Ok(None);
    }
    let mut rows = Vec::new();
    for (i, side) in sides.iter().enumerate() {
        for s in side {
            let base = (i > 0).then(|| sides[0].iter().find(|b| b.op == s.op)).flatten();
            rows.push((s.clone(), base.map(|b| change(b, s, confidence))));
        }
    }
    Ok(Some(VerifiedComparison { confidence, rows }))
}

/// Adds one interval's violations and verified reads to cluster `key`.
fn add_to(clusters: &mut Clusters, key: usize, v: u64, c: u64) {
    while clusters.len() <= key {
        clusters.push((0, 0));
    }
    clusters[key].0 += v;
    clusters[key].1 += c;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(ok: u64, stale: u64) -> VerifyCounts {
        VerifyCounts { ok, stale, ..VerifyCounts::default() }
    }

    #[test]
    fn a_side_without_violations_still_has_an_interval_above_zero() {
        let s = side_rate("quorum", "read", counts(40_000, 0), &vec![(0, 4_000); 10], 0.95);
        assert_eq!((s.rate, s.low), (0.0, 0.0));
        assert!(s.high > 0.0 && s.high < 0.0002, "Wilson's upper bound, about 3.8/40,000: {}", s.high);
    }

    #[test]
    fn bursts_widen_the_interval_beyond_counting_reads_as_independent() {
        // 120 violations in 40,000 reads, all in one of ten windows
        let mut bursty = vec![(0, 4_000); 10];
        bursty[3] = (120, 4_000);
        let even = vec![(12, 4_000); 10];
        let (b, e) = (side_rate("one", "read", counts(39_880, 120), &bursty, 0.95), side_rate("one", "read", counts(39_880, 120), &even, 0.95));
        assert!((b.rate - 0.003).abs() < 1e-12 && (e.rate - 0.003).abs() < 1e-12);
        assert!(b.high - b.low > 3.0 * (e.high - e.low), "a burst is one cluster's worth of evidence: {b:?} {e:?}");
        assert!(e.low > 0.002 && e.high < 0.004, "{e:?}");
    }

    #[test]
    fn a_change_is_significant_when_its_interval_excludes_zero() {
        let quorum = side_rate("quorum", "read", counts(40_000, 0), &vec![(0, 4_000); 10], 0.95);
        let one = side_rate("one", "read", counts(39_600, 400), &vec![(40, 4_000); 10], 0.95);
        let c = change(&quorum, &one, 0.95);
        assert!((c.diff - 0.01).abs() < 1e-12 && c.significant && c.low > 0.0, "{c:?}");
        let same = change(&quorum, &side_rate("q2", "read", counts(40_000, 1), &vec![(0, 4_000); 10], 0.95), 0.95);
        assert!(!same.significant, "{same:?}");
    }
}
