//! What the library tells the people running it that is neither a result nor an error: one
//! typed [`Notice`] per thing that can happen (a load skipped, a rate not kept, the run
//! phase's common start), each with its [`Severity`]. The engine and the run session emit
//! notices as data; whoever shows them (the binary's terminal, a test) decides how. A notice's
//! `Display` is its sentence, the one a run's saved notes keep. Remarks of the server view and
//! progress lines of the cluster control arrive as text from the subsystems that word them,
//! and say so by their variant.

use std::fmt;

/// How much a notice matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Something the user should know that is not a problem.
    Info,
    /// A remark of the server view, tracing or on-disk figures (saved in the run's notes).
    Note,
    /// Something that may make the results less useful; the run goes on (saved in its notes).
    Warning,
}

/// One thing worth telling.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The target created the workload's keyspace.
    KeyspaceCreated { keyspace: String },
    /// `--reload` emptied the workload's tables.
    Truncated { keyspace: String },
    /// `--skip-load`.
    LoadSkippedByFlag,
    /// The same data set is already loaded.
    AlreadyLoaded { keyspace: String, description: String },
    /// Some load operations failed: the data set is incomplete.
    LoadIncomplete { failed: u64 },
    /// A shard waits at the barrier for the others.
    WaitingAtBarrier { shard: u32, shards: u32, run_id: String },
    /// The loaders of a sharded run start their run phase together at `at_unix_ms`.
    CommonStart { at_unix_ms: i64, clock_offset_ms: Option<f64> },
    /// A fixed rate is not kept: `behind` operations are behind schedule.
    RateBehind { rate_per_s: f64, behind: u64, concurrency: usize },
    /// The first error of a kind for an operation.
    FirstError { op: String, kind: &'static str, message: String },
    /// Requests still in flight when a phase ended were abandoned.
    Abandoned,
    /// `--rate` was given to a workload that replays its own schedule.
    RateIgnoredForReplay,
    /// An experiment's measured order.
    MeasuredOrder { order: &'static str, seed: Option<u64>, variants: Vec<String> },
    /// A sequential experiment fixed its horizon after its first block: `max_blocks` fit its
    /// budget at `block_s` a block (`short`: fewer than its first look needs, which it runs
    /// anyway).
    Horizon { block_s: f64, max_blocks: usize, budget_s: f64, short: bool },
    /// A sequential experiment looked after `blocks` blocks: the judged figures not settled
    /// at `precision` yet, with their half-widths.
    Look { blocks: usize, max_blocks: usize, precision: f64, unsettled: Vec<String> },
    /// What settling the cluster before an experiment's measured runs did.
    Settled(String),
    /// An experiment measures its variants at the same time: what they share, in words.
    Together { words: String },
    /// An experiment asked to measure its variants at the same time cannot: why, in words.
    NotTogether { why: String },
    /// A remark of the server view (collector, tracing, on-disk figures), worded by it.
    Server(String),
    /// A progress line of the cluster control (a restart, a check), worded by it.
    Cluster(String),
    /// What verification checks, and what it cannot.
    Verification(crate::verify::VerifyNotice),
}

impl Notice {
    pub fn severity(&self) -> Severity {
        match self {
            Notice::LoadIncomplete { .. } | Notice::RateBehind { .. } | Notice::FirstError { .. } | Notice::Abandoned | Notice::RateIgnoredForReplay => {
                Severity::Warning
            }
            Notice::Server(_) => Severity::Note,
            Notice::Verification(v) if v.is_warning() => Severity::Warning,
            Notice::NotTogether { .. } => Severity::Warning,
            _ => Severity::Info,
        }
    }

    /// Whether the run keeps it in its saved notes.
    pub fn is_saved(&self) -> bool {
        self.severity() >= Severity::Note
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::KeyspaceCreated { keyspace } => write!(f, "created keyspace {keyspace}"),
            Notice::Truncated { keyspace } => write!(f, "truncated the tables of {keyspace} for --reload"),
            Notice::LoadSkippedByFlag => write!(f, "load phase skipped (--skip-load)"),
            Notice::AlreadyLoaded { keyspace, description } => {
                write!(f, "load phase skipped: the same data is already in {keyspace} ({description}); --reload loads it again")
            }
            Notice::LoadIncomplete { failed } => {
                write!(f, "{failed} load operations failed; the data set is incomplete and will be loaded again next time")
            }
            Notice::WaitingAtBarrier { shard, shards, run_id } => {
                write!(f, "shard {shard} of {shards}: waiting at the barrier of run \"{run_id}\" for the other shards")
            }
            Notice::CommonStart { at_unix_ms, clock_offset_ms } => {
                write!(f, "the run phase starts at {} UTC", crate::units::utc(*at_unix_ms))?;
                match clock_offset_ms {
                    Some(o) => write!(f, "; this loader's clock is {o:+.1} ms off the cluster's"),
                    None => Ok(()),
                }
            }
            Notice::RateBehind { rate_per_s, behind, concurrency } => write!(
                f,
                "cannot keep the rate of {rate_per_s:.0}/s: {behind} operations are behind schedule; latency is measured from their intended start, so it grows. Raise --concurrency (now {concurrency}; it must exceed rate × latency) or check whether the client is saturated"
            ),
            Notice::FirstError { op, kind, message } => write!(f, "{op}: first {kind} error (counted, the run goes on): {message}"),
            Notice::Abandoned => write!(f, "some requests were still in flight when the phase ended; they were abandoned"),
            Notice::RateIgnoredForReplay => write!(f, "--rate is ignored: the workload replays its own schedule"),
            Notice::MeasuredOrder { order, seed, variants } => {
                write!(f, "measured order ({order}")?;
                if let Some(s) = seed {
                    write!(f, ", seed {s}")?;
                }
                write!(f, "): {}", variants.join(" "))
            }
            Notice::Horizon { block_s, max_blocks, budget_s, short } => {
                write!(f, "a block takes {block_s:.0} s: at most {max_blocks} blocks fit the budget of {:.0} min", budget_s / 60.0)?;
                if *short {
                    write!(f, " (fewer than the first look needs; it runs to that look anyway: raise --budget)")?;
                }
                Ok(())
            }
            Notice::Look { blocks, max_blocks, precision, unsettled } => {
                write!(f, "look after {blocks} of at most {max_blocks} blocks: ")?;
                if unsettled.is_empty() {
                    write!(f, "every judged figure settled")
                } else {
                    write!(f, "not yet within ±{:.1}%: {}", precision * 100.0, unsettled.join(", "))
                }
            }
            Notice::Settled(text) | Notice::Server(text) | Notice::Cluster(text) => f.write_str(text),
            Notice::Together { words } => write!(f, "at the same time: {words}"),
            Notice::NotTogether { why } => write!(f, "the variants run one after the other, not at the same time: {why}"),
            Notice::Verification(v) => v.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_read_as_the_saved_notes_did() {
        let n = Notice::RateBehind { rate_per_s: 5000.0, behind: 300, concurrency: 4 };
        assert_eq!(n.severity(), Severity::Warning);
        assert!(n.to_string().starts_with("cannot keep the rate of 5000/s: 300 operations are behind schedule;"), "{n}");
        let start = Notice::CommonStart { at_unix_ms: 0, clock_offset_ms: Some(1.25) };
        assert_eq!(start.to_string(), "the run phase starts at 1970-01-01 00:00:00 UTC; this loader's clock is +1.2 ms off the cluster's");
        let order = Notice::MeasuredOrder { order: "counterbalanced", seed: None, variants: vec!["a".into(), "b".into()] };
        assert_eq!(order.to_string(), "measured order (counterbalanced): a b");
        assert!(!order.is_saved() && Notice::Server("x".into()).is_saved() && Notice::Abandoned.is_saved());
    }
}
