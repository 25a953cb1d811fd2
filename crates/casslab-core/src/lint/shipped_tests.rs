//! Tests of the linter against what casslab ships: every built-in workload, every workload
//! file and every experiment lints without errors, warnings only where the workload exists to
//! show the mistake, and each tombstone trap is flagged while its clean counterpart passes.

use super::{lint, lint_target, Finding, LintOptions, Rule, Severity};
use crate::workload::{parse_workload, BUILTINS};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Warnings a shipped workload is allowed, because showing them is its purpose.
fn justified(name: &str) -> &'static [Rule] {
    match name {
        // the base of bins-list-vs-columns: a non-frozen list written whole, on purpose
        "bins" => &[Rule::CollectionWrittenWhole],
        // pages gain revisions for ever: unbounded partitions, as in the system it models
        "revision-store" => &[Rule::UnboundedPartition],
        // compares reading a set of partitions with and without IN
        "partition-set" => &[Rule::PartitionInFanout],
        "tombstones-ttl-set" => &[Rule::TtlOnCollection, Rule::CollectionWrittenWhole],
        "tombstones-range-deletes" => &[Rule::RangeDeleteGrowingPartition, Rule::ReadAfterDelete, Rule::UnboundedPartition],
        // compares an SAI index with a legacy one on a unique column and with ALLOW FILTERING
        "sai-lookup" => &[Rule::IndexHighCardinality, Rule::AllowFiltering, Rule::ScanWithoutLimit],
        _ => &[],
    }
}

fn rules_at(f: &[Finding], min: Severity) -> Vec<Rule> {
    let mut v: Vec<Rule> = f.iter().filter(|x| x.severity >= min).map(|x| x.rule).collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn every_builtin_workload_lints_without_unjustified_warnings() {
    assert!(BUILTINS.len() >= 11);
    for (name, src) in BUILTINS {
        let w = parse_workload(src, &format!("builtin:{name}"), &BTreeMap::new()).unwrap();
        let f = lint(&w, &LintOptions::default());
        let bad: Vec<&Finding> = f.iter().filter(|x| x.severity >= Severity::Warning && !justified(name).contains(&x.rule)).collect();
        assert!(bad.is_empty(), "{name}: {bad:#?}");
        assert!(f.iter().all(|x| x.line.is_some() && x.file == format!("builtin:{name}")), "{name}: {f:#?}");
    }
}

#[test]
fn every_workload_file_and_experiment_lints_without_errors() {
    let mut seen = 0;
    for dir in ["workloads", "experiments"] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
                continue;
            }
            seen += 1;
            let f = lint_target(path.to_str().unwrap(), &BTreeMap::new(), &LintOptions::default()).unwrap_or_else(|e| panic!("{e}"));
            let stem = path.file_stem().unwrap().to_str().unwrap();
            let allowed: Vec<Rule> = justified(stem).iter().chain(justified("bins")).copied().collect();
            let bad: Vec<&Finding> =
                f.iter().filter(|x| x.severity == Severity::Error || (x.severity == Severity::Warning && !allowed.contains(&x.rule))).collect();
            assert!(bad.is_empty(), "{}: {bad:#?}", path.display());
        }
    }
    assert!(seen >= 10, "read {seen} files");
}

#[test]
fn each_tombstone_trap_is_flagged_and_its_clean_counterpart_passes() {
    let lint_builtin = |name: &str| lint_target(name, &BTreeMap::new(), &LintOptions::default()).unwrap();
    let trap = lint_builtin("tombstones-ttl-set");
    assert_eq!(rules_at(&trap, Severity::Warning), vec![Rule::TtlOnCollection, Rule::CollectionWrittenWhole], "{trap:#?}");
    let src = crate::workload::builtin("tombstones-ttl-set").unwrap();
    let ttl_line = src.lines().position(|l| l.contains("cql: INSERT INTO sessions")).unwrap() + 1;
    assert!(trap.iter().any(|f| f.rule == Rule::TtlOnCollection && f.line == Some(ttl_line)), "{trap:#?}");
    let clean = lint_builtin("tombstones-ttl-frozen");
    assert!(clean.is_empty(), "{clean:#?}");

    let trap = lint_builtin("tombstones-range-deletes");
    assert_eq!(rules_at(&trap, Severity::Warning), vec![Rule::RangeDeleteGrowingPartition, Rule::ReadAfterDelete, Rule::UnboundedPartition], "{trap:#?}");
    let src = crate::workload::builtin("tombstones-range-deletes").unwrap();
    let delete_line = src.lines().position(|l| l.contains("DELETE FROM events")).unwrap() + 1;
    assert!(trap.iter().any(|f| f.rule == Rule::RangeDeleteGrowingPartition && f.line == Some(delete_line)), "{trap:#?}");
    let clean = lint_builtin("tombstones-ttl-expiry");
    assert!(rules_at(&clean, Severity::Warning).is_empty(), "{clean:#?}");
}

#[test]
fn an_experiment_variant_finding_points_at_the_variant() {
    let path = repo().join("experiments/partition-set.yaml");
    let f = lint_target(path.to_str().unwrap(), &BTreeMap::new(), &LintOptions::default()).unwrap();
    let src = std::fs::read_to_string(&path).unwrap();
    let in_variant = src.lines().position(|l| l.trim() == "in:").unwrap() + 1;
    let hit = f.iter().find(|x| x.rule == Rule::PartitionInFanout && x.subject.ends_with("(variant in)")).unwrap_or_else(|| panic!("{f:#?}"));
    assert_eq!(hit.file, path.display().to_string());
    assert_eq!(hit.line, Some(in_variant + 3), "the cql line of the variant: {hit:#?}");
    assert!(!f.iter().any(|x| x.subject.contains("(variant sync)") || x.subject.contains("(variant async)")), "{f:#?}");
}
