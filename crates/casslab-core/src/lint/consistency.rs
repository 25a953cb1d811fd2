//! Consistency levels against the workload's declared replication: levels that can never be
//! met (TWO at RF 1, EACH_QUORUM with SimpleStrategy, a LOCAL_* level in a data center with no
//! replicas, ANY for reads) are errors; levels that leave no room for a replica to be down are
//! notes. Without a declared replication (the engine picks one) there is nothing to check.

use super::{Finding, Model, Rule, Severity};
use crate::cql::DmlKind;
use crate::workload::{Consistency, Operation};
use std::collections::BTreeMap;

/// A replication map: its strategy and replicas per data center (`None` key for SimpleStrategy).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Replication {
    pub simple: bool,
    pub rf_by_dc: BTreeMap<Option<String>, u32>,
}

impl Replication {
    pub fn total(&self) -> u32 {
        self.rf_by_dc.values().sum()
    }
}

/// Reads `{'class': 'SimpleStrategy', 'replication_factor': 3}` or
/// `{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}`.
pub(crate) fn parse_replication(text: &str) -> Option<Replication> {
    let body = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut class = None;
    let mut rf_by_dc = BTreeMap::new();
    for pair in body.split(',') {
        let (k, v) = pair.split_once(':')?;
        let k = k.trim().trim_matches(|c| c == '\'' || c == '"');
        let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
        if k == "class" {
            class = Some(v.rsplit('.').next().unwrap_or(v).to_string());
        } else if k == "replication_factor" {
            rf_by_dc.insert(None, v.parse().ok()?);
        } else {
            rf_by_dc.insert(Some(k.to_string()), v.parse().ok()?);
        }
    }
    let class = class?;
    let simple = class == "SimpleStrategy";
    if !simple && class != "NetworkTopologyStrategy" {
        return None;
    }
    Some(Replication { simple, rf_by_dc })
}

