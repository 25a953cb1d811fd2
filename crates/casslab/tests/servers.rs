//! The server as part of a workload or an experiment (`cluster:`), end to end on a real node of
//! its own (127.0.0.57, 768 MiB heap, under target/casslab-test/servers-home; stopped by a drop
//! guard, pass or fail): a workload's definition restarts the local cluster with the collector
//! and the settings it names, which the node's GC log and `system_views.settings` then show and
//! the saved run records; definitions that cannot run (an unknown setting, a heap larger than
//! the machine, a Java that is not there, a version that does not exist) are refused before
//! any node stops; Cassandra 4.1 runs on a Java 11 casslab finds or fetches; a custom build (a
//! directory of jars) is what the node runs; and the shipped experiments run their server
//! variants at a tiny scale: the GC one at the same time, on a node started beside the first.

mod common;
use common::{casslab, cluster_lock, run, temp_store, QUICK_JIT};
use std::path::{Path, PathBuf};
use std::process::Command;

const ADDR: &str = "127.0.0.57";

fn home() -> PathBuf {
    let h = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/casslab-test/servers-home");
    std::fs::create_dir_all(&h).unwrap();
    h.canonicalize().unwrap()
}

/// A casslab command aimed at this file's local cluster.
fn cl() -> Command {
    let mut c = casslab();
    c.env("CASSLAB_HOME", home());
    c
}

/// Starts the node with the default definition (wiping what another test left), stops and
/// wipes it when dropped.
struct Node;

impl Node {
    fn up() -> Node {
        let _ = run(cl().args(["local", "down", "--wipe"]));
        let (code, out, err) = run(cl().args(["local", "up", "--base-address", ADDR, "--heap", "768M", QUICK_JIT]));
        assert_eq!(code, 0, "local up failed:\n{out}\n{err}");
        Node
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let (code, _, err) = run(cl().args(["local", "down", "--wipe"]));
        if code != 0 {
            eprintln!("[cleanup] casslab local down --wipe failed: {err}");
        }
    }
}

/// The pid of node1 as the saved cluster state has it.
fn node_pid() -> u32 {
    let (code, out, err) = run(cl().args(["local", "status"]));
    assert_eq!(code, 0, "{out}\n{err}");
    let line = out.lines().find(|l| l.contains(ADDR)).unwrap_or_else(|| panic!("no {ADDR} in status:\n{out}"));
    // columns: node, address, dc, state, pid, process, cql, load, data
    line.split_whitespace().nth(4).and_then(|w| w.parse::<u32>().ok()).unwrap_or_else(|| panic!("no pid in the pid column of {line}"))
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// A key-value workload of 300 rows with `cluster` as its server definition (YAML lines,
/// indented under `cluster:`).
fn workload(dir: &Path, name: &str, cluster: &str) -> PathBuf {
    let text = format!(
        "name: {name}\nkeyspace: casslab_servers\nschema:\n  - CREATE TABLE IF NOT EXISTS kv (key bigint PRIMARY KEY, value blob)\n\
         generators:\n  insert_key: {{ type: bigint, dist: sequence, min: 0, max: 300 }}\n  key: {{ type: bigint, dist: uniform, min: 0, max: 300 }}\n  value: {{ type: blob, size: 100 }}\n\
         operations:\n  insert: {{ cql: 'INSERT INTO kv (key, value) VALUES (?, ?)', args: [insert_key, value] }}\n  read: {{ cql: 'SELECT value FROM kv WHERE key = ?', args: [key] }}\n\
         load: {{ op: insert, count: 300 }}\nrun: {{ mix: {{ read: 1 }}, warmup: 0s, duration: 2s }}\ncluster:\n{cluster}\n"
    );
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs a workload file against the local cluster at a low fixed rate.
fn run_workload(path: &Path, store: &Path) -> (i32, String, String) {
    run(cl().arg("run").arg(path).args(["--rate", "200", "--concurrency", "8", "--no-lint", "--store"]).arg(store))
}

/// A value of `system_views.settings` on the node.
fn setting(name: &str) -> Option<String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let s = scylla::client::session_builder::SessionBuilder::new().known_node(format!("{ADDR}:9042")).user("cassandra", "cassandra").build().await.unwrap();
        let r = s.query_unpaged(format!("SELECT value FROM system_views.settings WHERE name = '{name}'"), ()).await.unwrap();
        r.into_rows_result().unwrap().rows::<(Option<String>,)>().unwrap().next().and_then(|r| r.unwrap().0)
    })
}

