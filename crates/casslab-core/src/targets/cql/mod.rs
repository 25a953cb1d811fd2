//! The CQL target: a driver session to a Cassandra cluster, implementing the engine's
//! [`Target`]. Setup creates the workload's keyspace and schema and keeps casslab's bookkeeping
//! (`casslab_meta`: whether casslab created the keyspace, which data sets it loaded); planning
//! prepares every statement with its client settings; an execution binds freshly drawn values
//! and runs the operation's statements (or its set read or batch): a write or a read of one
//! row as one unpaged request, anything else to its last page; a vector search's rows are
//! handed to its recall judge (`ann`). Failed requests are classified into counted error kinds.

mod access;
mod ann;
mod ann_plan;
mod checked;
mod connect;
mod cql_verify;
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
    /// The workload's verification (and its vector searches), built when its first phase is
    /// planned.
    verify: tokio::sync::OnceCell<cql_verify::Verification>,
    /// The recall judges of the vector searches, one per searched column and similarity.
    judges: Mutex<Vec<Arc<crate::recall::RecallJudge>>>,
    /// Where the judges leave what they found until the engine's sampler takes it.
    recall: Arc<crate::recall::RecallSink>,
    /// Reads of a verified table's rows by key, prepared once per table (`Target::read_row`).
    row_reads: Mutex<std::collections::HashMap<String, scylla::statement::prepared::PreparedStatement>>,
}

impl CqlTarget {
    /// Connects and reads the cluster's version and shape.
    pub async fn connect(cfg: &ClusterConfig, creds: &Credentials) -> Result<CqlTarget, EngineError> {
        let session = connect(cfg, creds).await?;
        let info = cluster_info(&session).await;
        Ok(CqlTarget {
            session,
            info,
            keyspace: OnceLock::new(),
            verify: tokio::sync::OnceCell::new(),
            row_reads: Mutex::default(),
            judges: Mutex::default(),
            recall: Arc::default(),
        })
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
        let verification = self.verify.get_or_try_init(|| cql_verify::build(&self.session, w, &gens)).await?;
        let built = &verification.built;
        let mut ops = Vec::with_capacity(mix.len());
        let mut weights = Vec::with_capacity(mix.len());
        for (slot, (name, weight)) in mix.iter().enumerate() {
            let op = w.operation(name).and_then(|o| o.cql()).expect("validated: a CQL workload's operations are CQL");
            let mut planned = prepare::plan_op(&self.session, w, &gens, name, op).await?;
            match built.ops.get(name) {
                Some(spec) if planned.access.is_none() && cql_verify::slots_of(&gens, op).0 == planned.generators => {
                    planned.verify = Some(Box::new(spec.plan(name, &built.verifier, slot)));
                }
                Some(spec) if spec.unchecked.iter().any(|u| *u) => planned.unchecked_slot = Some(slot),
                _ => {}
            }
            if let Some((_, Ok(m))) = verification.searches.iter().find(|(op, _)| op == name).filter(|_| planned.verify.is_none() && planned.access.is_none()) {
                let judge = self.judge_for(m, &gens, &built.verifier).map_err(|e| EngineError::RecallJudge(e.to_string()))?;
                planned.ann = Some(Box::new(ann::AnnPlan { measured: m.clone(), judge, slot }));
            }
            ops.push(planned);
            weights.push(*weight);
        }
        Ok(prepare::phase_plan(ops, &weights, gens))
    }

    async fn loaded(&self, fingerprint: &str) -> Result<Option<String>, EngineError> {
        keyspace::loaded(&self.session, fingerprint, keyspace::meta_consistency(&self.info)).await
    }

    async fn record_load(&self, fingerprint: &str, description: &str) -> Result<(), EngineError> {
        keyspace::record_load(&self.session, fingerprint, description, keyspace::meta_consistency(&self.info)).await
    }

    async fn claim(&self, key: &str, value: &str, ttl_s: u32) -> Result<Claim, EngineError> {
        keyspace::claim(&self.session, key, value, ttl_s).await
    }

    async fn claims(&self, keys: &[String]) -> Result<Vec<(String, String)>, EngineError> {
        keyspace::claims(&self.session, keys).await
    }

    async fn truncate_for_reload(&self, w: &Workload) -> Result<(), EngineError> {
        let state = self.keyspace.get().copied().unwrap_or_default();
        keyspace::truncate_for_reload(&self.session, w, state, keyspace::meta_consistency(&self.info)).await
    }

