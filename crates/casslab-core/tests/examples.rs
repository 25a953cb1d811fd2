//! Tests that the YAML examples of the README and of `docs/` (guides and reference) are true: every ```yaml block is
//! read as what it shows (a workload, an experiment, or operations to put in a workload, which
//! are completed with the parts they leave out) and linted without an error. The workloads
//! among them also run against a real node in `crates/casslab/tests/readme.rs`; the command
//! lines are parsed by the binary's own tests. Also checks that the shipped experiment written
//! with `{A..B}` ranges makes the 100 columns it describes.

use casslab_core::lint::{at_least, lint, LintOptions, Severity};
use casslab_core::workload::parse_workload;
use casslab_core::yaml::{self, Node, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The ```yaml blocks of a Markdown file, with the line each starts on.
pub(crate) fn yaml_blocks(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in md.lines().enumerate() {
        match (&mut current, line.trim_start()) {
            (None, l) if l.starts_with("```yaml") => current = Some((i + 2, String::new())),
            (Some(_), l) if l.starts_with("```") => out.push(current.take().expect("inside a block")),
            (Some((_, text)), _) => {
                text.push_str(line);
                text.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// The generators a block's operations bind (its `args`, also inside `steps` and `pipeline`).
fn bound_generators(node: &Node, out: &mut BTreeSet<String>) {
    match &node.value {
        Value::Map(entries) => {
            for e in entries {
                if e.key == "args" {
                    out.extend(e.node.items().iter().filter_map(|n| n.scalar_text()));
                } else {
                    bound_generators(&e.node, out);
                }
            }
        }
        Value::Seq(items) => items.iter().for_each(|n| bound_generators(n, out)),
        _ => {}
    }
}

/// A whole workload from a block: as it is when it has `operations:`, else the block is
/// operations; generators, a keyspace and a run phase are added when missing.
fn as_workload(block: &str) -> String {
    let doc = yaml::parse(block).unwrap_or_else(|e| panic!("not YAML: {e}\n{block}"));
    let (mut text, ops) = if doc.get("operations").is_some() {
        (block.to_string(), doc.get("operations").cloned().unwrap_or_else(|| Node::new(Value::Null)))
    } else {
        (format!("operations:\n{block}"), doc.clone())
    };
    let redis = block.contains("redis:");
    if doc.get("keyspace").is_none() && !redis {
        text.push_str("keyspace: ks\n");
    }
    if doc.get("generators").is_none() {
        let mut names = BTreeSet::new();
        bound_generators(&ops, &mut names);
        text.push_str("generators:\n");
        for n in names {
            text.push_str(&format!("  {n}: {{ type: text }}\n"));
        }
    }
    if doc.get("run").is_none() && doc.get("load").is_none() {
        let names: Vec<String> = ops.entries().iter().map(|e| format!("{}: 1", e.key)).collect();
        text.push_str(&format!("run:\n  mix: {{ {} }}\n  duration: 1s\n", names.join(", ")));
    }
    text
}

/// Where a block is read from: the Markdown file itself, or, when it reads vectors from a file
/// the test suite ships (`tests/data/`), a directory holding a copy of that file.
fn origin_beside_its_files(block: &str, file: &Path, line: usize, dir: &Path) -> String {
    let data = repo().join("crates/casslab/tests/data");
    let shipped: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| block.contains(&format!("file: {name}")))
        .collect();
    if shipped.is_empty() {
        return format!("{}:{line}", file.display());
    }
    for name in &shipped {
        std::fs::copy(data.join(name), dir.join(name)).unwrap();
    }
    format!("{}:{line}", dir.join(file.file_name().unwrap()).display())
}

/// Checks every ```yaml block of `file`; returns how many there were.
fn check_file(file: &Path, dir: &Path) -> usize {
    let md = std::fs::read_to_string(file).unwrap();
    let blocks = yaml_blocks(&md);
    for (line, block) in &blocks {
        let at = format!("{}:{line}", file.display());
        let doc = yaml::parse(block).unwrap_or_else(|e| panic!("{at}: not YAML: {e}"));
        if doc.get("variants").is_some() {
            let path = dir.join(format!("example-{line}.yaml"));
            std::fs::write(&path, block).unwrap();
            let exp = casslab_core::experiment::load_experiment(&path, &BTreeMap::new()).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(exp.variants.len() >= 2, "{at}");
            let findings = casslab_core::lint::lint_target(path.to_str().unwrap(), &BTreeMap::new(), &LintOptions::default()).unwrap();
            assert!(at_least(&findings, Severity::Error).is_empty(), "{at}: {findings:#?}");
            continue;
        }
        if let (Some(cluster), None) = (doc.get("cluster"), doc.get("operations")) {
            // a server definition on its own, as a workload or an experiment carries it
            let text = yaml::to_string(cluster).unwrap();
            let spec: Result<casslab_core::cluster::ServerSpec, _> = yaml::from_str(&text);
            assert!(spec.is_ok(), "{at}: not a server definition: {spec:?}");
            continue;
        }
        let text = as_workload(block);
        let w = parse_workload(&text, &origin_beside_its_files(block, file, *line, dir), &BTreeMap::new()).unwrap_or_else(|e| panic!("{at}: {e}\n{text}"));
        let findings = lint(&w, &LintOptions::default());
        assert!(at_least(&findings, Severity::Error).is_empty(), "{at}: {findings:#?}");
    }
    blocks.len()
}

/// The README and every Markdown file under `docs/`, guides and reference.
fn documentation() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![repo().join("README.md")];
    walk(&repo().join("docs"), &mut out);
    out
}

