//! casslab's relay: the process (`casslab local relay --home DIR`, started detached by `local
//! up` and stopped by `local down`) that stands in front of every node of a relayed cluster.
//! Each node broadcasts two of the relay's addresses instead of its own (`broadcast_address`:
//! 127.(x+64).y.z for its peers, `broadcast_rpc_address`: 127.(x+128).y.z for clients); the relay
//! listens there and forwards every connection to the node's own address, delaying each chunk by
//! half the round trip of its link each way (pipelined; see `relay_pipe`), or holding it while
//! the link is cut. The two ends of an internode connection are the node dialled (by the address
//! dialled) and the dialer (named by the handshake's first bytes, see `handshake`): so every
//! pair of nodes has its own link, which a per-node broadcast address alone could not give.
//! A control socket (an abstract Unix socket named after the home) takes one JSON request per
//! line: the state, a network change (the faults of a run's events), or a reload of the
//! distances from `relay.json` — distances change without restarting a node.
//!
//! Why a relay in user space: this kind of machine has no `netem` queueing discipline (no delay
//! or loss from `tc`), and loopback traffic cannot be told apart per pair by routes alone;
//! a process of casslab's own needs no privilege and goes away with `local down`.

use crate::handshake;
use crate::local_error::{IoContext, LocalError};
use crate::relay_pipe::{pipe, SharedRules};
use crate::relay_rules::{Endpoint, Faults, Topology};
use casslab_core::network::NetworkChange;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long the relay waits for an internode dialer's greeting.
const GREETING_WAIT: Duration = Duration::from_secs(10);
/// How long the relay waits to connect to a node (a stopped node refuses at once).
const CONNECT_WAIT: Duration = Duration::from_secs(2);
/// Stack of each connection's thread: the pipe loop needs little.
const CONNECTION_STACK_BYTES: usize = 256 * 1024;

/// One node as the relay sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelayNode {
    pub name: String,
    /// Where the node listens.
    pub address: Ipv4Addr,
    /// Where the relay takes its peers' connections.
    pub peer_address: Ipv4Addr,
    /// Where the relay takes the client's connections.
    pub client_address: Ipv4Addr,
}

/// `home/relay/relay.json`: what the relay listens on and the distances it applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayConfig {
    pub nodes: Vec<RelayNode>,
    pub storage_port: u16,
    pub cql_port: u16,
    pub topology: Topology,
}

impl RelayConfig {
    /// The addresses and ports it listens on (a relay that listens elsewhere is restarted).
    pub fn listens(&self) -> Vec<SocketAddr> {
        self.nodes.iter().flat_map(|n| [SocketAddr::from((n.peer_address, self.storage_port)), SocketAddr::from((n.client_address, self.cql_port))]).collect()
    }
}

/// A request on the control socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The state: distances and faults in force.
    State,
    /// Read `relay.json` again: new distances act on the connections already open. Refused when
    /// the nodes or ports changed (the relay is then restarted).
    Reload,
    /// A network change.
    Change { change: NetworkChange },
}

/// The relay's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub pid: u32,
    pub topology: Topology,
    pub faults: Faults,
}

/// `home/relay`.
pub fn relay_dir(home: &Path) -> PathBuf {
    home.join("relay")
}

pub fn config_file(home: &Path) -> PathBuf {
    relay_dir(home).join("relay.json")
}

pub fn pid_file(home: &Path) -> PathBuf {
    relay_dir(home).join("pid")
}

pub fn log_file(home: &Path) -> PathBuf {
    relay_dir(home).join("relay.log")
}

/// The name of the control socket (abstract: no file to leave behind, no path-length limit),
/// from a stable hash of the home.
pub fn control_name(home: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in home.as_os_str().as_encoded_bytes() {
        hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("casslab-relay-{hash:016x}")
}

pub fn read_config(home: &Path) -> Result<RelayConfig, LocalError> {
    let path = config_file(home);
    let text = std::fs::read_to_string(&path).context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| LocalError::Relay {
        home: home.to_path_buf(),
        reason: format!("{} is unreadable: {e}", path.display()),
        log_tail: String::new(),
    })
}

/// Runs the relay of the cluster under `home` until the process is ended (SIGTERM); `log` gets
/// a line per notable thing (the process's stderr: `relay/relay.log`). Errs when a listener or
/// the control socket cannot be bound.
pub fn serve(home: &Path, log: Arc<dyn Fn(&str) + Send + Sync>) -> Result<(), LocalError> {
    // SAFETY: prctl with PR_SET_TIMERSLACK only sets this thread's timer slack (inherited by the
    // threads it starts): wake-ups at 1 µs rather than 50 µs past the delays' deadlines.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
    let config = read_config(home)?;
    let rules = Arc::new(SharedRules::new(config.topology.clone()));
    let by_address: Arc<HashMap<Ipv4Addr, usize>> =
        Arc::new(config.nodes.iter().enumerate().flat_map(|(i, n)| [(n.peer_address, i), (n.address, i)]).collect());
    let bind = |addr: SocketAddr| {
        TcpListener::bind(addr).map_err(|e| LocalError::Relay {
            home: home.to_path_buf(),
            reason: format!("cannot listen on {addr}: {e}"),
            log_tail: String::new(),
        })
    };
    let mut listeners = Vec::new();
    for (i, n) in config.nodes.iter().enumerate() {
        listeners.push((bind(SocketAddr::from((n.peer_address, config.storage_port)))?, i, true));
        listeners.push((bind(SocketAddr::from((n.client_address, config.cql_port)))?, i, false));
    }
    let control = UnixAddr::from_abstract_name(control_name(home).as_bytes()).context(|| "naming the relay's control socket".into())?;
    let control = UnixListener::bind_addr(&control).map_err(|e| LocalError::Relay {
        home: home.to_path_buf(),
        reason: format!("cannot open its control socket ({e}): is another relay running for this home?"),
        log_tail: String::new(),
    })?;
    for (listener, node, internode) in listeners {
        let (config, rules, by_address, log) = (config.clone(), rules.clone(), by_address.clone(), log.clone());
        std::thread::spawn(move || accept_loop(listener, node, internode, &config, rules, by_address, log));
    }
    log(&format!(
        "relay (pid {}) in front of {} node(s): peers at {}:{}, clients at {}:{}; distances: {}",
        std::process::id(),
        config.nodes.len(),
        config.nodes.iter().map(|n| n.peer_address.to_string()).collect::<Vec<_>>().join(","),
        config.storage_port,
        config.nodes.iter().map(|n| n.client_address.to_string()).collect::<Vec<_>>().join(","),
        config.cql_port,
        config.topology.describe()
    ));
    for conn in control.incoming() {
        let Ok(conn) = conn else { continue };
        answer(conn, home, &config, &rules, log.as_ref());
    }
    Ok(())
}

