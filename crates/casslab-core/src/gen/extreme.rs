//! Drawing from the long-tailed laws, exponential and Weibull (with quantile buckets drawn
//! uniformly within): a draw is `min` plus the sample truncated to an integer and clamped to
//! the range `[min, max)`, so the values past the range pile up on its last value (as
//! cassandra-stress's EXP, EXTREME and QEXTREME do: `casslab import cassandra-stress` maps them
//! here). Reading their fields from a generator is `tail_params.rs`'s job.

use rand::rngs::SmallRng;
use rand::Rng;
use rand_distr::{Distribution, Exp, Weibull};
use std::sync::Arc;

/// A sample of an exponential or Weibull law, placed at `min` and clamped to `span` values.
#[derive(Debug, Clone)]
pub(crate) struct Extreme {
    min: i64,
    span: u64,
    law: Law,
    /// `quanta`: the bucket bounds as offsets from `min` (`quanta + 1` of them, the last `span`).
    buckets: Option<Arc<[u64]>>,
}

#[derive(Debug, Clone)]
pub(crate) enum Law {
    Exp(Exp<f64>),
    Weibull(Weibull<f64>),
}

impl Extreme {
    /// `law`'s samples placed at `min`, clamped to `span` values.
    pub(crate) fn new(min: i64, span: u64, law: Law) -> Extreme {
        Extreme { min, span, law, buckets: None }
    }

    /// Draws uniformly within the buckets `bounds` (offsets from `min`, the last `span`).
    pub(crate) fn with_buckets(self, bounds: Vec<u64>) -> Extreme {
        Extreme { buckets: Some(bounds.into()), ..self }
    }

    /// The bucket bounds, when it has buckets.
    #[cfg(test)]
    pub(crate) fn buckets(&self) -> Option<&[u64]> {
        self.buckets.as_deref()
    }

    /// The offset of a raw sample: truncated, clamped to [0, span − 1].
    pub(crate) fn offset(&self, x: f64) -> u64 {
        if x <= 0.0 || x.is_nan() {
            0
        } else {
            (x as u64).min(self.span - 1)
        }
    }

    /// The values it draws: from `min`, `span` of them.
    pub(crate) fn domain(&self) -> (i64, Option<u64>) {
        (self.min, Some(self.span))
    }

    #[inline]
    pub(crate) fn draw(&self, rng: &mut SmallRng) -> i64 {
        let x = match &self.law {
            Law::Exp(e) => e.sample(rng),
            Law::Weibull(w) => w.sample(rng),
        };
        let mut off = self.offset(x);
        if let Some(b) = &self.buckets {
            // the bucket the sample fell in, then a uniform draw within it
            let q = b.partition_point(|bound| *bound <= off).saturating_sub(1).min(b.len() - 2);
            let width = b[q + 1] - b[q];
            off = b[q] + if width > 0 { rng.gen_range(0..width) } else { 0 };
        }
        self.min.wrapping_add(off as i64)
    }
}
