//! The verdict on synthetic runs: each reason made to happen from the figures that cause it,
//! and a clean run that has none.

use super::*;
use crate::config::{RunConfig, RunEnvironment};
use crate::stats::{ErrorKind, OpStats};
use crate::store::RunProcess;

fn record(rate: Option<f64>, threads: usize) -> RunRecord {
    RunRecord {
        id: 3,
        workload: "kv".into(),
        started_at_ms: 0,
        ended_at_ms: Some(10_000),
        status: RunStatus::Completed,
        config: RunConfig { rate: rate.map(crate::load_shape::LoadShape::fixed), threads, concurrency: 4, ..RunConfig::default() },
        env: RunEnvironment { client_cores: 2, ..RunEnvironment::default() },
        summary: None,
        tags: vec![],
        process: Some(RunProcess { pid: 1, host: "lab".into(), started: None }),
    }
}

/// Ten 1 s run intervals of `read`: `ok` completions, `errors` timeouts, `late` late starts
/// with `lag_ms` as the largest lag, `empty` empty reads, per interval.
fn intervals(ok: u64, errors: u64, late: u64, lag_ms: u64, empty: u64) -> Vec<StoredInterval> {
    (0..10u32)
        .flat_map(|i| {
            let mut s = OpStats::default();
            (0..ok).for_each(|_| s.record_ok(1_000_000, 1_000_000));
            (0..errors).for_each(|_| s.record_error(ErrorKind::Timeout));
            (s.late, s.max_lag_ns, s.empty_reads) = (late, lag_ms * 1_000_000, empty);
            let start_ms = u64::from(i) * 1000;
            let warm = StoredInterval { index: i, phase: Phase::Run, start_ms, end_ms: start_ms + 1000, op: "read".into(), stats: s, backlog: 0 };
            let mut beside = warm.clone();
            beside.op = "read.request".into();
            [warm, beside]
        })
        .collect()
}

fn cpu(pct: f64) -> Vec<ServerSample> {
    (1..=10).map(|i| ServerSample { node: CLIENT.into(), metric: metric::CPU_PCT.into(), at_ms: i * 1000, value: pct }).collect()
}

fn demand(pct: f64) -> Vec<ServerSample> {
    (1..=10).map(|i| ServerSample { node: CLIENT.into(), metric: metric::CPU_DEMAND_PCT.into(), at_ms: i * 1000, value: pct }).collect()
}

fn verdict(r: &RunRecord, iv: &[StoredInterval], server: &[ServerSample]) -> Validity {
    assess(r, &Tally::of(iv), server, false)
}

fn checks(v: &Validity) -> Vec<(Check, Verdict)> {
    v.reasons.iter().map(|r| (r.check, r.verdict)).collect()
}

#[test]
fn a_clean_fixed_rate_run_is_valid_with_its_figures() {
    let v = verdict(&record(Some(100.0), 0), &intervals(100, 0, 0, 0, 0), &cpu(20.0));
    assert_eq!((v.verdict, v.reasons.len(), v.not_checked.len()), (Verdict::Valid, 0, 0), "{v:?}");
    let f = &v.figures;
    assert_eq!((f.started, f.measured_s, f.achieved_ops_per_s, f.late_share, f.client_cores), (1000, 10.0, 100.0, Some(0.0), 2));
    assert_eq!(f.client_cpu_pct, Some(20.0));
    assert!(v.text().starts_with("\nvalidity: valid — started late 0.0% (largest lag 0.0 ms) · 100 of 100 ops/s · client CPU 20% of one core"), "{}", v.text());
    assert!(may_compare(3, &v, false).is_ok());
}

#[test]
fn a_client_behind_its_schedule_is_invalid_and_says_why() {
    let v = verdict(&record(Some(100.0), 0), &intervals(60, 0, 30, 2_400, 0), &cpu(20.0));
    assert_eq!(checks(&v), [(Check::LateStarts, Verdict::Invalid), (Check::Rate, Verdict::Invalid)]);
    assert!(v.reasons[0].message.contains("50.0% of operations started more than 1 ms late (largest lag 2.40 s)"), "{}", v.reasons[0].message);
    assert!(v.reasons[1].message.contains("60 of 100 ops/s (60.0%)"), "{}", v.reasons[1].message);
    let refused = may_compare(3, &v, false).unwrap_err().to_string();
    assert!(
        refused.starts_with("run 3 is invalid: the client fell behind its schedule") && refused.ends_with("pass --allow-invalid to use it anyway"),
        "{refused}"
    );
    assert!(may_compare(3, &v, true).is_ok());
    // a few late starts, or one long lag, make a run suspect only
    let v = verdict(&record(Some(100.0), 0), &intervals(100, 0, 5, 600, 0), &cpu(20.0));
    assert_eq!(checks(&v), [(Check::LateStarts, Verdict::Suspect)]);
    assert!(may_compare(3, &v, false).is_ok(), "a suspect run may be compared");
}

