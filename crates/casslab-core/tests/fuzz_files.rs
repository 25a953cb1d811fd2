//! Property tests: the readers of files users hand casslab cannot panic, whatever the files
//! hold — cassandra-stress profiles (imported, the result read as a workload), captures (JSON
//! lines and CSV, turned into a replay), folded stacks, Java Flight Recorder files (headers
//! made to lie about their sizes; the reader runs in a process of its own), experiment files,
//! and shard exports edited before a merge. The suite runs a few cases of each; `bench/fuzz.sh`
//! runs many more and prints, per property, the cases, how many were accepted, the slowest input
//! and the peak memory.

mod fuzz_common;

use casslab_core::config::{RunConfig, RunEnvironment, ShardConfig};
use casslab_core::profile::{read_file, ProfileKind};
use casslab_core::stats::{OpStats, Phase};
use casslab_core::store::{RunData, RunRecord, RunStatus, Store, StoredInterval};
use fuzz_common::{accepted, config, number, sentence, timed};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn temp(name: &str, body: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(name);
    std::fs::write(&p, body).unwrap();
    (d, p)
}

/// A distribution of cassandra-stress's, sane or not.
fn stress_dist() -> impl Strategy<Value = String> {
    let sane =
        (prop::sample::select(&["uniform", "gaussian", "exp", "seq", "~uniform"][..]), 1u32..50, 0u32..50).prop_map(|(n, a, b)| format!("{n}({a}..{})", a + b));
    let fixed = (1u32..20).prop_map(|n| format!("fixed({n})"));
    let hostile = (prop::sample::select(&["fixed", "uniform", "gaussian", "extreme", "weibull", "zipf"][..]), number(), number(), prop::bool::ANY)
        .prop_map(|(n, a, b, close)| format!("{n}({a}..{b}{}", if close { ")" } else { "" }));
    prop_oneof![3 => sane, 2 => fixed, 2 => hostile]
}

/// A cassandra-stress profile of hostile values.
fn profile() -> impl Strategy<Value = String> {
    let column = (prop::sample::select(&["k", "c", "v", "K"][..]), stress_dist(), stress_dist(), stress_dist())
        .prop_map(|(n, s, p, c)| format!("  - name: {n}\n    size: {s}\n    population: {p}\n    cluster: {c}\n"));
    let query = (
        sentence(&["select", "*", "from", "t", "where", "k", "=", "?", "and", "c", ";", "DROP", "KEYSPACE", "LIMIT", "token(k)", ">"], " ", 12),
        prop::bool::ANY,
    )
        .prop_map(|(cql, same)| format!("  q1:\n    cql: {cql:?}\n    fields: {}\n", if same { "samerow" } else { "[samerow]" }));
    let sane_query = Just("  q1:\n    cql: select * from t where k = ? and c = ?\n    fields: samerow\n".to_string());
    let query = prop_oneof![2 => sane_query, 1 => query];
    (prop::collection::vec(column, 0..4), prop::option::of(query), stress_dist(), stress_dist(), prop::sample::select(&["LOGGED", "UNLOGGED", "nope"][..]))
        .prop_map(|(cols, q, partitions, select, batch)| {
            format!(
                "keyspace: ks\nkeyspace_definition: \"CREATE KEYSPACE ks WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 3}};\"\ntable: t\ntable_definition: CREATE TABLE t (k text, c int, v blob, PRIMARY KEY (k, c))\ncolumnspec:\n{}insert:\n  partitions: {partitions}\n  select: {select}/1\n  batchtype: {batch}\n{}",
                cols.concat(),
                q.map(|q| format!("queries:\n{q}")).unwrap_or_default()
            )
        })
}

/// A line of a capture: JSON, or the fields of a CSV row.
fn capture_line() -> impl Strategy<Value = (String, String)> {
    (
        number(),
        prop::sample::select(&["SELECT v FROM t WHERE k = ?", "INSERT INTO ks.t (k, v) VALUES (?, ?)", "UPDATE t SET v = 1", "USE ks", ""][..]),
        number(),
        number(),
    )
        .prop_map(|(t, q, a, b)| {
            (format!("{{\"t_ms\": {t}, \"keyspace\": \"ks\", \"query\": \"{q}\", \"values\": [{a}, \"{b}\"]}}"), format!("{t},ks,\"{q}\",\"[{a}]\""))
        })
}

