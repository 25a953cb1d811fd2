//! Comparing a run or variant B against a baseline A, one metric at a time: the relative
//! change B/A − 1 with its own interval, and a verdict in words. This file holds the
//! comparison and its sentence, and the windowed-bootstrap comparison of two single runs; the
//! comparison of repetitions is `repeated.rs`'s.
//!
//! Two runs: the k-th resample of A and the k-th resample of B were drawn independently
//! (different seeds), so the ratios `draw_B(k) / draw_A(k) − 1` are draws of the change's
//! bootstrap distribution; its interval is built as in `bootstrap.rs`, with the smaller side's
//! window count (the typical p99 is compared by Yuen's trimmed t instead: `trimmed.rs`). The
//! change is significant when its interval excludes 0. A detectable change and a precision are
//! factors, the same both ways in logarithms, and are printed both ways ([`both_ways`]).
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
use super::distributions::normal_quantile;
use super::{AnalysisOptions, Metric};

/// The change a "would need" estimate is for when nothing else is stated: 10 %.
pub const DEFAULT_POWER_EFFECT: f64 = 0.10;

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// B is higher than A, and the interval excludes 0.
    Higher,
    /// B is lower than A, and the interval excludes 0.
    Lower,
    /// The interval includes 0. `needed`: windows (or repetitions, or blocks) per side that
    /// would detect a change of [`Comparison::power_effect`] 80 % of the time (`None` when
    /// unknown).
    NoDifference { needed: Option<usize> },
    /// The whole interval lies within ± the equivalence margin ([`Comparison::margin`]): the
    /// two are equivalent within it (two one-sided tests).
    Equivalent,
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
    /// Blocks compared in pairs (one run of each side per block), when blocks are the unit.
    pub blocks: Option<usize>,
    /// A sequential design's look that made the interval (a repeated confidence interval).
    pub look: Option<Look>,
    /// The smallest change (relative, either way) this comparison detects 80 % of the time at
    /// the precision it reached.
    pub mde: Option<f64>,
    /// The change (relative) that `NoDifference { needed }` is the sample size for.
    pub power_effect: f64,
    /// The equivalence margin (relative), when one was asked for.
    pub margin: Option<f64>,
    /// Shown with an interval of its own (at the stated confidence, not corrected for the
    /// other figures) but not judged: not one of the experiment's judged figures.
    pub exploratory: bool,
    /// With blocks: one block's spread of the change (standard deviation of its logarithm,
    /// after the order effect when one is fitted), what a plan sizes the next experiment by,
    /// and the degrees of freedom it is estimated on.
    pub block_sd_ln: Option<f64>,
    pub block_df: Option<f64>,
    /// With blocks: they ran the two sides in both orders (from `block_fit::ORDER_FROM`
    /// blocks on, an order effect is fitted).
    pub blocks_ordered: bool,
    /// With an equivalence margin: the interval two one-sided tests judge equivalence by (at
    /// twice the error rate: 90 % where the change's is 95 %).
    pub equivalence: Option<Estimate>,
    /// With blocks run in both orders: what running second in a block does to the figure
    /// (relative), with its interval at the stated confidence; taken out of the change.
    pub order_effect: Option<Estimate>,
}

