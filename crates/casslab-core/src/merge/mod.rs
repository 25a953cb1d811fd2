//! One run from the shards of a run spread over several loaders (`casslab merge`). It checks
//! that the shards belong together (every one a shard of the same run id, with the same
//! configuration but for what differs per loader, each index once, none missing), then adds
//! them up: intervals that fall on the same wall-clock boundary (the shards cut them there)
//! become one interval whose histograms are the sum of the shards' — so every percentile of
//! the merged run is exact, not an average of percentiles — and so do the whole-phase
//! histograms. The merged run keeps shard 0's server samples, events and traces (the servers
//! were polled and the events carried out there), and a per-loader breakdown that says which
//! loaders were saturated or fell behind their share of the rate. It reads and writes only
//! through [`Shard::from_store`], [`gather`] (the shards an argument names: exports, a
//! directory of them, run ids) and [`save`]: callers hand it [`Shard`]s and save the result.
//! The shards' interval rows are held with their histograms encoded ([`PackedInterval`]), and
//! the merged intervals are added up one at a time as they are saved
//! ([`Merged::for_each_interval`]): ten one-hour shards merge in tens of megabytes, where
//! decoded they would take tens of gigabytes.

mod gather;
pub use gather::{gather, GatherError};
mod summary;

use crate::config::{RunConfig, RunEnvironment};
use crate::server::CLIENT;
use crate::stats::{IntervalSample, OpStats, Phase};
use crate::store::{PackedInterval, RunData, RunId, RunRecord, RunStatus, Store, StoreError};
use std::collections::BTreeMap;
use summary::{loader_summaries, summary};

/// A loader's run and where it came from (`run 12`, a file name), for messages: everything
/// saved about it but its intervals (`data.intervals` is not read), and its interval rows in
/// order with their histograms encoded.
pub struct Shard {
    pub source: String,
    pub data: RunData,
    pub rows: Vec<PackedInterval>,
}

impl Shard {
    /// A shard of a run read whole, its intervals decoded: for short runs and tests.
    pub fn new(source: impl Into<String>, mut data: RunData) -> Shard {
        let rows = data.intervals.drain(..).map(|r| PackedInterval::pack(&r)).collect();
        Shard { source: source.into(), data, rows }
    }

    /// Run `id` of `store` as a shard, its rows read with their histograms encoded.
    pub fn from_store(store: &Store, id: RunId) -> Result<Shard, StoreError> {
        let mut rows = Vec::new();
        store.for_each_packed_interval(id, |r| {
            rows.push(r);
            Ok(())
        })?;
        Ok(Shard { source: format!("run {id}"), data: store.run_data_but_intervals(id)?, rows })
    }
}

/// Shards that do not make one run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    #[error("merge: nothing to merge (give the shards' exports, a directory of them, or their run ids)")]
    Nothing,
    #[error("merge: {origin} is not a shard (it was not run with --shard or --shards)")]
    NotAShard { origin: String },
    #[error("merge: {origin} is shard {index} of run \"{run_id}\", but {first} is of run \"{first_run_id}\": give the shards of one run")]
    OtherRun { origin: String, index: u32, run_id: String, first: String, first_run_id: String },
    #[error("merge: shard {index} of run \"{run_id}\" is given twice: {a} and {b}")]
    Twice { run_id: String, index: u32, a: String, b: String },
    #[error("merge: run \"{run_id}\" has {count} shards, but {missing} missing (given: {given})")]
    Missing { run_id: String, count: u32, missing: String, given: String },
    #[error("merge: {origin} was not run like shard 0 ({first}): {differences}")]
    Differs { origin: String, first: String, differences: String },
    #[error("merge: {origin} has no clock origin to align its intervals on (it was saved by an older casslab)")]
    NoClock { origin: String },
    #[error("merge: {origin} says run \"{run_id}\" has {count} shards, but {first} says {first_count}: give the exports as the loaders of one run wrote them")]
    CountDiffers { origin: String, run_id: String, count: u32, first: String, first_count: u32 },
    /// What no loader writes: an export edited or damaged since.
    #[error("merge: {origin} is not as a loader wrote it: {what}; merge the shards' exports as `casslab run --shard` saved them")]
    Edited { origin: String, what: String },
}

/// The latest clock origin a shard may have: the year 2286 in Unix ms (a loader's clock is
/// now; beyond this the sums of times overflow long before).
const LATEST_T0_MS: i64 = 10_000_000_000_000;

