//! The distributions of `n` and drawing from them. `sequence` and `latest` share an atomic
//! counter (cloning a [`Dist`] shares it too); the others are stateless and draw from the
//! caller's `SmallRng`. Checking a spec's distribution fields is `dist_params.rs`; rendering `n` into
//! a value is `value_of.rs`.

use super::zipf::{scramble, ZetaTable, Zipf};
use rand::rngs::SmallRng;
use rand::Rng;
use rand_distr::{Distribution, Normal};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One draw: an integer, or a float from `gaussian` for `double`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Drawn {
    Int(i64),
    Float(f64),
}

/// A counter shared by every clone: the next value is `min + (count / repeat) % span`.
#[derive(Debug, Clone)]
pub(crate) struct Sequence {
    pub(super) count: Arc<AtomicU64>,
    pub(super) min: i64,
    pub(super) span: Option<u64>,
    /// How many draws in a row give the same value (1: each value once).
    pub(super) repeat: u64,
}

#[derive(Debug, Clone)]
pub(crate) enum Dist {
    Sequence(Sequence),
    Uniform {
        min: i64,
        span: u64,
    },
    Zipfian {
        min: i64,
        items: u64,
        zipf: Zipf,
        scrambled: bool,
    },
    /// `base`: the lowest value drawn; the sequence's `min`, or lower for a non-wrapping one.
    Latest {
        seq: Sequence,
        base: i64,
        theta: f64,
        zetas: ZetaTable,
    },
    Hotspot {
        min: i64,
        hot_span: u64,
        cold_span: u64,
        hot_ops: f64,
    },
    Gaussian {
        normal: Normal<f64>,
        lo: f64,
        hi: f64,
        integer: bool,
    },
    /// `exponential` and `weibull` (`extreme.rs`): `min` + the draw truncated, clamped to the span.
    Extreme(super::extreme::Extreme),
    /// Another distribution mirrored within [lo, hi] (`invert: true`).
    Inverted {
        inner: Box<Dist>,
        lo: i64,
        hi: i64,
    },
}

impl Dist {
    /// `latest` over [`base`, last value of `seq`]. `base` ≤ `seq.min`, and equal to it if `seq`
    /// wraps (checked by the caller).
    pub(crate) fn latest(seq: &Sequence, base: i64, theta: f64) -> Dist {
        Dist::Latest { seq: seq.clone(), base, theta, zetas: ZetaTable::new(theta) }
    }

    /// The values it draws: the lowest and how many there are from it (`None`: unbounded, or
    /// more than 2^64).
    pub(crate) fn domain(&self) -> (i64, Option<u64>) {
        match self {
            Dist::Sequence(s) => (s.min, s.span),
            Dist::Uniform { min, span } => (*min, Some(*span)),
            Dist::Zipfian { min, items, .. } => (*min, Some(*items)),
            Dist::Latest { seq, base, .. } => (*base, seq.span.and_then(|s| s.checked_add(seq.min.abs_diff(*base)))),
            Dist::Hotspot { min, hot_span, cold_span, .. } => (*min, hot_span.checked_add(*cold_span)),
            // an unbounded gaussian spans more than 2^64 values: `as` saturates, the + 1 says so
            Dist::Gaussian { lo, hi, .. } => (*lo as i64, ((*hi - *lo).max(0.0) as u64).checked_add(1)),
            Dist::Extreme(e) => e.domain(),
            // n becomes lo + hi - n: the same number of values, the highest inner one lowest
            Dist::Inverted { inner, lo, hi } => match inner.domain() {
                (min, Some(count)) => (lo.wrapping_add(*hi).wrapping_sub(min).wrapping_sub(count.saturating_sub(1) as i64), Some(count)),
                (_, None) => (*lo, None),
            },
        }
    }

