//! `casslab verify`: a verification pass over a workload's data set. It connects to the
//! workload's server without creating anything, finds what the data set should hold — every
//! key its load wrote, once, or the record the last run that wrote to it left in the results
//! store — and reads every such key back by key, many at once, checking each row as a verified
//! read does. It refuses what it cannot prove: a data set not loaded completely, or written
//! since its load by a run that kept no record (or whose record this store does not have).

use super::{Lab, RunSpec, SessionError};
use crate::engine::{load_fingerprint, EngineError, Target};
use crate::gen::GeneratorSet;
use crate::targets::cql::CqlTarget;
use crate::targets::redis::RedisTarget;
use crate::verify::marks::{shards_key, Source};
use crate::verify::pass_report::{PassReport, TablePass};
use crate::verify::{saved, write_values::show, Verifier};
use crate::workload::{Consistency, TargetKind};
use futures::stream::{self, StreamExt};
use std::sync::Arc;
use std::time::Instant;

/// How a pass reads.
#[derive(Debug, Clone, Copy)]
pub struct PassOptions {
    /// Reads in flight at once.
    pub concurrency: usize,
    pub consistency: Consistency,
}

/// Keys read back so far, of how many.
#[derive(Debug, Clone, Copy)]
pub struct PassProgress {
    pub table_index: usize,
    pub done: u64,
    pub total: u64,
}

/// Why a pass could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Nothing says what the data set should hold.
    #[error("cannot verify the data of {workload} in {keyspace}: {why}")]
    Unknown { workload: String, keyspace: String, why: String },
}

impl From<EngineError> for PassError {
    fn from(e: EngineError) -> PassError {
        PassError::Session(e.into())
    }
}

/// Reads back every key of `spec`'s workload's data set and checks each row.
pub async fn verify_data(lab: &Lab<'_>, spec: &RunSpec, opts: &PassOptions, progress: &(dyn Fn(PassProgress) + Sync)) -> Result<PassReport, PassError> {
    let cfg = &spec.config;
    let w = super::workload_for_run(spec.workload.clone(), Some(true));
    match w.target {
        TargetKind::Cql => pass(lab, CqlTarget::connect(&cfg.cluster, &lab.credentials).await?, spec, &w, opts, progress).await,
        TargetKind::Redis => {
            let Some(rc) = &cfg.redis else { return Err(EngineError::NoRedisTarget(w.name.clone()).into()) };
            pass(lab, RedisTarget::connect(rc, &lab.credentials).await?, spec, &w, opts, progress).await
        }
    }
}

