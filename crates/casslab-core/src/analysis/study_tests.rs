//! Studies of runs written into an in-memory store (compiled in tests only): the method that
//! fits the groups, the disagreeing repetition named, figures that mean different things left
//! out, saturated runs named, and the text that says all of it.

use super::study::{study, Group, Method, StudyPlan};
use super::{AnalysisOptions, LatencyKind, Metric, OpRef, Outcome};
use crate::config::{RunConfig, RunEnvironment};
use crate::server::{metric, ServerSample};
use crate::stats::{IntervalSample, OpStats, Phase};
use crate::store::{RunId, RunStatus, RunSummary, Store};

/// 40 one-second intervals of reads (and updates) around `level_ms`, with a small drift.
fn write_run(store: &Store, config: &RunConfig, tags: &[String], level_ms: f64, seed: u64) -> RunId {
    let env = RunEnvironment { casslab_version: "test".into(), node_count: 1, client_cores: 2, ..Default::default() };
    let id = store.begin_run("kv", config, &env, tags, 0).unwrap();
    let mut x = seed;
    let mut next = move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    for index in 0..40u32 {
        let (mut read, mut update) = (OpStats::default(), OpStats::default());
        for _ in 0..400 {
            let ns = (level_ms * (0.6 + 0.8 * next()) * 1e6) as u64;
            read.record_ok(ns, ns);
        }
        for _ in 0..100 {
            let ns = (2.0 * level_ms * (0.6 + 0.8 * next()) * 1e6) as u64;
            update.record_ok(ns, ns);
        }
        let start_ms = u64::from(index) * 1000;
        let sample = IntervalSample {
            index,
            phase: Phase::Run,
            start_ms,
            end_ms: start_ms + 1000,
            ops: vec![("read".into(), read), ("update".into(), update)],
            backlog: 0,
        };
        store.add_interval(id, &sample).unwrap();
    }
    store.finish_run(id, RunStatus::Completed, &RunSummary::default(), 40_000).unwrap();
    id
}

fn plan() -> StudyPlan {
    let opts = AnalysisOptions { window_s: 5.0, resamples: 400, ..AnalysisOptions::default() };
    StudyPlan::new(opts, LatencyKind::Intended)
}

/// kv's config with `read` percent reads, at a fixed `rate`.
fn kv(read: u32, rate: f64) -> RunConfig {
    let source = crate::workload::builtin("kv").unwrap().to_string();
    let ratios = [("read_ratio".to_string(), read.to_string()), ("update_ratio".to_string(), (100 - read).to_string())];
    let (_, params) = crate::workload::resolve_text(&source, "kv", &ratios.into()).unwrap();
    RunConfig { workload: "kv".into(), workload_source: source, params, rate: Some(crate::load_shape::LoadShape::fixed(rate)), ..RunConfig::default() }
}

fn tags(variant: &str, rep: u32, position: u32) -> Vec<String> {
    vec![format!("variant={variant}"), format!("repetition={rep}"), format!("position={position}")]
}

#[test]
fn a_slow_first_repetition_is_named_and_makes_no_difference() {
    let store = Store::open_in_memory().unwrap();
    let cfg = kv(50, 500.0);
    // a b b a a b: a's first run ran right after the load and is twice as slow
    let levels = [("a", 2.0), ("b", 1.0), ("b", 1.02), ("a", 1.01), ("a", 0.99), ("b", 0.98)];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, (v, level)) in levels.iter().enumerate() {
        let list = if *v == "a" { &mut a } else { &mut b };
        let rep = list.len() as u32 + 1;
        list.push(write_run(&store, &cfg, &tags(v, rep, i as u32 + 1), *level, i as u64));
    }
    let groups = [Group { label: "a".into(), runs: a.clone() }, Group { label: "b".into(), runs: b }];
    let s = study(&store, &groups, plan()).unwrap();
    assert_eq!(s.method, Method::Repetitions);
    assert_eq!(s.ops, [OpRef::Op("read".into()), OpRef::Op("update".into()), OpRef::Total]);
    assert_eq!(s.pairs[0].judged, 14, "read and update, seven figures each; total is not judged");
    let judged: Vec<_> = s.comparisons[0].iter().flatten().flatten().filter(|c| c.outcome != Outcome::NotJudged).collect();
    assert_eq!(judged.len(), 14);
    assert!(judged.iter().all(|c| !c.is_significant()), "{judged:?}");
    assert!(judged.iter().all(|c| c.family == 14 && c.repetitions == Some((3, 3))));
    let p95 = judged.iter().find(|c| c.metric == Metric::P95).unwrap();
    assert!(p95.between_share.unwrap() > 0.9, "{p95:?}");
    assert_eq!(s.disagreements.len(), 1, "{:?}", s.disagreements);
    assert_eq!((s.disagreements[0].side, s.disagreements[0].run), (0, a[0]));
    let text = crate::report::comparison::text(&s);
    assert!(text.contains(&format!("run {} (a, repetition 1, 1st in the order) disagrees with the other repetitions of a: ", a[0])), "{text}");
    assert!(text.contains("method: repetitions as the unit"), "{text}");
    assert!(text.contains("changes: 95% intervals that hold together over the 14 figures judged in each comparison (Bonferroni: each at 99.64%)"), "{text}");
    assert!(text.contains("b vs a, read p95: no difference detected with these runs ("), "{text}");
    assert!(
        text.contains("repetitions per side would see a ±10% change 80% of the time")
            || text.contains("would take over 100 times as many repetitions per side"),
        "{text}"
    );
    assert!(!text.contains("b vs a, total"), "total is not judged: {text}");
}

