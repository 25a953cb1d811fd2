//! Where the time moved between two profiles (two runs, or the runs of two variants), per
//! operation: each side's weights divided by its operations, so a variant that did more work
//! is not "slower" for it. The result is the differential input of a flame graph (every stack
//! with its weight before and after) and, in words, the frames that grew and shrank most.

use super::top::top_frames;
use std::collections::{BTreeMap, BTreeSet};

/// Weights per operation of two sides, on one integer scale.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileDiff {
    /// (stack, before, after), scaled: the heavier side sums to about [`SCALE`].
    pub lines: Vec<(String, u64, u64)>,
    /// Weight per operation of one scaled unit.
    pub unit_per_op: f64,
}

/// What the heavier side of a difference sums to.
pub const SCALE: f64 = 1_000_000.0;

/// A frame whose total weight per operation changed.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameChange {
    pub frame: String,
    /// Total weight per operation, before and after.
    pub before_per_op: f64,
    pub after_per_op: f64,
}

impl FrameChange {
    /// The change as a share of the whole before side's weight per operation.
    pub fn share_of(&self, before_total_per_op: f64) -> f64 {
        if before_total_per_op > 0.0 {
            (self.after_per_op - self.before_per_op) / before_total_per_op
        } else {
            0.0
        }
    }
}

impl ProfileDiff {
    /// `before` and `after` (folded stacks) per operation; `None` when a side has no operation
    /// or no weight.
    pub fn per_op(before: &BTreeMap<String, u64>, before_ops: f64, after: &BTreeMap<String, u64>, after_ops: f64) -> Option<ProfileDiff> {
        if !(before_ops > 0.0 && after_ops > 0.0) {
            return None;
        }
        let sum = |m: &BTreeMap<String, u64>| m.values().map(|w| *w as f64).sum::<f64>();
        let (sum_b, sum_a) = (sum(before) / before_ops, sum(after) / after_ops);
        let heavier = sum_b.max(sum_a);
        if sum_b <= 0.0 || sum_a <= 0.0 {
            return None;
        }
        let scale = SCALE / heavier;
        let stacks: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
        let lines = stacks
            .into_iter()
            .map(|s| {
                let b = before.get(s).copied().unwrap_or(0) as f64 / before_ops * scale;
                let a = after.get(s).copied().unwrap_or(0) as f64 / after_ops * scale;
                (s.clone(), b.round() as u64, a.round() as u64)
            })
            .filter(|(_, b, a)| *b > 0 || *a > 0)
            .collect();
        Some(ProfileDiff { lines, unit_per_op: 1.0 / scale })
    }

    /// Total weight per operation of each side.
    pub fn totals_per_op(&self) -> (f64, f64) {
        let (b, a) = self.lines.iter().fold((0u64, 0u64), |(b, a), l| (b + l.1, a + l.2));
        (b as f64 * self.unit_per_op, a as f64 * self.unit_per_op)
    }

    /// The `n` frames whose total weight per operation grew most, and the `n` that shrank most.
    pub fn changes(&self, n: usize) -> (Vec<FrameChange>, Vec<FrameChange>) {
        let side = |pick: fn(&(String, u64, u64)) -> u64| -> BTreeMap<String, u64> { self.lines.iter().map(|l| (l.0.clone(), pick(l))).collect() };
        let totals =
            |m: &BTreeMap<String, u64>| -> BTreeMap<String, u64> { top_frames(m, usize::MAX).into_iter().map(|f| (f.frame, f.total_weight)).collect() };
        let (before, after) = (totals(&side(|l| l.1)), totals(&side(|l| l.2)));
        let frames: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
        let mut all: Vec<FrameChange> = frames
            .into_iter()
            .map(|f| FrameChange {
                frame: f.clone(),
                before_per_op: before.get(f).copied().unwrap_or(0) as f64 * self.unit_per_op,
                after_per_op: after.get(f).copied().unwrap_or(0) as f64 * self.unit_per_op,
            })
            .collect();
        let delta = |c: &FrameChange| c.after_per_op - c.before_per_op;
        all.sort_by(|x, y| delta(y).total_cmp(&delta(x)).then_with(|| x.frame.cmp(&y.frame)));
        let grew: Vec<FrameChange> = all.iter().filter(|c| delta(c) > 0.0).take(n).cloned().collect();
        let shrank: Vec<FrameChange> = all.iter().rev().filter(|c| delta(c) < 0.0).take(n).cloned().collect();
        (grew, shrank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(lines: &[(&str, u64)]) -> BTreeMap<String, u64> {
        lines.iter().map(|(s, w)| (s.to_string(), *w)).collect()
    }

    #[test]
    fn weights_are_compared_per_operation() {
        // the second side did twice the operations with the same work per operation in `read`,
        // and twice the work per operation in `write`
        let before = folded(&[("main;read", 100), ("main;write", 100)]);
        let after = folded(&[("main;read", 200), ("main;write", 400), ("main;gc", 50)]);
        let d = ProfileDiff::per_op(&before, 1000.0, &after, 2000.0).unwrap();
        let line = |s: &str| d.lines.iter().find(|l| l.0 == s).cloned().unwrap();
        assert_eq!(line("main;read").1, line("main;read").2, "the same per operation");
        assert!(line("main;write").2.abs_diff(2 * line("main;write").1) <= 1, "twice the work per operation, up to rounding");
        assert_eq!(line("main;gc").1, 0);
        let (b, a) = d.totals_per_op();
        assert!((b - 0.2).abs() < 1e-6 && (a - 0.325).abs() < 1e-6, "{b} {a}");
        let (grew, shrank) = d.changes(2);
        assert_eq!(grew.iter().map(|c| c.frame.as_str()).collect::<Vec<_>>(), ["main", "write"]);
        assert!((grew[1].share_of(b) - 0.5).abs() < 1e-4, "{}", grew[1].share_of(b));
        assert!(shrank.is_empty(), "{shrank:?}");
        assert!(ProfileDiff::per_op(&before, 0.0, &after, 1.0).is_none());
        assert!(ProfileDiff::per_op(&BTreeMap::new(), 1.0, &after, 1.0).is_none());
    }
}
