//! The vectors a vector search searches, as the write record says they are now: per key the
//! record knows, the vector of the write its row holds — the floor, the newest write
//! acknowledged (a key whose writes all failed is left out: it may not exist) — recomputed from
//! the key and that write's number by the column's generator. Refreshing compares each key's write with the one its
//! vector was made from, so only keys written since are recomputed. A returned row is mapped
//! back to its key's index: directly for an integer key whose value is its number, else
//! through a map of the keys' values.

use super::exact::norm;
use super::Similarity;
use crate::gen::GeneratorSet;
use crate::verify::write_values::write_bits;
use crate::verify::Table;
use scylla::value::CqlValue;
use std::collections::HashMap;
use std::sync::Arc;

/// Which vectors: the table, its vector column's generator, and how the index compares them.
#[derive(Clone)]
pub struct CorpusSpec {
    pub table: Arc<Table>,
    /// The table's place in the verifier (whether its record is trusted).
    pub table_index: usize,
    /// The generator that makes the vector column's values.
    pub generator: usize,
    pub dims: usize,
    pub similarity: Similarity,
}

/// The vectors of the keys written, kept up to date from the record.
pub struct Corpus {
    pub spec: CorpusSpec,
    gens: Arc<GeneratorSet>,
    pub vectors: Vec<f32>,
    pub norms: Vec<f32>,
    pub present: Vec<bool>,
    /// The write each key's vector was made from (0: none).
    at: Vec<u32>,
    /// Keys present.
    count: u64,
    /// Key values (as text) to index, for keys that are not their own number.
    by_key: Option<HashMap<String, u32>>,
    /// One integer key column whose value is the key's number.
    int_keys: bool,
}

impl Corpus {
    pub fn new(spec: CorpusSpec, gens: Arc<GeneratorSet>) -> Corpus {
        let int_keys = spec.table.key.len() == 1 && {
            let g = spec.table.key[0].gens[0];
            [0i64, 1, 77, 65_537].iter().all(|n| int_of(&gens.value_at(g, *n)) == Some(*n))
        };
        Corpus { spec, gens, vectors: Vec::new(), norms: Vec::new(), present: Vec::new(), at: Vec::new(), count: 0, by_key: None, int_keys }
    }

    /// Vectors present now.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Brings every key's vector up to the write its row holds now.
    pub fn refresh(&mut self) {
        let (dims, t) = (self.spec.dims, self.spec.table.clone());
        for (key, s) in t.record.known() {
            let w = s.floor;
            let gone = w == 0 || (s.delete && !s.put);
            let i = key as usize;
            if i >= self.at.len() {
                if gone {
                    continue;
                }
                self.at.resize(i + 1, 0);
                self.present.resize(i + 1, false);
                self.norms.resize(i + 1, 0.0);
                self.vectors.resize((i + 1) * dims, 0.0);
            }
            if gone {
                if self.present[i] {
                    self.present[i] = false;
                    self.count -= 1;
                }
                continue;
            }
            if self.at[i] == w && self.present[i] {
                continue;
            }
            let bits = write_bits(t.key_bits(&t.key_ns(key)), w);
            let v = &mut self.vectors[i * dims..(i + 1) * dims];
            self.gens.vector_from_bits(self.spec.generator, bits, v);
            self.norms[i] = norm(v);
            self.at[i] = w;
            if !self.present[i] {
                self.present[i] = true;
                self.count += 1;
                if let Some(map) = self.by_key.as_mut() {
                    map.insert(key_text(&t.key_values(&self.gens, key)), i as u32);
                }
            }
        }
    }

    /// The index of the key whose columns came back as `key` (`None`: not a key written).
    pub fn index_of(&mut self, key: &[CqlValue]) -> Option<u32> {
        let t = &self.spec.table;
        if self.int_keys {
            let n = int_of(key.first()?)?;
            return t.index(&[n]).map(|i| i as u32).filter(|i| self.present.get(*i as usize).copied().unwrap_or(false));
        }
        if self.by_key.is_none() {
            let map = (0..self.present.len()).filter(|i| self.present[*i]).map(|i| (key_text(&t.key_values(&self.gens, i as u64)), i as u32)).collect();
            self.by_key = Some(map);
        }
        self.by_key.as_ref().and_then(|m| m.get(&key_text(key)).copied())
    }