#[test]
fn a_different_mix_leaves_the_total_out_and_a_lost_rate_is_named() {
    let store = Store::open_in_memory().unwrap();
    let (a, b) = (write_run(&store, &kv(50, 500.0), &[], 1.0, 1), write_run(&store, &kv(90, 600.0), &[], 1.0, 2));
    // run b made 500 of its 600/s (its CPU was busy, but at a fixed rate the rate is what tells)
    let samples: Vec<ServerSample> =
        (1..40).map(|s| ServerSample { node: "client".into(), metric: metric::CPU_PCT.into(), at_ms: s * 1000, value: 190.0 }).collect();
    store.add_server_samples(b, &samples).unwrap();
    let groups = [Group { label: format!("run {a}"), runs: vec![a] }, Group { label: format!("run {b}"), runs: vec![b] }];
    let s = study(&store, &groups, plan()).unwrap();
    assert_eq!(s.method, Method::Windows);
    assert_eq!(s.pairs[0].left_out, [("total".to_string(), format!("the mix differs (run {a}: read 50%, update 50%; run {b}: read 90%, update 10%)"))]);
    assert!(s.comparisons[0][2].iter().all(Option::is_none));
    assert_eq!(s.saturated.len(), 1, "{:?}", s.saturated);
    let text = crate::report::comparison::text(&s);
    assert!(text.contains("note: one run per side: these intervals cover the noise within each run"), "{text}");
    assert!(text.contains(&format!("run {b} vs run {a}, total: left out: the mix differs")), "{text}");
    assert!(text.contains(&format!("run {b} was saturated: its fixed rate of 600/s was not kept (achieved 500/s); its latency measures the queue")), "{text}");
}

#[test]
fn pooled_windows_judge_every_figure_alone() {
    let store = Store::open_in_memory().unwrap();
    let cfg = kv(50, 500.0);
    let a: Vec<RunId> = (0..2).map(|i| write_run(&store, &cfg, &[], 1.0, i)).collect();
    let b: Vec<RunId> = (2..4).map(|i| write_run(&store, &cfg, &[], 1.0, i)).collect();
    let groups = [Group { label: "a".into(), runs: a }, Group { label: "b".into(), runs: b }];
    let s = study(&store, &groups, StudyPlan { pool_windows: true, ..plan() }).unwrap();
    assert_eq!(s.method, Method::PooledWindows);
    let all: Vec<_> = s.comparisons[0].iter().flatten().flatten().collect();
    assert_eq!(all.len(), 21);
    assert!(all.iter().all(|c| c.family == 1 && c.repetitions.is_none() && c.outcome != Outcome::NotJudged));
    assert!(s.disagreements.is_empty());
}

