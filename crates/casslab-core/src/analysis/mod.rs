//! Statistics that hold up when comparing runs: the measured phase of each run is cut into
//! windows (one minute by default), windows are resampled with replacement (a windowed
//! bootstrap, so the autocorrelation between neighbouring requests does not make intervals
//! falsely narrow), and every figure — throughput, mean, p50 … p99.9 — gets a confidence
//! interval. When a variant ran several times, the repetitions are the unit instead
//! (`repeated`: a t interval over the runs' figures, which sees run-to-run variation that no
//! resampling of windows can). Two runs or variants are compared by the relative change of
//! each figure with its own interval and a verdict in words, the figures of a comparison
//! judged as one family (Bonferroni), only figures that mean the same in both (`likeness`),
//! and saturated runs named (`saturation`). Gates (`read.p99 > 45ms`, a maximum regression)
//! turn comparisons into pass/fail checks.
//!
//! Pure logic on values the store returns, except [`study`], which reads the runs it compares
//! from the store; nothing here prints. The flow is
//! [`Windows`] (intervals → windows, per run) → [`Sample`] (one op and latency kind,
//! compacted for fast resampling) → [`Resampled`] (the bootstrap distribution of every
//! [`Metric`]) → [`Resampled::estimate`] / [`compare`] for single runs, [`RunFigure`] →
//! [`side_estimate`] / [`compare_repeated`] for repetitions ([`Comparison`], with its sentence);
//! [`study::study`] assembles it all for groups of saved runs.

pub mod block_fit;
mod bootstrap;
#[cfg(test)]
mod bootstrap_tests;
mod calibration;
mod change;
mod checks;
pub mod design_record;
mod distributions;
mod gate;
pub mod impact;
mod likeness;
pub mod load_curve;
pub mod paired;
#[cfg(test)]
mod paired_tests;
pub mod recall;
mod repeated;
#[cfg(test)]
mod repeated_tests;
mod sample;
pub mod saturation;
pub mod saved_experiment;
pub mod sequential;
#[cfg(test)]
mod sequential_tests;
pub mod serial;
pub mod server_figures;
pub mod study;
#[cfg(test)]
mod study_tests;
mod trimmed;
pub mod verified;
mod window;

pub use bootstrap::{seed_for, Estimate, Resampled};
pub use change::{approx_duration, both_ways, compare, Comparison, Look, Outcome, DEFAULT_POWER_EFFECT};
pub use checks::{check_gates, GateFailure, GateReport};
pub use distributions::{normal_quantile, t_cdf, t_quantile};
pub use gate::{parse_sla, sla_metrics, Cmp, Gate, GateError, GateMetric, MaxRegression, SlaError, GATE_METRICS};
pub use likeness::{likeness, Likeness};
pub use repeated::{compare_repeated, outlier, side_estimate, Outlier, RunFigure, MIN_FIGURES, OUTLIER_METRICS};
pub use sample::Sample;
pub use saturation::RunLoad;
pub use window::{auto_window_s, Buckets, OpRef, Window, WindowBuilder, WindowOp, Windows, AUTO_WINDOWS, AUTO_WINDOW_MAX_S};

pub use crate::stats::LatencyKind;

/// The figures every sample gets an interval for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Successful operations per second (total ok / total duration of the chosen windows).
    OpsPerS,
    Mean,
    P50,
    P95,
    P99,
    P999,
    /// The typical tail: the 20 %-trimmed mean of the per-window p99s (`OP.p99_typical`). A
    /// run's p99 moves from run to run mostly with the few stall episodes it happened to
    /// catch; this says what the tail of an ordinary window is, and moves far less.
    P99Typical,
}

/// How many figures a sample has ([`Metric::ALL`]).
pub const METRICS: usize = 7;

impl Metric {
    pub const ALL: [Metric; METRICS] = [Metric::OpsPerS, Metric::Mean, Metric::P50, Metric::P95, Metric::P99, Metric::P999, Metric::P99Typical];

    /// Position in [`Metric::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Short name for tables: `ops/s`, `mean`, `p50`, … `p99.9`, `p99_typical`.
    pub fn label(self) -> &'static str {
        match self {
            Metric::OpsPerS => "ops/s",
            Metric::Mean => "mean",
            Metric::P50 => "p50",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::P99Typical => "p99_typical",
        }
    }

    /// Name in sentences: "read throughput", "read p99".
    pub fn noun(self) -> &'static str {
        match self {
            Metric::OpsPerS => "throughput",
            Metric::P99Typical => "typical p99",
            m => m.label(),
        }
    }

    /// The quantile a percentile metric stands for (of the merged histogram; the typical
    /// p99 is a mean of windows' p99s, not a quantile).
    pub fn quantile(self) -> Option<f64> {
        match self {
            Metric::OpsPerS | Metric::Mean | Metric::P99Typical => None,
            Metric::P50 => Some(0.50),
            Metric::P95 => Some(0.95),
            Metric::P99 => Some(0.99),
            Metric::P999 => Some(0.999),
        }
    }

    /// Latency metrics are in nanoseconds and lower is better; throughput is the reverse.
    pub fn is_latency(self) -> bool {
        self != Metric::OpsPerS
    }

    /// Whether a relative change (B/A − 1) of this metric is a regression.
    pub fn is_worse(self, change: f64) -> bool {
        if self.is_latency() {
            change > 0.0
        } else {
            change < 0.0
        }
    }
}

