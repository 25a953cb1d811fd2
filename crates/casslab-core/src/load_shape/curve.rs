//! A shape compiled into pieces of one formula each, so that the schedule of intended start
//! times follows it exactly: on a piece the level is `a + b·τ + c·cos(ω·τ + φ)` (a held level,
//! a ramp, a sine, a spike multiplying any of them), its running count of operations is that
//! formula integrated, and the `k`-th operation (from 0) is intended at the first time the count
//! goes past `k` (in closed form on straight pieces; by a safeguarded Newton step on sine
//! pieces), so nothing is intended while the level is 0. The last piece lasts for ever at the
//! shape's last level. A change during a run (`ramp 800 over 10s`) keeps the curve as it was up
//! to the change and replaces what follows; spikes stay laid over the changed level.

use super::{LoadShape, Spikes, Stage};
use crate::limits::MAX_SPIKES;

/// One stage as the run saw it: what it was (`ramp 100..5000 over 60s`), when it began and
/// ended (seconds since the start of the run phase; the last ends at infinity).
#[derive(Debug, Clone, PartialEq)]
pub struct StageInfo {
    pub label: String,
    pub start_s: f64,
    pub end_s: f64,
}

/// A piece of the curve: from `start_s` for `len_s` seconds (infinite for the last), the level
/// `a + b·τ + c·cos(ω·τ + φ)` at `τ` seconds into the piece, `cum0` operations before it.
#[derive(Debug, Clone, PartialEq)]
struct Piece {
    start_s: f64,
    len_s: f64,
    a: f64,
    b: f64,
    c: f64,
    omega: f64,
    phi: f64,
    cum0: f64,
    stage: usize,
}

impl Piece {
    fn level(&self, tau: f64) -> f64 {
        let wave = if self.c != 0.0 { self.c * (self.omega * tau + self.phi).cos() } else { 0.0 };
        (self.a + self.b * tau + wave).max(0.0)
    }

    /// Operations from the piece's start to `tau` into it.
    fn count(&self, tau: f64) -> f64 {
        let wave = if self.c != 0.0 { self.c / self.omega * ((self.omega * tau + self.phi).sin() - self.phi.sin()) } else { 0.0 };
        self.a * tau + self.b * tau * tau / 2.0 + wave
    }

    fn mass(&self) -> f64 {
        if self.len_s.is_infinite() {
            if self.a > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        } else {
            self.count(self.len_s)
        }
    }

    /// The same formula from `tau` into this piece on.
    fn from(&self, tau: f64) -> Piece {
        Piece { start_s: self.start_s + tau, len_s: self.len_s - tau, a: self.a + self.b * tau, phi: self.phi + self.omega * tau, ..self.clone() }
    }

    /// When (seconds into the piece) the count reaches `m` (0 ≤ m ≤ mass).
    fn time_of(&self, m: f64) -> f64 {
        if m <= 0.0 {
            return 0.0;
        }
        if self.c == 0.0 {
            // a·τ + b·τ²/2 = m, in the form that stays exact when b is 0 or small
            let root = (self.a * self.a + 2.0 * self.b * m).max(0.0).sqrt();
            let d = self.a + root;
            return if d > 0.0 { 2.0 * m / d } else { 0.0 };
        }
        let (mut lo, mut hi) = (0.0, self.len_s);
        let mut tau = (m / self.a.max(1e-12)).clamp(lo, hi);
        for _ in 0..200 {
            let f = self.count(tau) - m;
            if f.abs() <= 1e-9 * m.max(1.0) {
                break;
            }
            if f > 0.0 {
                hi = tau;
            } else {
                lo = tau;
            }
            let r = self.level(tau);
            let newton = if r > 0.0 { tau - f / r } else { f64::NAN };
            tau = if newton > lo && newton < hi { newton } else { (lo + hi) / 2.0 };
        }
        tau
    }
}

