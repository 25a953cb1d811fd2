//! Windowing: a run's saved intervals (one row per interval and operation) grouped into
//! consecutive windows of `window_s` seconds of its measured phase, per operation and for all
//! operations together. A window keeps its merged histograms in compact form ([`Buckets`]:
//! only the buckets it used), its ok and error counts and its duration, so a long run costs
//! kilobytes per window rather than a full 250 KB histogram per operation.
//!
//! Rules, in one place:
//! - The measured phase is the run phase; a run that only has a load phase is measured by its
//!   load phase. Warm-up is never measured.
//! - Window k holds the intervals whose start lies in `[t0 + k·w, t0 + (k+1)·w)`, where `t0`
//!   is the start of the phase's first interval. Its duration is the sum of its intervals'
//!   durations (so a gap in the saved intervals does not inflate throughput).
//! - A trailing partial window shorter than half a window is dropped (it would weigh as
//!   much as a full one in the resampling while holding little data); one of at least half
//!   a window is kept. If the whole phase is shorter than half a window, its one window is
//!   kept anyway, so that point estimates still exist (the comparison will call it too short).
//!
//! Not here: resampling ([`super::Sample`]) and reading the store.

use super::AnalysisError;
use crate::stats::{is_sub_op, OpStats, Phase};
use crate::store::StoredInterval;
use hdrhistogram::Histogram;

/// Which operation a figure is about: one of the workload's operations, or all merged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OpRef {
    Op(String),
    Total,
}

impl OpRef {
    pub fn name(&self) -> &str {
        match self {
            OpRef::Op(n) => n,
            OpRef::Total => "total",
        }
    }
}

/// One histogram reduced to the buckets it used, in ascending order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Buckets {
    /// Each used bucket's highest equivalent value, in ns (what HdrHistogram's
    /// `value_at_quantile` reports for it).
    pub values_ns: Vec<u64>,
    pub counts: Vec<u64>,
    /// Σ count × the bucket's median equivalent value (how HdrHistogram computes the mean).
    pub sum_ns: f64,
}

impl Buckets {
    pub fn of(h: &Histogram<u64>) -> Buckets {
        let mut b = Buckets::default();
        for v in h.iter_recorded() {
            let value = v.value_iterated_to();
            b.values_ns.push(h.highest_equivalent(value));
            b.counts.push(v.count_at_value());
            b.sum_ns += h.median_equivalent(value) as f64 * v.count_at_value() as f64;
        }
        b
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn max_ns(&self) -> u64 {
        self.values_ns.last().copied().unwrap_or(0)
    }
}

/// One operation's records over one window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowOp {
    pub ok: u64,
    pub errors: u64,
    pub intended: Buckets,
    pub service: Buckets,
}

impl WindowOp {
    fn of(s: &OpStats) -> WindowOp {
        WindowOp { ok: s.ok, errors: s.error_count(), intended: Buckets::of(&s.intended), service: Buckets::of(&s.service) }
    }
}

/// A window of a measured phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// Milliseconds since the run started: start of its first interval, end of its last.
    pub start_ms: u64,
    pub end_ms: u64,
    /// Sum of its intervals' durations.
    pub duration_s: f64,
    /// One entry per name in [`Windows::ops`], in that order.
    pub ops: Vec<WindowOp>,
    pub total: WindowOp,
}

/// The windows of one run, or of several repetitions of a variant pooled together.
#[derive(Debug, Clone, PartialEq)]
pub struct Windows {
    pub phase: Phase,
    pub window_s: f64,
    /// Operation names, in the order first seen.
    pub ops: Vec<String>,
    pub windows: Vec<Window>,
    /// How many runs were pooled.
    pub runs: usize,
    /// Seconds of trailing partial windows left out.
    pub dropped_s: f64,
}

impl Windows {
    /// Windows of one run's intervals (as [`crate::store::Store::intervals`] returns them).
    pub fn of_run(intervals: &[StoredInterval], window_s: f64) -> Result<Windows, AnalysisError> {
        let mut b = WindowBuilder::new(window_s)?;
        intervals.iter().for_each(|iv| b.push(iv));
        b.finish()
    }

