//! Reads of several rows of one partition (a whole partition, a slice of it, its first rows
//! with a LIMIT): the read names the partition by its leading key columns and returns every
//! other key column, so each row it brings back is told apart by its key. Before the read is
//! sent, the record of every key of the partition is taken (at most
//! [`PARTITION_KEYS`](super::table_model::PARTITION_KEYS) of them); each row that comes back
//! is then judged like a read of that one row, and, when the read asked for the whole
//! partition and got all of it, each key it did not return is judged as no row — counted only
//! when that is a violation (a row it should have returned). A row whose key is no value the
//! key's generators make, or beyond the record, is unchecked.
//!
//! Not here: which reads are of this kind (`verify_build`), sending them (the targets).

use super::op::{Ns, OpPlan, PartitionRows, Reply, Seen, StepRole};
use super::record::KeyState;
use super::write_values::show;
use crate::gen::GeneratorSet;
use crate::stats::OpStats;
use scylla::value::CqlValue;
use std::sync::Mutex;

/// A read of a partition sent: the record of each of its keys then.
pub struct PartitionTicket {
    table: usize,
    prefix: Vec<i64>,
    first: u64,
    at_send: Vec<KeyState>,
    sent_ms: i64,
}

impl OpPlan {
    /// Before partition read `step` is sent: the record of every key of its partition (`None`:
    /// not checked now — its rows are then counted as unchecked).
    pub fn before_partition_read(&self, step: usize, ns: &Ns) -> Option<PartitionTicket> {
        let plan = self.steps[step].as_ref()?;
        if !self.verifier.checking(plan.table) {
            return None;
        }
        let prefix: Vec<i64> = plan.key_values.iter().map(|i| ns[*i]).collect::<Option<_>>()?;
        let table = &self.verifier.tables[plan.table];
        let (first, count) = table.partition_range(&prefix)?;
        let at_send = (first..first + count).map(|i| table.record.state(i)).collect();
        let sent_ms = if table.times.is_some() { crate::units::unix_now_ms() } else { 0 };
        Some(PartitionTicket { table: plan.table, prefix, first, at_send, sent_ms })
    }

    /// Judges the rows partition read `step` brought back (`complete`: every page of them;
    /// `undecoded`: rows that could not be decoded) and counts them into `stats`.
    /// `partition_shown`: the partition's key as bound.
    #[allow(clippy::too_many_arguments)]
    pub fn check_partition(
        &self,
        gens: &GeneratorSet,
        step: usize,
        t: &PartitionTicket,
        rows: &[Vec<Option<CqlValue>>],
        complete: bool,
        undecoded: usize,
        partition_shown: &str,
        stats: &Mutex<Vec<OpStats>>,
    ) {
        let plan = self.steps[step].as_ref().expect("a read step");
        let StepRole::Read(r) = &plan.role else { unreachable!("a read step") };
        let Some(p) = &r.rows else { unreachable!("a read of several rows") };
        let table = &*self.verifier.tables[t.table];
        let mut returned = vec![false; t.at_send.len()];
        let mut unchecked = undecoded;
        for row in rows {
            // the row's key: the partition's, then each other key column as it came back
            let rest: Option<Vec<i64>> =
                p.key_columns.iter().enumerate().map(|(i, c)| row.get(*c).and_then(Option::as_ref).and_then(|v| table.n_of(gens, p.bound + i, v))).collect();
            let Some(ns) = rest.map(|rest| [t.prefix.as_slice(), &rest].concat()) else {
                unchecked += 1;
                continue;
            };
            let Some(off) = table.index(&ns).and_then(|i| i.checked_sub(t.first)).filter(|o| *o < t.at_send.len() as u64) else {
                unchecked += 1;
                continue;
            };
            returned[off as usize] = true;
            let seen = Seen { index: Some(t.first + off), ns: &ns, at_send: &t.at_send[off as usize], sent_ms: t.sent_ms, sums: Default::default() };
            let reply = Reply::Row(row.clone());
            if let Some(j) = self.judge(gens, r, table, &seen, &reply, false) {
                self.count(j, r, &table.name, stats, || key_shown(partition_shown, table, p, row));
            }
        }
        // a key the whole partition should have held and did not return
        if p.whole && complete {
            for (off, at_send) in t.at_send.iter().enumerate().filter(|(o, s)| !returned[*o] && s.known()) {
                let index = t.first + off as u64;
                let ns = table.key_ns(index);
                let seen = Seen { index: Some(index), ns: &ns, at_send, sent_ms: t.sent_ms, sums: Default::default() };
                if let Some(j) = self.judge(gens, r, table, &seen, &Reply::Absent, true) {
                    let rest = || -> Vec<String> {
                        table.key[p.bound..]
                            .iter()
                            .zip(&ns[p.bound..])
                            .map(|(k, n)| format!("{}={}", k.column, show(Some(&gens.value_at(k.gens[0], *n)))))
                            .collect()
                    };
                    self.count(j, r, &table.name, stats, || format!("{partition_shown} {}", rest().join(" ")));
                }
            }
        }
        if unchecked > 0 {
            self.count_unchecked(unchecked, stats);
        }
    }
}