/// How the level went over a span of time (an interval of a run).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Course {
    /// One level held over all of it but its edges ([`HELD_SHARE`] of it or more): a stage's
    /// level, a step, a spike over a held level.
    Held(f64),
    /// Moving with a ramp or a sine.
    Moving,
    /// Changed from one held level to another inside it.
    Between,
}

/// The share of a span one level must cover to count as held over it: the rest is the jitter
/// of where intervals fall against a schedule's boundaries.
pub const HELD_SHARE: f64 = 0.9;

/// A shape compiled for a run: the level at any time, and the time of every operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pieces: Vec<Piece>,
    stages: Vec<StageInfo>,
    /// The spikes laid over the stages, up to `horizon_s`: kept to lay them again over a level
    /// changed during the run.
    spikes: Option<Spikes>,
    horizon_s: f64,
}

impl Curve {
    /// Compiles `shape`; spikes are laid up to `horizon_s` (the run's length).
    pub fn compile(shape: &LoadShape, horizon_s: f64) -> Curve {
        let mut pieces = Vec::new();
        let mut stages = Vec::new();
        let (mut t, mut before) = (0.0_f64, 0.0_f64);
        let flat =
            |start_s: f64, len_s: f64, level: f64, stage: usize| Piece { start_s, len_s, a: level, b: 0.0, c: 0.0, omega: 0.0, phi: 0.0, cum0: 0.0, stage };
        for (i, s) in shape.stages.iter().enumerate() {
            let len = s.length_s().unwrap_or(f64::INFINITY);
            stages.push(StageInfo { label: s.to_string(), start_s: t, end_s: t + len });
            match s {
                Stage::Hold { level, .. } => {
                    before = level.unwrap_or(before);
                    pieces.push(flat(t, len, before, i));
                }
                Stage::Ramp { from, to, over_s } => {
                    let a = from.unwrap_or(before);
                    pieces.push(Piece { b: (to - a) / over_s, ..flat(t, len, a, i) });
                    before = *to;
                }
                Stage::Steps { levels, each_s } => {
                    for (j, l) in levels.iter().enumerate() {
                        pieces.push(flat(t + each_s * j as f64, *each_s, *l, i));
                    }
                    before = levels.last().copied().unwrap_or(before);
                }
                Stage::Sine { low, high, period_s, for_s } => {
                    let omega = 2.0 * std::f64::consts::PI / period_s;
                    // from the low point up: (low + high)/2 − (high − low)/2 · cos(ωτ)
                    pieces.push(Piece { a: (low + high) / 2.0, c: -(high - low) / 2.0, omega, ..flat(t, len, 0.0, i) });
                    let end = (low + high) / 2.0 - (high - low) / 2.0 * (omega * for_s).cos();
                    before = end.max(0.0);
                }
            }
            t += len;
        }
        if t.is_finite() {
            let last = stages.len().saturating_sub(1);
            pieces.push(flat(t, f64::INFINITY, before, last));
            if let Some(s) = stages.last_mut() {
                s.end_s = f64::INFINITY;
            }
        }
        let mut curve = Curve { pieces, stages, spikes: shape.spikes.clone(), horizon_s };
        curve.lay_spikes(0.0);
        curve.count_up();
        curve
    }

    /// The spikes' windows (from, to, factor) up to the horizon (at most [`MAX_SPIKES`]:
    /// `LoadShape::check_horizon` refuses a run that would lay more).
    fn spike_windows(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        let sp = self.spikes.as_ref().filter(|sp| sp.every_s > 0.0);
        let first = sp.map_or(f64::INFINITY, |sp| sp.first_at_s);
        let (every, len, factor) = sp.map_or((1.0, 0.0, 1.0), |sp| (sp.every_s, sp.for_s, sp.factor));
        (0..MAX_SPIKES).map(move |i| first + every * i as f64).take_while(move |at| *at < self.horizon_s).map(move |at| (at, at + len, factor))
    }

