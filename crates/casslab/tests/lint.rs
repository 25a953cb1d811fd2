//! `casslab lint` from the command line: exit codes (0 without errors, 1 with, 2 for a
//! workload that cannot be read), text and JSON output with file:line, experiments linted
//! variant by variant; `casslab run` printing the warnings before it starts (and `--no-lint`
//! hiding them); the tombstone-trap workloads running end-to-end on the test node; and
//! `lint --hosts` judging the live schema.

mod common;

use common::{casslab, node, run, shared_load_lock, temp_store};
use std::io::Write;

fn file_with(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

const UNMET: &str = "keyspace: casslab_lint_cli
replication: \"{'class': 'SimpleStrategy', 'replication_factor': 1}\"
schema:
  - CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY, v text)
generators:
  id: { type: bigint, dist: uniform, min: 0, max: 1000 }
operations:
  read:
    cql: SELECT v FROM t WHERE id = ?
    args: [id]
    consistency: TWO
run:
  mix: { read: 1 }
  duration: 10s
";

#[test]
fn exit_codes_follow_the_worst_finding() {
    // clean: exit 0, nothing printed but the tally
    let (code, out, err) = run(casslab().args(["lint", "tombstones-ttl-frozen"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.trim().is_empty(), "{out}");
    assert!(err.contains("lint: no findings"), "{err}");
    // warnings only: exit 0, findings grouped with file:line, why and fix
    let (code, out, err) = run(casslab().args(["lint", "tombstones-ttl-set"]));
    assert_eq!(code, 0, "{out}{err}");
    let src = casslab_core::workload::builtin("tombstones-ttl-set").unwrap();
    let line = src.lines().position(|l| l.contains("cql: INSERT INTO sessions")).unwrap() + 1;
    assert!(out.starts_with("warnings ("), "{out}");
    assert!(out.contains(&format!("builtin:tombstones-ttl-set:{line}  [ttl-on-collection]")), "{out}");
    assert!(out.contains("why: ") && out.contains("fix: "), "{out}");
    assert!(err.contains("0 errors, 4 warnings"), "{err}");
    // an error: exit 1
    let f = file_with(UNMET);
    let path = f.path().to_str().unwrap();
    let (code, out, err) = run(casslab().args(["lint", path]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("errors (1)") && out.contains(&format!("{path}:8  [consistency-unmet]")), "{out}");
    // a workload that cannot be read: exit 2, as `run` does
    let bad = file_with("keyspace: [unclosed\n");
    let (code, _, err) = run(casslab().args(["lint", bad.path().to_str().unwrap()]));
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(casslab().args(["lint", "tombstones-ttl-sett"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean \"tombstones-ttl-set\""), "{err}");
}

#[test]
fn deny_warnings_fails_on_warnings_for_ci() {
    // the same four warnings that exit 0 above fail the check with --deny-warnings
    let (code, out, err) = run(casslab().args(["lint", "tombstones-ttl-set", "--deny-warnings"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("failed: 4 warnings and --deny-warnings"), "{err}");
    let (code, _, err) = run(casslab().args(["lint", "tombstones-ttl-set", "--deny-warnings", "--json"]));
    assert_eq!(code, 1, "{err}");
    // a clean workload still passes
    let (code, out, err) = run(casslab().args(["lint", "tombstones-ttl-frozen", "--deny-warnings"]));
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn json_output_and_options() {
    let (code, out, err) = run(casslab().args(["lint", "tombstones-range-deletes", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["errors"], 0);
    assert_eq!(v["warnings"], 3);
    let rules: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert!(rules.contains(&"range-delete-growing-partition") && rules.contains(&"read-after-delete"), "{rules:?}");
    assert!(v["findings"][0]["line"].as_u64().is_some() && v["findings"][0]["severity"] == "warning", "{out}");
    // a partition limit low enough that the loaded partitions (3,000 rows each) exceed it
    let (code, out, _) = run(casslab().args(["lint", "tombstones-range-deletes", "--max-partition-rows", "1000", "--min-severity", "error"]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("[unbounded-partition]") && !out.contains("[read-after-delete]"), "{out}");
    // parameters apply: with ten times fewer rows per device, the partitions fit again
    let (code, _, _) = run(casslab().args(["lint", "tombstones-range-deletes", "--max-partition-rows", "1000", "-P", "rows_per_device=300"]));
    assert_eq!(code, 0);
}

#[test]
fn experiments_are_linted_variant_by_variant() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.yaml"), UNMET.replace("consistency: TWO", "consistency: ONE")).unwrap();
    let exp = "name: cl
workload: base.yaml
variants:
  one: {}
  two:
    consistency: TWO
";
    let path = dir.path().join("exp.yaml");
    std::fs::write(&path, exp).unwrap();
    let (code, out, err) = run(casslab().args(["lint", path.to_str().unwrap()]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("(variant two)") && out.contains(&format!("{}:5  [consistency-unmet]", path.display())), "{out}");
    assert!(!out.contains("(variant one)"), "{out}");
    // every shipped experiment lints without errors
    let exps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    for e in std::fs::read_dir(exps).unwrap() {
        let p = e.unwrap().path();
        let (code, out, err) = run(casslab().args(["lint", p.to_str().unwrap()]));
        assert_eq!(code, 0, "{}: {out}{err}", p.display());
    }
}

fn count_of(stdout: &str, op: &str) -> u64 {
    common::summary_rows(stdout).iter().find(|(n, _)| n == op).map(|(_, c)| c[0].parse().unwrap()).unwrap_or(0)
}

fn errors_of(stdout: &str, op: &str) -> u64 {
    common::summary_rows(stdout).iter().find(|(n, _)| n == op).map(|(_, c)| c[c.len() - 1].parse().unwrap()).unwrap_or(u64::MAX)
}

#[test]
fn tombstone_traps_run_end_to_end_and_run_prints_lint_warnings_first() {
    let _g = shared_load_lock();
    let host = node();
    let (_d, store) = temp_store();
    for (name, params, ops, no_lint) in [
        ("tombstones-range-deletes", &["devices=3", "rows_per_device=200"][..], &["append", "trim", "read_latest"][..], false),
        ("tombstones-ttl-expiry", &["devices=3", "rows_per_device=200", "ttl_s=5"], &["append", "read_latest"], false),
        ("tombstones-ttl-set", &["rows=300", "ttl_s=5"], &["rewrite", "read"], true),
        ("tombstones-ttl-frozen", &["rows=300", "ttl_s=5"], &["rewrite", "read"], false),
    ] {
        let mut cmd = casslab();
        cmd.args(["run", name, "--duration", "2s", "--warmup", "0s", "--concurrency", "8", "--hosts", host, "--store", store.to_str().unwrap()]);
        for p in params {
            cmd.args(["-P", p]);
        }
        if no_lint {
            cmd.arg("--no-lint");
        }
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{name}: {out}{err}");
        for op in ops {
            assert!(count_of(&out, op) > 0, "{name}: no {op} completed:\n{out}");
            assert_eq!(errors_of(&out, op), 0, "{name}: {op} had errors:\n{out}\n{err}");
        }
        let lint_at = err.find("lint: ");
        match name {
            "tombstones-range-deletes" => {
                let at = lint_at.unwrap_or_else(|| panic!("no lint warnings before the run:\n{err}"));
                assert!(at < err.find("connected to").unwrap(), "{err}");
                assert!(err.contains("[range-delete-growing-partition]") && err.contains("[read-after-delete]"), "{err}");
            }
            // a note only (not shown), silenced, clean
            _ => assert!(lint_at.is_none(), "{name}:\n{err}"),
        }
    }

    // --hosts: the live table of tombstones-ttl-set (a non-frozen set) is judged, not the
    // frozen one this file declares for the same keyspace
    let declared = casslab_core::workload::builtin("tombstones-ttl-frozen").unwrap().replace("casslab_tomb_ttl_frozen", "casslab_tomb_ttl_set");
    let f = file_with(&declared);
    let path = f.path().to_str().unwrap();
    let (code, out, err) = run(casslab().args(["lint", path]));
    assert_eq!((code, out.trim()), (0, ""), "{err}");
    let (code, out, err) = run(casslab().args(["lint", path, "--hosts", host]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("lint: keyspace casslab_tomb_ttl_set read from the cluster ("), "{err}");
    let line = declared.lines().position(|l| l.contains("cql: INSERT INTO sessions")).unwrap() + 1;
    assert!(out.contains(&format!("{path}:{line}  [ttl-on-collection]")), "{out}");
}
