//! Exit codes and standard output through the real binary, without a database: one test per
//! class (0 success, 1 a failed gate or lint finding, 2 bad usage or input, 3 a cluster that
//! cannot be reached, 5 an error of no other class; 130 is tests/e2e.rs's Ctrl-C test), every
//! printing command with its
//! stdout closed (exit 0, no panic), and the read-only commands on a store path where no run
//! was saved (exit 2, nothing created). Saved runs come from `common::runs`.

mod common;

use common::runs::lab;
use common::{casslab, run, store_arg};
use std::io::Write;
use std::process::Stdio;

#[test]
fn success_is_0() {
    let (code, out, err) = run(casslab().arg("workloads"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ycsb-a"), "{out}");
    let (_dir, store) = lab();
    let (code, out, err) = run(casslab().args(["compare", "1", "2", "--window", "2s", "--resamples", "200"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("read"), "{out}");
}

#[test]
fn a_failed_gate_or_lint_error_is_1() {
    let (_dir, store) = lab();
    let (code, _, err) =
        run(casslab().args(["compare", "1", "2", "--window", "2s", "--resamples", "200", "--fail-if", "read.p99 > 1us"]).args(store_arg(&store)));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("gate failed: --fail-if 'read.p99 > 1us'"), "{err}");

    // consistency TWO with one replica: an error-level finding
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    let unmet = casslab_core::workload::builtin("kv").unwrap().replace("    args: [key]\n", "    args: [key]\n    consistency: TWO\n");
    let unmet = format!("replication: \"{{'class': 'SimpleStrategy', 'replication_factor': 1}}\"\n{unmet}");
    f.write_all(unmet.as_bytes()).unwrap();
    let (code, out, err) = run(casslab().args(["lint", f.path().to_str().unwrap()]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("[consistency-unmet]"), "{out}");
}

#[test]
fn bad_usage_or_input_is_2() {
    let (_dir, store) = lab();
    let s = store_arg(&store);
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    let bad_file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    std::fs::write(bad_file.path(), "keyspace: [unclosed\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "kv", "--rate", "fast", "--hosts", "127.0.0.1:1"], "--rate \"fast\""),
        (vec!["run", "kv", "--duration", "soon", "--hosts", "127.0.0.1:1"], "--duration"),
        (vec!["run", "kv", "-P", "rows", "--hosts", "127.0.0.1:1"], "-P rows"),
        (vec!["run", "ycsb-z", "--hosts", "127.0.0.1:1"], "ycsb-z"),
        (vec!["run", bad_file.path().to_str().unwrap(), "--hosts", "127.0.0.1:1"], bad_file.path().to_str().unwrap()),
        (vec!["local", "up", "--heap", "lots", "--home", home], "--heap lots"),
        (vec!["workloads", "show", "nope"], "\"nope\""),
        (vec!["show", "abc", s[0], s[1]], "\"abc\" is not a run id"),
        (vec!["show", "99", s[0], s[1]], "no saved run with id 99"),
        (vec!["compare", "1", "--window", "7x", s[0], s[1]], "--window"),
        (vec!["compare", "1", "--confidence", "200", s[0], s[1]], "--confidence"),
        (vec!["compare", "1", "--window", "2s", "--fail-if", "scan.p99 > 4ms", s[0], s[1]], "no operation \"scan\""),
        (vec!["report", "abc", "--format", "md", s[0], s[1]], "\"abc\" is not a run id"),
        (vec!["lint", "kv", "--min-severity", "loud"], "--min-severity loud"),
    ];
    for (args, says) in cases {
        let (code, _, err) = run(casslab().args(&args));
        assert_eq!(code, 2, "casslab {}:\n{err}", args.join(" "));
        assert!(err.contains(says), "casslab {}: the error should name {says}:\n{err}", args.join(" "));
    }
}

/// A server definition (`cluster:`) that cannot apply to a cluster given with --hosts is a
/// mistake of usage, in a run and in an experiment.
#[test]
fn a_server_definition_with_hosts_is_2() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    let workload = dir.path().join("sized.yaml");
    std::fs::write(&workload, format!("{}cluster: {{ heap_mb: 1024 }}\n", casslab_core::workload::builtin("kv").unwrap())).unwrap();
    for args in [vec!["run", workload.to_str().unwrap()], vec!["experiment", "gc", "--budget", "1m"]] {
        let (code, _, err) = run(casslab()
            .current_dir(dir.path())
            .env("CASSLAB_HOME", dir.path().join("home"))
            .args(&args)
            .args(["--hosts", "127.0.0.1:1", "--no-lint"])
            .args(store_arg(&store)));
        assert_eq!(code, 2, "casslab {}:\n{err}", args.join(" "));
        assert!(err.contains("defines its server (`cluster:`)") && err.contains("leave out --hosts"), "{err}");
    }
}

/// An error of no other class (here: a directory that cannot be made, a full disk) is 5, so
/// that it is told from a failed gate (1).
#[test]
fn an_error_of_no_other_class_is_5() {
    let (code, _, err) = run(casslab().args(["man", "--dir", "/dev/null/man"]));
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("cannot create /dev/null/man"), "{err}");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let (code, _, err) = run(casslab().args(["workloads", "show", "kv"]).stdout(full));
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
}

#[test]
fn a_cluster_that_cannot_be_reached_is_3() {
    let (_dir, store) = common::temp_store();
    let (code, _, err) = run(casslab().args(["run", "kv", "--hosts", "127.0.0.1:1", "--no-lint"]).args(store_arg(&store)));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("cannot connect to 127.0.0.1:1"), "{err}");
    // `local status` of nodes that are not running says so with the same code
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run(casslab().args(["local", "status", "--home", home.path().to_str().unwrap()]));
    assert_eq!(code, 3, "{out}{err}");
}

