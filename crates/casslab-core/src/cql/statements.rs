//! Reading data statements: `SELECT`, `INSERT`, `UPDATE`, `DELETE` and `BATCH` with their
//! tables, selectors, assignments (set, append, prepend, remove, element), `USING TTL`, `LIMIT`,
//! `ORDER BY col ANN OF term` (a vector search), `ALLOW FILTERING` and `IF` conditions, into a
//! [`Dml`]. What is not understood comes back as
//! `None`, never as an error: the linter then has no finding, and `facts.rs` falls back on
//! the tokens. Relations and terms are `clauses.rs`'s; executing CQL is the engine's.

use super::clauses::{Relation, Term};
use super::tokenizer::{Parser, Tok};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignKind {
    /// `col = term` (and every INSERT column).
    Set,
    /// `col = col + term`.
    Append,
    /// `col = term + col`.
    Prepend,
    /// `col = col - term`.
    Remove,
    /// `col[key] = term` or `col.field = term`.
    Element,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub column: String,
    pub kind: AssignKind,
    pub term: Term,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmlKind {
    Select,
    Insert,
    Update,
    Delete,
    Batch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    Logged,
    Unlogged,
    Counter,
}

/// A parsed data statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Dml {
    pub kind: DmlKind,
    pub table: String,
    pub select_star: bool,
    pub selectors: Vec<String>,
    pub relations: Vec<Relation>,
    /// INSERT columns and UPDATE assignments.
    pub writes: Vec<Assignment>,
    /// `DELETE a, b FROM ...` (empty: the whole row or range).
    pub delete_columns: Vec<String>,
    pub ttl: Option<Term>,
    pub limit: Option<Term>,
    /// `ORDER BY col ANN OF term`: the vector column searched and the vector searched for.
    pub ann: Option<(String, Term)>,
    pub per_partition_limit: bool,
    pub allow_filtering: bool,
    pub conditional: bool,
    pub batch: Option<BatchKind>,
    pub children: Vec<Dml>,
}

impl Dml {
    fn new(kind: DmlKind) -> Dml {
        Dml {
            kind,
            table: String::new(),
            select_star: false,
            selectors: vec![],
            relations: vec![],
            writes: vec![],
            delete_columns: vec![],
            ttl: None,
            limit: None,
            ann: None,
            per_partition_limit: false,
            allow_filtering: false,
            conditional: false,
            batch: None,
            children: vec![],
        }
    }

    /// The relations that restrict `column` (not through `token()`).
    pub fn relations_on<'a>(&'a self, column: &'a str) -> impl Iterator<Item = &'a Relation> + 'a {
        self.relations.iter().filter(move |r| !r.token && r.columns.iter().any(|c| c == column))
    }

    /// This statement and, for a batch, its statements.
    pub fn leaves(&self) -> Vec<&Dml> {
        if self.kind == DmlKind::Batch {
            self.children.iter().collect()
        } else {
            vec![self]
        }
    }
}

/// Reads a data statement; `None` for anything not understood.
pub fn parse_dml(cql: &str) -> Option<Dml> {
    let mut p = Parser::new(cql);
    let d = p.dml()?;
    Some(d)
}

impl Parser {
    fn dml(&mut self) -> Option<Dml> {
        if self.kw("BEGIN") {
            let kind = if self.kw("UNLOGGED") {
                BatchKind::Unlogged
            } else if self.kw("COUNTER") {
                BatchKind::Counter
            } else {
                self.kw("LOGGED");
                BatchKind::Logged
            };
            self.kw("BATCH").then_some(())?;
            let mut d = Dml::new(DmlKind::Batch);
            d.batch = Some(kind);
            self.using(&mut d);
            while !self.peek_kw("APPLY") && self.pos < self.toks.len() {
                if self.sym(";") {
                    continue;
                }
                let child = self.dml()?;
                d.children.push(child);
            }
            if let Some(first) = d.children.first() {
                d.table = first.table.clone();
            }
            return Some(d);
        }
        if self.kw("SELECT") {
            self.select()
        } else if self.kw("INSERT") {
            self.insert()
        } else if self.kw("UPDATE") {
            self.update()
        } else if self.kw("DELETE") {
            self.delete()
        } else {
            None
        }
    }

