//! Lines of mapping keys, noted while a value is decoded ([`Lined`]): the decoding of `T` is
//! passed through a thin layer that reads each mapping key with its line (serde-saphyr's
//! `Spanned`) and hands the key on unchanged, so the typed value and the line of every key
//! beneath it ([`KeyLines`]) come from one read of the text. Errors are serde-saphyr's own,
//! raised at the same places as without the layer. The layer stops at newtype structs (which is
//! how `Spanned` itself is read) and at enums: what lies under a `Spanned` is not seen, so a
//! value that needs both its own line and its keys' lines is a `Spanned<Lined<T>>`.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::cell::RefCell;
use std::fmt;

/// The mapping keys under a node, in the order written, each with its (1-based) line and the
/// keys under it; for a sequence, the keys under each item.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyLines {
    /// The line of the key this node is the value of (0 for the top and for sequence items).
    pub line: usize,
    keys: Vec<(String, KeyLines)>,
    items: Vec<KeyLines>,
}

impl KeyLines {
    /// What is under `key` of this mapping.
    pub fn get(&self, key: &str) -> Option<&KeyLines> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// The line of `key:` in this mapping.
    pub fn key_line(&self, key: &str) -> Option<usize> {
        self.get(key).map(|k| k.line)
    }
    /// What is under a path of mapping keys (`["run", "mix"]`).
    pub fn at(&self, path: &[&str]) -> Option<&KeyLines> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }
    /// The line of the last key of a path (`["operations", "read", "cql"]` → the `cql:` line).
    pub fn line_at(&self, path: &[&str]) -> Option<usize> {
        if path.is_empty() {
            return None;
        }
        self.at(path).map(|n| n.line)
    }
    /// The keys of this mapping, in the order written.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|(k, _)| k.as_str())
    }
    /// What is under item `i` of this sequence (`None` for an item with no mapping key in it).
    pub fn item(&self, i: usize) -> Option<&KeyLines> {
        self.items.get(i)
    }
}

/// A value decoded together with the lines of the mapping keys beneath it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lined<T> {
    pub value: T,
    pub lines: KeyLines,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lined<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let rec = RefCell::new(Recorder::default());
        let value = T::deserialize(De { inner: d, rec: &rec })?;
        Ok(Lined { value, lines: rec.into_inner().top })
    }
}

/// Where the decoding is: the tree so far and the path to the node being read.
#[derive(Default)]
struct Recorder {
    top: KeyLines,
    path: Vec<Step>,
}

enum Step {
    /// The value of the key at this index of the mapping's keys.
    Key(usize),
    Item(usize),
}

impl Recorder {
    fn here(&mut self) -> &mut KeyLines {
        let mut node = &mut self.top;
        for step in &self.path {
            node = match *step {
                Step::Key(i) => &mut node.keys[i].1,
                Step::Item(i) => {
                    if node.items.len() <= i {
                        node.items.resize_with(i + 1, KeyLines::default);
                    }
                    &mut node.items[i]
                }
            };
        }
        node
    }
}

type Rec<'r> = &'r RefCell<Recorder>;

/// Runs `f` with `step` on the path.
fn under<R>(rec: Rec, step: Step, f: impl FnOnce() -> R) -> R {
    rec.borrow_mut().path.push(step);
    let r = f();
    rec.borrow_mut().path.pop();
    r
}

struct De<'r, D> {
    inner: D,
    rec: Rec<'r>,
}

macro_rules! through {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.inner.$method($($arg,)* Vis { inner: visitor, rec: self.rec })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for De<'_, D> {
    type Error = D::Error;
    through! {
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32(); deserialize_i64();
        deserialize_i128(); deserialize_u8(); deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
        deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str(); deserialize_string(); deserialize_bytes();
        deserialize_byte_buf(); deserialize_option(); deserialize_unit(); deserialize_seq(); deserialize_map();
        deserialize_identifier(); deserialize_ignored_any(); deserialize_unit_struct(name: &'static str);
        deserialize_tuple(len: usize); deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
    }
    /// Not looked into: `Spanned` is read this way.
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_newtype_struct(name, visitor)
    }
    fn deserialize_enum<V: Visitor<'de>>(self, name: &'static str, variants: &'static [&'static str], visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_enum(name, variants, visitor)
    }
    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

struct Vis<'r, V> {
    inner: V,
    rec: Rec<'r>,
}

