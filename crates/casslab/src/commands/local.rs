//! `casslab local up|status|down|stop|kill|start|nodetool`: real Cassandra nodes on loopback,
//! and `casslab local redis up|status|down`: a local redis-server, through casslab-local.

use crate::cli::{parse_heap_mb, LocalCommand, LocalHomeArgs, LocalRedisCommand, LocalUpArgs};
use crate::exit::{usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::cluster::{Gc, ServerSpec};
use casslab_core::network;
use casslab_local::local_redis::{LocalRedis, RedisOptions};
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
            out::note(&format!("redis-server pid {pid} — home {}, log {}", server.dir().display(), server.log_file().display()));
            out::println(&server.url())?;
            Ok(Exit::Success.code())
        }
        LocalRedisCommand::Status(h) => {
            let st = redis_for(&h)?.status();
            out::print(&st.table())?;
            Ok(if st.healthy() { Exit::Success } else { Exit::Setup }.code())
        }
        LocalRedisCommand::Down(h) => {
            redis_for(&h)?.down(&mut |line| out::note(line))?;
            Ok(Exit::Success.code())
        }
    }
}

/// Starts (or finds running) the cluster's nodes, with progress on stderr (not under --quiet).
pub fn up_with_progress(cluster: &LocalCluster) -> Result<()> {
    let report = cluster.up(&mut |line| out::note(line))?;
    for n in &report.nodes {
        out::note(&format!(
            "{}: {}:{} pid {} — data {}, log {}",
            n.name,
            n.address,
            n.cql_port,
            n.pid.map(|p| p.to_string()).unwrap_or("-".into()),
            n.data_dir.display(),
            n.log_file.display()
        ));
    }
    print_security(cluster);
    Ok(())
}

/// How to log in and verify TLS, when the cluster was started with --auth / --tls (stderr,
/// under --quiet too: not progress but what a client needs to connect, as the contact points
/// on stdout are).
fn print_security(cluster: &LocalCluster) {
    if cluster.options().auth {
        eprintln!("auth on: user {DEFAULT_SUPERUSER}, password {DEFAULT_SUPERUSER_PASSWORD} (the local default)");
    }
    if let Some(ca) = cluster.tls_ca_file() {
        eprintln!("TLS on: CA certificate {} (use --tls-ca {})", ca.display(), ca.display());
    }
}

/// The server `casslab local up`'s flags define: what they leave out is left out.
fn server_of(a: &LocalUpArgs) -> Result<ServerSpec> {
    let dcs = a.dcs.as_deref().map(casslab_local::parse_dcs).transpose()?.filter(|d| !d.is_empty());
    let heap_mb = a.heap.as_deref().map(parse_heap_mb).transpose()?;
    let gc = match &a.gc {
        Some(gc) => Some(Gc::parse(gc).ok_or_else(|| usage(format!("--gc {gc}: write g1, zgc, shenandoah or parallel")))?),
        None => None,
    };
    Ok(ServerSpec {
        version: a.version.clone(),
        build: a.build.clone(),
        java_home: a.java_home.clone(),
        heap_mb,
        gc,
        jvm_options: a.jvm_options.clone(),
        settings: crate::cli::parse_settings(&a.settings)?,
        nodes: a.nodes.map(|n| n.max(1)),
        dcs,
        rtt: network::parse_rtts(&a.rtt).map_err(|e| usage(format!("--rtt: {e}")))?.into_iter().collect(),
        client_rtt: network::parse_client_rtts(&a.client_rtt).map_err(|e| usage(format!("--client-rtt: {e}")))?.into_iter().collect(),
        relay: a.relay.then_some(true),
    })
}

/// The options `casslab local up` starts: without a shape (--nodes, --dcs, --base-address),
/// the cluster the data under the home belongs to, as it was started; else a new one; with
/// the flags' server over it.
fn up_options(a: &LocalUpArgs) -> Result<LocalOptions> {
    let home = home(&a.home);
    let saved = SavedCluster::load(&home).ok().filter(|_| a.nodes.is_none() && a.dcs.is_none() && a.base_address.is_none());
    if let Some(s) = saved {
        let o = s.to_options(&home);
        out::note(&format!(
            "starting the cluster saved in {}: {} node(s) from {} (--nodes, --dcs or --base-address ask for another)",
            home.display(),
            o.nodes(),
            o.base_address
        ));
        let base = LocalOptions { auth: o.auth || a.auth, tls: o.tls || a.tls, ..o };
        return Ok(casslab_local::options_for(&base, &server_of(a)?));
    }
    let spec = server_of(a)?;
    let defaults = LocalOptions::default();
    let base = LocalOptions { home, base_address: a.base_address.unwrap_or(defaults.base_address), auth: a.auth, tls: a.tls, ..defaults };
    let mut opts = casslab_local::options_for(&base, &spec);
    if spec.heap_mb.is_none() {
        opts.server.heap_mb = Some(casslab_local::default_heap_mb(opts.nodes()));
    }
    Ok(opts)
}

