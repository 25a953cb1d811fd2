//! What the report formats (`html`, `markdown`, `report_json`: `format::report_formats`) read:
//! a [`Report`] is a list of [`RunView`]s, each one saved run reduced to its meta data, per-phase summaries, per-interval
//! series and latency percentile spectra, plus the config keys whose values differ between the
//! runs. It reshapes what the store returns (`RunView::of_saved_run` reads one saved run, a row
//! at a time); it does not render or write.
//!
//! A report is built for saved runs today; experiments will add their variants (groups of
//! runs, with intervals and verdicts) beside `runs` without changing how a run is shown.

use super::config_table::{config_differences, ConfigDifference};
pub use super::spectrum::{spectrum, OpSpectrum, SpectrumPoint};
use crate::stats::{is_sub_op, ErrorKind, OpStats, OpSummary, Phase};
use crate::store::{IntervalFigures, PhaseSummary, RunId, RunRecord, RunSummary, Store, StoreError, StoredInterval};
use crate::validity;
use std::collections::BTreeMap;

/// Everything one report shows.
#[derive(Debug, Clone)]
pub struct Report {
    pub title: String,
    pub runs: Vec<RunView>,
    /// Config keys whose values differ between the runs (empty for a single run).
    pub config_differences: Vec<ConfigDifference>,
}

impl Report {
    pub fn new(runs: Vec<RunView>) -> Report {
        let title = match runs.as_slice() {
            [one] => format!("run {} · {}", one.record.id, one.record.workload),
            many => format!("runs {}", many.iter().map(|r| r.record.id.to_string()).collect::<Vec<_>>().join(", ")),
        };
        let config_differences = config_differences(&runs.iter().map(|r| &r.record).collect::<Vec<_>>());
        Report { title, runs, config_differences }
    }
}

/// How the measured phase was driven.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LoadShape {
    /// As fast as possible with this many requests in flight.
    MaxThroughput { concurrency: usize },
    /// Open loop at a fixed total rate; latency is measured from each intended start.
    FixedRate { target_per_s: f64 },
    /// Open loop at a rate that follows a schedule (the config's `rate_shape`).
    RateSchedule { peak_per_s: f64 },
    /// As fast as possible, the requests in flight following a schedule (up to `peak`).
    InFlightSchedule { peak: usize },
}

impl LoadShape {
    pub fn describe(self) -> String {
        match self {
            LoadShape::MaxThroughput { concurrency } => format!("max throughput, {concurrency} in flight"),
            LoadShape::FixedRate { target_per_s } => format!("fixed rate {target_per_s:.0} ops/s"),
            LoadShape::RateSchedule { peak_per_s } => format!("rate schedule up to {peak_per_s:.0} ops/s"),
            LoadShape::InFlightSchedule { peak } => format!("max throughput, a schedule of up to {peak} in flight"),
        }
    }

    /// Open loop: latency from each intended start, service time beside it.
    pub fn open_loop(self) -> bool {
        matches!(self, LoadShape::FixedRate { .. } | LoadShape::RateSchedule { .. })
    }
}

/// One sampling interval: every operation's figures over it.
#[derive(Debug, Clone)]
pub struct IntervalView {
    pub index: u32,
    pub phase: Phase,
    /// Milliseconds since the run started.
    pub start_ms: u64,
    pub end_ms: u64,
    pub backlog: u64,
    /// In the workload's order; `op` names the operation.
    pub ops: Vec<OpSummary>,
}

impl IntervalView {
    pub fn total_ops_per_s(&self) -> f64 {
        self.ops.iter().filter(|o| !is_sub_op(&o.op)).map(|o| o.ops_per_s).sum()
    }
    pub fn errors(&self) -> BTreeMap<ErrorKind, u64> {
        let mut all = BTreeMap::new();
        for o in self.ops.iter().filter(|o| !is_sub_op(&o.op)) {
            for (k, v) in &o.errors {
                *all.entry(*k).or_default() += v;
            }
        }
        all
    }
    /// Seconds since the run started, at the middle of the interval.
    pub fn mid_s(&self) -> f64 {
        (self.start_ms + self.end_ms) as f64 / 2000.0
    }
}

