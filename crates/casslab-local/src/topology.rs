//! Changing which nodes a running local cluster has, as an operator does under load: a node
//! added (its directories and config made as `up` makes them, then started with bootstrap on,
//! so it streams its share of the data before it serves), a node decommissioned (`nodetool
//! decommission` streams its data away; then its process stops and the cluster keeps it as
//! having left), and a dead node replaced (its data wiped, then started afresh at its address
//! with `replace_address_first_boot`, streaming the data it owned from the others). Each waits
//! until the ring is settled again and saves the cluster's new shape in `cluster.json`.

use crate::belongs::has_data;
use crate::config_files::Security;
use crate::jars::jars_for;
use crate::java::find_java;
use crate::layout::{layouts, NodeLayout};
use crate::local_cluster::{seed_of, Boot, LocalCluster};
use crate::local_error::{IoContext, LocalError};
use crate::node_process::find_node_pid;
use crate::ring::parse_ring;
use crate::state::SavedCluster;
use crate::LocalOptions;
use std::fs;
use std::time::{Duration, Instant};

/// Longest wait for a joining or replacing node to stream its data and answer CQL.
const JOIN_TIMEOUT_S: u64 = 3600;
/// Longest wait for another node to see a node as down (before it is replaced) or as joined.
const SEEN_WAIT: Duration = Duration::from_secs(180);
/// How many times a replacement starts when no seed answered its shadow round in time.
const REPLACE_ATTEMPTS: u32 = 3;

/// Whether a node's last log lines say it gave up because no seed answered its gossip.
fn seeds_unanswered(log_tail: &str) -> bool {
    log_tail.contains("Unable to contact any seeds") || log_tail.contains("Unable to gossip with any peers")
}

fn refuse(reason: impl Into<String>) -> LocalError {
    LocalError::Topology { reason: reason.into() }
}

impl LocalCluster {
    /// The cluster as it is now with room for a long streaming start.
    fn patient(&self, opts: LocalOptions) -> LocalCluster {
        LocalCluster::new(LocalOptions { start_timeout_s: opts.start_timeout_s.max(JOIN_TIMEOUT_S), ..opts })
    }

    /// Saves `opts` as the cluster's shape, keeping the Java and the `local up` definition the
    /// saved one has.
    fn save_shape(&self, opts: &LocalOptions) -> Result<(), LocalError> {
        let mut next = SavedCluster::new(opts, &layouts(opts)?);
        if let Ok(saved) = SavedCluster::load(&opts.home) {
            (next.java, next.java_version, next.up) = (saved.java, saved.java_version, saved.up);
        }
        next.save(&opts.home)
    }

    /// The Java and jars the nodes run with, and their security (no TLS: see `add_node`).
    fn runtime_for_start(&self, progress: &mut dyn FnMut(&str)) -> Result<(std::path::PathBuf, crate::java::JavaRuntime, Security), LocalError> {
        let (lib, built_version) = jars_for(self.options().version(), self.options().server.build.as_deref(), progress)?;
        let java = find_java(&built_version, self.options().server.java_home.as_deref(), progress)?;
        Ok((lib, java, Security { auth: self.options().auth, tls: None }))
    }

    /// Bootstraps a new node into data center `dc` (the first node's when `None`) while the
    /// others run; returns the cluster with it, and its index. The node takes the next address.
    pub fn add_node(&self, dc: Option<&str>, progress: &mut dyn FnMut(&str)) -> Result<(LocalCluster, usize), LocalError> {
        let opts = self.options();
        if !opts.is_multi_node() {
            return Err(refuse("a node joins a cluster of several nodes (a single node runs without gossiping data centers): start the cluster with `casslab local up --nodes 2` or more"));
        }
        if opts.tls {
            return Err(refuse("adding a node to a cluster with client TLS is not supported (its certificate names the nodes it was made for): start the cluster without --tls"));
        }
        let nodes = layouts(opts)?;
        let live: Vec<&NodeLayout> = nodes.iter().filter(|n| !n.left).collect();
        let dc = match dc {
            Some(d) if live.iter().any(|n| n.dc == d) => d.to_string(),
            Some(d) => {
                let mut known: Vec<&str> = live.iter().map(|n| n.dc.as_str()).collect();
                known.dedup();
                return Err(refuse(format!("no data center \"{d}\" to add a node to (data centers: {})", known.join(", "))));
            }
            None => live.first().map_or_else(|| crate::layout::DEFAULT_DC.to_string(), |n| n.dc.clone()),
        };
        let index = opts.nodes();
        let mut next = opts.clone();
        next.server.nodes = Some(index + 1);
        if !opts.dcs().is_empty() {
            let mut dcs = opts.dcs().to_vec();
            match dcs.last_mut() {
                Some((name, count)) if *name == dc => *count += 1,
                _ => dcs.push((dc.clone(), 1)),
            }
            next.server.dcs = Some(dcs);
        }
        let cluster = self.patient(next);
        let all = layouts(cluster.options())?;
        let node = &all[index];
        if has_data(&opts.home, index) {
            return Err(refuse(format!("{} has data already in {} (left by an earlier cluster): delete it first", node.name, node.dir.display())));
        }
        let (lib, java, security) = self.runtime_for_start(progress)?;
        self.save_shape(cluster.options())?;
        progress(&format!("{} ({}) joins {dc}: bootstrapping (streaming its share of the data) ...", node.name, node.address));
        let started = Instant::now();
        let joined = cluster
            .start_node(node, seed_of(&all, Some(index)), &lib, &java, &security, Boot::Join, progress)
            .and_then(|()| cluster.wait_until_seen(node, "UN", progress));
        if let Err(e) = joined {
            // back to the shape it had; the node's directory was made by this call
            let _ = cluster.stop_nodes(&[index], true, &mut |_| {});
            let _ = fs::remove_dir_all(&node.dir);
            self.save_shape(opts)?;
            return Err(e);
        }
        progress(&format!("{} joined after {:.1} s", node.name, started.elapsed().as_secs_f64()));
        Ok((cluster, index))
    }

