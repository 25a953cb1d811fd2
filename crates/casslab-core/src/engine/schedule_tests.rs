//! The engine's schedules on tokio's paused clock: when workers start operations under a rate
//! that changes, at the end of a run the client could not keep, with their schedule shared or
//! sliced, closed loop under levels of requests in flight, and run phases that end after a
//! count of operations (under a rate, at maximum throughput, after a warm-up). The target here reaches no
//! server: its operations take the time a test gives them, so what is checked is the
//! client's own timing, exactly (the server's part is the end-to-end tests', on a real node).

use super::phase::{run_phase, PhaseKind, PhaseParams, PhaseResult, RunLength};
use super::*;
use crate::gen::GeneratorSet;
use crate::load_shape::{Curve, LoadShape};
use crate::stats::{CountReached, ErrorKind, OpStats};
use rand::rngs::SmallRng;
use std::sync::Mutex;

/// A target whose operations reach nothing and take the time set for them: `service[i]` for
/// the `i`-th started (the last for the rest). It notes when each started. One made by
/// [`Timed::failing`] fails every request on the spot, as the driver does once the only node
/// is gone ("no connections in the pool"): nothing ever waits.
struct Timed {
    info: TargetInfo,
    service: Vec<Duration>,
    starts: Mutex<Vec<Instant>>,
    fails_at_once: bool,
}

impl Timed {
    fn new(service: &[Duration]) -> Arc<Timed> {
        Arc::new(Timed { info: TargetInfo::default(), service: service.to_vec(), starts: Mutex::new(Vec::new()), fails_at_once: false })
    }

    fn failing() -> Arc<Timed> {
        Arc::new(Timed { info: TargetInfo::default(), service: Vec::new(), starts: Mutex::new(Vec::new()), fails_at_once: true })
    }

    /// When each operation started, in seconds since `first`.
    fn starts_since(&self, first: Instant) -> Vec<f64> {
        self.starts.lock().unwrap().iter().map(|t| t.duration_since(first).as_secs_f64()).collect()
    }
}

impl Target for Timed {
    type Op = ();
    type Error = String;

    fn info(&self) -> &TargetInfo {
        &self.info
    }
    async fn prepare(&self, _w: &Workload, _role: SetupRole) -> Result<Prepared, EngineError> {
        Ok(Prepared::default())
    }
    async fn plan(&self, _w: &Workload, _mix: &[(String, f64)], gens: Arc<GeneratorSet>) -> Result<Plan<()>, EngineError> {
        Ok(Plan::new(vec![()], vec!["op".into()], &[1.0], gens))
    }
    async fn loaded(&self, _fingerprint: &str) -> Result<Option<String>, EngineError> {
        Ok(None)
    }
    async fn record_load(&self, _fingerprint: &str, _description: &str) -> Result<(), EngineError> {
        Ok(())
    }
    async fn truncate_for_reload(&self, _w: &Workload) -> Result<(), EngineError> {
        Ok(())
    }
    fn start<'a>(
        &'a self,
        _op: &'a (),
        _gens: &GeneratorSet,
        _rng: &mut SmallRng,
        _stats: &'a Mutex<Vec<OpStats>>,
    ) -> impl std::future::Future<Output = Result<Completion, String>> + Send + use<'a> {
        let mut starts = self.starts.lock().unwrap();
        let took = self.service.get(starts.len()).or(self.service.last()).copied().unwrap_or_default();
        starts.push(Instant::now());
        let fails = self.fails_at_once;
        async move {
            if fails {
                return Err("no connections in the pool".to_string());
            }
            tokio::time::sleep(took).await;
            Ok(Completion::default())
        }
    }
    fn classify(_e: &String) -> ErrorKind {
        ErrorKind::Other
    }
}