/// The look of a sequential design that made an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Blocks so far, and the most the budget allows.
    pub blocks: usize,
    pub max_blocks: usize,
    pub spending: super::sequential::Spending,
    /// The confidence of this look's interval taken alone.
    pub nominal: f64,
    /// The look ended the design on the clock (the budget), so it spent all the error rate
    /// the looks before it left.
    pub spent_the_rest: bool,
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
            blocks: None,
            look: None,
            mde: None,
            power_effect: DEFAULT_POWER_EFFECT,
            margin: None,
            exploratory: false,
            block_sd_ln: None,
            block_df: None,
            blocks_ordered: false,
            equivalence: None,
            order_effect: None,
        }
    }

    /// The confidence of each interval: the stated one, shared among the family.
    pub fn level(&self) -> f64 {
        1.0 - (1.0 - self.confidence) / self.family as f64
    }

    /// Decides the outcome from the change's interval: significant when it excludes 0,
    /// equivalent when the equivalence interval ([`Comparison::equivalence`], else the change's
    /// own) lies within the margin, else no difference (with the sample size that would detect
    /// [`Comparison::power_effect`]).
    pub(super) fn decide(&mut self, change: Estimate, n: usize) {
        self.change = Some(change);
        self.outcome = if change.excludes(0.0) {
            if change.point > 0.0 {
                Outcome::Higher
            } else {
                Outcome::Lower
            }
        } else if self.margin.is_some_and(|m| {
            let e = self.equivalence.unwrap_or(change);
            e.has_interval() && e.lo >= -m && e.hi <= m
        }) {
            Outcome::Equivalent
        } else {
            Outcome::NoDifference { needed: needed(&change, n, self.level(), self.power_effect) }
        };
        if self.mde.is_none() {
            self.mde = mde_of(&change, self.level());
        }
    }

    /// The relative half-width of the change's interval (half of hi − lo).
    pub fn half_width(&self) -> Option<f64> {
        self.change.filter(|c| c.has_interval()).map(|c| (c.hi - c.lo) / 2.0)
    }

    /// The half-width of the change's interval in logarithms: the precision reached, which
    /// is `e^h − 1` upwards and `e^−h − 1` downwards ([`both_ways`]).
    pub fn half_width_ln(&self) -> Option<f64> {
        self.change.filter(|c| c.has_interval() && c.lo > -1.0).map(|c| ((1.0 + c.hi).ln() - (1.0 + c.lo).ln()) / 2.0)
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
    // the typical p99: Yuen's trimmed t on the two runs' windows (`trimmed.rs`)
    if metric == Metric::P99Typical {
        if let Some((point, lo, hi)) = super::trimmed::yuen_ratio(a.window_p99s(), b.window_p99s(), c.level()) {
            c.decide(Estimate { point, lo, hi }, n);
            if n < c.min_windows {
                c.outcome = Outcome::TooShort;
            }
            return c;
        }
    }
    let ratios: Vec<f64> = (0..a.resamples().min(b.resamples())).map(|k| b.draw(k, metric) / a.draw(k, metric) - 1.0).collect();
    let (lo, hi) = interval(ratios, c.level(), n);
    c.decide(Estimate { point: pb / pa - 1.0, lo, hi }, n);
    if n < c.min_windows {
        c.outcome = Outcome::TooShort;
    }
    c
}

