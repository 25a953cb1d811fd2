//! The engine's side of verification: when a run's write record can be trusted. A table's
//! record starts from what is known of its rows — loaded by this run (every load write is
//! recorded), loaded by an earlier run and untouched since (each loaded key is marked as written
//! once), or last written by verified runs whose records the results store has (restored: one
//! run's, or every shard's of a sharded run) — and a table whose rows cannot be known is not
//! checked, unless every write to it writes whole rows (its keys are then unchecked until this
//! run writes them). The data set's bookkeeping (`Target::note`, `verify::marks`) says which
//! run wrote to it last and whether it kept a record; a run that writes sets it before its run
//! phase starts — a shard names itself, then, once every shard has passed the common start's
//! barrier, the data set names the sharded run. A shard of a sharded run owns a slice of every
//! verified table's keys (the keys it loads; for a table no load writes, its slice of the
//! first key column's values), draws only those, and saves only those.

use super::load::{data_set, Loaded};
use super::{EngineEvent, Run, Target};
use crate::notice::Notice;
use crate::verify::marks::{self, run_mark, shard_written_key, sharded_mark, Mark, Source};
use crate::verify::record::MAX_KEYS;
use crate::verify::{saved, written_key, VerifyNotice, VerifyRequest};

/// What data set `fp`'s bookkeeping says it holds (`own_run`: the sharded run asking, if any).
pub(crate) async fn data_set_source<T: Target>(target: &T, fp: &str, own_run: Option<&str>) -> Source {
    let unreadable = |e: super::EngineError| Source::Unknown(format!("its bookkeeping cannot be read: {e}"));
    let whole = match target.noted(&written_key(fp)).await {
        Ok(w) => w,
        Err(e) => return unreadable(e),
    };
    let mut shards = Vec::new();
    if let Some(Mark::Sharded { count, run_id }) = whole.as_deref().and_then(Mark::parse) {
        for i in 0..count {
            match target.noted(&shard_written_key(fp, &run_id, i, count)).await {
                Ok(v) => shards.push(v),
                Err(e) => return unreadable(e),
            }
        }
    }
    marks::source(whole.as_deref(), |i, _, _| shards.get(i as usize).cloned().flatten(), own_run)
}

