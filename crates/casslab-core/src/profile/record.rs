//! Recording profiles on the nodes casslab started: a Java Flight Recorder recording begun in
//! each running node's JVM when the run phase starts and written to a file when it ends, both
//! through `jcmd` (the JDK's own command, beside the `java` the node runs on, found from the
//! process's `/proc/PID/exe`, else on `PATH`). The recording uses the JDK's `profile` settings
//! (execution samples every 10–20 ms, throttled allocation samples, monitor and park events
//! over 10 ms); `bench/profile-cost.sh` measures what it costs.

use super::ProfileError;
use crate::cluster::ControlledNode;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One node's recording under way.
#[derive(Debug, Clone)]
pub struct Recording {
    pub node: String,
    pid: u32,
    jcmd: PathBuf,
    name: String,
}

/// The `jcmd` of the JDK a process runs on.
fn jcmd_for(pid: u32) -> PathBuf {
    let beside = std::fs::read_link(format!("/proc/{pid}/exe")).ok().and_then(|java| java.parent().map(|bin| bin.join("jcmd")));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("jcmd"))
}

fn jcmd(jcmd: &Path, pid: u32, args: &[&str]) -> Result<String, String> {
    let out = Command::new(jcmd).arg(pid.to_string()).args(args).output().map_err(|e| format!("cannot run {}: {e}", jcmd.display()))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // jcmd exits 0 when the command itself failed, and says so in its output
    if out.status.success() && !text.contains("Exception") && !text.contains("Could not") {
        Ok(text)
    } else {
        Err(text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no output").trim().to_string())
    }
}

/// Starts a recording named `name` on every running node; a node where it cannot start is
/// left out and named in the notes.
pub fn start(nodes: &[ControlledNode], name: &str) -> (Vec<Recording>, Vec<String>) {
    let (mut started, mut notes) = (Vec::new(), Vec::new());
    for n in nodes.iter().filter(|n| n.running) {
        let Some(pid) = n.pid else { continue };
        let jcmd_path = jcmd_for(pid);
        match jcmd(&jcmd_path, pid, &["JFR.start", &format!("name={name}"), "settings=profile"]) {
            Ok(_) => started.push(Recording { node: n.address.clone(), pid, jcmd: jcmd_path, name: name.to_string() }),
            Err(e) => notes.push(format!("profile: {} was not recorded: {e}", n.name)),
        }
    }
    (started, notes)
}

/// The recordings written, as (node, file), and notes on those that were not.
pub type Stopped = (Vec<(String, PathBuf)>, Vec<String>);

/// Stops the recordings and writes each into `dir` (`NODE.jfr`): (node, file) of those
/// written, and notes for those that were not (a node stopped meanwhile loses its recording).
pub fn stop(recordings: &[Recording], dir: &Path) -> Result<Stopped, ProfileError> {
    std::fs::create_dir_all(dir).map_err(|source| ProfileError::Io { path: dir.into(), source })?;
    let (mut written, mut notes) = (Vec::new(), Vec::new());
    for r in recordings {
        let file = dir.join(format!("{}.jfr", r.node.replace([':', '/'], "_")));
        match jcmd(&r.jcmd, r.pid, &["JFR.stop", &format!("name={}", r.name), &format!("filename={}", file.display())]) {
            Ok(_) if file.is_file() => written.push((r.node.clone(), file)),
            Ok(out) => notes.push(format!("profile: {} wrote no recording ({})", r.node, out.trim())),
            Err(e) => notes.push(format!("profile: {}'s recording was lost: {e}", r.node)),
        }
    }
    Ok((written, notes))
}