/// A row's key as it came back: the partition's, then each other key column.
fn key_shown(partition: &str, table: &super::Table, p: &PartitionRows, row: &[Option<CqlValue>]) -> String {
    let rest: Vec<String> =
        table.key[p.bound..].iter().zip(&p.key_columns).map(|(k, c)| format!("{}={}", k.column, show(row.get(*c).and_then(Option::as_ref)))).collect();
    format!("{partition} {}", rest.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::classify::Judged;
    use crate::verify::op::{ReadStep, StepPlan};
    use crate::verify::record::WriteKind;
    use crate::verify::table_model::{Column, KeyPart, Table};
    use crate::verify::Verifier;
    use std::sync::Arc;

    fn gens() -> GeneratorSet {
        let yaml = "p: { type: bigint, dist: uniform, min: 0, max: 10 }\nc: { type: int, dist: sequence, min: 0, max: 5 }\nv: { type: blob, size: 8 }";
        GeneratorSet::build(&crate::yaml::from_str(yaml).unwrap()).unwrap()
    }

    /// A table of partitions `p` with 5 rows `c` each, and a plan reading a whole partition
    /// (`SELECT c, v FROM t WHERE p = ?`).
    fn plan(g: &GeneratorSet, whole: bool) -> OpPlan {
        let part = |name: &str| {
            let i = g.index_of(name).unwrap();
            let (base, span) = g.domain(i);
            KeyPart { column: name.into(), gens: vec![i], base, span }
        };
        let v = Column { name: "v".into(), gens: vec![g.index_of("v").unwrap()], load_only: false, nullable: false };
        let t = Table::new("t", vec![part("p"), part("c")], vec![v], vec![vec![0]]);
        let verifier = Arc::new(Verifier::new(vec![Arc::new(t)], true));
        let rows = PartitionRows { bound: 1, key_columns: vec![0], whole };
        let read =
            ReadStep { columns: vec![None, Some(0)], judged: Judged { stale_checkable: true, one_row: true, deletes: false }, overlap: None, rows: Some(rows) };
        let step = StepPlan { table: 0, key_values: vec![0], role: StepRole::Read(read) };
        OpPlan { op: "scan".into(), steps: vec![Some(step)], verifier, keyed: vec![true], derived: vec![false], unchecked: vec![false], slot: 0 }
    }

    #[test]
    fn each_row_of_a_partition_is_judged_by_its_key_and_a_whole_read_misses_none() {
        let g = gens();
        for whole in [true, false] {
            let plan = plan(&g, whole);
            let t = &plan.verifier.tables[0];
            let (vg, cg) = (g.index_of("v").unwrap(), g.index_of("c").unwrap());
            // partition 3: rows 0..5 written once, row 3 twice
            for c in 0..5 {
                let i = t.index(&[3, c]).unwrap();
                let b = t.record.begin(i, WriteKind::Put).unwrap();
                t.record.finish(i, &b, true);
            }
            let i3 = t.index(&[3, 3]).unwrap();
            let b = t.record.begin(i3, WriteKind::Put).unwrap();
            t.record.finish(i3, &b, true);
            let ticket = plan.before_partition_read(0, &vec![Some(3)]).expect("checked");
            let row = |c: i64, w: u32| vec![Some(g.value_at(cg, c)), Some(t.write_value(&g, vg, t.key_bits(&[3, c]), w))];
            // rows 0..3 as written, row 3 its first write (stale), row 4 not returned, and a
            // row whose key no generator makes
            let got = vec![row(0, 1), row(1, 1), row(2, 1), row(3, 1), vec![Some(CqlValue::Int(77)), None]];
            let stats = Mutex::new(vec![OpStats::default()]);
            plan.check_partition(&g, 0, &ticket, &got, true, 0, "p=3", &stats);
            let s = stats.lock().unwrap()[0].verify.clone().unwrap();
            let c = s.counts;
            assert_eq!((c.ok, c.stale, c.unchecked), (3, 1, 1), "{c:?}");
            assert_eq!(c.missing, u64::from(whole), "row 4 is missing from a read of the whole partition only: {c:?}");
            let keys: Vec<&str> = s.samples.iter().map(|v| v.key.as_str()).collect();
            assert!(keys.contains(&"t p=3 c=3"), "{keys:?}");
            assert!(!whole || keys.contains(&"t p=3 c=4"), "{keys:?}");
        }
    }
}