/// What a loader writes of itself that an edited export may not hold: its shard's index below
/// the count, a clock origin of this era, intervals that start before they end within a year,
/// each (interval, operation) once, operation names of at most [`crate::limits::MAX_NAME_BYTES`].
fn as_written(sh: &Shard) -> Result<(), MergeError> {
    let edited = |what: String| Err(MergeError::Edited { origin: sh.source.clone(), what });
    if let Some(s) = &sh.data.record.config.shard {
        if s.count == 0 || s.index >= s.count {
            return edited(format!("it is shard {} of {} (a run has at least 1 shard, each index below the count)", s.index, s.count));
        }
    }
    if let Some(t0) = sh.data.record.env.clock_t0_unix_ms {
        if !(0..=LATEST_T0_MS).contains(&t0) {
            return edited(format!("its clock origin is {t0} ms, outside the years 1970 to 2286"));
        }
    }
    let longest_ms = (crate::limits::MAX_DURATION_S * 1000.0) as u64;
    let mut seen = std::collections::HashSet::with_capacity(sh.rows.len());
    for r in &sh.rows {
        if r.op.len() > crate::limits::MAX_NAME_BYTES {
            return edited(format!("interval {} names an operation of {} bytes (at most {})", r.index, r.op.len(), crate::limits::MAX_NAME_BYTES));
        }
        if r.start_ms > r.end_ms || r.end_ms > longest_ms {
            return edited(format!("interval {} of {} runs from {} ms to {} ms", r.index, r.op, r.start_ms, r.end_ms));
        }
        if !seen.insert((r.index, r.op.as_str())) {
            return edited(format!("interval {} of {} is there twice", r.index, r.op));
        }
    }
    Ok(())
}

/// The run the shards make together, ready to be saved.
pub struct Merged {
    pub record: RunRecord,
    /// Everything about the merged run but its intervals (empty): [`Merged::for_each_interval`]
    /// adds those up.
    pub data: RunData,
    /// Each shard's interval rows and clock origin (unix ms).
    rows: Vec<(Vec<PackedInterval>, i64)>,
    /// Every shard row as (its merged interval's key, shard, row), in merged order: rows with
    /// the same key make one interval.
    order: Vec<((i64, u8), usize, usize)>,
    merged_t0: i64,
    op_order: Vec<String>,
}

impl Merged {
    /// Calls `f` with each merged interval in order, its times on the merged run's axis and
    /// its histograms the sum of the shards' rows that fell on the same wall-clock boundary.
    /// Only one interval's histograms are decoded at a time.
    pub fn for_each_interval(&self, mut f: impl FnMut(IntervalSample) -> Result<(), StoreError>) -> Result<(), StoreError> {
        let rank = |op: &str| self.op_order.iter().position(|o| o == op).unwrap_or(usize::MAX);
        for (index, group) in self.order.chunk_by(|a, b| a.0 == b.0).enumerate() {
            let (mut start_unix, mut end_unix, mut backlog) = (i64::MAX, i64::MIN, 0u64);
            let mut ops: Vec<(String, OpStats)> = Vec::new();
            // the backlog is the same on every row of a shard's interval: count it once
            let mut counted: Vec<(usize, u32)> = Vec::new();
            let mut phase = Phase::Run;
            for &(_, shard, row) in group {
                let (rows, t0) = &self.rows[shard];
                let r = &rows[row];
                phase = r.phase;
                start_unix = start_unix.min(t0 + r.start_ms as i64);
                end_unix = end_unix.max(t0 + r.end_ms as i64);
                let stats = r.stats.unpack()?;
                match ops.iter_mut().find(|(op, _)| *op == r.op) {
                    Some((_, st)) => st.merge(&stats),
                    None => ops.push((r.op.clone(), stats)),
                }
                if !counted.contains(&(shard, r.index)) {
                    counted.push((shard, r.index));
                    backlog += r.backlog;
                }
            }
            ops.sort_by_key(|(op, _)| rank(op));
            f(IntervalSample {
                index: index as u32,
                phase,
                start_ms: (start_unix - self.merged_t0).max(0) as u64,
                end_ms: (end_unix - self.merged_t0).max(0) as u64,
                ops,
                backlog,
            })?;
        }
        Ok(())
    }
}

/// The configuration with what differs per loader left out (the shard's index, where it
/// connected, its threads): what every shard of one run must share.
fn shared_config(cfg: &RunConfig) -> serde_json::Value {
    let mut c = cfg.clone();
    if let Some(s) = c.shard.as_mut() {
        s.index = 0;
    }
    c.cluster.hosts.clear();
    c.cluster.local_home = None;
    c.threads = 0;
    let mut v = serde_json::to_value(&c).unwrap_or_default();
    // the rate as people write it, so a difference reads `rate "300/s" vs "600/s"`
    if let Some(m) = v.as_object_mut() {
        m.insert("rate".into(), c.rate_text().into());
    }
    v
}

