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

pub use crate::stats::recall_counts::RecallCounts;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarities_are_read_by_name() {
        assert_eq!(Similarity::parse("DOT_PRODUCT"), Some(Similarity::DotProduct));
        assert_eq!(Similarity::parse("manhattan"), None);
    }
}
