//! Getting the Cassandra server jars and a usable `java`: finds the tools, fetches
//! `org.apache.cassandra:cassandra-all:<version>` and its dependencies once with
//! Maven into a per-user cache, and hands back the `lib` directory for `-cp '<lib>/*'`.
//! It does not start anything; `process` does.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::local_error::{IoContext, LocalError};
use crate::node_process::tail_lines;

/// File written into `cassandra-<version>/` after the jars are complete.
const COMPLETE_MARKER: &str = "complete";

/// Root of the jar cache: `$CASSLAB_CACHE`, else the user's cache dir + `casslab`.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("CASSLAB_CACHE").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("casslab")
}

/// Where the jars of `version` live: `<cache root>/cassandra-<version>/lib`.
pub fn jar_cache_dir(version: &str) -> PathBuf {
    cache_root().join(format!("cassandra-{version}")).join("lib")
}

/// The jar directory of `version` if a previous fetch completed, else `None`.
pub fn cached_jars(version: &str) -> Option<PathBuf> {
    let lib = jar_cache_dir(version);
    let marker = lib.parent()?.join(COMPLETE_MARKER);
    (marker.is_file() && lib.is_dir()).then_some(lib)
}

/// The `java` to run: `$JAVA_HOME/bin/java` when that exists, else `java` from `PATH`.
pub fn java_command() -> PathBuf {
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        let java = Path::new(&home).join("bin").join("java");
        if java.is_file() {
            return java;
        }
    }
    PathBuf::from("java")
}

/// The `keytool` to run: `$JAVA_HOME/bin/keytool` when that exists, else the one beside
/// `java` on `PATH` (symbolic links followed), else `keytool` from `PATH`.
pub fn keytool_command() -> PathBuf {
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        let keytool = Path::new(&home).join("bin").join("keytool");
        if keytool.is_file() {
            return keytool;
        }
    }
    let beside_java = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("java"))
            .find(|java| java.is_file())
            .and_then(|java| fs::canonicalize(java).ok())
            .and_then(|java| Some(java.parent()?.join("keytool")))
            .filter(|keytool| keytool.is_file())
    });
    beside_java.unwrap_or_else(|| PathBuf::from("keytool"))
}

/// Checks that `java` runs and is at least version 17; returns its version text.
pub fn check_java(cassandra_version: &str) -> Result<String, LocalError> {
    let out = match Command::new(java_command()).arg("-version").output() {
        Ok(out) => out,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(LocalError::MissingTool {
                tool: "java".into(),
                hint: "install a JDK 17+ (apt-get install openjdk-17-jre-headless) or set JAVA_HOME".into(),
            })
        }
        Err(e) => return Err(LocalError::io("running `java -version`", e)),
    };
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let version = parse_java_version(&text).unwrap_or_else(|| "unknown".to_string());
    match java_major(&version) {
        // Maven's own need; which Java runs the nodes is `java::find_java`'s to decide
        Some(major) if major < 8 => Err(LocalError::JavaTooOld { found: version, needed_major: 8, cassandra_version: cassandra_version.to_string() }),
        _ => Ok(version),
    }
}

/// The quoted version in `java -version` output: `openjdk version "17.0.15" ...` -> `17.0.15`.
fn parse_java_version(output: &str) -> Option<String> {
    let line = output.lines().find(|l| l.contains(" version \""))?;
    let start = line.find('"')? + 1;
    let end = start + line[start..].find('"')?;
    Some(line[start..end].to_string())
}

/// The major number of a Java version: `1.8.0_292` -> 8, `17.0.15` -> 17, `21` -> 21.
fn java_major(version: &str) -> Option<u32> {
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

fn check_maven() -> Result<(), LocalError> {
    match Command::new("mvn").arg("-v").stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(LocalError::MissingTool {
            tool: "mvn".into(),
            hint: "install Maven (apt-get install maven); it is needed once to fetch the Cassandra jars".into(),
        }),
        Err(e) => Err(LocalError::io("running `mvn -v`", e)),
    }
}

