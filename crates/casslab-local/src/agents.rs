//! The two JVM agents every node casslab starts carries, fetched once with Maven into the
//! per-user cache beside the Cassandra jars, as `jars` fetches those: the Jolokia JVM agent
//! (`org.jolokia:jolokia-agent-jvm`, its `javaagent` jar), which serves the node's JMX metrics
//! over HTTP on the node's own address so that Cassandra's latency histograms are read in
//! microseconds, and async-profiler (`tools.profiler:async-profiler`, whose jar carries the
//! linux-x64 library), loaded idle at start and told to record by `run --profile`. It owns the
//! fetch, the cache layout, the agents' JVM flags and reading them back from a running node's
//! command line; it starts nothing. A node whose agents could not be had starts without them
//! (the server view then falls back to `system_views`, profiles to Java Flight Recorder).

use std::ffi::OsString;
use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::jars::cache_root;
use crate::local_error::{IoContext, LocalError};
use crate::node_process::tail_lines;

/// The Jolokia JVM agent casslab fetches (Java 11+).
pub const JOLOKIA_VERSION: &str = "2.1.1";
/// The async-profiler casslab fetches; its jar holds `linux-x64/libasyncProfiler.so`.
pub const ASYNC_PROFILER_VERSION: &str = "3.0";
/// The port Jolokia listens on, on each node's own address (never 0.0.0.0 nor 127.0.0.1 for
/// every node): nodes differ by address, so one port serves them all.
pub const JOLOKIA_PORT: u16 = 8778;

/// Written into the cache directory once both agents are in place.
const COMPLETE_MARKER: &str = "complete";

/// The agents on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agents {
    pub jolokia_jar: PathBuf,
    pub async_profiler_lib: PathBuf,
}

/// `<cache root>/agents-jolokia-<v>-async-profiler-<v>`.
fn agents_dir() -> PathBuf {
    cache_root().join(format!("agents-jolokia-{JOLOKIA_VERSION}-async-profiler-{ASYNC_PROFILER_VERSION}"))
}

fn in_dir(dir: &Path) -> Agents {
    Agents {
        jolokia_jar: dir.join(format!("jolokia-agent-jvm-{JOLOKIA_VERSION}-javaagent.jar")),
        async_profiler_lib: dir.join("linux-x64").join("libasyncProfiler.so"),
    }
}

/// The agents if a previous fetch completed.
pub fn cached_agents() -> Option<Agents> {
    let dir = agents_dir();
    let agents = in_dir(&dir);
    (dir.join(COMPLETE_MARKER).is_file() && agents.jolokia_jar.is_file() && agents.async_profiler_lib.is_file()).then_some(agents)
}

/// The agents, fetched with Maven the first time (into a temporary directory renamed into place
/// once complete, so an interrupted fetch is never taken for a cache). Only on Linux x86-64,
/// the one platform whose async-profiler library casslab takes from the jar.
pub fn ensure_agents(progress: &mut dyn FnMut(&str)) -> Result<Agents, LocalError> {
    if let Some(a) = cached_agents() {
        return Ok(a);
    }
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Err(LocalError::Agents { reason: "the agents are taken for Linux x86-64 only".into() });
    }
    let root = cache_root();
    fs::create_dir_all(&root).context(|| format!("creating the cache {}", root.display()))?;
    progress(&format!(
        "fetching the Jolokia {JOLOKIA_VERSION} and async-profiler {ASYNC_PROFILER_VERSION} agents with Maven (once) into {} ...",
        root.display()
    ));
    static FETCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = FETCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = root.join(format!(".fetch-agents-{}-{call}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let staged = tmp.join("agents");
    fs::create_dir_all(&staged).context(|| format!("creating {}", staged.display()))?;
    let outcome = fetch_into(&tmp, &staged).and_then(|()| {
        let dir = agents_dir();
        if cached_agents().is_some() {
            return Ok(());
        }
        let _ = fs::remove_dir_all(&dir);
        fs::rename(&staged, &dir).context(|| format!("moving the fetched agents into {}", dir.display()))
    });
    let _ = fs::remove_dir_all(&tmp);
    outcome?;
    cached_agents().ok_or_else(|| LocalError::Agents { reason: format!("{} is incomplete after the fetch", agents_dir().display()) })
}

/// The pom whose two dependencies Maven copies.
fn render_pom() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>casslab</groupId>
  <artifactId>node-agents</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.jolokia</groupId>
      <artifactId>jolokia-agent-jvm</artifactId>
      <version>{JOLOKIA_VERSION}</version>
      <classifier>javaagent</classifier>
    </dependency>
    <dependency>
      <groupId>tools.profiler</groupId>
      <artifactId>async-profiler</artifactId>
      <version>{ASYNC_PROFILER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
"#
    )
}

fn maven(work: &Path, pom: &Path, args: &[String]) -> Result<(), LocalError> {
    let out = Command::new("mvn")
        .current_dir(work)
        .args(["-q", "-B", "-f"])
        .arg(pom)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context(|| format!("running mvn {}", args.first().map_or("", String::as_str)))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Err(LocalError::Agents { reason: format!("Maven failed ({}):\n{}", out.status, tail_lines(&text, 20)) })
}

