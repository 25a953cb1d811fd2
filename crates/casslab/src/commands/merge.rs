//! `casslab merge SHARD…`: gathers the shards of a run spread over several loaders (export
//! files, directories of them, run ids or `run-id:NAME` in the store), has the library check
//! and add them up (`casslab_core::merge`), saves the merged run in the store and prints it
//! like `casslab show`, with its loaders.

use super::{results, store_path};
use crate::cli::MergeArgs;
use crate::exit::{usage, Exit};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::merge::{self, Shard};
use casslab_core::report::{json, text};
use casslab_core::store::{RunId, Store};
use std::path::Path;

pub fn merge(args: &MergeArgs) -> Result<i32> {
    let path = store_path(&args.store);
    // the store is read only for ids and run-id:, but the merged run is always saved
    let store = Store::open(&path).with_context(|| format!("cannot open the results store {}", path.display()))?;
    let mut shards = Vec::new();
    for source in &args.shards {
        shards.extend(gather(&store, source)?);
    }
    let count = shards.len();
    let merged = merge::merge(shards)?;
    let id = merge::save(&store, &merged).context("cannot save the merged run")?;
    let record = store.run(id)?;
    if let Some(summary) = &record.summary {
        out::print(&text::run_summary(&record, summary))?;
        out::print(&text::events_table(&store.events(id)?))?;
        out::print(&results::server_text(&store, id))?;
    }
    if let Some(file) = &args.json {
        results::json_to(&store, id, file)?;
    }
    out::note(&format!("merged {count} shards into run {id} in {} (`casslab show {id}`)", path.display()));
    Ok(Exit::Success.code())
}

/// The shards one argument names.
fn gather(store: &Store, source: &str) -> Result<Vec<Shard>> {
    if let Some(run_id) = source.strip_prefix("run-id:") {
        let ids = store.shards_of(run_id)?;
        if ids.is_empty() {
            return Err(usage(format!("merge: no shard of run \"{run_id}\" in the store (`casslab runs` lists what is there)")));
        }
        return ids.into_iter().map(|id| from_store(store, id)).collect();
    }
    let p = Path::new(source);
    if p.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(p)
            .with_context(|| format!("cannot read the directory {source}"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(usage(format!("merge: the directory {source} holds no .json exports")));
        }
        return files.iter().map(|f| from_file(f)).collect();
    }
    if p.exists() {
        return Ok(vec![from_file(p)?]);
    }
    match source.parse::<RunId>() {
        Ok(id) => Ok(vec![from_store(store, id)?]),
        Err(_) => Err(usage(format!("merge: {source} is neither an export file, a directory, a run id nor run-id:NAME"))),
    }
}

/// A shard from its export; its rows keep their histograms encoded (one-hour shards fit).
fn from_file(path: &Path) -> Result<Shard> {
    let (data, rows) = json::read_run_json_packed(path)?;
    Ok(Shard { source: path.display().to_string(), data, rows })
}

fn from_store(store: &Store, id: RunId) -> Result<Shard> {
    Ok(Shard::from_store(store, id)?)
}
