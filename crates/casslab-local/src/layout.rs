//! Where each node lives: the arithmetic from `LocalOptions` to one `NodeLayout` per
//! node (name, loopback address, ports, directories and file paths). Pure and
//! I/O-free; it validates options but never touches the file system.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use crate::local_error::LocalError;
use crate::LocalOptions;

/// JMX port of a node whose address ends in `.1`; others add their last octet minus one.
pub const BASE_JMX_PORT: u16 = 7199;

/// Smallest heap a node is allowed; Cassandra 5.0 does not start reliably below it.
pub const MIN_HEAP_MB: u32 = 512;

/// The data center of a cluster started without `--dcs` (Cassandra's own default name).
pub const DEFAULT_DC: &str = "datacenter1";

/// Heap per node when none is asked for, in MiB: 1 GiB for one node, 768 MiB for up to
/// three (so three fit a 2-core / 24 GiB machine beside the client), 640 MiB beyond.
pub fn default_heap_mb(nodes: usize) -> u32 {
    match nodes {
        0 | 1 => 1024,
        2 | 3 => 768,
        _ => 640,
    }
}

/// Parses `dc1:3,dc2:2` into data centers and node counts.
pub fn parse_dcs(text: &str) -> Result<Vec<(String, usize)>, LocalError> {
    let bad = |reason: String| LocalError::InvalidOptions { reason };
    let mut dcs: Vec<(String, usize)> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, count) = part.split_once(':').ok_or_else(|| bad(format!("data center \"{part}\": write NAME:NODES, e.g. dc1:3,dc2:2")))?;
        let name = name.trim();
        let count: usize = count
            .trim()
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| bad(format!("data center \"{part}\": the node count must be a whole number of at least 1")))?;
        // the one rule of data center names, as a server definition's `dcs:` has it
        casslab_core::network::dc_name(name).map_err(|e| bad(e.to_string()))?;
        if dcs.iter().any(|(n, _)| n == name) {
            return Err(bad(format!("data center \"{name}\" is listed twice")));
        }
        dcs.push((name.to_string(), count));
    }
    if dcs.is_empty() {
        return Err(bad("--dcs needs at least one NAME:NODES, e.g. dc1:3".into()));
    }
    Ok(dcs)
}

/// Everything that identifies one node on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLayout {
    /// 0-based position in the cluster.
    pub index: usize,
    /// `node1`, `node2`, ... (1-based, as ccm names them).
    pub name: String,
    pub address: Ipv4Addr,
    pub cql_port: u16,
    pub storage_port: u16,
    pub jmx_port: u16,
    /// `home/node<index+1>`.
    pub dir: PathBuf,
    /// Data center and rack (`cassandra-rackdc.properties` of a multi-node cluster).
    pub dc: String,
    pub rack: String,
    /// Where the other nodes reach it (its `broadcast_address`): its own address, or on a
    /// relayed cluster the relay's address in front of it ([`relay_peer_address`]).
    pub peer_address: Ipv4Addr,
    /// Where clients reach it (its `broadcast_rpc_address`): its own address, or on a relayed
    /// cluster the relay's ([`relay_client_address`]).
    pub client_address: Ipv4Addr,
    /// The node left the cluster (decommissioned): its directory stays, it never starts again.
    pub left: bool,
}

