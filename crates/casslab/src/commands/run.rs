//! `casslab run`: resolve the workload and config, aim at a cluster (starting the local node
//! when no --hosts are given) or, for a workload of Redis commands, at a Redis server
//! (starting casslab's local redis-server when no --target is given), hand the run to the library's run session (or its find-max
//! search), and print what it saved: the summary, the events' impact, the server side, and
//! the requested exports.

use super::{live_view, local, results, store_path};
use crate::cli::{LocalHomeArgs, RunArgs};
use crate::exit::{usage, Exit};
use crate::out;
use crate::terminal::Terminal;
use anyhow::{Context, Result};
use casslab_core::cluster::ClusterControl;
use casslab_core::config::{Credentials, RedisConfig, RunConfig};
use casslab_core::session::{self, check_events, check_rate_events, findmax, Lab, RunSpec};
use casslab_core::store::{RunId, RunStatus, Store};
use casslab_core::workload::{load_workload, TargetKind};
use casslab_local::LocalCluster;
use casslab_local::LocalControl;
use std::io::IsTerminal;
use std::sync::Arc;

pub fn run(args: RunArgs) -> Result<i32> {
    let (args, opts) = (&args, &args.opts);
    let mut cfg = opts.to_config(&args.workload)?;
    let sla = opts.find_max.as_deref().map(findmax::parse_sla).transpose()?;
    let (mut workload, source) = load_workload(&args.workload, &cfg.params)?;
    cfg.workload_source = source;
    cfg.params = workload.params.clone();
    if cfg.shard.as_ref().is_some_and(|s| s.run_id.is_empty()) {
        let id = casslab_core::engine::default_shard_run_id(&cfg);
        if let Some(shard) = cfg.shard.as_mut() {
            shard.run_id = id;
        }
    }
    let is_redis = workload.target == TargetKind::Redis;
    if !opts.no_lint && !is_redis {
        super::lint::print_before_run(&workload, cfg.concurrency, cfg.cluster.dc.as_deref());
    }
    for spec in &opts.events {
        workload.events.push(casslab_core::events::parse_event(spec).map_err(|m| usage(format!("--event: {m}")))?);
    }
    // a Redis workload needs no Cassandra: its server is --target or casslab's redis-server;
    // a target inside casslab (`--target instant`) needs no server at all
    let local = if is_redis || cfg.in_process.is_some() { None } else { local_target(&cfg, &opts.local)?.map(|c| Arc::new(LocalControl::new(c))) };
    check_events(&workload.events, local.as_deref().map(|c| c as &dyn ClusterControl))?;
    let has_rate =
        session::with_workload_load(cfg.clone(), &workload).rate.is_some() && workload.run.as_ref().is_none_or(|r| r.replay.is_none()) && sla.is_none();
    check_rate_events(&workload.events, has_rate)?;
    let creds = if cfg.in_process.is_some() {
        Credentials::default()
    } else if is_redis {
        aim_redis(&mut cfg, &opts.local)?;
        Credentials::redis_from_env()
    } else {
        connect_target(&mut cfg, local.as_ref().map(|c| c.cluster()).as_ref())?
    };
    let store = Arc::new(Store::open(&store_path(&opts.store)).context("cannot open the results store")?);
    let rt = runtime(cfg.threads)?;
    let live = live_view::Live::new(Arc::new(Terminal::new()), opts)?;
    if let Some(addr) = opts.metrics_listen {
        live.serve(&rt, addr)?;
        out::note(&format!("live figures for Prometheus at http://{addr}/metrics"));
    }
    let lab =
        Lab { credentials: creds, control: local.map(|c| c as Arc<dyn ClusterControl>), results: &store, observer: Arc::new(live), stop: stop_on_ctrl_c(&rt) };
    let spec = RunSpec { config: cfg, workload, tags: opts.tags.clone(), together: None };
    if let Some(sla) = sla {
        let search = if opts.ramp_first {
            rt.block_on(findmax::find_max_ramped(&lab, &spec, &sla, opts.max_steps))?
        } else {
            rt.block_on(findmax::find_max(&lab, &spec, &sla, opts.max_steps))?
        };
        out::print(&casslab_core::report::findmax_text::search_text(&search))?;
        return Ok(if search.interrupted { Exit::Interrupted } else { Exit::Success }.code());
    }

    let saved = rt.block_on(session::run(&lab, &spec))?;
    // `--stream -` has stdout: the summary stays off it
    if !opts.stream.as_deref().is_some_and(out::is_stdout) {
        print_saved(&store, saved.run)?;
    }
    results::export(&store, saved.run, &opts.export)?;
    if let Some(dir) = &opts.profile_out {
        super::report::profile_out(&store, saved.run, dir)?;
    }
    out::note(&format!("saved as run {} in {} (`casslab show {}`)", saved.run, store_path(&opts.store).display(), saved.run));
    if saved.status == RunStatus::Interrupted {
        return Ok(Exit::Interrupted.code());
    }
    if let Some(failed) = casslab_core::report::data::expectation_failed(&spec.workload, &saved.summary) {
        out::warn(&failed);
        return Ok(Exit::Failed.code());
    }
    Ok(Exit::Success.code())
}

