//! A local cluster whose data remembers more nodes than were started, end to end on real nodes
//! (127.0.0.81–.83, 768 MiB heaps, under target/casslab-test/ring-home; stopped and wiped at
//! the end by a drop guard, pass or fail): `local up` with fewer nodes than the data belongs
//! to is refused before anything starts, with what to do; a bare `local up` starts the cluster
//! the data belongs to; `local status` shows the peers a node's ring remembers that the
//! cluster does not start; a node restarted alone on data whose peers are gone is stopped
//! again, saying why. On the way, a node killed in the middle of a run and a run set up with a
//! node dead: idempotent requests go to the live nodes.

mod common;
use common::{casslab_at, cluster_home, cluster_lock, run, temp_store, WipeOnDrop, QUICK_JIT};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BASE: &str = "127.0.0.81";

fn home() -> PathBuf {
    cluster_home("ring-home")
}

/// A casslab command aimed at the cluster's home.
fn cl() -> Command {
    casslab_at(&home())
}

/// `local status` until `done` holds for its (code, stdout, stderr), at most `secs` seconds.
fn status_until(secs: u64, done: impl Fn(i32, &str, &str) -> bool) -> (i32, String, String) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (code, out, err) = run(cl().args(["local", "status"]));
        if done(code, &out, &err) || Instant::now() > deadline {
            return (code, out, err);
        }
        std::thread::sleep(Duration::from_secs(3));
    }
}

/// Errors by kind of the latest run's run phase, all operations together.
fn run_errors(store: &Path) -> String {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut q = db.prepare("SELECT op, errors_json FROM phase_histograms WHERE run_id = (SELECT max(id) FROM runs) AND phase = 'run'").unwrap();
    q.query_map([], |r| Ok(format!("{}: {}", r.get::<_, String>(0)?, r.get::<_, String>(1)?))).unwrap().map(|r| r.unwrap()).collect::<Vec<_>>().join(", ")
}

#[test]
fn a_cluster_starts_whole_or_is_refused_and_its_missing_peers_show() {
    let _g = cluster_lock();
    let _guard = WipeOnDrop(home());
    let (code, out, err) = run(cl().args(["local", "up", "--nodes", "3", "--base-address", BASE, "--heap", "768M", QUICK_JIT]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");

    // a node killed mid-run: the requests it had in flight are retried on the others
    let (_d, store) = temp_store();
    let kv = [
        "run",
        "kv",
        "-P",
        "rows=2000",
        "-P",
        "keyspace=casslab_ring_kv",
        "--warmup",
        "0s",
        "--concurrency",
        "32",
        "--no-lint",
        "--store",
        store.to_str().unwrap(),
    ];
    let (code, out, err) = run(cl().args(kv).args(["--duration", "8s", "--event", "3s kill node2"]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let errors = run_errors(&store);
    assert!(!errors.contains("connection"), "requests failed for the killed coordinator: {errors}");
    // a run set up while node2 is dead
    let (code, out, err) = run(cl().args(kv).args(["--duration", "2s", "--hosts", BASE]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");

    // the case: all down, then one node asked for — refused before anything starts
    let (code, _, err) = run(cl().args(["local", "down"]));
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(cl().args(["local", "up", "--nodes", "1", "--base-address", BASE, "--heap", "768M", QUICK_JIT]));
    assert_eq!(code, 2, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("belongs to a cluster of 3 nodes from 127.0.0.81 (datacenter1), not the 1 node from 127.0.0.81 (datacenter1) asked for"), "{err}");
    // (the home is CASSLAB_HOME here, so the commands need no --home)
    assert!(err.contains("Start the cluster it belongs to with `casslab local up --nodes 3 --base-address 127.0.0.81`"), "{err}");
    assert!(err.contains("or delete that data first with `casslab local down --wipe`"), "{err}");
    let (_, out, _) = run(cl().args(["local", "status"]));
    assert!(!out.contains("running"), "nothing started:\n{out}");

    // `local up` without a shape starts the cluster the data belongs to
    let (code, out, err) = run(cl().args(["local", "up"]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("starting the cluster saved in") && out.trim() == "127.0.0.81:9042,127.0.0.82:9042,127.0.0.83:9042", "{out}\n{err}");

    // the state an older casslab left: cluster.json for node1 alone, nodes 2 and 3 dead with
    // their data; status lists the peers node1's ring remembers, down
    for node in ["node2", "node3"] {
        let (code, _, err) = run(cl().args(["local", "kill", node]));
        assert_eq!(code, 0, "{err}");
    }
    let file = home().join("cluster.json");
    let mut saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    saved["nodes"] = 1.into();
    saved["node_list"].as_array_mut().unwrap().truncate(1);
    std::fs::write(&file, saved.to_string()).unwrap();
    let (code, out, err) = status_until(90, |_, out, _| out.lines().filter(|l| l.starts_with("(peer)") && l.contains("DN")).count() == 2);
    assert_eq!(code, 3, "stdout:\n{out}\nstderr:\n{err}");
    let peers: Vec<&str> = out.lines().filter(|l| l.starts_with("(peer)")).collect();
    assert!(peers.len() == 2 && peers[0].contains("127.0.0.82") && peers[1].contains("127.0.0.83") && peers.iter().all(|l| l.contains("DN")), "{out}");
    assert!(err.contains("the ring remembers nodes this cluster does not start, and they are down: 127.0.0.82 (DN), 127.0.0.83 (DN)"), "{err}");
    // and `local up` sees the other nodes' data
    let (code, _, err) = run(cl().args(["local", "up"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("belongs to a cluster of 3 nodes") && err.contains("(with --nodes 3)"), "{err}");

    // node1's peers' data gone: a restart of node1 alone comes up remembering them, and is stopped again
    let (code, _, err) = run(cl().args(["local", "down"]));
    assert_eq!(code, 0, "{err}");
    for node in ["node2", "node3"] {
        std::fs::remove_dir_all(home().join(node)).unwrap();
    }
    let (code, out, err) = run(cl().args(["local", "up"]));
    assert_eq!(code, 3, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("node1 came up remembering nodes this cluster does not start: 127.0.0.82") && err.contains("casslab local down --wipe"), "{err}");
    let (code, out, _) = run(cl().args(["local", "status"]));
    assert!(code == 3 && !out.contains("running"), "node1 was stopped again:\n{out}");
}
