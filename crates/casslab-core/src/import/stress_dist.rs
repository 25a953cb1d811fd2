//! cassandra-stress's distribution specs (`FIXED(v)`, `UNIFORM(a..b)`, `GAUSSIAN(a..b[,stdvrng])`
//! or `GAUSSIAN(a..b,mean,stdev)`, `EXP(a..b)`, `EXTREME(a..b,shape)`,
//! `QEXTREME(a..b,shape,quantas)`, `SEQ(a..b)`, their aliases (not `weibull`, which
//! cassandra-stress names but rejects) and the `~` inverted forms, and
//! ratios `DIST/divisor`) read into [`StressDist`], and their translation into casslab generator
//! fields ([`DistFields`]) with a note where the two differ. cassandra-stress draws integers in
//! `[a, b]` (both included) and truncates a continuous sample; casslab's ranges are `[min, max)`
//! and `exponential`/`weibull` truncate the same way, so most map exactly.

use crate::analysis::normal_quantile;
use std::fmt::Write;

/// The kind of a cassandra-stress distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum StressKind {
    Fixed,
    Uniform,
    /// mean, standard deviation
    Gaussian {
        mean: f64,
        stdev: f64,
    },
    /// mean of the exponential, as cassandra-stress derives it from the range
    Exp {
        mean: f64,
    },
    /// Weibull shape and scale (derived from the range), and the quanta of QEXTREME
    Extreme {
        shape: f64,
        scale: f64,
        quanta: Option<u32>,
    },
    Seq,
}

/// One distribution as written in a profile or on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct StressDist {
    pub kind: StressKind,
    /// Lowest and highest value, both included (`FIXED(v)`: both v).
    pub lo: i64,
    pub hi: i64,
    /// `~`: mirrored within [lo, hi].
    pub inverted: bool,
    /// The spec as written, for comments.
    pub written: String,
}

pub use crate::units::parse_count;

impl StressDist {
    /// The same distribution when its lowest value is at least `min`; otherwise what `what`
    /// (sizes, counts) must be, as cassandra-stress needs it.
    pub fn at_least(self, min: i64, what: &str) -> Result<StressDist, String> {
        if self.lo >= min {
            return Ok(self);
        }
        Err(format!("\"{}\" reaches {}: {what} are at least {min}", self.written, self.lo))
    }

    /// Reads `NAME(args)` with an optional leading `~`; the message says what is wrong.
    pub fn parse(spec: &str) -> Result<StressDist, String> {
        let written = spec.trim().to_string();
        let (inverted, body) = match written.strip_prefix('~') {
            Some(rest) => (true, rest.trim()),
            None => (false, written.as_str()),
        };
        let open = body.find('(').ok_or_else(|| format!("\"{written}\" is not a distribution: expected NAME(min..max)"))?;
        let name = body[..open].trim().to_ascii_lowercase();
        let args_text = body[open + 1..].strip_suffix(')').ok_or_else(|| format!("\"{written}\": missing `)`"))?;
        let args: Vec<&str> = args_text.split(',').map(str::trim).collect();
        let bounds = |a: &str| -> Result<(i64, i64), String> {
            let parsed = a.split_once("..").and_then(|(l, h)| Some((parse_count(l)?, parse_count(h.trim_start_matches('.'))?)));
            match parsed {
                Some((lo, hi)) if lo <= hi => Ok((lo, hi)),
                _ => Err(format!("\"{written}\": expected a range min..max with min <= max, got \"{a}\"")),
            }
        };
        let float = |a: &str| a.parse::<f64>().map_err(|_| format!("\"{written}\": \"{a}\" is not a number"));
        let want = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("\"{written}\": {name} takes {n} argument(s), got {}", args.len()))
            }
        };
        let (kind, lo, hi) = match name.as_str() {
            "fixed" => {
                want(1)?;
                let v = parse_count(args[0]).ok_or_else(|| format!("\"{written}\": \"{}\" is not a whole number", args[0]))?;
                (StressKind::Fixed, v, v)
            }
            "uniform" => {
                want(1)?;
                let (lo, hi) = bounds(args[0])?;
                (StressKind::Uniform, lo, hi)
            }
            "seq" => {
                want(1)?;
                let (lo, hi) = bounds(args[0])?;
                (StressKind::Seq, lo, hi)
            }
            "gaussian" | "gauss" | "normal" | "norm" => {
                let (lo, hi) = bounds(args[0])?;
                let (mean, stdev) = match args.len() {
                    1 | 2 => {
                        let to_edge = if args.len() == 2 { float(args[1])? } else { 3.0 };
                        ((lo + hi) as f64 / 2.0, ((hi - lo) as f64 / 2.0) / to_edge)
                    }
                    3 => (float(args[1])?, float(args[2])?),
                    n => return Err(format!("\"{written}\": gaussian takes 1 to 3 arguments, got {n}")),
                };
                (StressKind::Gaussian { mean, stdev }, lo, hi)
            }
            "exp" => {
                want(1)?;
                let (lo, hi) = bounds(args[0])?;
                // cassandra-stress: mean = range / F⁻¹(1 − sqrt(1/range)) of Exp(1)
                let range = (hi - lo).max(2) as f64;
                (StressKind::Exp { mean: range / (0.5 * range.ln()) }, lo, hi)
            }
            "weibull" => {
                return Err(format!(
                    "\"{written}\": cassandra-stress lists `weibull` as an alias but rejects it (\"Illegal distribution type\"); write extreme({}) for the same distribution",
                    args.join(",")
                ))
            }
            "extreme" | "extr" | "qextreme" | "qextr" => {
                let quantized = name.starts_with('q');
                want(if quantized { 3 } else { 2 })?;
                let (lo, hi) = bounds(args[0])?;
                let shape = float(args[1])?;
                let range = (hi - lo).max(2) as f64;
                // scale = range / F⁻¹(1 − sqrt(1/range)) of Weibull(shape, 1)
                let scale = range / (0.5 * range.ln()).powf(1.0 / shape);
                let quanta = if quantized { Some(args[2].parse::<u32>().map_err(|_| format!("\"{written}\": quantas must be a whole number"))?) } else { None };
                (StressKind::Extreme { shape, scale, quanta }, lo, hi)
            }
            other => return Err(format!("\"{written}\": unknown distribution \"{other}\" (known: FIXED, UNIFORM, GAUSSIAN, EXP, EXTREME, QEXTREME, SEQ)")),
        };
        Ok(StressDist { kind, lo, hi, inverted, written })
    }

    /// Its value at cumulative probability `p` (0 < p < 1), truncated and clamped as drawn.
    fn quantile(&self, p: f64) -> f64 {
        let span = (self.hi - self.lo) as f64;
        let off = match &self.kind {
            StressKind::Fixed => 0.0,
            StressKind::Uniform | StressKind::Seq => (p * (span + 1.0)).floor().min(span),
            StressKind::Gaussian { mean, stdev } => (mean + stdev * normal_quantile(p)).trunc().clamp(self.lo as f64, self.hi as f64) - self.lo as f64,
            StressKind::Exp { mean } => (-(1.0 - p).ln() * mean).trunc().min(span),
            StressKind::Extreme { shape, scale, .. } => (scale * (-(1.0 - p).ln()).powf(1.0 / shape)).trunc().min(span),
        };
        let off = if self.inverted { span - off } else { off };
        self.lo as f64 + off
    }

    /// The mean of the values drawn (numerically, over the quantiles).
    pub fn mean(&self) -> f64 {
        if self.kind == StressKind::Fixed {
            return self.lo as f64;
        }
        let n = 2000;
        (0..n).map(|i| self.quantile((i as f64 + 0.5) / n as f64)).sum::<f64>() / n as f64
    }
}

