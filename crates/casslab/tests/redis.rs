//! End-to-end tests of the Redis target: the real casslab binary against a real local
//! redis-server that the tests start through `casslab local redis up` (on $CASSLAB_TEST_REDIS,
//! default 127.0.0.66, port 6390, under the test home). They check that every shipped Redis
//! workload loads, runs and reads back what it wrote; that a server stopped in the middle of a
//! run gives counted errors, not a failed run; and that a bad workload, an unreachable server
//! and a missing redis-server are clear errors; and the shipped redis-vs-cassandra experiment
//! runs at a tiny scale against both servers (the Cassandra one is the suite's test node). The
//! Redis server is stopped when the last test ends.

mod common;
use common::{casslab, load_lock, run, summary_row, summary_rows, temp_store};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Tests of this file that need the server; the last one to finish stops it.
const USERS: usize = 3;
static DONE: AtomicUsize = AtomicUsize::new(0);

fn address() -> &'static str {
    static A: OnceLock<String> = OnceLock::new();
    A.get_or_init(|| std::env::var("CASSLAB_TEST_REDIS").ok().filter(|a| !a.is_empty()).unwrap_or_else(|| "127.0.0.66".into()))
}

const PORT: &str = "6390";

fn up_args() -> [&'static str; 7] {
    ["local", "redis", "up", "--address", address(), "--port", PORT]
}

/// Starts the test server (idempotent) and returns its URL.
fn server() -> String {
    let (code, out, err) = run(casslab().args(up_args()));
    assert_eq!(code, 0, "casslab local redis up failed:\n{out}\n{err}");
    format!("redis://{}:{PORT}", address())
}

/// Counts this test as done with the server; the last stops it.
fn release() {
    if DONE.fetch_add(1, Ordering::SeqCst) + 1 == USERS {
        run(casslab().args(["local", "redis", "down"]));
    }
}

