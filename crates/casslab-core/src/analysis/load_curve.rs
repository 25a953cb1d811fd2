//! Latency against offered load, from one run whose load changed over time: the measured
//! intervals of a run under a rate schedule (or a schedule of requests in flight) grouped by
//! the stage of the schedule they fell in (a summary per stage), and by the level of load they
//! were offered (the points of the latency-versus-throughput curve, the "hockey stick": p50 and
//! p99 against the achieved rate, with its knee). Grouping merges the intervals' histograms, so
//! a group's percentiles are those of all its operations, not an average of percentiles.
//!
//! The levels are what the schedule offered, as the engine recorded each interval's course
//! (`load_shape::Course`): the intervals that held one level of a stage (a level held, a step,
//! a spike over a held level) are one point, whatever jitter moved their edges; each interval
//! of a ramp or a sine is a point of its own, and beyond [`CURVE_MOVING_POINTS`] of them they
//! are cut into that many bands of equal width (held levels are never in a band). Intervals
//! that changed from one held level to another inside them offered no level and stay out, as do
//! levels of 0, the warm-up and the last partial interval (the wait for the requests in flight,
//! for which the engine records no load). Runs saved before the course was recorded have each
//! interval as a moving one.
//!
//! The knee is the last level before the load stopped being served: the level before the first
//! two in a row (or the highest level) whose p99 exceeded [`KNEE_P99_FACTOR`] times the p99 at
//! the lowest levels (the median of the lowest third's) or whose achieved rate fell more than 5 %
//! short of the offered one. One level alone — one second of a ramp, noisy — does not place
//! it. Computing is here; words and drawings are `report::stages_text` and
//! `report::curve_chart`.

use crate::load_shape::Course;
use crate::stats::{is_sub_op, IntervalLoad, OpStats, Phase};
use crate::store::{PhaseSummary, RunId, Store, StoreError, StoredInterval};
use std::collections::{BTreeMap, BTreeSet};

/// A level whose p99 exceeds this many times the low-load p99 is past the knee.
pub const KNEE_P99_FACTOR: f64 = 3.0;
/// The intervals of a ramp or a sine are a point each up to this many; beyond, their range of
/// offered levels is cut into this many bands of equal width.
pub const CURVE_MOVING_POINTS: usize = 60;

/// Intervals grouped: a stage of the schedule, or a level of offered load.
#[derive(Debug, Clone)]
pub struct LoadGroup {
    /// The stage as written (`ramp 100..5000 over 1m`), or the level: held (`400/s`, `8 in
    /// flight`), or of a moving load (`≈ 2400/s`).
    pub label: String,
    /// A level the schedule held (a stage's, a step's), not intervals of a moving load.
    pub held: bool,
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
    held: bool,
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
            held: self.held,
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

/// Which point of the curve an interval is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Point {
    /// A level held in a stage (its bits: the level exactly as the schedule has it).
    Held { stage: u32, level_bits: u64 },
    /// An interval of a moving load, by its index.
    Moving(u32),
    /// A band of moving intervals' levels.
    Band(usize),
}

