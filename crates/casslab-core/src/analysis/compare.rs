//! Comparing a run or variant B against a baseline A, one metric at a time: the relative
//! change B/A − 1 with its own interval, and a verdict in words. This file holds the
//! comparison and its sentence, and the windowed-bootstrap comparison of two single runs; the
//! comparison of repetitions is `repeated.rs`'s.
//!
//! Two runs: the k-th resample of A and the k-th resample of B were drawn independently
//! (different seeds), so the ratios `draw_B(k) / draw_A(k) − 1` are draws of the change's
//! bootstrap distribution; its interval is built as in `bootstrap.rs`, with the smaller side's
//! window count. The change is significant when its interval excludes 0.
//!
//! Many figures at once: a comparison judges `family` figures together, and each interval is
//! at `1 − (1 − confidence) / family` (Bonferroni), so that all of them hold together at the
//! stated confidence and an A/A comparison marks anything at most `1 − confidence` of the time.
//!
//! Two honesty rules: with fewer than `min_windows` windows on either side the verdict is
//! "too short" whatever the numbers say; and when no difference is detectable, the verdict
//! estimates how much more data would tell. That estimate assumes the interval's half-width
//! shrinks as 1/√n, and asks for an 80 % chance of detecting a true change of the size
//! observed: `needed = n · (h/|d|)² · ((z + z₀.₈)/z)²`, with n the smaller count (windows, or
//! repetitions), h the half-width, d the observed change and z the interval's normal quantile.

use super::bootstrap::{interval, Estimate, Resampled};
use super::dist::normal_quantile;
use super::{AnalysisOptions, Metric};

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// B is higher than A, and the interval excludes 0.
    Higher,
    /// B is lower than A, and the interval excludes 0.
    Lower,
    /// The interval includes 0. `needed`: windows (or repetitions) per side that would
    /// probably tell a change of the observed size (`None` when the observed change is 0).
    NoDifference { needed: Option<usize> },
    /// Fewer than `min_windows` windows on a side; no claim is made.
    TooShort,
    /// The metric is undefined on a side (e.g. no successful operations).
    Undefined,
    /// Shown, not judged: a figure that contains others that are (the `total`).
    NotJudged,
}

/// A against B on one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub metric: Metric,
    pub baseline_windows: usize,
    pub windows: usize,
    /// B/A − 1, with its interval; `None` when undefined.
    pub change: Option<Estimate>,
    pub outcome: Outcome,
    pub window_s: f64,
    /// The stated confidence, of all the family's intervals together.
    pub confidence: f64,
    /// The fewest windows a side needs for a claim (at least 2: one window has no spread).
    pub min_windows: usize,
    /// How many figures are judged together (this one among them); its interval is at
    /// `1 − (1 − confidence) / family`.
    pub family: usize,
    /// Repetitions of A and of B when repetitions are the unit; `None`: the windows of one run.
    pub repetitions: Option<(usize, usize)>,
    /// The share of the change's variance that is between repetitions (the rest is the
    /// noise within runs).
    pub between_share: Option<f64>,
}

impl Comparison {
    /// An undecided comparison of `metric` (filled in by the caller).
    pub fn new(metric: Metric, opts: &AnalysisOptions, family: usize) -> Comparison {
        Comparison {
            metric,
            baseline_windows: 0,
            windows: 0,
            change: None,
            outcome: Outcome::Undefined,
            window_s: opts.window_s,
            confidence: opts.confidence,
            min_windows: opts.min_windows.max(2),
            family: family.max(1),
            repetitions: None,
            between_share: None,
        }
    }

    /// The confidence of each interval: the stated one, shared among the family.
    pub fn level(&self) -> f64 {
        1.0 - (1.0 - self.confidence) / self.family as f64
    }

