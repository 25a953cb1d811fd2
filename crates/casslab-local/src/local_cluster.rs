//! `LocalCluster`: the life cycle of the nodes under one `home` — `up` (idempotent,
//! one node at a time, waiting for CQL, and for a multi-node cluster until every node sees
//! every other as up; making the TLS keystore first when asked for; only the cluster the
//! data under `home` belongs to, see `belongs`), `status` and `ring`,
//! `down` (only processes casslab started, optionally wiping their directories), stopping,
//! killing and restarting chosen nodes (`select`, `stop_nodes`, `start_nodes`) and `nodetool`. It composes the other modules and reports progress through a callback;
//! it never prints.

use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use crate::agents::{agent_args, ensure_agents, JOLOKIA_POLICY, JOLOKIA_PORT};
use crate::belongs::{check_data_belongs, describe, has_data, strangers, wipe_command};
use crate::config_files::{write_node_files, Security};
use crate::cql_probe::cql_answers;
use crate::jars::{cached_jars, check_java, jar_cache_dir, jars_for};
use crate::java::{find_java, JavaRuntime};
use crate::jvm::{nodetool_args, server_args};
use crate::layout::{layouts, node_address, node_dir, NodeLayout};
use crate::local_error::{IoContext, LocalError};
use crate::node_process::{
    check_port_free, find_node_pid, is_alive, kill_pid, node_log_tail, read_pid_file, remove_if_present, spawn_detached, stop_pid, write_pid_file, Stopped,
};
use crate::ring::{parse_ring, RingEntry};
use crate::state::{cluster_file, SavedCluster};
use crate::tls::{self, ensure_keystore};
use crate::LocalOptions;

/// Grace period between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(60);
/// Timeout of one CQL probe (connect, write, read).
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// Longest wait, after a node's process ended, for its ports to be free again.
const PORT_RELEASE_WAIT: Duration = Duration::from_secs(15);
/// Pause between probes while a node starts.
const PROBE_INTERVAL: Duration = Duration::from_millis(500);
/// Pause between `nodetool status` calls while waiting for the ring.
const RING_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Errs unless the node's CQL and storage ports (on its address) and its JMX port
/// (on 127.0.0.1, where Cassandra binds it) are free.
fn check_ports(node: &NodeLayout) -> Result<(), LocalError> {
    check_port_free(node, "CQL", node.address, node.cql_port)?;
    check_port_free(node, "storage", node.address, node.storage_port)?;
    check_port_free(node, "JMX", Ipv4Addr::LOCALHOST, node.jmx_port)
}

/// The agents' flags for `node`: none when they cannot be had (said once in `progress`), and
/// Jolokia left out when its port on the node's address is taken.
fn node_agent_args(node: &NodeLayout, java: &JavaRuntime, progress: &mut dyn FnMut(&str)) -> Vec<std::ffi::OsString> {
    let agents = match ensure_agents(progress) {
        Ok(a) => a,
        Err(e) => {
            progress(&format!("{e}; {} starts without them (server latencies from system_views, profiles from Java Flight Recorder)", node.name));
            return Vec::new();
        }
    };
    let policy = node.conf_dir().join("jolokia-access.xml");
    if !crate::java::has_module(&java.java, "jdk.httpserver") {
        progress(&format!(
            "{}: Java {} at {} has no jdk.httpserver module, which Jolokia serves through; the node starts without Jolokia (server latencies from system_views)",
            node.name,
            java.version,
            java.java.display()
        ));
        return agent_args(&agents, node.address, None);
    }
    let jolokia = match (check_port_free(node, "Jolokia", node.address, JOLOKIA_PORT), std::fs::write(&policy, JOLOKIA_POLICY)) {
        (Ok(()), Ok(())) => Some(policy.as_path()),
        (Err(_), _) => {
            progress(&format!(
                "{}: port {}:{JOLOKIA_PORT} is taken; the node starts without Jolokia (server latencies from system_views)",
                node.name, node.address
            ));
            None
        }
        (_, Err(e)) => {
            progress(&format!("{}: cannot write {}: {e}; the node starts without Jolokia (server latencies from system_views)", node.name, policy.display()));
            None
        }
    };
    agent_args(&agents, node.address, jolokia)
}

