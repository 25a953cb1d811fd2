//! End-to-end tests of vector search and storage-attached indexes on the real test node: the
//! built-in `vector-search` at a tiny scale prints recall@10 per interval and for the run, and
//! the test measures recall itself — its own searches through the driver, its own brute force
//! over the vectors it reads back — and finds the same; a search of real embeddings (the
//! handwritten digits scikit-learn ships, `tests/data/digits.npy`) reaches the recall the
//! index should give; `sai-range` runs its range queries through SAI while an event builds one
//! more index under the load.

mod common;
use common::{casslab, node, run, session, shared_load_lock, store_arg, temp_store};
use scylla::value::CqlValue;

/// The recall of `op` in the run summary's `recall@k` line (`search 0.962 [0.951, 0.971] …`).
fn run_recall(out: &str, op: &str) -> f64 {
    let line = out.lines().find(|l| l.trim_start().starts_with("recall@")).unwrap_or_else(|| panic!("no recall line:\n{out}"));
    let at = line.find(&format!("{op} ")).unwrap_or_else(|| panic!("{line}")) + op.len() + 1;
    line[at..].split_whitespace().next().unwrap().parse().unwrap_or_else(|_| panic!("{line}"))
}

/// The recall of each interval (`-` where none was judged), from the per-interval line.
fn interval_recalls(out: &str, op: &str) -> Vec<Option<f64>> {
    let head = format!("recall@10 of {op} per interval of the run phase:");
    let at = out.lines().position(|l| l == head).unwrap_or_else(|| panic!("no per-interval recall:\n{out}"));
    out.lines().skip(at + 1).take_while(|l| l.starts_with("  ")).flat_map(|l| l.split_whitespace()).map(|v| v.parse().ok()).collect()
}

fn cosine_distance(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let (na, nb) = (a.iter().map(|x| x * x).sum::<f32>().sqrt(), b.iter().map(|x| x * x).sum::<f32>().sqrt());
    1.0 - dot / (na * nb)
}