/// A ratio `DIST/divisor` (`uniform(1..10)/10`, `fixed(1)/1`): its mean as a fraction.
pub fn parse_ratio(spec: &str) -> Result<(StressDist, f64), String> {
    let (d, div) = spec.rsplit_once('/').ok_or_else(|| format!("\"{spec}\" is not a ratio: expected DIST/divisor such as uniform(1..10)/10"))?;
    let div = parse_count(div).filter(|d| *d > 0).ok_or_else(|| format!("\"{spec}\": the divisor must be a whole number above 0"))?;
    let dist = StressDist::parse(d)?;
    Ok((dist.clone(), (dist.mean() / div as f64).clamp(0.0, 1.0)))
}

/// The fields of a casslab generator (or size) that draw like a cassandra-stress distribution:
/// YAML flow-mapping entries such as `dist: weibull, min: 1, max: 101, shape: 2, scale: 14.5`,
/// and a note when the draws differ.
#[derive(Debug, Clone, PartialEq)]
pub struct DistFields {
    pub fields: String,
    pub note: Option<String>,
}

/// Translates `d` into casslab's distribution fields. `stateful`: a sequence is allowed (not in
/// sizes).
pub fn to_fields(d: &StressDist, stateful: bool) -> DistFields {
    let (lo, max) = (d.lo, d.hi.saturating_add(1));
    let mut f = String::new();
    let mut note = None;
    match &d.kind {
        StressKind::Fixed => {
            let _ = write!(f, "dist: uniform, min: {lo}, max: {max}");
        }
        StressKind::Uniform => {
            let _ = write!(f, "dist: uniform, min: {lo}, max: {max}");
        }
        StressKind::Seq if stateful => {
            let _ = write!(f, "dist: sequence, min: {lo}, max: {max}");
        }
        StressKind::Seq => {
            let _ = write!(f, "dist: uniform, min: {lo}, max: {max}");
            note = Some(format!("{}: a size cannot count up; drawn uniformly over the same range", d.written));
        }
        StressKind::Gaussian { mean, stdev } => {
            // casslab rounds a gaussian draw where cassandra-stress truncates: half a unit lower
            let _ = write!(f, "dist: gaussian, min: {lo}, max: {max}, mean: {}, stddev: {}", num(mean - 0.5), num(*stdev));
        }
        StressKind::Exp { mean } => {
            let _ = write!(f, "dist: exponential, min: {lo}, max: {max}, mean: {}", num(*mean));
        }
        StressKind::Extreme { shape, scale, quanta } => {
            let _ = write!(f, "dist: weibull, min: {lo}, max: {max}, shape: {}, scale: {}", num(*shape), num(*scale));
            if let Some(q) = quanta {
                let _ = write!(f, ", quanta: {q}");
            }
        }
    }
    if d.inverted && d.kind != StressKind::Fixed {
        f.push_str(", invert: true");
    }
    DistFields { fields: f, note }
}

