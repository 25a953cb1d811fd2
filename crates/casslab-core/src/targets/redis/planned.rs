//! The Redis target's planned operations: each command's name and literal arguments encoded
//! once, with the places its drawn values go, so that starting an execution only draws the
//! values and writes one request of the right size. Values are written as Redis writes them:
//! text and blobs as their bytes, numbers in decimal, uuids in their usual form, timestamps
//! as milliseconds since the epoch, booleans as 1 and 0.

use crate::gen::GeneratorSet;
use crate::workload::{RedisArg, RedisMode, RedisOp};
use rand::rngs::SmallRng;
use redis::{Cmd, Pipeline};
use scylla::value::CqlValue;

/// One argument of a planned command.
enum Part {
    Literal(Box<[u8]>),
    /// An index into the operation's drawn values.
    Value(usize),
}

/// A command with its literal arguments ready.
struct PlannedCommand {
    name: &'static str,
    parts: Vec<Part>,
    /// Bytes of the name and literals, plus a guess for the values: the request's capacity.
    size_hint: usize,
}

/// One operation ready to run (opaque outside the Redis target).
pub struct PlannedOp {
    commands: Vec<PlannedCommand>,
    /// The distinct generators the operation draws from, once per execution.
    pub(super) generators: Vec<usize>,
    mode: RedisMode,
    /// Draws from two or more sequences (see [`GeneratorSet::joint_draw`]).
    pub(super) joint_sequences: bool,
    /// Its part in verification, when it has one.
    pub(super) verify: Option<Box<crate::verify::op::OpPlan>>,
    /// The generators it draws from (a verified operation makes values after drawing).
    pub(super) gens: std::sync::Arc<GeneratorSet>,
}

/// The request of one execution.
pub enum Request {
    One(Cmd),
    /// `steps:` sent one after the other.
    Sequence(Vec<Cmd>),
    /// `pipeline:` sent at once.
    Pipeline(Pipeline),
}

/// A rough size of a drawn value, for the request's capacity.
const VALUE_HINT_BYTES: usize = 64;

/// Plans `op` (validated: every bound generator exists and makes a single value).
pub fn plan_op(op: &RedisOp, gens: &std::sync::Arc<GeneratorSet>) -> PlannedOp {
    let mut generators: Vec<usize> = Vec::new();
    let commands = op
        .commands
        .iter()
        .map(|c| {
            let mut size_hint = c.name.len();
            let parts = c
                .args
                .iter()
                .map(|a| match a {
                    RedisArg::Literal(l) => {
                        size_hint += l.len();
                        Part::Literal(l.as_bytes().into())
                    }
                    RedisArg::Bound(g) => {
                        size_hint += VALUE_HINT_BYTES;
                        let g = gens.index_of(g).expect("validated");
                        Part::Value(match generators.iter().position(|x| *x == g) {
                            Some(i) => i,
                            None => {
                                generators.push(g);
                                generators.len() - 1
                            }
                        })
                    }
                })
                .collect();
            let name = crate::workload::redis_commands::command_names().find(|n| *n == c.name).expect("validated");
            PlannedCommand { name, parts, size_hint }
        })
        .collect();
    let joint_sequences = generators.iter().filter(|g| gens.is_sequence(**g)).count() >= 2;
    PlannedOp { commands, generators, mode: op.mode, joint_sequences, verify: None, gens: gens.clone() }
}

impl PlannedOp {
    /// Draws the execution's values and writes its request(s).
    pub fn request(&self, gens: &GeneratorSet, rng: &mut SmallRng) -> Request {
        let values: Vec<CqlValue> = {
            let _joint = self.joint_sequences.then(|| gens.joint_draw());
            self.generators.iter().map(|g| gens.value(*g, rng)).collect()
        };
        if let [one] = self.commands.as_slice() {
            return Request::One(one.cmd(&values));
        }
        match self.mode {
            RedisMode::Sequence => Request::Sequence(self.commands.iter().map(|c| c.cmd(&values)).collect()),
            RedisMode::Pipeline => {
                let mut p = Pipeline::with_capacity(self.commands.len());
                for c in &self.commands {
                    p.add_command(c.cmd(&values));
                }
                Request::Pipeline(p)
            }
        }
    }
}

