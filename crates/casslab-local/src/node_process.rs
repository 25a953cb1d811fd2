//! Node processes on Linux: spawning a JVM detached in its own session, pid files,
//! telling a node's JVM from any other process (via `/proc/<pid>/cmdline`, guarding
//! against pid reuse), stopping with SIGTERM then SIGKILL, free-port checks and log
//! tails. It knows nothing of Cassandra beyond the command line that identifies a node.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::jvm::DAEMON_CLASS;
use crate::layout::NodeLayout;
use crate::local_error::{IoContext, LocalError};

/// Last `n` lines of `text`, joined with newlines.
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Last `n` lines of a file, reading at most its last 256 KiB; empty if unreadable.
pub fn tail_file(path: &Path, n: usize) -> String {
    const MAX_TAIL_BYTES: u64 = 256 * 1024;
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_TAIL_BYTES && file.seek(SeekFrom::Start(len - MAX_TAIL_BYTES)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    tail_lines(&String::from_utf8_lossy(&bytes), n)
}

/// Line `spawn_detached` writes into `stdout.log` before each start.
const START_BANNER: &str = "=== casslab: starting ";

/// The lines of `stdout_tail` written since the last start banner that are not
/// already in `system_tail` (stdout repeats WARN and ERROR lines of system.log).
fn stdout_since_start(stdout_tail: &str, system_tail: &str) -> String {
    let since = stdout_tail.rfind(START_BANNER).map_or(stdout_tail, |at| &stdout_tail[at..]);
    let seen: std::collections::HashSet<&str> = system_tail.lines().collect();
    since.lines().skip(usize::from(since.starts_with(START_BANNER))).filter(|line| !seen.contains(line)).collect::<Vec<_>>().join("\n")
}

/// The last ~30 lines of a node's `system.log`, and what the JVM printed to
/// `stdout.log` during the last start that system.log does not already show.
pub fn node_log_tail(node: &NodeLayout) -> String {
    const TAIL_LINES: usize = 30;
    let system_tail = tail_file(&node.system_log(), TAIL_LINES);
    let stdout_tail = stdout_since_start(&tail_file(&node.stdout_log(), 2 * TAIL_LINES), &system_tail);
    let mut out = String::new();
    for (path, tail) in [(node.system_log(), system_tail), (node.stdout_log(), stdout_tail)] {
        if !tail.trim().is_empty() {
            out.push_str(&format!("--- {} ---\n{tail}\n", path.display()));
        }
    }
    if out.is_empty() {
        out = format!("(no log output in {})", node.logs_dir().display());
    }
    out
}

/// The pid a pid file names, if it names a positive integer.
pub fn parse_pid(text: &str) -> Option<u32> {
    text.trim().parse::<u32>().ok().filter(|&pid| pid > 1)
}

pub fn read_pid_file(path: &Path) -> Option<u32> {
    parse_pid(&fs::read_to_string(path).ok()?)
}

pub fn write_pid_file(path: &Path, pid: u32) -> Result<(), LocalError> {
    fs::write(path, format!("{pid}\n")).context(|| format!("writing {}", path.display()))
}

pub fn remove_if_present(path: &Path) -> Result<(), LocalError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(LocalError::io(format!("removing {}", path.display()), e)),
        _ => Ok(()),
    }
}

/// Reaps `pid` if it is an exited child of this process. Only call it for a pid this
/// process checked to be its own node, relay or server and then saw gone: an unreaped
/// child keeps its pid, so no other process can have taken that number in between.
fn reap_if_child(pid: u32) {
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG only reaps a finished child; a non-child pid yields ECHILD.
    unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
}

/// True when `pid` exists and has not exited. A zombie is not alive, unless other threads
/// of its process are still exiting: a leader thread can show as a zombie while they do, and
/// they still hold the process's files, and so its listening ports. Nothing is reaped here:
/// a pid from a pid file may by now name another child of this process (a number is reused
/// once its owner is reaped), whose own waiter would then find it gone.
pub fn is_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => match process_state(&stat) {
            Some('Z') | Some('X') | None => other_threads_left(pid),
            Some(_) => true,
        },
        Err(_) => false,
    }
}

/// True when `/proc/<pid>/task` lists a thread besides the leader.
fn other_threads_left(pid: u32) -> bool {
    let leader = pid.to_string();
    fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|dir| dir.filter_map(|e| e.ok()).any(|e| e.file_name() != leader.as_str()))
}

