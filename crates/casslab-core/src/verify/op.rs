//! One operation's part in verification, whatever the target: which of its drawn values make
//! each step's key (a step is a CQL statement or a Redis command), which are made from the key
//! and the write number instead of drawn, and what its reads' columns are. The targets plan an
//! [`OpPlan`] per verified operation and call, around each step they send, [`OpPlan::begin_write`]
//! / [`WriteTicket::finish`] for a write and [`OpPlan::before_read`] / [`OpPlan::check_row`] for
//! a read; drawing the values is [`OpPlan::draw`]. Results go into the worker's stats slot.

use super::classify::{classify, Class, Expiry, Found, Judged};
use super::counters::{bounds as counter_bounds, judge as counter_judge, CounterRecord, Increment, Sums};
use super::record::{next_write_timestamp_us, Begun, KeyState, Order, WriteKind};
use super::write_values::show;
use super::{Table, Verifier, Violation};
use crate::gen::GeneratorSet;
use crate::stats::OpStats;
use rand::rngs::SmallRng;
use scylla::value::CqlValue;
use std::sync::{Arc, Mutex};

/// How a read of several rows of one partition takes part.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionRows {
    /// The key columns that name the partition (bound by `= ?`): the table's first `bound`.
    pub bound: usize,
    /// Where each other key column is among the columns the read returns.
    pub key_columns: Vec<usize>,
    /// It asks for every row of the partition (no clustering restriction, no LIMIT).
    pub whole: bool,
}

/// A step that writes a key's row.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteStep {
    pub kind: WriteKind,
    /// Drawn values made from the key and write number instead: (value index, generator).
    pub derived: Vec<(usize, usize)>,
    /// Kept in the record; when not (the load, without verification), the values are those of
    /// write 1.
    pub recorded: bool,
}

/// A step that reads a key's row: each column it returns, as a column of the table (`None`:
/// not checked — a key column, a function, a column no recorded write writes).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadStep {
    pub columns: Vec<Option<usize>>,
    pub judged: Judged,
    /// Whether it is sure to meet the writes (when known).
    pub overlap: Option<super::Overlap>,
    /// A read of several rows of one partition (`None`: of one row, by every key column).
    pub rows: Option<PartitionRows>,
}

/// A step that adds to a counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IncrementStep {
    pub delta: Increment,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StepRole {
    Write(WriteStep),
    Read(ReadStep),
    Increment(IncrementStep),
}

/// One step's part: its table (in the verifier), the drawn values that make its key (in the
/// table's key order), and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPlan {
    pub table: usize,
    pub key_values: Vec<usize>,
    pub role: StepRole,
}

/// A verified operation: one entry per step (`None`: the step takes no part).
pub struct OpPlan {
    pub op: String,
    pub steps: Vec<Option<StepPlan>>,
    pub verifier: Arc<Verifier>,
    /// Per drawn value: whether it is a key (drawn with its `n`) and whether it is made from a
    /// key instead of drawn.
    pub keyed: Vec<bool>,
    pub derived: Vec<bool>,
    /// Per step: a read verification was asked for but cannot check.
    pub unchecked: Vec<bool>,
    /// The operation's stats slot in the phase's plan (set when the phase is planned).
    pub slot: usize,
}

/// A drawn value's `n` (keys only).
pub type Ns = Vec<Option<i64>>;

/// What a read of one key brought back.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// No row.
    Absent,
    /// A row: its columns in the order the step returns them.
    Row(Vec<Option<CqlValue>>),
    /// Nothing that says whether there is a row (see [`Found::Undecided`]).
    Undecided,
}

/// What a read needs back when its answer came: the key and the record as it was sent.
pub struct ReadTicket {
    table: usize,
    index: Option<u64>,
    ns: Vec<i64>,
    at_send: KeyState,
    /// When it was sent, Unix milliseconds (for a table whose rows expire).
    sent_ms: i64,
    /// A counter's sums when it was sent.
    sums: Sums,
}

/// A write begun: send it with its timestamp, then finish it with whether the server
/// acknowledged it.
pub struct WriteTicket<'a> {
    table: &'a Table,
    index: Option<u64>,
    begun: Option<Begun>,
    timestamp_us: Option<i64>,
}

impl WriteTicket<'_> {
    /// The timestamp the write must carry (microseconds; `None`: the server's own, for a write
    /// that is not recorded or a server that orders writes by arrival).
    pub fn timestamp_us(&self) -> Option<i64> {
        self.timestamp_us
    }

    pub fn finish(self, acked: bool) {
        if let (Some(i), Some(b)) = (self.index, &self.begun) {
            self.table.record.finish(i, b, acked);
            if let (true, Some(times), Some(ts)) = (acked, &self.table.times, b.timestamp_us) {
                times.acked(i, b.number, ts / 1000, crate::units::unix_now_ms());
            }
        }
    }
}

