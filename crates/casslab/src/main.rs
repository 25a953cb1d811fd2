//! The `casslab` binary: parse the command line, run the command, print any error and exit.
//! This is the only place that exits; the code comes from the command, or from the error's
//! class (`exit.rs`).

// first: its `eprintln!` (which never panics on a closed stderr) is the one every module uses
#[macro_use]
mod out;
mod cli;
mod commands;
#[cfg(test)]
mod docs_tests;
mod exit;
mod help;
mod progress;
mod terminal;

use clap::FromArgMatches;
use exit::Exit;

fn main() {
    let args = match cli::Cli::from_arg_matches(&cli::command().get_matches()) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    out::set_quiet(args.quiet);
    let code = match commands::dispatch(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::classify(&e).code()
        }
    };
    std::process::exit(code)
}

/// Ends the process at once with `why`'s code, for what cannot return to `main`: a second
/// Ctrl-C while a run is finishing (`abort(Exit::Interrupted)`).
pub(crate) fn abort(why: Exit) -> ! {
    std::process::exit(why.code())
}
