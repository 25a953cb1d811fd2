//! End-to-end tests against a real Cassandra JVM: fetch (or reuse) the jars, start
//! one node on 127.0.0.61 in a temporary home, check status, idempotent `up`,
//! nodetool, then `down --wipe`. Also checks that a busy port fails fast without
//! starting java. Needs a JDK 17 and (for a cold jar cache) Maven.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::time::{Duration, Instant};

use casslab_local::{ensure_jars, LocalCluster, LocalError, LocalOptions};

/// Stops and wipes the cluster even when an assertion fails midway.
struct DownOnDrop(LocalCluster);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = self.0.down(true, &mut |line| eprintln!("[cleanup] {line}"));
    }
}

fn options(home: &Path, base: Ipv4Addr) -> LocalOptions {
    LocalOptions {
        home: home.to_path_buf(),
        base_address: base,
        server: casslab_core::cluster::ServerSpec { heap_mb: Some(768), ..LocalOptions::default().server },
        ..LocalOptions::default()
    }
}

fn log(line: &str) {
    eprintln!("[casslab-local] {line}");
}

/// The test suite's load lock, shared (crates/casslab/tests/common has it): this node's start
/// may run beside other clusters' tests, never beside a test that measures timing.
fn shared_load_lock() -> std::fs::File {
    let home = match std::env::var_os("CASSLAB_TEST_HOME") {
        Some(h) => std::path::PathBuf::from(h),
        None => std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/casslab-test/home"),
    };
    std::fs::create_dir_all(&home).unwrap();
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(home.join("load.lock")).unwrap();
    use std::os::fd::AsRawFd;
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH) }, 0, "flock failed");
    file
}

#[test]
fn real_node_up_status_nodetool_down() {
    let _load = shared_load_lock();
    let lib = ensure_jars(casslab_local::DEFAULT_CASSANDRA_VERSION, &mut log).expect("jars");
    let jars = std::fs::read_dir(&lib).unwrap().filter_map(Result::ok).count();
    assert!(jars > 50, "only {jars} files in {}", lib.display());

    let home = tempfile::tempdir().unwrap();
    let cluster = DownOnDrop(LocalCluster::new(options(home.path(), Ipv4Addr::new(127, 0, 0, 61))));
    assert_eq!(cluster.0.contact_points(), ["127.0.0.61:9042"]);

    let started = Instant::now();
    let report = cluster.0.up(&mut log).expect("node starts");
    eprintln!("up took {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(report.started, ["node1"]);
    assert!(report.already_running.is_empty());
    let node = &report.nodes[0];
    assert!(node.running && node.cql_up, "{node:?}");
    assert_eq!(node.jmx_port, 7259);
    let pid = node.pid.expect("pid");
    assert!(home.path().join("node1/pid").is_file());
    assert!(home.path().join("cluster.json").is_file());
    assert!(cluster.0.is_running());

    // A later casslab run finds the cluster from cluster.json alone.
    let reopened = LocalCluster::open(home.path()).expect("cluster.json");
    let status = reopened.status().unwrap();
    assert_eq!(status[0].pid, Some(pid));
    assert!(status[0].cql_up);
    assert_eq!(reopened.options().heap_mb(), 768);

    let again = cluster.0.up(&mut log).expect("second up");
    assert!(again.started.is_empty());
    assert_eq!(again.already_running, ["node1"]);
    assert_eq!(again.nodes[0].pid, Some(pid));

    let out = cluster.0.nodetool(0, &["status"]).expect("nodetool runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "nodetool failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("UN"), "{stdout}");
    assert!(stdout.contains("127.0.0.61"), "{stdout}");

    let logs = home.path().join("node1/logs");
    assert!(std::fs::metadata(logs.join("system.log")).unwrap().len() > 0);
    assert!(std::fs::metadata(logs.join("gc.log")).unwrap().len() > 0);

    let stopping = Instant::now();
    cluster.0.down(true, &mut log).expect("down");
    eprintln!("down took {:.1} s", stopping.elapsed().as_secs_f64());
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "pid {pid} still exists");
    assert!(!home.path().join("node1").exists());
    assert!(!home.path().join("cluster.json").exists());
    assert!(!cluster.0.is_running());
}

#[test]
fn busy_cql_port_fails_fast_without_java() {
    let address = Ipv4Addr::new(127, 0, 0, 62);
    let _held = TcpListener::bind((address, 9042)).expect("bind 127.0.0.62:9042 for the test");
    let home = tempfile::tempdir().unwrap();
    let cluster = DownOnDrop(LocalCluster::new(options(home.path(), address)));

    let started = Instant::now();
    let err = cluster.0.up(&mut log).expect_err("port is busy");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    match &err {
        LocalError::PortBusy { address: a, port, .. } => assert_eq!((*a, *port), (address, 9042)),
        other => panic!("expected PortBusy, got {other}"),
    }
    assert!(err.to_string().contains("127.0.0.62:9042"), "{err}");
    assert!(!home.path().join("node1/pid").exists());
    let status = cluster.0.status().unwrap();
    assert!(!status[0].running && status[0].pid.is_none());
}
