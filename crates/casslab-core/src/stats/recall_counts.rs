//! What the recall judge of vector searches found over some span (an interval, a phase), per
//! operation: searches judged and skipped, hits among the exact k nearest, the judge's CPU.
//! The counts travel with an operation's other figures (`OpStats::recall`) into the store,
//! summaries and reports; judging is `crate::recall`'s.

use serde::{Deserialize, Serialize};

/// What the judge found over some span (an interval, a phase), per operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecallCounts {
    /// The k of the searches (their LIMIT; the largest when they differ).
    pub k: u32,
    /// Searches judged against the exact answer.
    pub judged: u64,
    /// Rows they returned that are among the exact k nearest (ties counted).
    pub hits: u64,
    /// The most they could have returned: k per search (fewer when fewer vectors exist).
    pub possible: u64,
    /// Searches that completed but were not judged (the judge busy, or the record unknown).
    pub skipped: u64,
    /// CPU time the judge spent (exact searches and following the record), in nanoseconds.
    pub cost_ns: u64,
    /// The most vectors an exact search went through.
    pub corpus: u64,
}

impl RecallCounts {
    pub fn merge(&mut self, o: &RecallCounts) {
        self.k = self.k.max(o.k);
        self.judged += o.judged;
        self.hits += o.hits;
        self.possible += o.possible;
        self.skipped += o.skipped;
        self.cost_ns += o.cost_ns;
        self.corpus = self.corpus.max(o.corpus);
    }

    /// The share of the exact neighbours returned (`None`: nothing judged).
    pub fn recall(&self) -> Option<f64> {
        (self.possible > 0).then(|| self.hits as f64 / self.possible as f64)
    }

    /// Mean CPU time of one judged search, in milliseconds.
    pub fn cost_ms_per_search(&self) -> Option<f64> {
        (self.judged > 0).then(|| self.cost_ns as f64 / 1e6 / self.judged as f64)
    }

    /// Whether anything was searched at all (judged or not).
    pub fn is_empty(&self) -> bool {
        self.judged == 0 && self.skipped == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_say_their_recall() {
        let mut a = RecallCounts { k: 10, judged: 3, hits: 27, possible: 30, skipped: 1, cost_ns: 3_000_000, corpus: 100 };
        a.merge(&RecallCounts { k: 10, judged: 1, hits: 10, possible: 10, skipped: 0, cost_ns: 1_000_000, corpus: 120 });
        assert_eq!((a.judged, a.hits, a.possible, a.skipped, a.corpus), (4, 37, 40, 1, 120));
        assert_eq!(a.recall(), Some(0.925));
        assert_eq!(a.cost_ms_per_search(), Some(1.0));
        assert_eq!(RecallCounts::default().recall(), None);
    }
}
