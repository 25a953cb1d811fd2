//! The experiments that ship with casslab, run end to end at a tiny scale against the real
//! test node: every variant runs once unmeasured, then its repetitions in a counterbalanced
//! order, each run saved and tagged with its variant, and the comparison against the
//! baseline is printed. One of them also writes the
//! experiment's HTML page, which is rendered in headless Chromium to check its bar charts.

mod common;
use common::{casslab, load_lock, node, run, temp_store};

/// Runs the experiment; with `page`, also writes its HTML page there (`-o`).
fn experiment(file: &str, params: &[&str], variants: &[&str], page: Option<&std::path::Path>) {
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
    if let Some(page) = page {
        cmd.arg("-o").arg(page);
    }
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    // two measured runs per variant, counterbalanced: A B … then … B A (the unmeasured round
    // and the loads before settling carry no `variant=` tag)
    let db = rusqlite::Connection::open(&store).unwrap();
    let tags: Vec<String> = db
        .prepare("SELECT tag FROM run_tags WHERE tag LIKE 'variant=%' ORDER BY run_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let want: Vec<String> = variants.iter().chain(variants.iter().rev()).map(|v| format!("variant={v}")).collect();
    assert_eq!(tags, want, "runs in the wrong order or missing");
    let statuses: Vec<String> =
        db.prepare("SELECT status FROM runs").unwrap().query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
    assert!(statuses.iter().all(|s| s == "completed"), "{statuses:?}");
    let unmeasured: i64 = db.query_row("SELECT count(*) FROM run_tags WHERE tag LIKE 'unmeasured=%'", [], |r| r.get(0)).unwrap();
    assert_eq!(unmeasured, variants.len() as i64, "one unmeasured run per variant");
    assert!(out.contains("method: repetitions as the unit"), "{out}");
    for v in &variants[1..] {
        assert!(out.contains(&format!("{v} against {}", variants[0])) || out.contains(&format!("{v} vs {}", variants[0])), "no comparison of {v}:\n{out}");
    }
    if let Some(page) = page {
        check_page(page, variants);
    }
}

/// The experiment's page: self-contained, every variant and verdict named, and per operation
/// a throughput and a latency chart whose bars (one per variant and figure) and whiskers draw.
fn check_page(page: &std::path::Path, variants: &[&str]) {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(!html.contains("<script") && !html.contains("https://"), "the page must be self-contained");
    assert!(html.contains(&format!("{} <em>(baseline)</em>", variants[0])), "the baseline is marked");
    for v in &variants[1..] {
        assert!(html.contains(&format!("<h3>{v} against {}</h3>", variants[0])), "no verdicts of {v}");
    }
    let probes = common::chromium::probe_bar_charts(page);
    assert!(!probes.is_empty(), "no bar charts on the page");
    for kind in ["throughput", "latency"] {
        assert!(probes.iter().any(|p| p.id.ends_with(kind)), "no {kind} chart: {probes:?}");
    }
    let n = variants.len() as u32;
    for p in &probes {
        // throughput: ops/s; latency: p50 and p99
        let per_variant = if p.id.ends_with("latency") { 2 } else { 1 };
        assert!(p.width >= 400 && p.height >= 150, "chart {} is {}x{} px", p.id, p.width, p.height);
        assert_eq!(p.bars, n * per_variant, "chart {}: bars drawn", p.id);
        assert_eq!(p.whiskers, n * per_variant, "chart {}: whiskers drawn", p.id);
    }
    let png = page.with_extension("png");
    common::chromium::headless(page, &[format!("--screenshot={}", png.display()), "--window-size=1280,1800".into()]);
    eprintln!("page: {} (screenshot {})", page.display(), png.display());
}

#[test]
fn bins_as_a_list_vs_columns() {
    experiment("bins-list-vs-columns.yaml", &["rows=300"], &["list", "columns"], None);
}

#[test]
fn one_partition_read_vs_chunks() {
    experiment("partition-read-chunks.yaml", &["rows_per_partition=864"], &["whole", "chunks-2", "chunks-4", "chunks-8"], None);
}

#[test]
fn compaction_strategies() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("experiments");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("compaction-strategies.html");
    let _ = std::fs::remove_file(&page);
    experiment("compaction-strategies.yaml", &["rows=300"], &["leveled", "size-tiered", "unified"], Some(&page));
}
