//! End-to-end tests of `casslab import`: cassandra-stress profiles of our own (together every
//! feature of the format) imported, linted, loaded and run against the real local node, with
//! the written rows read back over CQL and checked against what each profile declares
//! (partition sizes, value sizes within their distributions' bounds, the insert's select
//! ratio); the translation of a command line; a live keyspace made here, imported with its
//! sampled shapes; and captured traffic replayed with its mix and counts.

mod common;

use common::*;
use scylla::value::{CqlValue, Row};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// Imports a profile into `dir` and returns the workload's path.
fn import_stress(dir: &Path, profile: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(format!("{profile}.casslab.yaml"));
    let p = data(&format!("stress/{profile}.yaml"));
    let (code, stdout, stderr) = run(casslab().args(["import", "cassandra-stress", p.to_str().unwrap(), "-o", out.to_str().unwrap()]).args(extra));
    assert_eq!(code, 0, "import failed:\n{stdout}\n{stderr}");
    out
}

/// `casslab lint` passes (no errors), then the load runs into a fresh keyspace (the one the
/// test names with `-P keyspace=…`, dropped first: only this test writes it).
fn lint_and_load(workload: &Path, store: &Path, params: &[&str]) {
    let w = workload.to_str().unwrap();
    let ks = params.iter().find_map(|p| p.strip_prefix("keyspace=")).expect("a keyspace of the test's own");
    let (rt, s) = session(node());
    rt.block_on(s.query_unpaged(format!("DROP KEYSPACE IF EXISTS {ks}"), &[])).unwrap();
    let p_args = param_args(params);
    let (code, out, err) = run(casslab().args(["lint", w]).args(&p_args));
    assert_eq!(code, 0, "lint found errors:\n{out}\n{err}");
    let host = node();
    let _g = shared_load_lock();
    let (code, out, err) =
        run(casslab().args(["run", w, "--hosts", host, "--load-only", "--no-server-metrics", "--no-lint"]).args(store_arg(store)).args(&p_args));
    assert_eq!(code, 0, "load failed:\n{out}\n{err}");
}

/// A short run of the workload's mix on the loaded data, without errors; its summary.
fn run_mix(workload: &Path, store: &Path, params: &[&str]) -> String {
    let host = node();
    let _g = shared_load_lock();
    let (code, out, err) = run(casslab()
        .args([
            "run",
            workload.to_str().unwrap(),
            "--hosts",
            host,
            "--skip-load",
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--no-server-metrics",
            "--no-lint",
            "--concurrency",
            "16",
        ])
        .args(store_arg(store))
        .args(param_args(params)));
    assert_eq!(code, 0, "run failed:\n{out}\n{err}");
    assert_eq!(summary_row(&summary_rows(&out), "total")[8], "0", "the run had errors:\n{out}");
    out
}

fn param_args<'a>(params: &[&'a str]) -> Vec<&'a str> {
    params.iter().flat_map(|p| ["-P", *p]).collect()
}

fn rows(cql: &str) -> Vec<Vec<Option<CqlValue>>> {
    let (rt, s) = session(node());
    rt.block_on(async {
        let r = s.query_unpaged(cql, &[]).await.unwrap_or_else(|e| panic!("{cql}: {e}"));
        r.into_rows_result().unwrap().rows::<Row>().unwrap().map(|r| r.unwrap().columns).collect()
    })
}

