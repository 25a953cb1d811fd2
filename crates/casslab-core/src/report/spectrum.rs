//! Latency percentile spectra, as HdrHistogram plots draw them: latency against the
//! percentile on a "1 in N" axis, x = 1 / (1 − q), so 90% is at 10, 99% at 100 and 99.9% at
//! 1000. It turns a histogram into points; drawing them is the report formats' job.

use crate::stats::Phase;
use hdrhistogram::Histogram;

/// A point of a latency percentile spectrum: `percentile` (0–100) is plotted at
/// `one_in` = 1 / (1 − q), so 99% is at 100 and 99.9% at 1000, as HdrHistogram plots do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpectrumPoint {
    pub one_in: f64,
    pub percentile: f64,
    pub latency_ns: u64,
}

/// One operation's whole-phase latency spectra.
#[derive(Debug, Clone)]
pub struct OpSpectrum {
    pub phase: Phase,
    pub op: String,
    /// From the intended start time.
    pub intended: Vec<SpectrumPoint>,
    /// From the actual send.
    pub service: Vec<SpectrumPoint>,
}

/// Points per decade of `one_in` in a spectrum.
const SPECTRUM_STEPS_PER_DECADE: u32 = 20;

/// A histogram's spectrum from the 0th percentile up to its maximum, which is placed at
/// 1 in `count` (beyond it the histogram has nothing more to tell).
pub fn spectrum(h: &Histogram<u64>) -> Vec<SpectrumPoint> {
    if h.is_empty() {
        return Vec::new();
    }
    let n = h.len() as f64;
    let decades = n.log10();
    let steps = (decades * f64::from(SPECTRUM_STEPS_PER_DECADE)).floor() as u32;
    let mut out: Vec<SpectrumPoint> = (0..=steps)
        .map(|i| {
            let one_in = 10f64.powf(f64::from(i) / f64::from(SPECTRUM_STEPS_PER_DECADE));
            let q = 1.0 - 1.0 / one_in;
            SpectrumPoint { one_in, percentile: q * 100.0, latency_ns: h.value_at_quantile(q) }
        })
        .collect();
    if out.last().is_none_or(|p| p.one_in < n) {
        out.push(SpectrumPoint { one_in: n.max(1.0), percentile: 100.0, latency_ns: h.max() });
    } else if let Some(last) = out.last_mut() {
        last.latency_ns = h.max();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn spectrum_runs_from_the_minimum_to_the_maximum_at_one_in_count() {
        let mut h = new_histogram();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = spectrum(&h);
        assert_eq!(s[0].one_in, 1.0);
        assert_eq!(s[0].percentile, 0.0);
        let at = |x: f64| s.iter().find(|p| (p.one_in - x).abs() / x < 1e-9).unwrap().latency_ns as f64;
        assert!((at(100.0) - 9_900_000.0).abs() / 9.9e6 < 0.001);
        let last = s.last().unwrap();
        assert_eq!((last.one_in, last.latency_ns), (10_000.0, h.max()));
        assert!(s.windows(2).all(|w| w[0].one_in < w[1].one_in && w[0].latency_ns <= w[1].latency_ns));
        assert!(spectrum(&new_histogram()).is_empty());
    }

    #[test]
    fn a_single_sample_is_one_point() {
        let mut h = new_histogram();
        h.record(2_000_000).unwrap();
        let s = spectrum(&h);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].one_in, s[0].latency_ns), (1.0, h.max()));
    }
}