/// A run phase of `duration_s` (no warm-up, 1 s intervals) of `kind` on `target` with
/// `workers` workers and `concurrency` requests in flight, starting now; its result and the
/// events it sent.
async fn phase(target: &Arc<Timed>, kind: PhaseKind, (workers, concurrency): (usize, usize), shared_schedule: bool) -> (PhaseResult, Vec<EngineEvent>) {
    let gens = Arc::new(GeneratorSet::build(&Default::default()).unwrap());
    let plan = Arc::new(Plan::new(vec![()], vec!["op".into()], &[1.0], gens));
    let now = Instant::now();
    let p = PhaseParams {
        kind,
        workers,
        concurrency,
        interval: Duration::from_secs(1),
        seed: 7,
        drain_timeout: Duration::from_secs(30),
        t0: now,
        first_index: 0,
        start_at: Some(now),
        aligned: None,
        shard: (0, 1),
        shared_schedule,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_stop_tx, mut stop) = watch::channel(false);
    let res = run_phase(target.clone(), plan, p, &tx, &mut stop).await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (res, events)
}

fn rated(curve: watch::Receiver<Arc<Curve>>, duration_s: f64) -> PhaseKind {
    PhaseKind::Run { warmup_s: 0.0, length: RunLength::Time { duration_s }, rate: Some(curve), levels: None, schedule: None }
}

fn shape(text: &str) -> Arc<Curve> {
    Arc::new(Curve::compile(&LoadShape::parse(text).unwrap(), 60.0))
}

#[tokio::test(start_paused = true)]
async fn a_worker_wakes_to_a_change_of_rate() {
    // 10/s, then 5000/s from 1.005 s: the first operations of the new rate are due at once
    let target = Timed::new(&[Duration::from_micros(100)]);
    let (tx, rx) = watch::channel(shape("10"));
    let first = Instant::now();
    let change = tokio::spawn(async move {
        tokio::time::sleep_until(first + Duration::from_millis(1_005)).await;
        let changed = tx.borrow().changed_at(1.005, 5000.0, 0.0, "rate 5000 (event)".into());
        tx.send(Arc::new(changed)).unwrap();
        tx
    });
    let (res, _) = phase(&target, rated(rx, 2.0), (1, 64), false).await;
    drop(change.await.unwrap());
    let op = &res.measured[0];
    // before the fix, the worker slept until its next look (up to 50 ms): ~250 operations late
    assert_eq!((op.late, op.max_lag_ns), (0, 0), "every operation of the new rate started when due");
    assert!(op.ok > 4_900, "{} operations", op.ok);
    let starts = target.starts_since(first);
    let after = starts.iter().find(|t| **t > 1.004).unwrap();
    assert!(*after <= 1.005 + 1e-9, "the first start after the change is at the change: {after}");
}

#[tokio::test(start_paused = true)]
async fn what_was_due_and_never_started_is_counted_and_is_the_last_backlog() {
    // 1000/s for 1 s, one request in flight of 7 ms: the client starts 143 in the second
    let target = Timed::new(&[Duration::from_millis(7)]);
    let (_tx, rx) = watch::channel(shape("1000"));
    let (res, events) = phase(&target, rated(rx, 1.0), (1, 1), false).await;
    let never = res.never_started.expect("a rated phase counts them");
    let started = res.measured[0].ok;
    assert_eq!(never.count + started, 1000, "every operation due by the end is started or counted: {never:?}, {started} started");
    assert_eq!(started, 143);
    assert!(never.count - never.late <= 1, "all but the one due in the last ms were due more than 1 ms before the end: {never:?}");
    assert!((never.oldest_lag_ms - 857.0).abs() < 1e-6, "the oldest was due at 143 ms: {never:?}");
    // the last interval's backlog is what was left, and it has no load (it offered nothing)
    let intervals: Vec<&IntervalSample> = events.iter().filter_map(|e| if let EngineEvent::Interval(s) = e { Some(s) } else { None }).collect();
    let loads: Vec<&IntervalLoad> = events.iter().filter_map(|e| if let EngineEvent::Load(l) = e { Some(l) } else { None }).collect();
    assert_eq!(intervals.last().unwrap().backlog, never.count);
    assert_eq!(loads.len() + 1, intervals.len(), "no load for the last, partial interval");
}

