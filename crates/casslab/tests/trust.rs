//! Trust, end to end against the real test node: a workload's schema never touches what
//! casslab did not create (each refused kind of statement, in a workload and in an experiment
//! variant, and a foreign keyspace's row still there afterwards); a run whose process is
//! killed shows as crashed, with its intervals, in `runs`, `show` and `report`; and each reason
//! a run is not valid made to happen for real — too little concurrency for the rate, a
//! saturated client (against the in-process instant target, which leaves it no idle moment on
//! any machine), reads of keys never loaded — and honoured by `compare` and experiments.

mod common;
use common::{casslab, load_lock, node, run, session, store_arg, temp_store};
use std::path::Path;
use std::time::{Duration, Instant};

fn query_text(rt: &tokio::runtime::Runtime, s: &scylla::client::session::Session, cql: &str) -> Vec<String> {
    rt.block_on(async {
        let rows = s.query_unpaged(cql, &[]).await.unwrap().into_rows_result().unwrap();
        rows.rows::<(Option<String>,)>().unwrap().map(|r| r.unwrap().0.unwrap_or_default()).collect()
    })
}

const FOREIGN: &str = "casslab_trust_foreign";

/// A workload in keyspace `ks` whose schema is `schema` (one statement per line, quoted).
fn workload(dir: &Path, name: &str, ks: &str, schema: &[&str]) -> std::path::PathBuf {
    let items: String = schema.iter().map(|s| format!("  - \"{s}\"\n")).collect();
    let text = format!(
        "keyspace: {ks}\nschema:\n{items}generators:\n  k: {{ type: int, dist: uniform, min: 0, max: 100 }}\noperations:\n  read:\n    cql: SELECT v FROM keep WHERE k = ?\n    args: [k]\nrun:\n  mix: {{ read: 1 }}\n  duration: 1s\n"
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_workload_schema_never_touches_what_casslab_did_not_create() {
    let _g = load_lock();
    let host = node();
    let (rt, s) = session(host);
    for cql in [
        &format!("CREATE KEYSPACE IF NOT EXISTS {FOREIGN} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"),
        &format!("CREATE TABLE IF NOT EXISTS {FOREIGN}.keep (k int PRIMARY KEY, v text)"),
        &format!("INSERT INTO {FOREIGN}.keep (k, v) VALUES (1, 'precious')"),
    ] {
        rt.block_on(s.query_unpaged(cql.as_str(), &[])).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let (_d, store) = temp_store();
    let own = "CREATE TABLE IF NOT EXISTS keep (k int PRIMARY KEY, v text)";
    let refused = [
        (format!("DROP KEYSPACE IF EXISTS {FOREIGN}"), "would destroy or overwrite what exists (DROP KEYSPACE)".to_string()),
        (format!("DROP TABLE IF EXISTS {FOREIGN}.keep"), "(DROP TABLE)".into()),
        (format!("TRUNCATE {FOREIGN}.keep"), "(TRUNCATE)".into()),
        (format!("DELETE FROM {FOREIGN}.keep WHERE k = 1"), "(DELETE)".into()),
        (format!("INSERT INTO {FOREIGN}.keep (k, v) VALUES (1, 'overwritten')"), "(INSERT)".into()),
        (format!("UPDATE {FOREIGN}.keep SET v = 'overwritten' WHERE k = 1"), "(UPDATE)".into()),
        ("ALTER TABLE keep DROP v".into(), "(ALTER TABLE … DROP)".into()),
        (format!("ALTER TABLE {FOREIGN}.keep ADD extra text"), format!("names keyspace \"{FOREIGN}\"")),
        (format!("CREATE TABLE IF NOT EXISTS {FOREIGN}.more (k int PRIMARY KEY)"), format!("names keyspace \"{FOREIGN}\"")),
        (format!("CREATE INDEX IF NOT EXISTS ON {FOREIGN}.keep (v)"), format!("names keyspace \"{FOREIGN}\"")),
        (
            "CREATE KEYSPACE IF NOT EXISTS casslab_trust_x WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}".into(),
            "creates a keyspace".into(),
        ),
        ("CREATE TABLE more (k int PRIMARY KEY)".into(), "needs IF NOT EXISTS".into()),
        ("GRANT SELECT ON ALL KEYSPACES TO bench".into(), "is not a creating statement".into()),
    ];
    for (i, (cql, why)) in refused.iter().enumerate() {
        let file = workload(dir.path(), &format!("w{i}.yaml"), "casslab_trust_ws", &[own, cql]);
        let (code, out, err) = run(casslab().args(["run", file.to_str().unwrap(), "--hosts", host, "--no-lint"]).args(store_arg(&store)));
        assert_eq!(code, 2, "{cql}: stdout:\n{out}\nstderr:\n{err}");
        assert!(err.contains(&format!("{}:4: schema: `", file.display())) && err.contains(why.as_str()), "{cql}:\n{err}");
        assert!(!err.contains("connected to"), "refused only after connecting:\n{err}");
    }
    // the same check applies to every experiment variant, pointed at the variant's own line
    let _base = workload(dir.path(), "base.yaml", "casslab_trust_ws", &[own]);
    let exp = dir.path().join("exp.yaml");
    std::fs::write(&exp, format!("workload: base.yaml\nvariants:\n  a: {{}}\n  b:\n    schema:\n      - {own}\n      - DROP KEYSPACE IF EXISTS {FOREIGN}\n"))
        .unwrap();
    let (code, _, err) = run(casslab().args(["experiment", exp.to_str().unwrap(), "--hosts", host, "--no-lint"]).args(store_arg(&store)));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("{}:7: schema: `DROP KEYSPACE IF EXISTS {FOREIGN}` would destroy", exp.display())), "{err}");

    // a workload aimed at the foreign keyspace may create what is missing there, but not alter
    // a table that was there before: checked on the cluster before any statement runs
    let file = workload(dir.path(), "alter.yaml", FOREIGN, &[own, "ALTER TABLE keep WITH comment = 'changed by casslab'"]);
    let (code, out, err) = run(casslab().args(["run", file.to_str().unwrap(), "--hosts", host, "--no-lint"]).args(store_arg(&store)));
    assert_eq!(code, 2, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        err.contains(&format!(
            "{}:4: schema: `ALTER TABLE keep WITH comment = 'changed by casslab'` would change table {FOREIGN}.keep, which casslab did not create",
            file.display()
        )),
        "{err}"
    );

    // in a keyspace of its own, a workload creates, indexes and alters its tables
    let mine = workload(
        dir.path(),
        "mine.yaml",
        "casslab_trust_mine",
        &[own, "ALTER TABLE keep WITH comment = 'made by casslab'", "CREATE INDEX IF NOT EXISTS ON keep (v) USING 'sai'"],
    );
    let (code, out, err) = run(casslab().args(["run", mine.to_str().unwrap(), "--hosts", host, "--no-lint", "--duration", "1s"]).args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");

    // the foreign keyspace, its table as it was, and its row are all still there
    assert_eq!(query_text(&rt, &s, &format!("SELECT v FROM {FOREIGN}.keep WHERE k = 1")), ["precious"]);
    let comment = format!("SELECT comment FROM system_schema.tables WHERE keyspace_name = '{FOREIGN}' AND table_name = 'keep'");
    assert_eq!(query_text(&rt, &s, &comment), [""]);
    let columns = format!("SELECT column_name FROM system_schema.columns WHERE keyspace_name = '{FOREIGN}' AND table_name = 'keep'");
    let mut cols = query_text(&rt, &s, &columns);
    cols.sort();
    assert_eq!(cols, ["k", "v"]);
    let mine_comment = "SELECT comment FROM system_schema.tables WHERE keyspace_name = 'casslab_trust_mine' AND table_name = 'keep'";
    assert_eq!(query_text(&rt, &s, mine_comment), ["made by casslab"]);
}

#[test]
fn a_killed_run_is_shown_as_crashed_with_its_intervals() {
    let _g = load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let mut child = casslab()
        .args([
            "run",
            "kv",
            "-P",
            "rows=2000",
            "-P",
            "keyspace=casslab_trust_crash",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--concurrency",
            "8",
            "--hosts",
            host,
            "--no-lint",
        ])
        .args(store_arg(&store))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let n: i64 = rusqlite::Connection::open(&store)
            .and_then(|db| db.query_row("SELECT count(DISTINCT idx) FROM intervals WHERE phase = 'run'", [], |r| r.get(0)))
            .unwrap_or(0);
        if n >= 3 {
            break;
        }
        assert!(Instant::now() < deadline, "the run never reached its run phase");
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let saved: String = rusqlite::Connection::open(&store).unwrap().query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(saved, "running", "the killed process saved nothing more");

    let (code, listed, err) = run(casslab().args(["runs"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(listed.lines().nth(1).is_some_and(|l| l.contains("crashed")), "{listed}");
    let (code, shown, err) = run(casslab().args(["show", "latest"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("crashed (its figures are those of the intervals saved before)"), "{shown}");
    let rows = common::summary_rows(&shown);
    for op in ["read", "update"] {
        assert!(rows.iter().any(|(n, c)| n == op && c[0].parse::<u64>().unwrap() > 0), "no {op} counted:\n{shown}");
    }
    assert!(shown.contains("validity: suspect") && shown.contains("the run crashed (its process is gone)"), "{shown}");
    let (code, report, err) = run(casslab().args(["report", "latest", "--format", "json"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    let r = &v["runs"][0];
    assert_eq!((r["status"].as_str(), r["validity"]["verdict"].as_str()), (Some("crashed"), Some("suspect")));
    assert!(r["phases"].as_array().is_some_and(|p| p.iter().any(|p| p["phase"] == "run")), "{r}");
    let json = dir.path().join("crashed.json");
    let (code, _, err) = run(casslab().args(["show", "latest", "--json", json.to_str().unwrap()]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["status"], "crashed");
    assert!(v["intervals"].as_array().unwrap().len() >= 3);
}

/// Runs `casslab run ARGS --hosts HOST --store STORE` against the test node and returns its
/// stdout, which must say the run is invalid for `reason`.
fn invalid_run(args: &[&str], store: &Path, reason: &str) -> String {
    invalid_run_on(&["--hosts", node()], args, store, reason)
}

/// Runs `casslab run ARGS TARGET --no-lint --store STORE` and returns its stdout, which must
/// say the run is invalid for `reason`.
fn invalid_run_on(target: &[&str], args: &[&str], store: &Path, reason: &str) -> String {
    let (code, out, err) = run(casslab().args(["run"]).args(args).args(target).arg("--no-lint").args(store_arg(store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("\nvalidity: invalid\n") && out.contains(reason), "wanted invalid for \"{reason}\":\n{out}");
    out
}

#[test]
fn too_little_concurrency_for_the_rate_is_invalid_and_compare_refuses_it() {
    let _g = load_lock();
    let (_d, store) = temp_store();
    let common = ["-P", "rows=2000", "-P", "keyspace=casslab_trust_rate", "--warmup", "0s", "--duration", "4s"];
    // one request in flight keeps at most 1 / service time (about 5,000/s at 0.2 ms on a fast machine): ask for far more
    let args: Vec<&str> = ["kv"].iter().chain(&common).chain(&["--rate", "50000", "--concurrency", "1"]).copied().collect();
    let out = invalid_run(&args, &store, "the client fell behind its schedule");
    assert!(out.contains("the target rate was not kept"), "{out}");
    let (code, _, err) = run(casslab().args(["compare", "1", "--fail-if", "total.p99 > 100s"]).args(store_arg(&store)));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused: run 1 is invalid: ")
            && err.contains("the client fell behind its schedule")
            && err.contains("pass --allow-invalid to use it anyway"),
        "{err}"
    );
    assert!(!err.contains("gates passed"), "{err}");
    let (code, _, err) = run(casslab().args(["compare", "1", "--fail-if", "total.p99 > 100s", "--allow-invalid"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: run 1 is invalid, used because of --allow-invalid") && err.contains("gates passed"), "{err}");

    // the same workload at a rate its concurrency can keep is not invalid, and compares
    let (code, out, err) =
        run(casslab().args(["run", "kv"]).args(common).args(["--rate", "200", "--concurrency", "16", "--hosts", node(), "--no-lint"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\nvalidity: valid") || out.contains("\nvalidity: suspect"), "{out}");
    let (code, _, err) = run(casslab().args(["compare", "2", "2"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_saturated_client_is_invalid() {
    let (dir, store) = temp_store();
    // every execution draws a 500 kB text, and the in-process instant target answers at once:
    // the one thread of the client has more work than it can do on any machine (against a node,
    // a node slower than the client on the machine of the moment leaves it idle now and then)
    let file = dir.path().join("heavy.yaml");
    std::fs::write(
        &file,
        "keyspace: casslab_trust_cpu\ngenerators:\n  heavy: { type: text, prefix: zzz, size: 500000 }\noperations:\n  read:\n    cql: SELECT release_version FROM system.local WHERE key = 'local' AND cluster_name < ? ALLOW FILTERING\n    args: [heavy]\nrun:\n  mix: { read: 1 }\n  duration: 6s\n",
    )
    .unwrap();
    let args = [file.to_str().unwrap(), "--threads", "1", "--concurrency", "32", "--warmup", "1s"];
    let out = invalid_run_on(&["--target", "instant"], &args, &store, "the client was saturated");
    assert!(!out.contains("reads found nothing"), "the saturation is the reason, not empty reads:\n{out}");
}

#[test]
fn reads_of_keys_never_loaded_are_invalid() {
    let _g = load_lock();
    let (dir, store) = temp_store();
    let json = dir.path().join("empty.json");
    // reads only: updates would write keys that later reads (drawn from the same seeded sequence) could find
    let args = [
        "kv",
        "-P",
        "rows=100000000",
        "-P",
        "keyspace=casslab_trust_never_loaded",
        "-P",
        "read_ratio=100",
        "-P",
        "update_ratio=0",
        "--skip-load",
        "--warmup",
        "0s",
        "--duration",
        "3s",
        "--concurrency",
        "8",
        "--json",
        json.to_str().unwrap(),
    ];
    invalid_run(&args, &store, "reads found nothing: read returned no row in");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["validity"]["verdict"], "invalid");
    let empty = &v["validity"]["figures"]["empty_reads"][0];
    assert_eq!(empty["op"], "read");
    assert!(empty["empty"].as_u64().unwrap() + 5 > empty["executions"].as_u64().unwrap(), "{empty}");
    let (code, md, err) = run(casslab().args(["report", "latest", "--format", "md"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    // (a busy machine may add the client's saturation as a reason of its own, before this one)
    assert!(md.contains("**Validity: invalid** — invalid: ") && md.contains("invalid: reads found nothing"), "{md}");
}

#[test]
fn an_experiment_leaves_its_invalid_runs_out() {
    let _g = load_lock();
    let host = node();
    let (dir, store) = temp_store();
    // variant "missing" reads keys the load never wrote
    let exp = dir.path().join("exp.yaml");
    std::fs::write(
        &exp,
        "workload: kv\nload: shared\nparams: { rows: 2000, keyspace: casslab_trust_exp }\nvariants:\n  loaded: {}\n  missing:\n    generators:\n      key: { type: blob, dist: uniform, min: 1000000000, max: 2000000000 }\n",
    )
    .unwrap();
    let (code, out, err) = run(casslab()
        .args([
            "experiment",
            exp.to_str().unwrap(),
            "--repetitions",
            "1",
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--window",
            "1s",
            "--resamples",
            "200",
            "--min-windows",
            "2",
        ])
        .args(["--concurrency", "8", "--hosts", host, "--no-lint"])
        .args(store_arg(&store)));
    assert_eq!(code, 1, "stdout:\n{out}\nstderr:\n{err}");
    // the measured run of "missing" (after the unmeasured round) is left out
    assert!(
        err.lines().any(|l| l.starts_with("left out of the comparison: run ")
            && l.contains(" is invalid: ")
            && l.contains("reads found nothing: read returned no row in")),
        "{err}"
    );
    assert!(!out.contains("missing against loaded"), "{out}");
    // compared again from the store, the invalid run is left out again
    let (code, again, err) =
        run(casslab().args(["compare", "--experiment", "exp", "--window", "1s", "--resamples", "200", "--min-windows", "2"]).args(store_arg(&store)));
    assert_eq!(code, 1, "stdout:\n{again}\nstderr:\n{err}");
    assert!(err.contains("left out of the comparison: run ") && err.contains("fewer than two variants have runs to compare"), "{err}");
    let (code, out, err) = run(casslab()
        .args([
            "experiment",
            exp.to_str().unwrap(),
            "--repetitions",
            "1",
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--window",
            "1s",
            "--resamples",
            "200",
            "--min-windows",
            "2",
        ])
        .args(["--concurrency", "8", "--hosts", host, "--no-lint", "--allow-invalid"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("missing against loaded") && err.contains("is invalid, used because of --allow-invalid"), "{out}\n{err}");
}