/// What `status` knows about one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeStatus {
    pub name: String,
    pub address: Ipv4Addr,
    /// Where clients reach it: its address, or on a relayed cluster the relay's.
    pub client_address: Ipv4Addr,
    /// Where its peers reach it, as the ring names it: its address, or the relay's.
    pub peer_address: Ipv4Addr,
    /// The data center the node was configured with.
    pub dc: String,
    pub cql_port: u16,
    pub jmx_port: u16,
    /// Pid of the node's JVM when it runs.
    pub pid: Option<u32>,
    /// A JVM started by casslab for this node is alive.
    pub running: bool,
    /// The node answers a CQL OPTIONS request.
    pub cql_up: bool,
    pub data_dir: PathBuf,
    /// `logs/system.log`; the GC log `logs/gc.log` sits beside it.
    pub log_file: PathBuf,
    /// The node left the cluster (decommissioned) and is not started again.
    pub left: bool,
}

/// How a node starts: again with its data, joining the ring (bootstrapping: streaming its
/// share of the data first), or in the place of a dead node at this address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boot {
    Restart,
    Join,
    Replace(Ipv4Addr),
}

/// The node every node lists as its seed: the first one that is not `except` and has not left.
pub(crate) fn seed_of(nodes: &[NodeLayout], except: Option<usize>) -> &NodeLayout {
    nodes.iter().find(|n| !n.left && Some(n.index) != except).unwrap_or(&nodes[0])
}

/// What `up` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpReport {
    /// Names of the nodes this call started.
    pub started: Vec<String>,
    /// Names of the nodes that were already running.
    pub already_running: Vec<String>,
    /// Status of every node afterwards.
    pub nodes: Vec<NodeStatus>,
}

/// Handle over the nodes under `opts.home`. Holds no processes: every call looks at
/// pid files and `/proc`, so a later `casslab` run can manage nodes an earlier one started.
#[derive(Debug, Clone)]
pub struct LocalCluster {
    opts: LocalOptions,
}

impl LocalCluster {
    /// Nodes are recognised by the config path on their command line, so the home is
    /// spelled one way (absolute, no `..`) whether or not it exists yet; the server is kept
    /// with every field filled in ([`LocalOptions::full_server`]).
    pub fn new(mut opts: LocalOptions) -> Self {
        opts.home = normalize_home(&opts.home);
        opts.server = opts.full_server();
        LocalCluster { opts }
    }

    /// The cluster described by `home/cluster.json`, as the last `up` left it.
    pub fn open(home: &Path) -> Result<Self, LocalError> {
        let home = normalize_home(home);
        Ok(LocalCluster::new(SavedCluster::load(&home)?.to_options(&home)))
    }

    pub fn options(&self) -> &LocalOptions {
        &self.opts
    }

    /// `address:cql_port` of every node (but those that left), e.g. `127.0.0.1:9042`: where
    /// clients reach them (on a relayed cluster, the relay's addresses in front of them).
    pub fn contact_points(&self) -> Vec<String> {
        match layouts(&self.opts) {
            Ok(nodes) => nodes.iter().filter(|n| !n.left).map(NodeLayout::contact_point).collect(),
            Err(_) => (0..self.opts.nodes())
                .filter(|i| !self.opts.left.contains(i))
                .filter_map(|i| node_address(self.opts.base_address, i).ok())
                .map(|address| format!("{address}:{}", self.opts.cql_port))
                .collect(),
        }
    }

