//! The experiments that ship with casslab, run end to end at a tiny scale against the real
//! test node: every variant runs once unmeasured, then its repetitions in a counterbalanced
//! order (or, for those of `design: simultaneous`, all variants at once in every block), each
//! run saved and tagged with its variant, and the comparison against the baseline is printed. One of them also writes the
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
        .args(["--resamples", "500", "--min-windows", "2", "--concurrency", "8", "--hosts", host, "--store", store.to_str().unwrap()])
        // runs this short on a busy test machine may fall behind their schedule; what is tested
        // here is the experiment's course, not the runs' validity (tests/trust.rs does that)
        .arg("--allow-invalid");
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
    let together = out.contains("design: simultaneous");
    if together {
        // every block: one run of each variant, all started at once
        let blocks: Vec<Vec<String>> = (1..=2)
            .map(|b| {
                let mut v: Vec<String> = db
                    .prepare("SELECT t.tag FROM run_tags t JOIN run_tags r ON r.run_id = t.run_id WHERE t.tag LIKE 'variant=%' AND r.tag = ?1 ORDER BY t.tag")
                    .unwrap()
                    .query_map([format!("repetition={b}")], |r| r.get(0))
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                v.sort();
                v
            })
            .collect();
        let mut want: Vec<String> = variants.iter().map(|v| format!("variant={v}")).collect();
        want.sort();
        assert_eq!(blocks, [want.clone(), want], "a run of every variant in each block");
        assert!(out.contains("method: blocks as the unit: in each block every variant ran once, all at the same time"), "{out}");
    } else {
        let want: Vec<String> = variants.iter().chain(variants.iter().rev()).map(|v| format!("variant={v}")).collect();
        assert_eq!(tags, want, "runs in the wrong order or missing");
    }
    let statuses: Vec<String> = db.prepare("SELECT status FROM runs").unwrap().query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
    assert!(statuses.iter().all(|s| s == "completed"), "{statuses:?}");
    let unmeasured: i64 = db.query_row("SELECT count(*) FROM run_tags WHERE tag LIKE 'unmeasured=%'", [], |r| r.get(0)).unwrap();
    assert_eq!(unmeasured, variants.len() as i64, "one unmeasured run per variant");
    // the runs of a block are paired: blocks are the unit
    assert!(out.contains("method: blocks as the unit"), "{out}");
    for v in &variants[1..] {
        assert!(out.contains(&format!("{v} against {}", variants[0])) || out.contains(&format!("{v} vs {}", variants[0])), "no comparison of {v}:\n{out}");
    }
    if let Some(page) = page {
        check_page(page, variants);
    }

    // compared again from the store alone: the same figures and verdicts (the end of stdout)
    let id: String = db.query_row("SELECT tag FROM run_tags WHERE tag LIKE 'experiment_id=%' LIMIT 1", [], |r| r.get(0)).unwrap();
    let again_page = page.map(|p| p.with_file_name(format!("again-{}", p.file_name().unwrap().to_string_lossy())));
    let mut cmd = casslab();
    cmd.args(["compare", "--experiment", &id["experiment_id=".len()..], "--window", "1s", "--resamples", "500", "--min-windows", "2", "--allow-invalid"])
        .args(["--store", store.to_str().unwrap()]);
    if let Some(p) = &again_page {
        cmd.arg("-o").arg(p);
    }
    let (code, again, err) = run(&mut cmd);
    assert_eq!(code, 0, "stdout:\n{again}\nstderr:\n{err}");
    assert!(again.contains("method: blocks as the unit") && out.ends_with(&again), "the experiment printed:\n{out}\ncompare --experiment printed:\n{again}");
    assert!(err.contains(&format!("baseline: {}", variants[0])), "{err}");
    if let Some(p) = &again_page {
        let html = std::fs::read_to_string(p).unwrap();
        let design = if together { "measured design: simultaneous" } else { "measured order (counterbalanced): " };
        assert!(html.contains(&format!("{} <em>(baseline)</em>", variants[0])) && html.contains(design), "{html}");
        for v in &variants[1..] {
            assert!(html.contains(&format!("<h3>{v} against {}</h3>", variants[0])), "no verdicts of {v}");
        }
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

#[test]
fn an_experiment_gates_ci_like_compare() {
    let _g = load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let path = format!("{}/../../experiments/bins-list-vs-columns.yaml", env!("CARGO_MANIFEST_DIR"));
    let mut cmd = casslab();
    cmd.args(["experiment", &path, "--allow-invalid", "-P", "rows=300", "--repetitions", "2", "--duration", "2s", "--warmup", "0s", "--window", "1s"])
        .args(["--resamples", "500", "--min-windows", "2", "--concurrency", "8", "--no-unmeasured-round", "--no-settle"])
        .args(["--hosts", host, "--store", store.to_str().unwrap()])
        // every latency is above 0 ms: the gate fails whatever the cluster does
        .args(["--fail-if", "total.p99 > 0ms", "--max-regression", "1000%"]);
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 1, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("columns against list"), "the comparison is printed before the gates: {out}");
    assert!(err.contains("gate failed: --fail-if 'total.p99 > 0ms': columns"), "{err}");
    assert!(!err.contains("gates passed"), "{err}");
}