impl NodeLayout {
    pub fn conf_dir(&self) -> PathBuf {
        self.dir.join("conf")
    }
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }
    pub fn commitlog_dir(&self) -> PathBuf {
        self.dir.join("commitlog")
    }
    pub fn saved_caches_dir(&self) -> PathBuf {
        self.dir.join("saved_caches")
    }
    pub fn hints_dir(&self) -> PathBuf {
        self.dir.join("hints")
    }
    pub fn cdc_raw_dir(&self) -> PathBuf {
        self.dir.join("cdc_raw")
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }
    /// All directories casslab creates for the node, in creation order.
    pub fn all_dirs(&self) -> Vec<PathBuf> {
        vec![self.conf_dir(), self.data_dir(), self.commitlog_dir(), self.saved_caches_dir(), self.hints_dir(), self.cdc_raw_dir(), self.logs_dir()]
    }
    pub fn yaml_path(&self) -> PathBuf {
        self.conf_dir().join("cassandra.yaml")
    }
    pub fn logback_path(&self) -> PathBuf {
        self.conf_dir().join("logback.xml")
    }
    pub fn rackdc_path(&self) -> PathBuf {
        self.conf_dir().join("cassandra-rackdc.properties")
    }
    pub fn pid_path(&self) -> PathBuf {
        self.dir.join("pid")
    }
    /// Written when casslab creates the node directory; `down --wipe` deletes only marked dirs.
    pub fn marker_path(&self) -> PathBuf {
        self.dir.join(".casslab-node")
    }
    pub fn system_log(&self) -> PathBuf {
        self.logs_dir().join("system.log")
    }
    pub fn stdout_log(&self) -> PathBuf {
        self.logs_dir().join("stdout.log")
    }
    pub fn gc_log(&self) -> PathBuf {
        self.logs_dir().join("gc.log")
    }
    /// `address:cql_port`, the form drivers take: where clients reach the node.
    pub fn contact_point(&self) -> String {
        format!("{}:{}", self.client_address, self.cql_port)
    }

    /// Whether its traffic goes through casslab's relay.
    pub fn is_relayed(&self) -> bool {
        self.peer_address != self.address
    }

    /// Whether `address` names it: its own address, or one the relay gives it.
    pub fn is_named_by(&self, address: Ipv4Addr) -> bool {
        address == self.address || address == self.peer_address || address == self.client_address
    }
}

/// The second octet of a relay's internode addresses: node `127.x.y.z`'s peers reach it at
/// `127.(x+64).y.z`.
pub const RELAY_PEER_OCTET_OFFSET: u8 = 64;
/// The second octet of a relay's client addresses: clients reach node `127.x.y.z` at
/// `127.(x+128).y.z`.
pub const RELAY_CLIENT_OCTET_OFFSET: u8 = 128;

/// Where the other nodes reach the node at `address` on a relayed cluster.
pub fn relay_peer_address(address: Ipv4Addr) -> Ipv4Addr {
    let [a, b, c, d] = address.octets();
    Ipv4Addr::new(a, b.wrapping_add(RELAY_PEER_OCTET_OFFSET), c, d)
}

/// Where clients reach the node at `address` on a relayed cluster.
pub fn relay_client_address(address: Ipv4Addr) -> Ipv4Addr {
    let [a, b, c, d] = address.octets();
    Ipv4Addr::new(a, b.wrapping_add(RELAY_CLIENT_OCTET_OFFSET), c, d)
}

/// Address of node `index`: `base` plus `index` in the last octet, staying within 1..=254.
pub fn node_address(base: Ipv4Addr, index: usize) -> Result<Ipv4Addr, LocalError> {
    let [a, b, c, d] = base.octets();
    let last = usize::from(d) + index;
    if d == 0 || last > 254 {
        return Err(LocalError::InvalidOptions {
            reason: format!("node {index} from base address {base} would need last octet {last}; the last octet must stay within 1..=254"),
        });
    }
    Ok(Ipv4Addr::new(a, b, c, last as u8))
}

/// JMX port of a node: 7199 + (last octet - 1) + 256 × (third octet mod 100), so 127.0.0.1 ->
/// 7199, 127.0.0.51 -> 7249 and 127.0.1.1 -> 7455. JMX listens on 127.0.0.1 whatever the node's
/// address, hence one port per node: clusters on 127.0.0.x and 127.0.1.x do not meet (below the
/// ephemeral ports; third octets 100 apart share their ports).
pub fn jmx_port_for(address: Ipv4Addr) -> u16 {
    let [_, _, third, last] = address.octets();
    BASE_JMX_PORT + u16::from(third % 100) * 256 + u16::from(last).saturating_sub(1)
}

