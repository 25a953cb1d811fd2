//! Latency against offered load, from one run whose load changed over time: the measured
//! intervals of a run under a rate schedule (or a schedule of requests in flight) grouped by
//! the stage of the schedule they fell in (a summary per stage), and by the level of load they
//! were offered (the points of the latency-versus-throughput curve, the "hockey stick": p50 and
//! p99 against the achieved rate, with its knee). Grouping merges the intervals' histograms, so
//! a group's percentiles are those of all its operations, not an average of percentiles.
//!
//! The knee is the last level before the load stopped being served: the highest level whose
//! p99 stayed within [`KNEE_P99_FACTOR`] times the p99 at the lowest levels and whose achieved
//! rate kept within 5 % of the offered one. Computing is here; words and drawings are
//! `report::stages_text` and `report::curve_chart`.

use crate::stats::{is_sub_op, IntervalLoad, OpStats, Phase};
use crate::store::{PhaseSummary, RunId, Store, StoreError, StoredInterval};
use std::collections::{BTreeMap, BTreeSet};

/// A level whose p99 exceeds this many times the low-load p99 is past the knee.
pub const KNEE_P99_FACTOR: f64 = 3.0;
/// Points of the curve when the load moved continuously (a ramp, a sine): the range of offered
/// levels cut into this many equal bands.
pub const CURVE_LEVELS: usize = 12;

/// Intervals grouped: a stage of the schedule, or a level of offered load.
#[derive(Debug, Clone)]
pub struct LoadGroup {
    /// The stage as written (`ramp 100..5000 over 1m`), or the level (`≈ 2400/s`).
    pub label: String,
    /// Milliseconds since the run started: the first interval's start, the last one's end.
    pub from_ms: u64,
    pub to_ms: u64,
    pub intervals: usize,
    /// The mean rate the schedule offered (open loop), and the mean requests in flight allowed
    /// (closed loop).
    pub offered_per_s: Option<f64>,
    pub concurrency: Option<f64>,
    /// Operations the engine started per second of the group.
    pub started_per_s: f64,
    /// The largest backlog at the end of one of its intervals.
    pub max_backlog: u64,
    /// Its operations merged: throughput achieved, latency from intended start and service
    /// time, errors.
    pub summary: PhaseSummary,
}

impl LoadGroup {
    pub fn achieved_per_s(&self) -> f64 {
        self.summary.total.ops_per_s
    }
    /// Whether the achieved rate kept within 5 % of the offered one (always, closed loop).
    pub fn kept(&self) -> bool {
        self.offered_per_s.is_none_or(|o| self.achieved_per_s() >= 0.95 * o)
    }
}

/// A run's load, by stage and by level.
#[derive(Debug, Clone)]
pub struct LoadAnalysis {
    /// Open loop (a rate) or closed loop (requests in flight).
    pub open_loop: bool,
    pub stages: Vec<LoadGroup>,
    /// The curve's points by rising offered level (requests in flight, closed loop).
    pub curve: Vec<LoadGroup>,
    /// Index into `curve` of the knee; `None` when no level before the load stopped being
    /// served was found (every level served, or none).
    pub knee: Option<usize>,
}

/// Intervals being merged into one group.
#[derive(Default)]
struct Acc {
    label: String,
    intervals: BTreeSet<u32>,
    from_ms: u64,
    to_ms: u64,
    duration_s: f64,
    offered: f64,
    concurrency: f64,
    started: u64,
    max_backlog: u64,
    ops: Vec<(String, OpStats)>,
}

impl Acc {
    fn add(&mut self, iv: &StoredInterval, load: &IntervalLoad) {
        if self.intervals.insert(iv.index) {
            let d = iv.duration_s();
            if self.intervals.len() == 1 {
                self.from_ms = iv.start_ms;
            }
            self.from_ms = self.from_ms.min(iv.start_ms);
            self.to_ms = self.to_ms.max(iv.end_ms);
            self.duration_s += d;
            self.offered += load.offered_per_s.unwrap_or(0.0) * d;
            self.concurrency += load.concurrency.unwrap_or(0) as f64 * d;
            self.started += load.started;
            self.max_backlog = self.max_backlog.max(iv.backlog);
        }
        match self.ops.iter_mut().find(|(n, _)| *n == iv.op) {
            Some((_, s)) => s.merge(&iv.stats),
            None => self.ops.push((iv.op.clone(), iv.stats.clone())),
        }
    }

