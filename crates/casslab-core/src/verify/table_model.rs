//! What a verified table's rows hold, whatever the server: its key (the generators each key
//! column is drawn from, all making the same values, and the index of a key in the write
//! record), its columns (the generators each is written from), and from these the values a
//! write of a key sends ([`Table::write_value`]) and the check of a row read back
//! ([`Table::check_row`]): each column matched to the write that made it, searching the writes a
//! read may see first, then the load's, then older ones. A CQL table and a Redis key space are
//! both a [`Table`]; the targets build them from their statements and commands.

use super::classify::Found;
use super::record::{KeyState, Order, WriteRecord, MAX_KEYS};
use super::write_values::{key_bits, same_opt, table_seed, write_bits};
use crate::gen::GeneratorSet;
use scylla::value::CqlValue;

/// Most writes of one key a column is compared with before it is called corrupt.
const SEARCH_WRITES: u32 = 1 << 20;

/// Most keys of one partition a read of several rows is checked against.
pub const PARTITION_KEYS: u64 = 4096;

/// One key column: the generators that draw it (making the same values) and its domain.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyPart {
    pub column: String,
    pub gens: Vec<usize>,
    /// The lowest `n` any of them draws, and how many values from there (`None`: unbounded).
    pub base: i64,
    pub span: Option<u64>,
}

/// One value column: the generators its recorded writes bind to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub gens: Vec<usize>,
    /// Written by the load's operation only, which the run phase does not run: for a loaded
    /// key, only write 1 can have made it.
    pub load_only: bool,
    /// May read back as no value: some write leaves it out, or rows are deleted.
    pub nullable: bool,
}

/// One verified table (or key space) and its write record.
pub struct Table {
    pub name: String,
    pub seed: u64,
    pub key: Vec<KeyPart>,
    pub columns: Vec<Column>,
    pub record: WriteRecord,
    /// The columns each kind of upsert writes (indexes into `columns`).
    pub writes: Vec<Vec<usize>>,
    /// Every recorded write writes every column (or deletes the row): a key first written
    /// now needs nothing known from before.
    pub full_rows: bool,
    /// Some recorded write deletes rows.
    pub deletes: bool,
    /// How the server stores a value, when it keeps bytes rather than typed values (Redis):
    /// values read back are then blobs of these bytes.
    pub bytes: Option<fn(&CqlValue) -> Vec<u8>>,
    /// Identifies what the table's writes write (key, columns and the values their generators
    /// make, which writes write which columns): a record saved under another model (another
    /// workload's writes to the same data) cannot be gone on from.
    pub model: u64,
    /// When its rows expire (every upsert's TTL): when each key's floor write was made.
    pub times: Option<super::expiry::WriteTimes>,
    /// A counter table: the sums of each key's increments (its one column is the counter).
    pub counters: Option<super::counters::CounterRecord>,
    /// Per key column, its values back to their `n` (made when a read of several rows first
    /// needs them; key columns of at most [`PARTITION_KEYS`] values).
    inverse: Vec<std::sync::OnceLock<std::collections::HashMap<String, i64>>>,
}

/// How one column of a row read back compares with the writes of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnMatch {
    /// The value of this write.
    Write(u32),
    /// No value, which the column may have.
    Null,
    /// None of the writes searched made it.
    NoMatch,
}

impl Table {
    /// A table of `key` columns and value `columns`, whose upserts write `writes` (each a set of
    /// columns); its record spans the keys the domains allow.
    pub fn new(name: &str, key: Vec<KeyPart>, columns: Vec<Column>, writes: Vec<Vec<usize>>) -> Table {
        let keys = capacity(&key);
        let full_rows = writes.iter().all(|w| w.len() == columns.len());
        let record = WriteRecord::new(keys, Order::Timestamps);
        let inverse = key.iter().map(|_| std::sync::OnceLock::new()).collect();
        Table {
            name: name.to_string(),
            seed: table_seed(name),
            key,
            record,
            columns,
            writes,
            full_rows,
            deletes: false,
            bytes: None,
            model: 0,
            times: None,
            counters: None,
            inverse,
        }
    }

    /// The table, its rows expiring `ttl_s` seconds after each write.
    pub fn expiring(mut self, ttl_s: u32) -> Table {
        self.times = Some(super::expiry::WriteTimes::new(self.record.capacity(), ttl_s));
        self
    }

    /// The table, its server ordering a key's writes by `order` (timestamps unless told).
    pub fn ordered_by(mut self, order: Order) -> Table {
        self.record = WriteRecord::new(self.record.capacity(), order);
        self
    }

