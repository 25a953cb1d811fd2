//! Server definitions on the local cluster: the options a [`ServerSpec`] asks for over the
//! options the cluster was started with, and checking them before anything stops — the
//! version's jars (fetched now, so a version Maven Central lacks fails here), a Java that
//! runs it, a heap that fits the machine, a garbage collector that Java has, and the
//! cassandra.yaml settings, read by Cassandra's own configuration loader from its jars (a
//! small Java program run from source, so an unknown or mistyped setting is refused with
//! Cassandra's own words).

use crate::config_files::{check_settings, render_yaml, with_settings, Security};
use crate::jars::jars_for;
use crate::java::{find_java, probe, JavaRuntime};
use crate::jvm::gc_flags;
use crate::layout::layouts;
use crate::local_error::LocalError;
use crate::LocalOptions;
use casslab_core::cluster::ServerSpec;
use std::path::Path;
use std::process::Command;

/// `base` with what `spec` sets ([`ServerSpec::overlaid`]; data centers given count the
/// nodes, a node count given is one data center), every field filled in.
pub fn options_for(base: &LocalOptions, spec: &ServerSpec) -> LocalOptions {
    let mut server = base.server.overlaid(spec);
    if let Some(dcs) = &spec.dcs {
        server.nodes = Some(dcs.iter().map(|(_, n)| n).sum());
    } else if spec.nodes.is_some() {
        server.dcs = None;
    }
    let mut o = LocalOptions { server, ..base.clone() };
    o.server = o.full_server();
    o
}

/// Settings that decide what the data on disk is or who owns it (an SSTable format written
/// under another would leave a mix; tokens and the partitioner place the rows). Matched as
/// prefixes, so `sstable` covers `sstable: { selected_format: … }` in either spelling.
const STORAGE_SETTINGS: &[&str] =
    &["sstable", "storage_compatibility_mode", "partitioner", "num_tokens", "initial_token", "allocate_tokens", "data_file_directories", "commitlog_directory"];

/// Whether going from `a` to `b` changes what the data on disk is (its version or build, its
/// format, its owners): then the data is wiped and loaded again. Other settings (caches,
/// thread pools, memtables: flushed on a graceful stop) keep the data.
pub fn storage_differs(a: &LocalOptions, b: &LocalOptions) -> bool {
    let storage = |o: &LocalOptions| -> Vec<(String, serde_json::Value)> {
        o.server.settings.iter().filter(|(k, _)| STORAGE_SETTINGS.iter().any(|s| k.starts_with(s))).map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    a.version() != b.version() || a.server.build != b.server.build || storage(a) != storage(b) || a.nodes() != b.nodes() || a.dcs() != b.dcs()
}

/// Total memory of this machine, in MiB (from /proc/meminfo).
fn machine_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// Checks `opts` as far as possible without stopping anything; returns the Java it would run.
pub fn check(opts: &LocalOptions, progress: &mut dyn FnMut(&str)) -> Result<JavaRuntime, LocalError> {
    let bad = |reason: String| LocalError::BadDefinition { reason };
    crate::layout::validate(opts)?;
    check_settings(&opts.server.settings).map_err(bad)?;
    if let Some(total) = machine_mb() {
        let asked = opts.heap_mb() as u64 * opts.nodes() as u64;
        if asked > total * 3 / 4 {
            return Err(bad(format!("heap {} MiB × {} node(s) = {asked} MiB, more than 3/4 of this machine's {total} MiB", opts.heap_mb(), opts.nodes())));
        }
    }
    let (lib, built_version) = jars_for(opts.version(), opts.server.build.as_deref(), progress)?;
    let java = find_java(&built_version, opts.server.java_home.as_deref(), progress)?;
    let gc = Command::new(&java.java)
        .args(gc_flags(opts.gc(), java.major))
        .arg("-version")
        .output()
        .map_err(|e| bad(format!("running {}: {e}", java.java.display())))?;
    if !gc.status.success() {
        let said = String::from_utf8_lossy(&gc.stderr);
        return Err(bad(format!(
            "garbage collector {}: Java {} does not run it ({})",
            opts.gc().as_str(),
            java.version,
            said.lines().next().unwrap_or("").trim()
        )));
    }
    if !opts.server.settings.is_empty() {
        check_yaml(opts, &lib, progress)?;
    }
    Ok(java)
}

/// The program that reads a cassandra.yaml with Cassandra's own loader.
const CHECKER: &str = r#"public class CasslabCheckConfig {
    public static void main(String[] args) {
        try {
            new org.apache.cassandra.config.YamlConfigurationLoader().loadConfig(new java.io.File(args[0]).toURI().toURL());
            System.out.println("casslab-config-ok");
        } catch (Throwable t) {
            Throwable c = t;
            while (c.getCause() != null && c.getMessage() == null) c = c.getCause();
            System.out.println("casslab-config-error: " + c.getMessage());
            System.exit(3);
        }
    }
}
"#;

