//! What `casslab run` says when it cannot connect, against a real node started with `casslab
//! local up --auth --tls` on an address of its own (127.0.0.64) and a home under the target
//! directory: no login, a wrong password, plain text against the TLS-only node, an untrusted
//! certificate and an address where nothing listens each get a first line of their own that
//! says what to do, with the driver's message kept underneath. The node is stopped and wiped
//! at the end, pass or fail.

mod common;
use common::{casslab, load_lock, run, temp_store};
use std::path::{Path, PathBuf};

const ADDR: &str = "127.0.0.64";

fn home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/casslab-test/connect-errors-home")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// Stops and wipes the node when dropped, also when an assertion failed.
struct DownOnDrop(PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let (code, out, err) = run(casslab().args(["local", "down", "--wipe", "--home", path_str(&self.0)]));
        if code != 0 {
            eprintln!("[cleanup] casslab local down failed ({code}):\n{out}\n{err}");
        }
    }
}

/// `casslab run kv` that never gets past connecting; returns stderr's first line and all of it.
fn connect(store: &Path, password: Option<&str>, args: &[&str]) -> (String, String) {
    let mut c = casslab();
    c.args(["run", "kv", "-P", "rows=100", "--duration", "1s", "--warmup", "0s", "--no-lint", "--store", path_str(store)]).args(args);
    c.env_remove("CASSLAB_PASSWORD");
    if let Some(p) = password {
        c.env("CASSLAB_PASSWORD", p);
    }
    let (code, out, err) = run(&mut c);
    assert_eq!(code, 3, "a connection that fails is a setup failure:\nstdout:\n{out}\nstderr:\n{err}");
    let first = err.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("no error line in:\n{err}")).to_string();
    (first, err)
}

#[test]
fn connection_failures_say_what_to_do() {
    let (_d, store) = temp_store();
    // nothing listens on port 1: no node needed
    let (first, err) = connect(&store, None, &["--hosts", &format!("{ADDR}:1")]);
    assert!(first.starts_with(&format!("error: cannot connect to {ADDR}:1: nothing answers there: check the address and port")), "{err}");
    assert!(first.contains("that the node is up"), "{err}");
    assert!(err.contains("  the driver said: ") && err.contains("Connection refused"), "the driver's text stays: {err}");

    let _lock = load_lock();
    let home = home();
    let _ = run(casslab().args(["local", "down", "--wipe", "--home", path_str(&home)]));
    let _down = DownOnDrop(home.clone());
    let (code, out, err) = run(casslab().args(["local", "up", "--home", path_str(&home), "--base-address", ADDR, "--heap", "768M", "--auth", "--tls"]));
    assert_eq!(code, 0, "local up failed:\nstdout: {out}\nstderr: {err}");
    let ca = err
        .lines()
        .find_map(|l| l.strip_prefix("TLS on: CA certificate "))
        .and_then(|rest| rest.split(" (use --tls-ca ").next())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no CA file in:\n{err}"));
    let ca = path_str(&ca);

    let mut firsts = Vec::new();
    // no --user against a node that requires a login
    let (first, err) = connect(&store, None, &["--hosts", ADDR, "--tls-ca", ca]);
    assert!(first.contains(": the cluster requires a login and none was given: pass --user NAME and set CASSLAB_PASSWORD"), "{err}");
    assert!(err.contains("the driver said: ") && err.contains("Authentication is required"), "{err}");
    firsts.push(first);
    // a wrong password
    let (first, err) = connect(&store, Some("not-the-password"), &["--hosts", ADDR, "--tls-ca", ca, "--user", "cassandra"]);
    assert!(first.contains(": the login as cassandra was refused: check --user and the password in CASSLAB_PASSWORD"), "{err}");
    assert!(err.contains("bad credentials") && !err.contains("not-the-password"), "{err}");
    firsts.push(first);
    // plain text against the TLS-only node
    let (first, err) = connect(&store, Some("cassandra"), &["--hosts", ADDR, "--user", "cassandra"]);
    assert!(first.contains("serves only TLS does to plain text: add --tls --tls-ca FILE"), "{err}");
    firsts.push(first);
    // TLS without the CA that signed the node's certificate
    let (first, err) = connect(&store, Some("cassandra"), &["--hosts", ADDR, "--user", "cassandra", "--tls"]);
    assert!(first.contains("the node's TLS certificate is not trusted: pass the CA that signed it with --tls-ca FILE"), "{err}");
    assert!(err.contains("certificate verify failed"), "{err}");
    firsts.push(first);
    firsts.sort();
    firsts.dedup();
    assert_eq!(firsts.len(), 4, "each failure has a first line of its own: {firsts:#?}");
}
