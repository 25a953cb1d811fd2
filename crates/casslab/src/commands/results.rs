//! `casslab runs` and `casslab show`: reading saved runs back from the store, printing them
//! and exporting them (JSON, HdrHistogram log).

use super::store_path;
use crate::cli::{ExportArgs, StoreArgs};
use anyhow::{Context, Result};
use casslab_core::report::hdrlog::write_hdr_log;
use casslab_core::report::{json, text};
use casslab_core::stats::LatencyKind;
use casslab_core::store::{RunId, Store};

fn open(args: &StoreArgs) -> Result<Store> {
    let path = store_path(args);
    Store::open(&path).with_context(|| format!("cannot open the results store {}", path.display()))
}

pub fn runs(limit: usize, args: &StoreArgs) -> Result<i32> {
    let store = open(args)?;
    let runs = store.runs(limit)?;
    if runs.is_empty() {
        eprintln!("no saved runs in {} yet; `casslab run ycsb-a` makes one", store_path(args).display());
        return Ok(0);
    }
    print!("{}", text::runs_table(&runs));
    Ok(0)
}

pub fn show(run: &str, export_args: &ExportArgs, args: &StoreArgs) -> Result<i32> {
    let store = open(args)?;
    let id: RunId = if run == "latest" {
        store.latest_run()?.context("no saved runs yet")?
    } else {
        run.parse().with_context(|| format!("\"{run}\" is not a run id (see `casslab runs`)"))?
    };
    let record = store.run(id)?;
    match &record.summary {
        Some(s) => print!("{}", text::run_summary(&record, s)),
        None => println!("run {id} ({}) has no summary: status {:?} (it may still be running, or it crashed; its intervals are saved)", record.workload, record.status),
    }
    print!("{}", text::events_table(&store.events(id)?));
    print!("{}", super::server::text_section(&store, id));
    export(&store, id, export_args)?;
    Ok(0)
}

/// Writes the exports asked for in `args`.
pub fn export(store: &Store, id: RunId, args: &ExportArgs) -> Result<()> {
    if args.json.is_none() && args.hdr_log.is_none() {
        return Ok(());
    }
    let record = store.run(id)?;
    let intervals = store.intervals(id)?;
    if let Some(path) = &args.json {
        let hists = store.histograms(id)?;
        json::write_run_json(path, &record, &intervals, &hists).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.hdr_log {
        let kind = if args.hdr_service_time { LatencyKind::Service } else { LatencyKind::Intended };
        let mut f = std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?);
        write_hdr_log(&mut f, record.started_at_ms, &intervals, kind).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
