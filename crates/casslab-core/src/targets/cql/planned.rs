//! The CQL target's planned operations: a prepared statement with the generators bound to its
//! markers, an operation's statements with its access settings (set reads, batches, client
//! timestamps) and the stats slots of the figures recorded beside it, and preparing a statement
//! with an operation's client settings. Data only: planning lives in `prepare` and `access`,
//! executing in `access` and the target itself.

use crate::engine::EngineError;
use crate::workload::{Consistency, CqlOp, PartitionSet, Workload};
use scylla::client::session::Session;
use scylla::policies::timestamp_generator::MonotonicTimestampGenerator;
use scylla::statement::batch::Batch;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency as DriverConsistency, SerialConsistency};
use std::collections::HashMap;
use uuid::Uuid;

/// One prepared statement and where its values come from.
pub(crate) struct PlannedStatement {
    pub prepared: PreparedStatement,
    /// For each bind marker, an index into the operation's `generators`.
    pub slots: Vec<usize>,
    /// A conditional statement (`IF …`): its `[applied]` column is read.
    pub conditional: bool,
    /// A SELECT: the plain path counts the rows it returns (an execution whose reads all came
    /// back empty is recorded as an empty read).
    pub read: bool,
    /// Sent as one unpaged request: a write, or a read of at most one row (every key column
    /// bound by `=`), whose answer is the same in one page. Cassandra runs a paged read through
    /// its pager even when the answer fits in one page, which costs the server more per read.
    pub unpaged: bool,
}

/// One operation ready to run (opaque outside the CQL target).
pub struct PlannedOp {
    pub(crate) name: String,
    /// The distinct generators the operation draws from, once per execution.
    pub(crate) generators: Vec<usize>,
    pub(crate) statements: Vec<PlannedStatement>,
    /// Set reads and batches (see `access`); `None` for plain statements.
    pub(crate) access: Option<AccessPlan>,
    /// `timestamp: client`: the clock that stamps each write.
    pub(crate) client_ts: Option<MonotonicTimestampGenerator>,
    /// Stats slot of `<op>.request` (set reads) and `<op>.not_applied` (conditional writes);
    /// assigned by [`Plan::new`].
    pub(crate) request_slot: Option<usize>,
    pub(crate) not_applied_slot: Option<usize>,
    /// Draws from two or more sequences: one execution's draws are taken together
    /// ([`GeneratorSet::joint_draw`]).
    pub(crate) joint_sequences: bool,
    /// Its part in verification (recorded writes, checked reads), when it has one.
    pub(crate) verify: Option<Box<crate::verify::op::OpPlan>>,
    /// Verification was asked of its reads, which casslab cannot check on the path it takes
    /// (a set read, a batch): its stats slot, where the rows it reads are counted as unchecked.
    pub(crate) unchecked_slot: Option<usize>,
    /// A vector search whose recall is judged, when it is one.
    pub(crate) ann: Option<Box<super::ann_plan::AnnPlan>>,
    /// The generators it draws from (a verified operation makes values after drawing).
    pub(crate) gens: std::sync::Arc<crate::gen::GeneratorSet>,
}

impl PlannedOp {
    /// Whether the operation needs more than the plain statement path of the worker.
    #[inline]
    pub fn is_special(&self) -> bool {
        self.access.is_some() || self.client_ts.is_some() || self.not_applied_slot.is_some() || self.ann.is_some()
    }
}

pub(crate) fn driver_consistency(c: Consistency) -> DriverConsistency {
    match c {
        Consistency::Any => DriverConsistency::Any,
        Consistency::One => DriverConsistency::One,
        Consistency::Two => DriverConsistency::Two,
        Consistency::Three => DriverConsistency::Three,
        Consistency::Quorum => DriverConsistency::Quorum,
        Consistency::All => DriverConsistency::All,
        Consistency::LocalQuorum => DriverConsistency::LocalQuorum,
        Consistency::EachQuorum => DriverConsistency::EachQuorum,
        Consistency::LocalOne => DriverConsistency::LocalOne,
        Consistency::Serial => DriverConsistency::Serial,
        Consistency::LocalSerial => DriverConsistency::LocalSerial,
    }
}

pub(crate) fn driver_serial(c: Consistency) -> SerialConsistency {
    match c {
        Consistency::LocalSerial => SerialConsistency::LocalSerial,
        _ => SerialConsistency::Serial,
    }
}

/// Prepares `cql` with the client settings of operation `name` (consistency, serial
/// consistency, page size, idempotence).
pub(crate) async fn prepare_for(session: &Session, w: &Workload, name: &str, op: &CqlOp, cql: &str, line: usize) -> Result<PreparedStatement, EngineError> {
    let mut prepared = session.prepare(cql).await.map_err(|e| EngineError::Prepare {
        file: w.origin.clone(),
        line,
        op: name.to_string(),
        cql: cql.to_string(),
        message: e.to_string(),
    })?;
    prepared.set_consistency(driver_consistency(op.consistency));
    if let Some(sc) = op.serial_consistency {
        prepared.set_serial_consistency(Some(driver_serial(sc)));
    }
    prepared.set_page_size(op.page_size);
    prepared.set_is_idempotent(op.idempotent);
    Ok(prepared)
}

/// How a successful operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Done,
    /// A conditional write (LWT) the cluster did not apply.
    NotApplied,
    /// Every read of the operation returned no row.
    Empty,
    /// The operation's reads returned this many rows (at least one).
    Rows(u64),
}

impl Outcome {
    /// The outcome of an operation that ran, had reads or not, and read `rows` rows in all.
    pub(crate) fn of_reads(reads: bool, rows: usize) -> Outcome {
        match (reads, rows) {
            (false, _) => Outcome::Done,
            (true, 0) => Outcome::Empty,
            (true, n) => Outcome::Rows(n as u64),
        }
    }
}

/// What an operation needs beyond its statements.
pub(crate) enum AccessPlan {
    Set(Box<SetPlan>),
    Batch(BatchPlan),
    Rows(Box<RowsPlan>),
}

/// `rows:` — partitions made from seeds (see `gen::rows`).
pub(crate) struct RowsPlan {
    pub maker: crate::gen::rows::RowsMaker,
    /// Per drawn value of the operation: where a visit holds it (`Ok(i)` the key's `i`th value,
    /// `Err(l)` a row's level `l`), or `None` when it is drawn per row.
    pub from: Vec<Option<Result<usize, usize>>>,
    /// A read binds one row; a write writes every row its visits take.
    pub read: bool,
    /// Rows per batch at most (1: each row on its own), and the batch's kind.
    pub batch_rows: usize,
    pub batch_type: scylla::statement::batch::BatchType,
}

pub(crate) struct SetPlan {
    pub spec: PartitionSet,
    /// Index into the op's drawn values of the key generator.
    pub key_value: usize,
    /// One partition (with `LIMIT ?` appended when the set is limited).
    pub single: PlannedStatement,
    /// `pk IN ?` (with `LIMIT ?` when limited), for `in` and `in_by_replica`.
    pub in_stmt: Option<PlannedStatement>,
    /// `in_by_replica`: the IN statement pinned to each node, by host id.
    pub per_node: HashMap<Uuid, PreparedStatement>,
    pub keyspace: String,
    pub table: String,
}

pub(crate) struct BatchPlan {
    pub batch: Batch,
    pub size: usize,
    /// Per drawn value: keep row 0's value in every row (partition-key values of a
    /// single-partition batch).
    pub keep: Vec<bool>,
}