    /// The certificate (PEM) clients verify the nodes with, when the cluster runs with TLS:
    /// `home/tls/ca.pem`, made by `up`. One file for every node: its certificate names all
    /// their addresses.
    pub fn tls_ca_file(&self) -> Option<PathBuf> {
        self.opts.tls.then(|| tls::ca_file(&self.opts.home))
    }

    /// Does `node` answer CQL (over TLS when the cluster uses it)?
    fn answers(&self, node: &NodeLayout) -> bool {
        cql_answers(node.address, node.cql_port, self.opts.tls, PROBE_TIMEOUT)
    }

    /// Every node (but those that left) runs and answers CQL (and the relay runs, on a relayed
    /// cluster).
    pub fn is_running(&self) -> bool {
        self.status().is_ok_and(|nodes| nodes.iter().all(|n| n.left || n.running && n.cql_up)) && self.relay_runs()
    }

    /// Starts the nodes that are not running, one at a time, each waited for until it
    /// answers CQL; with several nodes, then waits until every node reports every other as
    /// up and normal (`UN` in `nodetool status`). Nodes already running are left alone.
    pub fn up(&self, progress: &mut dyn FnMut(&str)) -> Result<UpReport, LocalError> {
        self.up_nodes(None, progress)
    }

    /// Starts (with their data) the nodes of `indices` that are not running, as `up` does.
    pub fn start_nodes(&self, indices: &[usize], progress: &mut dyn FnMut(&str)) -> Result<UpReport, LocalError> {
        self.up_nodes(Some(indices), progress)
    }

    fn up_nodes(&self, only: Option<&[usize]>, progress: &mut dyn FnMut(&str)) -> Result<UpReport, LocalError> {
        let mut nodes = layouts(&self.opts)?;
        // nodes that left the cluster saved here stay out, whatever the options say
        let saved_left = SavedCluster::load(&self.opts.home)
            .ok()
            .filter(|s| s.base_address == self.opts.base_address && s.node_list.len() == nodes.len())
            .map(|s| s.left_indices())
            .unwrap_or_default();
        for n in &mut nodes {
            n.left |= saved_left.contains(&n.index);
        }
        let left: Vec<usize> = nodes.iter().filter(|n| n.left).map(|n| n.index).collect();
        let wanted_node = |i: usize| only.is_none_or(|o| o.contains(&i)) && !left.contains(&i);
        let pids: Vec<Option<u32>> = nodes.iter().map(find_node_pid).collect();
        let wanted = SavedCluster::new(&LocalOptions { left: left.clone(), ..self.opts.clone() }, &nodes);
        if pids.iter().any(Option::is_some) {
            if let Some(difference) = SavedCluster::load(&self.opts.home).ok().and_then(|s| s.difference_but_distances(&wanted)) {
                return Err(LocalError::OptionsMismatch { home: self.opts.home.clone(), difference });
            }
        }
        check_data_belongs(&self.opts)?;
        // `up` of a stopped cluster on its data (not a restart of chosen nodes, whose peers run)
        let restarted_with_data = only.is_none() && nodes.iter().zip(&pids).any(|(n, pid)| pid.is_none() && !n.left && has_data(&self.opts.home, n.index));
        // Fail fast, before any fetch or start, if a port a stopped node needs is taken.
        for (node, _) in nodes.iter().zip(&pids).filter(|(n, pid)| pid.is_none() && wanted_node(n.index)) {
            check_ports(node)?;
        }
        let mut wanted = wanted;
        let runtime = if nodes.iter().zip(&pids).all(|(n, pid)| pid.is_some() || !wanted_node(n.index)) {
            None
        } else {
            let (lib, built_version) = jars_for(self.opts.version(), self.opts.server.build.as_deref(), progress)?;
            let java = find_java(&built_version, self.opts.server.java_home.as_deref(), progress)?;
            wanted.java = Some(java.java.clone());
            wanted.java_version = Some(java.version.clone());
            Some((lib, java))
        };
        let lib = runtime.as_ref().map(|(lib, _)| lib.clone());
        let security = match &lib {
            Some(_) => Security {
                auth: self.opts.auth,
                tls: if self.opts.tls {
                    let mut addresses: Vec<Ipv4Addr> = nodes.iter().map(|n| n.address).collect();
                    addresses.extend(nodes.iter().filter(|n| n.is_relayed()).map(|n| n.client_address));
                    Some(ensure_keystore(&self.opts.home, &addresses, progress)?)
                } else {
                    None
                },
            },
            None => Security::default(),
        };
        wanted.save(&self.opts.home)?;
        // the relay first: the nodes reach their seed through it
        let relay_started = self.ensure_network(&nodes, only.is_none(), progress)?;

        let mut report = UpReport { started: Vec::new(), already_running: Vec::new(), nodes: Vec::new() };
        let seed = seed_of(&nodes, None);
        for (node, pid) in nodes.iter().zip(pids) {
            if !wanted_node(node.index) {
                continue;
            }
            if let Some(pid) = pid {
                write_pid_file(&node.pid_path(), pid)?;
                if !self.answers(node) {
                    progress(&format!("{} (pid {pid}) is running but does not answer CQL yet; waiting ...", node.name));
                    self.wait_for_cql(node, pid, None)?;
                }
                progress(&format!("{} already running at {} (pid {pid})", node.name, node.address));
                report.already_running.push(node.name.clone());
                continue;
            }
            let (lib, java) = runtime.as_ref().expect("jars are fetched when a node is not running");
            self.start_node(node, seed, lib, java, &security, Boot::Restart, progress)?;
            report.started.push(node.name.clone());
        }
        if self.opts.is_multi_node() && (!report.started.is_empty() || (relay_started && !report.already_running.is_empty())) {
            self.wait_for_ring(&nodes, progress)?;
        }
        if restarted_with_data && !report.started.is_empty() {
            self.check_ring_knows_only_us(&nodes, &report.started, progress)?;
        }
        report.nodes = self.status()?;
        Ok(report)
    }