/// An increment begun: finish it with whether the server acknowledged it.
pub struct IncrementTicket<'a> {
    counter: Option<(&'a CounterRecord, u64, i64)>,
}

impl IncrementTicket<'_> {
    pub fn finish(self, acked: bool) {
        if let Some((c, key, delta)) = self.counter {
            c.finish(key, delta, acked);
        }
    }
}

impl OpPlan {
    /// Draws one execution's values: keys with their `n` (moved into a shard's own keys when
    /// the table says so), values made from keys as placeholders (filled by `begin_write`),
    /// the others as usual.
    #[inline]
    pub fn draw(&self, gens: &GeneratorSet, generators: &[usize], rng: &mut SmallRng) -> (Vec<CqlValue>, Ns) {
        let mut ns = vec![None; generators.len()];
        let values = generators
            .iter()
            .enumerate()
            .map(|(i, g)| {
                if self.derived[i] {
                    CqlValue::Empty
                } else if self.keyed[i] {
                    let (v, n) = gens.value_and_n(*g, rng);
                    match n.and_then(|n| self.owned_n(i, n)) {
                        Some(owned) if Some(owned) != n => {
                            ns[i] = Some(owned);
                            gens.value_at(*g, owned)
                        }
                        _ => {
                            ns[i] = n;
                            v
                        }
                    }
                } else {
                    gens.value(*g, rng)
                }
            })
            .collect();
        (values, ns)
    }

    /// A key's `n` moved into the keys this loader owns, for the table value `i` is a key of.
    fn owned_n(&self, i: usize, n: i64) -> Option<i64> {
        let step = self.steps.iter().flatten().find(|s| s.key_values.first() == Some(&i))?;
        let (first, count) = self.verifier.owned(step.table)?;
        Some(first + (n.wrapping_sub(first)).rem_euclid(count as i64))
    }

    fn key_ns(step: &StepPlan, ns: &Ns) -> Option<Vec<i64>> {
        step.key_values.iter().map(|i| ns[*i]).collect()
    }

