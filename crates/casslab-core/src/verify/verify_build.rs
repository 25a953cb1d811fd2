//! Building a workload's verification from what its operations do, as the target read them: per
//! step (a statement or a command) its table, whether it writes (upserts or deletes) or reads
//! a key's row, which drawn values make the key and which columns it writes or returns
//! ([`StepInfo`]). From every operation the load and run phases run, each table gets its model
//! (key generators and domain, the generators of each column, which columns may be null, whether
//! every write writes whole rows) or the reason it cannot be verified, and each operation its
//! [`OpSpec`]. Pure: the targets describe, this decides.

use super::classify::Judged;
pub use super::counters::Increment;
use super::op::PartitionRows;
use super::op::{IncrementStep, OpPlan, ReadStep, StepPlan, StepRole, WriteStep};
use super::record::{Order, WriteKind};
use super::table_model::{Column, KeyPart, Table, PARTITION_KEYS};
use super::{Overlap, Verifier, VerifyNotice};
use crate::gen::GeneratorSet;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a step does to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Write(WriteKind),
    /// A read of rows of one key; `one_row`: named by every key column (else by its leading
    /// key columns — `StepInfo::key` — or not by its key at all).
    Read {
        one_row: bool,
    },
    /// Anything else: it neither writes a known row nor reads one.
    Other,
}

/// One step as the target read it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepInfo {
    pub table: String,
    pub kind: StepKind,
    /// Key columns with the drawn value bound to each, in the table's key order.
    pub key: Vec<(String, usize)>,
    /// Value columns a write binds, with the drawn value bound to each.
    pub values: Vec<(String, usize)>,
    /// Columns a write sets to a literal (not checked).
    pub literal: Vec<String>,
    /// The columns a read returns, in order.
    pub returns: Vec<String>,
    /// Why the step cannot take part, when it cannot (a conditional write, a counter, …).
    pub problem: Option<String>,
    /// A write's time-to-live in seconds (its own `USING TTL`, else the table's default).
    pub ttl_s: Option<u32>,
    /// A read of several rows that asks for every row of its partition (no clustering
    /// restriction, no LIMIT).
    pub whole: bool,
    /// A counter update (`SET n = n + ?`): the counter column and what it adds.
    pub increment: Option<(String, Increment)>,
}

/// One operation of the workload, as the target read it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpInfo {
    pub name: String,
    /// The generator of each drawn value.
    pub generators: Vec<usize>,
    pub steps: Vec<StepInfo>,
    /// Its reads are to be verified (`verify:`, `--verify`).
    pub verifies: bool,
    /// The replicas its statements reach before the server answers, at its consistency level
    /// (`None`: not known, or not a server of replicas).
    pub replicas: Option<u32>,
}

/// A table's key columns, or why it cannot be verified.
#[derive(Debug, Clone)]
pub struct TableInfo {
    pub name: String,
    pub key: Vec<String>,
    pub problem: Option<String>,
    /// How the server stores values, when as bytes (see [`Table::bytes`]).
    pub bytes: Option<fn(&scylla::value::CqlValue) -> Vec<u8>>,
    /// How the server orders a key's writes.
    pub order: Order,
    /// A counter table (its one value column a counter).
    pub counter: bool,
}

/// An operation's part, without its stats slot (a phase's plan gives it one).
#[derive(Debug, Clone, PartialEq)]
pub struct OpSpec {
    pub steps: Vec<Option<StepPlan>>,
    pub keyed: Vec<bool>,
    pub derived: Vec<bool>,
    /// Per step: a read that verification was asked for but cannot check (its rows are
    /// counted as unchecked).
    pub unchecked: Vec<bool>,
}

impl OpSpec {
    /// The plan of the operation named `op` in a phase whose stats slot for it is `slot`.
    pub fn plan(&self, op: &str, verifier: &Arc<Verifier>, slot: usize) -> OpPlan {
        OpPlan {
            op: op.to_string(),
            steps: self.steps.clone(),
            verifier: verifier.clone(),
            keyed: self.keyed.clone(),
            derived: self.derived.clone(),
            unchecked: self.unchecked.clone(),
            slot,
        }
    }

    /// Whether no step takes part: only unchecked reads are counted.
    pub fn counts_only(&self) -> bool {
        self.steps.iter().all(Option::is_none)
    }
}

