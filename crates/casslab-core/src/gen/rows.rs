//! Partitions made from seeds, as cassandra-stress's user profiles make them: an operation's
//! `rows:` names a seed generator (each draw is one partition's seed), the key generators
//! (each key value is drawn from its own distribution with the seed, so a seed always names the
//! same partition and reads meet writes), and the clustering generators level by level, each
//! with a count of values under one value of the level above (drawn once per partition from
//! the partition's key, so a partition always has the same rows). A write visits `partitions`
//! partitions per execution and writes, of each, the rows under a share of its first-level
//! values (`select`, drawn per visit; each value is picked with that chance and the last one
//! is taken when none was); a read binds one row of one partition. This module owns the spec
//! and the pure logic; the CQL target binds and sends the rows.

use super::build::count_dist;
use super::dist::{Dist, Drawn};
use super::hashing::{hash_of, mix64};
use super::spec::SizeSpec;
use super::{GenError, GeneratorSet};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use scylla::value::CqlValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most values one clustering level may have under one value of the level above.
pub const MAX_LEVEL_VALUES: i64 = 100_000;
/// The most partitions one execution may visit.
pub const MAX_VISITS: i64 = 10_000;

/// `rows:` of an operation, as written (generator names; counts as sizes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowsSpec {
    /// The generator whose draw is a partition's seed (`sequence` walks the seeds in order).
    pub seed: String,
    /// The partition key's generators, each made from the seed.
    pub key: Vec<String>,
    /// The clustering generators, outermost first.
    #[serde(default)]
    pub levels: Vec<String>,
    /// Values of a level under one value of the level above (default 1), by generator.
    #[serde(default)]
    pub counts: BTreeMap<String, SizeSpec>,
    /// Partitions one execution writes (default 1; a read visits one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<SizeSpec>,
    /// The chance of each first-level value of a partition to be written by one visit:
    /// `share / per`, drawn per visit (default: every row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<SelectSpec>,
    /// Bind one row of one partition (what a query does; a SELECT always does).
    #[serde(default)]
    pub one_row: bool,
}

/// `select: { share: …, per: N }`: a visit's chance is `min(1, share / per)`, `share` drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectSpec {
    pub share: SizeSpec,
    pub per: u64,
}

/// A count: fixed, or drawn from a distribution.
#[derive(Debug, Clone)]
pub struct Count(CountDist);

#[derive(Debug, Clone)]
enum CountDist {
    Fixed(usize),
    Drawn(Box<Dist>),
}

impl Count {
    /// Builds `spec` (a number or a size distribution, in `0..=max`); errors name `field`.
    pub fn build(spec: &SizeSpec, field: &str, max: i64) -> Result<Count, GenError> {
        Ok(match count_dist(spec, field, max)? {
            Ok(n) => Count(CountDist::Fixed(n)),
            Err(d) => Count(CountDist::Drawn(Box::new(d))),
        })
    }

    pub fn fixed(n: usize) -> Count {
        Count(CountDist::Fixed(n))
    }

    pub fn draw(&self, rng: &mut SmallRng) -> usize {
        match &self.0 {
            CountDist::Fixed(n) => *n,
            CountDist::Drawn(d) => match d.draw(rng) {
                Drawn::Int(n) => n.max(0) as usize,
                Drawn::Float(f) => f.max(0.0) as usize,
            },
        }
    }
}

/// One partition visited: its key's values and the clustering values of each row taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Visit {
    pub key: Vec<CqlValue>,
    pub rows: Vec<Vec<CqlValue>>,
}

/// `rows:` built against a generator set: indexes and counts.
#[derive(Debug, Clone)]
pub struct RowsMaker {
    seed: usize,
    key: Vec<usize>,
    levels: Vec<(usize, Count)>,
    partitions: Count,
    select: Option<(Count, f64)>,
}

const LEVEL_SALT: u64 = 0x4c45_5645_4c4c_4556;
const KEY_SALT: u64 = 0x5041_5254_4954_494f;