    /// Begins write step `step`: numbers it in the record and makes its derived values.
    pub fn begin_write(&self, gens: &GeneratorSet, step: usize, values: &mut [CqlValue], ns: &Ns) -> WriteTicket<'_> {
        let plan = self.steps[step].as_ref().expect("a write step");
        let StepRole::Write(w) = &plan.role else { unreachable!("a write step") };
        let table = &*self.verifier.tables[plan.table];
        let key = Self::key_ns(plan, ns);
        let index = key.as_deref().and_then(|k| table.index(k));
        let recorded = w.recorded && self.verifier.on;
        let begun = match (recorded, index) {
            (true, Some(i)) => table.record.begin(i, w.kind),
            _ => None,
        };
        let number = match (recorded, &begun) {
            (_, Some(b)) => b.number,
            (false, _) => 1,
            // a key beyond the record (or out of numbers): values of no write a read could expect
            (true, None) => 0,
        };
        let timestamp_us = match (&begun, table.record.order) {
            (Some(b), _) => b.timestamp_us,
            (None, Order::Timestamps) if recorded => Some(next_write_timestamp_us()),
            _ => None,
        };
        let bits = table.key_bits(key.as_deref().unwrap_or(&[]));
        for (vi, g) in &w.derived {
            values[*vi] = table.write_value(gens, *g, bits, number);
        }
        WriteTicket { table, index, begun, timestamp_us }
    }

    /// Begins increment step `step` of the execution whose drawn values are `values`: the
    /// increment is recorded as begun; finish it with [`IncrementTicket::finish`].
    pub fn begin_increment(&self, step: usize, values: &[CqlValue], ns: &Ns) -> IncrementTicket<'_> {
        let plan = self.steps[step].as_ref().expect("an increment step");
        let StepRole::Increment(inc) = &plan.role else { unreachable!("an increment step") };
        let table = &*self.verifier.tables[plan.table];
        let index = Self::key_ns(plan, ns).and_then(|k| table.index(&k));
        let counter = match (&table.counters, index, delta_of(inc, values)) {
            (Some(c), Some(i), Some(d)) => {
                c.begin(i, d);
                Some((c, i, d))
            }
            _ => None,
        };
        IncrementTicket { counter }
    }

    /// Counts `rows` rows (at least one) read by a step that cannot be checked.
    pub fn count_unchecked(&self, rows: usize, stats: &Mutex<Vec<OpStats>>) {
        count_unchecked(self.slot, rows, stats);
    }

    /// Before read step `step` is sent: what the record says of its key now (`None`: the step's
    /// table is not checked now; count what it reads with [`OpPlan::count_unchecked`]).
    pub fn before_read(&self, step: usize, ns: &Ns) -> Option<ReadTicket> {
        let plan = self.steps[step].as_ref()?;
        if !self.verifier.checking(plan.table) {
            return None;
        }
        let ns = Self::key_ns(plan, ns)?;
        let table = &self.verifier.tables[plan.table];
        let index = table.index(&ns);
        let at_send = index.map(|i| table.record.state(i)).unwrap_or_default();
        let sent_ms = if table.times.is_some() { crate::units::unix_now_ms() } else { 0 };
        let sums = match (&table.counters, index) {
            (Some(c), Some(i)) => c.state(i),
            _ => Sums::default(),
        };
        Some(ReadTicket { table: plan.table, index, ns, at_send, sent_ms, sums })
    }

    /// Classifies what read step `step` brought back for its key and counts it into `stats`.
    pub fn check(&self, gens: &GeneratorSet, step: usize, t: &ReadTicket, reply: &Reply, key_shown: impl FnOnce() -> String, stats: &Mutex<Vec<OpStats>>) {
        let plan = self.steps[step].as_ref().expect("a read step");
        let StepRole::Read(r) = &plan.role else { unreachable!("a read step") };
        let table = &*self.verifier.tables[t.table];
        let seen = Seen { index: t.index, ns: &t.ns, at_send: &t.at_send, sent_ms: t.sent_ms, sums: t.sums };
        if let Some(judged) = self.judge(gens, r, table, &seen, reply, false) {
            self.count(judged, r, &table.name, stats, key_shown);
        }
    }

    /// Counts one judged row into `stats`, with its key shown when it is a violation kept.
    pub(crate) fn count(&self, j: Judgement, r: &ReadStep, table: &str, stats: &Mutex<Vec<OpStats>>, key_shown: impl FnOnce() -> String) {
        let mut g = stats.lock().unwrap_or_else(|e| e.into_inner());
        g[self.slot].verify.get_or_insert_default().record(j.class, j.unsettled, r.overlap, || {
            let (expected, got) = j.words.unwrap_or_default();
            Violation { op: self.op.clone(), class: j.class, key: format!("{table} {}", key_shown()), expected, got, at_unix_ms: crate::units::unix_now_ms() }
        });
    }

    /// Judges what came back for one key (`seen`: the key and the record as the read was
    /// sent). `violations_only`: `None` unless it is a violation (a key a read of several rows
    /// should have returned).
    pub(crate) fn judge(&self, gens: &GeneratorSet, r: &ReadStep, table: &Table, seen: &Seen<'_>, reply: &Reply, violations_only: bool) -> Option<Judgement> {
        let t = seen;
        if let (Some(counters), Some(i)) = (&table.counters, t.index) {
            return judge_counter(counters, i, r, table, t, reply).filter(|j| !violations_only || j.class.is_violation());
        }
        let at_end = t.index.map(|i| table.record.state(i)).unwrap_or_default();
        let bits = table.key_bits(t.ns);
        let row = match reply {
            Reply::Row(cols) => Some(cols.as_slice()),
            _ => None,
        };
        let (found, bad) = match reply {
            Reply::Absent => (Found::Absent, None),
            Reply::Undecided => (Found::Undecided, None),
            Reply::Row(cols) => {
                let checked = r.columns.iter().zip(cols).filter_map(|(c, v)| c.map(|c| (c, v.as_ref())));
                table.check_row(gens, bits, t.at_send, at_end.issued.max(t.at_send.issued), checked)
            }
        };
        let expiry = match (&table.times, t.index) {
            (Some(times), Some(i)) => times.expiry(i, t.at_send, found, t.sent_ms, crate::units::unix_now_ms()),
            (Some(_), None) => Expiry::Unknown,
            (None, _) => Expiry::Live,
        };
        let (class, unsettled) = classify(t.at_send, &at_end, found, expiry, r.judged);
        if violations_only && !class.is_violation() {
            return None;
        }
        // the words of a violation, made only for one (they are rare)
        let words = class.is_violation().then(|| (expected_text(gens, table, bits, t.at_send, r, class, bad), got_text(table, r, row, found, bad)));
        Some(Judgement { class, unsettled, words })
    }
}

/// One key's read judged: its class, whether a write to it was in flight, and for a
/// violation what was expected and what came back.
pub(crate) struct Judgement {
    pub class: Class,
    pub unsettled: bool,
    pub words: Option<(String, String)>,
}

/// One key as a read saw it: its record index, its key's `n`s, the record when the read was
/// sent, and when that was (Unix ms, for rows that expire), and a counter's sums then.
pub(crate) struct Seen<'a> {
    pub index: Option<u64>,
    pub ns: &'a [i64],
    pub at_send: &'a KeyState,
    pub sent_ms: i64,
    pub sums: Sums,
}

