//! The seam for clusters casslab controls: stopping, killing and starting nodes or whole data
//! centers, running nodetool on a node, and knowing each node's process (for the GC log and
//! the CPU and memory readings of the server view). `casslab-local` implements it for the
//! nodes it starts on this machine. A cluster casslab only talks to (`--hosts`) has none: the
//! run session then refuses, before the run, the events that need one, and leaves out what
//! only a controlled cluster can give (GC pauses, on-disk figures, request tracing).
//!
//! It also owns the server definition ([`ServerSpec`]: version or custom build, Java, heap,
//! garbage collector, JVM options, cassandra.yaml settings, nodes) that workloads, experiment
//! variants and runs carry, and that a controlled cluster applies by restarting.
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
}

/// The garbage collector a node's JVM runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gc {
    #[default]
    G1,
    Zgc,
    Shenandoah,
    Parallel,
}

impl Gc {
    pub const ALL: [Gc; 4] = [Gc::G1, Gc::Zgc, Gc::Shenandoah, Gc::Parallel];

    pub fn as_str(self) -> &'static str {
        match self {
            Gc::G1 => "g1",
            Gc::Zgc => "zgc",
            Gc::Shenandoah => "shenandoah",
            Gc::Parallel => "parallel",
        }
    }

    pub fn parse(s: &str) -> Option<Gc> {
        let s = s.trim().to_ascii_lowercase();
        Gc::ALL.into_iter().find(|g| g.as_str() == s || (s == "z" && *g == Gc::Zgc) || (s == "g1gc" && *g == Gc::G1))
    }
}

/// What server to run: a workload's, an experiment's or a variant's `cluster:`, and what a
/// run records about the server it ran against. Every field is optional: what a definition
/// leaves out is what the cluster was started with.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Apache Cassandra version (Maven Central's `cassandra-all`), e.g. `5.0.9`, `4.1.10`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A custom build instead of a released version: a directory of jars, or an unpacked
    /// Cassandra distribution (its `lib/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<PathBuf>,
    /// The Java to run it with (else one suited to the version is found or fetched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java_home: Option<PathBuf>,
    /// Heap per node, in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_mb: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc: Option<Gc>,
    /// More JVM options, after casslab's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jvm_options: Vec<String>,
    /// cassandra.yaml settings, over casslab's (any value YAML can hold).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, serde_json::Value>,
    /// Nodes in one data center, or data centers and their nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcs: Option<Vec<(String, usize)>>,
}

impl ServerSpec {
    /// `self` with `over`'s fields where it sets them (settings merged key by key).
    pub fn overlaid(&self, over: &ServerSpec) -> ServerSpec {
        let mut s = self.clone();
        s.version = over.version.clone().or(s.version);
        s.build = over.build.clone().or(s.build);
        s.java_home = over.java_home.clone().or(s.java_home);
        s.heap_mb = over.heap_mb.or(s.heap_mb);
        s.gc = over.gc.or(s.gc);
        if !over.jvm_options.is_empty() {
            s.jvm_options = over.jvm_options.clone();
        }
        s.settings.extend(over.settings.iter().map(|(k, v)| (k.clone(), v.clone())));
        s.nodes = over.nodes.or(s.nodes);
        s.dcs = over.dcs.clone().or(s.dcs);
        s
    }

    pub fn is_empty(&self) -> bool {
        *self == ServerSpec::default()
    }
}

/// What applying a server definition did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applied {
    /// The nodes were restarted with the new definition.
    pub restarted: bool,
    /// Their data was wiped (the storage changed: version, build, settings or nodes).
    pub wiped: bool,
    pub took_ms: u64,
}
