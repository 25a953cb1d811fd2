//! End-to-end tests: the real casslab binary against a real local Cassandra node that the
//! tests start through `casslab local up`. They check what a user relies on: a run loads,
//! measures and saves; saved runs show and export; loaded data is reused; Ctrl-C keeps a
//! partial run; the embedded default starts a node by itself; every built-in workload runs;
//! and casslab never truncates a keyspace it did not create. None of their assertions depends
//! on timing, so they hold the load lock shared (fixed rates and find-max, which do, are in
//! load_shapes.rs).

mod common;
use common::{casslab, node, run, shared_load_lock, store_arg, summary_rows, temp_store, test_home};
use std::io::Write;
use std::time::Duration;

fn count_of(stdout: &str, op: &str) -> u64 {
    summary_rows(stdout).iter().find(|(n, _)| n == op).map(|(_, c)| c[0].parse().unwrap()).unwrap_or(0)
}

fn errors_of(stdout: &str, op: &str) -> u64 {
    summary_rows(stdout).iter().find(|(n, _)| n == op).map(|(_, c)| c.last().unwrap().parse().unwrap()).unwrap_or(u64::MAX)
}

#[test]
fn a_run_is_measured_saved_shown_and_exported() {
    let _g = shared_load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let json = dir.path().join("run.json");
    let hdr = dir.path().join("run.hlog");
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "-P", "rows=3000", "-P", "keyspace=casslab_e2e_kv", "--duration", "3s", "--warmup", "1s", "--concurrency", "16", "--hosts", host])
        .args(store_arg(&store))
        .args(["--json", json.to_str().unwrap(), "--hdr-log", hdr.to_str().unwrap()]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains(&format!("connected to {}:9042", common::node_addr())), "{err}");
    let reads = count_of(&out, "read");
    let updates = count_of(&out, "update");
    assert!(reads > 100 && updates > 100, "too few operations:\n{out}");
    assert_eq!(errors_of(&out, "read"), 0, "{out}");
    // a 50/50 mix
    let share = reads as f64 / (reads + updates) as f64;
    assert!((0.4..0.6).contains(&share), "read share {share}:\n{out}");

    // the store has the run with its intervals: load, warm-up and run phases
    let db = rusqlite::Connection::open(&store).unwrap();
    let (runs, status): (i64, String) = db.query_row("SELECT count(*), max(status) FROM runs", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(runs, 1);
    assert_eq!(status, "completed");
    let phases: Vec<String> =
        db.prepare("SELECT DISTINCT phase FROM intervals ORDER BY phase").unwrap().query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
    for p in ["run", "warmup"] {
        assert!(phases.contains(&p.to_string()), "phases {phases:?}");
    }
    let run_intervals: i64 = db.query_row("SELECT count(DISTINCT idx) FROM intervals WHERE phase = 'run'", [], |r| r.get(0)).unwrap();
    assert!((3..=4).contains(&run_intervals), "{run_intervals} run intervals for 3 s at 1 s");

    // show prints the same summary
    let (code, shown, _) = run(casslab().args(["show", "latest"]).args(store_arg(&store)));
    assert_eq!(code, 0);
    assert_eq!(count_of(&shown, "read"), reads);
    let (code, listed, _) = run(casslab().args(["runs"]).args(store_arg(&store)));
    assert_eq!(code, 0);
    assert!(listed.contains("kv") && listed.contains("completed"), "{listed}");

    // JSON export: complete and consistent with the summary
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["format"], "casslab-run");
    assert_eq!(v["config"]["params"]["rows"], "3000");
    assert!(v["config"].get("password").is_none());
    let text = v.to_string();
    assert!(text.contains("\"read\"") && text.contains("p99_ns"), "json lacks per-op latency");
    // HdrHistogram log: standard header and one tagged histogram line per (interval, op)
    let log = std::fs::read_to_string(&hdr).unwrap();
    assert!(log.contains("#[StartTime:"), "{log}");
    assert!(log.lines().filter(|l| l.starts_with("Tag=run.read,")).count() >= 3, "{log}");

    // the same data set is reused by the next run
    let (code, out2, err2) = run(casslab()
        .args(["run", "kv", "-P", "rows=3000", "-P", "keyspace=casslab_e2e_kv", "--duration", "1s", "--warmup", "0s", "--concurrency", "8", "--hosts", host])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{err2}");
    assert!(err2.contains("load phase skipped: the same data is already in casslab_e2e_kv"), "{err2}");
    assert!(count_of(&out2, "read") > 0);

    // --reload truncates (the keyspace is casslab's) and loads again
    let (code, _, err3) = run(casslab()
        .args(["run", "kv", "-P", "rows=3000", "-P", "keyspace=casslab_e2e_kv", "--load-only", "--reload", "--hosts", host])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{err3}");
    assert!(err3.contains("truncated the tables of casslab_e2e_kv") && err3.contains("load phase: 3000 operations"), "{err3}");
}

#[test]
fn every_builtin_workload_runs() {
    let _g = shared_load_lock();
    let host = node();
    let (_d, store) = temp_store();
    for (name, ops) in [
        ("ycsb-a", &["read", "update"][..]),
        ("ycsb-b", &["read", "update"]),
        ("ycsb-c", &["read"]),
        ("ycsb-d", &["read", "insert_new"]),
        ("ycsb-e", &["scan", "insert_new"]),
        ("ycsb-f", &["read", "rmw"]),
        ("kv", &["read", "update"]),
    ] {
        let (code, out, err) = run(casslab()
            .args(["run", name, "-P", "rows=400", "--duration", "2s", "--warmup", "0s", "--concurrency", "8", "--hosts", host])
            .args(store_arg(&store)));
        assert_eq!(code, 0, "{name}: stdout:\n{out}\nstderr:\n{err}");
        for op in ops {
            assert!(count_of(&out, op) > 0, "{name}: no {op} completed:\n{out}");
            assert_eq!(errors_of(&out, op), 0, "{name}: {op} had errors:\n{out}\n{err}");
        }
    }
}

#[test]
fn a_count_ends_the_run_phase_after_that_many_operations() {
    let _g = shared_load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "-P", "rows=500", "-P", "keyspace=casslab_e2e_count", "--count", "2000", "--rate", "1000", "--warmup", "0s", "--hosts", host])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("run phase: 0s warm-up + 2000 operations, fixed rate 1000/s"), "{err}");
    assert!(out.contains("run at fixed rate 1000/s, count 2000 reached"), "{out}");
    assert_eq!(count_of(&out, "read") + count_of(&out, "update"), 2000, "{out}");
    let (code, shown, err) = run(casslab().args(["show", "latest", "--json", "-"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("count 2000 reached"), "{shown}");
    let start = shown.find("\n{\n").map(|i| i + 1).expect("the JSON after the summary");
    let v: serde_json::Value = serde_json::from_str(&shown[start..]).unwrap();
    assert_eq!(v["config"]["count"], 2000);
    assert_eq!(v["summary"]["count"], serde_json::json!({ "asked": 2000, "completed": 2000 }));
    let phase = v["summary"]["phases"].as_array().unwrap().iter().find(|p| p["phase"] == "run").unwrap().clone();
    let total = &phase["total"];
    let errors: u64 = total["errors"].as_object().unwrap().values().map(|e| e.as_u64().unwrap()).sum();
    assert_eq!(total["ok"].as_u64().unwrap() + errors, 2000, "{phase}");
    // 2000 at 1000/s: measured until the last start, at 1.999 s
    let measured_s = phase["duration_s"].as_f64().unwrap();
    assert!((1.9..2.2).contains(&measured_s), "{measured_s} s measured");
    // the run phase's intervals end soon after the last operation completed, not a second later
    let ends: Vec<u64> = v["intervals"].as_array().unwrap().iter().filter(|i| i["phase"] == "run").map(|i| i["end_ms"].as_u64().unwrap()).collect();
    let starts: Vec<u64> = v["intervals"].as_array().unwrap().iter().filter(|i| i["phase"] == "run").map(|i| i["start_ms"].as_u64().unwrap()).collect();
    let span_ms = ends.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!((1_950..2_600).contains(&span_ms), "the run phase took {span_ms} ms");
}

#[test]
fn ctrl_c_keeps_a_partial_run() {
    let _g = shared_load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let child = casslab()
        .args(["run", "kv", "-P", "rows=2000", "-P", "keyspace=casslab_e2e_int", "--duration", "60s", "--warmup", "0s", "--concurrency", "8", "--hosts", host])
        .args(store_arg(&store))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // wait until the run phase has saved a few intervals
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let n: i64 =
            rusqlite::Connection::open(&store).and_then(|db| db.query_row("SELECT count(*) FROM intervals WHERE phase = 'run'", [], |r| r.get(0))).unwrap_or(0);
        if n >= 3 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the run never reached its run phase");
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(130), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("interrupted (partial results)"), "{out}");
    assert!(count_of(&out, "read") > 0, "{out}");
    let db = rusqlite::Connection::open(&store).unwrap();
    let status: String = db.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "interrupted");
}

