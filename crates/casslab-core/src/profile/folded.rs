//! Folded stacks, the text format flame graph tools share: one line per stack, its frames from
//! the root joined by `;`, a space and its weight (`main;read;decode 12`). Read from files made
//! elsewhere (`--profile-file node=stacks.folded`) and written for other tools
//! (`--profile-out`). Folded stacks carry no time: such a profile is shown whole, never sliced.

use super::{Profile, ProfileBuilder, ProfileError, ProfileKind};
use std::collections::BTreeMap;
use std::path::Path;

/// The most the weights of one file may add up to (2^62): sums over nodes and stacks stay
/// within a u64.
const MAX_TOTAL_WEIGHT: u64 = 1 << 62;

/// Reads folded stacks into one profile. Blank lines and `#` comments are skipped; a line
/// without a weight is an error naming its line.
pub fn parse(text: &str, path: &Path, node: &str, kind: ProfileKind, source: &str) -> Result<Profile, ProfileError> {
    let mut b = ProfileBuilder::new(node, kind, source);
    let mut total = 0u64;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |what: &str| ProfileError::Folded { path: path.to_path_buf(), line: i + 1, what: what.to_string() };
        let (stack, count) = line.rsplit_once(' ').ok_or_else(|| err("no weight after the stack"))?;
        let weight: u64 = match count.parse::<u64>() {
            Ok(w) => w,
            // some tools write fractional weights
            Err(_) => count
                .parse::<f64>()
                .ok()
                .filter(|w| w.is_finite() && *w >= 0.0)
                .map(|w| w.round() as u64)
                .ok_or_else(|| err(&format!("\"{count}\" is not a weight")))?,
        };
        let frames: Vec<&str> = stack.trim().split(';').filter(|f| !f.is_empty()).collect();
        if frames.is_empty() {
            return Err(err("an empty stack"));
        }
        // what a flame graph adds up must fit its counters
        total = total
            .checked_add(weight)
            .filter(|t| *t <= MAX_TOTAL_WEIGHT)
            .ok_or_else(|| err(&format!("the weights add up beyond {MAX_TOTAL_WEIGHT} here, more than any profile holds")))?;
        // a line of bytes or ns does not say how many samples it summed: unknown (0)
        let events = if kind == ProfileKind::Cpu { weight } else { 0 };
        b.add_counted(&frames, None, weight, events);
    }
    if b.is_empty() {
        return Err(ProfileError::Unreadable { path: path.to_path_buf(), detail: "no stack with a weight in it".into() });
    }
    Ok(b.finish())
}

/// The kind a file's name says (`…alloc….folded`, `…lock…`), CPU otherwise.
pub fn kind_of_name(name: &str) -> ProfileKind {
    let lower = name.to_ascii_lowercase();
    if lower.contains("alloc") {
        ProfileKind::Alloc
    } else if lower.contains("lock") || lower.contains("park") || lower.contains("wait") {
        ProfileKind::Lock
    } else {
        ProfileKind::Cpu
    }
}

/// Folded stacks as text, heaviest first.
pub fn write(folded: &BTreeMap<String, u64>) -> String {
    let mut lines: Vec<(&String, &u64)> = folded.iter().collect();
    lines.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut out = String::with_capacity(lines.iter().map(|(s, _)| s.len() + 12).sum());
    for (stack, weight) in lines {
        out.push_str(stack);
        out.push(' ');
        out.push_str(&weight.to_string());
        out.push('\n');
    }
    out
}

/// A file name for a profile's folded stacks: `run12-127.0.0.1-cpu.folded`.
pub fn file_name(run: i64, p: &Profile) -> String {
    let node: String = p.node.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    format!("run{run}-{node}-{}.folded", p.kind.as_str())
}

/// Writes each profile's folded stacks (of `window`; all of them without one) into `dir` as
/// [`file_name`] says, and the nodes merged per kind (`runN-all-KIND.folded`) when there are
/// several; returns the files written.
pub fn write_dir(dir: &Path, run: i64, profiles: &[Profile], window: Option<super::Window>) -> Result<Vec<std::path::PathBuf>, ProfileError> {
    std::fs::create_dir_all(dir).map_err(|source| ProfileError::Io { path: dir.into(), error: source })?;
    let mut all: Vec<Profile> = profiles.to_vec();
    for kind in ProfileKind::ALL {
        let of_kind: Vec<&Profile> = profiles.iter().filter(|p| p.kind == kind).collect();
        if of_kind.len() > 1 {
            all.extend(Profile::merged("all", &of_kind));
        }
    }
    let mut written = Vec::new();
    for p in &all {
        let path = dir.join(file_name(run, p));
        std::fs::write(&path, write(&p.folded(window))).map_err(|source| ProfileError::Io { path: path.clone(), error: source })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_text_round_trips_and_bad_lines_say_where() {
        let text = "# from elsewhere\nmain;read;decode 3\n\nmain;write 4\nmain;read;decode 2\nmain 1.6\n";
        let p = parse(text, Path::new("s.folded"), "n1", ProfileKind::Cpu, "folded").unwrap();
        assert!(!p.timed());
        let f = p.folded(None);
        assert_eq!((f["main;read;decode"], f["main;write"], f["main"]), (5, 4, 2));
        assert_eq!(write(&f), "main;read;decode 5\nmain;write 4\nmain 2\n");
        let e = parse("main;read 3\nmain;write four\n", Path::new("s.folded"), "n1", ProfileKind::Cpu, "x").unwrap_err().to_string();
        assert!(e.starts_with("s.folded:2: \"four\" is not a weight"), "{e}");
        let e = parse("main;read\n", Path::new("s.folded"), "n1", ProfileKind::Cpu, "x").unwrap_err().to_string();
        assert!(e.contains("s.folded:1: no weight"), "{e}");
        assert!(parse("\n# nothing\n", Path::new("e.folded"), "n1", ProfileKind::Cpu, "x").is_err());
    }

    #[test]
    fn names_say_the_kind_and_files_are_named_per_node() {
        assert_eq!(kind_of_name("node1-alloc.folded"), ProfileKind::Alloc);
        assert_eq!(kind_of_name("locks.txt"), ProfileKind::Lock);
        assert_eq!(kind_of_name("cpu.folded"), ProfileKind::Cpu);
        let p = parse("a;b 1\n", Path::new("x"), "10.0.0.1:9042", ProfileKind::Lock, "x").unwrap();
        assert_eq!(file_name(7, &p), "run7-10.0.0.1_9042-lock.folded");
    }

    #[test]
    fn a_directory_gets_a_file_per_node_and_kind_and_the_nodes_merged() {
        let dir = tempfile::tempdir().unwrap();
        let a = parse("a;b 2\n", Path::new("x"), "n1", ProfileKind::Cpu, "x").unwrap();
        let b = parse("a;b 3\na;c 1\n", Path::new("x"), "n2", ProfileKind::Cpu, "x").unwrap();
        let files = write_dir(&dir.path().join("out"), 4, &[a, b], None).unwrap();
        let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["run4-n1-cpu.folded", "run4-n2-cpu.folded", "run4-all-cpu.folded"]);
        assert_eq!(std::fs::read_to_string(&files[2]).unwrap(), "a;b 5\na;c 1\n");
    }
}
