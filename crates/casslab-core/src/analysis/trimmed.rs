//! Yuen's trimmed t (Yuen, 1974): how two runs' typical p99s ([`super::Metric::P99Typical`],
//! the 20 %-trimmed means of their windows' p99s) are compared when each side is one run.
//!
//! A trimmed mean leaves out the lowest and the highest ⌊0.2 n⌋ of n values, so a few windows
//! that caught a stall move it little. Its standard error comes from the *Winsorized* values
//! (the trimmed ones set to the nearest kept value): `d = (n − 1) s_w² / (h (h − 1))`, h the
//! values kept, and its t has h − 1 degrees of freedom. Two runs' typical p99s are compared by
//! their ratio: the difference of their logarithms, with the delta method's variance
//! `d_a / T_a² + d_b / T_b²` and Welch's degrees of freedom over the two sides' h − 1.
//!
//! With blocks the unit is the block, as for every figure (`paired.rs`): each run's typical
//! p99 is one figure, and the blocks' differences are judged by the sequential t of the
//! design — the trimming has already happened inside each run, where the stall windows are.

use super::distributions::t_quantile;
use super::sample::TRIM;

/// A trimmed mean with its Winsorized standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trimmed {
    pub mean: f64,
    /// Yuen's `d`: the squared standard error of the trimmed mean.
    pub d: f64,
    /// The values kept (h).
    pub kept: usize,
}

/// The [`TRIM`]-trimmed mean of `values`; `None` with fewer than two values kept.
pub fn trimmed(values: &[f64]) -> Option<Trimmed> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    let g = (TRIM * n as f64).floor() as usize;
    let kept = n.saturating_sub(2 * g);
    if kept < 2 {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    let mean = v[g..n - g].iter().sum::<f64>() / kept as f64;
    let (low, high) = (v[g], v[n - g - 1]);
    let w: Vec<f64> = v.iter().map(|x| x.clamp(low, high)).collect();
    let w_mean = w.iter().sum::<f64>() / n as f64;
    let s_w2 = w.iter().map(|x| (x - w_mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(Trimmed { mean, d: (n - 1) as f64 * s_w2 / (kept * (kept - 1)) as f64, kept })
}

/// B's trimmed mean against A's as a relative change `T_b / T_a − 1`, with Yuen's interval at
/// `level` on the ratio's logarithm: `(point, lo, hi)`; `None` when a side has too few values
/// or a trimmed mean that is not positive.
pub fn yuen_ratio(a: &[f64], b: &[f64], level: f64) -> Option<(f64, f64, f64)> {
    let (ta, tb) = (trimmed(a)?, trimmed(b)?);
    if !(ta.mean > 0.0 && tb.mean > 0.0) {
        return None;
    }
    let (va, vb) = (ta.d / (ta.mean * ta.mean), tb.d / (tb.mean * tb.mean));
    let d = tb.mean.ln() - ta.mean.ln();
    let var = va + vb;
    let df = if var > 0.0 { var * var / (va * va / (ta.kept - 1) as f64 + vb * vb / (tb.kept - 1) as f64) } else { (ta.kept + tb.kept - 2) as f64 };
    let half = t_quantile(1.0 - (1.0 - level) / 2.0, df) * var.sqrt();
    Some((d.exp() - 1.0, (d - half).exp() - 1.0, (d + half).exp() - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trimmed_mean_ignores_the_stalls_and_its_error_is_winsorized() {
        // ten windows, two of which caught a stall
        let v = [2.0, 2.1, 1.9, 2.0, 2.2, 1.8, 2.0, 2.1, 40.0, 55.0];
        let t = trimmed(&v).unwrap();
        assert_eq!(t.kept, 6);
        assert!((t.mean - (2.0 + 2.0 + 2.0 + 2.1 + 2.1 + 2.2) / 6.0).abs() < 1e-12, "{t:?}");
        // Winsorized: 1.8, 1.9 → 2.0, 2.0; 40, 55 → 2.2, 2.2
        let w = [2.0, 2.0, 2.0, 2.0, 2.0, 2.1, 2.1, 2.2, 2.2, 2.2];
        let m = w.iter().sum::<f64>() / 10.0;
        let s2 = w.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 9.0;
        assert!((t.d - 9.0 * s2 / 30.0).abs() < 1e-12);
        assert!(trimmed(&[1.0]).is_none());
    }

    #[test]
    fn yuens_interval_finds_a_shift_the_stalls_would_hide() {
        let a = [2.0, 2.1, 1.9, 2.0, 2.2, 1.8, 2.0, 2.1, 40.0, 55.0];
        // b: the same windows 25 % slower, its stalls elsewhere and longer
        let mut b: Vec<f64> = a[..8].iter().map(|x| x * 1.25).collect();
        b.extend([50.0, 70.0]);
        let (point, lo, hi) = yuen_ratio(&a, &b, 0.95).unwrap();
        assert!((point - 0.25).abs() < 0.01 && lo > 0.1 && hi < 0.4, "{point} {lo} {hi}");
        let (_, lo_same, hi_same) = yuen_ratio(&a, &a, 0.95).unwrap();
        assert!(lo_same < 0.0 && hi_same > 0.0);
        assert!(yuen_ratio(&a, &[1.0], 0.95).is_none());
    }
}