    /// After nodes restarted with their data: errs, stopping the nodes just `started`, when the
    /// ring remembers peers this cluster does not have.
    fn check_ring_knows_only_us(&self, nodes: &[NodeLayout], started: &[String], progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let Some(ring) = self.ring()? else { return Ok(()) };
        let others = strangers(&ring, nodes);
        if others.is_empty() {
            return Ok(());
        }
        let peers = describe(&others);
        let node = nodes.iter().find(|n| find_node_pid(n).is_some()).map_or_else(|| "the node".to_string(), |n| n.name.clone());
        progress(&format!("{node}'s ring remembers {peers}, which this cluster does not start; stopping what was started"));
        let indices: Vec<usize> = nodes.iter().filter(|n| started.contains(&n.name)).map(|n| n.index).collect();
        self.stop_nodes(&indices, false, progress)?;
        Err(LocalError::RingRemembersPeers { node, peers, wipe: wipe_command(&self.opts.home) })
    }

    /// Waits until every running node's `nodetool status` lists every running node as `UN`
    /// (stopped nodes are not waited for).
    pub(crate) fn wait_for_ring(&self, nodes: &[NodeLayout], progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let started = Instant::now();
        let timeout = Duration::from_secs(self.opts.start_timeout_s);
        let running: Vec<&NodeLayout> = nodes.iter().filter(|n| find_node_pid(n).is_some()).collect();
        let mut pending: Vec<&NodeLayout> = running.clone();
        progress(&format!("waiting until {} nodes see each other as up ...", running.len()));
        while let Some(node) = pending.first().copied() {
            let out = self.nodetool(node.index, &["status"])?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let ring = parse_ring(&text);
            let all_up = running.iter().all(|n| ring.iter().any(|e| e.address == n.peer_address && e.is_up_normal()));
            if all_up {
                pending.remove(0);
                continue;
            }
            if started.elapsed() >= timeout {
                return Err(LocalError::RingTimeout { node: node.name.clone(), secs: timeout.as_secs(), status: text + &String::from_utf8_lossy(&out.stderr) });
            }
            std::thread::sleep(RING_POLL_INTERVAL);
        }
        progress(&format!("every node sees the other {} as up (UN) after {:.1} s", running.len().saturating_sub(1), started.elapsed().as_secs_f64()));
        Ok(())
    }

