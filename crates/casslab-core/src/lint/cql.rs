//! A small, tolerant reader for the CQL that workload files use: `CREATE TABLE` (columns and
//! types, primary key, `WITH` options), `CREATE INDEX`, and `SELECT`/`INSERT`/`UPDATE`/`DELETE`/
//! `BATCH` with their `WHERE` relations, `IN` lists, `USING TTL`, `LIMIT` and `ALLOW FILTERING`.
//! It exists for the linter only: whatever it does not understand comes back as `None` (no
//! finding), never as an error. Bind markers are numbered in order of appearance, so marker `i`
//! is bound to the statement's `args[i]`. Executing and type-checking CQL is the engine's job.

/// One token. Words keep their case; `quoted` words ("Name") are case-sensitive identifiers.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String, bool),
    Num(String),
    Str(String),
    Marker(usize),
    Sym(&'static str),
}

fn tokenize(cql: &str) -> Vec<Tok> {
    const SYMS: &[&str] = &["<=", ">=", "!=", "(", ")", ",", ";", ".", "=", "<", ">", "+", "-", "*", "[", "]", "{", "}", ":"];
    let chars: Vec<char> = cql.chars().collect();
    let mut out = Vec::new();
    let mut markers = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if (c == '-' && chars.get(i + 1) == Some(&'-')) || (c == '/' && chars.get(i + 1) == Some(&'/')) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() {
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                s.push(chars[i]);
                i += 1;
            }
            i += 1;
            out.push(Tok::Str(s));
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                s.push(chars[i]);
                i += 1;
            }
            i += 1;
            out.push(Tok::Word(s, true));
        } else if c == '?' {
            out.push(Tok::Marker(markers));
            markers += 1;
            i += 1;
        } else if c == ':' && chars.get(i + 1).is_some_and(|c| c.is_alphabetic()) {
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Marker(markers));
            markers += 1;
        } else if c.is_ascii_digit() {
            let mut s = String::new();
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '.' || chars[i] == '-' && s.ends_with(['e', 'E'])) {
                s.push(chars[i]);
                i += 1;
            }
            out.push(Tok::Num(s));
        } else if c.is_alphabetic() || c == '_' {
            let mut s = String::new();
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                s.push(chars[i]);
                i += 1;
            }
            out.push(Tok::Word(s, false));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            match SYMS.iter().find(|s| rest.starts_with(**s)) {
                Some(s) => {
                    out.push(Tok::Sym(s));
                    i += s.len();
                }
                None => i += 1,
            }
        }
    }
    out
}

/// A column of a `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    /// The type as written, lower case, without spaces: `frozen<set<text>>`.
    pub ty: String,
}

/// Kinds of CQL collections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectionKind {
    List,
    Set,
    Map,
}

impl Column {
    /// The collection kind of a non-frozen collection column.
    pub fn non_frozen_collection(&self) -> Option<CollectionKind> {
        match self.ty.split('<').next()? {
            "list" => Some(CollectionKind::List),
            "set" => Some(CollectionKind::Set),
            "map" => Some(CollectionKind::Map),
            _ => None,
        }
    }
}

/// A parsed `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    pub partition_key: Vec<String>,
    pub clustering: Vec<String>,
    /// `default_time_to_live` when set and > 0.
    pub default_ttl_s: Option<u64>,
    /// The `WITH` options as written, lower case.
    pub options: String,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
    pub fn is_key(&self, name: &str) -> bool {
        self.partition_key.iter().any(|c| c == name) || self.clustering.iter().any(|c| c == name)
    }
}

/// A parsed `CREATE [CUSTOM] INDEX`.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub table: String,
    pub column: String,
    /// The `USING 'class'` of a custom index (e.g. `StorageAttachedIndex`).
    pub using: Option<String>,
}

/// A schema statement the linter understands.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaStmt {
    Table(Table),
    Index(Index),
}

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

