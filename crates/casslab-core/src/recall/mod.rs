//! Recall of vector searches (`ORDER BY v ANN OF ? LIMIT k`): what share of the k nearest
//! neighbours a search returned, against the exact k nearest that casslab computes itself, by
//! brute force, over the vectors written — every one recomputed from the write record (a
//! vector is a function of its key and write number, as verification's values are), never
//! kept from the requests. The judge (`judge`) runs on its own thread, off the client's hot
//! path: searches reach it through a short queue, and those that find it busy (or over its
//! share of a core) are counted as not judged, so recall is measured on a sample whose size and
//! cost are reported. The vectors it searches (`corpus`) follow the record as writes land; the
//! exact search and the count of hits (`exact`) treat ties as the benchmarks do: a returned
//! row as near as the k-th nearest is a hit.
//!
//! Not here: running the searches (the CQL target), the record (`verify`), the proportion's
//! interval and comparisons (`analysis::recall`), the reports.

mod corpus;
pub mod exact;
mod judge;

pub use corpus::{Corpus, CorpusSpec};
pub use judge::{Query, RecallJudge, RecallSink};

use serde::{Deserialize, Serialize};

/// The similarity an index ranks vectors by (its `similarity_function`; Cassandra's default
/// is cosine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Similarity {
    Cosine,
    Euclidean,
    DotProduct,
}

impl Similarity {
    /// From an index's `similarity_function` option (any case); `None` for an unknown one.
    pub fn parse(text: &str) -> Option<Similarity> {
        match text.trim().to_ascii_lowercase().as_str() {
            "cosine" => Some(Similarity::Cosine),
            "euclidean" => Some(Similarity::Euclidean),
            "dot_product" => Some(Similarity::DotProduct),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Similarity::Cosine => "cosine",
            Similarity::Euclidean => "euclidean",
            Similarity::DotProduct => "dot_product",
        }
    }
}

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
        assert_eq!(Similarity::parse("DOT_PRODUCT"), Some(Similarity::DotProduct));
        assert_eq!(Similarity::parse("manhattan"), None);
    }
}
