//! The shards one argument of `casslab merge` names: an export file, a directory of exports
//! (its `.json` files, in name order), a run id in the store, or `run-id:NAME` (every shard of
//! that run saved in the store).

use super::Shard;
use crate::report::json::{read_run_json_packed, ExportError};
use crate::store::{RunId, Store, StoreError};
use std::path::Path;

/// Why an argument names no shard to merge.
#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    #[error("merge: no shard of run \"{0}\" in the store (`casslab runs` lists what is there)")]
    NoShardOf(String),
    #[error("merge: the directory {0} holds no .json exports")]
    EmptyDirectory(String),
    #[error("merge: cannot read the directory {0}: {1}")]
    Directory(String, std::io::Error),
    #[error("merge: {0} is neither an export file, a directory, a run id nor run-id:NAME")]
    Unknown(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Export(#[from] ExportError),
}

/// The shards `source` names.
pub fn gather(store: &Store, source: &str) -> Result<Vec<Shard>, GatherError> {
    if let Some(run_id) = source.strip_prefix("run-id:") {
        let ids = store.shards_of(run_id)?;
        if ids.is_empty() {
            return Err(GatherError::NoShardOf(run_id.to_string()));
        }
        return Ok(ids.into_iter().map(|id| Shard::from_store(store, id)).collect::<Result<_, _>>()?);
    }
    let p = Path::new(source);
    if p.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(p)
            .map_err(|e| GatherError::Directory(source.to_string(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(GatherError::EmptyDirectory(source.to_string()));
        }
        return files.iter().map(|f| from_file(f)).collect();
    }
    if p.exists() {
        return Ok(vec![from_file(p)?]);
    }
    match source.parse::<RunId>() {
        Ok(id) => Ok(vec![Shard::from_store(store, id)?]),
        Err(_) => Err(GatherError::Unknown(source.to_string())),
    }
}

/// A shard from its export; its rows keep their histograms encoded (one-hour shards fit).
fn from_file(path: &Path) -> Result<Shard, GatherError> {
    let (data, rows) = read_run_json_packed(path)?;
    Ok(Shard { source: path.display().to_string(), data, rows })
}
