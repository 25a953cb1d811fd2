//! The seam for clusters casslab controls: stopping, killing and starting nodes or whole data
//! centers, running nodetool on a node, and knowing each node's process (for the GC log and
//! the CPU and memory readings of the server view). `casslab-local` implements it for the
//! nodes it starts on this machine. A cluster casslab only talks to (`--hosts`) has none: the
//! run session then refuses, before the run, the events that need one, and leaves out what
//! only a controlled cluster can give (GC pauses, on-disk figures, request tracing).
//!
//! A controlled cluster applies a server definition ([`ServerSpec`], defined in
//! `server_spec.rs`) by restarting (distances alone: without a restart). A controlled cluster whose
//! network casslab relays also changes it on request (`change_network`: a run's partitions,
//! slow or lossy links, heals).
//!
//! Topology changes (a node added, decommissioned or replaced under load) are part of the
//! seam too; a control that cannot make them says so.
//!
//! Every method blocks (node starts take tens of seconds): call them on a blocking thread.

pub use crate::server_spec::{Gc, ServerSpec};
use std::path::PathBuf;
use std::process::Output;

/// A node of a controlled cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlledNode {
    /// Its name among the cluster's nodes (`node2`).
    pub name: String,
    /// Its address, as the server view names nodes.
    pub address: String,
    pub dc: String,
    /// The pid of its process while it runs.
    pub pid: Option<u32>,
    pub running: bool,
    /// The JVM's GC log, when it writes one.
    pub gc_log: Option<PathBuf>,
    /// Where its Jolokia agent serves the node's JMX metrics over HTTP
    /// (`http://ADDRESS:PORT/jolokia/`), when it runs one: Cassandra's latency histograms in
    /// microseconds.
    pub jolokia_url: Option<String>,
    /// The async-profiler library that records it: the one it loaded at start, else one on
    /// this machine that a recording loads into it.
    pub profiler_lib: Option<PathBuf>,
}

/// A failed control action: the controller's own error, shown as it is (its message once; the
/// controller's error itself is reached through `.0`).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ControlError(pub Box<dyn std::error::Error + Send + Sync>);

impl ControlError {
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> ControlError {
        ControlError(Box::new(e))
    }
}

/// A cluster whose nodes casslab can act on.
pub trait ClusterControl: Send + Sync {
    /// The nodes a selector names: a node (`node2`), an address (`127.0.0.2`), a data center
    /// (`dc2`: every node of it) or `all`, as indexes into [`ClusterControl::nodes`]. The error
    /// says which nodes and data centers exist.
    fn select(&self, selector: &str) -> Result<Vec<usize>, ControlError>;

    /// Every node, in index order, with its process as it is now.
    fn nodes(&self) -> Result<Vec<ControlledNode>, ControlError>;

    /// Stops nodes: gracefully (the server drains first) or by killing them. `log` gets a line
    /// per step.
    fn stop(&self, nodes: &[usize], kill: bool, log: &mut dyn FnMut(&str)) -> Result<(), ControlError>;

    /// Starts stopped nodes with their data and waits until they answer and the others see them.
    fn start(&self, nodes: &[usize], log: &mut dyn FnMut(&str)) -> Result<(), ControlError>;

    /// Calls `action` (one stop, kill or start of nodes, with what is recorded about it) once,
    /// when no other action run through this method on this cluster is under way: one that
    /// comes due while another still runs (a start while a graceful stop drains) waits for it,
    /// and starts when it can. The implementor holds the lock; callers hold none of their own.
    fn one_at_a_time(&self, action: &mut dyn FnMut());

    /// Runs Cassandra's nodetool against one node.
    fn nodetool(&self, node: usize, args: &[&str]) -> Result<Output, ControlError>;

    /// The server as it runs now, every field filled in.
    fn definition(&self) -> ServerSpec;

    /// Checks what can be checked of `spec` (over the cluster's starting definition) before
    /// anything stops: the version exists, a suitable Java, the heap fits, the settings read.
    fn check(&self, spec: &ServerSpec, log: &mut dyn FnMut(&str)) -> Result<(), ControlError>;

    /// Runs the cluster as `spec` says (over its starting definition): nothing when it runs so
    /// already and `restart` is false, else stops every node, wipes the data when the storage
    /// changes, and starts them again.
    fn apply(&self, spec: &ServerSpec, restart: bool, log: &mut dyn FnMut(&str)) -> Result<Applied, ControlError>;

    /// Whether the network between the nodes and the client can change (a run's partitions,
    /// slow links, ...): `Err` says why not and what to do. None can unless the implementor
    /// says so.
    fn network_controlled(&self) -> Result<(), String> {
        Err("this cluster's network is not casslab's to change".to_string())
    }

    /// Changes the network between the nodes and the client; `log` gets a line per step.
    fn change_network(&self, change: &crate::network::NetworkChange, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        let _ = (change, log);
        Err(ControlError::new(std::io::Error::other(self.network_controlled().err().unwrap_or_default())))
    }

    /// Bootstraps a new node into data center `dc` (the first when `None`) while the others
    /// run, and waits until it is up and normal in the ring; the cluster keeps it from then on.
    /// Returns its index among [`ClusterControl::nodes`].
    fn add_node(&self, dc: Option<&str>, log: &mut dyn FnMut(&str)) -> Result<usize, ControlError> {
        let _ = (dc, log);
        Err(ControlError::new(Unsupported("add a node")))
    }

    /// Decommissions a running node (it streams its data to the others and leaves the ring),
    /// then stops it; the cluster no longer counts it.
    fn decommission(&self, node: usize, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        let _ = (node, log);
        Err(ControlError::new(Unsupported("decommission a node")))
    }

    /// Starts a fresh node in the place of a dead one (stopped or killed before), which takes
    /// its tokens with `replace_address_first_boot` and streams their data from the others;
    /// waits until it is up and normal in the ring.
    fn replace(&self, node: usize, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        let _ = (node, log);
        Err(ControlError::new(Unsupported("replace a node")))
    }

    /// Another cluster of the same kind beside this one, for variant `index` (1 and up) of an
    /// experiment whose variants are measured at the same time: this cluster's definition under
    /// a home and on addresses of its own, not started until [`ClusterControl::apply`] runs it
    /// as the variant's server. None can unless the implementor says so.
    fn beside(&self, index: usize) -> Result<std::sync::Arc<dyn ClusterControl>, ControlError> {
        let _ = index;
        Err(ControlError::new(Unsupported("start a cluster beside itself")))
    }

    /// Aims a client's connection settings at this cluster (its contact points, TLS, where its
    /// nodes live). Leaves them as they are unless the implementor says so.
    fn aim(&self, cluster: &mut crate::config::ClusterConfig) {
        let _ = cluster;
    }

    /// Stops every node, keeping its data (a cluster started [`ClusterControl::beside`] another
    /// for an experiment, once it is done).
    fn down(&self, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
        let _ = log;
        Err(ControlError::new(Unsupported("stop every node")))
    }
}

/// What a cluster control cannot do.
#[derive(Debug, thiserror::Error)]
#[error("this cluster cannot {0}")]
pub struct Unsupported(pub &'static str);

/// What applying a server definition did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applied {
    /// The nodes were restarted with the new definition.
    pub restarted: bool,
    /// Their data was wiped (the storage changed: version, build, settings or nodes).
    pub wiped: bool,
    pub took_ms: u64,
}
