//! Reading the parts of a data statement that hold values: `WHERE` relations (`=`, ranges,
//! `IN ?`, `IN (…)`, `CONTAINS`, `token(…)`) and terms (a bind marker, a literal, or a function
//! call or collection literal with the markers inside it). `statements.rs` calls these; they
//! know nothing of which statement they are in.

use super::tokenizer::{Parser, Tok};

/// A value in a statement: a bind marker (its index), a literal, or anything else (function
/// calls, collection literals, arithmetic), with the markers it contains.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Marker(usize),
    Literal(String),
    Other(Vec<usize>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelOp {
    Eq,
    In,
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
    Contains,
    Like,
    Other,
}

impl RelOp {
    pub fn is_range(self) -> bool {
        matches!(self, RelOp::Lt | RelOp::Le | RelOp::Gt | RelOp::Ge)
    }
}

/// One `WHERE` relation. `IN ?` has `in_marker`; `IN (a, b)` has the items in `terms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    pub columns: Vec<String>,
    pub token: bool,
    pub op: RelOp,
    pub terms: Vec<Term>,
    pub in_marker: Option<usize>,
}

impl Parser {
    pub(super) fn relations(&mut self) -> Option<Vec<Relation>> {
        let mut out = Vec::new();
        loop {
            out.push(self.relation()?);
            if !self.kw("AND") {
                return Some(out);
            }
        }
    }

    pub(super) fn relation(&mut self) -> Option<Relation> {
        let mut token = false;
        let columns = if self.peek_kw("TOKEN") && matches!(self.toks.get(self.pos + 1), Some(Tok::Sym("("))) {
            self.pos += 2;
            token = true;
            let c = self.ident_list()?;
            self.sym(")").then_some(())?;
            c
        } else if self.sym("(") {
            let c = self.ident_list()?;
            self.sym(")").then_some(())?;
            c
        } else {
            let c = self.ident()?;
            if self.sym("[") {
                self.term()?;
                self.sym("]").then_some(())?;
            }
            vec![c]
        };
        let op = match self.next()? {
            Tok::Sym("=") => RelOp::Eq,
            Tok::Sym("<") => RelOp::Lt,
            Tok::Sym("<=") => RelOp::Le,
            Tok::Sym(">") => RelOp::Gt,
            Tok::Sym(">=") => RelOp::Ge,
            Tok::Sym("!=") => RelOp::Ne,
            Tok::Word(w, false) if w.eq_ignore_ascii_case("IN") => RelOp::In,
            Tok::Word(w, false) if w.eq_ignore_ascii_case("CONTAINS") => {
                self.kw("KEY");
                RelOp::Contains
            }
            Tok::Word(w, false) if w.eq_ignore_ascii_case("LIKE") => RelOp::Like,
            Tok::Word(w, false) if w.eq_ignore_ascii_case("IS") => {
                self.kw("NOT");
                self.kw("NULL");
                return Some(Relation { columns, token, op: RelOp::Other, terms: vec![], in_marker: None });
            }
            _ => return None,
        };
        let mut rel = Relation { columns, token, op, terms: vec![], in_marker: None };
        if op == RelOp::In {
            if let Some(Tok::Marker(m)) = self.peek().cloned() {
                self.pos += 1;
                rel.in_marker = Some(m);
            } else {
                self.sym("(").then_some(())?;
                if !self.sym(")") {
                    loop {
                        rel.terms.push(self.term()?);
                        if !self.sym(",") {
                            break;
                        }
                    }
                    self.sym(")").then_some(())?;
                }
            }
        } else {
            rel.terms.push(self.expr()?);
        }
        Some(rel)
    }

    /// A term with casts and arithmetic: `(int)? + 100`, `(timestamp)? - 1h`; anything more
    /// than one term comes back as [`Term::Other`] with the markers of its parts.
    pub(super) fn expr(&mut self) -> Option<Term> {
        let mut t = self.cast_or_term()?;
        while self.peek_sym("+") || self.peek_sym("-") {
            self.pos += 1;
            let rhs = self.cast_or_term()?;
            let markers = |t: &Term| match t {
                Term::Marker(m) => vec![*m],
                Term::Other(ms) => ms.clone(),
                Term::Literal(_) => vec![],
            };
            t = Term::Other([markers(&t), markers(&rhs)].concat());
        }
        Some(t)
    }

    /// `(type)` before a term is a cast: the term is what counts.
    fn cast_or_term(&mut self) -> Option<Term> {
        let cast =
            self.peek_sym("(") && matches!(self.toks.get(self.pos + 1), Some(Tok::Word(..))) && matches!(self.toks.get(self.pos + 2), Some(Tok::Sym(")")));
        if cast && self.toks.get(self.pos + 3).is_some_and(|t| matches!(t, Tok::Marker(_) | Tok::Num(_) | Tok::Str(_) | Tok::Word(..))) {
            self.pos += 3;
        }
        self.term()
    }

    /// One value: a marker, a literal, or a function call / collection literal / tuple (with
    /// the markers inside it).
    pub(super) fn term(&mut self) -> Option<Term> {
        match self.next()? {
            Tok::Marker(m) => Some(Term::Marker(m)),
            Tok::Num(n) => Some(Term::Literal(n)),
            Tok::Str(s) => Some(Term::Literal(s)),
            Tok::Sym("-") => match self.next()? {
                Tok::Num(n) => Some(Term::Literal(format!("-{n}"))),
                _ => None,
            },
            Tok::Word(w, _) => {
                if self.peek_sym("(") {
                    self.pos += 1;
                    Some(Term::Other(self.balanced()?))
                } else {
                    Some(Term::Literal(w.to_ascii_lowercase()))
                }
            }
            Tok::Sym("(") | Tok::Sym("[") | Tok::Sym("{") => Some(Term::Other(self.balanced()?)),
            _ => None,
        }
    }

    /// Skips to the bracket closing one already consumed; returns the markers inside.
    pub(super) fn balanced(&mut self) -> Option<Vec<usize>> {
        let mut depth = 1;
        let mut markers = Vec::new();
        while depth > 0 {
            match self.next()? {
                Tok::Sym("(") | Tok::Sym("[") | Tok::Sym("{") => depth += 1,
                Tok::Sym(")") | Tok::Sym("]") | Tok::Sym("}") => depth -= 1,
                Tok::Marker(m) => markers.push(m),
                _ => {}
            }
        }
        Some(markers)
    }
}
