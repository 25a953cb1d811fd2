//! `--target fixed-10ms`: a target inside casslab that answers every operation 10 ms after it
//! starts (a timer, no server). It draws each operation's values as the instant target does,
//! then waits. Its service time is known in advance, so a run against it shows what casslab's
//! own measurement adds: latency from the intended start against service time when the rate
//! outruns the concurrency (10 ms per request caps one request in flight at about 100 ops/s),
//! and the client's cost when requests wait in flight instead of completing at once.

use super::instant::{InstantOp, InstantTarget};
use crate::engine::{Claim, Completion, EngineError, Plan, Prepared, SetupRole, Target, TargetInfo};
use crate::gen::GeneratorSet;
use crate::stats::{ErrorKind, OpStats};
use crate::workload::Workload;
use rand::rngs::SmallRng;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the target takes to answer each operation.
pub const SERVICE_TIME: Duration = Duration::from_millis(10);

/// The target of a fixed service time: the instant target, answering after [`SERVICE_TIME`].
pub struct DelayedTarget {
    info: TargetInfo,
    answers: InstantTarget,
}

impl DelayedTarget {
    pub fn new() -> DelayedTarget {
        let name = format!("fixed-{}ms target (no server, answers after {} ms)", SERVICE_TIME.as_millis(), SERVICE_TIME.as_millis());
        DelayedTarget { info: TargetInfo { server_version: Some(name), node_count: 0, datacenters: Vec::new() }, answers: InstantTarget::new() }
    }
}

impl Default for DelayedTarget {
    fn default() -> Self {
        DelayedTarget::new()
    }
}

impl Target for DelayedTarget {
    type Op = InstantOp;
    type Error = Infallible;

    fn info(&self) -> &TargetInfo {
        &self.info
    }

    async fn prepare(&self, w: &Workload, role: SetupRole) -> Result<Prepared, EngineError> {
        self.answers.prepare(w, role).await
    }

    async fn plan(&self, w: &Workload, mix: &[(String, f64)], gens: Arc<GeneratorSet>) -> Result<Plan<InstantOp>, EngineError> {
        self.answers.plan(w, mix, gens).await
    }

    async fn loaded(&self, fingerprint: &str) -> Result<Option<String>, EngineError> {
        self.answers.loaded(fingerprint).await
    }

    async fn record_load(&self, fingerprint: &str, description: &str) -> Result<(), EngineError> {
        self.answers.record_load(fingerprint, description).await
    }

    async fn truncate_for_reload(&self, w: &Workload) -> Result<(), EngineError> {
        self.answers.truncate_for_reload(w).await
    }

    async fn claim(&self, key: &str, value: &str, ttl_s: u32) -> Result<Claim, EngineError> {
        self.answers.claim(key, value, ttl_s).await
    }

    async fn claims(&self, keys: &[String]) -> Result<Vec<(String, String)>, EngineError> {
        self.answers.claims(keys).await
    }

    fn start<'a>(
        &'a self,
        op: &'a InstantOp,
        gens: &GeneratorSet,
        rng: &mut SmallRng,
        stats: &'a Mutex<Vec<OpStats>>,
    ) -> impl std::future::Future<Output = Result<Completion, Infallible>> + Send + use<'a> {
        let answer = self.answers.start(op, gens, rng, stats);
        async move {
            tokio::time::sleep(SERVICE_TIME).await;
            answer.await
        }
    }

    fn classify(e: &Infallible) -> ErrorKind {
        match *e {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_operation_is_answered_after_the_service_time() {
        let w = crate::workload::load_workload("kv", &Default::default()).unwrap().0;
        let gens = Arc::new(GeneratorSet::build(&w.generators).unwrap());
        let mix = w.run.as_ref().unwrap().mix.clone();
        let t = DelayedTarget::new();
        let plan = t.plan(&w, &mix, gens.clone()).await.unwrap();
        let stats = Mutex::new(Vec::new());
        let mut rng = <SmallRng as rand::SeedableRng>::seed_from_u64(1);
        let started = tokio::time::Instant::now();
        t.start(&plan.ops[0], &gens, &mut rng, &stats).await.unwrap();
        assert!(started.elapsed() >= SERVICE_TIME, "answered after {:?}", started.elapsed());
    }
}
