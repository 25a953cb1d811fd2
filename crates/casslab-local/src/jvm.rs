//! The `java` command lines casslab runs: the Cassandra daemon of a node and
//! `NodeTool` against it. Owns the JDK 17 module flags (copied from Cassandra's own
//! `conf/jvm17-server.options`) and the heap, GC-log and system-property flags.
//! Pure: it builds argument lists and never spawns anything.

use std::ffi::OsString;
use std::path::Path;

use crate::layout::NodeLayout;
use crate::LocalOptions;
use casslab_core::cluster::Gc;

/// Main class of the server.
pub const DAEMON_CLASS: &str = "org.apache.cassandra.service.CassandraDaemon";
/// Main class of nodetool (inside cassandra-all).
pub const NODETOOL_CLASS: &str = "org.apache.cassandra.tools.NodeTool";

/// `--add-exports`/`--add-opens` pairs JDK 17 needs for Cassandra 5.0 (server and NodeTool).
pub const MODULE_FLAGS: &[(&str, &str)] = &[
    ("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"),
    ("--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED"),
    ("--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"),
    ("--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED"),
    ("--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED"),
    ("--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED"),
    ("--add-exports", "java.sql/java.sql=ALL-UNNAMED"),
    ("--add-exports", "java.base/java.lang.ref=ALL-UNNAMED"),
    ("--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.lang.module=ALL-UNNAMED"),
    ("--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED"),
    ("--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED"),
    ("--add-opens", "java.base/jdk.internal.reflect=ALL-UNNAMED"),
    ("--add-opens", "java.base/jdk.internal.math=ALL-UNNAMED"),
    ("--add-opens", "java.base/jdk.internal.module=ALL-UNNAMED"),
    ("--add-opens", "java.base/jdk.internal.util.jar=ALL-UNNAMED"),
    ("--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED"),
    ("--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.io=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.nio=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.util=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.util.concurrent.atomic=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.lang=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.math=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED"),
    ("--add-opens", "java.base/java.net=ALL-UNNAMED"),
];

/// Of [`MODULE_FLAGS`], those Java 11 lacks (verified with Cassandra 4.1 on Java 11: it runs
/// without them).
const NOT_ON_11: &[&str] = &[
    "java.base/java.lang.ref=ALL-UNNAMED",
    "jdk.unsupported/sun.misc=ALL-UNNAMED",
    "java.base/java.io=ALL-UNNAMED",
    "java.base/java.nio=ALL-UNNAMED",
    "java.base/java.util.concurrent=ALL-UNNAMED",
    "java.base/java.util=ALL-UNNAMED",
    "java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "java.base/java.lang=ALL-UNNAMED",
    "java.base/java.math=ALL-UNNAMED",
    "java.base/java.lang.reflect=ALL-UNNAMED",
    "java.base/java.net=ALL-UNNAMED",
];

/// The module flags for a Java major version (none before 9).
fn push_module_flags(args: &mut Vec<OsString>, java_major: u32) {
    if java_major < 9 {
        return;
    }
    for (flag, value) in MODULE_FLAGS {
        if java_major < 17 && NOT_ON_11.contains(value) {
            continue;
        }
        args.push((*flag).into());
        args.push((*value).into());
    }
}

/// The JVM flags that pick a garbage collector (ZGC and Shenandoah were experimental before
/// Java 15).
pub fn gc_flags(gc: Gc, java_major: u32) -> Vec<&'static str> {
    let experimental = java_major < 15;
    match gc {
        Gc::G1 => vec!["-XX:+UseG1GC"],
        Gc::Parallel => vec!["-XX:+UseParallelGC"],
        Gc::Zgc if experimental => vec!["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"],
        Gc::Zgc => vec!["-XX:+UseZGC"],
        Gc::Shenandoah if experimental => vec!["-XX:+UnlockExperimentalVMOptions", "-XX:+UseShenandoahGC"],
        Gc::Shenandoah => vec!["-XX:+UseShenandoahGC"],
    }
}

/// `<lib>/*`, the class path form java expands to every jar in `lib`.
fn classpath(lib: &Path) -> OsString {
    let mut cp = lib.as_os_str().to_os_string();
    cp.push("/*");
    cp
}

