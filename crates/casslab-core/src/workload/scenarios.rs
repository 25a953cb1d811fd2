//! The scenario files shipped in the repository's `scenarios/` folder, embedded in the binary:
//! workloads with `events:` that disturb a local cluster during the run (a node or a data
//! center lost, two data centers partitioned, a major compaction, a repair, a node replaced, a node added). A scenario's name works wherever a workload
//! file path does; they are kept apart from the built-in workloads because they need a local
//! cluster of several nodes.

/// (name, YAML text) of every scenario, in the order `casslab workloads` lists them.
pub const SCENARIOS: &[(&str, &str)] = &[
    ("node-loss", include_str!("../../../../scenarios/node-loss.yaml")),
    ("dc-loss", include_str!("../../../../scenarios/dc-loss.yaml")),
    ("dc-partition", include_str!("../../../../scenarios/dc-partition.yaml")),
    ("compaction-under-load", include_str!("../../../../scenarios/compaction-under-load.yaml")),
    ("repair-under-load", include_str!("../../../../scenarios/repair-under-load.yaml")),
    ("consistency-under-node-loss", include_str!("../../../../scenarios/consistency-under-node-loss.yaml")),
    ("node-replace", include_str!("../../../../scenarios/node-replace.yaml")),
    ("scale-out", include_str!("../../../../scenarios/scale-out.yaml")),
];

/// The text of a shipped scenario.
pub fn scenario(name: &str) -> Option<&'static str> {
    SCENARIOS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn every_scenario_parses_with_events_a_local_cluster_can_run() {
        for (name, src) in SCENARIOS {
            let w = crate::workload::parse_workload(src, &format!("scenario:{name}"), &BTreeMap::new()).unwrap();
            assert_eq!(&w.name, name);
            assert!(!w.events.is_empty(), "{name} has no events");
            let run = w.run.as_ref().unwrap();
            for e in &w.events {
                assert!((e.at_ms as f64) < (run.warmup_s + run.duration_s) * 1000.0, "{name}: {} is after the run", e.text);
            }
        }
        assert!(scenario("node-loss").unwrap().contains("kill ${node}"));
        assert!(scenario("dc-partition").unwrap().contains("partition ${sides}"));
        assert_eq!(scenario("nope"), None);
    }
}
