//! End-to-end tests of runs whose rate changes over time. What the schedule alone decides runs
//! against the in-process instant target (no server: its answers take no time, so what is
//! measured is the schedule, and these tests need no lock on the machine and run side by side):
//! a schedule of held levels and a ramp keeps each stage's rate (the printed per-stage summary),
//! spikes appear in the stored interval series when the schedule puts them, a `rate` event moves
//! the rate inside a run, and the shipped `daily-shape` workload's achieved rate follows its sine
//! (busiest at the crests, quietest in the troughs) and its spike. Against the real test node
//! (see `common::node`): a ramp past the client's ceiling counts the operations it never
//! started, in the verdict, the JSON export and the HTML report; a kept fixed rate sets the count
//! and reports service time beside latency from the intended start, a rate one request in flight
//! cannot keep is said, and find-max searches rates and reports the highest that met the SLA.

mod common;
use common::{casslab, load_lock, node, run, store_arg, summary_rows, temp_store};
use std::path::Path;

/// (seconds since the run phase began at the interval's start, at its end, operations in it)
/// of the latest run's run-phase intervals, but the short last one (the run's final fraction of
/// a second, too short for a rate).
fn run_intervals(store: &Path) -> Vec<(f64, f64, u64)> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT start_ms, end_ms, sum(ok + error_count) FROM intervals
             WHERE run_id = (SELECT max(id) FROM runs) AND phase = 'run' GROUP BY idx ORDER BY idx",
        )
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(|r| r.unwrap()).collect();
    let origin_ms = rows.first().expect("the run has intervals").0;
    rows.iter().filter(|(s, e, _)| e - s >= 500).map(|(s, e, n)| ((s - origin_ms) as f64 / 1000.0, (e - origin_ms) as f64 / 1000.0, *n as u64)).collect()
}

/// The rows of the printed "stages of the schedule" table: (stage, offered/s, achieved/s, errors).
fn stage_rows(stdout: &str) -> Vec<(String, f64, f64, u64)> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("stages of the schedule")).skip(2);
    let mut rows = Vec::new();
    for l in lines.by_ref().take_while(|l| !l.trim().is_empty()) {
        // from, to, the stage's words, then offered, started, achieved, p50, p99, errors, backlog
        let cells: Vec<&str> = l.split_whitespace().collect();
        let n = cells.len();
        assert!(n >= 9, "a stage row has its figures: {l}");
        let num = |c: &str| c.parse::<f64>().unwrap_or_else(|_| panic!("{c:?} in {l}"));
        rows.push((cells[2..n - 7].join(" "), num(cells[n - 7]), num(cells[n - 5]), num(cells[n - 2]) as u64));
    }
    rows
}

fn within(got: f64, want: f64, share: f64) -> bool {
    (got - want).abs() <= want * share
}

#[test]
fn each_stage_of_a_schedule_keeps_its_rate() {
    let (_d, store) = temp_store();
    let schedule = "200 for 8s, 400 for 8s, ramp 400..800 over 8s, 800 for 8s";
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "--target", "instant", "--no-lint", "-P", "rows=2000", "--warmup", "0s", "--duration", "32s", "--rate", schedule])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = stage_rows(&out);
    let stages: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(stages, ["200 for 8s", "400 for 8s", "ramp 400..800 over 8s", "800 for 8s"], "{out}");
    // a held level is offered as written, and achieved within 2 % of it
    for ((stage, offered, achieved, errors), level) in rows.iter().zip([Some(200.0), Some(400.0), None, Some(800.0)]) {
        assert_eq!(*errors, 0, "{stage}: {out}");
        let want = match level {
            Some(l) => {
                assert!(within(*offered, l, 0.01), "{stage} offered {offered}/s:\n{out}");
                l
            }
            // the ramp's mean over its measured intervals: about halfway
            None => {
                assert!(within(*offered, 600.0, 0.02), "{stage} offered {offered}/s:\n{out}");
                *offered
            }
        };
        assert!(within(*achieved, want, 0.02), "{stage}: achieved {achieved}/s against {want}/s:\n{out}");
    }
    // the levels of the curve: each held level once, whole (a tick late by more than a few ms
    // shifts the intervals after it, and one that then straddles two levels offered neither),
    // and the ramp's intervals a level each
    let levels = level_rows(&out);
    let held: Vec<&str> = levels.iter().filter(|(l, _)| !l.starts_with('≈')).map(|(l, _)| l.as_str()).collect();
    assert_eq!(held, ["200/s", "400/s", "800/s"], "{out}");
    assert!(levels.iter().filter(|(l, _)| !l.starts_with('≈')).all(|(_, n)| (6..=8).contains(n)), "{out}");
    let ramp: Vec<usize> = levels.iter().filter(|(l, _)| l.starts_with('≈')).map(|(_, n)| *n).collect();
    assert!(ramp.len() >= 6 && ramp.iter().all(|n| *n == 1), "a point per interval of the ramp: {out}");
}

