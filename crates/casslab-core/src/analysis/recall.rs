//! Recall of vector searches as a figure with an interval suited to a proportion, and judged
//! between sides (`compare`, `experiment`). A side's recall is the hits over the possible hits
//! of its judged searches. A search's recall lies in [0, 1], so its variance is at most
//! p(1 − p): Wilson's score interval with one trial per judged search is a safe floor; searches
//! of one window (or, for a side of several runs, of one run) share the moment's load and
//! index state, so the interval is also the ratio estimator's over those clusters (Student's
//! t on their count), and the wider of the two is kept. A change is the difference of two
//! recalls in percentage points with its interval; the changes of one comparison are judged as
//! a family (Bonferroni over the operations that search), like the latency figures.

use super::distributions::{normal_quantile, t_quantile};
use super::study::Group;
use crate::recall::RecallCounts;
use crate::store::{Store, StoreError};
use serde::Serialize;

/// One side's recall of one operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideRecall {
    pub side: String,
    pub op: String,
    pub counts: RecallCounts,
    pub recall: f64,
    pub low: f64,
    pub high: f64,
    /// The clusters the interval stands on: windows of one run, or runs.
    pub clusters: usize,
}

/// A side's recall minus the baseline's (percentage points as a fraction), with its interval
/// at the family's confidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RecallChange {
    pub diff: f64,
    pub low: f64,
    pub high: f64,
    /// The interval excludes 0.
    pub significant: bool,
}

impl RecallChange {
    /// The verdict in words: `recall lower by 3.1 points (…)`, or no difference detected.
    pub fn words(&self) -> String {
        let pp = |x: f64| format!("{:+.1}", 100.0 * x);
        if self.significant {
            let dir = if self.diff < 0.0 { "lower" } else { "higher" };
            format!("recall {dir} by {:.1} points ({} … {} points)", 100.0 * self.diff.abs(), pp(self.low), pp(self.high))
        } else {
            format!("no difference in recall detected ({} points, {} … {})", pp(self.diff), pp(self.low), pp(self.high))
        }
    }
}

/// Every side's recall, and their changes against the first side's, judged as one family.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallComparison {
    pub confidence: f64,
    /// The confidence of each change's interval (Bonferroni over the family).
    pub each_confidence: f64,
    pub rows: Vec<(SideRecall, Option<RecallChange>)>,
}

/// Per cluster: (hits, possible, judged searches).
pub type Clusters = Vec<(u64, u64, u64)>;

/// The recall of one side from its clusters, at `confidence`.
pub fn side_recall(side: &str, op: &str, counts: RecallCounts, clusters: &Clusters, confidence: f64) -> SideRecall {
    let recall = counts.recall().unwrap_or(0.0);
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let (mut low, mut high) = wilson(recall, counts.judged as f64, z);
    let kept: Vec<&(u64, u64, u64)> = clusters.iter().filter(|c| c.1 > 0).collect();
    let (n, possible) = (kept.len(), counts.possible as f64);
    if n >= 2 && possible > 0.0 {
        let ss: f64 = kept.iter().map(|(h, p, _)| (*h as f64 - recall * *p as f64).powi(2)).sum();
        let se = (n as f64 / (n as f64 - 1.0) * ss).sqrt() / possible;
        let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, n as f64 - 1.0);
        low = low.min((recall - t * se).max(0.0));
        high = high.max((recall + t * se).min(1.0));
    }
    SideRecall { side: side.to_string(), op: op.to_string(), counts, recall, low, high, clusters: n }
}

