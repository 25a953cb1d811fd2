//! What the relay does to each link of a relayed cluster: the distances (`Topology`: each
//! node's data center, the round-trip times between data centers and from the client) and the
//! faults in force (`Faults`: partitions, isolated nodes, slow and lossy links, the client cut
//! off, until a heal) give every pair of endpoints — two nodes, or the client and a node — a
//! [`Link`]: cut or not, its delay each way and its jitter, the share of chunks it loses. Pure
//! arithmetic; moving the bytes is `relay_pipe`'s.

use casslab_core::network::{DcPair, NetworkChange, Rtt};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The penalty of a chunk the relay "loses": Linux's smallest retransmission timeout, after
/// which TCP sends it again (plus the link's round trip); what follows it waits behind it.
pub const LOSS_PENALTY_US: u64 = 200_000;

/// One end of a connection through the relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// A node, by index.
    Node(usize),
    /// The load generator (every connection to a node's client address).
    Client,
    /// A dialer the relay could not tell (an internode connection whose greeting it could not
    /// read): it gets no distance, and only faults of the node it dials.
    Unknown,
}

/// The distances of a relayed cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Each node's data center, by index.
    pub dcs: Vec<String>,
    #[serde(default)]
    pub rtt: BTreeMap<DcPair, Rtt>,
    #[serde(default)]
    pub client_rtt: BTreeMap<String, Rtt>,
}

impl Topology {
    /// The round trip between two endpoints as the distances define it (0 when not given).
    fn base(&self, a: Endpoint, b: Endpoint) -> Rtt {
        let dc = |i: usize| self.dcs.get(i).map(String::as_str).unwrap_or("");
        match (a, b) {
            (Endpoint::Node(x), Endpoint::Node(y)) => self.rtt.iter().find(|(p, _)| p.joins(dc(x), dc(y))).map(|(_, r)| *r).unwrap_or_default(),
            (Endpoint::Client, Endpoint::Node(y)) | (Endpoint::Node(y), Endpoint::Client) => self.client_rtt.get(dc(y)).copied().unwrap_or_default(),
            _ => Rtt::default(),
        }
    }

    /// `dc2` when `nodes` are exactly the nodes of a data center, else `node1,node3`.
    pub fn name_nodes(&self, nodes: &[usize]) -> String {
        let mut dcs: Vec<&String> = self.dcs.iter().collect();
        dcs.dedup();
        for dc in dcs {
            let of_dc: Vec<usize> = (0..self.dcs.len()).filter(|&i| self.dcs[i] == *dc).collect();
            if of_dc == nodes {
                return dc.clone();
            }
        }
        nodes.iter().map(|i| format!("node{}", i + 1)).collect::<Vec<_>>().join(",")
    }

    /// The distances in words: `dc1:dc2 8ms; client: dc2 8ms` (`none` when all are 0 ms).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.rtt.is_empty() {
            parts.push(self.rtt.iter().map(|(p, r)| format!("{p} {r}")).collect::<Vec<_>>().join(", "));
        }
        if !self.client_rtt.is_empty() {
            parts.push(format!("client: {}", self.client_rtt.iter().map(|(dc, r)| format!("{dc} {r}")).collect::<Vec<_>>().join(", ")));
        }
        if parts.is_empty() {
            "none (every link 0 ms)".to_string()
        } else {
            parts.join("; ")
        }
    }
}

/// A link as the relay treats it now.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Link {
    /// Nothing crosses (connections stay open; what waits crosses after the heal).
    pub blocked: bool,
    /// Delay each way, in microseconds.
    pub delay_us: u64,
    /// Each chunk's delay varies by up to this much either way, in microseconds.
    pub jitter_us: u64,
    /// The share of chunks lost (0 to 1), each held back by [`LOSS_PENALTY_US`] and the round trip.
    pub loss: f64,
}

/// One fault in force, with how people name it and since when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    pub change: NetworkChange,
    pub label: String,
    pub since_unix_ms: u64,
}

/// The faults in force, in the order they came; a heal ends them all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Faults {
    pub list: Vec<Fault>,
}