    /// Several runs of the same variant (repetitions) as one set of windows.
    pub fn pool(parts: Vec<Windows>) -> Result<Windows, AnalysisError> {
        let mut parts = parts.into_iter();
        let mut out = parts.next().ok_or(AnalysisError::NoMeasuredIntervals)?;
        for p in parts {
            if p.phase != out.phase {
                return Err(AnalysisError::MixedPhases(out.phase.as_str(), p.phase.as_str()));
            }
            let map: Vec<usize> = p.ops.iter().map(|name| index_of(&mut out.ops, name)).collect();
            for mut w in p.windows {
                let mut ops = vec![WindowOp::default(); out.ops.len()];
                for (from, op) in w.ops.drain(..).enumerate() {
                    ops[map[from]] = op;
                }
                out.windows.push(Window { ops, ..w });
            }
            out.runs += p.runs;
            out.dropped_s += p.dropped_s;
        }
        let n = out.ops.len();
        out.windows.iter_mut().for_each(|w| w.ops.resize_with(n, WindowOp::default));
        Ok(out)
    }

    pub fn len(&self) -> usize {
        self.windows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Seconds covered by the windows.
    pub fn measured_s(&self) -> f64 {
        self.windows.iter().map(|w| w.duration_s).sum()
    }

    /// The records of `op` in window `i`; `None` for an operation these runs never did.
    pub fn op(&self, i: usize, op: &OpRef) -> Option<&WindowOp> {
        let w = &self.windows[i];
        match op {
            OpRef::Total => Some(&w.total),
            OpRef::Op(name) => self.ops.iter().position(|n| n == name).map(|j| &w.ops[j]),
        }
    }

    pub fn has_op(&self, op: &OpRef) -> bool {
        matches!(op, OpRef::Total) || self.ops.iter().any(|n| n == op.name())
    }
}

fn index_of(names: &mut Vec<String>, name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or_else(|| {
        names.push(name.to_string());
        names.len() - 1
    })
}

/// The window being filled: full histograms while it is open, compacted when it closes.
struct Open {
    k: u64,
    start_ms: u64,
    end_ms: u64,
    duration_ms: u64,
    last_index: Option<u32>,
    ops: Vec<OpStats>,
    total: OpStats,
}

#[derive(Default)]
struct PhaseWindows {
    t0_ms: Option<u64>,
    open: Option<Open>,
    closed: Vec<Window>,
    ops: Vec<String>,
}

impl PhaseWindows {
    fn push(&mut self, iv: &StoredInterval, window_ms: u64) {
        let t0 = *self.t0_ms.get_or_insert(iv.start_ms);
        let k = iv.start_ms.saturating_sub(t0) / window_ms;
        if self.open.as_ref().is_some_and(|o| k > o.k) {
            self.close();
        }
        let open = self.open.get_or_insert_with(|| Open {
            k,
            start_ms: iv.start_ms,
            end_ms: iv.end_ms,
            duration_ms: 0,
            last_index: None,
            ops: Vec::new(),
            total: OpStats::default(),
        });
        // One row per operation: an interval's duration counts once.
        if open.last_index != Some(iv.index) {
            open.last_index = Some(iv.index);
            open.duration_ms += iv.end_ms.saturating_sub(iv.start_ms);
        }
        open.end_ms = open.end_ms.max(iv.end_ms);
        let j = index_of(&mut self.ops, &iv.op);
        if open.ops.len() <= j {
            open.ops.resize_with(j + 1, OpStats::default);
        }
        open.ops[j].merge(&iv.stats);
    }

    fn close(&mut self) {
        if let Some(mut o) = self.open.take() {
            // The total once per window rather than once per interval: merging full
            // histograms is the costly part of windowing.
            // (figures recorded beside operations, `<op>.request`, are not in the total)
            o.ops.iter().enumerate().filter(|(j, _)| !self.ops.get(*j).is_some_and(|n| is_sub_op(n))).for_each(|(_, s)| o.total.merge(s));
            self.closed.push(Window {
                start_ms: o.start_ms,
                end_ms: o.end_ms,
                duration_s: o.duration_ms as f64 / 1000.0,
                ops: o.ops.iter().map(WindowOp::of).collect(),
                total: WindowOp::of(&o.total),
            });
        }
    }
}

/// Builds [`Windows`] from intervals pushed one at a time, in the store's order (by interval
/// index), so a caller can stream a long run through it.
pub struct WindowBuilder {
    window_s: f64,
    window_ms: u64,
    run: PhaseWindows,
    load: PhaseWindows,
}

impl WindowBuilder {
    pub fn new(window_s: f64) -> Result<WindowBuilder, AnalysisError> {
        if !(window_s.is_finite() && window_s > 0.0) {
            return Err(AnalysisError::BadWindow(window_s));
        }
        let window_ms = ((window_s * 1000.0).round() as u64).max(1);
        Ok(WindowBuilder { window_s, window_ms, run: PhaseWindows::default(), load: PhaseWindows::default() })
    }

