//! Redis commands as written in workload files: `redis: HSET ? field0 ? field1 ?` with
//! `args: [key, f0, f1]`, each `?` a value drawn from the generator bound to it, every other
//! word a literal (quote a literal that holds spaces or is a lone `?`). An unquoted word holding
//! a `{A..B}` range repeats once per number together with the `?` markers right after it
//! (`HSET ? field{0..9} ?` sets ten fields; `args` repeat as everywhere: `[key, "f{0..9}"]`).
//! This module splits the text into words, and checks the command against the table of
//! commands casslab runs and their arity, so a mistake is reported with its line before
//! anything touches a server.
//! Executing the commands is `targets::redis`'s job.

use super::model::{RedisArg, RedisCommand};
use super::repeat::{expand_item, expand_list, has_range, RepeatError};
use super::workload_error::OpProblem;

/// How many arguments a command takes.
#[derive(Debug, Clone, Copy)]
enum Arity {
    /// Exactly / at least / between.
    Exactly(usize),
    AtLeast(usize),
    Between(usize, usize),
    /// A key, then pairs (`HSET key field value …`): an odd count ≥ 3.
    KeyThenPairs,
    /// Pairs only (`MSET key value …`): an even count ≥ 2.
    Pairs,
}

impl Arity {
    fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
            Arity::Between(a, b) => (a..=b).contains(&n),
            Arity::KeyThenPairs => n >= 3 && !n.is_multiple_of(2),
            Arity::Pairs => n >= 2 && n.is_multiple_of(2),
        }
    }

    fn describe(self) -> String {
        match self {
            Arity::Exactly(1) => "1 argument".into(),
            Arity::Exactly(k) => format!("{k} arguments"),
            Arity::AtLeast(k) => format!("at least {k} argument{}", if k == 1 { "" } else { "s" }),
            Arity::Between(a, b) => format!("{a} to {b} arguments"),
            Arity::KeyThenPairs => "a key, then field value pairs (3, 5, 7, … arguments)".into(),
            Arity::Pairs => "key value pairs (2, 4, 6, … arguments)".into(),
        }
    }
}

/// The data commands casslab runs, with their arity. Administrative commands (FLUSHALL,
/// CONFIG, SHUTDOWN, KEYS, …) are deliberately absent: a workload cannot run them.
const COMMANDS: &[(&str, Arity)] = &[
    ("GET", Arity::Exactly(1)),
    ("SET", Arity::Between(2, 7)),
    ("SETEX", Arity::Exactly(3)),
    ("SETNX", Arity::Exactly(2)),
    ("GETDEL", Arity::Exactly(1)),
    ("MGET", Arity::AtLeast(1)),
    ("MSET", Arity::Pairs),
    ("APPEND", Arity::Exactly(2)),
    ("STRLEN", Arity::Exactly(1)),
    ("INCR", Arity::Exactly(1)),
    ("INCRBY", Arity::Exactly(2)),
    ("DECR", Arity::Exactly(1)),
    ("DECRBY", Arity::Exactly(2)),
    ("DEL", Arity::AtLeast(1)),
    ("UNLINK", Arity::AtLeast(1)),
    ("EXISTS", Arity::AtLeast(1)),
    ("EXPIRE", Arity::Between(2, 3)),
    ("PEXPIRE", Arity::Between(2, 3)),
    ("PERSIST", Arity::Exactly(1)),
    ("TTL", Arity::Exactly(1)),
    ("PTTL", Arity::Exactly(1)),
    ("HGET", Arity::Exactly(2)),
    ("HGETALL", Arity::Exactly(1)),
    ("HMGET", Arity::AtLeast(2)),
    ("HSET", Arity::KeyThenPairs),
    ("HDEL", Arity::AtLeast(2)),
    ("HEXISTS", Arity::Exactly(2)),
    ("HINCRBY", Arity::Exactly(3)),
    ("HLEN", Arity::Exactly(1)),
    ("LPUSH", Arity::AtLeast(2)),
    ("RPUSH", Arity::AtLeast(2)),
    ("LPOP", Arity::Between(1, 2)),
    ("RPOP", Arity::Between(1, 2)),
    ("LRANGE", Arity::Exactly(3)),
    ("LTRIM", Arity::Exactly(3)),
    ("LLEN", Arity::Exactly(1)),
    ("SADD", Arity::AtLeast(2)),
    ("SREM", Arity::AtLeast(2)),
    ("SISMEMBER", Arity::Exactly(2)),
    ("SMEMBERS", Arity::Exactly(1)),
    ("SCARD", Arity::Exactly(1)),
    ("ZADD", Arity::AtLeast(3)),
    ("ZINCRBY", Arity::Exactly(3)),
    ("ZSCORE", Arity::Exactly(2)),
    ("ZRANGE", Arity::Between(3, 8)),
    ("ZREM", Arity::AtLeast(2)),
    ("ZCARD", Arity::Exactly(1)),
    ("PING", Arity::Between(0, 1)),
];

