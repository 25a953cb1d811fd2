//! The JVM's own GC log (`-Xlog:gc*:file=...:time,uptime`, as `casslab local` starts nodes):
//! parsing the lines that close a stop-the-world pause into [`GcPause`]s, and following the
//! file as it grows (and when the JVM rotates it). It knows nothing of runs or of the store.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// One stop-the-world pause, as the JVM logged it when it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct GcPause {
    /// Wall clock (ms since the Unix epoch) when the pause ended.
    pub end_unix_ms: i64,
    pub duration_ms: f64,
    /// What paused, e.g. `Young (Normal) (G1 Evacuation Pause)`, `Full (System.gc())`, `Remark`.
    pub kind: String,
}

impl GcPause {
    pub fn start_unix_ms(&self) -> i64 {
        self.end_unix_ms - self.duration_ms.round() as i64
    }
}

/// Parses one line such as
/// `[2026-11-22T13:26:44.960+0000][2.097s] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 52M->11M(1024M) 14.690ms`
/// (G1, Parallel), `... GC(3) Pause Mark Start 0.012ms` (ZGC) or
/// `... GC(1) Pause Final Mark (unload classes) 0.305ms` (Shenandoah).
/// Lines that open a pause (no duration), concurrent phases and everything else give `None`.
pub fn parse_line(line: &str) -> Option<GcPause> {
    let line = line.trim_end();
    let rest = line.strip_prefix('[')?;
    let (time, rest) = rest.split_once(']')?;
    let end_unix_ms = parse_jvm_time(time)?;
    let body = rest.rsplit_once(']').map(|(_, b)| b).unwrap_or(rest).trim_start();
    let tokens: Vec<&str> = body.split_whitespace().collect();
    if tokens.len() < 4 || !tokens[0].starts_with("GC(") || tokens[1] != "Pause" {
        return None;
    }
    let duration_ms: f64 = tokens[tokens.len() - 1].strip_suffix("ms")?.parse().ok()?;
    // G1 and Parallel give the heap before and after; ZGC and Shenandoah do not
    let last_word = if tokens[tokens.len() - 2].contains("->") { tokens.len() - 2 } else { tokens.len() - 1 };
    let kind = tokens[2..last_word].join(" ");
    Some(GcPause { end_unix_ms, duration_ms, kind })
}

/// `2026-11-22T13:26:44.960+0000` (the JVM's `time` decorator) → ms since the Unix epoch.
fn parse_jvm_time(s: &str) -> Option<i64> {
    let t = jiff::fmt::strtime::parse("%Y-%m-%dT%H:%M:%S%.f%z", s).ok()?.to_timestamp().ok()?;
    Some(t.as_millisecond())
}

/// Follows one GC log: each [`GcLogTail::read_new`] returns the pauses logged since the last
/// call. Starts at the file's current end (pauses before the run are not its business).
#[derive(Debug)]
pub struct GcLogTail {
    path: PathBuf,
    offset: u64,
    partial: String,
}

