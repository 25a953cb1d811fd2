//! Value generators for workload files. A workload's `generators:` map (name → [`GeneratorSpec`])
//! is validated and built once into a [`GeneratorSet`], which the engine shares between its
//! workers and asks for one [`CqlValue`](scylla::value::CqlValue) per bound marker. Every value is
//! a deterministic function of the generator's name and of an integer `n` drawn from the
//! generator's distribution (`sequence`, `uniform`, `zipfian`, `latest`, `hotspot`, `gaussian`).
//! This module owns the spec format, the CQL type grammar it accepts, the distributions and the
//! rendering of values; it does not know about statements, sessions or the workload file's lines
//! (the workload module adds those to a [`GenError`]).

mod build;
mod dist;
mod params;
mod render;
mod set;
mod spec;
mod types;
mod zipf;

pub use set::GeneratorSet;
pub use spec::{ElementSpec, GeneratorSpec, Scalar, SizeDistSpec, SizeSpec};
pub use types::CqlType;

/// The distribution names accepted in `dist:`.
pub const DISTRIBUTIONS: &[&str] = &["sequence", "uniform", "zipfian", "latest", "hotspot", "gaussian"];

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

/// The candidate closest to `word` (case-insensitive), if it is close enough to be a likely typo:
/// at most one edit per three characters (transpositions count as one), or `word` is a prefix of
/// it of at least three characters. Ties go to the first candidate.
pub fn did_you_mean<I>(word: &str, candidates: I) -> Option<String>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let word = word.trim().to_ascii_lowercase();
    let budget = (word.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, String)> = None;
    for cand in candidates {
        let cand = cand.as_ref();
        let lower = cand.to_ascii_lowercase();
        if lower == word {
            continue;
        }
        let d = if word.len() >= 3 && lower.starts_with(&word) { 1 } else { edit_distance(&word, &lower) };
        if d <= budget && best.as_ref().is_none_or(|(bd, _)| d < *bd) {
            best = Some((d, cand.to_string()));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
/// transpositions each cost one.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v =
                (d[(i - 1) * width + j] + 1).min(d[i * width + j - 1] + 1).min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = v;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_typos_and_prefixes() {
        assert_eq!(did_you_mean("zipfain", DISTRIBUTIONS).as_deref(), Some("zipfian"));
        assert_eq!(did_you_mean("Gausian", DISTRIBUTIONS).as_deref(), Some("gaussian"));
        assert_eq!(did_you_mean("seq", DISTRIBUTIONS).as_deref(), Some("sequence"));
        assert_eq!(did_you_mean("unifrom", DISTRIBUTIONS).as_deref(), Some("uniform"));
        assert_eq!(did_you_mean("poisson", DISTRIBUTIONS), None);
        assert_eq!(did_you_mean("x", DISTRIBUTIONS), None);
        let names = vec!["new_key".to_string(), "read_key".to_string()];
        assert_eq!(did_you_mean("new_kye", &names).as_deref(), Some("new_key"));
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "acb"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn gen_error_display_names_generator_and_field() {
        let e = GenError { generator: "k".into(), field: Some("theta".into()), message: "must be below 1".into() };
        assert_eq!(e.to_string(), "generator \"k\", field `theta`: must be below 1");
        let e = GenError { generator: "k".into(), field: None, message: "bad".into() };
        assert_eq!(e.to_string(), "generator \"k\": bad");
    }
}