fn name(c: Consistency) -> String {
    serde_json::to_value(c).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// Why `cl` cannot be met (error) or has no slack (note), for an operation that reads or not.
fn judge(cl: Consistency, reads: bool, r: &Replication, local_dc: Option<&str>) -> Option<(Severity, String)> {
    use Consistency::*;
    let total = r.total();
    let local_rf = match (r.simple, local_dc) {
        (true, _) => Some(total),
        (false, Some(dc)) => Some(r.rf_by_dc.get(&Some(dc.to_string())).copied().unwrap_or(0)),
        (false, None) if r.rf_by_dc.len() == 1 => Some(total),
        (false, None) => None,
    };
    let need = |n: u32, rf: u32, what: &str| -> Option<(Severity, String)> {
        (n > rf).then(|| (Severity::Error, format!("{} needs {n} replicas but {what} has {rf}", name(cl))))
    };
    match cl {
        Any if reads => Some((Severity::Error, "ANY is a write-only level; reads are rejected".into())),
        _ if total == 0 => Some((Severity::Error, "the replication map declares no replicas".into())),
        Two => need(2, total, "the keyspace"),
        Three => need(3, total, "the keyspace"),
        EachQuorum if r.simple => Some((Severity::Error, "EACH_QUORUM requires NetworkTopologyStrategy; with SimpleStrategy every request is rejected".into())),
        EachQuorum if r.rf_by_dc.values().any(|rf| *rf == 2) => {
            Some((Severity::Info, "EACH_QUORUM at RF 2 in a data center needs both of its replicas".into()))
        }
        LocalQuorum | LocalOne => match local_rf {
            Some(0) => Some((Severity::Error, format!("{} needs replicas in the local data center {}, which has none", name(cl), local_dc.unwrap_or("?")))),
            Some(2) if cl == LocalQuorum => {
                Some((Severity::Info, "LOCAL_QUORUM at RF 2 needs both local replicas: one replica down fails every request".into()))
            }
            _ => None,
        },
        Quorum if total == 2 => Some((Severity::Info, "QUORUM at RF 2 needs both replicas: one replica down fails every request".into())),
        All if total > 1 => Some((Severity::Info, format!("ALL at RF {total} fails whenever any replica is down"))),
        _ => None,
    }
}

fn op_reads(m: &Model, op: &Operation) -> bool {
    m.stmts.iter().any(|s| std::ptr::eq(s.op, op) && s.dml.kind == DmlKind::Select)
}

pub(crate) fn check(m: &Model, out: &mut Vec<Finding>) {
    let Some(text) = m.w.replication.as_deref() else { return };
    let Some(r) = parse_replication(text) else { return };
    for op in &m.w.operations {
        let active = m.stmts.iter().any(|s| std::ptr::eq(s.op, op) && s.active());
        let Some(body) = op.cql().filter(|_| active) else {
            continue;
        };
        let Some((sev, msg)) = judge(body.consistency, op_reads(m, op), &r, m.opts.local_dc.as_deref()) else { continue };
        out.push(Finding {
            severity: sev,
            rule: Rule::ConsistencyUnmet,
            file: m.w.origin.clone(),
            line: Some(op.line),
            subject: op.name.clone(),
            statement: body.statements.first().map(|s| super::one_line(&s.cql)).unwrap_or_default(),
            message: format!("operation {} at {}: {msg} (replication {})", op.name, name(body.consistency), text.trim()),
            why: "a request succeeds only when as many replicas answer as its consistency level asks for; if the replication cannot supply them, the coordinator answers Unavailable at once, every time".into(),
            fix: "lower the consistency level, or raise the replication factor (and the nodes) so the level can be met with a replica to spare".into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{line_of, lint_yaml, of};
    use super::*;

    fn w(replication: &str, cl: &str) -> String {
        format!(
            "keyspace: ks
replication: \"{replication}\"
schema:
  - CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY, v text)
generators:
  id: {{ type: bigint, dist: uniform, min: 0, max: 1000 }}
operations:
  read:
    cql: SELECT v FROM t WHERE id = ?
    args: [id]
    consistency: {cl}
run:
  mix: {{ read: 1 }}
  duration: 10s
"
        )
    }

    #[test]
    fn replication_maps() {
        let r = parse_replication("{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}").unwrap();
        assert!(!r.simple);
        assert_eq!(r.total(), 5);
        let s = parse_replication("{'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '1'}").unwrap();
        assert!(s.simple && s.total() == 1);
        assert_eq!(parse_replication("not a map"), None);
    }

    #[test]
    fn levels_that_cannot_be_met_are_errors() {
        for (repl, cl) in [
            ("{'class': 'SimpleStrategy', 'replication_factor': 1}", "TWO"),
            ("{'class': 'SimpleStrategy', 'replication_factor': 2}", "THREE"),
            ("{'class': 'SimpleStrategy', 'replication_factor': 3}", "EACH_QUORUM"),
            ("{'class': 'SimpleStrategy', 'replication_factor': 3}", "ANY"),
        ] {
            let src = w(repl, cl);
            let f = lint_yaml(&src);
            let hits = of(&f, Rule::ConsistencyUnmet);
            assert_eq!(hits.len(), 1, "{repl} {cl}: {f:#?}");
            assert_eq!((hits[0].severity, hits[0].line), (Severity::Error, Some(line_of(&src, "  read:"))));
        }
    }

    #[test]
    fn levels_the_replication_can_meet_pass() {
        for (repl, cl) in [
            ("{'class': 'SimpleStrategy', 'replication_factor': 1}", "LOCAL_QUORUM"),
            ("{'class': 'SimpleStrategy', 'replication_factor': 3}", "QUORUM"),
            ("{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 3}", "EACH_QUORUM"),
            ("{'class': 'SimpleStrategy', 'replication_factor': 1}", "ALL"),
        ] {
            let f = lint_yaml(&w(repl, cl));
            assert!(f.is_empty(), "{repl} {cl}: {f:#?}");
        }
        // a local data center without replicas
        let opts = super::super::LintOptions { local_dc: Some("dc3".into()), ..Default::default() };
        let f = super::super::test_util::lint_yaml_with(&w("{'class': 'NetworkTopologyStrategy', 'dc1': 3}", "LOCAL_QUORUM"), &opts);
        assert_eq!(of(&f, Rule::ConsistencyUnmet)[0].severity, Severity::Error);
    }
}
