//! Rough figures the rules need from generator specs: how many distinct values a generator
//! yields (its cardinality), whether it keeps producing new ones as a run goes on, and how many
//! bytes a value takes. Estimates, not promises: unknown or unreadable specs give `None`.

use crate::gen::{GeneratorSpec, Scalar, SizeSpec};
use std::collections::BTreeMap;

/// Distinct values a generator yields; `f64::INFINITY` when it never repeats (a sequence
/// without `max`, a double drawn from a gaussian, a collection).
pub(crate) fn cardinality(spec: &GeneratorSpec, all: &BTreeMap<String, GeneratorSpec>) -> Option<f64> {
    let ty = spec.cql_type.to_ascii_lowercase().replace(' ', "");
    if ty == "boolean" {
        return Some(2.0);
    }
    if ty.contains('<') {
        return Some(f64::INFINITY);
    }
    let int = |s: &Option<Scalar>| s.as_ref().and_then(|x| x.as_i64().ok());
    let dist = spec.dist.as_deref().unwrap_or("uniform");
    let default_max: i64 = if ty == "int" { 1 << 31 } else { 1 << 62 };
    let min = int(&spec.min).unwrap_or(0);
    match dist {
        "sequence" => match int(&spec.max) {
            Some(max) => Some((max - min).max(1) as f64),
            None => Some(f64::INFINITY),
        },
        "latest" => {
            let seq = all.get(spec.follows.as_deref()?)?;
            cardinality(seq, all)
        }
        "gaussian" => {
            if ty == "double" {
                return Some(f64::INFINITY);
            }
            let sd = spec.stddev.as_ref()?.as_f64().ok()?;
            Some((6.0 * sd).max(1.0))
        }
        _ => {
            if ty == "double" && spec.dist.is_none() {
                return Some(f64::INFINITY);
            }
            let max = int(&spec.max).unwrap_or(default_max);
            Some((max - min).max(1) as f64)
        }
    }
}

/// The probability of the most frequent value: how much of the writes the hottest key gets.
/// `None` when unknown; 0 for a sequence that never repeats.
pub(crate) fn hottest_share(spec: &GeneratorSpec, all: &BTreeMap<String, GeneratorSpec>) -> Option<f64> {
    let card = cardinality(spec, all)?;
    if card.is_infinite() {
        return Some(0.0);
    }
    let f = |s: &Option<Scalar>| s.as_ref().and_then(|x| x.as_f64().ok());
    let share = match spec.dist.as_deref().unwrap_or("uniform") {
        "zipfian" => 1.0 / zeta(card, f(&spec.theta).unwrap_or(0.99)),
        "hotspot" => {
            let hot_fraction = f(&spec.hot_fraction).unwrap_or(0.2);
            let hot_ops = f(&spec.hot_ops).unwrap_or(0.8);
            (hot_ops / (hot_fraction * card).max(1.0)).max(1.0 / card)
        }
        "gaussian" => match f(&spec.stddev) {
            Some(sd) if sd > 0.0 => 1.0 / (sd * (2.0 * std::f64::consts::PI).sqrt()),
            _ => return None,
        },
        _ => 1.0 / card,
    };
    Some(share.min(1.0))
}

/// The generalized harmonic number H(n, θ) = Σ_{i=1..n} i^-θ: summed for the first million
/// terms, the rest by its integral.
fn zeta(n: f64, theta: f64) -> f64 {
    let exact = n.min(1e6) as u64;
    let mut z: f64 = (1..=exact).map(|i| (i as f64).powf(-theta)).sum();
    if n > exact as f64 {
        let a = exact as f64 + 0.5;
        let b = n + 0.5;
        z += if (theta - 1.0).abs() < 1e-9 { (b / a).ln() } else { (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta) };
    }
    z
}

/// Whether the values keep growing as operations run: a sequence without an upper bound.
pub(crate) fn grows_without_bound(spec: &GeneratorSpec) -> bool {
    spec.dist.as_deref() == Some("sequence") && spec.max.is_none()
}

pub(crate) fn mean_size(size: &Option<SizeSpec>) -> Option<f64> {
    match size.as_ref()? {
        SizeSpec::Fixed(s) => s.as_f64().ok(),
        SizeSpec::Dist(d) => {
            let f = |s: &Option<Scalar>| s.as_ref().and_then(|x| x.as_f64().ok());
            if let Some(mean) = f(&d.mean) {
                return Some(mean);
            }
            let min = f(&d.min).unwrap_or(0.0);
            let unscrambled = d.scrambled.as_ref().and_then(|x| x.as_bool().ok()) == Some(false);
            Some(match (f(&d.max), d.dist.as_deref().unwrap_or("uniform")) {
                // rank order: the smallest sizes are the most frequent; E[rank] ≈ Σ i^(1-θ) / Σ i^-θ
                (Some(max), "zipfian") if unscrambled => {
                    let n = (max - min).max(1.0);
                    let theta = f(&d.theta).unwrap_or(0.99);
                    min + (n.powf(2.0 - theta) / (2.0 - theta)) / zeta(n, theta)
                }
                (Some(max), _) => (min + max) / 2.0,
                (None, _) => min,
            })
        }
    }
}

