//! Why an event of a run cannot be carried out on the cluster the run is aimed at, found before
//! anything starts: what `timeline` checks itself (node actions, the nodes named) and what it
//! asks `network_events` and `changes` to check (network faults, changes of rate).

/// An event the cluster a run is aimed at cannot carry out.
#[derive(Debug, thiserror::Error)]
pub enum EventCheckError {
    #[error("event '{spec}': `{action}` acts on casslab's local cluster, but this run is aimed at --hosts; for your own cluster run a command at that time with '{at_s}s exec CMD' (e.g. an ssh that stops a service)")]
    NeedsLocalCluster { spec: String, action: &'static str, at_s: u64 },
    #[error("event '{spec}': {error}")]
    UnknownNodes { spec: String, error: crate::cluster::ControlError },
    #[error("event '{spec}': `{action}` changes the network of casslab's local cluster, but this run is aimed at --hosts; on your own cluster change it yourself at that time with '{at_s}s exec CMD', e.g. '{at_s}s exec ssh db3 sudo iptables -A INPUT -s 10.0.2.0/24 -j DROP' for a partition (-D to heal) or '{at_s}s exec ssh db3 sudo tc qdisc add dev eth0 root netem delay 50ms' for a slow link")]
    NetworkNeedsLocalCluster { spec: String, action: &'static str, at_s: u64 },
    #[error("event '{spec}': {reason}")]
    NoNetworkControl { spec: String, reason: String },
    #[error("event '{spec}': a change of rate needs a run under a rate: give --rate (a fixed rate or a schedule, e.g. --rate 500) or the workload's run.rate")]
    NeedsRate { spec: String },
}
