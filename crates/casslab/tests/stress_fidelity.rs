//! The fidelity of `casslab import cassandra-stress`, end to end on the real node: each of our
//! copies of Apache Cassandra's four example profiles is imported from the command line
//! `user profile=… ops(insert=1) n=N no-warmup`, loaded, and read back over CQL; the figures
//! (distinct partitions, rows per partition — mean and spread —, rows per insert, the share of
//! conditional updates applied) are compared with what cassandra-stress writes for the same
//! command line. cassandra-stress itself is not on Maven Central (it ships only in the
//! distribution's tarball), so its figures come from a model of its code (`SettingsPopulation`,
//! `PartitionIterator`, `SchemaInsert`, the value generators), simulated here: seeds 1..N in
//! order, each key value drawn from its population with the seed, 128 characters for text
//! where casslab uses 62 (compared with 62: the difference casslab states), rows made from the
//! key's values, `select` per visit over the first clustering level, the last value taken when
//! none was. A read run drawing gaussian(1..N) seeds over data loaded for the middle third of
//! the seeds finds data in the share of reads that land there. n is shrunk (1,000 to 20,000) so
//! that the test takes seconds; the figures stay far from their tolerances' edges.

mod common;

use common::*;
use scylla::value::{CqlValue, Row};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

fn profile(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/stress").join(name)
}

/// Imports `profile` with the command line `command` into `dir`, returning the workload's path
/// and what import said on stderr.
fn import(dir: &Path, name: &str, command: &str) -> (PathBuf, String) {
    let out = dir.join(format!("{}.casslab.yaml", name.trim_end_matches(".yaml")));
    let line = format!("cassandra-stress user profile={} {command}", profile(name).display());
    let (code, stdout, stderr) = run(casslab().args(["import", "cassandra-stress", "--command", &line, "-o", out.to_str().unwrap()]));
    assert_eq!(code, 0, "import failed:\n{stdout}\n{stderr}");
    (out, stderr)
}

/// Lints and loads `workload` into the fresh keyspace `ks` (with `-P` settings `params`);
/// returns the load's summary.
fn load(workload: &Path, ks: &str) -> String {
    load_with(workload, ks, &[])
}

fn load_with(workload: &Path, ks: &str, params: &[&str]) -> String {
    let (rt, s) = session(node());
    rt.block_on(s.query_unpaged(format!("DROP KEYSPACE IF EXISTS {ks}"), &[])).unwrap();
    let w = workload.to_str().unwrap();
    let (code, out, err) = run(casslab().args(["lint", w, "-P", &format!("keyspace={ks}")]));
    assert_eq!(code, 0, "lint found errors:\n{out}\n{err}");
    let (_s, store) = temp_store();
    let _g = shared_load_lock();
    let (code, out, err) = run(casslab()
        .args(["run", w, "--hosts", node(), "--load-only", "--no-server-metrics", "--no-lint", "-P", &format!("keyspace={ks}")])
        .args(params.iter().flat_map(|p| ["-P", *p]))
        .args(store_arg(&store)));
    assert_eq!(code, 0, "load failed:\n{out}\n{err}");
    out
}

fn rows(cql: &str) -> Vec<Vec<Option<CqlValue>>> {
    let (rt, s) = session(node());
    rt.block_on(async {
        let mut st = scylla::statement::unprepared::Statement::new(cql);
        st.set_page_size(5000);
        let mut out = Vec::new();
        let mut paging = scylla::response::PagingState::start();
        loop {
            let (r, next) = s.query_single_page(st.clone(), &[], paging).await.unwrap_or_else(|e| panic!("{cql}: {e}"));
            out.extend(r.into_rows_result().unwrap().rows::<Row>().unwrap().map(|r| r.unwrap().columns));
            match next.into_paging_control_flow() {
                std::ops::ControlFlow::Break(()) => return out,
                std::ops::ControlFlow::Continue(p) => paging = p,
            }
        }
    })
}

/// Count and mean (and standard deviation) of the rows per partition of `rows`, keyed by
/// their first `key` columns.
fn per_partition(rows: &[Vec<Option<CqlValue>>], key: usize) -> (usize, f64, f64) {
    let mut m: HashMap<String, usize> = HashMap::new();
    for r in rows {
        *m.entry(format!("{:?}", &r[..key])).or_insert(0) += 1;
    }
    let n = m.len().max(1) as f64;
    let mean = m.values().sum::<usize>() as f64 / n;
    let var = m.values().map(|c| (*c as f64 - mean).powi(2)).sum::<f64>() / n;
    (m.len(), mean, var.sqrt())
}

