//! What the experiment method promises, simulated at a size the test suite cannot afford
//! (`bench/sequential.sh` runs it; every part has a fixed seed, so the figures repeat):
//!
//! 1. the error rate of all looks together with normally distributed block differences, with
//!    the t approximation alone and calibrated (`analysis/calibration.rs`);
//! 2. an A/A experiment of 10 variants: some false claim per comparison and family-wide;
//! 3. a 10 % change: found at the last look alone, or on every look's interval (their
//!    intersection), and how often an A/A figure claims one;
//! 4. a budget that ends a design at look 18 of 21: the final interval's width;
//! 5. equivalence: blocks to an equivalence verdict with the 95 % and the 90 % interval;
//! 6. an order effect of 5 %: the variance it adds, and what fitting it leaves;
//! 7. the typical p99 against the p99 in a stall model: their spread from run to run.
//!
//! ```text
//! cargo run --release -p casslab-core --example sequential_sim -- [--runs 1000000]
//! ```

use casslab_core::analysis::block_fit::Sums;
use casslab_core::analysis::paired::{compare_blocks, settled, BlockDesign, Differences, SequentialDesign};
use casslab_core::analysis::sequential::{Schedule, Spending};
use casslab_core::analysis::study::Family;
use casslab_core::analysis::{AnalysisOptions, Metric, Outcome};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Exp, LogNormal, StandardNormal};

fn normal(rng: &mut SmallRng) -> f64 {
    rng.sample(StandardNormal)
}

/// Part 1: the share of `runs` A/A experiments some look of `design` misses in, with each
/// look's multiplier divided by `undo` (the calibration factor: the t approximation alone).
fn missed(design: &SequentialDesign, ordered: bool, runs: usize, calibrated: bool) -> f64 {
    let s = Schedule::of(design, 0.05, ordered);
    let undo = if calibrated { 1.0 } else { s.calibration };
    let mut rng = SmallRng::seed_from_u64(1);
    let mut hits = 0;
    for _ in 0..runs {
        let mut sums = Sums::default();
        for n in 1..=design.max_blocks {
            let order = ordered.then_some(if n % 2 == 1 { 1.0 } else { -1.0 });
            sums.push(normal(&mut rng), order);
            if n < design.first_look {
                continue;
            }
            let fit = sums.fit().expect("a fit");
            if fit.mean_ln.abs() > s.multiplier(n).expect("a look") / undo * fit.se_ln {
                hits += 1;
                break;
            }
        }
    }
    hits as f64 / runs as f64
}

/// Part 2: the share of A/A experiments of `variants` variants (2 judged figures each,
/// sequential to 12 blocks, stopped when every comparison settles) that claim anything.
fn any_claim(variants: usize, family: Family, runs: usize) -> f64 {
    let design = BlockDesign { sequential: Some(SequentialDesign::new(Spending::OBrienFleming, 4, 12)), ..BlockDesign::default() };
    let o = AnalysisOptions::default();
    let pairs = variants - 1;
    let size = family.size(&vec![2; pairs], 0);
    let mut rng = SmallRng::seed_from_u64(2);
    let mut any = 0;
    for _ in 0..runs {
        let mut d: Vec<Differences> = vec![Differences::default(); 2 * pairs];
        loop {
            let base = [0.07 * normal(&mut rng), 0.07 * normal(&mut rng)];
            for (i, x) in d.iter_mut().enumerate() {
                x.diffs.push(0.07 * normal(&mut rng) - base[i % 2]);
            }
            let n = d[0].diffs.len();
            if n < 4 {
                continue;
            }
            let cs: Vec<_> = d.iter().map(|x| compare_blocks(x, Metric::P50, &o, size, &design)).collect();
            if cs.iter().all(|c| settled(c, 0.05)) || n >= 12 {
                any += usize::from(cs.iter().any(|c| c.is_significant()));
                break;
            }
        }
    }
    any as f64 / runs as f64
}