/// A workload's verification: the verifier (with what to tell) and each operation's spec.
pub struct Built {
    pub verifier: Arc<Verifier>,
    pub ops: BTreeMap<String, OpSpec>,
}

/// Builds the verification of `ops` (the load's operation `load` and the run's `run`) over
/// `tables`, with reads checked when `on`; `rf`: the replicas of each row, when known.
pub fn assemble(gens: &GeneratorSet, tables: &[TableInfo], ops: &[OpInfo], load: Option<&str>, run: &[String], on: bool, rf: Option<u32>) -> Built {
    let mut notices = Vec::new();
    let mut models = Vec::new();
    let mut names = Vec::new();
    for t in tables {
        match model(gens, t, ops, load, run) {
            Ok(m) => {
                names.push(t.name.clone());
                models.push(Arc::new(m));
            }
            Err(why) if on && reads_checked(ops, &t.name) => notices.push(VerifyNotice::NotChecked { table: t.name.clone(), why, reads: true }),
            Err(_) => {}
        }
    }
    let mut verifier = Verifier::new(models, on);
    let mut specs = BTreeMap::new();
    for op in ops {
        let is_load = load == Some(op.name.as_str());
        let in_run = run.contains(&op.name);
        let overlap = |table: &str| -> Option<Overlap> {
            // the weakest write to the table the run phase makes (else the load's)
            let writers = |run_only: bool| {
                ops.iter()
                    .filter(move |o| !run_only || run.contains(&o.name))
                    .filter(move |o| o.steps.iter().any(|s| s.table == table && matches!(s.kind, StepKind::Write(_))))
                    .map(|o| o.replicas)
                    .collect::<Option<Vec<u32>>>()
                    .and_then(|w| w.into_iter().min())
            };
            Some(Overlap { write: writers(true).or_else(|| writers(false))?, read: op.replicas?, rf: rf? })
        };
        if let Some(spec) = op_spec(gens, &verifier, op, is_load, on, &overlap, &mut notices) {
            if in_run && spec.steps.iter().flatten().any(|s| matches!(s.role, StepRole::Write(_))) {
                verifier.run_writes = true;
            }
            if is_load {
                for s in spec.steps.iter().flatten().filter(|s| matches!(s.role, StepRole::Write(_)) && s.key_values.len() == 1) {
                    let g = op.generators[s.key_values[0]];
                    if gens.is_sequence(g) && !verifier.loads.iter().any(|(t, _)| *t == s.table) {
                        verifier.loads.push((s.table, gens.domain(g).0));
                    }
                }
            }
            specs.insert(op.name.clone(), spec);
        } else if in_run && op.steps.iter().any(|s| matches!(s.kind, StepKind::Write(_)) && names.contains(&s.table)) {
            verifier.run_writes = true;
        }
    }
    verifier.notices = notices;
    Built { verifier: Arc::new(verifier), ops: specs }
}

/// Whether some operation checks reads of `table`.
fn reads_checked(ops: &[OpInfo], table: &str) -> bool {
    ops.iter().any(|o| o.verifies && o.steps.iter().any(|s| s.table == table && matches!(s.kind, StepKind::Read { .. })))
}

/// Every write step of the phases' operations to `table`, with its operation.
fn writes_to<'a>(ops: &'a [OpInfo], table: &'a str) -> impl Iterator<Item = (&'a OpInfo, &'a StepInfo)> + 'a {
    ops.iter().flat_map(move |o| o.steps.iter().filter(move |s| s.table == table && matches!(s.kind, StepKind::Write(_))).map(move |s| (o, s)))
}

