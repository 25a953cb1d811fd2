//! "Did you mean …?" for names typed by users: the closest known name to a misspelled one
//! (generators, distributions, operations, parameters, consistency levels, event actions,
//! built-in workloads). It owns the matching only; each caller words its own message.

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

/// `; did you mean "x"?` when there is a likely intended name, else nothing: the suffix most
/// messages append after naming what they did not know.
pub fn hint<I>(word: &str, candidates: I) -> String
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    did_you_mean(word, candidates).map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default()
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
            let mut v = (d[(i - 1) * width + j] + 1).min(d[i * width + j - 1] + 1).min(d[(i - 1) * width + j - 1] + cost);
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

    const DISTRIBUTIONS: &[&str] = &["sequence", "uniform", "zipfian", "latest", "hotspot", "gaussian"];

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
    fn hint_is_a_suffix_or_nothing() {
        assert_eq!(hint("zipfain", DISTRIBUTIONS), "; did you mean \"zipfian\"?");
        assert_eq!(hint("poisson", DISTRIBUTIONS), "");
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "acb"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
