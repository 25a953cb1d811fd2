//! Every guide's first example against the real test node: the commands of the first ```sh
//! block of each guide under `docs/guides/`, as written, made small (the few flags and
//! parameters each guide's entry below names are replaced or added: shorter runs, fewer rows,
//! a smaller budget), on the test node (the local cluster of the test home) and a temporary store, run in order in a
//! temporary directory; each must succeed, and what each guide promises must show in what it
//! printed. A guide whose example needs what this node cannot be (three nodes, a server
//! restarted with another collector, a login and TLS, a Redis server) is named with the
//! end-to-end test that runs the same thing; a guide in neither list fails the test. The
//! README's one command (the main job) runs the same way, and prints the headers its output shows.

mod common;
use common::{casslab, node, shared_load_lock};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The commands of the first ```sh block of a guide.
fn first_example(guide: &str) -> Vec<String> {
    let md = std::fs::read_to_string(repo().join("docs/guides").join(guide)).unwrap();
    let block = md.split("```sh\n").nth(1).unwrap_or_else(|| panic!("{guide}: no ```sh block"));
    let block = &block[..block.find("```").unwrap()];
    block.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()
}

/// Sets `flag value` in a command's words: replaces the value when the flag is there (for `-P`,
/// the parameter of the same name), else adds both.
fn set(words: &mut Vec<String>, flag: &str, value: &str) {
    let at = if flag == "-P" {
        let name = value.split('=').next().unwrap();
        words.windows(2).position(|w| w[0] == "-P" && w[1].split('=').next() == Some(name))
    } else {
        words.iter().position(|w| w == flag)
    };
    match at {
        Some(i) => words[i + 1] = value.to_string(),
        None => words.extend([flag.to_string(), value.to_string()]),
    }
}

/// What one guide's example is run with and must print.
struct Example {
    guide: &'static str,
    /// flags and parameters set on every `run` and `experiment` of the example
    small: &'static [(&'static str, &'static str)],
    /// texts the example's output (stdout and stderr of all its commands) contains
    shows: &'static [&'static str],
}

/// Runs a guide's example; returns everything it printed.
fn run_example(e: &Example, dir: &Path, store: &Path) -> String {
    let mut printed = String::new();
    let mut background = Vec::new();
    for line in first_example(e.guide) {
        let mut words = shell_words::split(&line).unwrap_or_else(|err| panic!("{}: `{line}`: {err}", e.guide));
        let detached = words.last().is_some_and(|w| w == "&");
        if detached {
            words.pop();
        }
        assert_eq!(words[0], "casslab", "{}: `{line}` is not a casslab command", e.guide);
        let sub = words[1].clone();
        // paths of the repository (experiments/…, docs/examples/…) from the temporary directory
        for w in words.iter_mut() {
            if w.contains('/') && !w.starts_with('-') && repo().join(&*w).exists() {
                *w = repo().join(&*w).to_string_lossy().into_owned();
            }
        }
        // a run id the node's barrier has not seen: the node remembers one for 20 minutes, so
        // the same example run again soon after (this test twice) would meet its own shards
        if let Some(i) = words.iter().position(|w| w == "--run-id") {
            if let Some(v) = words.get_mut(i + 1) {
                *v = format!("{v}-{}", run_id_suffix());
            }
        }
        if sub == "run" || sub == "experiment" {
            for (flag, value) in e.small {
                set(&mut words, flag, value);
            }
        }
        if ["run", "experiment", "report", "merge", "show", "compare"].contains(&sub.as_str()) {
            set(&mut words, "--store", store.to_str().unwrap());
        }
        let mut cmd = casslab();
        cmd.args(&words[1..]).current_dir(dir);
        if detached {
            background.push((line.clone(), cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()));
            continue;
        }
        let o = cmd.output().unwrap();
        let (out, err) = common::text(&o);
        assert_eq!(o.status.code(), Some(0), "{}: `{}` failed:\nstdout:\n{out}\nstderr:\n{err}", e.guide, words.join(" "));
        printed.push_str(&out);
        printed.push_str(&err);
        for (line, child) in background.drain(..) {
            let o = child.wait_with_output().unwrap();
            let (out, err) = common::text(&o);
            assert_eq!(o.status.code(), Some(0), "{}: `{line}` failed:\nstdout:\n{out}\nstderr:\n{err}", e.guide);
            printed.push_str(&out);
        }
    }
    assert!(background.is_empty(), "{}: a command left running", e.guide);
    for want in e.shows {
        assert!(printed.contains(want), "{}: the example did not show `{want}`:\n{printed}", e.guide);
    }
    printed
}