fn text(v: &Option<CqlValue>) -> String {
    match v {
        Some(CqlValue::Text(s)) | Some(CqlValue::Ascii(s)) => s.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

fn int(v: &Option<CqlValue>) -> i64 {
    match v {
        Some(CqlValue::Int(n)) => *n as i64,
        Some(CqlValue::BigInt(n)) => *n,
        Some(CqlValue::SmallInt(n)) => *n as i64,
        Some(CqlValue::TinyInt(n)) => *n as i64,
        Some(CqlValue::Counter(c)) => c.0,
        Some(CqlValue::Float(f)) => *f as i64,
        other => panic!("expected a number, got {other:?}"),
    }
}

fn len(v: &Option<CqlValue>) -> usize {
    match v {
        Some(CqlValue::Text(s)) => s.chars().count(),
        Some(CqlValue::Blob(b)) => b.len(),
        Some(CqlValue::Set(l)) | Some(CqlValue::List(l)) => l.len(),
        Some(CqlValue::Map(m)) => m.len(),
        None => 0,
        other => panic!("expected a sized value, got {other:?}"),
    }
}

/// Rows per partition, keyed by the partition's key as text.
fn partition_sizes(rows: &[Vec<Option<CqlValue>>], key_columns: usize) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in rows {
        *m.entry(format!("{:?}", &r[..key_columns])).or_insert(0) += 1;
    }
    m
}

#[test]
fn a_time_series_profile_writes_a_drawn_half_of_each_partition_in_its_declared_shape() {
    let dir = tempfile::tempdir().unwrap();
    let (_s, store) = temp_store();
    let w = import_stress(dir.path(), "timeline", &[]);
    let yaml = std::fs::read_to_string(&w).unwrap();
    assert!(yaml.contains("counts: { ck_day: 4, ck_ts: { dist: uniform, min: 5, max: 16 } }"), "{yaml}");
    let params = ["partitions=40", "keyspace=imp_timeline"];
    lint_and_load(&w, &store, &params);
    let r = rows("SELECT sensor, day, ts, payload, note, tags FROM imp_timeline.readings");
    let sizes = partition_sizes(&r, 1);
    assert_eq!(sizes.len(), 40, "partitions=40");
    let mut days: BTreeMap<(String, i64), usize> = BTreeMap::new();
    for row in &r {
        assert_eq!(len(&row[0]), 12, "sensor size fixed(12)");
        assert!((10..=200).contains(&len(&row[3])), "payload size exp(10..200): {}", len(&row[3]));
        assert!((8..=16).contains(&len(&row[4])), "note size uniform(8..16): {}", len(&row[4]));
        assert!((1..=4).contains(&len(&row[5])), "tags size uniform(1..4): {}", len(&row[5]));
        *days.entry((text(&row[0]), int(&row[1]))).or_insert(0) += 1;
    }
    // select fixed(1)/2 takes each of a partition's 4 days with chance 1/2 (the last when none
    // was), and all of a taken day's uniform(5..15) readings
    assert!(days.values().all(|n| (5..=15).contains(n)), "a day's readings: {days:?}");
    let per_partition: BTreeMap<&String, usize> = days.keys().fold(BTreeMap::new(), |mut m, (s, _)| {
        *m.entry(s).or_insert(0) += 1;
        m
    });
    assert!(per_partition.values().all(|d| (1..=4).contains(d)), "{per_partition:?}");
    let mean_days = per_partition.values().sum::<usize>() as f64 / per_partition.len() as f64;
    assert!((1.6..=2.6).contains(&mean_days), "about 2.06 days a partition (1/2 each, the last when none): {mean_days}");
    let notes: std::collections::BTreeSet<String> = r.iter().map(|row| text(&row[4])).collect();
    assert!(notes.len() <= 50, "note population ~uniform(1..50): {} distinct", notes.len());

    let out = run_mix(&w, &store, &params);
    for op in ["by_day", "latest", "scan", "all_rows", "insert"] {
        assert!(summary_row(&summary_rows(&out), op)[0].parse::<u64>().unwrap() > 0, "{op} did not run:\n{out}");
    }
    assert!(out.contains("by_day") && out.contains("latest"), "{out}");
}

#[test]
fn a_profile_of_two_key_columns_writes_three_partitions_per_logged_batch_within_its_distributions() {
    let dir = tempfile::tempdir().unwrap();
    let (_s, store) = temp_store();
    let w = import_stress(dir.path(), "accounts", &[]);
    let yaml = std::fs::read_to_string(&w).unwrap();
    assert!(yaml.contains("partitions: 3") && yaml.contains("kind: logged") && yaml.contains("count: \"${partitions / 3}\""), "{yaml}");
    assert!(yaml.lines().filter(|l| l.contains("CREATE TABLE")).all(|l| !l.split('#').next().unwrap().contains("COMPACT")), "{yaml}");
    let params = ["partitions=96", "keyspace=imp_accounts"];
    lint_and_load(&w, &store, &params);

    let r = rows("SELECT region, id, balance, score, visits, flags, origin, history, prefs FROM imp_accounts.accounts");
    assert!((94..=96).contains(&r.len()), "one row per partition, 96 seeds: {}", r.len());
    let regions: std::collections::BTreeSet<String> = r.iter().map(|row| text(&row[0])).collect();
    assert_eq!(regions.len(), 8, "region population uniform(1..8)");
    assert!(regions.iter().all(|g| g.len() == 2), "region size fixed(2)");
    for row in &r {
        assert!((1..=100_000).contains(&int(&row[2])), "balance extreme(1..100000,1.5)");
        assert!((1..=1000).contains(&int(&row[3])), "score qextreme(1..1000,0.8,10)");
        assert!((1..=1000).contains(&int(&row[4])), "visits ~exp(1..1000)");
        assert!((0..=100).contains(&int(&row[5])), "flags normal(0..100,10,5)");
        assert_eq!(len(&row[7]), 3, "history size fixed(3)");
        assert!((1..=6).contains(&len(&row[8])), "prefs size gauss(1..6,2): {}", len(&row[8]));
    }
    // ~exp(1..1000) piles up near 1000: most visits are in the upper half
    let high = r.iter().filter(|row| int(&row[4]) > 500).count();
    assert!(high > r.len() / 2, "inverted exponential: {high} of {} above 500", r.len());

    let out = run_mix(&w, &store, &params);
    assert!(out.contains("lookup 1.00 rows per execution, none found nothing"), "{out}");
    assert!(summary_row(&summary_rows(&out), "debit")[0].parse::<u64>().unwrap() > 0, "{out}");
}

#[test]
fn a_key_only_profile_and_a_counter_profile_write_whole_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let (_s, store) = temp_store();
    let w = import_stress(dir.path(), "follows", &[]);
    let params = ["partitions=25", "keyspace=imp_follows"];
    lint_and_load(&w, &store, &params);
    let r = rows("SELECT user_id, follower_id, since FROM imp_follows.follows");
    let sizes = partition_sizes(&r, 1);
    // cluster gaussian(10..30) drawn per partition × fixed(2)
    assert_eq!(sizes.len(), 25, "{sizes:?}");
    assert!(sizes.values().all(|n| n % 2 == 0 && (20..=60).contains(n)), "{sizes:?}");
    assert!(sizes.values().collect::<std::collections::BTreeSet<_>>().len() > 1, "partition sizes are drawn, not the mean: {sizes:?}");
    assert!(run_mix(&w, &store, &params).contains("none found nothing"));

    let w = import_stress(dir.path(), "visits", &[]);
    assert!(std::fs::read_to_string(&w).unwrap().contains("count: \"${partitions}\""));
    lint_and_load(&w, &store, &["partitions=20", "keyspace=imp_visits"]);
    let r = rows("SELECT page, day, hits, bytes FROM imp_visits.visits");
    let sizes = partition_sizes(&r, 1);
    assert_eq!((sizes.len(), sizes.values().all(|n| *n == 7)), (20, true), "cluster fixed(7): {sizes:?}");
    for row in &r {
        assert!((5..=20).contains(&len(&row[0])), "page size uniform(5..20)");
        assert_eq!(int(&row[2]), 1, "hits incremented once by fixed(1)");
        assert!((100..=5000).contains(&int(&row[3])), "bytes incremented once by uniform(100..5000)");
    }
}

