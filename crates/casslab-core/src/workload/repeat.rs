//! Repeats written once: `{A..B}` (whole numbers, both ends included, as in a shell's brace
//! expansion) turns one item into B − A + 1 items, the k-th with A + k in place of the range.
//! An item is a generator's name (`v{0..99}: { type: int }` declares v0 … v99), an entry of
//! `args:` (`[id, "v{0..99}"]`), or a comma-separated item of a CQL statement: from the start of
//! the word holding the range to the next `,` or `)` outside brackets and quotes, or to a
//! clause keyword (`FROM`, `WHERE`, `IF`, `USING`, …). So `c{0..99} int` in a `CREATE TABLE`
//! declares 100 columns, `SELECT c{0..99} FROM` reads them, `SET c{0..99} = :v{0..99}` writes
//! them, and `VALUES (:id, :v{0..99})` binds them (named markers bind by position like `?`).
//! Several ranges in one item advance together and must have as many numbers. This module
//! only rewrites text; `parse.rs` applies it, after parameters are substituted.

use std::collections::BTreeMap;

/// The most items one range may make.
pub const MAX_REPEAT: u64 = 10_000;

/// A range that cannot be expanded, and why.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum RepeatError {
    #[error("`{{{from}..{to}}}` counts down; write the smaller number first")]
    Backwards { from: i64, to: i64 },
    #[error("`{{{from}..{to}}}` would make more than {MAX_REPEAT} items")]
    TooMany { from: i64, to: i64 },
    #[error("`{item}` holds ranges of different lengths; ranges in one item advance together")]
    Uneven { item: String },
    #[error("{what} \"{name}\" is declared twice (once through a `{{A..B}}` range)")]
    Duplicate { what: &'static str, name: String },
}

/// A range `{from..to}` found at `start..end` of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    start: usize,
    end: usize,
    from: i64,
    to: i64,
}

/// The ranges of `s`, in order.
fn ranges(s: &str) -> Vec<Range> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            if let Some(r) = range_at(s, i) {
                i = r.end;
                out.push(r);
                continue;
            }
        }
        i += 1;
    }
    out
}

/// `{A..B}` starting at byte `i` of `s`.
fn range_at(s: &str, i: usize) -> Option<Range> {
    let rest = &s[i + 1..];
    let close = rest.find('}')?;
    let (a, b) = rest[..close].split_once("..")?;
    let number = |t: &str| -> Option<i64> {
        let digits = t.strip_prefix('-').unwrap_or(t);
        (!digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())).then(|| t.parse().ok()).flatten()
    };
    Some(Range { start: i, end: i + 1 + close + 1, from: number(a)?, to: number(b)? })
}

/// Whether `s` holds a `{A..B}` range.
pub fn has_range(s: &str) -> bool {
    !ranges(s).is_empty()
}

/// The copies of `item`: one per number of its ranges (just `item` when it has none).
pub fn expand_item(item: &str) -> Result<Vec<String>, RepeatError> {
    let rs = ranges(item);
    let Some(first) = rs.first() else { return Ok(vec![item.to_string()]) };
    for r in &rs {
        if r.to < r.from {
            return Err(RepeatError::Backwards { from: r.from, to: r.to });
        }
        if (r.to - r.from) as u64 >= MAX_REPEAT {
            return Err(RepeatError::TooMany { from: r.from, to: r.to });
        }
    }
    let count = first.to - first.from + 1;
    if rs.iter().any(|r| r.to - r.from + 1 != count) {
        return Err(RepeatError::Uneven { item: item.to_string() });
    }
    Ok((0..count)
        .map(|k| {
            let mut out = String::with_capacity(item.len() + 4);
            let mut at = 0;
            for r in &rs {
                out.push_str(&item[at..r.start]);
                out.push_str(&(r.from + k).to_string());
                at = r.end;
            }
            out.push_str(&item[at..]);
            out
        })
        .collect())
}

/// A list of names or `args:` with each item holding a range repeated.
pub fn expand_list(items: Vec<String>) -> Result<Vec<String>, RepeatError> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.extend(expand_item(&item)?);
    }
    Ok(out)
}

/// A map whose keys may hold ranges: each such entry repeated under every name it makes.
pub fn expand_keys<V: Clone>(map: BTreeMap<String, V>, what: &'static str) -> Result<BTreeMap<String, V>, RepeatError> {
    if !map.keys().any(|k| has_range(k)) {
        return Ok(map);
    }
    let mut out = BTreeMap::new();
    for (k, v) in map {
        for name in expand_item(&k)? {
            if out.insert(name.clone(), v.clone()).is_some() {
                return Err(RepeatError::Duplicate { what, name });
            }
        }
    }
    Ok(out)
}

/// The written key (`v{0..99}`) among `keys` that makes `name`, if any: for pointing at lines.
pub fn key_making<'a>(name: &str, keys: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    keys.into_iter().find(|k| has_range(k) && expand_item(k).is_ok_and(|names| names.iter().any(|n| n == name)))
}

/// Words that end a CQL item (a clause starts).
const CLAUSE_WORDS: &[&str] = &["FROM", "WHERE", "IF", "USING", "VALUES", "LIMIT", "ORDER", "GROUP", "ALLOW", "PER", "AND", "APPLY", "WITH"];

