//! End-to-end tests of verification on the shared test node: sharded verified runs (two
//! shard processes with one results store) that load slices, write a table no load writes on
//! keys both would draw, and go on from each other's records — an unsharded run from both
//! shards', shards again from the unsharded run's — with a `casslab verify` pass after each,
//! nothing reading as not written; every recorded write carrying casslab's own client
//! timestamp (microseconds, not the coordinator's milliseconds × 1000); rows that expire by
//! their table's `default_time_to_live` reading as gone, not missing; and reads of whole
//! partitions and of their first rows judged row by row — none wrong on a healthy node, then
//! rows overwritten and deleted behind casslab's back found corrupt and missing; and counters
//! read against the increments acknowledged and in flight, then unchecked once the keyspace
//! holds what an earlier run added.

mod common;
use common::{casslab, node, run, session, shared_load_lock, store_arg, temp_store};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name).to_str().unwrap().to_string()
}

fn unique(prefix: &str) -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() % 1_000_000;
    format!("{prefix}_{}_{ms}", std::process::id())
}

/// `casslab run` of test workload `file` in keyspace `ks` on the test node, saving into `store`.
fn run_cmd(file: &str, ks: &str, store: &Path) -> Command {
    let mut c = casslab();
    c.args(["run", &data(file), "-P", &format!("keyspace={ks}"), "--hosts", node(), "--rate", "200", "--no-server-metrics", "--no-lint"]);
    c.args(store_arg(store));
    c
}

/// Shard `i` of 2 of run `run_id`, as a child process.
fn shard(ks: &str, store: &Path, run_id: &str, i: u32) -> Child {
    run_cmd("verify-shards.yaml", ks, store)
        .args(["--shard", &format!("{i}/2"), "--run-id", run_id, "--barrier-timeout", "2m"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn two_shards(ks: &str, store: &Path, run_id: &str) {
    let children: Vec<Child> = (0..2).map(|i| shard(ks, store, run_id, i)).collect();
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        let (out, err) = common::text(&o);
        eprintln!("shard {i} of {run_id}:\n{out}\n{err}");
        assert_eq!(o.status.code(), Some(0), "shard {i}:\n{out}\n{err}");
        assert!(out.contains("data: read "), "shard {i} verified its reads:\n{out}");
    }
}

/// The checked reads of every run phase in `store`, by operation, added up: (ok, violations,
/// unchecked).
fn all_counts(store: &Path) -> Vec<(String, u64, u64, u64)> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut q = db.prepare("SELECT op, verify_json FROM phase_histograms WHERE phase = 'run' AND verify_json IS NOT NULL").unwrap();
    let mut by_op: Vec<(String, u64, u64, u64)> = Vec::new();
    for row in q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).unwrap() {
        let (op, json) = row.unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let n = |c: &str| v[c].as_u64().unwrap_or(0);
        let bad = ["stale", "missing", "corrupt", "resurrected", "expired"].iter().map(|c| n(c)).sum();
        match by_op.iter_mut().find(|(o, ..)| *o == op) {
            Some(e) => {
                e.1 += n("ok");
                e.2 += bad;
                e.3 += n("unchecked");
            }
            None => by_op.push((op, n("ok"), bad, n("unchecked"))),
        }
    }
    by_op
}

/// `casslab verify` of the data set: every table's rows as written.
fn pass(ks: &str, store: &Path) -> serde_json::Value {
    let (code, out, err) = run(casslab()
        .args(["verify", &data("verify-shards.yaml"), "-P", &format!("keyspace={ks}"), "--hosts", node(), "--format", "json"])
        .args(store_arg(store)));
    eprintln!("verify:\n{out}\n{err}");
    assert_eq!(code, 0, "every row as written:\n{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for t in v["tables"].as_array().unwrap() {
        let c = &t["counts"];
        let bad: u64 = ["stale", "missing", "corrupt", "resurrected", "expired"].iter().map(|k| c[k].as_u64().unwrap_or(0)).sum();
        assert_eq!((bad, t["errors"].as_u64()), (0, Some(0)), "{t}");
    }
    v
}

fn table<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["tables"].as_array().unwrap().iter().find(|t| t["table"] == name).unwrap_or_else(|| panic!("no table {name}: {v}"))
}

