//! Checking the distribution fields of a generator or size spec (`dist`, `min`, `max`, `theta`,
//! ...) against the values the type holds, and building the [`Dist`] they describe. Errors name
//! the field to fix.

use super::dist::{Dist, Sequence};
use super::spec::{GeneratorSpec, Scalar, SizeDistSpec};
use super::types::CqlType;
use super::zipf::{Zipf, DEFAULT_THETA};
use super::{GenError, DISTRIBUTIONS};
use crate::suggest::did_you_mean;
use rand_distr::Normal;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Names the generator (and the sub-spec, e.g. `size.`) in errors.
pub(crate) struct Ctx<'a> {
    pub generator: &'a str,
    pub field_prefix: &'a str,
}

impl Ctx<'_> {
    pub(crate) fn err(&self, field: &str, message: impl std::fmt::Display) -> GenError {
        GenError { generator: self.generator.to_string(), field: Some(format!("{}{field}", self.field_prefix)), message: message.to_string() }
    }

    pub(crate) fn int(&self, field: &str, v: Option<&Scalar>) -> Result<Option<i64>, GenError> {
        v.map(|s| s.as_i64().map_err(|m| self.err(field, m))).transpose()
    }

    pub(crate) fn float(&self, field: &str, v: Option<&Scalar>) -> Result<Option<f64>, GenError> {
        v.map(|s| s.as_f64().map_err(|m| self.err(field, m))).transpose()
    }
}

/// The distribution fields of a generator or of a size spec.
pub(crate) struct Params<'a> {
    pub dist: Option<&'a str>,
    pub min: Option<&'a Scalar>,
    pub max: Option<&'a Scalar>,
    pub theta: Option<&'a Scalar>,
    pub scrambled: Option<&'a Scalar>,
    pub hot_fraction: Option<&'a Scalar>,
    pub hot_ops: Option<&'a Scalar>,
    pub mean: Option<&'a Scalar>,
    pub stddev: Option<&'a Scalar>,
    pub shape: Option<&'a Scalar>,
    pub scale: Option<&'a Scalar>,
    pub quanta: Option<&'a Scalar>,
    pub invert: Option<&'a Scalar>,
    pub repeat: Option<&'a Scalar>,
}

/// The distribution fields of a spec that declares them (a generator's, or a size's), with its
/// `repeat`: one list of the fields for both.
macro_rules! params_of {
    ($s:expr, $repeat:expr) => {
        Params {
            dist: $s.dist.as_deref(),
            min: $s.min.as_ref(),
            max: $s.max.as_ref(),
            theta: $s.theta.as_ref(),
            scrambled: $s.scrambled.as_ref(),
            hot_fraction: $s.hot_fraction.as_ref(),
            hot_ops: $s.hot_ops.as_ref(),
            mean: $s.mean.as_ref(),
            stddev: $s.stddev.as_ref(),
            shape: $s.shape.as_ref(),
            scale: $s.scale.as_ref(),
            quanta: $s.quanta.as_ref(),
            invert: $s.invert.as_ref(),
            repeat: $repeat,
        }
    };
}