    fn finish(self, open_loop: bool, closed_levels: bool) -> LoadGroup {
        let d = self.duration_s.max(1e-9);
        let summary = PhaseSummary::of(Phase::Run, self.duration_s, &self.ops, None, &mut Vec::new());
        LoadGroup {
            label: self.label,
            from_ms: self.from_ms,
            to_ms: self.to_ms,
            intervals: self.intervals.len(),
            offered_per_s: open_loop.then_some(self.offered / d),
            concurrency: closed_levels.then_some(self.concurrency / d),
            started_per_s: self.started as f64 / d,
            max_backlog: self.max_backlog,
            summary,
        }
    }
}

/// Builds a [`LoadAnalysis`] one interval row at a time (a long run's histograms need not fit
/// in memory at once): the run's loads first, then its rows.
pub struct LoadAccumulator {
    loads: BTreeMap<u32, IntervalLoad>,
    open_loop: bool,
    /// The curve's level of each interval (a band of offered rates, or the requests in flight).
    level_of: BTreeMap<u32, usize>,
    stages: BTreeMap<u32, Acc>,
    levels: BTreeMap<usize, Acc>,
}

impl LoadAccumulator {
    /// For a run whose intervals asked for `loads`; `None` when it has none (a run at one
    /// level throughout has one stage and one point).
    pub fn new(loads: &[IntervalLoad]) -> Option<LoadAccumulator> {
        if loads.is_empty() {
            return None;
        }
        let open_loop = loads.iter().any(|l| l.offered_per_s.is_some());
        let level = |l: &IntervalLoad| if open_loop { l.offered_per_s.unwrap_or(0.0) } else { l.concurrency.unwrap_or(0) as f64 };
        let (lo, hi) = loads.iter().map(level).fold((f64::INFINITY, 0.0_f64), |(a, b), x| (a.min(x), b.max(x)));
        let distinct: BTreeSet<u64> = loads.iter().map(|l| (level(l) * 1000.0).round() as u64).collect();
        // steps and holds: one point per level; a continuous ramp: bands of equal width
        let banded = distinct.len() > CURVE_LEVELS;
        let band = |x: f64| if hi > lo { (((x - lo) / (hi - lo)) * CURVE_LEVELS as f64).floor().min(CURVE_LEVELS as f64 - 1.0) as usize } else { 0 };
        let ranks: BTreeMap<u64, usize> = distinct.iter().enumerate().map(|(i, d)| (*d, i)).collect();
        let level_of = loads.iter().map(|l| (l.index, if banded { band(level(l)) } else { ranks[&((level(l) * 1000.0).round() as u64)] })).collect();
        Some(LoadAccumulator {
            loads: loads.iter().map(|l| (l.index, l.clone())).collect(),
            open_loop,
            level_of,
            stages: BTreeMap::new(),
            levels: BTreeMap::new(),
        })
    }

    /// Adds one saved (interval, operation) row; rows outside the measured run phase, of
    /// sub-operations, or without a load are left out.
    pub fn add(&mut self, iv: &StoredInterval) {
        if iv.phase != Phase::Run || is_sub_op(&iv.op) {
            return;
        }
        let Some(load) = self.loads.get(&iv.index) else { return };
        let stage = self.stages.entry(load.stage).or_default();
        if stage.label.is_empty() {
            stage.label = load.stage_label.clone();
        }
        stage.add(iv, load);
        if let Some(level) = self.level_of.get(&iv.index) {
            self.levels.entry(*level).or_default().add(iv, load);
        }
    }

    pub fn finish(self) -> LoadAnalysis {
        let (open, closed) = (self.open_loop, !self.open_loop);
        let stages = self.stages.into_values().map(|a| a.finish(open, closed)).collect();
        let mut curve: Vec<LoadGroup> = self
            .levels
            .into_values()
            .map(|a| {
                let mut g = a.finish(open, closed);
                g.label = match (g.offered_per_s, g.concurrency) {
                    (Some(o), _) => format!("{o:.0}/s"),
                    (None, Some(c)) => format!("{c:.0} in flight"),
                    _ => String::new(),
                };
                g
            })
            .collect();
        curve.sort_by(|a, b| a.offered_per_s.or(a.concurrency).unwrap_or(0.0).total_cmp(&b.offered_per_s.or(b.concurrency).unwrap_or(0.0)));
        let knee = knee(&curve);
        LoadAnalysis { open_loop: open, stages, curve, knee }
    }
}