/// Part 3: 2 judged figures of 14 % noise per block, one changed, at most 20 blocks (a
/// 10-minute budget of 30-second blocks): found by every look's interval, found by the last
/// look's alone, and the A/A claims of the unchanged figure.
fn power(change: f64, runs: usize) -> (f64, f64, f64) {
    let seq = SequentialDesign::new(Spending::OBrienFleming, 4, 20);
    let design = BlockDesign { sequential: Some(seq), ..BlockDesign::default() };
    let o = AnalysisOptions::default();
    let mut rng = SmallRng::seed_from_u64(3);
    let (mut found, mut last, mut false_claims) = (0, 0, 0);
    for _ in 0..runs {
        let mut d: [Differences; 2] = Default::default();
        loop {
            d[0].diffs.push(change + 0.14 * normal(&mut rng));
            d[1].diffs.push(0.14 * normal(&mut rng));
            let n = d[0].diffs.len();
            if n < 4 {
                continue;
            }
            let cs: Vec<_> = d.iter().map(|x| compare_blocks(x, Metric::P50, &o, 2, &design)).collect();
            if cs.iter().all(|c| settled(c, 0.05)) || n >= 20 {
                found += usize::from(cs[0].is_significant());
                false_claims += usize::from(cs[1].is_significant());
                let alone = casslab_core::analysis::sequential::repeated_interval(&d[0].diffs, &[], &seq, 0.025).expect("a look");
                last += usize::from(alone.lo_ln > 0.0 || alone.hi_ln < 0.0);
                break;
            }
        }
    }
    let r = |k: usize| k as f64 / runs as f64;
    (r(found), r(last), r(false_claims))
}

/// Part 5: the mean blocks until an A/A figure of 8 % noise is found equivalent within ±5 %
/// (at most 80 blocks), judged with the 90 % interval (as now) or the 95 % one (two
/// one-sided tests at 2.5 % each, as before).
fn blocks_to_equivalence(runs: usize) -> (f64, f64) {
    let o = AnalysisOptions::default();
    let design = BlockDesign { margin: Some(0.05), sequential: Some(SequentialDesign::new(Spending::OBrienFleming, 4, 80)), ..BlockDesign::default() };
    let mut rng = SmallRng::seed_from_u64(5);
    let (mut now, mut before) = (0usize, 0usize);
    for _ in 0..runs {
        let mut d = Differences::default();
        let (mut at_now, mut at_before) = (None, None);
        while d.diffs.len() < 80 && (at_now.is_none() || at_before.is_none()) {
            d.diffs.push(0.08 * normal(&mut rng));
            let n = d.diffs.len();
            if n < 4 {
                continue;
            }
            let c = compare_blocks(&d, Metric::P50, &o, 1, &design);
            if at_now.is_none() && c.outcome == Outcome::Equivalent {
                at_now = Some(n);
            }
            let seq = design.sequential.expect("sequential");
            let own = casslab_core::analysis::sequential::repeated_interval(&d.diffs, &[], &seq, 0.05).expect("a look");
            if at_before.is_none() && own.lo_ln >= (0.95f64).ln() && own.hi_ln <= (1.05f64).ln() {
                at_before = Some(n);
            }
        }
        now += at_now.unwrap_or(80);
        before += at_before.unwrap_or(80);
    }
    (now as f64 / runs as f64, before as f64 / runs as f64)
}