    fn select(&mut self) -> Option<Dml> {
        let mut d = Dml::new(DmlKind::Select);
        self.kw("JSON");
        self.kw("DISTINCT");
        if self.sym("*") {
            d.select_star = true;
        } else {
            let mut depth = 0;
            let mut expect_name = true;
            while !(depth == 0 && self.peek_kw("FROM")) {
                match self.next()? {
                    Tok::Sym("(") => depth += 1,
                    Tok::Sym(")") => depth -= 1,
                    Tok::Sym(",") if depth == 0 => expect_name = true,
                    Tok::Word(w, q) if depth == 0 && expect_name => {
                        d.selectors.push(if q { w } else { w.to_ascii_lowercase() });
                        expect_name = false;
                    }
                    _ => {}
                }
            }
        }
        self.kw("FROM").then_some(())?;
        d.table = self.qualified_name()?;
        if self.kw("WHERE") {
            d.relations = self.relations()?;
        }
        loop {
            if self.peek_kw("ORDER") && matches!(self.toks.get(self.pos + 3), Some(Tok::Word(w, false)) if w.eq_ignore_ascii_case("ANN")) {
                self.pos += 2;
                let column = self.ident()?;
                self.kw("ANN");
                self.kw("OF").then_some(())?;
                d.ann = Some((column, self.term()?));
            } else if self.kw("GROUP") || self.kw("ORDER") {
                self.kw("BY");
                while !self.at_end() && !self.peek_kw("LIMIT") && !self.peek_kw("PER") && !self.peek_kw("ALLOW") {
                    self.pos += 1;
                }
            } else if self.kw("PER") {
                self.kw("PARTITION");
                self.kw("LIMIT");
                self.term()?;
                d.per_partition_limit = true;
            } else if self.kw("LIMIT") {
                d.limit = Some(self.term()?);
            } else if self.kw("ALLOW") {
                self.kw("FILTERING");
                d.allow_filtering = true;
            } else {
                break;
            }
        }
        Some(d)
    }

    fn insert(&mut self) -> Option<Dml> {
        let mut d = Dml::new(DmlKind::Insert);
        self.kw("INTO").then_some(())?;
        d.table = self.qualified_name()?;
        self.sym("(").then_some(())?;
        let cols = self.ident_list()?;
        self.sym(")").then_some(())?;
        self.kw("VALUES").then_some(())?;
        self.sym("(").then_some(())?;
        for (i, c) in cols.into_iter().enumerate() {
            if i > 0 {
                self.sym(",").then_some(())?;
            }
            d.writes.push(Assignment { column: c, kind: AssignKind::Set, term: self.term()? });
        }
        self.sym(")").then_some(())?;
        self.tail(&mut d);
        Some(d)
    }

