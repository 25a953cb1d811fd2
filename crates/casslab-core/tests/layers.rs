//! The layering rule of docs/ARCHITECTURE.md, checked: the "Layers" block of that page lists
//! casslab-core's modules from the top layer to the bottom one, and a module may import only
//! modules of its own layer or below. This reads the page and every source file of the crate
//! (comments and test code left out) and names each import that runs back up, with its file
//! and line. It also holds the crate boundaries the page states: the libraries neither print
//! nor exit, and know neither clap nor anyhow. Plain Rust on the repository's own files: any
//! machine runs it with `cargo test`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The layers of the page, top first: each line of the block that opens with module names.
fn layers() -> Vec<Vec<String>> {
    let page = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md");
    let start = page.find("casslab-core, top to bottom:").expect("the page names casslab-core's layers, top to bottom");
    let block = &page[start..];
    let open = block.find("```").expect("a code block of layers");
    let body = &block[open + 3..];
    let body = &body[..body.find("```").expect("the block ends")];
    body.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            // "merge, report            what they do": the names before the description
            let names = l.split("  ").next().unwrap_or("");
            names.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect()
        })
        .collect()
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// A file's production lines with their numbers: comments dropped, and nothing from the first
/// `#[cfg(test)]` on (test modules sit at the bottom); test-only files give none.
fn production_lines(path: &Path) -> Vec<(usize, String)> {
    if path.file_name().is_some_and(|n| n.to_string_lossy().ends_with("_tests.rs")) {
        return Vec::new();
    }
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        if !code.trim().is_empty() {
            out.push((i + 1, code.to_string()));
        }
    }
    out
}

/// The crate's top-level modules a line names: `crate::x::…` and `use crate::{x, y::…}`.
fn named_modules(line: &str, modules: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + 7..];
        if let Some(group) = after.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name = item.trim().split("::").next().unwrap_or("").trim();
                out.push(name.to_string());
            }
        } else {
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            out.push(name);
        }
        rest = after;
    }
    out.retain(|m| modules.contains(m));
    out
}

#[test]
fn no_import_runs_back_up_the_layers_the_architecture_page_draws() {
    let layers = layers();
    assert!(layers.len() >= 5, "the layers block was not read: {layers:?}");
    let level: HashMap<String, usize> = layers.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |m| (m.clone(), i))).collect();
    let src = root().join("crates/casslab-core/src");
    let modules: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "lib.rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let missing: Vec<&String> = modules.iter().filter(|m| !level.contains_key(*m)).collect();
    assert!(missing.is_empty(), "docs/ARCHITECTURE.md places no layer for {missing:?}: add them to its layers block");
    let mut up = Vec::new();
    for file in sources(&src) {
        let rel = file.strip_prefix(&src).unwrap().to_path_buf();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        let Some(&mine) = level.get(&module) else { continue };
        for (n, line) in production_lines(&file) {
            for used in named_modules(&line, &modules) {
                if used != module && level[&used] < mine {
                    up.push(format!("crates/casslab-core/src/{}:{n}: {module} imports {used}, a layer above it", rel.display()));
                }
            }
        }
    }
    assert!(up.is_empty(), "imports that run back up the layers of docs/ARCHITECTURE.md:\n{}", up.join("\n"));
}

#[test]
fn the_libraries_neither_print_nor_exit_nor_know_the_command_line() {
    let mut found = Vec::new();
    for krate in ["casslab-core", "casslab-local"] {
        let dir = root().join("crates").join(krate);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let deps = &manifest[manifest.find("[dependencies]").unwrap()..];
        let deps = &deps[..deps.find("[dev-dependencies]").unwrap_or(deps.len())];
        for forbidden in ["clap", "anyhow"] {
            if deps.lines().any(|l| l.trim_start().starts_with(forbidden)) {
                found.push(format!("crates/{krate}/Cargo.toml depends on {forbidden}"));
            }
        }
        for file in sources(&dir.join("src")) {
            for (n, line) in production_lines(&file) {
                for call in ["println!", "eprintln!", "print!(", "eprint!(", "std::process::exit", "process::exit("] {
                    if line.contains(call) {
                        found.push(format!("{}:{n}: {call}", file.strip_prefix(root()).unwrap_or(&file).display()));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "only the binary prints, exits and reads the command line:\n{}", found.join("\n"));
}

#[test]
fn a_line_names_the_modules_it_imports() {
    let modules: Vec<String> = ["store", "analysis", "report"].iter().map(|s| s.to_string()).collect();
    assert_eq!(named_modules("use crate::store::{RunId, Store};", &modules), ["store"]);
    assert_eq!(named_modules("use crate::{analysis::Metric, report, stats};", &modules), ["analysis", "report"]);
    assert_eq!(named_modules("let x = crate::report::text::ms(1.0) + crate::units::x();", &modules), ["report"]);
}
