//! The frames a profile spends most in, for the Markdown report, the terminal and the slices
//! of a run: per frame, its own weight (where it was the innermost frame, "self") and its
//! total (every stack it is part of, counted once per stack).

use std::collections::{BTreeMap, HashMap};

/// One frame's share of a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct TopFrame {
    pub frame: String,
    /// Weight where it was the innermost frame.
    pub self_weight: u64,
    /// Weight of every stack it is part of.
    pub total_weight: u64,
}

/// The `n` frames with the most self weight (ties by total, then name), from folded stacks.
pub fn top_frames(folded: &BTreeMap<String, u64>, n: usize) -> Vec<TopFrame> {
    let mut per: HashMap<&str, (u64, u64)> = HashMap::new();
    for (stack, w) in folded {
        let frames: Vec<&str> = stack.split(';').collect();
        if let Some(leaf) = frames.last() {
            let e = per.entry(leaf).or_default();
            e.0 = e.0.saturating_add(*w);
        }
        let mut seen: Vec<&str> = Vec::with_capacity(frames.len());
        for f in frames {
            if !seen.contains(&f) {
                seen.push(f);
                let e = per.entry(f).or_default();
                e.1 = e.1.saturating_add(*w);
            }
        }
    }
    let mut all: Vec<TopFrame> = per.into_iter().map(|(f, (s, t))| TopFrame { frame: f.to_string(), self_weight: s, total_weight: t }).collect();
    all.sort_by(|a, b| b.self_weight.cmp(&a.self_weight).then(b.total_weight.cmp(&a.total_weight)).then_with(|| a.frame.cmp(&b.frame)));
    all.truncate(n);
    all
}

/// The frames of the request path worth naming in a sentence: the innermost frames of
/// Cassandra's own packages (`org.apache.cassandra.`) with the most total weight.
pub fn top_cassandra_frames(folded: &BTreeMap<String, u64>, n: usize) -> Vec<TopFrame> {
    let mut all = top_frames(folded, usize::MAX);
    all.retain(|f| f.frame.starts_with("org.apache.cassandra."));
    all.sort_by(|a, b| b.self_weight.cmp(&a.self_weight).then(b.total_weight.cmp(&a.total_weight)));
    all.truncate(n);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_and_total_weights_count_each_stack_once() {
        let folded: BTreeMap<String, u64> = [
            ("main;read;decode".to_string(), 5),
            ("main;write".to_string(), 4),
            ("main;read;read".to_string(), 2),
            ("org.apache.cassandra.db.Memtable.put".to_string(), 1),
        ]
        .into();
        let top = top_frames(&folded, 3);
        assert_eq!(top[0], TopFrame { frame: "decode".into(), self_weight: 5, total_weight: 5 });
        assert_eq!(top[1], TopFrame { frame: "write".into(), self_weight: 4, total_weight: 4 });
        assert_eq!(top[2], TopFrame { frame: "read".into(), self_weight: 2, total_weight: 7 }, "a recursive frame counts once per stack");
        let c = top_cassandra_frames(&folded, 5);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].frame, "org.apache.cassandra.db.Memtable.put");
    }
}
