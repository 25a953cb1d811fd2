//! Captured traffic as a workload replayed at its captured times (to come).

use super::{ImportError, Imported};

pub fn import_capture(_src: &str, file: &str, _name: &str, _speed: f64) -> Result<Imported, ImportError> {
    Err(ImportError::new(file, None, "not done yet"))
}