impl PlannedOp {
    pub(super) fn command_count(&self) -> usize {
        self.commands.len()
    }

    /// Command `i` with the execution's `values`.
    pub(super) fn command(&self, i: usize, values: &[CqlValue]) -> Cmd {
        self.commands[i].cmd(values)
    }

    pub(super) fn command_name(&self, i: usize) -> &'static str {
        self.commands[i].name
    }
}

/// The bytes Redis keeps for a value casslab sends: what a verified read compares.
pub(super) fn value_bytes(v: &CqlValue) -> Vec<u8> {
    let mut c = Cmd::new();
    write_value(&mut c, v);
    let bytes = match c.args_iter().next() {
        Some(redis::Arg::Simple(b)) => b.to_vec(),
        _ => Vec::new(),
    };
    bytes
}

impl PlannedCommand {
    fn cmd(&self, values: &[CqlValue]) -> Cmd {
        let mut c = Cmd::with_capacity(self.parts.len() + 1, self.size_hint);
        c.arg(self.name);
        for p in &self.parts {
            match p {
                Part::Literal(l) => c.arg(&l[..]),
                Part::Value(i) => write_value(&mut c, &values[*i]),
            };
        }
        c
    }
}

/// Writes one drawn value as a command argument.
fn write_value<'c>(c: &'c mut Cmd, v: &CqlValue) -> &'c mut Cmd {
    match v {
        CqlValue::Text(s) | CqlValue::Ascii(s) => c.arg(s.as_bytes()),
        CqlValue::Blob(b) => c.arg(&b[..]),
        CqlValue::Int(n) => c.arg(*n),
        CqlValue::BigInt(n) | CqlValue::Counter(scylla::value::Counter(n)) => c.arg(*n),
        CqlValue::SmallInt(n) => c.arg(*n),
        CqlValue::TinyInt(n) => c.arg(*n),
        CqlValue::Double(x) => c.arg(*x),
        CqlValue::Float(x) => c.arg(*x),
        CqlValue::Boolean(b) => c.arg(u8::from(*b)),
        CqlValue::Timestamp(t) => c.arg(t.0),
        CqlValue::Uuid(u) => c.arg(&u.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer())[..]),
        CqlValue::Timeuuid(u) => c.arg(&uuid::Uuid::from_bytes(*u.as_bytes()).hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer())[..]),
        // collections are refused when the workload is read; anything else as the driver prints it
        other => c.arg(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_workload;
    use rand::SeedableRng;
    use std::collections::BTreeMap;

    #[test]
    fn requests_hold_literals_and_values_in_place() {
        let src = "generators:
  key: { type: text, prefix: user, dist: sequence, min: 0, max: 10 }
  n: { type: int, dist: sequence, min: 7, max: 8 }
  id: { type: uuid }
operations:
  w:
    pipeline:
      - { redis: HSET ? field0 ? id ?, args: [key, n, id] }
      - { redis: EXPIRE ? 60, args: [key] }
run: { mix: { w: 1 }, duration: 1s }
";
        let w = parse_workload(src, "r.yaml", &BTreeMap::new()).unwrap();
        let gens = std::sync::Arc::new(GeneratorSet::build(&w.generators).unwrap());
        let op = plan_op(w.operation("w").and_then(|o| o.redis()).unwrap(), &gens);
        assert_eq!((op.commands.len(), op.mode, op.joint_sequences), (2, RedisMode::Pipeline, true));
        let Request::Pipeline(p) = op.request(&gens, &mut SmallRng::seed_from_u64(1)) else { panic!("a pipeline") };
        let cmds: Vec<Vec<String>> = p
            .cmd_iter()
            .map(|c| {
                c.args_iter()
                    .map(|a| match a {
                        redis::Arg::Simple(b) => String::from_utf8_lossy(b).into_owned(),
                        _ => "<cursor>".into(),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(cmds[0][..5], ["HSET", "user0", "field0", "7", "id"].map(String::from));
        assert_eq!(cmds[0][5].len(), 36, "a uuid in its usual form: {}", cmds[0][5]);
        assert_eq!(cmds[1], ["EXPIRE", "user0", "60"].map(String::from));
    }
}
