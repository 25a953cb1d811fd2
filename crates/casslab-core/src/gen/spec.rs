//! The generator spec as written in a workload file's `generators:` map, deserialized but not yet
//! checked. Numbers may arrive as strings after parameter substitution (`max: "100000"`), so
//! numeric fields are [`Scalar`]s, converted and validated when the set is built (`set.rs`).

use serde::{Deserialize, Serialize};

/// A YAML scalar that should be a number (or, for a few fields, a boolean or a date): accepted as
/// written, or as a string holding it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    /// An integer: an int, a float without fraction, or a string holding either.
    pub fn as_i64(&self) -> Result<i64, ScalarError> {
        let from_f64 = |f: f64| {
            if f.fract() == 0.0 && f >= -(2f64.powi(63)) && f < 2f64.powi(63) {
                Ok(f as i64)
            } else {
                Err(ScalarError::NotInteger(f.to_string()))
            }
        };
        match self {
            Scalar::Int(i) => Ok(*i),
            Scalar::Float(f) => from_f64(*f),
            Scalar::Text(s) => {
                let t = s.trim().replace('_', "");
                match t.parse::<i64>() {
                    Ok(i) => Ok(i),
                    Err(_) => match t.parse::<f64>() {
                        Ok(f) => from_f64(f),
                        Err(_) => Err(ScalarError::NotInteger(self.display())),
                    },
                }
            }
            Scalar::Bool(_) => Err(ScalarError::NotInteger(self.display())),
        }
    }

    /// A finite number: an int, a float, or a string holding either.
    pub fn as_f64(&self) -> Result<f64, ScalarError> {
        let f = match self {
            Scalar::Int(i) => *i as f64,
            Scalar::Float(f) => *f,
            Scalar::Text(s) => s.trim().parse::<f64>().map_err(|_| ScalarError::NotNumber(self.display()))?,
            Scalar::Bool(_) => return Err(ScalarError::NotNumber(self.display())),
        };
        if f.is_finite() {
            Ok(f)
        } else {
            Err(ScalarError::NotFinite(f.to_string()))
        }
    }

    /// A boolean: `true`/`false`, or a string holding one.
    pub fn as_bool(&self) -> Result<bool, ScalarError> {
        match self {
            Scalar::Bool(b) => Ok(*b),
            Scalar::Text(s) if s.trim().eq_ignore_ascii_case("true") => Ok(true),
            Scalar::Text(s) if s.trim().eq_ignore_ascii_case("false") => Ok(false),
            other => Err(ScalarError::NotBool(other.display())),
        }
    }

    fn display(&self) -> String {
        match self {
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Text(s) => format!("\"{s}\""),
        }
    }
}

/// A [`Scalar`] that is not the kind of value a field needs (the value as written, strings
/// quoted).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum ScalarError {
    #[error("expected an integer, got {0}")]
    NotInteger(String),
    #[error("expected a number, got {0}")]
    NotNumber(String),
    #[error("expected a finite number, got {0}")]
    NotFinite(String),
    #[error("expected true or false, got {0}")]
    NotBool(String),
}

impl GeneratorSpec {
    /// Whether it draws a `sequence` (a counter shared by every worker).
    pub fn is_sequence(&self) -> bool {
        self.dist.as_deref().map(str::trim) == Some("sequence")
    }
}

/// Declares a spec with the distribution fields (`dist`, `min`, `max`, `theta`, `scrambled`,
/// `hot_fraction`, `hot_ops`, `mean`, `stddev`, `shape`, `scale`, `quanta`, `invert`) between
/// its own first fields and the rest, so that a generator and a size distribution declare them
/// once (serde's `flatten` would lose `deny_unknown_fields`, and with it the file:line of a
/// misspelt field).
macro_rules! with_distribution_fields {
    ($(#[$meta:meta])* pub struct $name:ident { $($head:tt)* } { $($tail:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($head)*
        /// One of [`DISTRIBUTIONS`](super::DISTRIBUTIONS); `uniform` when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub dist: Option<String>,
        /// Lower bound of `n`, inclusive (default 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min: Option<Scalar>,
        /// Upper bound of `n`, exclusive (default 2^62, or 2^31 for `int`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max: Option<Scalar>,
        /// Zipfian skew, in (0, 1); default 0.99 (`zipfian`, `latest`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub theta: Option<Scalar>,
        /// `false` for the plain zipfian where `min` is the hottest value (default `true`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub scrambled: Option<Scalar>,
        /// `hotspot`: the share of the range that is hot, in (0, 1); default 0.2.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub hot_fraction: Option<Scalar>,
        /// `hotspot`: the share of draws that go to the hot range, in (0, 1); default 0.8.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub hot_ops: Option<Scalar>,
        /// `gaussian` mean (default: middle of [min, max) when both are given, else 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mean: Option<Scalar>,
        /// `gaussian` standard deviation, > 0 (required).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stddev: Option<Scalar>,
        /// `weibull` shape (k), > 0 (required).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub shape: Option<Scalar>,
        /// `weibull` scale (λ), > 0 (required).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub scale: Option<Scalar>,
        /// `weibull`: split the range at this many quantiles and draw uniformly within the one hit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub quanta: Option<Scalar>,
        /// Mirror the draws within [min, max): `min` becomes as likely as `max - 1` was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub invert: Option<Scalar>,
            $($tail)*
        }
    };
}

