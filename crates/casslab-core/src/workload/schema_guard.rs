//! What a workload's `schema:` list may do, checked before anything is sent to a cluster:
//! create, and only inside the workload's own keyspace. Allowed are `CREATE TABLE`, `TYPE`,
//! `INDEX`, `MATERIALIZED VIEW` and `FUNCTION` with `IF NOT EXISTS` (indexes and views only
//! on tables the schema creates), and `ALTER TABLE … ADD` / `… WITH` on a table the schema
//! creates. Everything else — `DROP`, `TRUNCATE`, writes, `ALTER … DROP/RENAME`, another
//! keyspace, a keyspace of its own — is refused with the statement's line. Whether a table the
//! schema "creates" already existed in a keyspace casslab did not create is known only on the
//! cluster; the CQL target checks that before it alters anything (`targets::cql::schema`).

use super::model::Workload;
use super::workload_error::{Problem, SchemaProblem};
use crate::cql::read_ddl;

/// Object kinds `schema:` may create.
const CREATABLE: &[&str] = &["TABLE", "TYPE", "INDEX", "MATERIALIZED VIEW", "FUNCTION"];
/// Verbs that destroy or overwrite.
const DESTRUCTIVE: &[&str] = &["DROP", "TRUNCATE", "DELETE", "INSERT", "UPDATE", "BEGIN", "APPLY"];