#[test]
fn a_saturated_client_is_judged_against_the_cores_it_could_use() {
    let one_thread = record(None, 1);
    let v = verdict(&one_thread, &intervals(100, 0, 0, 0, 0), &cpu(97.0));
    assert_eq!(checks(&v), [(Check::ClientCpu, Verdict::Invalid)]);
    assert!(v.reasons[0].message.contains("90% or more of its 1 usable core(s) in 100.0% of the measured time"), "{}", v.reasons[0].message);
    // on a busy machine the client gets less CPU than it wants: its demand says it is saturated
    let starved = [cpu(40.0), demand(99.0)].concat();
    let v = verdict(&one_thread, &intervals(100, 0, 0, 0, 0), &starved);
    assert_eq!(checks(&v), [(Check::ClientCpu, Verdict::Invalid)]);
    assert!(v.reasons[0].message.contains("used 40%, used or waited for 99%"), "{}", v.reasons[0].message);
    assert_eq!(verdict(&one_thread, &intervals(100, 0, 0, 0, 0), &[cpu(95.0), demand(60.0)].concat()).verdict, Verdict::Valid, "demand decides where recorded");
    assert_eq!(verdict(&record(None, 0), &intervals(100, 0, 0, 0, 0), &cpu(97.0)).verdict, Verdict::Valid, "97% of one core is half of two");
    let v = verdict(&one_thread, &intervals(100, 0, 0, 0, 0), &[]);
    assert!(v.verdict == Verdict::Valid && v.not_checked[0].starts_with("client CPU"), "{v:?}");
}

#[test]
fn errors_and_empty_reads_and_a_crash_have_their_reasons() {
    let v = verdict(&record(None, 0), &intervals(90, 10, 0, 0, 0), &cpu(10.0));
    assert_eq!(checks(&v), [(Check::Errors, Verdict::Invalid)]);
    assert!(v.reasons[0].message.starts_with("10.0% of operations failed (100 of 1000)"), "{}", v.reasons[0].message);
    let during_events = assess(&record(None, 0), &Tally::of(&intervals(90, 10, 0, 0, 0)), &cpu(10.0), true);
    assert_eq!(checks(&during_events), [(Check::Errors, Verdict::Suspect)]);
    let v = verdict(&record(None, 0), &intervals(100, 0, 0, 0, 100), &cpu(10.0));
    assert_eq!(checks(&v), [(Check::EmptyReads, Verdict::Invalid)]);
    assert!(v.reasons[0].message.starts_with("reads found nothing: read returned no row in 100.0% of its 1000 executions"), "{}", v.reasons[0].message);
    assert_eq!(checks(&verdict(&record(None, 0), &intervals(100, 0, 0, 0, 60), &cpu(10.0))), [(Check::EmptyReads, Verdict::Suspect)]);
    let crashed = RunRecord { status: RunStatus::Crashed, ..record(None, 0) };
    assert_eq!(checks(&verdict(&crashed, &intervals(100, 0, 0, 0, 0), &cpu(10.0))), [(Check::Crashed, Verdict::Suspect)]);
}

#[test]
fn runs_without_the_records_or_without_intervals() {
    let old = RunRecord { process: None, ..record(Some(100.0), 0) };
    let v = verdict(&old, &intervals(100, 0, 0, 0, 0), &cpu(10.0));
    assert_eq!((v.verdict, v.figures.late_share), (Verdict::Valid, None));
    assert_eq!(v.not_checked.len(), 2, "{:?}", v.not_checked);
    let v = verdict(&RunRecord { status: RunStatus::Failed, ..record(None, 0) }, &[], &[]);
    assert_eq!(checks(&v), [(Check::NothingMeasured, Verdict::Invalid)]);
    assert!(v.text().contains("nothing was measured: no interval of a load or run phase was saved (status failed)"), "{}", v.text());
}

/// A fixed-rate run at 100/s whose summary says `count` operations (`late` of them more than
/// 1 ms late) were due by the end and never started, the oldest `lag_ms` before it.
fn left_behind(count: u64, late: u64, lag_ms: f64) -> RunRecord {
    let ops = [("read".to_string(), OpStats::default())];
    let run = crate::store::PhaseSummary::of(Phase::Run, 10.0, &ops, Some(100.0), &mut Vec::new());
    let never_started = Some(crate::stats::NeverStarted { count, late, oldest_lag_ms: lag_ms });
    RunRecord { summary: Some(crate::store::RunSummary { phases: vec![run], never_started, ..Default::default() }), ..record(Some(100.0), 0) }
}

#[test]
fn operations_never_started_keep_a_run_from_valid_and_are_counted() {
    // 300 due by the end never started, the oldest 3 s before it: the client was far behind
    let v = verdict(&left_behind(300, 290, 3_000.0), &intervals(100, 0, 0, 0, 0), &cpu(20.0));
    assert_eq!(checks(&v), [(Check::NeverStarted, Verdict::Invalid)]);
    assert!(
        v.reasons[0]
            .message
            .starts_with("the client left 300 operations due before the end never started (23.1% of the operations due; the oldest due 3.00 s before the end)"),
        "{}",
        v.reasons[0].message
    );
    assert_eq!((v.figures.never_started, v.figures.never_started_late, v.figures.never_started_lag_ms), (Some(300), Some(290), Some(3_000.0)));
    assert!(v.text().contains("never started 300 (the oldest due 3.00 s before the end)"), "{}", v.text());
    assert!(may_compare(3, &v, false).is_err(), "an invalid run is refused");
    // a few, not long overdue: suspect
    assert_eq!(checks(&verdict(&left_behind(5, 5, 20.0), &intervals(100, 0, 0, 0, 0), &cpu(20.0))), [(Check::NeverStarted, Verdict::Suspect)]);
    // due within 1 ms of the end: about to start, the wake-up jitter at the stop
    let v = verdict(&left_behind(2, 0, 0.6), &intervals(100, 0, 0, 0, 0), &cpu(20.0));
    assert_eq!((v.verdict, v.figures.never_started), (Verdict::Valid, Some(2)));
    // none recorded (no rate, or a run made before they were counted): not a figure
    assert_eq!(verdict(&record(Some(100.0), 0), &intervals(100, 0, 0, 0, 0), &cpu(20.0)).figures.never_started, None);
}