#[test]
fn a_command_line_becomes_run_options_and_its_mix() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.yaml");
    let p = data("stress/timeline.yaml");
    let line = format!("cassandra-stress user profile={} ops(insert=1,by_day=2,latest=2) duration=90s cl=QUORUM no-warmup -rate threads=16 fixed=800/s -node 127.0.0.1 -mode native cql3 user=bench password=hunter2 -log file=x.log", p.display());
    let (code, stdout, stderr) = run(casslab().args(["import", "cassandra-stress", "--command", &line, "-o", out.to_str().unwrap(), "--print-command"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), format!("casslab run {} --duration 90s --warmup 0s --concurrency 16 --rate 800 --hosts 127.0.0.1 --user bench", out.display()));
    assert!(stderr.contains("warning: --command: -log") && stderr.contains("CASSLAB_PASSWORD"), "{stderr}");
    assert!(!stdout.contains("hunter2") && !stderr.contains("hunter2"));
    let yaml = std::fs::read_to_string(&out).unwrap();
    assert!(yaml.contains("run: { mix: { insert: 1, by_day: 2, latest: 2 }, warmup: 0s, duration: 90s }"), "{yaml}");
    assert!(yaml.contains("consistency: QUORUM") && yaml.contains("consistency: ONE"), "cl= and the query's own consistencyLevel");
    // the printed command line parses as a casslab command
    let (code, _, err) = run(casslab().args(["run", out.to_str().unwrap(), "--duration", "90s", "--rate", "800", "--help"]));
    assert_eq!(code, 0, "{err}");
    // a mistake in the profile says where
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "keyspace: ks\ntable: t\ntable_definition: CREATE TABLE t (k int PRIMARY KEY)\ncolumnspec:\n  - name: k\n    population: zipf(1..10)\n",
    )
    .unwrap();
    let (code, _, err) = run(casslab().args(["import", "cassandra-stress", bad.to_str().unwrap()]));
    assert_eq!(code, 2);
    assert!(err.contains("bad.yaml:6: columnspec `population`: \"zipf(1..10)\": unknown distribution"), "{err}");
}