impl<'a> Params<'a> {
    pub(crate) fn of_generator(s: &'a GeneratorSpec) -> Params<'a> {
        params_of!(s, s.repeat.as_ref())
    }

    pub(crate) fn of_size(s: &'a SizeDistSpec) -> Params<'a> {
        params_of!(s, None)
    }

    /// The distribution's name, checked against [`DISTRIBUTIONS`]; `uniform` by default.
    pub(crate) fn name(&self, cx: &Ctx) -> Result<&'static str, GenError> {
        let Some(written) = self.dist else { return Ok("uniform") };
        let lower = written.trim().to_ascii_lowercase();
        if let Some(d) = DISTRIBUTIONS.iter().find(|d| **d == lower) {
            return Ok(d);
        }
        let hint = did_you_mean(&lower, DISTRIBUTIONS).map(|s| format!("did you mean \"{s}\"? ")).unwrap_or_default();
        Err(cx.err("dist", format!("unknown distribution \"{written}\"; {hint}(known: {})", DISTRIBUTIONS.join(", "))))
    }

    /// Rejects fields that `dist` would ignore, such as `theta` on a uniform generator.
    pub(crate) fn check_applicable(&self, dist: &str, cx: &Ctx) -> Result<(), GenError> {
        let rules: [(&str, bool, &[&str]); 11] = [
            ("theta", self.theta.is_some(), &["zipfian", "latest"]),
            ("scrambled", self.scrambled.is_some(), &["zipfian"]),
            ("hot_fraction", self.hot_fraction.is_some(), &["hotspot"]),
            ("hot_ops", self.hot_ops.is_some(), &["hotspot"]),
            ("mean", self.mean.is_some(), &["gaussian", "exponential"]),
            ("stddev", self.stddev.is_some(), &["gaussian"]),
            ("shape", self.shape.is_some(), &["weibull"]),
            ("scale", self.scale.is_some(), &["weibull"]),
            ("quanta", self.quanta.is_some(), &["weibull"]),
            ("repeat", self.repeat.is_some(), &["sequence"]),
            ("invert", self.invert.is_some(), &["sequence", "uniform", "zipfian", "hotspot", "gaussian", "exponential", "weibull"]),
        ];
        for (field, present, dists) in rules {
            if present && !dists.contains(&dist) {
                let dist_written = self.dist.map(|_| dist).unwrap_or("uniform (the default)");
                return Err(cx.err(field, format!("applies to dist {}, not {dist_written}", dists.join(" or "))));
            }
        }
        Ok(())
    }

    /// Zipfian skew: in (0, 1), 0.99 by default.
    pub(crate) fn theta(&self, cx: &Ctx) -> Result<f64, GenError> {
        let theta = cx.float("theta", self.theta)?.unwrap_or(DEFAULT_THETA);
        if theta > 0.0 && theta < 1.0 {
            Ok(theta)
        } else {
            Err(cx.err("theta", format!("must be in (0, 1) (YCSB's zipfian needs theta < 1), got {theta}")))
        }
    }
}

/// The values `n` may take for a generator's type: the integer range, the `max` used when none
/// is given (`None`: `max` is required), whether gaussian draws stay floats, and whether the
/// stateful `sequence`/`latest` are allowed.
pub(crate) struct Domain {
    pub lowest: i64,
    pub highest: i64,
    pub default_max: Option<i64>,
    pub float: bool,
    pub stateful: bool,
}

impl Domain {
    /// `int`, `smallint` and `tinyint` hold what their bits do, `inet` (IPv4) 0 to 2^32 − 1;
    /// everything else takes any i64 and defaults to max 2^62.
    pub(crate) fn of_type(t: &CqlType) -> Domain {
        let bounded = |lowest: i64, highest: i64| Domain { lowest, highest, default_max: Some(highest + 1), float: false, stateful: true };
        match t {
            CqlType::Int => bounded(i32::MIN as i64, i32::MAX as i64),
            CqlType::SmallInt => bounded(i16::MIN as i64, i16::MAX as i64),
            CqlType::TinyInt => bounded(i8::MIN as i64, i8::MAX as i64),
            CqlType::Inet => bounded(0, u32::MAX as i64),
            other => Domain {
                lowest: i64::MIN,
                highest: i64::MAX,
                default_max: Some(1 << 62),
                float: matches!(other, CqlType::Double | CqlType::Float | CqlType::Decimal),
                stateful: true,
            },
        }
    }

    /// Sizes: [0, `max_size`], `max` required except for gaussian, no shared state.
    pub(crate) fn size(max_size: i64) -> Domain {
        Domain { lowest: 0, highest: max_size, default_max: None, float: false, stateful: false }
    }
}

impl Dist {
    /// Builds any distribution but `latest`, which needs its sequence (see [`Dist::latest`]),
    /// mirrored when `invert` is true.
    pub(crate) fn build(p: &Params, dom: &Domain, cx: &Ctx) -> Result<Dist, GenError> {
        let dist = Self::build_plain(p, dom, cx)?;
        match p.invert.map(|v| v.as_bool().map_err(|m| cx.err("invert", m))).transpose()? {
            Some(true) => Self::inverted(dist, p, dom, cx),
            _ => Ok(dist),
        }
    }