/// One saved run, ready to show.
#[derive(Debug, Clone)]
pub struct RunView {
    pub record: RunRecord,
    /// How the run is named in a report: `run 12`.
    pub label: String,
    /// Per phase (load, run) as summarized when the run finished, or rebuilt from the saved
    /// intervals for a run that did not finish.
    pub phases: Vec<PhaseSummary>,
    pub notes: Vec<String>,
    pub intervals: Vec<IntervalView>,
    pub spectra: Vec<OpSpectrum>,
    /// Events during the run (`--event`), drawn on the time charts; see [`RunView::with_events`].
    pub events: Vec<crate::events::EventRecord>,
    /// Each event's measured impact, in the order of `events` (`None` where none was measured).
    pub event_impacts: Vec<Option<crate::store::EventImpact>>,
    /// The nodes' own metrics during the run (empty unless the caller adds them).
    pub server: Vec<crate::server::ServerSample>,
    /// Query traces of the slowest requests (empty unless the caller adds them).
    pub traces: Vec<crate::server::traces::Trace>,
    /// Whether the run's figures can be trusted (`None` unless the caller adds it: the client's
    /// CPU is among the server samples).
    pub validity: Option<crate::validity::Validity>,
    /// The run's first verified reads that were not ok (empty unless the caller adds them).
    pub violations: Vec<crate::store::SavedViolation>,
    /// Time charts on the wall clock (UTC time of day) rather than seconds since the start.
    pub wall_clock: bool,
    /// What each interval asked for under a rate or a schedule (empty unless the caller adds
    /// them), and the run's load by stage and level (`None` unless the caller adds it).
    pub loads: Vec<crate::stats::IntervalLoad>,
    pub load: Option<crate::analysis::load_curve::LoadAnalysis>,
    /// Where the servers spent their time (empty unless the caller adds them).
    pub profiles: Vec<crate::profile::Profile>,
}

impl RunView {
    /// `intervals` and `histograms` as [`crate::store::Store::intervals`] and
    /// [`crate::store::Store::histograms`] return them for `record`.
    pub fn new(record: RunRecord, intervals: &[StoredInterval], histograms: &[(Phase, String, OpStats)]) -> RunView {
        let mut b = RunViewBuilder::new(record, histograms);
        intervals.iter().for_each(|row| b.add(row));
        b.finish()
    }

    /// The view with the run's events, as [`crate::store::Store::events`] returns them.
    pub fn with_events(mut self, events: Vec<crate::events::EventRecord>) -> RunView {
        self.events = events;
        self
    }

    pub fn load_shape(&self) -> LoadShape {
        let c = &self.record.config;
        match (c.fixed_rate_per_s(), &c.rate, &c.concurrency_shape) {
            (Some(target_per_s), _, _) => LoadShape::FixedRate { target_per_s },
            (None, Some(shape), _) => LoadShape::RateSchedule { peak_per_s: shape.peak() },
            (None, None, Some(_)) => LoadShape::InFlightSchedule { peak: c.concurrency },
            (None, None, None) => LoadShape::MaxThroughput { concurrency: c.concurrency },
        }
    }

    pub fn phase(&self, phase: Phase) -> Option<&PhaseSummary> {
        self.phases.iter().find(|p| p.phase == phase)
    }

    /// The phase a reader cares about most: the measured run, else the load.
    pub fn main_phase(&self) -> Option<&PhaseSummary> {
        self.phase(Phase::Run).or_else(|| self.phase(Phase::Load))
    }

    /// Intervals of a phase's timeline: the run phase's include its warm-up.
    pub fn timeline(&self, phase: Phase) -> Vec<&IntervalView> {
        let wanted = |p: Phase| p == phase || (phase == Phase::Run && p == Phase::Warmup);
        self.intervals.iter().filter(|iv| wanted(iv.phase)).collect()
    }

    /// The intervals a time chart draws: the timeline without partial intervals (shorter than
    /// half the sampling interval, such as the last few ms of a phase), whose few operations
    /// would draw a false drop.
    pub fn chart_timeline(&self, phase: Phase) -> Vec<&IntervalView> {
        let nominal = self.record.config.interval_ms;
        self.timeline(phase).into_iter().filter(|iv| nominal == 0 || 2 * (iv.end_ms - iv.start_ms.min(iv.end_ms)) >= nominal).collect()
    }

    /// The wall-clock time (Unix ms) of the time axis' origin when charts show the wall clock.
    pub fn clock_origin_ms(&self) -> Option<i64> {
        self.wall_clock.then(|| self.record.env.clock_t0_unix_ms.unwrap_or(self.record.started_at_ms))
    }

