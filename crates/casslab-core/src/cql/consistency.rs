//! Consistency levels as workload files and flags write them (`LOCAL_QUORUM`, `ONE`, …): the
//! client setting of a CQL statement, read here so that a workload, a run's `--consistency`
//! and the verifier agree on the names.

use serde::{Deserialize, Serialize};

/// A consistency level, as written in workload files (`LOCAL_QUORUM`, `ONE`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Consistency {
    Any,
    One,
    Two,
    Three,
    Quorum,
    All,
    LocalQuorum,
    EachQuorum,
    LocalOne,
    Serial,
    LocalSerial,
}

impl Consistency {
    pub const NAMES: &'static [&'static str] =
        &["ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE", "SERIAL", "LOCAL_SERIAL"];
    pub fn parse(s: &str) -> Option<Consistency> {
        use Consistency::*;
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "ANY" => Any,
            "ONE" => One,
            "TWO" => Two,
            "THREE" => Three,
            "QUORUM" => Quorum,
            "ALL" => All,
            "LOCAL_QUORUM" => LocalQuorum,
            "EACH_QUORUM" => EachQuorum,
            "LOCAL_ONE" => LocalOne,
            "SERIAL" => Serial,
            "LOCAL_SERIAL" => LocalSerial,
            _ => return None,
        })
    }
    pub fn is_serial(self) -> bool {
        matches!(self, Consistency::Serial | Consistency::LocalSerial)
    }
}
