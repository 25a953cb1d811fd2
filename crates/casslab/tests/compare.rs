//! `casslab compare` end to end without a cluster: synthetic runs are written into a
//! temporary store through `casslab_core::store::Store` (as `casslab run` writes them), then
//! the real binary compares them. Each run is 10 s of warm-up (200 ms latencies, which must
//! not count) and 10 minutes of 1-second intervals of `read` (p99 ≈ 10 ms in the baseline,
//! ≈ 15 ms in the regressed run, everything else alike) and `update`.

mod common;
use casslab_core::config::{RunConfig, RunEnvironment};
use casslab_core::stats::{IntervalSample, OpStats, Phase};
use casslab_core::store::{RunId, RunStatus, RunSummary, Store};
use common::{casslab, run};
use std::path::PathBuf;
use std::sync::OnceLock;

/// splitmix64: a small deterministic generator (the tests need no statistics crate).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One interval's reads: 98.5% between 1 and 3 ms, 1.5% around `tail_ms` (so p99 is about
/// 0.97 × tail_ms), every latency scaled by the interval's `level`.
fn reads(rng: &mut Rng, tail_ms: f64, level: f64) -> OpStats {
    let mut s = OpStats::default();
    for _ in 0..(900.0 + 200.0 * rng.next()) as u64 {
        let ms = if rng.next() < 0.985 { 1.0 + 2.0 * rng.next() } else { tail_ms * (0.9 + 0.2 * rng.next()) };
        let ns = (ms * level * 1e6) as u64;
        s.record_ok(ns, ns);
    }
    s
}

fn updates(rng: &mut Rng, level: f64) -> OpStats {
    let mut s = OpStats::default();
    for _ in 0..(80.0 + 40.0 * rng.next()) as u64 {
        let ns = ((2.0 + 2.0 * rng.next()) * level * 1e6) as u64;
        s.record_ok(ns, ns);
    }
    s
}

/// Writes a run: 10 warm-up intervals, then `run_s` one-second intervals.
fn write_run(store: &Store, seed: u64, tail_ms: f64, run_s: u32) -> RunId {
    let env = RunEnvironment { casslab_version: "test".into(), node_count: 1, client_cores: 4, ..Default::default() };
    let config = RunConfig { workload: "kv".into(), ..RunConfig::default() };
    let id = store.begin_run("kv", &config, &env, &[], 1_700_000_000_000).unwrap();
    let mut rng = Rng(seed);
    for index in 0..10 + run_s {
        let warmup = index < 10;
        let level = 0.9 + 0.2 * rng.next();
        let mut read = reads(&mut rng, tail_ms, level);
        if warmup {
            read = OpStats::default();
            (0..1000).for_each(|_| read.record_ok(200_000_000, 200_000_000));
        }
        let start_ms = u64::from(index) * 1000;
        let sample = IntervalSample {
            index,
            phase: if warmup { Phase::Warmup } else { Phase::Run },
            start_ms,
            end_ms: start_ms + 1000,
            ops: vec![("read".into(), read), ("update".into(), updates(&mut rng, level))],
            backlog: 0,
        };
        store.add_interval(id, &sample).unwrap();
    }
    store.finish_run(id, RunStatus::Completed, &RunSummary::default(), 1_700_000_700_000).unwrap();
    id
}

struct Runs {
    store: PathBuf,
    baseline: RunId,
    regressed: RunId,
    /// The baseline's twin: same distributions, different draws.
    twin: RunId,
    /// Three minutes only.
    short: RunId,
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        remove_stale_stores(&dir);
        let path = dir.join(format!("compare-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let store = Store::open(&path).unwrap();
        let baseline = write_run(&store, 1, 10.0, 600);
        let regressed = write_run(&store, 2, 15.0, 600);
        let twin = write_run(&store, 3, 10.0, 600);
        let short = write_run(&store, 4, 10.0, 180);
        Runs { store: path, baseline, regressed, twin, short }
    })
}

/// The store lives until the test process ends, so it cannot clean up after itself; the
/// next run removes stores left over an hour ago.
fn remove_stale_stores(dir: &std::path::Path) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let stale = entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < hour_ago);
        if stale && entry.file_name().to_string_lossy().starts_with("compare-") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn compare(args: &[&str]) -> (i32, String, String) {
    let r = runs();
    run(casslab().arg("compare").args(args).arg("--store").arg(&r.store))
}

/// The table row of `metric` in the block of `op`.
fn row<'a>(out: &'a str, op: &str, metric: &str) -> &'a str {
    let block = out.split(&format!("\n  {op}\n")).nth(1).unwrap_or_else(|| panic!("no {op} block in\n{out}"));
    block.lines().find(|l| l.trim_start().starts_with(&format!("{metric} "))).unwrap_or_else(|| panic!("no {metric} row in\n{out}"))
}