/// A read of counter `key` judged: the acknowledged increments, within those that may have landed.
fn judge_counter(counters: &CounterRecord, key: u64, r: &ReadStep, table: &Table, t: &Seen<'_>, reply: &Reply) -> Option<Judgement> {
    let at_end = counters.state(key);
    let unsettled = t.sums.unsettled() || at_end != t.sums;
    let column = r.columns.iter().position(Option::is_some);
    let got = match reply {
        Reply::Absent => None,
        Reply::Undecided => return Some(Judgement { class: Class::Unchecked, unsettled, words: None }),
        Reply::Row(cols) => match column.and_then(|c| cols.get(c)).map(|v| v.as_ref().map(counter_value)) {
            Some(Some(Some(v))) => Some(v),
            Some(None) => None,
            _ => return Some(Judgement { class: Class::Unchecked, unsettled, words: None }),
        },
    };
    let class = counter_judge(&t.sums, &at_end, got);
    let words = class.is_violation().then(|| {
        let (lo, hi) = counter_bounds(&t.sums, &at_end);
        let name = table.columns.first().map_or("counter", |c| c.name.as_str());
        let expected = if lo == hi { format!("{name}={lo}") } else { format!("{name} from {lo} to {hi} (increments in flight or failed)") };
        (expected, got.map_or("no row".into(), |v| format!("{name}={v}")))
    });
    Some(Judgement { class, unsettled, words })
}

/// A counter's value as the driver returns it.
fn counter_value(v: &CqlValue) -> Option<i64> {
    match v {
        CqlValue::Counter(c) => Some(c.0),
        CqlValue::BigInt(n) => Some(*n),
        _ => None,
    }
}

/// What an increment step adds, from the execution's drawn `values` (`None`: not a number).
pub fn delta_of(step: &IncrementStep, values: &[CqlValue]) -> Option<i64> {
    match step.delta {
        Increment::Literal(n) => Some(n),
        Increment::Bound { value, negate } => {
            let n = match values.get(value)? {
                CqlValue::BigInt(n) => *n,
                CqlValue::Counter(c) => c.0,
                CqlValue::Int(n) => *n as i64,
                CqlValue::SmallInt(n) => *n as i64,
                CqlValue::TinyInt(n) => *n as i64,
                _ => return None,
            };
            if negate {
                n.checked_neg()
            } else {
                Some(n)
            }
        }
    }
}

/// Counts `rows` rows (at least one: an empty answer is one read) of operation slot `slot`
/// as unchecked.
pub fn count_unchecked(slot: usize, rows: usize, stats: &Mutex<Vec<OpStats>>) {
    let mut g = stats.lock().unwrap_or_else(|e| e.into_inner());
    g[slot].verify.get_or_insert_default().counts.unchecked += rows.max(1) as u64;
}

/// The write a read should have seen, in words: its number, and the value of the column a
/// corrupt read got wrong (else the first column the writes since the load write).
fn expected_text(gens: &GeneratorSet, table: &Table, bits: u64, s: &KeyState, r: &ReadStep, class: Class, bad: Option<usize>) -> String {
    let at = if s.floor < s.issued { format!("write {} (or up to {}, in flight)", s.floor, s.issued) } else { format!("write {}", s.floor) };
    if class == Class::Resurrected || (s.delete && !s.put) {
        return format!("{at}: no row (deleted)");
    }
    let pick =
        bad.or_else(|| r.columns.iter().flatten().find(|c| !table.columns[**c].load_only).copied()).or_else(|| r.columns.iter().flatten().next().copied());
    match pick {
        Some(c) => {
            let col = &table.columns[c];
            let w = if col.load_only { 1 } else { s.floor.max(1) };
            let v = col.gens.first().map(|g| table.write_value(gens, *g, bits, w));
            let shown = match (table.bytes, v.as_ref()) {
                (Some(encode), Some(v)) => show(Some(&CqlValue::Blob(encode(v)))),
                _ => show(v.as_ref()),
            };
            format!("{at}: {}={shown}", col.name)
        }
        None => at,
    }
}

/// What came back, in words.
fn got_text(table: &Table, r: &ReadStep, row: Option<&[Option<CqlValue>]>, found: Found, bad: Option<usize>) -> String {
    let Some(cols) = row else { return "no row".into() };
    let newest = match found {
        Found::Row { newest: Some(w), .. } => format!(" (write {w})"),
        _ => String::new(),
    };
    let pick =
        bad.or_else(|| r.columns.iter().flatten().find(|c| !table.columns[**c].load_only).copied()).or_else(|| r.columns.iter().flatten().next().copied());
    match pick.and_then(|c| r.columns.iter().position(|x| *x == Some(c)).map(|i| (c, i))) {
        Some((c, i)) => {
            let what = if bad.is_some() { ", which no write made" } else { "" };
            format!("{}={}{what}{newest}", table.columns[c].name, show(cols.get(i).and_then(Option::as_ref)))
        }
        None => format!("a row{newest}"),
    }
}
