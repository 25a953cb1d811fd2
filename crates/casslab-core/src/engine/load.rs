//! The load phase and its bookkeeping: which data set a load writes (its fingerprint: schema,
//! load statement, the generators it binds, row count and seed), skipping a load whose data
//! is already there (or `--skip-load`), emptying the tables first for `--reload`, a shard's
//! slice of the rows (its sequences advanced past the slices before it), and recording a
//! complete load in the target so the next run can skip it. The phase itself runs in
//! `phase.rs` like any other.

use super::phase::{run_phase, PhaseKind};
use super::{fingerprint, EngineError, EngineEvent, Plan, Run, Target};
use crate::config::LoadMode;
use crate::notice::Notice;
use crate::stats::Phase;
use crate::workload::{OpBody, Workload};
use std::sync::Arc;
use tokio::sync::watch;

/// How the load step ended.
pub(super) enum LoadEnd {
    /// The user stopped it.
    Interrupted,
    /// Done (or skipped): the index the next phase's first interval gets, and what is known of
    /// the data set's rows.
    Next(u32, Loaded),
}

/// What a run knows of the rows its load writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loaded {
    /// This run loaded them.
    Now,
    /// An earlier run loaded them completely (recorded with the data).
    Before,
    /// Not known: `--skip-load` of a data set with no record of a complete load.
    Unknown,
}

/// The data set a run's load writes: the whole load's fingerprint, and the rows of the whole
/// this loader loads (a shard's slice).
pub(super) struct DataSet {
    pub fp: String,
    pub first: u64,
    pub count: u64,
}

/// The data set this loader's load writes.
pub(super) fn data_set<T: Target>(run: &Run<'_, T>) -> Option<DataSet> {
    let total = run.w.load.as_ref()?.count;
    let (first, count) = run.shard.map_or((0, total), |s| s.slice(total));
    Some(DataSet { fp: load_fingerprint(run.w, run.cfg.seed), first, count })
}

/// Loads this loader's rows of `total`, unless the same data is already there.
pub(super) async fn load<T: Target>(run: &Run<'_, T>, plan: Plan<T::Op>, total: u64, stop: &mut watch::Receiver<bool>) -> Result<LoadEnd, EngineError> {
    let (cfg, w) = (run.cfg, run.w);
    // a shard loads its slice of the rows: its part of every sequence
    let (first, count) = run.shard.map_or((0, total), |s| s.slice(total));
    if first > 0 {
        let op = w.operation(&w.load.as_ref().expect("a load plan").op).expect("validated");
        for (name, draws) in sequence_draws(w, op) {
            if let Some(g) = plan.gens.index_of(&name) {
                plan.gens.advance_sequence(g, first.saturating_mul(draws));
            }
        }
    }
    if cfg.load == LoadMode::Reload {
        run.target.truncate_for_reload(w).await?;
        run.notice(Notice::Truncated { keyspace: w.keyspace.clone() });
    }
    let whole_fp = load_fingerprint(w, cfg.seed);
    // a shard records its own slice
    let fp = match run.shard {
        Some(s) => format!("{whole_fp}:{}/{}", s.index, s.count),
        None => whole_fp.clone(),
    };
    let previous = match cfg.load {
        LoadMode::Skip => None,
        _ if run.shard.is_some() => match run.target.loaded(&whole_fp).await? {
            Some(d) => Some(d),
            None => run.target.loaded(&fp).await?,
        },
        _ => run.target.loaded(&fp).await?,
    };
    match (cfg.load, previous) {
        (LoadMode::Skip, _) => {
            run.notice(Notice::LoadSkippedByFlag);
            let known = run.target.loaded(&fp).await.ok().flatten().is_some();
            Ok(LoadEnd::Next(0, if known { Loaded::Before } else { Loaded::Unknown }))
        }
        (_, Some(description)) => {
            run.notice(Notice::AlreadyLoaded { keyspace: w.keyspace.clone(), description });
            Ok(LoadEnd::Next(0, Loaded::Before))
        }
        _ => {
            let what = match run.shard {
                Some(s) => format!("rows {first}..{} of {total} (shard {} of {}), workload {}, seed {}", first + count, s.index, s.count, w.name, cfg.seed),
                None => format!("{count} rows, workload {}, seed {}", w.name, cfg.seed),
            };
            load_rows(run, plan, count, stop, &fp, &what).await
        }
    }
}

