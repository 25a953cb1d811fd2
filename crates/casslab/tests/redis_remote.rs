//! End-to-end tests of the Redis target against servers casslab did not start, as a user's
//! would be: a redis-server that speaks only TLS and requires a password (a private CA made
//! here with the `openssl` command), and a three-node Redis Cluster (made with `redis-cli
//! --cluster create`). Each server is a child process of the test on its own address
//! (127.0.0.67 for TLS, 127.0.0.68 ports 7101–7103 for the cluster), killed when the test ends,
//! pass or fail. They check that casslab loads, runs and reads back through TLS with the
//! password from the environment, that the password is left nowhere (output, store, export),
//! that a wrong password, a missing CA or a plain connection to a TLS port fail at setup saying
//! what to do, and that a cluster's keys are spread over all its nodes and all read back.

mod common;
use common::{casslab, load_lock, run, summary_row, summary_rows, temp_store};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TLS_ADDR: &str = "127.0.0.67";
const TLS_PORT: &str = "6393";
const CLUSTER_ADDR: &str = "127.0.0.68";
const CLUSTER_PORTS: [&str; 3] = ["7101", "7102", "7103"];
const PASSWORD: &str = "R3dis-Pw-4242";

/// redis-server children, killed (and reaped) when dropped.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn redis_server(dir: &Path, args: &[&str]) -> Child {
    Command::new("redis-server")
        .current_dir(dir)
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server (from the redis-server package) starts")
}

fn redis_cli(args: &[&str]) -> (bool, String) {
    let o = Command::new("redis-cli").args(args).output().expect("redis-cli (from the redis-tools package) runs");
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
}

