//! The one error type of `casslab-local`: every way launching, probing or stopping
//! a local Cassandra node can fail, each rendered as a sentence that says what to do.
//! It owns no logic beyond that rendering; log tails are collected by `process`.

use std::net::Ipv4Addr;
use std::path::PathBuf;

/// Everything that can go wrong in this crate. Display texts end with a remedy.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// A program casslab needs (`java`, `mvn`) is not installed or not on `PATH`.
    #[error("`{tool}` was not found on PATH: {hint}")]
    MissingTool { tool: String, hint: String },

    /// `java` runs but is too old for the Cassandra version asked for.
    #[error("Cassandra {cassandra_version} needs Java {needed_major}+, but `java` is version {found}: install a JDK 17 (apt-get install openjdk-17-jre-headless) or set JAVA_HOME to one")]
    JavaTooOld { found: String, needed_major: u32, cassandra_version: String },

    /// The Java asked for does not run the Cassandra version asked for.
    #[error("Cassandra {cassandra_version} runs on Java {wanted}, but {} is Java {found}: give --java-home a Java {wanted} (or leave it out and casslab finds or fetches one)", .java.display())]
    JavaUnsuitable { found: String, java: std::path::PathBuf, cassandra_version: String, wanted: String },

    /// No Java on this machine runs the Cassandra version asked for, and none can be fetched.
    #[error("Cassandra {cassandra_version} runs on Java {wanted}, and none is here (found: {found}): install one, or give --java-home DIR")]
    NoSuitableJava { cassandra_version: String, wanted: String, found: String },

    /// A server definition casslab can tell is wrong before anything stops.
    #[error("server definition: {reason}")]
    BadDefinition { reason: String },

    /// Maven Central has no `cassandra-all` of this version.
    #[error("Cassandra {version} is not on Maven Central (org.apache.cassandra:cassandra-all:{version}); give a released version such as 5.0.9 or 4.1.10")]
    NoSuchVersion { version: String },

    /// Maven failed to resolve or copy the Cassandra jars.
    #[error(
        "Maven could not fetch the Cassandra jars ({status}); check that Maven Central is reachable and the version exists. Last Maven output:\n{output_tail}"
    )]
    Maven { status: String, output_tail: String },

    /// The node agents (Jolokia, async-profiler) could not be fetched or found.
    #[error("the node agents (Jolokia, async-profiler) could not be had: {reason}")]
    Agents { reason: String },

    /// The jars of this version are not in the cache and the operation does not fetch them.
    #[error("the Cassandra {version} jars are not in {dir}; run `casslab local up` first (it fetches them once)")]
    JarsMissing { version: String, dir: PathBuf },

    /// An address:port a node needs is already taken by another process.
    #[error("{node}: {what} port {address}:{port} is already in use by another process (another Cassandra? see `casslab local status`); stop it, or choose other addresses with --base-address")]
    PortBusy { node: String, what: String, address: Ipv4Addr, port: u16 },

    /// The address and port a local redis-server needs are taken by another process.
    #[error("{address}:{port} is already in use by another process (the OS package's redis-server service?); point casslab at that server with --target redis://{address}:{port}, or start casslab's on another port: `casslab local redis up --port 6380`")]
    RedisPortBusy { address: Ipv4Addr, port: u16 },

    /// The loopback address of a node cannot be bound on this machine.
    #[error(
        "{node}: cannot bind {address} ({reason}); on Linux all of 127.0.0.0/8 is loopback, on macOS add an alias first (sudo ifconfig lo0 alias {address})"
    )]
    AddressUnavailable { node: String, address: Ipv4Addr, reason: String },

    /// `keytool` ran but failed to make the TLS keystore or export its certificate.
    #[error("keytool could not {step} ({status}); check that the JDK's keytool works, or start without --tls. keytool said:\n{output_tail}")]
    Keytool { step: String, status: String, output_tail: String },

    /// A directory given as a full query log that is none (no Chronicle Queue files, or ones
    /// its reader cannot read).
    #[error("{dir} is not a full query log: {reason}; give the directory of `nodetool enablefullquerylog --path DIR` (it holds *.cq4 files), or a capture as JSON lines or CSV")]
    NotAQueryLog { dir: String, reason: String },

    /// The options cannot describe a valid local cluster.
    #[error("invalid local cluster options: {reason}")]
    InvalidOptions { reason: String },

    /// Nodes under this home are running with different options than the ones asked for.
    #[error("the cluster in {home} is running with different options ({difference}); run `casslab local down` first, or use another --home")]
    OptionsMismatch { home: PathBuf, difference: String },

    /// The data under the home belongs to a cluster of another shape than the one asked for.
    #[error("the data under {home} belongs to a cluster of {holds}, not the {asked} asked for: a node started without the others comes up remembering peers that are down, and every quorum fails. Start the cluster it belongs to with `{start}`, or delete that data first with `{wipe}`")]
    DataOfAnotherCluster { home: PathBuf, holds: String, asked: String, start: String, wipe: String },

    /// A node restarted with its data remembers peers this cluster does not start.
    #[error("{node} came up remembering nodes this cluster does not start: {peers} (its data belongs to a bigger cluster whose other nodes' data is gone), so casslab stopped what it started; delete that data with `{wipe}` and start afresh")]
    RingRemembersPeers { node: String, peers: String, wipe: String },

    /// A node index that the cluster does not have.
    #[error("there is no node {index} (the cluster has {nodes} node(s), numbered from 0)")]
    NoSuchNode { index: usize, nodes: usize },

    /// The node's JVM exited while casslab waited for it to answer CQL.
    #[error("{node} exited during start-up; last log lines:\n{log_tail}")]
    NodeDied { node: String, log_tail: String },

    /// The node did not answer CQL in time; casslab stopped it.
    #[error("{node} did not answer CQL within {secs} s, so casslab stopped it; the machine may be busy (another build or benchmark?): retry, raise the start timeout, or start fewer nodes. Last log lines:\n{log_tail}")]
    StartTimeout { node: String, secs: u64, log_tail: String },

    /// A node selector (`node2`, an address, a data center) that matches no node.
    #[error("no node or data center \"{selector}\" in this cluster; use a node name, address or data center: {known}")]
    NoSuchTarget { selector: String, known: String },

    /// A topology change the cluster cannot make as it is (what to do instead is in `reason`).
    #[error("{reason}")]
    Topology { reason: String },

    /// The nodes answer CQL but do not all see each other as up and normal.
    #[error("the nodes did not all see each other as up (UN) within {secs} s; last `nodetool status` of {node}:\n{status}")]
    RingTimeout { node: String, secs: u64, status: String },

    /// A node's JVM ignored SIGTERM and SIGKILL.
    #[error("{node} (pid {pid}) did not stop after SIGTERM and SIGKILL; stop it by hand with `kill -9 {pid}`")]
    StopFailed { node: String, pid: u32 },

    /// A directory that `down --wipe` was asked to delete was not created by casslab.
    #[error("{dir} was not created by casslab (no marker file), so it was not deleted; remove it by hand if you are sure")]
    NotOurs { dir: PathBuf },

    /// casslab's relay of a cluster could not start, or refused what it was asked.
    #[error("the relay of the cluster in {}: {reason}; `casslab local down` then `casslab local up` starts it afresh{}", .home.display(), if .log_tail.is_empty() { String::new() } else { format!(". Its last log lines:\n{}", .log_tail) })]
    Relay { home: PathBuf, reason: String, log_tail: String },

    /// A relayed cluster's relay is not running.
    #[error("the cluster in {} relays its network, but its relay is not running: `casslab local up` starts it again", .home.display())]
    RelayDown { home: PathBuf },

    /// A network change on a cluster whose network casslab does not relay.
    #[error("the local cluster in {} runs without casslab's relay, so its network cannot change: start it with one (`casslab local down`, then `casslab local up --relay` with its shape, or with distances: --rtt dc1:dc2=8ms, --client-rtt dc2=8ms), or give the workload `cluster: {{ relay: true }}`", .home.display())]
    NotRelayed { home: PathBuf },

    /// `home/cluster.json` is missing or unreadable.
    #[error("no usable cluster description at {path} ({reason}); start a cluster with `casslab local up`")]
    NoSavedCluster { path: PathBuf, reason: String },

    /// Any file-system or process-spawn failure, with what casslab was doing (the I/O error is
    /// part of the message, not a source of its own, so that it is shown once).
    #[error("{context}: {error}")]
    Io { context: String, error: std::io::Error },
}

