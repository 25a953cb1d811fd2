//! The impact of each event of a run, from its saved intervals: a baseline window before the
//! event against the time it lasted and the time after it — throughput change, p99 change per
//! operation, errors by kind — and the recovery time. Pure arithmetic on interval figures.
//!
//! Definitions (defaults in [`ImpactSettings`]):
//! - **baseline**: the last 20 s (at most) of intervals that end before the event starts and
//!   that no earlier event disturbed — an event disturbs from its start until it recovered, or,
//!   when it had no baseline to recover to, until it ended — so an event that follows another
//!   closely is judged against the undisturbed stretch before both; throughput is their mean,
//!   each operation's p99 the median of their p99s.
//! - **setup events** (`setup ACTION`, carried out before the run's load and run phases) have
//!   no impact and disturb nothing.
//! - **during**: the intervals that overlap the event (at least the one it starts in); the
//!   worst interval's p99 counts.
//! - **after**: from the event's end until the next event starts (or the run ends); mean
//!   throughput, median p99.
//! - **errors**: failed requests by kind from the event's start until it recovered (or until
//!   the next event, when it never did).
//! - **recovery time**: from the event's start to the start of the first of 3 consecutive
//!   intervals without errors whose throughput is at least 90% of the baseline and whose p99 of
//!   every operation is at most 50% (or 1 ms, whichever is more) above its baseline, after the
//!   last interval of the event's own time that left those bounds (so a long event that hurts
//!   late has not recovered in its quiet start); 0 when the run never left them. `None` when it
//!   did not recover before the run ended.

use crate::events::EventRecord;
use crate::stats::{ErrorKind, IntervalSample, Phase};
use crate::store::StoredInterval;
pub use crate::store::{EventImpact, P99Change};
use std::collections::BTreeMap;

/// Windows and tolerances of the impact computation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImpactSettings {
    /// Longest baseline before an event.
    pub baseline_ms: u64,
    /// Recovered throughput is at least this much below the baseline's (percent).
    pub ops_tolerance_pct: f64,
    /// Recovered p99 is at most this much above the baseline's (percent) ...
    pub p99_tolerance_pct: f64,
    /// ... or this many nanoseconds, whichever is more (short p99s are noisy).
    pub p99_floor_ns: u64,
    /// Consecutive intervals within the tolerances that make a recovery.
    pub stable_intervals: usize,
}

impl Default for ImpactSettings {
    fn default() -> Self {
        ImpactSettings { baseline_ms: 20_000, ops_tolerance_pct: 10.0, p99_tolerance_pct: 50.0, p99_floor_ns: 1_000_000, stable_intervals: 3 }
    }
}

/// One interval's figures, all operations of the run phase (warm-up included).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IntervalPoint {
    pub start_ms: u64,
    pub end_ms: u64,
    /// Successful operations per second, all operations together.
    pub ops_per_s: f64,
    /// p99 latency (from the intended start) per operation, of the operations that had any.
    pub p99_ns: BTreeMap<String, u64>,
    pub errors: BTreeMap<ErrorKind, u64>,
}

/// One interval of the run phase as it closes (the session gathers these while it runs, so an
/// event's impact needs no second read of the saved intervals).
pub fn point_of(s: &IntervalSample) -> IntervalPoint {
    let d_s = s.duration_s();
    let mut p = IntervalPoint { start_ms: s.start_ms, end_ms: s.end_ms, ..Default::default() };
    for (op, st) in &s.ops {
        if d_s > 0.0 {
            p.ops_per_s += st.ok as f64 / d_s;
        }
        if st.ok > 0 {
            p.p99_ns.insert(op.clone(), st.intended.value_at_quantile(0.99));
        }
        for (k, v) in &st.errors {
            *p.errors.entry(*k).or_default() += v;
        }
    }
    p
}

/// The run phase's saved intervals (warm-up included, load left out) as points.
pub fn points(intervals: &[StoredInterval]) -> Vec<IntervalPoint> {
    intervals
        .chunk_by(|a, b| a.index == b.index)
        .filter(|rows| rows[0].phase != Phase::Load)
        .map(|rows| {
            let d_s = rows[0].duration_s();
            let mut p = IntervalPoint { start_ms: rows[0].start_ms, end_ms: rows[0].end_ms, ..Default::default() };
            for r in rows {
                if d_s > 0.0 {
                    p.ops_per_s += r.stats.ok as f64 / d_s;
                }
                if r.stats.ok > 0 {
                    p.p99_ns.insert(r.op.clone(), r.stats.intended.value_at_quantile(0.99));
                }
                for (k, v) in &r.stats.errors {
                    *p.errors.entry(*k).or_default() += v;
                }
            }
            p
        })
        .collect()
}

fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    (!v.is_empty()).then(|| v[(v.len() - 1) / 2])
}

fn mean_ops(pts: &[&IntervalPoint]) -> Option<f64> {
    let d_ms: u64 = pts.iter().map(|p| p.end_ms.saturating_sub(p.start_ms)).sum();
    (d_ms > 0).then(|| pts.iter().map(|p| p.ops_per_s * p.end_ms.saturating_sub(p.start_ms) as f64).sum::<f64>() / d_ms as f64)
}

struct Baseline {
    from_ms: u64,
    to_ms: u64,
    ops_per_s: f64,
    p99_ns: BTreeMap<String, u64>,
}

fn baseline(pts: &[IntervalPoint], clean: &[bool], start_ms: u64, s: &ImpactSettings) -> Option<Baseline> {
    let before: Vec<usize> = (0..pts.len()).filter(|&i| clean[i] && pts[i].end_ms <= start_ms).collect();
    let last_end = pts[*before.last()?].end_ms;
    let chosen: Vec<&IntervalPoint> = before.iter().map(|&i| &pts[i]).filter(|p| p.start_ms + s.baseline_ms >= last_end).collect();
    let mut p99: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for p in &chosen {
        for (op, v) in &p.p99_ns {
            p99.entry(op.clone()).or_default().push(*v);
        }
    }
    Some(Baseline {
        from_ms: chosen.first()?.start_ms,
        to_ms: last_end,
        ops_per_s: mean_ops(&chosen)?,
        p99_ns: p99.into_iter().filter_map(|(op, v)| Some((op, median(v)?))).collect(),
    })
}

fn within(p: &IntervalPoint, b: &Baseline, s: &ImpactSettings) -> bool {
    let ops_ok = p.ops_per_s >= b.ops_per_s * (1.0 - s.ops_tolerance_pct / 100.0);
    let p99_ok = p.p99_ns.iter().all(|(op, v)| match b.p99_ns.get(op) {
        Some(&base) => (*v as f64) <= (base as f64 * (1.0 + s.p99_tolerance_pct / 100.0)).max((base + s.p99_floor_ns) as f64),
        None => true,
    });
    ops_ok && p99_ok && p.errors.values().all(|n| *n == 0)
}