/// The latest saved run's `config.server`, as JSON.
fn recorded_server(store: &Path) -> serde_json::Value {
    let db = rusqlite::Connection::open(store).unwrap();
    let config: String = db.query_row("SELECT config_json FROM runs ORDER BY id DESC LIMIT 1", [], |r| r.get(0)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&config).unwrap();
    v["server"].clone()
}

#[test]
fn definitions_are_applied_recorded_and_refused_before_anything_stops() {
    // one test at a time in this process; beside other clusters' tests, never beside a timed one
    let _one = cluster_lock();
    let _node = Node::up();
    let dir = tempfile::tempdir().unwrap();
    let (_s, store) = temp_store();

    // 1. a collector and a setting: the node restarts with them
    let zgc = workload(dir.path(), "zgc", "  gc: zgc\n  settings: { concurrent_reads: 48 }");
    let (code, out, err) = run_workload(&zgc, &store);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("the local cluster now runs the server of zgc: restarted in"), "{err}");
    let gc_log = std::fs::read_to_string(home().join("node1/logs/gc.log")).unwrap();
    assert!(gc_log.contains("Z Garbage Collector"), "not ZGC:\n{}", &gc_log[..gc_log.len().min(2000)]);
    assert_eq!(setting("concurrent_reads").as_deref(), Some("48"));
    let server = recorded_server(&store);
    assert_eq!(server["gc"], "zgc", "{server}");
    assert_eq!(server["settings"]["concurrent_reads"], 48, "{server}");
    let pid = node_pid();

    // 2. the same definition again: nothing restarts
    let (code, _, err) = run_workload(&zgc, &store);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("restarted in"), "{err}");
    assert_eq!(node_pid(), pid);

    // 3. definitions that cannot run are refused for what they say, the node untouched
    for (name, cluster, says) in [
        ("unknown-setting", "  settings: { no_such_setting_at_all: 1 }", "no_such_setting_at_all"),
        ("huge-heap", "  heap_mb: 10000000", "more than 3/4 of this machine"),
        ("no-java", "  java_home: /nonexistent/java", "/nonexistent/java"),
        ("no-version", "  version: 5.0.99", "5.0.99"),
    ] {
        let p = workload(dir.path(), name, cluster);
        let (code, out, err) = run_workload(&p, &store);
        assert_eq!(code, 2, "{name}: a usage error expected\n{out}\n{err}");
        assert!(err.contains(says), "{name}: the refusal should name {says:?}:\n{err}");
        assert!(alive(pid) && node_pid() == pid, "{name}: the node was touched");
    }

    // 4. a custom build: a directory of jars (here, links to the released ones) is what runs
    let released = casslab_local::ensure_jars(casslab_local::DEFAULT_CASSANDRA_VERSION, &mut |_| {}).unwrap();
    let build = dir.path().join("my-build");
    std::fs::create_dir_all(&build).unwrap();
    for e in std::fs::read_dir(&released).unwrap() {
        let e = e.unwrap();
        std::os::unix::fs::symlink(e.path(), build.join(e.file_name())).unwrap();
    }
    let custom = workload(dir.path(), "custom", &format!("  build: {}", build.display()));
    let (code, out, err) = run_workload(&custom, &store);
    assert_eq!(code, 0, "{out}\n{err}");
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", node_pid())).unwrap();
    assert!(String::from_utf8_lossy(&cmdline).contains(build.to_str().unwrap()), "the node does not run the build's jars");
    assert_eq!(recorded_server(&store)["build"], build.to_str().unwrap());

    // 5. Cassandra 4.1 on its own Java 11 (a new version: the data is wiped)
    let old = workload(dir.path(), "old", "  version: 4.1.10");
    let (code, out, err) = run_workload(&old, &store);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Cassandra 4.1.10"), "{out}");
    assert!(err.contains("its data wiped"), "{err}");
}

