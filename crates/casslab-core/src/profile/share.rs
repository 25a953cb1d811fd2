//! How sure a profile's shares are: a frame's share of a profile's samples with its 95 %
//! interval (Wilson's score interval of a binomial proportion, the samples counted as
//! independent draws), the change of a frame's weight per operation between two profiles with
//! its interval (the two shares' variances added), and the sample count below which a profile is
//! too thin to read. Weighted profiles (bytes allocated, ns blocked) count their events, so a
//! share of their weight is as sure as the events behind it. Pure arithmetic; the words are the
//! report's.

/// Below this many samples a flame graph says it is too thin to read: a frame at 5 % of 500
/// samples is known to about ±2 percentage points, at 5 % of 63 samples only to within 1–13 %.
pub const MIN_SAMPLES: u64 = 500;

/// The normal quantile of a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A share (0–1) with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Share {
    /// `12.3% (10.1–14.8%)`.
    pub fn percent(self) -> String {
        format!("{:.1}% ({:.1}–{:.1}%)", self.value * 100.0, self.low * 100.0, self.high * 100.0)
    }
}

/// The share `part / total` of a profile's weight, sure as `samples` events are (for a profile
/// of counts, `samples` is `total`): Wilson's 95 % interval.
pub fn share(part: f64, total: f64, samples: u64) -> Share {
    if total <= 0.0 || samples == 0 {
        return Share { value: 0.0, low: 0.0, high: 1.0 };
    }
    let p = (part / total).clamp(0.0, 1.0);
    let n = samples as f64;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Share { value: p, low: (centre - half).max(0.0), high: (centre + half).min(1.0) }
}

/// A frame's change per operation between two profiles, as a share of the first one's whole
/// weight per operation, with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Change {
    /// Whether the interval excludes no change: only then is a frame grown or shrunk.
    pub fn is_found(self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }

    /// `+4.1% (+1.2 to +7.0%)`.
    pub fn percent(self) -> String {
        format!("{:+.1}% ({:+.1} to {:+.1}%)", self.value * 100.0, self.low * 100.0, self.high * 100.0)
    }
}

/// The change of a frame from share `p_before` of a profile of `n_before` samples and
/// `before_per_op` weight per operation to share `p_after` of one of `n_after` samples and
/// `after_per_op`: `(p_after·after_per_op − p_before·before_per_op) / before_per_op`, the totals
/// per operation taken as known, the shares' binomial variances added.
pub fn change(p_before: f64, n_before: u64, before_per_op: f64, p_after: f64, n_after: u64, after_per_op: f64) -> Change {
    if before_per_op <= 0.0 || n_before == 0 || n_after == 0 {
        return Change { value: 0.0, low: f64::NEG_INFINITY, high: f64::INFINITY };
    }
    let ratio = after_per_op / before_per_op;
    let value = p_after * ratio - p_before;
    let var = ratio * ratio * p_after * (1.0 - p_after) / n_after as f64 + p_before * (1.0 - p_before) / n_before as f64;
    // a share of 0 or 1 has no binomial variance: the rule of three's worth of doubt instead
    let floor = (3.0 / n_before as f64).powi(2) / 4.0 + (ratio * 3.0 / n_after as f64).powi(2) / 4.0;
    let half = Z95 * var.max(floor).sqrt();
    Change { value, low: value - half, high: value + half }
}

/// Whether a profile of `samples` is too thin to read.
pub fn is_thin(samples: u64) -> bool {
    samples < MIN_SAMPLES
}

/// What a graph of `samples` says about itself: its count, and a warning when it is thin.
pub fn caption(samples: u64, unit_is_samples: bool) -> String {
    let what = if unit_is_samples { "samples" } else { "sampled events" };
    if samples == 0 && !unit_is_samples {
        "sampled events unknown (folded stacks of bytes or ns do not count them): shares without intervals".to_string()
    } else if is_thin(samples) {
        format!("{samples} {what}: too thin to read (fewer than {MIN_SAMPLES}); shares of a few percent are not known to within several points")
    } else {
        format!("{samples} {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_few_samples_is_wide_and_of_many_narrow() {
        // the figure: a frame at 5 % of 63 samples lies within about 1–13 %
        let thin = share(3.15, 63.0, 63);
        assert!((0.01..0.025).contains(&thin.low) && (0.12..0.14).contains(&thin.high), "{thin:?}");
        let thick = share(300.0, 6000.0, 6000);
        assert!(thick.high - thick.low < 0.012 && thick.low < 0.05 && thick.high > 0.05, "{thick:?}");
        assert_eq!(thick.percent(), "5.0% (4.5–5.6%)");
        assert_eq!(share(1.0, 0.0, 0), Share { value: 0.0, low: 0.0, high: 1.0 });
        assert!(is_thin(63) && !is_thin(2000));
        assert!(caption(63, true).contains("too thin to read") && caption(2000, true) == "2000 samples");
    }

    #[test]
    fn a_change_is_found_only_when_its_interval_excludes_none() {
        // the same work per operation, the share up by a point: not found at 1,000 samples a side
        let small = change(0.10, 1000, 1.0, 0.11, 1000, 1.0);
        assert!(!small.is_found(), "{small:?}");
        // ... found at 100,000
        assert!(change(0.10, 100_000, 1.0, 0.11, 100_000, 1.0).is_found());
        // twice the work per operation in a frame that held a third of it
        let grown = change(1.0 / 3.0, 5000, 0.3, 0.5, 5000, 0.4);
        assert!(grown.is_found() && (grown.value - (0.5 * 0.4 / 0.3 - 1.0 / 3.0)).abs() < 1e-9, "{grown:?}");
        // a frame absent from one side is still uncertain when the sides are thin
        assert!(!change(0.0, 50, 1.0, 0.02, 50, 1.0).is_found());
        assert_eq!(Change { value: 0.041, low: 0.012, high: 0.07 }.percent(), "+4.1% (+1.2 to +7.0%)");
    }
}
