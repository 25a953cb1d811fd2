//! What a vector search of an operation is, as data: its table, vector column, the drawn value
//! it searches for, its k and the columns it returns ([`Search`]); a search whose recall can be
//! measured ([`Measured`]); and one ready to run with its recall judge ([`AnnPlan`]), which an
//! operation's plan (`planned.rs`) carries. Describing and running searches is `ann.rs`'s.

use crate::recall::{RecallJudge, Similarity};
use std::sync::Arc;

/// Where a search's k comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum KFrom {
    Literal(u32),
    /// The drawn value at this index.
    Value(usize),
}

/// One search statement of an operation, as read from its CQL and prepared metadata.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Search {
    pub op: String,
    /// Its place among the operation's statements.
    pub statement: usize,
    pub table: String,
    pub column: String,
    /// The drawn value searched for (an index into the operation's values), and its generator.
    pub query_value: usize,
    pub query_generator: usize,
    pub k: Option<KFrom>,
    /// The columns its rows return, by name.
    pub returns: Vec<String>,
    pub similarity: Similarity,
}

/// A search whose recall is measured: which judge, and where its rows carry the key.
#[derive(Clone)]
pub(crate) struct Measured {
    pub search: Search,
    pub table_index: usize,
    pub generator: usize,
    pub dims: usize,
    /// The position of each key column in the rows returned.
    pub key_columns: Vec<usize>,
}

/// An operation's search with its judge, ready to run.
pub(crate) struct AnnPlan {
    pub measured: Measured,
    pub judge: Arc<RecallJudge>,
    /// The operation's stats slot in its phase.
    pub slot: usize,
}
