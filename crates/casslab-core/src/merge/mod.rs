//! One run from the shards of a run spread over several loaders (`casslab merge`). It checks
//! that the shards belong together (every one a shard of the same run id, with the same
//! configuration but for what differs per loader, each index once, none missing), then adds
//! them up: intervals that fall on the same wall-clock boundary (the shards cut them there)
//! become one interval whose histograms are the sum of the shards' — so every percentile of
//! the merged run is exact, not an average of percentiles — and so do the whole-phase
//! histograms. The merged run keeps shard 0's server samples, events and traces (the servers
//! were polled and the events carried out there), and a per-loader breakdown that says which
//! loaders were saturated or fell behind their share of the rate. It reads nothing and writes
//! nothing itself: callers hand it [`RunData`]s (from a store or exports) and save the result.

mod summary;

use crate::config::{RunConfig, RunEnvironment};
use crate::server::CLIENT;
use crate::stats::{IntervalSample, OpStats, Phase};
use crate::store::{RunData, RunId, RunRecord, RunStatus, Store, StoreError, StoredInterval};
use std::collections::BTreeMap;
use summary::{loader_summaries, summary};

/// A loader's run and where it came from (`run 12`, a file name), for messages.
pub struct Shard {
    pub source: String,
    pub data: RunData,
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
}

/// The run the shards make together, ready to be saved.
pub struct Merged {
    pub record: RunRecord,
    /// Intervals in order; their times are on the merged run's axis.
    pub intervals: Vec<IntervalSample>,
    pub data: RunData,
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
    serde_json::to_value(&c).unwrap_or_default()
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
    if t.chars().count() > 40 { format!("{}…", t.chars().take(40).collect::<String>()) } else { t }
}

/// Checks that `shards` are every shard of one run, once each; returns them in index order.
pub fn check(mut shards: Vec<Shard>) -> Result<Vec<Shard>, MergeError> {
    let first = shards.first().ok_or(MergeError::Nothing)?;
    let Some(s0) = first.data.record.config.shard.clone() else { return Err(MergeError::NotAShard { origin: first.source.clone() }) };
    let first_source = first.source.clone();
    let mut seen: BTreeMap<u32, String> = BTreeMap::new();
    for sh in &shards {
        let Some(s) = &sh.data.record.config.shard else { return Err(MergeError::NotAShard { origin: sh.source.clone() }) };
        if s.run_id != s0.run_id || s.count != s0.count {
            return Err(MergeError::OtherRun { origin: sh.source.clone(), index: s.index, run_id: s.run_id.clone(), first: first_source.clone(), first_run_id: s0.run_id.clone() });
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

    // intervals: one per (phase, wall-clock boundary), their operations added up
    struct Bucket {
        start_unix: i64,
        end_unix: i64,
        backlog: u64,
        ops: Vec<(String, OpStats)>,
    }
    let mut buckets: BTreeMap<(i64, u8), (Phase, Bucket)> = BTreeMap::new();
    for sh in &shards {
        for row in &sh.data.intervals {
            let (start, end) = (t0(sh) + row.start_ms as i64, t0(sh) + row.end_ms as i64);
            let key = (start.div_euclid(interval_ms), phase_rank(row.phase));
            let (_, b) = buckets.entry(key).or_insert_with(|| (row.phase, Bucket { start_unix: start, end_unix: end, backlog: 0, ops: Vec::new() }));
            b.start_unix = b.start_unix.min(start);
            b.end_unix = b.end_unix.max(end);
            match b.ops.iter_mut().find(|(op, _)| *op == row.op) {
                Some((_, st)) => st.merge(&row.stats),
                None => b.ops.push((row.op.clone(), row.stats.clone())),
            }
        }
        // the backlog is the same on every row of an interval: count it once per shard
        for rows in sh.data.intervals.chunk_by(|a, b| a.index == b.index) {
            let key = ((t0(sh) + rows[0].start_ms as i64).div_euclid(interval_ms), phase_rank(rows[0].phase));
            if let Some((_, b)) = buckets.get_mut(&key) {
                b.backlog += rows[0].backlog;
            }
        }
    }
    let op_order: Vec<String> = shards[0].data.histograms.iter().map(|(_, op, _)| op.clone()).collect();
    let rank = |op: &str| op_order.iter().position(|o| o == op).unwrap_or(usize::MAX);
    let intervals: Vec<IntervalSample> = buckets
        .into_values()
        .enumerate()
        .map(|(i, (phase, mut b))| {
            b.ops.sort_by_key(|(op, _)| rank(op));
            IntervalSample {
                index: i as u32,
                phase,
                start_ms: (b.start_unix - merged_t0).max(0) as u64,
                end_ms: (b.end_unix - merged_t0).max(0) as u64,
                ops: b.ops,
                backlog: b.backlog,
            }
        })
        .collect();

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
    let summary = summary(&shards, &intervals, &histograms, &loaders);
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
    let mut data = RunData {
        record: record.clone(),
        intervals: Vec::new(),
        histograms,
        server_samples: d0.server_samples.iter().filter(|s| s.node != CLIENT).cloned().map(|mut s| {
            s.at_ms += shift;
            s
        }).collect(),
        events: d0.events.iter().cloned().map(|(mut e, i)| {
            e.start_ms += shift;
            e.end_ms += shift;
            (e, i)
        }).collect(),
        traces: d0.traces.iter().cloned().map(|mut t| {
            t.at_ms += shift;
            t
        }).collect(),
    };
    data.intervals = intervals
        .iter()
        .flat_map(|s| s.ops.iter().map(move |(op, st)| StoredInterval { index: s.index, phase: s.phase, start_ms: s.start_ms, end_ms: s.end_ms, op: op.clone(), stats: st.clone(), backlog: s.backlog }))
        .collect();
    Ok(Merged { record, intervals, data })
}

/// Saves a merged run in `store`; returns its id.
pub fn save(store: &Store, m: &Merged) -> Result<RunId, StoreError> {
    let r = &m.record;
    let id = store.begin_run(&r.workload, &r.config, &r.env, &r.tags, r.started_at_ms)?;
    for s in &m.intervals {
        store.add_interval(id, s)?;
    }
    for (phase, op, st) in &m.data.histograms {
        store.add_histograms(id, *phase, op, st)?;
    }
    store.add_server_samples(id, &m.data.server_samples)?;
    for (e, impact) in &m.data.events {
        store.add_event(id, e, impact.as_ref())?;
    }
    store.add_traces(id, &m.data.traces)?;
    store.finish_run(id, r.status, r.summary.as_ref().unwrap_or(&Default::default()), r.ended_at_ms.unwrap_or(r.started_at_ms))?;
    Ok(id)
}

#[cfg(test)]
mod tests;
