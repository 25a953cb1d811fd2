//! The CQL types generators can produce, parsed from a spec's `type:` string
//! (`frozen<map<text, bigint>>`, `tuple<int, text>`, case-insensitive, whitespace-tolerant),
//! printed back in CQL syntax, and compared with the driver's column types. Collections and
//! tuples hold simple types only; a user-defined type is named by `type:` and described by the
//! spec's `fields:` (built in `build.rs`); a vector is `vector<float, N>` (N from 2 to 4,096).

use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use std::fmt;

/// A generator's value type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CqlType {
    /// `text`, also spelled `varchar` or `ascii` (generated text is ASCII unless the prefix is not).
    Text,
    Blob,
    Int,
    BigInt,
    Double,
    Boolean,
    Uuid,
    TimeUuid,
    Timestamp,
    Float,
    SmallInt,
    TinyInt,
    Date,
    Time,
    Decimal,
    Varint,
    Inet,
    Duration,
    /// A counter increment (`UPDATE … SET c = c + ?`).
    Counter,
    /// `tuple<int, text>` (always frozen).
    Tuple(Vec<CqlType>),
    /// A user-defined type with the fields a generator makes (a subset of the type's).
    Udt {
        name: String,
        fields: Vec<(String, CqlType)>,
        frozen: bool,
    },
    List {
        element: Box<CqlType>,
        frozen: bool,
    },
    Set {
        element: Box<CqlType>,
        frozen: bool,
    },
    Map {
        key: Box<CqlType>,
        value: Box<CqlType>,
        frozen: bool,
    },
    /// `vector<float, N>`: N floats, the type SAI's approximate nearest-neighbour indexes.
    Vector {
        dims: u16,
    },
}

/// The dimensions a `vector<float, N>` may have.
pub const VECTOR_DIMS: std::ops::RangeInclusive<u16> = 2..=4096;

/// The simple type names `CqlType::parse` accepts, for error messages and suggestions.
pub(crate) const SIMPLE_TYPE_NAMES: &[&str] = &[
    "text",
    "varchar",
    "ascii",
    "blob",
    "int",
    "bigint",
    "smallint",
    "tinyint",
    "varint",
    "double",
    "float",
    "decimal",
    "boolean",
    "uuid",
    "timeuuid",
    "timestamp",
    "date",
    "time",
    "duration",
    "inet",
    "counter",
];

const COLLECTION_NAMES: &[&str] = &["list", "set", "map", "tuple", "frozen", "vector"];

impl CqlType {
    /// Parses a CQL type as written in a workload file.
    pub fn parse(s: &str) -> Result<CqlType, TypeError> {
        let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
        if compact.is_empty() {
            return Err(TypeError::Empty);
        }
        Self::parse_compact(&compact, true)
    }

    fn parse_compact(s: &str, top: bool) -> Result<CqlType, TypeError> {
        let Some(open) = s.find('<') else {
            return Self::parse_simple(s);
        };
        if !s.ends_with('>') {
            return Err(TypeError::Unbalanced(s.to_string()));
        }
        let outer = &s[..open];
        let inner = &s[open + 1..s.len() - 1];
        if !top && outer != "frozen" {
            return Err(TypeError::Nested(s.to_string()));
        }
        match outer {
            "frozen" => match Self::parse_compact(inner, top)? {
                CqlType::List { element, .. } => Ok(CqlType::List { element, frozen: true }),
                CqlType::Set { element, .. } => Ok(CqlType::Set { element, frozen: true }),
                CqlType::Map { key, value, .. } => Ok(CqlType::Map { key, value, frozen: true }),
                t @ (CqlType::Tuple(_) | CqlType::Vector { .. }) => Ok(t),
                _ if !top => Err(TypeError::Nested(s.to_string())),
                other => Err(TypeError::FrozenSimple(other.to_string())),
            },
            "list" => Ok(CqlType::List { element: Box::new(Self::parse_element(inner)?), frozen: false }),
            "set" => Ok(CqlType::Set { element: Box::new(Self::parse_element(inner)?), frozen: false }),
            "vector" => Self::parse_vector(inner),
            "tuple" => Ok(CqlType::Tuple(inner.split(',').map(Self::parse_simple_element).collect::<Result<_, _>>()?)),
            "map" => {
                let parts: Vec<&str> = inner.split(',').collect();
                if parts.len() != 2 {
                    return Err(TypeError::MapArity(inner.to_string()));
                }
                Ok(CqlType::Map { key: Box::new(Self::parse_element(parts[0])?), value: Box::new(Self::parse_element(parts[1])?), frozen: false })
            }
            other => Err(TypeError::Unsupported { word: other.to_string(), known: COLLECTION_NAMES }),
        }
    }