impl RowsMaker {
    /// Checks `spec` against `gens`: every generator exists, none of the key or levels is a
    /// sequence (they are drawn from seeds), the counts build. Errors name the field.
    pub fn build(spec: &RowsSpec, gens: &GeneratorSet) -> Result<RowsMaker, String> {
        let index = |field: &str, name: &str| gens.index_of(name).ok_or_else(|| format!("rows.{field}: no generator \"{name}\""));
        let seed = index("seed", &spec.seed)?;
        let made = |field: &str, name: &str| -> Result<usize, String> {
            let i = index(field, name)?;
            if gens.is_sequence(i) {
                return Err(format!("rows.{field}: \"{name}\" is a sequence; a partition's values are drawn from its seed (give it uniform, gaussian, …)"));
            }
            Ok(i)
        };
        let key = spec.key.iter().map(|k| made("key", k)).collect::<Result<Vec<_>, _>>()?;
        if key.is_empty() {
            return Err("rows.key: name the generators of the partition key".into());
        }
        let mut levels = Vec::new();
        for l in &spec.levels {
            let count = match spec.counts.get(l) {
                Some(c) => Count::build(c, &format!("rows.counts.{l}"), MAX_LEVEL_VALUES).map_err(|e| e.message_with_field())?,
                None => Count::fixed(1),
            };
            levels.push((made("levels", l)?, count));
        }
        if let Some(c) = spec.counts.keys().find(|c| !spec.levels.contains(c)) {
            return Err(format!("rows.counts: \"{c}\" is not one of rows.levels"));
        }
        let partitions = match &spec.partitions {
            Some(p) => Count::build(p, "rows.partitions", MAX_VISITS).map_err(|e| e.message_with_field())?,
            None => Count::fixed(1),
        };
        let select = match &spec.select {
            Some(s) if s.per == 0 => return Err("rows.select.per must be above 0".into()),
            Some(s) => Some((Count::build(&s.share, "rows.select.share", i64::MAX / 2).map_err(|e| e.message_with_field())?, s.per as f64)),
            None => None,
        };
        Ok(RowsMaker { seed, key, levels, partitions, select })
    }

