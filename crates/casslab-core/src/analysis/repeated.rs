//! Repetitions as the unit: when a variant ran several times, each run gives each figure once
//! ([`RunFigure`]), and the intervals come from how those figures spread from run to run — the
//! variation an experiment actually repeats — rather than from the windows inside the runs,
//! which cannot see it (a slow first run looks like many independent slow windows).
//!
//! Method. A figure is summarised by the mean of its logarithm over the repetitions (the
//! geometric mean of the runs' figures: the figure of a typical run), with a Student t
//! interval on that mean (n − 1 degrees of freedom); a change B/A − 1 is the ratio of the two
//! geometric means, with Welch's t interval on the difference of the mean logarithms (when a
//! side has a single run, it borrows the other side's run-to-run variance: Student's pooled
//! interval). With few repetitions t intervals are wide, and they should be: three runs say
//! little about a fourth. (A two-stage bootstrap — repetitions, then windows — cannot do
//! better with three repetitions: its draws never leave the range of the runs it has, so its
//! intervals cover the truth far less than they claim.)
//!
//! Each run's own windowed bootstrap ([`RunFigure::within_var_ln`]) says how much of the
//! spread lies between repetitions rather than within runs (a one-way analysis of variance).
//! A repetition that disagrees with the others of its variant ([`outlier`]) is told from
//! ordinary run-to-run variation by that variation itself, pooled over every variant's runs.

use super::bootstrap::{Estimate, Resampled};
use super::change::{Comparison, Outcome};
use super::distributions::{normal_quantile, t_quantile};
use super::{AnalysisOptions, Metric, METRICS};

/// One run's figures of one operation: each metric's point estimate and the variance of its
/// logarithm within the run (from the run's windowed bootstrap; NaN when the run has fewer
/// than two windows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFigure {
    pub points: [f64; METRICS],
    pub within_var_ln: [f64; METRICS],
}

impl RunFigure {
    /// The figures of a run's windowed bootstrap.
    pub fn of(r: &Resampled) -> RunFigure {
        let mut within_var_ln = [f64::NAN; METRICS];
        if r.windows() >= 2 {
            for m in Metric::ALL {
                let logs: Vec<f64> = (0..r.resamples()).map(|k| r.draw(k, m)).filter(|v| *v > 0.0 && v.is_finite()).map(f64::ln).collect();
                within_var_ln[m.index()] = variance(&logs);
            }
        }
        RunFigure { points: Metric::ALL.map(|m| r.point(m)), within_var_ln }
    }
}

/// The logarithms of one metric over a side's runs where it is defined (and positive), with
/// each run's within-run variance and its index among the runs.
struct Logs {
    ln: Vec<f64>,
    within: Vec<f64>,
    index: Vec<usize>,
}

fn logs(runs: &[RunFigure], m: Metric) -> Logs {
    let mut l = Logs { ln: Vec::new(), within: Vec::new(), index: Vec::new() };
    for (i, r) in runs.iter().enumerate() {
        let v = r.points[m.index()];
        if v > 0.0 && v.is_finite() {
            l.ln.push(v.ln());
            l.within.push(r.within_var_ln[m.index()]);
            l.index.push(i);
        }
    }
    l
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// The sample variance (n − 1); NaN with fewer than two values.
fn variance(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return f64::NAN;
    }
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64
}

/// A side's figure over its repetitions: the geometric mean with its t interval at
/// `confidence`. `None` when no run has the figure; no interval from a single run.
pub fn side_estimate(runs: &[RunFigure], m: Metric, confidence: f64) -> Option<Estimate> {
    let l = logs(runs, m);
    if l.ln.is_empty() {
        return None;
    }
    let (n, centre) = (l.ln.len() as f64, mean(&l.ln));
    if l.ln.len() < 2 {
        return Some(Estimate { point: centre.exp(), lo: f64::NAN, hi: f64::NAN });
    }
    let half = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1.0) * (variance(&l.ln) / n).sqrt();
    Some(Estimate { point: centre.exp(), lo: (centre - half).exp(), hi: (centre + half).exp() })
}