/// Wilson's score interval of a proportion `p` over `n` trials.
pub fn wilson(p: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z * ((p * (1.0 - p) / n) + z * z / (4.0 * n * n)).sqrt() / d;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// `b` against `a` at `confidence` (each side's interval taken at the confidence it was made
/// with, `made_at`).
pub fn change(a: &SideRecall, b: &SideRecall, made_at: f64, confidence: f64) -> RecallChange {
    let z_made = normal_quantile(1.0 - (1.0 - made_at) / 2.0);
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let se = |s: &SideRecall| (s.high - s.low) / (2.0 * z_made);
    let diff = b.recall - a.recall;
    let half = z * (se(a).powi(2) + se(b).powi(2)).sqrt();
    RecallChange { diff, low: diff - half, high: diff + half, significant: diff - half > 0.0 || diff + half < 0.0 }
}

/// The recall of `groups` (the first the baseline), in windows of `window_s` of each run's
/// measured phase; `None` when no side searched vectors.
pub fn compare_recall(store: &Store, groups: &[Group], window_s: f64, confidence: f64) -> Result<Option<RecallComparison>, StoreError> {
    let mut sides: Vec<Vec<SideRecall>> = Vec::new();
    for g in groups {
        let mut ops: Vec<(String, RecallCounts, Clusters)> = Vec::new();
        super::verified::for_each_measured(store, &g.runs, window_s, |r, key| {
            let Some(c) = r.summary.recall else { return };
            let i = match ops.iter().position(|(o, ..)| *o == r.summary.op) {
                Some(i) => i,
                None => {
                    ops.push((r.summary.op.clone(), RecallCounts::default(), Vec::new()));
                    ops.len() - 1
                }
            };
            let (_, total, clusters) = &mut ops[i];
            total.merge(&c);
            while clusters.len() <= key {
                clusters.push((0, 0, 0));
            }
            clusters[key].0 += c.hits;
            clusters[key].1 += c.possible;
            clusters[key].2 += c.judged;
        })?;
        sides.push(
            ops.into_iter().filter(|(_, c, _)| c.judged > 0).map(|(op, counts, clusters)| side_recall(&g.label, &op, counts, &clusters, confidence)).collect(),
        );
    }
    if sides.iter().all(Vec::is_empty) {
        return Ok(None);
    }
    // one family: every searching operation of every side against the baseline
    let family = sides.iter().skip(1).map(|s| s.iter().filter(|x| sides[0].iter().any(|b| b.op == x.op)).count()).sum::<usize>().max(1);
    let each = 1.0 - (1.0 - confidence) / family as f64;
    let mut rows = Vec::new();
    for (i, side) in sides.iter().enumerate() {
        for s in side {
            let base = (i > 0).then(|| sides[0].iter().find(|b| b.op == s.op)).flatten();
            rows.push((s.clone(), base.map(|b| change(b, s, confidence, each))));
        }
    }
    Ok(Some(RecallComparison { confidence, each_confidence: each, rows }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(judged: u64, hits: u64) -> RecallCounts {
        RecallCounts { k: 10, judged, hits, possible: judged * 10, ..RecallCounts::default() }
    }

    #[test]
    fn a_perfect_recall_still_has_an_interval_below_one() {
        let s = side_recall("a", "search", counts(400, 4_000), &vec![(400, 400, 40); 10], 0.95);
        assert_eq!((s.recall, s.high), (1.0, 1.0));
        assert!(s.low < 1.0 && s.low > 0.98, "Wilson's lower bound over 400 searches: {}", s.low);
    }

    #[test]
    fn windows_that_disagree_widen_the_interval() {
        let even = vec![(360, 400, 40); 10];
        let mut uneven = vec![(400, 400, 40); 5];
        uneven.extend(vec![(320, 400, 40); 5]);
        let (e, u) = (side_recall("a", "s", counts(400, 3_600), &even, 0.95), side_recall("a", "s", counts(400, 3_600), &uneven, 0.95));
        assert!((e.recall - 0.9).abs() < 1e-12 && (u.recall - 0.9).abs() < 1e-12);
        assert!(u.high - u.low > e.high - e.low, "{u:?} {e:?}");
        assert!(e.low < 0.9 && e.high > 0.9);
    }

    #[test]
    fn a_change_is_judged_in_points() {
        let a = side_recall("a", "s", counts(1_000, 9_500), &vec![(950, 1_000, 100); 10], 0.95);
        let b = side_recall("b", "s", counts(1_000, 8_500), &vec![(850, 1_000, 100); 10], 0.95);
        let c = change(&a, &b, 0.95, 0.95);
        assert!((c.diff + 0.10).abs() < 1e-9 && c.significant, "{c:?}");
        assert!(c.words().starts_with("recall lower by 10.0 points"), "{}", c.words());
        let same = change(&a, &side_recall("c", "s", counts(1_000, 9_490), &vec![(949, 1_000, 100); 10], 0.95), 0.95, 0.95);
        assert!(!same.significant && same.words().starts_with("no difference in recall detected"), "{same:?}");
    }
}