    /// The generators this maker fills in (key and levels), which a statement binds from a visit.
    pub fn made(&self) -> impl Iterator<Item = usize> + '_ {
        self.key.iter().copied().chain(self.levels.iter().map(|(g, _)| *g))
    }

    /// Where generator `g` is in a visit: `Some(Ok(i))` the key's `i`th value, `Some(Err(l))`
    /// level `l` of a row, `None` not made here.
    pub fn place(&self, g: usize) -> Option<Result<usize, usize>> {
        if let Some(i) = self.key.iter().position(|k| *k == g) {
            return Some(Ok(i));
        }
        self.levels.iter().position(|(l, _)| *l == g).map(Err)
    }

    /// The partitions one write execution visits, with the rows it writes of each.
    pub fn write(&self, gens: &GeneratorSet, rng: &mut SmallRng) -> Vec<Visit> {
        let n = self.partitions.draw(rng);
        (0..n)
            .map(|_| {
                let seed = self.next_seed(gens, rng);
                let (key, groups) = self.partition(gens, seed);
                let chance = self.select.as_ref().map_or(1.0, |(share, per)| (share.draw(rng) as f64 / per).min(1.0));
                let picked = pick_groups(groups.len(), chance, rng);
                let rows = groups.into_iter().zip(picked).filter(|(_, p)| *p).flat_map(|(g, _)| g).collect();
                Visit { key, rows }
            })
            .collect()
    }

    /// One partition for a read, with one of its rows (uniformly).
    pub fn read(&self, gens: &GeneratorSet, rng: &mut SmallRng) -> Visit {
        let seed = self.next_seed(gens, rng);
        let (key, groups) = self.partition(gens, seed);
        let mut rows: Vec<Vec<CqlValue>> = groups.into_iter().flatten().collect();
        let row = if rows.is_empty() { Vec::new() } else { rows.swap_remove(rng.gen_range(0..rows.len())) };
        Visit { key, rows: vec![row] }
    }

    fn next_seed(&self, gens: &GeneratorSet, rng: &mut SmallRng) -> u64 {
        let (v, n) = gens.value_and_n(self.seed, rng);
        match n {
            Some(n) => n as u64,
            None => mix64(format!("{v:?}").len() as u64 ^ rng.gen::<u64>()),
        }
    }

    /// The partition of `seed`: its key's values, and its rows grouped by first-level value.
    pub fn partition(&self, gens: &GeneratorSet, seed: u64) -> (Vec<CqlValue>, Vec<Vec<Vec<CqlValue>>>) {
        let mut id = KEY_SALT;
        let mut key = Vec::with_capacity(self.key.len());
        for g in &self.key {
            let mut r = SmallRng::seed_from_u64(hash_of(gens.content_seed(*g), seed));
            let (v, _) = gens.value_and_n(*g, &mut r);
            // the rows are made from the key's values, as cassandra-stress makes them: seeds
            // whose keys collide write the same partition, with the same rows
            id = hash_of(id, value_hash(&v));
            key.push(v);
        }
        if self.levels.is_empty() {
            return (key, vec![vec![Vec::new()]]);
        }
        let mut groups = Vec::new();
        for (v, child) in self.level_values(gens, 0, id) {
            let mut rows = Vec::new();
            let mut prefix = vec![v];
            self.fill(gens, 1, child, &mut prefix, &mut rows);
            groups.push(rows);
        }
        (key, groups)
    }

    /// The distinct values of level `level` under the value whose hash is `parent`, each with
    /// the hash its own children are made from.
    fn level_values(&self, gens: &GeneratorSet, level: usize, parent: u64) -> Vec<(CqlValue, u64)> {
        let (g, count) = &self.levels[level];
        let salt = LEVEL_SALT.wrapping_add(level as u64);
        let c = count.draw(&mut SmallRng::seed_from_u64(hash_of(parent, salt)));
        let mut out: Vec<(CqlValue, u64)> = Vec::with_capacity(c);
        let mut seen = std::collections::HashSet::with_capacity(c);
        for i in 0..c as u64 {
            let mut r = SmallRng::seed_from_u64(hash_of(parent ^ salt, i));
            let (v, n) = gens.value_and_n(*g, &mut r);
            let n = n.map_or(i, |n| n as u64);
            if seen.insert(n) {
                out.push((v, hash_of(parent, n)));
            }
        }
        out
    }

    fn fill(&self, gens: &GeneratorSet, level: usize, parent: u64, prefix: &mut Vec<CqlValue>, out: &mut Vec<Vec<CqlValue>>) {
        if level == self.levels.len() {
            out.push(prefix.clone());
            return;
        }
        for (v, child) in self.level_values(gens, level, parent) {
            prefix.push(v);
            self.fill(gens, level + 1, child, prefix, out);
            prefix.pop();
        }
    }
}

/// A hash of a value's content.
fn value_hash(v: &CqlValue) -> u64 {
    let text = format!("{v:?}");
    mix64(text.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01B3)))
}

/// Which of `groups` first-level values one visit takes: each with `chance`; when none was
/// taken before the last, the last is (cassandra-stress's `PartitionIterator`).
fn pick_groups(groups: usize, chance: f64, rng: &mut SmallRng) -> Vec<bool> {
    let mut picked = Vec::with_capacity(groups);
    let mut any = false;
    for i in 0..groups {
        let take = chance > 0.99999 || chance >= rng.gen::<f64>() || (!any && i + 1 == groups);
        any |= take;
        picked.push(take);
    }
    picked
}