/// Checks options that would otherwise fail late (in the JVM or the yaml).
pub fn validate(opts: &LocalOptions) -> Result<(), LocalError> {
    let bad = |reason: String| Err(LocalError::InvalidOptions { reason });
    if opts.nodes() == 0 {
        return bad("a cluster needs at least 1 node".into());
    }
    let in_dcs: usize = opts.dcs().iter().map(|(_, n)| n).sum();
    if !opts.dcs().is_empty() && in_dcs != opts.nodes() {
        return bad(format!("the data centers have {in_dcs} node(s) together but the cluster has {}", opts.nodes()));
    }
    if !opts.base_address.is_loopback() {
        return bad(format!("base address {} is not a loopback address (127.x.y.z); local nodes only listen on loopback", opts.base_address));
    }
    node_address(opts.base_address, opts.nodes() - 1)?;
    if opts.heap_mb() < MIN_HEAP_MB {
        return bad(format!("heap of {} MiB is too small; use at least {MIN_HEAP_MB} MiB", opts.heap_mb()));
    }
    if opts.cql_port == 0 || opts.storage_port == 0 || opts.cql_port == opts.storage_port {
        return bad(format!("CQL port {} and storage port {} must be non-zero and different", opts.cql_port, opts.storage_port));
    }
    if opts.cluster_name.is_empty() || opts.cluster_name.chars().any(|c| c.is_control()) {
        return bad("the cluster name must be non-empty and on one line".into());
    }
    if opts.version().is_empty() || !opts.version().chars().all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c)) {
        return bad(format!("version {:?} is not a Cassandra version like 5.0.6", opts.version()));
    }
    check_network(opts)?;
    if opts.home.to_string_lossy().contains(':') {
        // `-Xlog:gc*:file=<path>` separates its fields with ':'.
        return bad(format!("home {} must not contain ':'", opts.home.display()));
    }
    Ok(())
}

/// Checks the distances of a relayed cluster: data centers it has, and addresses the relay can
/// take beside the nodes'.
fn check_network(opts: &LocalOptions) -> Result<(), LocalError> {
    let bad = |reason: String| Err(LocalError::InvalidOptions { reason });
    let server = &opts.server;
    if server.relay == Some(false) && server.relayed() {
        return bad("distances (rtt, client_rtt) need casslab's relay: leave out `relay: false`".into());
    }
    let dcs: Vec<&str> = if opts.dcs().is_empty() { vec![DEFAULT_DC] } else { opts.dcs().iter().map(|(n, _)| n.as_str()).collect() };
    let named = server.rtt.keys().flat_map(|p| [p.first(), p.second()]).chain(server.client_rtt.keys().map(String::as_str));
    for dc in named {
        if !dcs.contains(&dc) {
            return bad(format!(
                "a distance names data center {dc}, which the cluster does not have (it has {}; `casslab local up --dcs dc1:N,dc2:N` starts several)",
                dcs.join(", ")
            ));
        }
    }
    if server.relayed() && opts.base_address.octets()[1] >= RELAY_PEER_OCTET_OFFSET {
        return bad(format!(
            "base address {}: a relayed cluster's nodes need addresses 127.0-63.y.z (the relay takes 127.64-127.y.z and 127.128-191.y.z in front of them)",
            opts.base_address
        ));
    }
    Ok(())
}