    /// The vector of index `i`.
    pub fn vector(&self, i: u32) -> &[f32] {
        let d = self.spec.dims;
        &self.vectors[i as usize * d..(i as usize + 1) * d]
    }
}

fn int_of(v: &CqlValue) -> Option<i64> {
    match v {
        CqlValue::BigInt(n) => Some(*n),
        CqlValue::Int(n) => Some(*n as i64),
        CqlValue::SmallInt(n) => Some(*n as i64),
        CqlValue::TinyInt(n) => Some(*n as i64),
        _ => None,
    }
}

fn key_text(values: &[CqlValue]) -> String {
    format!("{values:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{Column, KeyPart, WriteKind};

    fn corpus(key_type: &str) -> (Corpus, Arc<Table>) {
        let yaml = format!("k: {{ type: {key_type}, dist: sequence, min: 0, max: 100 }}\nv: {{ type: \"vector<float, 4>\" }}");
        let gens = Arc::new(GeneratorSet::build(&crate::yaml::from_str(&yaml).unwrap()).unwrap());
        let (k, v) = (gens.index_of("k").unwrap(), gens.index_of("v").unwrap());
        let (base, span) = gens.domain(k);
        let table = Arc::new(Table::new(
            "vectors",
            vec![KeyPart { column: "id".into(), gens: vec![k], base, span }],
            vec![Column { name: "v".into(), gens: vec![v], load_only: false, nullable: false }],
            vec![vec![0]],
        ));
        let spec = CorpusSpec { table: table.clone(), table_index: 0, generator: v, dims: 4, similarity: Similarity::Euclidean };
        (Corpus::new(spec, gens), table)
    }

    #[test]
    fn the_corpus_follows_the_record() {
        let (mut c, t) = corpus("bigint");
        for k in 0..10 {
            t.record.mark_loaded(k);
        }
        c.refresh();
        assert_eq!(c.len(), 10);
        let before = c.vector(3).to_vec();
        let expected = {
            let mut v = vec![0f32; 4];
            c.gens.vector_from_bits(c.spec.generator, write_bits(t.key_bits(&[3]), 1), &mut v);
            v
        };
        assert_eq!(before, expected, "the load's write 1");
        // an update in flight: the row still holds write 1 for the corpus
        let w = t.record.begin(3, WriteKind::Put).unwrap();
        c.refresh();
        assert_eq!(c.vector(3), &before[..]);
        t.record.finish(3, &w, true);
        c.refresh();
        assert_ne!(c.vector(3), &before[..], "write 2 acknowledged: its vector");
        // a key whose only write failed may not exist: not searched
        let w = t.record.begin(20, WriteKind::Put).unwrap();
        t.record.finish(20, &w, false);
        c.refresh();
        assert_eq!(c.index_of(&[CqlValue::BigInt(20)]), None);
        // a deleted key leaves the corpus
        let w = t.record.begin(4, WriteKind::Delete).unwrap();
        t.record.finish(4, &w, true);
        c.refresh();
        assert_eq!(c.len(), 9);
        assert_eq!(c.index_of(&[CqlValue::BigInt(4)]), None);
        assert_eq!(c.index_of(&[CqlValue::BigInt(5)]), Some(5));
        assert_eq!(c.index_of(&[CqlValue::BigInt(50)]), None, "never written");
    }

    #[test]
    fn keys_that_are_not_their_numbers_are_found_by_their_values() {
        let (mut c, t) = corpus("uuid");
        for k in 0..5 {
            t.record.mark_loaded(k);
        }
        c.refresh();
        let key = t.key_values(&c.gens, 2);
        assert_eq!(c.index_of(&key), Some(2));
        t.record.mark_loaded(7);
        c.refresh();
        assert_eq!(c.index_of(&t.key_values(&c.gens, 7)), Some(7), "keys written later are found too");
    }
}