/// Compares side `b` against the baseline `a` on `metric` over their repetitions (at least
/// two runs in all, and on one side at least two), one of `family` figures judged together.
pub fn compare_repeated(a: &[RunFigure], b: &[RunFigure], metric: Metric, opts: &AnalysisOptions, family: usize) -> Comparison {
    let mut c = Comparison::new(metric, opts, family);
    let (la, lb) = (logs(a, metric), logs(b, metric));
    let (na, nb) = (la.ln.len(), lb.ln.len());
    c.repetitions = Some((na, nb));
    if na == 0 || nb == 0 || na + nb < 3 {
        return c;
    }
    let (va, vb) = (variance(&la.ln), variance(&lb.ln));
    let (fa, fb) = (na as f64, nb as f64);
    // Welch's interval; Student's pooled one when a side has a single run.
    let (var_d, df) = if na >= 2 && nb >= 2 {
        let (sa, sb) = (va / fa, vb / fb);
        let df = if sa + sb > 0.0 { (sa + sb).powi(2) / (sa * sa / (fa - 1.0) + sb * sb / (fb - 1.0)) } else { fa + fb - 2.0 };
        (sa + sb, df)
    } else {
        let pooled = if na >= 2 { va } else { vb };
        (pooled * (1.0 / fa + 1.0 / fb), fa + fb - 2.0)
    };
    let d = mean(&lb.ln) - mean(&la.ln);
    let half = t_quantile(1.0 - (1.0 - c.level()) / 2.0, df) * var_d.sqrt();
    let change = Estimate { point: d.exp() - 1.0, lo: (d - half).exp() - 1.0, hi: (d + half).exp() - 1.0 };
    c.decide(change, na.min(nb));
    let level = c.level();
    if let Outcome::NoDifference { needed } = &mut c.outcome {
        *needed = repetitions_needed(d, var_d / (1.0 / fa + 1.0 / fb), level);
    }
    let within = mean(&la.within) / fa + mean(&lb.within) / fb;
    if within.is_finite() && var_d > 0.0 {
        c.between_share = Some((1.0 - within / var_d).clamp(0.0, 1.0));
    }
    c
}

/// Repetitions per side that would tell a true change of `d` (in logarithms) with an 80 %
/// chance, at interval level `level`, given the variance `var_run` of one run's logarithm:
/// `n = 2 · var_run · (z_{1−α/2} + z_{0.8})² / d²` (normal quantiles: it is an estimate).
fn repetitions_needed(d: f64, var_run: f64, level: f64) -> Option<usize> {
    if !(d.abs() > 1e-9 && var_run.is_finite() && var_run > 0.0) {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0) + normal_quantile(0.8);
    Some((2.0 * var_run * z * z / (d * d)).ceil().max(2.0) as usize)
}

/// A repetition that disagrees with the others of its side on one figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    /// Its index among the side's runs.
    pub run: usize,
    pub value: f64,
    /// The lowest and highest value of the other runs.
    pub others: (f64, f64),
    /// How far outside the others' range it lies, as a ratio (1.0 = at the edge).
    pub factor: f64,
}

/// The figures a disagreeing repetition is looked for in: the tail percentiles of a short run
/// are too noisy (and too far from normal) to single a run out by.
pub const OUTLIER_METRICS: [Metric; 4] = [Metric::OpsPerS, Metric::Mean, Metric::P50, Metric::P95];

/// A repetition is named as disagreeing when it is singled out ([`outlier`]) in at least this
/// many figures of one operation: a run that really differs (run right after a load) differs
/// in several, while one noisy figure alone is what chance produces.
pub const MIN_FIGURES: usize = 2;

