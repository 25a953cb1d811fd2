//! `values:` — a generator that makes the values listed, the `n`-th drawn value being item
//! `n mod len` (with `dist: sequence`, the list in order: how a replay binds the values a
//! capture recorded). Items are written as YAML scalars in the type's usual form (`42`,
//! `"text"`, `true`, a uuid, a time as Unix milliseconds or RFC 3339, an address), or as
//! `0x…`: the value's bytes as the CQL protocol serializes them (what a full query log holds).

use super::spec::Scalar;
use super::types::CqlType;
use scylla::value::{Counter, CqlDate, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue};

fn hex(s: &str) -> Result<Vec<u8>, String> {
    let h = s.trim().trim_start_matches("0x");
    if !h.len().is_multiple_of(2) || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("\"{s}\" is not hex bytes (0x…)"));
    }
    Ok((0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("checked")).collect())
}

fn fixed<const N: usize>(b: &[u8], ty: &CqlType) -> Result<[u8; N], String> {
    b.try_into().map_err(|_| format!("{ty} is {N} bytes, got {}", b.len()))
}

/// A value of `ty` from its serialized bytes.
fn from_bytes(ty: &CqlType, b: &[u8]) -> Result<CqlValue, String> {
    Ok(match ty {
        CqlType::Text => CqlValue::Text(String::from_utf8(b.to_vec()).map_err(|_| "text that is not UTF-8".to_string())?),
        CqlType::Blob => CqlValue::Blob(b.to_vec()),
        CqlType::Int => CqlValue::Int(i32::from_be_bytes(fixed(b, ty)?)),
        CqlType::BigInt => CqlValue::BigInt(i64::from_be_bytes(fixed(b, ty)?)),
        CqlType::Counter => CqlValue::Counter(Counter(i64::from_be_bytes(fixed(b, ty)?))),
        CqlType::SmallInt => CqlValue::SmallInt(i16::from_be_bytes(fixed(b, ty)?)),
        CqlType::TinyInt => CqlValue::TinyInt(i8::from_be_bytes(fixed(b, ty)?)),
        CqlType::Double => CqlValue::Double(f64::from_be_bytes(fixed(b, ty)?)),
        CqlType::Float => CqlValue::Float(f32::from_be_bytes(fixed(b, ty)?)),
        CqlType::Boolean => CqlValue::Boolean(fixed::<1>(b, ty)?[0] != 0),
        CqlType::Uuid => CqlValue::Uuid(uuid::Uuid::from_bytes(fixed(b, ty)?)),
        CqlType::TimeUuid => CqlValue::Timeuuid(CqlTimeuuid::from_bytes(fixed(b, ty)?)),
        CqlType::Timestamp => CqlValue::Timestamp(CqlTimestamp(i64::from_be_bytes(fixed(b, ty)?))),
        CqlType::Date => CqlValue::Date(CqlDate(u32::from_be_bytes(fixed(b, ty)?))),
        CqlType::Time => CqlValue::Time(CqlTime(i64::from_be_bytes(fixed(b, ty)?))),
        CqlType::Inet => match b.len() {
            4 => CqlValue::Inet(std::net::IpAddr::from(fixed::<4>(b, ty)?)),
            16 => CqlValue::Inet(std::net::IpAddr::from(fixed::<16>(b, ty)?)),
            n => return Err(format!("an inet is 4 or 16 bytes, got {n}")),
        },
        other => return Err(format!("values of {other} are not supported in `values:`")),
    })
}

