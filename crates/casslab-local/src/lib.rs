//! `casslab-local` launches and manages real Apache Cassandra nodes on this machine:
//! one JVM per node, each on its own loopback address (127.0.0.1, .2, ...), run from
//! the `cassandra-all` jars that Maven fetches once into a cache. It owns the options
//! (`LocalOptions`), the node layout on disk, the start/stop/status life cycle
//! (`LocalCluster`), nodetool calls, and optionally password authentication and client
//! TLS (a keystore made with the JDK's keytool), and the cluster-control seam of casslab-core's
//! run session (`control`). It does not talk CQL beyond a liveness probe,
//! parse command lines, print, or exit: callers get progress lines through a callback
//! and typed `LocalError`s. Linux only (it reads `/proc`). Beside the Cassandra nodes it
//! starts a local `redis-server` (module `redis`) for workloads of Redis commands, with the
//! same rules: its own home, loopback only, and it stops only what it started. A cluster with
//! distances between its data centers (or asked to) runs casslab's relay (`relay`) in front of
//! every node: a process of its own that delays, cuts or slows what crosses between nodes and
//! from the client, as the distances and a run's network events say.

mod agents;
mod belongs;
mod config_files;
mod control;
mod cql_probe;
mod definition;
pub mod fql;
mod handshake;
mod jars;
mod java;
mod jvm;
mod layout;
mod local_cluster;
mod local_error;
mod local_network;
pub mod local_redis;
mod node_process;
pub mod relay;
mod relay_pipe;
mod relay_process;
mod relay_rules;
mod ring;
mod state;
mod status_view;
mod tls;
mod topology;

use casslab_core::cluster::{Gc, ServerSpec};
use std::net::Ipv4Addr;
use std::path::PathBuf;

pub use agents::{cached_agents, ensure_agents, Agents, JOLOKIA_PORT};
pub use belongs::wipe_command;
pub use control::LocalControl;
pub use cql_probe::cql_answers;
pub use definition::{check as check_options, options_for};
pub use jars::{cached_jars, ensure_jars, jar_cache_dir};
pub use java::{find_java, majors_for, JavaRuntime};
pub use jvm::MODULE_FLAGS;
pub use layout::{default_heap_mb, jmx_port_for, node_address, parse_dcs, NodeLayout, DEFAULT_DC};
pub use local_cluster::{normalize_home, LocalCluster, NodeStatus, UpReport};
pub use local_error::LocalError;
pub use local_network::NetworkStatus;
pub use ring::{parse_ring, RingEntry};
pub use state::{SavedCluster, SavedNode};
pub use status_view::StatusView;
pub use tls::{DEFAULT_SUPERUSER, DEFAULT_SUPERUSER_PASSWORD};

/// The Cassandra version casslab runs unless told otherwise; the one place it is pinned.
pub const DEFAULT_CASSANDRA_VERSION: &str = "5.0.9";

/// How long `up` waits for a node to answer CQL before stopping it.
pub const DEFAULT_START_TIMEOUT_S: u64 = 180;

/// The heap per node (MiB) when nothing says otherwise.
pub const DEFAULT_HEAP_MB: u32 = 1024;

/// Plain configuration of a local cluster (no CLI types).
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    /// Root of the node directories (`home/node1`, ...) and of `home/cluster.json`.
    pub home: PathBuf,
    /// The server the nodes run: version or custom build, Java home, heap (`-Xms` = `-Xmx`),
    /// collector, JVM options after casslab's own, cassandra.yaml settings over casslab's,
    /// and the nodes — node `i` (0-based) gets `base_address + i` in the last octet — with
    /// their data centers in address order (`dc1:3,dc2:2`, their counts adding up to the
    /// nodes; none: one data center, `datacenter1`). What it leaves out is casslab's default:
    /// read the defaulted fields through [`LocalOptions::version`], [`LocalOptions::heap_mb`],
    /// [`LocalOptions::gc`], [`LocalOptions::nodes`] and [`LocalOptions::dcs`].
    pub server: ServerSpec,
    /// Address of the first node; must be loopback.
    pub base_address: Ipv4Addr,
    /// CQL (native transport) port, the same on every node.
    pub cql_port: u16,
    /// Internode (storage) port, the same on every node.
    pub storage_port: u16,
    pub cluster_name: String,
    /// How long `up` waits for each node to answer CQL, in seconds.
    pub start_timeout_s: u64,
    /// Require a login: `PasswordAuthenticator` and `CassandraAuthorizer`, with Cassandra's
    /// default superuser (`cassandra`/`cassandra`).
    pub auth: bool,
    /// Accept only TLS client connections, with a self-signed certificate casslab makes for
    /// the cluster's addresses (see `LocalCluster::tls_ca_file`).
    pub tls: bool,
    /// Nodes (0-based indices) that left the cluster — decommissioned during a run — and are
    /// never started again; their addresses stay theirs.
    pub left: Vec<usize>,
}

