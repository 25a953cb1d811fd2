//! End-to-end test of login and TLS against a real node started with both: `casslab local up
//! --auth --tls` on its own address (127.0.0.55) and home, then a run as a second role over
//! TLS that succeeds and leaves the role's password nowhere (stdout, stderr, the JSON export,
//! the SQLite store's bytes); a wrong password and a connection without TLS that fail with exit
//! code 1 and say why; and a run without --hosts that logs in and verifies TLS by itself. The
//! node is stopped and wiped at the end, pass or fail.

mod common;
use common::{casslab, load_lock, run, summary_rows, temp_store};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Address of the secure node: apart from the shared test node (127.0.0.51) and a user's (127.0.0.1).
const ADDR: &str = "127.0.0.55";
/// The role the runs log in as; a password distinctive enough to search for.
const ROLE: &str = "bench";
const PASSWORD: &str = "S3cret-Pw-4711";
const WRONG_PASSWORD: &str = "Wr0ng-Pw-0815";

fn secure_home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/casslab-test/secure-home")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// Stops and wipes the secure node when dropped, also when an assertion failed.
struct DownOnDrop(PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let (code, out, err) = run(casslab().args(["local", "down", "--wipe", "--home", path_str(&self.0)]));
        if code != 0 {
            eprintln!("[cleanup] casslab local down failed ({code}):\n{out}\n{err}");
        }
    }
}

/// Creates the role the runs use, as the default superuser over TLS, through casslab's own
/// connection code. The superuser exists only shortly after start, so this retries for 60 s.
fn create_role(ca: &Path) {
    use casslab_core::config::{ClusterConfig, Credentials};
    let cfg =
        ClusterConfig { hosts: vec![ADDR.into()], user: Some("cassandra".into()), tls: true, tls_ca_file: Some(ca.to_path_buf()), ..ClusterConfig::default() };
    let creds = Credentials { password: Some("cassandra".into()), ..Credentials::default() };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let started = Instant::now();
        let session = loop {
            match casslab_core::targets::cql::connect(&cfg, &creds).await {
                Ok(s) => break s,
                Err(e) if started.elapsed() < Duration::from_secs(60) => {
                    eprintln!("superuser not ready yet: {e}");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
                Err(e) => panic!("cannot log in as cassandra/cassandra over TLS within 60 s: {e}"),
            }
        };
        for cql in [
            format!("CREATE ROLE IF NOT EXISTS {ROLE} WITH PASSWORD = '{PASSWORD}' AND LOGIN = true"),
            format!("GRANT ALL PERMISSIONS ON ALL KEYSPACES TO {ROLE}"),
        ] {
            session.query_unpaged(cql.as_str(), &[]).await.unwrap_or_else(|e| panic!("{cql}: {e}"));
        }
    });
}

/// `casslab run kv` against the secure node with a short load and run.
fn kv_run(store: &Path, password: &str) -> std::process::Command {
    let mut c = casslab();
    c.args(["run", "kv", "-P", "rows=200", "-P", "keyspace=casslab_secure", "--duration", "2s", "--warmup", "0s", "--concurrency", "16"])
        .args(["--store", path_str(store)])
        .env("CASSLAB_PASSWORD", password);
    c
}

fn ops_of(stdout: &str) -> u64 {
    summary_rows(stdout).iter().filter(|(op, _)| op == "read" || op == "update").map(|(_, cols)| cols[0].parse::<u64>().unwrap_or(0)).sum()
}

/// Asserts `needle` occurs nowhere in `bytes`, naming `what` if it does.
fn assert_absent(what: &str, bytes: &[u8], needle: &str) {
    let found = bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(!found, "the password appears in {what}");
}