fn floats(v: &CqlValue) -> Vec<f32> {
    match v {
        CqlValue::Vector(xs) | CqlValue::List(xs) => xs
            .iter()
            .map(|x| match x {
                CqlValue::Float(f) => *f,
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("not a vector: {other:?}"),
    }
}

#[test]
fn vector_search_prints_recall_per_interval_and_its_own_brute_force_agrees() {
    let _g = shared_load_lock();
    let host = node();
    let (d, store) = temp_store();
    let json = d.path().join("run.json");
    let ks = "casslab_test_vector_search";
    let (code, out, err) = run(casslab()
        .args(["run", "vector-search", "--hosts", host, "--rate", "40", "--duration", "8s", "--warmup", "1s", "--reload"])
        .args(["-P", "rows=2000", "-P", "dims=16", "-P", "centroids=10", "-P", &format!("keyspace={ks}")])
        .args(["--json", json.to_str().unwrap()])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("search: recall@10 against the exact 10 nearest of the vectors written"), "{err}");
    let per_interval = interval_recalls(&out, "search");
    let judged: Vec<f64> = per_interval.iter().flatten().copied().collect();
    assert!(per_interval.len() >= 8 && judged.len() >= 6, "recall in most intervals: {per_interval:?}");
    assert!(judged.iter().all(|r| (0.0..=1.0).contains(r)), "{per_interval:?}");
    let ours = run_recall(&out, "search");
    // the CSV of the intervals carries the counts the figures come from
    let (code, csv, _) = run(casslab().args(["show", "latest", "--format", "csv"]).args(store_arg(&store)));
    assert_eq!(code, 0);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let hits: u64 =
        csv.lines().skip(1).filter(|l| l.contains(",search,")).map(|l| l.split(',').nth(col("recall_hits")).unwrap().parse::<u64>().unwrap_or(0)).sum();
    assert!(hits > 0, "{csv}");
    // the JSON export carries recall per interval and per phase, as its schema says
    let export: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}/../../docs/run-export.schema.json", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap();
    let invalid: Vec<String> = jsonschema::validator_for(&schema).unwrap().iter_errors(&export).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(invalid.is_empty(), "{invalid:#?}");
    let judged: u64 =
        export["intervals"].as_array().unwrap().iter().flat_map(|iv| iv["ops"].as_array().unwrap()).filter_map(|o| o["recall"]["judged"].as_u64()).sum();
    assert!(judged > 0, "no recall in the exported intervals");

    // the test's own measure: its own searches of points near the written vectors, judged by
    // its own brute force over every vector read back
    let (rt, s) = session(host);
    let rows = rt.block_on(s.query_unpaged(format!("SELECT id, v FROM {ks}.vectors"), &[])).unwrap().into_rows_result().unwrap();
    let data: Vec<(i64, Vec<f32>)> = rows
        .rows::<(i64, CqlValue)>()
        .unwrap()
        .map(|r| {
            let (id, v) = r.unwrap();
            (id, floats(&v))
        })
        .collect();
    assert_eq!(data.len(), 2000, "every loaded vector is there");
    let search = rt.block_on(s.prepare(format!("SELECT id FROM {ks}.vectors ORDER BY v ANN OF ? LIMIT 10"))).unwrap();
    let (mut hits, mut possible) = (0usize, 0usize);
    for q in 0..40usize {
        // a point between two written vectors (0.7 of one, 0.3 of another): near the data,
        // in no row
        let (a, b) = (&data[(q * 37) % data.len()].1, &data[(q * 53 + 11) % data.len()].1);
        let query: Vec<f32> = a.iter().zip(b).map(|(x, y)| 0.7 * x + 0.3 * y).collect();
        let mut exact: Vec<(f32, i64)> = data.iter().map(|(id, v)| (cosine_distance(&query, v), *id)).collect();
        exact.sort_by(|x, y| x.0.total_cmp(&y.0));
        let kth = exact[9].0;
        let got = rt.block_on(s.execute_unpaged(&search, (query.clone(),))).unwrap().into_rows_result().unwrap();
        let ids: Vec<i64> = got.rows::<(i64,)>().unwrap().map(|r| r.unwrap().0).collect();
        let by_id: std::collections::HashMap<i64, &Vec<f32>> = data.iter().map(|(id, v)| (*id, v)).collect();
        hits += ids.iter().filter(|id| cosine_distance(&query, by_id[id]) <= kth + 1e-5).count().min(10);
        possible += 10;
    }
    let theirs = hits as f64 / possible as f64;
    eprintln!("recall@10: casslab {ours}, the test's own {theirs}");
    assert!((ours - theirs).abs() <= 0.15, "casslab measured recall@10 {ours}, the test's own brute force {theirs}:\n{out}");
    // clustered vectors give an index structure to find: it should find most neighbours
    assert!(ours >= 0.6, "recall@10 {ours} on clustered vectors:\n{out}");
}

#[test]
fn real_embeddings_from_a_file_are_searched_with_the_recall_the_index_should_give() {
    let _g = shared_load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let workload = format!("{}/tests/data/digits.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) =
        run(casslab().args(["run", &workload, "--hosts", host, "--rate", "30", "--duration", "6s", "--warmup", "1s", "--reload"]).args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let recall = run_recall(&out, "search");
    eprintln!("recall@10 of the digits: {recall}");
    // the digits form ten loose classes in 64 dimensions: the index finds most of each held-out
    // query's 10 nearest among the 1,797 rows written
    assert!(recall >= 0.8, "recall@10 {recall} of the digits:\n{out}");
    assert!(out.contains("nearest of 1,797 vectors"), "1,797 rows written, each judged:\n{out}");
}

#[test]
fn sai_range_queries_run_through_their_indexes() {
    let _g = shared_load_lock();
    let host = node();
    let (_d, store) = temp_store();
    // a keyspace of its own each time: the event's index must not exist before it
    let ks = format!("casslab_test_sai_range_{}", std::process::id());
    let (code, out, err) = run(casslab()
        .args(["run", "sai-range", "--hosts", host, "--rate", "50", "--duration", "6s", "--warmup", "1s"])
        .args(["-P", "rows=3000", "-P", "span=20000", "-P", &format!("keyspace={ks}")])
        .args(["--event", "2s create index IF NOT EXISTS orders_customer ON orders (customer) USING 'sai'"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    // the event lasted until the index was built, and its impact is measured like any event's
    let db = rusqlite::Connection::open(&store).unwrap();
    let (status, output): (String, String) =
        db.query_row("SELECT status, output_tail FROM run_events WHERE run_id = (SELECT max(id) FROM runs)", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(status, "ok", "{output}");
    assert!(output.contains("created orders_customer on orders.customer") && output.contains("built after"), "{output}");
    assert!(out.contains("create index"), "the events table names it:\n{out}");
    let (rt, s) = session(host);
    let _ = rt.block_on(s.query_unpaged(format!("DROP KEYSPACE IF EXISTS {ks}"), &[]));
    let rows = common::summary_rows(&out);
    for op in ["by_amount", "recent", "insert"] {
        let r = rows.iter().find(|(o, _)| o == op).unwrap_or_else(|| panic!("no {op} in:\n{out}"));
        assert_eq!(r.1.last().map(String::as_str), Some("0"), "{op} failed:\n{out}");
    }
    // a range of 20,000 of 1,000,000 cents over 3,000 rows: about 60 rows, LIMIT 100; an hour
    // of one row a second: 100 (the LIMIT) once the window is inside the loaded span
    let read = out.lines().find(|l| l.contains("rows read:")).unwrap_or_else(|| panic!("{out}"));
    assert!(read.contains("by_amount") && read.contains("recent"), "{read}");
    assert!(!read.contains("by_amount 0.00"), "range reads find rows: {read}");
}

#[test]
fn sai_lookup_says_which_path_is_faster_for_reads_and_for_writes() {
    let _g = shared_load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let path = format!("{}/../../experiments/sai-lookup.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = run(casslab()
        .args([
            "experiment",
            &path,
            "--hosts",
            host,
            "-P",
            "rows=1000",
            "-P",
            "keyspace=casslab_test_sai_lookup",
            "--repetitions",
            "2",
            "--duration",
            "3s",
            "--warmup",
            "1s",
        ])
        .args(["--window", "1s", "--resamples", "500", "--min-windows", "2", "--allow-invalid"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    // every path judged against SAI, for the lookups and for the writes that keep it
    for variant in ["lookup-table", "legacy-index", "filtering"] {
        for figure in ["find p50", "find p99", "add p50", "add p99"] {
            // undecided: "A vs sai, FIGURE: …"; found: "A's FIGURE is N% higher than sai's"
            let (undecided, found) = (format!("{variant} vs sai, {figure}: "), format!("{variant}'s {figure} is "));
            assert!(out.contains(&undecided) || out.contains(&found), "no verdict on {variant}'s {figure}:\n{out}");
        }
    }
    // each lookup finds its user, whatever the path: the paths are compared on the same work
    let reads: Vec<&str> = out.lines().filter(|l| l.contains("rows read: find")).collect();
    assert!(reads.len() >= 8 && reads.iter().all(|l| l.contains("find 1.00 rows per execution, none found nothing")), "{reads:#?}");
}