    /// The ring as the first running node sees it (`nodetool status`); `None` when no node
    /// runs or nodetool fails.
    pub fn ring(&self) -> Result<Option<Vec<RingEntry>>, LocalError> {
        let nodes = layouts(&self.opts)?;
        let Some(node) = nodes.iter().find(|n| find_node_pid(n).is_some()) else { return Ok(None) };
        let out = self.nodetool(node.index, &["status"])?;
        let ring = parse_ring(&String::from_utf8_lossy(&out.stdout));
        Ok((!ring.is_empty()).then_some(ring))
    }

    /// The nodes `selector` names, as 0-based indices: a node name (`node2`), a node's
    /// address (`127.0.0.2`, or one the relay gives it), a data center (`dc2`: every node of
    /// it) or `all`.
    pub fn select(&self, selector: &str) -> Result<Vec<usize>, LocalError> {
        let nodes = layouts(&self.opts)?;
        let sel = selector.trim();
        if let Some(gone) = nodes.iter().find(|n| n.left && (n.name == sel || n.address.to_string() == sel)) {
            return Err(LocalError::Topology {
                reason: format!("{} ({}) left the cluster (decommissioned): it is not started or acted on again", gone.name, gone.address),
            });
        }
        let nodes: Vec<NodeLayout> = nodes.into_iter().filter(|n| !n.left).collect();
        let address = sel.parse::<Ipv4Addr>().ok();
        let picked: Vec<usize> =
            nodes.iter().filter(|n| sel == "all" || n.name == sel || address.is_some_and(|a| n.is_named_by(a)) || n.dc == sel).map(|n| n.index).collect();
        if picked.is_empty() {
            let mut known: Vec<String> = nodes.iter().map(|n| format!("{} ({})", n.name, n.address)).collect();
            let mut dcs: Vec<String> = nodes.iter().map(|n| n.dc.clone()).collect();
            dcs.dedup();
            known.extend(dcs);
            known.push("all".into());
            return Err(LocalError::NoSuchTarget { selector: sel.to_string(), known: known.join(", ") });
        }
        Ok(picked)
    }

    /// Stops the nodes of `indices` that run: gracefully (SIGTERM, on which Cassandra drains
    /// before it exits; SIGKILL after 60 s) or at once with SIGKILL (`kill`), as a crash
    /// would. Their data is kept; `start_nodes` brings them back.
    pub fn stop_nodes(&self, indices: &[usize], kill: bool, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let nodes = layouts(&self.opts)?;
        for node in nodes.iter().filter(|n| indices.contains(&n.index)) {
            let Some(pid) = find_node_pid(node) else {
                progress(&format!("{} is not running", node.name));
                continue;
            };
            let line = stop_node_process(node, pid, kill)?;
            progress(&line);
        }
        Ok(())
    }