/// How the analysis is done. `Default` gives 1-minute windows, 10,000 resamples, 95 %
/// intervals, at least 5 windows per side before a claim, and a fixed seed (so the same runs
/// always give the same intervals).
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisOptions {
    pub window_s: f64,
    pub resamples: usize,
    /// Confidence level of every interval, e.g. 0.95.
    pub confidence: f64,
    /// Fewer windows than this on either side: the comparison is "too short".
    pub min_windows: usize,
    pub seed: u64,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions { window_s: 60.0, resamples: 10_000, confidence: 0.95, min_windows: 5, seed: 0x5eed_ca55 }
    }
}

impl AnalysisOptions {
    /// Checks the options make sense before any work is done.
    pub fn validate(&self) -> Result<(), AnalysisError> {
        if !(self.window_s.is_finite() && self.window_s > 0.0) {
            return Err(AnalysisError::BadWindow(self.window_s));
        }
        if self.resamples < 100 {
            return Err(AnalysisError::TooFewResamples(self.resamples));
        }
        if !(self.confidence > 0.5 && self.confidence < 1.0) {
            return Err(AnalysisError::BadConfidence(self.confidence));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalysisError {
    #[error("the window length must be a positive number of seconds, not {0}")]
    BadWindow(f64),
    #[error("{0} resamples are too few for an interval; use at least 100 (10000 is the default)")]
    TooFewResamples(usize),
    #[error("the confidence level must be between 50% and 100% (exclusive), not {:.4}%", .0 * 100.0)]
    BadConfidence(f64),
    #[error("the run has no measured intervals (neither a run nor a load phase was saved)")]
    NoMeasuredIntervals,
    #[error("cannot pool runs measured in different phases ({0} and {1})")]
    MixedPhases(&'static str, &'static str),
}

/// Throughput per core, client side and server side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Efficiency {
    pub per_client_core: Option<Estimate>,
    pub per_server_core: Option<Estimate>,
}

impl Efficiency {
    /// Divides a throughput estimate (and its interval) by the client's cores and, when known,
    /// the server's cores. For local nodes the server shares the client's machine, so the
    /// caller passes the machine's cores; for remote clusters what `--server-cores` says, or
    /// `None` when nobody said.
    pub fn of(ops_per_s: &Estimate, client_cores: usize, server_cores: Option<f64>) -> Efficiency {
        let per = |cores: f64| (cores > 0.0).then(|| ops_per_s.scaled(1.0 / cores));
        Efficiency { per_client_core: per(client_cores as f64), per_server_core: server_cores.and_then(per) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_know_their_direction_and_names() {
        assert!(Metric::P99.is_worse(0.2) && !Metric::P99.is_worse(-0.2));
        assert!(Metric::OpsPerS.is_worse(-0.1) && !Metric::OpsPerS.is_worse(0.1));
        let labels: Vec<_> = Metric::ALL.iter().map(|m| m.label()).collect();
        assert_eq!(labels, ["ops/s", "mean", "p50", "p95", "p99", "p99.9", "p99_typical"]);
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(m.index(), i);
        }
        assert_eq!(Metric::P999.quantile(), Some(0.999));
        assert_eq!(Metric::OpsPerS.noun(), "throughput");
    }

    #[test]
    fn options_are_checked() {
        assert_eq!(AnalysisOptions::default().validate(), Ok(()));
        let bad = |f: fn(&mut AnalysisOptions)| {
            let mut o = AnalysisOptions::default();
            f(&mut o);
            o.validate().unwrap_err().to_string()
        };
        assert!(bad(|o| o.window_s = 0.0).contains("window length"));
        assert!(bad(|o| o.resamples = 10).contains("at least 100"));
        assert!(bad(|o| o.confidence = 1.0).contains("between 50% and 100%"));
    }

    #[test]
    fn efficiency_divides_the_interval_by_cores() {
        let e = Estimate { point: 8000.0, lo: 7600.0, hi: 8400.0 };
        let eff = Efficiency::of(&e, 4, Some(8.0));
        assert_eq!(eff.per_client_core, Some(Estimate { point: 2000.0, lo: 1900.0, hi: 2100.0 }));
        assert_eq!(eff.per_server_core, Some(Estimate { point: 1000.0, lo: 950.0, hi: 1050.0 }));
        let unknown = Efficiency::of(&e, 0, None);
        assert_eq!((unknown.per_client_core, unknown.per_server_core), (None, None));
    }
}
