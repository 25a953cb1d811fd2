//! One module per command; `dispatch` routes the parsed command line to them and returns the
//! process exit code (see `exit.rs`: a command returns its code, or an error whose class
//! decides it). Results go to stdout through `out.rs`.

mod compare;
mod experiment;
pub mod import;
mod lint;
mod live_view;
mod local;
mod manual;
mod merge;
mod report;
mod results;
mod run;
mod verify_command;
mod workloads;

use crate::cli::{Cli, Command, StoreArgs};
use anyhow::Result;
use casslab_core::store::Store;
use std::path::PathBuf;

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Experiment(args) => experiment::experiment(args),
        Command::Local(c) => local::local(c),
        Command::Workloads { command } => workloads::workloads(command),
        Command::Runs(args) => results::runs(args),
        Command::Show { run, format, export, store } => results::show(&run, format, &export, &store),
        Command::Report(args) => report::report(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Lint(args) => lint::lint_command(&args),
        Command::Merge(args) => merge::merge(&args),
        Command::Import(args) => import::import(args),
        Command::Verify(args) => verify_command::verify(&args),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { dir } => manual::man(dir.as_deref()),
    }
}

/// The results database: --store, else $CASSLAB_STORE, else the user's data dir.
pub fn store_path(args: &StoreArgs) -> PathBuf {
    if let Some(p) = &args.store {
        return p.clone();
    }
    if let Some(p) = std::env::var_os("CASSLAB_STORE") {
        return PathBuf::from(p);
    }
    casslab_local::default_home().join("results.db")
}

/// The results store for a command that only reads runs: an error (exit code 2) naming the
/// path when no run was ever saved there, and nothing is created.
pub fn store_to_read(args: &StoreArgs) -> Result<Store> {
    Ok(Store::open_existing(&store_path(args))?)
}
