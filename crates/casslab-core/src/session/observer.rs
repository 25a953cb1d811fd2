//! What a run session reports while it works, to whoever shows it: the binary renders these as
//! progress and messages on the terminal; a test may collect them. The session never prints.
//! Observers are called from the session's task and from the threads that carry out events,
//! so they must be `Send + Sync` and quick.

use crate::engine::TargetInfo;
use crate::events::{EventRecord, EventSpec};
use crate::notice::Notice;
use crate::stats::{IntervalSample, Phase};
use crate::store::{RunId, RunStatus};

/// One thing that happened during a session.
#[derive(Debug)]
pub enum SessionEvent<'a> {
    /// Connected to the server(s) at `hosts`.
    Connected {
        hosts: &'a [String],
        info: &'a TargetInfo,
    },
    /// Something to tell the user: its severity says how much it matters (warnings and the
    /// server view's remarks are also saved in the run's notes).
    Notice(&'a Notice),
    /// The run was begun in the results store as `run`; its time axis (every `start_ms`)
    /// counts from `t0_unix_ms` on the wall clock.
    RunStarted {
        run: RunId,
        workload: &'a str,
        t0_unix_ms: i64,
    },
    PhaseStarted {
        phase: Phase,
        count: Option<u64>,
        warmup_s: f64,
        duration_s: Option<f64>,
        rate_per_s: Option<f64>,
        concurrency: usize,
        /// The run phase's schedule of rate (or of requests in flight), as written.
        schedule: Option<String>,
    },
    /// An interval closed (and was saved).
    Interval(&'a IntervalSample),
    PhaseFinished {
        phase: Phase,
    },
    /// An event of the run's timeline starts being carried out.
    EventStarted {
        spec: &'a EventSpec,
    },
    /// An event of the run's timeline is done.
    EventFinished {
        spec: &'a EventSpec,
        record: &'a EventRecord,
    },
    /// The run is saved with its final status.
    RunFinished {
        run: RunId,
        status: RunStatus,
    },
    /// A step of a `find_max` search starts: a probe at maximum throughput (`rate_per_s`
    /// `None`) or a fixed rate.
    SearchStep {
        step: usize,
        rate_per_s: Option<f64>,
    },
    /// A `find_max` search ramps its rate from `from_per_s` to `to_per_s` (one run) to find
    /// where to bisect; once judged, `bracket` says between which rates.
    SearchRamp {
        from_per_s: f64,
        to_per_s: f64,
        bracket: Option<(f64, f64)>,
    },
    /// A step of a `find_max` search was judged against the SLA.
    SearchJudged {
        step: usize,
        achieved_per_s: f64,
        figure: &'a str,
        met: bool,
    },
    /// casslab's local cluster was restarted to run a workload's server definition.
    ServerApplied {
        workload: &'a str,
        applied: crate::cluster::Applied,
    },
    /// An experiment starts a run of a variant: `step` says which ("unmeasured round",
    /// "load", "repetition 2/3, 4 of 6 measured").
    VariantRun {
        variant: &'a str,
        step: &'a str,
    },
}

/// Receives a session's events.
pub trait Observer: Send + Sync {
    fn on(&self, event: &SessionEvent<'_>);
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {
    fn on(&self, _event: &SessionEvent<'_>) {}
}
