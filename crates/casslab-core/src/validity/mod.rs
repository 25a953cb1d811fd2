//! Whether a saved run's figures can be trusted: a verdict (valid, suspect, invalid) with the
//! reasons and the figures behind them, computed from what the run recorded — its intervals
//! (operations started late and the largest start lag, achieved against target rate, errors,
//! reads that returned no row), the operations due by the end and never started, the client's
//! CPU among its server samples, its config and its status. A run can look fine and still measure the client rather than the cluster: a client
//! behind its schedule, a saturated client, reads of keys never loaded. The verdict is shown
//! with every run (summary, `show`, reports, JSON) and [`may_compare`] is the one rule
//! `compare`, its gates and experiments apply: an invalid run is refused unless allowed.
//! Rendering is `validity_text.rs`; nothing here prints.

mod validity_text;

use crate::server::{metric, ServerSample, CLIENT};
use crate::stats::{is_sub_op, Phase};
use crate::store::{IntervalFigures, RunId, RunRecord, RunStatus, Store, StoreError, StoredInterval};
use serde::Serialize;

/// Share of operations started late (over `stats::LATE_NS`) from which a fixed-rate run is
/// suspect / invalid. A busy machine's wake-up jitter starts a fair share a few ms late (up to
/// a quarter, measured on a shared 2-core machine at a load of 8); a client short of
/// concurrency starts nearly all late, by ever more.
const LATE_SUSPECT: f64 = 0.05;
const LATE_INVALID: f64 = 0.50;
/// A start lag from which a fixed-rate run is suspect whatever the share, and from which it
/// is invalid with at least [`LATE_SUSPECT`] of its operations late, in ms.
const LAG_SUSPECT_MS: f64 = 500.0;
const LAG_INVALID_MS: f64 = 1000.0;
/// Achieved rate, as a share of the target, below which a run is suspect / invalid.
const RATE_SUSPECT: f64 = 0.95;
const RATE_INVALID: f64 = 0.80;
/// Share of its usable cores from which the client counts as saturated in a sample (its CPU
/// demand: used plus waited for), and the share of samples saturated from which a run is
/// suspect / invalid.
const CPU_BUSY: f64 = 0.90;
const CPU_SUSPECT: f64 = 0.20;
const CPU_INVALID: f64 = 0.75;
/// Share of failed operations from which a run is suspect / invalid (at most suspect in a run
/// with events, whose disturbances cause errors on purpose).
const ERRORS_SUSPECT: f64 = 0.001;
const ERRORS_INVALID: f64 = 0.05;
/// Share of an operation's executions whose reads returned no row from which a run is
/// suspect / invalid.
const EMPTY_SUSPECT: f64 = 0.50;
const EMPTY_INVALID: f64 = 0.99;

/// How far a run's figures can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Valid,
    Suspect,
    Invalid,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Suspect => "suspect",
            Verdict::Invalid => "invalid",
        }
    }
}

/// What a reason is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    NothingMeasured,
    LateStarts,
    Rate,
    ClientCpu,
    Errors,
    EmptyReads,
    Crashed,
    NeverStarted,
}

/// One reason a run is not valid, in words with its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reason {
    pub check: Check,
    pub verdict: Verdict,
    pub message: String,
}

/// One operation whose reads came back empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmptyReads {
    pub op: String,
    /// Executions whose reads all returned no row.
    pub empty: u64,
    pub executions: u64,
}