/// The model of table `t`, or why it cannot have one.
fn model(gens: &GeneratorSet, t: &TableInfo, ops: &[OpInfo], load: Option<&str>, run: &[String]) -> Result<Table, String> {
    if let Some(p) = &t.problem {
        return Err(p.clone());
    }
    let writes: Vec<(&OpInfo, &StepInfo)> = writes_to(ops, &t.name).collect();
    if writes.is_empty() {
        return Err("no operation writes it".into());
    }
    if let Some((o, s)) = writes.iter().find(|(_, s)| s.problem.is_some()) {
        return Err(format!("operation \"{}\" writes it in a way casslab does not record: {}", o.name, s.problem.as_deref().unwrap_or("")));
    }
    if let Some((o, _)) = writes.iter().find(|(_, s)| s.key.len() != t.key.len()) {
        return Err(format!("operation \"{}\" does not bind every key column ({}) to a generator", o.name, t.key.join(", ")));
    }
    // a value drawn from a sequence in step with a sequence key pairs with its key (user n gets
    // email n): it is kept as drawn, not remade from the key and write number, so the rows of
    // such a table cannot be known
    for (o, s) in &writes {
        let seq_key = s.key.iter().any(|(_, vi)| gens.is_sequence(o.generators[*vi]));
        let paired = s.values.iter().find(|(_, vi)| !s.key.iter().any(|(_, k)| k == vi) && gens.is_sequence(o.generators[*vi]));
        if let (true, Some((col, _))) = (seq_key, paired) {
            return Err(format!(
                "operation \"{}\" writes its column {col} from a sequence drawn in step with its key, a value paired with the key that casslab keeps as drawn",
                o.name
            ));
        }
    }
    // the key: every write's generators of a key column must make the same values
    let mut key = Vec::new();
    for (i, col) in t.key.iter().enumerate() {
        let mut part: Option<KeyPart> = None;
        for (o, s) in &writes {
            let g = o.generators[s.key[i].1];
            let (base, span) = gens.domain(g);
            let end = span.and_then(|s| base.checked_add(i64::try_from(s).ok()?));
            match &mut part {
                None => part = Some(KeyPart { column: col.clone(), gens: vec![g], base, span }),
                Some(p) if !gens.same_values(p.gens[0], g) => {
                    let first = gens.names().nth(p.gens[0]).unwrap_or("?");
                    let other = gens.names().nth(g).unwrap_or("?");
                    return Err(format!("its key column {col} is written from generators that make different values ({first}, {other})"));
                }
                Some(p) => {
                    let old_end = p.span.and_then(|s| p.base.checked_add(i64::try_from(s).ok()?));
                    p.base = p.base.min(base);
                    p.span = match (old_end, end) {
                        (Some(a), Some(b)) => Some(a.max(b).abs_diff(p.base)),
                        _ => None,
                    };
                    if !p.gens.contains(&g) {
                        p.gens.push(g);
                    }
                }
            }
        }
        key.push(part.expect("a write binds every key column"));
    }
    if key.iter().skip(1).any(|p| p.span.is_none()) {
        let col = key.iter().skip(1).find(|p| p.span.is_none()).map(|p| p.column.clone()).unwrap_or_default();
        return Err(format!("its key column {col} is drawn from an unbounded generator: give it a `max:`"));
    }
    if t.counter {
        return counter_model(gens, t, key, &writes);
    }
    if let Some((o, s)) = writes.iter().find(|(_, s)| s.increment.is_some()) {
        let column = s.increment.as_ref().map_or("", |(c, _)| c.as_str());
        return Err(format!("operation \"{}\" changes {column} relative to its value", o.name));
    }
    // the columns: from every write, with the generators that write them
    let literal: Vec<&String> = writes.iter().flat_map(|(_, s)| s.literal.iter()).collect();
    let has_delete = writes.iter().any(|(_, s)| s.kind == StepKind::Write(WriteKind::Delete));
    let upserts: Vec<&(&OpInfo, &StepInfo)> = writes.iter().filter(|(_, s)| s.kind == StepKind::Write(WriteKind::Put)).collect();
    let mut columns: Vec<Column> = Vec::new();
    for (o, s) in &upserts {
        for (col, vi) in &s.values {
            if literal.contains(&col) || s.key.iter().any(|(_, k)| k == vi) {
                continue;
            }
            let g = o.generators[*vi];
            match columns.iter_mut().find(|c| c.name == *col) {
                Some(c) if !c.gens.contains(&g) => c.gens.push(g),
                Some(_) => {}
                None => columns.push(Column { name: col.clone(), gens: vec![g], load_only: false, nullable: false }),
            }
        }
    }
    let writes_col = |s: &StepInfo, col: &str| s.values.iter().any(|(c, _)| c == col);
    for c in &mut columns {
        let writers: Vec<&str> = upserts.iter().filter(|(_, s)| writes_col(s, &c.name)).map(|(o, _)| o.name.as_str()).collect();
        c.load_only = load.is_some_and(|l| writers.iter().all(|w| *w == l) && !run.iter().any(|r| r == l));
        c.nullable = has_delete || upserts.iter().any(|(_, s)| !writes_col(s, &c.name));
    }
    let sets: Vec<Vec<usize>> = upserts.iter().map(|(_, s)| (0..columns.len()).filter(|c| writes_col(s, &columns[*c].name)).collect()).collect();
    // one time-to-live for every upsert, or none
    let mut ttls: Vec<Option<u32>> = upserts.iter().map(|(_, s)| s.ttl_s).collect();
    ttls.sort();
    ttls.dedup();
    if ttls.len() > 1 {
        let shown: Vec<String> = ttls.iter().map(|t| t.map_or("none".into(), |s| format!("{s} s"))).collect();
        return Err(format!("its upserts write with different TTLs ({}), so when a row expires is not known", shown.join(", ")));
    }
    let mut table = Table::new(&t.name, key, columns, sets).ordered_by(t.order);
    if let Some(Some(ttl)) = ttls.first() {
        table = table.expiring(*ttl);
    }
    table.bytes = t.bytes;
    table.deletes = has_delete;
    table.model = table.model_of(gens);
    if table.record.capacity() == 0 {
        return Err("its keys are too many to record".into());
    }
    Ok(table)
}