/// Runs the load phase over `count` rows and records the data set `fp` (described by `what`)
/// when every operation succeeded.
async fn load_rows<T: Target>(
    run: &Run<'_, T>,
    plan: Plan<T::Op>,
    count: u64,
    stop: &mut watch::Receiver<bool>,
    fp: &str,
    what: &str,
) -> Result<LoadEnd, EngineError> {
    let load_start = tokio::time::Instant::now();
    run.send(EngineEvent::PhaseStarted {
        phase: Phase::Load,
        count: Some(count),
        warmup_s: 0.0,
        duration_s: None,
        rate_per_s: None,
        at_ms: run.at_ms(load_start),
    });
    let names = plan.slot_names.clone();
    let mut params = run.params(PhaseKind::Load { count }, run.seed, 0, load_start);
    if let Some(limit) = run.w.load.as_ref().and_then(|l| l.concurrency) {
        params.concurrency = params.concurrency.min(limit as usize).max(1);
    }
    let r = run_phase(run.target.clone(), Arc::new(plan), params, &run.events, stop).await;
    let failed: u64 = r.measured.iter().map(|s| s.error_count()).sum();
    run.send(EngineEvent::PhaseFinished {
        phase: Phase::Load,
        duration_s: r.measured_s,
        ops: names.into_iter().zip(r.measured.iter().cloned()).collect(),
        target_rate_per_s: None,
        never_started: None,
        count: None,
    });
    r.failure(Phase::Load)?;
    if r.interrupted {
        return Ok(LoadEnd::Interrupted);
    }
    if failed == 0 {
        run.target.record_load(fp, what).await?;
        // a slice of a sharded load: say how many slices make the whole (`casslab verify`)
        if let Some(s) = run.shard {
            let _ = run.target.note(&crate::verify::marks::shards_key(&load_fingerprint(run.w, run.cfg.seed)), &s.count.to_string()).await;
        }
    } else {
        run.notice(Notice::LoadIncomplete { failed });
    }
    Ok(LoadEnd::Next(r.next_index, Loaded::Now))
}

/// The sequence generators `op` draws from, with how many values of each one execution takes
/// (a batch draws once per row, a set read once per key).
fn sequence_draws(w: &Workload, op: &crate::workload::Operation) -> Vec<(String, u64)> {
    let Some(op) = op.cql() else { return Vec::new() };
    let per_execution = op.batch.as_ref().map_or(1, |b| b.size as u64);
    let mut out: Vec<(String, u64)> = Vec::new();
    for (pos, st) in op.statements.iter().enumerate() {
        for (marker, a) in st.args.iter().enumerate() {
            let is_sequence = w.generators.get(a).is_some_and(|g| g.is_sequence());
            if !is_sequence || out.iter().any(|(n, _)| n == a) {
                continue;
            }
            let set_key = op.partitions.as_ref().filter(|p| pos == 0 && p.key_marker == marker).map_or(1, |p| p.count as u64);
            out.push((a.clone(), per_execution * set_key));
        }
    }
    out
}

/// Identifies the data a load phase writes: schema, load statement, the generators it binds,
/// row count and seed.
pub fn load_fingerprint(w: &Workload, seed: u64) -> String {
    let Some(l) = &w.load else { return String::new() };
    let op = w.operation(&l.op).expect("validated");
    let mut parts: Vec<String> = w.schema.iter().map(|s| s.cql.clone()).collect();
    let gen = |a: &str| format!("{a}={}", serde_json::to_string(&w.generators[a]).unwrap_or_default());
    match &op.body {
        OpBody::Cql(op) => {
            for st in &op.statements {
                parts.push(st.cql.clone());
                parts.extend(st.args.iter().map(|a| gen(a)));
            }
        }
        OpBody::Redis(op) => {
            for c in &op.commands {
                parts.push(format!("{} {:?}", c.name, c.args));
                parts.extend(c.bound().map(gen));
            }
        }
    }
    parts.push(l.count.to_string());
    parts.push(seed.to_string());
    // the load's values are made from its keys (verify::write_values), not drawn
    parts.push("values by key".to_string());
    // ... except values drawn in step with their keys (two sequences or more), kept as drawn
    // since this was so: a data set loaded before is another
    if let OpBody::Cql(op) = &op.body {
        let sequences: std::collections::BTreeSet<&String> =
            op.statements.iter().flat_map(|s| s.args.iter()).filter(|a| w.generators.get(*a).is_some_and(|g| g.is_sequence())).collect();
        if sequences.len() >= 2 {
            parts.push("paired sequences as drawn".to_string());
        }
    }
    let refs: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
    fingerprint(&refs)
}