with_distribution_fields! {
    /// One entry of `generators:`. Which fields apply depends on `type` and `dist`; the builder
    /// rejects fields that would have no effect.
    #[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct GeneratorSpec {
        /// CQL type of the values: `text`, `bigint`, `frozen<list<int>>`, `map<text, bigint>`, ...
        #[serde(rename = "type")]
        pub cql_type: String,
    } {
        /// The `sequence` generator whose recent values `latest` draws.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub follows: Option<String>,
        /// `sequence`: issue each value this many times in a row (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub repeat: Option<Scalar>,
        /// The values to make, item `n mod len` for a drawn `n` (simple types only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub values: Option<Vec<Scalar>>,
        /// `text` only: written before the number or the generated characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub prefix: Option<String>,
        /// `text`/`blob`: generated characters or bytes; collections: number of elements.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub size: Option<SizeSpec>,
        /// `timestamp`/`timeuuid`: time of n = 0, RFC 3339 (`2026-01-01T00:00:00Z`) or Unix millis.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub start: Option<Scalar>,
        /// `timestamp`/`timeuuid`: milliseconds per unit of n (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub step_ms: Option<Scalar>,
        /// `list`/`set`: how each element looks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub element: Option<ElementSpec>,
        /// `map`: how each key looks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub key: Option<ElementSpec>,
        /// `map`: how each value looks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub value: Option<ElementSpec>,
        /// A user-defined type (`type: address`): the fields to fill, each with its type and look.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub fields: Option<std::collections::BTreeMap<String, FieldSpec>>,
        /// `vector<float, N>`: how its values are made (gaussian by default).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub vector: Option<VectorSpec>,
        /// Make the values another generator makes for the same `n` (content is otherwise a
        /// function of this generator's own name): a read generator `key` with `values_of:
        /// insert_key` finds the rows `insert_key` wrote.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub values_of: Option<String>,
    }
}
/// How a `vector<float, N>` generator makes its values: `kind: gaussian` (the default),
/// `clustered` (`centroids`, `spread`) or `file` (a `.fvecs`, `.npy` or CSV file, `file:`, and
/// optionally the `rows:` of it to use, `0..1500`); `normalize: true` scales each to unit length.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VectorSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `clustered`: how many centres (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centroids: Option<Scalar>,
    /// `clustered`: the standard deviation of each component around its centre, whose own
    /// components are N(0, 1) (default 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Scalar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<Scalar>,
    /// `file`: the path (relative to the workload file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `file`: the rows to use, `FIRST..END` (END excluded), e.g. `0..1500`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<String>,
}

/// One field of a user-defined type: its CQL type (simple) and, for text and blob, its look.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(rename = "type")]
    pub cql_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

/// A size: a fixed count (`size: 100`) or a distribution drawn per value
/// (`size: { dist: uniform, min: 10, max: 1000 }`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum SizeSpec {
    Fixed(Scalar),
    Dist(Box<SizeDistSpec>),
}

with_distribution_fields! {
    /// A size distribution: `uniform`, `zipfian`, `hotspot`, `gaussian`, `exponential` or `weibull`,
    /// with the same fields as a generator's. All but `gaussian` need `max`.
    #[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct SizeDistSpec {} {}
}

/// The look of a collection's elements (or of a map's keys or values).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ElementSpec {
    /// `text`/`blob` elements: characters or bytes per element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeSpec>,
    /// `text` elements: written before the number or the generated characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn numbers_may_be_strings() {
        let yaml = r#"
a: { type: text, dist: zipfian, min: "0", max: "100000", theta: "0.9" }
b: { type: blob, size: { dist: uniform, min: 10, max: "1000" } }
c: { type: "set<text>", size: "5", element: { size: 8 }, scrambled: "false" }
"#;
        let specs: BTreeMap<String, GeneratorSpec> = crate::yaml::from_str(yaml).unwrap();
        assert_eq!(specs["a"].max.as_ref().unwrap().as_i64(), Ok(100_000));
        assert_eq!(specs["a"].theta.as_ref().unwrap().as_f64(), Ok(0.9));
        match specs["b"].size.as_ref().unwrap() {
            SizeSpec::Dist(d) => assert_eq!(d.max.as_ref().unwrap().as_i64(), Ok(1000)),
            other => panic!("expected a size distribution, got {other:?}"),
        }
        assert_eq!(specs["c"].size, Some(SizeSpec::Fixed(Scalar::Text("5".into()))));
        assert_eq!(specs["c"].scrambled.as_ref().unwrap().as_bool(), Ok(false));
        assert_eq!(specs["c"].element.as_ref().unwrap().size, Some(SizeSpec::Fixed(Scalar::Int(8))));
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let r: Result<GeneratorSpec, _> = crate::yaml::from_str("{ type: text, thetta: 0.9 }");
        assert!(r.unwrap_err().to_string().contains("thetta"));
    }

    #[test]
    fn scalar_conversions() {
        assert_eq!(Scalar::Text(" 1_000 ".into()).as_i64(), Ok(1000));
        assert_eq!(Scalar::Float(1e6).as_i64(), Ok(1_000_000));
        assert_eq!(Scalar::Text("1e3".into()).as_i64(), Ok(1000));
        assert!(Scalar::Float(1.5).as_i64().is_err());
        assert_eq!(Scalar::Text("ten".into()).as_i64().unwrap_err().to_string(), "expected an integer, got \"ten\"");
        assert!(Scalar::Text("NaN".into()).as_f64().is_err());
        assert!(Scalar::Int(1).as_bool().is_err());
    }

    #[test]
    fn spec_round_trips_through_yaml() {
        let spec: GeneratorSpec = crate::yaml::from_str("{ type: \"map<text,bigint>\", size: { dist: uniform, min: 1, max: 10 }, key: { size: 4 } }").unwrap();
        let back: GeneratorSpec = crate::yaml::from_str(&crate::yaml::to_string(&spec).unwrap()).unwrap();
        assert_eq!(spec, back);
    }
}