/// The model of counter table `t` of key `key`: one counter column, every write an increment.
fn counter_model(gens: &GeneratorSet, t: &TableInfo, key: Vec<KeyPart>, writes: &[(&OpInfo, &StepInfo)]) -> Result<Table, String> {
    let mut column: Option<&str> = None;
    for (o, s) in writes {
        let Some((c, _)) = &s.increment else {
            return Err(format!("operation \"{}\" changes its counters other than by adding to one", o.name));
        };
        match column {
            Some(other) if other != c => return Err(format!("it has more than one counter column ({other}, {c})")),
            _ => column = Some(c),
        }
    }
    let column = column.expect("a write to the table");
    let cols = vec![Column { name: column.to_string(), gens: Vec::new(), load_only: false, nullable: true }];
    let mut table = Table::new(&t.name, key, cols, Vec::new());
    table.counters = Some(super::counters::CounterRecord::new(table.record.capacity()));
    table.model = table.model_of(gens);
    if table.record.capacity() == 0 {
        return Err("its keys are too many to record".into());
    }
    Ok(table)
}

/// How a read of several rows of `table` takes part, or why it cannot: it must name one
/// partition by its leading key columns, drawn like the writes', and return every other key
/// column, of few enough values that a partition's keys can be read from the record.
fn partition_read(gens: &GeneratorSet, table: &Table, op: &OpInfo, s: &StepInfo) -> Result<PartitionRows, String> {
    let several = format!("it reads several rows of {}", s.table);
    if table.counters.is_some() {
        return Err(format!("{several}, counters (only counters read one at a time are verified)"));
    }
    if s.problem.is_some() || s.key.is_empty() || s.key.len() >= table.key.len() {
        let why = s.problem.clone().unwrap_or_else(|| "not of one partition named by its key".into());
        return Err(format!("{several} ({why})"));
    }
    if s.key.iter().enumerate().any(|(i, (_, vi))| !gens.same_values(table.key[i].gens[0], op.generators[*vi])) {
        return Err(format!("its key generators make other values than the writes to {}", s.table));
    }
    let bound = s.key.len();
    let rest = &table.key[bound..];
    let key_columns: Option<Vec<usize>> = rest.iter().map(|p| s.returns.iter().position(|c| *c == p.column)).collect();
    let Some(key_columns) = key_columns else {
        let names: Vec<&str> = rest.iter().map(|p| p.column.as_str()).collect();
        return Err(format!("{several} without returning every key column ({}), so its rows cannot be told apart", names.join(", ")));
    };
    let keys = rest.iter().try_fold(1u64, |acc, p| p.span.and_then(|n| acc.checked_mul(n)));
    if keys.is_none_or(|k| k > PARTITION_KEYS) {
        return Err(format!("{several}, of partitions of more than {} keys", crate::units::grouped(PARTITION_KEYS)));
    }
    Ok(PartitionRows { bound, key_columns, whole: s.whole })
}