/// One listed value as a value of `ty`.
pub(super) fn literal(ty: &CqlType, v: &Scalar) -> Result<CqlValue, String> {
    if let Scalar::Text(s) = v {
        if s.starts_with("0x") && *ty != CqlType::Text {
            return from_bytes(ty, &hex(s)?);
        }
    }
    let text = || match v {
        Scalar::Text(s) => s.clone(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => f.to_string(),
        Scalar::Bool(b) => b.to_string(),
    };
    let int = || v.as_i64().map_err(|e| e.to_string());
    let small = |lo: i64, hi: i64| int().and_then(|n| if (lo..=hi).contains(&n) { Ok(n) } else { Err(format!("{n} does not fit {ty}")) });
    Ok(match ty {
        CqlType::Text => CqlValue::Text(text()),
        CqlType::Int => CqlValue::Int(small(i32::MIN as i64, i32::MAX as i64)? as i32),
        CqlType::BigInt => CqlValue::BigInt(int()?),
        CqlType::Counter => CqlValue::Counter(Counter(int()?)),
        CqlType::SmallInt => CqlValue::SmallInt(small(i16::MIN as i64, i16::MAX as i64)? as i16),
        CqlType::TinyInt => CqlValue::TinyInt(small(i8::MIN as i64, i8::MAX as i64)? as i8),
        CqlType::Double => CqlValue::Double(v.as_f64().map_err(|e| e.to_string())?),
        CqlType::Float => CqlValue::Float(v.as_f64().map_err(|e| e.to_string())? as f32),
        CqlType::Boolean => CqlValue::Boolean(v.as_bool().map_err(|e| e.to_string())?),
        CqlType::Uuid => CqlValue::Uuid(text().parse().map_err(|_| format!("\"{}\" is not a uuid", text()))?),
        CqlType::TimeUuid => CqlValue::Timeuuid(text().parse().map_err(|_| format!("\"{}\" is not a timeuuid", text()))?),
        CqlType::Timestamp => CqlValue::Timestamp(CqlTimestamp(match v {
            Scalar::Text(s) => crate::units::parse_start_ms(s).map_err(|e| e.to_string())?,
            _ => int()?,
        })),
        CqlType::Inet => CqlValue::Inet(text().parse().map_err(|_| format!("\"{}\" is not an address", text()))?),
        CqlType::Blob => return Err("a blob is written as 0x… hex bytes".into()),
        other => return Err(format!("values of {other} are not supported in `values:`")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_serialized_bytes_make_typed_values() {
        assert_eq!(literal(&CqlType::Int, &Scalar::Int(42)), Ok(CqlValue::Int(42)));
        assert_eq!(literal(&CqlType::Int, &Scalar::Text("0x0000002a".into())), Ok(CqlValue::Int(42)));
        assert_eq!(literal(&CqlType::BigInt, &Scalar::Text("0x0000000000000007".into())), Ok(CqlValue::BigInt(7)));
        assert_eq!(literal(&CqlType::Text, &Scalar::Int(7)), Ok(CqlValue::Text("7".into())));
        assert_eq!(literal(&CqlType::Text, &Scalar::Text("0x41".into())), Ok(CqlValue::Text("0x41".into())), "text stays as written");
        assert_eq!(literal(&CqlType::Blob, &Scalar::Text("0xdead".into())), Ok(CqlValue::Blob(vec![0xde, 0xad])));
        assert_eq!(literal(&CqlType::Boolean, &Scalar::Bool(true)), Ok(CqlValue::Boolean(true)));
        assert_eq!(literal(&CqlType::Timestamp, &Scalar::Text("1970-01-01T00:00:01Z".into())), Ok(CqlValue::Timestamp(CqlTimestamp(1000))));
        assert!(literal(&CqlType::TinyInt, &Scalar::Int(300)).unwrap_err().contains("does not fit"));
        assert!(literal(&CqlType::Int, &Scalar::Text("0x01".into())).unwrap_err().contains("4 bytes"));
        assert!(literal(&CqlType::Uuid, &Scalar::Text("nope".into())).unwrap_err().contains("not a uuid"));
    }

    #[test]
    fn a_sequence_over_values_makes_them_in_order_and_mistakes_name_the_item() {
        let specs = crate::yaml::from_str("{ v: { type: text, dist: sequence, values: [a, b, 7] } }").unwrap();
        let set = crate::gen::GeneratorSet::build(&specs).unwrap();
        let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(1);
        let made: Vec<CqlValue> = (0..4).map(|_| set.value(0, &mut rng)).collect();
        assert_eq!(made, ["a", "b", "7", "a"].map(|s| CqlValue::Text(s.into())));
        let specs = crate::yaml::from_str("{ v: { type: int, values: [1, x] } }").unwrap();
        let e = crate::gen::GeneratorSet::build(&specs).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("values[1]"), "{e}");
        let specs = crate::yaml::from_str("{ v: { type: \"list<int>\", size: 1, values: [1] } }").unwrap();
        assert!(crate::gen::GeneratorSet::build(&specs).unwrap_err().message.contains("simple types"));
    }
}
