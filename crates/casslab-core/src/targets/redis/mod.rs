//! The Redis target: a Redis server (or Redis Cluster) through the `redis` crate, implementing
//! the engine's [`Target`]. There is no schema to create; casslab's only bookkeeping is one key,
//! `casslab:loaded`, naming the data set last loaded completely (a later load of other data
//! over the same keys replaces it). Planning encodes every command's literal parts once; an
//! execution draws values and sends one command, its `steps` one after the other, or its
//! `pipeline` at once. A reply that is an error, a timeout or a lost connection is counted by
//! kind; the connection reconnects by itself, so a server that comes back is used again.

mod connect;
mod planned;
mod redis_verify;

pub use connect::{client, connect, connection_info, field, info_section, manager, Conn};
pub use planned::PlannedOp;

use crate::config::{Credentials, RedisConfig};
use crate::engine::{Claim, Completion, EngineError, Plan, Prepared, SetupRole, Target, TargetInfo};
use crate::gen::GeneratorSet;
use crate::stats::{ErrorKind, OpStats};
use crate::workload::Workload;
use planned::Request;
use rand::rngs::SmallRng;
use redis::aio::ConnectionLike;
use redis::{ServerErrorKind, Value};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The key holding the fingerprint and description of the data set last loaded.
const LOADED_KEY: &str = "casslab:loaded";

/// A connected Redis server.
pub struct RedisTarget {
    conn: Conn,
    info: TargetInfo,
    /// Round-robin over the connections of a single server.
    next: AtomicUsize,
    timeout: Duration,
    /// casslab started the server: `--reload` may empty it.
    ours: bool,
    /// The workload's verification, built when its first phase is planned.
    verify: std::sync::OnceLock<crate::verify::verify_build::Built>,
}

/// A failed request.
#[derive(Debug, thiserror::Error)]
pub enum RedisRequestError {
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    #[error("no reply within the request timeout")]
    Timeout,
}

impl RedisTarget {
    /// Connects and reads the server's version (and, for a cluster, its masters).
    pub async fn connect(cfg: &RedisConfig, creds: &Credentials) -> Result<RedisTarget, EngineError> {
        let c = connect(cfg, creds).await?;
        Ok(RedisTarget {
            conn: c.conn,
            info: c.info,
            next: AtomicUsize::new(0),
            timeout: Duration::from_millis(cfg.request_timeout_ms.max(1)),
            ours: cfg.local,
            verify: std::sync::OnceLock::new(),
        })
    }

    /// One execution's request on the next connection, each round trip bounded by the
    /// request timeout.
    async fn send(&self, request: &Request) -> Result<(), RedisRequestError> {
        match &self.conn {
            Conn::Single(all) => {
                let mut c = all[self.next.fetch_add(1, Ordering::Relaxed) % all.len()].clone();
                self.send_on(&mut c, request).await
            }
            Conn::Cluster(c) => self.send_on(&mut c.clone(), request).await,
        }
    }

    /// One command on the next connection, with its reply.
    async fn send_one(&self, cmd: &redis::Cmd) -> Result<Value, RedisRequestError> {
        match &self.conn {
            Conn::Single(all) => {
                let mut c = all[self.next.fetch_add(1, Ordering::Relaxed) % all.len()].clone();
                self.round_trip(c.req_packed_command(cmd)).await
            }
            Conn::Cluster(c) => self.round_trip(c.clone().req_packed_command(cmd)).await,
        }
    }

    async fn send_on(&self, c: &mut impl ConnectionLike, request: &Request) -> Result<(), RedisRequestError> {
        match request {
            Request::One(cmd) => self.round_trip(c.req_packed_command(cmd)).await.map(|_| ()),
            Request::Sequence(cmds) => {
                for cmd in cmds {
                    self.round_trip(c.req_packed_command(cmd)).await?;
                }
                Ok(())
            }
            Request::Pipeline(p) => {
                for v in self.round_trip(c.req_packed_commands(p, 0, p.len())).await? {
                    v.extract_error()?;
                }
                Ok(())
            }
        }
    }