    /// `float,128` of `vector<float, 128>`.
    fn parse_vector(inner: &str) -> Result<CqlType, TypeError> {
        let Some((element, dims)) = inner.rsplit_once(',') else { return Err(TypeError::VectorShape(inner.to_string())) };
        if element != "float" {
            return Err(TypeError::VectorElement(element.to_string()));
        }
        match dims.parse::<u16>() {
            Ok(d) if VECTOR_DIMS.contains(&d) => Ok(CqlType::Vector { dims: d }),
            _ => Err(TypeError::VectorDims(dims.to_string())),
        }
    }

    fn parse_element(s: &str) -> Result<CqlType, TypeError> {
        if s.contains('<') {
            return Err(TypeError::Nested(s.to_string()));
        }
        if s.contains(',') {
            return Err(TypeError::ElementList(s.to_string()));
        }
        Self::parse_simple(s)
    }

    fn parse_simple_element(s: &str) -> Result<CqlType, TypeError> {
        if s.contains('<') {
            return Err(TypeError::Nested(s.to_string()));
        }
        Self::parse_simple(s)
    }

    /// The name of a user-defined type as written in `type:` (`address`, `frozen<address>`,
    /// `ks.address`), lowercased; `None` when it is not a plain name.
    pub fn udt_name(s: &str) -> Option<(String, bool)> {
        let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
        let (inner, frozen) = match compact.strip_prefix("frozen<").and_then(|r| r.strip_suffix('>')) {
            Some(i) => (i.to_string(), true),
            None => (compact, false),
        };
        let name = inner.rsplit('.').next().unwrap_or_default().to_string();
        let ok = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !SIMPLE_TYPE_NAMES.contains(&name.as_str())
            && !COLLECTION_NAMES.contains(&name.as_str());
        ok.then_some((name, frozen))
    }

    fn parse_simple(s: &str) -> Result<CqlType, TypeError> {
        Ok(match s {
            "text" | "varchar" | "ascii" => CqlType::Text,
            "blob" => CqlType::Blob,
            "int" => CqlType::Int,
            "bigint" => CqlType::BigInt,
            "double" => CqlType::Double,
            "boolean" => CqlType::Boolean,
            "uuid" => CqlType::Uuid,
            "timeuuid" => CqlType::TimeUuid,
            "timestamp" => CqlType::Timestamp,
            "float" => CqlType::Float,
            "smallint" => CqlType::SmallInt,
            "tinyint" => CqlType::TinyInt,
            "date" => CqlType::Date,
            "time" => CqlType::Time,
            "decimal" => CqlType::Decimal,
            "varint" => CqlType::Varint,
            "inet" => CqlType::Inet,
            "duration" => CqlType::Duration,
            "counter" => CqlType::Counter,
            "list" | "set" | "map" | "tuple" | "frozen" => return Err(TypeError::NeedsElements(s.to_string())),
            other => return Err(TypeError::Unsupported { word: other.to_string(), known: SIMPLE_TYPE_NAMES }),
        })
    }