    /// The model's identity from what the generators make (see [`Table::model`]).
    pub fn model_of(&self, gens: &GeneratorSet) -> u64 {
        let mut text = String::new();
        let content = |g: usize| [0i64, 1, 2, 1_000_003].iter().map(|n| format!("{:?}", gens.value_at(g, *n))).collect::<Vec<_>>().join(",");
        for p in &self.key {
            text.push_str(&format!("key {} {} {:?} {};", p.column, p.base, p.span, content(p.gens[0])));
        }
        for c in &self.columns {
            let mut gs: Vec<String> = c.gens.iter().map(|g| content(*g)).collect();
            gs.sort();
            text.push_str(&format!("col {} {} {} {};", c.name, c.load_only, c.nullable, gs.join("|")));
        }
        text.push_str(&format!("writes {:?}", self.writes));
        table_seed(&text)
    }

    /// Whether every upsert writes one of the columns `read`, so that a row whose columns all
    /// predate the floor shows none of the writes since.
    pub fn shows_every_write(&self, read: &[usize]) -> bool {
        !self.writes.is_empty() && self.writes.iter().all(|w| w.iter().any(|c| read.contains(c)))
    }

    /// The record index of the key whose parts were drawn as `ns` (`None`: outside the record).
    pub fn index(&self, ns: &[i64]) -> Option<u64> {
        let mut index: u64 = 0;
        for (i, (part, n)) in self.key.iter().zip(ns).enumerate() {
            let off = u64::try_from(n.checked_sub(part.base)?).ok()?;
            if i > 0 {
                let span = part.span?;
                if off >= span {
                    return None;
                }
                index = index.checked_mul(span)?.checked_add(off)?;
            } else {
                index = off;
            }
        }
        (index < self.record.capacity()).then_some(index)
    }

    /// The `n` of key column `part`'s value `v` (`None`: no value its generator makes, or a
    /// column of more than [`PARTITION_KEYS`] values).
    pub fn n_of(&self, gens: &GeneratorSet, part: usize, v: &CqlValue) -> Option<i64> {
        let p = self.key.get(part)?;
        let span = p.span.filter(|s| *s <= PARTITION_KEYS)?;
        let map = self.inverse[part].get_or_init(|| (0..span as i64).map(|i| (format!("{:?}", gens.value_at(p.gens[0], p.base + i)), p.base + i)).collect());
        map.get(&format!("{v:?}")).copied()
    }

    /// The record indexes of the keys of the partition whose leading key columns were drawn as
    /// `prefix`: `(first, count)` (`None`: beyond the record, or more than [`PARTITION_KEYS`]).
    pub fn partition_range(&self, prefix: &[i64]) -> Option<(u64, u64)> {
        let rest = self.key.get(prefix.len()..)?;
        let count = rest.iter().try_fold(1u64, |acc, p| p.span.and_then(|s| acc.checked_mul(s)))?;
        if count > PARTITION_KEYS || rest.is_empty() {
            return None;
        }
        let first: Vec<i64> = prefix.iter().copied().chain(rest.iter().map(|p| p.base)).collect();
        Some((self.index(&first)?, count))
    }

    /// The `n` of each key part of record index `index` (the inverse of [`Table::index`]).
    pub fn key_ns(&self, index: u64) -> Vec<i64> {
        let mut rest = index;
        let mut out = vec![0i64; self.key.len()];
        for (i, part) in self.key.iter().enumerate().rev() {
            let off = if i == 0 { rest } else { rest % part.span.unwrap_or(u64::MAX) };
            if i > 0 {
                rest /= part.span.unwrap_or(u64::MAX);
            }
            out[i] = part.base.wrapping_add(off as i64);
        }
        out
    }

    /// The key values of record index `index`, as the key columns' first generators make them.
    pub fn key_values(&self, gens: &GeneratorSet, index: u64) -> Vec<CqlValue> {
        self.key_ns(index).iter().zip(&self.key).map(|(n, p)| gens.value_at(p.gens[0], *n)).collect()
    }

    /// The bits a key's values are made from.
    pub fn key_bits(&self, ns: &[i64]) -> u64 {
        key_bits(self.seed, ns)
    }

    /// The value generator `g` makes for write `w` of the key with bits `key`.
    #[inline]
    pub fn write_value(&self, gens: &GeneratorSet, g: usize, key: u64, w: u32) -> CqlValue {
        gens.value_from_bits(g, write_bits(key, w))
    }