    fn update(&mut self) -> Option<Dml> {
        let mut d = Dml::new(DmlKind::Update);
        d.table = self.qualified_name()?;
        self.using(&mut d);
        self.kw("SET").then_some(())?;
        loop {
            let col = self.ident()?;
            let mut kind = AssignKind::Set;
            if self.sym("[") {
                self.term()?;
                self.sym("]").then_some(())?;
                kind = AssignKind::Element;
            } else if self.sym(".") {
                self.ident()?;
                kind = AssignKind::Element;
            }
            self.sym("=").then_some(())?;
            let same_col = |t: Option<&Tok>| matches!(t, Some(Tok::Word(w, q)) if (if *q { w.clone() } else { w.to_ascii_lowercase() }) == col);
            let term = if kind == AssignKind::Set && same_col(self.peek()) && matches!(self.toks.get(self.pos + 1), Some(Tok::Sym("+") | Tok::Sym("-"))) {
                self.pos += 1;
                kind = if self.sym("+") {
                    AssignKind::Append
                } else {
                    self.pos += 1;
                    AssignKind::Remove
                };
                self.term()?
            } else {
                let t = self.term()?;
                if self.sym("+") {
                    if same_col(self.peek()) {
                        self.pos += 1;
                        kind = AssignKind::Prepend;
                    } else {
                        self.term()?;
                    }
                }
                t
            };
            d.writes.push(Assignment { column: col, kind, term });
            if !self.sym(",") {
                break;
            }
        }
        self.kw("WHERE").then_some(())?;
        d.relations = self.relations()?;
        self.tail(&mut d);
        Some(d)
    }

    fn delete(&mut self) -> Option<Dml> {
        let mut d = Dml::new(DmlKind::Delete);
        if !self.peek_kw("FROM") {
            loop {
                d.delete_columns.push(self.ident()?);
                if self.sym("[") {
                    self.term()?;
                    self.sym("]");
                } else if self.sym(".") {
                    self.ident()?;
                }
                if !self.sym(",") {
                    break;
                }
            }
        }
        self.kw("FROM").then_some(())?;
        d.table = self.qualified_name()?;
        self.using(&mut d);
        self.kw("WHERE").then_some(())?;
        d.relations = self.relations()?;
        self.tail(&mut d);
        Some(d)
    }

    /// `USING TTL x AND TIMESTAMP y`.
    fn using(&mut self, d: &mut Dml) {
        if !self.kw("USING") {
            return;
        }
        loop {
            if self.kw("TTL") {
                d.ttl = self.term();
            } else if self.kw("TIMESTAMP") {
                self.term();
            } else {
                return;
            }
            if !self.kw("AND") {
                return;
            }
        }
    }

    /// What may follow a write: `IF ...`, `USING ...`, up to the end of the statement.
    fn tail(&mut self, d: &mut Dml) {
        loop {
            if self.kw("IF") {
                d.conditional = true;
                while !self.at_end() && !self.peek_kw("USING") && !self.peek_kw("APPLY") && !self.is_statement_start() {
                    self.pos += 1;
                }
            } else if self.peek_kw("USING") {
                self.using(d);
            } else {
                return;
            }
        }
    }

