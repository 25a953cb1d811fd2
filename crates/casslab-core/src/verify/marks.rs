//! The data set's bookkeeping of who wrote to it last, as the targets keep it (`Target::note`):
//! the keys and values, and what they say. A data set is named by its load's fingerprint — the
//! whole load's, whether one loader loaded it or several shards each loaded a slice.
//!
//! - `written:FP` names the run that wrote to the data set last: `v:TOKEN` when it kept a record
//!   of its writes (saved in the results store under TOKEN), `u:TOKEN` when not, or
//!   `s:N:RUN` when it was run `RUN` of N shards — each shard then names itself under
//!   `written:FP:RUN:I/N`, with `v:` or `u:` as above. A shard's record holds only the keys it
//!   owns, so the records of all N together are the data set's.
//! - `shards:FP` = N: a sharded load's slices are each recorded as loaded under `FP:I/N`.
//!
//! Which source says what the data set holds ([`Source`]) is read from these by
//! `engine::record_trust` (a run going on from it) and `session::verify_pass` (a pass). Pure: no
//! I/O.

/// The key naming the run that wrote to data set `fp` last.
pub fn written_key(fp: &str) -> String {
    format!("written:{fp}")
}

/// The key under which shard `index` of `count` of run `run_id` names itself.
pub fn shard_written_key(fp: &str, run_id: &str, index: u32, count: u32) -> String {
    format!("written:{fp}:{run_id}:{index}/{count}")
}

/// The key saying data set `fp` was loaded in slices by shards (its value: how many).
pub fn shards_key(fp: &str) -> String {
    format!("shards:{fp}")
}

/// The value naming a run that wrote: with its record (`kept`) or without.
pub fn run_mark(kept: bool, token: &str) -> String {
    format!("{}:{token}", if kept { "v" } else { "u" })
}

/// The value naming a sharded run as the last writer.
pub fn sharded_mark(count: u32, run_id: &str) -> String {
    format!("s:{count}:{run_id}")
}

/// What a `written:` value says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// A run that kept a record of its writes, under this token.
    Kept(String),
    /// A run that kept none.
    Unkept,
    /// A sharded run: each shard named itself under [`shard_written_key`].
    Sharded { count: u32, run_id: String },
}

impl Mark {
    /// Reads a value kept under a `written:` key (`None`: not one casslab writes).
    pub fn parse(v: &str) -> Option<Mark> {
        match v.split_once(':')? {
            ("v", token) => Some(Mark::Kept(token.to_string())),
            ("u", _) => Some(Mark::Unkept),
            ("s", rest) => {
                let (count, run_id) = rest.split_once(':')?;
                Some(Mark::Sharded { count: count.parse().ok().filter(|n| *n > 0)?, run_id: run_id.to_string() })
            }
            _ => None,
        }
    }
}

/// What a data set should hold, from its bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Nothing wrote to it since its load: every loaded key written once.
    Load,
    /// The records that runs left (one, or one per shard of a sharded run), by token.
    Records(Vec<String>),
    /// Not known, and why (with what to do).
    Unknown(String),
}

const UNKEPT: &str = "a run that kept no record of its writes (--no-verify, or a run that could not verify) wrote to it after its load";

/// The source that the data set's `written:` value `whole` and, for a sharded writer, each
/// shard's own value (`shard(i)`) say. `own_run`: the run asking, when it is a shard (whose
/// siblings may have marked the data set already: what held before is then lost to it).
pub fn source(whole: Option<&str>, shard: impl Fn(u32, u32, &str) -> Option<String>, own_run: Option<&str>) -> Source {
    let Some(whole) = whole else { return Source::Load };
    match Mark::parse(whole) {
        None => Source::Unknown(format!("its bookkeeping holds {whole:?}, which this casslab does not read: --reload loads it again")),
        Some(Mark::Kept(token)) => Source::Records(vec![token]),
        Some(Mark::Unkept) => Source::Unknown(format!("{UNKEPT}: --reload loads it again")),
        Some(Mark::Sharded { run_id, .. }) if Some(run_id.as_str()) == own_run => {
            Source::Unknown("another shard of this run began writing before this one started: start the shards together (without --start-at)".into())
        }
        Some(Mark::Sharded { count, run_id }) => {
            let mut tokens = Vec::new();
            for i in 0..count {
                match shard(i, count, &run_id).as_deref().and_then(Mark::parse) {
                    Some(Mark::Kept(t)) => tokens.push(t),
                    Some(Mark::Unkept) => return Source::Unknown(format!("{UNKEPT} (shard {i} of {count} of run {run_id}): --reload loads it again")),
                    _ => {
                        return Source::Unknown(format!("shard {i} of {count} of run {run_id}, which wrote to it last, left no mark: --reload loads it again"))
                    }
                }
            }
            Source::Records(tokens)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_back() {
        assert_eq!(Mark::parse(&run_mark(true, "ab-1")), Some(Mark::Kept("ab-1".into())));
        assert_eq!(Mark::parse(&run_mark(false, "ab-1")), Some(Mark::Unkept));
        assert_eq!(Mark::parse(&sharded_mark(3, "r:1")), Some(Mark::Sharded { count: 3, run_id: "r:1".into() }));
        assert_eq!(Mark::parse("s:0:r"), None);
        assert_eq!(Mark::parse("x"), None);
    }

    #[test]
    fn a_sharded_writer_is_the_records_of_every_shard() {
        let none = |_: u32, _: u32, _: &str| None;
        assert_eq!(source(None, none, None), Source::Load);
        assert_eq!(source(Some("v:t"), none, None), Source::Records(vec!["t".into()]));
        assert!(matches!(source(Some("u:t"), none, None), Source::Unknown(w) if w.contains("no record")));
        let shards = |i: u32, n: u32, run: &str| (run == "r7" && n == 2).then(|| run_mark(true, &format!("t{i}")));
        assert_eq!(source(Some("s:2:r7"), shards, None), Source::Records(vec!["t0".into(), "t1".into()]));
        let one_missing = |i: u32, _: u32, _: &str| (i == 0).then(|| run_mark(true, "t0"));
        assert!(matches!(source(Some("s:2:r7"), one_missing, None), Source::Unknown(w) if w.contains("shard 1 of 2 of run r7")));
        assert!(matches!(source(Some("s:2:r7"), shards, Some("r7")), Source::Unknown(w) if w.contains("another shard of this run")));
        assert_eq!(source(Some("s:2:r7"), shards, Some("r8")), Source::Records(vec!["t0".into(), "t1".into()]), "a later sharded run goes on from it");
    }
}