impl LocalError {
    /// Wraps an `io::Error` with a sentence saying what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        LocalError::Io { context: context.into(), error: source }
    }
}

/// Shorthand for attaching context to `io::Result`s inside the crate.
pub(crate) trait IoContext<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T, LocalError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T, LocalError> {
        self.map_err(|source| LocalError::Io { context: context(), error: source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_busy_names_address_and_remedy() {
        let e = LocalError::PortBusy { node: "node1".into(), what: "CQL".into(), address: Ipv4Addr::new(127, 0, 0, 62), port: 9042 };
        let text = e.to_string();
        assert!(text.contains("127.0.0.62:9042"), "{text}");
        assert!(text.contains("casslab local status"), "{text}");
        assert!(text.contains("--base-address"), "{text}");
    }

    #[test]
    fn io_context_shows_the_io_error_once() {
        let r: std::io::Result<()> = Err(std::io::Error::other("boom"));
        let e = r.context(|| "writing x".to_string()).unwrap_err();
        assert_eq!(e.to_string(), "writing x: boom");
        // the I/O error is in the message, so it is no source as well: a chain printer shows it once
        assert!(std::error::Error::source(&e).is_none());
        assert!(matches!(e, LocalError::Io { ref error, .. } if error.to_string() == "boom"));
    }
}
