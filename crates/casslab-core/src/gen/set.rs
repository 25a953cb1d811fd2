//! [`GeneratorSet`]: all generators of a workload, built once (checks in `build.rs`), then shared
//! by the engine's workers. Drawing a value takes the worker's own `SmallRng` and touches no lock
//! (sequences share one atomic counter); nothing is allocated but the value itself.

use super::build::build_all;
use super::dist::{Dist, Drawn};
use super::hashing::name_seed;
use super::spec::GeneratorSpec;
use super::types::CqlType;
use super::value_of::Body;
use super::GenError;
use rand::rngs::SmallRng;
use scylla::value::CqlValue;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The generators of one workload, indexed in name order. Cloning shares sequence counters.
#[derive(Debug, Clone)]
pub struct GeneratorSet {
    gens: Vec<Generator>,
    /// Held by an execution that draws from several sequences (see [`GeneratorSet::joint_draw`]).
    joint: Arc<Mutex<()>>,
}

#[derive(Debug, Clone)]
struct Generator {
    name: String,
    seed: u64,
    ty: CqlType,
    dist: Dist,
    body: Body,
}

impl GeneratorSet {
    /// Checks and builds every spec; the first problem found is returned.
    pub fn build(specs: &BTreeMap<String, GeneratorSpec>) -> Result<GeneratorSet, GenError> {
        let gens =
            build_all(specs)?.into_iter().map(|b| Generator { seed: name_seed(&b.content_of), name: b.name, ty: b.ty, dist: b.dist, body: b.body }).collect();
        Ok(GeneratorSet { gens, joint: Arc::new(Mutex::new(())) })
    }

    /// The set with its user-defined types' values named in `keyspace` (the driver binds a
    /// user-defined type's value only to the type of that keyspace).
    pub fn in_keyspace(mut self, keyspace: &str) -> GeneratorSet {
        for g in &mut self.gens {
            if let Body::Udt { keyspace: ks, .. } = &mut g.body {
                *ks = keyspace.to_ascii_lowercase();
            }
        }
        self
    }

    pub fn len(&self) -> usize {
        self.gens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gens.is_empty()
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.gens.binary_search_by(|g| g.name.as_str().cmp(name)).ok()
    }