    /// Operation names in the order they appear in the phase's timeline.
    pub fn op_names(&self, phase: Phase) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for iv in self.timeline(phase) {
            for o in &iv.ops {
                if !names.contains(&o.op) {
                    names.push(o.op.clone());
                }
            }
        }
        if names.is_empty() {
            if let Some(p) = self.phase(phase) {
                names = p.ops.iter().map(|o| o.op.clone()).collect();
            }
        }
        names
    }

    pub fn spectra(&self, phase: Phase) -> impl Iterator<Item = &OpSpectrum> {
        self.spectra.iter().filter(move |s| s.phase == phase)
    }

    /// Seconds from the run's start to its end, if it ended.
    pub fn wall_time_s(&self) -> Option<f64> {
        self.record.ended_at_ms.map(|e| (e - self.record.started_at_ms) as f64 / 1000.0)
    }
}

pub use crate::units::grouped;

/// Builds a [`RunView`] one saved interval row at a time ([`crate::store::Store::for_each_interval`]
/// order), so that a long run's decoded interval histograms are never all in memory at once:
/// each row is reduced to its percentiles, and merged into per-operation totals only when the
/// run's summary or spectra must be rebuilt from its intervals.
pub struct RunViewBuilder {
    record: RunRecord,
    spectra: Vec<OpSpectrum>,
    views: Vec<IntervalView>,
    /// `None` when the run's final summary and whole-phase histograms were saved.
    rebuild: Option<Rebuild>,
}

impl RunViewBuilder {
    /// `histograms` as [`crate::store::Store::histograms`] returns them for `record`.
    pub fn new(record: RunRecord, histograms: &[(Phase, String, OpStats)]) -> RunViewBuilder {
        let spectra = histograms
            .iter()
            .map(|(phase, op, st)| OpSpectrum { phase: *phase, op: op.clone(), intended: spectrum(&st.intended), service: spectrum(&st.service) })
            .collect();
        let summarized = record.summary.as_ref().is_some_and(|s| !s.phases.is_empty());
        let rebuild = (!summarized || histograms.is_empty()).then(Rebuild::default);
        RunViewBuilder { record, spectra, views: Vec::new(), rebuild }
    }

    /// Whether the run's summary or spectra must be rebuilt from its intervals (it did not
    /// finish): then each row's histograms must be added too ([`RunViewBuilder::add_histograms`]);
    /// otherwise its figures are enough.
    pub fn needs_histograms(&self) -> bool {
        self.rebuild.is_some()
    }

    /// One saved row: an operation's figures over one interval, and its histograms.
    pub fn add(&mut self, row: &StoredInterval) {
        self.add_figures(row.figures());
        self.add_histograms(row);
    }

    /// One saved row's figures ([`crate::store::Store::for_each_interval_figures`]).
    pub fn add_figures(&mut self, row: IntervalFigures) {
        match self.views.last_mut().filter(|v| v.index == row.index) {
            Some(v) => v.ops.push(row.summary),
            None => self.views.push(IntervalView {
                index: row.index,
                phase: row.phase,
                start_ms: row.start_ms,
                end_ms: row.end_ms,
                backlog: row.backlog,
                ops: vec![row.summary],
            }),
        }
    }

    /// The histograms of a row whose figures were added: kept (merged) only when the run's
    /// summary must be [rebuilt](RunViewBuilder::needs_histograms).
    pub fn add_histograms(&mut self, row: &StoredInterval) {
        if let Some(r) = &mut self.rebuild {
            r.add(row);
        }
    }

    pub fn finish(self) -> RunView {
        let RunViewBuilder { record, mut spectra, views, rebuild } = self;
        let RunSummary { phases, notes, .. } = rebuild.as_ref().map_or_else(|| record.summary.clone(), |r| r.summary(&record)).unwrap_or_default();
        if spectra.is_empty() {
            if let Some(r) = &rebuild {
                spectra = r
                    .merged
                    .iter()
                    .map(|((phase, op), st)| OpSpectrum { phase: *phase, op: op.clone(), intended: spectrum(&st.intended), service: spectrum(&st.service) })
                    .collect();
            }
        }
        RunView {
            label: format!("run {}", record.id),
            record,
            phases,
            notes,
            intervals: views,
            spectra,
            server: Vec::new(),
            traces: Vec::new(),
            events: Vec::new(),
            event_impacts: Vec::new(),
            validity: None,
            violations: Vec::new(),
            wall_clock: false,
            loads: Vec::new(),
            load: None,
            profiles: Vec::new(),
        }
    }
}

