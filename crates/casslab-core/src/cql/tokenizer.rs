//! The one place CQL text is cut into tokens: words (case kept; `"Quoted"` identifiers marked
//! as such), numbers, string literals (`'…'` with `''` escapes, and `$$…$$`), bind markers and
//! symbols. Comments (`-- …`, `// …`, `/* … */`) and whitespace vanish here, so nothing above
//! ever sees a `?` inside a comment or a literal. Bind markers are numbered in order of
//! appearance; both `?` and named markers (`:name`) are markers. Also the token cursor the
//! statement and schema readers share. It does not know what statements mean.

use std::ops::Range;

/// One token. Words keep their case; `quoted` words ("Name") are case-sensitive identifiers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Word(String, bool),
    Num(String),
    Str(String),
    Marker(usize),
    Sym(&'static str),
}

const SYMS: &[&str] = &["<=", ">=", "!=", "(", ")", ",", ";", ".", "=", "<", ">", "+", "-", "*", "[", "]", "{", "}", ":"];

/// The tokens of `cql` with their byte ranges in it.
pub(crate) fn tokenize_spans(cql: &str) -> Vec<(Tok, Range<usize>)> {
    let chars: Vec<(usize, char)> = cql.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|(_, c)| *c);
    let byte = |i: usize| chars.get(i).map(|(b, _)| *b).unwrap_or(cql.len());
    let mut out = Vec::new();
    let mut markers = 0;
    let mut i = 0;
    while let Some(c) = at(i) {
        let start = i;
        let tok = if c.is_whitespace() {
            i += 1;
            None
        } else if (c == '-' && at(i + 1) == Some('-')) || (c == '/' && at(i + 1) == Some('/')) {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
            None
        } else if c == '/' && at(i + 1) == Some('*') {
            i += 2;
            while at(i).is_some() && !(at(i) == Some('*') && at(i + 1) == Some('/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
            None
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            while let Some(c) = at(i) {
                if c == '\'' {
                    if at(i + 1) == Some('\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                s.push(c);
                i += 1;
            }
            i = (i + 1).min(chars.len());
            Some(Tok::Str(s))
        } else if c == '$' && at(i + 1) == Some('$') {
            i += 2;
            let from = i;
            while at(i).is_some() && !(at(i) == Some('$') && at(i + 1) == Some('$')) {
                i += 1;
            }
            let s = cql[byte(from)..byte(i)].to_string();
            i = (i + 2).min(chars.len());
            Some(Tok::Str(s))
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            while let Some(c) = at(i) {
                if c == '"' {
                    if at(i + 1) == Some('"') {
                        s.push('"');
                        i += 2;
                        continue;
                    }
                    break;
                }
                s.push(c);
                i += 1;
            }
            i = (i + 1).min(chars.len());
            Some(Tok::Word(s, true))
        } else if c == '?' || (c == ':' && at(i + 1).is_some_and(|c| c.is_alphabetic() || c == '_')) {
            i += 1;
            if c == ':' {
                while at(i).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    i += 1;
                }
            }
            markers += 1;
            Some(Tok::Marker(markers - 1))
        } else if c.is_ascii_digit() {
            let mut s = String::new();
            while let Some(c) = at(i).filter(|c| c.is_alphanumeric() || *c == '.' || (*c == '-' && s.ends_with(['e', 'E']))) {
                s.push(c);
                i += 1;
            }
            Some(Tok::Num(s))
        } else if c.is_alphabetic() || c == '_' {
            let mut s = String::new();
            while let Some(c) = at(i).filter(|c| c.is_alphanumeric() || *c == '_') {
                s.push(c);
                i += 1;
            }
            Some(Tok::Word(s, false))
        } else {
            let rest = &cql[byte(i)..];
            match SYMS.iter().find(|s| rest.starts_with(**s)) {
                Some(s) => {
                    i += s.len();
                    Some(Tok::Sym(s))
                }
                None => {
                    i += 1;
                    None
                }
            }
        };
        if let Some(t) = tok {
            out.push((t, byte(start)..byte(i)));
        }
    }
    out
}

/// The tokens of `cql`.
pub(crate) fn tokenize(cql: &str) -> Vec<Tok> {
    tokenize_spans(cql).into_iter().map(|(t, _)| t).collect()
}

/// A cursor over the tokens of one statement, shared by the statement and schema readers.
/// Every reader returns `None` for what it does not understand; none of them panics.
pub(crate) struct Parser {
    pub toks: Vec<Tok>,
    pub pos: usize,
}

impl Parser {
    pub fn new(cql: &str) -> Parser {
        Parser { toks: tokenize(cql), pos: 0 }
    }
    pub fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    pub fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    pub fn peek_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w, false)) if w.eq_ignore_ascii_case(kw))
    }
    pub fn kw(&mut self, kw: &str) -> bool {
        let hit = self.peek_kw(kw);
        if hit {
            self.pos += 1;
        }
        hit
    }
    pub fn peek_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Sym(x)) if *x == s)
    }
    pub fn sym(&mut self, s: &str) -> bool {
        let hit = self.peek_sym(s);
        if hit {
            self.pos += 1;
        }
        hit
    }
    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len() || self.peek_sym(";")
    }
    pub fn if_not_exists(&mut self) {
        if self.kw("IF") {
            self.kw("NOT");
            self.kw("EXISTS");
        }
    }
    pub fn word(&mut self) -> Option<String> {
        match self.next()? {
            Tok::Word(w, _) => Some(w),
            _ => None,
        }
    }
    /// An identifier: lower case unless quoted.
    pub fn ident(&mut self) -> Option<String> {
        match self.next()? {
            Tok::Word(w, true) => Some(w),
            Tok::Word(w, false) => Some(w.to_ascii_lowercase()),
            _ => None,
        }
    }
    /// `[keyspace.]name`, the name only.
    pub fn qualified_name(&mut self) -> Option<String> {
        let mut name = self.ident()?;
        while self.sym(".") {
            name = self.ident()?;
        }
        Some(name)
    }
    /// `a, b, (c, d)`: identifiers, nested parentheses flattened.
    pub fn ident_list(&mut self) -> Option<Vec<String>> {
        let mut v = Vec::new();
        loop {
            if self.sym("(") {
                v.extend(self.ident_list()?);
                self.sym(")").then_some(())?;
            } else {
                v.push(self.ident()?);
            }
            if !self.sym(",") {
                return Some(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markers(cql: &str) -> usize {
        tokenize(cql).iter().filter(|t| matches!(t, Tok::Marker(_))).count()
    }

    #[test]
    fn comments_and_literals_hide_markers() {
        assert_eq!(markers("SELECT * FROM t WHERE a = ? -- and b = ?\n AND c = ?"), 2);
        assert_eq!(markers("SELECT * FROM t WHERE a = ? // b = ?"), 1);
        assert_eq!(markers("SELECT * FROM t /* WHERE b = ? */ WHERE a = ?"), 1);
        assert_eq!(markers("INSERT INTO t (a, b) VALUES ('?', 'it''s ?')"), 0);
        assert_eq!(markers("INSERT INTO t (a, b) VALUES ($$ ? $$, ?)"), 1);
        assert_eq!(markers("SELECT \"odd?name\" FROM t WHERE a = ?"), 1);
        assert_eq!(markers("SELECT * FROM t /* unterminated ?"), 0);
    }

    #[test]
    fn named_markers_are_markers_but_map_literals_are_not() {
        assert_eq!(
            tokenize("a = :k AND b = ?"),
            vec![
                Tok::Word("a".into(), false),
                Tok::Sym("="),
                Tok::Marker(0),
                Tok::Word("AND".into(), false),
                Tok::Word("b".into(), false),
                Tok::Sym("="),
                Tok::Marker(1)
            ]
        );
        assert_eq!(markers("UPDATE t SET m = {'a': 1, 'b' : 2} WHERE k = :key_1"), 1);
        assert_eq!(markers("SELECT '12:30' FROM t"), 0);
    }

    #[test]
    fn spans_point_into_the_text() {
        let cql = "SELECT 'é' FROM t WHERE k = :key";
        let toks = tokenize_spans(cql);
        let (last, r) = toks.last().unwrap();
        assert_eq!((last, &cql[r.clone()]), (&Tok::Marker(0), ":key"));
        assert_eq!(&cql[toks[1].1.clone()], "'é'");
        assert_eq!(
            tokenize("\"a\"\"b\" 1.5e-3 <= x"),
            vec![Tok::Word("a\"b".into(), true), Tok::Num("1.5e-3".into()), Tok::Sym("<="), Tok::Word("x".into(), false)]
        );
    }
}