    /// Decommissions running node `index` (its data streams to the others; it leaves the
    /// ring), stops it, and returns the cluster without it.
    pub fn decommission(&self, index: usize, progress: &mut dyn FnMut(&str)) -> Result<LocalCluster, LocalError> {
        let opts = self.options();
        let nodes = layouts(opts)?;
        let node = nodes.get(index).ok_or(LocalError::NoSuchNode { index, nodes: nodes.len() })?;
        if find_node_pid(node).is_none() {
            return Err(refuse(format!("{} is not running: decommission streams a running node's data away (start it first, or replace it)", node.name)));
        }
        progress(&format!("decommissioning {} ({}): streaming its data to the others ...", node.name, node.address));
        let started = Instant::now();
        let out = self.nodetool(index, &["decommission"])?;
        if !out.status.success() {
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            return Err(refuse(format!("nodetool decommission on {} failed: {}", node.name, said.trim())));
        }
        progress(&format!("{} left the ring after {:.1} s; stopping it", node.name, started.elapsed().as_secs_f64()));
        self.stop_nodes(&[index], false, progress)?;
        let mut next = opts.clone();
        next.left.push(index);
        next.left.sort_unstable();
        self.save_shape(&next)?;
        Ok(LocalCluster::new(next))
    }

    /// Starts a fresh node in the place of dead node `index` (stopped or killed before): its
    /// data wiped, it takes the dead node's tokens with `replace_address_first_boot` at the
    /// same address and streams their data from the others.
    pub fn replace(&self, index: usize, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let opts = self.options();
        if opts.tls {
            return Err(refuse("replacing a node of a cluster with client TLS is not supported: start the cluster without --tls"));
        }
        let nodes = layouts(opts)?;
        let node = nodes.get(index).ok_or(LocalError::NoSuchNode { index, nodes: nodes.len() })?;
        if find_node_pid(node).is_some() {
            return Err(refuse(format!("{} is running: replace takes a dead node's place; stop or kill it first (e.g. '60s kill {}')", node.name, node.name)));
        }
        self.wait_until_seen(node, "D", progress)?;
        let wipe = || -> Result<(), LocalError> {
            for dir in [node.data_dir(), node.commitlog_dir(), node.saved_caches_dir(), node.hints_dir(), node.cdc_raw_dir()] {
                if dir.exists() {
                    fs::remove_dir_all(&dir).context(|| format!("deleting {}", dir.display()))?;
                }
            }
            Ok(())
        };
        wipe()?;
        let (lib, java, security) = self.runtime_for_start(progress)?;
        let cluster = self.patient(opts.clone());
        progress(&format!("a fresh {} replaces the dead one at {}: streaming its data ...", node.name, node.address));
        let started = Instant::now();
        // A replacement first asks a seed for the ring (gossip's shadow round) and gives up
        // after the ring delay; a seed too busy to answer in time (a loaded cluster on a small
        // machine) fails it before anything streamed, so it is tried again on a fresh disk.
        for attempt in 1..=REPLACE_ATTEMPTS {
            match cluster.start_node(node, seed_of(&nodes, Some(index)), &lib, &java, &security, Boot::Replace(node.address), progress) {
                Err(LocalError::NodeDied { log_tail, .. }) if attempt < REPLACE_ATTEMPTS && seeds_unanswered(&log_tail) => {
                    progress(&format!(
                        "{} reached no seed within the ring delay (a busy seed); trying again ({} of {REPLACE_ATTEMPTS}) ...",
                        node.name,
                        attempt + 1
                    ));
                    wipe()?;
                }
                other => {
                    other?;
                    break;
                }
            }
        }
        cluster.wait_until_seen(node, "UN", progress)?;
        progress(&format!("{} replaced after {:.1} s", node.name, started.elapsed().as_secs_f64()));
        Ok(())
    }

