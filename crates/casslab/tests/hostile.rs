//! The inputs of issue 36, tried as a careless or hostile user would, through the real binary:
//! each ends with a clear error (file:line where a file is involved, the limit and the fix where
//! a limit applies), exit 2 before anything connects, and nothing is lost. Most need no server
//! (a run aimed at `--hosts 127.0.0.1:1`, where nothing listens, shows that it was refused
//! before connecting); three run against the real test node: a finished run is saved before a
//! damaged profile file is read, a closed pipe ends an experiment without a panic, and
//! cassandra-stress's own LWT profile (replication factor 3) runs on one node without
//! casslab's bookkeeping failing it. The cases the library's unit tests hold (merge exports,
//! workers that panic, a truncated recording) are named there.

mod common;
use common::{casslab, node, run, shared_load_lock, temp_store};
use std::path::Path;
use std::process::Stdio;

const NOWHERE: &str = "127.0.0.1:1";

/// A file in `dir` holding `body`.
fn file(dir: &Path, name: &str, body: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

/// Runs casslab with `args`; asserts it refused the input (exit 2) with every one of `says`.
fn refused(args: &[&str], says: &[&str]) -> String {
    let (code, out, err) = run(casslab().args(args));
    assert_eq!(code, 2, "{args:?} should be refused as bad input\nstdout: {out}\nstderr: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: the error should say {s:?}:\n{err}");
    }
    err
}

#[test]
fn rate_schedules_are_refused_before_any_level_is_made() {
    for (rate, says) in [
        ("steps 0..1e300 by 1 each 1s", "1.0e300 levels is more than a schedule may have (10000)"),
        ("steps 1..2 by 1e-300 each 1s", "1.0e300 levels is more than a schedule may have (10000)"),
        ("steps 0..1e9 by 0.001 each 1s", "1.0e12 levels is more than a schedule may have (10000)"),
        ("steps 0..5e7 by 1 each 1s", "50000001 levels is more than a schedule may have (10000)"),
    ] {
        refused(&["run", "kv", "--hosts", NOWHERE, "--rate", rate], &[says, "make the step `by` larger"]);
    }
}

#[test]
fn requests_in_flight_have_one_bound_on_the_command_line_in_files_and_in_imports() {
    refused(&["run", "kv", "--hosts", NOWHERE, "-c", "99999999999"], &["--concurrency 99999999999", "at most 100000", "--shard 0/N"]);
    // a schedule's level of 0 gets the answer a plain 0 gets
    refused(&["run", "kv", "--hosts", NOWHERE, "-c", "0"], &["0 requests in flight: give at least 1"]);
    refused(&["run", "kv", "--hosts", NOWHERE, "-c", "0 for 5s, 8"], &["a level of 0 requests in flight runs nothing"]);
    let dir = tempfile::tempdir().unwrap();
    let w = file(dir.path(), "w.yaml", b"name: w\nkeyspace: casslab_w\noperations:\n  r: { cql: SELECT release_version FROM system.local }\nrun:\n  mix: { r: 1 }\n  duration: 5s\n  concurrency: 0 for 5s, 8\n");
    refused(&["run", &w, "--hosts", NOWHERE], &["w.yaml:8: run.concurrency", "a level of 0 requests in flight"]);
    let stress = format!("{}/tests/data/stress/apache-example.yaml", env!("CARGO_MANIFEST_DIR"));
    refused(
        &["import", "cassandra-stress", &stress, "--command", "user ops(insert=1) -rate threads=-5"],
        &["-rate threads=-5: -5 requests in flight: give at least 1"],
    );
}

#[test]
fn a_profile_file_whose_chunks_the_file_cannot_hold_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    for (size, says) in [(1i64 << 62, "declares 4611686018427387904 bytes, but the file holds 76"), (-1, "declares -1 bytes")] {
        let mut jfr = b"FLR\0\x00\x02\x00\x00".to_vec();
        for w in [size, 70, 72, 0, 0, 0, 1_000_000_000] {
            jfr.extend(w.to_be_bytes());
        }
        jfr.resize(76, 0);
        let f = file(dir.path(), "F.jfr", &jfr);
        let spec = format!("node1={f}");
        refused(&["run", "kv", "--hosts", NOWHERE, "--profile-file", &spec], &["--profile-file node1=", "F.jfr: a damaged Java Flight Recorder file", says]);
    }
}