/// The names of the commands casslab runs.
pub fn command_names() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().map(|(n, _)| *n)
}

/// One word of a command: a literal, a `?` marker, or an unquoted word holding a `{A..B}`
/// range (until [`expand`] repeats it).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Word {
    Literal(String),
    Marker,
    Ranged(String),
}

/// Splits a command into words: whitespace separates them; `"…"` and `'…'` quote a word
/// (a backslash escapes the next character inside double quotes); an unquoted `?` is a marker.
fn words(text: &str) -> Result<Vec<Word>, OpProblem> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = String::new();
        let mut quoted = false;
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '"' || c == '\'' {
                quoted = true;
                loop {
                    match chars.next() {
                        None => return Err(OpProblem::UnclosedQuote),
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => word.push(chars.next().ok_or(OpProblem::UnclosedQuote)?),
                        Some(x) => word.push(x),
                    }
                }
            } else {
                word.push(c);
            }
        }
        out.push(match (quoted, word.as_str()) {
            (false, "?") => Word::Marker,
            (false, w) if has_range(w) => Word::Ranged(word),
            _ => Word::Literal(word),
        });
    }
    Ok(out)
}

/// Repeats each ranged word once per number of its range, together with the markers that
/// follow it directly: `field{0..2} ?` is `field0 ? field1 ? field2 ?`.
fn expand(ws: Vec<Word>) -> Result<Vec<Word>, RepeatError> {
    let mut out = Vec::with_capacity(ws.len());
    let mut at = 0;
    while at < ws.len() {
        match &ws[at] {
            Word::Ranged(w) => {
                let markers = ws[at + 1..].iter().take_while(|w| **w == Word::Marker).count();
                for copy in expand_item(w)? {
                    out.push(Word::Literal(copy));
                    out.extend(std::iter::repeat_n(Word::Marker, markers));
                }
                at += 1 + markers;
            }
            w => {
                out.push(w.clone());
                at += 1;
            }
        }
    }
    Ok(out)
}

