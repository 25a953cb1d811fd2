//! `casslab workloads`: list the built-in workloads, scenarios and shipped experiments (name and
//! description, in one table so the lists line up) or print one's YAML. Parsing is
//! casslab-core's.

use crate::cli::WorkloadsCommand;
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::experiment::{builtin_experiment, experiment_summary, BUILTIN_EXPERIMENTS};
use casslab_core::report::table::TextTable;
use casslab_core::workload::{builtin, parse_workload, scenario, BUILTINS, SCENARIOS};
use std::collections::BTreeMap;

pub fn workloads(cmd: Option<WorkloadsCommand>) -> Result<i32> {
    match cmd {
        None => {
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
            out::print(&format!(
                "{}\n\nscenarios (events during the run on a local cluster of several nodes):\n{}\n\nexperiments (variants compared until the answer is known):\n{}\n",
                lines.join("\n"),
                scenarios.join("\n"),
                experiments.join("\n")
            ))?;
            out::note("\n`casslab workloads show NAME` prints one; `casslab run NAME` runs a workload or scenario, `casslab experiment NAME` an experiment.");
        }
        Some(WorkloadsCommand::Show { name }) => match builtin(&name).or_else(|| scenario(&name)).or_else(|| builtin_experiment(&name)) {
            Some(src) => out::print(src)?,
            None => {
                let names: Vec<&str> = BUILTINS.iter().chain(SCENARIOS).chain(BUILTIN_EXPERIMENTS).map(|(n, _)| *n).collect();
                bail_usage!("no built-in workload, scenario or experiment \"{name}\" (built-in: {})", names.join(", "))
            }
        },
    }
    Ok(Exit::Success.code())
}
