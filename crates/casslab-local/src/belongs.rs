//! Which cluster the data under a home belongs to, so that `up` starts that cluster or
//! refuses: the shape saved in `cluster.json` by the `up` that made the data (node count, data
//! centers, base address, cluster name) and the node directories that hold data. A node
//! started alone on the data of a bigger cluster comes up remembering peers that are down —
//! one healthy-looking node on which every quorum fails. Also the ring check made after a
//! node restarted with its data: peers its ring knows that this cluster does not start.
//! It decides and describes; starting and stopping are `cluster`'s.

use std::fs;
use std::net::Ipv4Addr;
use std::path::Path;

use crate::layout::{node_dir, NodeLayout};
use crate::local_error::LocalError;
use crate::ring::RingEntry;
use crate::state::SavedCluster;
use crate::LocalOptions;

/// Whether node `index`'s directory under `home` holds Cassandra data.
pub fn has_data(home: &Path, index: usize) -> bool {
    let dir = node_dir(home, index).join("data");
    fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
}

/// How many nodes' worth of data the home holds: the highest node number with data.
fn data_nodes(home: &Path) -> usize {
    let mut highest = 0;
    for index in 0.. {
        if !node_dir(home, index).is_dir() {
            break;
        }
        if has_data(home, index) {
            highest = index + 1;
        }
    }
    highest
}

/// A cluster's shape in words: `3 nodes from 127.0.0.81 (datacenter1)`.
fn shape(nodes: usize, dcs: &[(String, usize)], base: Ipv4Addr) -> String {
    let dcs = if dcs.is_empty() { crate::DEFAULT_DC.to_string() } else { dcs.iter().map(|(n, c)| format!("{n}:{c}")).collect::<Vec<_>>().join(",") };
    format!("{nodes} node{} from {base} ({dcs})", if nodes == 1 { "" } else { "s" })
}

/// ` --home HOME` unless `home` is the default one.
fn home_flag(home: &Path) -> String {
    if home == crate::default_home() {
        String::new()
    } else {
        format!(" --home {}", home.display())
    }
}

/// The `casslab local down --wipe` that deletes the data under `home`.
pub fn wipe_command(home: &Path) -> String {
    format!("casslab local down --wipe{}", home_flag(home))
}

/// The `casslab local up` that starts the cluster described by `saved` under `home`.
fn up_command(saved: &LocalOptions, home: &Path) -> String {
    let mut cmd = String::from("casslab local up");
    if saved.dcs().is_empty() {
        cmd += &format!(" --nodes {}", saved.nodes());
    } else {
        cmd += &format!(" --dcs {}", saved.dcs().iter().map(|(n, c)| format!("{n}:{c}")).collect::<Vec<_>>().join(","));
    }
    if saved.base_address != Ipv4Addr::LOCALHOST {
        cmd += &format!(" --base-address {}", saved.base_address);
    }
    cmd + &home_flag(home)
}

/// Errs unless the data under `opts.home` belongs to the cluster `opts` describes: the same
/// shape as the cluster saved with it, and no node directory with data beyond its nodes.
pub fn check_data_belongs(opts: &LocalOptions) -> Result<(), LocalError> {
    let home = &opts.home;
    let on_disk = data_nodes(home);
    if on_disk == 0 {
        return Ok(());
    }
    let saved = SavedCluster::load(home).ok().map(|s| s.to_options(home));
    let asked = shape(opts.nodes(), opts.dcs(), opts.base_address);
    let refuse =
        |holds: String, start: String| LocalError::DataOfAnotherCluster { home: home.clone(), holds, asked: asked.clone(), start, wipe: wipe_command(home) };
    if let Some(s) = &saved {
        let same = s.nodes() == opts.nodes() && s.dcs() == opts.dcs() && s.base_address == opts.base_address && s.cluster_name == opts.cluster_name;
        let nodes = s.nodes().max(on_disk);
        if !same || on_disk > opts.nodes() {
            let start = if on_disk > s.nodes() { format!("{} (with --nodes {on_disk})", up_command(s, home)) } else { up_command(s, home) };
            return Err(refuse(shape(nodes, if on_disk > s.nodes() { &[] } else { s.dcs() }, s.base_address), start));
        }
    } else if on_disk > opts.nodes() {
        return Err(refuse(format!("{on_disk} nodes (node1–node{on_disk})"), format!("casslab local up --nodes {on_disk}{}", home_flag(home))));
    }
    Ok(())
}

