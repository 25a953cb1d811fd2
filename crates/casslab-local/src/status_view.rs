//! `casslab local status` as text: a line per node (address, data center, state in the ring,
//! pid, process, CQL, load, data directory), a line per peer the ring remembers that this
//! cluster does not start, and for a relayed cluster the relay, the distances, the faults in
//! force and where the relay takes each node's connections; and whether it is all healthy.

use crate::{LocalCluster, LocalError, NetworkStatus};
use casslab_core::report::table::TextTable;

/// What `local status` shows of a cluster.
pub struct StatusView {
    /// The nodes' table, with the ring's strangers last.
    pub table: String,
    /// The network lines of a relayed cluster.
    pub network: Option<String>,
    /// Peers the ring remembers that this cluster does not start, and are down: `ADDRESS (STATE)`.
    pub down_strangers: Vec<String>,
    /// Every node running and answering CQL (or gone), no stranger down, the relay running.
    pub healthy: bool,
}

impl LocalCluster {
    /// What `local status` shows.
    pub fn status_view(&self) -> Result<StatusView, LocalError> {
        let nodes = self.status()?;
        let ring = if nodes.iter().any(|n| n.running) { self.ring().ok().flatten().unwrap_or_default() } else { Vec::new() };
        let mut t = TextTable::new(["node", "address", "dc", "state", "pid", "process", "cql", "load", "data"]).right([4, 7]);
        for n in &nodes {
            let seen = ring.iter().find(|e| e.address == n.peer_address);
            let process = if n.left {
                "left"
            } else if n.running {
                "running"
            } else {
                "stopped"
            };
            t.row([
                n.name.clone(),
                format!("{}:{}", n.address, n.cql_port),
                n.dc.clone(),
                seen.map_or("-", |e| e.state.as_str()).to_string(),
                n.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                process.to_string(),
                (if n.cql_up { "up" } else { "down" }).to_string(),
                seen.map_or("-", |e| e.load.as_str()).to_string(),
                n.data_dir.display().to_string(),
            ]);
        }
        // peers the ring remembers that this cluster does not start (its data belongs to a bigger one)
        let mut strangers: Vec<_> = ring.iter().filter(|e| !nodes.iter().any(|n| n.peer_address == e.address || n.address == e.address)).collect();
        strangers.sort_by_key(|e| e.address);
        for e in &strangers {
            let cells = ["(peer)", &e.address.to_string(), &e.dc, &e.state, "-", "not casslab's", "-", &e.load, "-"];
            t.row(cells.map(str::to_string));
        }
        let network = self.network_status()?;
        let down_strangers: Vec<String> = strangers.iter().filter(|e| !e.is_up_normal()).map(|e| format!("{} ({})", e.address, e.state)).collect();
        let relay_ok = network.as_ref().is_none_or(|n| n.relay_pid.is_some() || !nodes.iter().any(|n| n.running));
        let healthy = nodes.iter().all(|n| n.left || n.running && n.cql_up) && down_strangers.is_empty() && relay_ok;
        Ok(StatusView { table: t.to_string(), network: network.as_ref().map(network_text), down_strangers, healthy })
    }
}

/// The network lines of `local status` for a relayed cluster: the relay, the distances, the
/// faults in force, and where the relay takes each node's connections.
fn network_text(n: &NetworkStatus) -> String {
    let relay = match n.relay_pid {
        Some(pid) => format!("relay pid {pid}"),
        None => "relay not running (`casslab local up` starts it)".to_string(),
    };
    let faults = if n.faults.is_empty() {
        "none".to_string()
    } else {
        n.faults.iter().map(|(label, since)| format!("{label} (since {})", casslab_core::units::utc(*since as i64))).collect::<Vec<_>>().join(", ")
    };
    let reach = n.nodes.iter().map(|(name, peers, clients)| format!("{name} {peers}/{clients}")).collect::<Vec<_>>().join(", ");
    format!("network: {relay}; distances: {}\nfaults in force: {faults}\nrelay addresses (peers/clients): {reach}\n", n.distances)
}