#[test]
fn n_of_a_mixed_command_line_becomes_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.yaml");
    let line = format!("user profile={} ops(insert=1,latest=3) n=20000 -rate threads=8", data("stress/timeline.yaml").display());
    let (code, stdout, stderr) = run(casslab().args(["import", "cassandra-stress", "--command", &line, "-o", out.to_str().unwrap(), "--print-command"]));
    assert_eq!(code, 0, "{stderr}");
    let words: Vec<&str> = stdout.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "--count").unwrap_or_else(|| panic!("{stdout}"));
    let count: u64 = words[at + 1].parse().unwrap();
    assert!((1..=20_000).contains(&count), "n= counts partitions, --count operations: {stdout}");
    let yaml = std::fs::read_to_string(&out).unwrap();
    assert!(yaml.contains(&format!("# n=20000: run it with --count {count}")), "{yaml}");
    // the printed command line parses as a casslab command
    let (code, _, err) = run(casslab().args(["run", out.to_str().unwrap(), "--count", &count.to_string(), "--help"]));
    assert_eq!(code, 0, "{err}");
}

/// A keyspace of the test's own: orders (8 per customer, a minute apart, newest first, a
/// user-defined type, a set, a column null in half the rows) and customers (a map, a column of
/// three values).
fn make_shop(ks: &str) {
    let (rt, s) = session(node());
    rt.block_on(async {
        for cql in [
            format!("DROP KEYSPACE IF EXISTS {ks}"),
            format!("CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"),
            format!("CREATE TYPE {ks}.address (street text, zip int)"),
            format!("CREATE TABLE {ks}.orders (customer text, placed timestamp, item text, qty int, note text, tags set<text>, ship frozen<address>, PRIMARY KEY (customer, placed)) WITH CLUSTERING ORDER BY (placed DESC)"),
            format!("CREATE TABLE {ks}.customers (id int PRIMARY KEY, name text, tier text, prefs map<text, int>)"),
            format!("CREATE INDEX customers_tier ON {ks}.customers (tier)"),
        ] {
            s.query_unpaged(cql, &[]).await.unwrap();
        }
        let order = s.prepare(format!("INSERT INTO {ks}.orders (customer, placed, item, qty, note, tags, ship) VALUES (?, ?, ?, ?, ?, {{'tagone', 'tagtwo'}}, {{street: 'Main', zip: 1000}})")).await.unwrap();
        let customer = s.prepare(format!("INSERT INTO {ks}.customers (id, name, tier, prefs) VALUES (?, ?, ?, {{'a': 1, 'b': 2, 'c': 3}})")).await.unwrap();
        for c in 0..30i32 {
            let name = format!("customer{c:04}");
            for o in 0..8i64 {
                let item = "x".repeat(10 + ((c as usize + o as usize) % 11));
                let note: Option<&str> = if o % 2 == 0 { Some("leave at the door") } else { None };
                let placed = scylla::value::CqlTimestamp(1_700_000_000_000 + o * 60_000);
                s.execute_unpaged(&order, (&name, placed, &item, (o % 5 + 1) as i32, note)).await.unwrap();
            }
            let tier = ["gold", "silver", "bronze"][c as usize % 3];
            s.execute_unpaged(&customer, (c, &name, tier)).await.unwrap();
        }
    });
}