/// Windows (or repetitions) per side that would detect a true change of `effect` (relative)
/// 80 % of the time, at interval level `level`, assuming the interval's half-width shrinks as
/// 1/√n: `n · (h / ln(1 + effect))² · ((z + z₀.₈) / z)²` with h the half-width in logarithms.
fn needed(change: &Estimate, n: usize, level: f64, effect: f64) -> Option<usize> {
    let h = ((1.0 + change.hi).ln() - (1.0 + change.lo).ln()) / 2.0;
    let d = (1.0 + effect).ln();
    if !(d > 1e-9 && h.is_finite() && h > 0.0) {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    let power = (z + normal_quantile(0.8)) / z;
    let needed = n as f64 * (h / d).powi(2) * power * power;
    Some((needed.ceil() as usize).max(n + 1))
}

/// The smallest change detected 80 % of the time by an interval like `change` at `level`:
/// `(z + z₀.₈) / z` times its half-width (in logarithms), as a relative change.
fn mde_of(change: &Estimate, level: f64) -> Option<f64> {
    let h = ((1.0 + change.hi).ln() - (1.0 + change.lo).ln()) / 2.0;
    if !(h.is_finite() && h > 0.0) {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    Some((h * (z + normal_quantile(0.8)) / z).exp() - 1.0)
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
        if let Some(n) = self.blocks {
            // one block gives a change but no spread to put an interval around it
            if n == 1 && self.min_windows <= 2 {
                return "1 block; an interval needs 2 blocks or more".to_string();
            }
            return format!("{n} block{}; the first look is after {}", if n == 1 { "" } else { "s" }, self.min_windows);
        }
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

    /// How the interval holds, in words: "95% CI"; "95% CI over 4 judged figures (98.75%
    /// each, Bonferroni)"; "95% repeated CI (look after 12 of at most 40 blocks, O'Brien–Fleming
    /// spending: valid whenever the experiment stops)"; an exploratory figure's "95% CI on its
    /// own, exploratory".
    pub fn level_words(&self) -> String {
        self.level_words_at(self.confidence)
    }

    /// [`Comparison::level_words`] at another stated confidence (equivalence's: 1 − 2α).
    fn level_words_at(&self, confidence: f64) -> String {
        let conf = percent_number(confidence * 100.0);
        if self.exploratory {
            return format!("{conf}% CI on its own, exploratory");
        }
        let family = if self.family > 1 {
            let each = 1.0 - (1.0 - confidence) / self.family as f64;
            format!(" over {} judged figures ({}% each, Bonferroni)", self.family, level_number(each * 100.0))
        } else {
            String::new()
        };
        match &self.look {
            Some(l) if l.spent_the_rest => format!(
                "{conf}% repeated CI{family}; final look after {} of at most {} blocks (the budget ended it: the error rate left is spent), {} spending: valid whenever the experiment stops",
                l.blocks,
                l.max_blocks,
                l.spending.name()
            ),
            Some(l) => format!(
                "{conf}% repeated CI{family}; look after {} of at most {} blocks, {} spending: valid whenever the experiment stops",
                l.blocks,
                l.max_blocks,
                l.spending.name()
            ),
            None => format!("{conf}% CI{family}"),
        }
    }

    /// "; running second: +4.8% (95% CI +1.2%, +8.6%)" when blocks ran in both orders: the
    /// order effect, a finding of its own (whoever runs first in a block may be slower).
    fn order_clause(&self) -> String {
        match self.order_effect {
            Some(o) => format!(
                "; running second: {} ({}% CI {}, {})",
                signed_pct(o.point),
                percent_number(self.confidence * 100.0),
                signed_pct(o.lo),
                signed_pct(o.hi)
            ),
            None => String::new(),
        }
    }

    /// The verdict as a sentence. `a` and `b` name the sides (e.g. "run 4"), `what` the
    /// operation (e.g. "read"): "run 5's read p99 is 18% lower than run 4's (95% CI 11%–24%)".
    pub fn sentence(&self, a: &str, b: &str, what: &str) -> String {
        let subject = format!("{what} {}", self.metric.noun());
        let level = self.level_words();
        if self.outcome == Outcome::TooShort {
            return format!("{b} vs {a}, {subject}: too short: {}", self.too_short(a, b));
        }
        let Some(ch) = self.change else {
            return format!("{b} vs {a}, {subject}: not comparable (no successful operations measured on one side)");
        };
        let reps = self.repetitions_clause();
        match self.outcome {
            Outcome::Higher | Outcome::Lower => {
                let (word, lo, hi) = if ch.point > 0.0 { ("higher", ch.lo, ch.hi) } else { ("lower", -ch.hi, -ch.lo) };
                let (low, high) = (pct(lo), pct(hi));
                let between = if self.family > 1 || self.look.is_some() || self.exploratory {
                    format!("{low} to {high}, {level}")
                } else {
                    format!("{level} {low}–{high}")
                };
                // the intersection of a sequential design's looks can leave the latest estimate
                // outside: the later blocks disagree with the earlier ones
                let outside = if ch.point < ch.lo || ch.point > ch.hi {
                    "; the latest estimate lies outside the interval of all looks: later blocks disagree with earlier ones"
                } else {
                    ""
                };
                format!("{b}'s {subject} is {} {word} than {a}'s ({between}{reps}{}{outside})", pct(ch.point.abs()), self.order_clause())
            }
            Outcome::Equivalent => {
                let m = pct(self.margin.unwrap_or(0.0));
                // two one-sided tests at α each: the interval at 1 − 2α
                let e = self.equivalence.unwrap_or(ch);
                let tost = (2.0 * self.confidence - 1.0).max(0.0);
                format!(
                    "{b} vs {a}, {subject}: equivalent within ±{m} ({}, {} {}, {}{reps}{}; two one-sided tests, each at {}%)",
                    signed_pct(ch.point),
                    self.level_words_at(tost),
                    signed_pct(e.lo),
                    signed_pct(e.hi),
                    self.order_clause(),
                    percent_number(self.confidence * 100.0)
                )
            }
            Outcome::NoDifference { needed } => self.no_difference(a, b, &subject, &ch, needed),
            Outcome::TooShort => format!("{b} vs {a}, {subject}: too short: {}", self.too_short(a, b)),
            Outcome::NotJudged => format!("{b} vs {a}, {subject}: {} (shown, not judged)", signed_pct(ch.point)),
            Outcome::Undefined => format!("{b} vs {a}, {subject}: not comparable"),
        }
    }

    /// No difference detected: what the interval rules out, the smallest change this
    /// comparison would have seen, and what more data would see a stated change.
    fn no_difference(&self, a: &str, b: &str, subject: &str, ch: &Estimate, needed: Option<usize>) -> String {
        let level = self.level_words();
        let seen =
            format!("{}, {level} {}, {}{}{}", signed_pct(ch.point), signed_pct(ch.lo), signed_pct(ch.hi), self.repetitions_clause(), self.order_clause());
        let could = match self.mde {
            Some(m) if m.is_finite() && m < 100.0 => {
                format!("; no change beyond {}…{} is likely, and one of {} would be seen 80% of the time", signed_pct(ch.lo), signed_pct(ch.hi), both_ways(m))
            }
            _ => String::new(),
        };
        let effect = pct(self.power_effect);
        let unit = if self.blocks.is_some() {
            "blocks"
        } else if self.repetitions.is_some() {
            "repetitions per side"
        } else {
            ""
        };
        let need = match needed {
            _ if self.mde.is_some_and(|m| m <= self.power_effect) => String::new(),
            Some(k) if !unit.is_empty() && k > 100 * self.blocks.unwrap_or(self.repetitions.map_or(1, |(x, y)| x.max(y))) => {
                format!("; seeing a ±{effect} change would take over 100 times as many {unit}")
            }
            Some(k) if !unit.is_empty() => format!("; ≈ {k} {unit} would see a ±{effect} change 80% of the time"),
            Some(k) if k > 100 * self.windows.max(self.baseline_windows) => format!("; seeing a ±{effect} change would take runs over 100 times as long"),
            Some(k) => format!(
                "; ≈ {k} windows of {} (≈ {}) per side would see a ±{effect} change 80% of the time",
                approx_duration(self.window_s),
                approx_duration(k as f64 * self.window_s)
            ),
            None => String::new(),
        };
        let what = if self.blocks.is_some() || self.repetitions.is_some() { "with these runs" } else { "at this run length" };
        format!("{b} vs {a}, {subject}: no difference detected {what} ({seen}){could}{need}")
    }
}

/// A change that is `+up` upwards as the same factor both ways: "-50%/+98%" for +98 % (a
/// factor of 1.98 up is one of 1/1.98 down). The minimum detectable effect and the precision
/// reached are symmetric in logarithms, not in percent.
pub fn both_ways(up: f64) -> String {
    if !(up.is_finite() && up > -1.0) {
        return "?".into();
    }
    format!("-{}/+{}", pct(1.0 - 1.0 / (1.0 + up)), pct(up))
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

/// A confidence level in percent with the digits that tell it from its neighbours: "95",
/// "98.75", "99.58".
fn level_number(p: f64) -> String {
    let t = format!("{p:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
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
    fn no_difference_says_what_could_have_been_seen_and_how_long_a_stated_change_takes() {
        let mut c = comparison(0.02, -0.03, 0.07, Outcome::NoDifference { needed: Some(250) }, (10, 10));
        c.mde = mde_of(&c.change.unwrap(), 0.95);
        let m = c.mde.unwrap();
        // the half-width in logarithms (≈ 0.049) times (1.96 + 0.84) / 1.96
        assert!((m - 0.0726).abs() < 0.002, "{m}");
        assert_eq!(
            c.sentence("A", "B", "read"),
            "B vs A, read p99: no difference detected at this run length (+2%, 95% CI -3%, +7%); \
             no change beyond -3%…+7% is likely, and one of -6.8%/+7.3% would be seen 80% of the time"
        );
        // a design that could not see the stated 10% says what would
        let wide = Comparison {
            mde: mde_of(&Estimate { point: 0.02, lo: -0.2, hi: 0.3 }, 0.95),
            ..comparison(0.02, -0.2, 0.3, Outcome::NoDifference { needed: Some(250) }, (10, 10))
        };
        assert!(
            wide.sentence("A", "B", "read").ends_with("; ≈ 250 windows of 60 s (≈ 4.2 h) per side would see a ±10% change 80% of the time"),
            "{}",
            wide.sentence("A", "B", "read")
        );
        let tiny = comparison(0.0004, -0.3, 0.3, Outcome::NoDifference { needed: Some(500_000) }, (10, 10));
        assert!(tiny.sentence("A", "B", "read").ends_with("; seeing a ±10% change would take runs over 100 times as long"));
        // the sample size is for the stated change, whatever the observed one: half-width
        // (ln 1.07 − ln 0.97) / 2 ≈ 0.049 against ln 1.1 ≈ 0.095, 10 windows: ≈ 5.4, so one
        // more than now
        assert_eq!(needed(&Estimate { point: 0.02, lo: -0.03, hi: 0.07 }, 10, 0.95, 0.10), Some(11));
        assert_eq!(needed(&Estimate { point: 0.0, lo: -0.3, hi: 0.4 }, 10, 0.95, 0.10), Some(271));
        assert_eq!(needed(&Estimate { point: 0.0, lo: -0.03, hi: 0.03 }, 10, 0.95, 0.0), None);
    }

    /// Item 3 of the audit: the minimum detectable effect is a factor, the same both ways in
    /// logarithms; "±98%" said +98 % up but meant −49 % down.
    #[test]
    fn a_detectable_change_is_printed_both_ways() {
        assert_eq!(both_ways(0.98), "-49%/+98%");
        assert_eq!(both_ways(0.05), "-4.8%/+5%");
        let mut c = comparison(0.28, -0.24, 1.14, Outcome::NoDifference { needed: Some(1087) }, (10, 10));
        c.blocks = Some(21);
        c.mde = Some(0.98);
        let text = c.sentence("g1", "zgc", "read");
        assert!(text.contains("and one of -49%/+98% would be seen 80% of the time"), "{text}");
        assert!(!text.contains("±98"), "{text}");
    }

    #[test]
    fn an_interval_within_the_margin_is_equivalence_and_levels_say_their_correction() {
        let mut c = Comparison { margin: Some(0.05), ..Comparison::new(Metric::P50, &AnalysisOptions::default(), 4) };
        c.decide(Estimate { point: 0.01, lo: -0.02, hi: 0.04 }, 10);
        assert_eq!(c.outcome, Outcome::Equivalent);
        let text = c.sentence("A", "B", "read");
        // two one-sided tests at 5% each: the 90% interval (97.5% each over 4 figures)
        assert!(
            text.starts_with("B vs A, read p50: equivalent within ±5% (+1%, 90% CI over 4 judged figures (97.5% each, Bonferroni) -2%, +4%; two one-sided tests, each at 95%)"),
            "{text}"
        );
        c.decide(Estimate { point: 0.01, lo: -0.02, hi: 0.06 }, 10);
        assert!(matches!(c.outcome, Outcome::NoDifference { .. }));
        c.decide(Estimate { point: 0.08, lo: 0.06, hi: 0.1 }, 10);
        assert_eq!(c.outcome, Outcome::Higher);
        assert!(
            c.sentence("A", "B", "read").contains("(6% to 10%, 95% CI over 4 judged figures (98.75% each, Bonferroni))"),
            "{}",
            c.sentence("A", "B", "read")
        );
        let ex = Comparison { exploratory: true, ..c.clone() };
        assert!(ex.sentence("A", "B", "read").contains("95% CI on its own, exploratory"));
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
