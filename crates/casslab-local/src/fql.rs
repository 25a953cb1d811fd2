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
    let not_one = |reason: String| LocalError::NotAQueryLog { dir: dir.display().to_string(), reason };
    // a Chronicle Queue's roll files end in .cq4: without one, no JVM is started at all
    let rolls = std::fs::read_dir(dir)
        .map_err(|e| not_one(format!("it cannot be read ({e})")))?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "cq4"))
        .count();
    if rolls == 0 {
        return Err(not_one("it holds no Chronicle Queue file (*.cq4)".into()));
    }
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
        if err.contains("compiler") {
            let why = "the reader runs from source: it needs a JDK, e.g. openjdk-17-jdk-headless, not only a JRE";
            return Err(LocalError::io(format!("reading the full query log in {}", dir.display()), std::io::Error::other(why)));
        }
        return Err(not_one(format!("its reader failed: {}", exception_of(&err))));
    }
    Ok(text)
}

/// The reader's last exception, in one line, without its stack (`… Exception: message`).
fn exception_of(stderr: &str) -> String {
    let said = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("at ") && !l.starts_with("...") && !l.contains(" DEBUG ") && !l.contains(" INFO "))
        .rfind(|l| l.contains("Exception") || l.contains("Error"))
        .or_else(|| stderr.lines().map(str::trim).rfind(|l| !l.is_empty() && !l.starts_with("at ")))
        .unwrap_or("no message");
    let said = said.strip_prefix("Caused by: ").unwrap_or(said);
    said.chars().take(300).collect()
}

fn tempfile_dir() -> Result<std::path::PathBuf, LocalError> {
    let d = std::env::temp_dir().join(format!("casslab-fql-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| LocalError::io(format!("creating {}", d.display()), e))?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_a_queue_is_refused_before_any_jvm_starts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("noise.bin"), [0x13u8, 0x37, 0xff, 0x00].repeat(1000)).unwrap();
        let e = dump_full_query_log(dir.path(), "5.0.6", &mut |_| {}).unwrap_err();
        assert!(matches!(e, LocalError::NotAQueryLog { .. }), "{e:?}");
        assert!(e.to_string().contains("holds no Chronicle Queue file (*.cq4)") && e.to_string().contains("enablefullquerylog"), "{e}");
    }

    #[test]
    fn a_stack_trace_becomes_its_exception() {
        let err = "Exception in thread \"main\" java.lang.IllegalStateException: not a queue\n\tat net.openhft.X.y(X.java:1)\n\tat Z.main(Z.java:2)\nCaused by: java.io.EOFException: end of file\n\t... 3 more\n";
        assert_eq!(exception_of(err), "java.io.EOFException: end of file");
    }
}
