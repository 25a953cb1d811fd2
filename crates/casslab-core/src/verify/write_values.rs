//! Values that can be computed again: a verified write's values are a function of its key and
//! its write number (the 64 bits [`write_bits`] makes, which each generator spreads over its
//! own domain), so a reader knows what any write of a key held without anything stored. Also
//! comparing a value read back with the one computed, as the server returns it (sets and maps
//! in the server's order, user-defined types with every field, varints without leading bytes,
//! an empty collection as no value), and showing a value in a violation.

use crate::gen::hashing::{mix64, name_seed, GOLDEN};
use scylla::value::CqlValue;

/// A table's (or a Redis key space's) seed, from its name.
pub fn table_seed(name: &str) -> u64 {
    name_seed(name)
}

/// A row's identity: its table's seed and the `n` of each key column's value.
#[inline]
pub fn key_bits(table: u64, ns: &[i64]) -> u64 {
    ns.iter().fold(mix64(table ^ GOLDEN), |h, n| mix64(h ^ mix64((*n as u64).wrapping_add(GOLDEN))))
}

/// The bits a row's write number `w` makes its values from.
#[inline]
pub fn write_bits(key: u64, w: u32) -> u64 {
    mix64(key ^ mix64((w as u64).wrapping_mul(GOLDEN) ^ 0x5752_4954_4557_5254))
}

/// Whether `got`, as the server returned it, is the value `expected` that casslab wrote.
pub fn same(expected: &CqlValue, got: &CqlValue) -> bool {
    use CqlValue as V;
    match (expected, got) {
        (V::Text(a) | V::Ascii(a), V::Text(b) | V::Ascii(b)) => a == b,
        (V::Varint(a), V::Varint(b)) => trimmed(a.as_signed_bytes_be_slice()) == trimmed(b.as_signed_bytes_be_slice()),
        (V::Decimal(a), V::Decimal(b)) => {
            let ((ab, ae), (bb, be)) = (a.as_signed_be_bytes_slice_and_exponent(), b.as_signed_be_bytes_slice_and_exponent());
            ae == be && trimmed(ab) == trimmed(bb)
        }
        (V::Set(a) | V::List(a), V::Set(b) | V::List(b)) if matches!(expected, V::Set(_)) => same_unordered(a, b),
        (V::List(a), V::List(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (V::Map(a), V::Map(b)) => {
            a.len() == b.len() && {
                let mut b: Vec<&(CqlValue, CqlValue)> = b.iter().collect();
                a.iter().all(|(k, v)| match b.iter().position(|(k2, _)| same(k, k2)) {
                    Some(i) => same(v, &b.swap_remove(i).1),
                    None => false,
                })
            }
        }
        (V::Tuple(a), V::Tuple(b)) => {
            let n = a.len().max(b.len());
            (0..n).all(|i| same_opt(a.get(i).and_then(Option::as_ref), b.get(i).and_then(Option::as_ref)))
        }
        (V::UserDefinedType { name: an, fields: af, .. }, V::UserDefinedType { name: bn, fields: bf, .. }) => {
            an.eq_ignore_ascii_case(bn) && af.iter().chain(bf).all(|(f, _)| same_opt(field(af, f), field(bf, f)))
        }
        _ => expected == got,
    }
}

/// Whether an optional value matches, an empty collection counting as no value (the server
/// stores an empty collection as nothing).
pub fn same_opt(expected: Option<&CqlValue>, got: Option<&CqlValue>) -> bool {
    match (expected.filter(|v| !is_empty_collection(v)), got.filter(|v| !is_empty_collection(v))) {
        (None, None) => true,
        (Some(e), Some(g)) => same(e, g),
        _ => false,
    }
}

/// A user-defined type's field by name (`None`: null or absent).
fn field<'a>(fields: &'a [(String, Option<CqlValue>)], name: &str) -> Option<&'a CqlValue> {
    fields.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.as_ref())
}

fn is_empty_collection(v: &CqlValue) -> bool {
    matches!(v, CqlValue::List(x) | CqlValue::Set(x) if x.is_empty()) || matches!(v, CqlValue::Map(m) if m.is_empty())
}

fn same_unordered(a: &[CqlValue], b: &[CqlValue]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut rest: Vec<&CqlValue> = b.iter().collect();
    a.iter().all(|x| match rest.iter().position(|y| same(x, y)) {
        Some(i) => {
            rest.swap_remove(i);
            true
        }
        None => false,
    })
}

/// A two's complement big-endian number without the leading bytes that only repeat its sign.
fn trimmed(b: &[u8]) -> &[u8] {
    let mut s = b;
    while s.len() > 1 && ((s[0] == 0 && s[1] & 0x80 == 0) || (s[0] == 0xFF && s[1] & 0x80 != 0)) {
        s = &s[1..];
    }
    s
}

/// Longest text of a value shown in a violation.
const SHOWN_CHARS: usize = 48;