#[test]
fn a_live_keyspace_is_imported_with_the_shapes_of_its_data() {
    let ks = "imp_shop";
    make_shop(ks);
    let dir = tempfile::tempdir().unwrap();
    let (_s, store) = temp_store();
    let w = dir.path().join("shop.yaml");
    let (code, out, err) = run(casslab().args(["import", "cluster", "--hosts", node(), "--keyspace", ks, "--sample-rows", "500", "-o", w.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("orders: sampled 240 rows") && err.contains("8.0 rows per partition (max 8), clustering step 60000"), "what it measured:\n{err}");
    assert!(err.contains("customers: sampled 30 rows"), "{err}");
    assert!(err.contains("guessed:"), "what it guessed:\n{err}");
    let yaml = std::fs::read_to_string(&w).unwrap();
    for expected in [
        "CREATE TYPE IF NOT EXISTS address (street text, zip int)",
        "WITH CLUSTERING ORDER BY (placed DESC)",
        "CREATE INDEX IF NOT EXISTS customers_tier ON customers (tier)",
        "orders_placed: { type: timestamp, dist: sequence, max: 8, start: 1700000000000, step_ms: 60000 }",
        "orders_qty: { type: int, min: 1, max: 6 }",
        "size: { dist: uniform, min: 10, max: 21 }",
        "null in 50% of the sample",
        "orders_tags: { type: \"set<text>\", size: 2, element: { size: 6 } }",
        "customers_tier: { type: text, max: 3, size: { dist: uniform, min: 4, max: 7 } }",
        "customers_prefs: { type: \"map<text,int>\", size: 3, key: { size: 1 } }",
    ] {
        assert!(yaml.contains(expected), "expected {expected:?} in:\n{yaml}");
    }
    // the import runs; the data it loads has the sampled shapes
    let params = ["rows=400", "keyspace=imp_shop_copy"];
    lint_and_load(&w, &store, &params);
    let r = rows("SELECT customer, placed, item, tags FROM imp_shop_copy.orders");
    let sizes = partition_sizes(&r, 1);
    assert_eq!((sizes.len(), sizes.values().all(|n| *n == 8)), (50, true), "400 rows in partitions of 8: {sizes:?}");
    for row in &r {
        assert!((10..=20).contains(&len(&row[2])), "item size");
        assert_eq!(len(&row[3]), 2, "two tags");
    }
    let out = run_mix(&w, &store, &params);
    for op in ["orders_point", "orders_partition", "orders_slice", "customers_point"] {
        assert!(out.contains(&format!("{op} ")), "{op} ran:\n{out}");
    }
    assert!(out.contains("orders_point 1.00 rows per execution, none found nothing") && out.contains("orders_partition 8.00 rows per execution"), "{out}");
}

/// Turns the node's full query log off when dropped (a failed test leaves it off too).
struct FullQueryLog;

impl FullQueryLog {
    fn enable(dir: &Path) -> FullQueryLog {
        let (code, out, err) =
            run(casslab().args(["local", "nodetool", node_addr(), "enablefullquerylog", "--path", dir.to_str().unwrap(), "--blocking", "true"]));
        assert_eq!(code, 0, "enablefullquerylog:\n{out}\n{err}");
        FullQueryLog
    }
}

impl Drop for FullQueryLog {
    fn drop(&mut self) {
        let _ = run(casslab().args(["local", "nodetool", node_addr(), "disablefullquerylog"]));
    }
}

#[test]
fn a_full_query_log_made_here_is_replayed_with_its_mix_and_counts() {
    let host = node();
    let _g = shared_load_lock();
    let (rt, s) = session(host);
    rt.block_on(async {
        for cql in [
            "DROP KEYSPACE IF EXISTS imp_cap",
            "CREATE KEYSPACE imp_cap WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            "CREATE TABLE imp_cap.kv (k int, c text, v bigint, PRIMARY KEY (k, c))",
        ] {
            s.query_unpaged(cql, &[]).await.unwrap();
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let fql = dir.path().join("fql");
    std::fs::create_dir_all(&fql).unwrap();
    let log = FullQueryLog::enable(&fql);
    // the traffic: 30 inserts, 60 reads (every other one of a missing row), 10 updates
    rt.block_on(async {
        let ins = s.prepare("INSERT INTO imp_cap.kv (k, c, v) VALUES (?, ?, ?)").await.unwrap();
        let get = s.prepare("SELECT v FROM imp_cap.kv WHERE k = ? AND c = ?").await.unwrap();
        let upd = s.prepare("UPDATE imp_cap.kv SET v = ? WHERE k = ? AND c = ?").await.unwrap();
        for i in 0..30i32 {
            s.execute_unpaged(&ins, (i, format!("c{i}"), i as i64 * 1000)).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        for i in 0..60i32 {
            let k = if i % 2 == 0 { i / 2 } else { 1000 + i };
            s.execute_unpaged(&get, (k, format!("c{k}"))).await.unwrap();
            if i % 6 == 0 {
                s.execute_unpaged(&upd, (-1i64, i / 6, format!("c{}", i / 6))).await.unwrap();
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    drop(log);
    let w = dir.path().join("replay.yaml");
    let (code, out, err) =
        run(casslab().args(["import", "capture", fql.to_str().unwrap(), "--keyspace", "imp_cap", "--hosts", host, "-o", w.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("100 queries of 3 statements"), "{err}");
    let yaml = std::fs::read_to_string(&w).unwrap();
    assert!(yaml.contains("mix: { q1: 30, q2: 60, q3: 10 }"), "{yaml}");
    assert!(yaml.contains("q1_v0: { type: int, dist: sequence, values: [\"0x00000000\", \"0x00000001\""), "values as captured, typed from the schema:\n{yaml}");
    let (code, out, err) = run(casslab().args(["lint", w.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");

    // replayed on a table emptied first: the same writes and reads, in the captured order
    rt.block_on(s.query_unpaged("TRUNCATE imp_cap.kv", &[])).unwrap();
    let (_s, store) = temp_store();
    let (code, out, err) = run(casslab().args(["run", w.to_str().unwrap(), "--hosts", host, "--no-server-metrics", "--no-lint"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = summary_rows(&out);
    for (op, count) in [("q1", "30"), ("q2", "60"), ("q3", "10"), ("total", "100")] {
        assert_eq!(summary_row(&rows, op)[0], count, "{op}:\n{out}");
        assert_eq!(summary_row(&rows, op)[8], "0", "errors of {op}:\n{out}");
    }
    assert!(out.contains("q2 0.50 rows per execution, 30 of 60 (50%) found nothing"), "the reads find what the replayed inserts wrote:\n{out}");
    assert!(out.contains("run at fixed rate") && out.contains("service time (from actual send)"), "open loop at the schedule's mean rate:\n{out}");
    let r = self::rows("SELECT k, v FROM imp_cap.kv");
    assert_eq!(r.len(), 30);
    assert_eq!(r.iter().filter(|row| int(&row[1]) == -1).count(), 10, "the 10 updates replayed");
}

#[test]
fn a_json_lines_capture_replays_twice_as_fast_with_types_inferred() {
    let host = node();
    let _g = shared_load_lock();
    let (rt, s) = session(host);
    rt.block_on(async {
        for cql in [
            "DROP KEYSPACE IF EXISTS imp_cap2",
            "CREATE KEYSPACE imp_cap2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            "CREATE TABLE imp_cap2.users (id int PRIMARY KEY, name text, active boolean)",
        ] {
            s.query_unpaged(cql, &[]).await.unwrap();
        }
    });
    // 20 writes then 40 reads, 10 ms apart, as an application's log would record them
    let mut lines = Vec::new();
    for i in 0..60 {
        let t = 1_700_000_000_000u64 + i * 10;
        lines.push(if i < 20 {
            format!(
                r#"{{"t_ms": {t}, "keyspace": "imp_cap2", "query": "INSERT INTO users (id, name, active) VALUES (?, ?, ?)", "values": [{i}, "user{i}", {}]}}"#,
                i % 2 == 0
            )
        } else {
            format!(r#"{{"t_ms": {t}, "keyspace": "imp_cap2", "query": "SELECT name FROM users WHERE id = ?", "values": [{}]}}"#, i % 20)
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("app.jsonl");
    std::fs::write(&capture, lines.join("\n")).unwrap();
    let w = dir.path().join("replay.yaml");
    let (code, out, err) = run(casslab().args(["import", "capture", capture.to_str().unwrap(), "--speed", "2", "-o", w.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("inferred from the values"), "{err}");
    let yaml = std::fs::read_to_string(&w).unwrap();
    assert!(yaml.contains("at_ms: [0, 5, 10,") && yaml.contains(", 295]"), "60 queries 10 ms apart at twice the speed:\n{yaml}");
    let (_s, store) = temp_store();
    let (code, out, err) = run(casslab().args(["run", w.to_str().unwrap(), "--hosts", host, "--no-server-metrics"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = summary_rows(&out);
    assert_eq!(
        (summary_row(&rows, "q1")[0].as_str(), summary_row(&rows, "q2")[0].as_str(), summary_row(&rows, "total")[8].as_str()),
        ("20", "40", "0"),
        "{out}"
    );
    assert!(out.contains("q2 1.00 rows per execution, none found nothing"), "{out}");
    let r = self::rows("SELECT id, name, active FROM imp_cap2.users");
    assert_eq!(r.len(), 20);
    assert!(r.iter().all(|row| text(&row[1]) == format!("user{}", int(&row[0]))), "each row as captured");
}