/// Waits until `check` holds (a server answering), at most 20 s.
fn wait_for(what: &str, check: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !check() {
        assert!(t0.elapsed() < Duration::from_secs(20), "{what} did not come up within 20 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl").current_dir(dir).args(args).output().expect("openssl (from the openssl package) runs");
    assert!(o.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// A private CA and a certificate for `addr` signed by it: `ca.pem`, `server.pem`, `server.key`.
fn certificates(dir: &Path, addr: &str) {
    openssl(dir, &["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=casslab-test-ca"]);
    openssl(dir, &["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", &format!("/CN={addr}")]);
    std::fs::write(dir.join("san.ext"), format!("subjectAltName=IP:{addr}\n")).unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    );
}

#[test]
fn tls_with_a_password_runs_and_the_password_is_kept_nowhere() {
    let _g = load_lock();
    let dir = tempfile::tempdir().unwrap();
    certificates(dir.path(), TLS_ADDR);
    let _servers = Servers(vec![redis_server(
        dir.path(),
        &[
            "--bind",
            TLS_ADDR,
            "--port",
            "0",
            "--tls-port",
            TLS_PORT,
            "--tls-cert-file",
            "server.pem",
            "--tls-key-file",
            "server.key",
            "--tls-ca-cert-file",
            "ca.pem",
            "--tls-auth-clients",
            "no",
            "--requirepass",
            PASSWORD,
        ],
    )]);
    let ca = dir.path().join("ca.pem");
    let ca = ca.to_str().unwrap();
    let ping = || redis_cli(&["-h", TLS_ADDR, "-p", TLS_PORT, "--tls", "--cacert", ca, "--no-auth-warning", "-a", PASSWORD, "PING"]).1.contains("PONG");
    wait_for("the TLS redis-server", ping);
    let target = format!("rediss://{TLS_ADDR}:{TLS_PORT}");
    let (_d, store) = temp_store();
    let json = dir.path().join("run.json");
    let (code, out, err) = run(casslab()
        .env("CASSLAB_REDIS_PASSWORD", PASSWORD)
        .args(["run", "ycsb-a-redis", "-P", "rows=300", "--target", &target, "--tls-ca", ca, "--duration", "2s", "--warmup", "0s", "--rate", "300"])
        .args(["--store", store.to_str().unwrap(), "--json", json.to_str().unwrap()]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains(&format!("connected to {target} (1 node, Redis ")), "{err}");
    let rows = summary_rows(&out);
    let total = summary_row(&rows, "total");
    assert!(total[0].parse::<u64>().unwrap() > 300 && total.last().unwrap() == "0", "{out}");
    assert!(out.contains("misses 0 (100.0% hits)"), "every read found its record:\n{out}");
    // the load reached the server through TLS
    let (_, size) = redis_cli(&["-h", TLS_ADDR, "-p", TLS_PORT, "--tls", "--cacert", ca, "--no-auth-warning", "-a", PASSWORD, "DBSIZE"]);
    assert!(size.trim().parse::<u64>().unwrap() > 300, "{size}");
    // the password is nowhere: output, the store's bytes (and its WAL), the export
    for (what, bytes) in [("stdout", out.into_bytes()), ("stderr", err.into_bytes()), ("the export", std::fs::read(&json).unwrap())] {
        assert!(!String::from_utf8_lossy(&bytes).contains(PASSWORD), "the password is in {what}");
    }
    for entry in std::fs::read_dir(store.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(!bytes.windows(PASSWORD.len()).any(|w| w == PASSWORD.as_bytes()), "the password is in {}", path.display());
    }

    // what fails at setup says what to do
    let quick = ["-P", "rows=10", "--duration", "1s", "--warmup", "0s"];
    let (code, _, err) = run(casslab()
        .env("CASSLAB_REDIS_PASSWORD", "Wr0ng-Pw")
        .args(["run", "ycsb-a-redis", "--target", &target, "--tls-ca", ca])
        .args(quick)
        .args(["--store", store.to_str().unwrap()]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("CASSLAB_REDIS_PASSWORD"), "a wrong password names where it comes from: {err}");
    let (code, _, err) = run(casslab()
        .env("CASSLAB_REDIS_PASSWORD", PASSWORD)
        .args(["run", "ycsb-a-redis", "--target", &target])
        .args(quick)
        .args(["--store", store.to_str().unwrap()]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("--tls-ca"), "an untrusted certificate names --tls-ca: {err}");
    let (code, _, err) = run(casslab()
        .env("CASSLAB_REDIS_PASSWORD", PASSWORD)
        .args(["run", "ycsb-a-redis", "--target", &format!("redis://{TLS_ADDR}:{TLS_PORT}")])
        .args(quick)
        .args(["--store", store.to_str().unwrap()]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("rediss://"), "a plain connection to a TLS port names rediss://: {err}");
}

#[test]
fn a_redis_cluster_gets_its_keys_spread_over_every_node_and_reads_them_back() {
    let _g = load_lock();
    let dir = tempfile::tempdir().unwrap();
    let servers = Servers(
        CLUSTER_PORTS
            .iter()
            .map(|port| {
                let node = dir.path().join(port);
                std::fs::create_dir_all(&node).unwrap();
                // the bus's handshake needs the node's own address announced (it is not 127.0.0.1)
                redis_server(
                    &node,
                    &[
                        "--bind",
                        CLUSTER_ADDR,
                        "--port",
                        port,
                        "--cluster-enabled",
                        "yes",
                        "--cluster-announce-ip",
                        CLUSTER_ADDR,
                        "--cluster-config-file",
                        "nodes.conf",
                    ],
                )
            })
            .collect(),
    );
    for port in CLUSTER_PORTS {
        wait_for("a cluster node", || redis_cli(&["-h", CLUSTER_ADDR, "-p", port, "PING"]).1.contains("PONG"));
    }
    let nodes: Vec<String> = CLUSTER_PORTS.iter().map(|p| format!("{CLUSTER_ADDR}:{p}")).collect();
    let mut create = vec!["--cluster", "create"];
    create.extend(nodes.iter().map(String::as_str));
    create.extend(["--cluster-replicas", "0", "--cluster-yes"]);
    let (ok, text) = redis_cli(&create);
    assert!(ok && text.contains("All 16384 slots covered"), "redis-cli --cluster create:\n{text}");
    wait_for("the cluster", || CLUSTER_PORTS.iter().all(|p| redis_cli(&["-h", CLUSTER_ADDR, "-p", p, "CLUSTER", "INFO"]).1.contains("cluster_state:ok")));

    let (_d, store) = temp_store();
    let target = format!("redis://{CLUSTER_ADDR}:{}", CLUSTER_PORTS[0]);
    let rows = 1500;
    let (code, out, err) = run(casslab()
        .args(["run", "ycsb-a-redis", "-P", &format!("rows={rows}"), "--target", &target, "--duration", "2s", "--warmup", "0s", "--rate", "500"])
        .args(["--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains(&format!("connected to {target} (3 nodes, Redis ")), "the cluster is recognised: {err}");
    let summary = summary_rows(&out);
    let read = summary_row(&summary, "read");
    assert!(read[0].parse::<u64>().unwrap() > 300 && read.last().unwrap() == "0", "{out}");
    assert!(out.contains("no read came back empty"), "every read found its record:\n{out}");
    // every node holds a share of the records: the commands were routed by slot
    let sizes: Vec<u64> = CLUSTER_PORTS.iter().map(|p| redis_cli(&["-h", CLUSTER_ADDR, "-p", p, "DBSIZE"]).1.trim().parse().unwrap()).collect();
    assert!(sizes.iter().all(|n| *n > rows / 10), "keys per node: {sizes:?}");
    // the records, each once, beside casslab's bookkeeping keys (`casslab:loaded`, and the note of
    // the run that last wrote to the data set)
    let bookkeeping: Vec<String> = CLUSTER_PORTS
        .iter()
        .flat_map(|p| redis_cli(&["-h", CLUSTER_ADDR, "-p", p, "--scan", "--pattern", "casslab:*"]).1.lines().map(String::from).collect::<Vec<_>>())
        .filter(|k| !k.trim().is_empty())
        .collect();
    assert!(bookkeeping.iter().any(|k| k == "casslab:loaded"), "{bookkeeping:?}");
    assert_eq!(sizes.iter().sum::<u64>(), rows + bookkeeping.len() as u64, "keys per node: {sizes:?}, casslab's own: {bookkeeping:?}");
    drop(servers);
}