fn differences(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    match (a.as_object(), b.as_object()) {
        (Some(x), Some(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().filter(|k| x.get(*k) != y.get(*k)).map(|k| format!("{k} {} vs {}", short(x.get(k)), short(y.get(k)))).collect()
        }
        _ => vec!["the whole configuration".into()],
    }
}

fn short(v: Option<&serde_json::Value>) -> String {
    let t = v.map(|v| v.to_string()).unwrap_or_else(|| "none".into());
    if t.chars().count() > 40 {
        format!("{}…", t.chars().take(40).collect::<String>())
    } else {
        t
    }
}

/// Checks that `shards` are every shard of one run, once each; returns them in index order.
pub fn check(mut shards: Vec<Shard>) -> Result<Vec<Shard>, MergeError> {
    let first = shards.first().ok_or(MergeError::Nothing)?;
    let Some(s0) = first.data.record.config.shard.clone() else { return Err(MergeError::NotAShard { origin: first.source.clone() }) };
    let first_source = first.source.clone();
    let mut seen: BTreeMap<u32, String> = BTreeMap::new();
    for sh in &shards {
        let Some(s) = &sh.data.record.config.shard else { return Err(MergeError::NotAShard { origin: sh.source.clone() }) };
        as_written(sh)?;
        if s.run_id == s0.run_id && s.count != s0.count {
            return Err(MergeError::CountDiffers {
                origin: sh.source.clone(),
                run_id: s.run_id.clone(),
                count: s.count,
                first: first_source.clone(),
                first_count: s0.count,
            });
        }
        if s.run_id != s0.run_id {
            return Err(MergeError::OtherRun {
                origin: sh.source.clone(),
                index: s.index,
                run_id: s.run_id.clone(),
                first: first_source.clone(),
                first_run_id: s0.run_id.clone(),
            });
        }
        if let Some(a) = seen.insert(s.index, sh.source.clone()) {
            return Err(MergeError::Twice { run_id: s.run_id.clone(), index: s.index, a, b: sh.source.clone() });
        }
    }
    let missing: Vec<String> = (0..s0.count).filter(|i| !seen.contains_key(i)).map(|i| format!("shard {i}")).collect();
    if !missing.is_empty() {
        let given = seen.keys().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        let missing = if missing.len() == 1 { format!("{} is", missing[0]) } else { format!("{} are", missing.join(", ")) };
        return Err(MergeError::Missing { run_id: s0.run_id.clone(), count: s0.count, missing, given });
    }
    shards.sort_by_key(|s| s.data.record.config.shard.as_ref().map_or(0, |s| s.index));
    let base = shared_config(&shards[0].data.record.config);
    for sh in &shards[1..] {
        let d = differences(&base, &shared_config(&sh.data.record.config));
        if !d.is_empty() {
            return Err(MergeError::Differs { origin: sh.source.clone(), first: shards[0].source.clone(), differences: d.join("; ") });
        }
    }
    for sh in &shards {
        if sh.data.record.env.clock_t0_unix_ms.is_none() {
            return Err(MergeError::NoClock { origin: sh.source.clone() });
        }
    }
    Ok(shards)
}

fn phase_rank(p: Phase) -> u8 {
    match p {
        Phase::Load => 0,
        Phase::Warmup => 1,
        Phase::Run => 2,
    }
}

/// Adds up checked shards into one run.
pub fn merge(shards: Vec<Shard>) -> Result<Merged, MergeError> {
    let shards = check(shards)?;
    let t0 = |s: &Shard| s.data.record.env.clock_t0_unix_ms.unwrap_or(0);
    let merged_t0 = shards.iter().map(t0).min().unwrap_or(0);
    let cfg0 = &shards[0].data.record.config;
    let interval_ms = cfg0.interval_ms.max(1) as i64;

    // intervals: one per (phase, wall-clock boundary), added up when saved
    let mut order: Vec<((i64, u8), usize, usize)> = Vec::new();
    for (i, sh) in shards.iter().enumerate() {
        for (j, row) in sh.rows.iter().enumerate() {
            order.push((((t0(sh) + row.start_ms as i64).div_euclid(interval_ms), phase_rank(row.phase)), i, j));
        }
    }
    order.sort_by_key(|(key, _, _)| *key);
    let op_order: Vec<String> = shards[0].data.histograms.iter().map(|(_, op, _)| op.clone()).collect();
    // the loaders loaded their slices side by side: from the first start to the last end
    let load_span_ms = shards
        .iter()
        .flat_map(|sh| sh.rows.iter().filter(|r| r.phase == Phase::Load).map(move |r| (t0(sh) + r.start_ms as i64, t0(sh) + r.end_ms as i64)))
        .fold((u64::MAX, 0), |(a, b), (from, to)| (a.min((from - merged_t0).max(0) as u64), b.max((to - merged_t0).max(0) as u64)));

    // whole-phase histograms, added up
    let mut histograms: Vec<(Phase, String, OpStats)> = Vec::new();
    for sh in &shards {
        for (phase, op, st) in &sh.data.histograms {
            match histograms.iter_mut().find(|(p, o, _)| p == phase && o == op) {
                Some((_, _, acc)) => acc.merge(st),
                None => histograms.push((*phase, op.clone(), st.clone())),
            }
        }
    }

    let loaders = loader_summaries(&shards, merged_t0);
    let summary = summary(&shards, load_span_ms, &histograms, &loaders);
    let records: Vec<&RunRecord> = shards.iter().map(|s| &s.data.record).collect();
    let status = if records.iter().any(|r| r.status == RunStatus::Failed) {
        RunStatus::Failed
    } else if records.iter().any(|r| r.status == RunStatus::Interrupted) {
        RunStatus::Interrupted
    } else if records.iter().any(|r| r.status == RunStatus::Running) {
        RunStatus::Running
    } else {
        RunStatus::Completed
    };
    // the merged run is no shard: its tags name the run it was merged from
    let mut config = cfg0.clone();
    config.cluster.local_home = None;
    config.shard = None;
    let env = RunEnvironment {
        client_cores: records.iter().map(|r| r.env.client_cores).sum(),
        hostname: Some(format!("{} loaders", shards.len())),
        clock_t0_unix_ms: Some(merged_t0),
        ..records[0].env.clone()
    };
    let shard_cfg = cfg0.shard.clone().expect("checked");
    let mut tags = vec![format!("merged={}", shard_cfg.run_id), format!("shards={}", shard_cfg.count)];
    tags.extend(records[0].tags.iter().filter(|t| !t.starts_with("merged=") && !t.starts_with("shards=")).cloned());
    let record = RunRecord {
        id: 0,
        workload: records[0].workload.clone(),
        started_at_ms: records.iter().map(|r| r.started_at_ms).min().unwrap_or(0),
        ended_at_ms: records.iter().filter_map(|r| r.ended_at_ms).max(),
        status,
        config,
        env,
        summary: Some(summary),
        tags,
        process: None,
    };
    // the servers were polled and the events carried out by shard 0; move them onto the axis
    let shift = (t0(&shards[0]) - merged_t0).max(0) as u64;
    let d0 = &shards[0].data;
    let data = RunData {
        record: record.clone(),
        intervals: Vec::new(),
        histograms,
        server_samples: d0
            .server_samples
            .iter()
            .filter(|s| s.node != CLIENT)
            .cloned()
            .map(|mut s| {
                s.at_ms += shift;
                s
            })
            .collect(),
        events: d0
            .events
            .iter()
            .cloned()
            .map(|(mut e, i)| {
                e.start_ms += shift;
                e.end_ms += shift;
                (e, i)
            })
            .collect(),
        traces: d0
            .traces
            .iter()
            .cloned()
            .map(|mut t| {
                t.at_ms += shift;
                t
            })
            .collect(),
        violations: violations(&shards, merged_t0),
    };
    let rows = shards
        .into_iter()
        .map(|sh| {
            let t0 = t0(&sh);
            (sh.rows, t0)
        })
        .collect();
    Ok(Merged { record, data, rows, order, merged_t0, op_order })
}

/// Saves a merged run in `store`; returns its id.
/// Every loader's first violations on the merged run's time axis, the first of them all.
fn violations(shards: &[Shard], merged_t0: i64) -> Vec<crate::store::SavedViolation> {
    let mut all: Vec<crate::store::SavedViolation> = shards
        .iter()
        .flat_map(|sh| {
            let shift = (sh.data.record.env.clock_t0_unix_ms.unwrap_or(0) - merged_t0).max(0) as u64;
            sh.data.violations.iter().cloned().map(move |mut v| {
                v.at_ms += shift;
                v
            })
        })
        .collect();
    all.sort_by_key(|v| v.at_ms);
    all.truncate(crate::verify::RUN_SAMPLES);
    all
}

pub fn save(store: &Store, m: &Merged) -> Result<RunId, StoreError> {
    let r = &m.record;
    let id = store.begin_run(&r.workload, &r.config, &r.env, &r.tags, r.started_at_ms)?;
    m.for_each_interval(|s| store.add_interval(id, &s))?;
    for (phase, op, st) in &m.data.histograms {
        store.add_histograms(id, *phase, op, st)?;
    }
    store.add_server_samples(id, &m.data.server_samples)?;
    for (e, impact) in &m.data.events {
        store.add_event(id, e, impact.as_ref())?;
    }
    store.add_traces(id, &m.data.traces)?;
    store.add_violations(id, &m.data.violations)?;
    store.finish_run(id, r.status, r.summary.as_ref().unwrap_or(&Default::default()), r.ended_at_ms.unwrap_or(r.started_at_ms))?;
    Ok(id)
}

#[cfg(test)]
mod merge_tests;