/// The figures the verdict is made of, over the measured phase (run, or load for a load-only
/// run). `None`: not applicable or not recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Figures {
    pub phase: Option<Phase>,
    pub measured_s: f64,
    /// Operations started (completed or failed).
    pub started: u64,
    pub late_share: Option<f64>,
    pub max_lag_ms: Option<f64>,
    pub target_ops_per_s: Option<f64>,
    pub achieved_ops_per_s: f64,
    /// casslab's CPU over the measured phase, in percent of one core.
    pub client_cpu_pct: Option<f64>,
    /// casslab's demand for CPU (used plus waited for), in percent of one core.
    pub client_demand_pct: Option<f64>,
    /// The cores the client could use (`--threads`, else the machine's).
    pub client_cores: usize,
    /// Share of the CPU samples in which the client used 90% of those cores or more.
    pub client_saturated_share: Option<f64>,
    pub error_share: f64,
    pub empty_reads: Vec<EmptyReads>,
    /// Under a rate: operations due by the end of the run phase and never started, those of
    /// them due more than 1 ms before the end, and how long before the end the oldest was due.
    pub never_started: Option<u64>,
    pub never_started_late: Option<u64>,
    pub never_started_lag_ms: Option<f64>,
}

/// A run's verdict, its reasons (worst first) and figures, and what could not be checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validity {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub figures: Figures,
    pub not_checked: Vec<String>,
}

/// A measured phase's intervals added up, one interval at a time (long runs need not be held
/// in memory whole).
#[derive(Debug, Clone, Default)]
struct PhaseTally {
    last_index: Option<u32>,
    from_ms: u64,
    to_ms: u64,
    measured_ms: u64,
    ok: u64,
    errors: u64,
    late: u64,
    max_lag_ns: u64,
    /// Per operation: (name, completed executions, empty reads).
    ops: Vec<(String, u64, u64)>,
}

/// The intervals of a run added up per measured phase; feed it with [`Tally::add`].
#[derive(Debug, Clone, Default)]
pub struct Tally {
    load: PhaseTally,
    run: PhaseTally,
}

impl Tally {
    pub fn of(intervals: &[StoredInterval]) -> Tally {
        let mut t = Tally::default();
        intervals.iter().for_each(|iv| t.add(&iv.figures()));
        t
    }

    /// Adds one operation's row of one interval (warm-up is not measured, and figures recorded
    /// beside an operation are not operations).
    pub fn add(&mut self, iv: &IntervalFigures) {
        let t = match iv.phase {
            Phase::Load => &mut self.load,
            Phase::Run => &mut self.run,
            Phase::Warmup => return,
        };
        if t.last_index != Some(iv.index) {
            if t.last_index.is_none() {
                t.from_ms = iv.start_ms;
            }
            t.last_index = Some(iv.index);
            t.to_ms = iv.end_ms;
            t.measured_ms += iv.end_ms.saturating_sub(iv.start_ms);
        }
        let s = &iv.summary;
        if is_sub_op(&s.op) {
            return;
        }
        t.ok += s.ok;
        t.errors += s.error_count();
        t.late += iv.late;
        t.max_lag_ns = t.max_lag_ns.max(iv.max_lag_ns);
        match t.ops.iter_mut().find(|(name, ..)| *name == s.op) {
            Some((_, ok, empty)) => {
                *ok += s.ok;
                *empty += s.empty_reads;
            }
            None => t.ops.push((s.op.clone(), s.ok, s.empty_reads)),
        }
    }
}

