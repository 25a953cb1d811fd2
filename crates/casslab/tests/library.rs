//! The workload library and the client access strategies, end to end against the real test
//! node: every library workload runs at a tiny scale; the partition-set experiment runs its
//! six strategies, and each sends the number of statements its strategy implies; batches
//! write the rows they claim (read back); conditional writes count `[applied] = false` as
//! their own outcome and the table holds exactly the rows that were applied; TTLs set in CQL
//! reach the cells.

mod common;
use common::{casslab, node, run, session, shared_load_lock, store_arg, summary_rows, temp_store};
use std::collections::BTreeMap;
use std::path::Path;

/// Per operation of a saved run's run phase (or load phase): (ok, errors).
fn phase_counts(store: &Path, run_id: i64, phase: &str) -> BTreeMap<String, (i64, i64)> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut st = db.prepare("SELECT op, ok, error_count FROM phase_histograms WHERE run_id = ?1 AND phase = ?2").unwrap();
    st.query_map(rusqlite::params![run_id, phase], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?)))).unwrap().map(|r| r.unwrap()).collect()
}

/// `casslab experiment experiments/NAME.yaml` at the tests' tiny scale: one repetition of 2 s
/// per variant, 1 s windows, against `host`, saved in `store`; runs that fell behind on a busy
/// machine are kept (`--allow-invalid`): the comparison's course is what is tested here.
fn tiny_experiment(name: &str, host: &str, concurrency: &str, store: &Path) -> std::process::Command {
    let path = format!("{}/../../experiments/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
    let mut c = casslab();
    c.args(["experiment", &path, "--allow-invalid", "--repetitions", "1", "--duration", "2s", "--warmup", "0s", "--window", "1s"])
        .args(["--resamples", "200", "--min-windows", "2", "--concurrency", concurrency, "--hosts", host])
        .args(store_arg(store));
    c
}

/// The saved runs of an experiment's variants, in run order, with their variant names.
fn variant_runs(store: &Path) -> Vec<(i64, String)> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut q = db.prepare("SELECT run_id, tag FROM run_tags WHERE tag LIKE 'variant=%' ORDER BY run_id").unwrap();
    let rows = q.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).unwrap();
    rows.map(|r| r.map(|(id, tag)| (id, tag.trim_start_matches("variant=").to_string())).unwrap()).collect()
}

fn last_run_id(store: &Path) -> i64 {
    let db = rusqlite::Connection::open(store).unwrap();
    db.query_row("SELECT max(id) FROM runs", [], |r| r.get(0)).unwrap()
}

#[test]
fn every_library_workload_runs() {
    let _g = shared_load_lock();
    let host = node();
    let t0 = std::time::Instant::now();
    let (_d, store) = temp_store();
    for (name, params, ops) in [
        ("user-events", &["users=50", "events=600"][..], &["insert", "read_last", "read_range"][..]),
        ("user-events-bucketed", &["users=50", "events=600"], &["insert", "read_last", "read_range"]),
        ("kv-at-scale", &["rows=300"], &["read", "update"]),
        ("emp", &["rows=200", "row_bytes=600"], &["read", "write"]),
        ("revision-store", &["pages=50", "revisions=300", "max_text_bytes=5000"], &["read_latest", "lookup", "write"]),
    ] {
        let mut cmd = casslab();
        cmd.args(["run", name, "--duration", "2s", "--warmup", "0s", "--concurrency", "8", "--hosts", host]).args(store_arg(&store));
        for p in params {
            cmd.args(["-P", p]);
        }
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{name}: stdout:\n{out}\nstderr:\n{err}");
        let counts = phase_counts(&store, last_run_id(&store), "run");
        for op in ops {
            let (ok, errors) = counts.get(*op).copied().unwrap_or_else(|| panic!("{name}: no figures of {op}:\n{out}"));
            assert!(ok > 0, "{name}: no {op} completed:\n{out}");
            assert_eq!(errors, 0, "{name}: {op} had errors:\n{out}\n{err}");
        }
    }
    // the time series writes its TTL (set in the CQL text) on every event
    let (rt, s) = session(host);
    let ttls: Vec<Option<i32>> = rt.block_on(async {
        let r = s.query_unpaged("SELECT TTL(event_type) FROM casslab_user_events.user_events LIMIT 20", &[]).await.unwrap();
        r.into_rows_result().unwrap().rows::<(Option<i32>,)>().unwrap().map(|r| r.unwrap().0).collect()
    });
    assert!(!ttls.is_empty(), "no events were written");
    assert!(ttls.iter().all(|t| t.is_some_and(|t| t > 0 && t <= 90 * 86_400)), "events without the workload's TTL: {ttls:?}");
    // the bucketed variant's bucket is its event's hour (Cassandra's floor() on the bound time)
    let pairs: Vec<(i64, i64)> = rt.block_on(async {
        let r = s.query_unpaged("SELECT bucket, event_ts FROM casslab_user_events_bucketed.user_events_bucketed LIMIT 50", &[]).await.unwrap();
        r.into_rows_result()
            .unwrap()
            .rows::<(scylla::value::CqlTimestamp, scylla::value::CqlTimestamp)>()
            .unwrap()
            .map(|r| r.map(|(b, t)| (b.0, t.0)).unwrap())
            .collect()
    });
    assert!(!pairs.is_empty(), "no bucketed events were written");
    assert!(pairs.iter().all(|(b, t)| *b == t - t.rem_euclid(3_600_000)), "buckets that are not their event's hour: {pairs:?}");
    eprintln!("every_library_workload_runs: {:.1} s under the load lock", t0.elapsed().as_secs_f64());
}

