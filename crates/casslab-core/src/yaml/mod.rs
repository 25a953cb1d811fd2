//! casslab's one YAML reader and writer, over `serde-saphyr`: typed decoding with errors that
//! carry their line ([`from_str`]), optionally with the line of every mapping key beneath
//! ([`Lined`], in `lines.rs`: one read gives both), and a small tree whose every node and mapping
//! key knows its line ([`Node`], from [`parse`]), so that checks made after decoding can still
//! say `file:line`, and experiments can patch a workload and write it back out ([`to_string`]).
//! It knows nothing of workloads: which keys mean what is the caller's business.

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_saphyr::{MessageFormatter, Spanned};
use std::fmt;

mod lines;
pub use lines::{KeyLines, Lined};

/// YAML that cannot be read (syntax, or a shape the target type does not accept), with its
/// line when known.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{message}")]
pub struct YamlError {
    pub line: Option<usize>,
    pub message: String,
}

impl From<serde_saphyr::Error> for YamlError {
    fn from(e: serde_saphyr::Error) -> Self {
        let line = e.location().map(|l| l.line() as usize).filter(|l| *l > 0);
        // the breach itself, under the wrappers that say where an alias or a snippet was
        let mut inner = &e;
        while let serde_saphyr::Error::AliasError { error, .. } | serde_saphyr::Error::WithSnippet { error, .. } = inner {
            inner = error;
        }
        let message = match inner {
            serde_saphyr::Error::Budget { breach, .. } => beyond_limits(breach),
            _ => match serde_saphyr::DefaultMessageFormatter.format_message(&e).into_owned() {
                // the parser's own guard against a stack overflow
                m if m.contains("recursion limit exceeded") => {
                    "the YAML holds lists or mappings nested more than 64 deep, more than casslab reads: nest less deeply".into()
                }
                m => m,
            },
        };
        YamlError { line, message: message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect() }
    }
}

/// A file beyond what the reader takes, in words: which limit, and what to write instead (the
/// limits are serde-saphyr's defaults, which keep an alias bomb or a deep nesting from taking
/// the machine's memory or stack).
fn beyond_limits(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    let (what, fix) = match breach {
        B::Nodes { .. } => (
            "more than 250,000 values, lists and mappings, counting each alias (`*name`) as a copy of what it names",
            "write fewer values, or use fewer aliases of large anchors",
        ),
        B::Aliases { .. } => ("more than 50,000 aliases (`*name`)", "write the values out, or use fewer aliases"),
        B::Anchors { .. } => ("more than 50,000 anchors (`&name`)", "use fewer anchors"),
        B::Depth { .. } => ("lists or mappings nested more than 64 deep", "nest less deeply"),
        B::Events { .. } => ("more than 1,000,000 YAML events", "split it into smaller files"),
        B::ScalarBytes { .. } => ("more than 64 MiB of text in its values", "keep large values out of it"),
        B::InputBytes { .. } => ("more than 256 MiB", "give a smaller file"),
        B::Documents { .. } => ("more than 1,024 documents (`---`)", "give one document"),
        B::AliasAnchorRatio { .. } => ("far more aliases than anchors (an alias bomb)", "write the values out instead of repeating aliases"),
        B::MergeKeys { .. } => ("more than 10,000 merge keys (`<<`)", "use fewer merge keys"),
        other => return format!("the YAML is beyond what casslab reads ({other:?}): give a smaller, flatter file"),
    };
    format!("the YAML holds {what}, more than casslab reads: {fix}")
}

/// YAML 1.2 as casslab reads it: only `true`/`false` are booleans (`yes`, `on` stay text),
/// duplicate keys are errors, and errors come without source snippets (callers add file:line).
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! { strict_booleans: true, with_snippet: false }
}

/// Decodes YAML text into `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    Ok(serde_saphyr::from_str_with_options(text, options())?)
}

/// Reads YAML text into a tree with lines.
pub fn parse(text: &str) -> Result<Node, YamlError> {
    from_str(text)
}

/// Writes a tree (or anything serializable) as YAML text.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, YamlError> {
    serde_saphyr::to_string(value).map_err(|e| YamlError { line: None, message: e.to_string() })
}

/// A YAML node and the (1-based) line it starts on; 0 for nodes built in code.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub line: usize,
    pub value: Value,
}

/// What a node holds. Mappings keep their keys in the order written.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// One `key: value` of a mapping, with the line of the key.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_line: usize,
    pub node: Node,
}