    /// Which write made column `col`'s value `got` (the writes a read may see, from `lo` to
    /// `hi`, first; for a loaded key, write 1; then the older ones).
    pub fn match_column(&self, gens: &GeneratorSet, col: usize, key: u64, lo: u32, hi: u32, got: Option<&CqlValue>) -> ColumnMatch {
        let c = &self.columns[col];
        if got.is_none() && c.nullable {
            return ColumnMatch::Null;
        }
        let matches = |w: u32| {
            c.gens.iter().any(|g| {
                let v = self.write_value(gens, *g, key, w);
                match self.bytes {
                    Some(encode) => matches!(got, Some(CqlValue::Blob(b)) if *b == encode(&v)),
                    None => same_opt(Some(&v), got),
                }
            })
        };
        if c.load_only {
            return if hi >= 1 && matches(1) { ColumnMatch::Write(1) } else { ColumnMatch::NoMatch };
        }
        let lo = lo.clamp(1, hi.max(1));
        if let Some(w) = (lo..=hi).rev().find(|w| matches(*w)) {
            return ColumnMatch::Write(w);
        }
        if lo > 1 && matches(1) {
            return ColumnMatch::Write(1);
        }
        let oldest = lo.saturating_sub(SEARCH_WRITES).max(2);
        match (oldest..lo).rev().find(|w| matches(*w)) {
            Some(w) => ColumnMatch::Write(w),
            None => ColumnMatch::NoMatch,
        }
    }

    /// Checks a row read back for the key with bits `key`, its `columns` as (column index,
    /// value) pairs: the newest write its columns show, or the first column that matches no
    /// write (with what came back in it).
    pub fn check_row<'v>(
        &self,
        gens: &GeneratorSet,
        key: u64,
        at_send: &KeyState,
        issued: u32,
        columns: impl Iterator<Item = (usize, Option<&'v CqlValue>)>,
    ) -> (Found, Option<usize>) {
        let mut newest: Option<u32> = None;
        for (col, got) in columns {
            match self.match_column(gens, col, key, at_send.floor, issued, got) {
                ColumnMatch::Write(w) => newest = Some(newest.map_or(w, |n| n.max(w))),
                ColumnMatch::Null => {}
                ColumnMatch::NoMatch => return (Found::Row { newest, corrupt: true }, Some(col)),
            }
        }
        (Found::Row { newest, corrupt: false }, None)
    }

    /// Whether every upsert writes column `col` (a row then always holds it).
    pub fn always_written(&self, col: usize) -> bool {
        !self.writes.is_empty() && self.writes.iter().all(|w| w.contains(&col))
    }