#[test]
fn auth_and_tls_against_a_real_node() {
    let _lock = load_lock();
    let home = secure_home();
    // A node left behind by an interrupted earlier run would hold the address.
    let _ = run(casslab().args(["local", "down", "--wipe", "--home", path_str(&home)]));
    let _down = DownOnDrop(home.clone());

    let started = Instant::now();
    let (code, out, err) = run(casslab().args(["local", "up", "--home", path_str(&home), "--base-address", ADDR, "--heap", "768M", "--auth", "--tls"]));
    assert_eq!(code, 0, "local up failed:\nstdout: {out}\nstderr: {err}");
    eprintln!("local up --auth --tls took {:.1} s:\n{err}", started.elapsed().as_secs_f64());
    assert_eq!(out.trim(), format!("{ADDR}:9042"));
    assert!(err.contains("auth on: user cassandra, password cassandra (the local default)"), "{err}");
    let ca = err
        .lines()
        .find_map(|l| l.strip_prefix("TLS on: CA certificate "))
        .and_then(|rest| rest.split(" (use --tls-ca ").next())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no CA file in:\n{err}"));
    assert!(std::fs::read_to_string(&ca).unwrap().starts_with("-----BEGIN CERTIFICATE-----"), "{}", ca.display());

    // status probes the node over TLS
    let (code, out, err) = run(casslab().args(["local", "status", "--home", path_str(&home)]));
    assert_eq!(code, 0, "local status:\nstdout: {out}\nstderr: {err}");
    assert!(out.contains(&format!("{ADDR}:9042")) && out.contains(" up "), "{out}");
    assert!(err.contains(&format!("TLS on: CA certificate {}", ca.display())), "{err}");

    let role_started = Instant::now();
    create_role(&ca);
    eprintln!("role {ROLE} created {:.1} s after the node answered", role_started.elapsed().as_secs_f64());

    let (dir, store) = temp_store();
    let json = dir.path().join("run.json");

    // 1. As the new role over TLS, verifying the node with the CA file: a full run.
    let (code, out, err) = run(kv_run(&store, PASSWORD).args(["--hosts", ADDR, "--user", ROLE, "--tls-ca", path_str(&ca), "--json", path_str(&json)]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains(&format!("connected to {ADDR}")), "{err}");
    assert!(ops_of(&out) > 0, "no operations counted:\n{out}");
    for (what, text) in [("stdout", &out), ("stderr", &err)] {
        assert_absent(what, text.as_bytes(), PASSWORD);
    }
    let exported = std::fs::read(&json).unwrap();
    assert_absent("the JSON export", &exported, PASSWORD);
    let v: serde_json::Value = serde_json::from_slice(&exported).unwrap();
    assert_eq!(v["config"]["cluster"]["user"], ROLE, "{}", v["config"]);
    assert_eq!(v["config"]["cluster"]["tls"], true, "{}", v["config"]);

    // 2. A wrong password: exit 3 (setup), says authentication failed, does not echo the password.
    let (code, out, err) = run(kv_run(&store, WRONG_PASSWORD).args(["--hosts", ADDR, "--user", ROLE, "--tls-ca", path_str(&ca)]));
    assert_eq!(code, 3, "a login refused is a setup failure:\nstdout:\n{out}\nstderr:\n{err}");
    assert!(err.to_lowercase().contains("authentication"), "{err}");
    assert_absent("stderr of the wrong-password run", err.as_bytes(), WRONG_PASSWORD);
    assert_absent("stdout of the wrong-password run", out.as_bytes(), WRONG_PASSWORD);

    // 3. No TLS against a node that requires it: a connection error, exit 3.
    let (code, out, err) = run(kv_run(&store, PASSWORD).args(["--hosts", ADDR, "--user", ROLE]));
    assert_eq!(code, 3, "no TLS against a TLS-only node is a setup failure:\nstdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains(&format!("cannot connect to {ADDR}:9042")), "{err}");
    assert_absent("stderr of the plain-text run", err.as_bytes(), PASSWORD);

    // 4. TLS without the CA file: the self-signed certificate does not verify, exit 3.
    let (code, out, err) = run(kv_run(&store, PASSWORD).args(["--hosts", ADDR, "--user", ROLE, "--tls"]));
    assert_eq!(code, 3, "an untrusted certificate is a setup failure:\nstdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("certificate verify failed"), "{err}");

    // 5. Without --hosts, casslab logs in to its local cluster and verifies TLS by itself.
    let mut local = kv_run(&store, "");
    local.env_remove("CASSLAB_PASSWORD").args(["--home", path_str(&home)]);
    let (code, out, err) = run(&mut local);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains(&format!("connected to {ADDR}:9042")), "{err}");
    assert!(ops_of(&out) > 0, "no operations counted:\n{out}");

    // The store: two runs, as bench and as cassandra over TLS; no password in any of its files.
    let db = rusqlite::Connection::open(&store).unwrap();
    let configs: Vec<String> =
        db.prepare("SELECT config_json FROM runs ORDER BY id").unwrap().query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(configs.len(), 2, "{configs:?}");
    let users: Vec<serde_json::Value> = configs.iter().map(|c| serde_json::from_str::<serde_json::Value>(c).unwrap()["cluster"].clone()).collect();
    assert_eq!((users[0]["user"].as_str(), users[1]["user"].as_str()), (Some(ROLE), Some("cassandra")), "{users:?}");
    assert_eq!(users[1]["tls_ca_file"].as_str(), Some(path_str(&ca)), "{users:?}");
    drop(db);
    let mut store_files = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with("results.db") {
            store_files += 1;
            assert_absent(&path.display().to_string(), &std::fs::read(&path).unwrap(), PASSWORD);
        }
    }
    assert!(store_files >= 1);
}