/// Runs casslab with its stdout a pipe whose reading end is already closed, so that its first
/// write fails as `| head -1` makes a later one fail (a reader that closes after reading may
/// come too late to make any write fail). Returns (exit code, stderr).
fn with_stdout_closed(args: &[&str]) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = casslab().args(args).stdout(writer).stderr(Stdio::piped()).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let (_dir, store) = lab();
    let s = store_arg(&store);
    let export = tempfile::tempdir().unwrap();
    let json = export.path().join("run.json");
    let json = json.to_str().unwrap();
    for args in [
        vec!["workloads"],
        vec!["workloads", "show", "kv"],
        vec!["runs", s[0], s[1]],
        vec!["show", "1", s[0], s[1]],
        vec!["show", "3", s[0], s[1]],
        vec!["lint", "kv", "--json"],
        vec!["lint", "tombstones-ttl-set"],
        vec!["compare", "1", "2", "--window", "2s", "--resamples", "200", s[0], s[1]],
        vec!["report", "1", "2", "--format", "md", s[0], s[1]],
        vec!["report", "1", "--format", "json", s[0], s[1]],
        vec!["show", "2", "--json", json, s[0], s[1]],
    ] {
        let (code, err) = with_stdout_closed(&args);
        assert_eq!(code, 0, "casslab {}:\n{err}", args.join(" "));
        assert!(!err.contains("panicked"), "casslab {}:\n{err}", args.join(" "));
    }
    // the command still did its work: the export was written
    assert!(std::fs::metadata(json).unwrap().len() > 1000);
    // and its own exit code stands: a failed gate still fails
    let (code, err) = with_stdout_closed(&["compare", "1", "2", "--window", "2s", "--resamples", "200", "--fail-if", "read.p99 > 1us", s[0], s[1]]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn readers_do_not_create_a_missing_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("never/results.db");
    let s = store_arg(&store);
    for args in [
        vec!["runs", s[0], s[1]],
        vec!["show", s[0], s[1]],
        vec!["show", "1", s[0], s[1]],
        vec!["report", "1", "--format", "md", s[0], s[1]],
        vec!["compare", "1", "2", s[0], s[1]],
    ] {
        let (code, _, err) = run(casslab().args(&args));
        assert_eq!(code, 2, "casslab {}:\n{err}", args.join(" "));
        assert!(err.contains(&store.display().to_string()) && err.contains("no run was saved there yet"), "casslab {}:\n{err}", args.join(" "));
        assert!(!store.parent().unwrap().exists(), "casslab {} created {}", args.join(" "), store.parent().unwrap().display());
    }
    // the same through CASSLAB_STORE
    let (code, _, err) = run(casslab().arg("runs").env("CASSLAB_STORE", &store));
    assert_eq!(code, 2, "{err}");
    assert!(!store.parent().unwrap().exists());
}
