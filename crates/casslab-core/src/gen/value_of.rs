//! Turning a drawn `n` into a CQL value: the hashing that makes content a function of
//! (generator name, n), the per-type rules (text, blob, uuid, timeuuid, timestamp, date, time,
//! decimal, inet, ...), collections with distinct set elements and map keys, tuples and
//! user-defined types. Which rules apply to a generator is
//! decided when the set is built (`set.rs`); `start:` dates are read by `crate::units`.

use super::dist::{Dist, Drawn};
use super::hashing::{hash_of, mix64, Stream};
use super::types::CqlType;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use scylla::value::{Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue, CqlVarint};
use std::cmp::Ordering;
use std::fmt::Write;

/// 2020-01-01T00:00:00Z, the default `start` of timestamps, timeuuids and dates.
pub(crate) const DEFAULT_START_MS: i64 = 1_577_836_800_000;

const DAY_MS: i64 = 86_400_000;

/// The `step_ms` of a type when none is given: a day per `n` for dates, 1 ms otherwise.
pub(crate) fn default_step_ms(ty: &CqlType) -> i64 {
    if *ty == CqlType::Date {
        DAY_MS
    } else {
        1
    }
}

/// The `start` of a type when none is given: 2020-01-01 for points in time, 0 for `time` of
/// day and `duration`.
pub(crate) fn default_start_ms(ty: &CqlType) -> i64 {
    match ty {
        CqlType::Time | CqlType::Duration => 0,
        _ => DEFAULT_START_MS,
    }
}

const SIZE_SALT: u64 = 0x5349_5a45_5349_5a45;
const UUID_SALT: u64 = 0x5555_4944_5555_4944;
const KEY_SALT: u64 = 0x4b45_594b_4559_4b45;
const VALUE_SALT: u64 = 0x5641_4c55_4556_414c;

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Appends `len` alphanumeric characters derived from `seed`, ten per 64-bit step.
fn push_alnum(out: &mut String, seed: u64, len: usize) {
    let mut stream = Stream(seed);
    let mut left = len;
    while left > 0 {
        let mut bits = stream.next();
        for _ in 0..left.min(10) {
            out.push(ALNUM[(bits % 62) as usize] as char);
            bits /= 62;
        }
        left = left.saturating_sub(10);
    }
}