/// The examples run here, in this order (the experiments guide plans from the experiment the
/// data-model guide ran, in the same store).
const RUN: &[Example] = &[
    Example {
        guide: "compare-data-models.md",
        small: &[("-P", "rows=2000"), ("--budget", "50s"), ("--duration", "2s"), ("--warmup", "1s")],
        shows: &["columns against list", "stopped after"],
    },
    Example { guide: "experiments.md", small: &[], shows: &["blocks"] },
    Example {
        guide: "find-max.md",
        small: &[("-P", "rows=2000"), ("--duration", "2s"), ("--warmup", "1s"), ("--max-steps", "2")],
        // the steps after the probe depend on the machine: a fast one meets the SLA at maximum throughput
        shows: &["find-max: p99 < 10ms", "step 0:"],
    },
    Example { guide: "why-slow.md", small: &[("-P", "rows=2000"), ("--duration", "4s"), ("--warmup", "1s")], shows: &["validity:", "## "] },
    Example { guide: "many-loaders.md", small: &[("-P", "rows=2000"), ("--duration", "3s"), ("--warmup", "1s")], shows: &["loaders", "shard"] },
    Example {
        guide: "bring-your-own-workload.md",
        small: &[("-P", "partitions=2000"), ("--duration", "3s"), ("--warmup", "1s")],
        shows: &["wrote", "lint: no findings", "validity:"],
    },
    Example { guide: "node-loss.md", small: &[("-P", "rows=2000"), ("--duration", "16s"), ("--warmup", "1s")], shows: &["flush", "compact", "events"] },
    Example {
        guide: "vector-search.md",
        small: &[("-P", "rows=2000"), ("-P", "dims=16"), ("-P", "keyspace=casslab_guide_vectors"), ("--duration", "4s"), ("--warmup", "1s")],
        shows: &["recall@10 (95% Wilson intervals): search", "recall@10 of search per interval of the run phase"],
    },
    Example {
        guide: "load-shapes.md",
        small: &[("-P", "rows=2000"), ("--duration", "8s"), ("--warmup", "0s"), ("--rate", "ramp 200..800 over 8s")],
        shows: &["stages of the schedule", "latency against offered rate", "wrote"],
    },
];

/// Guides whose example this node cannot run, and the end-to-end test that runs the same.
const ELSEWHERE: &[(&str, &str)] = &[
    ("distance.md", "distance.rs"),
    ("redis.md", "redis.rs"),
    ("server-variants.md", "server.rs"),
    ("your-own-cluster.md", "secure.rs"),
    ("verify.md", "verify.rs"),
];

#[test]
fn every_guide_s_first_example_runs_against_the_node() {
    // every guide is either run here or by another test
    for entry in std::fs::read_dir(repo().join("docs/guides")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let here = RUN.iter().any(|e| e.guide == name);
        let elsewhere = ELSEWHERE.iter().find(|(g, _)| *g == name);
        assert!(here || elsewhere.is_some(), "docs/guides/{name}: its example is run by no test");
        if let Some((_, test)) = elsewhere {
            assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(test).exists(), "{test}");
            assert!(!first_example(&name).is_empty(), "{name}: no example");
        }
    }
    // the commands name no host: they use the local cluster under the test home, the test node
    node();
    let _g = shared_load_lock();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    for e in RUN {
        let printed = run_example(e, dir.path(), &store);
        let md = std::fs::read_to_string(repo().join("docs/guides").join(e.guide)).unwrap();
        let printed_lines: Vec<String> = printed.lines().map(words).collect();
        for (command, block) in marked_outputs(&md) {
            if !first_example(e.guide).contains(&command) {
                continue;
            }
            for header in block.iter().filter(|l| is_header(l)) {
                assert!(
                    printed_lines.contains(&words(header)),
                    "{}: the output shown for `{command}` has the header\n{header}\nwhich the command no longer prints (run docs/regenerate {}):\n{printed}",
                    e.guide,
                    e.guide
                );
            }
        }
    }
    assert!(dir.path().join("stress.casslab.yaml").exists() && dir.path().join("run.html").exists());
}

/// One suffix for every run id of this test process: its id and start in ms.
fn run_id_suffix() -> &'static str {
    static SUFFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SUFFIX.get_or_init(|| {
        let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        format!("{}-{ms}", std::process::id())
    })
}

