//! End-to-end tests of a real 3-node, 2-data-center local cluster (dc1: 127.0.0.71 and .72,
//! dc2: .73), started once through `casslab local up` under its own home and stopped (and
//! wiped) at the end by a drop guard. On it the shipped scenarios run at a small scale: a node
//! killed and restarted mid-run, a data center stopped and started, a major compaction and a
//! repair under load — each must complete with its run saved, its events in the stored
//! timeline with their impact, and (for the kill) the events drawn on the report's charts.

mod common;
use common::{casslab, casslab_at, cluster_home, cluster_lock, run, store_arg, temp_store, WipeOnDrop, QUICK_JIT};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const BASE: &str = "127.0.0.71";
const ADDRESSES: [&str; 3] = ["127.0.0.71", "127.0.0.72", "127.0.0.73"];

fn home() -> PathBuf {
    cluster_home("cluster-home")
}

/// A casslab command aimed at the cluster's home (runs without --hosts use the cluster).
fn cl() -> Command {
    casslab_at(&home())
}

/// (action, target, status, start_ms, end_ms, has impact, recovery_ms) of one stored event.
type StoredEvent = (String, Option<String>, String, i64, i64, bool, Option<i64>);

/// The latest run's events.
fn events_of(store: &Path) -> Vec<StoredEvent> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT action, target, status, start_ms, end_ms, impact_json FROM run_events
             WHERE run_id = (SELECT max(id) FROM runs) ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let impact: Option<String> = r.get(5)?;
        let recovery = impact.as_deref().and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok()).and_then(|v| v["recovery_ms"].as_i64());
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, impact.is_some(), recovery))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

/// The output tails of the latest run's events, for failure messages.
fn output_tails(store: &Path) -> String {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut stmt = db.prepare("SELECT spec, output_tail FROM run_events WHERE run_id = (SELECT max(id) FROM runs) ORDER BY seq").unwrap();
    stmt.query_map([], |r| Ok(format!("{}:\n{}", r.get::<_, String>(0)?, r.get::<_, String>(1)?))).unwrap().map(|r| r.unwrap()).collect::<Vec<_>>().join("\n")
}

