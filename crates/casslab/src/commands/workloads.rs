//! `casslab workloads`: list the built-in workloads or print one.

use crate::cli::WorkloadsCommand;
use anyhow::{bail, Result};
use casslab_core::workload::{parse_workload, BUILTINS};
use std::collections::BTreeMap;

pub fn workloads(cmd: Option<WorkloadsCommand>) -> Result<i32> {
    match cmd {
        None => {
            let width = BUILTINS.iter().chain(casslab_core::workload::SCENARIOS).map(|(n, _)| n.len()).max().unwrap_or(8);
            for (name, src) in BUILTINS {
                let w = parse_workload(src, &format!("builtin:{name}"), &BTreeMap::new())?;
                println!("{name:<width$}  {}", w.description);
            }
            println!("\nscenarios (events during the run on a local cluster of several nodes):");
            for (name, src) in casslab_core::workload::SCENARIOS {
                let w = parse_workload(src, &format!("scenario:{name}"), &BTreeMap::new())?;
                println!("{name:<width$}  {}", w.description);
            }
            eprintln!("\n`casslab workloads show NAME` prints one; `casslab run NAME` runs it.");
        }
        Some(WorkloadsCommand::Show { name }) => match casslab_core::workload::builtin(&name).or_else(|| casslab_core::workload::scenario(&name)) {
            Some(src) => print!("{src}"),
            None => {
                let names: Vec<&str> = BUILTINS.iter().chain(casslab_core::workload::SCENARIOS).map(|(n, _)| *n).collect();
                bail!("no built-in workload or scenario \"{name}\" (built-in: {})", names.join(", "))
            }
        },
    }
    Ok(0)
}