/// The marked output blocks of a document: (the command marked, the block's lines).
fn marked_outputs(md: &str) -> Vec<(String, Vec<String>)> {
    let lines: Vec<&str> = md.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(mark) = line.strip_prefix("<!-- output of: ").and_then(|m| m.strip_suffix(" -->")) else { continue };
        let command = mark.split(" | ").next().unwrap().to_string();
        let open = (i + 1..lines.len()).find(|&j| lines[j].starts_with("```")).unwrap();
        let close = (open + 1..lines.len()).find(|&j| lines[j].starts_with("```")).unwrap();
        found.push((command, lines[open + 1..close].iter().map(|l| l.to_string()).collect()));
    }
    found
}

/// A line's words, joined by one space: column widths change with the figures.
fn words(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A table header (columns apart by two spaces or more) or a section's title (ending in `:`) in
/// an output: four words or more, and no figure in them but a percentile's name (`p99`, `p99.9`).
fn is_header(line: &str) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let percentile = |t: &str| t.strip_prefix('p').is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit() || c == '.'));
    let columns = line.trim().split("  ").filter(|c| !c.trim().is_empty()).count();
    tokens.len() >= 4
        && !line.starts_with('$')
        && (line.trim_end().ends_with(':') || columns >= 4)
        && tokens.iter().all(|t| percentile(t) || !t.chars().any(|c| c.is_ascii_digit()))
}

/// The documents with marked outputs: each mark names a command the document shows (in a
/// ```sh block, or after `$` as the block's first line), and the block says when it was printed,
/// by what and at what load.
#[test]
fn every_output_shown_is_marked_with_a_command_the_document_shows() {
    let mut docs = vec![repo().join("README.md")];
    for entry in std::fs::read_dir(repo().join("docs/guides")).unwrap() {
        docs.push(entry.unwrap().path());
    }
    let mut marked = 0;
    for doc in docs {
        let md = std::fs::read_to_string(&doc).unwrap();
        let shown: Vec<String> = md
            .split("```sh\n")
            .skip(1)
            .flat_map(|b| b[..b.find("```").unwrap()].lines().map(|l| l.split("   #").next().unwrap().trim().to_string()).collect::<Vec<_>>())
            .collect();
        let lines: Vec<&str> = md.lines().collect();
        for (command, block) in marked_outputs(&md) {
            marked += 1;
            let name = doc.file_name().unwrap().to_string_lossy();
            assert!(
                shown.contains(&command) || block.first().is_some_and(|l| l == &format!("$ {command}")),
                "{name}: the output marked as printed by `{command}` is of a command the document does not show"
            );
            let at = lines.iter().position(|l| l.starts_with("<!-- output of: ") && l.contains(command.as_str())).unwrap();
            let caption = lines[at + 1];
            assert!(
                caption.starts_with("<sub>printed on ") && caption.contains("load average") && caption.contains("core machine"),
                "{name}: the output of `{command}` does not say when, on what and at what load it was printed: {caption}"
            );
            assert!(!block.is_empty(), "{name}: the output of `{command}` is empty: run docs/regenerate");
            assert!(!block.iter().any(|l| l.contains("/home/") || l.contains("/work/") || l.contains("/tmp/")), "{name}: a path of the machine it was made on");
        }
    }
    assert!(marked >= 12, "{marked} marked outputs");
}

/// The README's one command, the main job, runs against the test node as written (made small)
/// and prints every table header its marked output shows.
#[test]
fn the_readme_s_command_runs_and_prints_what_the_readme_shows() {
    let md = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let (command, block) = marked_outputs(&md).into_iter().next().expect("the README's output is marked with its command");
    let headers: Vec<&String> = block.iter().filter(|l| is_header(l)).collect();
    assert!(!headers.is_empty(), "the README's output shows no table header:\n{}", block.join("\n"));
    let mut argv = shell_words::split(&command).unwrap();
    assert_eq!(argv[0], "casslab", "`{command}`");
    let dir = tempfile::tempdir().unwrap();
    for (flag, value) in [("-P", "rows=2000"), ("--duration", "3s"), ("--warmup", "1s"), ("--store", dir.path().join("results.db").to_str().unwrap())] {
        set(&mut argv, flag, value);
    }
    node();
    let _g = shared_load_lock();
    let o = casslab().args(&argv[1..]).current_dir(dir.path()).output().unwrap();
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "`{}` failed:\nstdout:\n{out}\nstderr:\n{err}", argv.join(" "));
    let printed: Vec<String> = format!("{out}{err}").lines().map(words).collect();
    for header in headers {
        assert!(
            printed.contains(&words(header)),
            "the README shows the header\n{header}\nwhich `{command}` no longer prints (run docs/regenerate README.md):\n{out}"
        );
    }
}
