//! CPU time and resident memory of a process on this machine, read from `/proc/<pid>/stat`
//! (Linux only), the CPU share between two readings, and the time its threads spent waiting
//! to run (`/proc/<pid>/task/*/schedstat`). Used for the nodes casslab started and for
//! casslab itself (whose demand for CPU, used plus waited for, says whether it is saturated
//! even on a machine whose cores others take).

use std::time::Instant;

/// One reading of a process.
#[derive(Debug, Clone, Copy)]
pub struct ProcReading {
    pub at: Instant,
    /// User + system CPU time so far, in seconds.
    pub cpu_s: f64,
    pub rss_bytes: u64,
}

/// Reads `/proc/<pid>/stat`; `None` when the process is gone or this is not Linux.
pub fn read(pid: u32) -> Option<ProcReading> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (cpu_ticks, rss_pages) = parse_stat(&text)?;
    Some(ProcReading { at: Instant::now(), cpu_s: cpu_ticks as f64 / clock_ticks_per_s(), rss_bytes: rss_pages * page_size() })
}

/// (utime + stime in clock ticks, rss in pages) from the text of `/proc/<pid>/stat`. The
/// command name (in parentheses) may hold spaces, so fields are counted after its `)`.
pub fn parse_stat(text: &str) -> Option<(u64, u64)> {
    let after = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // f[0] is field 3 (state); utime = 14, stime = 15, rss = 24
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    let rss: u64 = f.get(21)?.parse().ok()?;
    Some((utime + stime, rss))
}

/// The time the threads of `pid` now alive have spent runnable but waiting for a core, in
/// seconds; `None` when the kernel does not say.
pub fn run_wait_s(pid: u32) -> Option<f64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut wait_ns = 0u64;
    let mut any = false;
    for t in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(t.path().join("schedstat")) else { continue };
        if let Some(ns) = text.split_whitespace().nth(1).and_then(|w| w.parse::<u64>().ok()) {
            wait_ns += ns;
            any = true;
        }
    }
    any.then_some(wait_ns as f64 / 1e9)
}

/// CPU used between two readings, in percent of one core (200 = two cores busy).
pub fn cpu_pct(before: &ProcReading, after: &ProcReading) -> Option<f64> {
    let wall_s = after.at.duration_since(before.at).as_secs_f64();
    (wall_s > 0.0).then(|| ((after.cpu_s - before.cpu_s).max(0.0) / wall_s) * 100.0)
}

fn clock_ticks_per_s() -> f64 {
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

fn page_size() -> u64 {
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let text = "4242 (java main) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 40 0 1234 5000000 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(parse_stat(text), Some((325, 2048)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_is_readable_and_its_cpu_share_is_a_percentage() {
        let a = read(std::process::id()).expect("this process has a /proc entry");
        assert!(a.rss_bytes > 0);
        let b = ProcReading { at: a.at + Duration::from_secs(2), cpu_s: a.cpu_s + 1.0, rss_bytes: a.rss_bytes };
        assert!((cpu_pct(&a, &b).unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(cpu_pct(&a, &a), None);
        assert!(read(u32::MAX).is_none());
        assert!(run_wait_s(std::process::id()).is_some_and(|w| w >= 0.0));
        assert!(run_wait_s(u32::MAX).is_none());
    }
}