/// The six strategies of experiments/partition-set.yaml, one repetition each: every variant
/// completes its sets without errors, and sends as many statements per set as its strategy
/// implies (`read_set.request` counts them).
#[test]
fn partition_set_experiment_compares_six_strategies() {
    let _g = shared_load_lock();
    let host = node();
    let t0 = std::time::Instant::now();
    let (_d, store) = temp_store();
    let set_size = 20;
    let chunk = 5;
    let (code, out, err) = run(tiny_experiment("partition-set", host, "4", &store).args([
        "-P",
        "partitions=201",
        "-P",
        &format!("set_size={set_size}"),
        "-P",
        &format!("chunk={chunk}"),
    ]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let runs = variant_runs(&store);
    let names: Vec<&str> = runs.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(names, ["sync", "async", "in", "in-limit", "async-in-limit", "in-by-replica"]);
    for (id, v) in &runs {
        let v = v.as_str();
        let c = phase_counts(&store, *id, "run");
        let (sets, set_errors) = c["read_set"];
        let (requests, request_errors) = c["read_set.request"];
        assert!(sets > 0 && set_errors == 0 && request_errors == 0, "{v}: {c:?}\n{err}");
        // statements per set: one per partition, one IN, one IN per chunk, one IN per replica
        // group (the test node is a single node: one group)
        let per_set = match v {
            "sync" | "async" => set_size,
            "in" | "in-limit" | "in-by-replica" => 1,
            "async-in-limit" => set_size / chunk,
            _ => unreachable!(),
        };
        assert_eq!(requests, sets * per_set, "{v}: {sets} sets sent {requests} statements");
        // every partition holds 50 rows, all of them read (the LIMIT is 50 per partition):
        // a set reads 50 × its partitions that were loaded, and some of them were
        let db = rusqlite::Connection::open(&store).unwrap();
        let (rows, empty): (i64, i64) = db
            .query_row("SELECT rows_read, empty_reads FROM phase_histograms WHERE run_id = ?1 AND phase = 'run' AND op = 'read_set'", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let most = sets * set_size * 50;
        assert!(rows % 50 == 0 && rows <= most && rows >= most * 9 / 10 && empty == 0, "{v}: {sets} sets of {set_size} read {rows} rows, {empty} sets none");
    }
    for v in &names[1..] {
        assert!(out.contains(&format!("{v} against sync")) || out.contains(&format!("{v} vs sync")), "no comparison of {v}:\n{out}");
    }
    assert!(out.contains("read_set.request"), "per-statement figures are compared too:\n{out}");
    eprintln!("partition_set_experiment_compares_six_strategies: {:.1} s under the load lock", t0.elapsed().as_secs_f64());
}

const BATCH_WORKLOAD: &str = r#"
params:
  kind: unlogged
  keyspace: casslab_lib_batch
keyspace: ${keyspace}
schema:
  - CREATE TABLE IF NOT EXISTS rows_by_pk (pk int, ck int, v text, PRIMARY KEY ((pk), ck))
generators:
  pk: { type: int, dist: sequence, min: 0 }
  ck: { type: int, dist: sequence, min: 0 }
  v:  { type: text, size: 20 }
operations:
  write:
    cql: INSERT INTO rows_by_pk (pk, ck, v) VALUES (?, ?, ?)
    args: [pk, ck, v]
    batch: { kind: "${kind}", size: 10 }
    timestamp: client
load:
  op: write
  count: 30
"#;

/// 30 batches of 10 rows: single-partition batches make 30 partitions of 10 rows; unlogged and
/// logged ones 300 partitions of one row. Read back from the table.
#[test]
fn batches_write_their_rows() {
    let _g = shared_load_lock();
    let host = node();
    let t0 = std::time::Instant::now();
    let (d, store) = temp_store();
    let file = d.path().join("batch.yaml");
    std::fs::write(&file, BATCH_WORKLOAD).unwrap();
    let (rt, s) = session(host);
    for (kind, partitions, rows_each) in [("single_partition", 30, 10), ("unlogged", 300, 1), ("logged", 300, 1)] {
        let ks = format!("casslab_lib_batch_{kind}");
        let (code, out, err) = run(casslab()
            .args(["run", file.to_str().unwrap(), "--load-only", "--reload", "--concurrency", "4", "--hosts", host])
            .args(["-P", &format!("kind={kind}"), "-P", &format!("keyspace={ks}")])
            .args(store_arg(&store)));
        assert_eq!(code, 0, "{kind}: stdout:\n{out}\nstderr:\n{err}");
        let c = phase_counts(&store, last_run_id(&store), "load");
        assert_eq!(c["write"], (30, 0), "{kind}: batches sent");
        let per_pk: BTreeMap<i32, i64> = rt.block_on(async {
            let r = s.query_unpaged(format!("SELECT pk, count(*) FROM {ks}.rows_by_pk GROUP BY pk"), &[]).await.unwrap();
            r.into_rows_result().unwrap().rows::<(i32, i64)>().unwrap().map(|r| r.unwrap()).collect()
        });
        assert_eq!(per_pk.len(), partitions, "{kind}: partitions written");
        assert!(per_pk.values().all(|n| *n == rows_each), "{kind}: rows per partition {per_pk:?}");
    }
    eprintln!("batches_write_their_rows: {:.1} s under the load lock", t0.elapsed().as_secs_f64());
}

/// Conditional writes of the emp workload at LOCAL_SERIAL: `register` (IF NOT EXISTS, half of
/// its names already taken) and `transfer` (IF emp_dept = ?). Not-applied writes are counted
/// apart, not as errors, and the table gains exactly one row per applied registration.
#[test]
fn conditional_writes_count_not_applied_apart() {
    let _g = shared_load_lock();
    let host = node();
    let t0 = std::time::Instant::now();
    let (_d, store) = temp_store();
    let rows = 200;
    let ks = "casslab_lib_emp_lwt";
    let (code, out, err) = run(casslab()
        .args(["run", "emp", "--reload", "--duration", "2s", "--warmup", "0s", "--concurrency", "4", "--hosts", host])
        .args(["-P", &format!("rows={rows}"), "-P", "row_bytes=200", "-P", &format!("keyspace={ks}")])
        .args(["-P", "read_ratio=0", "-P", "write_ratio=0", "-P", "register_ratio=3", "-P", "transfer_ratio=1"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let c = phase_counts(&store, last_run_id(&store), "run");
    let (registers, register_errors) = c["register"];
    let (not_registered, _) = c["register.not_applied"];
    let (transfers, transfer_errors) = c["transfer"];
    let (not_transferred, _) = c["transfer.not_applied"];
    assert_eq!((register_errors, transfer_errors), (0, 0), "{c:?}\n{err}");
    assert!(registers > 0 && not_registered > 0 && not_registered < registers, "register: {registers} done, {not_registered} not applied");
    assert!(transfers > 0 && not_transferred > 0 && not_transferred <= transfers, "transfer: {transfers} done, {not_transferred} not applied");
    // the summary shows the not-applied count as its own line
    assert!(summary_rows(&out).iter().any(|(n, _)| n == "register.not_applied"), "{out}");
    let (rt, s) = session(host);
    let total: i64 = rt.block_on(async {
        let r = s.query_unpaged(format!("SELECT count(*) FROM {ks}.emp"), &[]).await.unwrap();
        r.into_rows_result().unwrap().first_row::<(i64,)>().unwrap().0
    });
    assert_eq!(total, rows + (registers - not_registered), "rows = loaded + applied registrations");
    eprintln!("conditional_writes_count_not_applied_apart: {:.1} s under the load lock", t0.elapsed().as_secs_f64());
}

/// experiments/column-count.yaml, one repetition each: ten table layouts of the same bytes,
/// every variant loads all its rows (10 distinct clustering keys per partition, however the
/// key is split: whole partitions written as single-partition batches) and reads whole
/// partitions at its fixed rate without errors.
#[test]
fn column_count_experiment_runs_every_layout() {
    let _g = shared_load_lock();
    let host = node();
    let t0 = std::time::Instant::now();
    let (_d, store) = temp_store();
    let partitions = 51;
    let (code, out, err) = run(tiny_experiment("column-count", host, "8", &store).args(["-P", &format!("partitions={partitions}")]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let runs = variant_runs(&store);
    let variants: Vec<&str> = runs.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(
        variants,
        ["values-1x512", "values-2x256", "values-4x128", "values-8x64", "values-16x32", "values-32x16", "ckey-2x32", "ckey-4x16", "ckey-8x8", "ckey-16x4"]
    );
    let (rt, s) = session(host);
    for ((id, _), v) in runs.iter().zip(&variants) {
        let (reads, errors) = phase_counts(&store, *id, "run")["read_partition"];
        assert!(reads > 0 && errors == 0, "{v}: {reads} reads, {errors} errors");
        let (values, keys) = match v.split_once('-').unwrap() {
            ("values", x) => (x.split_once('x').unwrap().0.parse::<u32>().unwrap(), 1),
            (_, x) => (1, x.split_once('x').unwrap().0.parse::<u32>().unwrap()),
        };
        let ks = "casslab_column_count";
        let rows: i64 = rt.block_on(async {
            let r = s.query_unpaged(format!("SELECT count(*) FROM {ks}.cc_v{values}_k{keys}"), &[]).await.unwrap();
            r.into_rows_result().unwrap().first_row::<(i64,)>().unwrap().0
        });
        assert_eq!(rows, partitions * 10, "{v}: rows loaded into {ks}");
    }
    eprintln!("column_count_experiment_runs_every_layout: {:.1} s under the load lock", t0.elapsed().as_secs_f64());
}