/// The last level before the load stopped being served (see the module's words).
pub fn knee(curve: &[LoadGroup]) -> Option<usize> {
    let p99 = |g: &LoadGroup| g.summary.total.latency.p99_ns as f64;
    let served: Vec<&LoadGroup> = curve.iter().filter(|g| g.summary.total.latency.count > 0).collect();
    if served.len() < 2 {
        return None;
    }
    // the low-load p99: the best of the lowest third of the levels
    let low = served[..served.len().div_ceil(3)].iter().map(|g| p99(g)).fold(f64::INFINITY, f64::min);
    let first_bad = curve.iter().position(|g| g.summary.total.latency.count == 0 || p99(g) > KNEE_P99_FACTOR * low || !g.kept())?;
    first_bad.checked_sub(1)
}

/// The load analysis of a saved run; `None` for a run without a rate or a schedule recorded.
pub fn of_run(store: &Store, run: RunId) -> Result<Option<LoadAnalysis>, StoreError> {
    let Some(mut acc) = LoadAccumulator::new(&store.interval_loads(run)?) else { return Ok(None) };
    store.for_each_interval(run, |row| {
        acc.add(&row);
        Ok(())
    })?;
    Ok(Some(acc.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One interval `i` (1 s) at `offered`/s, served at `served`/s with latency `lat_ms`.
    fn interval(i: u32, offered: f64, served: u64, lat_ms: u64, stage: u32) -> (StoredInterval, IntervalLoad) {
        let mut st = OpStats::default();
        for _ in 0..served {
            st.record_ok(lat_ms * 1_000_000, lat_ms * 1_000_000);
        }
        let iv =
            StoredInterval { index: i, phase: Phase::Run, start_ms: i as u64 * 1000, end_ms: i as u64 * 1000 + 1000, op: "read".into(), stats: st, backlog: 0 };
        let load = IntervalLoad { index: i, offered_per_s: Some(offered), started: served, concurrency: None, stage, stage_label: format!("stage {stage}") };
        (iv, load)
    }

    fn analyse(rows: &[(StoredInterval, IntervalLoad)]) -> LoadAnalysis {
        let loads: Vec<IntervalLoad> = rows.iter().map(|r| r.1.clone()).collect();
        let mut acc = LoadAccumulator::new(&loads).unwrap();
        rows.iter().for_each(|r| acc.add(&r.0));
        acc.finish()
    }

    #[test]
    fn steps_give_a_point_per_level_and_the_knee_before_latency_climbs() {
        // 4 steps of 3 s: 100, 200, 300 served at 2 ms; 400 served at 250/s with 40 ms
        let mut rows = Vec::new();
        for (s, (offered, served, lat)) in [(100.0, 100, 2), (200.0, 200, 2), (300.0, 300, 3), (400.0, 250, 40)].into_iter().enumerate() {
            for k in 0..3 {
                rows.push(interval(s as u32 * 3 + k, offered, served, lat, s as u32));
            }
        }
        let a = analyse(&rows);
        assert!(a.open_loop);
        assert_eq!(a.stages.len(), 4);
        assert_eq!((a.stages[1].label.as_str(), a.stages[1].intervals, a.stages[1].achieved_per_s()), ("stage 1", 3, 200.0));
        assert_eq!(a.curve.len(), 4);
        assert_eq!(a.curve.iter().map(|g| g.label.as_str()).collect::<Vec<_>>(), ["100/s", "200/s", "300/s", "400/s"]);
        assert_eq!(a.knee, Some(2), "300/s is the last level served");
        assert!(!a.curve[3].kept());
    }

    #[test]
    fn a_continuous_ramp_is_cut_into_bands_and_a_curve_served_throughout_has_no_knee() {
        let rows: Vec<_> = (0..60).map(|i| interval(i, 100.0 + 10.0 * i as f64, 100 + 10 * i as u64, 2, 0)).collect();
        let a = analyse(&rows);
        assert_eq!(a.curve.len(), CURVE_LEVELS);
        assert_eq!(a.curve.iter().map(|g| g.intervals).sum::<usize>(), 60);
        assert!(a.curve.windows(2).all(|w| w[0].offered_per_s < w[1].offered_per_s));
        assert_eq!(a.knee, None);
        assert_eq!(a.stages.len(), 1);
        // warm-up rows and sub-operations stay out
        let mut acc = LoadAccumulator::new(&[rows[0].1.clone()]).unwrap();
        acc.add(&StoredInterval { phase: Phase::Warmup, ..rows[0].0.clone() });
        acc.add(&StoredInterval { op: "read.request".into(), ..rows[0].0.clone() });
        assert!(acc.finish().stages.is_empty());
        assert!(LoadAccumulator::new(&[]).is_none());
    }
}