    /// Whether values of this type can be bound to a column of type `col`. Frozenness is ignored
    /// (the driver encodes frozen and non-frozen collections alike); `text` matches `ascii`.
    pub fn matches(&self, col: &ColumnType<'_>) -> bool {
        match (self, col) {
            (CqlType::List { element, .. }, ColumnType::Collection { typ: CollectionType::List(e), .. })
            | (CqlType::Set { element, .. }, ColumnType::Collection { typ: CollectionType::Set(e), .. }) => element.matches(e),
            (CqlType::Map { key, value, .. }, ColumnType::Collection { typ: CollectionType::Map(k, v), .. }) => key.matches(k) && value.matches(v),
            (CqlType::Vector { dims }, ColumnType::Vector { typ, dimensions }) => {
                *dims == *dimensions && matches!(**typ, ColumnType::Native(NativeType::Float))
            }
            (CqlType::Tuple(ours), ColumnType::Tuple(theirs)) => ours.len() == theirs.len() && ours.iter().zip(theirs).all(|(a, b)| a.matches(b)),
            (CqlType::Udt { name, fields, .. }, ColumnType::UserDefinedType { definition, .. }) => {
                definition.name.eq_ignore_ascii_case(name)
                    && fields.iter().all(|(f, t)| definition.field_types.iter().any(|(n, ct)| n.eq_ignore_ascii_case(f) && t.matches(ct)))
            }
            (simple, ColumnType::Native(native)) => matches!(
                (simple, native),
                (CqlType::Text, NativeType::Text | NativeType::Ascii)
                    | (CqlType::Blob, NativeType::Blob)
                    | (CqlType::Int, NativeType::Int)
                    | (CqlType::BigInt, NativeType::BigInt)
                    | (CqlType::Double, NativeType::Double)
                    | (CqlType::Boolean, NativeType::Boolean)
                    | (CqlType::Uuid, NativeType::Uuid)
                    | (CqlType::TimeUuid, NativeType::Timeuuid)
                    | (CqlType::Timestamp, NativeType::Timestamp)
                    | (CqlType::Float, NativeType::Float)
                    | (CqlType::SmallInt, NativeType::SmallInt)
                    | (CqlType::TinyInt, NativeType::TinyInt)
                    | (CqlType::Date, NativeType::Date)
                    | (CqlType::Time, NativeType::Time)
                    | (CqlType::Decimal, NativeType::Decimal)
                    | (CqlType::Varint, NativeType::Varint)
                    | (CqlType::Inet, NativeType::Inet)
                    | (CqlType::Duration, NativeType::Duration)
                    | (CqlType::Counter, NativeType::Counter)
            ),
            _ => false,
        }
    }

    pub fn is_collection(&self) -> bool {
        matches!(self, CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. })
    }

    /// A collection, tuple, user-defined type or vector: several values in one.
    pub fn is_composite(&self) -> bool {
        self.is_collection() || matches!(self, CqlType::Tuple(_) | CqlType::Udt { .. } | CqlType::Vector { .. })
    }

    /// Whether this type and a column type declared in a `CREATE TABLE` (`text`, `varchar`,
    /// `frozen<list<int>>`, a user-defined type's name) hold the same values, as far as the
    /// declaration tells; `None` when it cannot tell (a type it does not know).
    pub fn matches_declared(&self, declared: &str) -> Option<bool> {
        if let CqlType::Udt { name, .. } = self {
            return Some(CqlType::udt_name(declared).is_some_and(|(n, _)| n == *name));
        }
        match CqlType::parse(declared) {
            Ok(t) => Some(self.same_ignoring_frozen(&t)),
            Err(_) => CqlType::udt_name(declared).map(|_| false),
        }
    }

    fn same_ignoring_frozen(&self, other: &CqlType) -> bool {
        match (self, other) {
            (CqlType::List { element: a, .. }, CqlType::List { element: b, .. }) | (CqlType::Set { element: a, .. }, CqlType::Set { element: b, .. }) => a == b,
            (CqlType::Map { key: k1, value: v1, .. }, CqlType::Map { key: k2, value: v2, .. }) => k1 == k2 && v1 == v2,
            _ => self == other,
        }
    }
}

