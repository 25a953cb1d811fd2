//! Recording profiles on the nodes casslab started, from the start of the run phase to its end.
//! A node that carries async-profiler (casslab starts every node with it loaded, idle) is told
//! through `jcmd PID JVMTI.agent_load LIB "COMMAND"` — the JDK's own way of handing an agent a
//! command, which also loads the library into a node started without it — to sample CPU every
//! millisecond of CPU time each thread uses (`cpu`, perf_events: a sample per ms of CPU, so at
//! least 100 a second for a node that uses a tenth of a core; where perf_events are refused,
//! `itimer`, whose signals come at most once per kernel tick and so give fewer), allocations
//! every 512 KiB and locks and parks of 10 ms or more, all into one Java Flight Recorder file
//! read like any other. A node
//! without it falls back to the JDK's own recorder (`JFR.start settings=profile`: an execution
//! sample every 10–20 ms). `jcmd` is the one beside the `java` the node runs on, found from the
//! process's `/proc/PID/exe`, else on `PATH`. `bench/profile-cost.sh` measures what it costs.

use super::ProfileError;
use crate::cluster::ControlledNode;
use std::path::{Path, PathBuf};
use std::process::Command;

/// async-profiler's CPU modes, in the order tried: perf_events, then interval timer signals.
pub const CPU_MODES: [&str; 2] = ["cpu", "itimer"];

/// async-profiler's command that starts a recording in CPU `mode` (the file and log are appended).
pub fn async_profiler_start(mode: &str) -> String {
    format!("start,event={mode},interval=1ms,alloc=512k,lock=10ms,jfr")
}

/// How its profiles are described.
pub fn async_profiler_source(mode: &str) -> String {
    format!("async-profiler ({mode} every 1 ms of CPU, allocations every 512 KiB, locks from 10 ms), recorded by casslab")
}
/// How the JDK recorder's profiles are described.
pub const JFR_SOURCE: &str = "Java Flight Recorder (execution samples every 10-20 ms), recorded by casslab";

/// How a node is recorded.
#[derive(Debug, Clone)]
enum Recorder {
    /// async-profiler's library in CPU `mode`, writing the recording to `file` (its messages to `log`).
    AsyncProfiler { lib: PathBuf, mode: &'static str, file: PathBuf, log: PathBuf },
    /// The JDK's recorder, a recording of this name.
    Jfr { name: String },
}

/// One node's recording under way.
#[derive(Debug, Clone)]
pub struct Recording {
    pub node: String,
    pid: u32,
    jcmd: PathBuf,
    recorder: Recorder,
}

impl Recording {
    /// Who recorded it, for people.
    pub fn source(&self) -> String {
        match &self.recorder {
            Recorder::AsyncProfiler { mode, .. } => async_profiler_source(mode),
            Recorder::Jfr { .. } => JFR_SOURCE.to_string(),
        }
    }
}

/// The `jcmd` of the JDK a process runs on.
fn jcmd_for(pid: u32) -> PathBuf {
    let beside = std::fs::read_link(format!("/proc/{pid}/exe")).ok().and_then(|java| java.parent().map(|bin| bin.join("jcmd")));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("jcmd"))
}