fn redis_cli(args: &[&str]) -> String {
    let o =
        std::process::Command::new("redis-cli").args(["-h", address(), "-p", PORT]).args(args).output().expect("redis-cli (from the redis-tools package) runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_shipped_redis_workload_runs_and_reads_back_what_it_wrote() {
    let _g = load_lock();
    server();
    let (_d, store) = temp_store();
    for w in ["ycsb-a-redis", "ycsb-b-redis", "ycsb-c-redis"] {
        let (code, out, err) = run(casslab().args([
            "run",
            w,
            "-P",
            "rows=400",
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--rate",
            "400",
            "--reload",
            "--store",
            store.to_str().unwrap(),
        ]));
        assert_eq!(code, 0, "{w}:\n{out}\n{err}");
        assert!(err.contains(&format!("connected to redis://{}:{PORT} (1 node, Redis ", address())), "{err}");
        let rows = summary_rows(&out);
        let read = summary_row(&rows, "read");
        assert!(read[0].parse::<u64>().unwrap() > 300, "{w}: too few reads:\n{out}");
        assert_eq!(read.last().unwrap(), "0", "{w}: reads failed:\n{out}");
        // every read found its record: the server saw hits and no misses
        assert!(out.contains("server side (Redis INFO every interval)"), "{out}");
        assert!(out.contains("misses 0 (100.0% hits)"), "{w}: a read missed a loaded key:\n{out}");
        // and the record is YCSB's: a hash of 10 fields of 100 bytes
        let record = redis_cli(&["HGETALL", "user0"]);
        let lines: Vec<&str> = record.lines().collect();
        let mut fields: Vec<(&str, usize)> = lines.chunks(2).map(|kv| (kv[0], kv.get(1).map_or(0, |v| v.len()))).collect();
        fields.sort();
        let want: Vec<(String, usize)> = (0..10).map(|i| (format!("field{i}"), 100)).collect();
        assert_eq!(fields.iter().map(|(f, n)| (f.to_string(), *n)).collect::<Vec<_>>(), want, "{w}: {record}");
    }
    // loaded data is reused by a workload that loads the same records
    let (code, _, err) = run(casslab().args([
        "run",
        "ycsb-c-redis",
        "-P",
        "rows=400",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--rate",
        "200",
        "--store",
        store.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("load phase skipped: the same data is already in"), "{err}");
    release();
}

#[test]
fn a_server_stopped_mid_run_gives_counted_errors_not_a_failure() {
    let _g = load_lock();
    server();
    let (_d, store) = temp_store();
    let bin = common::bin();
    let up = up_args().join(" ");
    let (code, out, err) = run(casslab().args([
        "run",
        "ycsb-a-redis",
        "-P",
        "rows=300",
        "--duration",
        "5s",
        "--warmup",
        "0s",
        "--rate",
        "300",
        "--reload",
        "--store",
        store.to_str().unwrap(),
        "--event",
        &format!("1s exec {bin} local redis down"),
        "--event",
        &format!("3s exec {bin} {up}"),
    ]));
    assert_eq!(code, 0, "the run goes on:\n{out}\n{err}");
    assert!(out.contains("completed"), "{out}");
    let total = summary_row(&summary_rows(&out), "total").to_vec();
    let errors: u64 = total.last().unwrap().parse().unwrap();
    assert!(errors > 0, "the stopped server's requests failed and were counted:\n{out}");
    assert!(out.contains("errors by kind: connection"), "{out}");
    // requests succeeded again once the server was back
    assert!(total[0].parse::<u64>().unwrap() > errors, "{out}");
    assert_eq!(redis_cli(&["PING"]).trim(), "PONG", "the server is up again");
    release();
}

#[test]
fn the_redis_vs_cassandra_experiment_compares_both_rate_by_rate_against_its_sla() {
    let _g = load_lock();
    let url = server();
    let host = common::node();
    let (_d, store) = temp_store();
    let path = format!("{}/../../experiments/redis-vs-cassandra.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = run(casslab().args([
        "experiment",
        &path,
        "--allow-invalid",
        "-P",
        "rows=200",
        "--repetitions",
        "1",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--window",
        "1s",
        "--resamples",
        "200",
        "--min-windows",
        "1",
        "--concurrency",
        "16",
        "--hosts",
        host,
        "--target",
        &url,
        "--store",
        store.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{out}\n{err}");
    for rate in ["500", "1000", "2000", "4000"] {
        assert!(out.contains(&format!("at {rate} ops/s:")) && out.contains(&format!("redis@{rate} against cassandra@{rate}")), "{out}");
    }
    assert!(out.contains("SLA p99 < 5ms (95% intervals;") && out.contains("highest rate meeting it"), "{out}");
    let table = &out[out.find("SLA p99").unwrap()..];
    assert_eq!(table.lines().filter(|l| l.trim_start().starts_with("redis ") || l.trim_start().starts_with("cassandra ")).count(), 8, "{table}");
    release();
}

#[test]
fn bad_workloads_and_unreachable_servers_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let src = include_str!("../../../workloads/ycsb-c-redis.yaml").replace("HGETALL ?", "HGETAL ?");
    std::fs::write(&bad, &src).unwrap();
    let line = src.lines().position(|l| l.contains("HGETAL ?")).unwrap() + 1;
    let (code, _, err) = run(casslab().args(["run", bad.to_str().unwrap(), "--target", "redis://127.0.0.66:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("bad.yaml:{line}: operation \"read\": unknown Redis command \"HGETAL\"; did you mean \"HGETALL\"?")), "{err}");

    let (code, _, err) =
        run(casslab().args(["run", "ycsb-c-redis", "-P", "rows=10", "--target", "redis://127.0.0.66:1", "--store", dir.path().join("s.db").to_str().unwrap()]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("cannot connect to redis://127.0.0.66:1") && err.contains("hint:"), "{err}");

    let (code, _, err) = run(casslab().args(["run", "ycsb-c-redis", "--target", "redis://:secret@127.0.0.66:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("CASSLAB_REDIS_PASSWORD") && !err.contains("secret"), "{err}");

    // no redis-server installed: the error says how to install it
    let home = tempfile::tempdir().unwrap();
    let (code, _, err) = run(casslab().env("CASSLAB_REDIS_SERVER", "/nonexistent/redis-server").args([
        "local",
        "redis",
        "up",
        "--address",
        address(),
        "--port",
        "6391",
        "--home",
        home.path().to_str().unwrap(),
    ]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("apt-get install redis-server"), "{err}");
}