/// A float as YAML, short: `12`, `0.5`, `14.4269504`.
pub(crate) fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_reads() {
        let d = StressDist::parse("FIXED(10k)").unwrap();
        assert_eq!((d.kind.clone(), d.lo, d.hi), (StressKind::Fixed, 10_000, 10_000));
        let d = StressDist::parse("~uniform(1..1M)").unwrap();
        assert_eq!((d.lo, d.hi, d.inverted), (1, 1_000_000, true));
        let d = StressDist::parse("gaussian(1..100)").unwrap();
        assert_eq!(d.kind, StressKind::Gaussian { mean: 50.5, stdev: 49.5 / 3.0 });
        let d = StressDist::parse("normal(0..100,5)").unwrap();
        assert_eq!(d.kind, StressKind::Gaussian { mean: 50.0, stdev: 10.0 });
        let d = StressDist::parse("gauss(0..100, 20, 4)").unwrap();
        assert_eq!(d.kind, StressKind::Gaussian { mean: 20.0, stdev: 4.0 });
        assert!(matches!(StressDist::parse("EXP(1..1001)").unwrap().kind, StressKind::Exp { mean } if (mean - 1000.0 / (0.5 * 1000f64.ln())).abs() < 1e-9));
        assert!(matches!(StressDist::parse("extreme(1..1000,1.5)").unwrap().kind, StressKind::Extreme { quanta: None, .. }));
        assert!(matches!(StressDist::parse("QEXTREME(1..1000,1.5,4)").unwrap().kind, StressKind::Extreme { quanta: Some(4), .. }));
        assert_eq!(StressDist::parse("seq(1...100)").unwrap().kind, StressKind::Seq);
    }

    #[test]
    fn mistakes_say_what_is_wrong() {
        assert!(StressDist::parse("zipf(1..10)").unwrap_err().contains("unknown distribution \"zipf\""));
        assert!(StressDist::parse("uniform(10..1)").unwrap_err().contains("min <= max"));
        assert!(StressDist::parse("uniform 1..10").unwrap_err().contains("not a distribution"));
        assert!(StressDist::parse("extreme(1..10)").unwrap_err().contains("takes 2 argument"));
        assert!(parse_ratio("uniform(1..10)").unwrap_err().contains("not a ratio"));
        assert!(StressDist::parse("weibull(1..10,2)").unwrap_err().contains("write extreme(1..10,2)"));
    }

    #[test]
    fn means_follow_the_draws() {
        assert_eq!(StressDist::parse("fixed(7)").unwrap().mean(), 7.0);
        assert!((StressDist::parse("uniform(1..10)").unwrap().mean() - 5.5).abs() < 0.01);
        assert!((StressDist::parse("~exp(1..1000)").unwrap().mean() - (1000.0 - StressDist::parse("exp(1..1000)").unwrap().mean() + 1.0)).abs() < 0.01);
        let (_, r) = parse_ratio("uniform(1..10)/10").unwrap();
        assert!((r - 0.55).abs() < 0.01, "{r}");
        assert_eq!(parse_ratio("fixed(1)/1").unwrap().1, 1.0);
    }

    #[test]
    fn fields_build_generators_that_draw_in_the_same_range() {
        for spec in ["fixed(5)", "uniform(1..100)", "gaussian(1..100)", "exp(1..100)", "~extreme(1..100,2)", "qextreme(1..100,0.5,4)", "seq(1..100)"] {
            let d = StressDist::parse(spec).unwrap();
            let f = to_fields(&d, true);
            let yaml = format!("{{ g: {{ type: bigint, {} }} }}", f.fields);
            let specs: std::collections::BTreeMap<String, crate::gen::GeneratorSpec> = crate::yaml::from_str(&yaml).unwrap();
            let set = crate::gen::GeneratorSet::build(&specs).unwrap_or_else(|e| panic!("{spec}: {e}"));
            let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(1);
            let mut sum = 0.0;
            for _ in 0..20_000 {
                match set.value(0, &mut rng) {
                    scylla::value::CqlValue::BigInt(n) => {
                        assert!((d.lo..=d.hi).contains(&n), "{spec} drew {n}");
                        sum += n as f64;
                    }
                    other => panic!("{other:?}"),
                }
            }
            let mean = sum / 20_000.0;
            let tolerance = ((d.hi - d.lo) as f64 * 0.03).max(0.5);
            assert!((mean - d.mean()).abs() < tolerance, "{spec}: mean {mean}, expected {}", d.mean());
        }
    }
}