/// Builds a [`LoadAnalysis`] one interval row at a time (a long run's histograms need not fit
/// in memory at once): the run's loads first, then its rows.
pub struct LoadAccumulator {
    loads: BTreeMap<u32, IntervalLoad>,
    open_loop: bool,
    /// The curve's point of each measured interval that offered a level.
    point_of: BTreeMap<u32, Point>,
    stages: BTreeMap<u32, Acc>,
    levels: BTreeMap<Point, Acc>,
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
        let measured = || loads.iter().filter(|l| l.phase == Phase::Run);
        let mut point_of = BTreeMap::new();
        let mut moving = Vec::new();
        for l in measured() {
            match l.course.unwrap_or(Course::Moving) {
                Course::Held(held) if held > 0.0 => {
                    point_of.insert(l.index, Point::Held { stage: l.stage, level_bits: held.to_bits() });
                }
                Course::Moving if level(l) > 0.0 => moving.push((l.index, level(l))),
                // nothing offered, or between two held levels: no level of the curve
                _ => {}
            }
        }
        let banded = moving.len() > CURVE_MOVING_POINTS;
        let (lo, hi) = moving.iter().fold((f64::INFINITY, 0.0_f64), |(a, b), (_, x)| (a.min(*x), b.max(*x)));
        let band =
            |x: f64| if hi > lo { (((x - lo) / (hi - lo)) * CURVE_MOVING_POINTS as f64).floor().min(CURVE_MOVING_POINTS as f64 - 1.0) as usize } else { 0 };
        for (index, x) in moving {
            point_of.insert(index, if banded { Point::Band(band(x)) } else { Point::Moving(index) });
        }
        Some(LoadAccumulator {
            loads: loads.iter().map(|l| (l.index, l.clone())).collect(),
            open_loop,
            point_of,
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
        if let Some(point) = self.point_of.get(&iv.index) {
            let acc = self.levels.entry(*point).or_default();
            if let Point::Held { level_bits, .. } = point {
                let l = f64::from_bits(*level_bits);
                acc.held = true;
                acc.label = if self.open_loop { format!("{l:.0}/s") } else { format!("{l:.0} in flight") };
            }
            acc.add(iv, load);
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
                if !g.held {
                    g.label = match (g.offered_per_s, g.concurrency) {
                        (Some(o), _) => format!("≈ {o:.0}/s"),
                        (None, Some(c)) => format!("≈ {c:.0} in flight"),
                        _ => String::new(),
                    };
                }
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
    // the low-load p99: the median of the lowest third of the levels
    let mut lowest: Vec<f64> = served[..served.len().div_ceil(3)].iter().map(|g| p99(g)).collect();
    lowest.sort_by(f64::total_cmp);
    let low = lowest[(lowest.len() - 1) / 2];
    let bad = |g: &LoadGroup| g.summary.total.latency.count == 0 || p99(g) > KNEE_P99_FACTOR * low || !g.kept();
    // the first of two levels in a row past the limits, or the highest level past them
    let first_bad = (0..curve.len()).find(|&i| bad(&curve[i]) && curve.get(i + 1).is_none_or(bad))?;
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
    use crate::load_shape::{Curve, LoadShape};

    /// One interval `i` from `from_s` to `to_s` of a run under `curve` (its first `warm` intervals
    /// warm-up), served at the offered rate with latency `lat_ms`, and its load as the engine
    /// records it.
    fn on_curve(curve: &Curve, i: u32, (from_s, to_s): (f64, f64), warm: u32, lat_ms: u64) -> (StoredInterval, IntervalLoad) {
        let offered = curve.mean_level(from_s, to_s);
        let served = (offered * (to_s - from_s)).round() as u64;
        let mut st = OpStats::default();
        (0..served).for_each(|_| st.record_ok(lat_ms * 1_000_000, lat_ms * 1_000_000));
        let phase = if i < warm { Phase::Warmup } else { Phase::Run };
        let (start_ms, end_ms) = ((from_s * 1000.0) as u64, (to_s * 1000.0) as u64);
        let iv = StoredInterval { index: i, phase, start_ms, end_ms, op: "read".into(), stats: st, backlog: 0 };
        let stage = curve.stage_at((from_s + to_s) / 2.0);
        let load = IntervalLoad {
            index: i,
            offered_per_s: Some(offered),
            started: served,
            concurrency: None,
            stage: stage as u32,
            stage_label: curve.stages()[stage].label.clone(),
            phase,
            course: Some(curve.course(from_s, to_s)),
        };
        (iv, load)
    }

    /// `n` intervals of 1 s of `shape`, each tick `late_ms(i)` late (the ticker's jitter).
    fn run_of(shape: &str, n: u32, warm: u32, late_ms: impl Fn(u32) -> f64) -> Vec<(StoredInterval, IntervalLoad)> {
        let curve = Curve::compile(&LoadShape::parse(shape).unwrap(), n as f64);
        let at = |i: u32| if i == 0 { 0.0 } else { i as f64 + late_ms(i) / 1000.0 };
        (0..n).map(|i| on_curve(&curve, i, (at(i), at(i + 1)), warm, 2)).collect()
    }

    fn analyse(rows: &[(StoredInterval, IntervalLoad)]) -> LoadAnalysis {
        let loads: Vec<IntervalLoad> = rows.iter().map(|r| r.1.clone()).collect();
        let mut acc = LoadAccumulator::new(&loads).unwrap();
        rows.iter().for_each(|r| acc.add(&r.0));
        acc.finish()
    }

    fn points(a: &LoadAnalysis) -> Vec<(String, usize)> {
        a.curve.iter().map(|g| (g.label.clone(), g.intervals)).collect()
    }

    #[test]
    fn held_levels_are_one_point_each_and_a_ramp_one_point_per_interval() {
        // the load-shapes guide's example, its ticks up to 9 ms late: every held level is one
        // point of all its intervals, jitter or not, and the ramp's intervals a point each
        let jitter = |i: u32| ((i * 7919) % 10) as f64;
        let a = analyse(&run_of("200 for 8s, 400 for 8s, ramp 400..800 over 8s, 800 for 8s", 32, 0, jitter));
        let labels: Vec<String> = a.curve.iter().map(|g| g.label.clone()).collect();
        assert_eq!(a.curve.len(), 11, "{labels:?}");
        assert_eq!(points(&a)[..2], [("200/s".to_string(), 8), ("400/s".to_string(), 8)]);
        assert_eq!(points(&a)[10], ("800/s".to_string(), 8), "the held 800 alone, no ramp interval in it");
        let ramp: Vec<&LoadGroup> = a.curve[2..10].iter().collect();
        assert!(ramp.iter().all(|g| !g.held && g.intervals == 1 && g.label.starts_with("≈ ")), "{labels:?}");
        assert!(ramp.windows(2).all(|w| w[0].offered_per_s < w[1].offered_per_s));
        assert!((ramp[0].offered_per_s.unwrap() - 425.0).abs() < 5.0, "{labels:?}");
        assert_eq!(a.stages.len(), 4);
        assert_eq!(a.knee, None, "served throughout");
        // in 200 such runs, with other jitter, never a held level split or a spurious one
        for seed in 1..200u32 {
            let jitter = |i: u32| ((i.wrapping_mul(2_654_435_761).wrapping_add(seed.wrapping_mul(40_503))) % 25) as f64;
            let a = analyse(&run_of("200 for 8s, 400 for 8s, ramp 400..800 over 8s, 800 for 8s", 32, 0, jitter));
            let held: Vec<(String, usize)> = a.curve.iter().filter(|g| g.held).map(|g| (g.label.clone(), g.intervals)).collect();
            assert_eq!(held, [("200/s".into(), 8), ("400/s".into(), 8), ("800/s".into(), 8)], "seed {seed}: {:?}", points(&a));
        }
    }

    #[test]
    fn steps_give_a_point_per_step_and_the_knee_before_latency_climbs() {
        // steps of 1000, 2000, 4000 for 3 s each, ticks a few ms late: no point between the steps
        let rows: Vec<_> = run_of("steps 1000 2000 4000 each 3s, 4000", 9, 0, |i| (i % 4) as f64 + 1.0)
            .into_iter()
            .map(|(mut iv, l)| {
                // 4000/s served at 3000/s with 40 ms
                if l.course == Some(Course::Held(4000.0)) {
                    let mut st = OpStats::default();
                    (0..3000).for_each(|_| st.record_ok(40_000_000, 40_000_000));
                    iv.stats = st;
                }
                (iv, l)
            })
            .collect();
        let a = analyse(&rows);
        assert_eq!(points(&a), [("1000/s".into(), 3), ("2000/s".into(), 3), ("4000/s".into(), 3)]);
        assert_eq!(a.stages.len(), 1, "one stage of steps");
        assert_eq!(a.knee, Some(1), "2000/s is the last level served");
        assert!(!a.curve[2].kept());
    }

    #[test]
    fn one_noisy_second_of_a_ramp_does_not_place_the_knee() {
        // a ramp served at 2 ms throughout, but one interval at 10 ms; then two at 40 ms at the top
        let mut rows = run_of("ramp 100..1300 over 12s", 12, 0, |_| 2.0);
        let slow = |iv: &mut StoredInterval, ms: u64| {
            let mut st = OpStats::default();
            (0..iv.stats.ok).for_each(|_| st.record_ok(ms * 1_000_000, ms * 1_000_000));
            iv.stats = st;
        };
        slow(&mut rows[5].0, 10);
        assert_eq!(analyse(&rows).knee, None, "one noisy second is not the knee");
        slow(&mut rows[10].0, 40);
        slow(&mut rows[11].0, 40);
        assert_eq!(analyse(&rows).knee, Some(9), "the level before two in a row past 3× the low-load p99");
    }

    #[test]
    fn a_long_ramp_is_banded_apart_from_held_levels_and_the_warm_up_is_left_out() {
        // 5 s of warm-up at 5000/s, a 100 s ramp, 600/s held: the bands cover the measured ramp
        let rows = run_of("5000 for 5s, ramp 100..1100 over 100s, 600 for 10s", 115, 5, |_| 3.0);
        let a = analyse(&rows);
        let bands: Vec<&LoadGroup> = a.curve.iter().filter(|g| !g.held).collect();
        assert_eq!(bands.len(), CURVE_MOVING_POINTS);
        assert_eq!(bands.iter().map(|g| g.intervals).sum::<usize>(), 100);
        assert!(bands.iter().all(|g| g.offered_per_s.unwrap() < 1100.0), "the warm-up's 5000/s is in no band");
        let held: Vec<&LoadGroup> = a.curve.iter().filter(|g| g.held).collect();
        assert_eq!((held.len(), held[0].label.as_str(), held[0].intervals), (1, "600/s", 10), "the held level beside the bands, whole");
        assert!(a.curve.windows(2).all(|w| w[0].offered_per_s <= w[1].offered_per_s));
    }

    #[test]
    fn intervals_between_levels_at_zero_or_of_old_runs() {
        // ticks half a second off the steps: every interval straddles two levels, and offers none
        let curve = Curve::compile(&LoadShape::parse("steps 100 300 500 each 2s, 0 for 2s, 500").unwrap(), 10.0);
        let rows: Vec<_> = (0..9).map(|i| on_curve(&curve, i, (i as f64 + 0.5, i as f64 + 1.5), 0, 2)).collect();
        let a = analyse(&rows);
        let held: Vec<(String, usize)> = a.curve.iter().map(|g| (g.label.clone(), g.intervals)).collect();
        // 500/s in the steps and 500/s after the stage at 0: two stages, two points; 0/s is no
        // level, and the straddling intervals offered none
        assert_eq!(held, [("100/s".into(), 1), ("300/s".into(), 1), ("500/s".into(), 1), ("500/s".into(), 1)]);
        // a run saved before the course was recorded: each interval a moving point
        let old: Vec<_> = rows.iter().cloned().map(|(iv, l)| (iv, IntervalLoad { course: None, ..l })).collect();
        assert!(analyse(&old).curve.iter().all(|g| !g.held && g.intervals == 1));
        // warm-up rows and sub-operations stay out
        let mut acc = LoadAccumulator::new(&[rows[0].1.clone()]).unwrap();
        acc.add(&StoredInterval { phase: Phase::Warmup, ..rows[0].0.clone() });
        acc.add(&StoredInterval { op: "read.request".into(), ..rows[0].0.clone() });
        assert!(acc.finish().stages.is_empty());
        assert!(LoadAccumulator::new(&[]).is_none());
    }
}