    /// Multiplies the level by the spikes' factor where they are, from `from_s` on (what is
    /// before it is already laid).
    /// One pass over the pieces, cutting each where a spike starts or ends.
    fn lay_spikes(&mut self, from_s: f64) {
        let windows: Vec<(f64, f64, f64)> = self.spike_windows().filter(|(_, to, _)| *to > from_s).map(|(at, to, f)| (at.max(from_s), to, f)).collect();
        if windows.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(self.pieces.len() + 2 * windows.len());
        let mut w = 0;
        // each cut moves past a spike's start or end: more cuts than that is rounding going round
        let mut cuts = 2 * windows.len() + 2 * self.pieces.len();
        for p in std::mem::take(&mut self.pieces) {
            let mut cur = p;
            loop {
                if cuts == 0 {
                    out.push(cur);
                    break;
                }
                cuts -= 1;
                let end = cur.start_s + cur.len_s;
                // the spikes that ended before this piece's start no longer matter
                while w < windows.len() && windows[w].1 <= cur.start_s {
                    w += 1;
                }
                let Some(&(from, to, factor)) = windows.get(w).filter(|(from, _, _)| *from < end) else {
                    out.push(cur);
                    break;
                };
                if from > cur.start_s {
                    // the part before the spike, as it was
                    let tau = from - cur.start_s;
                    let rest = cur.from(tau);
                    out.push(Piece { len_s: tau, ..cur });
                    cur = rest;
                    continue;
                }
                // the piece starts inside the spike: the part up to the spike's end, scaled
                let tau = (to - cur.start_s).min(cur.len_s);
                let rest = (tau < cur.len_s).then(|| cur.from(tau));
                out.push(Piece { len_s: tau, a: cur.a * factor, b: cur.b * factor, c: cur.c * factor, ..cur });
                match rest {
                    Some(r) => cur = r,
                    None => break,
                }
            }
        }
        self.pieces = out;
    }

    /// The spikes' factor at `t_s` (1 outside them).
    fn spike_factor_at(&self, t_s: f64) -> f64 {
        self.spike_windows().take_while(|(at, _, _)| *at <= t_s).find(|(at, to, _)| (*at..*to).contains(&t_s)).map_or(1.0, |w| w.2)
    }

    /// A fixed level for ever.
    pub fn fixed(level: f64) -> Curve {
        Curve::compile(&LoadShape::fixed(level), 0.0)
    }

    /// Splits the pieces at `at_s` (so that one begins there).
    fn split(&mut self, at_s: f64) {
        if let Some(i) = self.pieces.iter().position(|p| p.start_s < at_s && at_s < p.start_s + p.len_s) {
            let p = self.pieces[i].clone();
            let tau = at_s - p.start_s;
            self.pieces[i].len_s = tau;
            self.pieces.insert(i + 1, p.from(tau));
        }
    }

    fn count_up(&mut self) {
        let mut cum = 0.0;
        for p in &mut self.pieces {
            p.cum0 = cum;
            cum += p.mass();
        }
    }

    fn piece_at(&self, t_s: f64) -> &Piece {
        let i = self.pieces.partition_point(|p| p.start_s <= t_s).max(1) - 1;
        &self.pieces[i]
    }

    /// The level at `t_s` seconds.
    pub fn level_at(&self, t_s: f64) -> f64 {
        let p = self.piece_at(t_s.max(0.0));
        p.level(t_s.max(0.0) - p.start_s)
    }

    /// Operations due from 0 to `t_s`.
    pub fn count_at(&self, t_s: f64) -> f64 {
        if t_s <= 0.0 {
            return 0.0;
        }
        let p = self.piece_at(t_s);
        p.cum0 + p.count(t_s - p.start_s)
    }

    /// When operation `k` (from 0) is intended, in seconds: the first time the count goes past
    /// `k` — a stage at 0 intends nothing, not even at its start; `None` when the level stays at
    /// 0 for ever before.
    pub fn time_of(&self, k: u64) -> Option<f64> {
        let n = k as f64;
        let i = self.pieces.partition_point(|p| p.cum0 + p.mass() <= n);
        let p = self.pieces.get(i)?;
        Some(p.start_s + p.time_of(n - p.cum0))
    }