    /// Starts one node's JVM and waits until it answers CQL (a node that joins or replaces
    /// another answers once it has streamed its data).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start_node(
        &self,
        node: &NodeLayout,
        seed: &NodeLayout,
        lib: &Path,
        java: &JavaRuntime,
        security: &Security,
        boot: Boot,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(), LocalError> {
        remove_if_present(&node.pid_path())?;
        check_ports(node)?;
        write_node_files(&self.opts.cluster_name, node, seed, security, self.opts.is_multi_node(), &self.opts.server.settings)?;
        let mut args = server_args(node, &self.opts, lib, java.major);
        // before the class path and main class, which end the list
        let at = args.len() - 3;
        args.splice(at..at, node_agent_args(node, java, progress));
        if boot != Boot::Restart {
            crate::config_files::allow_bootstrap(node)?;
        }
        if let Boot::Replace(dead) = boot {
            // before the class path and main class, which end the list
            args.insert(args.len() - 3, format!("-Dcassandra.replace_address_first_boot={dead}").into());
        }
        progress(&format!(
            "starting {} at {} (heap {} MiB, {}, Java {}) ...",
            node.name,
            node.address,
            self.opts.heap_mb(),
            self.opts.gc().as_str(),
            java.version
        ));
        let started = Instant::now();
        let mut child = spawn_detached(&java.java, &args, node)?;
        let pid = child.id();
        write_pid_file(&node.pid_path(), pid)?;
        self.wait_for_cql(node, pid, Some(&mut child))?;
        progress(&format!("{} answers CQL after {:.1} s", node.name, started.elapsed().as_secs_f64()));
        Ok(())
    }

    /// Polls until the node answers CQL; on death or timeout cleans up and errs.
    fn wait_for_cql(&self, node: &NodeLayout, pid: u32, mut child: Option<&mut Child>) -> Result<(), LocalError> {
        let timeout = Duration::from_secs(self.opts.start_timeout_s);
        let started = Instant::now();
        loop {
            // A child of this process is asked directly, which also yields its exit status.
            let (exited, exit) = match child.as_mut() {
                Some(c) => match c.try_wait() {
                    Ok(status) => (status.is_some(), status),
                    Err(_) => (!is_alive(pid), None),
                },
                None => (!is_alive(pid), None),
            };
            if exited {
                remove_if_present(&node.pid_path())?;
                // Give the JVM's last log lines a moment to land on disk.
                std::thread::sleep(Duration::from_millis(200));
                let status = exit.map(|s| format!("{s}\n")).unwrap_or_default();
                return Err(LocalError::NodeDied { node: node.name.clone(), log_tail: status + &node_log_tail(node) });
            }
            if self.answers(node) {
                return Ok(());
            }
            if started.elapsed() >= timeout {
                let log_tail = node_log_tail(node);
                stop_pid(pid, STOP_GRACE, node)?;
                remove_if_present(&node.pid_path())?;
                return Err(LocalError::StartTimeout { node: node.name.clone(), secs: timeout.as_secs(), log_tail });
            }
            std::thread::sleep(PROBE_INTERVAL);
        }
    }

    /// Per-node status: process alive, CQL answering, where data and logs are.
    pub fn status(&self) -> Result<Vec<NodeStatus>, LocalError> {
        Ok(layouts(&self.opts)?
            .iter()
            .map(|node| {
                let pid = find_node_pid(node);
                NodeStatus {
                    name: node.name.clone(),
                    address: node.address,
                    client_address: node.client_address,
                    peer_address: node.peer_address,
                    dc: node.dc.clone(),
                    cql_port: node.cql_port,
                    jmx_port: node.jmx_port,
                    pid,
                    running: pid.is_some(),
                    cql_up: pid.is_some() && self.answers(node),
                    data_dir: node.data_dir(),
                    log_file: node.system_log(),
                    left: node.left,
                }
            })
            .collect())
    }

    /// The nodes `down` acts on: those of the options, or of `cluster.json` if it has more,
    /// and the node directories beyond them (left by a bigger cluster).
    fn nodes_for_down(&self) -> Result<Vec<NodeLayout>, LocalError> {
        let mut opts = match SavedCluster::load(&self.opts.home).map(|s| s.to_options(&self.opts.home)) {
            Ok(saved) if saved.nodes() > self.opts.nodes() => saved,
            _ => self.opts.clone(),
        };
        let on_disk = (0..).take_while(|i| node_dir(&opts.home, *i).is_dir()).count();
        if on_disk > opts.nodes() {
            opts.server.nodes = Some(on_disk);
            opts.server.dcs = None;
        }
        layouts(&opts)
    }

