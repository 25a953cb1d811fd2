//! Merging synthetic shards: exact percentiles, aligned intervals, and every refusal.

use super::*;
use crate::config::ShardConfig;
use crate::stats::LatencySummary;
use crate::store::StoredInterval;
use crate::store::{PhaseSummary, RunSummary};

/// Shard `index` of `count`: 3 one-second run intervals from 12:00:00 (its clock started
/// `t0_offset_ms` before), with latencies `base_us`, `2 × base_us`, … of `ops` reads each.
fn shard(index: u32, count: u32, run_id: &str, t0_offset_ms: i64, base_us: u64, ops: u64) -> Shard {
    let start_unix = 1_800_000_000_000i64;
    let t0 = start_unix - t0_offset_ms;
    let config = RunConfig {
        rate: Some(crate::load_shape::LoadShape::fixed(300.0)),
        shard: Some(ShardConfig { index, count, run_id: run_id.into(), barrier_timeout_ms: 60_000 }),
        cluster: crate::config::ClusterConfig { hosts: vec![format!("10.0.0.{index}")], ..Default::default() },
        ..RunConfig::default()
    };
    let mut intervals = Vec::new();
    let mut whole = OpStats::default();
    for i in 0..3u64 {
        let mut st = OpStats::default();
        for k in 0..ops {
            st.record_ok((base_us * (i + 1) + k) * 1_000, base_us * 1_000);
        }
        whole.merge(&st);
        let start_ms = (t0_offset_ms + i as i64 * 1000) as u64;
        intervals.push(StoredInterval {
            index: i as u32,
            phase: Phase::Run,
            start_ms,
            end_ms: start_ms + 1000,
            op: "read".into(),
            stats: st,
            backlog: index as u64,
        });
    }
    let mut notes = Vec::new();
    let run = PhaseSummary::of(Phase::Run, 3.0, &[("read".into(), whole.clone())], Some(100.0), &mut notes);
    // loader i left i × 10 operations never started, the oldest due i × 100 ms before the end
    let never_started = Some(crate::stats::NeverStarted { count: index as u64 * 10, late: index as u64 * 5, oldest_lag_ms: index as f64 * 100.0 });
    let record = RunRecord {
        id: index as i64 + 10,
        workload: "kv".into(),
        started_at_ms: t0,
        ended_at_ms: Some(start_unix + 3000),
        status: RunStatus::Completed,
        config,
        env: RunEnvironment { client_cores: 2, hostname: Some(format!("loader{index}")), clock_t0_unix_ms: Some(t0), ..Default::default() },
        summary: Some(RunSummary { phases: vec![run], notes, clock_offset_ms: Some(index as f64), never_started, ..RunSummary::default() }),
        tags: vec![],
        process: None,
    };
    let data = RunData {
        record,
        intervals,
        histograms: vec![(Phase::Run, "read".into(), whole)],
        server_samples: vec![],
        events: vec![],
        traces: vec![],
        violations: vec![],
    };
    Shard::new(format!("run {}", index + 10), data)
}

/// The merged intervals, added up.
fn intervals(m: &Merged) -> Vec<IntervalSample> {
    let mut out = Vec::new();
    m.for_each_interval(|s| {
        out.push(s);
        Ok(())
    })
    .unwrap();
    out
}