    pub fn push(&mut self, iv: &StoredInterval) {
        match iv.phase {
            Phase::Run => self.run.push(iv, self.window_ms),
            Phase::Load => self.load.push(iv, self.window_ms),
            Phase::Warmup => {}
        }
    }

    pub fn finish(self) -> Result<Windows, AnalysisError> {
        let (phase, mut p) = if self.run.t0_ms.is_some() { (Phase::Run, self.run) } else { (Phase::Load, self.load) };
        p.close();
        if p.closed.is_empty() {
            return Err(AnalysisError::NoMeasuredIntervals);
        }
        let mut dropped_s = 0.0;
        if p.closed.len() > 1 && p.closed.last().is_some_and(|w| w.duration_s < self.window_s / 2.0) {
            dropped_s = p.closed.pop().map_or(0.0, |w| w.duration_s);
        }
        let n = p.ops.len();
        p.closed.iter_mut().for_each(|w| w.ops.resize_with(n, WindowOp::default));
        Ok(Windows { phase, window_s: self.window_s, ops: p.ops, windows: p.closed, runs: 1, dropped_s })
    }
}

/// Windows a comparison aims for when the window length is chosen from the runs' length.
pub const AUTO_WINDOWS: f64 = 10.0;
/// The longest window chosen by itself: the default of a long run.
pub const AUTO_WINDOW_MAX_S: f64 = 60.0;

/// The window length for runs whose measured phases last `measured_s` seconds, sampled every
/// `interval_s`: about [`AUTO_WINDOWS`] windows of the shortest run, a whole number of
/// intervals, at least one interval and at most [`AUTO_WINDOW_MAX_S`].
pub fn auto_window_s(measured_s: &[f64], interval_s: f64) -> f64 {
    let interval_s = if interval_s.is_finite() && interval_s > 0.0 { interval_s } else { 1.0 };
    let shortest = measured_s.iter().copied().filter(|s| s.is_finite() && *s > 0.0).fold(f64::INFINITY, f64::min);
    if !shortest.is_finite() {
        return AUTO_WINDOW_MAX_S;
    }
    let intervals = (shortest / AUTO_WINDOWS / interval_s).floor().max(1.0);
    (intervals * interval_s).min(AUTO_WINDOW_MAX_S.max(interval_s))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 1-second interval `index` of `phase` with `ok` reads of `latency_ns` (and, when
    /// `writes` > 0, that many writes of twice the latency).
    pub(crate) fn interval(index: u32, phase: Phase, ok: u64, latency_ns: u64, writes: u64) -> Vec<StoredInterval> {
        let stats = |n: u64, v: u64| {
            let mut s = OpStats::default();
            (0..n).for_each(|_| s.record_ok(v, v));
            s
        };
        let start_ms = u64::from(index) * 1000;
        let row = |op: &str, stats| StoredInterval { index, phase, start_ms, end_ms: start_ms + 1000, op: op.into(), stats, backlog: 0 };
        let mut rows = vec![row("read", stats(ok, latency_ns))];
        if writes > 0 {
            rows.push(row("write", stats(writes, 2 * latency_ns)));
        }
        rows
    }

    fn run(phases: &[(Phase, u32)], writes: u64) -> Vec<StoredInterval> {
        let mut index = 0;
        let mut out = Vec::new();
        for &(phase, n) in phases {
            for _ in 0..n {
                out.extend(interval(index, phase, 10 + u64::from(index), 1_000_000, writes));
                index += 1;
            }
        }
        out
    }

    #[test]
    fn intervals_group_into_windows_of_the_measured_phase() {
        let ivs = run(&[(Phase::Load, 7), (Phase::Warmup, 5), (Phase::Run, 25)], 3);
        let w = Windows::of_run(&ivs, 10.0).unwrap();
        assert_eq!(w.phase, Phase::Run);
        assert_eq!(w.ops, ["read", "write"]);
        // 25 s of run in 10 s windows: 10 + 10 + a 5 s tail, which is half a window: kept.
        assert_eq!(w.len(), 3);
        assert_eq!(w.windows.iter().map(|w| w.duration_s).collect::<Vec<_>>(), [10.0, 10.0, 5.0]);
        assert_eq!((w.windows[0].start_ms, w.windows[0].end_ms), (12_000, 22_000));
        // Run intervals have indices 12..37, with 10 + index reads each.
        assert_eq!(w.windows[0].ops[0].ok, (12..22).map(|i| 10 + i).sum::<u64>());
        assert_eq!(w.windows[0].ops[1].ok, 30);
        assert_eq!(w.windows[0].total.ok, w.windows[0].ops[0].ok + 30);
        assert_eq!(w.windows[0].total.intended.count(), w.windows[0].total.ok);
        assert_eq!(w.dropped_s, 0.0);
        assert_eq!(w.measured_s(), 25.0);
    }

    #[test]
    fn a_short_partial_tail_is_dropped() {
        let ivs = run(&[(Phase::Run, 24)], 0);
        let w = Windows::of_run(&ivs, 10.0).unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(w.dropped_s, 4.0);
        // ... unless it is all there is.
        let w = Windows::of_run(&run(&[(Phase::Run, 3)], 0), 10.0).unwrap();
        assert_eq!((w.len(), w.dropped_s, w.windows[0].duration_s), (1, 0.0, 3.0));
    }

    #[test]
    fn a_load_only_run_is_measured_by_its_load_phase() {
        let w = Windows::of_run(&run(&[(Phase::Load, 20)], 0), 5.0).unwrap();
        assert_eq!((w.phase, w.len()), (Phase::Load, 4));
        assert_eq!(Windows::of_run(&run(&[(Phase::Warmup, 5)], 0), 5.0), Err(AnalysisError::NoMeasuredIntervals));
        assert_eq!(Windows::of_run(&[], 5.0), Err(AnalysisError::NoMeasuredIntervals));
        assert!(matches!(WindowBuilder::new(0.0), Err(AnalysisError::BadWindow(_))));
    }

    #[test]
    fn gaps_do_not_count_as_measured_time() {
        let mut ivs = run(&[(Phase::Run, 20)], 0);
        ivs.retain(|iv| !(3..6).contains(&iv.index));
        let w = Windows::of_run(&ivs, 10.0).unwrap();
        assert_eq!(w.windows.iter().map(|w| w.duration_s).collect::<Vec<_>>(), [7.0, 10.0]);
    }

    #[test]
    fn buckets_keep_what_hdrhistogram_reports() {
        let mut s = OpStats::default();
        for v in 1..=2000u64 {
            s.record_ok(v * 7_919, v);
        }
        let b = Buckets::of(&s.intended);
        assert_eq!(b.count(), 2000);
        assert_eq!(b.max_ns(), s.intended.max());
        assert!((b.sum_ns / 2000.0 - s.intended.mean()).abs() < 1e-6 * s.intended.mean());
        assert!(b.values_ns.windows(2).all(|p| p[0] < p[1]));
    }

    #[test]
    fn pooled_runs_line_up_their_operations() {
        let a = Windows::of_run(&run(&[(Phase::Run, 20)], 0), 10.0).unwrap();
        let b = Windows::of_run(&run(&[(Phase::Run, 30)], 2), 10.0).unwrap();
        let p = Windows::pool(vec![a, b]).unwrap();
        assert_eq!((p.len(), p.runs), (5, 2));
        assert_eq!(p.ops, ["read", "write"]);
        assert!(p.windows.iter().all(|w| w.ops.len() == 2));
        assert_eq!(p.windows[0].ops[1].ok, 0);
        assert_eq!(p.op(4, &OpRef::Op("write".into())).unwrap().ok, 20);
        assert!(p.op(0, &OpRef::Op("scan".into())).is_none());
        let load = Windows::of_run(&run(&[(Phase::Load, 20)], 0), 10.0).unwrap();
        let run_w = Windows::of_run(&run(&[(Phase::Run, 20)], 0), 10.0).unwrap();
        assert_eq!(Windows::pool(vec![run_w, load]), Err(AnalysisError::MixedPhases("run", "load")));
    }

    #[test]
    fn the_window_is_chosen_from_the_shortest_run() {
        // default-length runs (30 s): 10 windows of 3 s
        assert_eq!(auto_window_s(&[30.0, 31.0], 1.0), 3.0);
        assert_eq!(auto_window_s(&[600.0, 30.0], 1.0), 3.0);
        // long runs keep the 60 s windows
        assert_eq!(auto_window_s(&[3600.0], 1.0), 60.0);
        // whole intervals, never under one
        assert_eq!(auto_window_s(&[25.0], 2.0), 2.0);
        assert_eq!(auto_window_s(&[5.0], 1.0), 1.0);
        assert_eq!(auto_window_s(&[], 1.0), 60.0);
    }
}