/// The one-dependency pom Maven resolves.
fn render_pom(version: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>casslab</groupId>
  <artifactId>cassandra-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"#
    )
}

/// The jars to run: those of a custom `build` (a directory of jars, or an unpacked
/// distribution's `lib/`) with the version its server jar names, or `version`'s from Maven
/// Central (fetched the first time).
pub fn jars_for(version: &str, build: Option<&Path>, progress: &mut dyn FnMut(&str)) -> Result<(PathBuf, String), LocalError> {
    let Some(build) = build else { return Ok((ensure_jars(version, progress)?, version.to_string())) };
    let lib = if build.join("lib").is_dir() { build.join("lib") } else { build.to_path_buf() };
    let bad = |reason: String| LocalError::BadDefinition { reason };
    let jars: Vec<String> = fs::read_dir(&lib)
        .map_err(|e| bad(format!("build {}: {e}", build.display())))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".jar"))
        .collect();
    let server = jars.iter().find(|n| n.starts_with("apache-cassandra-") || n.starts_with("cassandra-all-")).ok_or_else(|| {
        bad(format!(
            "build {}: no apache-cassandra-*.jar or cassandra-all-*.jar in {} (give a directory of jars or an unpacked distribution)",
            build.display(),
            lib.display()
        ))
    })?;
    let built = server.trim_start_matches("apache-cassandra-").trim_start_matches("cassandra-all-").trim_end_matches(".jar").to_string();
    Ok((lib, if built.is_empty() { version.to_string() } else { built }))
}

