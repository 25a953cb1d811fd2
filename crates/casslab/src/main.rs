//! The `casslab` binary: parse the command line, run the command, print any error and exit.
//! This is the only place that decides exit codes.

mod cli;
mod commands;
mod progress;
mod terminal;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    match commands::dispatch(args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(exit_code(&e));
        }
    }
}

/// Ends the process at once after a second Ctrl-C (the first one stops the run cleanly).
pub fn abort_interrupted() -> ! {
    std::process::exit(130)
}

/// 2 for problems with what the user gave us (workload files, arguments), 1 otherwise.
fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.downcast_ref::<casslab_core::workload::WorkloadError>().is_some()) {
        2
    } else {
        1
    }
}
