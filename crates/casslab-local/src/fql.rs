//! Reading a Cassandra full query log (`nodetool enablefullquerylog --path DIR`): a Chronicle
//! Queue that only Cassandra's own classes read. Cassandra ships `fqltool dump` for it, but no
//! Maven artifact holds fqltool; `cassandra-all` holds the queue and wire libraries it uses, so a
//! small Java program (`fql_dump/FqlDump.java`, run by the JDK's source launcher with the cached
//! jars on the class path) prints the log as JSON lines: start time, keyspace, CQL and the
//! serialized query options that hold the bound values (which `casslab_core::import::capture`
//! decodes).

use crate::jars::ensure_jars;
use crate::java::find_java;
use crate::local_error::LocalError;
use std::path::Path;
use std::process::Command;

const DUMPER: &str = include_str!("fql_dump/FqlDump.java");

/// The full query log in `dir` as JSON lines, read with the jars of Cassandra `version`
/// (fetched once with Maven, as `local up` does; `progress` hears about it) and a JDK that runs
/// the reader.
pub fn dump_full_query_log(dir: &Path, version: &str, progress: &mut dyn FnMut(&str)) -> Result<String, LocalError> {
    let lib = ensure_jars(version, progress)?;
    let java = find_java(version, None, &mut |_| {})?;
    let work = tempfile_dir()?;
    let source = work.join("FqlDump.java");
    let out = work.join("fql.jsonl");
    let io = |what: &str, e: std::io::Error| LocalError::io(format!("{what} {}", work.display()), e);
    std::fs::write(&source, DUMPER).map_err(|e| io("writing the log reader into", e))?;
    let mut cmd = Command::new(&java.java);
    cmd.arg("-Xmx256m").arg("-XX:+UseSerialGC");
    for (flag, value) in crate::jvm::MODULE_FLAGS {
        if java.major >= 9 {
            cmd.arg(flag).arg(value);
        }
    }
    let mut cp = lib.as_os_str().to_os_string();
    cp.push("/*");
    let run = cmd.arg("-cp").arg(cp).arg(&source).arg(dir).arg(&out).output().map_err(|e| io("running java in", e))?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&work);
    if !run.status.success() {
        let err = String::from_utf8_lossy(&run.stderr);
        let tail: Vec<&str> = err.lines().filter(|l| !l.contains(" DEBUG ") && !l.contains(" INFO ")).rev().take(6).collect();
        let mut why = tail.into_iter().rev().collect::<Vec<_>>().join(" / ");
        if why.contains("compiler") {
            why.push_str(" (the reader runs from source: it needs a JDK, e.g. openjdk-17-jdk-headless, not only a JRE)");
        }
        return Err(LocalError::io(format!("reading the full query log in {} (is it one?)", dir.display()), std::io::Error::other(why)));
    }
    Ok(text)
}

fn tempfile_dir() -> Result<std::path::PathBuf, LocalError> {
    let d = std::env::temp_dir().join(format!("casslab-fql-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| LocalError::io(format!("creating {}", d.display()), e))?;
    Ok(d)
}