/// Takes connections to one node's relay address and pipes each on a thread of its own.
fn accept_loop(
    listener: TcpListener,
    node: usize,
    internode: bool,
    config: &RelayConfig,
    rules: Arc<SharedRules>,
    by_address: Arc<HashMap<Ipv4Addr, usize>>,
    log: Arc<dyn Fn(&str) + Send + Sync>,
) {
    let n = &config.nodes[node];
    let target = SocketAddr::from((n.address, if internode { config.storage_port } else { config.cql_port }));
    for conn in listener.incoming() {
        let Ok(mut a) = conn else { continue };
        let (rules, by_address, conn_log, name) = (rules.clone(), by_address.clone(), log.clone(), n.name.clone());
        let spawned = std::thread::Builder::new().stack_size(CONNECTION_STACK_BYTES).spawn(move || {
            let (dialer, first) = if internode {
                let first = handshake::read_greeting(&mut a, GREETING_WAIT);
                match handshake::dialer(&first).and_then(|ip| by_address.get(&ip).copied()) {
                    Some(i) => (Endpoint::Node(i), first),
                    None => {
                        let said =
                            handshake::dialer(&first).map_or_else(|| format!("{} byte(s), no handshake", first.len()), |ip| format!("a handshake from {ip}"));
                        conn_log(&format!("{name}: an internode connection that names no node of the cluster ({said}): no distance applies to it"));
                        (Endpoint::Unknown, first)
                    }
                }
            } else {
                (Endpoint::Client, Vec::new())
            };
            // a stopped node refuses: the dialer's connection closes, as it would without the relay
            if let Ok(b) = TcpStream::connect_timeout(&target, CONNECT_WAIT) {
                pipe(a, b, (dialer, Endpoint::Node(node)), &rules, first);
            }
        });
        if let Err(e) = spawned {
            log(&format!("{}: cannot start a connection's thread: {e}", n.name));
        }
    }
}

/// Milliseconds since the Unix epoch.
fn unix_now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Reads one request from a control connection and answers it.
fn answer(conn: UnixStream, home: &Path, config: &RelayConfig, rules: &SharedRules, log: &dyn Fn(&str)) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut line = String::new();
    if BufReader::new(&conn).read_line(&mut line).is_err() {
        return;
    }
    let mut error = None;
    match serde_json::from_str::<Request>(&line) {
        Ok(Request::State) => {}
        Ok(Request::Reload) => match read_config(home) {
            Ok(new) if new.listens() == config.listens() => {
                rules.change(|t, _| *t = new.topology.clone());
                log(&format!("distances now: {}", new.topology.describe()));
            }
            Ok(_) => error = Some("its nodes or ports changed: it must be restarted".to_string()),
            Err(e) => error = Some(e.to_string()),
        },
        Ok(Request::Change { change }) => {
            let said = rules.change(|t, f| {
                f.apply(&change, t, unix_now_ms());
                crate::relay_rules::label(&change, t)
            });
            log(&said);
        }
        Err(e) => error = Some(format!("not a request: {e}")),
    }
    let (topology, faults) = rules.snapshot();
    let reply = Reply { ok: error.is_none(), error, pid: std::process::id(), topology, faults };
    let text = serde_json::to_string(&reply).expect("a reply always serializes");
    let _ = (&conn).write_all(format!("{text}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_are_one_json_line_each() {
        let change = Request::Change { change: NetworkChange::Partition { sides: vec![vec![0], vec![1]] } };
        let json = serde_json::to_string(&change).unwrap();
        assert_eq!(json, r#"{"op":"change","change":{"kind":"partition","sides":[[0],[1]]}}"#);
        assert_eq!(serde_json::from_str::<Request>(&json).unwrap(), change);
        assert_eq!(serde_json::to_string(&Request::State).unwrap(), r#"{"op":"state"}"#);
        assert!(!json.contains('\n'));
    }

    #[test]
    fn the_control_name_is_stable_and_differs_by_home() {
        let a = control_name(Path::new("/work/a/home"));
        assert_eq!(a, control_name(Path::new("/work/a/home")));
        assert_ne!(a, control_name(Path::new("/work/b/home")));
        assert!(a.starts_with("casslab-relay-") && a.len() == "casslab-relay-".len() + 16);
    }
}