/// `experiment --find-max SLA`: every variant's repetitions are searches of the highest rate
/// meeting the SLA, shown per repetition and as a mean with its interval.
#[test]
fn find_max_gives_each_variant_its_highest_rate_with_an_interval() {
    let _g = load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let exp = dir.path().join("fm.yaml");
    std::fs::write(&exp, "workload: kv\nload: shared\nparams: { rows: 500, keyspace: casslab_fm }\nshared_keyspace: true\nvariants:\n  four: { concurrency: 4 }\n  eight: { concurrency: 8 }\n").unwrap();
    let (code, out, err) = run(casslab()
        .args(["experiment", exp.to_str().unwrap(), "--repetitions", "2", "--duration", "2s", "--warmup", "0s", "--find-max", "p99 < 10s", "--max-steps", "1"])
        .args(["--hosts", host, "--no-lint", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("highest throughput meeting p99 < 10s, per variant"), "{out}");
    for v in ["four", "eight"] {
        let line = out.lines().find(|l| l.trim_start().starts_with(v)).unwrap_or_else(|| panic!("no row of {v}:\n{out}"));
        // two searches met the SLA (10 s is met by any rate): two rates, a mean and its interval
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert!(cells[1].parse::<f64>().unwrap() > 0.0 && cells[2].parse::<f64>().unwrap() > 0.0, "{line}");
        assert!(line.contains('[') && line.contains(']'), "no interval: {line}");
    }
    assert!(out.lines().any(|l| l.trim_start().starts_with("eight") && l.contains('%')), "no change against the baseline:\n{out}");
    let db = rusqlite::Connection::open(&store).unwrap();
    let searches: i64 = db.query_row("SELECT count(DISTINCT tag) FROM run_tags WHERE tag LIKE 'find_max=%'", [], |r| r.get(0)).unwrap();
    assert!(searches >= 1, "the searches' runs are tagged");
    let tagged: i64 = db.query_row("SELECT count(*) FROM run_tags WHERE tag IN ('variant=four', 'variant=eight')", [], |r| r.get(0)).unwrap();
    // a probe that meets the SLA ends its search: at least one run per search
    assert!(tagged >= 4, "every step of the 4 searches is a run of its variant: {tagged}");
}

/// An experiment that runs until it knows: blocks of a b / b a until every judged figure is
/// settled at the precision (generous here, so that it stops soon) or the budget is spent; the
/// runs say how it was designed, so that `compare --experiment` judges them the same way, and
/// `--plan` sizes the next one from them.
#[test]
fn a_sequential_experiment_runs_blocks_until_it_knows_and_plans_the_next() {
    let _g = load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let file = dir.path().join("seq.yaml");
    std::fs::write(
        &file,
        "name: seq\nworkload: kv\nload: shared\nwindow: 1s\nrate: 300\nprecision: 60%\nbudget: 4m\njudge: [read.p50]\n\
         params: { rows: 2000, keyspace: casslab_test_seq }\nvariants:\n  a: {}\n  b: {}\n",
    )
    .unwrap();
    let common = ["--duration", "2s", "--warmup", "0s", "--resamples", "500", "--concurrency", "8", "--no-lint", "--allow-invalid"];
    let mut cmd = casslab();
    cmd.arg("experiment").arg(&file).args(common).args(["--hosts", host, "--store", store.to_str().unwrap()]);
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("blocks until each judged change is within ±60% or found (budget 4 min)"), "{err}");
    assert!(err.contains("blocks fit the budget of 4 min") && err.contains("look after 4 of at most "), "{err}");
    let stop = out.lines().find(|l| l.trim_start().starts_with("stopped after ")).unwrap_or_else(|| panic!("no stop line:\n{out}"));
    assert!(stop.contains("every judged figure settled") || stop.contains("the budget is spent"), "{stop}");
    assert!(out.contains("judged: read p50 — a 95% interval"), "{out}");
    assert!(
        out.contains("sequential: ")
            && out.contains("repeated confidence intervals (O'Brien–Fleming spending, Lan–DeMets, calibrated for a spread estimated from the blocks)"),
        "{out}"
    );
    assert!(out.contains("b vs a, read p50: "), "{out}");
    // as many runs of a as of b, in blocks a b, b a, …
    let db = rusqlite::Connection::open(&store).unwrap();
    let count = |tag: &str| -> i64 { db.query_row("SELECT count(*) FROM run_tags WHERE tag = ?1", [tag], |r| r.get(0)).unwrap() };
    let (a, b) = (count("variant=a"), count("variant=b"));
    assert!(a >= 4 && a == b, "{a} runs of a, {b} of b");
    assert_eq!(count("design=sequential"), a + b, "every measured run says its design");
    let horizon: i64 = db.query_row("SELECT count(*) FROM run_tags WHERE tag LIKE 'max_blocks=%'", [], |r| r.get(0)).unwrap();
    assert_eq!(horizon, a + b, "every measured run says its horizon");

    // judged again from the store: the same sequential verdicts
    let mut cmd = casslab();
    cmd.args(["compare", "--experiment", "seq", "--window", "1s", "--resamples", "500", "--allow-invalid", "--store", store.to_str().unwrap()]);
    let (code, again, err) = run(&mut cmd);
    assert_eq!(code, 0, "{err}");
    assert!(again.contains("sequential: ") && out.ends_with(&again), "the experiment printed:\n{out}\ncompare --experiment printed:\n{again}");

    // the next experiment's plan, from this one's blocks
    let mut cmd = casslab();
    cmd.arg("experiment").arg(&file).args(common).args(["--plan", "--precision", "10%", "--hosts", host, "--store", store.to_str().unwrap()]);
    let (code, plan, err) = run(&mut cmd);
    assert_eq!(code, 0, "stdout:\n{plan}\nstderr:\n{err}");
    assert!(err.contains("planned from experiment seq-"), "{err}");
    assert!(plan.contains("plan (from ") && plan.contains(" measured blocks, ") && plan.contains("b: read p50"), "{plan}");
    assert!(plan.contains("the experiment needs about ") || plan.contains("cannot reach ±10% within the budget"), "{plan}");
}