/// The state letter of a `/proc/<pid>/stat` line (the field after the `(comm)`).
fn process_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// The arguments of a running process, from `/proc/<pid>/cmdline`.
pub fn cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(raw.split(|&b| b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
}

/// True when `args` run the Cassandra daemon with this node's `cassandra.yaml`.
pub fn is_node_cmdline(args: &[String], node: &NodeLayout) -> bool {
    let config_arg = format!("-Dcassandra.config=file://{}", node.yaml_path().display());
    args.iter().any(|a| a == DAEMON_CLASS) && args.contains(&config_arg)
}

/// True when `pid` is alive and is this node's Cassandra.
pub fn is_node_pid(pid: u32, node: &NodeLayout) -> bool {
    is_alive(pid) && cmdline(pid).is_some_and(|args| is_node_cmdline(&args, node))
}

/// The pid of this node's running JVM: the pid file's if it checks out, else one
/// found by scanning `/proc` (a pid file lost or overwritten).
pub fn find_node_pid(node: &NodeLayout) -> Option<u32> {
    if let Some(pid) = read_pid_file(&node.pid_path()).filter(|&pid| is_node_pid(pid, node)) {
        return Some(pid);
    }
    let entries = fs::read_dir("/proc").ok()?;
    entries.filter_map(Result::ok).filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).find(|&pid| is_node_pid(pid, node))
}

/// Starts `java args` for `node` in a new session (so a Ctrl-C of the caller does not
/// reach it), stdin closed, stdout and stderr appended to `logs/stdout.log`.
pub fn spawn_detached(java: &Path, args: &[OsString], node: &NodeLayout) -> Result<Child, LocalError> {
    let banner = format!("{START_BANNER}{} at {} ===", node.name, node.address);
    spawn_in_session(java, args, &node.dir, &node.stdout_log(), &banner).map_err(|e| match e {
        LocalError::MissingTool { tool, .. } => {
            LocalError::MissingTool { tool, hint: "install a JDK 17+ (apt-get install openjdk-17-jre-headless) or set JAVA_HOME".into() }
        }
        LocalError::Io { error, .. } => LocalError::io(format!("starting java for {}", node.name), error),
        other => other,
    })
}

/// Starts `program args` in `dir` in a new session (so a Ctrl-C of the caller does not reach
/// it), stdin closed, stdout and stderr appended to `log_path` after a `banner` line. A
/// program that is not installed is a [`LocalError::MissingTool`] (its hint is the caller's).
pub fn spawn_in_session(program: &Path, args: &[OsString], dir: &Path, log_path: &Path, banner: &str) -> Result<Child, LocalError> {
    let mut log = OpenOptions::new().create(true).append(true).open(log_path).context(|| format!("opening {}", log_path.display()))?;
    let _ = writeln!(log, "{banner}");
    let err_log = log.try_clone().context(|| format!("duplicating {}", log_path.display()))?;
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir).stdin(Stdio::null()).stdout(log).stderr(err_log);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn().map_err(|e| match e.kind() {
        ErrorKind::NotFound => LocalError::MissingTool { tool: program.display().to_string(), hint: String::new() },
        _ => LocalError::io(format!("starting {}", program.display()), e),
    })
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) with a concrete pid; callers checked the pid is this node's JVM.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// Waits until `pid` is gone, then reaps it if it was a child of this process (callers
/// checked that `pid` is the process they stop).
fn wait_gone(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while is_alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reap_if_child(pid);
    true
}

/// How a stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Exited after SIGTERM within the grace period.
    Gracefully,
    /// Needed SIGKILL.
    Killed,
}

/// Sends SIGTERM, waits up to `grace`, then SIGKILL. Only call with a pid that
/// `is_node_pid` accepted.
pub fn stop_pid(pid: u32, grace: Duration, node: &NodeLayout) -> Result<Stopped, LocalError> {
    stop_process(pid, grace, &node.name)
}

/// Sends SIGTERM, waits up to `grace`, then SIGKILL; `name` names the process in the error.
/// Only call with a pid checked to be the process casslab started.
pub fn stop_process(pid: u32, grace: Duration, name: &str) -> Result<Stopped, LocalError> {
    signal(pid, libc::SIGTERM);
    if wait_gone(pid, grace) {
        return Ok(Stopped::Gracefully);
    }
    signal(pid, libc::SIGKILL);
    if wait_gone(pid, Duration::from_secs(10)) {
        Ok(Stopped::Killed)
    } else {
        Err(LocalError::StopFailed { node: name.to_string(), pid })
    }
}

/// Sends SIGKILL at once (as a crash would end the node) and waits until the process is
/// gone. Only call with a pid that `is_node_pid` accepted.
pub fn kill_pid(pid: u32, node: &NodeLayout) -> Result<(), LocalError> {
    signal(pid, libc::SIGKILL);
    if wait_gone(pid, Duration::from_secs(10)) {
        Ok(())
    } else {
        Err(LocalError::StopFailed { node: node.name.clone(), pid })
    }
}