    /// Stops the nodes casslab started (SIGTERM, then SIGKILL after 60 s), last node
    /// first, and removes their pid files. With `wipe`, stops them at once (SIGKILL: a drain
    /// would flush data that is deleted next), then deletes the node directories casslab
    /// created (data and logs), the TLS keystore directory and `cluster.json`.
    pub fn down(&self, wipe: bool, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        let nodes = self.nodes_for_down()?;
        for node in nodes.iter().rev() {
            match find_node_pid(node) {
                Some(pid) => {
                    progress(&format!("stopping {} (pid {pid}){} ...", node.name, if wipe { " at once: its data is wiped next" } else { "" }));
                    let line = stop_node_process(node, pid, wipe)?;
                    progress(&line);
                }
                None => {
                    if let Some(pid) = read_pid_file(&node.pid_path()).filter(|&pid| is_alive(pid)) {
                        progress(&format!("{}: pid file names pid {pid}, which is not this node's Cassandra; left it alone", node.name));
                    }
                    // (a stopped node's pid file went with its stop)
                    remove_if_present(&node.pid_path())?;
                }
            }
        }
        self.network_down(wipe, progress)?;
        if wipe {
            for node in &nodes {
                if !node.dir.exists() {
                    continue;
                }
                if !node.marker_path().is_file() {
                    return Err(LocalError::NotOurs { dir: node.dir.clone() });
                }
                fs::remove_dir_all(&node.dir).context(|| format!("deleting {}", node.dir.display()))?;
                progress(&format!("wiped {}", node.dir.display()));
            }
            tls::wipe_tls_dir(&self.opts.home, progress)?;
            remove_if_present(&cluster_file(&self.opts.home))?;
        }
        Ok(())
    }

    /// Runs `nodetool <args>` against node `index` (0-based) over its JMX port and
    /// returns its output, whatever its exit status.
    pub fn nodetool(&self, index: usize, args: &[&str]) -> Result<Output, LocalError> {
        let nodes = layouts(&self.opts)?;
        let node = nodes.get(index).ok_or(LocalError::NoSuchNode { index, nodes: nodes.len() })?;
        // the Java and jars the nodes run with
        let saved = SavedCluster::load(&self.opts.home).ok();
        let java = match saved.as_ref().and_then(|s| s.java.clone()).and_then(|j| crate::java::probe(&j)) {
            Some(rt) => rt,
            None => {
                check_java(self.opts.version())?;
                find_java(self.opts.version(), self.opts.server.java_home.as_deref(), &mut |_| {})?
            }
        };
        let lib = match &self.opts.server.build {
            Some(b) => jars_for(self.opts.version(), Some(b), &mut |_| {})?.0,
            None => cached_jars(self.opts.version())
                .ok_or_else(|| LocalError::JarsMissing { version: self.opts.version().to_string(), dir: jar_cache_dir(self.opts.version()) })?,
        };
        Command::new(&java.java)
            .args(nodetool_args(node, &lib, args, java.major))
            .output()
            .context(|| format!("running nodetool {} against {}", args.join(" "), node.name))
    }
}

