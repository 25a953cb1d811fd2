//! Saved runs without a cluster, for tests of the commands that read the store: synthetic
//! intervals, histograms and summaries written through casslab-core's `Store` as `casslab run`
//! writes them. Deterministic (a fixed pseudo-random stream per run). Not for statistics:
//! tests/compare.rs shapes its own distributions.

use casslab_core::config::{RunConfig, RunEnvironment};
use casslab_core::stats::{ErrorKind, IntervalLoad, IntervalSample, OpStats, OpSummary, Phase};
use casslab_core::store::{PhaseSummary, RunId, RunStatus, RunSummary, Store};
use std::path::PathBuf;

/// A deterministic pseudo-random stream (xorshift), so the synthetic latencies are the same
/// in every test run.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// `n` latencies around `base_us` with a realistic tail: 1% slow, 0.1% very slow.
fn op_stats(rng: &mut Rng, n: u64, base_us: f64, queue_us: f64, errors: u64) -> OpStats {
    let mut s = OpStats::default();
    for _ in 0..n {
        let mut v = base_us * (0.6 + 0.8 * rng.unit());
        let tail = rng.unit();
        if tail < 0.001 {
            v += base_us * 30.0 * rng.unit();
        } else if tail < 0.01 {
            v += base_us * 5.0 * -rng.unit().ln();
        }
        let service_ns = (v * 1000.0) as u64;
        s.record_ok(service_ns + (queue_us * 1000.0 * rng.unit()) as u64, service_ns);
    }
    for _ in 0..errors {
        s.record_error(ErrorKind::Timeout);
    }
    s
}

/// What makes two synthetic runs differ.
pub struct Shape {
    pub rate_per_s: Option<f64>,
    pub rows: &'static str,
    /// Seconds of the measured run with a latency spike and timeouts.
    pub spike_at_s: u32,
    pub finish: bool,
}

/// Saves a run the way `casslab run` does: 3 s of load, 2 s of warm-up, 20 s measured.
pub fn save_run(store: &Store, shape: &Shape, seed: u64) -> RunId {
    let mut rng = Rng(seed);
    let config = RunConfig {
        workload: "kv".into(),
        workload_source: "name: kv\nparams:\n  rows: 100000\n".into(),
        params: [("rows".to_string(), shape.rows.to_string()), ("keyspace".to_string(), "casslab_kv".to_string())].into(),
        rate: shape.rate_per_s.map(casslab_core::load_shape::LoadShape::fixed),
        duration_s: Some(20.0),
        warmup_s: Some(2.0),
        ..RunConfig::default()
    };
    let env = RunEnvironment {
        casslab_version: "0.1.0".into(),
        cassandra_version: Some("5.0.6".into()),
        node_count: 1,
        client_cores: 2,
        hostname: Some("lab".into()),
        ..RunEnvironment::default()
    };
    let started = 1_795_000_000_000 + seed as i64 * 60_000;
    let id = store.begin_run("kv", &config, &env, &[], started).unwrap();
    let fixed = shape.rate_per_s.is_some();
    let mut index = 0u32;
    let mut whole: Vec<(Phase, String, OpStats)> = Vec::new();
    let mut add = |phase: Phase, ops: Vec<(String, OpStats)>| {
        let start_ms = u64::from(index) * 1000;
        let sample = IntervalSample { index, phase, start_ms, end_ms: start_ms + 1000, ops, backlog: 0 };
        store.add_interval(id, &sample).unwrap();
        if phase != Phase::Warmup {
            for (op, st) in sample.ops {
                match whole.iter_mut().find(|(p, o, _)| *p == phase && *o == op) {
                    Some((_, _, w)) => w.merge(&st),
                    None => whole.push((phase, op, st)),
                }
            }
        }
        index += 1;
    };
    for _ in 0..3 {
        add(Phase::Load, vec![("insert".into(), op_stats(&mut rng, 3000, 600.0, 0.0, 0))]);
    }
    for t in 0..22u32 {
        let phase = if t < 2 { Phase::Warmup } else { Phase::Run };
        let spike = t == shape.spike_at_s + 2;
        let slow = if t < 2 {
            1.6
        } else if spike {
            6.0
        } else {
            1.0
        };
        let queue = if fixed { 300.0 * slow } else { 0.0 };
        let (reads, updates) = if fixed { (600, 200) } else { (1500 - 200 * u64::from(spike), 500) };
        add(
            phase,
            vec![
                ("read".into(), op_stats(&mut rng, reads, 900.0 * slow, queue, if spike { 25 } else { 0 })),
                ("update".into(), op_stats(&mut rng, updates, 700.0 * slow, queue, 0)),
            ],
        );
    }
    if !shape.finish {
        return id; // as if the process died
    }
    let mut phases = Vec::new();
    for (phase, d) in [(Phase::Load, 3.0), (Phase::Run, 20.0)] {
        let mut total = OpStats::default();
        let mut ops = Vec::new();
        for (p, op, st) in whole.iter().filter(|(p, _, _)| *p == phase) {
            store.add_histograms(id, *p, op, st).unwrap();
            total.merge(st);
            ops.push(OpSummary::of(op, st, d));
        }
        let target = if phase == Phase::Run { shape.rate_per_s } else { None };
        phases.push(PhaseSummary { phase, duration_s: d, target_rate_per_s: target, ops, total: OpSummary::of("total", &total, d) });
    }
    let notes = if fixed { vec!["target rate 850/s not kept: achieved 800/s".to_string()] } else { vec![] };
    store.finish_run(id, RunStatus::Completed, &RunSummary { phases, notes, ..RunSummary::default() }, started + 26_000).unwrap();
    id
}

