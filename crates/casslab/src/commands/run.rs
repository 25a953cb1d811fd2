//! `casslab run`: resolve the workload and config, make sure there is a cluster (starting the
//! local node when no --hosts are given), run the engine, and save every interval to the
//! store as it arrives; then print the summary and write the requested exports.

use super::{local, results, store_path};
use crate::cli::{LocalHomeArgs, RunArgs};
use crate::progress::Progress;
use anyhow::{Context, Result};
use casslab_core::config::{Credentials, RunConfig, RunEnvironment};
use casslab_core::engine::{self, EngineEvent};
use casslab_core::stats::{OpStats, OpSummary, Phase};
use casslab_core::store::{PhaseSummary, RunId, RunStatus, RunSummary, Store};
use casslab_core::workload::{load_workload, Workload};
use std::io::IsTerminal;

pub fn run(args: RunArgs) -> Result<i32> {
    let (args, opts) = (&args, &args.opts);
    let mut cfg = opts.to_config(&args.workload)?;
    if let Some(sla) = &opts.find_max {
        super::findmax::parse_sla(sla)?;
    }
    let (mut workload, source) = load_workload(&args.workload, &cfg.params)?;
    cfg.workload_source = source;
    cfg.params = workload.params.clone();
    if !opts.no_lint {
        super::lint::print_before_run(&workload, cfg.concurrency, cfg.cluster.dc.as_deref());
    }
    for spec in &opts.events {
        workload.events.push(casslab_core::events::parse_event(spec).map_err(|m| anyhow::anyhow!("--event: {m}"))?);
    }
    let local_target = if cfg.cluster.hosts.is_empty() { Some(local::cluster_for(&opts.local)?) } else { None };
    super::events::check(&workload.events, local_target.as_ref())?;
    let creds = connect_target(&mut cfg, &opts.local)?;
    let store = Store::open(&store_path(&opts.store)).context("cannot open the results store")?;
    if let Some(sla) = &opts.find_max {
        return super::findmax::find_max(sla, opts.max_steps, &cfg, &workload, &creds, &store, &opts.tags);
    }

    let Some((run_id, status)) = execute(&cfg, &workload, &creds, &store, &opts.tags)? else { return Ok(1) };
    let record = store.run(run_id)?;
    if let Some(summary) = &record.summary {
        print!("{}", casslab_core::report::text::run_summary(&record, summary));
        print!("{}", casslab_core::report::text::events_table(&store.events(run_id)?));
        print!("{}", super::server::text_section(&store, run_id));
    }
    results::export(&store, run_id, &opts.export)?;
    eprintln!("saved as run {run_id} in {} (`casslab show {run_id}`)", store_path(&opts.store).display());
    Ok(if status == RunStatus::Interrupted { 130 } else { 0 })
}

/// Fills in the cluster to use — the local one (started if needed) when no --hosts were
/// given — and returns the credentials for it.
pub fn connect_target(cfg: &mut RunConfig, local_args: &LocalHomeArgs) -> Result<Credentials> {
    let mut local_password = None;
    if cfg.cluster.hosts.is_empty() {
        let cluster = local::cluster_for(local_args)?;
        if !cluster.is_running() {
            eprintln!("no --hosts given: starting a local Cassandra node (`casslab local up`); it keeps running after the run, `casslab local down` stops it");
            local::up_with_progress(&cluster)?;
        }
        cfg.cluster.hosts = cluster.contact_points();
        cfg.cluster.local = true;
        super::events::use_local_cluster(&cluster);
        cfg.cluster.local_home = Some(cluster.options().home.clone());
        local_password = local::use_local_security(&cluster, &mut cfg.cluster);
        local::use_local_dc(&cluster, &mut cfg.cluster);
    }
    let password = match local_password {
        Some(p) if std::env::var_os("CASSLAB_PASSWORD").is_none() => Some(p),
        _ => password_for(cfg)?,
    };
    Ok(Credentials { password })
}

/// Runs one workload to the end and saves it: the saved run id and its status, or `None`
/// when it never got as far as connecting.
pub fn execute(cfg: &RunConfig, workload: &Workload, creds: &Credentials, store: &Store, tags: &[String]) -> Result<Option<(RunId, RunStatus)>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(if cfg.threads > 0 { cfg.threads } else { num_cores() })
        .enable_all()
        .build()?;
    rt.block_on(drive(cfg, workload, creds, store, tags))
}

fn num_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

