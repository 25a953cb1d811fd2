//! The documentation against the program (test-only): every `casslab` command line shown in the
//! README, the guides and the reference parses; every relative link leads to a file and a
//! heading that exist; and the defaults that help texts and docs state are the ones the code
//! uses (the same constants), so help, README and behaviour cannot drift apart.

use crate::cli::{command, Cli};
use clap::{CommandFactory, Parser, ValueEnum};
use std::path::{Path, PathBuf};

/// The `casslab` command lines of the ```sh blocks of a Markdown text (with `cargo run …
/// --` read as `casslab`), split as a shell would (quotes, comments, leading VAR=value).
fn command_lines(md: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && t == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let mut words = split_words(t);
        if words.last().is_some_and(|w| w == "&") {
            words.pop();
        }
        while words.first().is_some_and(|w| w.contains('=') && !w.starts_with('-')) {
            words.remove(0);
        }
        if words.first().map(String::as_str) == Some("cargo") {
            match words.iter().position(|w| w == "--") {
                Some(i) => words.drain(..i),
                None => continue,
            };
            words[0] = "casslab".into();
        }
        if words.first().map(String::as_str) == Some("casslab") {
            out.push(words);
        }
    }
    out
}

fn split_words(line: &str) -> Vec<String> {
    let (mut words, mut cur, mut quote, mut any) = (Vec::new(), String::new(), None::<char>, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, '#') if cur.is_empty() => break,
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The README and every Markdown file under `docs/` (guides and reference), read now.
fn documentation() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = vec![(repo.join("README.md"), std::fs::read_to_string(repo.join("README.md")).unwrap())];
    walk(&repo.join("docs"), &mut out);
    for md in ["deploy/README.md", "bench/README.md"] {
        out.push((repo.join(md), std::fs::read_to_string(repo.join(md)).unwrap()));
    }
    out
}

#[test]
fn every_command_line_of_the_readme_and_the_docs_parses() {
    let docs = documentation();
    let (readme, guides) = (&docs[0].1, docs.iter().filter(|(p, _)| p.to_string_lossy().contains("docs/guides")).count());
    assert_eq!(command_lines(readme).len(), 1, "the README shows one casslab command: the main job");
    assert!(guides >= 9, "a guide per question of the README's table, found {guides}");
    let mut lines = 0;
    for (path, md) in &docs {
        for words in command_lines(md) {
            lines += 1;
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("{}: `{}` does not parse: {e}", path.display(), words.join(" "));
            }
        }
    }
    assert!(lines >= 30, "found only {lines} command lines");
    assert_eq!(split_words("casslab run kv --event '60s kill node2' # note"), ["casslab", "run", "kv", "--event", "60s kill node2"]);
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's headings (outside code blocks).
fn anchors(md: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in md.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.push(anchor_of(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of a Markdown text's inline links `[text](target)`.
fn link_targets(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in md.match_indices("](") {
        if let Some(end) = md[i + 2..].find(')') {
            out.push(md[i + 2..i + 2 + end].to_string());
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_docs_leads_to_a_file_and_a_heading() {
    let mut checked = 0;
    for (path, md) in documentation() {
        for target in link_targets(&md) {
            if target.starts_with("http") || target.contains(' ') {
                continue;
            }
            let (file, anchor) = target.split_once('#').map_or((target.as_str(), None), |(f, a)| (f, Some(a)));
            let to = if file.is_empty() { path.clone() } else { path.parent().unwrap().join(file) };
            assert!(to.exists(), "{}: the link to {target} leads nowhere", path.display());
            if let Some(anchor) = anchor {
                let text = std::fs::read_to_string(&to).unwrap();
                assert!(anchors(&text).iter().any(|a| a == anchor), "{}: {target}: no such heading in {}", path.display(), to.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} links checked");
    assert_eq!(anchor_of(" Many load machines, one run"), "many-load-machines-one-run");
}

/// A subcommand's long help, as `casslab help PATH…` prints it.
fn help_of(path: &[&str]) -> String {
    let mut cmd = command();
    for name in path {
        cmd = cmd.find_subcommand(name).unwrap_or_else(|| panic!("no subcommand {name}")).clone();
    }
    cmd.render_long_help().to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One documentation file's text, its lines joined so that a phrase may wrap.
fn doc(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative);
    std::fs::read_to_string(path).unwrap().split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn help_and_docs_state_the_defaults_the_code_uses() {
    use casslab_core::analysis::{AUTO_WINDOWS, AUTO_WINDOW_MAX_S};
    use casslab_core::session::conduct::{DEFAULT_BUDGET_S, DEFAULT_PRECISION};
    // the Cassandra version `local up` starts
    let version = casslab_local::DEFAULT_CASSANDRA_VERSION;
    assert!(help_of(&["local", "up"]).contains(&format!("else {version}]")), "local up --help: {}", help_of(&["local", "up"]));
    assert!(doc("docs/reference/commands.md").contains(&format!("[--version {version}]")), "commands.md shows another default version");
    // the window a comparison chooses
    let window = format!("about {AUTO_WINDOWS} windows of the shortest run, at most {AUTO_WINDOW_MAX_S}s");
    assert!(help_of(&["compare"]).contains(&window), "compare --help does not say `{window}`");
    let window = format!("about {AUTO_WINDOWS} windows of the shortest run, at most {AUTO_WINDOW_MAX_S} s");
    for file in ["docs/reference/statistics.md", "docs/reference/commands.md"] {
        assert!(doc(file).contains(&window), "{file} does not say `{window}`");
    }
    // how long an experiment runs
    let (precision, budget_m) = (format!("{}%", DEFAULT_PRECISION * 100.0), DEFAULT_BUDGET_S / 60.0);
    let help = help_of(&["experiment"]);
    assert!(help.contains(&format!("[default: {precision}]")) && help.contains(&format!("[default: {budget_m}m]")), "experiment --help: {help}");
    assert!(help.contains("counterbalanced") && !help.contains("R times"), "experiment --help: {help}");
    let guide = doc("docs/guides/experiments.md");
    assert!(guide.contains(&format!("({precision} by default")) && guide.contains(&format!("({budget_m} minutes by default")), "the experiments guide");
    // every shell the completions command takes is named where completions are mentioned
    let shells: Vec<String> = clap_complete::Shell::value_variants().iter().map(|s| s.to_possible_value().unwrap().get_name().to_string()).collect();
    let readme = doc("README.md");
    assert!(readme.contains(&format!("casslab completions {}", shells.join("|"))), "README: completions for {shells:?}");
    // the built-in workloads the docs name exist
    for name in ["bins", "column-count", "partition-set", "wide-partition", "ycsb-a", "kv"] {
        assert!(casslab_core::workload::builtin(name).is_some(), "{name}");
    }
    let _ = Cli::command();
    let _ = Cli::try_parse_from(["casslab", "workloads"]).unwrap();
}