/// Bytes of a simple value of type `ty` (text without a size: prefix plus digits).
fn simple_bytes(ty: &str, size: Option<f64>, prefix: usize) -> f64 {
    match ty {
        "int" => 4.0,
        "bigint" | "double" | "timestamp" | "counter" => 8.0,
        "boolean" => 1.0,
        "uuid" | "timeuuid" => 16.0,
        "text" | "varchar" | "ascii" => prefix as f64 + size.unwrap_or(12.0),
        "blob" => size.unwrap_or(16.0),
        _ => 8.0,
    }
}

/// Mean bytes of a generated value.
pub(crate) fn value_bytes(spec: &GeneratorSpec) -> f64 {
    let ty = spec.cql_type.to_ascii_lowercase().replace(' ', "");
    let inner = ty.strip_prefix("frozen<").and_then(|t| t.strip_suffix('>')).unwrap_or(&ty);
    let prefix = spec.prefix.as_ref().map(|p| p.len()).unwrap_or(0);
    if let Some(open) = inner.find('<') {
        let count = mean_size(&spec.size).unwrap_or(1.0);
        let args = &inner[open + 1..inner.len().saturating_sub(1)];
        let elem = |t: &str, e: &Option<crate::gen::ElementSpec>| {
            let (size, prefix) = e.as_ref().map(|e| (mean_size(&e.size), e.prefix.as_ref().map(|p| p.len()).unwrap_or(0))).unwrap_or((None, 0));
            simple_bytes(t, size, prefix)
        };
        let per = if inner.starts_with("map") {
            let mut it = args.split(',');
            elem(it.next().unwrap_or(""), &spec.key) + elem(it.next().unwrap_or(""), &spec.value)
        } else {
            elem(args, &spec.element)
        };
        return count * per;
    }
    simple_bytes(inner, mean_size(&spec.size), prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(y: &str) -> GeneratorSpec {
        crate::yaml::from_str(y).unwrap()
    }

    #[test]
    fn cardinalities_and_sizes() {
        let all = BTreeMap::new();
        assert_eq!(cardinality(&spec("{ type: bigint, dist: sequence, min: 0, max: 500 }"), &all), Some(500.0));
        assert_eq!(cardinality(&spec("{ type: bigint, dist: sequence }"), &all), Some(f64::INFINITY));
        assert_eq!(cardinality(&spec("{ type: int, dist: zipfian, min: 10, max: 20 }"), &all), Some(10.0));
        assert_eq!(cardinality(&spec("{ type: boolean }"), &all), Some(2.0));
        assert!(grows_without_bound(&spec("{ type: timestamp, dist: sequence }")));
        assert!(!grows_without_bound(&spec("{ type: timestamp, dist: sequence, max: 10 }")));
        let z = hottest_share(&spec("{ type: bigint, dist: zipfian, min: 0, max: 10000 }"), &all).unwrap();
        assert!((0.09..0.11).contains(&z), "{z}");
        assert_eq!(hottest_share(&spec("{ type: bigint, dist: uniform, min: 0, max: 100 }"), &all), Some(0.01));
        let h = hottest_share(&spec("{ type: bigint, dist: hotspot, min: 0, max: 1000, hot_fraction: 0.1, hot_ops: 0.9 }"), &all).unwrap();
        assert!((h - 0.009).abs() < 1e-9, "{h}");
        assert_eq!(value_bytes(&spec("{ type: blob, size: 100 }")), 100.0);
        assert_eq!(value_bytes(&spec("{ type: text, size: { dist: uniform, min: 0, max: 200 } }")), 100.0);
        assert_eq!(value_bytes(&spec("{ type: \"list<int>\", size: 100 }")), 400.0);
        // long-tailed sizes in rank order: mostly small, mean far below the midpoint
        let m = value_bytes(&spec("{ type: text, size: { dist: zipfian, min: 500, max: 200000, scrambled: false } }"));
        assert!((10_000.0..25_000.0).contains(&m), "{m}");
        assert_eq!(value_bytes(&spec("{ type: \"frozen<set<text>>\", size: 4, element: { size: 10 } }")), 40.0);
    }
}