/// Reads a schema statement; `None` for anything else or anything not understood.
pub fn parse_schema(cql: &str) -> Option<SchemaStmt> {
    let mut p = Parser { toks: tokenize(cql), pos: 0 };
    p.kw("CREATE").then_some(())?;
    if p.kw("TABLE") || p.kw("COLUMNFAMILY") {
        p.if_not_exists();
        let name = p.qualified_name()?;
        p.table_body(name).map(SchemaStmt::Table)
    } else {
        p.kw("CUSTOM");
        p.kw("INDEX").then_some(())?;
        p.if_not_exists();
        if !p.peek_kw("ON") {
            p.word()?;
        }
        p.kw("ON").then_some(())?;
        let table = p.qualified_name()?;
        p.sym("(").then_some(())?;
        let column = if p.peek_kw("KEYS") || p.peek_kw("VALUES") || p.peek_kw("ENTRIES") || p.peek_kw("FULL") {
            p.pos += 1;
            p.sym("(").then_some(())?;
            let c = p.ident()?;
            p.sym(")");
            c
        } else {
            p.ident()?
        };
        p.sym(")");
        let using = if p.kw("USING") {
            match p.next() {
                Some(Tok::Str(s)) => Some(s.rsplit('.').next().unwrap_or(&s).to_string()),
                _ => None,
            }
        } else {
            None
        };
        Some(SchemaStmt::Index(Index { table, column, using }))
    }
}