#[test]
fn every_yaml_example_of_the_readme_and_the_docs_is_read_and_lints_clean() {
    let dir = tempfile::tempdir().unwrap();
    let examples: usize = documentation().iter().map(|path| check_file(path, dir.path())).sum();
    assert!(examples >= 6, "the docs show at least six YAML examples, found {examples}");
}

#[test]
fn the_doc_examples_name_what_they_check() {
    let md = std::fs::read_to_string(repo().join("docs/reference/workloads.md")).unwrap()
        + &std::fs::read_to_string(repo().join("docs/guides/experiments.md")).unwrap();
    let blocks = yaml_blocks(&md);
    let names: Vec<String> = blocks.iter().filter_map(|(_, b)| yaml::parse(b).ok()?.get("name")?.scalar_text()).collect();
    for want in ["my-kv", "typed-kv", "wide-row", "compaction-strategies"] {
        assert!(names.iter().any(|n| n == want), "no example named {want}: {names:?}");
    }
    // the first workload example, as the README writes it, is whole: nothing is added to it
    let (_, my_kv) = blocks.iter().find(|(_, b)| b.contains("name: my-kv")).unwrap();
    assert_eq!(as_workload(my_kv), *my_kv);
    let w = parse_workload(my_kv, "docs/reference/workloads.md", &BTreeMap::new()).unwrap();
    assert_eq!(w.run.unwrap().mix.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["read", "rmw"]);
}

#[test]
fn bins_list_vs_columns_declares_its_hundred_columns_with_ranges() {
    let exp = casslab_core::experiment::load_experiment(&repo().join("experiments/bins-list-vs-columns.yaml"), &BTreeMap::new()).unwrap();
    let cols = exp.variants.iter().find(|v| v.name == "columns").unwrap();
    let w = &cols.workload;
    let create = &w.schema.iter().find(|s| s.cql.contains("bins_cols")).unwrap().cql;
    let declared: Vec<String> = (0..100).map(|i| format!("c{i} int")).collect();
    assert!(create.contains(&declared.join(", ")), "{create}");
    assert_eq!((0..100).filter(|i| w.generators.contains_key(&format!("v{i}"))).count(), 100);
    let insert = &w.operation("insert").unwrap().cql().unwrap().statements[0];
    assert_eq!((casslab_core::cql::count_markers(&insert.cql), insert.args.len()), (101, 101));
    let update = &w.operation("update").unwrap().cql().unwrap().statements[0];
    assert!(update.cql.contains("c0 = :v0, c1 = :v1") && update.cql.contains("c99 = :v99 WHERE id = :id"), "{}", update.cql);
    assert_eq!(update.args.last().map(String::as_str), Some("id"));
    let read = &w.operation("read_all").unwrap().cql().unwrap().statements[0];
    assert!(read.cql.starts_with("SELECT c0, c1, c2") && read.cql.contains("c99 FROM bins_cols"), "{}", read.cql);
}