fn password_for(cfg: &RunConfig) -> Result<Option<String>> {
    let Some(user) = &cfg.cluster.user else { return Ok(None) };
    if let Ok(p) = std::env::var("CASSLAB_PASSWORD") {
        return Ok(Some(p));
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("--user {user}: set the password in CASSLAB_PASSWORD (there is no terminal to ask on)");
    }
    Ok(Some(rpassword::prompt_password(format!("password for {user}: "))?))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Runs the engine and consumes its events. Returns the saved run id and its final status, or
/// `None` when the run never got as far as connecting.
async fn drive(
    cfg: &RunConfig,
    workload: &Workload,
    creds: &Credentials,
    store: &Store,
    tags: &[String],
) -> Result<Option<(RunId, RunStatus)>> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ninterrupted: finishing the current interval and saving the run (Ctrl-C again to abort)");
            let _ = stop_tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
    let (cfg2, w2, creds2) = (cfg.clone(), workload.clone(), creds.clone());
    let server = super::server::start(cfg, &workload.keyspace, creds, std::time::Instant::now(), now_ms());
    let engine = tokio::spawn(async move { engine::run(&cfg2, &w2, &creds2, tx, stop_rx).await });

    let started_at = now_ms();
    let mut run_id: Option<RunId> = None;
    let mut summary = RunSummary::default();
    let mut progress = Progress::new();
    let mut store_error: Option<anyhow::Error> = None;
    let mut timeline: Option<super::events::Timeline> = None;
    while let Some(ev) = rx.recv().await {
        match ev {
            EngineEvent::Connected(info) => {
                let env = RunEnvironment {
                    casslab_version: env!("CARGO_PKG_VERSION").to_string(),
                    cassandra_version: info.cassandra_version.clone(),
                    node_count: info.node_count,
                    client_cores: num_cores(),
                    hostname: std::fs::read_to_string("/etc/hostname").ok().map(|s| s.trim().to_string()),
                };
                eprintln!(
                    "connected to {} ({} node{}, Cassandra {})",
                    cfg.cluster.hosts.join(","),
                    info.node_count,
                    if info.node_count == 1 { "" } else { "s" },
                    info.cassandra_version.as_deref().unwrap_or("?")
                );
                run_id = Some(store.begin_run(&workload.name, cfg, &env, tags, started_at)?);
            }
            EngineEvent::Info(m) => {
                progress.clear();
                eprintln!("{m}");
            }
            EngineEvent::Warning(m) => {
                progress.clear();
                eprintln!("warning: {m}");
                summary.notes.push(m);
            }
            EngineEvent::PhaseStarted { phase, count, warmup_s, duration_s, rate_per_s, at_ms } => {
                if phase == Phase::Run && !workload.events.is_empty() {
                    timeline = Some(super::events::Timeline::start(workload.events.clone(), at_ms));
                }
                progress.phase(phase, count, warmup_s + duration_s.unwrap_or(0.0));
                let what = match (phase, count) {
                    (Phase::Load, Some(n)) => format!("load phase: {n} operations"),
                    _ => format!(
                        "run phase: {warmup_s:.0}s warm-up + {:.0}s measured, {}",
                        duration_s.unwrap_or(0.0),
                        match rate_per_s {
                            Some(r) => format!("fixed rate {r:.0}/s (latency from intended start)"),
                            None => format!("max throughput, {} in flight", cfg.concurrency),
                        }
                    ),
                };
                eprintln!("{what}");
            }
            EngineEvent::Interval(s) => {
                for m in server.as_ref().map(|sm| sm.flush(store, run_id)).unwrap_or_default() {
                    progress.clear();
                    eprintln!("note: {m}");
                    summary.notes.push(m);
                }
                progress.interval(&s);
                if let Some(id) = run_id {
                    if let Err(e) = store.add_interval(id, &s) {
                        store_error.get_or_insert(e.into());
                    }
                }
            }
            EngineEvent::PhaseFinished { phase, duration_s, ops, target_rate_per_s } => {
                progress.clear();
                if let Some(id) = run_id {
                    for (name, st) in &ops {
                        store.add_histograms(id, phase, name, st)?;
                    }
                }
                summary.phases.push(phase_summary(phase, duration_s, &ops, target_rate_per_s, &mut summary.notes));
            }
        }
    }
    progress.clear();
    let result = engine.await.context("the engine task failed")?;
    let event_records = match timeline {
        Some(t) => t.finish().await,
        None => super::events::all_skipped(&workload.events),
    };
    if let Some(id) = run_id {
        if !event_records.is_empty() {
            save_events(store, id, &event_records)?;
        }
    }
    if let Some(sm) = server {
        for m in sm.finish(store, run_id).await? {
            eprintln!("note: {m}");
            summary.notes.push(m);
        }
    }
    let Some(id) = run_id else {
        result?;
        return Ok(None);
    };
    let status = match &result {
        Ok(o) if o.interrupted => RunStatus::Interrupted,
        Ok(_) => RunStatus::Completed,
        Err(e) => {
            summary.notes.push(format!("failed: {e}"));
            RunStatus::Failed
        }
    };
    store.finish_run(id, status, &summary, now_ms())?;
    result?;
    if let Some(e) = store_error {
        return Err(e.context("some intervals could not be saved"));
    }
    Ok(Some((id, status)))
}

/// Saves a run's events with the impact each had on its saved intervals.
fn save_events(store: &Store, id: RunId, records: &[casslab_core::events::EventRecord]) -> Result<()> {
    use casslab_core::analysis::impact;
    let points = impact::points(&store.intervals(id)?);
    let impacts = impact::impacts(&points, records, &impact::ImpactSettings::default());
    for (r, i) in records.iter().zip(&impacts) {
        store.add_event(id, r, i.as_ref())?;
    }
    Ok(())
}

fn phase_summary(phase: Phase, duration_s: f64, ops: &[(String, OpStats)], target: Option<f64>, notes: &mut Vec<String>) -> PhaseSummary {
    let mut total = OpStats::default();
    // figures recorded beside operations (`<op>.request`) are not operations of their own
    for (_, s) in ops.iter().filter(|(n, _)| !casslab_core::stats::is_sub_op(n)) {
        total.merge(s);
    }
    let total = OpSummary::of("total", &total, duration_s);
    if let Some(t) = target {
        if total.ops_per_s < t * 0.95 {
            notes.push(format!("target rate {t:.0}/s not kept: achieved {:.0}/s", total.ops_per_s));
        }
    }
    PhaseSummary {
        phase,
        duration_s,
        target_rate_per_s: target,
        ops: ops.iter().map(|(n, s)| OpSummary::of(n, s, duration_s)).collect(),
        total,
    }
}