/// The spec of `op`, if any of its steps takes part.
fn op_spec(
    gens: &GeneratorSet,
    v: &Verifier,
    op: &OpInfo,
    is_load: bool,
    on: bool,
    overlap: &dyn Fn(&str) -> Option<Overlap>,
    notices: &mut Vec<VerifyNotice>,
) -> Option<OpSpec> {
    let n = op.generators.len();
    let (mut keyed, mut derived) = (vec![false; n], vec![false; n]);
    let mut steps = Vec::with_capacity(op.steps.len());
    let mut unchecked = Vec::with_capacity(op.steps.len());
    let mut told = |why: String| {
        if on && op.verifies {
            notices.push(VerifyNotice::OpNotVerified { op: op.name.clone(), why });
        }
    };
    for s in &op.steps {
        let reads = matches!(s.kind, StepKind::Read { .. }) && on && op.verifies;
        let Some(t) = v.table(&s.table) else {
            steps.push(None);
            unchecked.push(reads);
            continue;
        };
        let table = &v.tables[t];
        let key_values: Vec<usize> = s.key.iter().map(|(_, i)| *i).collect();
        let plan = match s.kind {
            StepKind::Write(_) if table.counters.is_some() => match s.increment {
                Some((_, delta)) if on => Some(StepRole::Increment(IncrementStep { delta })),
                _ => None,
            },
            StepKind::Write(kind) if on || is_load => {
                let mine: Vec<(usize, usize)> = s
                    .values
                    .iter()
                    .filter(|(c, _)| table.column(c).is_some())
                    .map(|(_, i)| (*i, op.generators[*i]))
                    .filter(|(i, _)| !key_values.contains(i))
                    .collect();
                Some(StepRole::Write(WriteStep { kind, derived: mine, recorded: on }))
            }
            StepKind::Read { .. } if !(on && op.verifies) => None,
            StepKind::Read { one_row: false } => match partition_read(gens, table, op, s) {
                Ok(rows) => {
                    let columns: Vec<Option<usize>> = s.returns.iter().map(|c| table.column(c)).collect();
                    let read: Vec<usize> = columns.iter().flatten().copied().collect();
                    let judged = Judged { stale_checkable: table.shows_every_write(&read), one_row: true, deletes: table.deletes };
                    Some(StepRole::Read(ReadStep { columns, judged, overlap: overlap(&s.table), rows: Some(rows) }))
                }
                Err(why) => {
                    told(why);
                    None
                }
            },
            StepKind::Read { one_row: true } => {
                if s.key.len() != table.key.len() || s.key.iter().enumerate().any(|(i, (_, vi))| !gens.same_values(table.key[i].gens[0], op.generators[*vi])) {
                    told(format!("its key generators make other values than the writes to {}", s.table));
                    None
                } else {
                    let columns: Vec<Option<usize>> = s.returns.iter().map(|c| table.column(c)).collect();
                    let read: Vec<usize> = columns.iter().flatten().copied().collect();
                    let stale_checkable = table.shows_every_write(&read);
                    let judged = Judged { stale_checkable, one_row: true, deletes: table.deletes };
                    Some(StepRole::Read(ReadStep { columns, judged, overlap: overlap(&s.table), rows: None }))
                }
            }
            _ => None,
        };
        match plan {
            Some(role) => {
                for i in &key_values {
                    keyed[*i] = true;
                }
                if let StepRole::Write(w) = &role {
                    for (i, _) in &w.derived {
                        derived[*i] = true;
                    }
                }
                steps.push(Some(StepPlan { table: t, key_values, role }));
                unchecked.push(false);
            }
            None => {
                steps.push(None);
                unchecked.push(reads);
            }
        }
    }
    if keyed.iter().zip(&derived).any(|(k, d)| *k && *d) {
        told("a generator is bound both to a key and to a value".into());
        let unchecked: Vec<bool> = op.steps.iter().map(|s| matches!(s.kind, StepKind::Read { .. }) && on && op.verifies).collect();
        let len = op.steps.len();
        return unchecked.iter().any(|u| *u).then(|| OpSpec { steps: vec![None; len], keyed: vec![false; n], derived: vec![false; n], unchecked });
    }
    (steps.iter().any(Option::is_some) || unchecked.iter().any(|u| *u)).then_some(OpSpec { steps, keyed, derived, unchecked })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gens() -> GeneratorSet {
        let yaml = "insert_key: { type: text, prefix: user, dist: sequence, min: 0, max: 1000 }\nkey: { type: text, prefix: user, max: 1000 }\nother: { type: text, size: 8 }\nf0: { type: text, size: 10 }\nf1: { type: text, size: 10 }";
        GeneratorSet::build(&crate::yaml::from_str(yaml).unwrap()).unwrap()
    }

    fn step(kind: StepKind, key: usize, values: &[(&str, usize)], returns: &[&str]) -> StepInfo {
        StepInfo {
            table: "t".into(),
            kind,
            key: vec![("id".into(), key)],
            values: values.iter().map(|(c, i)| (c.to_string(), *i)).collect(),
            literal: vec![],
            returns: returns.iter().map(|c| c.to_string()).collect(),
            problem: None,
            ttl_s: None,
            whole: false,
            increment: None,
        }
    }

    /// ycsb-a's shape: a load of whole rows, reads of whole rows, updates of one column.
    fn ops(g: &GeneratorSet) -> Vec<OpInfo> {
        let i = |n| g.index_of(n).unwrap();
        vec![
            OpInfo {
                name: "insert".into(),
                generators: vec![i("insert_key"), i("f0"), i("f1")],
                steps: vec![step(StepKind::Write(WriteKind::Put), 0, &[("f0", 1), ("f1", 2)], &[])],
                verifies: true,
                replicas: Some(1),
            },
            OpInfo {
                name: "read".into(),
                generators: vec![i("key")],
                steps: vec![step(StepKind::Read { one_row: true }, 0, &[], &["id", "f0", "f1"])],
                verifies: true,
                replicas: Some(1),
            },
            OpInfo {
                name: "update".into(),
                generators: vec![i("f0"), i("key")],
                steps: vec![step(StepKind::Write(WriteKind::Put), 1, &[("f0", 0)], &[])],
                verifies: true,
                replicas: Some(1),
            },
        ]
    }

    fn tables() -> Vec<TableInfo> {
        vec![TableInfo { name: "t".into(), key: vec!["id".into()], problem: None, bytes: None, order: Order::Timestamps, counter: false }]
    }

    #[test]
    fn a_load_reads_and_partial_updates_make_one_model() {
        let g = gens();
        let b = assemble(&g, &tables(), &ops(&g), Some("insert"), &["read".into(), "update".into()], true, Some(3));
        assert!(b.verifier.notices.is_empty(), "{:?}", b.verifier.notices);
        let t = &b.verifier.tables[0];
        assert_eq!((t.key[0].base, t.key[0].span), (0, Some(1000)));
        let cols: Vec<(&str, bool, bool)> = t.columns.iter().map(|c| (c.name.as_str(), c.load_only, c.nullable)).collect();
        assert_eq!(cols, [("f0", false, false), ("f1", true, true)], "f1 only by the load; an update leaves it out");
        assert!(!t.full_rows);
        assert_eq!(b.verifier.loads, [(0, 0)], "the load's first key is n = 0");
        assert!(b.verifier.run_writes);
        let read = &b.ops["read"].steps[0].as_ref().unwrap().role;
        assert_eq!(
            read,
            &StepRole::Read(ReadStep {
                columns: vec![None, Some(0), Some(1)],
                judged: Judged { stale_checkable: true, one_row: true, deletes: false },
                overlap: Some(Overlap { write: 1, read: 1, rf: 3 }),
                rows: None
            })
        );
        let update = &b.ops["update"];
        assert_eq!((update.keyed.clone(), update.derived.clone()), (vec![false, true], vec![true, false]));
    }

    #[test]
    fn a_value_drawn_in_step_with_its_key_is_kept_as_drawn() {
        let g = GeneratorSet::build(
            &crate::yaml::from_str("id: { type: bigint, dist: sequence, max: 100 }\nemail: { type: text, prefix: u, dist: sequence, max: 100 }").unwrap(),
        )
        .unwrap();
        let (id, email) = (g.index_of("id").unwrap(), g.index_of("email").unwrap());
        let load = OpInfo {
            name: "insert".into(),
            generators: vec![id, email],
            steps: vec![step(StepKind::Write(WriteKind::Put), 0, &[("email", 1)], &[])],
            verifies: false,
            replicas: None,
        };
        let b = assemble(&g, &tables(), &[load], Some("insert"), &[], false, None);
        assert!(b.verifier.tables.is_empty() && b.ops.is_empty(), "the load draws its emails in step with its ids");
    }

    #[test]
    fn without_verification_only_the_load_makes_its_values_from_keys() {
        let g = gens();
        let b = assemble(&g, &tables(), &ops(&g), Some("insert"), &["read".into(), "update".into()], false, None);
        assert!(matches!(&b.ops["insert"].steps[0].as_ref().unwrap().role, StepRole::Write(w) if !w.recorded && w.derived.len() == 2));
        assert!(!b.ops.contains_key("read") && !b.ops.contains_key("update"), "the run draws its values as ever");
        assert!(b.verifier.run_writes, "the run writes to a table whose load is known");
    }

    #[test]
    fn rows_that_expire_are_verified_with_one_ttl() {
        let g = gens();
        let mut o = ops(&g);
        for op in &mut o {
            for s in op.steps.iter_mut().filter(|s| matches!(s.kind, StepKind::Write(_))) {
                s.ttl_s = Some(60);
            }
        }
        let b = assemble(&g, &tables(), &o, Some("insert"), &["read".into(), "update".into()], true, Some(3));
        assert_eq!(b.verifier.tables[0].times.as_ref().map(|t| t.ttl_s), Some(60), "{:?}", b.verifier.notices);
        o[2].steps[0].ttl_s = None;
        let b = assemble(&g, &tables(), &o, Some("insert"), &["read".into(), "update".into()], true, Some(3));
        assert!(b.verifier.tables.is_empty());
        assert!(b.verifier.notices[0].to_string().contains("different TTLs (none, 60 s)"), "{:?}", b.verifier.notices);
    }

    #[test]
    fn counters_are_verified_by_their_increments() {
        let g = gens();
        let i = |n| g.index_of(n).unwrap();
        let bump =
            StepInfo { increment: Some(("n".into(), Increment::Bound { value: 1, negate: false })), ..step(StepKind::Write(WriteKind::Put), 0, &[], &[]) };
        let ops = vec![
            OpInfo { name: "bump".into(), generators: vec![i("key"), i("f0")], steps: vec![bump.clone()], verifies: true, replicas: None },
            OpInfo {
                name: "read".into(),
                generators: vec![i("key")],
                steps: vec![step(StepKind::Read { one_row: true }, 0, &[], &["n"])],
                verifies: true,
                replicas: None,
            },
        ];
        let counter = [TableInfo { counter: true, ..tables()[0].clone() }];
        let b = assemble(&g, &counter, &ops, None, &["bump".into(), "read".into()], true, None);
        assert!(b.verifier.notices.is_empty(), "{:?}", b.verifier.notices);
        assert!(b.verifier.tables[0].counters.is_some());
        assert!(matches!(
            b.ops["bump"].steps[0].as_ref().unwrap().role,
            StepRole::Increment(IncrementStep { delta: Increment::Bound { value: 1, negate: false } })
        ));
        assert!(matches!(&b.ops["read"].steps[0].as_ref().unwrap().role, StepRole::Read(r) if r.columns == [Some(0)]));
        // the same increment on a table that is not a counter: relative to its value
        let b = assemble(&g, &tables(), &ops, None, &["bump".into(), "read".into()], true, None);
        assert!(b.verifier.tables.is_empty() && b.verifier.notices[0].to_string().contains("changes n relative to its value"), "{:?}", b.verifier.notices);
    }

    #[test]
    fn tables_and_reads_that_cannot_be_verified_say_why() {
        let g = gens();
        let mut o = ops(&g);
        o[2].steps[0].problem = Some("a conditional write (IF …)".into());
        let b = assemble(&g, &tables(), &o, Some("insert"), &["read".into(), "update".into()], true, Some(3));
        assert!(b.verifier.tables.is_empty());
        assert!(
            matches!(&b.verifier.notices[0], VerifyNotice::NotChecked { why, .. } if why.contains("\"update\"") && why.contains("conditional")),
            "{:?}",
            b.verifier.notices
        );
        let mut o = ops(&g);
        o[1].generators = vec![g.index_of("other").unwrap()];
        let b = assemble(&g, &tables(), &o, Some("insert"), &["read".into(), "update".into()], true, Some(3));
        assert!(
            matches!(&b.verifier.notices[..], [VerifyNotice::OpNotVerified { op, why }] if op == "read" && why.contains("other values")),
            "{:?}",
            b.verifier.notices
        );
        let mut o = ops(&g);
        o[1].steps[0].kind = StepKind::Read { one_row: false };
        let b = assemble(&g, &tables(), &o, Some("insert"), &["read".into(), "update".into()], true, Some(3));
        assert!(matches!(&b.verifier.notices[..], [VerifyNotice::OpNotVerified { why, .. }] if why.contains("several rows")));
    }
}