#[test]
fn intervals_on_the_same_boundary_add_up_exactly() {
    // three loaders whose clocks started 1.2 s, 0.3 s and 2 s before the common start
    let shards = vec![shard(1, 3, "r", 300, 500, 100), shard(0, 3, "r", 1_200, 700, 100), shard(2, 3, "r", 2_000, 900, 50)];
    let mut independent = OpStats::default();
    let mut second = OpStats::default();
    for sh in &shards {
        independent.merge(&sh.data.histograms[0].2);
        second.merge(&sh.rows[1].stats.unpack().unwrap());
    }
    let m = merge(shards).unwrap();
    let ivs = intervals(&m);
    assert_eq!(ivs.len(), 3, "one interval per boundary: {:?}", ivs.iter().map(|i| (i.start_ms, i.end_ms)).collect::<Vec<_>>());
    // the merged axis starts at the earliest clock (2 s before the common start)
    assert_eq!((ivs[0].start_ms, ivs[0].end_ms), (2_000, 3_000));
    assert_eq!(ivs[1].ops[0].1.ok, 250);
    assert!(ivs[1].ops[0].1.intended == second.intended, "an interval's histogram is the sum of the shards' on its boundary");
    assert_eq!(ivs[0].backlog, 3, "0 + 1 + 2");
    let h = &m.data.histograms[0].2;
    assert_eq!(h.ok, independent.ok);
    assert!(h.intended == independent.intended, "the merged histogram is the sum of the shards'");
    let run = m.record.summary.as_ref().unwrap().phases.iter().find(|p| p.phase == Phase::Run).unwrap();
    assert_eq!(run.total.latency, LatencySummary::of(&independent.intended));
    assert_eq!(run.total.ops_per_s, 750.0 / 3.0);
    let loaders = &m.record.summary.as_ref().unwrap().loaders;
    assert_eq!(loaders.iter().map(|l| l.shard).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(loaders[2].host.as_deref(), Some("loader2"));
    assert_eq!(loaders[1].clock_offset_ms, Some(1.0));
    assert_eq!(loaders[0].target_per_s, Some(100.0), "a third of 300/s each");
    assert!(loaders[2].behind, "50 ops/s of 100/s");
    assert!(m.record.summary.as_ref().unwrap().notes.iter().any(|n| n.starts_with("loader 2 (loader2) fell behind")));
    assert_eq!(m.record.env.client_cores, 6);
    assert!(m.record.tags.contains(&"merged=r".to_string()));
    let never = m.record.summary.as_ref().unwrap().never_started;
    assert_eq!(never, Some(crate::stats::NeverStarted { count: 30, late: 15, oldest_lag_ms: 200.0 }), "added up, the oldest of any loader's");
}

#[test]
fn shards_that_do_not_make_one_run_are_refused() {
    let e = merge(vec![shard(0, 3, "r", 0, 1, 1), shard(2, 3, "r", 0, 1, 1)]).err().unwrap();
    assert_eq!(e.to_string(), "merge: run \"r\" has 3 shards, but shard 1 is missing (given: 0, 2)");
    let e = merge(vec![shard(0, 2, "r", 0, 1, 1), shard(1, 2, "r", 0, 1, 1), shard(1, 2, "r", 5, 1, 1)]).err().unwrap();
    assert!(matches!(e, MergeError::Twice { index: 1, .. }), "{e}");
    let e = merge(vec![shard(0, 2, "r", 0, 1, 1), shard(1, 2, "other", 0, 1, 1)]).err().unwrap();
    assert!(matches!(e, MergeError::OtherRun { .. }), "{e}");
    let mut odd = shard(1, 2, "r", 0, 1, 1);
    odd.data.record.config.set_fixed_rate(600.0);
    let e = merge(vec![shard(0, 2, "r", 0, 1, 1), odd]).err().unwrap();
    assert!(e.to_string().contains("rate \"300/s\" vs \"600/s\""), "{e}");
    let mut alone = shard(0, 1, "r", 0, 1, 1);
    alone.data.record.config.shard = None;
    assert!(matches!(merge(vec![alone]), Err(MergeError::NotAShard { .. })));
    assert_eq!(merge(Vec::new()).err(), Some(MergeError::Nothing));
    // a count that differs is said as such, not as another run
    let e = merge(vec![shard(0, 2, "s4", 0, 1, 1), shard(1, 3, "s4", 0, 1, 1)]).err().unwrap();
    assert_eq!(e.to_string(), "merge: run 11 says run \"s4\" has 3 shards, but run 10 says 2: give the exports as the loaders of one run wrote them");
}

#[test]
fn exports_edited_into_what_no_loader_writes_are_refused() {
    let edited = |f: &dyn Fn(&mut Shard)| {
        let mut sh = shard(1, 2, "r", 0, 1, 1);
        f(&mut sh);
        merge(vec![shard(0, 2, "r", 0, 1, 1), sh]).err().expect("refused").to_string()
    };
    let zero = edited(&|s| s.data.record.config.shard.as_mut().unwrap().count = 0);
    assert!(zero.contains("run 11 is not as a loader wrote it: it is shard 1 of 0"), "{zero}");
    let clock = edited(&|s| s.data.record.env.clock_t0_unix_ms = Some(i64::MAX));
    assert!(clock.contains("its clock origin is 9223372036854775807 ms, outside the years 1970 to 2286"), "{clock}");
    let backwards = edited(&|s| (s.rows[0].start_ms, s.rows[0].end_ms) = (5_000, 4_000));
    assert!(backwards.contains("interval 0 of read runs from 5000 ms to 4000 ms"), "{backwards}");
    let twice = edited(&|s| {
        let r = s.rows[0].clone();
        s.rows.extend(std::iter::repeat_n(r, 20_000));
    });
    assert!(twice.contains("interval 0 of read is there twice"), "{twice}");
    let name = edited(&|s| s.rows[0].op = "x".repeat(1 << 20));
    assert!(name.contains("names an operation of 1048576 bytes (at most 256)"), "{name}");
}

#[test]
fn a_merged_run_saves_and_reads_back_as_an_ordinary_run() {
    let m = merge(vec![shard(0, 2, "r", 100, 500, 10), shard(1, 2, "r", 400, 600, 10)]).unwrap();
    let store = Store::open_in_memory().unwrap();
    let id = save(&store, &m).unwrap();
    let back = store.run(id).unwrap();
    assert_eq!(back.status, RunStatus::Completed);
    assert_eq!(back.summary.as_ref().unwrap().loaders.len(), 2);
    assert_eq!(store.intervals(id).unwrap().len(), 3);
    assert!(store.histograms(id).unwrap()[0].2.intended == m.data.histograms[0].2.intended);
}

#[test]
fn an_interval_of_several_operations_counts_each_shard_backlog_once_and_keeps_the_workload_order() {
    let with_update = |index: u32| {
        let mut sh = shard(index, 2, "r", 0, 100 * (index as u64 + 1), 5);
        let mut rows: Vec<PackedInterval> = Vec::new();
        for r in &sh.rows {
            let mut update = r.clone();
            update.op = "update".into();
            // shard 1 saved its rows in the other order
            if index == 1 {
                rows.extend([update, r.clone()]);
            } else {
                rows.extend([r.clone(), update]);
            }
        }
        sh.rows = rows;
        let whole = sh.data.histograms[0].2.clone();
        sh.data.histograms.push((Phase::Run, "update".into(), whole));
        sh
    };
    let m = merge(vec![with_update(0), with_update(1)]).unwrap();
    let ivs = intervals(&m);
    assert_eq!(ivs.len(), 3);
    for iv in &ivs {
        assert_eq!(iv.ops.iter().map(|(op, _)| op.as_str()).collect::<Vec<_>>(), ["read", "update"], "shard 0's order");
        assert_eq!(iv.backlog, 1, "0 + 1, not counted once per operation");
        assert_eq!(iv.ops[1].1.ok, 10);
    }
}

#[test]
fn shards_read_from_a_store_merge_as_the_same_shards_in_memory() {
    let store = Store::open_in_memory().unwrap();
    let shards = [shard(0, 2, "r", 100, 500, 10), shard(1, 2, "r", 400, 600, 10)];
    let ids: Vec<RunId> = shards
        .iter()
        .map(|sh| {
            let intervals = sh.rows.iter().map(|r| r.unpack().unwrap()).collect();
            crate::store::save_run_data(&store, &RunData { intervals, ..sh.data.clone() })
        })
        .collect();
    let from_store: Vec<Shard> = ids.iter().map(|id| Shard::from_store(&store, *id).unwrap()).collect();
    assert_eq!(from_store[1].rows, shards[1].rows, "the rows come back with the same encoded histograms");
    let (a, b) = (intervals(&merge(from_store).unwrap()), intervals(&merge(shards.into_iter().collect()).unwrap()));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((x.start_ms, x.end_ms, x.backlog, x.ops.len()), (y.start_ms, y.end_ms, y.backlog, y.ops.len()));
        assert!(x.ops.iter().zip(&y.ops).all(|((o1, s1), (o2, s2))| o1 == o2 && s1.ok == s2.ok && s1.intended == s2.intended && s1.service == s2.service));
    }
}
