//! The local cluster as the run session sees it: [`LocalControl`], the [`ClusterControl`] seam
//! of casslab-core (stop, kill and start nodes or data centers, nodetool, each node's process
//! and GC log, and running the cluster as a server definition says: checked first, then the
//! nodes restarted, their data wiped when the storage changes — or, when only the distances
//! change, the relay told them; the network changes of a run's events, on a relayed cluster);
//! and aiming a client's
//! [`ClusterConfig`] at the cluster (contact points, TLS, login, local data center), as a
//! production client is configured for its own cluster.

use crate::definition::{check, options_for, storage_differs};
use crate::local_cluster::LocalCluster;
use crate::state::{up_definition, with_up_definition, SavedCluster};
use crate::tls::{DEFAULT_SUPERUSER, DEFAULT_SUPERUSER_PASSWORD};
use crate::LocalOptions;
use casslab_core::cluster::{Applied, ClusterControl, ControlError, ControlledNode, ServerSpec};
use casslab_core::config::ClusterConfig;
use casslab_core::network::NetworkChange;
use std::process::Output;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// A local cluster under casslab's control. Server definitions apply over the options it was
/// started with (`base`): what a definition leaves out is what the user started.
pub struct LocalControl {
    /// The options `local up` gave, with the nodes the cluster has now (topology changes
    /// update them).
    base: Mutex<LocalOptions>,
    cluster: RwLock<LocalCluster>,
    /// Held while a node action runs ([`ClusterControl::one_at_a_time`]).
    node_actions: Mutex<()>,
}

impl LocalControl {
    /// Control of `cluster`; definitions apply over the server `local up` gave it (kept in
    /// its saved state while another definition runs).
    pub fn new(cluster: LocalCluster) -> LocalControl {
        let mut base = cluster.options().clone();
        if let Some(up) = SavedCluster::load(&base.home).ok().and_then(|s| s.up) {
            base = with_up_definition(&base, &up);
        }
        LocalControl { base: Mutex::new(base), cluster: RwLock::new(cluster), node_actions: Mutex::new(()) }
    }