/// The verdict on `record` from its intervals' `tally`, its server samples (the client's CPU)
/// and whether events disturbed it on purpose.
pub fn assess(record: &RunRecord, tally: &Tally, server: &[ServerSample], had_events: bool) -> Validity {
    let (phase, t) = match (&tally.run, &tally.load) {
        (run, _) if run.last_index.is_some() => (Phase::Run, run),
        (_, load) if load.last_index.is_some() => (Phase::Load, load),
        _ => {
            let message = format!("nothing was measured: no interval of a load or run phase was saved (status {})", record.status.as_str());
            let reasons = vec![Reason { check: Check::NothingMeasured, verdict: Verdict::Invalid, message }];
            return Validity { verdict: Verdict::Invalid, reasons, figures: Figures::default(), not_checked: Vec::new() };
        }
    };
    let measured_s = t.measured_ms as f64 / 1000.0;
    let started = t.ok + t.errors;
    let achieved = if measured_s > 0.0 { started as f64 / measured_s } else { 0.0 };
    let target = if phase == Phase::Run { target_rate(record) } else { None };
    let figures = Figures { phase: Some(phase), measured_s, started, target_ops_per_s: target, achieved_ops_per_s: achieved, ..Figures::default() };
    let mut a = Assessment { record, t, recorded: record.records_starts_and_reads(), f: figures, reasons: Vec::new(), not_checked: Vec::new() };
    a.late_starts();
    a.never_started();
    a.rate();
    a.client_cpu(server);
    a.errors(had_events);
    a.empty_reads();
    if record.status == RunStatus::Crashed {
        a.reason(
            Check::Crashed,
            Verdict::Suspect,
            format!("the run crashed (its process is gone) after {measured_s:.1} s measured; its figures cover only that time"),
        );
    }
    let Assessment { mut reasons, f, not_checked, .. } = a;
    reasons.sort_by_key(|r| std::cmp::Reverse(r.verdict));
    let verdict = reasons.iter().map(|r| r.verdict).max().unwrap_or(Verdict::Valid);
    Validity { verdict, reasons, figures: f, not_checked }
}

/// One verdict being made: the run, the tally of its measured phase, the figures and the
/// reasons so far. Each check adds its figures and, when it fails, its reason.
struct Assessment<'a> {
    record: &'a RunRecord,
    t: &'a PhaseTally,
    /// Whether the casslab that made the run recorded late starts and rows read.
    recorded: bool,
    f: Figures,
    reasons: Vec<Reason>,
    not_checked: Vec<String>,
}

