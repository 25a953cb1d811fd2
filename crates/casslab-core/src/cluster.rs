//! The seam for clusters casslab controls: stopping, killing and starting nodes or whole data
//! centers, running nodetool on a node, and knowing each node's process (for the GC log and
//! the CPU and memory readings of the server view). `casslab-local` implements it for the
//! nodes it starts on this machine. A cluster casslab only talks to (`--hosts`) has none: the
//! run session then refuses, before the run, the events that need one, and leaves out what
//! only a controlled cluster can give (GC pauses, on-disk figures, request tracing).
//!
//! Every method blocks (node starts take tens of seconds): call them on a blocking thread.

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
}

/// A failed control action, with the controller's own error underneath.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ControlError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

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

    /// Runs Cassandra's nodetool against one node.
    fn nodetool(&self, node: usize, args: &[&str]) -> Result<Output, ControlError>;
}