/// `casslab local up`: checks what can be checked before any node starts, starts the nodes
/// and prints their contact points.
fn up(a: &LocalUpArgs) -> Result<i32> {
    let opts = up_options(a)?;
    casslab_local::check_options(&opts, &mut |line| out::note(line))?;
    let cluster = LocalCluster::new(opts);
    up_with_progress(&cluster)?;
    out::println(&cluster.contact_points().join(","))?;
    Ok(Exit::Success.code())
}

/// `casslab local status`: the nodes, the ring's strangers, the network of a relayed cluster.
fn status(h: &LocalHomeArgs) -> Result<i32> {
    let cluster = cluster_for(h)?;
    let view = cluster.status_view()?;
    out::print(&view.table)?;
    if let Some(network) = &view.network {
        out::print(network)?;
    }
    print_security(&cluster);
    if !view.down_strangers.is_empty() {
        eprintln!(
            "the ring remembers nodes this cluster does not start, and they are down: {}; quorum requests that need them fail. Stop this cluster (`casslab local down`) and start the one its data belongs to, or start afresh with `{}`",
            view.down_strangers.join(", "),
            casslab_local::wipe_command(&cluster.options().home)
        );
    }
    Ok(if view.healthy { Exit::Success } else { Exit::Setup }.code())
}

pub fn local(cmd: LocalCommand) -> Result<i32> {
    match cmd {
        LocalCommand::Up(a) => up(&a),
        LocalCommand::Status(h) => status(&h),
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
            out::print(&String::from_utf8_lossy(&out.stdout))?;
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            Ok(out.status.code().unwrap_or(1))
        }
        LocalCommand::Redis(c) => redis(c),
        LocalCommand::Relay(h) => {
            // the relay's own process: its stderr is its log (`home/relay/relay.log`)
            let log: std::sync::Arc<dyn Fn(&str) + Send + Sync> = std::sync::Arc::new(|line: &str| eprintln!("{line}"));
            casslab_local::relay::serve(&home(&h), log)?;
            Ok(Exit::Success.code())
        }
        LocalCommand::Down { wipe, home: h } => {
            let cluster = cluster_for(&h)?;
            cluster.down(wipe, &mut |line| out::note(line))?;
            Ok(Exit::Success.code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn up_args(flags: &[&str]) -> LocalUpArgs {
        let cli = Cli::try_parse_from(["casslab", "local", "up"].iter().chain(flags)).unwrap();
        match cli.command {
            Command::Local(LocalCommand::Up(a)) => a,
            other => panic!("not local up: {other:?}"),
        }
    }

    #[test]
    fn the_flags_make_one_server_definition_and_leave_out_what_they_do_not_give() {
        assert_eq!(server_of(&up_args(&[])).unwrap(), ServerSpec::default());
        let a = up_args(&[
            "--version",
            "4.1.10",
            "--heap",
            "768M",
            "--gc",
            "zgc",
            "--java-home",
            "/jdk",
            "--build",
            "/b",
            "--jvm-opt=-Xss1m",
            "--set",
            "concurrent_reads=64",
            "--dcs",
            "a:2,b:1",
        ]);
        let spec = server_of(&a).unwrap();
        assert_eq!((spec.version.as_deref(), spec.heap_mb, spec.gc), (Some("4.1.10"), Some(768), Some(Gc::Zgc)));
        assert_eq!((spec.java_home, spec.build), (Some(PathBuf::from("/jdk")), Some(PathBuf::from("/b"))));
        assert_eq!(spec.jvm_options, ["-Xss1m"]);
        assert_eq!(spec.settings.get("concurrent_reads"), Some(&serde_json::json!(64)));
        assert_eq!((spec.nodes, spec.dcs), (None, Some(vec![("a".to_string(), 2), ("b".to_string(), 1)])));
        assert_eq!(server_of(&up_args(&["--nodes", "0"])).unwrap().nodes, Some(1), "at least one node");
        assert!(server_of(&up_args(&["--gc", "cms"])).unwrap_err().to_string().contains("--gc cms"));
    }

    #[test]
    fn a_new_cluster_gets_the_flags_server_and_a_heap_for_its_size() {
        let home = std::env::temp_dir().join(format!("casslab-up-options-{}", std::process::id()));
        let home = home.to_str().unwrap();
        let three = up_options(&up_args(&["--home", home, "--nodes", "3", "--gc", "parallel"])).unwrap();
        assert_eq!(
            (three.nodes(), three.heap_mb(), three.gc(), three.version()),
            (3, casslab_local::default_heap_mb(3), Gc::Parallel, casslab_local::DEFAULT_CASSANDRA_VERSION)
        );
        let dcs = up_options(&up_args(&["--home", home, "--dcs", "a:1,b:1", "--heap", "1G", "--base-address", "127.0.0.91", "--tls"])).unwrap();
        assert_eq!((dcs.nodes(), dcs.dcs().len(), dcs.heap_mb(), dcs.base_address.to_string(), dcs.tls), (2, 2, 1024, "127.0.0.91".to_string(), true));
    }
}
