//! Reading the long-tailed distributions' fields into a [`Dist`]: `exponential` (`mean`) and
//! `weibull` (`shape`, `scale`, and `quanta` to draw uniformly within quantile buckets), drawn
//! by `extreme.rs`, and mirroring any distribution with `invert: true`. Checking the other
//! fields and the common range is `dist_params.rs`'s job.

use super::dist::Dist;
use super::dist_params::{Ctx, Domain, Params};
use super::extreme::{Extreme, Law};
use super::GenError;
use rand_distr::{Exp, Weibull};

impl Dist {
    pub(super) fn exponential(p: &Params, min: i64, span: u64, cx: &Ctx) -> Result<Dist, GenError> {
        let mean = positive(cx, "mean", p.mean, "exponential")?;
        let exp = Exp::new(1.0 / mean).map_err(|e| cx.err("mean", e.to_string()))?;
        Ok(Dist::Extreme(Extreme::new(min, span, Law::Exp(exp))))
    }

    pub(super) fn weibull(p: &Params, min: i64, span: u64, cx: &Ctx) -> Result<Dist, GenError> {
        let shape = positive(cx, "shape", p.shape, "weibull")?;
        let scale = positive(cx, "scale", p.scale, "weibull")?;
        let law = Weibull::new(scale, shape).map_err(|e| cx.err("shape", e.to_string()))?;
        let mut e = Extreme::new(min, span, Law::Weibull(law));
        if let Some(q) = cx.int("quanta", p.quanta)? {
            if !(1..=100_000).contains(&q) {
                return Err(cx.err("quanta", format!("must be between 1 and 100000, got {q}")));
            }
            // bucket i ends at the law's quantile (i + 1) / quanta (the inverse CDF of Weibull)
            let mut bounds = vec![0u64];
            for i in 1..q {
                let p = i as f64 / q as f64;
                bounds.push(e.offset(scale * (-(1.0 - p).ln()).powf(1.0 / shape)));
            }
            bounds.push(span);
            e = e.with_buckets(bounds);
        }
        Ok(Dist::Extreme(e))
    }

    /// `inner` mirrored: a draw `n` becomes `lo + hi − n`, where [lo, hi] is [min, max − 1].
    pub(super) fn inverted(inner: Dist, p: &Params, dom: &Domain, cx: &Ctx) -> Result<Dist, GenError> {
        let lo = match cx.int("min", p.min) {
            Ok(Some(m)) => m,
            Ok(None) => 0.max(dom.lowest),
            // a gaussian's bounds may have fractions; mirror within them rounded
            Err(_) => cx.float("min", p.min)?.unwrap_or(0.0).round() as i64,
        };
        let hi = match (cx.int("max", p.max), dom.default_max) {
            (Ok(Some(m)), _) => m - 1,
            (Ok(None), Some(m)) if !matches!(inner, Dist::Gaussian { .. }) => m - 1,
            (Err(_), _) => cx.float("max", p.max)?.unwrap_or(0.0).round() as i64 - 1,
            _ => return Err(cx.err("invert", "needs `min` and `max` to mirror within")),
        };
        Ok(Dist::Inverted { inner: Box::new(inner), lo, hi })
    }
}

