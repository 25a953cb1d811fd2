//! The relay of a local cluster from the outside: starting it (the running casslab executable's
//! `local relay --home DIR`, detached in its own session like the nodes, its pid in
//! `home/relay/pid`, its output in `home/relay/relay.log`), finding it (the pid file checked
//! against `/proc/<pid>/cmdline`, else a scan, as for the nodes), asking it over its control
//! socket, and stopping it. The relay process itself is `relay`'s.

use crate::local_error::{IoContext, LocalError};
use crate::node_process::{cmdline, is_alive, read_pid_file, remove_if_present, spawn_in_session, stop_process, tail_file, write_pid_file};
use crate::relay::{config_file, control_name, log_file, pid_file, relay_dir, RelayConfig, Reply, Request};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a started relay has to answer.
const START_WAIT: Duration = Duration::from_secs(15);
/// How long a relay has to go after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long an answer from the relay may take.
const ASK_WAIT: Duration = Duration::from_secs(10);

/// Whether `args` run the relay of `home`.
pub fn is_relay_cmdline(args: &[String], home: &Path) -> bool {
    let home = home.to_string_lossy();
    args.windows(2).any(|w| w[0] == "local" && w[1] == "relay") && args.windows(2).any(|w| w[0] == "--home" && w[1] == home)
}

/// The pid of the relay of `home` when it runs.
pub fn find_relay_pid(home: &Path) -> Option<u32> {
    let ours = |pid: u32| is_alive(pid) && cmdline(pid).is_some_and(|args| is_relay_cmdline(&args, home));
    if let Some(pid) = read_pid_file(&pid_file(home)).filter(|&pid| ours(pid)) {
        return Some(pid);
    }
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.filter_map(Result::ok).filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).find(|&pid| ours(pid))
}

/// Sends `request` to the relay of `home` and returns its answer (an error answer is an error).
pub fn ask(home: &Path, request: &Request) -> Result<Reply, LocalError> {
    let fail = |reason: String| LocalError::Relay { home: home.to_path_buf(), reason, log_tail: String::new() };
    let addr = UnixAddr::from_abstract_name(control_name(home).as_bytes()).context(|| "naming the relay's control socket".into())?;
    let conn = UnixStream::connect_addr(&addr).map_err(|_| LocalError::RelayDown { home: home.to_path_buf() })?;
    conn.set_read_timeout(Some(ASK_WAIT)).context(|| "setting a timeout on the relay's socket".into())?;
    let text = serde_json::to_string(request).expect("a request always serializes");
    (&conn).write_all(format!("{text}\n").as_bytes()).map_err(|e| fail(format!("cannot send it a request: {e}")))?;
    let mut line = String::new();
    BufReader::new(&conn).read_line(&mut line).map_err(|e| fail(format!("no answer: {e}")))?;
    let reply: Reply = serde_json::from_str(&line).map_err(|e| fail(format!("an answer casslab cannot read ({e})")))?;
    match &reply.error {
        Some(e) => Err(fail(e.clone())),
        None => Ok(reply),
    }
}

/// Writes `relay.json` through a temporary file and a rename.
fn write_config(home: &Path, config: &RelayConfig) -> Result<(), LocalError> {
    let dir = relay_dir(home);
    std::fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
    let (path, tmp) = (config_file(home), dir.join(".relay.json.tmp"));
    let text = serde_json::to_string_pretty(config).expect("a relay config always serializes");
    std::fs::write(&tmp, text + "\n").context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).context(|| format!("writing {}", path.display()))
}

