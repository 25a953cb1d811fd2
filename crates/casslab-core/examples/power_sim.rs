//! Simulated experiments calibrated on measured noise: what each design of a sequential
//! experiment detects, how often it claims a change that is not there, and how many blocks
//! (minutes) it takes. `bench/power.sh` runs it with the spread it measured on a real node;
//! anyone can run it with their own:
//!
//! ```text
//! cargo run --release -p casslab-core --example power_sim -- \
//!     --sd 0.08,0.35 --block-s 34 --budget-s 1200 --precision 0.05 --runs 1000
//! ```
//!
//! `--simultaneous yes` judges as an experiment whose variants ran at the same time does
//! (intervals widened where neighbouring blocks move together). `--sd` gives one block's spread of the change (standard deviation of ln B − ln A) of each
//! judged figure (named by `--names`, p50 and p99 by default); the change is applied to one
//! figure at a time. Prints one line
//! per design, figure and change: the share of experiments that found the change (power, or
//! the false-claim rate at 0), the mean blocks and minutes.

use casslab_core::analysis::paired::{compare_blocks, settled, BlockDesign, Differences, SequentialDesign};
use casslab_core::analysis::sequential::Spending;
use casslab_core::analysis::{AnalysisOptions, Metric, Outcome};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StudentT};

struct Args {
    sd: Vec<f64>,
    /// The judged figures' names, in the order of `sd`.
    names: Vec<String>,
    block_s: f64,
    budget_s: f64,
    precision: f64,
    runs: usize,
    effects: Vec<f64>,
    /// The variants run at the same time: intervals widened for neighbouring blocks.
    simultaneous: bool,
}

fn args() -> Args {
    let mut a = Args {
        sd: vec![0.08, 0.35],
        names: vec!["p50".into(), "p99".into()],
        block_s: 34.0,
        budget_s: 1200.0,
        precision: 0.05,
        runs: 500,
        effects: vec![0.0, 0.05, 0.10, 0.20, 0.33],
        simultaneous: false,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let list = |s: &str| s.split(',').map(|x| x.trim().parse::<f64>().expect("a number")).collect::<Vec<f64>>();
    for pair in v.chunks(2) {
        let val = pair.get(1).map(String::as_str).unwrap_or("");
        match pair[0].as_str() {
            "--sd" => a.sd = list(val),
            "--names" => a.names = val.split(',').map(|n| n.trim().to_string()).collect(),
            "--block-s" => a.block_s = val.parse().expect("seconds"),
            "--budget-s" => a.budget_s = val.parse().expect("seconds"),
            "--precision" => a.precision = val.parse().expect("a fraction"),
            "--runs" => a.runs = val.parse().expect("a count"),
            "--effects" => a.effects = list(val),
            "--simultaneous" => a.simultaneous = matches!(val, "1" | "yes" | "true"),
            other => panic!("unknown option {other}"),
        }
    }
    a
}

/// One experiment: blocks of heavy-tailed differences until every judged figure settles or
/// the budget ends; returns (found the change in figure `f`, any false claim, blocks).
fn one(sd: &[f64], effect: f64, f: usize, design: &BlockDesign, precision: f64, rng: &mut SmallRng) -> (bool, bool, usize) {
    let noise = StudentT::new(4.0).unwrap();
    let o = AnalysisOptions::default();
    let max = design.sequential.map_or(12, |s| s.max_blocks);
    let family = sd.len();
    let mut diffs: Vec<Differences> = vec![Differences::default(); family];
    loop {
        for (i, d) in diffs.iter_mut().enumerate() {
            let truth = if i == f { (1.0 + effect).ln() } else { 0.0 };
            d.diffs.push(truth + sd[i] / 2f64.sqrt() * noise.sample(rng));
        }
        let n = diffs[0].diffs.len();
        if design.sequential.is_some_and(|s| n < s.first_look) {
            continue;
        }
        let cs: Vec<_> = diffs.iter().map(|d| compare_blocks(d, Metric::P50, &o, family, design)).collect();
        if cs.iter().all(|c| settled(c, precision)) || n >= max {
            let claims: Vec<bool> = cs.iter().map(|c| matches!(c.outcome, Outcome::Higher | Outcome::Lower)).collect();
            let found = claims[f] && effect != 0.0;
            let false_claim = claims.iter().enumerate().any(|(i, c)| *c && (i != f || effect == 0.0));
            return (found, false_claim, n);
        }
    }
}

fn main() {
    let a = args();
    let max_blocks = ((a.budget_s / a.block_s).floor() as usize).max(4);
    println!(
        "one block {:.0} s, budget {:.0} min: at most {max_blocks} blocks; precision ±{}%; spread per block {:?}",
        a.block_s,
        a.budget_s / 60.0,
        a.precision * 100.0,
        a.sd
    );
    println!("{:<24} {:>10} {:>7} {:>9} {:>12} {:>8} {:>8}", "design", "figure", "change", "found", "false claims", "blocks", "minutes");
    let designs = [
        ("O'Brien-Fleming, 4", Spending::OBrienFleming, 4),
        ("Hwang-Shih-DeCani -2, 4", Spending::Hsd(-2.0), 4),
        ("Pocock, 4", Spending::Pocock, 4),
        ("Pocock, 6", Spending::Pocock, 6),
    ];
    for (name, spending, first) in designs {
        let design =
            BlockDesign { sequential: Some(SequentialDesign::new(spending, first, max_blocks)), simultaneous: a.simultaneous, ..BlockDesign::default() };
        for f in 0..a.sd.len() {
            for &effect in &a.effects {
                if effect == 0.0 && f > 0 {
                    continue;
                }
                let mut rng = SmallRng::seed_from_u64(42 + f as u64);
                let (mut found, mut false_claims, mut blocks) = (0, 0, 0);
                for _ in 0..a.runs {
                    let (hit, wrong, n) = one(&a.sd, effect, f, &design, a.precision, &mut rng);
                    found += usize::from(hit);
                    false_claims += usize::from(wrong);
                    blocks += n;
                }
                let mean_blocks = blocks as f64 / a.runs as f64;
                println!(
                    "{name:<24} {:>10} {:>6.0}% {:>8.1}% {:>11.1}% {:>8.1} {:>8.1}",
                    if effect == 0.0 { "A/A".to_string() } else { a.names.get(f).cloned().unwrap_or_else(|| format!("#{}", f + 1)) },
                    effect * 100.0,
                    found as f64 * 100.0 / a.runs as f64,
                    false_claims as f64 * 100.0 / a.runs as f64,
                    mean_blocks,
                    mean_blocks * a.block_s / 60.0
                );
            }
        }
    }
}