fn bytes_of(seed: u64, len: usize) -> Vec<u8> {
    let mut stream = Stream(seed);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&stream.next().to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A length: fixed, or drawn from a distribution seeded by the value's hash, so a value stays a
/// function of (name, n) even when its size varies.
#[derive(Debug, Clone)]
pub(crate) enum Size {
    Fixed(usize),
    Drawn(Box<Dist>),
}

impl Size {
    #[inline]
    fn get(&self, hash: u64) -> usize {
        match self {
            Size::Fixed(n) => *n,
            Size::Drawn(d) => match d.draw(&mut SmallRng::seed_from_u64(mix64(hash ^ SIZE_SALT))) {
                Drawn::Int(n) => n.max(0) as usize,
                Drawn::Float(f) => f.max(0.0) as usize,
            },
        }
    }
}

/// How a simple (non-collection) value is made.
#[derive(Debug, Clone)]
pub(crate) struct Simple {
    pub ty: CqlType,
    pub prefix: String,
    pub size: Option<Size>,
    pub start_ms: i64,
    pub step_ms: i64,
}

impl Simple {
    /// The value for `n` (or the float a gaussian drew, for `double`), with content from `hash`.
    pub(crate) fn render(&self, n: i64, float: Option<f64>, hash: u64) -> CqlValue {
        match self.ty {
            CqlType::Text => {
                let len = self.size.as_ref().map(|s| s.get(hash));
                let mut s = String::with_capacity(self.prefix.len() + len.unwrap_or(20));
                s.push_str(&self.prefix);
                match len {
                    Some(len) => push_alnum(&mut s, hash, len),
                    None => write!(s, "{n}").expect("writing to a String cannot fail"),
                }
                CqlValue::Text(s)
            }
            CqlType::Blob => match &self.size {
                Some(size) => CqlValue::Blob(bytes_of(hash, size.get(hash))),
                None => CqlValue::Blob(n.to_be_bytes().to_vec()),
            },
            CqlType::Int => CqlValue::Int(n as i32),
            CqlType::BigInt => CqlValue::BigInt(n),
            CqlType::SmallInt => CqlValue::SmallInt(n as i16),
            CqlType::TinyInt => CqlValue::TinyInt(n as i8),
            CqlType::Counter => CqlValue::Counter(Counter(n)),
            CqlType::Varint => CqlValue::Varint(CqlVarint::from_signed_bytes_be(n.to_be_bytes().to_vec())),
            CqlType::Double => CqlValue::Double(float.unwrap_or(n as f64)),
            CqlType::Float => CqlValue::Float(float.unwrap_or(n as f64) as f32),
            // hundredths: n = 1234 is 12.34 (a gaussian's float is rounded to hundredths)
            CqlType::Decimal => {
                let cents = float.map_or(n, |f| (f * 100.0).round() as i64);
                CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(cents.to_be_bytes().to_vec(), 2))
            }
            CqlType::Inet => CqlValue::Inet(std::net::IpAddr::V4(std::net::Ipv4Addr::from(n as u32))),
            CqlType::Date => CqlValue::Date(CqlDate(((1i64 << 31) + self.time_ms(n).div_euclid(DAY_MS)) as u32)),
            CqlType::Time => CqlValue::Time(CqlTime(self.time_ms(n).rem_euclid(DAY_MS) * 1_000_000)),
            CqlType::Duration => CqlValue::Duration(CqlDuration { months: 0, days: 0, nanoseconds: self.time_ms(n).saturating_mul(1_000_000) }),
            CqlType::Boolean => CqlValue::Boolean(hash & 1 == 1),
            CqlType::Uuid => {
                let mut b = [0u8; 16];
                b[..8].copy_from_slice(&hash.to_be_bytes());
                b[8..].copy_from_slice(&mix64(hash ^ UUID_SALT).to_be_bytes());
                CqlValue::Uuid(uuid::Builder::from_random_bytes(b).into_uuid())
            }
            CqlType::TimeUuid => CqlValue::Timeuuid(timeuuid(self.time_ms(n), hash)),
            CqlType::Timestamp => CqlValue::Timestamp(CqlTimestamp(self.time_ms(n))),
            CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. } | CqlType::Tuple(_) | CqlType::Udt { .. } | CqlType::Vector { .. } => {
                unreachable!("collections, tuples, user-defined types and vectors are rendered by Body")
            }
        }
    }

    fn time_ms(&self, n: i64) -> i64 {
        self.start_ms.saturating_add(n.saturating_mul(self.step_ms))
    }

    /// The element number for an element hash: non-negative, within what the type holds
    /// (int: [0, 2^31); timestamp/timeuuid: under 2^40 steps, ~35 years at 1 ms).
    #[inline]
    fn element_n(&self, hash: u64) -> i64 {
        let m = hash >> 2;
        match self.ty {
            CqlType::Int => (m % (1 << 31)) as i64,
            CqlType::SmallInt => (m % (1 << 15)) as i64,
            CqlType::TinyInt => (m % (1 << 7)) as i64,
            CqlType::Inet => (m % (1 << 32)) as i64,
            CqlType::Date => (m % (1 << 16)) as i64,
            CqlType::Time => (m % DAY_MS as u64) as i64,
            CqlType::Timestamp | CqlType::TimeUuid | CqlType::Duration => (m % (1 << 40)) as i64,
            _ => m as i64,
        }
    }

    fn element(&self, hash: u64) -> CqlValue {
        self.render(self.element_n(hash), None, hash)
    }
}