/// The ring entries of nodes this cluster does not have (peers a node's data remembers), by
/// address.
pub fn strangers<'a>(ring: &'a [RingEntry], nodes: &[NodeLayout]) -> Vec<&'a RingEntry> {
    let mut out: Vec<&RingEntry> = ring.iter().filter(|e| !nodes.iter().any(|n| n.address == e.address)).collect();
    out.sort_by_key(|e| e.address);
    out
}

/// `127.0.0.82 (DN), 127.0.0.83 (DN)`.
pub fn describe(entries: &[&RingEntry]) -> String {
    entries.iter().map(|e| format!("{} ({})", e.address, e.state)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::layouts;

    fn opts(home: &Path, nodes: usize, base: [u8; 4]) -> LocalOptions {
        let server = casslab_core::cluster::ServerSpec { nodes: Some(nodes), ..LocalOptions::default().server };
        LocalOptions { home: home.to_path_buf(), server, base_address: Ipv4Addr::from(base), ..LocalOptions::default() }
    }

    /// What `up` leaves on disk: cluster.json and a data directory per node.
    fn fake_cluster(o: &LocalOptions) {
        let nodes = layouts(o).unwrap();
        for n in &nodes {
            fs::create_dir_all(n.data_dir().join("system")).unwrap();
        }
        SavedCluster::new(o, &nodes).save(&o.home).unwrap();
    }

    #[test]
    fn a_fresh_home_or_the_same_cluster_may_start() {
        let tmp = tempfile::tempdir().unwrap();
        let three = opts(tmp.path(), 3, [127, 0, 0, 81]);
        check_data_belongs(&opts(tmp.path(), 1, [127, 0, 0, 1])).unwrap();
        fake_cluster(&three);
        check_data_belongs(&three).unwrap();
    }

    #[test]
    fn fewer_nodes_than_the_data_is_refused_with_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let three = opts(tmp.path(), 3, [127, 0, 0, 81]);
        fake_cluster(&three);
        let e = check_data_belongs(&opts(tmp.path(), 1, [127, 0, 0, 81])).unwrap_err().to_string();
        assert!(e.contains("belongs to a cluster of 3 nodes from 127.0.0.81 (datacenter1), not the 1 node from 127.0.0.81 (datacenter1) asked for"), "{e}");
        assert!(e.contains(&format!("`casslab local up --nodes 3 --base-address 127.0.0.81 --home {}`", tmp.path().display())), "{e}");
        assert!(e.contains(&format!("`casslab local down --wipe --home {}`", tmp.path().display())), "{e}");
        assert!(check_data_belongs(&opts(tmp.path(), 3, [127, 0, 0, 1])).is_err(), "another base address");
        // cluster.json rewritten for one node (as an older casslab left it) while node2 and node3 keep their data
        SavedCluster::new(&opts(tmp.path(), 1, [127, 0, 0, 81]), &layouts(&opts(tmp.path(), 1, [127, 0, 0, 81])).unwrap()).save(tmp.path()).unwrap();
        let e = check_data_belongs(&opts(tmp.path(), 1, [127, 0, 0, 81])).unwrap_err().to_string();
        assert!(e.contains("cluster of 3 nodes") && e.contains("(with --nodes 3)"), "{e}");
    }

    #[test]
    fn peers_the_ring_knows_that_the_cluster_lacks() {
        let tmp = tempfile::tempdir().unwrap();
        let nodes = layouts(&opts(tmp.path(), 1, [127, 0, 0, 81])).unwrap();
        let ring = crate::ring::parse_ring("Datacenter: datacenter1\nUN  127.0.0.81  1 MiB  16  100%  a  rack1\nDN  127.0.0.82  ?  16  100%  b  rack1\nDN  127.0.0.83  ?  16  100%  c  rack1\n");
        let s = strangers(&ring, &nodes);
        assert_eq!(describe(&s), "127.0.0.82 (DN), 127.0.0.83 (DN)");
    }
}