#[test]
fn a_type_mismatch_names_the_statement_line() {
    let _g = shared_load_lock();
    let host = node();
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(
        b"keyspace: casslab_e2e_types
schema:
  - CREATE TABLE IF NOT EXISTS t (k text PRIMARY KEY, v int)
generators:
  key: { type: bigint }
  v: { type: int }
operations:
  write:
    cql: INSERT INTO t (k, v) VALUES (?, ?)
    args: [key, v]
run:
  mix: { write: 1 }
  duration: 1s
",
    )
    .unwrap();
    let (_d, store) = temp_store();
    let (code, _, err) = run(casslab().args(["run", f.path().to_str().unwrap(), "--hosts", host]).args(store_arg(&store)));
    assert_eq!(code, 2, "a generator of the wrong type is a mistake in the workload: {err}");
    let want = format!("{}:9: operation \"write\": bind marker 1 (k) is", f.path().display());
    assert!(err.contains(&want) && err.contains("generator \"key\" makes bigint"), "{err}");
}

#[test]
fn reload_never_truncates_a_keyspace_casslab_did_not_create() {
    let _g = shared_load_lock();
    let host = node();
    // somebody else's keyspace, with somebody else's row in a table named like the workload's
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let s = scylla::client::session_builder::SessionBuilder::new().known_node(host).build().await.unwrap();
        for cql in [
            "CREATE KEYSPACE IF NOT EXISTS someone_elses WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            "CREATE TABLE IF NOT EXISTS someone_elses.kv (key blob PRIMARY KEY, value blob)",
            "INSERT INTO someone_elses.kv (key, value) VALUES (0xdead, 0xbeef)",
        ] {
            s.query_unpaged(cql, &[]).await.unwrap();
        }
    });
    let (_d, store) = temp_store();
    let (code, _, err) =
        run(casslab().args(["run", "kv", "-P", "rows=10", "-P", "keyspace=someone_elses", "--reload", "--load-only", "--hosts", host]).args(store_arg(&store)));
    assert_eq!(code, 2, "--reload on a keyspace casslab did not create is refused as bad usage: {err}");
    assert!(err.contains("keyspace \"someone_elses\" was not created by casslab"), "{err}");
    let rows = rt.block_on(async {
        let s = scylla::client::session_builder::SessionBuilder::new().known_node(host).build().await.unwrap();
        let r = s.query_unpaged("SELECT key FROM someone_elses.kv WHERE key = 0xdead", &[]).await.unwrap();
        r.into_rows_result().unwrap().rows_num()
    });
    assert_eq!(rows, 1, "the foreign row must survive");
}

#[test]
fn without_hosts_casslab_starts_the_local_node_itself() {
    let _g = shared_load_lock();
    node();
    // no other test process starts the node while this one has it down
    let _down = common::node_lock();
    let (code, _, err) = run(casslab().args(["local", "down"]));
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = run(casslab().args(["local", "status"]));
    assert_eq!(code, 3, "status of a stopped node must not be 0:\n{out}");
    assert!(out.contains("stopped"), "{out}");

    let (_d, store) = temp_store();
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "-P", "rows=500", "-P", "keyspace=casslab_e2e_default", "--duration", "2s", "--warmup", "0s", "--concurrency", "8"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("no --hosts given: starting a local Cassandra node"), "{err}");
    assert!(err.contains(&format!("connected to {}:9042", common::node_addr())), "{err}");
    assert!(count_of(&out, "read") > 0);
    let (code, out, _) = run(casslab().args(["local", "status"]));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("running") && out.contains(&test_home().join("node1").display().to_string()), "{out}");
}