/// A value as a violation shows it: text and numbers as they are, bytes in hex, shortened.
pub fn show(v: Option<&CqlValue>) -> String {
    let full = match v {
        None => "null".to_string(),
        Some(CqlValue::Text(s) | CqlValue::Ascii(s)) => format!("{s:?}"),
        // bytes that read as text (a Redis value) as text, others in hex
        Some(CqlValue::Blob(b)) if !b.is_empty() && b.iter().all(|c| c.is_ascii_graphic() || *c == b' ') => format!("{:?}", String::from_utf8_lossy(b)),
        Some(CqlValue::Blob(b)) => format!("0x{}", b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
        Some(CqlValue::Int(n)) => n.to_string(),
        Some(CqlValue::BigInt(n)) => n.to_string(),
        Some(CqlValue::Uuid(u)) => u.to_string(),
        Some(other) => format!("{other:?}"),
    };
    shorten(&full)
}

/// `s` cut to [`SHOWN_CHARS`] characters, with an ellipsis when cut.
pub fn shorten(s: &str) -> String {
    match s.char_indices().nth(SHOWN_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::value::{CqlDecimal, CqlVarint};

    #[test]
    fn bits_depend_on_table_key_and_write() {
        let (t, u) = (table_seed("kv"), table_seed("usertable"));
        assert_ne!(t, u);
        assert_eq!(key_bits(t, &[42]), key_bits(t, &[42]));
        assert_ne!(key_bits(t, &[42]), key_bits(u, &[42]));
        assert_ne!(key_bits(t, &[1, 2]), key_bits(t, &[2, 1]));
        let k = key_bits(t, &[42]);
        assert_ne!(write_bits(k, 1), write_bits(k, 2));
        assert_eq!(write_bits(k, 7), write_bits(k, 7));
    }

    #[test]
    fn values_compare_as_the_server_returns_them() {
        use CqlValue as V;
        assert!(same(&V::Text("a".into()), &V::Ascii("a".into())));
        assert!(!same(&V::Text("a".into()), &V::Text("b".into())));
        // sets and maps in another order, a set read back as a list
        let set = V::Set(vec![V::Int(3), V::Int(1), V::Int(2)]);
        assert!(same(&set, &V::Set(vec![V::Int(1), V::Int(2), V::Int(3)])));
        assert!(same(&set, &V::List(vec![V::Int(2), V::Int(3), V::Int(1)])));
        assert!(!same(&set, &V::Set(vec![V::Int(1), V::Int(2)])));
        assert!(!same(&V::List(vec![V::Int(1), V::Int(2)]), &V::List(vec![V::Int(2), V::Int(1)])), "a list keeps its order");
        let map = V::Map(vec![(V::Text("b".into()), V::Int(2)), (V::Text("a".into()), V::Int(1))]);
        assert!(same(&map, &V::Map(vec![(V::Text("a".into()), V::Int(1)), (V::Text("b".into()), V::Int(2))])));
        assert!(!same(&map, &V::Map(vec![(V::Text("a".into()), V::Int(2)), (V::Text("b".into()), V::Int(1))])));
        // numbers with leading sign bytes
        let v8 = V::Varint(CqlVarint::from_signed_bytes_be(5i64.to_be_bytes().to_vec()));
        assert!(same(&v8, &V::Varint(CqlVarint::from_signed_bytes_be(vec![5]))));
        let neg = V::Varint(CqlVarint::from_signed_bytes_be((-200i64).to_be_bytes().to_vec()));
        assert!(same(&neg, &V::Varint(CqlVarint::from_signed_bytes_be(vec![0xFF, 0x38]))));
        assert!(!same(&neg, &V::Varint(CqlVarint::from_signed_bytes_be(vec![0x38]))));
        let d = V::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(1234i64.to_be_bytes().to_vec(), 2));
        assert!(same(&d, &V::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(vec![0x04, 0xD2], 2))));
        // a user-defined type read back with every field, ours null where not generated
        let ours = V::UserDefinedType { keyspace: "ks".into(), name: "address".into(), fields: vec![("zip".into(), Some(V::Int(7)))] };
        let theirs =
            V::UserDefinedType { keyspace: "ks".into(), name: "address".into(), fields: vec![("street".into(), None), ("zip".into(), Some(V::Int(7)))] };
        assert!(same(&ours, &theirs));
        let other = V::UserDefinedType {
            keyspace: "ks".into(),
            name: "address".into(),
            fields: vec![("street".into(), Some(V::Text("x".into()))), ("zip".into(), Some(V::Int(7)))],
        };
        assert!(!same(&ours, &other));
        // an empty collection is stored as nothing
        assert!(same_opt(Some(&V::List(vec![])), None));
        assert!(!same_opt(Some(&V::Int(1)), None));
        assert!(same(&V::Tuple(vec![Some(V::Int(1)), None]), &V::Tuple(vec![Some(V::Int(1))])));
    }

    #[test]
    fn violations_show_values_short() {
        assert_eq!(show(Some(&CqlValue::Blob(vec![0, 1, 0xab]))), "0x0001ab");
        assert_eq!(show(Some(&CqlValue::Blob(b"garbage".to_vec()))), "\"garbage\"");
        assert_eq!(show(None), "null");
        assert_eq!(show(Some(&CqlValue::Text("user42".into()))), "\"user42\"");
        let long = show(Some(&CqlValue::Text("x".repeat(100))));
        assert_eq!(long.chars().count(), SHOWN_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