#[test]
fn a_regression_is_significant_and_fails_the_max_regression_gate() {
    let r = runs();
    let (a, b) = (r.baseline.to_string(), r.regressed.to_string());
    let (code, out, err) = compare(&[&a, &b, "--max-regression", "10%"]);
    assert_eq!(code, 1, "stdout:\n{out}\nstderr:\n{err}");
    let p99 = row(&out, "read", "p99");
    assert!(p99.trim_end().ends_with('*'), "the read p99 change should be marked significant: {p99}");
    assert!(p99.contains("+4") || p99.contains("+5"), "read p99 should be up by about 50%: {p99}");
    let p50 = row(&out, "read", "p50");
    assert!(!p50.trim_end().ends_with('*'), "read p50 did not change: {p50}");
    let sentence = format!("run {b}'s read p99 is ");
    let verdict = out.lines().find(|l| l.contains(&sentence)).unwrap_or_else(|| panic!("no verdict on read p99:\n{out}"));
    // the interval says which level it is: 95% for the fourteen judged figures together
    // (seven of each operation, the typical p99 among them)
    assert!(verdict.contains("higher than run ") && verdict.contains("95% CI over 14 judged figures (99.64% each, Bonferroni)"), "{verdict}");
    assert!(row(&out, "read", "p99_typical").trim_end().ends_with('*'), "the typical p99 rose too:\n{out}");
    let failed: Vec<&str> = err.lines().filter(|l| l.starts_with("gate failed: ")).collect();
    assert_eq!(failed.len(), 1, "{err}");
    assert!(failed[0].contains("--max-regression 10%") && failed[0].contains("read p99 +"), "{err}");
    assert!(!failed[0].contains("update "), "update did not change: {err}");

    // --baseline picks the same baseline when it is not listed first.
    let (code, out2, _) = compare(&[&b, "--baseline", &a]);
    assert_eq!(code, 0);
    assert!(out2.contains(&format!("baseline: run {a}")), "{out2}");
    assert_eq!(row(&out2, "read", "p99"), p99);
}

