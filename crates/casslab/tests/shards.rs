//! A run spread over several loaders, end to end against the real test node: three shard
//! processes load their slices and run at a shared fixed rate from a common start agreed
//! through the cluster (a barrier in `casslab_meta`), each exporting its run; `casslab merge`
//! makes one run of the exports. The test checks that the load has neither overlap nor gap
//! (the table holds exactly the rows of an unsharded load), that the merged run's operations
//! are the shards' sum and every merged percentile is the percentile of the shards'
//! histograms added up here, independently, that the merged rate is the shared target, and
//! the refusals: a shard that never arrives fails the barrier by name; a missing or repeated
//! export makes `merge` refuse.

mod common;
use casslab_core::report::json::read_run_json;
use casslab_core::stats::{LatencySummary, OpStats, Phase};
use casslab_core::store::Store;
use common::{casslab, load_lock, node, run};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

const ROWS: u64 = 3000;
const RATE: f64 = 300.0;

/// Shard `i` of `n` of run `run_id` as a child process, exporting to `dir/s<i>.json`.
fn shard(dir: &Path, host: &str, keyspace: &str, run_id: &str, i: u32, n: u32, extra: &[&str]) -> Child {
    casslab()
        .args(["run", "kv", "-P", &format!("rows={ROWS}"), "-P", &format!("keyspace={keyspace}"), "--hosts", host])
        .args(["--shard", &format!("{i}/{n}"), "--run-id", run_id, "--rate", &RATE.to_string(), "--duration", "4s", "--warmup", "1s", "--concurrency", "16"])
        .args(["--store", dir.join(format!("s{i}.db")).to_str().unwrap(), "--json", dir.join(format!("s{i}.json")).to_str().unwrap(), "--no-lint"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(c: Child) -> (i32, String, String) {
    let o = c.wait_with_output().unwrap();
    let (out, err) = common::text(&o);
    (o.status.code().unwrap_or(-1), out, err)
}

fn rows_in(host: &str, keyspace: &str) -> (u64, tokio::runtime::Runtime, scylla::client::session::Session) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(scylla::client::session_builder::SessionBuilder::new().known_node(host).build()).unwrap();
    let r = rt.block_on(s.query_unpaged(format!("SELECT count(*) FROM {keyspace}.kv"), &[])).unwrap();
    let (n,): (i64,) = r.into_rows_result().unwrap().single_row().unwrap();
    (n as u64, rt, s)
}

#[test]
fn three_shards_start_together_and_merge_exactly() {
    let _g = load_lock();
    let host = node();
    let unique = format!("{}_{}", std::process::id(), std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() % 100_000);
    let keyspace = format!("casslab_shards_{unique}");
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<Child> = (0..3).map(|i| shard(dir.path(), host, &keyspace, &format!("t{unique}"), i, 3, &[])).collect();
    for (i, c) in children.into_iter().enumerate() {
        let (code, out, err) = finish(c);
        assert_eq!(code, 0, "shard {i}:\nstdout: {out}\nstderr: {err}");
        assert!(err.contains("the run phase starts at"), "shard {i} agreed on a start:\n{err}");
    }

    // the slices cover the rows once each: exactly an unsharded load
    let (rows, rt, session) = rows_in(host, &keyspace);
    assert_eq!(rows, ROWS, "rows loaded by 3 shards");

    // merge the exports; add the shards' histograms up independently
    let exports: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("s{i}.json"))).collect();
    let shards: Vec<_> = exports.iter().map(|p| read_run_json(p).unwrap()).collect();
    let loads: Vec<u64> = shards.iter().map(|s| s.histograms.iter().filter(|h| h.0 == Phase::Load).map(|h| h.2.ok).sum()).collect();
    assert_eq!(loads, [1000, 1000, 1000], "each shard loaded its third");
    let mut added = OpStats::default();
    for s in &shards {
        for (_, _, st) in s.histograms.iter().filter(|h| h.0 == Phase::Run && !h.1.contains('.')) {
            added.merge(st);
        }
    }
    let merged_store = dir.path().join("merged.db");
    let mut args: Vec<String> = vec!["merge".into()];
    args.extend(exports.iter().map(|p| p.display().to_string()));
    args.extend(["--store".into(), merged_store.display().to_string()]);
    let (code, out, err) = run(casslab().args(&args));
    assert_eq!(code, 0, "merge:\nstdout: {out}\nstderr: {err}");
    assert!(out.contains("loaders (") && out.contains("s2.json"), "the per-loader breakdown:\n{out}");

    let store = Store::open(&merged_store).unwrap();
    let id = store.latest_run().unwrap().unwrap();
    let merged = store.run(id).unwrap();
    let summary = merged.summary.as_ref().unwrap();
    let run_phase = summary.phases.iter().find(|p| p.phase == Phase::Run).unwrap();
    assert_eq!(run_phase.total.ok, added.ok, "merged operations = the shards' sum");
    assert_eq!(run_phase.total.latency, LatencySummary::of(&added.intended), "every merged percentile is that of the added histograms");
    assert_eq!(run_phase.total.service, LatencySummary::of(&added.service));
    let achieved = run_phase.total.ops_per_s;
    assert!((achieved - RATE).abs() / RATE <= 0.02, "merged achieved rate {achieved:.1}/s against {RATE}/s:\n{out}");
    assert_eq!(summary.loaders.len(), 3);
    // each merged interval holds what the shards did in it
    let per_interval: u64 = store.intervals(id).unwrap().iter().filter(|i| i.phase == Phase::Run && !i.op.contains('.')).map(|i| i.stats.ok).sum();
    let shard_intervals: u64 = shards.iter().flat_map(|s| &s.intervals).filter(|i| i.phase == Phase::Run && !i.op.contains('.')).map(|i| i.stats.ok).sum();
    assert_eq!(per_interval, shard_intervals);

    // refusals: a shard missing, a shard twice
    let (code, _, err) = run(casslab().args(["merge", exports[0].to_str().unwrap(), exports[1].to_str().unwrap(), "--store", merged_store.to_str().unwrap()]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 2 is missing (given: 0, 1)"), "{err}");
    let (code, _, err) = run(casslab().args([
        "merge",
        exports[0].to_str().unwrap(),
        exports[0].to_str().unwrap(),
        exports[1].to_str().unwrap(),
        exports[2].to_str().unwrap(),
        "--store",
        merged_store.to_str().unwrap(),
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 0 of run") && err.contains("is given twice"), "{err}");

    // the test's own keyspace goes again
    rt.block_on(session.query_unpaged(format!("DROP KEYSPACE IF EXISTS {keyspace}"), &[])).unwrap();
}

#[test]
fn a_shard_that_never_arrives_fails_the_barrier_by_name() {
    let _g = load_lock();
    let host = node();
    let dir = tempfile::tempdir().unwrap();
    let run_id = format!("missing{}", std::process::id());
    let children: Vec<Child> =
        (0..2).map(|i| shard(dir.path(), host, "casslab_shards_barrier", &run_id, i, 3, &["--barrier-timeout", "3s", "--skip-load"])).collect();
    for c in children {
        let (code, out, err) = finish(c);
        assert_eq!(code, 3, "a barrier that times out is a setup failure:\nstdout: {out}\nstderr: {err}");
        assert!(err.contains(&format!("shards barrier of run \"{run_id}\"")) && err.contains("shard 2 never arrived (arrived: shard 0, shard 1)"), "{err}");
    }
}