#[test]
fn sharded_verified_runs_go_on_from_each_other_and_every_row_is_as_written() {
    let _g = shared_load_lock();
    let ks = unique("casslab_vshards");
    let (_dir, store) = temp_store();

    // two shards load their slices and write `hot`, which no load writes, on 20 keys each
    // would draw: each owns its 10, so neither reads the other's writes as not its own
    two_shards(&ks, &store, &unique("first"));
    let counts = all_counts(&store);
    eprintln!("after two shards: {counts:?}");
    for op in ["read", "read_hot"] {
        let (_, ok, bad, _) = counts.iter().find(|(o, ..)| o == op).unwrap_or_else(|| panic!("no {op}: {counts:?}"));
        assert!(*ok > 0 && *bad == 0, "{op}: {counts:?}");
    }
    // the pass finds the sharded load complete and goes on from both shards' records
    let v = pass(&ks, &store);
    assert!(v["expected_from"].as_str().unwrap().contains("records of the 2 shards"), "{v}");
    let kv = table(&v, "kv");
    assert_eq!((kv["keys"].as_u64(), kv["rows_found"].as_u64()), (Some(400), Some(400)), "{kv}");
    let hot = table(&v, "hot");
    assert!(hot["keys"].as_u64().is_some_and(|k| k > 10 && k <= 20), "both shards' hot keys: {hot}");

    // an unsharded run goes on from both shards' records; two shards again from its record
    let (code, out, err) = run(run_cmd("verify-shards.yaml", &ks, &store).args(["--duration", "2s"]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("data: read ") && !out.contains("stale") && !out.contains("corrupt"), "{out}");
    two_shards(&ks, &store, &unique("second"));
    let counts = all_counts(&store);
    eprintln!("after every run: {counts:?}");
    assert!(counts.iter().all(|(_, ok, bad, _)| *ok > 0 && *bad == 0), "{counts:?}");
    let v = pass(&ks, &store);
    assert!(v["expected_from"].as_str().unwrap().contains("records of the 2 shards"), "{v}");
    assert_eq!(table(&v, "kv")["rows_found"].as_u64(), Some(400));

    // every recorded write carried casslab's timestamp: microseconds of its clock, where a
    // coordinator's own would be its millisecond × 1000 (plus a counter within it)
    let (rt, s) = session(node());
    let rows: Vec<(i64, i64)> = rt.block_on(async {
        let r = s.query_unpaged(format!("SELECT key, WRITETIME(value) FROM {ks}.kv"), &[]).await.unwrap();
        r.into_rows_result().unwrap().rows::<(i64, i64)>().unwrap().map(|r| r.unwrap()).collect()
    });
    let whole_ms = rows.iter().filter(|(_, t)| t % 1000 == 0).count();
    assert_eq!(rows.len(), 400);
    assert!(whole_ms <= 10, "{whole_ms} of 400 rows carry a timestamp of whole milliseconds: the server's, not the client's");
    let now_us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as i64;
    assert!(rows.iter().all(|(_, t)| (now_us - t) < 600_000_000 && *t < now_us + 60_000_000), "timestamps of this client's clock");
    rt.block_on(async { s.query_unpaged(format!("DROP KEYSPACE {ks}"), &[]).await.unwrap() });
}

#[test]
fn rows_that_expire_by_their_tables_ttl_are_gone_not_missing() {
    let _g = shared_load_lock();
    let ks = unique("casslab_vttl");
    let (_dir, store) = temp_store();
    let (code, out, err) = run(run_cmd("verify-ttl.yaml", &ks, &store).args(["-P", "rows=300"]));
    eprintln!("{out}\n{err}");
    assert_eq!(code, 0, "{out}\n{err}");
    let counts = all_counts(&store);
    let (_, ok, bad, _) = counts.iter().find(|(o, ..)| o == "read").unwrap_or_else(|| panic!("{counts:?}"));
    assert!(*ok > 300 && *bad == 0, "rows that expired read as missing or expired: {counts:?}\n{out}");
    // rows expired during the run, so reads met them gone
    let (rt, s) = session(node());
    let left: i64 = rt.block_on(async {
        let r = s.query_unpaged(format!("SELECT count(*) FROM {ks}.expiring"), &[]).await.unwrap();
        r.into_rows_result().unwrap().single_row::<(i64,)>().unwrap().0
    });
    assert!(left < 300, "rows expired: {left} of 300 left");
    rt.block_on(async { s.query_unpaged(format!("DROP KEYSPACE {ks}"), &[]).await.unwrap() });
}

/// The checked reads of operation `op` in the latest run's run phase.
fn latest(store: &Path, op: &str) -> serde_json::Value {
    let db = rusqlite::Connection::open(store).unwrap();
    let json: Option<String> = db
        .query_row("SELECT verify_json FROM phase_histograms WHERE run_id = (SELECT max(id) FROM runs) AND phase = 'run' AND op = ?1", [op], |r| r.get(0))
        .unwrap_or(None);
    serde_json::from_str(json.as_deref().unwrap_or("null")).unwrap()
}

#[test]
fn reads_of_several_rows_are_judged_row_by_row() {
    let _g = shared_load_lock();
    let ks = unique("casslab_vparts");
    let (_dir, store) = temp_store();
    let n = |v: &serde_json::Value, c: &str| v[c].as_u64().unwrap_or(0);
    let (code, out, err) = run(&mut run_cmd("verify-partitions.yaml", &ks, &store));
    eprintln!("{out}\n{err}");
    assert_eq!(code, 0, "{out}\n{err}");
    for op in ["read_partition", "read_latest"] {
        let c = latest(&store, op);
        assert!(n(&c, "ok") > 100, "{op}: {c}");
        for class in ["stale", "missing", "corrupt", "resurrected", "expired", "unchecked"] {
            assert_eq!(n(&c, class), 0, "{op} read {class}: {c}\n{out}");
        }
    }
    // behind casslab's back: every row of partitions 0..10 overwritten with a value no write
    // made, and every row of partitions 10..20 deleted
    let (rt, s) = session(node());
    rt.block_on(async {
        for p in 0..20 {
            for c in 0..8 {
                let cql = if p < 10 {
                    format!("UPDATE {ks}.series SET v = 0xbad0 WHERE p = {p} AND c = {c}")
                } else {
                    format!("DELETE FROM {ks}.series WHERE p = {p} AND c = {c}")
                };
                let mut st = scylla::statement::unprepared::Statement::new(cql);
                st.set_consistency(scylla::statement::Consistency::All);
                s.query_unpaged(st, &[]).await.unwrap();
            }
        }
    });
    let (code, out, err) = run(&mut run_cmd("verify-partitions.yaml", &ks, &store));
    eprintln!("{out}\n{err}");
    assert_eq!(code, 0, "{out}\n{err}");
    let whole = latest(&store, "read_partition");
    assert!(n(&whole, "corrupt") > 0 && n(&whole, "missing") > 0, "{whole}\n{out}");
    assert_eq!((n(&whole, "stale"), n(&whole, "resurrected")), (0, 0), "{whole}");
    let first = latest(&store, "read_latest");
    assert!(n(&first, "corrupt") > 0 && n(&first, "missing") == 0, "a LIMIT read judges the rows it got: {first}");
    assert!(out.contains("which no write made") && out.contains("no row"), "{out}");
    rt.block_on(async { s.query_unpaged(format!("DROP KEYSPACE {ks}"), &[]).await.unwrap() });
}

#[test]
fn counters_read_their_acknowledged_increments_and_are_unchecked_once_not_fresh() {
    let _g = shared_load_lock();
    let ks = unique("casslab_vcount");
    let (_dir, store) = temp_store();
    let n = |v: &serde_json::Value, c: &str| v[c].as_u64().unwrap_or(0);
    let (code, out, err) = run(&mut run_cmd("verify-counters.yaml", &ks, &store));
    eprintln!("{out}\n{err}");
    assert_eq!(code, 0, "{out}\n{err}");
    let c = latest(&store, "read");
    assert!(n(&c, "ok") > 200, "{c}");
    for class in ["stale", "missing", "corrupt", "resurrected", "expired", "unchecked"] {
        assert_eq!(n(&c, class), 0, "read {class}: {c}\n{out}");
    }
    // the same keyspace again: what the counters hold includes the first run's increments
    let (code, out, err) = run(&mut run_cmd("verify-counters.yaml", &ks, &store));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("reads of counts are not verified: its counters hold what earlier runs added"), "{err}");
    let c = latest(&store, "read");
    assert!(n(&c, "ok") == 0 && n(&c, "unchecked") > 200, "{c}");
    assert!(out.contains("read no read verified") && out.contains(" unchecked"), "{out}");
    let (rt, s) = session(node());
    rt.block_on(async { s.query_unpaged(format!("DROP KEYSPACE {ks}"), &[]).await.unwrap() });
}