/// Returns the jar directory of `version`, fetching it with Maven the first time.
///
/// The fetch goes to a temporary directory beside the cache and is renamed into
/// place only once complete, so an interrupted fetch is never mistaken for a cache.
pub fn ensure_jars(version: &str, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, LocalError> {
    check_java(version)?;
    if let Some(lib) = cached_jars(version) {
        return Ok(lib);
    }
    check_maven()?;
    let root = cache_root();
    fs::create_dir_all(&root).context(|| format!("creating the jar cache {}", root.display()))?;
    progress(&format!("fetching Cassandra {version} jars with Maven (once) into {} ...", root.display()));
    let started = std::time::Instant::now();

    // Unique per process and call, so concurrent fetches never share a directory.
    static FETCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = FETCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = root.join(format!(".fetch-{version}-{}-{call}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let staged = tmp.join(format!("cassandra-{version}"));
    let staged_lib = staged.join("lib");
    fs::create_dir_all(&staged_lib).context(|| format!("creating {}", staged_lib.display()))?;
    let result = fetch_into(version, &tmp, &staged, &staged_lib);
    let outcome = result.and_then(|jar_count| {
        let final_dir = jar_cache_dir(version).parent().map(Path::to_path_buf).unwrap_or_default();
        if final_dir.exists() {
            // A half-written cache from an older, interrupted layout, or a racing fetch.
            if cached_jars(version).is_some() {
                return Ok(jar_count);
            }
            fs::remove_dir_all(&final_dir).context(|| format!("removing the incomplete cache {}", final_dir.display()))?;
        }
        match fs::rename(&staged, &final_dir) {
            // another process's fetch finished first: its jars are as good as these
            Err(_) if cached_jars(version).is_some() => Ok(jar_count),
            renamed => renamed.context(|| format!("moving the fetched jars into {}", final_dir.display())).map(|()| jar_count),
        }
    });
    let _ = fs::remove_dir_all(&tmp);
    let jar_count = outcome?;
    progress(&format!("fetched {jar_count} jars in {:.1} s", started.elapsed().as_secs_f64()));
    cached_jars(version).ok_or_else(|| LocalError::JarsMissing { version: version.into(), dir: jar_cache_dir(version) })
}

/// Runs Maven in `work`, copying the jars into `lib`; writes the marker last.
fn fetch_into(version: &str, work: &Path, staged: &Path, lib: &Path) -> Result<usize, LocalError> {
    let pom = work.join("pom.xml");
    fs::write(&pom, render_pom(version)).context(|| format!("writing {}", pom.display()))?;
    let out = Command::new("mvn")
        .current_dir(work)
        .args(["-q", "-B", "-f"])
        .arg(&pom)
        .arg("dependency:copy-dependencies")
        .arg(format!("-DoutputDirectory={}", lib.display()))
        .stdin(Stdio::null())
        .output()
        .context(|| "running mvn dependency:copy-dependencies".to_string())?;
    if !out.status.success() {
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        // Maven Central answered, and has no such release: the version is wrong, not the network
        let artifact = format!("org.apache.cassandra:cassandra-all:jar:{version}");
        if text.contains(&format!("Could not find artifact {artifact}")) || text.contains(&format!("{artifact} was not found in")) {
            return Err(LocalError::NoSuchVersion { version: version.to_string() });
        }
        return Err(LocalError::Maven { status: out.status.to_string(), output_tail: tail_lines(&text, 30) });
    }
    let jar_count = fs::read_dir(lib)
        .context(|| format!("listing {}", lib.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jar"))
        .count();
    let has_server = fs::read_dir(lib)
        .context(|| format!("listing {}", lib.display()))?
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with("cassandra-all-"));
    if !has_server {
        return Err(LocalError::Maven {
            status: "finished without cassandra-all".into(),
            output_tail: format!("{jar_count} jars copied, none of them cassandra-all-{version}.jar"),
        });
    }
    let marker = staged.join(COMPLETE_MARKER);
    fs::write(&marker, format!("{jar_count} jars\n")).context(|| format!("writing {}", marker.display()))?;
    Ok(jar_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_version_parsing() {
        let out = "openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment";
        assert_eq!(parse_java_version(out).as_deref(), Some("17.0.15"));
        assert_eq!(java_major("17.0.15"), Some(17));
        assert_eq!(java_major("1.8.0_292"), Some(8));
        assert_eq!(java_major("21"), Some(21));
        assert_eq!(java_major("11.0.2-ea"), Some(11));
        assert_eq!(parse_java_version("no version here"), None);
    }

    #[test]
    fn pom_names_the_one_dependency() {
        let pom = render_pom("5.0.6");
        assert!(pom.contains("<artifactId>cassandra-all</artifactId>"));
        assert!(pom.contains("<version>5.0.6</version>"));
    }

    #[test]
    fn a_custom_build_is_a_directory_of_jars_or_a_distribution() {
        let tmp = tempfile::tempdir().unwrap();
        let dist = tmp.path().join("dist");
        fs::create_dir_all(dist.join("lib")).unwrap();
        fs::write(dist.join("lib/apache-cassandra-5.0.9-SNAPSHOT.jar"), b"").unwrap();
        fs::write(dist.join("lib/guava-32.jar"), b"").unwrap();
        let (lib, v) = jars_for("5.0.6", Some(&dist), &mut |_| {}).unwrap();
        assert_eq!((lib, v.as_str()), (dist.join("lib"), "5.0.9-SNAPSHOT"));
        let jars = tmp.path().join("jars");
        fs::create_dir_all(&jars).unwrap();
        fs::write(jars.join("cassandra-all-4.1.10.jar"), b"").unwrap();
        assert_eq!(jars_for("5.0.6", Some(&jars), &mut |_| {}).unwrap(), (jars.clone(), "4.1.10".to_string()));
        let empty = tmp.path().join("empty");
        fs::create_dir_all(&empty).unwrap();
        let e = jars_for("5.0.6", Some(&empty), &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("no apache-cassandra-*.jar"), "{e}");
    }

    #[test]
    fn cache_dir_layout() {
        let dir = jar_cache_dir("5.0.6");
        assert!(dir.ends_with("cassandra-5.0.6/lib"), "{}", dir.display());
    }
}