impl GcLogTail {
    pub fn new(path: PathBuf) -> GcLogTail {
        let offset = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        GcLogTail { path, offset, partial: String::new() }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// New complete pauses since the last call. A file shorter than what was read before
    /// was rotated: it is read again from its start.
    pub fn read_new(&mut self) -> std::io::Result<Vec<GcPause>> {
        let mut f = File::open(&self.path)?;
        let len = f.metadata()?.len();
        if len < self.offset {
            self.offset = 0;
            self.partial.clear();
        }
        f.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        f.take(len - self.offset).read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&buf));
        let mut pauses = Vec::new();
        let complete = match self.partial.rfind('\n') {
            Some(i) => i + 1,
            None => return Ok(pauses),
        };
        for line in self.partial[..complete].lines() {
            pauses.extend(parse_line(line));
        }
        self.partial.drain(..complete);
        Ok(pauses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_of_every_collector() {
        let z = parse_line("[2026-11-22T13:26:44.960+0000][2.097s] GC(3) Pause Mark Start 0.012ms").unwrap();
        assert_eq!((z.kind.as_str(), z.duration_ms), ("Mark Start", 0.012));
        let s = parse_line("[2026-11-22T13:26:44.960+0000][2.097s] GC(1) Pause Final Mark (unload classes) 0.305ms").unwrap();
        assert_eq!(s.kind, "Final Mark (unload classes)");
        let p = parse_line("[2026-11-22T13:26:44.960+0000][2.097s] GC(0) Pause Young (Allocation Failure) 100M->20M(512M) 12.300ms").unwrap();
        assert_eq!((p.kind.as_str(), p.duration_ms), ("Young (Allocation Failure)", 12.3));
        assert!(parse_line("[2026-11-22T13:26:44.960+0000][2.097s] GC(3) Concurrent Mark 12.012ms").is_none());
        assert!(parse_line("[2026-11-22T13:26:44.960+0000][2.097s] GC(3) Pause Young (Normal) (G1 Evacuation Pause)").is_none(), "a pause opening");
    }
    use std::io::Write;

    #[test]
    fn closing_lines_of_pauses_parse_and_others_do_not() {
        let p = parse_line("[2026-11-22T13:26:44.960+0000][2.097s] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 52M->11M(1024M) 14.690ms").unwrap();
        assert_eq!(p.kind, "Young (Normal) (G1 Evacuation Pause)");
        assert!((p.duration_ms - 14.690).abs() < 1e-9);
        // 2026-11-22T13:26:44.960Z
        assert_eq!(p.end_unix_ms, 1_795_354_004_960);
        assert_eq!(p.start_unix_ms(), 1_795_354_004_945);
        let full = parse_line("[2026-11-22T14:26:44.960+0100][9.0s] GC(9) Pause Full (System.gc()) 50M->20M(1024M) 45.6ms").unwrap();
        assert_eq!(full.kind, "Full (System.gc())");
        assert_eq!(full.end_unix_ms, p.end_unix_ms, "the zone offset is applied");
        let remark = parse_line("[2026-11-22T13:26:45.230+0000][2.367s] GC(2) Pause Remark 13M->13M(1024M) 6.772ms").unwrap();
        assert_eq!(remark.kind, "Remark");
        for other in [
            "[2026-11-22T13:26:44.945+0000][2.082s] GC(0) Pause Young (Normal) (G1 Evacuation Pause)",
            "[2026-11-22T13:26:45.244+0000][2.381s] GC(2) Concurrent Mark Cycle 62.001ms",
            "[2026-11-22T13:26:44.960+0000][2.097s] GC(0) Eden regions: 26->0(25)",
            "[2026-11-22T13:26:44.960+0000][2.097s] Using G1",
            "garbage",
            "",
        ] {
            assert_eq!(parse_line(other), None, "{other}");
        }
    }

    #[test]
    fn dates_convert_like_the_calendar() {
        assert_eq!(parse_jvm_time("1970-01-02T00:00:00.5+0000"), Some(86_400_500));
        assert_eq!(parse_jvm_time("2000-03-01T01:00:00.000+0100"), Some(11_017 * 86_400_000));
        assert_eq!(parse_jvm_time("2026-11-22T13:26:44.960-0230"), Some(1_795_354_004_960 + 9_000_000));
        assert_eq!(parse_jvm_time("2026-13-22T13:26:44.960+0000"), None);
    }

    #[test]
    fn the_tail_returns_only_new_complete_lines_and_survives_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gc.log");
        let line = |n: u32, ms: &str| format!("[2026-11-22T13:26:4{n}.000+0000][1.0s] GC({n}) Pause Young (Normal) (G1 Evacuation Pause) 5M->1M(10M) {ms}ms\n");
        std::fs::write(&path, line(0, "1.0")).unwrap();
        let mut tail = GcLogTail::new(path.clone());
        assert!(tail.read_new().unwrap().is_empty(), "what was there before is skipped");
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        let l1 = line(1, "2.5");
        f.write_all(&l1.as_bytes()[..20]).unwrap();
        assert!(tail.read_new().unwrap().is_empty(), "half a line waits");
        f.write_all(&l1.as_bytes()[20..]).unwrap();
        f.write_all(line(2, "3.0").as_bytes()).unwrap();
        let got: Vec<f64> = tail.read_new().unwrap().iter().map(|p| p.duration_ms).collect();
        assert_eq!(got, [2.5, 3.0]);
        std::fs::write(&path, line(3, "7.0")).unwrap();
        let got: Vec<f64> = tail.read_new().unwrap().iter().map(|p| p.duration_ms).collect();
        assert_eq!(got, [7.0], "a rotated (shorter) file is read from its start");
    }
}