/// Reads a data statement; `None` for anything not understood.
pub fn parse_dml(cql: &str) -> Option<Dml> {
    let mut p = Parser { toks: tokenize(cql), pos: 0 };
    let d = p.dml()?;
    Some(d)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn peek_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w, false)) if w.eq_ignore_ascii_case(kw))
    }
    fn kw(&mut self, kw: &str) -> bool {
        let hit = self.peek_kw(kw);
        if hit {
            self.pos += 1;
        }
        hit
    }
    fn peek_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Sym(x)) if *x == s)
    }
    fn sym(&mut self, s: &str) -> bool {
        let hit = self.peek_sym(s);
        if hit {
            self.pos += 1;
        }
        hit
    }
    fn at_end(&self) -> bool {
        self.pos >= self.toks.len() || self.peek_sym(";")
    }
    fn if_not_exists(&mut self) {
        if self.kw("IF") {
            self.kw("NOT");
            self.kw("EXISTS");
        }
    }
    fn word(&mut self) -> Option<String> {
        match self.next()? {
            Tok::Word(w, _) => Some(w),
            _ => None,
        }
    }
    /// An identifier: lower case unless quoted.
    fn ident(&mut self) -> Option<String> {
        match self.next()? {
            Tok::Word(w, true) => Some(w),
            Tok::Word(w, false) => Some(w.to_ascii_lowercase()),
            _ => None,
        }
    }
    /// `[keyspace.]name`, the name only.
    fn qualified_name(&mut self) -> Option<String> {
        let mut name = self.ident()?;
        while self.sym(".") {
            name = self.ident()?;
        }
        Some(name)
    }

    /// The tokens of a type up to `,` or `)` at depth 0, compact and lower case.
    fn type_text(&mut self) -> Option<String> {
        let mut depth = 0i32;
        let mut s = String::new();
        while let Some(t) = self.peek() {
            match t {
                Tok::Sym("<") | Tok::Sym("(") => depth += 1,
                Tok::Sym(">") | Tok::Sym(")") if depth > 0 => depth -= 1,
                Tok::Sym(",") | Tok::Sym(")") if depth == 0 => break,
                Tok::Word(w, _) if depth == 0 && (w.eq_ignore_ascii_case("PRIMARY") || w.eq_ignore_ascii_case("STATIC")) => break,
                _ => {}
            }
            match self.next()? {
                Tok::Word(w, _) => s.push_str(&w.to_ascii_lowercase()),
                Tok::Sym(x) => s.push_str(x),
                Tok::Num(n) => s.push_str(&n),
                _ => {}
            }
        }
        (!s.is_empty()).then_some(s)
    }

    fn ident_list(&mut self) -> Option<Vec<String>> {
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

    fn table_body(&mut self, name: String) -> Option<Table> {
        self.sym("(").then_some(())?;
        let mut t = Table { name, columns: vec![], partition_key: vec![], clustering: vec![], default_ttl_s: None, options: String::new() };
        loop {
            if self.kw("PRIMARY") {
                self.kw("KEY").then_some(())?;
                self.sym("(").then_some(())?;
                if self.sym("(") {
                    t.partition_key = self.ident_list()?;
                    self.sym(")").then_some(())?;
                } else {
                    t.partition_key = vec![self.ident()?];
                }
                while self.sym(",") {
                    t.clustering.push(self.ident()?);
                }
                self.sym(")").then_some(())?;
            } else {
                let col = self.ident()?;
                let ty = self.type_text()?;
                self.kw("STATIC");
                if self.kw("PRIMARY") {
                    self.kw("KEY").then_some(())?;
                    t.partition_key = vec![col.clone()];
                }
                t.columns.push(Column { name: col, ty });
            }
            if self.sym(",") {
                if self.peek_sym(")") {
                    self.pos += 1;
                    break;
                }
                continue;
            }
            self.sym(")").then_some(())?;
            break;
        }
        if t.partition_key.is_empty() {
            return None;
        }
        if self.kw("WITH") {
            let mut opts = Vec::new();
            while let Some(tok) = self.next() {
                opts.push(match tok {
                    Tok::Word(w, _) => w.to_ascii_lowercase(),
                    Tok::Num(n) => n,
                    Tok::Str(s) => format!("'{}'", s.to_ascii_lowercase()),
                    Tok::Sym(s) => s.to_string(),
                    Tok::Marker(_) => "?".into(),
                });
            }
            if let Some(i) = opts.iter().position(|w| w == "default_time_to_live") {
                if opts.get(i + 1).map(|s| s.as_str()) == Some("=") {
                    t.default_ttl_s = opts.get(i + 2).and_then(|n| n.parse::<u64>().ok()).filter(|n| *n > 0);
                }
            }
            t.options = opts.join(" ");
        }
        Some(t)
    }

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
            if self.kw("GROUP") || self.kw("ORDER") {
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
                kind = if self.sym("+") { AssignKind::Append } else { self.pos += 1; AssignKind::Remove };
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

    fn relations(&mut self) -> Option<Vec<Relation>> {
        let mut out = Vec::new();
        loop {
            out.push(self.relation()?);
            if !self.kw("AND") {
                return Some(out);
            }
        }
    }

    fn relation(&mut self) -> Option<Relation> {
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
            rel.terms.push(self.term()?);
        }
        Some(rel)
    }

    /// One value: a marker, a literal, or a function call / collection literal / tuple (with
    /// the markers inside it).
    fn term(&mut self) -> Option<Term> {
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
    fn balanced(&mut self) -> Option<Vec<usize>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn table(cql: &str) -> Table {
        match parse_schema(cql) {
            Some(SchemaStmt::Table(t)) => t,
            other => panic!("not a table: {other:?}"),
        }
    }

    #[test]
    fn create_table_with_compound_key_types_and_options() {
        let t = table(
            "CREATE TABLE IF NOT EXISTS ks.Events (user_id uuid, bucket int, ts timestamp, tags set<text>, \
             attrs frozen<map<text, int>>, note text static, PRIMARY KEY ((user_id, bucket), ts)) \
             WITH CLUSTERING ORDER BY (ts DESC) AND default_time_to_live = 3600 AND compaction = {'class': 'TimeWindowCompactionStrategy'}",
        );
        assert_eq!(t.name, "events");
        assert_eq!(t.partition_key, vec!["user_id", "bucket"]);
        assert_eq!(t.clustering, vec!["ts"]);
        assert_eq!(t.column("tags").unwrap().ty, "set<text>");
        assert_eq!(t.column("tags").unwrap().non_frozen_collection(), Some(CollectionKind::Set));
        assert_eq!(t.column("attrs").unwrap().non_frozen_collection(), None);
        assert_eq!(t.column("note").unwrap().ty, "text");
        assert_eq!(t.default_ttl_s, Some(3600));
        assert!(t.options.contains("timewindowcompactionstrategy"), "{}", t.options);
        let simple = table("create table kv (key blob PRIMARY KEY, value blob)");
        assert_eq!(simple.partition_key, vec!["key"]);
        assert!(simple.clustering.is_empty());
        assert_eq!(simple.default_ttl_s, None);
    }

    #[test]
    fn create_index_and_unknown_schema() {
        assert_eq!(
            parse_schema("CREATE INDEX IF NOT EXISTS by_email ON users (email)"),
            Some(SchemaStmt::Index(Index { table: "users".into(), column: "email".into(), using: None }))
        );
        assert_eq!(
            parse_schema("CREATE CUSTOM INDEX ON ks.users (values(tags)) USING 'StorageAttachedIndex'"),
            Some(SchemaStmt::Index(Index { table: "users".into(), column: "tags".into(), using: Some("StorageAttachedIndex".into()) }))
        );
        assert_eq!(parse_schema("CREATE TYPE address (street text)"), None);
        assert_eq!(parse_schema("CREATE TABLE (((("), None);
    }

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
        for s in ["", "SELECT", "SELECT * FROM", "UPDATE t SET", "INSERT INTO t (a) VALUES", "BEGIN BATCH", "DELETE FROM t WHERE ((", "'unterminated", "SELECT a FROM t WHERE a IN (", "\"x"] {
            let _ = parse_dml(s);
            let _ = parse_schema(s);
        }
        assert_eq!(parse_dml("TRUNCATE t"), None);
    }
}
