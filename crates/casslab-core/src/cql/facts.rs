//! Facts about one statement read from its tokens, for validation and the engine: its bind
//! markers (how many, and the rewrite of `pk = ?` into `pk IN ?` for reading a set of
//! partitions), its first keyword and keywords, whether it is a conditional write and whether
//! it may be retried. Markers and keywords are the tokenizer's, so a `?` or an `IF` in a
//! comment (`-- ?`, `/* ? */`) or a literal (`'?'`, `$$?$$`) never counts.
//!
//! Named markers (`:name`) count as markers too: Cassandra accepts them, and casslab binds
//! values by position, so `args` lists one generator per marker in order of appearance,
//! whatever the markers' names (a name used twice is two markers, each with its own arg).
//! Validation, the linter and the engine all number markers this way.

use super::statements::{parse_dml, AssignKind};
use super::tokenizer::{tokenize, tokenize_spans, Tok};
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

/// The statement's first keyword, upper case (`SELECT`, `INSERT`, `BEGIN`, …), comments skipped.
pub fn first_keyword(cql: &str) -> Option<String> {
    match tokenize(cql).into_iter().next()? {
        Tok::Word(w, false) => Some(w.to_ascii_uppercase()),
        _ => None,
    }
}

/// Whether `word` appears as a keyword: unquoted, outside literals and comments.
pub fn has_keyword(cql: &str, word: &str) -> bool {
    tokenize(cql).iter().any(|t| matches!(t, Tok::Word(w, false) if w.eq_ignore_ascii_case(word)))
}

/// Whether a statement is a conditional write (a lightweight transaction: `IF NOT EXISTS`,
/// `IF EXISTS`, `IF c = ?`), whose result has an `[applied]` column. An `IF` inside a string
/// literal, a comment or a quoted name does not count, nor does one in a schema statement.
pub fn is_conditional(cql: &str) -> bool {
    if let Some(d) = parse_dml(cql) {
        return d.conditional || d.children.iter().any(|c| c.conditional);
    }
    matches!(first_keyword(cql).as_deref(), Some("INSERT" | "UPDATE" | "DELETE" | "BEGIN")) && has_keyword(cql, "IF")
}

/// Whether running the statement twice has the effect of running it once, so the driver may
/// retry it: not for conditional writes, nor for updates relative to the current value
/// (counter increments, collection appends, prepends and removals).
pub fn is_idempotent(cql: &str) -> bool {
    if is_conditional(cql) {
        return false;
    }
    match parse_dml(cql) {
        Some(d) => !d.leaves().iter().flat_map(|l| &l.writes).any(|w| matches!(w.kind, AssignKind::Append | AssignKind::Prepend | AssignKind::Remove)),
        // not understood: a `+` or `-` next to a bind marker is taken for a relative update
        None => !tokenize(cql).windows(2).any(|w| matches!(w, [Tok::Sym("+" | "-"), Tok::Marker(_)] | [Tok::Marker(_), Tok::Sym("+" | "-")])),
    }
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
        assert_eq!(
            to_in_statement("SELECT v FROM t /* x = ? */ WHERE ck > ? AND pk = ?", 1).as_deref(),
            Some("SELECT v FROM t /* x = ? */ WHERE ck > ? AND pk IN ?")
        );
        assert_eq!(to_in_statement("SELECT v FROM t WHERE pk = :pk", 0).as_deref(), Some("SELECT v FROM t WHERE pk IN :pk"));
        assert_eq!(to_in_statement("SELECT v FROM t WHERE pk > ?", 0), None);
        assert_eq!(to_in_statement("SELECT v FROM t WHERE pk = ?", 1), None);
        assert!(is_bound_by_eq("SELECT v FROM t WHERE pk = ?", 0));
        assert!(!is_bound_by_eq("SELECT v FROM t WHERE pk IN (?)", 0));
    }

    #[test]
    fn conditional_writes_and_idempotence() {
        assert!(is_conditional("INSERT INTO t (k) VALUES (?) IF NOT EXISTS"));
        assert!(is_conditional("UPDATE t SET v = ? WHERE k = ? if v = ?"));
        assert!(is_conditional("BEGIN BATCH UPDATE t SET v = ? WHERE k = ? IF v = ?; APPLY BATCH"));
        assert!(!is_conditional("INSERT INTO t (k, v) VALUES (?, 'IF')"));
        assert!(!is_conditional("INSERT INTO t (k, v) VALUES (?, ?) -- IF NOT EXISTS"));
        assert!(!is_conditional("UPDATE t SET \"if\" = ? WHERE k = ?"));
        assert!(!is_conditional("SELECT diff FROM t WHERE k = ?"));
        assert!(!is_conditional("CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY)"));
        assert!(is_conditional("UPDATE t SET v = ? WHERE k = ? IF v = ? AND ((("), "read by tokens when not understood");
        assert!(is_idempotent("INSERT INTO t (k, v) VALUES (?, ?)"));
        assert!(!is_idempotent("UPDATE c SET n = n + ? WHERE k = ?"));
        assert!(!is_idempotent("UPDATE c SET l = ? + l WHERE k = ?"));
        assert!(!is_idempotent("UPDATE c SET n = n - 1 WHERE k = ?"));
        assert!(!is_idempotent("INSERT INTO t (k) VALUES (?) IF NOT EXISTS"));
        assert!(is_idempotent("UPDATE t SET v = ? WHERE k = ? -- n = n + ?"));
    }

    #[test]
    fn first_keyword_and_keywords_skip_comments_and_literals() {
        assert_eq!(first_keyword("  -- reads\n select * FROM t").as_deref(), Some("SELECT"));
        assert_eq!(first_keyword("'x'"), None);
        assert!(has_keyword("SELECT v FROM t WHERE k = ? LIMIT 3", "limit"));
        assert!(!has_keyword("SELECT v FROM t WHERE k = 'LIMIT' /* LIMIT 3 */", "LIMIT"));
    }
}