/// A `type:` that is not one generators can produce, and what to write instead.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum TypeError {
    #[error("empty type; expected e.g. text, bigint or list<int>")]
    Empty,
    #[error("unbalanced '<' in \"{0}\"")]
    Unbalanced(String),
    #[error("nested collections are not supported (in \"{0}\"); use simple element types")]
    Nested(String),
    #[error("frozen<> applies to collections, not to {0}")]
    FrozenSimple(String),
    #[error("map<...> takes a key and a value type, got \"{0}\"")]
    MapArity(String),
    #[error("expected one element type, got \"{0}\"")]
    ElementList(String),
    #[error("{0} needs element types, e.g. {0}<int>")]
    NeedsElements(String),
    #[error("vector<...> takes an element type and a dimension, e.g. vector<float, 128>; got \"{0}\"")]
    VectorShape(String),
    #[error("casslab makes vectors of float (what SAI's vector indexes hold), not of {0}: write vector<float, N>")]
    VectorElement(String),
    #[error("a vector's dimension is a whole number from 2 to 4096, not \"{0}\"")]
    VectorDims(String),
    #[error("unsupported type \"{word}\" (supported: {}, list<T>, set<T>, map<K, V>, vector<float, N>, frozen<...>){}", SIMPLE_TYPE_NAMES.join(", "), crate::suggest::hint(.word, *.known))]
    Unsupported { word: String, known: &'static [&'static str] },
}

