//! Java Flight Recorder files read into profiles, without a JDK (the `jfrs` reader): CPU from
//! execution samples, allocation from allocation samples (JDK 16+) or TLAB events (JDK 11, for
//! Cassandra 4.1), and time blocked on monitors and parks from their events' durations. Each
//! event's stack is turned root first, frames named `package.Class.method`, the allocated
//! class as the innermost frame of an allocation stack, and each event placed on the run's
//! clock from its chunk's start time and tick rate.

use super::{Profile, ProfileBuilder, ProfileError, ProfileKind};
use jfrs::reader::event::Accessor;
use jfrs::reader::JfrReader;
use std::path::Path;

/// What an event type adds to: its kind, and where its weight comes from.
#[derive(Clone, Copy)]
enum Weight {
    /// One per event (CPU samples).
    One,
    /// A field of bytes (allocation).
    Bytes(&'static str),
    /// The event's duration, in ticks turned into ns (locks, parks).
    Duration,
}

/// The events read, by name.
fn event_kind(name: &str) -> Option<(ProfileKind, Weight)> {
    Some(match name {
        "jdk.ExecutionSample" => (ProfileKind::Cpu, Weight::One),
        "jdk.ObjectAllocationSample" => (ProfileKind::Alloc, Weight::Bytes("weight")),
        "jdk.ObjectAllocationInNewTLAB" => (ProfileKind::Alloc, Weight::Bytes("tlabSize")),
        "jdk.ObjectAllocationOutsideTLAB" => (ProfileKind::Alloc, Weight::Bytes("allocationSize")),
        "jdk.JavaMonitorEnter" | "jdk.ThreadPark" | "jdk.JavaMonitorWait" => (ProfileKind::Lock, Weight::Duration),
        _ => return None,
    })
}

/// Reads a recording into one profile per kind it has samples of. `t0_unix_ms` is the run's
/// clock start: samples land at their ms since then (before it: negative, cut by windows).
/// The file's chunks are checked against its length first, and the reader runs in a process
/// of its own (`untrusted`): a damaged or hostile file is an error, never the end of this one.
pub fn read(path: &Path, node: &str, t0_unix_ms: i64, source: &str) -> Result<Vec<Profile>, ProfileError> {
    super::untrusted::check_chunks(path)?;
    super::untrusted::isolated(path, || read_checked(path, node, t0_unix_ms, source))
}

/// [`read`] once the file's chunks are known to fit it.
fn read_checked(path: &Path, node: &str, t0_unix_ms: i64, source: &str) -> Result<Vec<Profile>, ProfileError> {
    let file = std::fs::File::open(path).map_err(|source| ProfileError::Io { path: path.into(), error: source })?;
    let unreadable = |e: &dyn std::fmt::Debug| ProfileError::Unreadable { path: path.into(), detail: format!("{e:?}") };
    let mut builders: Vec<ProfileBuilder> = ProfileKind::ALL.iter().map(|k| ProfileBuilder::new(node, *k, source)).collect();
    let mut reader = JfrReader::new(std::io::BufReader::new(file));
    let mut frames: Vec<String> = Vec::with_capacity(128);
    for chunk in reader.chunks() {
        let (mut chunk_reader, chunk) = chunk.map_err(|e| unreadable(&e))?;
        let h = &chunk.header;
        let ns_per_tick = 1e9 / h.ticks_per_second.max(1) as f64;
        let (start_ns, start_ticks) = (h.start_time_nanos, h.start_ticks);
        for event in chunk_reader.events(&chunk) {
            // a recording cut short (a node killed while it wrote) ends in a torn event: keep
            // what was read before it
            let Ok(event) = event else { break };
            let Some((kind, weight)) = event_kind(event.class.name()) else { continue };
            let v = event.value();
            let ticks = v.get_field("startTime").and_then(|t| i64::try_from(t.value).ok()).unwrap_or(start_ticks);
            let at_ms = (start_ns as f64 + (ticks - start_ticks) as f64 * ns_per_tick) / 1e6 - t0_unix_ms as f64;
            let w = match weight {
                Weight::One => 1,
                Weight::Bytes(field) => v.get_field(field).and_then(|b| i64::try_from(b.value).ok()).unwrap_or(0).max(0) as u64,
                Weight::Duration => {
                    let d = v.get_field("duration").and_then(|d| i64::try_from(d.value).ok()).unwrap_or(0);
                    (d.max(0) as f64 * ns_per_tick) as u64
                }
            };
            frames.clear();
            stack_of(&v, &mut frames);
            if kind == ProfileKind::Alloc {
                if let Some(class) = v.get_field("objectClass").and_then(|c| class_name(&c)) {
                    frames.push(format!("new {class}"));
                }
            }
            if frames.is_empty() {
                continue;
            }
            builders[kind as usize].add(&frames, Some(at_ms.floor() as i64), w);
        }
    }
    let profiles: Vec<Profile> = builders.into_iter().filter(|b| !b.is_empty()).map(ProfileBuilder::finish).collect();
    if profiles.is_empty() {
        return Err(ProfileError::Unreadable {
            path: path.into(),
            detail: "a Java Flight Recorder file without execution, allocation, monitor or park samples".into(),
        });
    }
    Ok(profiles)
}

/// The event's stack, root first, into `out`; a truncated stack starts at `[truncated]`.
fn stack_of(event: &Accessor<'_>, out: &mut Vec<String>) {
    let Some(trace) = event.get_field("stackTrace") else { return };
    let truncated = trace.get_field("truncated").and_then(|t| bool::try_from(t.value).ok()).unwrap_or(false);
    let Some(frames) = trace.get_field("frames").and_then(Accessor::as_iter) else { return };
    let mut inner_first: Vec<String> = frames.filter_map(|f| frame_name(&f)).collect();
    if truncated {
        inner_first.push("[truncated]".to_string());
    }
    out.extend(inner_first.into_iter().rev());
}

/// `package.Class.method` of a stack frame.
fn frame_name(frame: &Accessor<'_>) -> Option<String> {
    let method = frame.get_field("method")?;
    let name = text(&method.get_field("name")?)?;
    let class = method.get_field("type").and_then(|c| class_name(&c)).unwrap_or_else(|| "?".to_string());
    Some(format!("{class}.{name}"))
}

/// A class's name as Java writes it: `java.util.HashMap`, `byte[]`, `java.lang.String[][]`;
/// a hidden class without the address and number the JVM gives it each run
/// (`BTree$$Lambda$1103+0x00007f0d34500460` → `BTree$$Lambda`), so runs compare frame by frame.
fn class_name(class: &Accessor<'_>) -> Option<String> {
    Some(stable(java_name(text(&class.get_field("name")?)?)))
}

/// A hidden class's name without its per-run number and address.
fn stable(name: String) -> String {
    match (name.find("$$Lambda"), name.find("+0x")) {
        (Some(i), _) => name[..i + "$$Lambda".len()].to_string(),
        (None, Some(i)) => name[..i].to_string(),
        (None, None) => name,
    }
}

/// A JVM-internal class name (`java/util/HashMap`, `[B`, `[[Ljava/lang/String;`) as Java writes it.
fn java_name(internal: &str) -> String {
    let dims = internal.chars().take_while(|c| *c == '[').count();
    if dims == 0 {
        return internal.replace('/', ".");
    }
    let element = match &internal[dims..] {
        "B" => "byte".to_string(),
        "C" => "char".to_string(),
        "D" => "double".to_string(),
        "F" => "float".to_string(),
        "I" => "int".to_string(),
        "J" => "long".to_string(),
        "S" => "short".to_string(),
        "Z" => "boolean".to_string(),
        other => other.trim_start_matches('L').trim_end_matches(';').replace('/', "."),
    };
    format!("{element}{}", "[]".repeat(dims))
}

/// A string field, held directly or as a symbol.
fn text<'a>(v: &Accessor<'a>) -> Option<&'a str> {
    if let Ok(s) = <&str>::try_from(v.value) {
        return Some(s);
    }
    let inner = v.get_field("string")?;
    <&str>::try_from(inner.value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording made here by the JDK of a small program that spins in `Spin.work`, holds a
    /// monitor others wait for and allocates `byte[]`; made when a JDK is present.
    fn recording(dir: &Path) -> Option<std::path::PathBuf> {
        let src = dir.join("Spin.java");
        std::fs::write(
            &src,
            r#"public class Spin {
  static final Object lock = new Object();
  public static void main(String[] a) throws Exception {
    long end = System.currentTimeMillis() + 3000;
    Thread holder = new Thread(() -> { while (System.currentTimeMillis() < end) { synchronized (lock) { try { Thread.sleep(30); } catch (Exception e) {} } } });
    Thread alloc = new Thread(() -> { java.util.List<byte[]> keep = new java.util.ArrayList<>(); while (System.currentTimeMillis() < end) { keep.add(new byte[16384]); if (keep.size() > 1000) keep.clear(); } });
    holder.start();
    alloc.start();
    long x = 0;
    while (System.currentTimeMillis() < end) {
      x += work();
      synchronized (lock) { x++; }
    }
    System.out.println(x);
  }
  static long work() { long s = 0; for (int i = 0; i < 1000000; i++) s += i * 31L ^ s; return s; }
}"#,
        )
        .unwrap();
        let jfr = dir.join("spin.jfr");
        let status = std::process::Command::new("java")
            .arg(format!("-XX:StartFlightRecording=filename={},settings=profile", jfr.display()))
            .arg(&src)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then_some(jfr)
    }

    #[test]
    fn hidden_classes_lose_what_changes_from_run_to_run() {
        assert_eq!(
            stable(java_name("org/apache/cassandra/utils/btree/BTree$$Lambda$1103+0x00007f0d34500460/695319118")),
            "org.apache.cassandra.utils.btree.BTree$$Lambda"
        );
        assert_eq!(stable(java_name("java/lang/invoke/LambdaForm$DMH+0x0000000800c0c400")), "java.lang.invoke.LambdaForm$DMH");
        assert_eq!(stable("java.util.HashMap".into()), "java.util.HashMap");
    }

    #[test]
    fn internal_class_names_read_as_java_writes_them() {
        assert_eq!(java_name("java/util/HashMap"), "java.util.HashMap");
        assert_eq!(java_name("[B"), "byte[]");
        assert_eq!(java_name("[[Ljava/lang/String;"), "java.lang.String[][]");
    }

    #[test]
    fn a_jdk_recording_reads_into_cpu_allocation_and_lock_profiles_on_the_run_clock() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = crate::engine::unix_now_ms();
        // the test machines run Cassandra on a JDK: its absence is a broken machine, not a skip
        let path = recording(dir.path()).expect("java (a JDK 11+) runs a recording");
        let profiles = read(&path, "n1", t0, "test").unwrap();
        let kinds: Vec<ProfileKind> = profiles.iter().map(|p| p.kind).collect();
        assert!(kinds.contains(&ProfileKind::Cpu) && kinds.contains(&ProfileKind::Alloc) && kinds.contains(&ProfileKind::Lock), "{kinds:?}");
        let cpu = profiles.iter().find(|p| p.kind == ProfileKind::Cpu).unwrap();
        let folded = cpu.folded(None);
        assert!(
            folded.keys().any(|s| s.contains("Spin.main")),
            "the program's main, sampled: {:?}",
            folded.keys().filter(|k| k.contains("Spin")).collect::<Vec<_>>()
        );
        // every sample lies within the program's life on the run clock
        let end_ms = crate::engine::unix_now_ms() - t0;
        assert!(cpu.samples.iter().all(|s| s.at_ms.is_some_and(|t| (-1000..=end_ms).contains(&t))), "{:?}", cpu.samples.first());
        let alloc = profiles.iter().find(|p| p.kind == ProfileKind::Alloc).unwrap();
        assert!(
            alloc.folded(None).keys().any(|s| s.contains("Spin.") && s.ends_with(";new byte[]")),
            "no byte[] allocated by the program: {:?}",
            alloc.folded(None).keys().filter(|k| k.contains("Spin")).collect::<Vec<_>>()
        );
        let lock = profiles.iter().find(|p| p.kind == ProfileKind::Lock).unwrap();
        assert!(lock.total(None) > 1_000_000, "at least a ms blocked, in ns: {}", lock.total(None));
        let e = read(&dir.path().join("Spin.java"), "n1", t0, "x").unwrap_err().to_string();
        assert!(e.contains("Spin.java") && e.contains("does not start with FLR"), "{e}");
        // a recording cut short says so, with the byte its chunk would need
        let bytes = std::fs::read(&path).unwrap();
        let cut = dir.path().join("cut.jfr");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let e = read(&cut, "n1", t0, "x").unwrap_err().to_string();
        assert!(e.contains("cut.jfr: a damaged Java Flight Recorder file") && e.contains("the file is cut short"), "{e}");
    }
}