/// The impact of every event (in the order given, which must be firing order) on the run
/// described by `pts`. Skipped events get no impact.
pub fn impacts(pts: &[IntervalPoint], events: &[EventRecord], s: &ImpactSettings) -> Vec<Option<EventImpact>> {
    let mut clean = vec![true; pts.len()];
    let mut out = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        let unmeasured = |e: &EventRecord| e.status == crate::events::EventStatus::Skipped || e.is_setup();
        if unmeasured(ev) {
            out.push(None);
            continue;
        }
        let next_start = events[i + 1..].iter().find(|e| !unmeasured(e)).map_or(u64::MAX, |e| e.start_ms);
        let end_ms = ev.end_ms.max(ev.start_ms + 1);
        let during: Vec<&IntervalPoint> = pts.iter().filter(|p| p.start_ms < end_ms && p.end_ms > ev.start_ms).collect();
        let after: Vec<&IntervalPoint> = pts.iter().filter(|p| p.start_ms >= ev.end_ms && p.start_ms < next_start).collect();
        let base = baseline(pts, &clean, ev.start_ms, s);
        // The first interval the event touches, and the recovery point from there on.
        let first = pts.iter().position(|p| p.end_ms > ev.start_ms);
        // A long event (a bootstrap, a replacement) may disturb the run only late: it has
        // recovered after its last interval out of bounds, not in the quiet intervals before.
        let recovered_at: Option<usize> = match (&base, first) {
            (Some(b), Some(f)) => {
                let last_out = (f..pts.len()).rev().find(|&j| pts[j].start_ms < end_ms && !within(&pts[j], b, s));
                let from = last_out.map_or(f, |j| j + 1);
                (from..pts.len()).find(|&j| j + s.stable_intervals <= pts.len() && pts[j..j + s.stable_intervals].iter().all(|p| within(p, b, s)))
            }
            _ => None,
        };
        let recovery_ms = recovered_at.map(|j| pts[j].start_ms.saturating_sub(ev.start_ms));
        // Errors from the event's start until it recovered (or the next event began).
        let errors_until = recovered_at.map_or(next_start, |j| pts[j].start_ms);
        let mut errors: BTreeMap<ErrorKind, u64> = BTreeMap::new();
        for p in pts.iter().filter(|p| p.end_ms > ev.start_ms && p.start_ms < errors_until) {
            for (k, v) in &p.errors {
                *errors.entry(*k).or_default() += v;
            }
        }
        let ops: Vec<String> = {
            let mut names: Vec<String> = base.as_ref().map(|b| b.p99_ns.keys().cloned().collect()).unwrap_or_default();
            for p in during.iter().chain(&after) {
                for op in p.p99_ns.keys() {
                    if !names.contains(op) {
                        names.push(op.clone());
                    }
                }
            }
            names
        };
        let p99 = match &base {
            Some(b) => ops
                .iter()
                .filter_map(|op| {
                    Some(P99Change {
                        op: op.clone(),
                        baseline_ns: *b.p99_ns.get(op)?,
                        during_ns: during.iter().filter_map(|p| p.p99_ns.get(op).copied()).max(),
                        after_ns: median(after.iter().filter_map(|p| p.p99_ns.get(op).copied()).collect()),
                    })
                })
                .collect(),
            None => Vec::new(),
        };
        // Later baselines leave out what this event disturbed: until it recovered, or until it
        // ended when there was nothing to recover to.
        let disturbed_until = match (recovered_at, &base) {
            (Some(j), _) => pts[j].start_ms,
            (None, None) => end_ms,
            (None, Some(_)) => u64::MAX,
        };
        for (j, p) in pts.iter().enumerate() {
            if p.end_ms > ev.start_ms && p.start_ms < disturbed_until {
                clean[j] = false;
            }
        }
        out.push(Some(EventImpact {
            baseline_from_ms: base.as_ref().map(|b| b.from_ms),
            baseline_to_ms: base.as_ref().map(|b| b.to_ms),
            baseline_ops_per_s: base.as_ref().map(|b| b.ops_per_s),
            during_ops_per_s: mean_ops(&during),
            after_ops_per_s: mean_ops(&after),
            p99,
            errors,
            recovery_ms,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventStatus;

    /// One-second intervals from 0 s: (ops/s, read p99 in ms, unavailable errors).
    fn run(figures: &[(f64, u64, u64)]) -> Vec<IntervalPoint> {
        figures
            .iter()
            .enumerate()
            .map(|(i, &(ops, p99_ms, errs))| IntervalPoint {
                start_ms: i as u64 * 1000,
                end_ms: (i as u64 + 1) * 1000,
                ops_per_s: ops,
                p99_ns: [("read".to_string(), p99_ms * 1_000_000)].into(),
                errors: if errs > 0 { [(ErrorKind::Unavailable, errs)].into() } else { BTreeMap::new() },
            })
            .collect()
    }

    fn event(seq: u32, start_ms: u64, end_ms: u64) -> EventRecord {
        EventRecord {
            seq,
            spec: String::new(),
            action: "kill".into(),
            target: Some("node2".into()),
            start_ms,
            end_ms,
            status: EventStatus::Ok,
            exit_code: Some(0),
            output_tail: String::new(),
        }
    }

    #[test]
    fn a_closing_interval_and_its_saved_rows_make_the_same_point() {
        use crate::stats::OpStats;
        let mut read = OpStats::default();
        let mut update = OpStats::default();
        for i in 1..=200u64 {
            read.record_ok(i * 10_000, i * 5_000);
            update.record_ok(i * 20_000, i * 5_000);
        }
        update.record_error(ErrorKind::Timeout);
        let sample = IntervalSample {
            index: 3,
            phase: Phase::Run,
            start_ms: 3_000,
            end_ms: 3_500,
            ops: vec![("read".into(), read), ("update".into(), update)],
            backlog: 0,
        };
        let rows: Vec<StoredInterval> = sample
            .ops
            .iter()
            .map(|(op, st)| StoredInterval { index: 3, phase: Phase::Run, start_ms: 3_000, end_ms: 3_500, op: op.clone(), stats: st.clone(), backlog: 0 })
            .collect();
        let p = point_of(&sample);
        assert_eq!(points(&rows), vec![p.clone()]);
        assert_eq!(p.ops_per_s, 800.0);
        assert_eq!(p.errors, [(ErrorKind::Timeout, 1)].into());
        assert!(p.p99_ns["update"] > p.p99_ns["read"]);
    }

    #[test]
    fn a_dip_and_its_recovery() {
        // 10 s at 100 ops/s and 2 ms, a kill at 10.2 s: 3 s at 50 ops/s with 10 ms and
        // errors, then back to normal from 13 s.
        let mut f = vec![(100.0, 2, 0); 10];
        f.extend([(50.0, 10, 5), (50.0, 10, 5), (60.0, 8, 2)]);
        f.extend(vec![(100.0, 2, 0); 7]);
        let pts = run(&f);
        let imp = impacts(&pts, &[event(0, 10_200, 10_300)], &ImpactSettings::default()).remove(0).unwrap();
        assert_eq!(imp.baseline_ops_per_s, Some(100.0));
        assert_eq!((imp.baseline_from_ms, imp.baseline_to_ms), (Some(0), Some(10_000)));
        assert_eq!(imp.during_ops_change_pct(), Some(-50.0));
        assert_eq!(imp.p99[0].baseline_ns, 2_000_000);
        assert_eq!(imp.p99[0].during_change_pct(), Some(400.0));
        assert_eq!(imp.errors, [(ErrorKind::Unavailable, 12)].into());
        // recovered at 13 s, 2.8 s after the event started
        assert_eq!(imp.recovery_ms, Some(2_800));
        // after: 50, 60 and 7 × 100 over 9 s
        let after = imp.after_ops_per_s.unwrap();
        assert!((after - 810.0 / 9.0).abs() < 1e-9, "{after}");
    }

    #[test]
    fn an_event_without_effect_recovers_at_once() {
        let pts = run(&vec![(100.0, 2, 0); 20]);
        let imp = impacts(&pts, &[event(0, 8_000, 9_000)], &ImpactSettings::default()).remove(0).unwrap();
        assert_eq!(imp.recovery_ms, Some(0));
        assert_eq!(imp.during_ops_change_pct(), Some(0.0));
        assert!(imp.errors.is_empty());
        // small p99 wobbles within the 1 ms floor are not a disturbance
        let mut f = vec![(100.0, 1, 0); 20];
        f[9] = (100.0, 2, 0);
        let imp = impacts(&run(&f), &[event(0, 8_000, 9_000)], &ImpactSettings::default()).remove(0).unwrap();
        assert_eq!(imp.recovery_ms, Some(0));
    }

    #[test]
    fn no_recovery_before_the_end_and_no_baseline_at_the_start() {
        let mut f = vec![(100.0, 2, 0); 5];
        f.extend(vec![(40.0, 2, 0); 5]);
        let pts = run(&f);
        let imp = impacts(&pts, &[event(0, 5_000, 5_000)], &ImpactSettings::default()).remove(0).unwrap();
        assert_eq!(imp.recovery_ms, None);
        assert_eq!(imp.after_ops_change_pct(), Some(-60.0));
        let first = impacts(&pts, &[event(0, 0, 10)], &ImpactSettings::default()).remove(0).unwrap();
        assert_eq!((first.baseline_ops_per_s, first.recovery_ms), (None, None));
        assert!(first.p99.is_empty());
    }

    #[test]
    fn a_later_event_is_judged_against_the_undisturbed_baseline() {
        // kill at 5 s: throughput halves; start at 10 s (lasting 3 s): back at 14 s.
        let mut f = vec![(100.0, 2, 0); 5];
        f.extend(vec![(50.0, 2, 0); 9]);
        f.extend(vec![(100.0, 2, 0); 6]);
        let pts = run(&f);
        let evs = [event(0, 5_000, 5_010), event(1, 10_000, 13_000)];
        let imps = impacts(&pts, &evs, &ImpactSettings::default());
        let kill = imps[0].as_ref().unwrap();
        let start = imps[1].as_ref().unwrap();
        assert_eq!(kill.recovery_ms, Some(9_000));
        // the start's baseline is the 100 ops/s before the kill, not the 50 after it
        assert_eq!(start.baseline_ops_per_s, Some(100.0));
        assert_eq!((start.baseline_from_ms, start.baseline_to_ms), (Some(0), Some(5_000)));
        assert_eq!(start.recovery_ms, Some(4_000));
        assert_eq!(start.during_ops_change_pct(), Some(-50.0));
        // the kill's "after" stops where the start begins
        assert_eq!(kill.after_ops_change_pct(), Some(-50.0));
    }

    #[test]
    fn an_event_without_a_baseline_disturbs_only_while_it_lasts() {
        // an event at 0.5 s (nothing before it) lasting until 6 s, then an add at 30 s that
        // halves throughput: the add is judged against the 20 s before it, after the first ended
        let mut f = vec![(100.0, 2, 0); 30];
        f.extend(vec![(50.0, 9, 0); 10]);
        let pts = run(&f);
        let imps = impacts(&pts, &[event(0, 500, 6_000), event(1, 30_000, 40_000)], &ImpactSettings::default());
        let first = imps[0].as_ref().unwrap();
        assert_eq!((first.baseline_ops_per_s, first.recovery_ms), (None, None));
        let add = imps[1].as_ref().unwrap();
        assert_eq!((add.baseline_from_ms, add.baseline_to_ms), (Some(10_000), Some(30_000)));
        assert_eq!(add.during_ops_change_pct(), Some(-50.0));
        assert_eq!(add.p99[0].during_change_pct(), Some(350.0));
    }

    #[test]
    fn the_baseline_is_the_last_undisturbed_stretch_even_with_a_gap() {
        // a compaction at 25 s dips for 3 s and recovers at 28 s; a kill at 31 s: its baseline
        // is the last 20 s of undisturbed intervals before it, leaving out 25..28 s
        let mut f = vec![(100.0, 2, 0); 25];
        f.extend(vec![(40.0, 2, 0); 3]);
        f.extend(vec![(100.0, 2, 0); 3]);
        f.extend(vec![(60.0, 2, 0); 5]);
        let pts = run(&f);
        let imps = impacts(&pts, &[event(0, 25_000, 25_100), event(1, 31_000, 31_100)], &ImpactSettings::default());
        assert_eq!(imps[0].as_ref().unwrap().recovery_ms, Some(3_000));
        let kill = imps[1].as_ref().unwrap();
        assert_eq!(kill.baseline_ops_per_s, Some(100.0));
        // from 11 s: 20 s before the last undisturbed interval's end (31 s)
        assert_eq!((kill.baseline_from_ms, kill.baseline_to_ms), (Some(11_000), Some(31_000)));
        assert_eq!(kill.during_ops_change_pct(), Some(-40.0));
    }

    #[test]
    fn setup_events_have_no_impact_and_disturb_nothing() {
        let pts = run(&[(100.0, 2, 0); 30]);
        let mut setup = event(0, 0, 0);
        setup.spec = "setup setstreamthroughput 8".into();
        // a setup event's record lies before the run phase (here at its start, lasting 5 s)
        setup.end_ms = 5_000;
        let imps = impacts(&pts, &[setup, event(1, 6_000, 6_100)], &ImpactSettings::default());
        assert_eq!(imps[0], None);
        let kill = imps[1].as_ref().unwrap();
        assert_eq!((kill.baseline_from_ms, kill.baseline_to_ms), (Some(0), Some(6_000)));
        assert_eq!(kill.recovery_ms, Some(0));
    }

    #[test]
    fn a_long_event_that_hurts_late_recovers_after_its_last_bad_interval() {
        // a replacement from 10 s to 30 s: quiet at first, p99 ×5 from 20 s to 25 s
        let mut f = vec![(100.0, 2, 0); 20];
        f.extend(vec![(100.0, 10, 0); 5]);
        f.extend(vec![(100.0, 2, 0); 15]);
        let imp = impacts(&run(&f), &[event(0, 10_000, 30_000)], &ImpactSettings::default()).remove(0).unwrap();
        assert_eq!(imp.recovery_ms, Some(15_000), "recovered at 25 s, not in the quiet 10..20 s");
        assert_eq!(imp.p99[0].during_change_pct(), Some(400.0));
    }

    #[test]
    fn skipped_events_have_no_impact() {
        let pts = run(&[(100.0, 2, 0); 5]);
        let mut e = event(0, 9_000, 9_000);
        e.status = EventStatus::Skipped;
        assert_eq!(impacts(&pts, &[e], &ImpactSettings::default()), vec![None]);
    }
}