#[test]
fn cassandra_stress_command_lines_that_cannot_run_are_refused() {
    let stress = format!("{}/tests/data/stress/apache-example.yaml", env!("CARGO_MANIFEST_DIR"));
    let import = |command: &str, says: &[&str]| refused(&["import", "cassandra-stress", &stress, "--command", command], says);
    import("user ops(insert=-1,simple1=1)", &["the ratio of insert is -1; give a number ≥ 0"]);
    import("user ops(insert=NaN,simple1=1)", &["the ratio of insert is NaN"]);
    import("user ops(insert=0,simple1=0)", &["every ratio is 0, so nothing would run"]);
    import(
        "user ops(insert=1,simpel1=3)",
        &["apache-example.yaml: --command ops(simpel1=…): the profile has no operation \"simpel1\"", "did you mean \"simple1\"", "insert, simple1"],
    );
    import("user ops(insert=1,simple1=1", &["`ops(` is not closed"]);
    import("user ops(insert=1) -pop seq=10..1", &["-pop seq=10..1: the seeds run from A up to B"]);
    // a valid -pop seq makes a workload its own lint passes
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("seq.yaml");
    let (code, _, err) =
        run(casslab().args(["import", "cassandra-stress", &stress, "--command", "user ops(insert=1,simple1=1) -pop seq=1..10", "-o", out.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let (code, out_text, err) = run(casslab().args(["lint", out.to_str().unwrap()]));
    assert_eq!(code, 0, "the imported workload fails its own lint:\n{out_text}\n{err}");
    assert!(err.contains("lint: 0 errors"), "{err}");
}

#[test]
fn cassandra_stress_profiles_with_values_that_would_be_ignored_or_empty_are_refused_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let head = "keyspace: ks\ntable: t\ntable_definition: CREATE TABLE t (k text PRIMARY KEY, v text)\n";
    for (body, says) in [
        ("columnspec:\n  - name: k\n    size: fixed(-3)\n", "p.yaml:6: columnspec `size`: \"fixed(-3)\" reaches -3: sizes are at least 1"),
        ("insert:\n  partitions: fixed(-5)\n", "p.yaml:5: insert partitions: \"fixed(-5)\" reaches -5: partitions per insert are at least 1"),
        ("columnspec: 5\n", "p.yaml:4: `columnspec` must be a list"),
        ("queries:\n  q:\n    cql: select * from t where k = ?\n    fields: [samerow]\n", "p.yaml:7: query `q`: fields must be samerow or multirow, one word"),
        ("queries:\n  q:\n    cql: select * from t where k = ?; DROP KEYSPACE system_auth\n", "p.yaml:6: query `q` holds more than one statement"),
    ] {
        let p = file(dir.path(), "p.yaml", format!("{head}{body}").as_bytes());
        refused(&["import", "cassandra-stress", &p], &[says]);
    }
    // the same statement in a workload of its own is refused by lint and by run
    let w = file(dir.path(), "w.yaml", b"name: w\nkeyspace: casslab_w\noperations:\n  r:\n    cql: SELECT release_version FROM system.local; DROP KEYSPACE system_auth\nrun:\n  mix: { r: 1 }\n  duration: 5s\n");
    refused(&["lint", &w], &["w.yaml:5: operation \"r\": its statement holds more than one"]);
    refused(&["run", &w, "--hosts", NOWHERE], &["w.yaml:5: operation \"r\": its statement holds more than one"]);
}

#[test]
fn captures_beyond_any_clock_or_a_year_of_replay_are_refused_with_their_file() {
    let dir = tempfile::tempdir().unwrap();
    let line = |t: &str| format!("{{\"t_ms\": {t}, \"keyspace\": \"ks\", \"query\": \"SELECT v FROM t WHERE k = 1\"}}\n");
    let c = file(dir.path(), "c.jsonl", format!("{}{}", line("0"), line("2000")).as_bytes());
    refused(
        &["import", "capture", &c, "--speed", "1e-300"],
        &["c.jsonl: the capture spans 2.000 s", "longer than a run may last (a year)", "give a larger --speed"],
    );
    refused(&["import", "capture", &c, "--speed", "-1"], &["--speed -1: a factor above 0"]);
    for t in ["1e308", "-1e308"] {
        let far = file(dir.path(), "far.jsonl", format!("{}{}", line("0"), line(t)).as_bytes());
        refused(&["import", "capture", &far], &["far.jsonl:2: t_ms", "is not a time"]);
    }
    // a value only the schema can type names the file and the line, not an empty name
    let bytes = file(dir.path(), "b.jsonl", b"{\"t_ms\": 0, \"keyspace\": \"ks\", \"query\": \"SELECT v FROM t WHERE k = ?\", \"values\": [\"0x01\"]}\n");
    let err = refused(&["import", "capture", &bytes], &["b.jsonl:1: SELECT v FROM t WHERE k = ?"]);
    assert!(!err.contains("error: : "), "{err}");
    // a directory of random bytes is no full query log, said before any JVM starts
    let fql = dir.path().join("fql");
    std::fs::create_dir(&fql).unwrap();
    file(&fql, "noise.bin", &[0x5a; 4096]);
    refused(&["import", "capture", fql.to_str().unwrap()], &["is not a full query log: it holds no Chronicle Queue file (*.cq4)"]);
}

#[test]
fn a_cluster_block_gets_the_answers_the_flags_get() {
    let dir = tempfile::tempdir().unwrap();
    let workload = |cluster: &str| {
        let body = format!("name: w\nkeyspace: casslab_w\ncluster:\n{cluster}operations:\n  r: {{ cql: SELECT release_version FROM system.local }}\nrun:\n  mix: {{ r: 1 }}\n  duration: 5s\n");
        file(dir.path(), "w.yaml", body.as_bytes())
    };
    let w = workload("  dcs: [[dc1, 1], [dc2, 1]]\n  rtt:\n    dc1:dc2: 8ms\n    dc2:dc1: 9ms\n");
    refused(&["lint", &w], &["w.yaml:", "the distance dc1:dc2 (written both ways) is given twice"]);
    let w = workload("  dcs: [[\"dc1; rm -rf /\", 1]]\n");
    refused(&["lint", &w], &["w.yaml:", "\"dc1; rm -rf /\" is not a data center name"]);
    refused(&["local", "up", "--dcs", "dc1; rm -rf /:1", "--home", dir.path().to_str().unwrap()], &["\"dc1; rm -rf /\" is not a data center name"]);
}

#[test]
fn a_sqlite_file_of_another_program_is_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ada');").unwrap();
    let before = std::fs::read(&other).unwrap();
    let store = other.to_str().unwrap();
    refused(&["runs", "--store", store], &["other.db is a SQLite database of another program (it holds the table contacts", "never changes"]);
    refused(&["merge", "--store", store, "1"], &["is a SQLite database of another program"]);
    assert_eq!(std::fs::read(&other).unwrap(), before, "the file was changed");
    let tables: i64 = rusqlite::Connection::open(&other).unwrap().query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).unwrap();
    assert_eq!(tables, 1, "casslab added tables");
}