/// A synthetic shard export (shard `index` of 2), as JSON.
fn export(index: u32) -> serde_json::Value {
    let t0 = 1_800_000_000_000i64;
    let config = RunConfig { shard: Some(ShardConfig { index, count: 2, run_id: "r".into(), barrier_timeout_ms: 1000 }), ..RunConfig::default() };
    let mut st = OpStats::default();
    st.record_ok(1_000_000, 500_000);
    let intervals = (0..3u64)
        .map(|i| StoredInterval {
            index: i as u32,
            phase: Phase::Run,
            start_ms: i * 1000,
            end_ms: i * 1000 + 1000,
            op: "read".into(),
            stats: st.clone(),
            backlog: 0,
        })
        .collect();
    let record = RunRecord {
        id: index as i64,
        workload: "kv".into(),
        started_at_ms: t0,
        ended_at_ms: Some(t0 + 3000),
        status: RunStatus::Completed,
        config,
        env: RunEnvironment { clock_t0_unix_ms: Some(t0), ..Default::default() },
        summary: Some(Default::default()),
        tags: vec![],
        process: None,
    };
    let data = RunData {
        record,
        intervals,
        histograms: vec![(Phase::Run, "read".into(), st)],
        server_samples: vec![],
        events: vec![],
        traces: vec![],
        violations: vec![],
    };
    casslab_core::report::json::run_json(&data, None)
}

/// Every leaf of `v` by its JSON pointer.
fn leaves(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, x)| leaves(x, format!("{at}/{k}"), out)),
        serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| leaves(x, format!("{at}/{i}"), out)),
        _ => out.push(at),
    }
}

