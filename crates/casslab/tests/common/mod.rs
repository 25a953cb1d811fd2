//! Shared helpers of the end-to-end tests: the casslab binary, a real local Cassandra node
//! that the tests start through `casslab local up` (on 127.0.0.51, under the test home, so it
//! never meets a user's node), and a lock that keeps load-generating tests from overlapping
//! on a 2-core machine.

#![allow(dead_code)]

pub mod chromium;
pub mod proxy;
pub mod runs;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Address of the test node: $CASSLAB_TEST_NODE, else 127.0.0.51 (a second checkout running
/// its tests at the same time picks another address, with its own CASSLAB_TEST_HOME).
pub fn node_addr() -> &'static str {
    static ADDR: OnceLock<String> = OnceLock::new();
    ADDR.get_or_init(|| std::env::var("CASSLAB_TEST_NODE").ok().filter(|a| !a.is_empty()).unwrap_or_else(|| "127.0.0.51".into()))
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_casslab")
}

/// Where the test node lives: $CASSLAB_TEST_HOME, else target/casslab-test/home.
pub fn test_home() -> PathBuf {
    let home = match std::env::var_os("CASSLAB_TEST_HOME") {
        Some(h) => PathBuf::from(h),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/casslab-test/home"),
    };
    // one spelling of the path, whichever way it was given: nodes are recognised by it
    std::fs::create_dir_all(&home).unwrap();
    home.canonicalize().unwrap()
}

/// A casslab command with the test home, and no inherited store.
pub fn casslab() -> Command {
    let mut c = Command::new(bin());
    c.env("CASSLAB_HOME", test_home()).env_remove("CASSLAB_STORE").env_remove("CASSLAB_PASSWORD");
    c
}

pub fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Runs a command and returns (exit code, stdout, stderr). With $CASSLAB_TEST_TIMES set, says
/// how long it took on stderr (seen with `--nocapture`: where a test's time goes).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let started = std::time::Instant::now();
    let o = cmd.output().expect("casslab runs");
    if std::env::var_os("CASSLAB_TEST_TIMES").is_some() {
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        eprintln!("[{:6.1} s] {}", started.elapsed().as_secs_f64(), args.join(" "));
    }
    let (out, err) = text(&o);
    (o.status.code().unwrap_or(-1), out, err)
}

static NODE: OnceLock<String> = OnceLock::new();
static LOAD_LOCK: Mutex<()> = Mutex::new(());

/// Starts the test node once per test process (idempotent across processes) and returns its
/// contact point. Test processes running at the same time start it one at a time (an flock on
/// `node.lock`), so two never launch the same node.
pub fn node() -> &'static str {
    NODE.get_or_init(|| {
        let _starting = node_lock();
        let (code, out, err) = run(casslab().args(["local", "up", "--base-address", node_addr(), "--heap", "1G"]));
        assert_eq!(code, 0, "casslab local up failed:\nstdout: {out}\nstderr: {err}");
        format!("{}:9042", node_addr())
    })
}

/// Held while the test node is started, or stopped and started again by a test: another test
/// process's [`node`] waits for it.
pub fn node_lock() -> std::fs::File {
    flock(&test_home().join("node.lock"), libc::LOCK_EX)
}

/// Serializes tests that put load on the node, within this process (a mutex) and across test
/// processes running at the same time (an exclusive flock on a file in the test home): a test
/// whose assertions depend on timing has the machine to itself.
pub fn load_lock() -> LoadGuard {
    let inner = LOAD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    LoadGuard { _file: flock(&test_home().join("load.lock"), libc::LOCK_EX), _inner: inner, _cluster: None }
}

/// The load lock shared: for a test on the test node that asserts nothing that depends on
/// timing (rows as written, outputs as documented, counts). Tests holding it run beside each
/// other in other test processes and beside a [`cluster_lock`] holder, never beside a
/// [`load_lock`] holder.
pub fn shared_load_lock() -> LoadGuard {
    let inner = LOAD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    LoadGuard { _file: flock(&test_home().join("load.lock"), libc::LOCK_SH), _inner: inner, _cluster: None }
}