#[tokio::test(start_paused = true)]
async fn a_shared_schedule_lets_an_idle_worker_take_what_a_stalled_one_cannot() {
    // 100/s for 2 s on two workers of one request each; the first operation stalls 500 ms
    let stall = [Duration::from_millis(500), Duration::from_millis(1)];
    let per_worker = Timed::new(&stall);
    let (_tx, rx) = watch::channel(shape("100"));
    let (sliced, _) = phase(&per_worker, rated(rx.clone(), 2.0), (2, 2), false).await;
    // the stalled worker's slice waits for it: its operations start up to 500 ms late
    assert!(sliced.measured[0].late >= 20, "{} late", sliced.measured[0].late);
    assert!(sliced.measured[0].max_lag_ns >= 400_000_000, "{}", sliced.measured[0].max_lag_ns);
    let shared_target = Timed::new(&stall);
    let (shared, _) = phase(&shared_target, rated(rx, 2.0), (2, 2), true).await;
    assert_eq!(shared.measured[0].late, 0, "the other worker took every operation due");
    assert_eq!(shared.never_started.map(|n| n.late), Some(0));
    assert!(shared.measured[0].ok >= 200, "every operation due in the 2 s: {}", shared.measured[0].ok);
}

#[tokio::test(start_paused = true)]
async fn closed_loop_runs_nothing_at_level_0_and_rises_without_waiting_for_a_completion() {
    // requests that take 5 s (a stall): 0 in flight for 1 s, then 2, then 4
    let target = Timed::new(&[Duration::from_secs(5)]);
    let first = Instant::now();
    let kind =
        PhaseKind::Run { warmup_s: 0.0, length: RunLength::Time { duration_s: 3.0 }, rate: None, levels: Some(shape("0 for 1s, 2 for 1s, 4")), schedule: None };
    let (_, events) = phase(&target, kind, (1, 4), false).await;
    let starts_ms: Vec<u64> = target.starts_since(first).iter().map(|t| (t * 1000.0).round() as u64).collect();
    assert_eq!(starts_ms, [1000, 1000, 2000, 2000], "none at 0; the rise to 4 at 2 s, with both first requests still in flight");
    let levels: Vec<Option<u32>> = events.iter().filter_map(|e| if let EngineEvent::Load(l) = e { Some(l.concurrency) } else { None }).collect();
    assert_eq!(levels, [Some(0), Some(2), Some(4)]);
}

/// A run phase that ends after `ops` operations, after `warmup_s` of warm-up.
fn counted(ops: u64, warmup_s: f64, rate: Option<watch::Receiver<Arc<Curve>>>, levels: Option<Arc<Curve>>) -> PhaseKind {
    PhaseKind::Run { warmup_s, length: RunLength::Count { ops }, rate, levels, schedule: None }
}

/// The operations completed in the intervals of `phase`.
fn completed_in(events: &[EngineEvent], phase: Phase) -> u64 {
    events
        .iter()
        .filter_map(|e| if let EngineEvent::Interval(s) = e { Some(s) } else { None })
        .filter(|s| s.phase == phase)
        .map(|s| s.ops.iter().map(|(_, o)| o.ok + o.error_count()).sum::<u64>())
        .sum()
}

#[tokio::test(start_paused = true)]
async fn a_count_under_a_rate_ends_when_its_last_operation_is_done() {
    // 1000/s on two workers, 2000 operations of 3 ms: the last is due at 1.999 s
    let target = Timed::new(&[Duration::from_millis(3)]);
    let (_tx, rx) = watch::channel(shape("1000"));
    let first = Instant::now();
    let (res, events) = phase(&target, counted(2_000, 0.0, Some(rx), None), (2, 16), false).await;
    assert_eq!(res.measured[0].ok, 2_000);
    assert_eq!(res.count, Some(CountReached { asked: 2_000, completed: 2_000 }));
    assert_eq!(target.starts_since(first).len(), 2_000, "no operation started past the count");
    assert_eq!(completed_in(&events, Phase::Run), 2_000, "the intervals hold them all, the last partial one included");
    // measured until the last start, at the rate asked for; over soon after the last completion
    assert!((res.measured_s - 1.999).abs() < 0.003, "{} s measured", res.measured_s);
    assert!((res.offered_per_s.unwrap() - 1_000.0).abs() < 1.0, "{:?}", res.offered_per_s);
    let ended = first.elapsed().as_secs_f64();
    assert!(ended < 2.05, "the phase waits for its workers, not the next tick: {ended} s");
    assert_eq!(res.never_started.map(|n| n.count), Some(0), "nothing past the count is due");
    let backlogs: Vec<u64> = events.iter().filter_map(|e| if let EngineEvent::Interval(s) = e { Some(s.backlog) } else { None }).collect();
    assert!(backlogs.iter().all(|b| *b == 0), "{backlogs:?}");
}