/// Stops one node's process, `pid`, checked to be its Cassandra: gracefully (SIGTERM, on
/// which Cassandra drains before it exits; SIGKILL after 60 s) or at once with SIGKILL
/// (`kill`), as a crash would, or as befits a node whose data is wiped next. Then removes its
/// pid file and waits until its ports are free (the kernel may hold them a moment after the
/// process is gone, and a start right after must find them free); returns the line to say.
fn stop_node_process(node: &NodeLayout, pid: u32, kill: bool) -> Result<String, LocalError> {
    let started = Instant::now();
    let how = if kill {
        kill_pid(pid, node)?;
        None
    } else {
        Some(stop_pid(pid, STOP_GRACE, node)?)
    };
    remove_if_present(&node.pid_path())?;
    let ports_free_by = Instant::now() + PORT_RELEASE_WAIT;
    while check_ports(node).is_err() && Instant::now() < ports_free_by {
        std::thread::sleep(Duration::from_millis(200));
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(match how {
        None => format!("{} (pid {pid}) killed", node.name),
        Some(Stopped::Gracefully) => format!("{} (pid {pid}) stopped after {secs:.1} s", node.name),
        Some(Stopped::Killed) => format!("{} did not stop on SIGTERM; killed after {secs:.1} s", node.name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contact_points_follow_base_address() {
        let c = LocalCluster::new(LocalOptions {
            server: casslab_core::cluster::ServerSpec { nodes: Some(3), ..LocalOptions::default().server },
            base_address: Ipv4Addr::new(127, 0, 0, 51),
            ..LocalOptions::default()
        });
        assert_eq!(c.contact_points(), ["127.0.0.51:9042", "127.0.0.52:9042", "127.0.0.53:9042"]);
    }

    #[test]
    fn tls_ca_file_only_with_tls() {
        let opts = LocalOptions { home: PathBuf::from("/h"), ..LocalOptions::default() };
        assert_eq!(LocalCluster::new(opts.clone()).tls_ca_file(), None);
        let tls = LocalCluster::new(LocalOptions { tls: true, ..opts });
        assert_eq!(tls.tls_ca_file(), Some(PathBuf::from("/h/tls/ca.pem")));
    }

    #[test]
    fn status_of_never_started_cluster() {
        let tmp = tempfile::tempdir().unwrap();
        let c = LocalCluster::new(LocalOptions { home: tmp.path().to_path_buf(), base_address: Ipv4Addr::new(127, 0, 0, 71), ..LocalOptions::default() });
        let s = c.status().unwrap();
        assert_eq!(s.len(), 1);
        assert!(!s[0].running && !s[0].cql_up && s[0].pid.is_none());
        assert_eq!(s[0].jmx_port, 7269);
        assert!(!c.is_running());
        c.down(true, &mut |_| {}).unwrap();
    }

    #[test]
    fn wipe_refuses_unmarked_dirs() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("node1/data")).unwrap();
        let c = LocalCluster::new(LocalOptions { home: tmp.path().to_path_buf(), ..LocalOptions::default() });
        assert!(matches!(c.down(true, &mut |_| {}), Err(LocalError::NotOurs { .. })));
        assert!(tmp.path().join("node1/data").is_dir());
    }
}

/// `home` made absolute, with symlinks and `..` resolved as far as the path exists and the
/// rest appended lexically: `a/../b` and `b` are one home, before and after it is created.
pub fn normalize_home(home: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = if home.is_absolute() { home.to_path_buf() } else { std::env::current_dir().map(|d| d.join(home)).unwrap_or_else(|_| home.to_path_buf()) };
    let mut lexical = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    // Resolve symlinks of the longest existing prefix.
    let mut existing = lexical.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => return lexical,
        }
        if !existing.pop() {
            return lexical;
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for name in rest.iter().rev() {
        out.push(name);
    }
    out
}

#[cfg(test)]
mod home_tests {
    use super::*;

    #[test]
    fn a_home_is_one_path_before_and_after_it_exists() {
        let base = std::env::temp_dir().join(format!("casslab-home-{}", std::process::id()));
        let spelled = base.join("x").join("..").join("home");
        let before = normalize_home(&spelled);
        assert_eq!(before, normalize_home(&base).join("home"));
        assert!(!before.components().any(|c| matches!(c, std::path::Component::ParentDir)));
        std::fs::create_dir_all(base.join("home")).unwrap();
        let after = normalize_home(&spelled);
        std::fs::remove_dir_all(&base).unwrap();
        assert_eq!(before, after);
    }
}