impl fmt::Display for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (pre, post) = match self {
            CqlType::List { frozen: true, .. } | CqlType::Set { frozen: true, .. } | CqlType::Map { frozen: true, .. } => ("frozen<", ">"),
            _ => ("", ""),
        };
        match self {
            CqlType::Text => f.write_str("text"),
            CqlType::Blob => f.write_str("blob"),
            CqlType::Int => f.write_str("int"),
            CqlType::BigInt => f.write_str("bigint"),
            CqlType::Double => f.write_str("double"),
            CqlType::Boolean => f.write_str("boolean"),
            CqlType::Uuid => f.write_str("uuid"),
            CqlType::TimeUuid => f.write_str("timeuuid"),
            CqlType::Timestamp => f.write_str("timestamp"),
            CqlType::Float => f.write_str("float"),
            CqlType::SmallInt => f.write_str("smallint"),
            CqlType::TinyInt => f.write_str("tinyint"),
            CqlType::Date => f.write_str("date"),
            CqlType::Time => f.write_str("time"),
            CqlType::Decimal => f.write_str("decimal"),
            CqlType::Varint => f.write_str("varint"),
            CqlType::Inet => f.write_str("inet"),
            CqlType::Duration => f.write_str("duration"),
            CqlType::Counter => f.write_str("counter"),
            CqlType::Vector { dims } => write!(f, "vector<float, {dims}>"),
            CqlType::Tuple(ts) => write!(f, "tuple<{}>", ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")),
            CqlType::Udt { name, frozen: true, .. } => write!(f, "frozen<{name}>"),
            CqlType::Udt { name, .. } => f.write_str(name),
            CqlType::List { element, .. } => write!(f, "{pre}list<{element}>{post}"),
            CqlType::Set { element, .. } => write!(f, "{pre}set<{element}>{post}"),
            CqlType::Map { key, value, .. } => write!(f, "{pre}map<{key}, {value}>{post}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(e: CqlType, frozen: bool) -> CqlType {
        CqlType::List { element: Box::new(e), frozen }
    }

    #[test]
    fn parses_simple_and_collection_types() {
        assert_eq!(CqlType::parse("TEXT"), Ok(CqlType::Text));
        assert_eq!(CqlType::parse(" varchar "), Ok(CqlType::Text));
        assert_eq!(CqlType::parse("ascii"), Ok(CqlType::Text));
        assert_eq!(CqlType::parse("TimeUUID"), Ok(CqlType::TimeUuid));
        assert_eq!(CqlType::parse("frozen< list < int > >"), Ok(list(CqlType::Int, true)));
        assert_eq!(CqlType::parse("map<text,bigint>"), Ok(CqlType::Map { key: Box::new(CqlType::Text), value: Box::new(CqlType::BigInt), frozen: false }));
        assert_eq!(CqlType::parse("set<uuid>"), Ok(CqlType::Set { element: Box::new(CqlType::Uuid), frozen: false }));
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "text",
            "blob",
            "int",
            "bigint",
            "double",
            "boolean",
            "uuid",
            "timeuuid",
            "timestamp",
            "list<int>",
            "frozen<list<int>>",
            "set<text>",
            "frozen<set<timeuuid>>",
            "map<text, bigint>",
            "frozen<map<uuid, double>>",
            "float",
            "smallint",
            "tinyint",
            "date",
            "time",
            "decimal",
            "varint",
            "inet",
            "duration",
            "counter",
            "tuple<int, text, date>",
            "list<inet>",
            "map<smallint, decimal>",
            "vector<float, 128>",
        ] {
            let t = CqlType::parse(s).unwrap();
            assert_eq!(t.to_string(), s);
            assert_eq!(CqlType::parse(&t.to_string()), Ok(t));
        }
    }

    #[test]
    fn rejects_bad_types() {
        let e = CqlType::parse("bigitn").unwrap_err().to_string();
        assert!(e.contains("unsupported type \"bigitn\"") && e.contains("did you mean \"bigint\"?"), "{e}");
        assert!(CqlType::parse("").is_err());
        assert!(CqlType::parse("floot").unwrap_err().to_string().contains("did you mean \"float\"?"));
        assert!(CqlType::parse("list<list<int>>").unwrap_err().to_string().contains("nested"));
        assert!(CqlType::parse("list<frozen<list<int>>>").unwrap_err().to_string().contains("nested"));
        assert!(CqlType::parse("map<text>").unwrap_err().to_string().contains("key and a value"));
        assert!(CqlType::parse("map<text,int,int>").unwrap_err().to_string().contains("key and a value"));
        assert!(CqlType::parse("frozen<int>").unwrap_err().to_string().contains("collections"));
        assert!(CqlType::parse("list<int").unwrap_err().to_string().contains("unbalanced"));
        assert!(CqlType::parse("list").unwrap_err().to_string().contains("needs element types"));
        assert!(CqlType::parse("tuple<list<int>>").unwrap_err().to_string().contains("nested"));
        assert!(CqlType::parse("address").unwrap_err().to_string().contains("unsupported"));
        assert_eq!(CqlType::parse("vector<float, 4096>"), Ok(CqlType::Vector { dims: 4096 }));
        assert_eq!(CqlType::parse("frozen<vector<float,3>>"), Ok(CqlType::Vector { dims: 3 }));
        assert!(CqlType::parse("vector<double, 3>").unwrap_err().to_string().contains("vectors of float"));
        assert!(CqlType::parse("vector<float, 1>").unwrap_err().to_string().contains("from 2 to 4096"));
        assert!(CqlType::parse("vector<float, 5000>").unwrap_err().to_string().contains("from 2 to 4096"));
        assert!(CqlType::parse("vector<float>").unwrap_err().to_string().contains("e.g. vector<float, 128>"));
        assert!(CqlType::parse("list<vector<float, 3>>").unwrap_err().to_string().contains("nested"));
    }

    #[test]
    fn matches_driver_column_types() {
        let native = ColumnType::Native;
        assert!(CqlType::Text.matches(&native(NativeType::Text)));
        assert!(CqlType::Text.matches(&native(NativeType::Ascii)));
        assert!(CqlType::TimeUuid.matches(&native(NativeType::Timeuuid)));
        assert!(!CqlType::Uuid.matches(&native(NativeType::Timeuuid)));
        assert!(!CqlType::Int.matches(&native(NativeType::BigInt)));
        let frozen_list_int = ColumnType::Collection { frozen: true, typ: CollectionType::List(Box::new(native(NativeType::Int))) };
        assert!(list(CqlType::Int, true).matches(&frozen_list_int));
        assert!(list(CqlType::Int, false).matches(&frozen_list_int));
        assert!(!list(CqlType::BigInt, true).matches(&frozen_list_int));
        assert!(!CqlType::Int.matches(&frozen_list_int));
        let map = ColumnType::Collection { frozen: false, typ: CollectionType::Map(Box::new(native(NativeType::Text)), Box::new(native(NativeType::BigInt))) };
        assert!(CqlType::parse("map<text, bigint>").unwrap().matches(&map));
        assert!(!CqlType::parse("map<text, int>").unwrap().matches(&map));
        assert!(!CqlType::parse("set<text>").unwrap().matches(&map));
        assert!(CqlType::Counter.matches(&native(NativeType::Counter)));
        assert!(!CqlType::BigInt.matches(&native(NativeType::Counter)));
        assert!(CqlType::Float.matches(&native(NativeType::Float)) && !CqlType::Double.matches(&native(NativeType::Float)));
        let vector = ColumnType::Vector { typ: Box::new(native(NativeType::Float)), dimensions: 3 };
        assert!(CqlType::Vector { dims: 3 }.matches(&vector) && !CqlType::Vector { dims: 4 }.matches(&vector));
        let tuple = ColumnType::Tuple(vec![native(NativeType::Int), native(NativeType::Text)]);
        assert!(CqlType::parse("frozen<tuple<int, text>>").unwrap().matches(&tuple));
        assert!(!CqlType::parse("tuple<int, int>").unwrap().matches(&tuple));
        let udt = ColumnType::UserDefinedType {
            frozen: true,
            definition: std::sync::Arc::new(scylla::frame::response::result::UserDefinedType {
                name: "address".into(),
                keyspace: "ks".into(),
                field_types: vec![("street".into(), native(NativeType::Text)), ("zip".into(), native(NativeType::Int))],
            }),
        };
        let ours = |fields: Vec<(String, CqlType)>| CqlType::Udt { name: "address".into(), fields, frozen: true };
        assert!(ours(vec![("zip".into(), CqlType::Int)]).matches(&udt));
        assert!(!ours(vec![("zip".into(), CqlType::BigInt)]).matches(&udt));
        assert!(!ours(vec![("city".into(), CqlType::Text)]).matches(&udt));
    }

    #[test]
    fn declared_column_types_are_compared() {
        assert_eq!(CqlType::Double.matches_declared("text"), Some(false));
        assert_eq!(CqlType::Text.matches_declared("VARCHAR"), Some(true));
        assert_eq!(CqlType::parse("list<int>").unwrap().matches_declared("frozen<list<int>>"), Some(true));
        assert_eq!(CqlType::Int.matches_declared("frozen<address>"), Some(false));
        assert_eq!(CqlType::Udt { name: "address".into(), fields: vec![], frozen: false }.matches_declared("frozen<address>"), Some(true));
        assert_eq!(CqlType::Int.matches_declared("vector<float, 3>"), Some(false));
        assert_eq!(CqlType::Vector { dims: 3 }.matches_declared("VECTOR<FLOAT, 3>"), Some(true));
        assert_eq!(CqlType::Vector { dims: 3 }.matches_declared("vector<float, 4>"), Some(false));
        assert_eq!(CqlType::udt_name("frozen< ks.Address >"), Some(("address".to_string(), true)));
        assert_eq!(CqlType::udt_name("int"), None);
    }
}