/// One layout per node, after validating `opts`.
pub fn layouts(opts: &LocalOptions) -> Result<Vec<NodeLayout>, LocalError> {
    validate(opts)?;
    let dc_of: Vec<String> = if opts.dcs().is_empty() {
        vec![DEFAULT_DC.to_string(); opts.nodes()]
    } else {
        opts.dcs().iter().flat_map(|(name, n)| std::iter::repeat_n(name.clone(), *n)).collect()
    };
    (0..opts.nodes())
        .map(|index| {
            let address = node_address(opts.base_address, index)?;
            let relayed = opts.server.relayed();
            Ok(NodeLayout {
                peer_address: if relayed { relay_peer_address(address) } else { address },
                client_address: if relayed { relay_client_address(address) } else { address },
                dc: dc_of[index].clone(),
                rack: "rack1".to_string(),
                left: opts.left.contains(&index),
                index,
                name: node_name(index),
                address,
                cql_port: opts.cql_port,
                storage_port: opts.storage_port,
                jmx_port: jmx_port_for(address),
                dir: node_dir(&opts.home, index),
            })
        })
        .collect()
}

/// `node1` for index 0.
pub fn node_name(index: usize) -> String {
    format!("node{}", index + 1)
}

/// `home/node1` for index 0.
pub fn node_dir(home: &Path, index: usize) -> PathBuf {
    home.join(node_name(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(base: [u8; 4], nodes: usize) -> LocalOptions {
        LocalOptions {
            home: PathBuf::from("/tmp/h"),
            server: casslab_core::cluster::ServerSpec { nodes: Some(nodes), ..LocalOptions::default().server },
            base_address: Ipv4Addr::from(base),
            ..LocalOptions::default()
        }
    }

    #[test]
    fn address_arithmetic() {
        let base = Ipv4Addr::new(127, 0, 0, 1);
        assert_eq!(node_address(base, 0).unwrap(), base);
        assert_eq!(node_address(base, 2).unwrap(), Ipv4Addr::new(127, 0, 0, 3));
        assert!(node_address(Ipv4Addr::new(127, 0, 0, 254), 1).is_err());
        assert!(node_address(Ipv4Addr::new(127, 0, 0, 0), 0).is_err());
    }

    #[test]
    fn jmx_port_derivation() {
        assert_eq!(jmx_port_for(Ipv4Addr::new(127, 0, 0, 1)), 7199);
        assert_eq!(jmx_port_for(Ipv4Addr::new(127, 0, 0, 2)), 7200);
        assert_eq!(jmx_port_for(Ipv4Addr::new(127, 0, 0, 51)), 7249);
        assert_eq!(jmx_port_for(Ipv4Addr::new(127, 0, 0, 61)), 7259);
        // another third octet, another port: two clusters with the same last octets do not meet
        assert_eq!(jmx_port_for(Ipv4Addr::new(127, 0, 1, 1)), 7455);
        assert_eq!(jmx_port_for(Ipv4Addr::new(127, 0, 99, 254)), 7199 + 99 * 256 + 253);
    }

    #[test]
    fn layouts_number_and_place_nodes() {
        let l = layouts(&opts([127, 0, 0, 10], 3)).unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[2].name, "node3");
        assert_eq!(l[2].address, Ipv4Addr::new(127, 0, 0, 12));
        assert_eq!(l[2].jmx_port, 7210);
        assert_eq!(l[2].dir, PathBuf::from("/tmp/h/node3"));
        assert_eq!(l[0].contact_point(), "127.0.0.10:9042");
        assert_eq!(l[0].yaml_path(), PathBuf::from("/tmp/h/node1/conf/cassandra.yaml"));
    }

    #[test]
    fn data_centers_follow_the_addresses() {
        let mut o = opts([127, 0, 0, 71], 3);
        o.server.dcs = Some(parse_dcs("dc1:2, dc2:1").unwrap());
        let l = layouts(&o).unwrap();
        let dcs: Vec<&str> = l.iter().map(|n| n.dc.as_str()).collect();
        assert_eq!(dcs, ["dc1", "dc1", "dc2"]);
        assert_eq!(l[2].address, Ipv4Addr::new(127, 0, 0, 73));
        assert_eq!(layouts(&opts([127, 0, 0, 1], 2)).unwrap()[1].dc, DEFAULT_DC);
        o.server.nodes = Some(4);
        assert!(layouts(&o).is_err(), "3 nodes in the data centers, 4 in the cluster");
        for bad in ["dc1", "dc1:0", "dc1:x", ":2", "dc1:1,dc1:2", "", "d c:1"] {
            assert!(parse_dcs(bad).is_err(), "{bad:?}");
        }
        assert_eq!((default_heap_mb(1), default_heap_mb(3), default_heap_mb(5)), (1024, 768, 640));
    }

    #[test]
    fn a_relayed_cluster_puts_the_relay_in_front_of_every_node() {
        use casslab_core::network::{DcPair, Rtt};
        let mut o = opts([127, 0, 0, 121], 2);
        o.server.dcs = Some(parse_dcs("dc1:1,dc2:1").unwrap());
        let plain = layouts(&o).unwrap();
        assert_eq!((plain[1].peer_address, plain[1].client_address), (plain[1].address, plain[1].address));
        assert!(!plain[1].is_relayed());
        assert_eq!(plain[1].contact_point(), "127.0.0.122:9042");
        o.server.rtt = [(DcPair::new("dc1", "dc2").unwrap(), Rtt::from_ms(8))].into();
        let relayed = layouts(&o).unwrap();
        assert_eq!(relayed[1].address, Ipv4Addr::new(127, 0, 0, 122));
        assert_eq!(relayed[1].peer_address, Ipv4Addr::new(127, 64, 0, 122));
        assert_eq!(relayed[1].client_address, Ipv4Addr::new(127, 128, 0, 122));
        assert_eq!(relayed[1].contact_point(), "127.128.0.122:9042");
        assert!(relayed[1].is_relayed() && relayed[1].is_named_by(Ipv4Addr::new(127, 64, 0, 122)) && !relayed[1].is_named_by(Ipv4Addr::new(127, 64, 0, 121)));
        // what the distances name must exist, and the relay needs room for its addresses
        o.server.client_rtt = [("dc3".to_string(), Rtt::from_ms(1))].into();
        assert!(validate(&o).unwrap_err().to_string().contains("dc3, which the cluster does not have (it has dc1, dc2;"));
        o.server.client_rtt.clear();
        o.base_address = Ipv4Addr::new(127, 70, 0, 1);
        assert!(validate(&o).unwrap_err().to_string().contains("127.0-63.y.z"));
        o.base_address = Ipv4Addr::new(127, 0, 0, 121);
        o.server.relay = Some(false);
        assert!(validate(&o).unwrap_err().to_string().contains("relay: false"));
        let mut one = opts([127, 0, 0, 86], 1);
        one.server.relay = Some(true);
        assert_eq!(layouts(&one).unwrap()[0].peer_address, Ipv4Addr::new(127, 64, 0, 86), "a lone node can be relayed too");
        one.server.rtt = [(DcPair::new(DEFAULT_DC, DEFAULT_DC).unwrap(), Rtt::from_ms(1))].into();
        validate(&one).unwrap();
    }

    #[test]
    fn validation_rejects_bad_options() {
        assert!(layouts(&opts([127, 0, 0, 1], 0)).is_err());
        assert!(layouts(&opts([10, 0, 0, 1], 1)).is_err());
        assert!(layouts(&opts([127, 0, 0, 250], 6)).is_err());
        let mut o = opts([127, 0, 0, 1], 1);
        o.server.heap_mb = Some(100);
        assert!(validate(&o).is_err());
        let mut o = opts([127, 0, 0, 1], 1);
        o.storage_port = o.cql_port;
        assert!(validate(&o).is_err());
        let mut o = opts([127, 0, 0, 1], 1);
        o.cluster_name = "a\nb".into();
        assert!(validate(&o).is_err());
        assert!(validate(&opts([127, 0, 0, 1], 1)).is_ok());
    }
}