impl GenError {
    /// The message with its field, without the generator's name (for settings that are not a
    /// generator).
    fn message_with_field(&self) -> String {
        match &self.field {
            Some(f) => format!("{f}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gens(yaml: &str) -> GeneratorSet {
        GeneratorSet::build(&crate::yaml::from_str(yaml).unwrap()).unwrap()
    }

    const GENS: &str = "seed: { type: bigint, dist: sequence, min: 1, max: 1001 }\nname: { type: text, min: 1, max: 101, size: 8 }\nday: { type: int, min: 0, max: 1000000 }\nt: { type: int, min: 0, max: 1000000 }\n";

    fn spec(yaml: &str) -> RowsSpec {
        crate::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn a_seed_always_makes_the_same_partition() {
        let g = gens(GENS);
        let m = RowsMaker::build(&spec("{ seed: seed, key: [name], levels: [day, t], counts: { day: { dist: uniform, min: 2, max: 6 }, t: 3 } }"), &g).unwrap();
        let (k1, rows1) = m.partition(&g, 42);
        let (k2, rows2) = m.partition(&g, 42);
        assert_eq!((k1, rows1.clone()), (k2, rows2));
        assert!((2..6).contains(&rows1.len()), "{} days", rows1.len());
        assert!(rows1.iter().all(|d| d.len() == 3 && d.iter().all(|r| r.len() == 2 && r[0] == d[0][0])));
        // 100 names: seeds beyond 100 meet partitions again, with the same rows
        let names: std::collections::BTreeSet<String> = (0..2000).map(|s| format!("{:?}", m.partition(&g, s).0)).collect();
        assert!((80..=100).contains(&names.len()), "{} distinct keys", names.len());
    }

    #[test]
    fn select_takes_first_level_values_with_its_chance_and_the_last_when_none() {
        let g = gens(GENS);
        // one level of 3 rows, half each: 0.5 + 0.5 + (0.75 × 0.5 + 0.25) = 1.625 rows a visit
        let m = RowsMaker::build(&spec("{ seed: seed, key: [name], levels: [t], counts: { t: 3 }, select: { share: 1, per: 2 } }"), &g).unwrap();
        let mut rng = SmallRng::seed_from_u64(7);
        let visits: Vec<Visit> = (0..20_000).flat_map(|_| m.write(&g, &mut rng)).collect();
        let mean = visits.iter().map(|v| v.rows.len()).sum::<usize>() as f64 / visits.len() as f64;
        assert!((mean - 1.625).abs() < 0.03, "{mean}");
        assert!(visits.iter().all(|v| !v.rows.is_empty()));
        // partitions per execution drawn per execution
        let m = RowsMaker::build(&spec("{ seed: seed, key: [name], partitions: { dist: uniform, min: 1, max: 5 } }"), &g).unwrap();
        let n: Vec<usize> = (0..4000).map(|_| m.write(&g, &mut rng).len()).collect();
        let mean = n.iter().sum::<usize>() as f64 / n.len() as f64;
        assert!((mean - 2.5).abs() < 0.1 && n.iter().all(|k| (1..5).contains(k)), "{mean}");
    }

    #[test]
    fn a_read_binds_a_row_that_exists() {
        let g = gens(GENS);
        let m = RowsMaker::build(&spec("{ seed: seed, key: [name], levels: [day], counts: { day: 4 } }"), &g).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let v = m.read(&g, &mut rng);
        let (key, groups) = m.partition(&g, 1);
        assert_eq!(v.key, key);
        assert!(groups.iter().flatten().any(|r| *r == v.rows[0]));
        assert_eq!((m.place(g.index_of("name").unwrap()), m.place(g.index_of("day").unwrap())), (Some(Ok(0)), Some(Err(0))));
    }

    #[test]
    fn mistakes_are_named() {
        let g = gens(GENS);
        let e = |y: &str| RowsMaker::build(&spec(y), &g).unwrap_err();
        assert!(e("{ seed: nope, key: [name] }").contains("rows.seed: no generator \"nope\""));
        assert!(e("{ seed: seed, key: [seed] }").contains("is a sequence"));
        assert!(e("{ seed: seed, key: [name], counts: { t: 2 } }").contains("not one of rows.levels"));
        assert!(e("{ seed: seed, key: [name], select: { share: 1, per: 0 } }").contains("per must be above 0"));
    }
}
