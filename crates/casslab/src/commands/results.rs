//! `casslab runs` and `casslab show`: reading saved runs back from the store, printing them
//! and exporting them (JSON, HdrHistogram log). Neither creates a store: a path where no run
//! was saved is a usage error.

use super::{store_path, store_to_read};
use crate::cli::{ExportArgs, StoreArgs};
use crate::exit::{bail_usage, usage, Exit};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::report::hdrlog::write_hdr_log;
use casslab_core::report::run_view::summary_of;
use casslab_core::report::{json, text};
use casslab_core::stats::LatencyKind;
use casslab_core::store::{RunId, Store};
use casslab_core::validity;

pub fn runs(limit: usize, args: &StoreArgs) -> Result<i32> {
    let store = store_to_read(args)?;
    let runs = store.runs(limit)?;
    if runs.is_empty() {
        eprintln!("no saved runs in {} yet; `casslab run ycsb-a` makes one", store_path(args).display());
        return Ok(Exit::Success.code());
    }
    out::print(&text::runs_table(&runs))?;
    Ok(Exit::Success.code())
}

pub fn show(run: &str, export_args: &ExportArgs, args: &StoreArgs) -> Result<i32> {
    let store = store_to_read(args)?;
    let id: RunId = if run == "latest" {
        match store.latest_run()? {
            Some(id) => id,
            None => bail_usage!("no saved runs in {} yet; `casslab run ycsb-a` makes one", store_path(args).display()),
        }
    } else {
        run.parse().map_err(|_| usage(format!("\"{run}\" is not a run id: give a number from `casslab runs`, or latest")))?
    };
    let record = store.run(id)?;
    // a run that did not finish (crashed, or still running) is summed up from its intervals
    match summary_of(&record, &store.intervals(id)?) {
        Some(s) => out::print(&text::run_summary(&record, &s))?,
        None => out::println(&format!("run {id} ({}) has no summary and no saved interval yet: status {}", record.workload, record.status.as_str()))?,
    }
    out::print(&validity::of_run(&store, id)?.text())?;
    out::print(&text::events_table(&store.events(id)?))?;
    out::print(&server_text(&store, id))?;
    export(&store, id, export_args)?;
    Ok(Exit::Success.code())
}

/// The server section of a saved run's terminal summary (empty when nothing was collected).
pub fn server_text(store: &Store, run: RunId) -> String {
    use casslab_core::report::server_view;
    match (store.intervals(run), store.server_samples(run)) {
        (Ok(intervals), Ok(samples)) => {
            let traces = store.traces(run).unwrap_or_default();
            server_view::text_section(&intervals, &samples) + &server_view::traces_text(&traces)
        }
        (Err(e), _) | (_, Err(e)) => format!("\nserver side: cannot read the saved samples: {e}\n"),
    }
}

/// Writes the exports asked for in `args`.
pub fn export(store: &Store, id: RunId, args: &ExportArgs) -> Result<()> {
    if args.json.is_none() && args.hdr_log.is_none() {
        return Ok(());
    }
    let record = store.run(id)?;
    let intervals = store.intervals(id)?;
    if let Some(path) = &args.json {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let validity = validity::of_run(store, id)?;
        json::write_run_json(path, &store.run_data(id)?, Some(&validity)).with_context(|| format!("cannot write {}", path.display()))?;
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