impl Node {
    pub fn new(value: Value) -> Node {
        Node { line: 0, value }
    }
    pub fn str(s: impl Into<String>) -> Node {
        Node::new(Value::Str(s.into()))
    }
    /// A mapping of strings to strings, in the given order.
    pub fn string_map<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a String)>) -> Node {
        Node::new(Value::Map(pairs.into_iter().map(|(k, v)| Entry { key: k.clone(), key_line: 0, node: Node::str(v.clone()) }).collect()))
    }

    /// The entries of a mapping (none for anything else).
    pub fn entries(&self) -> &[Entry] {
        match &self.value {
            Value::Map(m) => m,
            _ => &[],
        }
    }
    /// The items of a sequence (none for anything else).
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::Seq(s) => s,
            _ => &[],
        }
    }
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries().iter().find(|e| e.key == key)
    }
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.node)
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        match &mut self.value {
            Value::Map(m) => m.iter_mut().find(|e| e.key == key).map(|e| &mut e.node),
            _ => None,
        }
    }
    /// The line of `key:` in this mapping.
    pub fn key_line(&self, key: &str) -> Option<usize> {
        self.entry(key).map(|e| e.key_line)
    }
    /// The node at a path of mapping keys (`["run", "mix"]`).
    pub fn at(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }
    /// The line of the last key of a path (`["operations", "read", "cql"]` → the `cql:` line).
    pub fn line_at(&self, path: &[&str]) -> Option<usize> {
        let (last, parent) = path.split_last()?;
        self.at(parent)?.key_line(last)
    }

    /// Sets `key` of a mapping (replacing its value in place, or appending it); a null node
    /// becomes a mapping first. Anything else is left alone.
    pub fn insert(&mut self, key: &str, node: Node) {
        if self.value == Value::Null {
            self.value = Value::Map(Vec::new());
        }
        if let Value::Map(m) = &mut self.value {
            match m.iter_mut().find(|e| e.key == key) {
                Some(e) => e.node = node,
                None => m.push(Entry { key: key.to_string(), key_line: 0, node }),
            }
        }
    }

    pub fn is_null(&self) -> bool {
        self.value == Value::Null
    }
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    /// A scalar as text (strings, numbers and booleans); `None` for null and collections.
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    /// A whole number ≥ 0, written as a number or quoted (`"${rows}"`).
    pub fn as_u64(&self) -> Option<u64> {
        match &self.value {
            Value::Int(i) => u64::try_from(*i).ok(),
            Value::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }
    /// A number, written as such or quoted.
    pub fn as_f64(&self) -> Option<f64> {
        match &self.value {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(s) => s.trim().parse().ok().filter(|f: &f64| f.is_finite()),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        let s = Spanned::<Value>::deserialize(d)?;
        Ok(Node { line: s.referenced.line() as usize, value: s.value })
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Int(i))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        Ok(i64::try_from(u).map(Value::Int).unwrap_or(Value::Float(u as f64)))
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(n) = a.next_element::<Node>()? {
            items.push(n);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = a.next_key::<Spanned<String>>()? {
            let node = a.next_value::<Node>()?;
            entries.push(Entry { key: k.value, key_line: k.referenced.line() as usize, node });
        }
        Ok(Value::Map(entries))
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.value {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::Float(f) => s.serialize_f64(*f),
            Value::Str(t) => s.serialize_str(t),
            Value::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for n in items {
                    seq.serialize_element(n)?;
                }
                seq.end()
            }
            Value::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for e in entries {
                    map.serialize_entry(&e.key, &e.node)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alias_bomb_and_a_deep_nesting_name_the_limit_and_the_fix() {
        // each level doubles the one before: 2^20 copies of the first list
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..20 {
            bomb.push_str(&format!("a{i}: &a{i} [*a{}, *a{}]\n", i - 1, i - 1));
        }
        let e = parse(&bomb).unwrap_err();
        assert!(e.message.contains("more than casslab reads") && !e.message.contains("{"), "{e}");
        let deep = format!("{}1{}", "[".repeat(20_000), "]".repeat(20_000));
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("nested more than 64 deep") && e.message.ends_with("nest less deeply"), "{e}");
    }

    const DOC: &str = "name: x
description:
run:
  mix: { read: 1, update: 2.5 }
  duration: 10s
operations:
  write:
    steps:
      - cql: |
          INSERT INTO t
        args: [a, \"b\"]
schema:
  - CREATE TABLE a
  - >-
    CREATE TABLE
    b
flag: yes
";

    #[test]
    fn every_key_and_node_knows_its_line() {
        let d = parse(DOC).unwrap();
        assert_eq!(d.key_line("run"), Some(3));
        assert_eq!(d.line_at(&["run", "mix", "update"]), Some(4));
        assert_eq!(d.line_at(&["run", "duration"]), Some(5));
        assert_eq!(d.at(&["run", "mix", "update"]).unwrap().as_f64(), Some(2.5));
        let step = &d.at(&["operations", "write", "steps"]).unwrap().items()[0];
        assert_eq!((step.line, step.key_line("cql"), step.key_line("args")), (9, Some(9), Some(11)));
        assert_eq!(step.get("args").unwrap().items()[1].as_str(), Some("b"));
        let schema = d.get("schema").unwrap().items();
        assert_eq!((schema[0].line, schema[1].line, schema[1].as_str()), (13, 15, Some("CREATE TABLE b")));
        assert!(d.get("description").unwrap().is_null());
        assert_eq!(d.get("flag").unwrap().as_str(), Some("yes"), "YAML 1.2: only true and false are booleans");
        assert_eq!(d.line_at(&["run", "nope"]), None);
    }

    #[test]
    fn errors_carry_their_line() {
        let e = parse("a: 1\nb: [\n").unwrap_err();
        assert!(e.line.is_some() && !e.message.contains("line"), "{e:?}");
        let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e:?}");
        assert!(e.message.contains("duplicate"), "{e:?}");
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct S {
            a: u32,
        }
        let e = from_str::<S>("\na: 1\ncolour: red\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("unknown field `colour`"), "{e:?}");
    }

    #[test]
    fn trees_are_patched_and_written_back() {
        let mut d = parse(DOC).unwrap();
        d.get_mut("run").unwrap().insert("duration", Node::str("20s"));
        d.insert("name", Node::str("y"));
        d.insert("params", Node::string_map([(&"rows".to_string(), &"100".to_string())]));
        let text = to_string(&d).unwrap();
        let back = parse(&text).unwrap();
        assert_eq!(back.at(&["run", "duration"]).unwrap().as_str(), Some("20s"));
        assert_eq!(back.at(&["params", "rows"]).unwrap().as_str(), Some("100"), "quoted, so still text: {text}");
        assert_eq!(back.at(&["operations", "write", "steps"]).unwrap().items()[0].get("cql").unwrap().as_str(), Some("INSERT INTO t\n"));
        assert_eq!(back.entries().iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["name", "description", "run", "operations", "schema", "flag", "params"]);
        assert_eq!(back.get("flag").unwrap().as_str(), Some("yes"));
    }
}