/// The rows of the printed "latency against offered rate" table: (level, intervals).
fn level_rows(stdout: &str) -> Vec<(String, usize)> {
    let lines = stdout.lines().skip_while(|l| !l.starts_with("latency against offered rate")).skip(2);
    let mut rows = Vec::new();
    for l in lines.take_while(|l| !l.trim().is_empty() && !l.trim_start().starts_with("no knee") && !l.trim_start().starts_with("knee at")) {
        // the level's words (and a knee's mark), intervals, then seven figures
        let cells: Vec<&str> = l.split_whitespace().collect();
        let n = cells.len();
        assert!(n >= 9, "a level row has its figures: {l}");
        let words: Vec<&str> = cells[..n - 8].iter().copied().filter(|w| *w != "←" && *w != "knee").collect();
        rows.push((words.join(" "), cells[n - 8].parse().unwrap_or_else(|_| panic!("{l}"))));
    }
    rows
}

#[test]
fn spikes_appear_in_the_interval_series_when_the_schedule_puts_them() {
    let (_d, store) = temp_store();
    // 200/s, three times that for 3 s at 5 s and at 15 s
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "--target", "instant", "--no-lint", "-P", "rows=2000", "--warmup", "0s", "--duration", "20s"])
        .args(["--rate", "200, spike x3 for 3s every 10s from 5s"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{out}\n{err}");
    let ivs = run_intervals(&store);
    assert!(ivs.len() >= 19, "{ivs:?}");
    // half a second of slack either side for where the intervals fall
    let windows = [(5.0, 8.0), (15.0, 18.0)];
    let inside = |s: f64, e: f64| windows.iter().any(|(a, b)| s >= a - 0.5 && e <= b + 0.5);
    let outside = |s: f64, e: f64| windows.iter().all(|(a, b)| e <= a + 0.0 || s >= *b);
    for (a, b) in windows {
        let spiked: Vec<_> = ivs.iter().filter(|(s, e, _)| *s >= a - 0.5 && *e <= b + 0.5).collect();
        assert!(spiked.len() >= 2, "intervals within the spike at {a} s: {ivs:?}");
    }
    for (s, e, n) in &ivs {
        let per_s = *n as f64 / (e - s);
        if inside(*s, *e) {
            assert!(per_s >= 500.0, "{per_s:.0}/s in the spike, {s:.1}-{e:.1} s: {ivs:?}");
        } else if outside(*s, *e) {
            assert!(per_s <= 240.0, "{per_s:.0}/s outside the spikes, {s:.1}-{e:.1} s: {ivs:?}");
        }
    }
}

#[test]
fn a_rate_event_moves_the_rate_inside_a_run() {
    let (_d, store) = temp_store();
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "--target", "instant", "--no-lint", "-P", "rows=2000", "--warmup", "0s", "--duration", "12s"])
        .args(["--rate", "200", "--event", "6s rate 500"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{out}\n{err}");
    let ivs = run_intervals(&store);
    let before: Vec<f64> = ivs.iter().filter(|(_, e, _)| *e <= 5.5).map(|(s, e, n)| *n as f64 / (e - s)).collect();
    let after: Vec<f64> = ivs.iter().filter(|(s, _, _)| *s >= 7.0).map(|(s, e, n)| *n as f64 / (e - s)).collect();
    assert!(before.len() >= 4 && after.len() >= 4, "{ivs:?}");
    assert!(before.iter().all(|r| within(*r, 200.0, 0.15)), "before the event: {before:?}");
    assert!(after.iter().all(|r| within(*r, 500.0, 0.15)), "after the event: {after:?}");
}

/// The offered rate of `daily-shape` as the test sets it (100..500 per s, a 20 s period, ×3
/// from 19 s to 21 s), averaged over `from_s..to_s`.
fn daily_rate(from_s: f64, to_s: f64) -> f64 {
    let at = |t: f64| {
        let sine = 100.0 + 200.0 * (1.0 - (2.0 * std::f64::consts::PI * t / 20.0).cos());
        if (19.0..21.0).contains(&t) {
            3.0 * sine
        } else {
            sine
        }
    };
    let steps = 100;
    (0..steps).map(|i| at(from_s + (to_s - from_s) * (i as f64 + 0.5) / steps as f64)).sum::<f64>() / steps as f64
}

#[test]
fn the_shipped_daily_shape_follows_its_sine_and_its_spike() {
    let (_d, store) = temp_store();
    // two 20 s "days" of 100..500/s (crests at 10 s and 30 s, troughs at 0, 20 and 40 s) and a
    // ×3 spike for 2 s at the middle trough
    let (code, out, err) = run(casslab()
        .args(["run", "daily-shape", "--target", "instant", "--no-lint", "-P", "rows=2000", "-P", "warmup=0s", "-P", "duration=40s"])
        .args(["-P", "low=100", "-P", "high=500", "-P", "period=20s", "-P", "days_length=40s"])
        .args(["-P", "spike=3", "-P", "spike_for=2s", "-P", "spike_every=60s", "-P", "spike_from=19s"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{out}\n{err}");
    let ivs = run_intervals(&store);
    assert!(ivs.len() >= 38, "{ivs:?}");
    let rates: Vec<(f64, f64, f64)> = ivs.iter().map(|(s, e, n)| ((s + e) / 2.0, *n as f64 / (e - s), daily_rate(*s, *e))).collect();
    // away from the spike, the busiest interval is near a crest and the quietest near a trough
    let calm: Vec<&(f64, f64, f64)> = rates.iter().filter(|(mid, _, _)| (mid - 20.0).abs() > 2.0).collect();
    let busiest = calm.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    let quietest = calm.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert!([10.0, 30.0].iter().any(|c| (busiest.0 - c).abs() <= 2.5), "busiest {busiest:?} is not near a crest: {rates:?}");
    assert!([0.0, 40.0].iter().any(|t| (quietest.0 - t).abs() <= 2.5), "quietest {quietest:?} is not near a trough: {rates:?}");
    assert!(busiest.1 > 3.0 * quietest.1, "the crest ({:.0}/s) stands well above the trough ({:.0}/s)", busiest.1, quietest.1);
    // the whole series follows the curve: correlation of achieved and offered per interval
    let n = rates.len() as f64;
    let (ma, mo) = (rates.iter().map(|r| r.1).sum::<f64>() / n, rates.iter().map(|r| r.2).sum::<f64>() / n);
    let cov: f64 = rates.iter().map(|r| (r.1 - ma) * (r.2 - mo)).sum();
    let (va, vo): (f64, f64) = (rates.iter().map(|r| (r.1 - ma).powi(2)).sum(), rates.iter().map(|r| (r.2 - mo).powi(2)).sum());
    let corr = cov / (va * vo).sqrt();
    assert!(corr >= 0.9, "achieved against offered per interval: correlation {corr:.2}: {rates:?}");
    // the spike at the middle trough: its intervals carry more than those 2-3 s either side
    let mean = |f: &dyn Fn(f64) -> bool| {
        let v: Vec<f64> = rates.iter().filter(|r| f(r.0)).map(|r| r.1).collect();
        assert!(!v.is_empty(), "{rates:?}");
        v.iter().sum::<f64>() / v.len() as f64
    };
    let spiked = mean(&|m| (19.0..=21.0).contains(&m));
    let beside = mean(&|m| (16.5..=17.5).contains(&m) || (22.5..=23.5).contains(&m));
    assert!(spiked > 1.3 * beside, "spike {spiked:.0}/s against {beside:.0}/s beside it: {rates:?}");
    eprintln!(
        "daily shape: correlation {corr:.3}; busiest {:.0}/s at {:.1} s, quietest {:.0}/s at {:.1} s; spike {spiked:.0}/s against {beside:.0}/s beside it",
        busiest.1, busiest.0, quietest.1, quietest.0
    );
}

#[test]
fn a_ramp_past_the_client_s_ceiling_counts_what_it_never_started() {
    let host = node();
    let _load = load_lock();
    let (dir, store) = temp_store();
    // one request in flight: the client keeps at most one over the latency (a few thousand a
    // second here); the ramp goes far past it, so at the end most operations due were never
    // started, the oldest of them seconds overdue
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "--hosts", host, "--no-lint", "-P", "rows=2000", "--warmup", "0s", "--duration", "4s", "--concurrency", "1"])
        .args(["--rate", "ramp 500..60000 over 4s"])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("validity: valid"), "{out}");
    let reason = out.lines().find(|l| l.contains("operations due before the end never started")).unwrap_or_else(|| panic!("the verdict says it:\n{out}"));
    assert!(reason.trim_start().starts_with("invalid"), "{reason}");
    // the export: the run's count, the verdict's figures, and the last interval's backlog agree
    let export = dir.path().join("run.json");
    let (code, _, err) = run(casslab().args(["show", "latest", "--json", export.to_str().unwrap(), "-q"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let never = json["summary"]["never_started"]["count"].as_u64().expect("the run counts them");
    let figures = &json["validity"]["figures"];
    assert_eq!(figures["never_started"].as_u64(), Some(never), "{figures}");
    assert!(figures["never_started_lag_ms"].as_f64().unwrap() >= 1000.0, "{figures}");
    let started = figures["started"].as_u64().unwrap();
    // the ramp offered 4 × 30,250 operations: every one was started or counted
    assert!(never > started, "{never} never started against {started} started");
    assert!((never + started) as f64 >= 0.99 * 121_000.0, "{never} + {started} of 121,000 due");
    let last = json["intervals"].as_array().unwrap().last().unwrap();
    assert_eq!(last["backlog"].as_u64(), Some(never), "the last interval's backlog is the real one: {}", last["backlog"]);
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/run-export.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&json).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the export matches its schema: {errors:?}");
    // the HTML report
    let html = dir.path().join("ramp.html");
    let (code, _, err) = run(casslab().args(["report", "latest", "-o", html.to_str().unwrap()]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(&format!("never started {never}")) && page.contains("operations due before the end never started"), "the page shows them");
}

/// The operations of `op` in a run's summary.
fn count_of(stdout: &str, op: &str) -> u64 {
    summary_rows(stdout).iter().find(|(n, _)| n == op).map(|(_, c)| c[0].parse().unwrap()).unwrap_or(0)
}

#[test]
fn fixed_rate_runs_report_service_time_and_a_missed_rate() {
    let _g = load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let (code, out, err) = run(casslab()
        .args([
            "run",
            "kv",
            "-P",
            "rows=2000",
            "-P",
            "keyspace=casslab_e2e_rate",
            "--rate",
            "200",
            "--duration",
            "4s",
            "--warmup",
            "1s",
            "--concurrency",
            "8",
            "--hosts",
            host,
        ])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("run at fixed rate 200/s") && out.contains("service time (from actual send)"), "{out}");
    let total = count_of(&out, "read") + count_of(&out, "update");
    // 200/s for 4 s: the schedule, not the cluster, sets the count
    assert!((680..=920).contains(&total), "{total} operations at 200/s for 4 s:\n{out}");

    // a rate that 1 request in flight cannot keep: said during the run and in the summary
    let (code, out, err) = run(casslab()
        .args([
            "run",
            "kv",
            "-P",
            "rows=2000",
            "-P",
            "keyspace=casslab_e2e_rate",
            "--rate",
            "50000",
            "--duration",
            "3s",
            "--warmup",
            "0s",
            "--concurrency",
            "1",
            "--hosts",
            host,
        ])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("cannot keep the rate of 50000/s"), "{err}");
    assert!(out.contains("target rate 50000/s not kept"), "{out}");
}

#[test]
fn find_max_searches_rates_and_reports_the_highest_that_met_the_sla() {
    let _g = load_lock();
    let host = node();
    let (_d, store) = temp_store();
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "-P", "rows=2000", "-P", "keyspace=casslab_e2e_findmax", "--find-max", "p99 < 3ms"])
        .args(["--duration", "2s", "--warmup", "1s", "--concurrency", "32", "--max-steps", "3", "--hosts", host])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    // rows of the step table: step target achieved p99 p99ms met run
    let rows: Vec<Vec<String>> = out
        .lines()
        .skip_while(|l| !l.starts_with("find-max:"))
        .skip(2)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    assert!(!rows.is_empty(), "{out}");
    assert_eq!(rows[0][1], "max", "the first step probes maximum throughput:\n{out}");
    let mut best: Option<f64> = None;
    for r in &rows {
        let value_ms: f64 = r[3].parse().unwrap();
        let met = r[5] == "yes";
        assert!(!(met && value_ms >= 3.0), "a step over the SLA was counted as met:\n{out}");
        if r[1] != "max" {
            let (target, achieved): (f64, f64) = (r[1].parse().unwrap(), r[2].parse().unwrap());
            if value_ms < 3.0 && achieved >= 0.95 * target {
                assert!(met, "a step within the SLA at its rate was counted as not met:\n{out}");
            }
            if met {
                best = Some(best.map_or(target, |b: f64| b.max(target)));
            }
        }
    }
    let probe_met = rows[0][5] == "yes";
    if probe_met {
        assert_eq!(rows.len(), 1, "no search is needed when the probe meets the SLA:\n{out}");
        assert!(out.contains("the SLA holds even at maximum throughput"), "{out}");
    } else {
        assert!(rows.len() >= 2, "{out}");
        match best {
            Some(b) => assert!(out.contains(&format!("highest rate meeting the SLA: {b:.0} ops/s")), "best {b}:\n{out}"),
            None => assert!(out.contains("no rate tried met the SLA"), "{out}"),
        }
    }
    let db = rusqlite::Connection::open(&store).unwrap();
    let tagged: i64 = db.query_row("SELECT count(*) FROM run_tags WHERE tag LIKE 'find_max=%'", [], |r| r.get(0)).unwrap();
    assert_eq!(tagged as usize, rows.len(), "every step is a saved run");
}
