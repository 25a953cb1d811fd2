//! `casslab completions SHELL` and `casslab man`: shell completion scripts and the man page,
//! both generated from the command line's definition (`cli::command`), so they never drift
//! from the flags.

use crate::exit::Exit;
use crate::out;
use anyhow::{Context, Result};
use std::path::Path;

pub fn completions(shell: clap_complete::Shell) -> Result<i32> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut crate::cli::command(), "casslab", &mut buf);
    out::print(&String::from_utf8_lossy(&buf))?;
    Ok(Exit::Success.code())
}

pub fn man(dir: Option<&Path>) -> Result<i32> {
    let cmd = crate::cli::manual_command();
    match dir {
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut buf).context("cannot render the man page")?;
            out::print(&String::from_utf8_lossy(&buf))?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir).with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            out::note(&format!("wrote the man pages into {}", dir.display()));
        }
    }
    Ok(Exit::Success.code())
}
