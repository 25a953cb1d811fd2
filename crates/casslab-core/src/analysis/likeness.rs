//! Like with like: whether a figure means the same thing in two variants, judged from their
//! workloads, so that a comparison never sets two different quantities side by side.
//!
//! - An operation is its own question in every variant (that a variant reads the same set
//!   another way is what an experiment compares), so operations of the same name compare.
//! - `<op>.request` times each statement an operation sends. It compares only when both
//!   variants send the same kind of statement: one single-partition SELECT, or an IN of the
//!   same number of partitions, with the same LIMIT. (One SELECT per partition against one IN
//!   of 100 partitions are two different requests.)
//! - `total` blends the operations in the proportions of the mix. It compares only when both
//!   variants run the same operations in the same proportions.
//!
//! A side whose workload is unknown (a run saved without its workload text) is taken at its
//! word: its figures compare by name.

use super::window::OpRef;
use crate::stats::Phase;
use crate::workload::{Operation, Strategy, Workload};

/// Whether a figure compares between two sides, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Likeness {
    Same,
    /// Left out, with the reason in words (naming the sides).
    Different(String),
}

/// Whether `op` means the same in workload `a` (side named `an`) and `b` (side `bn`), for
/// figures measured in `phase`.
pub fn likeness(op: &OpRef, phase: Phase, (an, a): (&str, Option<&Workload>), (bn, b): (&str, Option<&Workload>)) -> Likeness {
    let (Some(a), Some(b)) = (a, b) else { return Likeness::Same };
    match op {
        OpRef::Total => {
            let (ma, mb) = (mix(a, phase), mix(b, phase));
            if same_mix(&ma, &mb) {
                Likeness::Same
            } else {
                Likeness::Different(format!("the mix differs ({an}: {}; {bn}: {})", describe_mix(&ma), describe_mix(&mb)))
            }
        }
        OpRef::Op(name) => {
            let Some(parent) = name.strip_suffix(".request") else { return Likeness::Same };
            let (ra, rb) = (a.operation(parent).and_then(request), b.operation(parent).and_then(request));
            match (ra, rb) {
                (Some(ra), Some(rb)) if ra != rb => Likeness::Different(format!("a request is not the same statement ({an}: {ra}; {bn}: {rb})")),
                _ => Likeness::Same,
            }
        }
    }
}

/// The operations a phase runs, with their shares (summing to 1).
fn mix(w: &Workload, phase: Phase) -> Vec<(String, f64)> {
    let raw: Vec<(String, f64)> = match phase {
        Phase::Load => w.load.iter().map(|l| (l.op.clone(), 1.0)).collect(),
        _ => w.run.iter().flat_map(|r| r.mix.iter().filter(|(_, x)| *x > 0.0).cloned()).collect(),
    };
    let sum: f64 = raw.iter().map(|(_, x)| x).sum();
    let mut out: Vec<(String, f64)> = raw.into_iter().map(|(n, x)| (n, x / sum)).collect();
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}

fn same_mix(a: &[(String, f64)], b: &[(String, f64)]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).abs() < 0.005)
}

fn describe_mix(m: &[(String, f64)]) -> String {
    m.iter().map(|(n, x)| format!("{n} {:.0}%", x * 100.0)).collect::<Vec<_>>().join(", ")
}

/// What one `<op>.request` of a set read is, in words; `None` for an operation without
/// `partitions:`.
fn request(op: &Operation) -> Option<String> {
    let p = op.cql()?.partitions.as_ref()?;
    let per_statement = p.chunk.clamp(1, p.count.max(1));
    let what = match p.strategy {
        Strategy::Sync | Strategy::Async => "one single-partition SELECT".to_string(),
        Strategy::In => format!("an IN of {per_statement} partitions"),
        Strategy::InByReplica => format!("an IN of up to {per_statement} partitions of one replica group"),
    };
    Some(match p.limit {
        Some(l) => format!("{what} with LIMIT {l} per partition"),
        None => what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn experiment_variants() -> Vec<Workload> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let e = crate::experiment::load_experiment(&dir.join("partition-set.yaml"), &BTreeMap::new()).unwrap();
        e.variants.into_iter().map(|v| v.workload).collect()
    }

    #[test]
    fn requests_compare_only_when_they_are_the_same_statement() {
        let v = experiment_variants();
        let (sync, asyn, inn, in_limit) = (&v[0], &v[1], &v[2], &v[3]);
        let req = OpRef::Op("read_set.request".into());
        assert_eq!(likeness(&req, Phase::Run, ("sync", Some(sync)), ("async", Some(asyn))), Likeness::Same);
        let Likeness::Different(why) = likeness(&req, Phase::Run, ("sync", Some(sync)), ("in", Some(inn))) else { panic!() };
        assert_eq!(why, "a request is not the same statement (sync: one single-partition SELECT; in: an IN of 100 partitions)");
        assert!(matches!(likeness(&req, Phase::Run, ("in", Some(inn)), ("in-limit", Some(in_limit))), Likeness::Different(_)));
        assert_eq!(likeness(&OpRef::Op("read_set".into()), Phase::Run, ("sync", Some(sync)), ("in", Some(inn))), Likeness::Same);
        assert_eq!(likeness(&OpRef::Total, Phase::Run, ("sync", Some(sync)), ("in", Some(inn))), Likeness::Same);
        assert_eq!(likeness(&req, Phase::Run, ("sync", Some(sync)), ("x", None)), Likeness::Same);
    }

    #[test]
    fn totals_compare_only_with_the_same_mix() {
        let kv = crate::workload::load_workload("kv", &BTreeMap::new()).unwrap().0;
        let mut other = kv.clone();
        other.run.as_mut().unwrap().mix = vec![("read".into(), 9.0), ("update".into(), 1.0)];
        let Likeness::Different(why) = likeness(&OpRef::Total, Phase::Run, ("a", Some(&kv)), ("b", Some(&other))) else { panic!() };
        assert_eq!(why, "the mix differs (a: read 50%, update 50%; b: read 90%, update 10%)");
        let mut doubled = kv.clone();
        doubled.run.as_mut().unwrap().mix = vec![("update".into(), 2.0), ("read".into(), 2.0)];
        assert_eq!(likeness(&OpRef::Total, Phase::Run, ("a", Some(&kv)), ("b", Some(&doubled))), Likeness::Same);
        assert_eq!(likeness(&OpRef::Total, Phase::Load, ("a", Some(&kv)), ("b", Some(&other))), Likeness::Same);
    }
}