    async fn round_trip<T: IntoReply>(&self, reply: impl Future<Output = redis::RedisResult<T>>) -> Result<T, RedisRequestError> {
        let v = tokio::time::timeout(self.timeout, reply).await.map_err(|_| RedisRequestError::Timeout)??;
        v.checked().map_err(RedisRequestError::Redis)
    }

    /// A bookkeeping command; its failure is a setup failure.
    async fn admin(&self, cmd: &redis::Cmd) -> Result<Value, EngineError> {
        let fail = |e: redis::RedisError| EngineError::Schema { statement: format!("{:?}", cmd.args_iter().next()), message: e.to_string() };
        let v = match &self.conn {
            Conn::Single(all) => all[0].clone().req_packed_command(cmd).await,
            Conn::Cluster(c) => c.clone().req_packed_command(cmd).await,
        };
        v.and_then(Value::extract_error).map_err(fail)
    }
}

impl Target for RedisTarget {
    type Op = PlannedOp;
    type Error = RedisRequestError;

    fn info(&self) -> &TargetInfo {
        &self.info
    }

    async fn prepare(&self, _w: &Workload, _role: SetupRole) -> Result<Prepared, EngineError> {
        self.admin(&redis::cmd("PING")).await?;
        Ok(Prepared::default())
    }

    async fn plan(&self, w: &Workload, mix: &[(String, f64)], gens: Arc<GeneratorSet>) -> Result<Plan<PlannedOp>, EngineError> {
        let redis_op = |name: &str| w.operation(name).and_then(|o| o.redis()).expect("validated: a Redis workload's operations are Redis");
        let built = self.verify.get_or_init(|| redis_verify::build(w, &gens));
        let ops: Vec<PlannedOp> = mix
            .iter()
            .enumerate()
            .map(|(slot, (name, _))| {
                let mut op = planned::plan_op(redis_op(name), &gens);
                op.verify = built.ops.get(name).map(|spec| Box::new(spec.plan(name, &built.verifier, slot)));
                op
            })
            .collect();
        let weights: Vec<f64> = mix.iter().map(|(_, x)| *x).collect();
        Ok(Plan::new(ops, mix.iter().map(|(n, _)| n.clone()).collect(), &weights, gens))
    }

    async fn loaded(&self, fingerprint: &str) -> Result<Option<String>, EngineError> {
        let v = self.admin(redis::cmd("GET").arg(LOADED_KEY)).await?;
        let text: Option<String> = redis::from_redis_value(v).unwrap_or(None);
        Ok(text.and_then(|t| t.strip_prefix(fingerprint).and_then(|d| d.strip_prefix(' ')).map(String::from)))
    }

    async fn record_load(&self, fingerprint: &str, description: &str) -> Result<(), EngineError> {
        self.admin(redis::cmd("SET").arg(LOADED_KEY).arg(format!("{fingerprint} {description}"))).await.map(|_| ())
    }

    async fn claim(&self, key: &str, value: &str, ttl_s: u32) -> Result<Claim, EngineError> {
        let key = format!("casslab:{key}");
        let set = self.admin(redis::cmd("SET").arg(&key).arg(value).arg("NX").arg("EX").arg(ttl_s.max(1))).await?;
        let ours = !matches!(set, Value::Nil);
        let held: Option<String> = redis::from_redis_value(self.admin(redis::cmd("GET").arg(&key)).await?).unwrap_or(None);
        Ok(Claim { value: held.unwrap_or_else(|| value.to_string()), ours, written_at_unix_us: None })
    }