/// The shipped GC experiment runs its collectors at the same time: g1 on the local cluster,
/// zgc on a node casslab starts beside it (the next third octet: 127.0.1.57), both loaded and
/// measured together, every run recording its server and where it ran; the node beside is
/// stopped again at the end.
#[test]
fn the_gc_experiment_runs_its_collectors_side_by_side() {
    // one test at a time in this process; beside other clusters' tests, never beside a timed one
    let _one = cluster_lock();
    let _node = Node::up();
    let beside_home = home().join("beside-1");
    let (_s, store) = temp_store();
    let path = format!("{}/../../experiments/gc.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = run(cl()
        .args(["experiment", &path, "-P", "rows=300", "-P", "valuesize=100", "--repetitions", "2", "--duration", "2s", "--warmup", "1s"])
        .args(["--window", "1s", "--resamples", "200", "--min-windows", "2", "--concurrency", "8", "--rate", "200", "--no-settle"])
        .args(["--no-unmeasured-round", "--allow-invalid", "--store"])
        .arg(&store));
    let _ = run(cl().args(["local", "down", "--wipe", "--home"]).arg(&beside_home));
    assert_eq!(
        code, 0,
        "{out}
{err}"
    );
    assert!(err.contains("each on a cluster of its own on this machine, each at the full rate"), "{err}");
    assert!(err.contains("starting node1 at 127.0.1.57"), "zgc's node starts beside the local one:\n{err}");
    let db = rusqlite::Connection::open(&store).unwrap();
    let runs: Vec<(String, String, String)> = db
        .prepare(
            "SELECT substr(t.tag, 9), json_extract(config_json, '$.server.gc'), json_extract(config_json, '$.cluster.hosts[0]')
             FROM runs r JOIN run_tags t ON t.run_id = r.id WHERE t.tag LIKE 'variant=%' ORDER BY t.tag, r.id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let want = |v: &str, gc: &str, host: &str| (v.to_string(), gc.to_string(), host.to_string());
    assert_eq!(
        runs,
        [
            want("g1", "g1", "127.0.0.57:9042"),
            want("g1", "g1", "127.0.0.57:9042"),
            want("zgc", "zgc", "127.0.1.57:9042"),
            want("zgc", "zgc", "127.0.1.57:9042")
        ],
        "{out}"
    );
    assert!(out.contains("design: simultaneous, 2 blocks") && out.contains("servers differ"), "{out}");
    // the node beside was stopped at the end; the local one runs on
    assert!(std::net::TcpStream::connect("127.0.1.57:9042").is_err(), "the node beside still answers");
    assert!(std::net::TcpStream::connect(format!("{ADDR}:9042")).is_ok(), "the local node was stopped");
}

/// The other shipped server experiments at the smallest scale: each variant once, the server
/// switched before each run as its variant says (the storage engine's and the upgrade's with
/// their data wiped; the storage engine's variants at the same time, the second on a node
/// beside the first), every run recording the server it ran against.
#[test]
fn the_storage_upgrade_and_heap_experiments_run_each_variant_on_its_server() {
    // one test at a time in this process; beside other clusters' tests, never beside a timed one
    let _one = cluster_lock();
    let _node = Node::up();
    let (_s, store) = temp_store();
    for (file, field, want) in [
        ("storage-engine", "$.server.settings.sstable.selected_format", vec!["bti", "big"]),
        ("upgrade", "$.server.version", vec!["4.1.10", "5.0.9"]),
        ("heap-and-memtable", "$.server.heap_mb", vec!["1024", "2048", "1024"]),
    ] {
        let path = format!("{}/../../experiments/{file}.yaml", env!("CARGO_MANIFEST_DIR"));
        let (code, out, err) = run(cl()
            .args(["experiment", &path, "-P", "rows=200", "--repetitions", "1", "--duration", "1s", "--warmup", "0s", "--window", "1s"])
            .args(["--resamples", "200", "--min-windows", "1", "--concurrency", "8", "--rate", "100", "--no-settle", "--no-unmeasured-round"])
            .args(["--allow-invalid", "--no-lint", "--tag", &format!("file={file}"), "--store"])
            .arg(&store));
        assert_eq!(code, 0, "{file}:\n{out}\n{err}");
        let db = rusqlite::Connection::open(&store).unwrap();
        let got: Vec<String> = db
            .prepare(&format!(
                "SELECT CAST(json_extract(config_json, '{field}') AS TEXT) FROM runs JOIN run_tags v ON v.run_id = runs.id AND v.tag LIKE 'variant_index=%' WHERE id IN (SELECT run_id FROM run_tags WHERE tag = 'file={file}') ORDER BY CAST(substr(v.tag, 15) AS INTEGER), id"
            ))
            .unwrap()
            .query_map([], |r| r.get::<_, Option<String>>(0))
            .unwrap()
            .map(|r| r.unwrap().unwrap_or_default())
            .collect();
        assert_eq!(got, want, "{file}: the servers the measured runs recorded\n{out}\n{err}");
        assert!(out.contains("servers differ"), "{file}: the differing server fields are said:\n{out}");
    }
    let _ = run(cl().args(["local", "down", "--wipe", "--home"]).arg(home().join("beside-1")));
}