#[test]
fn design_values_get_the_same_answer_as_flags_and_as_file_keys() {
    let dir = tempfile::tempdir().unwrap();
    let base = "workload: kv\nvariants:\n  a: {}\n  b: {}\n";
    let plain = file(dir.path(), "e.yaml", base.as_bytes());
    for (flag, value, key, says) in [
        ("--judge", "nosuch.p99", "judge: [nosuch.p99]", "\"nosuch.p99\": variant a runs no operation \"nosuch\""),
        ("--repetitions", "0", "repetitions: 0", "0 blocks: give a whole number from 1 to 1000"),
        ("--budget", "0s", "budget: 0s", "a budget of 0 runs nothing"),
        ("--budget", "1000000h", "budget: 1000000h", "duration \"1000000h\" is longer than a year (8784h)"),
        ("--equivalence", "200%", "equivalence: 200%", "an equivalence margin of 200%: give a percentage above 0 and below 100"),
        ("--window", "0s", "window: 0s", "a window of \"0s\" holds no interval"),
    ] {
        // the flag's message names its value, once
        let flag_says = if says.starts_with('"') { format!("{flag} {says}") } else { format!("{flag} {value}: {says}") };
        refused(&["experiment", &plain, "--hosts", NOWHERE, flag, value], &[&flag_says]);
        let keyed = file(dir.path(), "k.yaml", format!("{key}\n{base}").as_bytes());
        let name = key.split(':').next().unwrap();
        refused(&["experiment", &keyed, "--hosts", NOWHERE], &[&format!("k.yaml:1: {name}: {says}")]);
    }
    // an experiment whose workload is itself
    let itself = file(dir.path(), "self.yaml", b"workload: self.yaml\nvariants:\n  a: {}\n  b: {}\n");
    refused(&["experiment", &itself, "--hosts", NOWHERE], &["self.yaml:1: workload: \"self.yaml\" is this experiment file itself"]);
}

