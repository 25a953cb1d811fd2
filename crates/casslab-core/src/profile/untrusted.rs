//! Java Flight Recorder files are read by a third-party reader (`jfrs`) that trusts the sizes a
//! file declares: a chunk that says it is 2^62 bytes long makes it allocate that much (the
//! process aborts), one of −1 makes it panic, and counts inside a chunk are trusted alike. So a
//! file reaches it only after two guards: [`check_chunks`] reads every chunk's header and
//! refuses, with the chunk and the byte, a size or an offset that the file's length does not
//! hold; and [`isolated`] runs the reader in a child process (a fork of this one), whose abort,
//! panic or exhaustion ends the child only and comes back as an error. It owns the guards, not
//! the reading (`jfr`).

use super::ProfileError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The fixed header of a chunk, in bytes: magic, version, size, the constant pool's and the
/// metadata's offsets, start time, duration, start ticks, ticks per second, features.
pub const CHUNK_HEADER_BYTES: u64 = 68;

/// Refuses a recording whose chunks' declared sizes and offsets the file does not hold: each
/// chunk starts with `FLR\0`, a version of 1 or 2, a size from its header's length to what is
/// left of the file, offsets of its constant pool and metadata inside it, and a tick rate
/// above 0. Returns the number of chunks (at least one).
pub fn check_chunks(path: &Path) -> Result<usize, ProfileError> {
    let io = |source| ProfileError::Io { path: path.into(), error: source };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let bad = |at: u64, what: String| ProfileError::Damaged { path: path.into(), detail: format!("the chunk at byte {at} {what}") };
    let (mut at, mut chunks) = (0u64, 0usize);
    while at < len {
        if len - at < CHUNK_HEADER_BYTES {
            return Err(bad(at, format!("has {} bytes, fewer than a chunk's header ({CHUNK_HEADER_BYTES}): the file is cut short", len - at)));
        }
        let mut h = [0u8; CHUNK_HEADER_BYTES as usize];
        f.seek(SeekFrom::Start(at)).and_then(|_| f.read_exact(&mut h)).map_err(io)?;
        if &h[0..4] != b"FLR\0" {
            return Err(bad(at, "does not start with FLR\\0".into()));
        }
        let major = u16::from_be_bytes([h[4], h[5]]);
        if !(1..=2).contains(&major) {
            return Err(bad(at, format!("has version {major}, not 1 or 2 (JDK 11 to 21 write 2)")));
        }
        let word = |i: usize| i64::from_be_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let (size, pool, meta, ticks) = (word(8), word(16), word(24), word(56));
        let left = len - at;
        if size < CHUNK_HEADER_BYTES as i64 || size as u64 > left {
            return Err(bad(at, format!("declares {size} bytes, but the file holds {left} from there: the file is cut short or not a recording")));
        }
        for (name, offset) in [("constant pool", pool), ("metadata", meta)] {
            if offset < CHUNK_HEADER_BYTES as i64 || offset >= size {
                return Err(bad(at, format!("places its {name} at byte {offset}, outside its {size} bytes")));
            }
        }
        if ticks <= 0 {
            return Err(bad(at, format!("declares {ticks} ticks per second")));
        }
        at += size as u64;
        chunks += 1;
    }
    if chunks == 0 {
        return Err(ProfileError::Damaged { path: path.into(), detail: "an empty file".into() });
    }
    Ok(chunks)
}

