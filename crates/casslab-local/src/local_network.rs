//! The network of a local cluster: on a relayed cluster (distances between its data centers or
//! from the client, or `relay` asked for) casslab's relay stands in front of every node, started
//! before the nodes by `up` and stopped after them by `down`; a running cluster takes new
//! distances without a restart; a run's network events change it (`change_network`); faults an
//! ended run left in force end at the next `up` or run. On a cluster that is not relayed, a relay
//! left from a relayed past is stopped. The relay itself is `relay`'s and `relay_process`'s.

use crate::layout::{layouts, NodeLayout};
use crate::local_cluster::LocalCluster;
use crate::local_error::LocalError;
use crate::relay::{self, RelayConfig, RelayNode, Request};
use crate::relay_process::{ask, ensure_relay, find_relay_pid, stop_relay};
use crate::relay_rules::Topology;
use casslab_core::network::NetworkChange;

/// The network of a relayed cluster as it is now, for `local status`.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkStatus {
    /// The relay's pid while it runs.
    pub relay_pid: Option<u32>,
    /// The distances in words (`dc1:dc2 8ms; client: dc2 4ms`).
    pub distances: String,
    /// The faults in force (`partition dc1|dc2`) and since when (Unix milliseconds).
    pub faults: Vec<(String, u64)>,
    /// Each node's name and where its peers and clients reach it.
    pub nodes: Vec<(String, std::net::Ipv4Addr, std::net::Ipv4Addr)>,
}

impl LocalCluster {
    /// The distances of this cluster, on its nodes.
    fn topology(&self, nodes: &[NodeLayout]) -> Topology {
        let server = &self.options().server;
        Topology { dcs: nodes.iter().map(|n| n.dc.clone()).collect(), rtt: server.rtt.clone(), client_rtt: server.client_rtt.clone() }
    }

    /// What the relay of this cluster listens on and applies.
    fn relay_config(&self, nodes: &[NodeLayout]) -> RelayConfig {
        RelayConfig {
            nodes: nodes
                .iter()
                .map(|n| RelayNode { name: n.name.clone(), address: n.address, peer_address: n.peer_address, client_address: n.client_address })
                .collect(),
            storage_port: self.options().storage_port,
            cql_port: self.options().cql_port,
            topology: self.topology(nodes),
        }
    }

    /// Runs the relay as the options say before nodes start: started, or given the distances
    /// (with `heal`, ending faults an ended run left); on a cluster that is not relayed, stops
    /// a relay left from a relayed past. True when a relay was started (the running nodes, if
    /// any, must find each other again through it).
    pub(crate) fn ensure_network(&self, nodes: &[NodeLayout], heal: bool, progress: &mut dyn FnMut(&str)) -> Result<bool, LocalError> {
        let home = &self.options().home;
        if self.options().relayed() {
            ensure_relay(home, &self.relay_config(nodes), heal, progress)
        } else {
            stop_relay(home, progress).map(|_| false)
        }
    }

    /// Whether the relay this cluster needs runs (always true when it needs none).
    pub(crate) fn relay_runs(&self) -> bool {
        !self.options().relayed() || find_relay_pid(&self.options().home).is_some()
    }

    /// The relay and the faults in force; `None` for a cluster that is not relayed.
    pub fn network_status(&self) -> Result<Option<NetworkStatus>, LocalError> {
        if !self.options().relayed() {
            return Ok(None);
        }
        let nodes = layouts(self.options())?;
        let home = &self.options().home;
        let relay_pid = find_relay_pid(home);
        let faults = match relay_pid {
            Some(_) => ask(home, &Request::State)?.faults.list.into_iter().map(|f| (f.label, f.since_unix_ms)).collect(),
            None => Vec::new(),
        };
        Ok(Some(NetworkStatus {
            relay_pid,
            distances: self.topology(&nodes).describe(),
            faults,
            nodes: nodes.iter().map(|n| (n.name.clone(), n.peer_address, n.client_address)).collect(),
        }))
    }

    /// Changes the network as a run's event asks; `progress` gets what is in force after it.
    pub fn change_network(&self, change: &NetworkChange, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let home = &self.options().home;
        if !self.options().relayed() {
            return Err(LocalError::NotRelayed { home: home.clone() });
        }
        let reply = ask(home, &Request::Change { change: change.clone() })?;
        let in_force: Vec<String> = reply.faults.list.iter().map(|f| f.label.clone()).collect();
        progress(&if in_force.is_empty() { "no network fault in force".to_string() } else { format!("in force: {}", in_force.join(", ")) });
        Ok(())
    }

    /// Ends the faults an ended run left in force (a run killed before it could heal), saying
    /// which; nothing on a cluster that is not relayed.
    pub fn heal_left_faults(&self, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        if !self.options().relayed() {
            return Ok(());
        }
        let home = &self.options().home;
        let left: Vec<String> = ask(home, &Request::State)?.faults.list.into_iter().map(|f| f.label).collect();
        if !left.is_empty() {
            ask(home, &Request::Change { change: NetworkChange::Heal })?;
            progress(&format!("healed the network faults an ended run left in force: {}", left.join(", ")));
        }
        Ok(())
    }

    /// Stops the relay (after the nodes) for `down`; with `wipe`, deletes its directory.
    pub(crate) fn network_down(&self, wipe: bool, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let home = &self.options().home;
        stop_relay(home, progress)?;
        let dir = relay::relay_dir(home);
        if wipe && dir.is_dir() {
            std::fs::remove_dir_all(&dir).map_err(|e| LocalError::io(format!("deleting {}", dir.display()), e))?;
            progress(&format!("wiped {}", dir.display()));
        }
        Ok(())
    }
}