async fn pass<T: Target>(
    lab: &Lab<'_>,
    target: T,
    spec: &RunSpec,
    w: &crate::workload::Workload,
    opts: &PassOptions,
    progress: &(dyn Fn(PassProgress) + Sync),
) -> Result<PassReport, PassError> {
    let started = Instant::now();
    let unknown = |why: String| PassError::Unknown { workload: w.name.clone(), keyspace: w.keyspace.clone(), why };
    let Some(load) = &w.load else { return Err(unknown("the workload has no load phase, so nothing says which keys it holds".into())) };
    target.attach(w).await?;
    let gens = Arc::new(GeneratorSet::build(&w.generators).map_err(EngineError::from)?.in_keyspace(&w.keyspace));
    target.plan(w, &[(load.op.clone(), 1.0)], gens.clone()).await?;
    let v = target.verifier().filter(|v| !v.tables.is_empty()).ok_or_else(|| unknown(not_modeled(target.verifier().as_deref())))?;
    let fp = load_fingerprint(w, spec.config.seed);
    if target.loaded(&fp).await?.is_none() && !sharded_load_complete(&target, &fp).await? {
        return Err(unknown(format!(
            "its load ({} rows, seed {}) is not recorded as complete there: run the workload with the same -P and --seed first",
            load.count, spec.config.seed
        )));
    }
    let expected_from = expected_state(lab, &target, &v, &fp, load.count).await.map_err(unknown)?;
    let mut report = PassReport {
        workload: w.name.clone(),
        keyspace: w.keyspace.clone(),
        consistency: (w.target == TargetKind::Cql).then(|| format!("{:?}", opts.consistency).to_uppercase()),
        expected_from,
        ..PassReport::default()
    };
    for (i, table) in v.tables.iter().enumerate() {
        // counters are not read back: what they should hold is not kept after their run
        if !v.is_proven(i) || table.counters.is_some() {
            continue;
        }
        let total = table.record.settled().count() as u64;
        let mut tally = TablePass::new(&table.name);
        let mut last = Instant::now();
        let reads = stream::iter(table.record.settled()).map(|(index, state)| {
            let key = table.key_values(&gens, index);
            let target = &target;
            async move { (index, state, key.clone(), target.read_row(table, key, opts.consistency).await) }
        });
        let mut reads = reads.buffer_unordered(opts.concurrency.max(1));
        while let Some((index, state, key, row)) = reads.next().await {
            let shown = || key.iter().zip(&table.key).map(|(v, p)| format!("{}={}", p.column, show(Some(v)))).collect::<Vec<_>>().join(" ");
            tally.add(&gens, table, index, &state, row, shown);
            if last.elapsed().as_secs_f64() >= 1.0 {
                last = Instant::now();
                progress(PassProgress { table_index: i, done: tally.keys, total });
            }
        }
        progress(PassProgress { table_index: i, done: tally.keys, total });
        report.tables.push(tally);
    }
    report.duration_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Why no table of the workload can be verified.
fn not_modeled(v: Option<&Verifier>) -> String {
    let why: Vec<String> = v.map(|v| v.notices.iter().map(|n| n.to_string()).collect()).unwrap_or_default();
    if why.is_empty() {
        "none of its tables is written in a way casslab records (see `casslab run --verify`)".into()
    } else {
        why.join("; ")
    }
}

/// Whether data set `fp` was loaded in slices by shards, every slice completely.
async fn sharded_load_complete<T: Target>(target: &T, fp: &str) -> Result<bool, EngineError> {
    let Some(n) = target.noted(&shards_key(fp)).await?.and_then(|n| n.parse::<u32>().ok()) else { return Ok(false) };
    for i in 0..n {
        if target.loaded(&format!("{fp}:{i}/{n}")).await?.is_none() {
            return Ok(false);
        }
    }
    Ok(n > 0)
}

/// Sets each table's record to what the data set should hold; says where that came from, or
/// why it cannot be known.
async fn expected_state<T: Target>(lab: &Lab<'_>, target: &T, v: &Verifier, fp: &str, count: u64) -> Result<String, String> {
    match crate::engine::data_set_source(target, fp, None).await {
        Source::Load => {
            for (t, first_n) in &v.loads {
                let table = &v.tables[*t];
                for i in 0..count {
                    if let Some(k) = table.index(&[first_n.wrapping_add(i as i64)]) {
                        table.record.mark_loaded(k);
                    }
                }
                v.set_proven(*t);
            }
            Ok("its load: every key written once, untouched since".into())
        }
        Source::Unknown(why) => Err(why),
        Source::Records(tokens) => {
            for (t, table) in v.tables.iter().enumerate().filter(|(_, t)| t.counters.is_none()) {
                let mut found = false;
                for token in &tokens {
                    match lab.results.record(token, &table.name).map_err(|e| e.to_string())? {
                        Some(bytes) => {
                            saved::decode_into(&bytes, &table.record, table.model)
                                .map_err(|e| format!("cannot go on from the record of the run that wrote to it last: {e}"))?;
                            found = true;
                        }
                        None if v.loads.iter().any(|(lt, _)| *lt == t) => {
                            return Err(format!(
                                "the run that wrote to it last kept its record of {} in another results store (or it was deleted): give that store with --store",
                                table.name
                            ));
                        }
                        None => {}
                    }
                }
                if found {
                    v.set_proven(t);
                }
            }
            Ok(match tokens.as_slice() {
                [one] => format!("the record of the run that wrote to it last ({one})"),
                all => format!("the records of the {} shards of the run that wrote to it last", all.len()),
            })
        }
    }
}