/// Reads one command (`HSET ? field0 ?`) with the generators bound to its markers, in order.
pub(crate) fn parse_command(text: &str, args: &[String], line: usize) -> Result<RedisCommand, OpProblem> {
    let mut ws = expand(words(text)?).map_err(OpProblem::Repeat)?.into_iter();
    let args = expand_list(args.to_vec()).map_err(OpProblem::Repeat)?;
    let name = match ws.next() {
        None => return Err(OpProblem::EmptyRedisCommand),
        Some(Word::Marker) => return Err(OpProblem::MarkerAsCommand),
        Some(Word::Literal(n) | Word::Ranged(n)) => n.to_ascii_uppercase(),
    };
    let Some((_, arity)) = COMMANDS.iter().find(|(n, _)| *n == name) else {
        return Err(OpProblem::UnknownRedisCommand { name, known: command_names().map(String::from).collect() });
    };
    let rest: Vec<Word> = ws.collect();
    let markers = rest.iter().filter(|w| **w == Word::Marker).count();
    if markers != args.len() {
        return Err(OpProblem::RedisMarkers { command: name, markers, args: args.len() });
    }
    if !arity.accepts(rest.len()) {
        return Err(OpProblem::RedisArity { command: name, expected: arity.describe(), got: rest.len() });
    }
    let mut bound = args.iter();
    let args = rest
        .into_iter()
        .map(|w| match w {
            Word::Literal(l) | Word::Ranged(l) => RedisArg::Literal(l),
            Word::Marker => RedisArg::Bound(bound.next().expect("counted").clone()),
        })
        .collect();
    Ok(RedisCommand { name, args, line })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_ranged_word_repeats_with_the_markers_after_it() {
        let c = parse_command("HSET ? field{0..2} ?", &args(&["key", "v{0..2}"]), 3).unwrap();
        let words: Vec<String> = c
            .args
            .iter()
            .map(|a| match a {
                RedisArg::Literal(l) => l.clone(),
                RedisArg::Bound(b) => format!("<{b}>"),
            })
            .collect();
        assert_eq!(words, ["<key>", "field0", "<v0>", "field1", "<v1>", "field2", "<v2>"]);
        // a quoted word is a literal as written
        let c = parse_command("HMGET ? 'f{0..1}' f{0..1}", &args(&["key"]), 3).unwrap();
        assert_eq!(c.args[1..], [RedisArg::Literal("f{0..1}".into()), RedisArg::Literal("f0".into()), RedisArg::Literal("f1".into())]);
        // the markers and the repeated args must still agree
        let e = parse_command("HSET ? field{0..2} ?", &args(&["key", "v{0..1}"]), 3).unwrap_err();
        assert!(matches!(e, OpProblem::RedisMarkers { markers: 4, args: 3, .. }), "{e:?}");
        let e = parse_command("DEL k{3..1}", &[], 3).unwrap_err();
        assert!(matches!(e, OpProblem::Repeat(RepeatError::Backwards { .. })), "{e:?}");
    }

    #[test]
    fn commands_bind_markers_in_order_and_keep_literals() {
        let c = parse_command("hset ? field0 ? \"my field\" '?'", &args(&["key", "f0"]), 7).unwrap();
        assert_eq!(c.name, "HSET");
        assert_eq!(
            c.args,
            vec![
                RedisArg::Bound("key".into()),
                RedisArg::Literal("field0".into()),
                RedisArg::Bound("f0".into()),
                RedisArg::Literal("my field".into()),
                RedisArg::Literal("?".into()),
            ]
        );
        assert_eq!(c.bound().collect::<Vec<_>>(), ["key", "f0"]);
        assert_eq!(c.line, 7);
        assert_eq!(parse_command("SET ? \"a \\\"b\\\"\"", &args(&["k"]), 1).unwrap().args[1], RedisArg::Literal("a \"b\"".into()));
    }

    #[test]
    fn mistakes_say_what_to_write() {
        let e = parse_command("HGETAL ?", &args(&["k"]), 1).unwrap_err().to_string();
        assert!(e.starts_with("unknown Redis command \"HGETAL\"; did you mean \"HGETALL\"?"), "{e}");
        let e = parse_command("FLUSHALL", &[], 1).unwrap_err().to_string();
        assert!(e.contains("unknown Redis command \"FLUSHALL\""), "{e}");
        let e = parse_command("HSET ? field0", &args(&["k"]), 1).unwrap_err().to_string();
        assert_eq!(e, "`HSET` takes a key, then field value pairs (3, 5, 7, … arguments), not 2");
        let e = parse_command("GET ? ?", &args(&["k"]), 1).unwrap_err().to_string();
        assert_eq!(e, "`GET` has 2 marker(s) `?` but 1 value(s) in `args`; give one generator per `?`");
        assert_eq!(parse_command("  ", &[], 1).unwrap_err(), OpProblem::EmptyRedisCommand);
        assert_eq!(parse_command("? k", &[], 1).unwrap_err(), OpProblem::MarkerAsCommand);
        assert_eq!(parse_command("GET \"k", &[], 1).unwrap_err(), OpProblem::UnclosedQuote);
    }

    #[test]
    fn arities() {
        for (cmd, n, ok) in
            [("EXPIRE ? 60", 1, true), ("EXPIRE ?", 1, false), ("DEL ? ? ?", 3, true), ("MSET ? ? ?", 3, false), ("PING", 0, true), ("INCR ?", 1, true)]
        {
            let names: Vec<String> = (0..n).map(|i| format!("g{i}")).collect();
            assert_eq!(parse_command(cmd, &names, 1).is_ok(), ok, "{cmd}");
        }
    }

    const REDIS: &str = "name: r
generators:
  key: { type: text, prefix: user, dist: sequence, min: 0, max: 10 }
  v: { type: text, size: 8 }
  tags: { type: \"set<text>\", size: 3 }
operations:
  write:
    redis: HSET ? field0 ?
    args: [key, v]
  rmw:
    pipeline:
      - { redis: HGETALL ?, args: [key] }
      - redis: EXPIRE ? 60
        args: [key]
  two:
    steps:
      - { redis: GET ?, args: [key] }
      - { redis: INCR ?, args: [key] }
run:
  mix: { write: 1, rmw: 1, two: 1 }
  duration: 10s
";

    fn redis_error(src: &str) -> String {
        crate::workload::parse_workload(src, "r.yaml", &std::collections::BTreeMap::new()).unwrap_err().to_string()
    }

    #[test]
    fn redis_workloads_are_read_with_their_commands() {
        use crate::workload::{RedisArg, RedisMode, TargetKind};
        let w = crate::workload::parse_workload(REDIS, "r.yaml", &std::collections::BTreeMap::new()).unwrap();
        assert_eq!((w.target, w.keyspace.as_str()), (TargetKind::Redis, "redis"));
        let write = w.operation("write").unwrap().redis().unwrap();
        assert_eq!(write.commands[0].args, vec![RedisArg::Bound("key".into()), RedisArg::Literal("field0".into()), RedisArg::Bound("v".into())]);
        let rmw = w.operation("rmw").unwrap().redis().unwrap();
        assert_eq!(rmw.mode, RedisMode::Pipeline);
        assert_eq!(rmw.commands.iter().map(|c| (c.name.as_str(), c.line)).collect::<Vec<_>>(), [("HGETALL", 12), ("EXPIRE", 13)]);
        assert_eq!(w.operation("two").unwrap().redis().unwrap().mode, RedisMode::Sequence);
        assert!(w.operation("write").unwrap().cql().is_none(), "a Redis operation has no CQL body");
    }

    #[test]
    fn redis_mistakes_point_at_their_line() {
        let e = redis_error(&REDIS.replace("HSET ? field0 ?", "HSTE ? field0 ?"));
        assert!(e.starts_with("r.yaml:8: operation \"write\": unknown Redis command \"HSTE\"; did you mean \"HSET\"?"), "{e}");
        let e = redis_error(&REDIS.replace("EXPIRE ? 60", "EXPIRE ?"));
        assert!(e.starts_with("r.yaml:13: operation \"rmw\": `EXPIRE` takes 2 to 3 arguments, not 1"), "{e}");
        let e = redis_error(&REDIS.replace("args: [key, v]", "args: [key, vv]"));
        assert!(e.starts_with("r.yaml:9: operation \"write\": binds unknown generator \"vv\"; did you mean \"v\"?"), "{e}");
        let e = redis_error(&REDIS.replace("{ redis: GET ?, args: [key] }", "{ redis: GET ?, args: [tags] }"));
        assert!(e.starts_with("r.yaml:17: operation \"two\": binds generator \"tags\" of type set<text>"), "{e}");
        let e = redis_error(&REDIS.replace("args: [key, v]", "args: [key]"));
        assert!(e.starts_with("r.yaml:8: operation \"write\": `HSET` has 2 marker(s)"), "{e}");
        let e = redis_error(&REDIS.replace("    args: [key, v]\n", "    args: [key, v]\n    consistency: ONE\n"));
        assert!(e.starts_with("r.yaml:10: operation \"write\": `consistency` is a CQL setting"), "{e}");
        let e = redis_error(&REDIS.replace("  two:\n", "  c:\n    cql: SELECT now() FROM system.local\n  two:\n"));
        assert!(e.contains("operation \"c\" is CQL and \"write\" is Redis"), "{e}");
        let e = redis_error(&format!("schema: [CREATE TABLE t (k int PRIMARY KEY)]\n{REDIS}"));
        assert!(e.starts_with("r.yaml:1: `schema:` is about CQL tables"), "{e}");
        let e = redis_error("operations:\n  r: { cql: SELECT now() FROM system.local }\nrun: { mix: { r: 1 }, duration: 1s }\n");
        assert!(e.contains("`keyspace:` is missing"), "{e}");
    }
}