impl Assessment<'_> {
    fn reason(&mut self, check: Check, verdict: Verdict, message: String) {
        if verdict != Verdict::Valid {
            self.reasons.push(Reason { check, verdict, message });
        }
    }

    /// A fixed-rate client that fell behind its schedule.
    fn late_starts(&mut self) {
        let t = self.t;
        if self.f.target_ops_per_s.is_none() {
            return;
        }
        if !self.recorded {
            self.not_checked.push("late starts (not recorded by the casslab that made this run)".to_string());
            return;
        }
        let share = t.late as f64 / self.f.started.max(1) as f64;
        let lag_ms = t.max_lag_ns as f64 / 1e6;
        (self.f.late_share, self.f.max_lag_ms) = (Some(share), Some(lag_ms));
        let verdict = if share >= LATE_INVALID || (share >= LATE_SUSPECT && lag_ms >= LAG_INVALID_MS) {
            Verdict::Invalid
        } else if share >= LATE_SUSPECT || lag_ms >= LAG_SUSPECT_MS {
            Verdict::Suspect
        } else {
            Verdict::Valid
        };
        let message = format!(
            "the client fell behind its schedule: {} of operations started more than 1 ms late (largest lag {}); raise --concurrency (now {}; it must exceed rate × latency) or lower --rate",
            validity_text::pct(share),
            validity_text::duration_ms(lag_ms),
            self.record.config.concurrency
        );
        self.reason(Check::LateStarts, verdict, message);
    }

    /// Operations due by the end that the client never started: kept out of the latency
    /// figures (they were never sent, and no operation was drawn for them), so a run with any
    /// due more than `LATE_NS` before the end is not valid; invalid when the oldest was due a
    /// second or more before the end or they are a share of the operations due that late
    /// starts would make invalid.
    fn never_started(&mut self) {
        if self.f.phase != Some(Phase::Run) {
            return;
        }
        let Some(n) = self.record.summary.as_ref().and_then(|s| s.never_started) else { return };
        (self.f.never_started, self.f.never_started_late, self.f.never_started_lag_ms) = (Some(n.count), Some(n.late), Some(n.oldest_lag_ms));
        if n.late == 0 {
            return;
        }
        let share = n.late as f64 / (self.f.started + n.count).max(1) as f64;
        let verdict = if n.oldest_lag_ms >= LAG_INVALID_MS || share >= LATE_SUSPECT { Verdict::Invalid } else { Verdict::Suspect };
        let message = format!(
            "the client left {} operations due before the end never started ({} of the operations due; the oldest due {} before the end): they are not in the latency figures, which would have been higher; raise --concurrency (now {}) or lower --rate",
            n.count,
            validity_text::pct(n.count as f64 / (self.f.started + n.count).max(1) as f64),
            validity_text::duration_ms(n.oldest_lag_ms),
            self.record.config.concurrency
        );
        self.reason(Check::NeverStarted, verdict, message);
    }

    /// The target rate, kept or not.
    fn rate(&mut self) {
        let Some(target) = self.f.target_ops_per_s.filter(|t| *t > 0.0) else { return };
        let achieved = self.f.achieved_ops_per_s;
        let kept = achieved / target;
        let verdict = if kept < RATE_INVALID {
            Verdict::Invalid
        } else if kept < RATE_SUSPECT {
            Verdict::Suspect
        } else {
            Verdict::Valid
        };
        self.reason(Check::Rate, verdict, format!("the target rate was not kept: {achieved:.0} of {target:.0} ops/s ({})", validity_text::pct(kept)));
    }

    /// A client that wanted all of its usable cores.
    fn client_cpu(&mut self, server: &[ServerSample]) {
        let (record, t) = (self.record, self.t);
        let cores = match (record.config.threads, record.env.client_cores) {
            (0, c) => c,
            (t, 0) => t,
            (t, c) => t.min(c),
        };
        self.f.client_cores = cores;
        let client = |name: &str| -> Vec<f64> {
            server.iter().filter(|s| s.node == CLIENT && s.metric == name && s.at_ms > t.from_ms && s.at_ms <= t.to_ms + 1000).map(|s| s.value).collect()
        };
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let (cpu, demand) = (client(metric::CPU_PCT), client(metric::CPU_DEMAND_PCT));
        // demand (used plus waited for) where recorded: a machine whose cores others take does not hide a saturated client
        let judged = if demand.is_empty() { &cpu } else { &demand };
        (self.f.client_cpu_pct, self.f.client_demand_pct) = (mean(&cpu), mean(&demand));
        if judged.is_empty() || cores == 0 {
            self.not_checked.push("client CPU (no samples of it: the run had --no-server-metrics, or was too short)".to_string());
            return;
        }
        let busy = judged.iter().filter(|p| **p >= CPU_BUSY * cores as f64 * 100.0).count();
        let share = busy as f64 / judged.len() as f64;
        self.f.client_saturated_share = Some(share);
        let verdict = if share >= CPU_INVALID {
            Verdict::Invalid
        } else if share >= CPU_SUSPECT && busy >= 2 {
            Verdict::Suspect
        } else {
            Verdict::Valid
        };
        let used = self.f.client_cpu_pct.map(|c| format!("used {c:.0}%")).unwrap_or_default();
        let wanted = self.f.client_demand_pct.map(|d| format!(", used or waited for {d:.0}%")).unwrap_or_default();
        let message = format!(
            "the client was saturated: it wanted 90% or more of its {cores} usable core(s) in {} of the measured time (of one core, on average: {used}{wanted}), so its own queueing is in the figures; give it more cores (--threads), lighter generators, or a rate it can keep",
            validity_text::pct(share)
        );
        self.reason(Check::ClientCpu, verdict, message);
    }

    /// Failed operations (at most suspect in a run whose events cause errors on purpose).
    fn errors(&mut self, had_events: bool) {
        let (errors, started) = (self.t.errors, self.f.started);
        self.f.error_share = errors as f64 / started.max(1) as f64;
        let share = self.f.error_share;
        let verdict = if share >= ERRORS_INVALID && !had_events {
            Verdict::Invalid
        } else if share >= ERRORS_SUSPECT {
            Verdict::Suspect
        } else {
            Verdict::Valid
        };
        let during = if had_events { " (the run had events, which cause errors on purpose)" } else { "" };
        self.reason(Check::Errors, verdict, format!("{} of operations failed ({errors} of {started}){during}", validity_text::pct(share)));
    }

    /// Reads that found nothing.
    fn empty_reads(&mut self) {
        if !self.recorded {
            self.not_checked.push("rows returned by reads (not recorded by the casslab that made this run)".to_string());
            return;
        }
        for (op, ok, empty) in self.t.ops.iter().filter(|(_, _, empty)| *empty > 0) {
            let share = *empty as f64 / (*ok).max(1) as f64;
            self.f.empty_reads.push(EmptyReads { op: op.clone(), empty: *empty, executions: *ok });
            let verdict = if share >= EMPTY_INVALID {
                Verdict::Invalid
            } else if share >= EMPTY_SUSPECT {
                Verdict::Suspect
            } else {
                Verdict::Valid
            };
            let message = format!(
                "reads found nothing: {op} returned no row in {} of its {ok} executions; were its keys loaded (--skip-load, another seed or -P rows)?",
                validity_text::pct(share)
            );
            self.reason(Check::EmptyReads, verdict, message);
        }
    }
}