/// Runs `read` in a child process and returns what it returned; the child's end by a signal, a
/// panic or an exit without an answer is an error that says how it ended. The child only
/// reads and computes: it writes its answer to a pipe and leaves with `_exit`.
pub fn isolated<T: Serialize + DeserializeOwned>(path: &Path, read: impl FnOnce() -> Result<T, ProfileError>) -> Result<T, ProfileError> {
    let failed = |detail: String| ProfileError::Damaged { path: path.into(), detail };
    let mut fds = [0i32; 2];
    // SAFETY: a plain pipe(2) into a two-element array
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(failed(format!("no pipe to a reader process: {}", std::io::Error::last_os_error())));
    }
    let (rd, wr) = (fds[0], fds[1]);
    // SAFETY: the child only runs `read` (file reading and computing, no lock of this process
    // is taken by it), writes to its end of the pipe and leaves with _exit, never returning
    // into the caller's frames
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // the child: no panic message, no unwinding past this frame
        std::panic::set_hook(Box::new(|_| {}));
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read))
            .unwrap_or_else(|_| Err(ProfileError::Damaged { path: path.into(), detail: "the Java Flight Recorder reader failed on it".into() }))
            .map_err(|e| e.to_string());
        let bytes = serde_json::to_vec(&answer).unwrap_or_default();
        let mut written = 0;
        while written < bytes.len() {
            // SAFETY: writing bytes of a live buffer to the pipe's write end
            let n = unsafe { libc::write(wr, bytes[written..].as_ptr().cast(), bytes.len() - written) };
            if n <= 0 {
                break;
            }
            written += n as usize;
        }
        // SAFETY: ends the child at once, without running the parent's destructors or atexit
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent closes its copy of the write end, so that the read sees the end
    unsafe { libc::close(wr) };
    if pid < 0 {
        // SAFETY: closing the read end this function opened
        unsafe { libc::close(rd) };
        return Err(failed(format!("no reader process: {}", std::io::Error::last_os_error())));
    }
    let mut bytes = Vec::new();
    // SAFETY: `rd` is this function's own open read end; the File owns and closes it
    let mut pipe = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(rd) };
    let read_ok = pipe.read_to_end(&mut bytes).is_ok();
    drop(pipe);
    let mut status = 0;
    // SAFETY: waits for the child this function forked
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFSIGNALED(status) {
        return Err(failed(format!(
            "the Java Flight Recorder reader was ended by signal {} reading it (a damaged or hostile recording)",
            libc::WTERMSIG(status)
        )));
    }
    let answer: Option<Result<T, String>> = read_ok.then(|| serde_json::from_slice(&bytes).ok()).flatten();
    match answer {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(ProfileError::Reader(e)),
        None => Err(failed(format!("the Java Flight Recorder reader ended without an answer (exit status {})", libc::WEXITSTATUS(status)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk header: magic, version 2.0, `size`, pool and metadata offsets, times, `ticks`.
    fn header(size: i64, pool: i64, meta: i64, ticks: i64) -> Vec<u8> {
        let mut h = b"FLR\0".to_vec();
        h.extend(2u16.to_be_bytes());
        h.extend(0u16.to_be_bytes());
        for w in [size, pool, meta, 0, 0, 0, ticks] {
            h.extend(w.to_be_bytes());
        }
        h.extend(0i32.to_be_bytes());
        h
    }

    fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new().suffix(".jfr").tempfile().unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        f
    }

    #[test]
    fn declared_sizes_the_file_does_not_hold_are_refused_before_any_reader_sees_them() {
        let mut huge = header(1 << 62, 70, 72, 1_000_000_000);
        huge.resize(76, 0);
        let e = check_chunks(file(&huge).path()).unwrap_err().to_string();
        assert!(e.contains("at byte 0 declares 4611686018427387904 bytes") && e.contains("holds 76"), "{e}");
        let mut minus = header(-1, 70, 72, 1);
        minus.resize(76, 0);
        assert!(check_chunks(file(&minus).path()).unwrap_err().to_string().contains("declares -1 bytes"));
        let mut outside = header(80, 200, 72, 1);
        outside.resize(80, 0);
        assert!(check_chunks(file(&outside).path()).unwrap_err().to_string().contains("constant pool at byte 200"));
        let mut no_ticks = header(80, 70, 72, 0);
        no_ticks.resize(80, 0);
        assert!(check_chunks(file(&no_ticks).path()).unwrap_err().to_string().contains("0 ticks per second"));
        let mut cut = header(80, 70, 72, 1);
        cut.resize(80, 0);
        cut.extend(b"FLR\0\0\x02");
        assert!(check_chunks(file(&cut).path()).unwrap_err().to_string().contains("at byte 80 has 6 bytes"));
        let mut two = header(80, 70, 72, 1);
        two.resize(80, 0);
        let again = two.clone();
        two.extend(again);
        assert_eq!(check_chunks(file(&two).path()).unwrap(), 2);
        assert!(check_chunks(file(b"").path()).unwrap_err().to_string().contains("empty"));
    }

    #[test]
    fn a_reader_that_aborts_or_panics_in_its_process_leaves_this_one_standing() {
        let p = Path::new("x.jfr");
        assert_eq!(isolated(p, || Ok(vec![1u32, 2, 3])).unwrap(), [1, 2, 3]);
        let e = isolated::<u32>(p, || std::process::abort()).unwrap_err().to_string();
        assert!(e.contains("ended by signal 6"), "{e}");
        let e = isolated::<u32>(p, || panic!("capacity overflow")).unwrap_err().to_string();
        assert!(e.contains("x.jfr: a damaged Java Flight Recorder file: the Java Flight Recorder reader failed on it"), "{e}");
        let e = isolated::<u32>(p, || Err(ProfileError::Unreadable { path: p.into(), detail: "no samples".into() })).unwrap_err().to_string();
        assert_eq!(e, "x.jfr: not a Java Flight Recorder file nor folded stacks (no samples)");
    }
}