    fn build_plain(p: &Params, dom: &Domain, cx: &Ctx) -> Result<Dist, GenError> {
        let name = p.name(cx)?;
        p.check_applicable(name, cx)?;
        if !dom.stateful && (name == "sequence" || name == "latest") {
            return Err(cx.err("dist", format!("{name} cannot be used here; use uniform, zipfian, hotspot or gaussian")));
        }
        if name == "gaussian" {
            return Self::gaussian(p, dom, cx);
        }
        if name == "latest" {
            return Err(cx.err("dist", "latest needs `follows`"));
        }
        let min = cx.int("min", p.min)?.unwrap_or(0.max(dom.lowest));
        let max = match (cx.int("max", p.max)?, dom.default_max) {
            (Some(m), _) | (None, Some(m)) => m,
            (None, None) => return Err(cx.err("max", format!("dist {name} needs `max` here"))),
        };
        check_range(min, max, dom, cx)?;
        let span = (max as i128 - min as i128) as u64;
        Ok(match name {
            "sequence" => {
                let bounded = p.max.is_some() || dom.highest < i64::MAX;
                let repeat = match cx.int("repeat", p.repeat)? {
                    None => 1,
                    Some(r) if r >= 1 => r as u64,
                    Some(r) => return Err(cx.err("repeat", format!("must be at least 1, got {r}"))),
                };
                Dist::Sequence(Sequence { count: Arc::new(AtomicU64::new(0)), min, span: bounded.then_some(span), repeat })
            }
            "uniform" => Dist::Uniform { min, span },
            "zipfian" => {
                let scrambled = match p.scrambled {
                    Some(s) => s.as_bool().map_err(|m| cx.err("scrambled", m))?,
                    None => true,
                };
                Dist::Zipfian { min, items: span, zipf: Zipf::new(span, p.theta(cx)?), scrambled }
            }
            "hotspot" => {
                let fraction = |field, v, default| -> Result<f64, GenError> {
                    let f = cx.float(field, v)?.unwrap_or(default);
                    if f > 0.0 && f < 1.0 {
                        Ok(f)
                    } else {
                        Err(cx.err(field, format!("must be in (0, 1), got {f}")))
                    }
                };
                let hot_fraction = fraction("hot_fraction", p.hot_fraction, 0.2)?;
                let hot_ops = fraction("hot_ops", p.hot_ops, 0.8)?;
                let hot_span = ((span as f64 * hot_fraction) as u64).clamp(1, span);
                Dist::Hotspot { min, hot_span, cold_span: span - hot_span, hot_ops }
            }
            "exponential" => Self::exponential(p, min, span, cx)?,
            "weibull" => Self::weibull(p, min, span, cx)?,
            other => unreachable!("distribution {other} is handled above"),
        })
    }