fn run_status_and_intervals(store: &Path) -> (String, i64) {
    let db = rusqlite::Connection::open(store).unwrap();
    db.query_row(
        "SELECT status, (SELECT count(DISTINCT idx) FROM intervals WHERE run_id = runs.id AND phase = 'run') FROM runs ORDER BY id DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// Failed requests of the run phase by kind, from the printed summary's "errors by kind" line.
fn errors_by_kind(stdout: &str) -> Vec<(String, u64)> {
    stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("errors by kind:"))
        .next_back()
        .map(|l| {
            l.split(',')
                .filter_map(|p| {
                    let (k, n) = p.trim().rsplit_once(' ')?;
                    Some((k.to_string(), n.parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every node is up and normal in every data center as node1 sees it.
fn assert_all_up() {
    let (code, out, err) = run(cl().args(["local", "status"]));
    assert_eq!(code, 0, "status:\n{out}\n{err}");
    for (addr, dc) in ADDRESSES.iter().zip(["dc1", "dc1", "dc2"]) {
        let line = out.lines().find(|l| l.contains(&format!("{addr}:9042"))).unwrap_or_else(|| panic!("{addr} missing:\n{out}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((cols[2], cols[3], cols[5], cols[6]), (dc, "UN", "running", "up"), "{line}");
        assert!(cols[4].parse::<u32>().is_ok(), "pid column: {line}");
        assert!(cols[7].parse::<f64>().is_ok(), "load column: {line}");
    }
}

#[test]
fn scenarios_on_a_three_node_two_dc_cluster() {
    let _load = cluster_lock();
    let _guard = WipeOnDrop(home());

    // --- the cluster starts and reports healthy
    let started = Instant::now();
    let (code, out, err) = run(cl().args(["local", "up", "--dcs", "dc1:2,dc2:1", "--base-address", BASE, "--heap", "704M", QUICK_JIT]));
    assert_eq!(code, 0, "local up:\n{out}\n{err}");
    eprintln!("3-node cluster up in {:.1} s", started.elapsed().as_secs_f64());
    assert!(err.contains("every node sees the other 2 as up (UN)"), "{err}");
    assert_eq!(out.trim(), "127.0.0.71:9042,127.0.0.72:9042,127.0.0.73:9042");
    assert_all_up();
    let (code, ring, err) = run(cl().args(["local", "nodetool", "node3", "status"]));
    assert_eq!(code, 0, "{err}");
    assert!(ring.contains("Datacenter: dc1") && ring.contains("Datacenter: dc2"), "{ring}");
    assert_eq!(ring.lines().filter(|l| l.starts_with("UN  127.0.0.7")).count(), 3, "{ring}");

    // --- node loss: node2 killed and restarted mid-run
    let (_dir, store) = temp_store();
    let (code, out, err) = run(cl()
        .args(["run", "node-loss", "--rate", "100", "-P", "rows=2000", "-P", "warmup=2s"])
        .args(["-P", "duration=80s", "-P", "kill_at=5s", "-P", "start_at=10s"])
        .args(store_arg(&store)));
    eprintln!("node-loss:\n{out}\n{err}");
    assert_eq!(code, 0, "node-loss run failed:\n{out}\n{err}");
    let (status, intervals) = run_status_and_intervals(&store);
    assert_eq!(status, "completed");
    assert!(intervals >= 75, "{intervals} intervals for an 80 s run");
    // the replication fits the cluster: 2 replicas in dc1, 1 in dc2
    let (code, endpoints, err) = run(cl().args(["local", "nodetool", "node1", "getendpoints", "casslab_node_loss", "kv", "0000000000000001"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(endpoints.lines().filter(|l| l.starts_with("127.0.0.7")).count(), 3, "{endpoints}");
    // the events are in the stored timeline, in order, each with its impact
    let evs = events_of(&store);
    assert_eq!(evs.len(), 2, "{evs:?}");
    assert_eq!((evs[0].0.as_str(), evs[0].1.as_deref(), evs[0].2.as_str()), ("kill", Some("node2"), "ok"), "{evs:?}");
    assert_eq!((evs[1].0.as_str(), evs[1].1.as_deref(), evs[1].2.as_str()), ("start", Some("node2"), "ok"), "{}", output_tails(&store));
    assert!(evs[1].3 >= evs[0].4 && evs[1].4 > evs[1].3, "start after the kill, and it takes time: {evs:?}");
    assert!(evs.iter().all(|e| e.5), "every event has an impact: {evs:?}");
    // the run went on and got back to its baseline: the kill has a recovery time
    assert!(evs[0].6.is_some(), "the kill never recovered: {evs:?}\n{out}");
    let kill_line = out.lines().find(|l| l.contains("kill node2")).unwrap_or_else(|| panic!("no impact row:\n{out}"));
    assert!(kill_line.contains("after ") && kill_line.contains("ok"), "{kill_line}");
    // failed requests are counted by kind, never fatal
    let kinds = errors_by_kind(&out);
    for (k, n) in &kinds {
        assert!(["timeout", "unavailable", "overloaded", "connection", "other"].contains(&k.as_str()) && *n > 0, "{kinds:?}");
    }
    // the report draws both events on the time charts
    let html_path = store.with_file_name("node-loss.html");
    let (code, _, err) = run(cl().args(["report", "latest", "-o", html_path.to_str().unwrap()]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    // (each chart's JSON marks an event as {"kind":"event","from":S,"to":S,"label":"kill node2"})
    let marks: Vec<&str> = html.split(r#"{"kind":"event","#).skip(1).filter_map(|m| m.split('}').next()).collect();
    for ev in ["kill node2", "start node2"] {
        let on = marks.iter().filter(|m| m.ends_with(&format!(r#""label":"{ev}""#))).count();
        assert!(on >= 3, "{ev} not on the throughput, errors/latency charts: {marks:?}");
    }
    assert_all_up();

    // --- data center loss: dc2 stopped and started; the client works in dc1
    let (code, out, err) = run(cl()
        .args(["run", "dc-loss", "--rate", "100", "-P", "rows=2000", "-P", "warmup=2s"])
        .args(["-P", "duration=30s", "-P", "stop_at=5s", "-P", "start_at=10s"])
        .args(store_arg(&store)));
    eprintln!("dc-loss:\n{out}\n{err}");
    assert_eq!(code, 0, "dc-loss run failed:\n{out}\n{err}");
    let evs = events_of(&store);
    let got: Vec<(&str, Option<&str>, &str)> = evs.iter().map(|e| (e.0.as_str(), e.1.as_deref(), e.2.as_str())).collect();
    assert_eq!(got, [("stop", Some("dc2"), "ok"), ("start", Some("dc2"), "ok")], "{}", output_tails(&store));
    assert!(errors_by_kind(&out).is_empty(), "LOCAL_QUORUM in dc1 must not fail when dc2 is lost:\n{out}");
    assert_all_up();

    // --- a major compaction under a 50/50 mix
    let (code, out, err) = run(cl()
        .args(["run", "compaction-under-load", "--rate", "200", "-P", "rows=5000", "-P", "warmup=2s"])
        .args(["-P", "duration=20s", "-P", "flush_at=4s", "-P", "compact_at=6s"])
        .args(store_arg(&store)));
    eprintln!("compaction-under-load:\n{out}\n{err}");
    assert_eq!(code, 0, "{out}\n{err}");
    let evs = events_of(&store);
    let got: Vec<(&str, &str)> = evs.iter().map(|e| (e.0.as_str(), e.2.as_str())).collect();
    assert_eq!(got, [("flush", "ok"), ("setcompactionthroughput", "ok"), ("compact", "ok")], "{}", output_tails(&store));
    assert!(out.contains("compact casslab_compaction_load.kv"), "{out}");

    // --- a repair under load
    let (code, out, err) = run(cl()
        .args(["run", "repair-under-load", "--rate", "100", "-P", "rows=2000", "-P", "warmup=2s"])
        .args(["-P", "duration=20s", "-P", "repair_at=4s"])
        .args(store_arg(&store)));
    eprintln!("repair-under-load:\n{out}\n{err}");
    assert_eq!(code, 0, "{out}\n{err}");
    let evs = events_of(&store);
    assert_eq!((evs.len(), evs[0].0.as_str(), evs[0].2.as_str()), (1, "repair", "ok"), "{}", output_tails(&store));
    assert!(evs[0].4 > evs[0].3, "a repair takes time: {evs:?}");
}

#[test]
fn node_events_are_checked_before_the_cluster_is_touched() {
    // no cluster runs under this home: the errors come from checking the specs alone
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = run(casslab().env("CASSLAB_HOME", tmp.path()).args(["run", "kv", "--event", "10s kil node2"]));
    assert_eq!(code, 2, "a bad --event is bad usage: {err}");
    assert!(err.contains("--event: event \"10s kil node2\": unknown action \"kil\"; did you mean \"kill\"?"), "{err}");
    let (code, _, err) = run(casslab().env("CASSLAB_HOME", tmp.path()).args(["run", "kv", "--event", "10s kill node7"]));
    assert_eq!(code, 2, "a bad --event is bad usage: {err}");
    assert!(err.contains("no node or data center \"node7\"") && err.contains("node1 (127.0.0.1)"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--hosts", "127.0.0.79", "--event", "5s compact"]));
    assert_eq!(code, 2, "a bad --event is bad usage: {err}");
    assert!(err.contains("acts on casslab's local cluster") && err.contains("exec CMD"), "{err}");
    assert!(!err.contains("cannot connect"), "checked before connecting: {err}");
}
