//! The CQL target: a driver session to a Cassandra cluster, implementing the engine's
//! [`Target`]. Setup creates the workload's keyspace and schema and keeps casslab's bookkeeping
//! (`casslab_meta`: whether casslab created the keyspace, which data sets it loaded); planning
//! prepares every statement with its client settings; an execution binds freshly drawn values
//! and runs the operation's statements (or its set read or batch): a write or a read of one
//! row as one unpaged request, anything else to its last page. Failed
//! requests are classified into counted error kinds.

mod access;
mod connect;
mod keyspace;
mod planned;
mod prepare;

pub use connect::{cluster_info, connect, connect_without_schema};
pub use keyspace::default_replication;
pub use planned::PlannedOp;

use crate::config::{ClusterConfig, Credentials};
use crate::engine::{Claim, Completion, EngineError, Plan, Prepared, SetupRole, Target, TargetInfo};
use crate::gen::GeneratorSet;
use crate::stats::{ErrorKind, OpStats};
use crate::workload::Workload;
use planned::Outcome;
use rand::rngs::SmallRng;
use scylla::client::session::Session;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::response::PagingState;
use scylla::value::CqlValue;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, OnceLock};

/// A connected CQL cluster.
pub struct CqlTarget {
    session: Session,
    info: TargetInfo,
    /// What `prepare` found: whether casslab created the keyspace (it truncates only those).
    keyspace: OnceLock<keyspace::KeyspaceState>,
}

impl CqlTarget {
    /// Connects and reads the cluster's version and shape.
    pub async fn connect(cfg: &ClusterConfig, creds: &Credentials) -> Result<CqlTarget, EngineError> {
        let session = connect(cfg, creds).await?;
        let info = cluster_info(&session).await;
        Ok(CqlTarget { session, info, keyspace: OnceLock::new() })
    }

    /// The driver session (for the server view and traces, which read system tables).
    pub fn session(&self) -> &Session {
        &self.session
    }
}

impl Target for CqlTarget {
    type Op = PlannedOp;
    type Error = ExecutionError;

    fn info(&self) -> &TargetInfo {
        &self.info
    }

    async fn prepare(&self, w: &Workload, role: SetupRole) -> Result<Prepared, EngineError> {
        if let SetupRole::WaitsFor { timeout_ms } = role {
            keyspace::wait_for_schema(&self.session, w, timeout_ms).await?;
        }
        let state = keyspace::prepare_keyspace(&self.session, w, &self.info).await?;
        let _ = self.keyspace.set(state);
        Ok(Prepared { created_keyspace: state.created_now })
    }

    async fn plan(&self, w: &Workload, mix: &[(String, f64)], gens: Arc<GeneratorSet>) -> Result<Plan<PlannedOp>, EngineError> {
        let mut ops = Vec::with_capacity(mix.len());
        let mut weights = Vec::with_capacity(mix.len());
        for (name, weight) in mix {
            let op = w.operation(name).and_then(|o| o.cql()).expect("validated: a CQL workload's operations are CQL");
            ops.push(prepare::plan_op(&self.session, w, &gens, name, op).await?);
            weights.push(*weight);
        }
        Ok(prepare::phase_plan(ops, &weights, gens))
    }

    async fn loaded(&self, fingerprint: &str) -> Result<Option<String>, EngineError> {
        keyspace::loaded(&self.session, fingerprint).await
    }

    async fn record_load(&self, fingerprint: &str, description: &str) -> Result<(), EngineError> {
        keyspace::record_load(&self.session, fingerprint, description).await
    }

    async fn claim(&self, key: &str, value: &str, ttl_s: u32) -> Result<Claim, EngineError> {
        keyspace::claim(&self.session, key, value, ttl_s).await
    }

    async fn claims(&self, keys: &[String]) -> Result<Vec<(String, String)>, EngineError> {
        keyspace::claims(&self.session, keys).await
    }

    async fn truncate_for_reload(&self, w: &Workload) -> Result<(), EngineError> {
        let state = self.keyspace.get().copied().unwrap_or_default();
        keyspace::truncate_for_reload(&self.session, w, state).await
    }

    #[inline]
    fn start<'a>(
        &'a self,
        op: &'a PlannedOp,
        gens: &GeneratorSet,
        rng: &mut SmallRng,
        stats: &'a Mutex<Vec<OpStats>>,
    ) -> impl Future<Output = Result<Completion, ExecutionError>> + Send + use<'a> {
        let values = access::draw_values(op, gens, rng);
        async move {
            // A request's future is several kilobytes (the driver's own state): built in place
            // on the heap, it is not copied again each time the engine moves the (now small)
            // future that awaits it — into its set of requests in flight, into its first poll.
            let request = Box::write(Box::new_uninit(), run_op(&self.session, op, values, stats));
            let outcome = Box::into_pin(request).await?;
            Ok(match outcome {
                Outcome::Done => Completion::default(),
                Outcome::NotApplied => Completion { also: op.not_applied_slot, ..Completion::default() },
                Outcome::Empty => Completion { empty: true, ..Completion::default() },
                Outcome::Rows(rows) => Completion { rows, ..Completion::default() },
            })
        }
    }

    fn classify(e: &ExecutionError) -> ErrorKind {
        classify(e)
    }
}

/// One execution of `op` with its drawn values.
async fn run_op(session: &Session, op: &PlannedOp, values: Vec<CqlValue>, stats: &Mutex<Vec<OpStats>>) -> Result<Outcome, ExecutionError> {
    if op.is_special() {
        access::execute(session, op, values, stats).await
    } else {
        run_plain(session, op, &values).await
    }
}

/// The plain path: each statement of the operation once, unpaged when it can be (see
/// `PlannedStatement::unpaged`), else to its last page. The rows its reads return are counted
/// (from the row count the response carries; no row is decoded).
async fn run_plain(session: &Session, op: &PlannedOp, values: &[CqlValue]) -> Result<Outcome, ExecutionError> {
    let (mut reads, mut rows) = (false, 0usize);
    for st in &op.statements {
        let row: Vec<&CqlValue> = st.slots.iter().map(|i| &values[*i]).collect();
        let mut paging = PagingState::start();
        loop {
            let (result, next) = if st.unpaged {
                (session.execute_unpaged(&st.prepared, &row).await?, ControlFlow::Break(()))
            } else {
                let (result, next) = session.execute_single_page(&st.prepared, &row, paging).await?;
                (result, next.into_paging_control_flow())
            };
            if st.read {
                reads = true;
                rows += result.into_rows_result().map_or(0, |r| r.rows_num());
            }
            match next {
                ControlFlow::Break(()) => break,
                ControlFlow::Continue(p) => paging = p,
            }
        }
    }
    Ok(Outcome::of_reads(reads, rows))
}

/// Which counted kind a failed request belongs to.
pub fn classify(e: &ExecutionError) -> ErrorKind {
    match e {
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => ErrorKind::Timeout,
            DbError::Unavailable { .. } => ErrorKind::Unavailable,
            DbError::Overloaded | DbError::RateLimitReached { .. } | DbError::IsBootstrapping => ErrorKind::Overloaded,
            _ => ErrorKind::Other,
        },
        ExecutionError::ConnectionPoolError(_)
        | ExecutionError::EmptyPlan
        | ExecutionError::LastAttemptError(RequestAttemptError::BrokenConnectionError(_))
        | ExecutionError::LastAttemptError(RequestAttemptError::UnableToAllocStreamId) => ErrorKind::Connection,
        _ => ErrorKind::Other,
    }
}