macro_rules! visit {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Vis<'_, V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }
    visit! {
        visit_bool(bool); visit_i8(i8); visit_i16(i16); visit_i32(i32); visit_i64(i64); visit_i128(i128); visit_u8(u8);
        visit_u16(u16); visit_u32(u32); visit_u64(u64); visit_u128(u128); visit_f32(f32); visit_f64(f64); visit_char(char);
        visit_str(&str); visit_borrowed_str(&'de str); visit_string(String); visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]); visit_byte_buf(Vec<u8>);
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(De { inner: d, rec: self.rec })
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(Seq { inner: seq, rec: self.rec, index: 0 })
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Map { inner: map, rec: self.rec, key: None })
    }
    fn visit_enum<A: EnumAccess<'de>>(self, e: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(e)
    }
}

struct Seq<'r, A> {
    inner: A,
    rec: Rec<'r>,
    index: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, A::Error> {
        let r = under(self.rec, Step::Item(self.index), || self.inner.next_element_seed(Seed { inner: seed, rec: self.rec }));
        self.index += 1;
        r
    }
    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

struct Map<'r, A> {
    inner: A,
    rec: Rec<'r>,
    /// The index of the key just read, in its mapping's keys.
    key: Option<usize>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<'_, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.inner.next_key::<Spanned<String>>()? else { return Ok(None) };
        let mut rec = self.rec.borrow_mut();
        let node = rec.here();
        node.keys.push((key.value.clone(), KeyLines { line: key.referenced.line() as usize, ..KeyLines::default() }));
        self.key = Some(node.keys.len() - 1);
        drop(rec);
        seed.deserialize(key.value.into_deserializer()).map(Some)
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let seed = Seed { inner: seed, rec: self.rec };
        match self.key.take() {
            Some(i) => under(self.rec, Step::Key(i), || self.inner.next_value_seed(seed)),
            None => self.inner.next_value_seed(seed),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

struct Seed<'r, S> {
    inner: S,
    rec: Rec<'r>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(De { inner: d, rec: self.rec })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::from_str;
    use std::collections::BTreeMap;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        run: Run,
        ops: BTreeMap<String, Op>,
        #[serde(default)]
        list: Vec<Spanned<String>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Run {
        mix: BTreeMap<String, f64>,
        duration: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Op {
        cql: Option<String>,
        steps: Option<Vec<Spanned<Lined<Step2>>>>,
        size: Option<crate::gen::SizeSpec>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Step2 {
        cql: Option<String>,
        args: Option<Vec<String>>,
    }

    const DOC: &str = "run:
  mix: { read: 1, update: 2.5 }
  duration: 10s
ops:
  read:
    cql: |
      SELECT
    size:
      dist: uniform
      max: 10
  write:
    steps:
      - cql: INSERT
        args: [a]
      - {}
      -
        args: [b]
list: [x, y]
";

    #[test]
    fn every_key_comes_with_its_line() {
        let Lined { value, lines } = from_str::<Lined<Doc>>(DOC).unwrap();
        assert_eq!(lines.key_line("run"), Some(1));
        assert_eq!(lines.line_at(&["run", "mix", "update"]), Some(2));
        assert_eq!(lines.line_at(&["run", "duration"]), Some(3));
        assert_eq!(lines.line_at(&["ops", "read", "cql"]), Some(6));
        assert_eq!(lines.line_at(&["ops", "read", "size", "max"]), Some(10), "keys under an untagged enum are seen too");
        assert_eq!(lines.get("ops").unwrap().keys().collect::<Vec<_>>(), ["read", "write"]);
        assert_eq!((lines.line_at(&["nope"]), lines.line_at(&[])), (None, None));
        let steps = value.ops["write"].steps.as_ref().unwrap();
        let item_lines: Vec<usize> = steps.iter().map(|s| s.referenced.line() as usize).collect();
        assert_eq!(item_lines, [13, 15, 17], "an item's own line is its Spanned's; an empty mapping has one too");
        assert_eq!((steps[0].value.lines.key_line("args"), steps[2].value.lines.key_line("args")), (Some(14), Some(17)));
        assert_eq!(value.list.iter().map(|s| s.referenced.line()).collect::<Vec<_>>(), [18, 18]);
    }

    #[test]
    fn errors_are_the_decoders_own() {
        let plain = from_str::<Doc>(&DOC.replace("  duration: 10s", "  duration: 10s\n  colour: red")).unwrap_err();
        let lined = from_str::<Lined<Doc>>(&DOC.replace("  duration: 10s", "  duration: 10s\n  colour: red")).unwrap_err();
        assert_eq!((lined.line, &lined.message), (Some(4), &plain.message));
        assert!(lined.message.contains("unknown field `colour`"), "{lined:?}");
        let plain = from_str::<Doc>(&DOC.replace("  duration: 10s\n", "")).unwrap_err();
        let lined = from_str::<Lined<Doc>>(&DOC.replace("  duration: 10s\n", "")).unwrap_err();
        assert_eq!(lined, plain);
        assert!(lined.message.contains("missing field `duration`"), "{lined:?}");
    }
}
