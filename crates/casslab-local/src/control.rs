//! The local cluster as the run session sees it: the [`ClusterControl`] seam of casslab-core
//! (stop, kill and start nodes or data centers, nodetool, each node's process and GC log), and
//! aiming a client's [`ClusterConfig`] at the cluster (contact points, TLS, login, local data
//! center), as a production client is configured for its own cluster.

use crate::cluster::LocalCluster;
use crate::tls::{DEFAULT_SUPERUSER, DEFAULT_SUPERUSER_PASSWORD};
use casslab_core::cluster::{ClusterControl, ControlError, ControlledNode};
use casslab_core::config::ClusterConfig;
use std::process::Output;

impl ClusterControl for LocalCluster {
    fn select(&self, selector: &str) -> Result<Vec<usize>, ControlError> {
        LocalCluster::select(self, selector).map_err(ControlError::new)
    }

    fn nodes(&self) -> Result<Vec<ControlledNode>, ControlError> {
        let nodes = self.status().map_err(ControlError::new)?;
        Ok(nodes
            .into_iter()
            .map(|n| ControlledNode {
                name: n.name,
                address: n.address.to_string(),
                dc: n.dc,
                pid: n.pid,
                running: n.running,
                gc_log: Some(n.log_file.with_file_name("gc.log")),
            })
            .collect())
    }

    fn stop(&self, nodes: &[usize], kill: bool, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        self.stop_nodes(nodes, kill, log).map_err(ControlError::new)
    }

    fn start(&self, nodes: &[usize], log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        self.start_nodes(nodes, log).map(|_| ()).map_err(ControlError::new)
    }

    fn nodetool(&self, node: usize, args: &[&str]) -> Result<Output, ControlError> {
        LocalCluster::nodetool(self, node, args).map_err(ControlError::new)
    }
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
            if let Some((first, _)) = self.options().dcs.first() {
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

    #[test]
    fn a_client_is_aimed_at_every_node_with_the_cluster_security_and_first_dc() {
        let home = std::env::temp_dir().join("casslab-aim-client");
        let cluster = LocalCluster::new(LocalOptions {
            nodes: 3,
            dcs: vec![("east".into(), 2), ("west".into(), 1)],
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
        // the seam sees the same nodes the cluster selects
        let control: &dyn ClusterControl = &cluster;
        assert_eq!(control.select("west").unwrap(), vec![2]);
        assert!(control.select("node9").unwrap_err().to_string().contains("node9"));
    }
}