/// Has Cassandra's configuration loader read the first node's cassandra.yaml with the
/// settings; a Java with a compiler runs the checker (the system's, which may not be the one
/// the nodes run on).
fn check_yaml(opts: &LocalOptions, lib: &Path, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
    let bad = |reason: String| LocalError::BadDefinition { reason };
    let Some(javac_java) = compiler_java() else {
        progress("the settings are not checked before the start: no Java with a compiler (a JDK) here");
        return Ok(());
    };
    let nodes = layouts(opts)?;
    let dir = tempfile_dir()?;
    let yaml = dir.join("cassandra.yaml");
    let text = with_settings(&render_yaml(&opts.cluster_name, &nodes[0], &nodes[0], &Security::default(), opts.is_multi_node()), &opts.server.settings);
    std::fs::write(&yaml, text).map_err(|e| bad(format!("writing {}: {e}", yaml.display())))?;
    let src = dir.join("CasslabCheckConfig.java");
    std::fs::write(&src, CHECKER).map_err(|e| bad(format!("writing {}: {e}", src.display())))?;
    let mut cp = lib.as_os_str().to_os_string();
    cp.push("/*");
    let out = Command::new(&javac_java)
        .arg("-cp")
        .arg(cp)
        .arg("-Dlogback.configurationFile=nonexistent-quiet.xml")
        .arg(&src)
        .arg(&yaml)
        .output()
        .map_err(|e| bad(format!("running the settings check: {e}")));
    let _ = std::fs::remove_dir_all(&dir);
    let out = out?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.contains("casslab-config-ok") {
        return Ok(());
    }
    match stdout.lines().find_map(|l| l.strip_prefix("casslab-config-error: ")) {
        Some(e) => Err(bad(format!("Cassandra {} does not accept the settings: {e}", opts.version()))),
        // the checker itself did not run (e.g. a build without the loader): leave it to the start
        None => {
            progress(&format!("the settings could not be checked before the start: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")));
            Ok(())
        }
    }
}

/// A `java` that can run a program from source (a JDK's: `javac` beside it).
fn compiler_java() -> Option<std::path::PathBuf> {
    let mut tries = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        tries.push(Path::new(&home).join("bin/java"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        tries.extend(std::env::split_paths(&path).map(|d| d.join("java")).find(|p| p.is_file()));
    }
    tries.into_iter().find(|j| {
        let real = std::fs::canonicalize(j).unwrap_or_else(|_| j.clone());
        real.with_file_name("javac").is_file() && probe(j).is_some_and(|r| r.major >= 11)
    })
}

fn tempfile_dir() -> Result<std::path::PathBuf, LocalError> {
    let dir = std::env::temp_dir().join(format!(
        "casslab-check-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| LocalError::BadDefinition { reason: format!("creating {}: {e}", dir.display()) })?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use casslab_core::cluster::Gc;

    #[test]
    fn a_definition_overrides_what_it_sets() {
        let base = options_for(&LocalOptions::default(), &ServerSpec { heap_mb: Some(768), nodes: Some(3), ..ServerSpec::default() });
        let spec = ServerSpec { gc: Some(Gc::Zgc), settings: [("concurrent_reads".to_string(), serde_json::json!(64))].into(), ..ServerSpec::default() };
        let o = options_for(&base, &spec);
        assert_eq!((o.gc(), o.heap_mb(), o.nodes(), o.version()), (Gc::Zgc, 768, 3, base.version()));
        assert!(!storage_differs(&base, &options_for(&base, &ServerSpec { gc: Some(Gc::Zgc), heap_mb: Some(512), ..ServerSpec::default() })));
        assert!(!storage_differs(&base, &o), "a thread pool's size keeps the data");
        let bti = options_for(
            &base,
            &ServerSpec { settings: [("sstable".to_string(), serde_json::json!({"selected_format": "bti"}))].into(), ..ServerSpec::default() },
        );
        assert!(storage_differs(&base, &bti), "an SSTable format changes the storage");
        assert!(storage_differs(&base, &options_for(&base, &ServerSpec { version: Some("4.1.10".into()), ..ServerSpec::default() })));
        let dcs = options_for(&base, &ServerSpec { dcs: Some(vec![("a".into(), 2), ("b".into(), 1)]), ..ServerSpec::default() });
        assert_eq!(dcs.nodes(), 3);
        // a node count given is one data center again; what is left out stays as it was
        let one_dc = options_for(&dcs, &ServerSpec { nodes: Some(2), ..ServerSpec::default() });
        assert_eq!((one_dc.nodes(), one_dc.dcs().len(), one_dc.heap_mb()), (2, 0, 768));
        assert_eq!(options_for(&dcs, &ServerSpec::default()), dcs, "an empty definition changes nothing");
    }

    #[test]
    fn impossible_definitions_are_refused_before_anything_runs() {
        let with = |server: ServerSpec| options_for(&LocalOptions::default(), &server);
        let tiny = with(ServerSpec { heap_mb: Some(64), ..ServerSpec::default() });
        assert!(check(&tiny, &mut |_| {}).unwrap_err().to_string().contains("too small"));
        let huge = with(ServerSpec { heap_mb: Some(10_000_000), ..ServerSpec::default() });
        assert!(check(&huge, &mut |_| {}).unwrap_err().to_string().contains("more than 3/4"));
        let own = with(ServerSpec { settings: [("storage_port".to_string(), serde_json::json!(1))].into(), ..ServerSpec::default() });
        assert!(check(&own, &mut |_| {}).unwrap_err().to_string().contains("casslab sets it itself"));
    }
}