/// Tells what building the verification found, and sets each table's starting point from how
/// the load ended (`loaded`) and the data set's bookkeeping. `fresh`: the keyspace was empty
/// when the run began (created now, or emptied by `--reload`), which a counter table needs.
pub(super) async fn establish<T: Target>(run: &Run<'_, T>, loaded: Option<Loaded>, fresh: bool) {
    let Some(v) = run.target.verifier() else { return };
    for n in &v.notices {
        run.notice(Notice::Verification(n.clone()));
    }
    if !v.on {
        return;
    }
    let set = data_set(run);
    let source = match (&set, loaded) {
        (Some(ds), Some(Loaded::Before)) => Some(data_set_source(&*run.target, &ds.fp, run.shard.map(|s| s.run_id.as_str())).await),
        _ => None,
    };
    // each token's records of the tables, as saved
    let mut restored: Vec<Vec<(String, Vec<u8>)>> = Vec::new();
    if let Some(Source::Records(tokens)) = &source {
        for token in tokens {
            restored.push(records(run, token, v.tables.iter().map(|t| t.name.clone()).collect()).await);
        }
    }
    for (t, table) in v.tables.iter().enumerate() {
        let load = v.loads.iter().find(|(lt, _)| *lt == t).map(|(_, g)| *g);
        // a table's records, one per token (`None`: a token has none of it)
        let bytes: Vec<Option<&Vec<u8>>> = restored.iter().map(|found| found.iter().find(|(name, _)| *name == table.name).map(|(_, b)| b)).collect();
        let decode = || -> Option<String> {
            bytes.iter().flatten().find_map(|b| {
                saved::decode_into(b, &table.record, table.model)
                    .err()
                    .map(|e| format!("cannot go on from the record of the run that wrote to it last: {e}; --reload loads it again"))
            })
        };
        let why: Option<String> = match (load, loaded, &source) {
            _ if table.counters.is_some() && !fresh => {
                Some("its counters hold what earlier runs added, which no record keeps: --reload, or a keyspace of its own".into())
            }
            _ if table.counters.is_some() => None,
            (Some(_), Some(Loaded::Now), _) => None,
            (Some(g), Some(Loaded::Before), Some(Source::Load)) => {
                if let Some(ds) = &set {
                    for i in ds.first..ds.first + ds.count {
                        if let Some(k) = table.index(&[g.wrapping_add(i as i64)]) {
                            table.record.mark_loaded(k);
                        }
                    }
                }
                None
            }
            (Some(_), Some(Loaded::Before), Some(Source::Records(_))) if bytes.iter().any(Option::is_none) => {
                Some("the run that wrote to it last kept its record in another results store (or it was deleted): --reload, or use that store".into())
            }
            (Some(_), Some(Loaded::Before), Some(Source::Records(_))) => decode(),
            (Some(_), Some(Loaded::Before), Some(Source::Unknown(why))) => Some(why.clone()),
            (Some(_), _, _) => Some("--skip-load: what it holds is not known".into()),
            // no load writes it: what earlier verified runs wrote is known from their records
            (None, _, Some(Source::Records(_))) if bytes.iter().any(Option::is_some) => {
                decode().or_else(|| (!table.full_rows).then(|| "no load writes it, and its writes do not write whole rows".into()))
            }
            (None, _, _) => (!table.full_rows).then(|| "no load writes it, and its writes do not write whole rows".into()),
        };
        match why {
            None => {
                v.set_proven(t);
                let keys_known = table.record.settled().count() as u64;
                run.notice(Notice::Verification(VerifyNotice::Checking {
                    table: table.name.clone(),
                    keys_known,
                    record_bytes: table.record.bytes(),
                    reads: v.reads_checked,
                }));
            }
            Some(_) if load.is_none() && table.full_rows && table.counters.is_none() => v.set_proven(t),
            Some(why) => {
                v.stop_checking(t);
                run.notice(Notice::Verification(VerifyNotice::NotChecked { table: table.name.clone(), why, reads: v.reads_checked }));
            }
        }
        // a shard draws only its own keys: those it loads, or its slice of the first key's values
        if let Some(s) = run.shard.filter(|s| s.count > 1) {
            match (load, &set) {
                (Some(g), Some(ds)) => v.set_owned(t, g.wrapping_add(ds.first as i64), ds.count),
                _ => {
                    let part = &table.key[0];
                    let (first, count) = s.slice(part.span.unwrap_or(MAX_KEYS));
                    v.set_owned(t, part.base.wrapping_add(first as i64), count);
                }
            }
        }
    }
}

/// Records, before the run phase writes, that this run writes to the data set and whether it
/// keeps a record of it (a shard: under its own name; see [`mark_sharded`]).
pub(super) async fn mark_run<T: Target>(run: &Run<'_, T>) {
    let Some(v) = run.target.verifier() else { return };
    if !v.run_writes {
        return;
    }
    if let Some(ds) = data_set(run) {
        // a record is kept only of tables whose rows were known at the start
        let kept = v.on && (0..v.tables.len()).all(|t| v.is_proven(t));
        let value = run_mark(kept, &run.verify.token);
        let key = match run.shard {
            Some(s) => shard_written_key(&ds.fp, &s.run_id, s.index, s.count),
            None => written_key(&ds.fp),
        };
        let _ = run.target.note(&key, &value).await;
    }
}

/// Records that a sharded run writes to the data set: once every shard has passed the common
/// start's barrier (each went on from what the data set held before), before this one writes.
pub(super) async fn mark_sharded<T: Target>(run: &Run<'_, T>) {
    let (Some(v), Some(s)) = (run.target.verifier(), run.shard) else { return };
    if let (true, Some(ds)) = (v.run_writes, data_set(run)) {
        let _ = run.target.note(&written_key(&ds.fp), &sharded_mark(s.count, &s.run_id)).await;
    }
}

/// The records the run named `token` saved for `tables`, asked of whoever keeps them.
async fn records<T: Target>(run: &Run<'_, T>, token: &str, tables: Vec<String>) -> Vec<(String, Vec<u8>)> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    run.send(EngineEvent::Verify(VerifyRequest::Records { token: token.to_string(), tables, reply }));
    answer.await.unwrap_or_default()
}
