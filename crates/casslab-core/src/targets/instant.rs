//! `--target instant`: a target inside casslab that answers every operation at once, with no
//! server. Each execution draws the values its statements (or Redis commands) bind from the
//! workload's generators, as a real target would before sending, and completes. What a run
//! against it measures is the client alone: the engine's schedule, the mix, the generators
//! and the recording — the ceiling of one client machine and its CPU per operation, or a
//! workload's schedule tried before any server exists. Nothing is created, loaded or verified.

use crate::engine::{Claim, Completion, EngineError, Plan, Prepared, SetupRole, Target, TargetInfo};
use crate::gen::GeneratorSet;
use crate::stats::{ErrorKind, OpStats};
use crate::workload::{OpBody, Workload};
use rand::rngs::SmallRng;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

/// What `TargetInfo::server_version` says of a run against the instant target (the saved
/// runs and their reports name the server by it).
pub const SERVER_NAME: &str = "instant target (no server, answers at once)";

/// The instant target; its claims live in the process, so a sharded run's loaders in one
/// process agree through it.
pub struct InstantTarget {
    info: TargetInfo,
    claims: Mutex<BTreeMap<String, String>>,
}

/// One planned operation: the generators its executions draw from, each once.
pub struct InstantOp {
    generators: Vec<usize>,
}

impl InstantTarget {
    pub fn new() -> InstantTarget {
        InstantTarget { info: TargetInfo { server_version: Some(SERVER_NAME.into()), node_count: 0, datacenters: Vec::new() }, claims: Mutex::default() }
    }
}

impl Default for InstantTarget {
    fn default() -> Self {
        InstantTarget::new()
    }
}

/// The generators an operation binds, in the order it names them, each once.
fn bound_generators(body: &OpBody, gens: &GeneratorSet) -> Vec<usize> {
    let names: Vec<&str> = match body {
        OpBody::Cql(c) => c.statements.iter().flat_map(|s| s.args.iter().map(String::as_str)).collect(),
        OpBody::Redis(r) => r.commands.iter().flat_map(|c| c.bound()).collect(),
    };
    let mut out: Vec<usize> = Vec::new();
    for i in names.into_iter().filter_map(|n| gens.index_of(n)) {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

impl Target for InstantTarget {
    type Op = InstantOp;
    type Error = Infallible;

    fn info(&self) -> &TargetInfo {
        &self.info
    }

    async fn prepare(&self, _w: &Workload, _role: SetupRole) -> Result<Prepared, EngineError> {
        Ok(Prepared::default())
    }

    async fn plan(&self, w: &Workload, mix: &[(String, f64)], gens: Arc<GeneratorSet>) -> Result<Plan<InstantOp>, EngineError> {
        let ops =
            mix.iter().map(|(name, _)| InstantOp { generators: w.operation(name).map(|o| bound_generators(&o.body, &gens)).unwrap_or_default() }).collect();
        let weights: Vec<f64> = mix.iter().map(|(_, x)| *x).collect();
        Ok(Plan::new(ops, mix.iter().map(|(n, _)| n.clone()).collect(), &weights, gens))
    }

    async fn loaded(&self, _fingerprint: &str) -> Result<Option<String>, EngineError> {
        Ok(None)
    }

    async fn record_load(&self, _fingerprint: &str, _description: &str) -> Result<(), EngineError> {
        Ok(())
    }

    async fn truncate_for_reload(&self, _w: &Workload) -> Result<(), EngineError> {
        Ok(())
    }

    async fn claim(&self, key: &str, value: &str, _ttl_s: u32) -> Result<Claim, EngineError> {
        let mut claims = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        let held = claims.entry(key.to_string()).or_insert_with(|| value.to_string()).clone();
        Ok(Claim { ours: held == value, value: held, written_at_unix_us: None })
    }

    async fn claims(&self, keys: &[String]) -> Result<Vec<(String, String)>, EngineError> {
        let claims = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        Ok(keys.iter().filter_map(|k| claims.get(k).map(|v| (k.clone(), v.clone()))).collect())
    }

    fn start<'a>(
        &'a self,
        op: &'a InstantOp,
        gens: &GeneratorSet,
        rng: &mut SmallRng,
        _stats: &'a Mutex<Vec<OpStats>>,
    ) -> impl std::future::Future<Output = Result<Completion, Infallible>> + Send + use<'a> {
        for &g in &op.generators {
            std::hint::black_box(gens.value(g, rng));
        }
        // answered at once (the engine's workers still yield now and then: they count each
        // completion against tokio's cooperative budget)
        std::future::ready(Ok(Completion::default()))
    }

    fn classify(e: &Infallible) -> ErrorKind {
        match *e {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;

    fn kv() -> Workload {
        crate::workload::load_workload("kv", &Default::default()).unwrap().0
    }

    #[tokio::test]
    async fn plans_the_mix_with_the_generators_each_operation_binds() {
        let w = kv();
        let gens = Arc::new(GeneratorSet::build(&w.generators).unwrap());
        let mix = w.run.as_ref().unwrap().mix.clone();
        let plan = InstantTarget::new().plan(&w, &mix, gens.clone()).await.unwrap();
        assert_eq!(plan.slot_names, mix.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());
        for (op, (name, _)) in plan.ops.iter().zip(&mix) {
            let statement_args: Vec<&String> = w.operation(name).unwrap().cql().unwrap().statements.iter().flat_map(|s| &s.args).collect();
            assert!(!op.generators.is_empty() && op.generators.len() <= statement_args.len(), "{name}: {:?}", op.generators);
            for g in &op.generators {
                assert!(statement_args.iter().any(|a| gens.index_of(a) == Some(*g)), "{name} draws a generator it does not bind");
            }
        }
    }

    #[tokio::test]
    async fn the_first_claim_holds() {
        let t = InstantTarget::new();
        let first = t.claim("start", "a", 10).await.unwrap();
        let second = t.claim("start", "b", 10).await.unwrap();
        assert!(first.ours && first.value == "a");
        assert!(!second.ours && second.value == "a");
        assert_eq!(t.claims(&["start".into(), "other".into()]).await.unwrap(), vec![("start".to_string(), "a".to_string())]);
    }
}
