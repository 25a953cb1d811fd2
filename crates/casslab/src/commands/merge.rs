//! `casslab merge SHARD…`: gathers the shards of a run spread over several loaders (export
//! files, directories of them, run ids or `run-id:NAME` in the store), has the library check
//! and add them up (`casslab_core::merge`), saves the merged run in the store and prints it
//! like `casslab show`, with its loaders.

use super::{results, store_path};
use crate::cli::MergeArgs;
use crate::exit::Exit;
use crate::out;
use anyhow::{Context, Result};
use casslab_core::merge;
use casslab_core::report::text;
use casslab_core::store::Store;

pub fn merge(args: &MergeArgs) -> Result<i32> {
    let path = store_path(&args.store);
    // the store is read only for ids and run-id:, but the merged run is always saved
    let store = Store::open(&path).with_context(|| format!("cannot open the results store {}", path.display()))?;
    let mut shards = Vec::new();
    for source in &args.shards {
        shards.extend(merge::gather(&store, source)?);
    }
    let count = shards.len();
    let merged = merge::merge(shards)?;
    let id = merge::save(&store, &merged).context("cannot save the merged run")?;
    let record = store.run(id)?;
    if let Some(summary) = &record.summary {
        out::print(&text::run_summary(&record, summary))?;
        out::print(&text::events_table(&store.events(id)?))?;
        out::print(&casslab_core::report::saved_run_text::server_text(&store, id))?;
    }
    if let Some(file) = &args.json {
        results::json_to(&store, id, file)?;
    }
    out::note(&format!("merged {count} shards into run {id} in {} (`casslab show {id}`)", path.display()));
    Ok(Exit::Success.code())
}