/// Blocks a b, b a, …: every block slower than the last (drift), b 20% slower than a within
/// each block. Paired by repetition, the drift cancels and the change is found; the default
/// judged figures at a fixed rate are each operation's p50 and p99.
#[test]
fn blocks_pair_their_runs_and_judge_the_default_figures() {
    use crate::analysis::paired::{BlockDesign, SequentialDesign};
    use crate::analysis::sequential::Spending;
    let store = Store::open_in_memory().unwrap();
    let cfg = kv(50, 500.0);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for block in 0..6u32 {
        let drift = 1.0 + 0.15 * block as f64;
        let first_a = block % 2 == 0;
        for (k, v) in (if first_a { ["a", "b"] } else { ["b", "a"] }).iter().enumerate() {
            let level = if *v == "a" { drift } else { 1.2 * drift };
            let id = write_run(&store, &cfg, &tags(v, block + 1, 2 * block + k as u32 + 1), level, (block * 2 + k as u32) as u64);
            if *v == "a" {
                a.push(id)
            } else {
                b.push(id)
            }
        }
    }
    let groups = [Group { label: "a".into(), runs: a }, Group { label: "b".into(), runs: b }];
    let seq = BlockDesign { sequential: Some(SequentialDesign::new(Spending::OBrienFleming, 3, 12)), ..BlockDesign::default() };
    let s = study(&store, &groups, StudyPlan { blocks: Some(seq), ..plan() }).unwrap();
    assert_eq!(s.method, Method::Blocks);
    let names: Vec<String> = s.judged.iter().map(|f| f.to_string()).collect();
    assert_eq!(names, ["read.p50", "read.p99", "update.p50", "update.p99"]);
    assert_eq!(s.pairs[0].judged, 4);
    let read = s.ops.iter().position(|o| *o == OpRef::Op("read".into())).unwrap();
    let p50 = s.comparisons[0][read][Metric::P50.index()].clone().unwrap();
    assert_eq!((p50.outcome, p50.family, p50.blocks), (Outcome::Higher, 4, Some(6)), "{p50:?}");
    let ch = p50.change.unwrap();
    assert!((ch.point - 0.2).abs() < 0.03, "{ch:?}");
    assert_eq!(p50.look.unwrap().blocks, 6);
    // the mean is exploratory; the throughput at a fixed rate is not judged
    let mean = s.comparisons[0][read][Metric::Mean.index()].clone().unwrap();
    assert!(mean.exploratory && mean.family == 1);
    assert_eq!(s.comparisons[0][read][Metric::OpsPerS.index()].clone().unwrap().outcome, Outcome::NotJudged);
    assert!(s.settled(0.05), "{:?}", s.unsettled(0.05));
    let text = crate::report::comparison::text(&s);
    assert!(text.contains("method: blocks as the unit"), "{text}");
    assert!(text.contains("judged: read p50, read p99, update p50, update p99 — 95% intervals that hold together (Bonferroni: each at 98.75%)"), "{text}");
    assert!(text.contains("sequential: look after 6 of at most 12 blocks"), "{text}");
    // unpaired, the drift hides the change
    let welch = study(&store, &groups, plan()).unwrap();
    assert_eq!(welch.method, Method::Repetitions);
    let wp50 = welch.comparisons[0][read][Metric::P50.index()].clone().unwrap();
    assert!(matches!(wp50.outcome, Outcome::NoDifference { .. }), "{wp50:?}");
}

/// Three variants in counterbalanced blocks (a b c, c b a, …), c 20 % slower than a.
fn three_variants(store: &Store) -> [Group; 3] {
    let cfg = kv(50, 500.0);
    let mut runs: [Vec<RunId>; 3] = Default::default();
    for block in 0..4u32 {
        let order: Vec<usize> = if block % 2 == 0 { vec![0, 1, 2] } else { vec![2, 1, 0] };
        for (k, &v) in order.iter().enumerate() {
            let name = ["a", "b", "c"][v];
            let level = [1.0, 1.01, 1.2][v] * (1.0 + 0.1 * block as f64);
            let seed = u64::from(block) * 3 + k as u64;
            runs[v].push(write_run(store, &cfg, &tags(name, block + 1, 3 * block + k as u32 + 1), level, seed));
        }
    }
    let [a, b, c] = runs;
    [Group { label: "a".into(), runs: a }, Group { label: "b".into(), runs: b }, Group { label: "c".into(), runs: c }]
}

