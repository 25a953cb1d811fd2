//! The engine's side of verification: when a run's write record can be trusted. A table's
//! record starts from what is known of its rows — loaded by this run (every load write is
//! recorded), loaded by an earlier run and untouched since (each loaded key is marked as written
//! once), or last written by a verified run whose record the results store has (restored) —
//! and a table whose rows cannot be known is not checked, unless every write to it writes
//! whole rows (its keys are then unchecked until this run writes them). The data set's
//! bookkeeping (`Target::note`) says which run wrote to it last and whether it kept a record;
//! a run that writes sets it before its run phase starts. A shard of a sharded run owns the keys
//! it loads and draws only those.

use super::load::Loaded;
use super::{EngineEvent, Run, Target};
use crate::notice::Notice;
use crate::verify::{saved, written_key, VerifyNotice, VerifyRequest};

/// Tells what building the verification found, and sets each table's starting point from how
/// the load ended (`loaded`) and the data set's bookkeeping.
pub(super) async fn establish<T: Target>(run: &Run<'_, T>, loaded: Option<Loaded>) {
    let Some(v) = run.target.verifier() else { return };
    for n in &v.notices {
        run.notice(Notice::Verification(n.clone()));
    }
    if !v.on {
        return;
    }
    let set = super::load::data_set(run);
    let marker = match &set {
        Some((fp, ..)) => run.target.noted(&written_key(fp)).await.ok().flatten(),
        None => None,
    };
    let restored = match marker.as_deref().and_then(|m| m.strip_prefix("v:")) {
        Some(token) if loaded == Some(Loaded::Before) => Some(records(run, token, v.tables.iter().map(|t| t.name.clone()).collect()).await),
        _ => None,
    };
    for (t, table) in v.tables.iter().enumerate() {
        let load = v.loads.iter().find(|(lt, _)| *lt == t).map(|(_, g)| *g);
        let why: Option<String> = match (load, loaded) {
            (Some(_), Some(Loaded::Now)) => None,
            (Some(g), Some(Loaded::Before)) => match (marker.as_deref(), &restored) {
                (None, _) => {
                    if let Some((_, first, count)) = &set {
                        let base = g;
                        for i in *first..first + count {
                            if let Some(k) = table.index(&[base.wrapping_add(i as i64)]) {
                                table.record.mark_loaded(k);
                            }
                        }
                    }
                    None
                }
                (Some(_), Some(found)) => match found.iter().find(|(name, _)| *name == table.name) {
                    Some((_, bytes)) => saved::decode_into(bytes, &table.record, table.model)
                        .err()
                        .map(|e| format!("cannot go on from the record of the run that wrote to it last: {e}; --reload loads it again")),
                    None => {
                        Some("the run that wrote to it last kept its record in another results store (or it was deleted): --reload, or use that store".into())
                    }
                },
                (Some(_), None) => Some(
                    "a run that kept no record of its writes (--no-verify, or a run that could not verify) wrote to it after its load: --reload loads it again"
                        .into(),
                ),
            },
            (Some(_), _) => Some("--skip-load: what it holds is not known".into()),
            (None, _) => (!table.full_rows).then(|| "no load writes it, and its writes do not write whole rows".into()),
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
            Some(_) if load.is_none() && table.full_rows => v.set_proven(t),
            Some(why) => {
                v.stop_checking(t);
                run.notice(Notice::Verification(VerifyNotice::NotChecked { table: table.name.clone(), why, reads: v.reads_checked }));
            }
        }
        // a shard draws only the keys it loads
        if let (Some(g), Some(s), Some((_, first, count))) = (load, run.shard, &set) {
            if s.count > 1 {
                v.set_owned(t, g.wrapping_add(*first as i64), *count);
            }
        }
    }
}

/// Records, before the run phase writes, that this run writes to the data set and whether it
/// keeps a record of it.
pub(super) async fn mark_run<T: Target>(run: &Run<'_, T>) {
    let Some(v) = run.target.verifier() else { return };
    if !v.run_writes {
        return;
    }
    if let Some((fp, ..)) = super::load::data_set(run) {
        // a record is kept only of tables whose rows were known at the start
        let kept = v.on && (0..v.tables.len()).all(|t| v.is_proven(t));
        let value = format!("{}:{}", if kept { "v" } else { "u" }, run.verify.token);
        let _ = run.target.note(&written_key(&fp), &value).await;
    }
}

/// The records the run named `token` saved for `tables`, asked of whoever keeps them.
async fn records<T: Target>(run: &Run<'_, T>, token: &str, tables: Vec<String>) -> Vec<(String, Vec<u8>)> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    run.send(EngineEvent::Verify(VerifyRequest::Records { token: token.to_string(), tables, reply }));
    answer.await.unwrap_or_default()
}
