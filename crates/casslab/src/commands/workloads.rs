//! `casslab workloads`: list the built-in workloads and scenarios (name and description, in
//! one table so both lists line up) or print one's YAML. Parsing is casslab-core's.

use crate::cli::WorkloadsCommand;
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::Result;
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
            let mut lines = t.lines();
            let scenarios = lines.split_off(BUILTINS.len());
            out::print(&format!("{}\n\nscenarios (events during the run on a local cluster of several nodes):\n{}\n", lines.join("\n"), scenarios.join("\n")))?;
            out::note("\n`casslab workloads show NAME` prints one; `casslab run NAME` runs it.");
        }
        Some(WorkloadsCommand::Show { name }) => match builtin(&name).or_else(|| scenario(&name)) {
            Some(src) => out::print(src)?,
            None => {
                let names: Vec<&str> = BUILTINS.iter().chain(SCENARIOS).map(|(n, _)| *n).collect();
                bail_usage!("no built-in workload or scenario \"{name}\" (built-in: {})", names.join(", "))
            }
        },
    }
    Ok(Exit::Success.code())
}
