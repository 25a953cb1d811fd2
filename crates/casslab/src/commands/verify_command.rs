//! `casslab verify WORKLOAD`: a verification pass over the workload's data set, aimed like
//! `run` (the local node or redis-server when no --hosts or --target is given, started if
//! needed), its progress on stderr, its findings on stdout as text or JSON. Exit 1 when a row
//! is not as written or a read failed.

use super::{run, store_path};
use crate::cli::{format_named, parse_params, VerifyArgs};
use crate::exit::{usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::config::{Credentials, RunConfig, CONFIG_VERSION};
use casslab_core::session::verify_pass::{verify_data, PassOptions, PassProgress};
use casslab_core::session::{Lab, Quiet, RunSpec};
use casslab_core::store::{Store, StoreError};
use casslab_core::workload::{load_workload, Consistency, TargetKind};
use std::sync::Arc;

pub fn verify(args: &VerifyArgs) -> Result<i32> {
    let consistency = Consistency::parse(&args.consistency)
        .filter(|c| !c.is_serial())
        .ok_or_else(|| usage(format!("--consistency {}: one of ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE", args.consistency)))?;
    let mut cfg = RunConfig {
        version: CONFIG_VERSION,
        workload: args.workload.clone(),
        params: parse_params(&args.params)?,
        cluster: args.cluster.to_config()?,
        seed: args.seed,
        ..RunConfig::default()
    };
    let (workload, _) = load_workload(&args.workload, &cfg.params)?;
    let creds = if workload.target == TargetKind::Redis {
        if let Some(url) = &args.target {
            cfg.redis = Some(casslab_core::config::RedisConfig { url: url.clone(), tls_ca_file: args.cluster.tls_ca.clone(), ..Default::default() });
        }
        run::aim_redis(&mut cfg, &args.local)?;
        Credentials::redis_from_env()
    } else {
        let local = run::local_target(&cfg, &args.local)?;
        run::connect_target(&mut cfg, local.as_ref())?
    };
    // the records of verified runs; none when no run was saved there
    let store = match Store::open_existing(&store_path(&args.store)) {
        Err(StoreError::Missing { .. }) => Store::open_in_memory()?,
        other => other?,
    };
    let rt = run::runtime(0)?;
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let lab = Lab { credentials: creds, control: None, results: &store, observer: Arc::new(Quiet), stop };
    let spec = RunSpec { config: cfg, workload, tags: Vec::new(), together: None };
    let opts = PassOptions { concurrency: args.concurrency.max(1), consistency };
    let progress = |p: PassProgress| out::note(&format!("verify: {} of {} keys read back", p.done, p.total));
    let report = rt.block_on(verify_data(&lab, &spec, &opts, &progress))?;
    out::print(&format_named(casslab_core::report::format::pass_formats(), "format", &args.format)?.render(&report))?;
    Ok(if report.clean() { Exit::Success } else { Exit::Failed }.code())
}