/// For a test that starts nodes of its own (a cluster, or a node beside another) and asserts
/// nothing that depends on timing: the load lock shared, and the cluster lock alone, so that
/// two such tests never run at once (two 3-node clusters on 2 cores starved a node's restart
/// past its run), while a test of the test node that holds the shared lock may run beside it.
pub fn cluster_lock() -> LoadGuard {
    let cluster = flock(&test_home().join("cluster.lock"), libc::LOCK_EX);
    let mut guard = shared_load_lock();
    guard._cluster = Some(cluster);
    guard
}

/// Opens `path` and takes an flock on it (`libc::LOCK_EX` or `LOCK_SH`), blocking until it is
/// granted; released when the file closes.
fn flock(path: &std::path::Path, how: libc::c_int) -> std::fs::File {
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).unwrap();
    use std::os::fd::AsRawFd;
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), how) }, 0, "flock failed");
    file
}

/// Holds the load lock until dropped.
pub struct LoadGuard {
    _file: std::fs::File,
    _inner: MutexGuard<'static, ()>,
    _cluster: Option<std::fs::File>,
}

/// A fresh store path inside a temp dir that lives as long as the returned guard.
pub fn temp_store() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("results.db");
    (d, p)
}

/// Parses the summary table rows printed by `run`/`show`: op name → columns.
pub fn summary_rows(stdout: &str) -> Vec<(String, Vec<String>)> {
    stdout
        .lines()
        .filter(|l| l.starts_with("  ") && !l.trim_start().starts_with("op ") && !l.contains(':'))
        .map(|l| {
            let mut it = l.split_whitespace().map(|s| s.to_string());
            let name = it.next().unwrap_or_default();
            (name, it.collect())
        })
        .collect()
}

/// The cells of operation `op`'s row among `summary_rows`' rows (the first such row).
pub fn summary_row<'a>(rows: &'a [(String, Vec<String>)], op: &str) -> &'a [String] {
    rows.iter().find(|(n, _)| n == op).map(|(_, c)| c.as_slice()).unwrap_or_else(|| panic!("no row {op} in {rows:?}"))
}

/// `--store PATH` as arguments.
pub fn store_arg(p: &std::path::Path) -> [&str; 2] {
    ["--store", p.to_str().unwrap()]
}

/// A driver session to `host` (no login), with the runtime it lives on.
pub fn session(host: &str) -> (tokio::runtime::Runtime, scylla::client::session::Session) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(async { scylla::client::session_builder::SessionBuilder::new().known_node(host).build().await.unwrap() });
    (rt, s)
}

/// The JVM option the test clusters' nodes start with: C1 only, no C2. A node then starts on
/// about two thirds of the CPU time and idles on less, so a 3-node cluster leaves more of a
/// 2-core machine to the client whose behaviour the tests check. (The shared test node keeps
/// the JIT users get: its tests hold rates and measure latencies.)
pub const QUICK_JIT: &str = "--jvm-opt=-XX:TieredStopAtLevel=1";

/// A test cluster's own home, `target/casslab-test/NAME`, made if missing, in one spelling.
pub fn cluster_home(name: &str) -> PathBuf {
    let h = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/casslab-test").join(name);
    std::fs::create_dir_all(&h).unwrap();
    h.canonicalize().unwrap()
}

/// A casslab command aimed at the local cluster under `home` (runs without --hosts use it).
pub fn casslab_at(home: &std::path::Path) -> Command {
    let mut c = casslab();
    c.env("CASSLAB_HOME", home);
    c
}

/// Stops the local cluster under its home and deletes its data when dropped, pass or fail.
pub struct WipeOnDrop(pub PathBuf);

impl Drop for WipeOnDrop {
    fn drop(&mut self) {
        let (code, _, err) = run(casslab_at(&self.0).args(["local", "down", "--wipe"]));
        if code != 0 {
            eprintln!("[cleanup] casslab local down --wipe failed: {err}");
        }
    }
}
