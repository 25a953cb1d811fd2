//! What a statement of a workload's `schema:` list would do, read from its head: its verb
//! (`CREATE`, `ALTER`, `DROP`, `TRUNCATE`, or any other first word), the kind of object
//! (`TABLE`, `TYPE`, `INDEX`, `MATERIALIZED VIEW`, `FUNCTION`, `KEYSPACE`, …), the keyspace and
//! name it names, `IF NOT EXISTS` / `OR REPLACE`, the table an index or a view is built on,
//! and the action of an `ALTER TABLE` (`ADD`, `DROP`, `RENAME`, `WITH`, …). It reports facts
//! only; which statements a workload may run is decided by `workload::schema_guard`. Columns
//! and options of a `CREATE TABLE` are `table_schema.rs`'s.

use super::tokenizer::{Parser, Tok};

/// The head of a schema (or any) statement.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ddl {
    /// The first word, upper case: `CREATE`, `ALTER`, `DROP`, `TRUNCATE`, `INSERT`, …
    pub verb: String,
    /// The kind of object, upper case (`TABLE`, `MATERIALIZED VIEW`, `CUSTOM INDEX` is
    /// `INDEX`); empty when the verb takes none (`TRUNCATE t`, `INSERT …`).
    pub object: String,
    pub if_not_exists: bool,
    /// `CREATE OR REPLACE FUNCTION`.
    pub or_replace: bool,
    /// The keyspace the statement names for its object (`ks.t`), lower case unless quoted.
    pub keyspace: Option<String>,
    /// The object's name, lower case unless quoted (`None` for an unnamed index).
    pub name: Option<String>,
    /// The table an index or a materialized view is built on: (keyspace, table).
    pub base: Option<(Option<String>, String)>,
    /// `ALTER TABLE`'s action, upper case: `ADD`, `DROP`, `RENAME`, `WITH`, `ALTER`.
    pub action: Option<String>,
    /// More follows a `;`: the text holds several statements.
    pub several: bool,
}

impl Ddl {
    /// The table the statement creates, changes or empties, when it is about one: the table
    /// itself, or the base table of an index or a view.
    pub fn table(&self) -> Option<(Option<&str>, &str)> {
        if let Some((ks, t)) = &self.base {
            return Some((ks.as_deref(), t));
        }
        (self.object == "TABLE" || self.verb == "TRUNCATE").then_some(())?;
        self.name.as_deref().map(|n| (self.keyspace.as_deref(), n))
    }
}

/// Object kinds of two words.
const TWO_WORDS: &[(&str, &str)] = &[("MATERIALIZED", "VIEW"), ("CUSTOM", "INDEX")];

/// Reads the head of `cql`; `None` when it does not start with a word.
pub fn read_ddl(cql: &str) -> Option<Ddl> {
    let mut p = Parser::new(cql);
    let several = p.toks.iter().position(|t| *t == Tok::Sym(";")).is_some_and(|i| i + 1 < p.toks.len());
    let verb = match p.next()? {
        Tok::Word(w, false) => w.to_ascii_uppercase(),
        _ => return None,
    };
    let mut d = Ddl { verb, several, ..Ddl::default() };
    match d.verb.as_str() {
        "CREATE" => {
            if p.kw("OR") {
                p.kw("REPLACE");
                d.or_replace = true;
            }
            d.object = object(&mut p)?;
            if p.peek_kw("IF") {
                p.if_not_exists();
                d.if_not_exists = true;
            }
            match d.object.as_str() {
                "INDEX" => {
                    if !p.peek_kw("ON") {
                        d.name = p.ident();
                    }
                    p.kw("ON").then_some(())?;
                    d.base = Some(keyspace_and_name(&mut p)?);
                }
                "MATERIALIZED VIEW" => {
                    (d.keyspace, d.name) = split(keyspace_and_name(&mut p)?);
                    while !p.kw("FROM") {
                        p.next()?;
                    }
                    d.base = Some(keyspace_and_name(&mut p)?);
                }
                _ => (d.keyspace, d.name) = split(keyspace_and_name(&mut p)?),
            }
        }
        "ALTER" | "DROP" => {
            d.object = object(&mut p)?;
            if p.kw("IF") {
                p.kw("NOT");
                p.kw("EXISTS");
            }
            (d.keyspace, d.name) = split(keyspace_and_name(&mut p)?);
            if d.verb == "ALTER" && d.object == "TABLE" {
                d.action = p.word().map(|w| w.to_ascii_uppercase());
            }
        }
        "TRUNCATE" => {
            p.kw("TABLE");
            p.kw("COLUMNFAMILY");
            (d.keyspace, d.name) = split(keyspace_and_name(&mut p)?);
        }
        _ => {}
    }
    Some(d)
}