/// Runs the relay of `home` with `config`: a running one takes the new distances (one that
/// listens elsewhere is restarted), else one is started and waited for; true when one was
/// started. With `heal`, faults a run left in force (it was ended before it could heal them)
/// end, and are named in `progress`.
pub fn ensure_relay(home: &Path, config: &RelayConfig, heal: bool, progress: &mut dyn FnMut(&str)) -> Result<bool, LocalError> {
    write_config(home, config)?;
    if find_relay_pid(home).is_some() {
        let before = ask(home, &Request::State).map(|r| r.topology).ok();
        match ask(home, &Request::Reload) {
            Ok(reply) => {
                if before.as_ref().is_some_and(|t| *t != reply.topology) {
                    progress(&format!("distances now: {} (the relay took them; no node restarted)", reply.topology.describe()));
                }
                if heal && !reply.faults.is_empty() {
                    let left: Vec<String> = reply.faults.list.iter().map(|f| f.label.clone()).collect();
                    ask(home, &Request::Change { change: casslab_core::network::NetworkChange::Heal })?;
                    progress(&format!("healed the network faults an ended run left in force: {}", left.join(", ")));
                }
                return Ok(false);
            }
            Err(LocalError::Relay { reason, .. }) => progress(&format!("restarting the relay: {reason}")),
            Err(e) => return Err(e),
        }
        stop_relay(home, progress)?;
    }
    start_relay(home, config, progress).map(|_| true)
}

fn start_relay(home: &Path, config: &RelayConfig, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
    remove_if_present(&pid_file(home))?;
    let exe = std::env::current_exe().context(|| "finding the casslab executable to run the relay".into())?;
    let args: Vec<OsString> = vec!["local".into(), "relay".into(), "--home".into(), home.as_os_str().to_owned()];
    let banner = format!("=== casslab: starting the relay of {} ===", home.display());
    let mut child = spawn_in_session(&exe, &args, &relay_dir(home), &log_file(home), &banner)?;
    write_pid_file(&pid_file(home), child.id())?;
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            remove_if_present(&pid_file(home))?;
            return Err(LocalError::Relay {
                home: home.to_path_buf(),
                reason: format!("it exited at start ({status})"),
                log_tail: tail_file(&log_file(home), 20),
            });
        }
        if ask(home, &Request::State).is_ok() {
            break;
        }
        if started.elapsed() > START_WAIT {
            let _ = stop_process(child.id(), STOP_GRACE, "the relay");
            remove_if_present(&pid_file(home))?;
            return Err(LocalError::Relay { home: home.to_path_buf(), reason: "it did not answer in time".into(), log_tail: tail_file(&log_file(home), 20) });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    progress(&format!(
        "relay (pid {}) in front of {} node(s) — distances: {}; log {}",
        child.id(),
        config.nodes.len(),
        config.topology.describe(),
        log_file(home).display()
    ));
    Ok(())
}

/// Stops the relay of `home` when it runs (SIGTERM, then SIGKILL) and removes its pid file;
/// true when there was one.
pub fn stop_relay(home: &Path, progress: &mut dyn FnMut(&str)) -> Result<bool, LocalError> {
    let found = find_relay_pid(home);
    if let Some(pid) = found {
        stop_process(pid, STOP_GRACE, "the relay")?;
        progress(&format!("relay (pid {pid}) stopped"));
    }
    remove_if_present(&pid_file(home))?;
    Ok(found.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_of_a_home_is_told_by_its_command_line() {
        let home = Path::new("/h/one");
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(is_relay_cmdline(&args(&["/bin/casslab", "local", "relay", "--home", "/h/one"]), home));
        assert!(!is_relay_cmdline(&args(&["/bin/casslab", "local", "relay", "--home", "/h/two"]), home));
        assert!(!is_relay_cmdline(&args(&["/bin/casslab", "local", "up", "--home", "/h/one"]), home));
        assert_eq!(find_relay_pid(Path::new("/nonexistent/casslab-home")), None);
    }

    #[test]
    fn asking_a_relay_that_does_not_run_says_so() {
        let e = ask(Path::new("/nonexistent/casslab-home"), &Request::State).unwrap_err();
        assert!(matches!(e, LocalError::RelayDown { .. }), "{e}");
        assert!(e.to_string().contains("casslab local up"), "{e}");
    }
}