fn positive(cx: &Ctx, field: &str, v: Option<&crate::gen::Scalar>, dist: &str) -> Result<f64, GenError> {
    match cx.float(field, v)? {
        Some(x) if x > 0.0 => Ok(x),
        Some(x) => Err(cx.err(field, format!("must be > 0, got {x}"))),
        None => Err(cx.err(field, format!("dist {dist} needs `{field}` (> 0)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::dist::Drawn;
    use crate::gen::spec::SizeDistSpec;
    use crate::gen::types::CqlType;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn build(yaml: &str) -> Result<Dist, GenError> {
        let spec: SizeDistSpec = crate::yaml::from_str(yaml).unwrap();
        Dist::build(&Params::of_size(&spec), &Domain::of_type(&CqlType::BigInt), &Ctx { generator: "g", field_prefix: "" })
    }

    fn ints(d: &Dist, draws: usize, seed: u64) -> Vec<i64> {
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..draws)
            .map(|_| match d.draw(&mut rng) {
                Drawn::Int(n) => n,
                Drawn::Float(f) => panic!("expected an integer, got {f}"),
            })
            .collect()
    }

    fn mean(v: &[i64]) -> f64 {
        v.iter().map(|x| *x as f64).sum::<f64>() / v.len() as f64
    }

    #[test]
    fn exponential_has_its_mean_and_piles_its_tail_on_the_last_value() {
        let d = build("{ dist: exponential, min: 100, max: 100000, mean: 50 }").unwrap();
        let v = ints(&d, 200_000, 1);
        assert!(v.iter().all(|x| (100..100_000).contains(x)));
        // truncation lowers the mean of an exponential by about a half
        let m = mean(&v) - 100.0;
        assert!((m - 49.5).abs() < 1.0, "mean offset {m}");
        let clamped = build("{ dist: exponential, min: 0, max: 10, mean: 50 }").unwrap();
        let v = ints(&clamped, 10_000, 2);
        let at_top = v.iter().filter(|x| **x == 9).count() as f64 / v.len() as f64;
        // P(X >= 9) = exp(-9/50), about 0.835
        assert!((at_top - (-9.0f64 / 50.0).exp()).abs() < 0.02, "share on the last value {at_top}");
    }

    #[test]
    fn weibull_matches_its_median_and_quanta_spread_within_buckets() {
        let d = build("{ dist: weibull, min: 0, max: 1000000, shape: 2, scale: 1000 }").unwrap();
        let mut v = ints(&d, 100_001, 3);
        v.sort_unstable();
        // median of Weibull(k, λ) = λ (ln 2)^(1/k)
        let median = 1000.0 * 2f64.ln().powf(0.5);
        assert!((v[50_000] as f64 - median).abs() < 15.0, "median {} against {median}", v[50_000]);
        let q = build("{ dist: weibull, min: 0, max: 1000, shape: 0.5, scale: 100, quanta: 4 }").unwrap();
        let Dist::Extreme(e) = &q else { panic!("{q:?}") };
        let b = e.buckets().unwrap().to_vec();
        assert_eq!((b.len(), b[0], b[4]), (5, 0, 1000));
        let v = ints(&q, 40_000, 4);
        // each bucket takes a quarter of the draws
        for w in b.windows(2) {
            let share = v.iter().filter(|x| (w[0] as i64..w[1] as i64).contains(*x)).count() as f64 / v.len() as f64;
            assert!((share - 0.25).abs() < 0.02, "bucket {w:?} took {share}");
        }
        // within the last bucket, uniform: its upper half is hit about as often as its lower
        let (lo, hi) = (b[3] as i64, 1000i64);
        let mid = (lo + hi) / 2;
        let upper = v.iter().filter(|x| **x >= mid).count() as f64;
        let lower = v.iter().filter(|x| (lo..mid).contains(*x)).count() as f64;
        assert!((upper / lower - 1.0).abs() < 0.15, "upper {upper}, lower {lower}");
    }

    #[test]
    fn inverted_mirrors_within_the_range() {
        let d = build("{ dist: exponential, min: 10, max: 1010, mean: 20, invert: true }").unwrap();
        let v = ints(&d, 50_000, 5);
        assert!(v.iter().all(|x| (10..1010).contains(x)));
        let m = 1009.0 - (mean(&v) - 10.0);
        assert!((m - 10.0 - 19.5).abs() < 1.0, "mirrored mean {m}");
        let s = build("{ dist: uniform, min: 0, max: 4, invert: \"true\" }").unwrap();
        assert!(ints(&s, 100, 6).iter().all(|x| (0..4).contains(x)));
    }

    #[test]
    fn every_draw_falls_in_the_domain_verification_spreads_values_over() {
        for yaml in [
            "{ dist: exponential, min: 10, max: 1010, mean: 20 }",
            "{ dist: weibull, min: -50, max: 50, shape: 2, scale: 30 }",
            "{ dist: exponential, min: 10, max: 1010, mean: 20, invert: true }",
            "{ dist: uniform, min: 5, max: 9, invert: true }",
        ] {
            let d = build(yaml).unwrap();
            let (lowest, count) = d.domain();
            let count = count.unwrap() as i64;
            let v = ints(&d, 20_000, 7);
            assert!(v.iter().all(|x| (lowest..lowest + count).contains(x)), "{yaml}: domain ({lowest}, {count})");
            // the domain is no wider than what is drawn: its ends are reached
            assert!(v.contains(&(lowest + count - 1)) || v.contains(&lowest), "{yaml}: domain ({lowest}, {count})");
        }
    }

    #[test]
    fn missing_or_misplaced_fields_name_the_field() {
        assert_eq!(build("{ dist: exponential, max: 10 }").unwrap_err().field.as_deref(), Some("mean"));
        assert_eq!(build("{ dist: weibull, max: 10, shape: 1 }").unwrap_err().field.as_deref(), Some("scale"));
        assert_eq!(build("{ dist: weibull, max: 10, shape: -1, scale: 1 }").unwrap_err().field.as_deref(), Some("shape"));
        assert_eq!(build("{ dist: uniform, max: 10, shape: 1 }").unwrap_err().field.as_deref(), Some("shape"));
        assert_eq!(build("{ dist: weibull, max: 10, shape: 1, scale: 1, quanta: 0 }").unwrap_err().field.as_deref(), Some("quanta"));
        assert_eq!(build("{ dist: gaussian, stddev: 1, invert: true }").unwrap_err().field.as_deref(), Some("invert"));
    }
}
