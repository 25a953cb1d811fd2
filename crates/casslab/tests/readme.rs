//! The workloads of the README and the docs against the real test node: every ```yaml block that is a whole
//! workload runs briefly, as written (only its size made small), without an error, and its reads
//! find what the load wrote (the summary's `rows read:` line, the saved run's JSON). And the
//! trap the README warns about: uuid keys read through a generator of another name find
//! nothing, which lint reports before the run and the summary, the store and the report show.
//! (That the README's YAML examples read and lint, and its command lines parse, is checked
//! without a cluster by the unit tests of casslab-core and of the binary.)

mod common;
use common::{casslab, node, run, shared_load_lock, temp_store};

/// The README and every Markdown file under `docs/`, as one text.
fn documentation() -> String {
    fn walk(dir: &std::path::Path, out: &mut String) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut md = std::fs::read_to_string(repo.join("README.md")).unwrap();
    walk(&repo.join("docs"), &mut md);
    md
}

/// The ```yaml blocks of the README and the docs that are whole workloads (they have `name:`
/// and `operations:`), by name.
fn readme_workloads() -> Vec<(String, String)> {
    let md = documentation();
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in md.lines() {
        match (&mut block, line.trim_start()) {
            (None, l) if l.starts_with("```yaml") => block = Some(String::new()),
            (Some(_), l) if l.starts_with("```") => {
                let b = block.take().unwrap();
                if b.lines().any(|l| l.starts_with("operations:")) {
                    if let Some(name) = b.lines().find_map(|l| l.strip_prefix("name: ")) {
                        out.push((name.trim().to_string(), b.clone()));
                    }
                }
            }
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// The `rows read:` line of a summary.
fn rows_line(stdout: &str) -> &str {
    stdout.lines().find(|l| l.trim_start().starts_with("rows read:")).unwrap_or("")
}

#[test]
fn every_readme_workload_runs_against_the_node_and_its_reads_find_rows() {
    let _g = shared_load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let workloads = readme_workloads();
    let names: Vec<&str> = workloads.iter().map(|(n, _)| n.as_str()).collect();
    assert!(["my-kv", "typed-kv", "wide-row"].iter().all(|n| names.contains(n)), "{names:?}");
    for (name, text) in &workloads {
        let file = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&file, text).unwrap();
        let (code, out, err) = run(casslab()
            .args([
                "run",
                file.to_str().unwrap(),
                "-P",
                "rows=2000",
                "--duration",
                "3s",
                "--warmup",
                "0s",
                "--concurrency",
                "8",
                "--hosts",
                host,
                "--no-server-metrics",
            ])
            .args(["--store", store.to_str().unwrap()]));
        assert_eq!(code, 0, "{name}:\nstdout:\n{out}\nstderr:\n{err}");
        assert!(!out.contains("errors by kind"), "{name}: requests failed:\n{out}");
        let rows = rows_line(&out);
        assert!(rows.contains("read ") && rows.contains("read 1.00 rows per execution, none found nothing"), "{name}: the reads missed:\n{out}");
        assert!(!err.contains("reads-never-match") && !err.contains("generator-type-mismatch"), "{name}: {err}");
    }
    // the saved run keeps what its reads returned
    let json = dir.path().join("last.json");
    let (code, _, err) = run(casslab().args(["show", "latest", "--store", store.to_str().unwrap(), "--json", json.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let run_phase = v["summary"]["phases"].as_array().unwrap().iter().find(|p| p["phase"] == "run").unwrap().clone();
    let read = run_phase["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap().clone();
    assert!(read["ok"].as_u64().unwrap() > 0, "{read}");
    assert_eq!(read["rows_read"].as_u64(), read["ok"].as_u64(), "one row per read: {read}");
    assert_eq!(read["empty_reads"].as_u64(), Some(0), "{read}");
}

const TRAP: &str = "name: uuid-trap
params: { rows: 2000, keyspace: casslab_readme_trap }
keyspace: ${keyspace}
schema:
  - CREATE TABLE IF NOT EXISTS kv (key uuid PRIMARY KEY, value blob)
generators:
  insert_key: { type: uuid, dist: sequence, max: \"${rows}\" }
  key:        { type: uuid, dist: zipfian, max: \"${rows}\" }
  value:      { type: blob, size: 100 }
operations:
  insert:
    cql: INSERT INTO kv (key, value) VALUES (?, ?)
    args: [insert_key, value]
  read:
    cql: SELECT value FROM kv WHERE key = ?
    args: [key]
load: { op: insert, count: \"${rows}\" }
run: { mix: { read: 1 }, duration: 3s }
";

#[test]
fn reads_of_keys_never_loaded_are_found_by_lint_and_shown_by_every_summary() {
    let _g = shared_load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let file = dir.path().join("trap.yaml");
    std::fs::write(&file, TRAP).unwrap();
    let (code, out, _) = run(casslab().args(["lint", file.to_str().unwrap()]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("reads-never-match") && out.contains("values_of: insert_key"), "{out}");

    let (code, out, err) = run(casslab().args([
        "run",
        file.to_str().unwrap(),
        "--warmup",
        "0s",
        "--concurrency",
        "8",
        "--hosts",
        host,
        "--no-server-metrics",
        "--store",
        store.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("reads-never-match"), "run warns before it starts: {err}");
    let rows = rows_line(&out);
    assert!(rows.contains("read 0.00 rows per execution") && rows.contains("(100%) found nothing"), "{out}");
    let (code, md, err) = run(casslab().args(["report", "latest", "--format", "md", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("(100%) found nothing"), "{md}");

    // the fix the finding names: the same values, so every read finds its row
    let fixed = TRAP.replace(
        "key:        { type: uuid, dist: zipfian, max: \"${rows}\" }",
        "key:        { type: uuid, dist: zipfian, max: \"${rows}\", values_of: insert_key }",
    );
    std::fs::write(&file, fixed).unwrap();
    let (code, out, _) = run(casslab().args(["lint", file.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}");
    let (code, out, err) = run(casslab().args([
        "run",
        file.to_str().unwrap(),
        "--warmup",
        "0s",
        "--concurrency",
        "8",
        "--hosts",
        host,
        "--no-server-metrics",
        "--store",
        store.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(rows_line(&out).contains("read 1.00 rows per execution, none found nothing"), "{out}");
}