    fn gaussian(p: &Params, dom: &Domain, cx: &Ctx) -> Result<Dist, GenError> {
        let (min, max) = (cx.float("min", p.min)?, cx.float("max", p.max)?);
        if let (Some(lo), Some(hi)) = (min, max) {
            if lo >= hi {
                return Err(cx.err("max", format!("min ({lo}) must be below max ({hi})")));
            }
        }
        let stddev = match cx.float("stddev", p.stddev)? {
            Some(s) if s > 0.0 => s,
            Some(s) => return Err(cx.err("stddev", format!("must be > 0, got {s}"))),
            None => return Err(cx.err("stddev", "dist gaussian needs `stddev` (> 0)")),
        };
        let mean = match (cx.float("mean", p.mean)?, min, max) {
            (Some(m), _, _) => m,
            (None, Some(lo), Some(hi)) => lo + (hi - lo) / 2.0,
            (None, _, _) => 0.0,
        };
        let normal = Normal::new(mean, stddev).map_err(|e| cx.err("stddev", e.to_string()))?;
        let (lo, hi) = if dom.float {
            (min.unwrap_or(f64::NEG_INFINITY), max.unwrap_or(f64::INFINITY))
        } else {
            // Integers: clamp to [min, max) and to what the type holds.
            (min.unwrap_or(f64::MIN).max(dom.lowest as f64), max.map_or(f64::MAX, |m| m - 1.0).min(dom.highest as f64))
        };
        Ok(Dist::Gaussian { normal, lo, hi, integer: !dom.float })
    }
}

fn check_range(min: i64, max: i64, dom: &Domain, cx: &Ctx) -> Result<(), GenError> {
    if min < dom.lowest {
        return Err(cx.err("min", format!("{min} is below the lowest allowed value ({})", dom.lowest)));
    }
    if max as i128 > dom.highest as i128 + 1 {
        return Err(cx.err("max", format!("{max} is too large: at most {} here (max is exclusive)", dom.highest as i128 + 1)));
    }
    if min >= max {
        return Err(cx.err("max", format!("min ({min}) must be below max ({max}); max is exclusive")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(yaml: &str, ty: &CqlType) -> Dist {
        let spec: GeneratorSpec = crate::yaml::from_str(yaml).unwrap();
        Dist::build(&Params::of_generator(&spec), &Domain::of_type(ty), &Ctx { generator: "g", field_prefix: "" }).unwrap()
    }

    #[test]
    fn ranges_default_per_type() {
        match build("{ type: bigint }", &CqlType::BigInt) {
            Dist::Uniform { min, span } => assert_eq!((min, span), (0, 1 << 62)),
            other => panic!("{other:?}"),
        }
        match build("{ type: int, min: -5 }", &CqlType::Int) {
            Dist::Uniform { min, span } => assert_eq!((min, span), (-5, (1 << 31) + 5)),
            other => panic!("{other:?}"),
        }
        match build("{ type: bigint, dist: sequence, min: 7 }", &CqlType::BigInt) {
            Dist::Sequence(s) => assert_eq!((s.min, s.span), (7, None), "no max: no wrap"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn distribution_defaults_follow_ycsb() {
        match build("{ type: bigint, dist: hotspot, max: 1000 }", &CqlType::BigInt) {
            Dist::Hotspot { min, hot_span, cold_span, hot_ops } => {
                assert_eq!((min, hot_span, cold_span, hot_ops), (0, 200, 800, 0.8));
            }
            other => panic!("{other:?}"),
        }
        match build("{ type: bigint, dist: hotspot, max: 3, hot_fraction: 0.01 }", &CqlType::BigInt) {
            Dist::Hotspot { hot_span, cold_span, .. } => {
                assert_eq!((hot_span, cold_span), (1, 2), "at least one hot value")
            }
            other => panic!("{other:?}"),
        }
        match build("{ type: bigint, dist: ZIPFIAN, max: 100 }", &CqlType::BigInt) {
            Dist::Zipfian { items, scrambled, .. } => assert_eq!((items, scrambled), (100, true)),
            other => panic!("{other:?}"),
        }
        match build("{ type: int, dist: gaussian, min: 10, max: 20, stddev: 1 }", &CqlType::Int) {
            Dist::Gaussian { normal, lo, hi, integer } => {
                assert_eq!((normal.mean(), lo, hi, integer), (15.0, 10.0, 19.0, true));
            }
            other => panic!("{other:?}"),
        }
        match build("{ type: double, dist: gaussian, stddev: 2 }", &CqlType::Double) {
            Dist::Gaussian { normal, lo, hi, integer } => {
                assert_eq!((normal.mean(), lo, hi, integer), (0.0, f64::NEG_INFINITY, f64::INFINITY, false));
            }
            other => panic!("{other:?}"),
        }
        match build("{ type: int, dist: gaussian, stddev: 2 }", &CqlType::Int) {
            Dist::Gaussian { lo, hi, .. } => assert_eq!((lo, hi), (i32::MIN as f64, i32::MAX as f64)),
            other => panic!("{other:?}"),
        }
    }
}