fn prop(name: &str, value: impl AsRef<std::ffi::OsStr>) -> OsString {
    let mut arg = OsString::from(format!("-D{name}="));
    arg.push(value.as_ref());
    arg
}

/// Arguments (after `java`) that run `node`'s Cassandra daemon.
///
/// A single node skips the wait for gossip to settle: with no peers there is
/// nothing to settle, and it saves several seconds of start-up. Nodes of a multi-node
/// cluster read their data center from `cassandra-rackdc.properties`, skip the settle wait
/// too (they start one after another, each once the previous answers CQL, and casslab then
/// waits until every node sees every other as up) and use a 5 s ring delay instead of 30 s. With `auth`, the default superuser is
/// created at once instead of 10 s after start, so a client can log in as soon as
/// the node answers CQL (the node still creates it only when no role exists yet).
pub fn server_args(node: &NodeLayout, opts: &LocalOptions, lib: &Path, java_major: u32) -> Vec<OsString> {
    let heap_mb = opts.heap_mb();
    let single_node = !opts.is_multi_node();
    let mut args: Vec<OsString> = vec![format!("-Xms{heap_mb}m").into(), format!("-Xmx{heap_mb}m").into()];
    args.extend(gc_flags(opts.gc(), java_major).into_iter().map(OsString::from));
    args.extend([
        "-XX:+ExitOnOutOfMemoryError".into(),
        "-Xss256k".into(),
        "-Djava.net.preferIPv4Stack=true".into(),
        "-Djdk.attach.allowAttachSelf=true".into(),
        // deep enough for Cassandra's request path from the Netty loop down, should a run
        // record a profile (nothing is recorded unless it does)
        "-XX:FlightRecorderOptions=stackdepth=128".into(),
    ]);
    let mut gc_log = OsString::from("-Xlog:gc*:file=");
    gc_log.push(node.gc_log());
    gc_log.push(":time,uptime:filecount=5,filesize=10M");
    args.push(gc_log);
    push_module_flags(&mut args, java_major);
    args.push(prop("cassandra.jmx.local.port", node.jmx_port.to_string()));
    let mut config_url = OsString::from("file://");
    config_url.push(node.yaml_path());
    args.push(prop("cassandra.config", config_url));
    args.push(prop("logback.configurationFile", node.logback_path()));
    args.push(prop("cassandra.logdir", node.logs_dir()));
    args.push(prop("cassandra.storagedir", &node.dir));
    args.push("-Dcassandra-foreground=yes".into());
    args.push("-Dcassandra.skip_wait_for_gossip_to_settle=0".into());
    if !single_node {
        let mut rackdc = OsString::from("file://");
        rackdc.push(node.rackdc_path());
        args.push(prop("cassandra-rackdc.properties", rackdc));
        args.push("-Dcassandra.ring_delay_ms=5000".into());
    }
    if opts.auth {
        args.push("-Dcassandra.superuser_setup_delay_ms=0".into());
    }
    args.extend(opts.server.jvm_options.iter().map(OsString::from));
    args.push("-cp".into());
    args.push(classpath(lib));
    args.push(DAEMON_CLASS.into());
    args
}