/// A v1 uuid whose time is `ms` after the Unix epoch (mod 2^60 ticks of 100 ns), with clock
/// sequence and node (multicast bit set, as for random nodes) from `hash`.
pub(crate) fn timeuuid(ms: i64, hash: u64) -> CqlTimeuuid {
    let ticks = ((ms as i128 + 12_219_292_800_000) * 10_000) as u64 & ((1 << 60) - 1);
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&(ticks as u32).to_be_bytes());
    b[4..6].copy_from_slice(&((ticks >> 32) as u16).to_be_bytes());
    b[6..8].copy_from_slice(&(((ticks >> 48) as u16 & 0x0FFF) | 0x1000).to_be_bytes());
    let clock_node = mix64(hash ^ UUID_SALT);
    b[8..16].copy_from_slice(&clock_node.to_be_bytes());
    b[8] = (b[8] & 0x3F) | 0x80;
    b[10] |= 0x01;
    CqlTimeuuid::from(uuid::Uuid::from_bytes(b))
}

/// What a generator makes: a simple value or a collection of simple values.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    Simple(Simple),
    List {
        size: Size,
        element: Simple,
    },
    Set {
        size: Size,
        element: Simple,
    },
    Map {
        size: Size,
        key: Simple,
        value: Simple,
    },
    Tuple(Vec<Simple>),
    /// A user-defined type: its keyspace (set when the workload's is known), name and fields.
    Udt {
        keyspace: String,
        name: String,
        fields: Vec<(String, Simple)>,
    },
    /// `values:` — item `n mod len` of the list.
    Values(std::sync::Arc<[CqlValue]>),
    /// `vector<float, N>`.
    Vector(std::sync::Arc<super::vectors::VectorBody>),
}

impl Body {
    /// The content hash of a drawn value under `seed`, and its `n`.
    #[inline]
    fn hashed(drawn: Drawn, seed: u64) -> (i64, Option<f64>, u64) {
        match drawn {
            Drawn::Int(n) => (n, None, hash_of(seed, n as u64)),
            Drawn::Float(f) => (f as i64, Some(f), hash_of(seed, f.to_bits())),
        }
    }

    /// Fills `out` with the vector a vector body makes for `drawn`; false for any other body.
    pub(crate) fn fill_vector(&self, drawn: Drawn, seed: u64, out: &mut [f32]) -> bool {
        let Body::Vector(v) = self else { return false };
        let (n, _, hash) = Body::hashed(drawn, seed);
        v.fill(seed, n, hash, out);
        true
    }

    pub(crate) fn render(&self, drawn: Drawn, seed: u64) -> CqlValue {
        let (n, float, hash) = Body::hashed(drawn, seed);
        match self {
            Body::Simple(s) => s.render(n, float, hash),
            Body::Values(v) => v[n.rem_euclid(v.len() as i64) as usize].clone(),
            Body::Vector(v) => v.value(seed, n, hash),
            Body::List { size, element } => CqlValue::List((0..size.get(hash) as u64).map(|i| element.element(hash_of(hash, i))).collect()),
            Body::Set { size, element } => {
                let mut v: Vec<CqlValue> = (0..size.get(hash) as u64).map(|i| element.element(hash_of(hash, i))).collect();
                v.sort_unstable_by(cmp_simple);
                v.dedup();
                CqlValue::Set(v)
            }
            Body::Map { size, key, value } => {
                let mut v: Vec<(CqlValue, CqlValue)> = (0..size.get(hash) as u64)
                    .map(|i| {
                        let h = hash_of(hash, i);
                        (key.element(mix64(h ^ KEY_SALT)), value.element(mix64(h ^ VALUE_SALT)))
                    })
                    .collect();
                v.sort_unstable_by(|a, b| cmp_simple(&a.0, &b.0));
                v.dedup_by(|a, b| a.0 == b.0);
                CqlValue::Map(v)
            }
            Body::Tuple(elements) => CqlValue::Tuple(elements.iter().enumerate().map(|(i, e)| Some(e.element(hash_of(hash, i as u64)))).collect()),
            Body::Udt { keyspace, name, fields } => CqlValue::UserDefinedType {
                keyspace: keyspace.clone(),
                name: name.clone(),
                fields: fields.iter().enumerate().map(|(i, (f, e))| (f.clone(), Some(e.element(hash_of(hash, i as u64))))).collect(),
            },
        }
    }
}