#[tokio::test(start_paused = true)]
async fn a_count_at_maximum_throughput_is_shared_by_every_worker() {
    let target = Timed::new(&[Duration::from_micros(700)]);
    let (res, events) = phase(&target, counted(5_001, 0.0, None, None), (3, 8), false).await;
    assert_eq!((res.measured[0].ok, completed_in(&events, Phase::Run)), (5_001, 5_001));
    assert_eq!(target.starts.lock().unwrap().len(), 5_001);
    assert!(res.measured_s > 0.0 && res.never_started.is_none());
    // closed loop under levels of requests in flight, the same
    let target = Timed::new(&[Duration::from_millis(2)]);
    let (res, _) = phase(&target, counted(300, 0.0, None, Some(shape("2 for 100ms, 6"))), (2, 6), false).await;
    assert_eq!((res.measured[0].ok, target.starts.lock().unwrap().len()), (300, 300));
}

#[tokio::test(start_paused = true)]
async fn a_count_after_a_warm_up_is_what_the_measured_part_completes() {
    // 1 s of warm-up at maximum throughput with 32 in flight of 7 ms: some are in flight when
    // it ends, and complete in the measured part; the count holds them
    let target = Timed::new(&[Duration::from_millis(7)]);
    let (res, events) = phase(&target, counted(1_000, 1.0, None, None), (2, 32), false).await;
    let warm = completed_in(&events, Phase::Warmup);
    assert!(warm > 3_000, "{warm} in the warm-up");
    assert_eq!(completed_in(&events, Phase::Run), 1_000);
    assert_eq!(res.count, Some(CountReached { asked: 1_000, completed: 1_000 }));
    assert_eq!(target.starts.lock().unwrap().len() as u64, warm + 1_000);
}

/// On the real clock, on as many runtime threads as workers: a phase at maximum throughput
/// whose requests all fail at once ends when its time is up (it spun past its end before the
/// workers yielded now and then), with every failure counted.
#[test]
fn a_phase_whose_requests_fail_at_once_ends_on_time() {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let res = rt.block_on(async {
            let gens = Arc::new(GeneratorSet::build(&Default::default()).unwrap());
            let plan = Arc::new(Plan::new(vec![()], vec!["op".into()], &[1.0], gens));
            let now = Instant::now();
            let p = PhaseParams {
                kind: PhaseKind::Run { warmup_s: 0.0, length: RunLength::Time { duration_s: 1.0 }, rate: None, levels: None, schedule: None },
                workers: 2,
                concurrency: 64,
                interval: Duration::from_millis(500),
                seed: 7,
                drain_timeout: Duration::from_secs(5),
                t0: now,
                first_index: 0,
                start_at: Some(now),
                aligned: None,
                shard: (0, 1),
                shared_schedule: false,
            };
            let (tx, mut rx) = mpsc::unbounded_channel();
            let (_stop_tx, mut stop) = watch::channel(false);
            let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
            let res = run_phase(Timed::failing(), plan, p, &tx, &mut stop).await;
            drop(tx);
            drain.await.unwrap();
            res
        });
        let _ = done_tx.send(res);
    });
    let res = done_rx.recv_timeout(Duration::from_secs(30)).expect("a 1 s phase was still running after 30 s");
    let op = &res.measured[0];
    assert!(op.ok == 0 && op.errors.values().sum::<u64>() > 1_000, "every request failed and was counted: {} ok, {:?}", op.ok, op.errors);
}
