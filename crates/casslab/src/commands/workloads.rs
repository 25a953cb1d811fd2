//! `casslab workloads`: list the built-in workloads, scenarios and shipped experiments (the
//! library's `report::catalogue_text`) or print one's YAML.

use crate::cli::WorkloadsCommand;
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::experiment::{builtin_experiment, BUILTIN_EXPERIMENTS};
use casslab_core::workload::{builtin, scenario, BUILTINS, SCENARIOS};

pub fn workloads(cmd: Option<WorkloadsCommand>) -> Result<i32> {
    match cmd {
        None => {
            out::print(&casslab_core::report::catalogue_text::catalogue_text()?)?;
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