/// Checks that nothing listens on `address:port` by binding it briefly.
pub fn check_port_free(node: &NodeLayout, what: &str, address: Ipv4Addr, port: u16) -> Result<(), LocalError> {
    match TcpListener::bind((address, port)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AddrInUse => Err(LocalError::PortBusy { node: node.name.clone(), what: what.to_string(), address, port }),
        Err(e) if e.kind() == ErrorKind::AddrNotAvailable => Err(LocalError::AddressUnavailable { node: node.name.clone(), address, reason: e.to_string() }),
        Err(e) => Err(LocalError::io(format!("checking that {address}:{port} is free"), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::layouts;
    use crate::LocalOptions;
    use std::path::PathBuf;

    fn node() -> NodeLayout {
        layouts(&LocalOptions { home: PathBuf::from("/h"), ..LocalOptions::default() }).unwrap().remove(0)
    }

    #[test]
    fn tail_of_text() {
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail_lines("a", 5), "a");
        assert_eq!(tail_lines("", 5), "");
    }

    #[test]
    fn tail_of_large_file_reads_only_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("system.log");
        let text: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
        fs::write(&path, text).unwrap();
        assert_eq!(tail_file(&path, 2), "line 49998\nline 49999");
        assert_eq!(tail_file(&dir.path().join("missing"), 2), "");
    }

    #[test]
    fn stdout_tail_keeps_only_the_last_start_and_new_lines() {
        let stdout = "=== casslab: starting node1 at 127.0.0.1 ===\nold\n\
                      === casslab: starting node1 at 127.0.0.1 ===\nWARNING: jdk\nERROR x\n";
        assert_eq!(stdout_since_start(stdout, "INFO y\nERROR x"), "WARNING: jdk");
        assert_eq!(stdout_since_start("no banner\n", ""), "no banner");
    }

    #[test]
    fn a_process_with_threads_besides_its_leader_is_told_apart() {
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || wait.recv());
        assert!(other_threads_left(std::process::id()), "this test's own process runs a second thread");
        stop.send(()).unwrap();
        worker.join().unwrap().unwrap();
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        assert!(!other_threads_left(child.id()), "sleep runs one thread");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!other_threads_left(child.id()), "a reaped process has no threads left");
    }

    #[test]
    fn an_exited_child_is_not_alive_and_is_left_to_its_own_waiter() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(20);
        while is_alive(pid) {
            assert!(Instant::now() < deadline, "`true` did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!is_alive(pid), "asked twice, still not alive");
        let status = child.wait().expect("the child's own waiter still finds it (is_alive reaped nothing)");
        assert!(status.success());
    }

    #[test]
    fn pid_file_parsing() {
        assert_eq!(parse_pid("1234\n"), Some(1234));
        assert_eq!(parse_pid("  77 "), Some(77));
        assert_eq!(parse_pid(""), None);
        assert_eq!(parse_pid("abc"), None);
        assert_eq!(parse_pid("0"), None);
        assert_eq!(parse_pid("1"), None);
        assert_eq!(parse_pid("-5"), None);
    }

    #[test]
    fn stat_state_parsing() {
        assert_eq!(process_state("123 (java) S 1 2 3"), Some('S'));
        assert_eq!(process_state("123 (we ird) name) Z 1"), Some('Z'));
        assert_eq!(process_state("garbage"), None);
    }

    #[test]
    fn node_cmdline_recognition() {
        let n = node();
        let ours: Vec<String> = ["java", "-Xmx1g", "-Dcassandra.config=file:///h/node1/conf/cassandra.yaml", DAEMON_CLASS].map(String::from).to_vec();
        assert!(is_node_cmdline(&ours, &n));
        let other_node: Vec<String> = ["java", "-Dcassandra.config=file:///h/node2/conf/cassandra.yaml", DAEMON_CLASS].map(String::from).to_vec();
        assert!(!is_node_cmdline(&other_node, &n));
        let not_cassandra: Vec<String> = ["vim", "/h/node1/conf/cassandra.yaml"].map(String::from).to_vec();
        assert!(!is_node_cmdline(&not_cassandra, &n));
    }

    #[test]
    fn own_process_is_alive_and_not_a_node() {
        let me = std::process::id();
        assert!(is_alive(me));
        assert!(!is_node_pid(me, &node()));
        assert!(!is_alive(u32::MAX - 1));
    }

    #[test]
    fn busy_port_is_reported() {
        // An address of its own on loopback: no other socket here takes the port once it is
        // free again (connections to 127.0.0.1 take their own ports from the same range).
        let address = Ipv4Addr::new(127, 93, 41, 7);
        let held = TcpListener::bind((address, 0)).unwrap();
        let port = held.local_addr().unwrap().port();
        let err = check_port_free(&node(), "CQL", address, port).unwrap_err();
        assert!(matches!(err, LocalError::PortBusy { port: p, .. } if p == port), "{err}");
        drop(held);
        check_port_free(&node(), "CQL", address, port).unwrap();
    }
}