/// The object kind after a verb, upper case (`COLUMNFAMILY` is `TABLE`).
fn object(p: &mut Parser) -> Option<String> {
    let first = p.word()?.to_ascii_uppercase();
    for (a, b) in TWO_WORDS {
        if first == *a && p.kw(b) {
            return Some(if *a == "CUSTOM" { b.to_string() } else { format!("{a} {b}") });
        }
    }
    Some(if first == "COLUMNFAMILY" { "TABLE".into() } else { first })
}

/// `[keyspace.]name`.
fn keyspace_and_name(p: &mut Parser) -> Option<(Option<String>, String)> {
    let first = p.ident()?;
    if p.sym(".") {
        return Some((Some(first), p.ident()?));
    }
    Some((None, first))
}

fn split((ks, name): (Option<String>, String)) -> (Option<String>, Option<String>) {
    (ks, Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ddl(cql: &str) -> Ddl {
        read_ddl(cql).unwrap_or_else(|| panic!("not read: {cql}"))
    }

    #[test]
    fn creating_statements_name_their_object_keyspace_and_base_table() {
        let t = ddl("create table if not exists Other.\"Kv\" (k int PRIMARY KEY)");
        assert_eq!((t.verb.as_str(), t.object.as_str(), t.if_not_exists), ("CREATE", "TABLE", true));
        assert_eq!((t.keyspace.as_deref(), t.name.as_deref()), (Some("other"), Some("Kv")));
        assert_eq!(t.table(), Some((Some("other"), "Kv")));
        let i = ddl("CREATE CUSTOM INDEX IF NOT EXISTS ON ks.users (values(tags)) USING 'StorageAttachedIndex'");
        assert_eq!((i.object.as_str(), i.name.as_deref(), i.base.clone()), ("INDEX", None, Some((Some("ks".into()), "users".into()))));
        let v = ddl("CREATE MATERIALIZED VIEW IF NOT EXISTS by_name AS SELECT * FROM users WHERE name IS NOT NULL PRIMARY KEY (name, id)");
        assert_eq!((v.object.as_str(), v.name.as_deref(), v.table()), ("MATERIALIZED VIEW", Some("by_name"), Some((None, "users"))));
        let f = ddl("CREATE OR REPLACE FUNCTION ks.twice (x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x * 2;'");
        assert_eq!((f.object.as_str(), f.or_replace, f.if_not_exists, f.keyspace.as_deref()), ("FUNCTION", true, false, Some("ks")));
        assert_eq!(f.table(), None);
        let ty = ddl("CREATE TYPE IF NOT EXISTS address (street text)");
        assert_eq!((ty.object.as_str(), ty.name.as_deref(), ty.table()), ("TYPE", Some("address"), None));
        assert_eq!(ddl("CREATE KEYSPACE other WITH replication = {}").object, "KEYSPACE");
    }

    #[test]
    fn destructive_statements_are_read_too() {
        let d = ddl("-- clean up first\nDROP KEYSPACE IF EXISTS other_ks");
        assert_eq!((d.verb.as_str(), d.object.as_str(), d.name.as_deref()), ("DROP", "KEYSPACE", Some("other_ks")));
        let t = ddl("TRUNCATE other.keep");
        assert_eq!((t.verb.as_str(), t.table()), ("TRUNCATE", Some((Some("other"), "keep"))));
        let a = ddl("ALTER TABLE keep DROP v");
        assert_eq!((a.object.as_str(), a.action.as_deref(), a.table()), ("TABLE", Some("DROP"), Some((None, "keep"))));
        assert_eq!(ddl("ALTER TABLE kv WITH comment = 'x'").action.as_deref(), Some("WITH"));
        assert_eq!(ddl("alter table if exists kv add v2 text").action.as_deref(), Some("ADD"));
        let del = ddl("DELETE FROM other.keep WHERE k = 1");
        assert_eq!((del.verb.as_str(), del.object.as_str()), ("DELETE", ""));
        assert!(ddl("CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY); DROP KEYSPACE x").several);
        assert!(!ddl("CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY);").several);
        assert_eq!(read_ddl("'text'"), None);
        assert_eq!(read_ddl("CREATE"), None);
    }
}