    /// The index of the value column `name`, if the table has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// How many keys a record of these key parts spans: the first part's span (or all a record
/// holds) times the spans of the others (which must be bounded).
fn capacity(key: &[KeyPart]) -> u64 {
    let first = key.first().and_then(|p| p.span).unwrap_or(MAX_KEYS);
    key.iter().skip(1).try_fold(first, |acc, p| p.span.and_then(|s| acc.checked_mul(s))).unwrap_or(0).min(MAX_KEYS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::record::WriteKind;

    fn gens() -> GeneratorSet {
        let yaml = "k: { type: bigint, dist: sequence, min: 10, max: 110 }\nv: { type: text, size: 16 }\nw: { type: blob, size: 8 }\nc: { type: int, min: 0, max: 24 }";
        GeneratorSet::build(&crate::yaml::from_str(yaml).unwrap()).unwrap()
    }

    fn part(gens: &GeneratorSet, name: &str) -> KeyPart {
        let g = gens.index_of(name).unwrap();
        let (base, span) = gens.domain(g);
        KeyPart { column: name.into(), gens: vec![g], base, span }
    }

    fn table(gens: &GeneratorSet) -> Table {
        let cols = vec![
            Column { name: "v".into(), gens: vec![gens.index_of("v").unwrap()], load_only: false, nullable: false },
            Column { name: "w".into(), gens: vec![gens.index_of("w").unwrap()], load_only: true, nullable: false },
        ];
        Table::new("t", vec![part(gens, "k")], cols, vec![vec![0, 1], vec![0]])
    }

    #[test]
    fn keys_index_the_record_by_their_parts() {
        let g = gens();
        let t = table(&g);
        assert_eq!((t.index(&[10]), t.index(&[109]), t.index(&[9])), (Some(0), Some(99), None));
        assert_eq!(t.record.capacity(), 100);
        let t = table(&g);
        let two = Table::new("t2", vec![part(&g, "k"), part(&g, "c")], vec![], vec![]);
        assert_eq!(two.record.capacity(), 100 * 24);
        assert_eq!((two.index(&[10, 0]), two.index(&[11, 3]), two.index(&[11, 24])), (Some(0), Some(27), None));
        assert_eq!((two.key_ns(27), two.key_ns(0), t.key_ns(99)), (vec![11, 3], vec![10, 0], vec![109]), "indexes back to keys");
        assert_eq!(t.key_values(&g, 0), [CqlValue::BigInt(10)]);
        let unbounded = KeyPart { column: "x".into(), gens: vec![0], base: 0, span: None };
        assert_eq!(Table::new("t3", vec![part(&g, "k"), unbounded.clone()], vec![], vec![]).record.capacity(), 0, "a later part must be bounded");
        assert_eq!(Table::new("t4", vec![unbounded], vec![], vec![]).record.capacity(), MAX_KEYS);
        assert!(t.shows_every_write(&[0]) && t.shows_every_write(&[0, 1]) && !t.shows_every_write(&[1]), "the second upsert writes only column 0");
        assert!(!t.full_rows);
    }

    #[test]
    fn columns_are_matched_to_the_write_that_made_them() {
        let g = gens();
        let t = table(&g);
        let (v, w) = (g.index_of("v").unwrap(), g.index_of("w").unwrap());
        let key = t.key_bits(&[42]);
        let at = |n| t.write_value(&g, v, key, n);
        assert_ne!(at(1), at(2), "each write makes other values");
        assert_eq!(t.match_column(&g, 0, key, 5, 6, Some(&at(6))), ColumnMatch::Write(6));
        assert_eq!(t.match_column(&g, 0, key, 5, 6, Some(&at(5))), ColumnMatch::Write(5));
        assert_eq!(t.match_column(&g, 0, key, 5, 6, Some(&at(3))), ColumnMatch::Write(3), "older than the floor: found by the search");
        assert_eq!(t.match_column(&g, 0, key, 5, 6, Some(&at(1))), ColumnMatch::Write(1));
        assert_eq!(t.match_column(&g, 0, key, 5, 6, Some(&at(7))), ColumnMatch::NoMatch, "a write not made yet");
        assert_eq!(t.match_column(&g, 0, key, 5, 6, Some(&CqlValue::Text("x".into()))), ColumnMatch::NoMatch);
        assert_eq!(t.match_column(&g, 0, key, 5, 6, None), ColumnMatch::NoMatch, "not nullable");
        assert_eq!(t.match_column(&g, 0, t.key_bits(&[43]), 5, 6, Some(&at(6))), ColumnMatch::NoMatch, "another key's value");
        let loaded = t.write_value(&g, w, key, 1);
        assert_eq!(t.match_column(&g, 1, key, 5, 6, Some(&loaded)), ColumnMatch::Write(1), "a load-only column");
        assert_eq!(t.match_column(&g, 1, key, 5, 6, Some(&t.write_value(&g, w, key, 6))), ColumnMatch::NoMatch);
    }

    #[test]
    fn a_row_shows_its_newest_write_or_its_corrupt_column() {
        let g = gens();
        let t = table(&g);
        let (v, w) = (g.index_of("v").unwrap(), g.index_of("w").unwrap());
        let key = t.key_bits(&[42]);
        t.record.mark_loaded(32);
        let b = t.record.begin(32, WriteKind::Put).unwrap();
        t.record.finish(32, &b, true);
        let s = t.record.state(32);
        let (v2, w1) = (t.write_value(&g, v, key, 2), t.write_value(&g, w, key, 1));
        let (found, bad) = t.check_row(&g, key, &s, s.issued, [(0, Some(&v2)), (1, Some(&w1))].into_iter());
        assert_eq!((found, bad), (Found::Row { newest: Some(2), corrupt: false }, None));
        let v1 = t.write_value(&g, v, key, 1);
        let (found, _) = t.check_row(&g, key, &s, s.issued, [(0, Some(&v1)), (1, Some(&w1))].into_iter());
        assert_eq!(found, Found::Row { newest: Some(1), corrupt: false }, "stale: the classifier's call");
        let junk = CqlValue::Blob(vec![1, 2, 3]);
        let (found, bad) = t.check_row(&g, key, &s, s.issued, [(0, Some(&v2)), (1, Some(&junk))].into_iter());
        assert_eq!((found, bad), (Found::Row { newest: Some(2), corrupt: true }, Some(1)));
    }
}