/// Copies the Jolokia jar and unpacks async-profiler's Linux x86-64 library into `staged`.
fn fetch_into(work: &Path, staged: &Path) -> Result<(), LocalError> {
    let pom = work.join("pom.xml");
    fs::write(&pom, render_pom()).context(|| format!("writing {}", pom.display()))?;
    let out = format!("-DoutputDirectory={}", staged.display());
    maven(work, &pom, &["dependency:copy-dependencies".into(), "-DincludeArtifactIds=jolokia-agent-jvm".into(), out.clone()])?;
    maven(
        work,
        &pom,
        &["dependency:unpack-dependencies".into(), "-DincludeArtifactIds=async-profiler".into(), "-Dincludes=linux-x64/libasyncProfiler.so".into(), out],
    )?;
    let agents = in_dir(staged);
    for f in [&agents.jolokia_jar, &agents.async_profiler_lib] {
        if !f.is_file() {
            return Err(LocalError::Agents { reason: format!("Maven finished without {}", f.display()) });
        }
    }
    let marker = staged.join(COMPLETE_MARKER);
    fs::write(&marker, "jolokia and async-profiler\n").context(|| format!("writing {}", marker.display()))
}

/// Jolokia's access policy for casslab's nodes: reading and searching only, so that the HTTP
/// port can neither write an attribute nor run an operation (a decommission, a drain).
pub const JOLOKIA_POLICY: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<restrict>
  <commands>
    <command>read</command>
    <command>search</command>
    <command>version</command>
  </commands>
</restrict>
"#;

/// The JVM flags that load the agents into a node at `address`: Jolokia on the node's own
/// address under the read-only policy at `policy` (`None`: left out, its port being taken),
/// async-profiler idle until told to record, and the JIT's debug information at every
/// instruction so that profiles place samples on the right line of inlined code
/// (async-profiler's advice).
pub fn agent_args(agents: &Agents, address: Ipv4Addr, policy: Option<&Path>) -> Vec<OsString> {
    let mut args = Vec::new();
    if let Some(policy) = policy {
        let mut a = OsString::from("-javaagent:");
        a.push(&agents.jolokia_jar);
        a.push(format!("=host={address},port={JOLOKIA_PORT},discoveryEnabled=false,policyLocation=file://"));
        a.push(policy);
        args.push(a);
    }
    let mut p = OsString::from("-agentpath:");
    p.push(&agents.async_profiler_lib);
    args.push(p);
    args.push("-XX:+UnlockDiagnosticVMOptions".into());
    args.push("-XX:+DebugNonSafepoints".into());
    args
}

/// Where a running node's Jolokia answers (`http://ADDRESS:PORT/jolokia/`), read from its
/// command line; `None` when it was started without the agent.
pub fn jolokia_url(cmdline: &[String]) -> Option<String> {
    let arg = cmdline.iter().find(|a| a.starts_with("-javaagent:") && a.contains("jolokia"))?;
    let options = arg.split_once('=').map(|(_, o)| o).unwrap_or_default();
    let option = |name: &str| options.split(',').find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='));
    // the policy's path, the last option, may hold commas of its own: only host and port are read
    let host = option("host").unwrap_or("127.0.0.1");
    let port = option("port").unwrap_or("8778");
    Some(format!("http://{host}:{port}/jolokia/"))
}

/// The async-profiler library a running node loaded at start, read from its command line.
pub fn loaded_profiler(cmdline: &[String]) -> Option<PathBuf> {
    cmdline
        .iter()
        .find_map(|a| a.strip_prefix("-agentpath:"))
        .filter(|p| p.contains("libasyncProfiler"))
        .map(|p| PathBuf::from(p.split('=').next().unwrap_or(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_bind_jolokia_to_the_nodes_own_address_and_read_back() {
        let agents = Agents { jolokia_jar: "/c/jolokia.jar".into(), async_profiler_lib: "/c/linux-x64/libasyncProfiler.so".into() };
        let policy = Path::new("/n/conf/jolokia-access.xml");
        let args: Vec<String> = agent_args(&agents, Ipv4Addr::new(127, 0, 14, 51), Some(policy)).iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args[0], "-javaagent:/c/jolokia.jar=host=127.0.14.51,port=8778,discoveryEnabled=false,policyLocation=file:///n/conf/jolokia-access.xml");
        assert_eq!(args[1], "-agentpath:/c/linux-x64/libasyncProfiler.so");
        assert!(args.contains(&"-XX:+DebugNonSafepoints".to_string()));
        let cmdline: Vec<String> = ["java".to_string()].into_iter().chain(args.clone()).collect();
        assert_eq!(jolokia_url(&cmdline).as_deref(), Some("http://127.0.14.51:8778/jolokia/"));
        assert_eq!(loaded_profiler(&cmdline), Some(PathBuf::from("/c/linux-x64/libasyncProfiler.so")));
        let without: Vec<String> = agent_args(&agents, Ipv4Addr::new(127, 0, 14, 51), None).iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert!(jolokia_url(&without).is_none() && !without.iter().any(|a| a.contains("jolokia")));
        assert!(jolokia_url(&["java".into(), "-Xmx1g".into()]).is_none());
    }

    #[test]
    fn the_pom_names_both_agents() {
        let pom = render_pom();
        assert!(pom.contains("<artifactId>jolokia-agent-jvm</artifactId>") && pom.contains("<classifier>javaagent</classifier>"));
        assert!(pom.contains("<groupId>tools.profiler</groupId>") && pom.contains(&format!("<version>{ASYNC_PROFILER_VERSION}</version>")));
    }
}