#[test]
fn fail_if_checks_the_compared_run_against_a_threshold() {
    let r = runs();
    let (a, b) = (r.baseline.to_string(), r.regressed.to_string());
    // The regressed run's read p99 is about 14.5 ms: under 45 ms (and the 200 ms warm-up
    // does not count), over 12 ms.
    let (code, _, err) = compare(&[&a, &b, "--fail-if", "read.p99 > 45ms", "--fail-if", "total.errors > 0"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("gates passed"), "{err}");
    let (code, _, err) = compare(&[&a, &b, "--fail-if", "read.p99 > 12ms"]);
    assert_eq!(code, 1, "{err}");
    let line = err.lines().find(|l| l.starts_with("gate failed: ")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains(&format!("--fail-if 'read.p99 > 12ms': run {b} read p99 = 14.")), "{line}");
}

#[test]
fn identical_runs_show_no_difference() {
    let r = runs();
    let (a, twin) = (r.baseline.to_string(), r.twin.to_string());
    let (code, out, err) = compare(&[&a, &twin, "--max-regression", "10%"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains(&format!("run {twin} vs run {a}, read p99: no difference detected at this run length")), "{out}");
    assert!(!row(&out, "read", "p99").trim_end().ends_with('*'), "{out}");
    assert!(!row(&out, "total", "ops/s").trim_end().ends_with('*'), "{out}");
    assert!(row(&out, "total", "ops/s per client core").contains('['), "{out}");
}

/// Two runs against one baseline: per comparison by default, and the text says what that
/// allows over both; `--family` holds the two comparisons' figures together.
#[test]
fn several_runs_against_one_baseline_say_their_family() {
    let r = runs();
    let (a, b, twin) = (r.baseline.to_string(), r.regressed.to_string(), r.twin.to_string());
    let (code, out, err) = compare(&[&a, &b, &twin]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("over the 14 figures judged in each comparison (Bonferroni: each at 99.64%); total is shown, not judged: it contains the operations; 95% per comparison: over its 2 comparisons, the chance of some false claim can reach 10% (--family holds them all together)"),
        "{out}"
    );
    let (code, out, err) = compare(&[&a, &b, &twin, "--family", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["family"], "experiment");
    let method = v["method"].to_string();
    assert!(
        method.contains("95% intervals that hold together over all 28 figures judged in the 2 comparisons (--family; Bonferroni: each at 99.82%)"),
        "{method}"
    );
    let verdicts = v["verdicts"].to_string();
    assert!(verdicts.contains("95% CI over 28 judged figures (99.82% each, Bonferroni)"), "{verdicts}");
}

#[test]
fn a_short_run_is_called_too_short() {
    let r = runs();
    let (a, short) = (r.baseline.to_string(), r.short.to_string());
    // a gate that cannot judge does not pass: it exits 4, unless the user accepts it
    let (code, out, err) = compare(&[&a, &short, "--max-regression", "10%"]);
    assert_eq!(code, 4, "{err}");
    assert!(out.contains(&format!("run {short} vs run {a}: too short to judge (")), "{out}");
    assert!(out.contains(&format!("not judged): run {short} has 3 windows of 60 s; needs at least 5 (≈ 5 min)")), "{out}");
    assert!(err.contains("warning: --max-regression not checked") && err.contains("gates undecided"), "{err}");
    let (code, _, err) = compare(&[&a, &short, "--max-regression", "10%", "--allow-undecided"]);
    assert_eq!(code, 0, "{err}");
    // With 30-second windows the same run has 6 windows: enough to judge.
    let (_, out, _) = compare(&[&a, &short, "--window", "30s"]);
    assert!(!out.contains("too short"), "{out}");
}

#[test]
fn help_documents_the_options() {
    let (code, out, _) = run(casslab().args(["compare", "--help"]));
    assert_eq!(code, 0);
    for flag in ["--baseline", "--window", "--resamples", "--confidence", "--fail-if", "--max-regression", "--server-cores", "--family", "--store"] {
        assert!(out.contains(flag), "compare --help lacks {flag}:\n{out}");
    }
}

#[test]
fn mistakes_get_clear_messages() {
    let r = runs();
    let a = r.baseline.to_string();
    let (code, _, err) = compare(&[&a, "--fail-if", "read.p98 > 4ms"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown metric \"p98\"; use one of ops_s, mean, p50, p95, p99, p999, max, errors"), "{err}");
    let (code, _, err) = compare(&[&a, "--fail-if", "read.p99 > 45"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a latency needs a unit"), "{err}");
    let (code, _, err) = compare(&[&a, "--max-regression", "lots"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("as a percentage, e.g. 10%"), "{err}");
    let (code, _, err) = compare(&[&r.short.to_string(), "--fail-if", "scan.p99 > 4ms"]);
    assert_eq!(code, 2, "a gate on an operation the run never did is bad input: {err}");
    assert!(err.contains("has no operation \"scan\"; it has read, update, total"), "{err}");
    let (code, _, err) = compare(&["999999"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no saved run with id 999999"), "{err}");
    let (code, _, err) = compare(&["--experiment", "never-ran"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--experiment never-ran: no saved experiment is named or has the id \"never-ran\""), "{err}");
    let (code, _, err) = compare(&[&a, "--experiment", "never-ran"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

/// Two finished runs of 20 s measured each (the length `casslab run` saves in its summary).
fn default_length_runs() -> (tempfile::TempDir, PathBuf) {
    use common::runs::{save_run, Shape};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let store = Store::open(&path).unwrap();
    for seed in [1, 2] {
        save_run(&store, &Shape { rate_per_s: None, rows: "100000", spike_at_s: 30, finish: true }, seed);
    }
    (dir, path)
}

#[test]
fn the_window_follows_the_runs_length_and_too_short_is_said_once() {
    let (_d, store) = default_length_runs();
    let cmp = |args: &[&str]| run(casslab().arg("compare").args(args).arg("--store").arg(&store));
    // no --window: 2 s windows, 10 of each run, and verdicts rather than "too short"
    let (code, out, err) = cmp(&["1", "2"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("window: 2 s (from the runs' length: the shortest measured 20 s, so 10 windows); --window sets it"), "{err}");
    assert!(out.starts_with("windows of 2 s,"), "{out}");
    assert!(!out.contains("too short"), "{out}");
    assert!(out.contains("run 2 vs run 1, read p99: ") || out.contains("run 2's read p99 is "), "a verdict on read p99:\n{out}");
    // windows too long for the runs: one explanation, not one line per figure
    let (code, out, err) = cmp(&["1", "2", "--window", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    let verdicts: Vec<&str> = out.lines().filter(|l| l.contains("too short") && l.starts_with("  run ")).collect();
    assert_eq!(verdicts.len(), 1, "{out}");
    assert!(
        verdicts[0].contains("run 2 vs run 1: too short to judge (")
            && verdicts[0].contains("figures not judged): run 1 has 1 and run 2 has 1 window of 60 s; needs at least 5"),
        "{}",
        verdicts[0]
    );
    assert!(verdicts[0].ends_with("compare longer runs, or pass a shorter --window"), "{}", verdicts[0]);
    assert!(!err.contains("window: "), "a window given is not chosen: {err}");
}

#[test]
fn a_run_compared_with_itself_is_warned_about() {
    let (_d, store) = default_length_runs();
    let (code, out, err) = run(casslab().args(["compare", "1", "1", "--store"]).arg(&store));
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("warning: run 1 is named more than once; a run is never compared with itself and it is the only run"), "{err}");
    let (_, _, err) = run(casslab().args(["compare", "2", "latest", "--store"]).arg(&store));
    assert!(err.contains("warning: run 2 is named more than once"), "`latest` is run 2: {err}");
    let (_, _, err) = run(casslab().args(["compare", "1", "2", "--baseline", "2", "--store"]).arg(&store));
    assert!(!err.contains("named more than once"), "the baseline may also be listed: {err}");
}