/// `change` in words, nodes named as `topology` names them: `partition dc1|dc2`.
pub fn label(change: &NetworkChange, topology: &Topology) -> String {
    let names = |nodes: &[usize]| topology.name_nodes(nodes);
    match change {
        NetworkChange::Partition { sides } => format!("partition {}", sides.iter().map(|s| names(s)).collect::<Vec<_>>().join("|")),
        NetworkChange::Isolate { nodes } => format!("isolate {}", names(nodes)),
        NetworkChange::Slow { nodes, rtt } => format!("slow {} +{rtt}", names(nodes)),
        NetworkChange::Lossy { nodes, loss_pct } => format!("lossy {} {loss_pct}%", names(nodes)),
        NetworkChange::ClientLoses { nodes } => format!("client-loses {}", names(nodes)),
        NetworkChange::Heal => "heal".to_string(),
    }
}

impl Faults {
    /// Takes `change` into force (a heal ends every fault).
    pub fn apply(&mut self, change: &NetworkChange, topology: &Topology, now_unix_ms: u64) {
        match change {
            NetworkChange::Heal => self.list.clear(),
            other => self.list.push(Fault { change: other.clone(), label: label(other, topology), since_unix_ms: now_unix_ms }),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Whether exactly one of `a`, `b` is among `nodes` (the client never is).
fn crosses(nodes: &[usize], a: Endpoint, b: Endpoint) -> bool {
    let inside = |e: Endpoint| matches!(e, Endpoint::Node(i) if nodes.contains(&i));
    inside(a) != inside(b)
}

/// The link between `a` and `b` under `topology` and `faults`.
pub fn link(topology: &Topology, faults: &Faults, a: Endpoint, b: Endpoint) -> Link {
    let base = topology.base(a, b);
    let mut l = Link { blocked: false, delay_us: base.one_way_us(), jitter_us: base.jitter_us / 2, loss: 0.0 };
    for f in &faults.list {
        match &f.change {
            NetworkChange::Partition { sides } => {
                let side = |e: Endpoint| match e {
                    Endpoint::Node(i) => sides.iter().position(|s| s.contains(&i)),
                    _ => None,
                };
                if let (Some(x), Some(y)) = (side(a), side(b)) {
                    l.blocked |= x != y;
                }
            }
            NetworkChange::Isolate { nodes } => l.blocked |= crosses(nodes, a, b),
            NetworkChange::Slow { nodes, rtt } if crosses(nodes, a, b) => {
                l.delay_us += rtt.one_way_us();
                l.jitter_us += rtt.jitter_us / 2;
            }
            NetworkChange::Lossy { nodes, loss_pct } if crosses(nodes, a, b) => l.loss = 1.0 - (1.0 - l.loss) * (1.0 - loss_pct / 100.0),
            NetworkChange::ClientLoses { nodes } => {
                let cut = |x: Endpoint, y: Endpoint| x == Endpoint::Client && matches!(y, Endpoint::Node(i) if nodes.contains(&i));
                l.blocked |= cut(a, b) || cut(b, a);
            }
            _ => {}
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use Endpoint::{Client, Node, Unknown};

    /// dc1: node1, node2; dc2: node3, node4; 8 ms between them (±2 ms), 1 ms inside dc1; the
    /// client 4 ms from dc2.
    fn topology() -> Topology {
        Topology {
            dcs: ["dc1", "dc1", "dc2", "dc2"].map(String::from).to_vec(),
            rtt: [(DcPair::new("dc2", "dc1").unwrap(), Rtt::parse("8ms±2ms").unwrap()), (DcPair::new("dc1", "dc1").unwrap(), Rtt::from_ms(1))].into(),
            client_rtt: [("dc2".to_string(), Rtt::from_ms(4))].into(),
        }
    }

    fn with(changes: &[NetworkChange]) -> Faults {
        let mut f = Faults::default();
        for c in changes {
            f.apply(c, &topology(), 0);
        }
        f
    }

    #[test]
    fn distances_give_half_the_round_trip_each_way() {
        let (t, none) = (topology(), Faults::default());
        assert_eq!(link(&t, &none, Node(0), Node(2)), Link { blocked: false, delay_us: 4_000, jitter_us: 1_000, loss: 0.0 });
        assert_eq!(link(&t, &none, Node(3), Node(1)).delay_us, 4_000, "either order");
        assert_eq!(link(&t, &none, Node(0), Node(1)).delay_us, 500, "inside dc1");
        assert_eq!(link(&t, &none, Node(2), Node(3)).delay_us, 0, "inside dc2: not given");
        assert_eq!(link(&t, &none, Client, Node(3)).delay_us, 2_000);
        assert_eq!(link(&t, &none, Client, Node(0)).delay_us, 0);
        assert_eq!(link(&t, &none, Unknown, Node(0)), Link::default());
        assert_eq!(t.describe(), "dc1:dc1 1ms, dc1:dc2 8ms±2ms; client: dc2 4ms");
        assert_eq!(Topology::default().describe(), "none (every link 0 ms)");
    }

    #[test]
    fn a_partition_cuts_across_its_sides_only() {
        let t = topology();
        let f = with(&[NetworkChange::Partition { sides: vec![vec![0, 1], vec![2]] }]);
        assert!(link(&t, &f, Node(0), Node(2)).blocked && link(&t, &f, Node(2), Node(1)).blocked);
        assert!(!link(&t, &f, Node(0), Node(1)).blocked, "same side");
        assert!(!link(&t, &f, Node(3), Node(0)).blocked && !link(&t, &f, Node(3), Node(2)).blocked, "node4 is on no side");
        assert!(!link(&t, &f, Client, Node(2)).blocked, "the client is not partitioned");
        assert_eq!(f.list[0].label, "partition dc1|node3");
        assert!(with(&[NetworkChange::Partition { sides: vec![vec![0], vec![1], vec![2]] }]).list[0].label == "partition node1|node2|node3");
    }

    #[test]
    fn isolation_slow_and_lossy_links_act_between_the_nodes_and_the_rest() {
        let t = topology();
        let f = with(&[NetworkChange::Isolate { nodes: vec![2, 3] }]);
        assert!(link(&t, &f, Node(0), Node(2)).blocked && link(&t, &f, Client, Node(3)).blocked && link(&t, &f, Unknown, Node(3)).blocked);
        assert!(!link(&t, &f, Node(2), Node(3)).blocked && !link(&t, &f, Client, Node(0)).blocked);
        let slow = NetworkChange::Slow { nodes: vec![1], rtt: Rtt::parse("50ms±10ms").unwrap() };
        let f = with(&[slow.clone(), slow]);
        assert_eq!(link(&t, &f, Node(1), Node(2)), Link { blocked: false, delay_us: 4_000 + 50_000, jitter_us: 1_000 + 10_000, loss: 0.0 });
        assert_eq!(link(&t, &f, Client, Node(1)).delay_us, 50_000, "twice slowed: the delays add up");
        assert_eq!(link(&t, &f, Node(0), Node(2)).delay_us, 4_000);
        assert_eq!(f.list[0].label, "slow node2 +50ms±10ms");
        let f = with(&[NetworkChange::Lossy { nodes: vec![2, 3], loss_pct: 10.0 }, NetworkChange::Lossy { nodes: vec![2], loss_pct: 10.0 }]);
        assert!((link(&t, &f, Node(2), Node(0)).loss - 0.19).abs() < 1e-12);
        assert!((link(&t, &f, Node(3), Client).loss - 0.1).abs() < 1e-12);
        assert!((link(&t, &f, Node(2), Node(3)).loss - 0.1).abs() < 1e-12, "node3 to node4 crosses the second fault only");
        assert_eq!(f.list[0].label, "lossy dc2 10%");
    }

    #[test]
    fn the_client_loses_only_its_own_links_and_a_heal_ends_everything() {
        let t = topology();
        let mut f = with(&[NetworkChange::ClientLoses { nodes: vec![0, 1] }, NetworkChange::Isolate { nodes: vec![3] }]);
        assert!(link(&t, &f, Client, Node(1)).blocked && link(&t, &f, Node(0), Client).blocked);
        assert!(!link(&t, &f, Client, Node(2)).blocked && !link(&t, &f, Node(0), Node(2)).blocked);
        assert_eq!(f.list.iter().map(|x| x.label.as_str()).collect::<Vec<_>>(), ["client-loses dc1", "isolate node4"]);
        f.apply(&NetworkChange::Heal, &t, 0);
        assert!(f.is_empty());
        assert_eq!(link(&t, &f, Client, Node(1)), Link::default());
    }
}