/// The rate this loader was to keep in its run phase: what its summary saved (a shard's share
/// of the rate), or for a run that saved none (it crashed) the same from its config.
fn target_rate(record: &RunRecord) -> Option<f64> {
    let saved = record.summary.as_ref().and_then(|s| s.phases.iter().find(|p| p.phase == Phase::Run));
    match saved {
        Some(p) => p.target_rate_per_s,
        None => record.config.shard_rate_per_s(),
    }
}

/// The verdict on a saved run, read from the store.
pub fn of_run(store: &Store, run: RunId) -> Result<Validity, StoreError> {
    let record = store.run(run)?;
    let mut tally = Tally::default();
    store.for_each_interval_figures(run, |iv| {
        tally.add(&iv);
        Ok(())
    })?;
    let server = store.server_samples(run)?;
    Ok(assess(&record, &tally, &server, !store.events(run)?.is_empty()))
}

/// A run refused because it is invalid; says why, and how to use it anyway.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("run {run} is invalid: {}; pass --allow-invalid to use it anyway", .reasons.join("; "))]
pub struct Refused {
    pub run: RunId,
    pub reasons: Vec<String>,
}

/// The one rule `compare`, its gates and experiments apply: an invalid run may be compared,
/// judged or pooled only when `allow_invalid` is given.
pub fn may_compare(run: RunId, v: &Validity, allow_invalid: bool) -> Result<(), Refused> {
    if v.verdict < Verdict::Invalid || allow_invalid {
        return Ok(());
    }
    Err(Refused { run, reasons: v.reasons.iter().filter(|r| r.verdict == Verdict::Invalid).map(|r| r.message.clone()).collect() })
}

/// What [`may_compare`] says of several saved runs: the refused ones, and warnings for the
/// invalid ones used because allowed and for the suspect ones.
#[derive(Debug, Clone, Default)]
pub struct Screened {
    pub refused: Vec<Refused>,
    pub warnings: Vec<String>,
}

/// Applies [`may_compare`] to every run of `runs`.
pub fn screen(store: &Store, runs: &[RunId], allow_invalid: bool) -> Result<Screened, StoreError> {
    let mut out = Screened::default();
    for &run in runs {
        let v = of_run(store, run)?;
        let reasons = || v.reasons.iter().map(|r| r.message.clone()).collect::<Vec<_>>().join("; ");
        match may_compare(run, &v, allow_invalid) {
            Err(refused) => out.refused.push(refused),
            Ok(()) if v.verdict == Verdict::Invalid => out.warnings.push(format!("run {run} is invalid, used because of --allow-invalid: {}", reasons())),
            Ok(()) if v.verdict == Verdict::Suspect => out.warnings.push(format!("run {run} is suspect: {}", reasons())),
            Ok(()) => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod validity_tests;