/// What a summary rebuilt from a run's saved intervals needs, gathered one row at a time.
#[derive(Default)]
struct Rebuild {
    /// Each (phase, op)'s rows merged, warm-up left out, in first-seen order.
    merged: Vec<((Phase, String), OpStats)>,
    /// Each phase's measured seconds (one interval counted once however many operations it has).
    durations: Vec<(Phase, f64)>,
    /// The first row's start and the last row's end, ms.
    span: Option<(u64, u64)>,
    last_index: Option<u32>,
}

impl Rebuild {
    fn add(&mut self, row: &StoredInterval) {
        self.span = Some((self.span.map_or(row.start_ms, |s| s.0), row.end_ms));
        if self.last_index != Some(row.index) {
            self.last_index = Some(row.index);
            match self.durations.iter_mut().find(|(p, _)| *p == row.phase) {
                Some((_, d)) => *d += row.duration_s(),
                None => self.durations.push((row.phase, row.duration_s())),
            }
        }
        if row.phase == Phase::Warmup {
            return;
        }
        match self.merged.iter_mut().find(|((p, o), _)| *p == row.phase && *o == row.op) {
            Some((_, st)) => st.merge(&row.stats),
            None => self.merged.push(((row.phase, row.op.clone()), row.stats.clone())),
        }
    }

    /// The run's summary: as saved when it finished, else rebuilt from the rows with a note
    /// that says so; `None` when it has neither.
    fn summary(&self, record: &RunRecord) -> Option<RunSummary> {
        match (&record.summary, self.span) {
            (Some(s), _) if !s.phases.is_empty() => Some(s.clone()),
            (saved, None) => saved.clone(),
            (saved, Some((first, last))) => {
                let mut notes = saved.as_ref().map(|s| s.notes.clone()).unwrap_or_default();
                notes.push(format!(
                    "the run has no final summary (status {}): its figures are computed from the intervals saved from {:.1} s to {:.1} s",
                    record.status.as_str(),
                    first as f64 / 1000.0,
                    last as f64 / 1000.0
                ));
                Some(RunSummary { phases: self.phases(record.config.fixed_rate_per_s()), notes, ..RunSummary::default() })
            }
        }
    }

    /// Phase summaries of a run that never finished (the measured phases: load and run;
    /// warm-up is not measured).
    fn phases(&self, rate_per_s: Option<f64>) -> Vec<PhaseSummary> {
        let mut phases: Vec<Phase> = Vec::new();
        for ((p, _), _) in &self.merged {
            if !phases.contains(p) {
                phases.push(*p);
            }
        }
        phases
            .into_iter()
            .map(|phase| {
                let duration_s = self.durations.iter().find(|(p, _)| *p == phase).map_or(0.0, |d| d.1);
                let mut total = OpStats::default();
                let ops: Vec<OpSummary> = self
                    .merged
                    .iter()
                    .filter(|((p, _), _)| *p == phase)
                    .map(|((_, op), st)| {
                        if !is_sub_op(op) {
                            total.merge(st);
                        }
                        OpSummary::of(op, st, duration_s)
                    })
                    .collect();
                PhaseSummary {
                    phase,
                    duration_s,
                    target_rate_per_s: if phase == Phase::Run { rate_per_s } else { None },
                    ops,
                    total: OpSummary::of("total", &total, duration_s),
                }
            })
            .collect()
    }
}

impl RunView {
    /// Run `id` as the store saved it, read for a report: one interval row at a time (a long
    /// run's decoded histograms would not fit in memory at once), with its server side, events,
    /// profiles, load stages and validity; `wall_clock`: times shown as clock times.
    pub fn of_saved_run(store: &Store, id: RunId, wall_clock: bool) -> Result<RunView, StoreError> {
        let record = store.run(id)?;
        // one interval row at a time: a long run's decoded histograms would not fit in memory at
        // once; and a finished run's rows without their histograms, whose percentiles are saved
        let mut view = RunViewBuilder::new(record, &store.histograms(id)?);
        let mut tally = validity::Tally::default();
        if view.needs_histograms() {
            store.for_each_interval(id, |row| {
                let figures = row.figures();
                tally.add(&figures);
                view.add_figures(figures);
                view.add_histograms(&row);
                Ok(())
            })?;
        } else {
            store.for_each_interval_figures(id, |row| {
                tally.add(&row);
                view.add_figures(row);
                Ok(())
            })?;
        }
        let mut view = view.finish();
        view.server = store.server_samples(id)?;
        view.traces = store.traces(id)?;
        view.violations = store.violations(id)?;
        view.profiles = store.profiles(id)?;
        (view.events, view.event_impacts) = store.events(id)?.into_iter().unzip();
        view.wall_clock = wall_clock;
        view.loads = store.interval_loads(id)?;
        view.load = crate::analysis::load_curve::of_run(store, id)?;
        view.validity = Some(validity::assess(&view.record, &tally, &view.server, !view.events.is_empty()));
        Ok(view)
    }
}