/// A total order on the simple values generators make, consistent with their equality
/// (and with Cassandra's order for timeuuids), used to find duplicates in sets and maps.
fn cmp_simple(a: &CqlValue, b: &CqlValue) -> Ordering {
    match (a, b) {
        (CqlValue::Text(x), CqlValue::Text(y)) => x.cmp(y),
        (CqlValue::Blob(x), CqlValue::Blob(y)) => x.cmp(y),
        (CqlValue::Int(x), CqlValue::Int(y)) => x.cmp(y),
        (CqlValue::BigInt(x), CqlValue::BigInt(y)) => x.cmp(y),
        (CqlValue::Double(x), CqlValue::Double(y)) => x.total_cmp(y),
        (CqlValue::Boolean(x), CqlValue::Boolean(y)) => x.cmp(y),
        (CqlValue::Uuid(x), CqlValue::Uuid(y)) => x.cmp(y),
        (CqlValue::Timeuuid(x), CqlValue::Timeuuid(y)) => x.cmp(y),
        (CqlValue::Timestamp(x), CqlValue::Timestamp(y)) => x.0.cmp(&y.0),
        (CqlValue::Float(x), CqlValue::Float(y)) => x.total_cmp(y),
        (CqlValue::SmallInt(x), CqlValue::SmallInt(y)) => x.cmp(y),
        (CqlValue::TinyInt(x), CqlValue::TinyInt(y)) => x.cmp(y),
        (CqlValue::Date(x), CqlValue::Date(y)) => x.0.cmp(&y.0),
        (CqlValue::Time(x), CqlValue::Time(y)) => x.0.cmp(&y.0),
        (CqlValue::Inet(x), CqlValue::Inet(y)) => x.cmp(y),
        (CqlValue::Counter(x), CqlValue::Counter(y)) => x.0.cmp(&y.0),
        // decimals, varints and durations: any total order consistent with equality
        (a, b) => format!("{a:?}").cmp(&format!("{b:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::hashing::name_seed;
    use super::*;

    #[test]
    fn timeuuid_carries_its_time() {
        for ms in [0i64, DEFAULT_START_MS, DEFAULT_START_MS + 123_456_789, -5_000] {
            let u = uuid::Uuid::from_bytes(*timeuuid(ms, 42).as_bytes());
            assert_eq!(u.get_version_num(), 1);
            assert_eq!(u.get_variant(), uuid::Variant::RFC4122);
            let (secs, nanos) = u.get_timestamp().unwrap().to_unix();
            if ms >= 0 {
                assert_eq!(secs as i64 * 1000 + nanos as i64 / 1_000_000, ms);
            }
        }
        assert_ne!(timeuuid(0, 1), timeuuid(0, 2), "same time, different hash: distinct uuids");
    }

    #[test]
    fn alnum_and_bytes_have_the_asked_length() {
        for len in [0usize, 1, 9, 10, 11, 100] {
            let mut s = String::new();
            push_alnum(&mut s, 7, len);
            assert_eq!(s.len(), len);
            assert!(s.bytes().all(|c| c.is_ascii_alphanumeric()));
            assert_eq!(bytes_of(7, len).len(), len);
        }
        let mut a = String::new();
        push_alnum(&mut a, 1, 30);
        let mut b = String::new();
        push_alnum(&mut b, 2, 30);
        assert_ne!(a, b);
        // All 62 characters are in use.
        let mut s = String::new();
        push_alnum(&mut s, 3, 10_000);
        let distinct: std::collections::BTreeSet<char> = s.chars().collect();
        assert_eq!(distinct.len(), 62);
    }

    #[test]
    fn name_seeds_differ() {
        assert_ne!(name_seed("a"), name_seed("b"));
        assert_ne!(hash_of(name_seed("a"), 1), hash_of(name_seed("a"), 2));
    }
}
