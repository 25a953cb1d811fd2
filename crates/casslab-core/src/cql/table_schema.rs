//! Reading schema statements: `CREATE TABLE` (columns and their types, partition key,
//! clustering columns, `WITH` options and the default TTL, and where options would be added:
//! `table_options_at`) and `CREATE [CUSTOM] INDEX`, plus the one fact validation needs, the
//! name of the table a statement creates. Whatever is not
//! understood comes back as `None`. Data statements are `statements.rs`'s.

use super::tokenizer::{tokenize_spans, Parser, Tok};

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
    /// The `USING 'class'` of a custom index (e.g. `StorageAttachedIndex`, `sai`).
    pub using: Option<String>,
    /// `WITH OPTIONS = {'similarity_function': 'dot_product'}`, keys in lower case.
    pub options: Vec<(String, String)>,
}

impl Index {
    /// A storage-attached index (`USING 'sai'` or `'StorageAttachedIndex'`).
    pub fn is_sai(&self) -> bool {
        self.using.as_deref().is_some_and(|u| u.eq_ignore_ascii_case("StorageAttachedIndex") || u.eq_ignore_ascii_case("sai"))
    }

    /// The value of option `key`.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A schema statement the linter understands.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaStmt {
    Table(Table),
    Index(Index),
}

/// Reads a schema statement; `None` for anything else or anything not understood.
pub fn parse_schema(cql: &str) -> Option<SchemaStmt> {
    let mut p = Parser::new(cql);
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
        let mut options = Vec::new();
        if p.kw("WITH") && p.kw("OPTIONS") && p.sym("=") && p.sym("{") {
            while let Some(Tok::Str(k)) = p.next() {
                p.sym(":");
                let v = match p.next() {
                    Some(Tok::Str(v) | Tok::Word(v, _)) => v,
                    _ => break,
                };
                options.push((k.to_ascii_lowercase(), v));
                if !p.sym(",") {
                    break;
                }
            }
        }
        Some(SchemaStmt::Index(Index { table, column, using, options }))
    }
}

/// The table a `CREATE TABLE` statement creates, unqualified and lower case (quoted names keep
/// their case). Reads only the statement's head, so it answers for tables whose columns
/// [`parse_schema`] does not understand.
pub fn created_table(cql: &str) -> Option<String> {
    let mut p = Parser::new(cql);
    p.kw("CREATE").then_some(())?;
    (p.kw("TABLE") || p.kw("COLUMNFAMILY")).then_some(())?;
    p.if_not_exists();
    p.qualified_name().filter(|s| !s.is_empty())
}

/// Where `WITH` options go in a `CREATE TABLE` statement, read from its tokens (so comments and
/// string literals count for nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionsAt {
    /// The byte offset just past the statement's last token (before a closing `;`).
    pub end: usize,
    /// The statement already has options: a `WITH` after its column list.
    pub has_with: bool,
}

/// Where options go in `cql` when it is a `CREATE TABLE`; `None` for any other statement.
pub fn table_options_at(cql: &str) -> Option<OptionsAt> {
    let head = super::ddl::read_ddl(cql)?;
    (head.verb == "CREATE" && head.object == "TABLE").then_some(())?;
    let toks = tokenize_spans(cql);
    let stmt = &toks[..toks.iter().position(|(t, _)| *t == Tok::Sym(";")).unwrap_or(toks.len())];
    let end = stmt.last()?.1.end;
    // the column list ends at the parenthesis matching the first one
    let mut depth = 0;
    let mut close = stmt.len();
    for (i, (t, _)) in stmt.iter().enumerate() {
        match t {
            Tok::Sym("(") => depth += 1,
            Tok::Sym(")") => {
                depth -= 1;
                if depth == 0 {
                    close = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let has_with = stmt[close..].iter().any(|(t, _)| matches!(t, Tok::Word(w, false) if w.eq_ignore_ascii_case("WITH")));
    Some(OptionsAt { end, has_with })
}

impl Parser {
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
            Some(SchemaStmt::Index(Index { table: "users".into(), column: "email".into(), using: None, options: vec![] }))
        );
        assert_eq!(
            parse_schema("CREATE CUSTOM INDEX ON ks.users (values(tags)) USING 'StorageAttachedIndex'"),
            Some(SchemaStmt::Index(Index { table: "users".into(), column: "tags".into(), using: Some("StorageAttachedIndex".into()), options: vec![] }))
        );
        let Some(SchemaStmt::Index(sai)) =
            parse_schema("CREATE INDEX IF NOT EXISTS ann ON vectors (v) USING 'sai' WITH OPTIONS = {'similarity_function': 'DOT_PRODUCT'}")
        else {
            panic!("an SAI index")
        };
        assert!(sai.is_sai());
        assert_eq!((sai.column.as_str(), sai.option("similarity_function")), ("v", Some("DOT_PRODUCT")));
        assert_eq!(parse_schema("CREATE TYPE address (street text)"), None);
        assert_eq!(parse_schema("CREATE TABLE (((("), None);
    }

    #[test]
    fn table_names_from_create_statements() {
        assert_eq!(created_table("CREATE TABLE IF NOT EXISTS usertable (k text PRIMARY KEY)").as_deref(), Some("usertable"));
        assert_eq!(created_table("create table ks.Kv(k blob primary key)").as_deref(), Some("kv"));
        assert_eq!(created_table("CREATE TABLE \"Quoted\" (k int PRIMARY KEY)").as_deref(), Some("Quoted"));
        assert_eq!(created_table("-- the main table\nCREATE TABLE t (k int PRIMARY KEY)").as_deref(), Some("t"));
        assert_eq!(created_table("CREATE INDEX i ON t (v)"), None);
    }
}