/// A saved run's summary: as saved when it finished, else rebuilt from its saved intervals (a
/// crashed run's, up to the crash) with a note that says so; `None` when it has neither.
/// `rows` calls its argument with each saved row, one at a time (e.g. from
/// [`crate::store::Store::for_each_interval`]), and is called only when the run has no final
/// summary.
pub fn summary_of_rows<E>(record: &RunRecord, rows: impl FnOnce(&mut dyn FnMut(&StoredInterval)) -> Result<(), E>) -> Result<Option<RunSummary>, E> {
    if let Some(s) = record.summary.as_ref().filter(|s| !s.phases.is_empty()) {
        return Ok(Some(s.clone()));
    }
    let mut r = Rebuild::default();
    rows(&mut |row| r.add(row))?;
    Ok(r.summary(record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::store::RunStatus;

    fn stats(base_ns: u64) -> OpStats {
        let mut s = OpStats::default();
        for i in 1..=1000u64 {
            s.record_ok(base_ns + i * 1_000, base_ns / 2 + i * 1_000);
        }
        s.record_error(ErrorKind::Timeout);
        s
    }

    fn interval(index: u32, phase: Phase, op: &str) -> StoredInterval {
        let start_ms = u64::from(index) * 1000;
        StoredInterval { index, phase, start_ms, end_ms: start_ms + 1000, op: op.into(), stats: stats(1_000_000), backlog: 0 }
    }

    fn record(rate: Option<f64>) -> RunRecord {
        RunRecord {
            id: 4,
            workload: "kv".into(),
            started_at_ms: 0,
            ended_at_ms: None,
            status: RunStatus::Running,
            config: RunConfig { rate: rate.map(crate::load_shape::LoadShape::fixed), concurrency: 16, ..RunConfig::default() },
            env: RunEnvironment::default(),
            summary: None,
            tags: vec![],
            process: None,
        }
    }

    #[test]
    fn charts_leave_out_a_partial_last_interval() {
        let mut ivs = vec![interval(1, Phase::Run, "read"), interval(2, Phase::Run, "read")];
        // the last 16 ms of the phase: few operations, a false drop if drawn
        ivs.push(StoredInterval { end_ms: 3016, ..interval(3, Phase::Run, "read") });
        let v = RunView::new(RunRecord { config: RunConfig { interval_ms: 1000, ..RunConfig::default() }, ..record(None) }, &ivs, &[]);
        assert_eq!(v.timeline(Phase::Run).len(), 3);
        assert_eq!(v.chart_timeline(Phase::Run).iter().map(|iv| iv.index).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn grouped_digits() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn an_unfinished_run_is_summarized_from_its_intervals_without_warmup() {
        let ivs = [
            interval(0, Phase::Warmup, "read"),
            interval(0, Phase::Warmup, "write"),
            interval(1, Phase::Run, "read"),
            interval(1, Phase::Run, "write"),
            interval(2, Phase::Run, "read"),
            interval(2, Phase::Run, "write"),
        ];
        let v = RunView::new(record(Some(500.0)), &ivs, &[]);
        assert_eq!(v.intervals.len(), 3);
        assert_eq!(v.intervals[1].total_ops_per_s(), 2000.0);
        assert_eq!(v.intervals[1].errors()[&ErrorKind::Timeout], 2);
        let run = v.phase(Phase::Run).unwrap();
        assert_eq!((run.duration_s, run.ops.len(), run.total.ok), (2.0, 2, 4000));
        assert_eq!(run.ops[0].ops_per_s, 1000.0);
        assert_eq!(run.target_rate_per_s, Some(500.0));
        assert!(v.phase(Phase::Warmup).is_none());
        assert_eq!(v.timeline(Phase::Run).len(), 3);
        assert_eq!(v.op_names(Phase::Run), ["read", "write"]);
        assert_eq!(v.spectra(Phase::Run).count(), 2);
        assert!(v.notes[0].contains("no final summary"));
        assert_eq!(v.load_shape(), LoadShape::FixedRate { target_per_s: 500.0 });
        assert_eq!(RunView::new(record(None), &[], &[]).load_shape(), LoadShape::MaxThroughput { concurrency: 16 });

        // the summary alone, the same; a finished run's own summary and spectra are kept
        let rows = summary_of_rows(&record(Some(500.0)), |add| -> Result<(), ()> {
            ivs.iter().for_each(&mut *add);
            Ok(())
        });
        let rows = rows.unwrap().unwrap();
        assert_eq!((&rows.phases, &rows.notes), (&v.phases, &v.notes));
        let saved = RunSummary { phases: v.phases.clone(), ..RunSummary::default() };
        let finished = RunRecord { summary: Some(saved.clone()), ..record(None) };
        let never = summary_of_rows(&finished, |_| -> Result<(), ()> { panic!("a finished run's rows are not read for its summary") });
        assert_eq!(never.unwrap(), Some(saved.clone()));
        let mut b = RunViewBuilder::new(finished, &[(Phase::Run, "read".into(), stats(2_000_000))]);
        ivs.iter().for_each(|r| b.add(r));
        let v = b.finish();
        assert_eq!((v.phases, v.intervals.len(), v.spectra.len()), (saved.phases, 3, 1));
    }
}

/// A synthetic saved run for the report formats' tests: a load phase (`insert`), a warm-up
/// and a measured run (`read`, `update`) at a fixed rate, with a few timeouts.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::store::{RunStatus, RunSummary};

    fn stats(base_us: u64, n: u64, errors: u64) -> OpStats {
        let mut s = OpStats::default();
        for i in 0..n {
            let v = (base_us + i % 97 * base_us / 20) * 1_000;
            s.record_ok(v + v / 3, v);
        }
        for _ in 0..errors {
            s.record_error(ErrorKind::Timeout);
        }
        s
    }

    pub(crate) fn view(id: i64, rate: Option<f64>) -> RunView {
        let mut intervals = Vec::new();
        let mut index = 0u32;
        let mut push = |phase: Phase, ops: &[(&str, OpStats)]| {
            let start_ms = u64::from(index) * 1000;
            for (op, st) in ops {
                intervals.push(StoredInterval { index, phase, start_ms, end_ms: start_ms + 1000, op: op.to_string(), stats: st.clone(), backlog: 0 });
            }
            index += 1;
        };
        for _ in 0..3 {
            push(Phase::Load, &[("insert", stats(800, 400, 0))]);
        }
        for _ in 0..2 {
            push(Phase::Warmup, &[("read", stats(2_000, 200, 0)), ("update", stats(1_500, 50, 0))]);
        }
        for i in 0..8 {
            push(Phase::Run, &[("read", stats(1_000, 400, u64::from(i == 5) * 3)), ("update", stats(700, 100, 0))]);
        }
        let mut hist = Vec::new();
        let mut summaries = Vec::new();
        for (phase, ops, d) in [(Phase::Load, vec!["insert"], 3.0), (Phase::Run, vec!["read", "update"], 8.0)] {
            let mut total = OpStats::default();
            let mut sums = Vec::new();
            for op in ops {
                let mut st = OpStats::default();
                intervals.iter().filter(|iv| iv.phase == phase && iv.op == op).for_each(|iv| st.merge(&iv.stats));
                total.merge(&st);
                sums.push(OpSummary::of(op, &st, d));
                hist.push((phase, op.to_string(), st));
            }
            let target = if phase == Phase::Run { rate } else { None };
            summaries.push(PhaseSummary { phase, duration_s: d, target_rate_per_s: target, ops: sums, total: OpSummary::of("total", &total, d) });
        }
        let record = RunRecord {
            id,
            workload: "kv".into(),
            started_at_ms: 1_795_000_000_000,
            ended_at_ms: Some(1_795_000_013_500),
            status: RunStatus::Completed,
            config: RunConfig {
                workload: "kv".into(),
                workload_source: "name: kv\nparams:\n  rows: 1000\n".into(),
                params: [("rows".to_string(), "1000".to_string())].into(),
                rate: rate.map(crate::load_shape::LoadShape::fixed),
                ..RunConfig::default()
            },
            env: RunEnvironment {
                casslab_version: "0.1.0".into(),
                cassandra_version: Some("5.0.6".into()),
                node_count: 1,
                client_cores: 2,
                hostname: None,
                ..RunEnvironment::default()
            },
            summary: Some(RunSummary { phases: summaries, notes: vec!["target rate 600/s not kept: achieved 500/s".into()], ..RunSummary::default() }),
            tags: vec![],
            process: None,
        };
        RunView::new(record, &intervals, &hist)
    }
}
