//! `--target instant` through the real binary, with no server anywhere: a run of a CQL workload
//! and one of a Redis workload go through the engine, the generators and the recording, their
//! operations answered at once, and are saved like any other run, naming the instant target;
//! no local node or redis-server is started for them; what cannot mean anything without a
//! server (`--hosts`, `--verify`) is refused before anything runs.

mod common;
use common::{casslab, run, store_arg, summary_row, summary_rows, temp_store};

#[test]
fn a_run_against_no_server_goes_through_the_engine_and_is_saved() {
    let (_d, store) = temp_store();
    for (workload, ops) in [("kv", ["read", "update"]), ("ycsb-a-redis", ["read", "update"])] {
        let (code, out, err) =
            run(casslab().args(["run", workload, "-P", "rows=1000", "--target", "instant", "--count", "3000", "--warmup", "0s"]).args(store_arg(&store)));
        assert_eq!(code, 0, "{workload}:\nstdout:\n{out}\nstderr:\n{err}");
        assert!(err.contains("connected to in-process (0 nodes, instant target (no server, answers at once))"), "{workload}: {err}");
        assert!(!err.contains("starting a local") && !err.contains("redis-server"), "{workload}: a server was started:\n{err}");
        // the load phase ran its count too, and the run phase exactly the count asked for
        let rows = summary_rows(&out);
        let total: u64 = ops.iter().map(|op| summary_row(&rows, op)[0].parse::<u64>().unwrap()).sum();
        assert_eq!(total, 3000, "{workload}: the run phase's operations:\n{out}");
        for op in ops {
            assert_eq!(summary_row(&rows, op).last().unwrap(), "0", "{workload}: errors of {op}:\n{out}");
        }
        assert!(out.contains("instant target (no server, answers at once) on 0 node(s) · in-process"), "{workload}: the header names the target:\n{out}");
    }
    let db = rusqlite::Connection::open(&store).unwrap();
    let saved: i64 = db.query_row("SELECT count(*) FROM runs WHERE status = 'completed'", [], |r| r.get(0)).unwrap();
    assert_eq!(saved, 2, "both runs are saved as completed");
    let (code, shown, err) = run(casslab().args(["show", "latest"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("ycsb-a-redis") && shown.contains("instant target"), "{shown}");
}

#[test]
fn a_run_at_maximum_throughput_ends_when_its_duration_does() {
    let (_d, store) = temp_store();
    let mut child = casslab()
        .args(["run", "kv", "-P", "rows=1000", "--target", "instant", "--duration", "2s", "--warmup", "1s"])
        .args(store_arg(&store))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // requests answered at once must still let the phase's timers run: 3 s of run, a minute at most
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("a 3 s run against the instant target was still going after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let o = child.wait_with_output().unwrap();
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    let rows = summary_rows(&out);
    let total: u64 = summary_row(&rows, "total")[0].parse().unwrap();
    assert!(total > 1000, "at maximum throughput with nothing to wait for, 2 s measured:\n{out}");
    let db = rusqlite::Connection::open(&store).unwrap();
    let intervals: i64 = db.query_row("SELECT count(DISTINCT idx) FROM intervals WHERE phase = 'run'", [], |r| r.get(0)).unwrap();
    assert!((2..=3).contains(&intervals), "{intervals} run intervals for 2 s at 1 s");
}

#[test]
fn what_needs_a_server_is_refused_with_the_instant_target() {
    for (extra, says) in [
        (["--hosts", "127.0.0.1"], "--target instant answers every operation inside casslab: drop --hosts"),
        (["--verify", "--warmup"], "--verify checks what a server's reads return"),
    ] {
        let mut args = vec!["run", "kv", "--target", "instant", "--count", "10"];
        args.extend(extra);
        if args.last() == Some(&"--warmup") {
            args.push("0s");
        }
        let (code, out, err) = run(casslab().args(&args));
        assert_eq!(code, 2, "{args:?}:\nstdout:\n{out}\nstderr:\n{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A cell of an operation's row in the first (latency from intended start) or the second
/// (service time) table of a summary, as a number.
fn figure(out: &str, table: usize, op: &str, column: usize) -> f64 {
    let tables: Vec<&str> = out.split("service time (from actual send)").collect();
    let rows = summary_rows(tables[table]);
    summary_row(&rows, op)[column].parse().unwrap_or_else(|_| panic!("{op}, column {column}:\n{out}"))
}

#[test]
fn a_known_service_time_shows_what_an_overrun_schedule_adds() {
    // one request in flight, each answered after 10 ms: at most ~100 ops/s against 200 asked for
    let (_d, store) = temp_store();
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "-P", "rows=100", "--target", "fixed-10ms", "--rate", "200", "--concurrency", "1", "--duration", "3s", "--warmup", "0s"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("fixed-10ms target (no server, answers after 10 ms) on 0 node(s) · in-process"), "{out}");
    let (from_intended, service) = (figure(&out, 0, "total", 3), figure(&out, 1, "total", 3));
    assert!(service >= 10.0, "the service time is at least the 10 ms the target waits: p50 {service} ms\n{out}");
    // the k-th request was due at k × 5 ms and answered at k × 10 ms or later: the median of
    // about 300 lags by 0.7 s or more, all of it counted from the intended start
    assert!(from_intended >= 200.0, "latency from the intended start holds the schedule's lag: p50 {from_intended} ms\n{out}");
    assert!(out.contains("validity: invalid") && out.contains("the client fell behind its schedule"), "{out}");
    assert!(out.contains("target rate 200/s not kept"), "{out}");
}
