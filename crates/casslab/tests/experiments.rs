//! The experiments that ship with casslab, run end to end at a tiny scale against the real
//! test node: every variant runs its repetitions, each run is saved and tagged with its
//! variant, and the comparison against the baseline is printed.

mod common;
use common::{casslab, load_lock, node, run, temp_store};

fn experiment(file: &str, params: &[&str], variants: &[&str]) {
    let _g = load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let path = format!("{}/../../experiments/{file}", env!("CARGO_MANIFEST_DIR"));
    let mut cmd = casslab();
    cmd.args(["experiment", &path, "--repetitions", "2", "--duration", "2s", "--warmup", "0s", "--window", "1s"])
        .args(["--resamples", "500", "--min-windows", "2", "--concurrency", "8", "--hosts", host, "--store", store.to_str().unwrap()]);
    for p in params {
        cmd.args(["-P", p]);
    }
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    // two saved runs per variant, interleaved: A B … A B …
    let db = rusqlite::Connection::open(&store).unwrap();
    let tags: Vec<String> = db
        .prepare("SELECT tag FROM run_tags WHERE tag LIKE 'variant=%' ORDER BY run_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let want: Vec<String> = (0..2).flat_map(|_| variants.iter().map(|v| format!("variant={v}"))).collect();
    assert_eq!(tags, want, "runs in the wrong order or missing");
    let statuses: Vec<String> =
        db.prepare("SELECT status FROM runs").unwrap().query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
    assert!(statuses.iter().all(|s| s == "completed"), "{statuses:?}");
    for v in &variants[1..] {
        assert!(out.contains(&format!("{v} against {}", variants[0])) || out.contains(&format!("{v} vs {}", variants[0])), "no comparison of {v}:\n{out}");
    }
}

#[test]
fn bins_as_a_list_vs_columns() {
    experiment("bins-list-vs-columns.yaml", &["rows=300"], &["list", "columns"]);
}

#[test]
fn one_partition_read_vs_chunks() {
    experiment("partition-read-chunks.yaml", &["rows_per_partition=864"], &["whole", "chunks-2", "chunks-4", "chunks-8"]);
}

#[test]
fn compaction_strategies() {
    experiment("compaction-strategies.yaml", &["rows=300"], &["leveled", "size-tiered", "unified"]);
}