/// Checks every statement of `w.schema`; the first refused one comes back with its line.
pub(crate) fn check(w: &Workload) -> Result<(), (usize, Problem)> {
    let own = w.keyspace.to_ascii_lowercase();
    let mut created: Vec<String> = Vec::new();
    for st in &w.schema {
        let refuse = |problem: SchemaProblem| Err((st.line, Problem::Schema { cql: st.cql.clone(), problem }));
        let Some(d) = read_ddl(&st.cql) else { return refuse(SchemaProblem::NotSchema) };
        if d.several {
            return refuse(SchemaProblem::Several);
        }
        let what = || [d.verb.as_str(), d.object.as_str()].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ");
        if DESTRUCTIVE.contains(&d.verb.as_str()) {
            return refuse(SchemaProblem::Destructive { what: what() });
        }
        if !matches!(d.verb.as_str(), "CREATE" | "ALTER") {
            return refuse(SchemaProblem::NotSchema);
        }
        if d.object == "KEYSPACE" {
            return refuse(if d.verb == "CREATE" { SchemaProblem::CreatesKeyspace } else { SchemaProblem::AlterNotTable { object: "keyspace".into() } });
        }
        let named = d.keyspace.iter().chain(d.base.as_ref().and_then(|(ks, _)| ks.as_ref()));
        if let Some(other) = named.into_iter().find(|ks| **ks != own) {
            return refuse(SchemaProblem::OtherKeyspace { named: other.clone(), own: w.keyspace.clone() });
        }
        let own_table = |t: &str| created.iter().any(|c| c == t);
        if d.verb == "ALTER" {
            if d.object != "TABLE" {
                return refuse(SchemaProblem::AlterNotTable { object: d.object.to_ascii_lowercase() });
            }
            if !matches!(d.action.as_deref(), Some("ADD" | "WITH")) {
                let action = d.action.as_deref().unwrap_or("…");
                return refuse(SchemaProblem::Destructive { what: format!("ALTER TABLE … {action}") });
            }
            match d.table() {
                Some((_, t)) if own_table(t) => continue,
                t => return refuse(SchemaProblem::NotOwnTable { table: t.map(|(_, t)| t.to_string()).unwrap_or_default() }),
            }
        }
        if !CREATABLE.contains(&d.object.as_str()) {
            return refuse(SchemaProblem::UnsupportedObject { object: d.object.to_ascii_lowercase() });
        }
        if d.or_replace {
            return refuse(SchemaProblem::OrReplace);
        }
        if !d.if_not_exists {
            return refuse(SchemaProblem::NeedsIfNotExists { object: d.object.clone() });
        }
        if let Some((_, base)) = &d.base {
            if !own_table(base) {
                return refuse(SchemaProblem::NotOwnTable { table: base.clone() });
            }
        }
        if d.object == "TABLE" {
            created.extend(d.name.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::workload::parse_workload;
    use std::collections::BTreeMap;

    fn workload(schema: &[&str]) -> String {
        let items: String = schema.iter().map(|s| format!("  - \"{s}\"\n")).collect();
        format!("keyspace: casslab_mine\nschema:\n{items}operations:\n  r:\n    cql: SELECT now() FROM system.local\nrun:\n  mix: {{ r: 1 }}\n  duration: 1s\n")
    }

    fn refusal(schema: &[&str]) -> String {
        match parse_workload(&workload(schema), "w.yaml", &BTreeMap::new()) {
            Ok(_) => panic!("accepted: {schema:?}"),
            Err(e) => e.to_string(),
        }
    }

    const T: &str = "CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)";

    #[test]
    fn creating_statements_in_the_own_keyspace_pass() {
        let ok = [
            T,
            "CREATE TABLE IF NOT EXISTS casslab_mine.other (k int PRIMARY KEY)",
            "CREATE TYPE IF NOT EXISTS address (street text)",
            "CREATE INDEX IF NOT EXISTS by_v ON kv (v)",
            "CREATE CUSTOM INDEX IF NOT EXISTS ON casslab_mine.kv (v) USING 'StorageAttachedIndex'",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS kv_by_v AS SELECT * FROM kv WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)",
            "CREATE FUNCTION IF NOT EXISTS twice (x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x * 2;'",
            "ALTER TABLE kv ADD extra text",
            "ALTER TABLE kv WITH comment = 'drop nothing'",
        ];
        parse_workload(&workload(&ok), "w.yaml", &BTreeMap::new()).unwrap();
    }

    #[test]
    fn destructive_statements_are_refused_with_their_line() {
        let e = refusal(&[T, "DROP KEYSPACE IF EXISTS other_ks"]);
        assert!(e.starts_with("w.yaml:4: schema: `DROP KEYSPACE IF EXISTS other_ks` would destroy or overwrite what exists (DROP KEYSPACE)"), "{e}");
        for (cql, what) in [
            ("DROP TABLE kv", "(DROP TABLE)"),
            ("TRUNCATE other.keep", "(TRUNCATE)"),
            ("DELETE FROM other.keep WHERE k = 1", "(DELETE)"),
            ("INSERT INTO other.keep (k) VALUES (1)", "(INSERT)"),
            ("ALTER TABLE kv DROP v", "(ALTER TABLE … DROP)"),
            ("ALTER TABLE kv RENAME k TO key", "(ALTER TABLE … RENAME)"),
        ] {
            let e = refusal(&[T, cql]);
            assert!(e.starts_with("w.yaml:4: schema: `") && e.contains(what), "{cql}: {e}");
        }
    }

    #[test]
    fn other_keyspaces_foreign_tables_and_loose_creates_are_refused() {
        let e = refusal(&["CREATE TABLE IF NOT EXISTS other_ks.t (k int PRIMARY KEY)"]);
        assert!(e.contains("names keyspace \"other_ks\"") && e.contains("(\"casslab_mine\")"), "{e}");
        assert!(refusal(&["CREATE INDEX IF NOT EXISTS i ON other_ks.t (v)"]).contains("names keyspace \"other_ks\""));
        assert!(refusal(&["ALTER TABLE keep ADD v text"]).contains("changes table \"keep\", which the workload's schema does not create"));
        assert!(refusal(&["CREATE INDEX IF NOT EXISTS i ON keep (v)", T]).contains("table \"keep\""));
        assert!(refusal(&["CREATE TABLE kv (k int PRIMARY KEY)"]).contains("needs IF NOT EXISTS (`CREATE TABLE IF NOT EXISTS …`)"));
        assert!(refusal(&["CREATE KEYSPACE IF NOT EXISTS x WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"])
            .contains("creates a keyspace"));
        assert!(refusal(&["CREATE OR REPLACE FUNCTION f (x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x;'"])
            .contains("CREATE FUNCTION IF NOT EXISTS"));
        assert!(refusal(&["CREATE ROLE IF NOT EXISTS bench"]).contains("creates a role"));
        assert!(refusal(&["ALTER KEYSPACE casslab_mine WITH durable_writes = false"]).contains("alters a keyspace"));
        assert!(refusal(&["GRANT SELECT ON ALL KEYSPACES TO bench"]).contains("is not a creating statement"));
        assert!(refusal(&[&format!("{T}; DROP KEYSPACE other_ks")]).contains("more than one statement"));
    }
}