/// Saves a run under the rate schedule `ramp 250..6000 over 24s` as `casslab run --rate` does
/// (each interval's offered rate beside its figures) against a server that serves up to
/// 4,500 ops/s: latency stays near 1 ms up to about 3,500/s, then queues; the curve has a knee.
pub fn save_ramped_run(store: &Store, seed: u64) -> RunId {
    let mut rng = Rng(seed);
    let schedule = "ramp 250..6000 over 24s";
    let config = RunConfig {
        workload: "kv".into(),
        workload_source: "name: kv\n".into(),
        rate: Some(casslab_core::load_shape::LoadShape::parse(schedule).unwrap()),
        duration_s: Some(24.0),
        ..RunConfig::default()
    };
    let env = RunEnvironment {
        casslab_version: "0.1.0".into(),
        cassandra_version: Some("5.0.6".into()),
        node_count: 1,
        client_cores: 2,
        ..RunEnvironment::default()
    };
    let started = 1_795_000_000_000 + seed as i64 * 60_000;
    let id = store.begin_run("kv", &config, &env, &[], started).unwrap();
    let mut whole = OpStats::default();
    for index in 0..24u32 {
        let offered = 250.0 + (6000.0 - 250.0) * (f64::from(index) + 0.5) / 24.0;
        let served = offered.min(4500.0);
        // queueing grows as the offered rate nears what the server can do
        let (base_us, queue_us) = if offered < 3500.0 { (800.0, 100.0) } else { (1500.0, 40.0 * (offered - 3400.0)) };
        let st = op_stats(&mut rng, served as u64, base_us, queue_us, 0);
        let start_ms = u64::from(index) * 1000;
        store
            .add_interval(
                id,
                &IntervalSample { index, phase: Phase::Run, start_ms, end_ms: start_ms + 1000, ops: vec![("read".into(), st.clone())], backlog: 0 },
            )
            .unwrap();
        let load = IntervalLoad {
            index,
            offered_per_s: Some(offered),
            started: served as u64,
            concurrency: None,
            stage: 0,
            stage_label: schedule.into(),
            phase: Phase::Run,
            course: Some(casslab_core::load_shape::Course::Moving),
        };
        store.add_interval_load(id, &load).unwrap();
        whole.merge(&st);
    }
    store.add_histograms(id, Phase::Run, "read", &whole).unwrap();
    let phase = PhaseSummary {
        phase: Phase::Run,
        duration_s: 24.0,
        target_rate_per_s: None,
        ops: vec![OpSummary::of("read", &whole, 24.0)],
        total: OpSummary::of("total", &whole, 24.0),
    };
    store.finish_run(id, RunStatus::Completed, &RunSummary { phases: vec![phase], ..RunSummary::default() }, started + 25_000).unwrap();
    id
}

/// A store holding run 1 (max throughput), run 2 (fixed rate 850/s, other rows) and run 3
/// (crashed during its run: no summary, no full histograms).
pub fn lab() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let store = Store::open(&path).unwrap();
    let ids = [
        save_run(&store, &Shape { rate_per_s: None, rows: "100000", spike_at_s: 12, finish: true }, 1),
        save_run(&store, &Shape { rate_per_s: Some(850.0), rows: "200000", spike_at_s: 7, finish: true }, 2),
        save_run(&store, &Shape { rate_per_s: None, rows: "100000", spike_at_s: 30, finish: false }, 3),
    ];
    assert_eq!(ids, [1, 2, 3]);
    (dir, path)
}
