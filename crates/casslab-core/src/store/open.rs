//! Opening the results store: [`Store::open`] for commands that save runs (it creates the file
//! and its directories), [`Store::open_existing`] for commands that only read them (a path
//! where no run was ever saved is an error, and nothing is created there), and an in-memory
//! store for tests. Connection settings and the schema's upgrade path are `migrations.rs`; what a
//! store holds is `db.rs`.

use super::{migrations, Store, StoreError};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

impl Store {
    /// Opens (creating it and its parent directories if needed) the database file at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir { path: dir.to_path_buf(), error: source })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open { path: path.to_path_buf(), error: source })?;
        ready(conn, path)
    }

    /// Opens the database file at `path` only if it is there: [`StoreError::Missing`] when
    /// it is not, leaving no file or directory behind (for `show`, `runs`, `report`, `compare`).
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing { path: path.to_path_buf() });
        }
        // without SQLITE_OPEN_CREATE: a file removed since the check is not made again
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|source| StoreError::Open { path: path.to_path_buf(), error: source })?;
        ready(conn, path)
    }

    /// A store that lives only as long as the value (for tests and `--no-save` runs).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let mut conn = Connection::open_in_memory()?;
        migrations::configure(&conn, false)?;
        migrations::migrate(&mut conn)?;
        Ok(Store::from_connection(conn))
    }
}

/// Applies the connection settings and creates or checks the schema of a database file, once
/// the file is known to be casslab's own (or empty): nothing is written to another's.
fn ready(mut conn: Connection, path: &Path) -> Result<Store, StoreError> {
    let opened = |source| StoreError::Open { path: path.to_path_buf(), error: source };
    ours(&conn, path)?;
    migrations::configure(&conn, true).map_err(opened)?;
    migrations::migrate(&mut conn).map_err(|e| match e {
        StoreError::Sqlite(source) => opened(source),
        e => e,
    })?;
    Ok(Store::from_connection(conn))
}

/// Refuses a database that holds tables but not casslab's `runs` (read only: neither the
/// journal mode nor the schema is touched before this says yes).
fn ours(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let opened = |source| StoreError::Open { path: path.to_path_buf(), error: source };
    let mut names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect())
        .map_err(opened)?;
    if names.is_empty() || names.iter().any(|n| n == "runs") && names.iter().any(|n| n == "intervals") {
        return Ok(());
    }
    let more = names.len().saturating_sub(5);
    names.truncate(5);
    let tables = format!(
        "the table{} {}{}",
        if names.len() + more == 1 { "" } else { "s" },
        names.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    );
    Err(StoreError::NotOurs { path: path.to_path_buf(), tables })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::store::SCHEMA_VERSION;

    #[test]
    fn a_missing_store_is_not_created_by_a_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/results.db");
        let e = Store::open_existing(&path).err().expect("no store there yet");
        assert!(matches!(&e, StoreError::Missing { path: p } if *p == path), "{e:?}");
        assert!(e.to_string().contains(&path.display().to_string()) && e.to_string().contains("no run was saved there yet"), "{e}");
        assert!(!path.exists() && !path.parent().unwrap().exists(), "a reader created {}", path.display());
    }

    #[test]
    fn a_reader_sees_what_a_writer_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let id = Store::open(&path).unwrap().begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &[], 1).unwrap();
        let store = Store::open_existing(&path).unwrap();
        assert_eq!(store.latest_run().unwrap(), Some(id));
    }

    #[test]
    fn a_database_of_another_program_is_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ada');").unwrap();
        let before = std::fs::read(&path).unwrap();
        for e in [Store::open(&path).err(), Store::open_existing(&path).err()] {
            let e = e.expect("another program's database is refused");
            assert!(matches!(&e, StoreError::NotOurs { .. }), "{e:?}");
            assert!(e.to_string().contains("the table contacts") && e.to_string().contains("never changes"), "{e}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "the file was changed");
        let tables: i64 = Connection::open(&path).unwrap().query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).unwrap();
        assert_eq!(tables, 1);
        assert!(!dir.path().join("other.db-wal").exists());
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        drop(Store::open(&path).unwrap());
        Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        assert!(matches!(Store::open(&path), Err(StoreError::UnsupportedSchema { found: 2, supported: 1 })));
        assert!(matches!(Store::open_existing(&path), Err(StoreError::UnsupportedSchema { found: 2, supported: 1 })));
    }
}