/// Part 6: the variance of block differences with a 5 % order effect in 13 % noise, and what
/// fitting it leaves.
fn order_effect(blocks: usize) -> (f64, f64) {
    let mut rng = SmallRng::seed_from_u64(6);
    let orders: Vec<f64> = (0..blocks).map(|k| if k % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let diffs: Vec<f64> = orders.iter().map(|s| 0.05 * s + 0.129 * normal(&mut rng)).collect();
    let plain = Sums::of(&diffs, &[]).fit().expect("a fit");
    let fitted = Sums::of(&diffs, &orders).fit().expect("a fit");
    (plain.sd_ln.powi(2), fitted.sd_ln.powi(2))
}

/// Part 7: runs of `windows` windows of `per_window` reads (lognormal around 1 ms), each
/// window catching a stall with probability `stall_p` (a share of its reads then take
/// 20–60 ms): the variance from run to run of ln p99 and of ln typical p99.
fn stall_model(runs: usize, windows: usize, per_window: usize, stall_p: f64) -> (f64, f64) {
    let mut rng = SmallRng::seed_from_u64(7);
    let base = LogNormal::new(0.0, 0.4).expect("a lognormal");
    let stall = Exp::new(1.0 / 20.0).expect("an exponential");
    let (mut p99s, mut typical) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut all = Vec::with_capacity(windows * per_window);
        let mut window_p99 = Vec::with_capacity(windows);
        for _ in 0..windows {
            let stalled = rng.gen::<f64>() < stall_p;
            let mut w: Vec<f64> =
                (0..per_window).map(|_| if stalled && rng.gen::<f64>() < 0.05 { 20.0 + rng.sample(stall) } else { rng.sample(base) }).collect();
            w.sort_by(f64::total_cmp);
            window_p99.push(w[(0.99 * per_window as f64).ceil() as usize - 1]);
            all.extend(w);
        }
        all.sort_by(f64::total_cmp);
        p99s.push(all[(0.99 * all.len() as f64).ceil() as usize - 1].ln());
        window_p99.sort_by(f64::total_cmp);
        let g = windows / 5;
        typical.push((window_p99[g..windows - g].iter().sum::<f64>() / (windows - 2 * g) as f64).ln());
    }
    let var = |x: &[f64]| {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64
    };
    (var(&p99s), var(&typical))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args.iter().position(|a| a == "--runs").and_then(|i| args.get(i + 1)).map_or(1_000_000, |r| r.parse().expect("a count"));
    let pct = |x: f64| format!("{:.2}%", x * 100.0);
    let se = |p: f64, n: usize| format!("±{:.2}", 100.0 * (p * (1.0 - p) / n as f64).sqrt());

    println!("1. error rate of all looks together, normal differences, no change, {runs} experiments per line (nominal 5%)");
    println!("   {:<36} {:>12} {:>12} {:>9} {:>10}", "design", "t approx.", "calibrated", "factor", "std. err.");
    for (name, design, ordered) in [
        ("O'Brien-Fleming, looks 4..24", SequentialDesign::new(Spending::OBrienFleming, 4, 24), false),
        ("O'Brien-Fleming, looks 4..43", SequentialDesign::new(Spending::OBrienFleming, 4, 43), false),
        ("O'Brien-Fleming, 4..24, order fitted", SequentialDesign::new(Spending::OBrienFleming, 4, 24), true),
        ("Pocock, looks 4..24", SequentialDesign::new(Spending::Pocock, 4, 24), false),
        ("Hwang-Shih-DeCani -2, looks 4..24", SequentialDesign::new(Spending::Hsd(-2.0), 4, 24), false),
    ] {
        let (raw, cal) = (missed(&design, ordered, runs, false), missed(&design, ordered, runs, true));
        let factor = Schedule::of(&design, 0.05, ordered).calibration;
        println!("   {name:<36} {:>12} {:>12} {factor:>9.4} {:>10}", pct(raw), pct(cal), se(cal, runs));
    }

    let aa = (runs / 100).max(2000);
    println!("\n2. A/A experiment of 10 variants (9 comparisons, 2 judged figures each, looks 4..12), {aa} experiments");
    for (name, family) in [("per comparison (default)", Family::Comparison), ("family-wide (--family)", Family::Experiment)] {
        let r = any_claim(10, family, aa);
        println!("   {name:<28} some false claim in {} ({})", pct(r), se(r, aa));
    }

    let p = (runs / 100).max(2000);
    let (found, last, false_claims) = power(0.10f64.ln_1p(), p);
    println!("\n3. a 10% change in one of 2 judged figures, 14% noise per block (looks 4..20), {p} experiments");
    println!(
        "   found on every look's interval: {}; by the last look alone: {}; the unchanged figure claimed a change: {}",
        pct(found),
        pct(last),
        pct(false_claims)
    );

    let planned = Schedule::of(&SequentialDesign::new(Spending::OBrienFleming, 4, 21), 0.025, false);
    let ended = Schedule::of(&SequentialDesign { final_look: Some(18), ..SequentialDesign::new(Spending::OBrienFleming, 4, 21) }, 0.025, false);
    println!("\n4. a budget that ends looks 4..21 at look 18 (2.5% per figure)");
    println!(
        "   boundary {:.3} planned, {:.3} spending what is left; multiplier {:.3} against {:.3}: the interval {:.1}% narrower",
        planned.z(18).unwrap_or(f64::NAN),
        ended.z(18).unwrap_or(f64::NAN),
        planned.multiplier(18).unwrap_or(f64::NAN),
        ended.multiplier(18).unwrap_or(f64::NAN),
        100.0 * (1.0 - ended.multiplier(18).unwrap_or(f64::NAN) / planned.multiplier(18).unwrap_or(f64::NAN))
    );

    let e = (runs / 500).max(1000);
    let (now, before) = blocks_to_equivalence(e);
    println!("\n5. equivalence within ±5%, no change, 8% noise per block (looks 4..80), {e} experiments");
    println!("   mean blocks to the verdict: {now:.1} with the 90% interval, {before:.1} with the 95% one ({:.0}% more)", 100.0 * (before / now - 1.0));

    let (plain, fitted) = order_effect(1_000_000);
    println!(
        "\n6. a 5% order effect in 13% noise per block: variance {plain:.5}, {fitted:.5} with the order fitted ({:.1}% less)",
        100.0 * (1.0 - fitted / plain)
    );

    let s = (runs / 1000).max(500);
    let (v99, vtyp) = stall_model(s, 10, 500, 0.15);
    println!("\n7. stall model: 10 windows of 500 reads, 15% of windows stalled, {s} runs");
    println!("   variance of ln p99 {v99:.4}, of ln typical p99 {vtyp:.4}: ×{:.2}", vtyp / v99);
}
