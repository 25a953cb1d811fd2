//! Command-line behaviour that needs no database: help for every command, the built-in
//! workload list, and the errors a user gets for bad workload files and arguments
//! (file:line and what to fix, exit code 2 for workload mistakes; tests/exit_codes.rs has one
//! test per exit code).

mod common;
use common::{casslab, run};
use std::io::Write;

fn workload_file(body: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(body.as_bytes()).unwrap();
    f
}

const GOOD: &str = "name: t
params:
  rows: 100
keyspace: casslab_t
schema:
  - CREATE TABLE IF NOT EXISTS t (k bigint PRIMARY KEY, v text)
generators:
  key: { type: bigint, dist: uniform, min: 0, max: \"${rows}\" }
  val: { type: text, size: 10 }
operations:
  insert:
    cql: INSERT INTO t (k, v) VALUES (?, ?)
    args: [key, val]
  read:
    cql: SELECT v FROM t WHERE k = ?
    args: [key]
load:
  op: insert
  count: ${rows}
run:
  mix: { read: 1, insert: 1 }
  duration: 10s
";

/// Runs `casslab run` on a variant of GOOD against an address nothing listens on, so a valid
/// file fails only at connecting.
fn check(body: &str) -> (i32, String) {
    let f = workload_file(body);
    let (code, _, err) = run(casslab().args(["run", f.path().to_str().unwrap(), "--hosts", "127.0.0.1:1"]));
    (code, err.replace(f.path().to_str().unwrap(), "FILE"))
}

#[test]
fn a_valid_file_gets_as_far_as_connecting() {
    let (code, err) = check(GOOD);
    assert_eq!(code, 3, "cannot connect is a cluster failure: {err}");
    assert!(err.contains("cannot connect to 127.0.0.1:1"), "{err}");
    assert!(err.contains("casslab local up"), "the error should say what to do: {err}");
}

#[test]
fn unknown_generator_names_the_line_and_a_suggestion() {
    let (code, err) = check(&GOOD.replace("args: [key]", "args: [kee]"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:16:"), "{err}");
    assert!(err.contains("unknown generator \"kee\"") && err.contains("did you mean \"key\""), "{err}");
}

#[test]
fn wrong_number_of_values_for_markers() {
    let (code, err) = check(&GOOD.replace("args: [key, val]", "args: [key]"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:12:"), "{err}");
    assert!(err.contains("2 bind marker(s)") && err.contains("1 value(s)"), "{err}");
}

#[test]
fn all_ratios_zero() {
    let (code, err) = check(&GOOD.replace("mix: { read: 1, insert: 1 }", "mix: { read: 0, insert: 0 }"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:21:") && err.contains("every ratio is 0"), "{err}");
}

#[test]
fn bad_duration() {
    let (code, err) = check(&GOOD.replace("duration: 10s", "duration: ten seconds"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:22:") && err.contains("bad duration \"ten seconds\""), "{err}");
}

#[test]
fn unknown_distribution_with_suggestion() {
    let (code, err) = check(&GOOD.replace("dist: uniform", "dist: zipfain"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:8:") && err.contains("zipfian"), "{err}");
}

#[test]
fn unknown_operation_in_mix_and_load() {
    let (code, err) = check(&GOOD.replace("mix: { read: 1, insert: 1 }", "mix: { reed: 1, insert: 1 }"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:21:") && err.contains("unknown operation \"reed\"") && err.contains("\"read\""), "{err}");
    let (code, err) = check(&GOOD.replace("op: insert", "op: inzert"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:18:") && err.contains("inzert"), "{err}");
}

#[test]
fn yaml_syntax_and_unknown_keys() {
    let (code, err) = check(&GOOD.replace("    cql: SELECT v", "    cqll: SELECT v"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:15:") && err.contains("cqll"), "{err}");
}

#[test]
fn unknown_parameter_in_text_and_on_the_command_line() {
    let (code, err) = check(&GOOD.replace("count: ${rows}", "count: ${rowz}"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:19:") && err.contains("did you mean \"rows\""), "{err}");
    let f = workload_file(GOOD);
    let (code, _, err) = run(casslab().args(["run", f.path().to_str().unwrap(), "-P", "rowz=5", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no parameter \"rowz\""), "{err}");
}

#[test]
fn unknown_workload_name_suggests_a_builtin() {
    let (code, _, err) = run(casslab().args(["run", "ycsb-z", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2);
    assert!(err.contains("no built-in workload or file named \"ycsb-z\""), "{err}");
    assert!(err.contains("did you mean"), "{err}");
}

#[test]
fn bad_arguments_say_what_to_write() {
    let (code, _, err) = run(casslab().args(["run", "kv", "--rate", "fast", "--hosts", "127.0.0.1:1"]));
    assert_ne!(code, 0);
    assert!(err.contains("--rate \"fast\"") && err.contains("not a level"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--duration", "soon", "--hosts", "127.0.0.1:1"]));
    assert_ne!(code, 0);
    assert!(err.contains("--duration") && err.contains("bad duration"), "{err}");
}

#[test]
fn a_count_is_refused_with_a_duration_at_zero_and_in_an_experiment() {
    let (code, _, err) = run(casslab().args(["run", "kv", "--count", "2000", "--duration", "10s", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count <N>") && err.contains("--duration <DURATION>"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "-n", "1k", "--find-max", "p99 < 10ms", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--find-max"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--count", "0", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count 0") && err.contains("e.g. --count 100000"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--count", "lots", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count lots: write a whole number"), "{err}");
    let (code, _, err) = run(casslab().args(["experiment", "gc", "--count", "1000", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count 1000: an experiment's runs last a duration"), "{err}");
}

#[test]
fn every_builtin_workload_parses_and_is_listed() {
    let (code, out, err) = run(casslab().arg("workloads"));
    assert_eq!(code, 0, "{err}");
    for name in ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f", "kv"] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name} missing from:\n{out}");
        let (code, text, _) = run(casslab().args(["workloads", "show", name]));
        assert_eq!(code, 0);
        assert!(text.contains(&format!("name: {name}")));
    }
}

#[test]
fn every_command_has_help() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["local", "--help"],
        vec!["local", "up", "--help"],
        vec!["local", "status", "--help"],
        vec!["local", "down", "--help"],
        vec!["workloads", "--help"],
        vec!["runs", "--help"],
        vec!["show", "--help"],
        vec!["report", "--help"],
        vec!["merge", "--help"],
    ] {
        let (code, out, _) = run(casslab().args(&args));
        assert_eq!(code, 0, "{args:?}");
        assert!(out.contains("Usage:"), "{args:?}: {out}");
    }
    let (_, out, _) = run(casslab().args(["run", "--help"]));
    for flag in ["--rate", "--concurrency", "--hosts", "--user", "--tls-ca", "--json", "--hdr-log", "--reload", "--skip-load", "--load-only"] {
        assert!(out.contains(flag), "run --help lacks {flag}");
    }
}

#[test]
fn show_on_an_empty_store_says_so() {
    let (_d, store) = common::temp_store();
    drop(casslab_core::store::Store::open(&store).unwrap());
    let (code, _, err) = run(casslab().args(["show", "latest", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no saved runs"), "{err}");
    let (code, _, err) = run(casslab().args(["runs", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0);
    assert!(err.contains("no saved runs"), "{err}");
}

/// `casslab experiment` checks --event specs for every variant and prints the lint findings of
/// every variant before it touches a cluster (here: none listens at 127.0.0.1:1).
#[test]
fn experiment_checks_events_and_lints_before_connecting() {
    let exp = format!("{}/../../experiments/partition-set.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, _, err) = run(casslab().args(["experiment", &exp, "--hosts", "127.0.0.1:1", "--event", "5s kil node2"]));
    assert_ne!(code, 0);
    assert!(err.contains("did you mean \"kill\""), "{err}");
    assert!(!err.contains("cannot connect"), "checked after connecting:\n{err}");
    let (code, _, err) = run(casslab().args(["experiment", &exp, "--hosts", "127.0.0.1:1", "--event", "5s kill node2"]));
    assert_ne!(code, 0);
    assert!(err.contains("variant sync") && err.contains("exec CMD"), "a node action against --hosts must be refused:\n{err}");
    // lint findings of the IN variants point at their lines in the experiment file
    assert!(err.contains("[partition-in-fanout]") && err.contains("partition-set.yaml:"), "{err}");
    let (_, _, err) = run(casslab().args(["experiment", &exp, "--hosts", "127.0.0.1:1", "--no-lint", "--event", "5s kill node2"]));
    assert!(!err.contains("[partition-in-fanout]"), "--no-lint must silence lint:\n{err}");
}

/// A shipped experiment runs by its name wherever casslab is installed (`casslab workloads`
/// lists it, `workloads show` prints it), and `--plan` with no execution in the store plans
/// from the design and assumed spreads: it starts no node and connects to nothing (its home
/// is a directory no node lives in, and nothing there is created).
#[test]
fn shipped_experiments_run_by_name_and_plan_without_running_anything() {
    let dir = tempfile::tempdir().unwrap();
    let (home, store) = (dir.path().join("home"), dir.path().join("results.db"));
    let (code, out, err) =
        run(casslab().current_dir(dir.path()).env("CASSLAB_HOME", &home).args(["experiment", "gc", "--plan", "--no-lint", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("nothing was run") && !err.contains("connected"), "{err}");
    assert!(out.contains("plan (nothing run") && out.contains("zgc: read p99") && out.contains("3× smaller or larger"), "{out}");
    assert!(!home.join("node1").exists() && !home.join("cluster.json").exists(), "no node was set up");
    let (code, list, _) = run(casslab().args(["workloads"]));
    assert_eq!(code, 0);
    assert!(list.contains("experiments (variants compared") && list.contains("bins-list-vs-columns"), "{list}");
    let (code, shown, _) = run(casslab().args(["workloads", "show", "gc"]));
    assert_eq!((code, shown.starts_with("# G1 against ZGC")), (0, true), "{shown}");
    // a file of the name in the working directory wins over the shipped one
    std::fs::write(dir.path().join("gc"), "workload: kv\nvariants:\n  a: {}\n").unwrap();
    let (code, _, err) =
        run(casslab().current_dir(dir.path()).env("CASSLAB_HOME", &home).args(["experiment", "gc", "--plan", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 2, "the local file is read (and has one variant): {err}");
}