/// A CQL statement with every item holding a range repeated, the copies joined by `, `.
pub fn expand_cql(cql: &str) -> Result<String, RepeatError> {
    let mut s = cql.to_string();
    let mut from = 0;
    loop {
        let Some(r) = ranges(&s[from..]).first().copied() else { return Ok(s) };
        let at = from + r.start;
        let start = s[..at].rfind(|c: char| c.is_whitespace() || c == ',' || c == '(').map_or(0, |i| i + 1);
        let end = item_end(&s, from + r.end);
        let copies = expand_item(&s[start..end])?.join(", ");
        s.replace_range(start..end, &copies);
        from = start + copies.len();
    }
}

/// Where the item that continues at byte `i` of `s` ends: before a `,` or `)` outside
/// brackets and quotes, before a clause keyword, or at the end; trailing spaces excluded.
fn item_end(s: &str, i: usize) -> usize {
    let b = s.as_bytes();
    let (mut depth, mut quote) = (0i32, None::<u8>);
    let mut j = i;
    while j < b.len() {
        let c = b[j];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b')' | b'>' | b']' | b'}' if depth > 0 => depth -= 1,
                b',' | b')' if depth == 0 => break,
                _ if depth == 0 && (j == 0 || b[j - 1].is_ascii_whitespace()) && starts_clause(&s[j..]) => break,
                _ => {}
            },
        }
        j += 1;
    }
    i + s[i..j].trim_end().len()
}

fn starts_clause(rest: &str) -> bool {
    let word: String = rest.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    let next = rest[word.len()..].chars().next();
    next.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_')) && CLAUSE_WORDS.iter().any(|k| k.eq_ignore_ascii_case(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_repeat_with_their_number() {
        assert_eq!(expand_item("v{0..2}").unwrap(), ["v0", "v1", "v2"]);
        assert_eq!(expand_item("c{1..2}_{11..12}").unwrap(), ["c1_11", "c2_12"]);
        assert_eq!(expand_item("plain").unwrap(), ["plain"]);
        assert_eq!(expand_item("{x..y}").unwrap(), ["{x..y}"], "not a range");
        assert_eq!(expand_list(vec!["id".into(), "v{0..2}".into()]).unwrap(), ["id", "v0", "v1", "v2"]);
        assert_eq!(expand_item("v{3..1}").unwrap_err().to_string(), "`{3..1}` counts down; write the smaller number first");
        assert!(matches!(expand_item("v{0..2}{0..3}"), Err(RepeatError::Uneven { .. })));
        assert!(matches!(expand_item("v{0..10000}"), Err(RepeatError::TooMany { .. })));
    }

    #[test]
    fn cql_items_repeat_up_to_their_end() {
        let cases = [
            ("CREATE TABLE t (id bigint PRIMARY KEY, c{0..2} int)", "CREATE TABLE t (id bigint PRIMARY KEY, c0 int, c1 int, c2 int)"),
            (
                "CREATE TABLE t (id int PRIMARY KEY, m{1..2} map<text, int>, x int)",
                "CREATE TABLE t (id int PRIMARY KEY, m1 map<text, int>, m2 map<text, int>, x int)",
            ),
            ("SELECT c{0..2} FROM t WHERE id = ?", "SELECT c0, c1, c2 FROM t WHERE id = ?"),
            ("select id, c{0..1}\nfrom t", "select id, c0, c1\nfrom t"),
            ("UPDATE t SET c{0..2} = :v{0..2} WHERE id = :id", "UPDATE t SET c0 = :v0, c1 = :v1, c2 = :v2 WHERE id = :id"),
            ("INSERT INTO t (id, c{0..1}) VALUES (:id, :v{0..1}) USING TTL 5", "INSERT INTO t (id, c0, c1) VALUES (:id, :v0, :v1) USING TTL 5"),
            ("UPDATE t SET n{0..1} = n{0..1} + ? WHERE k = ?", "UPDATE t SET n0 = n0 + ?, n1 = n1 + ? WHERE k = ?"),
            ("SELECT x FROM t WHERE m = {'a': 1}", "SELECT x FROM t WHERE m = {'a': 1}"),
        ];
        for (input, want) in cases {
            assert_eq!(expand_cql(input).unwrap(), want, "{input}");
        }
    }

    #[test]
    fn keys_repeat_and_point_back() {
        let map: BTreeMap<String, u8> = [("v{0..2}".to_string(), 1), ("id".to_string(), 2)].into();
        let out = expand_keys(map, "generator").unwrap();
        assert_eq!(out.keys().collect::<Vec<_>>(), ["id", "v0", "v1", "v2"]);
        let dup: BTreeMap<String, u8> = [("v{0..2}".to_string(), 1), ("v1".to_string(), 2)].into();
        assert_eq!(expand_keys(dup, "generator").unwrap_err().to_string(), "generator \"v1\" is declared twice (once through a `{A..B}` range)");
        assert_eq!(key_making("v2", ["id", "v{0..2}"]), Some("v{0..2}"));
        assert_eq!(key_making("v3", ["id", "v{0..2}"]), None);
    }
}