    pub(crate) fn as_sequence(&self) -> Option<&Sequence> {
        match self {
            Dist::Sequence(seq) => Some(seq),
            Dist::Inverted { inner, .. } => inner.as_sequence(),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn draw(&self, rng: &mut SmallRng) -> Drawn {
        match self {
            Dist::Sequence(s) => {
                let c = s.count.fetch_add(1, Ordering::Relaxed) / s.repeat;
                Drawn::Int(s.min.wrapping_add(s.span.map_or(c, |span| c % span) as i64))
            }
            Dist::Uniform { min, span } => Drawn::Int(min.wrapping_add(rng.gen_range(0..*span) as i64)),
            Dist::Zipfian { min, items, zipf, scrambled } => {
                let rank = zipf.rank(rng.gen::<f64>());
                let rank = if *scrambled { scramble(rank, *items) } else { rank };
                Drawn::Int(min.wrapping_add(rank as i64))
            }
            Dist::Latest { seq, base, theta, zetas } => {
                // YCSB's SkewedLatest: last - zipfian(how many exist), last being the value the
                // sequence issued last. A wrapping sequence keeps only its last `span` values.
                let c = seq.count.load(Ordering::Relaxed).div_ceil(seq.repeat);
                let u = rng.gen::<f64>();
                let rank_among = |items: u64| Zipf::with_zeta(items, *theta, zetas.zeta(items)).rank(u);
                match seq.span {
                    Some(span) => {
                        if c == 0 {
                            return Drawn::Int(seq.min);
                        }
                        let back = c - 1 - rank_among(c.min(span));
                        Drawn::Int(seq.min.wrapping_add((back % span) as i64))
                    }
                    None => {
                        let last = seq.min as i128 + c as i128 - 1;
                        if last < *base as i128 {
                            return Drawn::Int(*base);
                        }
                        let items = (last - *base as i128 + 1).min(u64::MAX as i128) as u64;
                        Drawn::Int((last - rank_among(items) as i128) as i64)
                    }
                }
            }
            Dist::Hotspot { min, hot_span, cold_span, hot_ops } => {
                let offset = if *cold_span == 0 || rng.gen::<f64>() < *hot_ops { rng.gen_range(0..*hot_span) } else { hot_span + rng.gen_range(0..*cold_span) };
                Drawn::Int(min.wrapping_add(offset as i64))
            }
            Dist::Gaussian { normal, lo, hi, integer } => {
                let x = normal.sample(rng).clamp(*lo, *hi);
                if *integer {
                    Drawn::Int(x.round() as i64)
                } else {
                    Drawn::Float(x)
                }
            }
            Dist::Extreme(e) => Drawn::Int(e.draw(rng)),
            Dist::Inverted { inner, lo, hi } => match inner.draw(rng) {
                Drawn::Int(n) => Drawn::Int(lo.wrapping_add(*hi).wrapping_sub(n)),
                Drawn::Float(x) => Drawn::Float(*lo as f64 + *hi as f64 - x),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::dist_params::{Ctx, Domain, Params};
    use crate::gen::spec::SizeDistSpec;
    use crate::gen::types::CqlType;
    use crate::gen::zipf::tests::ycsb_pmf;
    use rand::SeedableRng;

    fn build(yaml: &str, dom: &Domain) -> Dist {
        let spec: SizeDistSpec = crate::yaml::from_str(yaml).unwrap();
        Dist::build(&Params::of_size(&spec), dom, &Ctx { generator: "g", field_prefix: "" }).unwrap()
    }

    fn ints(d: &Dist, rng: &mut SmallRng, draws: usize) -> Vec<i64> {
        (0..draws)
            .map(|_| match d.draw(rng) {
                Drawn::Int(n) => n,
                Drawn::Float(f) => panic!("expected an integer draw, got {f}"),
            })
            .collect()
    }

    fn histogram(values: &[i64], min: i64, buckets: usize) -> Vec<u64> {
        let mut h = vec![0u64; buckets];
        for v in values {
            h[(v - min) as usize] += 1;
        }
        h
    }

    #[test]
    fn an_unbounded_gaussian_has_no_count_of_values() {
        // f: { type: float, dist: gaussian, mean: 20, stddev: 5 } spans every float
        let d = build("{ dist: gaussian, mean: 20, stddev: 5 }", &Domain::of_type(&CqlType::Float));
        assert_eq!(d.domain().1, None);
        let narrow = build("{ dist: gaussian, mean: 5, stddev: 2, min: 0, max: 10 }", &Domain::of_type(&CqlType::Int));
        // max is exclusive: 0 to 9
        assert_eq!(narrow.domain(), (0, Some(10)));
    }

    #[test]
    fn uniform_is_flat() {
        let d = build("{ dist: uniform, min: -50, max: 50 }", &Domain::of_type(&CqlType::BigInt));
        let draws = 200_000;
        let h = histogram(&ints(&d, &mut SmallRng::seed_from_u64(1), draws), -50, 100);
        let expected = draws as f64 / 100.0;
        let chi2: f64 = h.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        // 99 degrees of freedom: P(chi2 > 150) is about 0.0007.
        assert!(chi2 < 150.0, "chi-square {chi2}");
        let worst = h.iter().map(|&c| (c as f64 - expected).abs() / expected).fold(0.0, f64::max);
        assert!(worst < 0.10, "a bucket deviates by {worst:.3} from {expected}");
    }

    #[test]
    fn hotspot_sends_hot_ops_to_the_hot_range() {
        let d = build("{ dist: hotspot, min: 1000, max: 2000, hot_fraction: 0.2, hot_ops: 0.8 }", &Domain::of_type(&CqlType::BigInt));
        let draws = 200_000;
        let values = ints(&d, &mut SmallRng::seed_from_u64(2), draws);
        assert!(values.iter().all(|v| (1000..2000).contains(v)));
        let hot = values.iter().filter(|v| **v < 1200).count() as f64 / draws as f64;
        assert!((hot - 0.8).abs() < 0.01, "hot share {hot}");
        // Both ranges are covered.
        let h = histogram(&values, 1000, 1000);
        assert!(h.iter().all(|&c| c > 0), "some value was never drawn");
    }

    #[test]
    fn gaussian_matches_mean_and_stddev() {
        let d = build("{ dist: gaussian, mean: 20.0, stddev: \"5\" }", &Domain::of_type(&CqlType::Double));
        let mut rng = SmallRng::seed_from_u64(3);
        let draws = 200_000;
        let xs: Vec<f64> = (0..draws)
            .map(|_| match d.draw(&mut rng) {
                Drawn::Float(f) => f,
                Drawn::Int(n) => panic!("double gaussian drew an integer {n}"),
            })
            .collect();
        let mean = xs.iter().sum::<f64>() / draws as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (draws - 1) as f64).sqrt();
        assert!((mean - 20.0).abs() < 0.02 * 20.0, "mean {mean}");
        assert!((sd - 5.0).abs() < 0.02 * 5.0, "stddev {sd}");
    }

    #[test]
    fn integer_gaussian_rounds_and_clamps() {
        let d = build("{ dist: gaussian, min: 0, max: 60, stddev: 30 }", &Domain::of_type(&CqlType::Int));
        let values = ints(&d, &mut SmallRng::seed_from_u64(4), 20_000);
        assert!(values.iter().all(|v| (0..60).contains(v)));
        // Mean defaults to the middle, and the clamped tails pile up on the bounds.
        assert!(values.iter().filter(|v| **v == 0).count() > 1000);
        assert!(values.iter().filter(|v| **v == 59).count() > 1000);
        let unclamped = build("{ dist: gaussian, mean: 0, stddev: 1e12 }", &Domain::of_type(&CqlType::Int));
        let values = ints(&unclamped, &mut SmallRng::seed_from_u64(4), 1000);
        assert!(values.iter().all(|v| i32::try_from(*v).is_ok()));
    }

    #[test]
    fn sequence_is_shared_by_clones_and_wraps() {
        let d = build("{ dist: sequence, min: 10, max: 13 }", &Domain::of_type(&CqlType::BigInt));
        let other = d.clone();
        let mut rng = SmallRng::seed_from_u64(5);
        let seen: Vec<i64> = (0..7).map(|i| if i % 2 == 0 { &d } else { &other }).flat_map(|g| ints(g, &mut rng, 1)).collect();
        assert_eq!(seen, [10, 11, 12, 10, 11, 12, 10]);
        let unbounded = build("{ dist: sequence, min: 5 }", &Domain::of_type(&CqlType::BigInt));
        assert_eq!(ints(&unbounded, &mut rng, 3), [5, 6, 7]);
        match build("{ dist: sequence, min: 5 }", &Domain::of_type(&CqlType::Int)) {
            Dist::Sequence(s) => assert_eq!(s.span, Some((1 << 31) - 5), "int sequences wrap within i32"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_repeating_sequence_issues_each_value_repeat_times() {
        let spec: crate::gen::GeneratorSpec = crate::yaml::from_str("{ type: bigint, dist: sequence, min: 5, max: 8, repeat: 2 }").unwrap();
        let d = Dist::build(&Params::of_generator(&spec), &Domain::of_type(&CqlType::BigInt), &Ctx { generator: "g", field_prefix: "" }).unwrap();
        assert_eq!(ints(&d, &mut SmallRng::seed_from_u64(1), 8), [5, 5, 6, 6, 7, 7, 5, 5]);
        let latest = Dist::latest(d.as_sequence().unwrap(), 5, 0.99);
        // 8 draws issued 4 values, the last of them 5 (wrapped): latest reads within [5, 8)
        assert!(ints(&latest, &mut SmallRng::seed_from_u64(2), 100).iter().all(|v| (5..8).contains(v)));
    }

    #[test]
    fn latest_draws_recent_values_of_its_sequence() {
        let seq = build("{ dist: sequence, min: 1000 }", &Domain::of_type(&CqlType::BigInt));
        let latest = Dist::latest(seq.as_sequence().unwrap(), 1000, 0.99);
        let mut rng = SmallRng::seed_from_u64(6);
        assert_eq!(ints(&latest, &mut rng, 1), [1000], "nothing inserted yet: the sequence's start");
        ints(&seq, &mut rng, 5000); // inserts 1000..=5999
        let values = ints(&latest, &mut rng, 50_000);
        assert!(values.iter().all(|v| (1000..=5999).contains(v)));
        let h = histogram(&values, 1000, 5000);
        let hottest = h.iter().enumerate().max_by_key(|(_, c)| **c).unwrap().0 as i64 + 1000;
        assert_eq!(hottest, 5999, "the last inserted value is the most read");
        // zeta(100)/zeta(5000) at theta 0.99 is about 0.58: most reads hit the newest 100.
        let recent = values.iter().filter(|v| **v >= 5900).count() as f64 / values.len() as f64;
        assert!(recent > 0.5, "only {recent} of reads were among the newest 100");
        // Latest follows the sequence as it advances.
        ints(&seq, &mut rng, 1000);
        assert!(ints(&latest, &mut rng, 1000).iter().any(|v| *v > 5999));

        // A wrapped sequence: 250 draws over [0, 100) leave 49 as the newest value.
        let seq = build("{ dist: sequence, max: 100 }", &Domain::of_type(&CqlType::BigInt));
        let latest = Dist::latest(seq.as_sequence().unwrap(), 0, 0.99);
        ints(&seq, &mut rng, 250);
        let values = ints(&latest, &mut rng, 20_000);
        assert!(values.iter().all(|v| (0..100).contains(v)));
        let h = histogram(&values, 0, 100);
        assert_eq!(h.iter().enumerate().max_by_key(|(_, c)| **c).unwrap().0, 49);
        assert!(h[48] > h[50], "49 is newest, 50 oldest");
        assert!(latest.as_sequence().is_none());
    }

    #[test]
    fn latest_below_its_sequence_reaches_preloaded_values() {
        // YCSB workload D: keys 0..1000 loaded, inserts continue from 1000, reads skew to the
        // newest of all keys.
        let seq = build("{ dist: sequence, min: 1000 }", &Domain::of_type(&CqlType::BigInt));
        let latest = Dist::latest(seq.as_sequence().unwrap(), 0, 0.99);
        let mut rng = SmallRng::seed_from_u64(10);
        let before = ints(&latest, &mut rng, 20_000);
        assert!(before.iter().all(|v| (0..1000).contains(v)));
        assert_eq!(histogram(&before, 0, 1000).iter().enumerate().max_by_key(|(_, c)| **c).unwrap().0, 999);
        ints(&seq, &mut rng, 10); // inserts 1000..=1009
        let after = ints(&latest, &mut rng, 20_000);
        assert!(after.iter().all(|v| (0..1010).contains(v)));
        assert_eq!(histogram(&after, 0, 1010).iter().enumerate().max_by_key(|(_, c)| **c).unwrap().0, 1009);
        assert!(after.iter().any(|v| *v < 1000), "older keys are still read");
    }

    #[test]
    fn zipfian_hot_spot_is_min_unless_scrambled() {
        let dom = Domain::of_type(&CqlType::BigInt);
        let plain = build("{ dist: zipfian, min: 500, max: 1500, scrambled: false }", &dom);
        let values = ints(&plain, &mut SmallRng::seed_from_u64(8), 50_000);
        let h = histogram(&values, 500, 1000);
        assert!(h[0] > h[1] && h[1] > h[2] && h[2] > h[10], "plain zipfian must decrease from min");
    }

    #[test]
    fn scrambled_zipfian_has_the_zipfian_profile_spread_out() {
        let (items, theta, draws) = (1000u64, 0.99, 1_000_000usize);
        let d = build("{ dist: zipfian, min: 0, max: 1000 }", &Domain::of_type(&CqlType::BigInt));
        let values = ints(&d, &mut SmallRng::seed_from_u64(9), draws);
        let h = histogram(&values, 0, items as usize);
        // Expected share per item: the YCSB rank probabilities, moved by the FNV scramble
        // (which is not a permutation: a few items take two ranks, some none).
        let mut expected = vec![0.0; items as usize];
        for (rank, p) in ycsb_pmf(items, theta).into_iter().enumerate() {
            expected[scramble(rank as u64, items) as usize] += p;
        }
        let mut by_expected: Vec<usize> = (0..items as usize).collect();
        by_expected.sort_by(|a, b| expected[*b].total_cmp(&expected[*a]));
        for &item in &by_expected[..10] {
            let observed = h[item] as f64 / draws as f64;
            let rel = (observed - expected[item]).abs() / expected[item];
            assert!(rel < 0.05, "item {item}: observed {observed}, expected {} (rel {rel:.3})", expected[item]);
        }
        // Sorted observed frequencies follow the sorted expected ones.
        let mut observed_sorted: Vec<u64> = h.clone();
        observed_sorted.sort_unstable_by(|a, b| b.cmp(a));
        for k in 0..10 {
            let e = expected[by_expected[k]];
            let o = observed_sorted[k] as f64 / draws as f64;
            assert!((o - e).abs() / e < 0.05, "sorted rank {k}: observed {o}, expected {e}");
        }
        // Hot items are spread: the hottest is rank 0's hash, not item 0.
        assert_eq!(by_expected[0], scramble(0, items) as usize);
        assert_ne!(scramble(0, items), 0);
        assert!(by_expected[..10].iter().filter(|i| **i < 10).count() < 3);
    }
}
