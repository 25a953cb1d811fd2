//! `casslab local up|status|down`: real Cassandra nodes on loopback, through casslab-local.

use crate::cli::{parse_heap_mb, LocalCommand, LocalHomeArgs};
use anyhow::Result;
use casslab_local::{LocalCluster, LocalOptions};
use std::path::PathBuf;

fn home(args: &LocalHomeArgs) -> PathBuf {
    args.home.clone().unwrap_or_else(casslab_local::default_home)
}

/// The local cluster under the home directory: as the last `up` left it, or a default
/// single node.
pub fn cluster_for(args: &LocalHomeArgs) -> Result<LocalCluster> {
    let home = home(args);
    if home.join("cluster.json").exists() {
        return Ok(LocalCluster::open(&home)?);
    }
    Ok(LocalCluster::new(LocalOptions { home, ..LocalOptions::default() }))
}

/// Starts (or finds running) the cluster's nodes, with progress on stderr.
pub fn up_with_progress(cluster: &LocalCluster) -> Result<()> {
    let report = cluster.up(&mut |line| eprintln!("{line}"))?;
    for n in &report.nodes {
        eprintln!("{}: {}:{} pid {} — data {}, log {}", n.name, n.address, n.cql_port, n.pid.map(|p| p.to_string()).unwrap_or("-".into()), n.data_dir.display(), n.log_file.display());
    }
    Ok(())
}

pub fn local(cmd: LocalCommand) -> Result<i32> {
    match cmd {
        LocalCommand::Up(a) => {
            let opts = LocalOptions {
                home: home(&a.home),
                version: a.version.clone(),
                nodes: a.nodes.max(1),
                heap_mb: parse_heap_mb(&a.heap)?,
                base_address: a.base_address,
                ..LocalOptions::default()
            };
            let cluster = LocalCluster::new(opts);
            up_with_progress(&cluster)?;
            println!("{}", cluster.contact_points().join(","));
            Ok(0)
        }
        LocalCommand::Status(h) => {
            let cluster = cluster_for(&h)?;
            let nodes = cluster.status()?;
            println!("{:<7} {:<15} {:>8} {:<8} {:<7} {}", "node", "address", "pid", "process", "cql", "data");
            for n in &nodes {
                println!(
                    "{:<7} {:<15} {:>8} {:<8} {:<7} {}",
                    n.name,
                    format!("{}:{}", n.address, n.cql_port),
                    n.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                    if n.running { "running" } else { "stopped" },
                    if n.cql_up { "up" } else { "down" },
                    n.data_dir.display()
                );
            }
            Ok(if nodes.iter().all(|n| n.running && n.cql_up) { 0 } else { 3 })
        }
        LocalCommand::Down { wipe, home: h } => {
            let cluster = cluster_for(&h)?;
            cluster.down(wipe, &mut |line| eprintln!("{line}"))?;
            Ok(0)
        }
    }
}