    fn base(&self) -> LocalOptions {
        self.base.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// From now on the cluster is `next` (a node added or gone): definitions apply to its nodes.
    fn reshaped(&self, next: LocalCluster) {
        {
            let mut base = self.base.lock().unwrap_or_else(|e| e.into_inner());
            base.server.nodes = next.options().server.nodes;
            base.server.dcs = next.options().server.dcs.clone();
            base.left = next.options().left.clone();
        }
        *self.cluster.write().unwrap_or_else(|e| e.into_inner()) = next;
    }

    /// The cluster as it runs now.
    pub fn cluster(&self) -> LocalCluster {
        self.cluster.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl ClusterControl for LocalControl {
    fn select(&self, selector: &str) -> Result<Vec<usize>, ControlError> {
        self.cluster().select(selector).map_err(ControlError::new)
    }

    fn nodes(&self) -> Result<Vec<ControlledNode>, ControlError> {
        let nodes = self.cluster().status().map_err(ControlError::new)?;
        Ok(nodes
            .into_iter()
            .map(|n| {
                let cmdline = n.pid.and_then(crate::node_process::cmdline).unwrap_or_default();
                ControlledNode {
                    jolokia_url: crate::agents::jolokia_url(&cmdline),
                    profiler_lib: crate::agents::loaded_profiler(&cmdline).or_else(|| crate::agents::cached_agents().map(|a| a.async_profiler_lib)),
                    name: n.name,
                    // as the client (and so the server view) knows it
                    address: n.client_address.to_string(),
                    dc: n.dc,
                    pid: n.pid,
                    running: n.running,
                    gc_log: Some(n.log_file.with_file_name("gc.log")),
                }
            })
            .collect())
    }

    fn stop(&self, nodes: &[usize], kill: bool, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        self.cluster().stop_nodes(nodes, kill, log).map_err(ControlError::new)
    }

    fn start(&self, nodes: &[usize], log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        self.cluster().start_nodes(nodes, log).map(|_| ()).map_err(ControlError::new)
    }

    fn one_at_a_time(&self, action: &mut dyn FnMut()) {
        let _held = self.node_actions.lock().unwrap_or_else(|e| e.into_inner());
        action()
    }

    fn nodetool(&self, node: usize, args: &[&str]) -> Result<Output, ControlError> {
        self.cluster().nodetool(node, args).map_err(ControlError::new)
    }

    fn beside(&self, index: usize) -> Result<Arc<dyn ClusterControl>, ControlError> {
        Ok(Arc::new(LocalControl::new(LocalCluster::new(beside_options(&self.base(), index).map_err(ControlError::new)?))))
    }

    fn aim(&self, cluster: &mut casslab_core::config::ClusterConfig) {
        // the same login as this one's (casslab's clusters share their superuser)
        let _ = self.cluster().aim_client(cluster);
    }

    fn down(&self, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        self.cluster().down(false, log).map_err(ControlError::new)
    }

    fn definition(&self) -> ServerSpec {
        let c = self.cluster();
        let o = c.options();
        let java_home = SavedCluster::load(&o.home).ok().and_then(|s| s.java).and_then(|j| Some(j.parent()?.parent()?.to_path_buf()));
        let server = o.full_server();
        ServerSpec { java_home: java_home.or(server.java_home.clone()), ..server }
    }

    fn check(&self, spec: &ServerSpec, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        check(&options_for(&self.base(), spec), log).map(|_| ()).map_err(ControlError::new)
    }

    fn add_node(&self, dc: Option<&str>, log: &mut dyn FnMut(&str)) -> Result<usize, ControlError> {
        let (next, index) = self.cluster().add_node(dc, log).map_err(ControlError::new)?;
        self.reshaped(next);
        Ok(index)
    }

    fn decommission(&self, node: usize, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        let next = self.cluster().decommission(node, log).map_err(ControlError::new)?;
        self.reshaped(next);
        Ok(())
    }

    fn replace(&self, node: usize, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        self.cluster().replace(node, log).map_err(ControlError::new)
    }

    fn apply(&self, spec: &ServerSpec, restart: bool, log: &mut dyn FnMut(&str)) -> Result<Applied, ControlError> {
        let base = self.base();
        let wanted = options_for(&base, spec);
        let current = self.cluster();
        if *current.options() == wanted && current.is_running() && !restart {
            return Ok(Applied::default());
        }
        if !restart && only_distances_differ(current.options(), &wanted) && current.is_running() {
            // the relay takes new distances as it runs: no node restarts
            let started = Instant::now();
            let next = LocalCluster::new(wanted);
            next.up(log).map_err(ControlError::new)?;
            log(&format!("distances now: {}", next.network_status().ok().flatten().map(|n| n.distances).unwrap_or_default()));
            self.keep_up_definition(&next)?;
            *self.cluster.write().unwrap_or_else(|e| e.into_inner()) = next;
            return Ok(Applied { restarted: false, wiped: false, took_ms: started.elapsed().as_millis() as u64 });
        }
        check(&wanted, log).map_err(ControlError::new)?;
        let started = Instant::now();
        let wipe = storage_differs(current.options(), &wanted);
        log(&format!("restarting the local cluster for the server definition{}", if wipe { " (its storage changes: the data is wiped)" } else { "" }));
        current.down(wipe, log).map_err(ControlError::new)?;
        let next = LocalCluster::new(wanted);
        next.up(log).map_err(ControlError::new)?;
        self.keep_up_definition(&next)?;
        *self.cluster.write().unwrap_or_else(|e| e.into_inner()) = next;
        Ok(Applied { restarted: true, wiped: wipe, took_ms: started.elapsed().as_millis() as u64 })
    }

    fn network_controlled(&self) -> Result<(), String> {
        let cluster = self.cluster();
        if cluster.options().relayed() {
            Ok(())
        } else {
            Err(crate::LocalError::NotRelayed { home: cluster.options().home.clone() }.to_string())
        }
    }

    fn change_network(&self, change: &NetworkChange, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        self.cluster().change_network(change, log).map_err(ControlError::new)
    }
}

impl LocalControl {
    /// Keeps the server `local up` gave as the base of later definitions (a wipe removed it).
    fn keep_up_definition(&self, next: &LocalCluster) -> Result<(), ControlError> {
        let base = self.base();
        let home = &base.home;
        let mut saved = SavedCluster::load(home).map_err(ControlError::new)?;
        saved.up = (base != *next.options()).then(|| up_definition(&base));
        saved.save(home).map_err(ControlError::new)
    }
}

/// Whether `a` and `b` run the same relayed cluster but for its distances (which the relay
/// takes without a restart).
/// The cluster beside `base` for variant `index` (1 and up) of an experiment measured at the
/// same time: the same definition under `HOME/beside-INDEX`, its nodes on `base`'s addresses
/// with the third octet raised by `index` (127.0.0.1 → 127.0.1.1), so that neither its
/// addresses nor its JMX ports meet `base`'s.
pub fn beside_options(base: &LocalOptions, index: usize) -> Result<LocalOptions, crate::LocalError> {
    let [a, b, c, d] = base.base_address.octets();
    let third = usize::from(c) + index;
    if index == 0 || third > 255 {
        return Err(crate::LocalError::InvalidOptions {
            reason: format!(
                "no addresses for cluster {index} beside {} (its third octet would be {third}): give the main cluster a lower --base-address",
                base.base_address
            ),
        });
    }
    Ok(LocalOptions {
        home: base.home.join(format!("beside-{index}")),
        base_address: std::net::Ipv4Addr::new(a, b, third as u8, d),
        left: Vec::new(),
        ..base.clone()
    })
}

fn only_distances_differ(a: &LocalOptions, b: &LocalOptions) -> bool {
    let without = |o: &LocalOptions| {
        let mut o = o.clone();
        o.server.rtt.clear();
        o.server.client_rtt.clear();
        o.server.relay = Some(true);
        o
    };
    a.relayed() && b.relayed() && a != b && without(a) == without(b)
}

impl LocalCluster {
    /// Aims `cfg` at this cluster: its contact points; its CA file unless `tls_ca_file` was
    /// given; the default superuser unless `user` was; its first data center as the local one
    /// (as a production client pins its own) unless `dc` was. Returns the default password
    /// when the default user was filled in.
    pub fn aim_client(&self, cfg: &mut ClusterConfig) -> Option<String> {
        cfg.hosts = self.contact_points();
        cfg.local = true;
        cfg.local_home = Some(self.options().home.clone());
        if let Some(ca) = self.tls_ca_file() {
            cfg.tls = true;
            cfg.tls_ca_file.get_or_insert(ca);
        }
        if cfg.dc.is_none() {
            if let Some((first, _)) = self.options().dcs().first() {
                cfg.dc = Some(first.clone());
            }
        }
        if self.options().auth && cfg.user.is_none() {
            cfg.user = Some(DEFAULT_SUPERUSER.to_string());
            return Some(DEFAULT_SUPERUSER_PASSWORD.to_string());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalOptions;
    use casslab_core::cluster::Gc;

    #[test]
    fn a_client_is_aimed_at_every_node_with_the_cluster_security_and_first_dc() {
        let home = std::env::temp_dir().join("casslab-aim-client");
        let cluster = LocalCluster::new(LocalOptions {
            server: ServerSpec { nodes: Some(3), dcs: Some(vec![("east".into(), 2), ("west".into(), 1)]), ..ServerSpec::default() },
            base_address: "127.0.0.21".parse().unwrap(),
            auth: true,
            tls: true,
            home: home.clone(),
            ..LocalOptions::default()
        });
        let mut cfg = ClusterConfig::default();
        let password = cluster.aim_client(&mut cfg);
        assert_eq!(cfg.hosts, ["127.0.0.21:9042", "127.0.0.22:9042", "127.0.0.23:9042"]);
        assert!(cfg.local && cfg.tls && cfg.tls_ca_file.is_some());
        assert_eq!((cfg.user.as_deref(), password.as_deref()), (Some(DEFAULT_SUPERUSER), Some(DEFAULT_SUPERUSER_PASSWORD)));
        assert_eq!(cfg.dc.as_deref(), Some("east"));
        // what the user gave is kept
        let mut mine = ClusterConfig { user: Some("bench".into()), dc: Some("west".into()), ..ClusterConfig::default() };
        assert_eq!(cluster.aim_client(&mut mine), None);
        assert_eq!((mine.user.as_deref(), mine.dc.as_deref()), (Some("bench"), Some("west")));
        // the seam sees the same nodes the cluster selects, and its definition
        let control = LocalControl::new(cluster);
        assert_eq!(control.select("west").unwrap(), vec![2]);
        assert!(control.select("node9").unwrap_err().to_string().contains("node9"));
        let def = control.definition();
        assert_eq!((def.nodes, def.gc, def.dcs.as_ref().map(|d| d.len())), (Some(3), Some(Gc::G1), Some(2)));
    }

    #[test]
    fn node_actions_through_the_control_never_overlap() {
        let home = std::env::temp_dir().join("casslab-one-at-a-time");
        let control = LocalControl::new(LocalCluster::new(LocalOptions { home, ..LocalOptions::default() }));
        let (inside, most) = (std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    control.one_at_a_time(&mut || {
                        let now = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                        most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    })
                });
            }
        });
        assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 1, "one action at a time");
    }
}