    /// How the level went from `from_s` to `to_s`: held at one level (over [`HELD_SHARE`] of
    /// it or more), moving, or between held levels.
    pub fn course(&self, from_s: f64, to_s: f64) -> Course {
        if to_s <= from_s {
            let p = self.piece_at(from_s);
            return if p.b == 0.0 && p.c == 0.0 { Course::Held(p.a.max(0.0)) } else { Course::Moving };
        }
        // time covered by each flat level, and by moving pieces
        let (mut flat, mut moving) = (Vec::<(f64, f64)>::new(), 0.0);
        for p in &self.pieces {
            let overlap = (p.start_s + p.len_s).min(to_s) - p.start_s.max(from_s);
            if overlap <= 0.0 {
                continue;
            }
            if p.b != 0.0 || p.c != 0.0 {
                moving += overlap;
                continue;
            }
            match flat.iter_mut().find(|(level, _)| *level == p.a.max(0.0)) {
                Some((_, t)) => *t += overlap,
                None => flat.push((p.a.max(0.0), overlap)),
            }
        }
        let span = to_s - from_s;
        match flat.into_iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            Some((level, t)) if t >= HELD_SHARE * span => Course::Held(level),
            _ if moving > 0.0 => Course::Moving,
            _ => Course::Between,
        }
    }

    /// When the level next changes course after `t_s`: the start of the next piece (`None` in
    /// the last, which lasts for ever).
    pub fn next_change_after(&self, t_s: f64) -> Option<f64> {
        let i = self.pieces.partition_point(|p| p.start_s <= t_s);
        self.pieces.get(i).map(|p| p.start_s)
    }

    /// The mean level from `from_s` to `to_s`.
    pub fn mean_level(&self, from_s: f64, to_s: f64) -> f64 {
        if to_s <= from_s {
            return self.level_at(from_s);
        }
        (self.count_at(to_s) - self.count_at(from_s)) / (to_s - from_s)
    }

    /// The highest level from `from_s` to `to_s` (sampled at the pieces' ends and every tenth
    /// of a second between).
    pub fn peak_between(&self, from_s: f64, to_s: f64) -> f64 {
        let steps = (((to_s - from_s) * 10.0).ceil() as usize).clamp(1, 100_000);
        (0..=steps).map(|i| self.level_at(from_s + (to_s - from_s) * i as f64 / steps as f64)).fold(0.0, f64::max)
    }

    /// The stage at `t_s`, as an index into [`Curve::stages`].
    pub fn stage_at(&self, t_s: f64) -> usize {
        self.piece_at(t_s.max(0.0)).stage
    }

    pub fn stages(&self) -> &[StageInfo] {
        &self.stages
    }

    /// This curve up to `at_s`, then from the level it had there a straight line to `to` over
    /// `over_s` (0: at once), held for ever: a change of rate during the run. The change is of
    /// the level under the spikes: the line starts from the level without a spike under way,
    /// and the spikes keep coming at their times over the new level (one under way goes on).
    pub fn changed_at(&self, at_s: f64, to: f64, over_s: f64, label: String) -> Curve {
        let at_s = at_s.max(0.0);
        let from = self.level_at(at_s) / self.spike_factor_at(at_s);
        let mut c = self.clone();
        c.split(at_s);
        c.pieces.retain(|p| p.start_s < at_s);
        if let Some(last) = c.stages.iter_mut().rev().find(|s| s.start_s < at_s) {
            last.end_s = last.end_s.min(at_s);
        }
        c.stages.retain(|s| s.start_s < at_s);
        let stage = c.stages.len();
        c.stages.push(StageInfo { label, start_s: at_s, end_s: f64::INFINITY });
        let flat = Piece { start_s: at_s, len_s: f64::INFINITY, a: to, b: 0.0, c: 0.0, omega: 0.0, phi: 0.0, cum0: 0.0, stage };
        if over_s > 0.0 {
            c.pieces.push(Piece { len_s: over_s, a: from, b: (to - from) / over_s, ..flat.clone() });
            c.pieces.push(Piece { start_s: at_s + over_s, ..flat });
        } else {
            c.pieces.push(flat);
        }
        c.lay_spikes(at_s);
        c.count_up();
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(text: &str) -> Curve {
        Curve::compile(&LoadShape::parse(text).unwrap(), 600.0)
    }

    /// Operations intended in `[from, to)` seconds, counted from the schedule itself.
    fn starts_between(c: &Curve, from: f64, to: f64) -> usize {
        (0..).map_while(|k| c.time_of(k).filter(|t| *t < to)).filter(|t| *t >= from).count()
    }

    #[test]
    fn a_fixed_level_is_one_start_every_period() {
        let c = Curve::fixed(1000.0);
        assert_eq!(c.time_of(0), Some(0.0));
        assert!((c.time_of(1).unwrap() - 0.001).abs() < 1e-12);
        assert!((c.time_of(5000).unwrap() - 5.0).abs() < 1e-9);
        assert_eq!(c.count_at(2.5), 2500.0);
        assert_eq!(Curve::fixed(0.0).time_of(1), None, "a level of 0 never starts anything");
    }

    #[test]
    fn stages_start_exactly_what_they_say() {
        let c = curve("ramp 0..1000 over 10s, hold 5s, 200 for 5s, steps 100 300 each 2s");
        // a ramp from 0 to 1000 over 10 s starts 5000 operations; the hold 5000 more
        assert_eq!(starts_between(&c, 0.0, 10.0), 5000);
        assert_eq!(starts_between(&c, 10.0, 15.0), 5000);
        assert_eq!(starts_between(&c, 15.0, 20.0), 1000);
        assert_eq!((starts_between(&c, 20.0, 22.0), starts_between(&c, 22.0, 24.0)), (200, 600));
        assert_eq!(starts_between(&c, 24.0, 34.0), 3000, "the last level held after the stages");
        assert!((c.level_at(5.0) - 500.0).abs() < 1e-9 && c.level_at(12.0) == 1000.0);
        assert_eq!(c.stage_at(16.0), 2);
        assert_eq!(c.stages()[1].label, "hold 5s");
        assert!((c.mean_level(0.0, 10.0) - 500.0).abs() < 1e-9);
        // times go forward, one per operation
        let times: Vec<f64> = (0..20_000).map_while(|k| c.time_of(k)).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_sine_and_spikes_follow_their_formula() {
        let c = curve("sine 100..900 period 60s for 120s");
        assert!((c.level_at(0.0) - 100.0).abs() < 1e-6 && (c.level_at(30.0) - 900.0).abs() < 1e-6);
        // a whole period averages the middle level: 500/s over 60 s
        assert_eq!(starts_between(&c, 0.0, 60.0), 30_000);
        for k in [1, 777, 12_345, 29_999] {
            let t = c.time_of(k).unwrap();
            assert!((c.count_at(t) - k as f64).abs() < 1e-6, "operation {k} at {t}");
        }
        let s = curve("1000, spike x3 for 2s every 10s");
        assert_eq!(starts_between(&s, 0.0, 10.0), 10_000);
        assert_eq!(starts_between(&s, 10.0, 12.0), 6_000, "three times the level during the spike");
        assert_eq!(starts_between(&s, 12.0, 20.0), 8_000);
        assert_eq!(s.level_at(21.0), 3000.0);
        assert_eq!(s.peak_between(0.0, 30.0), 3000.0);
    }

    #[test]
    fn a_change_keeps_the_past_and_replaces_the_future() {
        let c = curve("500 for 10s, 1000");
        let d = c.changed_at(4.0, 2000.0, 2.0, "ramp 2000 over 2s (event)".into());
        assert_eq!(starts_between(&d, 0.0, 4.0), 2000, "the past as it was");
        assert_eq!(starts_between(&d, 4.0, 6.0), 2500, "a ramp from 500 to 2000 over 2 s");
        assert_eq!(starts_between(&d, 6.0, 16.0), 20_000);
        assert_eq!(d.stages().len(), 2);
        assert_eq!((d.stages()[0].end_s, d.stage_at(7.0)), (4.0, 1));
        let now = c.changed_at(0.0, 300.0, 0.0, "rate 300".into());
        assert_eq!(starts_between(&now, 0.0, 10.0), 3000);
    }

    #[test]
    fn a_stage_at_zero_intends_nothing_not_even_at_its_start() {
        // nothing in a first stage at 0: operation 0 is at the first moment the level is above 0
        let c = curve("0 for 10s, 1000");
        assert_eq!(c.time_of(0), Some(10.0));
        assert_eq!(starts_between(&c, 0.0, 10.0), 0);
        // nothing in a stage at 0 after a level: the operation after the level's last is at the
        // end of the zero stage, not at its start
        let c = curve("1000 for 10s, 0 for 10s, 1000");
        assert_eq!(starts_between(&c, 0.0, 10.0), 10_000);
        assert_eq!(starts_between(&c, 10.0, 20.0), 0, "the stage at 0 starts nothing");
        assert_eq!(c.time_of(10_000), Some(20.0));
        let ends_at_zero = curve("1000 for 10s, 0");
        assert_eq!(ends_at_zero.time_of(10_000), None, "nothing after a level of 0 held for ever");
        assert_eq!(Curve::fixed(0.0).time_of(0), None);
        // the count goes on through the zero stage: the backlog at any time is still the count
        assert_eq!(c.count_at(15.0), 10_000.0);
    }

    #[test]
    fn a_span_is_held_at_a_level_moving_or_between_levels() {
        let c = curve("steps 1000 2000 each 10s, ramp 2000..4000 over 10s, 4000, spike x2 for 5s every 100s from 40s");
        assert_eq!(c.course(2.0, 3.0), Course::Held(1000.0));
        // an interval that straddles a step by a few ms is the step's: jitter, not a level of its own
        assert_eq!(c.course(9.997, 10.997), Course::Held(2000.0));
        assert_eq!(c.course(9.003, 10.003), Course::Held(1000.0));
        assert_eq!(c.course(9.5, 10.5), Course::Between, "half of one step and half of the next");
        assert_eq!(c.course(22.0, 23.0), Course::Moving);
        assert_eq!(c.course(29.5, 30.5), Course::Moving, "half ramp, half held: moving");
        assert_eq!(c.course(41.0, 42.0), Course::Held(8000.0), "a spike over a held level is a level of its own");
        assert_eq!(c.course(50.0, 51.0), Course::Held(4000.0));
        assert_eq!(c.next_change_after(3.0), Some(10.0));
        assert_eq!(c.next_change_after(50.0), Some(140.0), "the next spike");
        assert_eq!(Curve::fixed(10.0).next_change_after(5.0), None);
    }

    #[test]
    fn an_event_changes_the_level_under_the_spikes() {
        // 1000/s, ×5 for 2 s every 10 s: a `rate 800` event at 11 s, inside the second spike
        let c = curve("1000, spike x5 for 2s every 10s");
        let d = c.changed_at(11.0, 800.0, 0.0, "rate 800 (event)".into());
        assert_eq!(d.level_at(10.5), 5000.0, "the past as it was");
        assert_eq!(d.level_at(11.5), 4000.0, "the spike under way goes on over the new level");
        assert_eq!(d.level_at(12.5), 800.0);
        assert_eq!(d.level_at(20.5), 4000.0, "later spikes are laid over the new level");
        assert_eq!(starts_between(&d, 12.0, 20.0), 6400);
        // a ramp from inside a spike starts from the level without it, continuous with the spike
        let r = c.changed_at(11.0, 2000.0, 4.0, "ramp 2000 over 4s (event)".into());
        assert_eq!(r.level_at(11.0), 5000.0);
        assert!((r.level_at(12.5) - 1375.0).abs() < 1e-9, "{}", r.level_at(12.5));
        assert_eq!(r.level_at(16.0), 2000.0);
        assert_eq!(r.level_at(20.5), 10_000.0);
    }
}