    /// Generator names, in index order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.gens.iter().map(|g| g.name.as_str())
    }

    /// # Panics
    /// If `idx` is not an index of this set.
    pub fn cql_type(&self, idx: usize) -> &CqlType {
        &self.gens[idx].ty
    }

    /// The seed generator `idx`'s content is made with (its name's, or that of the generator
    /// it makes the values of).
    ///
    /// # Panics
    /// If `idx` is not an index of this set.
    pub fn content_seed(&self, idx: usize) -> u64 {
        self.gens[idx].seed
    }

    /// Whether generator `idx` draws a sequence (a counter shared by every worker).
    pub fn is_sequence(&self, idx: usize) -> bool {
        self.gens[idx].dist.as_sequence().is_some()
    }

    /// Moves sequence `idx` on by `draws` values, as if they had been drawn (a shard of a
    /// sharded load starts at its slice). Does nothing to other generators.
    pub fn advance_sequence(&self, idx: usize, draws: u64) {
        if let Some(seq) = self.gens[idx].dist.as_sequence() {
            seq.count.fetch_add(draws, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Held while one execution draws from two or more sequences, so that concurrent
    /// executions cannot interleave their draws: `(sensor, ts)` from two sequences then pairs
    /// up as (n, n) and every combination is written once, as the workload meant.
    pub fn joint_draw(&self) -> MutexGuard<'_, ()> {
        self.joint.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next value of generator `idx`: draws `n` (advancing a sequence) and renders it.
    ///
    /// # Panics
    /// If `idx` is not an index of this set.
    #[inline]
    pub fn value(&self, idx: usize, rng: &mut SmallRng) -> CqlValue {
        let g = &self.gens[idx];
        g.body.render(g.dist.draw(rng), g.seed)
    }

    /// The next value of generator `idx` with the `n` it was made from (`None` for a float a
    /// `gaussian` drew): a key's value, which a checker finds its record by.
    ///
    /// # Panics
    /// If `idx` is not an index of this set.
    #[inline]
    pub fn value_and_n(&self, idx: usize, rng: &mut SmallRng) -> (CqlValue, Option<i64>) {
        let g = &self.gens[idx];
        let drawn = g.dist.draw(rng);
        let n = match drawn {
            Drawn::Int(n) => Some(n),
            Drawn::Float(_) => None,
        };
        (g.body.render(drawn, g.seed), n)
    }

    /// The values generator `idx` draws `n` from: the lowest, and how many (`None`: unbounded).
    pub fn domain(&self, idx: usize) -> (i64, Option<u64>) {
        self.gens[idx].dist.domain()
    }

    /// The value generator `idx` makes from the 64 bits `h` (spread over its domain, or over
    /// 2^62 values when it is unbounded): a value that is a function of a key and a write
    /// number, which a reader can compute again.
    #[inline]
    pub fn value_from_bits(&self, idx: usize, h: u64) -> CqlValue {
        let (min, span) = self.domain(idx);
        let span = span.filter(|s| *s > 0).unwrap_or(1 << 62);
        self.value_at(idx, min.wrapping_add((h % span) as i64))
    }

    /// Whether generators `a` and `b` make the same value for the same `n` (the same content:
    /// a number, an unsized text or blob, or `values_of` the same name), so that a key drawn by
    /// one names the row a key drawn by the other wrote.
    pub fn same_values(&self, a: usize, b: usize) -> bool {
        a == b || [0i64, 1, 7, 1_000, 65_537, 123_456_789].iter().all(|n| self.value_at(a, *n) == self.value_at(b, *n))
    }

    /// The dimensions of generator `idx`'s vectors (`None`: it makes no vectors).
    pub fn vector_dims(&self, idx: usize) -> Option<usize> {
        match self.gens[idx].ty {
            CqlType::Vector { dims } => Some(dims as usize),
            _ => None,
        }
    }

    /// Fills `out` with the vector generator `idx` makes from the 64 bits `h` (as
    /// [`GeneratorSet::value_from_bits`] would, without the CQL value); false when it makes no
    /// vectors.
    #[inline]
    pub fn vector_from_bits(&self, idx: usize, h: u64, out: &mut [f32]) -> bool {
        let (min, span) = self.domain(idx);
        let span = span.filter(|s| *s > 0).unwrap_or(1 << 62);
        let g = &self.gens[idx];
        g.body.fill_vector(Drawn::Int(min.wrapping_add((h % span) as i64)), g.seed, out)
    }

    /// The value generator `idx` makes for `n`, without drawing: lets a checker recompute what
    /// was written. (A `double` gaussian draws floats, for which this gives `n as f64`.)
    ///
    /// # Panics
    /// If `idx` is not an index of this set.
    pub fn value_at(&self, idx: usize, n: i64) -> CqlValue {
        let g = &self.gens[idx];
        g.body.render(Drawn::Int(n), g.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn vectors_from_bits_are_the_values_and_values_of_makes_the_same_vectors() {
        let g = set("v: { type: \"vector<float, 16>\", vector: { kind: clustered, centroids: 5 } }\nq: { type: \"vector<float, 16>\", values_of: v }");
        let (v, q) = (g.index_of("v").unwrap(), g.index_of("q").unwrap());
        assert_eq!(g.vector_dims(v), Some(16));
        let mut out = vec![0f32; 16];
        assert!(g.vector_from_bits(v, 12345, &mut out));
        assert_eq!(crate::gen::floats_of(&g.value_from_bits(v, 12345)), Some(out.clone()));
        assert!(g.same_values(v, q), "q makes v's vectors");
        let w = set("v: { type: \"vector<float, 16>\", vector: { kind: clustered, centroids: 5 } }\nq: { type: \"vector<float, 16>\", vector: { kind: clustered, centroids: 5 } }");
        assert!(!w.same_values(0, 1), "another name, other centres");
    }

    /// The example from the workload reference, all types and distributions at once.
    const EXAMPLE: &str = r#"
insert_key: { type: text, prefix: "user", dist: sequence, min: 0, max: 100000 }
read_key:   { type: text, prefix: "user", dist: zipfian, theta: 0.99, min: 0, max: 100000 }
new_key:    { type: text, prefix: "user", dist: sequence, min: 100000 }
recent_key: { type: text, prefix: "user", dist: latest, follows: new_key, theta: 0.99 }
field:      { type: text, size: 100 }
payload:    { type: blob, size: { dist: uniform, min: 10, max: 1000 } }
scan_len:   { type: int, dist: uniform, min: 1, max: 100 }
hot:        { type: bigint, dist: hotspot, min: 0, max: 1000000, hot_fraction: 0.2, hot_ops: 0.8 }
temp:       { type: double, dist: gaussian, mean: 20.0, stddev: 5.0 }
tags:       { type: "set<text>", size: 5, element: { size: 8 } }
bins:       { type: "frozen<list<int>>", size: 100 }
attrs:      { type: "map<text,bigint>", size: { dist: uniform, min: 1, max: 10 } }
id:         { type: uuid }
ts:         { type: timestamp, dist: sequence, start: "2026-01-01T00:00:00Z", step_ms: 1000 }
tu:         { type: timeuuid }
flag:       { type: boolean }
emb:        { type: "vector<float, 8>", vector: { kind: clustered, centroids: 3, spread: 0.1, normalize: true } }
"#;

    fn set(yaml: &str) -> GeneratorSet {
        GeneratorSet::build(&crate::yaml::from_str(yaml).unwrap()).unwrap()
    }

    fn rng() -> SmallRng {
        SmallRng::seed_from_u64(11)
    }

    fn text(v: CqlValue) -> String {
        match v {
            CqlValue::Text(s) => s,
            other => panic!("expected text, got {other:?}"),
        }
    }

    #[test]
    fn every_type_makes_its_variant_and_size() {
        let g = set(EXAMPLE);
        let mut rng = rng();
        let mut v = |name: &str| g.value(g.index_of(name).unwrap(), &mut rng);
        assert_eq!(text(v("insert_key")), "user0");
        assert_eq!(text(v("insert_key")), "user1");
        let read: u64 = text(v("read_key")).strip_prefix("user").unwrap().parse().unwrap();
        assert!(read < 100_000);
        for _ in 0..10 {
            v("new_key");
        }
        for _ in 0..100 {
            let n: u64 = text(v("recent_key")).strip_prefix("user").unwrap().parse().unwrap();
            assert!((100_000..100_010).contains(&n), "latest read {n}, sequence at 100009");
        }
        let field = text(v("field"));
        assert!(field.len() == 100 && field.bytes().all(|c| c.is_ascii_alphanumeric()));
        for _ in 0..50 {
            match v("payload") {
                CqlValue::Blob(b) => assert!((10..1000).contains(&b.len()), "{}", b.len()),
                other => panic!("{other:?}"),
            }
            assert!(matches!(v("scan_len"), CqlValue::Int(n) if (1..100).contains(&n)));
            assert!(matches!(v("hot"), CqlValue::BigInt(n) if (0..1_000_000).contains(&n)));
            assert!(matches!(v("temp"), CqlValue::Double(x) if x.fract() != 0.0), "gaussian doubles are not rounded");
            match v("tags") {
                CqlValue::Set(s) => {
                    assert!(!s.is_empty() && s.len() <= 5);
                    assert!(s.iter().all(|e| matches!(e, CqlValue::Text(t) if t.len() == 8)));
                }
                other => panic!("{other:?}"),
            }
            match v("bins") {
                CqlValue::List(l) => {
                    assert_eq!(l.len(), 100);
                    assert!(l.iter().all(|e| matches!(e, CqlValue::Int(n) if *n >= 0)));
                }
                other => panic!("{other:?}"),
            }
            match v("attrs") {
                CqlValue::Map(m) => {
                    assert!((1..10).contains(&m.len()));
                    assert!(m.iter().all(|(k, v)| matches!((k, v), (CqlValue::Text(_), CqlValue::BigInt(_)))));
                }
                other => panic!("{other:?}"),
            }
            match v("id") {
                CqlValue::Uuid(u) => assert_eq!(u.get_version_num(), 4),
                other => panic!("{other:?}"),
            }
            match v("tu") {
                CqlValue::Timeuuid(u) => assert_eq!(uuid::Uuid::from_bytes(*u.as_bytes()).get_version_num(), 1),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(v("ts"), CqlValue::Timestamp(scylla::value::CqlTimestamp(1_767_225_600_000)));
        match v("emb") {
            CqlValue::Vector(items) => assert!(items.len() == 8 && items.iter().all(|x| matches!(x, CqlValue::Float(_)))),
            other => panic!("{other:?}"),
        }
        assert_eq!(v("ts"), CqlValue::Timestamp(scylla::value::CqlTimestamp(1_767_225_601_000)));
        let flags: Vec<CqlValue> = (0..64).map(|_| v("flag")).collect();
        assert!(flags.contains(&CqlValue::Boolean(true)) && flags.contains(&CqlValue::Boolean(false)));
    }

    #[test]
    fn values_are_functions_of_name_and_n() {
        let g = set(EXAMPLE);
        let idx = |name| g.index_of(name).unwrap();
        assert_eq!(g.value_at(idx("insert_key"), 42), CqlValue::Text("user42".into()));
        assert_eq!(g.value_at(idx("scan_len"), 42), CqlValue::Int(42));
        assert_eq!(g.value_at(idx("temp"), 42), CqlValue::Double(42.0));
        assert_eq!(g.value_at(idx("ts"), 3), CqlValue::Timestamp(scylla::value::CqlTimestamp(1_767_225_603_000)));
        // Sized content and drawn sizes repeat for the same n.
        for name in ["field", "payload", "tags", "attrs", "id", "tu", "flag"] {
            assert_eq!(g.value_at(idx(name), 7), g.value_at(idx(name), 7), "{name}");
        }
        assert_ne!(g.value_at(idx("field"), 7), g.value_at(idx("field"), 8));
        // Two generators with the same spec but different names differ for the same n.
        let two = set("a: { type: text, size: 16 }\nb: { type: text, size: 16 }\nu: { type: uuid }\nv: { type: uuid }");
        assert_ne!(two.value_at(0, 5), two.value_at(1, 5));
        assert_ne!(two.value_at(2, 5), two.value_at(3, 5));
        let blob = set("b: { type: blob }");
        assert_eq!(blob.value_at(0, 258), CqlValue::Blob(vec![0, 0, 0, 0, 0, 0, 1, 2]));
    }

    #[test]
    fn values_of_makes_another_generators_values() {
        let g = set("insert_id: { type: uuid, dist: sequence, max: 100 }\nid: { type: uuid, max: 100 }\nkey: { type: uuid, max: 100, values_of: insert_id }\nk2: { type: uuid, max: 100, values_of: key }");
        let idx = |name| g.index_of(name).unwrap();
        assert_ne!(g.value_at(idx("insert_id"), 7), g.value_at(idx("id"), 7), "content is a function of the name");
        assert_eq!(g.value_at(idx("insert_id"), 7), g.value_at(idx("key"), 7));
        assert_eq!(g.value_at(idx("insert_id"), 7), g.value_at(idx("k2"), 7), "a chain ends at the first name");
    }

    #[test]
    fn newer_types_render_from_n() {
        use scylla::value::{CqlDate, CqlTime};
        let g = set(r#"
f: { type: float }
s: { type: smallint, min: -5, max: 5 }
t: { type: tinyint }
d: { type: date, start: "2026-01-01" }
tm: { type: time, step_ms: 1000 }
dec: { type: decimal }
vi: { type: varint }
ip: { type: inet }
du: { type: duration, step_ms: 60000 }
c: { type: counter, min: 1, max: 2 }
tu: { type: "tuple<int, text, date>" }
addr: { type: "frozen<address>", fields: { street: { type: text, size: 12 }, zip: { type: int } } }
ips: { type: "set<inet>", size: 3 }
"#)
        .in_keyspace("KS");
        let idx = |name| g.index_of(name).unwrap();
        assert_eq!(g.value_at(idx("f"), 3), CqlValue::Float(3.0));
        assert_eq!(g.value_at(idx("s"), -3), CqlValue::SmallInt(-3));
        assert_eq!(g.value_at(idx("t"), 100), CqlValue::TinyInt(100));
        // 2026-01-01 is day 20454 since the epoch; the driver counts from 2^31 days before it
        assert_eq!(g.value_at(idx("d"), 2), CqlValue::Date(CqlDate((1 << 31) + 20_454 + 2)));
        assert_eq!(g.value_at(idx("tm"), 90), CqlValue::Time(CqlTime(90_000_000_000)));
        assert_eq!(g.value_at(idx("tm"), 86_401), CqlValue::Time(CqlTime(1_000_000_000)), "time wraps at midnight");
        assert_eq!(
            format!("{:?}", g.value_at(idx("dec"), 1234)),
            format!("{:?}", CqlValue::Decimal(scylla::value::CqlDecimal::from_signed_be_bytes_and_exponent(1234i64.to_be_bytes().to_vec(), 2)))
        );
        assert!(matches!(g.value_at(idx("vi"), 9), CqlValue::Varint(_)));
        assert_eq!(g.value_at(idx("ip"), 0x0A00_0001), CqlValue::Inet("10.0.0.1".parse().unwrap()));
        assert!(matches!(g.value_at(idx("du"), 2), CqlValue::Duration(d) if d.nanoseconds == 120_000_000_000));
        let mut r = rng();
        assert!((0..20).all(|_| g.value(idx("c"), &mut r) == CqlValue::Counter(scylla::value::Counter(1))));
        match g.value_at(idx("tu"), 5) {
            CqlValue::Tuple(t) => assert!(matches!(t.as_slice(), [Some(CqlValue::Int(_)), Some(CqlValue::Text(_)), Some(CqlValue::Date(_))])),
            other => panic!("{other:?}"),
        }
        match g.value_at(idx("addr"), 5) {
            CqlValue::UserDefinedType { keyspace, name, fields } => {
                assert_eq!((keyspace.as_str(), name.as_str()), ("ks", "address"));
                assert!(
                    matches!(fields.as_slice(), [(s, Some(CqlValue::Text(t))), (z, Some(CqlValue::Int(_)))] if s == "street" && t.len() == 12 && z == "zip")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(g.value_at(idx("ips"), 1), CqlValue::Set(s) if !s.is_empty()));
        assert_eq!(g.cql_type(idx("addr")).to_string(), "frozen<address>");
    }

    #[test]
    fn same_seed_same_values() {
        let draw_all = |seed| {
            let g = set(EXAMPLE);
            let mut rng = SmallRng::seed_from_u64(seed);
            (0..20).flat_map(|_| (0..g.len()).map(|i| g.value(i, &mut rng)).collect::<Vec<_>>()).collect::<Vec<_>>()
        };
        assert_eq!(draw_all(1), draw_all(1));
        assert_ne!(draw_all(1), draw_all(2));
    }

    #[test]
    fn sets_and_maps_have_distinct_keys() {
        let g = set("b: { type: \"set<boolean>\", size: 20 }\ni: { type: \"set<int>\", size: 1000 }\nm: { type: \"map<boolean, int>\", size: 10 }\nt: { type: \"set<text>\", size: 300, element: { size: 1 } }");
        for n in 0..20 {
            match g.value_at(0, n) {
                CqlValue::Set(s) => assert!(s.len() <= 2 && !s.is_empty() && (s.len() == 1 || s[0] != s[1])),
                other => panic!("{other:?}"),
            }
            match g.value_at(1, n) {
                CqlValue::Set(s) => {
                    assert!(s.windows(2).all(|w| matches!((&w[0], &w[1]), (CqlValue::Int(a), CqlValue::Int(b)) if a < b)));
                    assert!(s.len() > 990, "collisions among 1000 random i31 are rare");
                }
                other => panic!("{other:?}"),
            }
            match g.value_at(2, n) {
                CqlValue::Map(m) => assert!(m.len() <= 2 && (m.len() == 1 || m[0].0 != m[1].0)),
                other => panic!("{other:?}"),
            }
            match g.value_at(3, n) {
                CqlValue::Set(s) => assert!(s.len() <= 62 && s.windows(2).all(|w| w[0] != w[1])),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn an_advanced_sequence_continues_where_another_loader_stops() {
        let whole = set("k: { type: bigint, dist: sequence, min: 100, max: 110 }");
        let drawn: Vec<_> = (0..10).map(|_| whole.value(0, &mut rng())).collect();
        let shard = set("k: { type: bigint, dist: sequence, min: 100, max: 110 }");
        shard.advance_sequence(0, 6);
        assert_eq!(shard.value(0, &mut rng()), drawn[6]);
        assert_eq!(shard.value(0, &mut rng()), drawn[7]);
        let uniform = set("u: { type: bigint, dist: uniform, min: 0, max: 5 }");
        uniform.advance_sequence(0, 3);
    }

    #[test]
    fn clones_share_sequences() {
        let a = set("k: { type: bigint, dist: sequence, min: 5, max: 8 }");
        let b = a.clone();
        let mut rng = rng();
        let seen: Vec<CqlValue> = (0..5).map(|i| if i % 2 == 0 { a.value(0, &mut rng) } else { b.value(0, &mut rng) }).collect();
        let n = |v| CqlValue::BigInt(v);
        assert_eq!(seen, [n(5), n(6), n(7), n(5), n(6)]);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let s = std::sync::Arc::new(a.clone());
                std::thread::spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(t);
                    (0..300).for_each(|_| drop(s.value(0, &mut rng)));
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        // 5 + 1200 draws over a span of 3: the next is 5 + 1205 % 3.
        assert_eq!(a.value(0, &mut rng), n(5 + 1205 % 3));
    }

    #[test]
    fn joint_draws_of_two_sequences_pair_up() {
        let set =
            set("a: { type: bigint, dist: sequence, min: 0 }\nb: { type: bigint, dist: sequence, min: 0 }\nc: { type: bigint, dist: uniform, min: 0, max: 9 }");
        assert!(set.is_sequence(0) && set.is_sequence(1) && !set.is_sequence(2));
        let set = std::sync::Arc::new(set);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let s = set.clone();
                std::thread::spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(t);
                    (0..2000)
                        .map(|_| {
                            let _joint = s.joint_draw();
                            (s.value(0, &mut rng), s.value(1, &mut rng))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut firsts = Vec::new();
        for t in threads {
            for (a, b) in t.join().unwrap() {
                assert_eq!(a, b, "a pair drawn together came apart");
                firsts.push(a);
            }
        }
        firsts.sort_by_key(|v| format!("{v:020?}"));
        firsts.dedup();
        assert_eq!(firsts.len(), 8000, "every n drawn exactly once");
    }

    #[test]
    fn lookup_by_name_and_type() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<GeneratorSet>();
        let g = set(EXAMPLE);
        let names: Vec<&str> = g.names().collect();
        assert_eq!(names.len(), 17);
        assert!(names.windows(2).all(|w| w[0] < w[1]));
        for (i, name) in names.iter().enumerate() {
            assert_eq!(g.index_of(name), Some(i));
        }
        assert_eq!(g.index_of("nope"), None);
        assert_eq!(g.cql_type(g.index_of("bins").unwrap()).to_string(), "frozen<list<int>>");
        assert_eq!(*g.cql_type(g.index_of("field").unwrap()), CqlType::Text);
        assert!(GeneratorSet::build(&BTreeMap::new()).unwrap().is_empty());
    }
}