impl Default for LocalOptions {
    fn default() -> Self {
        let mut o = LocalOptions {
            home: default_home(),
            server: ServerSpec::default(),
            base_address: Ipv4Addr::new(127, 0, 0, 1),
            cql_port: 9042,
            storage_port: 7000,
            cluster_name: "casslab".to_string(),
            start_timeout_s: DEFAULT_START_TIMEOUT_S,
            auth: false,
            tls: false,
            left: Vec::new(),
        };
        o.server = o.full_server();
        o
    }
}

impl LocalOptions {
    /// The Cassandra version (Maven version of `cassandra-all`).
    pub fn version(&self) -> &str {
        self.server.version.as_deref().unwrap_or(DEFAULT_CASSANDRA_VERSION)
    }

    /// The JVM heap of each node, in MiB.
    pub fn heap_mb(&self) -> u32 {
        self.server.heap_mb.unwrap_or(DEFAULT_HEAP_MB)
    }

    /// The nodes' garbage collector.
    pub fn gc(&self) -> Gc {
        self.server.gc.unwrap_or_default()
    }

    /// The number of nodes (without a count: the data centers' nodes, else 1).
    pub fn nodes(&self) -> usize {
        self.server.nodes.unwrap_or_else(|| self.server.dcs.as_ref().map_or(1, |d| d.iter().map(|(_, n)| n).sum()))
    }

    /// The data centers and their node counts; empty: one data center.
    pub fn dcs(&self) -> &[(String, usize)] {
        self.server.dcs.as_deref().unwrap_or(&[])
    }

    /// [`LocalOptions::server`] with every field the nodes need filled in (casslab's defaults
    /// where it is silent; no data centers as none): the one place the defaults apply, and
    /// the form clusters keep their options in, so two options that run the same server are
    /// equal.
    pub fn full_server(&self) -> ServerSpec {
        ServerSpec {
            version: Some(self.version().to_string()),
            heap_mb: Some(self.heap_mb()),
            gc: Some(self.gc()),
            nodes: Some(self.nodes()),
            dcs: (!self.dcs().is_empty()).then(|| self.dcs().to_vec()),
            relay: self.relayed().then_some(true),
            ..self.server.clone()
        }
    }

    /// Whether every connection of the cluster goes through casslab's relay (asked for, or
    /// implied by a distance).
    pub fn relayed(&self) -> bool {
        self.server.relayed() && self.server.relay != Some(false)
    }

    /// Several nodes or data centers: the nodes gossip with a
    /// `GossipingPropertyFileSnitch` and join one ring. A lone node keeps the `SimpleSnitch`.
    pub fn is_multi_node(&self) -> bool {
        self.nodes() > 1 || !self.dcs().is_empty()
    }
}

/// `$CASSLAB_HOME` if set, else the user's data dir + `casslab` (`~/.local/share/casslab`).
pub fn default_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CASSLAB_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    dirs::data_dir().unwrap_or_else(std::env::temp_dir).join("casslab")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_ones() {
        let o = LocalOptions::default();
        assert_eq!(o.version(), "5.0.9");
        assert_eq!((o.nodes(), o.heap_mb(), o.cql_port, o.storage_port), (1, 1024, 9042, 7000));
        assert_eq!(o.gc(), Gc::G1);
        assert_eq!(o.server, o.full_server(), "kept filled in");
        assert_eq!(o.base_address, Ipv4Addr::LOCALHOST);
        assert_eq!(o.cluster_name, "casslab");
        assert!(!o.auth && !o.tls);
        assert!(o.home.ends_with("casslab") || std::env::var_os("CASSLAB_HOME").is_some());
    }
}