/// A saved run's summary, events and server side, as `run` prints them at its end (nothing
/// when the run saved no summary).
fn print_saved(store: &Store, run: RunId) -> Result<()> {
    let record = store.run(run)?;
    if record.summary.is_some() {
        out::print(&casslab_core::report::saved_run_text::saved_run_text(store, &record)?)?;
    }
    Ok(())
}

/// The local cluster a run without --hosts is aimed at (as the last `local up` left it, or a
/// default single node); none for --hosts.
pub fn local_target(cfg: &RunConfig, local_args: &LocalHomeArgs) -> Result<Option<LocalCluster>> {
    if cfg.cluster.hosts.is_empty() {
        Ok(Some(local::cluster_for(local_args)?))
    } else {
        Ok(None)
    }
}

/// Aims `cfg` at the local cluster when there is one (starting it if needed) and returns the
/// credentials to log in with.
pub fn connect_target(cfg: &mut RunConfig, local: Option<&LocalCluster>) -> Result<Credentials> {
    let mut local_password = None;
    if let Some(cluster) = local {
        if !cluster.is_running() {
            out::note("no --hosts given: starting a local Cassandra node (`casslab local up`); it keeps running after the run, `casslab local down` stops it");
            local::up_with_progress(cluster)?;
        }
        // a run killed before its heal left its faults in force: this run starts without them
        cluster.heal_left_faults(&mut |line| out::note(line))?;
        local_password = cluster.aim_client(&mut cfg.cluster);
    }
    let password = match local_password {
        Some(p) if std::env::var_os("CASSLAB_PASSWORD").is_none() => Some(p),
        _ => password_for(cfg)?,
    };
    Ok(Credentials { password, ..Credentials::from_env() })
}

/// Aims `cfg` at the Redis server of a Redis workload: `--target` as given, else casslab's
/// local redis-server, started if it is not running (it keeps running after the run).
pub fn aim_redis(cfg: &mut RunConfig, local_args: &LocalHomeArgs) -> Result<()> {
    if cfg.redis.is_some() {
        return Ok(());
    }
    let server = local::redis_for(local_args)?;
    if !server.is_running() {
        out::note("no --target given: starting casslab's local redis-server (`casslab local redis up`); it keeps running after the run, `casslab local redis down` stops it");
        server.up(&mut |line| out::note(line))?;
    }
    cfg.redis = Some(RedisConfig {
        url: server.url(),
        tls_ca_file: None,
        connections: cfg.cluster.connections_per_host.max(1),
        request_timeout_ms: cfg.cluster.request_timeout_ms,
        local: true,
    });
    Ok(())
}

/// The runtime the runs of a command share: `--threads` threads, else half the cores (at
/// least one; see `config::default_threads`), never fewer than a run's engine workers.
pub fn runtime(threads: usize) -> Result<tokio::runtime::Runtime> {
    let threads = if threads > 0 { threads } else { casslab_core::config::default_threads() };
    Ok(tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build()?)
}

/// A stop signal that turns true at the first Ctrl-C (the current run ends cleanly and is
/// saved as interrupted); a second Ctrl-C aborts.
pub fn stop_on_ctrl_c(rt: &tokio::runtime::Runtime) -> tokio::sync::watch::Receiver<bool> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ninterrupted: finishing the current interval and saving the run (Ctrl-C again to abort)");
            let _ = stop_tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                crate::abort(crate::exit::Exit::Interrupted);
            }
        }
    });
    stop_rx
}

fn password_for(cfg: &RunConfig) -> Result<Option<String>> {
    let Some(user) = &cfg.cluster.user else { return Ok(None) };
    if let Ok(p) = std::env::var("CASSLAB_PASSWORD") {
        return Ok(Some(p));
    }
    if !std::io::stdin().is_terminal() {
        return Err(usage(format!("--user {user}: set the password in CASSLAB_PASSWORD (there is no terminal to ask on)")));
    }
    Ok(Some(rpassword::prompt_password(format!("password for {user}: "))?))
}