/// The executions of `op` in a run's summary.
fn count(out: &str, op: &str) -> u64 {
    summary_row(&summary_rows(out), op)[0].parse().unwrap_or_else(|_| panic!("count of {op} in:\n{out}"))
}

/// Figures of one load.
#[derive(Debug, Clone, Copy)]
struct Figures {
    partitions: f64,
    rows_mean: f64,
    rows_sd: f64,
    rows_per_insert: f64,
}

fn close(what: &str, measured: f64, expected: f64, tolerance: f64) {
    let off = (measured - expected).abs() / expected.abs().max(1e-9);
    assert!(off <= tolerance, "{what}: measured {measured:.3}, cassandra-stress's {expected:.3} ({:.1}% off, at most {:.0}%)", off * 100.0, tolerance * 100.0);
    eprintln!("{what}: measured {measured:.3}, cassandra-stress's {expected:.3} ({:+.1}%)", (measured - expected) / expected * 100.0);
}

/// `partitions_tolerance`: cassandra-stress's `n=` counts partitions exactly; casslab's load
/// counts inserts (n / mean partitions per insert), so with drawn partitions per insert the
/// partitions visited vary by ±√inserts × their spread (±9 % for 39 inserts of uniform(1..50)).
fn compare(name: &str, m: Figures, e: Figures, partitions_tolerance: f64) {
    close(&format!("{name} distinct partitions"), m.partitions, e.partitions, partitions_tolerance);
    close(&format!("{name} rows per partition, mean"), m.rows_mean, e.rows_mean, 0.08);
    if e.rows_sd > 0.05 {
        close(&format!("{name} rows per partition, spread"), m.rows_sd, e.rows_sd, 0.2);
    } else {
        assert!(m.rows_sd < 0.05, "{name}: rows per partition vary ({}) where cassandra-stress's do not", m.rows_sd);
    }
    close(&format!("{name} rows per insert"), m.rows_per_insert, e.rows_per_insert, partitions_tolerance.max(0.1));
}

/// splitmix64: the model's random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// cassandra-stress's uniform(a..b): a whole number in [a, b].
    fn uniform(&mut self, a: i64, b: i64) -> i64 {
        a + (self.unit() * (b - a + 1) as f64) as i64
    }
    /// cassandra-stress's gaussian(a..b): a normal draw, truncated, clamped to [a, b].
    fn gaussian(&mut self, a: i64, b: i64) -> i64 {
        let (mean, sd) = ((a + b) as f64 / 2.0, (b - a) as f64 / 6.0);
        let z = (-2.0 * self.unit().max(1e-300).ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos();
        ((mean + sd * z) as i64).clamp(a, b)
    }
    /// A text key of `len` characters from an alphabet of `chars`.
    fn text(&mut self, len: i64, chars: u64) -> String {
        (0..len).map(|_| char::from_u32((self.next() % chars) as u32 + 0x100).unwrap()).collect()
    }
}

/// A model of one cassandra-stress load of `n` seeds in order: `key(seed)` makes a partition's
/// key, `rows(key)` its first-level groups (rows under each), `partitions()` an insert's
/// partitions, `select()` a visit's chance.
fn model(
    n: u64,
    mut key: impl FnMut(u64) -> String,
    rows: impl Fn(&str) -> Vec<u64>,
    mut partitions: impl FnMut() -> u64,
    mut select: impl FnMut() -> f64,
) -> Figures {
    let mut written: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut rng = Rng(99);
    let (mut seed, mut inserts) = (1u64, 0u64);
    while seed <= n {
        let p = partitions().min(n - seed + 1);
        inserts += 1;
        for _ in 0..p {
            let k = key(seed);
            seed += 1;
            let groups = rows(&k);
            let chance = select();
            let mut any = false;
            let picked = written.entry(k).or_default();
            for i in 0..groups.len() {
                if chance > 0.99999 || chance >= rng.unit() || (!any && i + 1 == groups.len()) {
                    any = true;
                    picked.insert(i);
                }
            }
        }
    }
    let sizes: Vec<f64> = written
        .iter()
        .map(|(k, picked)| {
            let g = rows(k);
            picked.iter().map(|i| g[*i]).sum::<u64>() as f64
        })
        .collect();
    let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
    let sd = (sizes.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / sizes.len() as f64).sqrt();
    Figures { partitions: sizes.len() as f64, rows_mean: mean, rows_sd: sd, rows_per_insert: sizes.iter().sum::<f64>() / inserts as f64 }
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01B3))
}

