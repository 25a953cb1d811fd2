//! `casslab local up|status|down|stop|kill|start|nodetool`: real Cassandra nodes on loopback,
//! and `casslab local redis up|status|down`: a local redis-server, through casslab-local.

use crate::cli::{parse_heap_mb, LocalCommand, LocalHomeArgs, LocalRedisCommand};
use crate::exit::{usage, Exit};
use casslab_core::cluster::Gc;
use crate::out;
use casslab_core::report::table::TextTable;
use anyhow::Result;
use casslab_local::redis::{LocalRedis, RedisOptions};
use casslab_local::{LocalCluster, LocalOptions, SavedCluster, DEFAULT_SUPERUSER, DEFAULT_SUPERUSER_PASSWORD};
use std::path::PathBuf;

/// The home directory, spelled one way whether or not it exists yet (see
/// `casslab_local::normalize_home`).
fn home(args: &LocalHomeArgs) -> PathBuf {
    casslab_local::normalize_home(&args.home.clone().unwrap_or_else(casslab_local::default_home))
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

/// casslab's local redis-server under the home directory: as the last `local redis up` left
/// it, or the default one.
pub fn redis_for(args: &LocalHomeArgs) -> Result<LocalRedis> {
    Ok(LocalRedis::open(&home(args))?)
}

/// `casslab local redis up|status|down`.
fn redis(cmd: LocalRedisCommand) -> Result<i32> {
    match cmd {
        LocalRedisCommand::Up { address, port, home: h } => {
            let server = LocalRedis::new(RedisOptions { home: home(&h), address, port });
            let pid = server.up(&mut |line| out::note(line))?;
            eprintln!("redis-server pid {pid} — home {}, log {}", server.dir().display(), server.log_file().display());
            out::println(&server.url())?;
            Ok(Exit::Success.code())
        }
        LocalRedisCommand::Status(h) => {
            let st = redis_for(&h)?.status();
            let mut t = TextTable::new(["server", "address", "pid", "process", "answers", "log"]).right([2]);
            t.row([
                "redis-server".to_string(),
                format!("{}:{}", st.address, st.port),
                st.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                (if st.pid.is_some() { "running" } else { "stopped" }).to_string(),
                (if st.answers { "yes" } else { "no" }).to_string(),
                st.log_file.display().to_string(),
            ]);
            out::print(&t.to_string())?;
            Ok(if st.pid.is_some() && st.answers { Exit::Success } else { Exit::Setup }.code())
        }
        LocalRedisCommand::Down(h) => {
            redis_for(&h)?.down(&mut |line| out::note(line))?;
            Ok(Exit::Success.code())
        }
    }
}

/// Starts (or finds running) the cluster's nodes, with progress on stderr.
pub fn up_with_progress(cluster: &LocalCluster) -> Result<()> {
    let report = cluster.up(&mut |line| out::note(line))?;
    for n in &report.nodes {
        eprintln!("{}: {}:{} pid {} — data {}, log {}", n.name, n.address, n.cql_port, n.pid.map(|p| p.to_string()).unwrap_or("-".into()), n.data_dir.display(), n.log_file.display());
    }
    print_security(cluster);
    Ok(())
}

/// How to log in and verify TLS, when the cluster was started with --auth / --tls (stderr).
fn print_security(cluster: &LocalCluster) {
    if cluster.options().auth {
        eprintln!("auth on: user {DEFAULT_SUPERUSER}, password {DEFAULT_SUPERUSER_PASSWORD} (the local default)");
    }
    if let Some(ca) = cluster.tls_ca_file() {
        eprintln!("TLS on: CA certificate {} (use --tls-ca {})", ca.display(), ca.display());
    }
}

pub fn local(cmd: LocalCommand) -> Result<i32> {
    match cmd {
        LocalCommand::Up(a) => {
            let home = home(&a.home);
            let saved = SavedCluster::load(&home).ok().filter(|_| a.nodes.is_none() && a.dcs.is_none() && a.base_address.is_none());
            let opts = match saved {
                // without a shape, the cluster the data under the home belongs to, as it was started
                Some(s) => {
                    eprintln!("starting the cluster saved in {}: {} node(s) from {} (--nodes, --dcs or --base-address ask for another)", home.display(), s.nodes, s.base_address);
                    let mut o = s.to_options(&home);
                    if let Some(h) = &a.heap {
                        o.heap_mb = parse_heap_mb(h)?;
                    }
                    o.version = a.version.clone().unwrap_or(o.version);
                    (o.auth, o.tls) = (o.auth || a.auth, o.tls || a.tls);
                    o
                }
                None => {
                    let dcs = a.dcs.as_deref().map(casslab_local::parse_dcs).transpose()?.unwrap_or_default();
                    let nodes = if dcs.is_empty() { a.nodes.unwrap_or(1).max(1) } else { dcs.iter().map(|(_, n)| n).sum() };
                    let heap_mb = match &a.heap {
                        Some(h) => parse_heap_mb(h)?,
                        None => casslab_local::default_heap_mb(nodes),
                    };
                    let defaults = LocalOptions::default();
                    LocalOptions {
                        home,
                        version: a.version.clone().unwrap_or(defaults.version.clone()),
                        nodes,
                        dcs,
                        heap_mb,
                        base_address: a.base_address.unwrap_or(defaults.base_address),
                        auth: a.auth,
                        tls: a.tls,
                        ..defaults
                    }
                }
            };
            // the server's definition: what the flags set
            let mut opts = opts;
            if a.build.is_some() {
                opts.build = a.build.clone();
            }
            if a.java_home.is_some() {
                opts.java_home = a.java_home.clone();
            }
            if let Some(gc) = &a.gc {
                opts.gc = Gc::parse(gc).ok_or_else(|| usage(format!("--gc {gc}: write g1, zgc, shenandoah or parallel")))?;
            }
            if !a.jvm_options.is_empty() {
                opts.jvm_options = a.jvm_options.clone();
            }
            opts.settings.extend(crate::cli::parse_settings(&a.settings)?);
            // what can be checked is, before any node starts
            casslab_local::check_options(&opts, &mut |line| eprintln!("{line}"))?;
            let cluster = LocalCluster::new(opts);
            up_with_progress(&cluster)?;
            out::println(&cluster.contact_points().join(","))?;
            Ok(Exit::Success.code())
        }
        LocalCommand::Status(h) => {
            let cluster = cluster_for(&h)?;
            let nodes = cluster.status()?;
            let ring = if nodes.iter().any(|n| n.running) { cluster.ring().ok().flatten().unwrap_or_default() } else { Vec::new() };
            let mut t = TextTable::new(["node", "address", "dc", "state", "pid", "process", "cql", "load", "data"]).right([4, 7]);
            for n in &nodes {
                let seen = ring.iter().find(|e| e.address == n.address);
                t.row([
                    n.name.clone(),
                    format!("{}:{}", n.address, n.cql_port),
                    n.dc.clone(),
                    seen.map_or("-", |e| e.state.as_str()).to_string(),
                    n.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                    (if n.running { "running" } else { "stopped" }).to_string(),
                    (if n.cql_up { "up" } else { "down" }).to_string(),
                    seen.map_or("-", |e| e.load.as_str()).to_string(),
                    n.data_dir.display().to_string(),
                ]);
            }
            // peers the ring remembers that this cluster does not start (its data belongs to a bigger one)
            let mut strangers: Vec<_> = ring.iter().filter(|e| !nodes.iter().any(|n| n.address == e.address)).collect();
            strangers.sort_by_key(|e| e.address);
            for e in &strangers {
                t.row(["(peer)".into(), e.address.to_string(), e.dc.clone(), e.state.clone(), "-".into(), "not casslab's".into(), "-".into(), e.load.clone(), "-".into()]);
            }
            out::print(&t.to_string())?;
            print_security(&cluster);
            let down: Vec<String> = strangers.iter().filter(|e| !e.is_up_normal()).map(|e| format!("{} ({})", e.address, e.state)).collect();
            if !down.is_empty() {
                eprintln!(
                    "the ring remembers nodes this cluster does not start, and they are down: {}; quorum requests that need them fail. Stop this cluster (`casslab local down`) and start the one its data belongs to, or start afresh with `{}`",
                    down.join(", "),
                    casslab_local::wipe_command(&cluster.options().home)
                );
            }
            let healthy = nodes.iter().all(|n| n.running && n.cql_up) && down.is_empty();
            Ok(if healthy { Exit::Success } else { Exit::Setup }.code())
        }
        LocalCommand::Stop(a) => {
            let cluster = cluster_for(&a.home)?;
            cluster.stop_nodes(&cluster.select(&a.target)?, false, &mut |line| out::note(line))?;
            Ok(Exit::Success.code())
        }
        LocalCommand::Kill(a) => {
            let cluster = cluster_for(&a.home)?;
            cluster.stop_nodes(&cluster.select(&a.target)?, true, &mut |line| out::note(line))?;
            Ok(Exit::Success.code())
        }
        LocalCommand::Start(a) => {
            let cluster = cluster_for(&a.home)?;
            cluster.start_nodes(&cluster.select(&a.target)?, &mut |line| out::note(line))?;
            Ok(Exit::Success.code())
        }
        LocalCommand::Nodetool { node, args, home: h } => {
            let cluster = cluster_for(&h)?;
            let picked = cluster.select(&node)?;
            let [index] = picked.as_slice() else {
                anyhow::bail!("`{node}` names {} nodes; nodetool runs against one: name a node (node2) or its address", picked.len())
            };
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = cluster.nodetool(*index, &args)?;
            use std::io::Write;
            std::io::stdout().write_all(&out.stdout)?;
            std::io::stderr().write_all(&out.stderr)?;
            Ok(out.status.code().unwrap_or(1))
        }
        LocalCommand::Redis(c) => redis(c),
        LocalCommand::Down { wipe, home: h } => {
            let cluster = cluster_for(&h)?;
            cluster.down(wipe, &mut |line| out::note(line))?;
            Ok(Exit::Success.code())
        }
    }
}