/// Arguments (after `java`) that run NodeTool against `node`'s JMX port.
pub fn nodetool_args(node: &NodeLayout, lib: &Path, command: &[&str], java_major: u32) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["-Xmx256m".into(), "-XX:+UseSerialGC".into()];
    push_module_flags(&mut args, java_major);
    args.push("-cp".into());
    args.push(classpath(lib));
    args.push(NODETOOL_CLASS.into());
    args.extend(["-h".into(), "127.0.0.1".into(), "-p".into(), node.jmx_port.to_string().into()]);
    args.extend(command.iter().map(OsString::from));
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::layouts;
    use casslab_core::cluster::ServerSpec;
    use std::net::Ipv4Addr;
    use std::path::PathBuf;

    fn node() -> NodeLayout {
        layouts(&LocalOptions { home: PathBuf::from("/h"), base_address: Ipv4Addr::new(127, 0, 0, 51), ..LocalOptions::default() }).unwrap().remove(0)
    }

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn server_args_carry_heap_ports_paths_and_main_class() {
        let opts = LocalOptions { server: ServerSpec { heap_mb: Some(768), ..LocalOptions::default().server }, ..LocalOptions::default() };
        let args = strings(&server_args(&node(), &opts, Path::new("/cache/lib"), 17));
        for expected in [
            "-Xms768m",
            "-Xmx768m",
            "-XX:+UseG1GC",
            "-Djdk.attach.allowAttachSelf=true",
            "-XX:FlightRecorderOptions=stackdepth=128",
            "-Dcassandra.jmx.local.port=7249",
            "-Dcassandra.config=file:///h/node1/conf/cassandra.yaml",
            "-Dlogback.configurationFile=/h/node1/conf/logback.xml",
            "-Dcassandra.storagedir=/h/node1",
            "-Dcassandra-foreground=yes",
            "-Xlog:gc*:file=/h/node1/logs/gc.log:time,uptime:filecount=5,filesize=10M",
            "-Dcassandra.skip_wait_for_gossip_to_settle=0",
            "java.base/java.net=ALL-UNNAMED",
        ] {
            assert!(args.iter().any(|a| a == expected), "missing {expected} in {args:?}");
        }
        let n = args.len();
        assert_eq!(&args[n - 3..], ["-cp", "/cache/lib/*", DAEMON_CLASS]);
        assert!(!args.iter().any(|a| a.contains("superuser_setup_delay")));
        let multi = LocalOptions { server: ServerSpec { nodes: Some(2), ..opts.server.clone() }, ..opts.clone() };
        let multi = strings(&server_args(&node(), &multi, Path::new("/cache/lib"), 17));
        assert!(multi.iter().any(|a| a == "-Dcassandra.ring_delay_ms=5000"));
        assert!(multi.iter().any(|a| a == "-Dcassandra-rackdc.properties=file:///h/node1/conf/cassandra-rackdc.properties"));
        let auth = LocalOptions { auth: true, ..opts };
        let auth = strings(&server_args(&node(), &auth, Path::new("/cache/lib"), 17));
        assert!(auth.contains(&"-Dcassandra.superuser_setup_delay_ms=0".to_string()));
    }

    #[test]
    fn the_collector_options_and_java_11_flags_follow_the_definition() {
        let server = ServerSpec { gc: Some(Gc::Zgc), jvm_options: vec!["-XX:+AlwaysPreTouch".into()], ..LocalOptions::default().server };
        let zgc = LocalOptions { server, ..LocalOptions::default() };
        let on17 = strings(&server_args(&node(), &zgc, Path::new("/l"), 17));
        assert!(on17.contains(&"-XX:+UseZGC".to_string()) && !on17.contains(&"-XX:+UseG1GC".to_string()));
        assert!(!on17.contains(&"-XX:+UnlockExperimentalVMOptions".to_string()));
        let n = on17.len();
        assert_eq!(on17[n - 4], "-XX:+AlwaysPreTouch", "the user's options come last, before the class path");
        let on11 = strings(&server_args(&node(), &zgc, Path::new("/l"), 11));
        assert!(on11.contains(&"-XX:+UnlockExperimentalVMOptions".to_string()));
        assert!(!on11.iter().any(|a| a == "jdk.unsupported/sun.misc=ALL-UNNAMED"), "a flag Java 11 lacks");
        assert!(on11.iter().any(|a| a == "java.base/sun.nio.ch=ALL-UNNAMED"));
        assert_eq!(gc_flags(Gc::Parallel, 17), ["-XX:+UseParallelGC"]);
        assert_eq!(gc_flags(Gc::Shenandoah, 17), ["-XX:+UseShenandoahGC"]);
    }

    #[test]
    fn nodetool_args_target_jmx_port() {
        let args = strings(&nodetool_args(&node(), Path::new("/l"), &["status"], 17));
        assert!(args.contains(&"--add-exports".to_string()));
        let n = args.len();
        assert_eq!(&args[n - 7..], ["/l/*", NODETOOL_CLASS, "-h", "127.0.0.1", "-p", "7249", "status"]);
    }
}
