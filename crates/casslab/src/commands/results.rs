//! `casslab runs` and `casslab show`: reading saved runs back from the store, printing them
//! (as text, JSON or CSV) and exporting them (JSON, HdrHistogram log), and `runs delete` /
//! `runs tag`, which look after them. Neither creates a store: a path where no run was saved
//! is a usage error.

use super::report::resolve;
use super::{store_path, store_to_read};
use crate::cli::{format_named, ExportArgs, OutputFormat, RunsArgs, RunsCommand, RunsListArgs, StoreArgs};
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::report::format::run_list_formats;
use casslab_core::report::hdrlog::HdrLog;
use casslab_core::report::saved_run_text::saved_run_text;
use casslab_core::report::{csv, json};
use casslab_core::stats::LatencyKind;
use casslab_core::store::{tag_key, RunId, RunRecord, Store, StoreError};
use casslab_core::validity;

pub fn runs(args: RunsArgs) -> Result<i32> {
    match args.command {
        None => list(&args.list),
        Some(RunsCommand::Delete { runs, store }) => delete(&runs, &store),
        Some(RunsCommand::Tag { run, tags, remove, store }) => tag(&run, &tags, &remove, &store),
    }
}

fn list(args: &RunsListArgs) -> Result<i32> {
    let store = store_to_read(&args.store)?;
    let runs: Vec<RunRecord> = store
        .runs(usize::MAX)?
        .into_iter()
        .filter(|r| matches(r, args.workload.as_deref(), &args.tags))
        .take(if args.limit == 0 { usize::MAX } else { args.limit })
        .collect();
    let listing = format_named(run_list_formats(), "format", &args.format)?.render(&runs);
    // a table of no runs is nothing: say why on stderr
    if listing.is_empty() {
        let filtered = args.workload.is_some() || !args.tags.is_empty();
        if filtered {
            out::note("no saved run matches");
        } else {
            out::note(&format!("no saved runs in {} yet; `casslab run ycsb-a` makes one", store_path(&args.store).display()));
        }
    }
    out::print(&listing)?;
    Ok(Exit::Success.code())
}

/// Whether a run is of `workload` (when given) and has every tag of `tags`: `key=value` as
/// written, a bare `key` with any value (or as a plain tag).
fn matches(r: &RunRecord, workload: Option<&str>, tags: &[String]) -> bool {
    workload.is_none_or(|w| r.workload == w || r.config.workload == w)
        && tags.iter().all(|want| r.tags.iter().any(|t| t == want || (!want.contains('=') && tag_key(t) == want)))
}

fn delete(runs: &[String], args: &StoreArgs) -> Result<i32> {
    let store = store_to_read(args)?;
    let mut ids = Vec::new();
    for r in runs {
        let id = resolve(&store, r)?;
        store.run(id)?;
        ids.push(id);
    }
    // every id is checked before anything is deleted
    for id in &ids {
        if store.run(*id)?.status == casslab_core::store::RunStatus::Running {
            return Err(casslab_core::store::StoreError::StillRunning(*id).into());
        }
    }
    for id in ids {
        store.delete_run(id)?;
        out::note(&format!("deleted run {id}"));
    }
    Ok(Exit::Success.code())
}

fn tag(run: &str, tags: &[String], remove: &[String], args: &StoreArgs) -> Result<i32> {
    if tags.is_empty() && remove.is_empty() {
        bail_usage!("runs tag {run}: give tags to set (key=value or a word) or --remove KEY");
    }
    let store = store_to_read(args)?;
    let id = resolve(&store, run)?;
    for key in remove {
        store.remove_tag(id, key)?;
    }
    for t in tags {
        if t.trim().is_empty() {
            bail_usage!("runs tag: an empty tag");
        }
        store.set_tag(id, t.trim())?;
    }
    out::note(&format!("run {id}: tags {}", store.run(id)?.tags.join(", ")));
    Ok(Exit::Success.code())
}

pub fn show(run: &str, format: OutputFormat, export_args: &ExportArgs, args: &StoreArgs) -> Result<i32> {
    let store = store_to_read(args)?;
    let id: RunId = resolve(&store, run)?;
    let record = store.run(id)?;
    match format {
        OutputFormat::Json => json_to(&store, id, &out::stdout_path())?,
        OutputFormat::Csv => {
            let mut rows = Vec::new();
            store.for_each_interval_figures(id, |row| {
                rows.push(row);
                Ok(())
            })?;
            out::print(&csv::intervals_csv(&rows, record.env.clock_t0_unix_ms.unwrap_or(record.started_at_ms)))?
        }
        OutputFormat::Text => out::print(&saved_run_text(&store, &record)?)?,
    }
    export(&store, id, export_args)?;
    Ok(Exit::Success.code())
}

/// Writes the run's JSON export to `path` (`-`: stdout).
pub fn json_to(store: &Store, id: RunId, path: &std::path::Path) -> Result<()> {
    let validity = validity::of_run(store, id)?;
    // the intervals one row at a time, their histograms copied as saved: a long run's decoded
    // histograms would not fit in memory
    let data = store.run_data_but_intervals(id)?;
    out::write_to_file_or_stdout(path, |mut w| {
        json::to_writer_streamed(&mut w, &data, Some(&validity), |row| store.for_each_encoded_interval(id, |iv| Ok(row(&iv)?)).map_err(into_io))
    })
}

/// A store error met while writing an export row by row, as the writer's error.
fn into_io(e: StoreError) -> std::io::Error {
    match e {
        StoreError::Write(e) => e,
        e => std::io::Error::other(e),
    }
}

/// Writes the exports asked for in `args`.
pub fn export(store: &Store, id: RunId, args: &ExportArgs) -> Result<()> {
    if let Some(path) = &args.json {
        json_to(store, id, path)?;
    }
    if let Some(path) = &args.hdr_log {
        let record = store.run(id)?;
        let kind = if args.hdr_service_time { LatencyKind::Service } else { LatencyKind::Intended };
        out::write_to_file_or_stdout(path, |mut w| {
            let mut log = HdrLog::start(&mut w, record.started_at_ms, kind)?;
            store.for_each_encoded_interval(id, |iv| Ok(log.add(&iv)?)).map_err(into_io)
        })?;
    }
    Ok(())
}
