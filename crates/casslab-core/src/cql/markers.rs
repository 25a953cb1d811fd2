//! Bind markers as validation and the engine see them: how many a statement has, and the
//! rewrite of `pk = ?` into `pk IN ?` for reading a set of partitions. Markers are the
//! tokenizer's, so a `?` in a comment (`-- ?`, `/* ? */`) or a literal (`'?'`, `$$?$$`) is
//! never one.
//!
//! Named markers (`:name`) count as markers too: Cassandra accepts them, and casslab binds
//! values by position, so `args` lists one generator per marker in order of appearance,
//! whatever the markers' names (a name used twice is two markers, each with its own arg).
//! Validation, the linter and the engine all number markers this way.

use super::tokenizer::{tokenize_spans, Tok};
use std::ops::Range;

/// Counts bind markers (`?` and `:name`) outside string literals and comments.
pub fn count_markers(cql: &str) -> usize {
    tokenize_spans(cql).iter().filter(|(t, _)| matches!(t, Tok::Marker(_))).count()
}

/// For bind marker `n` (0-based) written right after `=`: the byte range of the `=` and of the
/// marker.
fn marker_after_eq(cql: &str, n: usize) -> Option<(Range<usize>, Range<usize>)> {
    let toks = tokenize_spans(cql);
    let i = toks.iter().position(|(t, _)| *t == Tok::Marker(n))?;
    match toks.get(i.checked_sub(1)?) {
        Some((Tok::Sym("="), eq)) => Some((eq.clone(), toks[i].1.clone())),
        _ => None,
    }
}

/// Whether bind marker `n` is written as `column = ?`, so it can become `column IN ?`.
pub fn is_bound_by_eq(cql: &str, n: usize) -> bool {
    marker_after_eq(cql, n).is_some()
}

/// `… WHERE pk = ? …` → `… WHERE pk IN ? …` for bind marker `n` (a named marker keeps its
/// name); `None` when that marker does not follow `=`.
pub fn to_in_statement(cql: &str, n: usize) -> Option<String> {
    let (eq, marker) = marker_after_eq(cql, n)?;
    Some(format!("{} IN {}{}", cql[..eq.start].trim_end(), &cql[marker.clone()], &cql[marker.end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_outside_strings_and_comments_only() {
        assert_eq!(count_markers("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?"), 2);
        assert_eq!(count_markers("INSERT INTO t (a) VALUES ('x')"), 0);
        assert_eq!(count_markers("SELECT * FROM t WHERE a = ? -- b = ?"), 1);
        assert_eq!(count_markers("SELECT * FROM t WHERE /* b = ? */ a = ?"), 1);
        assert_eq!(count_markers("SELECT * FROM t WHERE a = :a AND b = :b"), 2);
        assert_eq!(count_markers("SELECT * FROM t WHERE a = :a AND b = :a"), 2, "a repeated name is two markers");
    }

    #[test]
    fn key_marker_becomes_in() {
        assert_eq!(to_in_statement("SELECT v FROM t WHERE pk = ? AND ck > ?", 0).as_deref(), Some("SELECT v FROM t WHERE pk IN ? AND ck > ?"));
        assert_eq!(to_in_statement("SELECT v FROM t WHERE ck = '?' AND pk=?", 0).as_deref(), Some("SELECT v FROM t WHERE ck = '?' AND pk IN ?"));
        assert_eq!(to_in_statement("SELECT v FROM t /* x = ? */ WHERE ck > ? AND pk = ?", 1).as_deref(), Some("SELECT v FROM t /* x = ? */ WHERE ck > ? AND pk IN ?"));
        assert_eq!(to_in_statement("SELECT v FROM t WHERE pk = :pk", 0).as_deref(), Some("SELECT v FROM t WHERE pk IN :pk"));
        assert_eq!(to_in_statement("SELECT v FROM t WHERE pk > ?", 0), None);
        assert_eq!(to_in_statement("SELECT v FROM t WHERE pk = ?", 1), None);
        assert!(is_bound_by_eq("SELECT v FROM t WHERE pk = ?", 0));
        assert!(!is_bound_by_eq("SELECT v FROM t WHERE pk IN (?)", 0));
    }
}
