//! What one cassandra-stress insert writes, and the `rows:` setting that makes casslab write the
//! same: the clustering levels with their `cluster` distributions, `partitions` per insert and
//! `select` (a ratio drawn per partition visit), read from the profile and the command line's
//! `-insert`; their means (for batch sizes, load counts and rates), and the YAML of `rows:`.
//! cassandra-stress's `PartitionIterator` picks a visit's rows by first-level value (each
//! with the drawn chance, the last one when none was) and writes every row under it; a ratio
//! draws a real number (`uniform(1..10)/10` is uniform on [0.1, 1.1), at most 1).

use super::stress_dist::{num, parse_count, to_fields, StressDist, StressKind};

/// What one insert of a profile writes.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    /// Clustering columns, outermost first, with their `cluster` distribution (None: fixed(1)).
    pub levels: Vec<(String, Option<StressDist>)>,
    /// Partitions per insert.
    pub partitions: StressDist,
    /// `select`: the ratio's distribution and divisor (None: every row).
    pub select: Option<(StressDist, i64)>,
}

/// Scale of a ratio's share, so that a whole-number draw follows a real one closely.
const SHARE_SCALE: i64 = 1000;

impl Shape {
    /// Mean rows of a partition: the product of the levels' mean counts.
    pub fn rows_mean(&self) -> f64 {
        self.levels.iter().map(|(_, d)| d.as_ref().map_or(1.0, |d| d.mean().max(1.0))).product()
    }

    /// Most rows a partition can have.
    pub fn rows_max(&self) -> f64 {
        self.levels.iter().map(|(_, d)| d.as_ref().map_or(1.0, |d| d.hi.max(1) as f64)).product()
    }

    /// Mean share of a partition's first-level values one visit writes (the chance drawn,
    /// with the last value taken when none was).
    pub fn select_mean(&self) -> f64 {
        let Some((d, div)) = &self.select else { return 1.0 };
        let first = self.levels.first().and_then(|(_, d)| d.as_ref()).map_or(1.0, |d| d.mean().max(1.0));
        let chance = ratio_mean(d, *div);
        // the last value is taken when none of the others was
        (chance + (1.0 - chance).powf(first) / first).min(1.0)
    }

    /// Mean rows one insert writes.
    pub fn rows_per_insert(&self) -> f64 {
        self.partitions.mean().max(0.0) * self.rows_mean() * self.select_mean()
    }

    /// `rows:` of an operation drawing its seeds from `seed`, with key generators `key`, and
    /// whether it writes (`partitions` and `select`) or binds one row.
    pub fn rows_yaml(&self, seed: &str, key: &[String], write: bool) -> String {
        let mut f = vec![format!("seed: {seed}"), format!("key: [{}]", key.join(", "))];
        if !self.levels.is_empty() {
            f.push(format!("levels: [{}]", self.levels.iter().map(|(c, _)| gen_name(c)).collect::<Vec<_>>().join(", ")));
            let counts: Vec<String> = self.levels.iter().filter_map(|(c, d)| d.as_ref().map(|d| format!("{}: {}", gen_name(c), count(d)))).collect();
            if !counts.is_empty() {
                f.push(format!("counts: {{ {} }}", counts.join(", ")));
            }
        }
        if write {
            if self.partitions.kind != StressKind::Fixed || self.partitions.lo != 1 {
                f.push(format!("partitions: {}", count(&self.partitions)));
            }
            if let Some((d, div)) = &self.select {
                f.push(format!("select: {}", select(d, *div)));
            }
        } else {
            f.push("one_row: true".into());
        }
        format!("{{ {} }}", f.join(", "))
    }
}

/// The generator of clustering column `c`.
pub(crate) fn gen_name(c: &str) -> String {
    format!("ck_{}", super::workload_writer::ident(c))
}

/// A count as casslab writes it: a number, or a distribution over the same whole numbers.
fn count(d: &StressDist) -> String {
    if d.kind == StressKind::Fixed {
        return d.lo.max(0).to_string();
    }
    format!("{{ {} }}", to_fields(d, false).fields)
}

