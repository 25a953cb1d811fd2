//! Results on standard output, for every command that prints them. A reader that goes away
//! (`casslab runs | head -1`) is not an error: once a write finds the pipe closed, this and
//! every later write succeed without writing, and the command finishes its work (exports,
//! saving, gates) and exits with its own code. Any other failure to write is an error.
//!
//! Why not die on the closed pipe (SIGPIPE's default, or exit 0 at the first failed write as
//! ripgrep does): a `compare` gate that failed must still exit 1 under `| head`, and `run`
//! or `show --json` must still save and export what they were asked to. It owns nothing
//! else: progress, warnings and errors go to stderr directly.

use anyhow::{Context, Result};
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write found standard output closed.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output and flushes it (so a closed pipe is seen at once).
pub fn print(text: &str) -> Result<()> {
    write_to(&mut std::io::stdout().lock(), text)
}

/// Writes `text` and a line break.
pub fn println(text: &str) -> Result<()> {
    print(&format!("{text}\n"))
}

fn write_to(w: &mut impl Write, text: &str) -> Result<()> {
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    match w.write_all(text.as_bytes()).and_then(|()| w.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        r => r.context("cannot write to standard output"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Broken(ErrorKind);

    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_not_an_error_but_other_failures_are() {
        assert!(write_to(&mut Broken(ErrorKind::Other), "x").is_err());
        assert!(write_to(&mut Broken(ErrorKind::BrokenPipe), "x").is_ok());
        // from then on nothing is written, and nothing fails
        assert!(write_to(&mut Broken(ErrorKind::Other), "x").is_ok());
    }
}