    /// Decides the outcome from the change's interval: significant when it excludes 0.
    pub(super) fn decide(&mut self, change: Estimate, n: usize) {
        self.change = Some(change);
        self.outcome = if change.excludes(0.0) {
            if change.point > 0.0 {
                Outcome::Higher
            } else {
                Outcome::Lower
            }
        } else {
            Outcome::NoDifference { needed: needed(&change, n, self.level()) }
        };
    }

    /// Marks the comparison as shown but not judged.
    pub fn not_judged(mut self) -> Comparison {
        if self.change.is_some() {
            self.outcome = Outcome::NotJudged;
        }
        self
    }
}

/// Compares single run `b` against single run `a` on `metric` (windowed bootstrap), one of
/// `family` figures judged together.
pub fn compare(a: &Resampled, b: &Resampled, metric: Metric, opts: &AnalysisOptions, family: usize) -> Comparison {
    let mut c = Comparison::new(metric, opts, family);
    c.baseline_windows = a.windows();
    c.windows = b.windows();
    let (pa, pb) = (a.point(metric), b.point(metric));
    if !(pa.is_finite() && pb.is_finite() && pa > 0.0) {
        return c;
    }
    let n = a.windows().min(b.windows());
    let ratios: Vec<f64> = (0..a.resamples().min(b.resamples())).map(|k| b.draw(k, metric) / a.draw(k, metric) - 1.0).collect();
    let (lo, hi) = interval(ratios, c.level(), n);
    c.decide(Estimate { point: pb / pa - 1.0, lo, hi }, n);
    if n < c.min_windows {
        c.outcome = Outcome::TooShort;
    }
    c
}