fn hostile_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        Just(json!(i64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(u64::MAX)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1e308)),
        Just(json!(null)),
        Just(json!("x".repeat(1 << 16))),
        any::<i64>().prop_map(|n| json!(n)),
        "\\PC{0,8}".prop_map(|s| json!(s)),
    ]
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn cassandra_stress_profiles_never_panic(src in profile(), command in prop::option::of(sentence(&["user", "ops(insert=1,q1=2)", "ops(q1=1)", "n=", "-pop", "seq=1..", "dist=uniform(1..10)", "-rate", "threads=", "-insert", "partitions=fixed(", ")"], " ", 8))) {
        timed("stress-profile", || {
            let c = command.and_then(|l| casslab_core::import::stress_command::parse_command(&l).ok());
            let r = casslab_core::import::cassandra_stress::import_profile(&src, "p.yaml", c.as_ref());
            if let Ok(i) = r {
                accepted("stress-profile");
                let _ = casslab_core::workload::parse_workload(&i.yaml, "imported.yaml", &BTreeMap::new());
            }
        });
    }

    #[test]
    fn captures_never_panic(lines in prop::collection::vec(capture_line(), 1..6), speed in number(), csv in prop::bool::ANY) {
        timed("captures", || {
            let text = if csv {
                format!("t_ms,keyspace,query,values\n{}\n", lines.iter().map(|(_, c)| c.as_str()).collect::<Vec<_>>().join("\n"))
            } else {
                lines.iter().map(|(j, _)| j.as_str()).collect::<Vec<_>>().join("\n")
            };
            if let Ok(entries) = casslab_core::import::capture::read_capture(&text, "c.jsonl") {
                let speed = speed.parse::<f64>().unwrap_or(1.0);
                if let Ok(i) = casslab_core::import::capture::capture_workload(&entries, "c.jsonl", "c", speed, None, None) {
                    accepted("captures");
                    let _ = casslab_core::workload::parse_workload(&i.yaml, "c.yaml", &BTreeMap::new());
                }
            }
        });
    }

    #[test]
    fn folded_stacks_never_panic(lines in prop::collection::vec(prop_oneof![
        3 => (prop::collection::vec(prop::sample::select(&["main", "read", "decode", "", "a b", "x;y"][..]), 0..6), number()).prop_map(|(frames, w)| format!("{} {w}", frames.join(";"))),
        1 => sentence(&["main", ";", "read", " ", "12", "-3", "1e400", "#", "decode;"], "", 8),
    ], 0..20)) {
        timed("folded", || {
            let text = lines.join("\n");
            if casslab_core::profile::folded::parse(&text, std::path::Path::new("s.folded"), "n1", ProfileKind::Cpu, "test").is_ok() {
                accepted("folded");
            }
        });
    }

    #[test]
    fn recordings_that_lie_about_their_sizes_never_take_the_process_down(
        // None: the size that fits the file (the reader's turn then comes)
        size in prop_oneof![3 => Just(None), 1 => prop_oneof![Just(1i64 << 62), Just(-1i64), Just(68i64), any::<i64>()].prop_map(Some)],
        pool in prop_oneof![3 => (0.0f64..1.0).prop_map(Err), 1 => any::<i64>().prop_map(Ok)],
        meta in prop_oneof![3 => (0.0f64..1.0).prop_map(Err), 1 => any::<i64>().prop_map(Ok)],
        ticks in prop_oneof![Just(1_000_000_000i64), Just(0i64), any::<i64>()],
        body in prop::collection::vec(any::<u8>(), 0..4096),
    ) {
        timed("jfr", || {
            let len = 68 + body.len() as i64;
            let size = size.unwrap_or(len);
            // an offset inside the chunk (a fraction of its body) or any number
            let within = |o: Result<i64, f64>| o.unwrap_or_else(|f| 68 + (f * (len - 68) as f64) as i64);
            let (pool, meta) = (within(pool), within(meta));
            let mut bytes = b"FLR\0\x00\x02\x00\x00".to_vec();
            for w in [size, pool, meta, 0, 0, 0, ticks] {
                bytes.extend(w.to_be_bytes());
            }
            bytes.extend(0i32.to_be_bytes());
            bytes.extend(body);
            let (_d, p) = temp("f.jfr", &bytes);
            if casslab_core::profile::check_file(&p).is_ok() {
                // past the header checks: the reader's turn, in its own process
                accepted("jfr");
                let _ = read_file(&p, "n1", 0);
            }
        });
    }

    #[test]
    fn experiment_files_never_panic(keys in prop::collection::vec((prop::sample::select(&["repetitions", "budget", "precision", "equivalence", "window", "rate", "concurrency", "rates", "judge", "design", "order", "load", "sla"][..]), number()), 0..5), variant in sentence(&["rate: ", "concurrency: ", "hosts: ", "params: {}", "workload: ", "kv", "e.yaml", "{", "}"], "", 4)) {
        timed("experiments", || {
            let mut text = String::from("workload: kv\n");
            for (k, v) in &keys {
                text.push_str(&format!("{k}: {v}\n"));
            }
            text.push_str(&format!("variants:\n  a: {{}}\n  b: {{ {variant} }}\n"));
            let (_d, p) = temp("e.yaml", text.as_bytes());
            if casslab_core::experiment::load_experiment(&p, &BTreeMap::new()).is_ok() {
                accepted("experiments");
            }
        });
    }

    #[test]
    fn edited_shard_exports_never_panic_a_merge(edits in prop::collection::vec((any::<prop::sample::Index>(), hostile_value()), 1..4)) {
        timed("merge", || {
            let mut edited = export(1);
            let mut at = Vec::new();
            leaves(&edited, String::new(), &mut at);
            for (i, v) in &edits {
                if let Some(leaf) = edited.pointer_mut(&at[i.index(at.len())]) {
                    *leaf = v.clone();
                }
            }
            let d = tempfile::tempdir().unwrap();
            let (p0, p1) = (d.path().join("s0.json"), d.path().join("s1.json"));
            std::fs::write(&p0, export(0).to_string()).unwrap();
            std::fs::write(&p1, edited.to_string()).unwrap();
            let read = |p: &std::path::Path| casslab_core::report::json::read_run_json_packed(p).map(|(data, rows)| casslab_core::merge::Shard { source: p.display().to_string(), data, rows });
            if let (Ok(a), Ok(b)) = (read(&p0), read(&p1)) {
                if let Ok(m) = casslab_core::merge::merge(vec![a, b]) {
                    accepted("merge");
                    let store = Store::open_in_memory().unwrap();
                    let _ = casslab_core::merge::save(&store, &m);
                }
            }
        });
    }
}
