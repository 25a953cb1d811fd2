//! Saving and reading what an experiment records about itself beside its runs: one JSON
//! document per experiment and kind (`experiment_documents`), written when the experiment
//! starts and replaced as it learns more (a sequential experiment's horizon after its first
//! block, its final look). The store keeps the text; what it means is the caller's
//! (`analysis::design_record`). A table added beside the version-1 ones: builds that do not
//! know it ignore it.

use super::{Store, StoreError};
use rusqlite::{params, OptionalExtension};

/// The table, created when missing by every build that knows it.
pub(super) const EXPERIMENT_DOCUMENTS: &str = "
CREATE TABLE IF NOT EXISTS experiment_documents (
    experiment_id TEXT NOT NULL,
    kind          TEXT NOT NULL,
    json          TEXT NOT NULL,
    PRIMARY KEY (experiment_id, kind)
);
";

impl Store {
    /// Saves (or replaces) experiment `experiment_id`'s document of `kind`.
    pub fn set_experiment_document(&self, experiment_id: &str, kind: &str, json: &str) -> Result<(), StoreError> {
        self.conn()
            .execute("INSERT OR REPLACE INTO experiment_documents (experiment_id, kind, json) VALUES (?1, ?2, ?3)", params![experiment_id, kind, json])?;
        Ok(())
    }

    /// Experiment `experiment_id`'s document of `kind`, if one was saved.
    pub fn experiment_document(&self, experiment_id: &str, kind: &str) -> Result<Option<String>, StoreError> {
        let conn = self.conn();
        let json = conn
            .query_row("SELECT json FROM experiment_documents WHERE experiment_id = ?1 AND kind = ?2", params![experiment_id, kind], |r| r.get(0))
            .optional()?;
        Ok(json)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn a_document_is_replaced_and_read_back_by_experiment_and_kind() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.experiment_document("e-1", "design").unwrap(), None);
        store.set_experiment_document("e-1", "design", "{\"a\":1}").unwrap();
        store.set_experiment_document("e-1", "design", "{\"a\":2}").unwrap();
        store.set_experiment_document("e-2", "design", "{\"b\":1}").unwrap();
        assert_eq!(store.experiment_document("e-1", "design").unwrap().as_deref(), Some("{\"a\":2}"));
        assert_eq!(store.experiment_document("e-1", "other").unwrap(), None);
    }
}