    /// Waits until another running node's ring shows `node` in a state starting with `state`
    /// (`D`: down — gossip takes a few seconds to convict a killed node, and a replacement
    /// refuses to start for a node it believes alive; `UN`: up and normal, joined).
    fn wait_until_seen(&self, node: &NodeLayout, state: &str, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let nodes = layouts(self.options())?;
        let Some(peer) = nodes.iter().find(|n| n.index != node.index && !n.left && find_node_pid(n).is_some()) else {
            return Err(refuse(format!("no other node runs to stream {}'s data from", node.name)));
        };
        progress(&format!("waiting until {} sees {} as {state} ...", peer.name, node.name));
        let started = Instant::now();
        loop {
            let out = self.nodetool(peer.index, &["status"])?;
            let ring = parse_ring(&String::from_utf8_lossy(&out.stdout));
            if ring.iter().any(|e| e.address == node.address && e.state.starts_with(state)) {
                return Ok(());
            }
            if started.elapsed() >= SEEN_WAIT {
                return Err(refuse(format!("{} does not see {} as {state} after {} s", peer.name, node.name, SEEN_WAIT.as_secs())));
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use casslab_core::cluster::ServerSpec;
    use std::net::Ipv4Addr;

    fn cluster(home: &std::path::Path, server: ServerSpec) -> LocalCluster {
        LocalCluster::new(crate::options_for(
            &LocalOptions { home: home.to_path_buf(), base_address: Ipv4Addr::new(127, 0, 0, 91), ..LocalOptions::default() },
            &server,
        ))
    }

    #[test]
    fn a_replacement_that_reached_no_seed_is_told_from_other_deaths() {
        let died =
            "--- stdout.log ---\nException (java.lang.IllegalStateException) encountered during startup: Unable to contact any seeds: [/127.0.0.121:7000]\n";
        assert!(seeds_unanswered(died));
        assert!(!seeds_unanswered("--- system.log ---\njava.lang.RuntimeException: Cannot replace address with a node that is already bootstrapped\n"));
    }

    #[test]
    fn what_cannot_change_is_refused_before_anything_starts() {
        let tmp = tempfile::tempdir().unwrap();
        let one = cluster(tmp.path(), ServerSpec::default());
        assert!(one.add_node(None, &mut |_| {}).unwrap_err().to_string().contains("--nodes 2"));
        let two = cluster(tmp.path(), ServerSpec { dcs: Some(vec![("east".into(), 1), ("west".into(), 1)]), ..ServerSpec::default() });
        let e = two.add_node(Some("north"), &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("no data center \"north\"") && e.contains("east, west"), "{e}");
        let e = two.decommission(1, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("node2 is not running"), "{e}");
        let tls = LocalCluster::new(LocalOptions { tls: true, ..two.options().clone() });
        assert!(tls.add_node(None, &mut |_| {}).unwrap_err().to_string().contains("TLS"));
    }

    #[test]
    fn a_node_that_left_stays_out_of_the_cluster() {
        let tmp = tempfile::tempdir().unwrap();
        let three = cluster(tmp.path(), ServerSpec { nodes: Some(3), ..ServerSpec::default() });
        let gone = LocalCluster::new(LocalOptions { left: vec![1], ..three.options().clone() });
        assert_eq!(gone.contact_points(), ["127.0.0.91:9042", "127.0.0.93:9042"]);
        assert!(gone.select("node2").unwrap_err().to_string().contains("left the cluster"));
        assert_eq!(gone.select("all").unwrap(), vec![0, 2]);
        let nodes = layouts(gone.options()).unwrap();
        assert_eq!(seed_of(&nodes, Some(0)).name, "node3", "neither the node itself nor one that left");
        // the shape is saved with the nodes that left, and read back
        gone.save_shape(gone.options()).unwrap();
        let saved = SavedCluster::load(tmp.path()).unwrap();
        assert_eq!((saved.left.clone(), saved.left_indices()), (vec!["node2".to_string()], vec![1]));
        assert_eq!(saved.to_options(tmp.path()).left, vec![1]);
        assert!(gone.status().unwrap()[1].left);
    }
}
