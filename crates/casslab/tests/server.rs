//! Server-side metrics end to end against the real test node, started by casslab (so its pid
//! and GC log are known): a fixed-rate run during which the test forces a full GC with `jcmd`
//! and a major compaction with nodetool; the saved series must hold the virtual-table,
//! GC, CPU and memory samples, with the forced GC at the time it happened, and the run
//! summary and HTML report must show the server side and the suspects, and the traces of the
//! slowest requests (`--trace-slowest`) and the on-disk figures (`--settle`) must be saved
//! and shown.
//! `--no-server-metrics` must save none.

mod common;

use casslab_core::server::{gc_pauses, suspects, ServerSample};
use casslab_core::store::Store;
use common::{casslab, load_lock, node, run, temp_store, test_home};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

fn node_pid() -> u32 {
    let cluster = casslab_local::LocalCluster::open(&test_home()).expect("the test node's cluster.json");
    cluster.status().unwrap()[0].pid.expect("the test node runs")
}

fn has(samples: &[ServerSample], node: &str, metric: &str) -> bool {
    samples.iter().any(|s| s.node == node && s.metric == metric)
}

#[test]
fn a_run_saves_server_series_and_a_forced_gc_shows_up_at_its_time() {
    node();
    let _guard = load_lock();
    let body_started = std::time::Instant::now();
    let (_dir, store) = temp_store();
    let ks = "casslab_server_kv";
    // no --hosts: the run uses the local test node and so knows its pid and GC log
    let out_path = _dir.path().join("run.out");
    let err_path = _dir.path().join("run.err");
    let mut child = casslab()
        .args(["run", "kv", "-P", "rows=20000", "-P", "valuesize=1000", "-P", &format!("keyspace={ks}"), "--reload"])
        .args(["--rate", "400", "--duration", "12s", "--warmup", "2s", "--concurrency", "32"])
        .args(["--trace-slowest", "3", "--trace-probability", "0.05", "--settle"])
        .args(["--store", store.to_str().unwrap()])
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    // wait until the run phase has started (the store says so), then force a GC and a compaction
    let deadline = std::time::Instant::now() + Duration::from_secs(150);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        assert!(std::time::Instant::now() < deadline, "the run phase did not start:\n{err}");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early:\n{err}");
        let runs = rusqlite::Connection::open_with_flags(&store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|db| db.query_row("SELECT count(*) FROM intervals WHERE phase = 'run'", [], |r| r.get::<_, i64>(0)));
        if runs.unwrap_or(0) >= 4 {
            break;
        }
    }
    let t_start = std::time::Instant::now();
    let pid = node_pid();
    let gc_from = now_ms();
    let jcmd = Command::new("jcmd").args([pid.to_string().as_str(), "GC.run"]).output().expect("jcmd runs");
    let gc_to = now_ms();
    assert!(jcmd.status.success(), "jcmd: {}", String::from_utf8_lossy(&jcmd.stderr));
    std::thread::sleep(Duration::from_secs(3));
    let cluster = casslab_local::LocalCluster::open(&test_home()).unwrap();
    let compact_from = now_ms();
    let compact = cluster.nodetool(0, &["compact", ks]).unwrap();
    let compact_to = now_ms();
    assert!(compact.status.success(), "nodetool compact: {}", String::from_utf8_lossy(&compact.stderr));
    eprintln!("jcmd and nodetool compact took {:.1} s", t_start.elapsed().as_secs_f64());
    let status = child.wait().unwrap();
    let (stdout, stderr) = (std::fs::read_to_string(&out_path).unwrap(), std::fs::read_to_string(&err_path).unwrap());
    assert!(status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");

    let s = Store::open(&store).unwrap();
    let id = s.latest_run().unwrap().unwrap();
    let record = s.run(id).unwrap();
    let samples = s.server_samples(id).unwrap();
    let addr = common::node_addr();
    for m in ["thread_pools.pending_tasks", "thread_pools.active_tasks", "sstable_tasks", "clients", "pending_hints.files", "cpu_pct", "rss_mib", "gc_stw_pct"]
    {
        assert!(has(&samples, addr, m), "no {m} of {addr} among {} samples", samples.len());
    }
    for m in ["cpu_pct", "rss_mib", "poll_ms"] {
        assert!(has(&samples, "client", m), "no {m} of the client");
    }
    assert!(
        samples.iter().any(|x| x.node == addr && x.metric.starts_with("local_write_latency.") && x.metric.ends_with(":kv")),
        "no write latency of the kv table"
    );
    assert!(samples.iter().any(|x| x.metric.starts_with("disk_usage.") && x.metric.ends_with(":kv")), "no disk usage of the kv table");

    // the forced full GC is in the series, stamped when jcmd ran (on the run's time axis)
    let t0 = record.started_at_ms;
    let full: Vec<(u64, f64)> = gc_pauses(&samples).filter(|p| p.1.contains("Diagnostic Command")).map(|p| (p.2, p.3)).collect();
    assert_eq!(full.len(), 1, "one GC forced by jcmd expected: {full:?}");
    let (at_ms, pause_ms) = full[0];
    let (lo, hi) = ((gc_from - t0) as u64, (gc_to - t0) as u64);
    assert!(at_ms + 50 >= lo && at_ms <= hi, "GC at {at_ms} ms, jcmd ran between {lo} and {hi} ms");
    let near = suspects::findings(&samples, at_ms.saturating_sub(1000), at_ms + 1000);
    assert!(near.iter().any(|f| f.contains("(Diagnostic Command)")), "{near:?}");

    // the compaction: nodetool compact waits for it, so a poll saw it only if it lasted long
    // enough; print what was seen around it
    let (c_lo, c_hi) = ((compact_from - t0) as u64, (compact_to - t0) as u64);
    let seen: Vec<&ServerSample> = samples.iter().filter(|x| x.metric == "sstable_tasks" && x.at_ms >= c_lo && x.at_ms <= c_hi + 1000).collect();
    eprintln!(
        "forced GC: {pause_ms:.0} ms at {at_ms} ms; compaction {c_lo}..{c_hi} ms, sstable_tasks polled then: {:?}",
        seen.iter().map(|x| x.value).collect::<Vec<_>>()
    );

    // --settle: after compactions, what is on disk
    for m in ["disk.sstables:kv", "disk.live_bytes:kv", "disk.partition_bytes_p99:kv", "disk.sstables_per_read_p99:kv"] {
        assert!(has(&samples, addr, m), "no {m}");
    }
    assert!(stdout.contains("on disk at the end of the run") && stderr.contains("--settle: compactions done"), "{stdout}\n{stderr}");

    // the slowest traced requests are the workload's, each with its steps, slowest first
    let traces = s.traces(id).unwrap();
    assert!(!traces.is_empty() && traces.len() <= 3, "{} traces", traces.len());
    assert!(traces.windows(2).all(|w| w[0].duration_us >= w[1].duration_us));
    for t in &traces {
        assert!(t.query.contains(" kv "), "not a workload statement: {}", t.query);
        assert!(!t.events.is_empty(), "a trace without steps: {t:?}");
    }
    assert!(stdout.contains("slowest traced requests"), "{stdout}");

    // the terminal summary has the server side and the suspects
    assert!(stdout.contains("server side") && stdout.contains(addr) && stdout.contains("suspects"), "{stdout}");
    eprintln!("{}", &stdout[stdout.find("server side").unwrap()..]);
    let (code, shown, _) = run(casslab().args(["show", &id.to_string(), "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0);
    assert!(shown.contains("suspects"), "{shown}");

    // the HTML report draws the server charts next to client p99
    let html = tempfile::NamedTempFile::with_suffix(".html").unwrap();
    let (code, _, err) = run(casslab().args(["report", &id.to_string(), "-o", html.path().to_str().unwrap(), "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(html.path()).unwrap();
    for part in [
        "Server side",
        "p99 per interval: client against Cassandra",
        "GC pause time per interval",
        "pending thread-pool tasks",
        "Suspects",
        "Slowest traced requests",
    ] {
        assert!(page.contains(part), "the report lacks {part}");
    }
    eprintln!("with the load lock held: {:.0} s", body_started.elapsed().as_secs_f64());
}

#[test]
fn no_server_metrics_saves_none() {
    let host = node();
    let _guard = load_lock();
    let (_dir, store) = temp_store();
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "-P", "rows=1000", "-P", "keyspace=casslab_server_off", "--duration", "2s", "--warmup", "0s", "--hosts", host])
        .args(["--no-server-metrics", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("server side"), "{out}");
    let s = Store::open(&store).unwrap();
    let id = s.latest_run().unwrap().unwrap();
    assert!(s.server_samples(id).unwrap().is_empty());
    assert!(!s.run(id).unwrap().config.server_metrics, "the saved config says collection was off");
}