/// The mean of a ratio `d / div` as cassandra-stress draws it (a real number, at most 1).
pub(crate) fn ratio_mean(d: &StressDist, div: i64) -> f64 {
    let div = div.max(1) as f64;
    match d.kind {
        StressKind::Fixed => (d.lo as f64 / div).min(1.0),
        StressKind::Uniform | StressKind::Seq => {
            // uniform on [lo, hi + 1), then clamped to hi, then to 1
            let n = 2000;
            (0..n).map(|i| (d.lo as f64 + (i as f64 + 0.5) / n as f64 * (d.hi - d.lo + 1) as f64).min(d.hi as f64) / div).map(|r| r.min(1.0)).sum::<f64>()
                / n as f64
        }
        _ => (d.mean() / div).min(1.0),
    }
}

/// `select:` — the share drawn scaled by [`SHARE_SCALE`] so that whole numbers follow the
/// real-valued draw of cassandra-stress.
fn select(d: &StressDist, div: i64) -> String {
    let per = div.max(1).saturating_mul(SHARE_SCALE);
    let share = match d.kind {
        StressKind::Fixed => (d.lo.max(0).saturating_mul(SHARE_SCALE)).to_string(),
        StressKind::Uniform | StressKind::Seq => {
            format!("{{ dist: uniform, min: {}, max: {} }}", d.lo.saturating_mul(SHARE_SCALE), d.hi.saturating_add(1).saturating_mul(SHARE_SCALE))
        }
        _ => {
            let scaled = StressDist { lo: d.lo.saturating_mul(SHARE_SCALE), hi: d.hi.saturating_mul(SHARE_SCALE), ..d.clone() };
            let scaled = match &d.kind {
                StressKind::Gaussian { mean, stdev } => {
                    StressDist { kind: StressKind::Gaussian { mean: mean * SHARE_SCALE as f64, stdev: stdev * SHARE_SCALE as f64 }, ..scaled }
                }
                _ => StressDist { lo: d.lo, hi: d.hi, ..scaled },
            };
            format!("{{ {} }}", to_fields(&scaled, false).fields)
        }
    };
    format!("{{ share: {share}, per: {} }}", num(per as f64))
}

/// Reads a ratio `DIST/divisor`.
pub(crate) fn parse_select(spec: &str) -> Result<(StressDist, i64), String> {
    let (d, div) = spec.rsplit_once('/').ok_or_else(|| format!("\"{spec}\" is not a ratio: expected DIST/divisor such as uniform(1..10)/10"))?;
    let div = parse_count(div).filter(|d| *d > 0).ok_or_else(|| format!("\"{spec}\": the divisor must be a whole number above 0"))?;
    Ok((StressDist::parse(d)?, div))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> StressDist {
        StressDist::parse(s).unwrap()
    }

    #[test]
    fn an_insert_of_the_example_profile() {
        // Apache's cqlstress-example.yaml: date uniform(20..40) × lval uniform(1..4), 1..50
        // partitions, select uniform(1..10)/10
        let s = Shape {
            levels: vec![("date".into(), Some(d("uniform(20..40)"))), ("lval".into(), Some(d("uniform(1..4)")))],
            partitions: d("uniform(1..50)"),
            select: Some(parse_select("uniform(1..10)/10").unwrap()),
        };
        assert!((s.rows_mean() - 75.0).abs() < 0.5, "{}", s.rows_mean());
        assert!((ratio_mean(&s.select.as_ref().unwrap().0, 10) - 0.595).abs() < 0.002);
        assert!((s.rows_per_insert() - 25.5 * 75.0 * 0.595).abs() < 15.0, "{}", s.rows_per_insert());
        let y = s.rows_yaml("pop", &["pk_name".into()], true);
        assert_eq!(
            y,
            "{ seed: pop, key: [pk_name], levels: [ck_date, ck_lval], counts: { ck_date: { dist: uniform, min: 20, max: 41 }, ck_lval: { dist: uniform, min: 1, max: 5 } }, partitions: { dist: uniform, min: 1, max: 51 }, select: { share: { dist: uniform, min: 1000, max: 11000 }, per: 10000 } }"
        );
        assert!(s.rows_yaml("pop", &["pk_name".into()], false).ends_with("one_row: true }"));
    }

    #[test]
    fn one_row_of_three_at_half_is_written_1_6_times() {
        let s = Shape { levels: vec![("c".into(), Some(d("fixed(3)")))], partitions: d("fixed(1)"), select: Some(parse_select("fixed(1)/2").unwrap()) };
        assert!((s.rows_per_insert() - 1.625).abs() < 0.01, "{}", s.rows_per_insert());
    }
}
