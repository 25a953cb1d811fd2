//! Results on standard output, for every command that prints them. A reader that goes away
//! (`casslab runs | head -1`) is not an error: once a write finds the pipe closed, this and
//! every later write succeed without writing, and the command finishes its work (exports,
//! saving, gates) and exits with its own code. Any other failure to write is an error.
//!
//! Why not die on the closed pipe (SIGPIPE's default, or exit 0 at the first failed write as
//! ripgrep does): a `compare` gate that failed must still exit 1 under `| head`, and `run`
//! or `show --json` must still save and export what they were asked to. It owns nothing
//! else: progress, warnings and errors go to stderr; [`note`] is the stderr line that `--quiet`
//! silences, [`warn`] the warning it keeps. A file option given `-` writes to stdout through [`write_to_file_or_stdout`].

/// `eprintln!` that never panics: a closed standard error (`casslab … 2>&1 | head -1`) is
/// the reader leaving, as a closed standard output is. It shadows the standard macro in every
/// module of the binary (`main.rs` declares this module first), so no line to stderr can end
/// the process.
macro_rules! eprintln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics (see `eprintln!`).
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

use anyhow::{Context, Result};
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write found standard output closed.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// `--quiet`: no notes on stderr.
static QUIET: AtomicBool = AtomicBool::new(false);

pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A line on stderr that is neither a result nor a warning (progress, "wrote FILE"): left out
/// with `--quiet`.
pub fn note(line: &str) {
    if !quiet() {
        eprintln!("{line}");
    }
}

/// A warning on stderr (`warning: …`), the one way the binary words one; `--quiet` keeps
/// warnings.
pub fn warn(message: &str) {
    eprintln!("warning: {message}");
}

/// The path that names standard output.
pub fn stdout_path() -> std::path::PathBuf {
    std::path::PathBuf::from("-")
}

/// Whether a file option names standard output (`-`).
pub fn is_stdout(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes what `write` produces to the file `path` (its directory made when missing), or to
/// stdout for `-`; says "wrote FILE" for a file.
pub fn write_to_file_or_stdout(path: &std::path::Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    if is_stdout(path) {
        let mut buf = Vec::new();
        write(&mut buf).context("cannot write to standard output")?;
        return print(&String::from_utf8_lossy(&buf));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?);
    write(&mut f).and_then(|()| f.flush()).with_context(|| format!("cannot write {}", path.display()))?;
    note(&format!("wrote {}", path.display()));
    Ok(())
}

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