/// Item 1 of the audit: with several variants, the judged figures hold together per
/// comparison, and the text says so — and what that allows over all comparisons; `--family`
/// makes them one family over the whole experiment.
#[test]
fn many_variants_say_their_family_and_can_hold_it_over_the_experiment() {
    use crate::analysis::paired::BlockDesign;
    use crate::analysis::study::Family;
    let store = Store::open_in_memory().unwrap();
    let groups = three_variants(&store);
    let per = study(&store, &groups, StudyPlan { blocks: Some(BlockDesign::default()), ..plan() }).unwrap();
    let judged = |s: &super::study::Study| -> Vec<usize> {
        s.comparisons.iter().flatten().flatten().flatten().filter(|c| !c.exploratory && c.outcome != Outcome::NotJudged).map(|c| c.family).collect()
    };
    assert_eq!(judged(&per), [4; 8], "4 judged figures in each of 2 comparisons");
    let text = crate::report::comparison::text(&per);
    assert!(
        text.contains("95% intervals that hold together (Bonferroni: each at 98.75%); 95% per comparison: over its 2 comparisons, the chance of some false claim can reach 10% (--family holds them all together)"),
        "{text}"
    );
    assert!(!text.contains("any judged figure is marked at most 5%"), "{text}");
    let all = study(&store, &groups, StudyPlan { blocks: Some(BlockDesign::default()), family: Family::Experiment, ..plan() }).unwrap();
    assert_eq!(judged(&all), [8; 8]);
    let text = crate::report::comparison::text(&all);
    assert!(text.contains("95% intervals that hold together over all 2 comparisons (8 figures; --family; Bonferroni: each at 99.3"), "{text}");
    assert!(text.contains("any judged figure is marked at most 5% of the time"), "{text}");
    // a wider family, wider intervals
    let read = per.ops.iter().position(|o| *o == OpRef::Op("read".into())).unwrap();
    let w = |s: &super::study::Study| s.comparisons[1][read][Metric::P50.index()].as_ref().unwrap().half_width_ln().unwrap();
    assert!(w(&all) > w(&per));
}

/// Item 9: the typical p99 is one more figure of every operation, printed in the comparison,
/// judged when named (`read.p99_typical`), and between two single runs judged by Yuen's
/// trimmed t on their windows' p99s.
#[test]
fn the_typical_p99_is_printed_judged_when_named_and_yuens_between_two_runs() {
    use crate::analysis::paired::BlockDesign;
    use crate::analysis::study::FigureRef;
    let store = Store::open_in_memory().unwrap();
    let groups = three_variants(&store);
    let judged: Vec<FigureRef> = vec!["read.p99_typical".parse().unwrap()];
    let s = study(&store, &groups[..2], StudyPlan { blocks: Some(BlockDesign::default()), judged: Some(judged), ..plan() }).unwrap();
    let read = s.ops.iter().position(|o| *o == OpRef::Op("read".into())).unwrap();
    let c = s.comparisons[0][read][Metric::P99Typical.index()].clone().unwrap();
    assert!(!c.exploratory && c.family == 1 && c.blocks == Some(4), "{c:?}");
    let text = crate::report::comparison::text(&s);
    assert!(text.contains("judged: read p99_typical — a 95% interval"), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("p99_typical ")), "a row of its own: {text}");
    // b is 1% slower, and the windows of these runs hardly differ
    assert!(text.contains("b's read typical p99 is 1.0% higher than a's"), "{text}");
    assert_eq!("read.p99_typical".parse::<FigureRef>().unwrap().to_string(), "read.p99_typical");
    // two single runs: Yuen's interval on the windows' p99s
    let (a, c) = (groups[0].runs[0], groups[2].runs[0]);
    let two = [Group { label: format!("run {a}"), runs: vec![a] }, Group { label: format!("run {c}"), runs: vec![c] }];
    let s = study(&store, &two, plan()).unwrap();
    let yuen = s.comparisons[0][read][Metric::P99Typical.index()].clone().unwrap();
    let p99s = |side: usize| {
        let w = &s.sides[side].windows;
        crate::analysis::Sample::of(w, &OpRef::Op("read".into()), LatencyKind::Intended).unwrap().window_p99s()
    };
    let (point, lo, hi) = super::trimmed::yuen_ratio(&p99s(0), &p99s(1), yuen.level()).unwrap();
    let ch = yuen.change.unwrap();
    assert!((ch.point - point).abs() < 1e-12 && (ch.lo - lo).abs() < 1e-12 && (ch.hi - hi).abs() < 1e-12, "{ch:?}");
    assert_eq!(yuen.outcome, Outcome::Higher, "c is 20% slower: {yuen:?}");
}