#[test]
fn apache_example_profiles_write_what_cassandra_stress_writes() {
    let dir = tempfile::tempdir().unwrap();

    // cqlstress-example: 1..50 partitions an insert, dates uniform(20..40) × lval
    // uniform(1..4), select uniform(1..10)/10 (a real number: uniform on [0.1, 1.1), at most 1)
    let n = 1000;
    let (w, err) = import(dir.path(), "apache-example.yaml", &format!("ops(insert=1) n={n} no-warmup"));
    assert!(err.contains("6 clustering columns") && err.contains("62 characters"), "the differences are said:\n{err}");
    let out = load(&w, "fid_example");
    let r = rows("SELECT name, choice, date, lval FROM fid_example.typestest");
    let (parts, mean, sd) = per_partition(&r, 2);
    let measured = Figures { partitions: parts as f64, rows_mean: mean, rows_sd: sd, rows_per_insert: r.len() as f64 / count(&out, "insert") as f64 };
    let mut rng = Rng(1);
    let example = |chars: u64| {
        let mut k = Rng(2);
        move |_seed: u64| {
            let id = k.uniform(1, 1_000_000) as u64;
            let mut r = Rng(id);
            let len = r.uniform(1, 10);
            r.text(len, chars)
        }
    };
    let rows_of = |key: &str| {
        let mut r = Rng(hash(key));
        (0..r.uniform(20, 40)).map(|_| r.uniform(1, 4) as u64).collect::<Vec<_>>()
    };
    let mut sel = Rng(3);
    let expected = model(n, example(62), rows_of, || rng.uniform(1, 50) as u64, || (1.0 + sel.unit() * 10.0).min(10.0) / 10.0);
    compare("example", measured, expected, 0.2);
    let mut rng = Rng(1);
    let mut sel = Rng(3);
    let with_128 = model(n, example(128), rows_of, || rng.uniform(1, 50) as u64, || (1.0 + sel.unit() * 10.0).min(10.0) / 10.0);
    eprintln!("example with cassandra-stress's 128 characters: {with_128:?}");

    // cqlstress-insanity: whole partitions of gaussian(1..20) dates, one an insert
    let n = 3000;
    let (w, _) = import(dir.path(), "apache-insanity.yaml", &format!("ops(insert=1) n={n} no-warmup"));
    let out = load(&w, "fid_insanity");
    let r = rows("SELECT name, choice, date FROM fid_insanity.insanitytest");
    let (parts, mean, sd) = per_partition(&r, 2);
    let measured = Figures { partitions: parts as f64, rows_mean: mean, rows_sd: sd, rows_per_insert: r.len() as f64 / count(&out, "insert") as f64 };
    let mut k = Rng(4);
    let expected = model(
        n,
        |_| {
            let len = k.uniform(4, 8);
            k.text(len, 62)
        },
        |key| vec![Rng(hash(key)).gaussian(1, 20) as u64],
        || 1,
        || 1.0,
    );
    compare("insanity", measured, expected, 0.03);

    // cqlstress-counter: a counter per text key of 1..4 characters, one increment an insert
    let n = 20_000;
    let (w, _) = import(dir.path(), "apache-counter.yaml", &format!("ops(insert=1) n={n} no-warmup"));
    let out = load(&w, "fid_counter");
    let r = rows("SELECT name, count FROM fid_counter.counttest");
    let (parts, mean, sd) = per_partition(&r, 1);
    let total: i64 = r
        .iter()
        .map(|row| match &row[1] {
            Some(CqlValue::Counter(c)) => c.0,
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(total, n as i64, "every visit increments once: the counters add up to n");
    let measured = Figures { partitions: parts as f64, rows_mean: mean, rows_sd: sd, rows_per_insert: r.len() as f64 / count(&out, "insert") as f64 };
    let counter = |chars: u64| {
        let mut k = Rng(5);
        move |_seed: u64| {
            let len = k.uniform(1, 4);
            k.text(len, chars)
        }
    };
    let expected = model(n, counter(62), |_| vec![1], || 1, || 1.0);
    // rows per insert over CQL: the distinct rows, so keys that collide count once
    let expected = Figures { rows_per_insert: expected.partitions / n as f64, ..expected };
    compare("counter", measured, expected, 0.03);
    let with_128 = model(n, counter(128), |_| vec![1], || 1, || 1.0);
    eprintln!("counter with cassandra-stress's 128 characters: {} distinct partitions (casslab's 62: {})", with_128.partitions, expected.partitions);

    // cqlstress-lwt: `IF body = NULL`, 1/1000 of 1000 posts; its replication factor of 3 on one
    // node fails every Paxos round (a quorum of 2 replicas), as it would for cassandra-stress:
    // the import says so and the factor is a parameter
    let n = 1000;
    let (w, err) = import(dir.path(), "apache-lwt.yaml", &format!("ops(insert=1) n={n} no-warmup"));
    assert!(err.contains("-P replication_factor=1"), "{err}");
    let out = load_with(&w, "fid_lwt", &["replication_factor=1"]);
    let r = rows("SELECT domain, published_date FROM fid_lwt.blogposts");
    let (parts, mean, sd) = per_partition(&r, 1);
    let inserts = count(&out, "insert");
    let measured = Figures { partitions: parts as f64, rows_mean: mean, rows_sd: sd, rows_per_insert: r.len() as f64 / inserts as f64 };
    let mut k = Rng(6);
    let expected = model(
        n,
        |_| {
            let len = k.gaussian(5, 100);
            k.text(len, 62)
        },
        |_| vec![1; 1000],
        || 1,
        || 0.001,
    );
    compare("lwt", measured, expected, 0.03);
    let not_applied = summary_rows(&out).iter().find(|(op, _)| op == "insert.not_applied").map_or(0, |(_, c)| c[0].parse::<u64>().unwrap());
    let applied = 1.0 - not_applied as f64 / inserts as f64;
    eprintln!("lwt: {:.4} of the conditional inserts applied (cassandra-stress: every one whose rows are new, 1.0 here)", applied);
    assert!(applied > 0.99, "the condition IF body = NULL holds for new rows: {applied}");
}

#[test]
fn reads_land_in_the_middle_third_of_the_seeds_as_often_as_cassandra_stress_sends_them_there() {
    // data for the middle third of 3000 seeds only, then reads of gaussian(1..3000) seeds:
    // a read finds a row exactly when its seed is in the middle third (keys of 4..8 characters
    // from 100 billion identities do not collide); cassandra-stress's share is 68.3 % (±1 sd)
    let dir = tempfile::tempdir().unwrap();
    let (w, _) = import(dir.path(), "apache-insanity.yaml", "ops(insert=1) n=1000 -pop seq=1001..2000 no-warmup");
    load(&w, "fid_third");
    let (reads, _) = import(dir.path(), "apache-insanity.yaml", "ops(simple1=1) n=3000 duration=3s no-warmup");
    let (_s, store) = temp_store();
    let _g = shared_load_lock();
    let (code, out, err) = run(casslab()
        .args(["run", reads.to_str().unwrap(), "--hosts", node(), "--no-server-metrics", "--no-lint", "--concurrency", "16", "-P", "keyspace=fid_third"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "read run failed:\n{out}\n{err}");
    let line = out.lines().find(|l| l.contains("simple1") && l.contains("found nothing")).unwrap_or_else(|| panic!("no rows-read line:\n{out}"));
    let reads_total = count(&out, "simple1") as f64;
    // "… rows per execution, 8,150 of 25,577 (32%) found nothing" (or "none found nothing")
    let after = line.split("per execution, ").nth(1).unwrap_or_else(|| panic!("{line}"));
    let empty: f64 = if after.starts_with("none") {
        0.0
    } else {
        after.split(" of ").next().unwrap().replace(',', "").trim().parse().unwrap_or_else(|e| panic!("{line}: {e}"))
    };
    let share = 1.0 - empty / reads_total;
    assert!(reads_total > 500.0, "{out}");
    close("share of reads in the middle third", share, 0.6827, 0.05);
}