    async fn claims(&self, keys: &[String]) -> Result<Vec<(String, String)>, EngineError> {
        let mut out = Vec::new();
        for k in keys {
            let v: Option<String> = redis::from_redis_value(self.admin(redis::cmd("GET").arg(format!("casslab:{k}"))).await?).unwrap_or(None);
            if let Some(v) = v {
                out.push((k.clone(), v));
            }
        }
        Ok(out)
    }

    async fn truncate_for_reload(&self, _w: &Workload) -> Result<(), EngineError> {
        if !self.ours {
            return Err(EngineError::NotOurRedis);
        }
        self.admin(&redis::cmd("FLUSHDB")).await.map(|_| ())
    }

    #[inline]
    fn start<'a>(
        &'a self,
        op: &'a PlannedOp,
        gens: &GeneratorSet,
        rng: &mut SmallRng,
        stats: &'a Mutex<Vec<OpStats>>,
    ) -> impl Future<Output = Result<Completion, RedisRequestError>> + Send + use<'a> {
        let (request, checked) = match &op.verify {
            Some(plan) => {
                let _joint = op.joint_sequences.then(|| gens.joint_draw());
                (None, Some(plan.draw(gens, &op.generators, rng)))
            }
            None => (Some(op.request(gens, rng)), None),
        };
        async move {
            match (request, checked, &op.verify) {
                (Some(request), _, _) => self.send(&request).await?,
                (None, Some((values, ns)), Some(plan)) => redis_verify::run(self, op, plan, values, ns, stats).await?,
                _ => {}
            }
            Ok(Completion::default())
        }
    }

    fn classify(e: &RedisRequestError) -> ErrorKind {
        classify(e)
    }

    fn verifier(&self) -> Option<Arc<crate::verify::Verifier>> {
        self.verify.get().map(|b| b.verifier.clone())
    }

    async fn note(&self, key: &str, value: &str) -> Result<(), EngineError> {
        self.admin(redis::cmd("SET").arg(format!("casslab:note:{key}")).arg(value)).await.map(|_| ())
    }

    async fn read_row<'a>(
        &'a self,
        table: &'a crate::verify::Table,
        key: Vec<scylla::value::CqlValue>,
        _consistency: crate::workload::Consistency,
    ) -> Result<Option<Vec<Option<scylla::value::CqlValue>>>, String> {
        redis_verify::read_row(self, table, &key).await
    }

    async fn noted(&self, key: &str) -> Result<Option<String>, EngineError> {
        Ok(redis::from_redis_value(self.admin(redis::cmd("GET").arg(format!("casslab:note:{key}"))).await?).unwrap_or(None))
    }
}

/// A reply that may be an error the server sent.
trait IntoReply: Sized {
    fn checked(self) -> redis::RedisResult<Self>;
}

impl IntoReply for Value {
    fn checked(self) -> redis::RedisResult<Value> {
        self.extract_error()
    }
}

impl IntoReply for Vec<Value> {
    /// Each reply of a pipeline is checked by the caller.
    fn checked(self) -> redis::RedisResult<Vec<Value>> {
        Ok(self)
    }
}

/// Which counted kind a failed request belongs to.
pub fn classify(e: &RedisRequestError) -> ErrorKind {
    let RedisRequestError::Redis(e) = e else { return ErrorKind::Timeout };
    if e.is_timeout() {
        return ErrorKind::Timeout;
    }
    match e.kind() {
        redis::ErrorKind::Io | redis::ErrorKind::ClusterConnectionNotFound => ErrorKind::Connection,
        redis::ErrorKind::Server(ServerErrorKind::BusyLoading | ServerErrorKind::TryAgain | ServerErrorKind::ClusterDown | ServerErrorKind::MasterDown) => {
            ErrorKind::Unavailable
        }
        _ if e.code() == Some("OOM") || e.code() == Some("BUSY") => ErrorKind::Overloaded,
        _ if e.is_connection_dropped() || e.is_connection_refusal() => ErrorKind::Connection,
        _ => ErrorKind::Other,
    }
}
