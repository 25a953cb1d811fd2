//! What casslab ships, as `casslab workloads` lists it: the built-in workloads, the scenarios
//! and the experiments, each with its name and description, in one table so the lists line up.

use super::table::TextTable;
use crate::experiment::{experiment_summary, BUILTIN_EXPERIMENTS};
use crate::workload::{parse_workload, WorkloadError, BUILTINS, SCENARIOS};
use std::collections::BTreeMap;

/// The three lists, a heading before the scenarios and one before the experiments.
pub fn catalogue_text() -> Result<String, WorkloadError> {
    let mut t = TextTable::headless();
    for (kind, list) in [("builtin", BUILTINS), ("scenario", SCENARIOS)] {
        for (name, src) in list {
            let w = parse_workload(src, &format!("{kind}:{name}"), &BTreeMap::new())?;
            t.row([name.to_string(), w.description]);
        }
    }
    for (name, src) in BUILTIN_EXPERIMENTS {
        t.row([name.to_string(), experiment_summary(src)]);
    }
    let mut lines = t.lines();
    let experiments = lines.split_off(BUILTINS.len() + SCENARIOS.len());
    let scenarios = lines.split_off(BUILTINS.len());
    Ok(format!(
        "{}\n\nscenarios (events during the run on a local cluster of several nodes):\n{}\n\nexperiments (variants compared until the answer is known):\n{}\n",
        lines.join("\n"),
        scenarios.join("\n"),
        experiments.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_shipped_workload_scenario_and_experiment_is_listed() {
        let text = super::catalogue_text().unwrap();
        let shipped: Vec<&str> =
            crate::workload::BUILTINS.iter().chain(crate::workload::SCENARIOS).chain(crate::experiment::BUILTIN_EXPERIMENTS).map(|(n, _)| *n).collect();
        let rows: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| shipped.contains(n)).collect();
        assert_eq!(rows.len(), shipped.len(), "one line each:\n{text}");
        assert!(text.contains("\n\nscenarios (") && text.contains("\n\nexperiments ("), "{text}");
    }
}
