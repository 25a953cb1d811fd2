//! Value generators for workload files. A workload's `generators:` map (name → [`GeneratorSpec`])
//! is validated and built once into a [`GeneratorSet`], which the engine shares between its
//! workers and asks for one [`CqlValue`](scylla::value::CqlValue) per bound marker. Every value is
//! a deterministic function of the generator's name and of an integer `n` drawn from the
//! generator's distribution (`sequence`, `uniform`, `zipfian`, `latest`, `hotspot`, `gaussian`,
//! `exponential`, `weibull`; any of them mirrored with `invert`). Vectors (`vector<float, N>`)
//! are gaussian, clustered or rows of a file (`vectors`, `vector_file`).
//! This module owns the spec format, the CQL type grammar it accepts, the distributions and the
//! rendering of values; it does not know about statements, sessions or the workload file's lines
//! (the workload module adds those to a [`GenError`]).

mod build;
mod dist;
mod dist_params;
mod extreme;
pub(crate) mod hashing;
pub mod rows;
mod set;
mod spec;
mod tail_params;
mod types;
mod value_of;
mod values;
pub mod vector_file;
mod vectors;
mod zipf;

pub use set::GeneratorSet;
pub use spec::{ElementSpec, FieldSpec, GeneratorSpec, Scalar, ScalarError, SizeDistSpec, SizeSpec, VectorSpec};
pub use types::{CqlType, TypeError, VECTOR_DIMS};
pub use vectors::floats_of;

/// The kinds of vector a `vector<float, N>` generator makes (`vector: { kind: … }`).
pub const VECTOR_KINDS: &[&str] = &["gaussian", "clustered", "file"];

/// The distribution names accepted in `dist:`.
pub const DISTRIBUTIONS: &[&str] = &["sequence", "uniform", "zipfian", "latest", "hotspot", "gaussian", "exponential", "weibull"];

/// A generator spec that cannot be built: which generator, which field, and what to fix.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("generator \"{generator}\"{}: {message}", field_suffix(.field))]
pub struct GenError {
    pub generator: String,
    /// The offending field (`dist`, `theta`, `follows`, `size.max`, ...), if one is to blame.
    pub field: Option<String>,
    pub message: String,
}

fn field_suffix(field: &Option<String>) -> String {
    match field {
        Some(f) => format!(", field `{f}`"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen_error_display_names_generator_and_field() {
        let e = GenError { generator: "k".into(), field: Some("theta".into()), message: "must be below 1".into() };
        assert_eq!(e.to_string(), "generator \"k\", field `theta`: must be below 1");
        let e = GenError { generator: "k".into(), field: None, message: "bad".into() };
        assert_eq!(e.to_string(), "generator \"k\": bad");
    }
}