/// The run of a side that lies further from the side's other runs than run-to-run variation
/// explains, or `None`. The variation is pooled over the side's other runs and the runs of
/// every `reference` side (the other variants: their runs vary alike, and a side of three has
/// too few of its own; a run's figure carries its own noise, so the variation includes it); the
/// run's deviation from the mean of its side's others, divided by `s √(1 + 1/others)`, must
/// exceed Student's t at 99.5 % (two-sided), and the run must lie at least 10 % outside the
/// others' range. Needs three runs on the side.
pub fn outlier(runs: &[RunFigure], m: Metric, reference: &[&[RunFigure]]) -> Option<Outlier> {
    let l = logs(runs, m);
    if l.ln.len() < 3 {
        return None;
    }
    let (mut ss_ref, mut df_ref) = (0.0, 0.0);
    for r in reference {
        let x = logs(r, m).ln;
        if x.len() >= 2 {
            ss_ref += variance(&x) * (x.len() - 1) as f64;
            df_ref += (x.len() - 1) as f64;
        }
    }
    let mut best: Option<(f64, Outlier)> = None;
    for k in 0..l.ln.len() {
        let others: Vec<f64> = (0..l.ln.len()).filter(|&j| j != k).map(|j| l.ln[j]).collect();
        let n = others.len() as f64;
        let df = n - 1.0 + df_ref;
        let s2 = (variance(&others) * (n - 1.0) + ss_ref) / df;
        let x = l.ln[k];
        let (lo, hi) = (others.iter().copied().fold(f64::INFINITY, f64::min), others.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let gap = if x > hi {
            x - hi
        } else if x < lo {
            lo - x
        } else {
            0.0
        };
        let t = (x - mean(&others)).abs() / (s2 * (1.0 + 1.0 / n)).sqrt();
        if gap <= 1.1f64.ln() || t.is_nan() || t <= t_quantile(0.9975, df) {
            continue;
        }
        if best.as_ref().is_none_or(|(b, _)| t > *b) {
            best = Some((t, Outlier { run: l.index[k], value: x.exp(), others: (lo.exp(), hi.exp()), factor: gap.exp() }));
        }
    }
    best.map(|(_, o)| o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p95_ms: f64, within_sd: f64) -> RunFigure {
        let mut points = [1000.0, 1e6, 0.5e6, p95_ms * 1e6, 2e6, 3e6, 1.8e6];
        points[Metric::P95.index()] = p95_ms * 1e6;
        RunFigure { points, within_var_ln: [within_sd * within_sd; METRICS] }
    }

    #[test]
    fn a_side_is_the_geometric_mean_with_a_t_interval() {
        let runs = [run(1.0, 0.01), run(2.0, 0.01), run(4.0, 0.01)];
        let e = side_estimate(&runs, Metric::P95, 0.95).unwrap();
        assert!((e.point - 2e6).abs() < 1.0, "{e:?}");
        // ln values 0, ln2, ln4: sd = ln 2, t(0.975, 2) = 4.303, half = 4.303 · ln2 / √3
        let half = 4.302652730 * 2f64.ln() / 3f64.sqrt();
        assert!((e.hi / e.point - half.exp()).abs() < 1e-6 && (e.point / e.lo - half.exp()).abs() < 1e-6, "{e:?}");
        let one = side_estimate(&runs[..1], Metric::P95, 0.95).unwrap();
        assert!((one.point - 1e6).abs() < 1e-3 && !one.has_interval());
        let undefined = RunFigure { points: [f64::NAN; METRICS], within_var_ln: [f64::NAN; METRICS] };
        assert_eq!(side_estimate(&[undefined], Metric::P95, 0.95), None);
    }

    #[test]
    fn one_slow_repetition_makes_a_wide_interval_not_a_difference() {
        // The A/A of the issue: a's first run right after the load, the others alike.
        let a = [run(1.74, 0.02), run(0.75, 0.02), run(0.76, 0.02)];
        let b = [run(0.71, 0.02), run(0.80, 0.02), run(0.74, 0.02)];
        let c = compare_repeated(&a, &b, Metric::P95, &AnalysisOptions::default(), 1);
        assert!(matches!(c.outcome, Outcome::NoDifference { .. }), "{c:?}");
        assert_eq!(c.repetitions, Some((3, 3)));
        assert!(c.between_share.unwrap() > 0.95, "{c:?}");
        let o = outlier(&a, Metric::P95, &[&b]).unwrap();
        assert_eq!(o.run, 0);
        assert!((o.others.0 - 0.75e6).abs() < 1.0 && (o.others.1 - 0.76e6).abs() < 1.0);
        assert_eq!(outlier(&b, Metric::P95, &[&a]), None);
    }

    #[test]
    fn consistent_repetitions_tell_a_real_change() {
        let a = [run(1.0, 0.01), run(1.02, 0.01), run(0.99, 0.01)];
        let b = [run(1.3, 0.01), run(1.31, 0.01), run(1.28, 0.01)];
        let c = compare_repeated(&a, &b, Metric::P95, &AnalysisOptions::default(), 12);
        assert_eq!(c.outcome, Outcome::Higher, "{c:?}");
        let ch = c.change.unwrap();
        assert!((ch.point - 0.2951).abs() < 0.01 && ch.lo > 0.1 && ch.hi < 0.5, "{ch:?}");
        let sentence = c.sentence("a", "b", "read");
        assert!(
            sentence
                .starts_with("b's read p95 is 29% higher than a's (21% to 38%, 95% CI over 12 judged figures (99.58% each, Bonferroni); 3 and 3 repetitions, "),
            "{sentence}"
        );
        assert!(sentence.ends_with(" of the spread between repetitions)"), "{sentence}");
        // a single run on one side borrows the other side's run-to-run variance
        let c = compare_repeated(&a[..1], &b, Metric::P95, &AnalysisOptions::default(), 1);
        assert_eq!((c.outcome, c.repetitions), (Outcome::Higher, Some((1, 3))));
        assert_eq!(compare_repeated(&a[..1], &b[..1], Metric::P95, &AnalysisOptions::default(), 1).outcome, Outcome::Undefined);
    }

    #[test]
    fn ordinary_run_to_run_variation_is_not_called_a_disagreement() {
        // 30% apart, but the other variant's runs spread as much: no claim.
        let runs = [run(1.0, 0.01), run(1.02, 0.01), run(1.3, 0.01)];
        let other = [run(1.0, 0.01), run(1.25, 0.01), run(0.9, 0.01)];
        assert_eq!(outlier(&runs, Metric::P95, &[&other]), None);
        // with nothing to compare the spread with, three runs cannot tell
        assert_eq!(outlier(&runs, Metric::P95, &[]), None);
        let tight = [run(1.0, 0.01), run(1.001, 0.01), run(1.002, 0.01)];
        // a small step beyond a tight range is not one either (under 10%)
        let runs = [run(1.0, 0.001), run(1.001, 0.001), run(1.05, 0.001)];
        assert_eq!(outlier(&runs, Metric::P95, &[&tight]), None);
    }
}