fn jcmd(jcmd: &Path, pid: u32, args: &[&str]) -> Result<String, String> {
    let out = Command::new(jcmd).arg(pid.to_string()).args(args).output().map_err(|e| format!("cannot run {}: {e}", jcmd.display()))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // jcmd exits 0 when the command itself failed, and says so in its output; an agent's
    // command answers `return code: N`, 0 when it took
    let agent_failed = text.lines().any(|l| l.trim().strip_prefix("return code:").is_some_and(|c| c.trim() != "0"));
    if out.status.success() && !agent_failed && !text.contains("Exception") && !text.contains("Could not") {
        Ok(text)
    } else {
        Err(text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no output").trim().to_string())
    }
}

/// A command for async-profiler through jcmd: quoted, since jcmd would take its `=` for its own.
fn agent_command(lib: &Path, command: &str) -> [String; 3] {
    ["JVMTI.agent_load".to_string(), lib.display().to_string(), format!("\"{command}\"")]
}

/// What async-profiler wrote to its log, when it said something (its errors go there).
fn log_of(log: &Path) -> String {
    std::fs::read_to_string(log).map(|t| t.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_string()).unwrap_or_default()
}

/// A node's file name part: its address without `:` or `/`.
fn file_stem(node: &str) -> String {
    node.replace([':', '/'], "_")
}

/// Starts a recording on every running node (`name` names a JDK recording, `dir` holds
/// async-profiler's files); a node where it cannot start is left out and named in the notes.
pub fn start(nodes: &[ControlledNode], name: &str, dir: &Path) -> (Vec<Recording>, Vec<String>) {
    let (mut started, mut notes) = (Vec::new(), Vec::new());
    if let Err(e) = std::fs::create_dir_all(dir) {
        notes.push(format!("profile: cannot create {}: {e}", dir.display()));
        return (started, notes);
    }
    for n in nodes.iter().filter(|n| n.running) {
        let Some(pid) = n.pid else { continue };
        let jcmd_path = jcmd_for(pid);
        if let Some(lib) = n.profiler_lib.as_ref().filter(|l| l.is_file()) {
            let stem = file_stem(&n.address);
            let (file, log) = (dir.join(format!("{stem}.jfr")), dir.join(format!("{stem}.log")));
            let mut refused = Vec::new();
            for mode in CPU_MODES {
                let command = format!("{},file={},log={}", async_profiler_start(mode), file.display(), log.display());
                let args = agent_command(lib, &command);
                match jcmd(&jcmd_path, pid, &args.iter().map(String::as_str).collect::<Vec<_>>()) {
                    Ok(_) => {
                        let recorder = Recorder::AsyncProfiler { lib: lib.clone(), mode, file: file.clone(), log: log.clone() };
                        started.push(Recording { node: n.address.clone(), pid, jcmd: jcmd_path.clone(), recorder });
                        break;
                    }
                    Err(e) => refused.push(format!("{mode}: {e} {}", log_of(&log))),
                }
            }
            if refused.len() < CPU_MODES.len() {
                if !refused.is_empty() {
                    notes.push(format!(
                        "profile: {} is sampled with itimer, fewer samples than perf_events would give ({})",
                        n.name,
                        refused.join("; ").trim()
                    ));
                }
                continue;
            }
            notes.push(format!("profile: async-profiler did not start on {} ({}); Java Flight Recorder records it instead", n.name, refused.join("; ").trim()));
        }
        match jcmd(&jcmd_path, pid, &["JFR.start", &format!("name={name}"), "settings=profile"]) {
            Ok(_) => started.push(Recording { node: n.address.clone(), pid, jcmd: jcmd_path, recorder: Recorder::Jfr { name: name.to_string() } }),
            Err(e) => notes.push(format!("profile: {} was not recorded: {e}", n.name)),
        }
    }
    (started, notes)
}

/// The recordings written, as (node, file, who recorded it), and notes on those that were not.
pub type Stopped = (Vec<(String, PathBuf, String)>, Vec<String>);

/// Stops the recordings, each written into `dir` (`NODE.jfr`): (node, file, source) of those
/// written, and notes for those that were not (a node stopped meanwhile loses its recording).
pub fn stop(recordings: &[Recording], dir: &Path) -> Result<Stopped, ProfileError> {
    std::fs::create_dir_all(dir).map_err(|source| ProfileError::Io { path: dir.into(), error: source })?;
    let (mut written, mut notes) = (Vec::new(), Vec::new());
    for r in recordings {
        let (file, result) = match &r.recorder {
            Recorder::AsyncProfiler { lib, file, log, .. } => {
                let args = agent_command(lib, &format!("stop,file={},log={}", file.display(), log.display()));
                (file.clone(), jcmd(&r.jcmd, r.pid, &args.iter().map(String::as_str).collect::<Vec<_>>()).map_err(|e| format!("{e} {}", log_of(log))))
            }
            Recorder::Jfr { name } => {
                let file = dir.join(format!("{}.jfr", file_stem(&r.node)));
                let result = jcmd(&r.jcmd, r.pid, &["JFR.stop", &format!("name={name}"), &format!("filename={}", file.display())]);
                (file, result)
            }
        };
        match result {
            Ok(_) if file.is_file() => written.push((r.node.clone(), file, r.source())),
            Ok(out) => notes.push(format!("profile: {} wrote no recording ({})", r.node, out.trim())),
            Err(e) => notes.push(format!("profile: {}'s recording was lost: {}", r.node, e.trim())),
        }
    }
    Ok((written, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_profiler_commands_are_quoted_for_jcmd() {
        let args = agent_command(Path::new("/c/libasyncProfiler.so"), "start,event=itimer,file=/t/n.jfr");
        assert_eq!(args, ["JVMTI.agent_load", "/c/libasyncProfiler.so", "\"start,event=itimer,file=/t/n.jfr\""]);
        assert_eq!(async_profiler_start("cpu"), "start,event=cpu,interval=1ms,alloc=512k,lock=10ms,jfr");
        assert!(async_profiler_source("itimer").starts_with("async-profiler (itimer every 1 ms of CPU"));
        assert_eq!(file_stem("10.0.0.1:9042"), "10.0.0.1_9042");
    }
}