    fn is_statement_start(&self) -> bool {
        ["INSERT", "UPDATE", "DELETE"].iter().any(|k| self.peek_kw(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cql::{parse_schema, AssignKind, RelOp};

    #[test]
    fn select_relations_limits_and_markers() {
        let d = parse_dml("SELECT a, b AS x, count(*) FROM t WHERE pk IN ? AND ck IN (?, ?, 3) AND c2 > ? LIMIT ? ALLOW FILTERING").unwrap();
        assert_eq!(d.kind, DmlKind::Select);
        assert_eq!(d.selectors, vec!["a", "b", "count"]);
        assert_eq!(d.relations.len(), 3);
        assert_eq!(d.relations[0].in_marker, Some(0));
        assert_eq!(d.relations[1].terms, vec![Term::Marker(1), Term::Marker(2), Term::Literal("3".into())]);
        assert_eq!(d.relations[2].op, RelOp::Gt);
        assert_eq!(d.limit, Some(Term::Marker(4)));
        assert!(d.allow_filtering);
        let s = parse_dml("SELECT * FROM usertable WHERE token(y_id) >= token(?) LIMIT 10").unwrap();
        assert!(s.select_star && s.relations[0].token);
        assert_eq!(s.relations[0].terms, vec![Term::Other(vec![0])]);
    }

    #[test]
    fn vector_searches_name_their_column_and_vector() {
        let d = parse_dml("SELECT id FROM vectors ORDER BY v ANN OF ? LIMIT 10").unwrap();
        assert_eq!(d.ann, Some(("v".to_string(), Term::Marker(0))));
        assert_eq!(d.limit, Some(Term::Literal("10".into())));
        let f = parse_dml("SELECT id FROM vectors WHERE tag = ? ORDER BY Emb ANN OF ? LIMIT ?").unwrap();
        assert_eq!((f.ann.as_ref().map(|a| a.0.as_str()), f.limit.clone()), (Some("emb"), Some(Term::Marker(2))));
        let none = parse_dml("SELECT id FROM vectors ORDER BY v ANN OF ?").unwrap();
        assert!(none.ann.is_some() && none.limit.is_none());
        let range = parse_dml("SELECT id FROM orders WHERE amount >= ? AND amount < (int)? + 1000 LIMIT 100").unwrap();
        assert_eq!((range.relations[1].terms.clone(), range.limit.clone()), (vec![Term::Other(vec![1])], Some(Term::Literal("100".into()))));
        let window = parse_dml("SELECT ts FROM e WHERE u = ? AND ts > (timestamp)? - 1h LIMIT 5").unwrap();
        assert_eq!(window.limit, Some(Term::Literal("5".into())));
        let plain = parse_dml("SELECT v FROM t WHERE pk = ? ORDER BY ck DESC LIMIT 5").unwrap();
        assert_eq!((plain.ann, plain.limit), (None, Some(Term::Literal("5".into()))));
    }

    #[test]
    fn writes_ttl_assignments_and_batches() {
        let i = parse_dml("INSERT INTO t (id, tags, ts) VALUES (?, ?, toTimestamp(now())) USING TTL 60").unwrap();
        assert_eq!(i.writes.iter().map(|w| w.column.as_str()).collect::<Vec<_>>(), vec!["id", "tags", "ts"]);
        assert_eq!(i.writes[2].term, Term::Other(vec![]));
        assert_eq!(i.ttl, Some(Term::Literal("60".into())));
        let u = parse_dml("UPDATE t USING TTL ? SET l = l + ?, p = ? + p, s = s - ?, m[?] = ?, v = ? WHERE id = ? IF EXISTS").unwrap();
        let kinds: Vec<AssignKind> = u.writes.iter().map(|w| w.kind).collect();
        assert_eq!(kinds, vec![AssignKind::Append, AssignKind::Prepend, AssignKind::Remove, AssignKind::Element, AssignKind::Set]);
        assert_eq!(u.ttl, Some(Term::Marker(0)));
        assert_eq!(u.relations[0].terms, vec![Term::Marker(7)]);
        assert!(u.conditional);
        let d = parse_dml("DELETE FROM ks.t WHERE pk = ? AND ck > ? AND ck < ?").unwrap();
        assert_eq!((d.kind, d.table.as_str(), d.relations.len()), (DmlKind::Delete, "t", 3));
        assert!(d.relations[1].op.is_range());
        let b = parse_dml("BEGIN UNLOGGED BATCH INSERT INTO a (k, v) VALUES (?, ?); INSERT INTO a (k, v) VALUES (?, ?); APPLY BATCH").unwrap();
        assert_eq!(b.batch, Some(BatchKind::Unlogged));
        assert_eq!(b.children.len(), 2);
        assert_eq!(b.children[1].writes[0].term, Term::Marker(2));
    }

    #[test]
    fn nonsense_is_none_not_a_panic() {
        for s in [
            "",
            "SELECT",
            "SELECT * FROM",
            "UPDATE t SET",
            "INSERT INTO t (a) VALUES",
            "BEGIN BATCH",
            "DELETE FROM t WHERE ((",
            "'unterminated",
            "SELECT a FROM t WHERE a IN (",
            "\"x",
        ] {
            let _ = parse_dml(s);
            let _ = parse_schema(s);
        }
        assert_eq!(parse_dml("TRUNCATE t"), None);
    }
}