    #[inline]
    fn start<'a>(
        &'a self,
        op: &'a PlannedOp,
        gens: &GeneratorSet,
        rng: &mut SmallRng,
        stats: &'a Mutex<Vec<OpStats>>,
    ) -> impl Future<Output = Result<Completion, ExecutionError>> + Send + use<'a> {
        let (values, ns) = match &op.verify {
            Some(plan) => {
                let _joint = op.joint_sequences.then(|| gens.joint_draw());
                let (values, ns) = plan.draw(gens, &op.generators, rng);
                (values, Some(ns))
            }
            None => (access::draw_values(op, gens, rng), None),
        };
        async move {
            // A request's future is several kilobytes (the driver's own state): built in place
            // on the heap, it is not copied again each time the engine moves the (now small)
            // future that awaits it — into its set of requests in flight, into its first poll.
            let request = Box::write(Box::new_uninit(), run_op(&self.session, op, values, ns, stats));
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

    fn verifier(&self) -> Option<Arc<crate::verify::Verifier>> {
        self.verify.get().map(|v| v.built.verifier.clone())
    }

    fn recall_sink(&self) -> Option<Arc<crate::recall::RecallSink>> {
        self.judges.lock().unwrap_or_else(|e| e.into_inner()).first().map(|_| self.recall.clone())
    }

    async fn note(&self, key: &str, value: &str) -> Result<(), EngineError> {
        keyspace::note(&self.session, key, value, keyspace::meta_consistency(&self.info)).await
    }

    async fn noted(&self, key: &str) -> Result<Option<String>, EngineError> {
        keyspace::noted(&self.session, key, keyspace::meta_consistency(&self.info)).await
    }

    async fn attach(&self, w: &Workload) -> Result<(), EngineError> {
        keyspace::attach(&self.session, w).await
    }

    async fn read_row<'a>(
        &'a self,
        table: &'a crate::verify::Table,
        key: Vec<CqlValue>,
        consistency: crate::workload::Consistency,
    ) -> Result<Option<Vec<Option<CqlValue>>>, String> {
        let cached = self.row_reads.lock().unwrap_or_else(|e| e.into_inner()).get(&table.name).cloned();
        let ps = match cached {
            Some(ps) => ps,
            None => {
                let ps = cql_verify::row_read(&self.session, table, consistency).await?;
                self.row_reads.lock().unwrap_or_else(|e| e.into_inner()).insert(table.name.clone(), ps.clone());
                ps
            }
        };
        let result = self.session.execute_unpaged(&ps, &key).await.map_err(|e| e.to_string())?;
        let rows = result.into_rows_result().map_err(|e| e.to_string())?;
        Ok(rows.maybe_first_row::<scylla::value::Row>().map_err(|e| e.to_string())?.map(|r| r.columns))
    }
}

impl CqlTarget {
    /// The judge of `m`'s vectors: the one already started for its column and similarity, or
    /// a new one.
    fn judge_for(
        &self,
        m: &ann::Measured,
        gens: &Arc<GeneratorSet>,
        verifier: &Arc<crate::verify::Verifier>,
    ) -> std::io::Result<Arc<crate::recall::RecallJudge>> {
        let mut judges = self.judges.lock().unwrap_or_else(|e| e.into_inner());
        let same = |j: &&Arc<crate::recall::RecallJudge>| {
            j.spec.table_index == m.table_index && j.spec.generator == m.generator && j.spec.similarity == m.search.similarity
        };
        if let Some(j) = judges.iter().find(same) {
            return Ok(j.clone());
        }
        let spec = crate::recall::CorpusSpec {
            table: verifier.tables[m.table_index].clone(),
            table_index: m.table_index,
            generator: m.generator,
            dims: m.dims,
            similarity: m.search.similarity,
        };
        let judge = Arc::new(crate::recall::RecallJudge::start(spec, gens.clone(), verifier.clone(), self.recall.clone())?);
        judges.push(judge.clone());
        Ok(judge)
    }
}

/// One execution of `op` with its drawn values (and their `n`, for a verified operation).
async fn run_op(
    session: &Session,
    op: &PlannedOp,
    values: Vec<CqlValue>,
    ns: Option<crate::verify::op::Ns>,
    stats: &Mutex<Vec<OpStats>>,
) -> Result<Outcome, ExecutionError> {
    if let (Some(plan), Some(ns)) = (&op.verify, ns) {
        return checked::run(session, op, plan, values, ns, stats).await;
    }
    if let Some(plan) = &op.ann {
        return ann::run(session, op, plan, values, stats).await;
    }
    let outcome = if op.is_special() { access::execute(session, op, values, stats).await? } else { run_plain(session, op, &values).await? };
    if let Some(slot) = op.unchecked_slot {
        match outcome {
            Outcome::Rows(n) => crate::verify::op::count_unchecked(slot, n as usize, stats),
            Outcome::Empty => crate::verify::op::count_unchecked(slot, 0, stats),
            Outcome::Done | Outcome::NotApplied => {}
        }
    }
    Ok(outcome)
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