fn needed(change: &Estimate, n: usize, level: f64) -> Option<usize> {
    let d = change.point.abs();
    let h = (change.hi - change.lo) / 2.0;
    if !(d > 1e-9 && h.is_finite()) {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    let power = (z + normal_quantile(0.8)) / z;
    let needed = n as f64 * (h / d).powi(2) * power * power;
    Some((needed.ceil() as usize).max(n + 1))
}

impl Comparison {
    pub fn is_significant(&self) -> bool {
        matches!(self.outcome, Outcome::Higher | Outcome::Lower)
    }

    /// Significant and in the bad direction (latency up, throughput down).
    pub fn is_regression(&self) -> bool {
        self.is_significant() && self.change.is_some_and(|c| self.metric.is_worse(c.point))
    }

    /// "; 3 and 3 repetitions, 80% of the spread between repetitions" when repetitions are the
    /// unit.
    fn repetitions_clause(&self) -> String {
        let Some((ra, rb)) = self.repetitions else { return String::new() };
        let share = match self.between_share {
            Some(s) => format!(", {} of the spread between repetitions", pct(s)),
            None => String::new(),
        };
        format!("; {ra} and {rb} repetitions{share}")
    }

    /// Why a comparison is too short, the same for every figure of two sides: "run 1 has 3
    /// windows of 60 s; needs at least 5 (≈ 5 min)".
    pub fn too_short(&self, a: &str, b: &str) -> String {
        let short: Vec<String> =
            [(a, self.baseline_windows), (b, self.windows)].iter().filter(|(_, n)| *n < self.min_windows).map(|(name, n)| format!("{name} has {n}")).collect();
        format!(
            "{} window{} of {}; needs at least {} (≈ {})",
            short.join(" and "),
            if [self.baseline_windows, self.windows].iter().all(|n| *n == 1 || *n >= self.min_windows) { "" } else { "s" },
            approx_duration(self.window_s),
            self.min_windows,
            approx_duration(self.min_windows as f64 * self.window_s)
        )
    }

    /// The verdict as a sentence. `a` and `b` name the sides (e.g. "run 4"), `what` the
    /// operation (e.g. "read"): "run 5's read p99 is 18% lower than run 4's (95% CI 11%–24%)".
    pub fn sentence(&self, a: &str, b: &str, what: &str) -> String {
        let subject = format!("{what} {}", self.metric.noun());
        let level = format!("{}% CI", percent_number(self.confidence * 100.0));
        let Some(ch) = self.change else {
            return format!("{b} vs {a}, {subject}: not comparable (no successful operations measured on one side)");
        };
        let reps = self.repetitions_clause();
        match self.outcome {
            Outcome::Higher | Outcome::Lower => {
                let (word, lo, hi) = if ch.point > 0.0 { ("higher", ch.lo, ch.hi) } else { ("lower", -ch.hi, -ch.lo) };
                format!("{b}'s {subject} is {} {word} than {a}'s ({level} {}–{}{reps})", pct(ch.point.abs()), pct(lo), pct(hi))
            }
            Outcome::NoDifference { needed } => {
                let seen = format!("{}, {level} {}, {}{reps}", signed_pct(ch.point), signed_pct(ch.lo), signed_pct(ch.hi));
                if let Some((ra, rb)) = self.repetitions {
                    let need = match needed {
                        Some(k) if k > 100 * ra.max(rb) => "; a difference this small would need over 100 times as many repetitions to tell".to_string(),
                        Some(k) => format!("; would need ≈ {k} repetitions per side to tell"),
                        None => String::new(),
                    };
                    return format!("{b} vs {a}, {subject}: no difference detectable with these repetitions ({seen}){need}");
                }
                let need = match needed {
                    Some(k) if k > 100 * self.windows.max(self.baseline_windows) => {
                        "; a difference this small would need runs over 100 times as long to tell".to_string()
                    }
                    Some(k) => format!(
                        "; would need ≈ {k} windows of {} (≈ {}) per side to tell",
                        approx_duration(self.window_s),
                        approx_duration(k as f64 * self.window_s)
                    ),
                    None => String::new(),
                };
                format!("{b} vs {a}, {subject}: no difference detectable at this run length ({seen}){need}")
            }
            Outcome::TooShort => format!("{b} vs {a}, {subject}: too short: {}", self.too_short(a, b)),
            Outcome::NotJudged => format!("{b} vs {a}, {subject}: {} (shown, not judged)", signed_pct(ch.point)),
            Outcome::Undefined => format!("{b} vs {a}, {subject}: not comparable"),
        }
    }
}

/// "18%", "2.5%", "0.40%": whole percents from 10 % up, more digits below; beyond 10,000% an
/// interval says nothing more than "very large" (two repetitions far apart give such bounds).
fn pct(x: f64) -> String {
    if x.abs() > 100.0 {
        return "over 10000%".into();
    }
    format!("{}%", percent_number(x * 100.0))
}

fn signed_pct(x: f64) -> String {
    if !x.is_finite() {
        return "?".into();
    }
    format!("{}{}", if x < 0.0 { "-" } else { "+" }, pct(x.abs()))
}

fn percent_number(p: f64) -> String {
    let a = p.abs();
    if a >= 10.0 || (a - a.round()).abs() < 1e-9 {
        format!("{p:.0}")
    } else if a >= 1.0 {
        format!("{p:.1}")
    } else {
        format!("{p:.2}")
    }
}

/// A duration for people: "45 s", "5 min", "2.5 h", "3.1 days".
pub fn approx_duration(seconds: f64) -> String {
    let s = seconds.max(0.0);
    let trim = |x: f64| if x >= 10.0 || (x - x.round()).abs() < 1e-9 { format!("{x:.0}") } else { format!("{x:.1}") };
    if s < 120.0 {
        format!("{} s", trim(s))
    } else if s < 2.0 * 3600.0 {
        format!("{} min", trim(s / 60.0))
    } else if s < 2.0 * 86_400.0 {
        format!("{} h", trim(s / 3600.0))
    } else {
        format!("{} days", trim(s / 86_400.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(point: f64, lo: f64, hi: f64, outcome: Outcome, windows: (usize, usize)) -> Comparison {
        Comparison {
            baseline_windows: windows.0,
            windows: windows.1,
            change: Some(Estimate { point, lo, hi }),
            outcome,
            ..Comparison::new(Metric::P99, &AnalysisOptions::default(), 1)
        }
    }

    #[test]
    fn significant_changes_read_as_the_issue_says() {
        let c = comparison(-0.18, -0.24, -0.11, Outcome::Lower, (30, 30));
        assert_eq!(c.sentence("A", "B", "read"), "B's read p99 is 18% lower than A's (95% CI 11%–24%)");
        let c = comparison(0.504, 0.44, 0.57, Outcome::Higher, (30, 30));
        assert_eq!(c.sentence("run 1", "run 2", "read"), "run 2's read p99 is 50% higher than run 1's (95% CI 44%–57%)");
        let c = Comparison { metric: Metric::OpsPerS, ..comparison(-0.025, -0.04, -0.012, Outcome::Lower, (30, 30)) };
        assert_eq!(c.sentence("A", "B", "total"), "B's total throughput is 2.5% lower than A's (95% CI 1.2%–4%)");
        assert!(c.is_regression());
        assert!(!comparison(-0.18, -0.24, -0.11, Outcome::Lower, (30, 30)).is_regression());
    }

    #[test]
    fn no_difference_says_how_long_it_would_take() {
        let c = comparison(0.02, -0.03, 0.07, Outcome::NoDifference { needed: Some(250) }, (10, 10));
        assert_eq!(
            c.sentence("A", "B", "read"),
            "B vs A, read p99: no difference detectable at this run length (+2%, 95% CI -3%, +7%); \
             would need ≈ 250 windows of 60 s (≈ 4.2 h) per side to tell"
        );
        let tiny = comparison(0.0004, -0.03, 0.03, Outcome::NoDifference { needed: Some(500_000) }, (10, 10));
        assert!(tiny.sentence("A", "B", "read").ends_with("(+0.04%, 95% CI -3%, +3%); a difference this small would need runs over 100 times as long to tell"));
        // Half-width 5%, change 2%, 10 windows: 10 · 6.25 · 2.04 ≈ 128 windows.
        let need = needed(&Estimate { point: 0.02, lo: -0.03, hi: 0.07 }, 10, 0.95).unwrap();
        assert!((125..=131).contains(&need), "{need}");
        assert_eq!(needed(&Estimate { point: 0.0, lo: -0.03, hi: 0.03 }, 10, 0.95), None);
        // An interval barely touching 0 still asks for a longer run than the current one.
        assert_eq!(needed(&Estimate { point: 0.1, lo: -0.001, hi: 0.12 }, 10, 0.95), Some(11));
    }

    #[test]
    fn too_short_names_the_short_side_and_the_minimum() {
        let c = comparison(0.5, 0.4, 0.6, Outcome::TooShort, (3, 12));
        assert_eq!(c.sentence("run 1", "run 2", "read"), "run 2 vs run 1, read p99: too short: run 1 has 3 windows of 60 s; needs at least 5 (≈ 5 min)");
        let c = comparison(0.5, 0.4, 0.6, Outcome::TooShort, (1, 2));
        assert!(c.sentence("A", "B", "read").contains("too short: A has 1 and B has 2 windows of 60 s; needs at least 5"));
        assert!(!c.is_significant());
    }

    #[test]
    fn durations_and_percents_read_naturally() {
        assert_eq!(approx_duration(45.0), "45 s");
        assert_eq!(approx_duration(300.0), "5 min");
        assert_eq!(approx_duration(9000.0), "2.5 h");
        assert_eq!(approx_duration(3.0 * 86_400.0), "3 days");
        assert_eq!((pct(0.004), pct(0.035), pct(0.5)), ("0.40%".into(), "3.5%".into(), "50%".into()));
        assert_eq!(signed_pct(-0.031), "-3.1%");
    }
}
