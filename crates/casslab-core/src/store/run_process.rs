//! The process that makes a run, recorded with it when it begins (pid, host, and when and in
//! which boot of the kernel the process started), so that a run whose process is gone — killed,
//! crashed, its machine rebooted — is shown as `crashed` rather than `running` forever. Only a
//! reader on the same host can tell; elsewhere the run keeps the status it was saved with. A
//! pid reused by another process is not taken for the run's: its start time differs.
//! Linux only (it reads `/proc`); elsewhere no process is recorded and nothing is derived.

use serde::{Deserialize, Serialize};

/// Where a run's process ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProcess {
    pub pid: u32,
    pub host: String,
    /// `<boot id>/<start time in clock ticks since boot>` of the process.
    pub started: Option<String>,
}

impl RunProcess {
    /// This process, when `/proc` tells who it is.
    pub fn current() -> Option<RunProcess> {
        let pid = std::process::id();
        Some(RunProcess { pid, host: host()?, started: started(pid) })
    }

    /// Whether the process is known to be gone: it ran on this host and no process with its
    /// pid and start time runs now. `false` when that cannot be told (another host).
    pub fn is_gone(&self) -> bool {
        if host().as_deref() != Some(self.host.as_str()) {
            return false;
        }
        match (&self.started, started(self.pid)) {
            (_, None) => true,
            (Some(then), Some(now)) => *then != now,
            (None, Some(_)) => false,
        }
    }
}

/// This machine's name, as the kernel has it.
fn host() -> Option<String> {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    read("/proc/sys/kernel/hostname").or_else(|| read("/etc/hostname"))
}

/// `<boot id>/<start ticks>` of process `pid`, or `None` when it does not run.
fn started(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = start_ticks(&stat)?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default();
    Some(format!("{boot}/{ticks}"))
}

/// Field 22 (`starttime`) of `/proc/<pid>/stat`, counted after the command name's `)`.
fn start_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_dead_or_reused_pid_is_gone() {
        let me = RunProcess::current().expect("Linux has /proc");
        assert!(!me.is_gone());
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(RunProcess { pid, ..me.clone() }.is_gone(), "an exited process");
        assert!(RunProcess { started: Some("another-boot/1".into()), ..me.clone() }.is_gone(), "a pid now used by another process");
        assert!(!RunProcess { host: "elsewhere".into(), pid, ..me }.is_gone(), "another host cannot be told");
    }

    #[test]
    fn the_start_time_is_read_after_the_command_name() {
        let stat = "4242 (java main) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 40 0 1234 5000000 2048";
        assert_eq!(start_ticks(stat), Some(1234));
        assert_eq!(start_ticks("garbage"), None);
    }
}