#[test]
fn a_negative_value_reaches_its_options_own_check() {
    refused(&["run", "kv", "--hosts", NOWHERE, "--rate", "-100"], &["--rate \"-100\": \"-100\" is not a level"]);
    refused(&["import", "capture", "x.jsonl", "--speed", "-1"], &["--speed -1: a factor above 0"]);
    let dir = tempfile::tempdir().unwrap();
    let e = file(dir.path(), "e.yaml", b"workload: kv\nvariants:\n  a: {}\n  b: {}\n");
    refused(&["experiment", &e, "--hosts", NOWHERE, "--equivalence", "-5%"], &["--equivalence -5%: an equivalence margin of -5%"]);
}

#[test]
fn an_alias_bomb_names_the_limit_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let mut bomb = String::from("name: w\nparams:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..20 {
        bomb.push_str(&format!("  a{i}: &a{i} [*a{}, *a{}]\n", i - 1, i - 1));
    }
    let w = file(dir.path(), "bomb.yaml", bomb.as_bytes());
    let err = refused(&["lint", &w], &["bomb.yaml:", "more than casslab reads"]);
    assert!(!err.contains("Nodes {"), "{err}");
}

/// A run that finished is saved before its profile file is read: a file whose chunk header
/// fits it but whose body is no recording ends as a note, the run as completed.
#[test]
fn a_damaged_profile_file_read_after_the_run_leaves_the_run_saved() {
    let _g = shared_load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let mut jfr = b"FLR\0\x00\x02\x00\x00".to_vec();
    for w in [4096i64, 70, 72, 0, 0, 0, 1_000_000_000] {
        jfr.extend(w.to_be_bytes());
    }
    jfr.extend((0..4096 - 64).map(|i| (i * 7919 % 251) as u8));
    jfr.truncate(4096);
    let f = file(dir.path(), "damaged.jfr", &jfr);
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "-P", "rows=500", "-P", "keyspace=casslab_hostile", "--rate", "200", "-d", "3s", "--warmup", "0s", "--no-lint", "--hosts", host])
        .args(["--profile-file", &format!("{host}={f}"), "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("damaged.jfr") && !err.contains("panicked"), "the profile's failure is a note: {err}");
    let status: String = rusqlite::Connection::open(&store).unwrap().query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "completed");
}

/// `casslab experiment … 2>&1 | head -1`: both pipes closed at once; the experiment still runs
/// to its end, saves its runs and exits with its own code, without a panic.
#[test]
fn an_experiment_whose_reader_left_ends_with_its_own_code() {
    let _g = shared_load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let e = file(dir.path(), "e.yaml", b"workload: kv\nrate: 200\nparams: { rows: 200, keyspace: casslab_hostile_pipe }\nvariants:\n  a: {}\n  b: {}\n");
    let mut child = casslab()
        .args(["experiment", &e, "--repetitions", "1", "--duration", "1s", "--warmup", "0s", "--no-unmeasured-round", "--no-settle", "--allow-invalid"])
        .args(["--hosts", host, "--store", store.to_str().unwrap(), "--no-lint"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the reader goes away before the first line
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a closed pipe is the reader leaving, not a failure (101 is a panic)");
    let runs: i64 = rusqlite::Connection::open(&store).unwrap().query_row("SELECT count(*) FROM runs WHERE status = 'completed'", [], |r| r.get(0)).unwrap();
    assert!(runs >= 2, "the experiment's runs are saved: {runs}");
}

/// Apache Cassandra's own LWT example declares replication factor 3; on one node its
/// conditional inserts fail as cassandra-stress's would, but casslab's own bookkeeping
/// (`casslab_meta`, at ONE on a one-node cluster) must not be what fails the run.
#[test]
fn the_lwt_profile_of_replication_factor_3_is_not_failed_by_casslabs_bookkeeping() {
    let _g = shared_load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let stress = format!("{}/tests/data/stress/apache-lwt.yaml", env!("CARGO_MANIFEST_DIR"));
    let w = dir.path().join("lwt.yaml");
    let (code, _, err) = run(casslab().args(["import", "cassandra-stress", &stress, "--command", "user ops(insert=1) n=20", "-o", w.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(casslab()
        .args(["run", w.to_str().unwrap(), "-P", "keyspace=casslab_hostile_lwt", "--load-only", "--reload", "--no-lint", "--hosts", host])
        .args(["--store", store.to_str().unwrap()]));
    assert!(!err.contains("casslab_meta") && !err.starts_with("error:") && !err.contains("\nerror:"), "the bookkeeping failed the run: {err}");
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    // the conditional inserts themselves fail on one node, as cassandra-stress's would: counted
    assert!(err.contains("load operations failed"), "{err}");
    let status: String = rusqlite::Connection::open(&store).unwrap().query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "completed");
}
